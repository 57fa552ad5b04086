//! `binlog_storage_engine` through SQL, as the `mariadb` client sees it:
//! the mode a server started with in `SELECT @@...` and SHOW VARIABLES,
//! MySQL's read-only error for SET, and the startup note that
//! `sync_binlog` is ignored in `engine` mode.

mod support;

use support::ServerProcess;

#[test]
fn binlog_storage_engine_is_shown_and_read_only() {
    let engine = ServerProcess::start_with(&["--binlog-storage-engine=engine", "--sync-binlog=0"]);
    assert_eq!(engine.query(None, "SELECT @@binlog_storage_engine, @@global.binlog_storage_engine"), "engine\tengine\n");
    assert_eq!(engine.query(None, "SHOW VARIABLES LIKE 'binlog_storage_engine'"), "binlog_storage_engine\tengine\n");
    assert_eq!(engine.query(None, "SHOW GLOBAL VARIABLES LIKE 'binlog_storage%'"), "binlog_storage_engine\tengine\n");
    for sql in ["SET GLOBAL binlog_storage_engine = ''", "SET @@global.binlog_storage_engine = 'engine'", "SET binlog_storage_engine = ''"] {
        let error = engine.error(None, sql);
        assert!(error.contains("ERROR 1238 (HY000)") && error.contains("Variable 'binlog_storage_engine' is a read only variable"), "{sql}: {error}");
    }
    assert_eq!(engine.query(None, "SELECT @@binlog_storage_engine"), "engine\n", "a refused SET changes nothing");
    let log = std::fs::read_to_string(&engine.log).unwrap();
    assert!(log.contains("sync_binlog is ignored"), "startup note missing:\n{log}");

    // The default (and the `file` alias) is MariaDB's empty value.
    let file = ServerProcess::start_with(&["--binlog_storage_engine=file"]);
    assert_eq!(file.query(None, "SELECT @@binlog_storage_engine = '', @@binlog_storage_engine IS NULL"), "1\t0\n");
    assert_eq!(file.query(None, "SHOW VARIABLES LIKE 'binlog_storage_engine'"), "binlog_storage_engine\t\n");
    let log = std::fs::read_to_string(&file.log).unwrap();
    assert!(!log.contains("sync_binlog is ignored"), "the note is for engine mode only:\n{log}");
}

/// The engine-mode writer appends to the files behind the commit path;
/// statements that show the binlog wait for it, so a session sees its own
/// commit there at once, even with `innodb_flush_log_at_trx_commit = 2`
/// (where the writer would otherwise wait up to a second for redo's
/// background sync), and FLUSH BINARY LOGS closes a file holding every
/// commit that returned before it.
#[test]
fn a_session_sees_its_commits_in_the_binlog_at_once() {
    let server = ServerProcess::start_with(&["--binlog-storage-engine=engine", "--innodb-flush-log-at-trx-commit=2"]);
    let uuid = server.query(None, "SELECT @@server_uuid").trim().to_string();
    for round in 1..=3 {
        let shown = server.query(
            None,
            &format!(
                "CREATE DATABASE d{round}; CREATE TABLE d{round}.t (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO d{round}.t VALUES ({round});
                 SELECT @@gtid_executed; SHOW BINARY LOG STATUS; FLUSH BINARY LOGS;"
            ),
        );
        let gtids = format!("{uuid}:1-{}", 3 * round);
        let mut lines = shown.lines();
        assert_eq!(lines.next(), Some(gtids.as_str()), "{shown}");
        assert!(lines.next().unwrap().ends_with(&format!("\t{gtids}")), "{shown}");
        // The closed file ends with this round's insert, then the Rotate.
        let file = format!("binlog.{round:06}");
        let events = server.query(None, &format!("SHOW BINLOG EVENTS IN '{file}'"));
        let types: Vec<&str> = events.lines().map(|line| line.split('\t').nth(2).unwrap()).collect();
        assert_eq!(types[types.len() - 4..], ["Table_map", "Write_rows", "Xid", "Rotate"], "{file}:\n{events}");
    }
}
