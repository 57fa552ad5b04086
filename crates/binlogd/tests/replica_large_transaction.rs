//! A 1 GiB transaction through the replica's default 128 MiB memory relay
//! log. In a file of its own so it runs alone: it holds about
//! 5 GiB of files (both binlogs, both redo logs, the relay spill file)
//! and 2 GiB of rows in each server while it runs, all removed after.

mod support;

use std::time::{Duration, Instant};

use support::ServerProcess;

const REPL_PASSWORD: &str = "repl-pw";

fn gtid_executed(server: &ServerProcess) -> String {
    server.query(None, "SELECT @@global.gtid_executed").trim().replace("\\n", "")
}

/// Waits until the replica has executed every GTID the source has.
fn wait_caught_up(source: &ServerProcess, replica: &ServerProcess) {
    let deadline = Instant::now() + Duration::from_secs(600);
    let wanted = gtid_executed(source);
    while gtid_executed(replica) != wanted {
        assert!(
            Instant::now() < deadline,
            "replica at {}, source at {wanted}:\n{}",
            gtid_executed(replica),
            std::fs::read_to_string(&replica.log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A 1 GiB transaction (promoted on the source) passes through the
/// default 128 MiB memory relay log: it goes to a spill file as it
/// arrives and a worker applies it from there meanwhile (streamed), the
/// ring never holds more than its limit, and the replica's
/// peak resident set stays near the data it stores (the engine keeps rows
/// in memory) rather than growing by copies of the transaction.
#[test]
fn a_1_gib_transaction_passes_through_a_128_mib_memory_relay_log() {
    const ROWS: u64 = 1024;
    const ROW_BYTES: u64 = 1 << 20;
    // The engine's default memory limit (1 GiB) is below the rows' size.
    let memory = "--binlogd-engine-memory-limit=3221225472";
    let source = ServerProcess::start_with(&[memory]);
    source.query(None, &format!("CREATE USER 'repl'@'%' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'"));
    let replica = ServerProcess::start_with(&["--server-id=2", memory]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1;
             START REPLICA",
            source.port
        ),
    );
    let mut large = String::from("CREATE DATABASE big; CREATE TABLE big.t (id INT NOT NULL, v LONGTEXT, PRIMARY KEY (id)); BEGIN;");
    for id in 0..ROWS {
        large.push_str(&format!("INSERT INTO big.t VALUES ({id}, REPEAT('{}', {ROW_BYTES}));", char::from(b'A' + (id % 26) as u8)));
    }
    large.push_str("COMMIT;");
    source.query(None, &large);
    assert_eq!(
        source.query(None, "SHOW GLOBAL STATUS LIKE 'binlog_large_transaction_optimization_count'").trim(),
        "binlog_large_transaction_optimization_count\t1"
    );
    wait_caught_up(&source, &replica);
    // Before the queries below, which hold rows of their own.
    let (replica_peak_rss, source_peak_rss) = (replica.peak_rss_bytes(), source.peak_rss_bytes());
    let summary = format!("SELECT COUNT(*), SUM(LENGTH(v)) FROM big.t; SELECT COUNT(*) FROM big.t WHERE v = REPEAT('J', {ROW_BYTES})");
    let ours = source.query(None, &summary);
    assert_eq!(ours, format!("{ROWS}\t{}\n40\n", ROWS * ROW_BYTES));
    assert_eq!(replica.query(None, &summary), ours);

    let counter = |name: &str| -> u64 {
        let line = replica.query(None, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
        line.trim().rsplit('\t').next().unwrap().parse().unwrap()
    };
    assert_eq!(counter("Replica_relay_log_spilled_transactions_total"), 1);
    // Queued as it spilled: a worker applied it while it arrived.
    assert_eq!(counter("Replica_relay_log_streamed_transactions_total"), 1);
    let ring_peak = counter("Replica_relay_log_memory_bytes_peak");
    assert!(ring_peak <= 128 << 20, "the ring held {ring_peak} bytes");
    let data_bytes = ROWS * ROW_BYTES;
    eprintln!(
        "replica peak RSS {} MiB, source {} MiB, for {} MiB of rows (ring peak {} KiB)",
        replica_peak_rss >> 20,
        source_peak_rss >> 20,
        data_bytes >> 20,
        ring_peak >> 10
    );
    // The engine holds the rows and the open transaction's images (the
    // source needs as much); the relay log adds its ring and one event.
    assert!(
        replica_peak_rss < source_peak_rss + (256 << 20),
        "replica peak RSS {replica_peak_rss} bytes, source {source_peak_rss} bytes, for {data_bytes} bytes of rows"
    );
}
