//! Memory per client is bounded: a SELECT over a large table is streamed
//! as the client reads it (the server's RSS stays flat while the client
//! stalls, the rows are one snapshot, a KILL QUERY ends the result with an
//! ERR after the rows sent), string functions return NULL with warning
//! 1301 instead of building results over max_allowed_packet, a packet
//! header announcing 16 MiB allocates nothing until the bytes come, and
//! max_prepared_stmt_count bounds the whole server's statements.

mod support;

use std::io::Write;
use std::time::Duration;

use support::ServerProcess;
use testkit::raw_client::{RawClient, ServerErr};

const MIB: u64 = 1 << 20;

/// The process's resident set now (VmRSS), in bytes.
fn rss_bytes(server: &ServerProcess) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("VmRSS in /proc/PID/status");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

fn login(server: &ServerProcess, database: Option<&str>) -> RawClient {
    RawClient::login_to(server.port, "root", "", database).unwrap()
}

/// Rows of a text result read one packet at a time: how many arrived and
/// the error that ended them, if one did.
fn read_rows(client: &mut RawClient, mut each: impl FnMut(&[u8])) -> (usize, Option<ServerErr>) {
    let first = client.read_packet();
    assert!(first[0] != 0xFF && first[0] != 0x00, "a result set, not {first:?}");
    client.read_columns(usize::from(first[0]));
    let mut rows = 0;
    loop {
        let packet = client.read_packet();
        if packet[0] == 0xFF {
            return (rows, Some(client.parse_err(&packet)));
        }
        if packet[0] == 0xFE && packet.len() < 9 {
            return (rows, None);
        }
        each(&packet);
        rows += 1;
    }
}

const ROWS: usize = 200_000;
const PAD_BYTES: usize = 200;

fn fill_large_table(client: &mut RawClient) {
    client.query_rows("CREATE DATABASE big").unwrap();
    client.query_rows("CREATE TABLE big.t (id INT PRIMARY KEY, v VARCHAR(255) NOT NULL)").unwrap();
    let pad = "x".repeat(PAD_BYTES);
    for start in (0..ROWS).step_by(2_000) {
        let values: Vec<String> = (start..start + 2_000).map(|id| format!("({id}, '{pad}')")).collect();
        client.query_rows(&format!("INSERT INTO big.t VALUES {}", values.join(","))).unwrap();
    }
}

#[test]
fn a_client_that_stalls_on_a_large_result_leaves_the_servers_memory_flat() {
    let server = ServerProcess::start();
    let mut writer = login(&server, None);
    fill_large_table(&mut writer);
    assert_eq!(writer.value("SELECT COUNT(*) FROM big.t"), ROWS.to_string());

    // Two readers ask for the whole table (about 45 MB on the wire) and
    // read nothing.
    let mut stalled = login(&server, None);
    let mut killed = login(&server, None);
    let before = rss_bytes(&server);
    stalled.command(b"\x03SELECT id, v FROM big.t");
    killed.command(b"\x03SELECT id, v FROM big.t WHERE v <> ''");
    std::thread::sleep(Duration::from_secs(2));
    let stalled_growth = rss_bytes(&server).saturating_sub(before);
    assert!(stalled_growth < 24 * MIB, "RSS grew {} MiB while two clients stalled on a 45 MB result", stalled_growth / MIB);

    // Others go on meanwhile: a write commits, and the stalled readers'
    // results stay the snapshot their statements began in.
    writer.query_rows("UPDATE big.t SET v = 'changed' WHERE id % 1000 = 7").unwrap();
    writer.query_rows(&format!("INSERT INTO big.t VALUES ({ROWS}, 'new')")).unwrap();
    writer.query_rows(&format!("KILL QUERY {}", killed.connection_id)).unwrap();

    let mut ids_in_order = true;
    let mut next_id = 0usize;
    let (rows, error) = read_rows(&mut stalled, |row| {
        let id_length = usize::from(row[0]);
        let id: usize = std::str::from_utf8(&row[1..1 + id_length]).unwrap().parse().unwrap();
        ids_in_order &= id == next_id;
        next_id += 1;
        let value = &row[2 + id_length..];
        ids_in_order &= value.len() == PAD_BYTES;
    });
    assert_eq!((rows, error), (ROWS, None), "every row of the snapshot, and no more");
    assert!(ids_in_order, "rows in key order, none changed by the later UPDATE");

    // KILL QUERY reached the other reader mid-result: the rows sent before
    // it, then 1317.
    let (rows, error) = read_rows(&mut killed, |_| {});
    let error = error.expect("an ERR packet after the rows");
    assert_eq!((error.code, error.state.as_str(), error.message.as_str()), (1317, "70100", "Query execution was interrupted"));
    assert!(rows < ROWS, "{rows} rows before the KILL");
    assert_eq!(killed.value("SELECT COUNT(*) FROM big.t"), (ROWS + 1).to_string(), "the connection goes on");

    // A result read at once is whole too, through the binary protocol.
    let (id, _, _) = stalled.prepare("SELECT id, v FROM big.t WHERE id >= ?").unwrap();
    match stalled.execute(id, &[testkit::raw_client::MValue::Int(1000)]).unwrap() {
        testkit::raw_client::Response::BinaryRows { rows, .. } => assert_eq!(rows.len(), ROWS + 1 - 1000),
        other => panic!("{other:?}"),
    }
}

#[test]
fn string_results_over_max_allowed_packet_are_null_with_warning_1301() {
    let server = ServerProcess::start_with(&["--max_allowed_packet=1048576"]);
    let mut client = login(&server, None);
    let warning = |client: &mut RawClient| client.query_rows("SHOW WARNINGS").unwrap();
    let message = |name: &str| format!("Result of {name}() was larger than max_allowed_packet (1048576) - truncated");

    assert_eq!(client.value("SELECT LENGTH(REPEAT('ab', 524288))"), "1048576", "exactly the bound is allowed");
    assert!(warning(&mut client).is_empty());
    // Checked before allocating: a terabyte is refused as cheaply.
    let before = rss_bytes(&server);
    let rows = client.query_rows("SELECT REPEAT('a', 1099511627776), LENGTH(REPEAT('ab', 524289))").unwrap();
    assert_eq!(rows, vec![vec![None, None]]);
    assert_eq!(
        warning(&mut client),
        vec![
            vec![Some("Warning".into()), Some("1301".into()), Some(message("repeat"))],
            vec![Some("Warning".into()), Some("1301".into()), Some(message("repeat"))],
        ]
    );
    // Each REPEAT fits; their CONCAT does not.
    let rows = client.query_rows("SELECT CONCAT(REPEAT('a', 600000), REPEAT('b', 600000)) IS NULL").unwrap();
    assert_eq!(rows, vec![vec![Some("1".into())]]);
    assert_eq!(warning(&mut client), vec![vec![Some("Warning".into()), Some("1301".into()), Some(message("concat"))]]);
    for (sql, name) in [
        ("SELECT LPAD('x', 2000000, 'ab')", "lpad"),
        ("SELECT RPAD('x', 2000000, 'ab')", "rpad"),
        ("SELECT SPACE(2000000)", "space"),
        ("SELECT REPLACE(REPEAT('a', 1000), 'a', REPEAT('b', 2000))", "replace"),
        ("SELECT INSERT('abc', 2, 1, REPEAT('z', 1048576))", "insert"),
        ("SELECT CONCAT_WS(REPEAT(',', 600000), 'a', 'b', 'c')", "concat_ws"),
    ] {
        assert_eq!(client.query_rows(sql).unwrap(), vec![vec![None]], "{sql}");
        assert_eq!(warning(&mut client), vec![vec![Some("Warning".into()), Some("1301".into()), Some(message(name))]], "{sql}");
    }
    assert!(rss_bytes(&server) < before + 64 * MIB, "no result over the bound was built");

    // The count in the result's EOF is the warnings' (pymysql reads it).
    let script = format!(
        "import pymysql\nc = pymysql.connect(host='127.0.0.1', port={}, user='root')\ncur = c.cursor()\n\
         cur.execute(\"SELECT REPEAT('a', 2000000)\")\nprint(cur.fetchall(), cur._result.warning_count)\n",
        server.port
    );
    let output = std::process::Command::new("python3").args(["-c", &script]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "((None,),) 1", "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn a_header_announcing_16_mib_allocates_nothing_before_the_bytes_come() {
    let server = ServerProcess::start();
    let before = rss_bytes(&server);
    // Each logged-in client announces a 16 MiB command and sends 10 bytes.
    let mut clients: Vec<RawClient> = (0..16).map(|_| login(&server, None)).collect();
    for client in &mut clients {
        let mut header = vec![0xFE, 0xFF, 0xFF, 0x00, 0x03];
        header.extend_from_slice(b"SELECT 1 ");
        client.socket.write_all(&header).unwrap();
    }
    std::thread::sleep(Duration::from_secs(1));
    let growth = rss_bytes(&server).saturating_sub(before);
    assert!(growth < 32 * MIB, "RSS grew {} MiB for 16 headers announcing 16 MiB each", growth / MIB);
    let mut bystander = login(&server, None);
    assert_eq!(bystander.value("SELECT 6 * 7"), "42");
    drop(clients);
}

#[test]
fn max_prepared_stmt_count_bounds_the_whole_servers_statements() {
    let server = ServerProcess::start_with(&["--max_prepared_stmt_count=5"]);
    let mut first = login(&server, None);
    let mut second = login(&server, None);
    assert_eq!(first.value("SELECT @@GLOBAL.max_prepared_stmt_count"), "5");
    first.query_rows("SET GLOBAL max_prepared_stmt_count = 3").unwrap();
    let count = |client: &mut RawClient| client.query_rows("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'").unwrap()[0][1].clone();

    let (one, _, _) = first.prepare("SELECT 1").unwrap();
    first.prepare("SELECT 2").unwrap();
    second.prepare("SELECT 3").unwrap();
    assert_eq!(count(&mut second), Some("3".into()));
    let error = second.prepare("SELECT 4").unwrap_err();
    assert_eq!(
        (error.code, error.state.as_str(), error.message.as_str()),
        (1461, "42000", "Can't create more than max_prepared_stmt_count statements (current value: 3)")
    );
    assert_eq!(first.prepare("SELECT 4").unwrap_err().code, 1461, "the first connection is bounded by the second's statement too");

    // COM_STMT_CLOSE gives a slot back, to any connection.
    let mut close = vec![0x19];
    close.extend_from_slice(&one.to_le_bytes());
    first.command(&close);
    // COM_STMT_CLOSE has no answer: a statement after it on the same
    // connection shows that it ran.
    assert_eq!(first.value("SELECT 1"), "1");
    second.prepare("SELECT 4").unwrap();
    assert_eq!(count(&mut first), Some("3".into()));
    // A connection that ends gives all of its back.
    drop(second);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while count(&mut first) != Some("1".into()) {
        assert!(std::time::Instant::now() < deadline, "the closed connection's statements were not given back");
        std::thread::sleep(Duration::from_millis(20));
    }
    first.prepare("SELECT 5").unwrap();
    first.prepare("SELECT 6").unwrap();
    assert_eq!(first.prepare("SELECT 7").unwrap_err().code, 1461);
}

#[test]
fn a_row_over_max_allowed_packet_ends_the_result_with_1153() {
    let server = ServerProcess::start();
    let mut setup = login(&server, None);
    setup.query_rows("CREATE DATABASE wide").unwrap();
    setup.query_rows("CREATE TABLE wide.t (id INT PRIMARY KEY, a LONGTEXT, b LONGTEXT)").unwrap();
    setup.query_rows("INSERT INTO wide.t VALUES (1, 'a', 'b'), (2, REPEAT('a', 600000), REPEAT('b', 600000)), (3, 'a', 'b')").unwrap();
    // The session value is the global one when the session began (it is
    // read-only in MySQL), so the bound comes with a new connection.
    setup.query_rows("SET GLOBAL max_allowed_packet = 1048576").unwrap();
    let mut client = login(&server, None);
    assert_eq!(client.value("SELECT @@max_allowed_packet"), "1048576");

    // Each column fits alone; both do not.
    assert_eq!(client.value("SELECT SUM(LENGTH(a)) FROM wide.t WHERE id = 2"), "600000");
    client.command(b"\x03SELECT id, a FROM wide.t");
    assert_eq!(read_rows(&mut client, |_| {}), (3, None));
    let expected = (1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes");
    client.command(b"\x03SELECT id, a, b FROM wide.t");
    let (rows, error) = read_rows(&mut client, |_| {});
    let error = error.expect("an ERR after the rows that fit");
    assert_eq!((rows, error.code, error.state.as_str(), error.message.as_str()), (1, expected.0, expected.1, expected.2));
    assert_eq!(client.value("SELECT COUNT(*) FROM wide.t"), "3", "the connection goes on");

    // The binary protocol's rows are bounded as well.
    let (id, _, _) = client.prepare("SELECT id, a, b FROM wide.t WHERE id >= ?").unwrap();
    let error = client.execute(id, &[testkit::raw_client::MValue::Int(2)]).unwrap_err();
    assert_eq!((error.code, error.state.as_str(), error.message.as_str()), expected);
    assert_eq!(client.value("SELECT COUNT(*) FROM wide.t"), "3");

    // A connection made before the change keeps its bound, as in MySQL.
    client.command(b"\x03SELECT id, a, b FROM wide.t");
    assert_eq!(read_rows(&mut client, |_| {}).0, 1);
    setup.command(b"\x03SELECT id, a, b FROM wide.t");
    assert_eq!(read_rows(&mut setup, |_| {}), (3, None));
}

#[test]
fn warnings_raised_while_a_result_streams_are_counted_and_kept() {
    let server = ServerProcess::start();
    let mut setup = login(&server, None);
    setup.query_rows("CREATE DATABASE warn").unwrap();
    setup.query_rows("CREATE TABLE warn.t (id INT PRIMARY KEY)").unwrap();
    let ids: Vec<String> = (0..1000).map(|id| format!("({id})")).collect();
    setup.query_rows(&format!("INSERT INTO warn.t VALUES {}", ids.join(","))).unwrap();

    // 1/0 warns (1365, not an error in a SELECT) at rows 10 (in the first
    // batch, read while the statement runs) and 700 and 900 (streamed
    // after it returned); the result's EOF counts all three and SHOW
    // WARNINGS lists them, as pymysql reads them.
    let script = format!(
        "import pymysql\nc = pymysql.connect(host='127.0.0.1', port={}, user='root')\ncur = c.cursor()\n\
         cur.execute('SELECT id, 1 / ((id - 10) * (id - 700) * (id - 900)) FROM warn.t')\n\
         rows = cur.fetchall()\nprint(len(rows), [row[0] for row in rows if row[1] is None], cur._result.warning_count)\n\
         cur.execute('SHOW WARNINGS')\nprint(cur.fetchall())\n\
         cur.execute('SELECT id FROM warn.t')\nprint(len(cur.fetchall()), cur._result.warning_count)\n",
        server.port
    );
    let output = std::process::Command::new("python3").args(["-c", &script]).output().unwrap();
    let warning = "('Warning', 1365, 'Division by 0')";
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("1000 [10, 700, 900] 3\n({warning}, {warning}, {warning})\n1000 0\n"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
