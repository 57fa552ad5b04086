//! A file-and-position replica aborted at `replica::commit::after_engine_commit`
//! (BINLOGD_CRASH_POINT) while committing a transaction that was streamed
//! to its worker: the transaction's rows and applied checkpoint are
//! durable, the pipeline never counted it. Restarted, the replica fetches
//! from its low-water mark, gets the transaction again (streamed again)
//! and skips it by its position: no duplicate-key stop, no GTID skip (the
//! position alone must do it), and the rows and position end as the
//! source's.

mod support;

use std::time::{Duration, Instant};

use support::replica::{binary_log_status, replica_status, status_number};
use support::ServerProcess;

const REPL_PASSWORD: &str = "repl-pw";
const CRASH_POINT: &str = "replica::commit::after_engine_commit";

/// Waits until the replica applied up to the source's binlog end, and has
/// not stopped on an error meanwhile.
fn wait_caught_up(source: &ServerProcess, replica: &ServerProcess) {
    let wanted = binary_log_status(source);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = replica_status(replica);
        assert_eq!(status["Last_SQL_Errno"], "0", "the applier stopped: {}", status["Last_SQL_Error"]);
        let applied = (status["Relay_Source_Log_File"].clone(), status["Exec_Source_Log_Pos"].parse::<u64>().unwrap_or(0));
        if applied == wanted {
            return;
        }
        assert!(Instant::now() < deadline, "not caught up: at {applied:?}, the source at {wanted:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_replica_aborted_after_committing_a_streamed_transaction_applies_it_once() {
    let source = ServerProcess::start();
    source.query(None, &format!("CREATE USER 'repl'@'%' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'"));
    let (file, position) = binary_log_status(&source);
    let mut replica = ServerProcess::start_with(&["--server-id=2", "--replica-parallel-workers=4"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 SOURCE_LOG_FILE='{file}', SOURCE_LOG_POS={position}, SOURCE_CONNECT_RETRY=1,
                 IN_MEMORY_RELAYLOG_LIMIT=33554432, IN_MEMORY_RELAYLOG_SPILL_THRESHOLD=1048576;
             START REPLICA",
            source.port
        ),
    );
    source.query(
        None,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT NOT NULL, v LONGTEXT, PRIMARY KEY (id)); INSERT INTO d.t VALUES (0, 'before')",
    );
    wait_caught_up(&source, &replica);

    // The next commit aborts the replica: a 4 MiB transaction, spilled
    // past the 1 MiB threshold and streamed to its worker.
    assert!(replica.stop().success());
    replica.start_again(&[("BINLOGD_CRASH_POINT", CRASH_POINT)]);
    let mut large = String::from("BEGIN;");
    for id in 1..=4 {
        large.push_str(&format!("INSERT INTO d.t VALUES ({id}, REPEAT('{}', 1048576));", char::from(b'a' + id as u8)));
    }
    large.push_str("COMMIT;");
    source.query(None, &large);
    let exit = replica.wait_exit(Duration::from_secs(60));
    assert!(!exit.success(), "the crash point aborts the replica");
    let log = std::fs::read_to_string(&replica.log).unwrap_or_default();
    assert!(log.contains(&format!("crash point {CRASH_POINT} reached")), "{log}");

    replica.start_again(&[]);
    source.query(None, "INSERT INTO d.t VALUES (100, 'after')");
    wait_caught_up(&source, &replica);
    assert_eq!(status_number(&replica, "Replica_transactions_skipped_executed"), 0, "skipped by its position, not by its GTID");
    assert!(status_number(&replica, "Replica_relay_log_streamed_transactions_total") >= 1, "fetched again, and streamed");
    let summary = "SELECT id, LENGTH(v) FROM d.t ORDER BY id; SELECT COUNT(*) FROM d.t WHERE v = REPEAT('c', 1048576)";
    assert_eq!(replica.query(None, summary), source.query(None, summary));
    assert_eq!(replica.query(None, "SELECT @@global.gtid_executed"), source.query(None, "SELECT @@global.gtid_executed"));
}
