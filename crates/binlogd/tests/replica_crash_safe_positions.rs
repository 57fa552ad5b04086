//! A file-and-position replica (SOURCE_AUTO_POSITION=0) killed -9 at
//! random moments under a write load: its applied source position commits
//! with each transaction's rows, so every restart resumes exactly where
//! it applied up to. It never receives a transaction it already executed
//! (Replica_transactions_skipped_executed stays 0: the source's GTIDs would
//! otherwise hide a re-fetch from too early a position), never stops with
//! a duplicate-key or missing-row error, and ends with the source's rows
//! and position. Commit order is not preserved, so workers commit out of
//! order and the position saved is the low-water mark with the gaps
//! committed beyond it.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use support::replica::{binary_log_status, replica_status, status_number};
use support::{sysbench, ServerProcess};

const REPL_PASSWORD: &str = "repl-pw";

fn sysbench_write_only(port: u16, args: &[&str]) {
    let mut all = vec!["--tables=3", "--table-size=300", "--db-ps-mode=disable"];
    all.extend_from_slice(args);
    sysbench("oltp_write_only", port, &all);
}

/// The applier has not stopped, and has not been given a transaction it
/// had executed already.
fn assert_applying_exactly_once(replica: &ServerProcess, when: &str) {
    let status = replica_status(replica);
    assert_eq!(status["Last_SQL_Errno"], "0", "{when}: the applier stopped: {}", status["Last_SQL_Error"]);
    assert_eq!(status_number(replica, "Replica_transactions_skipped_executed"), 0, "{when}: received again what it had applied");
}

fn contents(server: &ServerProcess) -> BTreeMap<String, Vec<String>> {
    let mut tables = BTreeMap::new();
    for table in server.query(None, "SHOW TABLES FROM sbtest").lines() {
        let mut rows: Vec<String> = server.query(None, &format!("SELECT * FROM sbtest.`{table}`")).lines().map(str::to_string).collect();
        rows.sort();
        tables.insert(table.to_string(), rows);
    }
    tables
}

/// A deterministic pseudo-random sequence for the kill moments (the seed
/// is printed, so a failure can be replayed).
struct Moments(u64);

impl Moments {
    fn next_millis(&mut self, low: u64, high: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        low + (self.0 >> 33) % (high - low)
    }
}

#[test]
fn a_file_position_replica_killed_at_random_moments_applies_every_transaction_once() {
    let source = ServerProcess::start();
    source.query(None, &format!("CREATE USER 'repl'@'%' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'"));
    let (file, position) = binary_log_status(&source);
    let mut replica = ServerProcess::start_with(&["--server-id=2", "--replica-parallel-workers=4", "--replica-preserve-commit-order=OFF"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 SOURCE_LOG_FILE='{file}', SOURCE_LOG_POS={position}, SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=1;
             START REPLICA",
            source.port
        ),
    );
    source.query(None, "CREATE DATABASE sbtest");
    sysbench_write_only(source.port, &["prepare"]);
    let port = source.port;
    let load = std::thread::spawn(move || sysbench_write_only(port, &["--threads=4", "--time=20", "run"]));
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
    eprintln!("kill moments seed {seed}");
    let mut moments = Moments(seed);
    for kill in 0..5 {
        std::thread::sleep(Duration::from_millis(moments.next_millis(1000, 3500)));
        assert_applying_exactly_once(&replica, &format!("before kill {kill}"));
        replica.kill();
        // The threads start with the server and resume from the position
        // the slots hold.
        replica.start_again(&[]);
    }
    load.join().unwrap();

    let wanted = binary_log_status(&source);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = replica_status(&replica);
        let applied = (status["Relay_Source_Log_File"].clone(), status["Exec_Source_Log_Pos"].parse::<u64>().unwrap());
        if applied == wanted {
            break;
        }
        assert_applying_exactly_once(&replica, "catching up");
        assert!(Instant::now() < deadline, "not caught up: at {applied:?}, the source at {wanted:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_applying_exactly_once(&replica, "caught up");
    let (ours, theirs) = (contents(&source), contents(&replica));
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>(), "the same tables");
    for (table, rows) in &ours {
        assert!(
            *rows == theirs[table],
            "{table}: {} rows on the source, {} on the replica, or different rows",
            rows.len(),
            theirs[table].len()
        );
    }
    let source_gtids = source.query(None, "SELECT @@global.gtid_executed");
    assert_eq!(replica.query(None, "SELECT @@global.gtid_executed"), source_gtids);

    // A clean restart resumes from the same position, with nothing to do.
    replica.restart();
    let status = replica_status(&replica);
    assert_eq!((status["Relay_Source_Log_File"].clone(), status["Exec_Source_Log_Pos"].parse::<u64>().unwrap()), wanted);
    source.query(None, "INSERT INTO sbtest.sbtest1 (k, c, pad) VALUES (1, 'after', 'restart')");
    let deadline = Instant::now() + Duration::from_secs(30);
    while replica.query(None, "SELECT COUNT(*) FROM sbtest.sbtest1 WHERE c = 'after'").trim() != "1" {
        assert!(Instant::now() < deadline, "the row after the restart did not arrive");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_applying_exactly_once(&replica, "after a clean restart");
}
