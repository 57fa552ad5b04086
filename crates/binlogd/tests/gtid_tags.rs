//! Tagged GTIDs (MySQL 8.3+, `uuid:tag:N`) through `binlogd serve`:
//! `SET gtid_next` with a tag, `@@gtid_executed` showing it, SHOW BINLOG
//! EVENTS, the Gtid_tagged_log_event in the file and the tagged
//! Previous_gtids of the next file as `mysql_common` decodes them, a
//! COM_BINLOG_DUMP_GTID from a tagged set skipping what the set holds,
//! `binlogd inspect` printing the GTIDs as mysqlbinlog 8.4 does, the
//! GTIDs after a restart, the GTID set functions, SHOW BINARY LOG STATUS
//! and `gtid_purged` with tags, and what `mariadb-binlog` makes of the
//! files.

mod support;

use std::time::Duration;

use binlog_format::events::GtidEvent;
use binlog_format::frame::RawEvent;
use binlog_format::{Gtid, GtidSet};
use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::EventData;
use mysql_common::binlog::BinlogFile;
use replica::source_client::DumpPacket;
use replica::{SourceAddress, SourceClient};
use support::{inspect, ServerProcess};
use testkit::SOURCE_UUID as SOURCE;

/// `@@gtid_executed` as MySQL prints it: UUIDs sorted, `,\n` between them
/// (the batch-mode client shows the newline as `\n`).
fn expected_executed(own: &str, own_last: u64, source: &str) -> String {
    let mut parts = [format!("{own}:1-{own_last}"), source.to_string()];
    parts.sort();
    format!("{}\n", parts.join(",\\n"))
}

/// (type code, GTID text) of every Gtid event, and the Previous_gtids set
/// as (uuid, tag, intervals), as `mysql_common` decodes `path`.
type TheirSources = Vec<(String, Option<String>, Vec<(u64, u64)>)>;
fn read_with_mysql_common(path: &std::path::Path) -> (Vec<(u8, String)>, TheirSources) {
    let bytes = std::fs::read(path).unwrap();
    let mut gtids = Vec::new();
    let mut previous = Vec::new();
    for event in BinlogFile::new(BinlogVersion::Version4, &bytes[..]).unwrap() {
        let event = event.unwrap_or_else(|error| panic!("mysql_common reads {}: {error}", path.display()));
        let event_type = event.header().event_type_raw();
        match event.read_data().unwrap() {
            Some(EventData::GtidEvent(gtid)) => {
                let uuid = binlog_format::Uuid(gtid.sid());
                let text = match gtid.tag() {
                    Some(tag) => format!("{uuid}:{}:{}", tag.as_str(), gtid.gno()),
                    None => format!("{uuid}:{}", gtid.gno()),
                };
                gtids.push((event_type, text));
            }
            Some(EventData::PreviousGtidsEvent(set)) => {
                previous = set
                    .sids()
                    .iter()
                    .map(|sid| {
                        let intervals = sid.intervals().iter().map(|i| (i.start(), i.end())).collect();
                        (binlog_format::Uuid(sid.uuid()).to_string(), sid.tag().map(|t| t.as_str().to_owned()), intervals)
                    })
                    .collect();
            }
            _ => {}
        }
    }
    (gtids, previous)
}

/// The GTIDs a non-blocking COM_BINLOG_DUMP_GTID from `executed` sends.
fn dumped_gtids(port: u16, executed: &GtidSet) -> Vec<Gtid> {
    let address = SourceAddress { host: "127.0.0.1".into(), port, user: "root".into(), password: String::new() };
    let mut client = SourceClient::connect(&address, Duration::from_secs(10)).unwrap();
    client.negotiate_checksum().unwrap();
    client.request_dump_gtid(4242, executed, true).unwrap();
    let checksum = client.events_have_checksum();
    let mut gtids = Vec::new();
    loop {
        match client.read_event().unwrap() {
            DumpPacket::EndOfLog => break,
            DumpPacket::Event(bytes) => {
                let raw = RawEvent::parse(bytes, checksum).unwrap();
                if GtidEvent::is_gtid_type(raw.header.event_type) {
                    gtids.push(GtidEvent::decode_body_of_type(raw.header.event_type, raw.body).unwrap().gtid);
                }
            }
        }
    }
    client.close();
    gtids
}

#[test]
fn tagged_gtids_through_serve_the_file_the_dump_and_inspect() {
    let mut server = ServerProcess::start();
    server.query(None, "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, PRIMARY KEY (id))");
    let own = server.query(None, "SELECT @@server_uuid").trim().to_string();

    // The tag folds to lower case; untagged GTIDs of the same UUID stay apart.
    server.query(None, &format!("SET gtid_next = '{SOURCE}:Domain_1:1'; INSERT INTO shop.t VALUES (1); SET gtid_next = 'AUTOMATIC'"));
    server.query(
        None,
        &format!("SET gtid_next = '{SOURCE}:domain_1:2'; BEGIN; INSERT INTO shop.t VALUES (2); COMMIT; SET gtid_next = 'AUTOMATIC'"),
    );
    server.query(None, &format!("SET gtid_next = '{SOURCE}:5'; INSERT INTO shop.t VALUES (5); SET gtid_next = 'AUTOMATIC'"));
    assert_eq!(server.query(None, &format!("SET gtid_next = '{SOURCE}:B:7'; SELECT @@gtid_next")), format!("{SOURCE}:b:7\n"));
    // Executed: skipped.
    server.query(None, &format!("SET gtid_next = '{SOURCE}:domain_1:1'; INSERT INTO shop.t VALUES (100); SET gtid_next = 'AUTOMATIC'"));
    assert_eq!(server.query(None, "SELECT id FROM shop.t ORDER BY id"), "1\n2\n5\n");
    let error = server.error(None, &format!("SET gtid_next = '{SOURCE}:1bad:1'"));
    assert!(
        error.contains("ERROR 1231 (42000)")
            && error.contains(&format!("Variable 'gtid_next' can't be set to the value of '{SOURCE}:1bad:1'")),
        "{error}"
    );

    // The GTID set functions read tags.
    assert_eq!(
        server.query(
            None,
            &format!(
                "SELECT GTID_SUBSET('{SOURCE}:DOMAIN_1:1-2', @@gtid_executed), GTID_SUBSET('{SOURCE}:domain_1:9', @@gtid_executed), \
                 GTID_SUBTRACT('{SOURCE}:1-6:domain_1:1-4', @@gtid_executed)"
            )
        ),
        format!("1\t0\t{SOURCE}:1-4:6:domain_1:3-4\n")
    );
    assert_eq!(server.query(None, &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{SOURCE}:domain_1:1-2', 1)")), "0\n");
    assert_eq!(server.query(None, &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{SOURCE}:domain_1:9', 0.2)")), "1\n");
    let error = server.error(None, &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{SOURCE}:1bad:1', 1)"));
    assert!(
        error.contains("ERROR 1772 (HY000)") && error.contains(&format!("Malformed GTID set specification '{SOURCE}:1bad:1'.")),
        "{error}"
    );

    let own_last: u64 = 2;
    let source_part = format!("{SOURCE}:5:domain_1:1-2");
    assert_eq!(server.query(None, "SELECT @@global.gtid_executed"), expected_executed(&own, own_last, &source_part));
    let events = server.query(None, "SHOW BINLOG EVENTS");
    assert_eq!(events.matches("\tGtid_tagged\t").count(), 2, "{events}");
    for gno in [1, 2] {
        assert!(events.contains(&format!("SET @@SESSION.GTID_NEXT= '{SOURCE}:domain_1:{gno}'")), "{events}");
    }
    assert!(events.contains(&format!("SET @@SESSION.GTID_NEXT= '{SOURCE}:5'")), "{events}");

    server.query(None, "FLUSH BINARY LOGS");
    let files = server.binlog_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let (gtids, _) = read_with_mysql_common(&files[0]);
    let source_gtids: Vec<_> = gtids.iter().filter(|(_, text)| text.starts_with(&SOURCE.to_string())).cloned().collect();
    assert_eq!(source_gtids, [(42, format!("{SOURCE}:domain_1:1")), (42, format!("{SOURCE}:domain_1:2")), (33, format!("{SOURCE}:5"))]);
    let (_, previous) = read_with_mysql_common(&files[1]);
    let mut expected_previous = vec![
        (own.clone(), None, vec![(1, own_last + 1)]),
        (SOURCE.to_string(), None, vec![(5, 6)]),
        (SOURCE.to_string(), Some("domain_1".to_string()), vec![(1, 3)]),
    ];
    expected_previous.sort();
    assert_eq!(previous, expected_previous);

    // A dump from a set holding domain_1:1 and our own GTIDs sends the
    // rest: domain_1:2 and the untagged 5.
    let from: GtidSet = format!("{own}:1-{own_last},{SOURCE}:domain_1:1").parse().unwrap();
    let dumped: Vec<String> = dumped_gtids(server.port, &from).iter().map(Gtid::to_string).collect();
    assert_eq!(dumped, [format!("{SOURCE}:domain_1:2"), format!("{SOURCE}:5")]);
    let all: GtidSet = format!("{own}:1-{own_last},{SOURCE}:5:domain_1:1-2").parse().unwrap();
    assert!(dumped_gtids(server.port, &all).is_empty());

    let text = inspect(&[], &files[0]);
    assert!(text.contains(&format!("SET @@SESSION.GTID_NEXT= '{SOURCE}:domain_1:1'/*!*/;")), "{text}");
    let next = inspect(&[], &files[1]);
    assert!(next.contains(&format!("{SOURCE}:5:domain_1:1-2")), "{next}");
    inspect(&["--verify"], &files[0]);
    let json = inspect(&["--json"], &files[0]);
    let line = json.lines().find(|line| line.contains(&format!("\"gtid\":\"{SOURCE}:domain_1:2\""))).expect("the Gtid event's line");
    assert!(line.contains("\"type_code\":42") && line.contains("\"tag\":\"domain_1\"") && line.contains("\"gno\":2"), "{line}");

    server.restart();
    assert_eq!(server.query(None, "SELECT @@gtid_executed"), expected_executed(&own, own_last, &source_part));
    server.query(None, &format!("SET gtid_next = '{SOURCE}:domain_1:2'; INSERT INTO shop.t VALUES (200); SET gtid_next = 'AUTOMATIC'"));
    // A wait for a tagged GTID ends when it commits.
    let waiter = {
        let port = server.port;
        std::thread::spawn(move || {
            support::mariadb_client(port, "root", "", None, &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{SOURCE}:domain_1:3', 20)"))
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    server.query(None, &format!("SET gtid_next = '{SOURCE}:domain_1:3'; INSERT INTO shop.t VALUES (3); SET gtid_next = 'AUTOMATIC'"));
    let waited = waiter.join().unwrap();
    assert_eq!(String::from_utf8_lossy(&waited.stdout), "0\n", "{}", String::from_utf8_lossy(&waited.stderr));
    assert_eq!(server.query(None, "SELECT id FROM shop.t ORDER BY id"), "1\n2\n3\n5\n");
    assert_eq!(server.query(None, "SELECT @@gtid_executed"), expected_executed(&own, own_last, &format!("{SOURCE}:5:domain_1:1-3")));
    server.stop();

    // mariadb-binlog (MariaDB 10.11) knows no type 42 and, the event not
    // being flagged ignorable (MySQL does not flag it either), stops at the
    // first one with "Found invalid event", as it does on a MySQL 9.6 file
    // with tagged GTIDs; a file whose only tags are in its Previous_gtids
    // (type 35, which it skips as MySQL's) reads to the end.
    let mut refused = 0;
    for file in server.binlog_files() {
        inspect(&["--verify"], &file);
        let tagged_events = read_with_mysql_common(&file).0.iter().filter(|(event_type, _)| *event_type == 42).count();
        let output = std::process::Command::new("mariadb-binlog").arg("--verbose").arg(&file).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        if tagged_events == 0 {
            assert!(output.status.success(), "mariadb-binlog {}: {stderr}", file.display());
        } else {
            assert!(
                !output.status.success() && stderr.contains("Found invalid event in binary log") && stderr.contains("event_type: 42"),
                "{stderr}"
            );
            refused += 1;
        }
    }
    assert_eq!(refused, 2, "the first file and the one after the restart hold tagged Gtid events");
}

/// A binlogd replica of binlogd applies tagged transactions with their
/// GTIDs, logs them as type 42, and after STOP/START REPLICA asks again
/// with its tagged gtid_executed, getting only what it lacks.
#[test]
fn a_binlogd_replica_applies_tagged_gtids_with_their_tags() {
    let source = ServerProcess::start();
    source.query(None, "CREATE USER 'repl'@'%' IDENTIFIED BY 'repl-pw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'");
    source.query(None, "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, PRIMARY KEY (id))");
    source.query(None, &format!("SET gtid_next = '{SOURCE}:batch:1'; INSERT INTO shop.t VALUES (1); SET gtid_next = 'AUTOMATIC'"));
    source.query(None, &format!("SET gtid_next = '{SOURCE}:batch:2'; INSERT INTO shop.t VALUES (2); SET gtid_next = 'AUTOMATIC'"));

    let replica = ServerProcess::start_with(&["--server-id=2"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='repl-pw',
                 SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1; START REPLICA",
            source.port
        ),
    );
    let caught_up = |wanted: &str| {
        let waited = replica.query(None, &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{wanted}', 60)"));
        assert_eq!(waited, "0\n", "replica at {}", replica.query(None, "SELECT @@gtid_executed"));
    };
    let executed = |server: &ServerProcess| server.query(None, "SELECT @@gtid_executed");
    caught_up(&executed(&source).replace("\\n", ""));
    assert_eq!(replica.query(None, "SELECT id FROM shop.t ORDER BY id"), "1\n2\n");
    assert_eq!(executed(&replica), executed(&source));
    let events = replica.query(None, "SHOW BINLOG EVENTS");
    assert!(events.contains("\tGtid_tagged\t") && events.contains(&format!("SET @@SESSION.GTID_NEXT= '{SOURCE}:batch:2'")), "{events}");

    replica.query(None, "STOP REPLICA");
    source.query(None, &format!("SET gtid_next = '{SOURCE}:batch:3'; INSERT INTO shop.t VALUES (3); SET gtid_next = 'AUTOMATIC'"));
    replica.query(None, "START REPLICA");
    caught_up(&format!("{SOURCE}:batch:1-3"));
    assert_eq!(replica.query(None, "SELECT id FROM shop.t ORDER BY id"), "1\n2\n3\n");
    assert_eq!(executed(&replica), executed(&source));
}

/// A tagged GTID with the server's own UUID is a GTID of its own: the
/// automatic numbering of the untagged ones goes on where it was, in both
/// storage modes and after a restart.
#[test]
fn a_tagged_gtid_of_the_servers_uuid_leaves_automatic_numbering_alone() {
    for options in [&[][..], &["--binlog_storage_engine=engine"][..]] {
        let mut server = ServerProcess::start_with(options);
        server.query(None, "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, PRIMARY KEY (id))");
        let own = server.query(None, "SELECT @@server_uuid").trim().to_string();
        server.query(None, &format!("SET gtid_next = '{own}:mine:100'; INSERT INTO shop.t VALUES (1); SET gtid_next = 'AUTOMATIC'"));
        server.query(None, "INSERT INTO shop.t VALUES (2)");
        assert_eq!(server.query(None, "SELECT @@gtid_executed"), format!("{own}:1-3:mine:100\n"), "{options:?}");
        server.restart();
        server.query(None, "INSERT INTO shop.t VALUES (3)");
        assert_eq!(server.query(None, "SELECT @@gtid_executed"), format!("{own}:1-4:mine:100\n"), "{options:?}");
        server.stop();
    }
}

/// SHOW BINARY LOG STATUS prints the tagged `gtid_executed`, and once the
/// file holding tagged transactions is purged, `gtid_purged` names their
/// tags, in both storage modes.
#[test]
fn binary_log_status_and_gtid_purged_show_tagged_sets() {
    for options in [&[][..], &["--binlog_storage_engine=engine"][..]] {
        let mut server = ServerProcess::start_with(options);
        server.query(None, "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, PRIMARY KEY (id))");
        let own = server.query(None, "SELECT @@server_uuid").trim().to_string();
        server.query(
            None,
            &format!(
                "SET gtid_next = '{SOURCE}:domain_1:1'; INSERT INTO shop.t VALUES (1);
                 SET gtid_next = '{SOURCE}:4'; INSERT INTO shop.t VALUES (4); SET gtid_next = 'AUTOMATIC'"
            ),
        );
        server.query(None, "FLUSH BINARY LOGS");
        server.query(None, &format!("SET gtid_next = '{SOURCE}:domain_1:2'; INSERT INTO shop.t VALUES (2); SET gtid_next = 'AUTOMATIC'"));

        let executed = server.query(None, "SELECT @@gtid_executed");
        assert_eq!(executed, expected_executed(&own, 2, &format!("{SOURCE}:4:domain_1:1-2")), "{options:?}");
        let status = server.query(None, "SHOW BINARY LOG STATUS");
        let columns: Vec<&str> = status.trim_end_matches('\n').split('\t').collect();
        assert_eq!(columns.len(), 5, "{status}");
        assert_eq!(columns[4], executed.trim_end_matches('\n'), "Executed_Gtid_Set, {options:?}");
        assert_eq!(server.query(None, "SELECT @@gtid_purged"), "\n", "{options:?}");

        let logs = server.query(None, "SHOW BINARY LOGS");
        let active = logs.lines().last().and_then(|line| line.split('\t').next()).unwrap().to_string();
        server.query(None, &format!("PURGE BINARY LOGS TO '{active}'"));
        assert_eq!(server.query(None, "SHOW BINARY LOGS").lines().count(), 1, "{options:?}");
        assert_eq!(
            server.query(None, "SELECT @@gtid_purged"),
            expected_executed(&own, 2, &format!("{SOURCE}:4:domain_1:1")),
            "the first file's GTIDs, {options:?}"
        );
        assert_eq!(
            server.query(
                None,
                &format!("SELECT GTID_SUBSET('{SOURCE}:domain_1:1', @@gtid_purged), GTID_SUBSET('{SOURCE}:domain_1:2', @@gtid_purged)")
            ),
            "1\t0\n",
            "{options:?}"
        );
        server.stop();
    }
}
