//! The per-connection memory figure, as MariaDB shows it: MEMORY_USED and
//! MAX_MEMORY_USED in INFORMATION_SCHEMA.PROCESSLIST, and the
//! `Memory_used` status (SESSION: this connection, GLOBAL: all of them).
//! A connection that prepares statements, sends long data or stalls on a
//! streamed result shows more to another connection, and falls back once
//! it lets go.

mod support;

use std::time::{Duration, Instant};

use support::ServerProcess;
use testkit::raw_client::{MValue, RawClient, Response};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn login(server: &ServerProcess) -> RawClient {
    RawClient::login_to(server.port, "root", "", None).unwrap()
}

/// MEMORY_USED and MAX_MEMORY_USED of connection `id`, as `observer` sees
/// them.
fn memory_of(observer: &mut RawClient, id: u32) -> (u64, u64) {
    let rows =
        observer.query_rows(&format!("SELECT MEMORY_USED, MAX_MEMORY_USED FROM information_schema.PROCESSLIST WHERE ID = {id}")).unwrap();
    assert_eq!(rows.len(), 1, "connection {id} in the process list: {rows:?}");
    let number = |index: usize| rows[0][index].as_deref().unwrap().parse::<u64>().unwrap();
    (number(0), number(1))
}

fn status(client: &mut RawClient, scope: &str) -> u64 {
    let rows = client.query_rows(&format!("SHOW {scope} STATUS LIKE 'Memory_used'")).unwrap();
    assert_eq!(rows.len(), 1, "{scope} Memory_used: {rows:?}");
    rows[0][1].as_deref().unwrap().parse().unwrap()
}

/// COM_STMT_SEND_LONG_DATA, which has no answer.
fn send_long_data(client: &mut RawClient, statement_id: u32, data: &[u8]) {
    let mut packet = vec![0x18];
    packet.extend_from_slice(&statement_id.to_le_bytes());
    packet.extend_from_slice(&0u16.to_le_bytes());
    packet.extend_from_slice(data);
    client.command(&packet);
}

fn close_statement(client: &mut RawClient, statement_id: u32) {
    let mut packet = vec![0x19];
    packet.extend_from_slice(&statement_id.to_le_bytes());
    client.command(&packet);
}

#[test]
fn prepared_statements_and_long_data_show_in_memory_used_and_fall_back() {
    let server = ServerProcess::start();
    let mut holder = login(&server);
    let mut observer = login(&server);
    let id = holder.connection_id;

    // MySQL's columns, then MariaDB's two.
    let Response::Rows { columns, rows, .. } = observer.query("SELECT * FROM information_schema.PROCESSLIST").unwrap() else {
        panic!("rows")
    };
    let names: Vec<String> = columns.iter().map(|column| column.name_str().into_owned()).collect();
    assert_eq!(names, ["ID", "USER", "HOST", "DB", "COMMAND", "TIME", "STATE", "INFO", "MEMORY_USED", "MAX_MEMORY_USED"]);
    assert_eq!(rows.len(), 2, "both connections");

    let (idle, _) = memory_of(&mut observer, id);
    assert!(idle > 0, "an idle connection holds its socket buffers");

    // Twenty statements of 10 KiB of text each.
    let text = format!("SELECT '{}'", "x".repeat(10 * 1024));
    let statements: Vec<u32> = (0..20).map(|_| holder.prepare(&text).unwrap().0).collect();
    let (with_statements, _) = memory_of(&mut observer, id);
    assert!(with_statements >= idle + 200 * KIB, "{with_statements} bytes with 200 KiB of statements, {idle} idle");

    // 2 MiB of long data for a parameter, in four packets.
    let (with_parameter, _, _) = holder.prepare("SELECT LENGTH(?)").unwrap();
    let chunk = vec![b'y'; 512 * 1024];
    for _ in 0..4 {
        send_long_data(&mut holder, with_parameter, &chunk);
    }
    // COM_STMT_SEND_LONG_DATA has no answer: a ping orders it before the look.
    holder.command(&[0x0E]);
    assert_eq!(holder.read_packet()[0], 0x00);
    let (holding, _) = memory_of(&mut observer, id);
    assert!(holding >= with_statements + 2 * MIB, "{holding} bytes with 2 MiB of long data, {with_statements} before");

    // SHOW STATUS: the session's figure is this connection's, the global
    // one every connection's added up.
    let global = status(&mut observer, "GLOBAL");
    assert!(global >= holding, "GLOBAL Memory_used {global} counts the holder's {holding}");
    let session = status(&mut observer, "SESSION");
    assert!(session < holding && session + holding <= global + 64 * KIB, "SESSION {session}, GLOBAL {global}, holder {holding}");
    assert!(status(&mut holder, "SESSION") >= holding, "the holder's own figure");

    // The execution takes the long data; closing the statements frees
    // their text.
    match holder.execute(with_parameter, &[MValue::NULL]).unwrap() {
        Response::BinaryRows { rows, .. } => assert_eq!(rows, vec![vec![MValue::Int(2 * MIB as i64)]]),
        other => panic!("{other:?}"),
    }
    for statement in statements.into_iter().chain([with_parameter]) {
        close_statement(&mut holder, statement);
    }
    holder.command(&[0x0E]);
    assert_eq!(holder.read_packet()[0], 0x00);
    let (after, most) = memory_of(&mut observer, id);
    assert!(after < idle + 64 * KIB, "{after} bytes after closing, {idle} idle");
    assert!(most >= holding, "MAX_MEMORY_USED {most} keeps the peak {holding}");
}

#[test]
fn a_client_stalled_on_a_streamed_result_shows_its_row_buffer_until_it_reads() {
    let server = ServerProcess::start();
    let mut setup = login(&server);
    setup.query_rows("CREATE DATABASE m").unwrap();
    setup.query_rows("CREATE TABLE m.t (id INT PRIMARY KEY)").unwrap();
    let ids: Vec<String> = (0..32).map(|id| format!("({id})")).collect();
    setup.query_rows(&format!("INSERT INTO m.t VALUES {}", ids.join(","))).unwrap();

    let mut stalled = login(&server);
    let id = stalled.connection_id;
    let (idle, _) = memory_of(&mut setup, id);
    // 32 rows of 1 MiB, computed per row (nothing large is stored), streamed
    // to a client that reads none of it.
    stalled.command(b"\x03SELECT id, REPEAT('z', 1048576) FROM m.t");
    let deadline = Instant::now() + Duration::from_secs(20);
    let stalled_at = loop {
        let (used, _) = memory_of(&mut setup, id);
        if used >= idle + MIB {
            break used;
        }
        assert!(Instant::now() < deadline, "MEMORY_USED stayed at {used} bytes, {idle} idle");
        std::thread::sleep(Duration::from_millis(50));
    };

    // Reading the result lets go of it.
    let first = stalled.read_packet();
    stalled.read_columns(usize::from(first[0]));
    let mut rows = 0;
    loop {
        let packet = stalled.read_packet();
        if packet[0] == 0xFE && packet.len() < 9 {
            break;
        }
        assert_ne!(packet[0], 0xFF, "{packet:?}");
        rows += 1;
    }
    assert_eq!(rows, 32);
    let (after, most) = memory_of(&mut setup, id);
    assert!(after < idle + 64 * KIB, "{after} bytes after the result, {idle} idle");
    assert!(most >= stalled_at, "MAX_MEMORY_USED {most}, {stalled_at} while stalled");
}
