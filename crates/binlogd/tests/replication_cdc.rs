//! binlogd as a replication source for CDC readers: python-mysql-replication
//! (position and auto-position) reads every row event of a scripted
//! workload, a promoted large transaction and a rotation included; the
//! dump's refusals (unknown file, purged GTIDs, undeclared checksums) are
//! MySQL's 1236 errors; `mariadb-binlog --read-from-remote-server --raw`
//! fetches files byte-identical to the disk and follows the tail with
//! `--stop-never`. `.ci/run` installs mysql-replication and mariadb-client.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{python_script, Binlogd};
use testkit::ChildGuard;

/// Rows of the large transaction and bytes of text in each: 24 x 500 KB =
/// 12 MB of binlog, past the 10 MiB minimum promotion threshold.
const LARGE_ROWS: u32 = 24;
const LARGE_TEXT_BYTES: u32 = 500_000;

fn workload(server: &Binlogd) {
    server.query(
        "CREATE DATABASE cdc;
         CREATE TABLE cdc.items (id INT NOT NULL, name VARCHAR(40), price DECIMAL(10,2), qty BIGINT,
             ratio DOUBLE, born DATETIME, small TINYINT, PRIMARY KEY (id));
         CREATE TABLE cdc.big (id INT NOT NULL, note LONGTEXT, PRIMARY KEY (id));
         INSERT INTO cdc.items VALUES (1, 'pen', 1.50, -7, 0.25, '2024-01-02 03:04:05', -128),
             (2, NULL, NULL, NULL, NULL, NULL, NULL);
         UPDATE cdc.items SET name = 'quill', qty = qty + 1 WHERE id = 1;
         FLUSH BINARY LOGS;
         DELETE FROM cdc.items WHERE id = 2;
         SET GLOBAL binlog_large_transaction_optimization_threshold = 10485760;",
    );
    let mut large = String::from("BEGIN;");
    for id in 1..=LARGE_ROWS {
        large.push_str(&format!("INSERT INTO cdc.big VALUES ({id}, REPEAT('x', {LARGE_TEXT_BYTES}));"));
    }
    large.push_str("COMMIT; INSERT INTO cdc.items VALUES (3, 'ink', 0.05, 9000000000, -1.5, '1999-12-31 23:59:59', 127);");
    server.query(&large);
    let promoted = server.query("SHOW GLOBAL STATUS LIKE 'binlog_large_transaction_optimization_count'");
    assert_eq!(promoted.trim(), "binlog_large_transaction_optimization_count\t1", "the large transaction was promoted");
}

/// The row events the workload wrote, in order, as the python reader
/// prints them (without GTIDs).
fn expected_rows() -> Vec<Value> {
    let item1 = json!({"id": 1, "name": "pen", "price": "1.50", "qty": -7, "ratio": 0.25, "born": "2024-01-02 03:04:05", "small": -128});
    let item2 = json!({"id": 2, "name": null, "price": null, "qty": null, "ratio": null, "born": null, "small": null});
    let item1_after =
        json!({"id": 1, "name": "quill", "price": "1.50", "qty": -6, "ratio": 0.25, "born": "2024-01-02 03:04:05", "small": -128});
    let mut events = vec![
        json!({"event": "write", "schema": "cdc", "table": "items", "rows": [item1.clone(), item2.clone()]}),
        json!({"event": "update", "schema": "cdc", "table": "items", "rows": [{"before": item1, "after": item1_after}]}),
        json!({"event": "delete", "schema": "cdc", "table": "items", "rows": [item2]}),
    ];
    for id in 1..=LARGE_ROWS {
        events.push(
            json!({"event": "write", "schema": "cdc", "table": "big", "rows": [{"id": id, "note": format!("x*{LARGE_TEXT_BYTES}")}]}),
        );
    }
    events.push(json!({"event": "write", "schema": "cdc", "table": "items", "rows": [
        {"id": 3, "name": "ink", "price": "0.05", "qty": 9000000000i64, "ratio": -1.5, "born": "1999-12-31 23:59:59", "small": 127}
    ]}));
    events
}

/// Runs the python reader to the end of the log; its JSON lines.
fn read_rows(server: &Binlogd, args: &[&str]) -> Vec<Value> {
    let output = Command::new("python3")
        .arg(python_script("read_rows.py"))
        .arg(server.port.to_string())
        .args(args)
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_rows.py {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// Row events without their GTID, and the GTIDs of the commits.
fn split(lines: Vec<Value>) -> (Vec<Value>, Vec<String>) {
    let mut rows = Vec::new();
    let mut commits = Vec::new();
    for mut line in lines {
        if let Some(gtid) = line.get("commit") {
            commits.push(gtid.as_str().unwrap().to_string());
        } else {
            line.as_object_mut().unwrap().remove("gtid");
            rows.push(line);
        }
    }
    (rows, commits)
}

/// The workload in both `binlog_storage_engine` modes, one server each:
/// the python reader sees the same row events and commits from both, and
/// the two binlogs are logically identical (same events in the same files,
/// `binlogd inspect --json` without positions, times and server UUIDs).
#[test]
fn python_mysql_replication_reads_every_row_event_in_file_and_engine_modes() {
    let file = Binlogd::start(&[]);
    let engine = Binlogd::start(&["--binlog-storage-engine=engine"]);
    assert_eq!(engine.query("SELECT @@binlog_storage_engine"), "engine\n");
    workload(&file);
    workload(&engine);
    reads_every_row_event(&file);
    reads_every_row_event(&engine);
    let (in_file_mode, in_engine_mode) = (logical_binlog(&file), logical_binlog(&engine));
    // The rotation and the promoted large transaction each start a file.
    assert!(in_file_mode.len() >= 3, "{:?}", in_file_mode.iter().map(|(name, _)| name).collect::<Vec<_>>());
    assert_eq!(in_engine_mode, in_file_mode, "engine and file modes wrote different binlogs");
}

/// Every event of every listed file as `binlogd inspect --json` prints it,
/// without what differs between two servers running the same workload:
/// the file's directory, timestamps (and the checksums over them), the
/// server UUID and connection ids.
fn logical_binlog(server: &Binlogd) -> Vec<(String, Vec<Value>)> {
    let uuid = server.server_uuid();
    server
        .binlog_files()
        .into_iter()
        .map(|name| {
            let text = support::inspect(&["--json"], &server.binlog_dir().join(&name));
            let events = text.lines().map(|line| without_run_details(serde_json::from_str(line).unwrap(), &uuid)).collect();
            (name, events)
        })
        .collect()
}

fn without_run_details(value: Value, uuid: &str) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .filter(|(key, _)| !RUN_DETAILS.contains(&key.as_str()))
                .map(|(key, value)| (key, without_run_details(value, uuid)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(|item| without_run_details(item, uuid)).collect()),
        Value::String(text) => Value::String(text.replace(uuid, "UUID")),
        other => other,
    }
}

const RUN_DETAILS: &[&str] =
    &["file", "timestamp", "crc32", "create_timestamp", "immediate_commit_timestamp", "original_commit_timestamp", "thread_id"];

fn reads_every_row_event(server: &Binlogd) {
    let uuid = server.server_uuid();

    // Position mode from the first file: everything, across the rotation
    // and the promoted file.
    let (rows, commits) = split(read_rows(server, &["position", "binlog.000001", "4"]));
    assert_eq!(rows, expected_rows());
    // CREATE DATABASE and the two CREATE TABLEs are GTIDs 1-3; the
    // reader prints a commit for each Xid (the five DML transactions).
    let dml: Vec<String> = (4..=8).map(|gno| format!("{uuid}:{gno}")).collect();
    assert_eq!(commits, dml);

    // Auto-position: the DDL is already there, then also the first insert.
    let (rows, commits) = split(read_rows(server, &["gtid", &format!("{uuid}:1-3")]));
    assert_eq!(rows, expected_rows());
    assert_eq!(commits, dml);
    let (rows, commits) = split(read_rows(server, &["gtid", &format!("{uuid}:1-4")]));
    assert_eq!(rows, expected_rows()[1..]);
    assert_eq!(commits, dml[1..]);

    // Mid-file resume in position mode: from the second file's start.
    let (rows, _) = split(read_rows(server, &["position", "binlog.000002", "4"]));
    assert_eq!(rows, expected_rows()[2..]);
}

fn error_of(lines: &[Value]) -> (i64, String) {
    let last = lines.last().expect("an error line");
    (last["error"].as_i64().unwrap_or(0), last["message"].as_str().unwrap_or("").to_string())
}

#[test]
fn refused_dumps_get_mysqls_1236_and_leave_the_server_working() {
    let server = Binlogd::start(&[]);
    server.query("CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO shop.t VALUES (1)");
    let uuid = server.server_uuid();

    let (code, message) = error_of(&read_rows(&server, &["position", "binlog.000099", "4"]));
    assert_eq!((code, message.as_str()), (1236, "Could not find first log file name in binary log index file"));

    let (code, message) = error_of(&read_rows(&server, &["nochecksum"]));
    assert_eq!(code, 1236);
    assert!(message.starts_with("Slave can not handle replication events with the checksum that master is configured to log; the first event 'binlog.000001' at 4"), "{message}");

    // A position inside an event: Binlog_sender's reason and coordinates.
    let (code, message) = error_of(&read_rows(&server, &["position", "binlog.000001", "10"]));
    assert_eq!(code, 1236);
    let reasons = ["bogus data in log event", "event read from binlog did not pass crc check", "binlog truncated in the middle of event"];
    assert!(reasons.iter().any(|reason| message.starts_with(reason)), "{message}");
    assert!(
        message.ends_with("; the first event 'binlog.000001' at 10, the last event read from 'binlog.000001' at 10, the last byte read from 'binlog.000001' at 10."),
        "{message}"
    );

    // GTIDs this server never wrote.
    let (code, message) = error_of(&read_rows(&server, &["gtid", &format!("{uuid}:1-100")]));
    assert_eq!(code, 1236);
    assert!(message.starts_with("Slave has more GTIDs than the master has"), "{message}");

    // Purged GTIDs: rotate twice, purge the first file, ask from nothing.
    server.query("FLUSH BINARY LOGS; INSERT INTO shop.t VALUES (2); FLUSH BINARY LOGS; PURGE BINARY LOGS TO 'binlog.000002'");
    // (An empty set would make python-mysql-replication fall back to
    // position mode: name a set of another server instead.)
    let (code, message) = error_of(&read_rows(&server, &["gtid", "00000000-0000-0000-0000-000000000001:1"]));
    assert_eq!(code, 1236);
    assert!(
        message.starts_with("The slave is connecting using CHANGE MASTER TO MASTER_AUTO_POSITION = 1, but the master has purged binary logs containing GTIDs that the slave requires."),
        "{message}"
    );
    assert!(message.contains(&format!("the missing transactions are '{uuid}:1-3'")), "{message}");
    let (code, _) = error_of(&read_rows(&server, &["position", "binlog.000001", "4"]));
    assert_eq!(code, 1236);

    // Nothing else was affected; a reader that has the purged part works.
    assert_eq!(server.query("SELECT COUNT(*) FROM shop.t"), "2\n");
    let (rows, _) = split(read_rows(&server, &["gtid", &format!("{uuid}:1-3")]));
    assert_eq!(rows, vec![json!({"event": "write", "schema": "shop", "table": "t", "rows": [{"id": 2}]})]);
}

#[test]
fn connect_time_queries_answer_like_mysql() {
    let server = Binlogd::start(&[]);
    let uuid = server.server_uuid();
    let answers = server.query(
        "SHOW VARIABLES LIKE 'SERVER_ID'; SHOW GLOBAL VARIABLES LIKE 'binlog_checksum';
         SET @master_binlog_checksum = @@global.binlog_checksum; SELECT @master_binlog_checksum;
         SET @master_heartbeat_period = 1000000000, @mariadb_slave_capability = 4;
         SET @slave_uuid = 'a', @replica_uuid = 'b'; SELECT @master_heartbeat_period, @slave_uuid, @replica_uuid, @unset;
         SELECT @@global.server_id, @@global.gtid_mode, @@gtid_purged, @@global.gtid_executed = '';",
    );
    assert_eq!(answers, "server_id\t1\nbinlog_checksum\tCRC32\nCRC32\n1000000000\ta\tb\tNULL\n1\tON\t\t1\n");
    assert_eq!(server.query("SHOW VARIABLES LIKE 'SERVER_UUID'"), format!("server_uuid\t{uuid}\n"));
    let now: u64 = server.query("SELECT UNIX_TIMESTAMP()").trim().parse().unwrap();
    let ours = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!(now.abs_diff(ours) <= 5, "UNIX_TIMESTAMP() = {now}, clock = {ours}");
    server.query("CREATE DATABASE d");
    let status = server.query("SHOW MASTER STATUS");
    assert_eq!(status, server.query("SHOW BINARY LOG STATUS"));
    assert!(status.starts_with("binlog.000001\t") && status.trim_end().ends_with(&format!("{uuid}:1")), "{status}");
    assert_eq!(server.query("SHOW REPLICAS"), "");
    assert_eq!(server.query("SHOW SLAVE HOSTS"), "");
}

/// The FDE's flags byte (offset 4 + 17): the remote copy of the active
/// file has `LOG_EVENT_BINLOG_IN_USE_F` cleared, as MySQL sends it.
fn without_in_use_flag(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() > 21 {
        bytes[21] &= !1;
    }
    bytes
}

#[test]
fn mariadb_binlog_raw_fetches_identical_files_and_follows_the_tail() {
    let server = Binlogd::start(&[]);
    server.query(
        "CREATE DATABASE raw; CREATE TABLE raw.t (id INT NOT NULL, v VARCHAR(64), PRIMARY KEY (id));
         INSERT INTO raw.t VALUES (1, 'a'), (2, NULL); FLUSH BINARY LOGS; UPDATE raw.t SET v = 'b';",
    );
    let out = tempfile::tempdir().unwrap();
    let prefix = format!("{}/", out.path().display());
    let status = Command::new("mariadb-binlog")
        .args(["--read-from-remote-server", "--raw", "--to-last-log", "-h127.0.0.1", &format!("-P{}", server.port), "-uroot"])
        .arg(format!("--result-file={prefix}"))
        .arg("binlog.000001")
        .status()
        .expect("run mariadb-binlog (apt-get install mariadb-client)");
    assert!(status.success());
    let files = server.binlog_files();
    assert_eq!(files, ["binlog.000001", "binlog.000002"]);
    let disk = |name: &str| std::fs::read(server.binlog_dir().join(name)).unwrap();
    let fetched = |name: &str| std::fs::read(out.path().join(name)).unwrap_or_default();
    assert!(fetched("binlog.000001") == disk("binlog.000001"), "closed file byte-identical");
    assert!(without_in_use_flag(fetched("binlog.000002")) == without_in_use_flag(disk("binlog.000002")), "active file identical");

    // --stop-never: follow the active file while more commits arrive.
    let follow = tempfile::tempdir().unwrap();
    let mut child = ChildGuard::new(
        Command::new("mariadb-binlog")
            .args(["--read-from-remote-server", "--raw", "--stop-never", "-h127.0.0.1", &format!("-P{}", server.port), "-uroot"])
            .arg(format!("--result-file={}/", follow.path().display()))
            .arg("binlog.000002")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    for id in 3..=40 {
        server.query(&format!("INSERT INTO raw.t VALUES ({id}, REPEAT('z', {id}))"));
    }
    server.query("FLUSH BINARY LOGS; INSERT INTO raw.t VALUES (41, 'next file')");
    let deadline = Instant::now() + Duration::from_secs(30);
    let followed = |name: &str| std::fs::read(follow.path().join(name)).unwrap_or_default();
    loop {
        let done = followed("binlog.000002") == disk("binlog.000002")
            && without_in_use_flag(followed("binlog.000003")) == without_in_use_flag(disk("binlog.000003"));
        if done {
            break;
        }
        assert!(Instant::now() < deadline, "mariadb-binlog --stop-never did not catch up with the tail");
        std::thread::sleep(Duration::from_millis(100));
    }
    child.terminate();
}
