//! `source_verify_checksum` (MySQL's, default OFF) and
//! `binlogd_dump_send_delay` on a dump: with the check off a dump passes
//! a stored event on byte for byte, bad CRC32 and all, and the reader's
//! own check finds it; with it ON the source ends the dump with 1236.
//! With no send delay a dump still follows the tail.

mod support;

use std::time::{Duration, Instant};

use replica::source_client::{DumpPacket, SourceAddress, SourceClient};
use support::Binlogd;

const MARKER: &[u8] = b"corrupt-me-please";

fn client(server: &Binlogd) -> SourceClient {
    let source = SourceAddress { host: "127.0.0.1".into(), port: server.port, user: "root".into(), password: String::new() };
    let mut client = SourceClient::connect(&source, Duration::from_secs(30)).unwrap();
    client.negotiate_checksum().unwrap();
    client
}

/// Dumps `file` from its start without blocking: Ok(event count) at the
/// end of the log, Err((code, message)) when the stream ends in an error.
fn dump_file(client: &mut SourceClient, file: &str) -> Result<usize, (u16, String)> {
    client.request_dump_position(77, file, 4, true).map_err(|error| (error.code, error.message.clone()))?;
    let mut events = 0;
    loop {
        match client.read_event() {
            Ok(DumpPacket::Event(_)) => events += 1,
            Ok(DumpPacket::EndOfLog) => return Ok(events),
            Err(error) => return Err((error.code, error.message.clone())),
        }
    }
}

#[test]
fn a_bad_crc_goes_through_unless_source_verify_checksum_is_on() {
    let server = Binlogd::start(&[]);
    server.query("CREATE DATABASE c; CREATE TABLE c.t (id INT NOT NULL, v VARCHAR(40), PRIMARY KEY (id))");
    server.query(&format!("INSERT INTO c.t VALUES (1, '{}'); FLUSH BINARY LOGS", String::from_utf8_lossy(MARKER)));
    let first = server.binlog_files()[0].clone();
    let path = server.binlog_dir().join(&first);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(MARKER.len()).position(|window| window == MARKER).expect("the row is in the first file");
    // A flipped row byte: the event's framing is intact, its CRC32 is not.
    bytes[at] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();

    assert_eq!(server.query("SELECT @@global.source_verify_checksum").trim(), "0");
    let mut unchecked = client(&server);
    unchecked.skip_event_verification();
    let events = dump_file(&mut unchecked, &first).expect("a dump that does not verify sends the file");
    assert!(events >= 8, "only {events} events");
    // The reader's own check is what finds it.
    let mut checking = client(&server);
    let (code, message) = dump_file(&mut checking, &first).expect_err("the reader verifies checksums");
    assert_eq!(code, 1743, "{message}");

    server.query("SET GLOBAL source_verify_checksum = ON");
    let mut refused = client(&server);
    refused.skip_event_verification();
    let (code, message) = dump_file(&mut refused, &first).expect_err("the source verifies checksums");
    assert_eq!(code, 1236, "{message}");
    assert!(message.starts_with("event read from binlog did not pass crc check; the first event"), "{message}");
}

#[test]
fn a_dump_without_send_delay_follows_every_commit() {
    let server = Binlogd::start(&["--binlogd_dump_send_delay=0"]);
    assert_eq!(server.query("SELECT @@global.binlogd_dump_send_delay").trim(), "0");
    server.query("CREATE DATABASE d; CREATE TABLE d.t (id INT NOT NULL, PRIMARY KEY (id))");
    let file = server.binlog_files().last().unwrap().clone();
    let mut reader = client(&server);
    reader.skip_event_verification();
    reader.request_dump_position(78, &file, 4, false).unwrap();
    let writer = {
        let port = server.port;
        std::thread::spawn(move || {
            for id in 1..=300 {
                let output = support::mariadb_client(port, "root", "", None, &format!("INSERT INTO d.t VALUES ({id})"));
                assert!(output.status.success(), "{output:?}");
            }
        })
    };
    // Every commit ends in an Xid event (type 16); a lost wake-up would
    // leave the reader short until the test's deadline.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut xids = 0;
    while xids < 300 {
        assert!(Instant::now() < deadline, "reader stalled at {xids} commits");
        if let DumpPacket::Event(event) = reader.read_event().unwrap() {
            if event[4] == 16 {
                xids += 1;
            }
        }
    }
    writer.join().unwrap();
    reader.close();
}
