//! A file-and-position binlogd replica of a MariaDB 10.11 source (started
//! by the test, `--log-bin --binlog-format=ROW`; its GTIDs are not MySQL's,
//! so nothing skips a transaction by GTID: the applied position alone
//! decides) aborted (BINLOGD_CRASH_POINT) right after a replicated DDL
//! statement's engine part is durable, before its binlog write
//! (`database::ddl::after_engine`), or right after the statement returned
//! (`replica::ddl::after_statement`). The worker's applied position is in
//! the DDL's own redo record, so the restarted replica resumes after the
//! DDL: it does not run it again (CREATE TABLE would stop the applier with
//! 1050), and tables and position end as the source's. Also with the
//! engine-integrated binlog on the replica (`--binlog-storage-engine=engine`),
//! whose DDL is logged through the same engine DDL record.

mod support;

use std::time::{Duration, Instant};

use support::mariadb::MariaDb;
use support::replica::replica_status;
use support::ServerProcess;

const REPL_PASSWORD: &str = "repl-pw";

/// (file, position) of the source's SHOW MASTER STATUS.
fn source_end(source: &MariaDb) -> (String, String) {
    let status = source.query("SHOW MASTER STATUS");
    let mut fields = status.split('\t');
    (fields.next().unwrap().to_string(), fields.next().unwrap().to_string())
}

/// Waits until the replica applied up to the source's binlog end, and has
/// not stopped on an error meanwhile.
fn wait_caught_up(source: &MariaDb, replica: &ServerProcess) {
    let wanted = source_end(source);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = replica_status(replica);
        assert_eq!(status["Last_SQL_Errno"], "0", "the applier stopped: {}", status["Last_SQL_Error"]);
        assert_eq!(status["Replica_SQL_Running"], "Yes", "{status:#?}");
        let applied = (status["Relay_Source_Log_File"].clone(), status["Exec_Source_Log_Pos"].clone());
        if applied == wanted {
            return;
        }
        assert!(Instant::now() < deadline, "not caught up: at {applied:?}, the source at {wanted:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn replica_aborted_after_a_ddl_does_not_run_it_again(crash_point: &str, replica_options: &[&str]) {
    let source = MariaDb::start(&["--server-id=1", "--log-bin=mariadb-bin", "--binlog-format=ROW"]);
    // 'repl'@'localhost': mariadb-install-db's anonymous ''@'localhost'
    // would match a loopback login before 'repl'@'%'.
    source.query(&format!(
        "CREATE USER 'repl'@'localhost' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'localhost'"
    ));
    let (file, position) = source_end(&source);
    let mut replica = ServerProcess::start_with(&[&["--server-id=2"], replica_options].concat());
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 SOURCE_LOG_FILE='{file}', SOURCE_LOG_POS={position}, SOURCE_CONNECT_RETRY=1;
             START REPLICA",
            source.port
        ),
    );
    source.query("CREATE DATABASE d; CREATE TABLE d.t0 (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO d.t0 VALUES (1)");
    wait_caught_up(&source, &replica);

    // The next DDL statement aborts the replica.
    assert!(replica.stop().success());
    replica.start_again(&[("BINLOGD_CRASH_POINT", crash_point)]);
    source.query("CREATE TABLE d.t1 (id INT NOT NULL, v VARCHAR(10), PRIMARY KEY (id))");
    let exit = replica.wait_exit(Duration::from_secs(60));
    assert!(!exit.success(), "the crash point aborts the replica");
    let log = std::fs::read_to_string(&replica.log).unwrap_or_default();
    assert!(log.contains(&format!("crash point {crash_point} reached")), "{log}");

    replica.start_again(&[]);
    source.query("INSERT INTO d.t1 VALUES (1, 'after'); INSERT INTO d.t0 VALUES (2)");
    wait_caught_up(&source, &replica);
    assert_eq!(replica.query(None, "SHOW TABLES FROM d"), "t0\nt1\n");
    for table in ["d.t0", "d.t1"] {
        let sql = format!("SELECT * FROM {table} ORDER BY id");
        assert_eq!(replica.query(None, &sql), source.query(&sql), "{table}");
    }
}

#[test]
fn a_replica_aborted_after_a_ddls_engine_part_resumes_after_it() {
    replica_aborted_after_a_ddl_does_not_run_it_again("database::ddl::after_engine", &[]);
}

#[test]
fn with_the_engine_integrated_binlog_a_replica_aborted_after_a_ddls_engine_part_resumes_after_it() {
    replica_aborted_after_a_ddl_does_not_run_it_again("database::ddl::after_engine", &["--binlog-storage-engine=engine"]);
}

#[test]
fn a_replica_aborted_after_a_ddl_statement_resumes_after_it() {
    replica_aborted_after_a_ddl_does_not_run_it_again("replica::ddl::after_statement", &[]);
}
