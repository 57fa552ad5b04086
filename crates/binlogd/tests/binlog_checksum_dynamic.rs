//! `SET GLOBAL binlog_checksum` as in MySQL: the log rotates, the new
//! file's Format_description carries the new algorithm and its events
//! carry or lack the CRC32 footer; mysql_common (the oracle),
//! mariadb-binlog, python-mysql-replication and binlogd's own replica
//! follow across the change; a crash while a NONE file is active is
//! recovered from it.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::EventData;
use mysql_common::binlog::BinlogFile;
use support::{inspect, python_script, ServerProcess};

/// Every row mysql_common decodes in `path` (ids of inserted rows), and
/// whether its events carry checksums (read back from its FDE).
fn rows_by_mysql_common(path: &std::path::Path) -> (Vec<i64>, bool) {
    let file = std::fs::read(path).unwrap();
    let binlog = BinlogFile::new(BinlogVersion::Version4, &file[..]).unwrap();
    let mut ids = Vec::new();
    let mut checksum = None;
    let mut table_maps = std::collections::HashMap::new();
    for event in binlog {
        let event = event.unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        if let Some(footer) = event.footer().get_checksum_alg().ok().flatten() {
            checksum.get_or_insert(footer != mysql_common::binlog::consts::BinlogChecksumAlg::BINLOG_CHECKSUM_ALG_OFF);
        }
        match event.read_data().unwrap() {
            Some(EventData::TableMapEvent(map)) => {
                table_maps.insert(map.table_id(), map.into_owned());
            }
            Some(EventData::RowsEvent(rows)) => {
                let map = &table_maps[&rows.table_id()];
                for row in rows.rows(map) {
                    let (_, after) = row.unwrap();
                    if let Some(after) = after {
                        let id: i64 = match after.as_ref(0).unwrap() {
                            mysql_common::binlog::value::BinlogValue::Value(mysql_common::Value::Int(id)) => *id,
                            other => panic!("unexpected id {other:?}"),
                        };
                        ids.push(id);
                    }
                }
            }
            _ => {}
        }
    }
    (ids, checksum.expect("a Format_description names the algorithm"))
}

fn insert(server: &ServerProcess, ids: std::ops::RangeInclusive<i64>) {
    let sql: String = ids.map(|id| format!("INSERT INTO c.t VALUES ({id}, 'v{id}');")).collect();
    server.query(None, &sql);
}

fn files(server: &ServerProcess) -> Vec<String> {
    server.query(None, "SHOW BINARY LOGS").lines().map(|line| line.split('\t').next().unwrap().to_string()).collect()
}

#[test]
fn set_global_binlog_checksum_rotates_and_every_reader_follows() {
    let source = ServerProcess::start();
    source.query(
        None,
        "CREATE USER 'repl'@'%' IDENTIFIED BY 'pw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';
         CREATE USER 'plain'@'%' IDENTIFIED BY 'pw';
         CREATE DATABASE c; CREATE TABLE c.t (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))",
    );
    insert(&source, 1..=3);
    assert_eq!(source.query(None, "SELECT @@global.binlog_checksum"), "CRC32\n");
    let before = files(&source);

    // Not a session variable, and not for everyone (MySQL 8.4's texts).
    assert!(source.error(None, "SET SESSION binlog_checksum = 'NONE'").contains("ERROR 1229 (HY000)"));
    let refused = source.error_as("plain", "pw", None, "SET GLOBAL binlog_checksum = 'NONE'");
    assert!(refused.contains("ERROR 1227 (42000)"), "{refused}");
    assert!(source.error(None, "SET GLOBAL binlog_checksum = 'MD5'").contains("ERROR 1231 (42000)"));
    assert_eq!(files(&source), before, "a refused SET rotates nothing");

    source.query(None, "SET GLOBAL binlog_checksum = 'NONE'");
    assert_eq!(source.query(None, "SELECT @@global.binlog_checksum"), "NONE\n");
    let after_none = files(&source);
    assert_eq!(after_none.len(), before.len() + 1, "the change rotates the log");
    insert(&source, 4..=6);
    // Even the same value rotates, as in MySQL.
    source.query(None, "SET GLOBAL binlog_checksum = 'NONE'");
    assert_eq!(files(&source).len(), after_none.len() + 1);
    insert(&source, 7..=8);
    source.query(None, "SET GLOBAL binlog_checksum = 'CRC32'");
    insert(&source, 9..=10);
    source.query(None, "FLUSH BINARY LOGS");

    // Each file as written: mysql_common decodes every event and finds
    // the rows in the file of their algorithm.
    let dir = source.datadir.join("binlog");
    let names = files(&source);
    let mut decoded = Vec::new();
    for name in &names {
        let (ids, checksum) = rows_by_mysql_common(&dir.join(name));
        if !ids.is_empty() {
            decoded.push((ids, checksum));
        }
    }
    assert_eq!(
        decoded,
        vec![(vec![1, 2, 3], true), (vec![4, 5, 6], false), (vec![7, 8], false), (vec![9, 10], true)],
        "rows per file and its algorithm"
    );
    // binlogd's own inspect and mariadb-binlog read both kinds.
    let none_file = dir.join(&after_none[after_none.len() - 1]);
    assert!(inspect(&[], &none_file).contains("# binlog_checksum=NONE (0)"));
    for name in &names {
        let output = Command::new("mariadb-binlog").arg("--verbose").arg(dir.join(name)).output().expect("run mariadb-binlog");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success() && !text.contains("ERROR:"), "{name}: {}{text}", String::from_utf8_lossy(&output.stderr));
    }
    let text =
        String::from_utf8_lossy(&Command::new("mariadb-binlog").arg("--verbose").arg(&none_file).output().unwrap().stdout).into_owned();
    assert!(text.contains("### INSERT INTO `c`.`t`") && text.contains("@1=4"), "{text}");
    assert!(!text.contains("CRC32 0x"), "a NONE file shows no CRC32: {text}");

    // python-mysql-replication over the dump, from the first file.
    let output = Command::new("python3")
        .arg(python_script("read_rows.py"))
        .args([&source.port.to_string(), "position", &names[0], "4"])
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
    assert_eq!(ids, (1..=10).collect::<Vec<_>>(), "{stdout}");

    // binlogd's replica follows the dump across both changes, and one
    // made while it is connected.
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
    wait_for_rows(&replica, 10);
    source.query(None, "SET GLOBAL binlog_checksum = 'NONE'");
    insert(&source, 11..=12);
    wait_for_rows(&replica, 12);
    assert_eq!(replica.query(None, "SELECT id, v FROM c.t ORDER BY id"), source.query(None, "SELECT id, v FROM c.t ORDER BY id"));
    let status = replica.query(None, "SELECT @@gtid_executed");
    assert_eq!(status, source.query(None, "SELECT @@gtid_executed"));
}

fn wait_for_rows(replica: &ServerProcess, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = replica.mariadb(None, "SELECT COUNT(*) FROM c.t");
        if String::from_utf8_lossy(&rows.stdout).trim() == count.to_string() {
            return;
        }
        assert!(Instant::now() < deadline, "replica stalled: {}", replica.query(None, "SHOW REPLICA STATUS"));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A server killed at a crash point while its active file is NONE (or
/// while `SET GLOBAL binlog_checksum` rotates to it) starts again from
/// that file: the rows the log holds are there, and the log goes on.
#[test]
fn a_crash_with_a_none_file_active_is_recovered_from_it() {
    // (crash point, reached by the SET itself, rows after recovery)
    let cases: [(&str, bool, &str); 5] = [
        ("binlog::rotate::after_new_file", true, "1\n"),
        ("binlog::rotate::after_index", true, "1\n"),
        ("binlog::flush::after_write", false, "1\n2\n"),
        ("binlog::sync::after_sync", false, "1\n2\n"),
        ("binlog::commit::after_hooks", false, "1\n2\n"),
    ];
    for (point, during_set, rows) in cases {
        let mut server = ServerProcess::start();
        server.query(None, "CREATE DATABASE c; CREATE TABLE c.t (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))");
        insert(&server, 1..=1);
        assert!(server.stop().success());
        server.start_again(&[("BINLOGD_CRASH_POINT", point)]);
        let set = server.mariadb(None, "SET GLOBAL binlog_checksum = 'NONE'");
        assert_eq!(set.status.success(), !during_set, "{point}: {}", String::from_utf8_lossy(&set.stderr));
        if !during_set {
            let output = server.mariadb(None, "INSERT INTO c.t VALUES (2, 'v2')");
            assert!(!output.status.success(), "{point}: the commit should not return");
        }
        assert!(!server.wait_exit(Duration::from_secs(30)).success(), "{point}: the server should have aborted");

        server.start_again(&[]);
        assert_eq!(server.query(None, "SELECT id FROM c.t ORDER BY id"), rows, "{point}");
        insert(&server, 3..=3);
        let dir = server.datadir.join("binlog");
        let mut all = Vec::new();
        let mut algorithms = Vec::new();
        for name in files(&server) {
            let (ids, checksum) = rows_by_mysql_common(&dir.join(&name));
            all.extend(ids);
            algorithms.push(checksum);
        }
        let mut expected: Vec<i64> = rows.lines().map(|id| id.parse().unwrap()).collect();
        expected.push(3);
        assert_eq!(all, expected, "{point}: the log holds exactly the rows");
        assert_eq!(algorithms.contains(&false), !during_set || point.ends_with("after_index"), "{point}: {algorithms:?}");
        assert!(server.stop().success());
    }
}
