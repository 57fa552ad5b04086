//! `binlog_transaction_compression` as in MySQL 8.0.20+: a row-based
//! transaction of a session with it ON is written as its Gtid and one
//! zstd Transaction_payload holding BEGIN, Table_map, rows and Xid; DDL
//! and sessions with it OFF are written as they are. mysql_common (the
//! oracle) decodes the payload to the rows committed, in CRC32 and NONE
//! files, `binlogd inspect` shows the rows inside, the status counters
//! add up, binlogd's replica applies it, python-mysql-replication 1.0
//! (which has no Transaction_payload decoder) sees only the uncompressed
//! transactions, mariadb-binlog stops at the first payload with its
//! "incompatible" message, and a transaction large enough to be promoted still is,
//! uncompressed.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use mysql_common::binlog::consts::{BinlogVersion, EventType};
use mysql_common::binlog::events::{EventData, RowsEventData};
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use support::{python_script, ServerProcess};

/// One transaction as mysql_common reads it: whether it was compressed,
/// and its row changes as (kind, id of the after or before image).
#[derive(Debug, PartialEq)]
struct Transaction {
    compressed: bool,
    rows: Vec<(&'static str, i64)>,
}

fn id_of(row: Option<mysql_common::binlog::row::BinlogRow>) -> Option<i64> {
    let row = row?;
    match row.as_ref(0).unwrap() {
        BinlogValue::Value(mysql_common::Value::Int(id)) => Some(*id),
        other => panic!("unexpected id {other:?}"),
    }
}

fn rows_of(event: &EventData<'_>, reader: &mysql_common::binlog::EventStreamReader) -> Vec<(&'static str, i64)> {
    let EventData::RowsEvent(rows) = event else { return Vec::new() };
    let kind = match rows {
        RowsEventData::WriteRowsEvent(_) => "write",
        RowsEventData::UpdateRowsEvent(_) => "update",
        _ => "delete",
    };
    let map = reader.get_tme(rows.table_id()).expect("table map precedes rows");
    rows.rows(map)
        .map(|row| {
            let (before, after) = row.unwrap();
            (kind, id_of(after).or(id_of(before)).unwrap())
        })
        .collect()
}

/// Every transaction with row events in `path`, decoded by mysql_common
/// (payloads decompressed with its reader).
fn transactions(path: &std::path::Path) -> Vec<Transaction> {
    let bytes = std::fs::read(path).unwrap();
    let mut file = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).unwrap();
    let mut found = Vec::new();
    while let Some(event) = file.next() {
        let event = event.unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        match event.header().event_type() {
            Ok(EventType::GTID_EVENT) => found.push(Transaction { compressed: false, rows: Vec::new() }),
            Ok(EventType::TRANSACTION_PAYLOAD_EVENT) => {
                let Some(EventData::TransactionPayloadEvent(payload)) = event.read_data().unwrap() else { unreachable!() };
                let mut inner = payload.decompressed().unwrap();
                let mut rows = Vec::new();
                let mut kinds = Vec::new();
                while let Some(inner_event) = file.reader_mut().read_decompressed(&mut inner).unwrap() {
                    kinds.push(inner_event.header().event_type().unwrap());
                    if let Some(data) = inner_event.read_data().unwrap() {
                        rows.extend(rows_of(&data, file.reader()));
                    }
                }
                assert_eq!(kinds.first(), Some(&EventType::QUERY_EVENT), "the payload starts with BEGIN");
                assert_eq!(kinds.last(), Some(&EventType::XID_EVENT), "the payload ends with the Xid");
                let last = found.last_mut().expect("a Gtid before the payload");
                last.compressed = true;
                last.rows = rows;
            }
            _ => {
                if let Some(data) = event.read_data().unwrap() {
                    let rows = rows_of(&data, file.reader());
                    if let Some(last) = found.last_mut() {
                        last.rows.extend(rows);
                    }
                }
            }
        }
    }
    found.into_iter().filter(|transaction| !transaction.rows.is_empty()).collect()
}

fn all_transactions(server: &ServerProcess) -> Vec<Transaction> {
    let dir = server.datadir.join("binlog");
    let names: Vec<String> =
        server.query(None, "SHOW BINARY LOGS").lines().map(|line| line.split('\t').next().unwrap().to_string()).collect();
    names.iter().flat_map(|name| transactions(&dir.join(name))).collect()
}

fn status(server: &ServerProcess, name: &str) -> u64 {
    let row = server.query(None, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    row.trim().rsplit('\t').next().unwrap().parse().unwrap()
}

fn workload(server: &ServerProcess) {
    // Compressible rows: each payload is much smaller than its events.
    server.query(
        None,
        "SET binlog_transaction_compression = ON;
         BEGIN; INSERT INTO c.t VALUES (1, REPEAT('a', 500)), (2, REPEAT('b', 500)); UPDATE c.t SET v = REPEAT('c', 500) WHERE id = 1; COMMIT;
         DELETE FROM c.t WHERE id = 2;
         SET binlog_transaction_compression = OFF;
         INSERT INTO c.t VALUES (3, 'plain')",
    );
}

#[test]
fn a_compressing_sessions_row_transactions_are_one_zstd_payload_each() {
    let source = ServerProcess::start();
    source.query(
        None,
        "CREATE USER 'repl'@'%' IDENTIFIED BY 'pw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';
         CREATE USER 'plain'@'%' IDENTIFIED BY 'pw';
         CREATE DATABASE c; CREATE TABLE c.t (id INT NOT NULL, v VARCHAR(600), PRIMARY KEY (id))",
    );
    assert_eq!(source.query(None, "SELECT @@global.binlog_transaction_compression, @@binlog_transaction_compression_level_zstd"), "0\t3\n");
    // MySQL 8.4 restricts the session value; an out-of-range level is
    // adjusted with a warning.
    let refused = source.error_as("plain", "pw", None, "SET SESSION binlog_transaction_compression = ON");
    assert!(refused.contains("ERROR 1227 (42000)"), "{refused}");
    assert_eq!(
        source.query(
            None,
            "SET binlog_transaction_compression_level_zstd = 30; SHOW WARNINGS; SELECT @@binlog_transaction_compression_level_zstd"
        ),
        "Warning\t1292\tTruncated incorrect binlog_transaction_compression_level_zstd value: '30'\n22\n"
    );

    workload(&source);
    assert_eq!(
        all_transactions(&source),
        vec![
            Transaction { compressed: true, rows: vec![("write", 1), ("write", 2), ("update", 1)] },
            Transaction { compressed: true, rows: vec![("delete", 2)] },
            Transaction { compressed: false, rows: vec![("write", 3)] },
        ]
    );
    let first_file =
        source.datadir.join("binlog").join(source.query(None, "SHOW BINARY LOGS").lines().next().unwrap().split('\t').next().unwrap());
    let output = Command::new("mariadb-binlog").arg("--verbose").arg(&first_file).output().expect("run mariadb-binlog");
    // mariadb-binlog (MariaDB 10.11) has no Transaction_payload decoder:
    // it stops at the first one with this message, as it does on a MySQL
    // file written with compression ON.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Found incompatible MySQL 8.0 TRANSACTION_PAYLOAD_EVENT event"), "{stderr}");
    assert_eq!(status(&source, "Binlog_transaction_compression_zstd_transaction_counter"), 2);
    let compressed = status(&source, "Binlog_transaction_compression_zstd_compressed_bytes_counter");
    let uncompressed = status(&source, "Binlog_transaction_compression_zstd_uncompressed_bytes_counter");
    assert!(compressed > 0 && compressed * 2 < uncompressed, "{compressed} of {uncompressed} bytes");
    // binlogd inspect shows the events and rows inside each payload.
    let text = support::inspect(&["--verify"], &first_file);
    assert_eq!(text.matches("# Start of compressed events!").count(), 2, "{text}");
    for expected in ["### INSERT INTO `c`.`t`", "### UPDATE `c`.`t`", "### DELETE FROM `c`.`t`", "###   id=2", "compression_type=ZSTD"] {
        assert!(text.contains(expected), "inspect lacks {expected:?}:\n{text}");
    }

    // A global ON reaches sessions that did not set their own, and a file
    // written with binlog_checksum = NONE holds payloads without footers
    // that mysql_common decodes too.
    source.query(None, "SET GLOBAL binlog_checksum = NONE; SET GLOBAL binlog_transaction_compression = ON");
    source.query(None, "INSERT INTO c.t VALUES (4, REPEAT('d', 500))");
    assert_eq!(all_transactions(&source).last(), Some(&Transaction { compressed: true, rows: vec![("write", 4)] }));
    // Back to CRC32: python-mysql-replication declares the global
    // algorithm, and the dump refuses a NONE reader at a CRC32 file.
    source.query(None, "SET GLOBAL binlog_transaction_compression = OFF; SET GLOBAL binlog_checksum = CRC32");

    // binlogd's replica applies the payloads.
    let replica = ServerProcess::start_with(&["--server-id=2"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='pw',
                 SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=1;
             START REPLICA",
            source.port
        ),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while replica.query(None, "SELECT @@gtid_executed") != source.query(None, "SELECT @@gtid_executed") {
        assert!(Instant::now() < deadline, "replica stalled: {}", replica.query(None, "SHOW REPLICA STATUS"));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(replica.query(None, "SELECT id, v FROM c.t ORDER BY id"), source.query(None, "SELECT id, v FROM c.t ORDER BY id"));

    // python-mysql-replication 1.0 skips type 40 as an event it does not
    // know: it sees only the uncompressed transaction's rows.
    let first = source.query(None, "SHOW BINARY LOGS").lines().next().unwrap().split('\t').next().unwrap().to_string();
    let output = Command::new("python3")
        .arg(python_script("read_rows.py"))
        .args([&source.port.to_string(), "position", &first, "4"])
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let ids: Vec<i64> = stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|line| line.get("event").is_some())
        .flat_map(|line| line["rows"].as_array().unwrap().iter().map(|row| row["id"].as_i64().unwrap()).collect::<Vec<_>>())
        .collect();
    assert_eq!(ids, vec![3], "{stdout}");
}

/// A transaction past the promotion threshold is promoted by rename, in
/// constant time, and left uncompressed (docs/format.md).
#[test]
fn a_large_transaction_is_promoted_uncompressed() {
    let server = ServerProcess::start_with(&["--binlog_large_transaction_optimization_threshold=10485760"]);
    server.query(
        None,
        "CREATE DATABASE c; CREATE TABLE c.big (id INTEGER NOT NULL AUTO_INCREMENT, pad VARCHAR(8000) NOT NULL, PRIMARY KEY (id))",
    );
    // 1 row of 8,000 bytes doubled 11 times: 2,048 rows, about 16 MB.
    let mut big = "SET binlog_transaction_compression = ON; BEGIN; INSERT INTO c.big (pad) VALUES (REPEAT('x', 8000));".to_string();
    for _ in 0..11 {
        big.push_str("INSERT INTO c.big (pad) SELECT pad FROM c.big;");
    }
    big.push_str("COMMIT; INSERT INTO c.big (pad) VALUES ('small')");
    server.query(None, &big);
    assert_eq!(status(&server, "binlog_large_transaction_optimization_count"), 1);
    assert_eq!(status(&server, "Binlog_transaction_compression_zstd_transaction_counter"), 1, "only the small one");
    let found = all_transactions(&server);
    assert_eq!(found.len(), 2);
    assert!(!found[0].compressed && found[0].rows.len() == 2048, "{} rows", found[0].rows.len());
    assert!(found[1].compressed && found[1].rows == vec![("write", 2049)]);
    assert_eq!(server.query(None, "SELECT COUNT(*) FROM c.big"), "2049\n");
}
