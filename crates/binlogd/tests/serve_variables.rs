//! System variables through one registry: startup options reach `@@name`
//! parsed by their type (sizes with K/M/G, booleans as words), each
//! variable's kind decides what SET and `@@global.`/`@@session.` may do
//! (1228, 1229, 1238 as MySQL words them), SHOW GLOBAL VARIABLES leaves
//! out the session-only ones, and an unknown startup option stops the
//! server as mysqld's "unknown variable".

mod support;

use support::{failed_start, ServerProcess};

#[test]
fn startup_values_and_kinds_reach_sql() {
    let server = ServerProcess::start_with(&[
        "--max-binlog-size=1M",
        "--binlog-cache-size=64K",
        "--wait-timeout=100",
        "--replica-parallel-workers=8",
        "--source-verify-checksum=on",
        "--skip-replica-start",
    ]);
    assert_eq!(
        server.query(
            None,
            "SELECT @@max_binlog_size, @@binlog_cache_size, @@wait_timeout, @@global.replica_parallel_workers, \
             @@source_verify_checksum, @@skip_replica_start"
        ),
        "1048576\t65536\t100\t8\t1\t1\n"
    );
    assert_eq!(server.query(None, "SHOW VARIABLES LIKE 'source_verify%'"), "source_verify_checksum\tON\n");

    // A global-only variable, a session-only one, a read-only one.
    let error = |sql: &str| server.error(None, sql);
    let refused = error("SET SESSION max_connections = 5");
    assert!(
        refused.contains("ERROR 1229 (HY000)")
            && refused.contains("Variable 'max_connections' is a GLOBAL variable and should be set with SET GLOBAL"),
        "{refused}"
    );
    let refused = error("SET GLOBAL gtid_next = 'AUTOMATIC'");
    assert!(
        refused.contains("ERROR 1228 (HY000)")
            && refused.contains("Variable 'gtid_next' is a SESSION variable and can't be used with SET GLOBAL"),
        "{refused}"
    );
    let refused = error("SELECT @@global.gtid_next");
    assert!(refused.contains("ERROR 1238 (HY000)") && refused.contains("Variable 'gtid_next' is a SESSION variable"), "{refused}");
    let refused = error("SELECT @@session.max_binlog_size");
    assert!(refused.contains("ERROR 1238 (HY000)") && refused.contains("Variable 'max_binlog_size' is a GLOBAL variable"), "{refused}");
    let refused = error("SET GLOBAL max_binlog_size = 4096");
    assert!(refused.contains("ERROR 1238 (HY000)") && refused.contains("Variable 'max_binlog_size' is a read only variable"), "{refused}");

    assert_eq!(server.query(None, "SET GLOBAL max_connections = 20; SELECT @@max_connections"), "20\n");
    assert_eq!(server.query(None, "SHOW VARIABLES LIKE 'gtid_n%'"), "gtid_next\tAUTOMATIC\n");
    assert_eq!(server.query(None, "SHOW GLOBAL VARIABLES LIKE 'gtid_%'"), "gtid_executed\t\ngtid_mode\tON\ngtid_purged\t\n");
}

#[test]
fn an_unknown_startup_option_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = failed_start(&dir.path().join("data"), &["--no-such-option=3"]);
    assert!(stderr.contains("unknown variable 'no_such_option=3'"), "{stderr}");
}
