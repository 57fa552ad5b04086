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
