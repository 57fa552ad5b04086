//! The coordinator and workers against random dependency graphs and a
//! recording applier with random delays: no transaction starts before its
//! dependencies committed, commit order is the queue's when preserved, and
//! an apply error stops everything with MySQL's message kept.

mod support;

use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use replica::relay::RelayLogConfig;
use replica::{BoundaryQueue, Coordinator, CoordinatorConfig, CoordinatorMode, RelayLog, StopFlag};
use support::*;

const TRANSACTIONS: u64 = 300;

/// `(last_committed, sequence_number)` per transaction: sequence numbers
/// 1..=n, each depending on a random earlier point (often the one just
/// before, sometimes far back: wide parallel groups). Every 100 a new
/// source file restarts the clock.
fn random_clocks(seed: u64) -> Vec<(i64, i64)> {
    let mut random = rand::rngs::StdRng::seed_from_u64(seed);
    let mut clocks = Vec::new();
    let mut last_committed = 0i64;
    for index in 0..TRANSACTIONS as i64 {
        let sequence_number = index % 100 + 1;
        if sequence_number == 1 {
            last_committed = 0;
        }
        // last_committed never decreases within a file (MySQL's commit
        // groups), and is below the sequence number.
        if random.gen_bool(0.3) {
            last_committed = random.gen_range(last_committed..sequence_number);
        }
        clocks.push((last_committed, sequence_number));
    }
    clocks
}

fn run(seed: u64, config: CoordinatorConfig, memory: bool) {
    let directory = tempfile::tempdir().unwrap();
    let relay_config = if memory {
        RelayLogConfig::Memory { limit_bytes: 256 << 10, spill_threshold_bytes: 32 << 10, spill_directory: directory.path().to_path_buf() }
    } else {
        RelayLogConfig::Files { directory: directory.path().join("relay"), file_size_max_bytes: 64 << 10, space_limit_bytes: 256 << 10 }
    };
    let relay = Arc::new(RelayLog::open(&relay_config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(64));
    let applier = Arc::new(RecordingApplier::new(300, None));
    let clocks = random_clocks(seed);
    let coordinator = Coordinator::start(config, relay.clone(), queue.clone(), applier.clone());
    let stop = StopFlag::new();
    let mut random = rand::rngs::StdRng::seed_from_u64(seed ^ 0xfeed);
    for (index, &(last_committed, sequence_number)) in clocks.iter().enumerate() {
        let gno = index as u64 + 1;
        // Mostly small, now and then one over the spill threshold.
        let filler = if random.gen_bool(0.02) { 100 << 10 } else { random.gen_range(10..3000) };
        let events = transaction(gno, last_committed, sequence_number, filler);
        applier.expected.lock().insert(gno, events.clone());
        write_transaction(&relay, &queue, index as u64, gno, (last_committed, sequence_number), &events, &stop);
    }
    let record = applier.record.clone();
    let done = wait_until(Duration::from_secs(60), || record.lock().committed.len() as u64 == TRANSACTIONS);
    let outcome = coordinator.stop();
    let record = record.lock();
    assert!(done, "seed {seed}: {} of {TRANSACTIONS} committed", record.committed.len());
    assert!(outcome.error.is_none() && outcome.unapplied.is_empty(), "seed {seed}: {outcome:?}");
    assert!(record.violations.is_empty(), "seed {seed}: {:?}", record.violations);
    assert!(record.bad_bytes.is_empty(), "seed {seed}: bytes differ for {:?}", record.bad_bytes);
    let mut sorted = record.committed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..=TRANSACTIONS).collect::<Vec<_>>(), "seed {seed}: each transaction exactly once");
    if config.preserve_commit_order {
        assert_eq!(record.committed, sorted, "seed {seed}: commit order is the queue's");
    }
    let stats = relay.stats();
    assert_eq!(
        (stats.memory_bytes, stats.memory_transactions, stats.spilled_transactions, stats.file_bytes),
        (0, 0, 0, 0),
        "all space released"
    );
}

#[test]
fn dependencies_hold_and_commit_order_is_preserved() {
    for seed in 1..=4 {
        run(seed, CoordinatorConfig { workers: 4, preserve_commit_order: true, mode: CoordinatorMode::BoundaryQueue }, true);
    }
}

#[test]
fn dependencies_hold_without_commit_order() {
    for seed in 11..=13 {
        run(seed, CoordinatorConfig { workers: 8, preserve_commit_order: false, mode: CoordinatorMode::BoundaryQueue }, true);
    }
}

#[test]
fn the_event_scanning_coordinator_schedules_the_same_way() {
    for seed in 21..=22 {
        run(seed, CoordinatorConfig { workers: 4, preserve_commit_order: true, mode: CoordinatorMode::EventScan }, true);
    }
}

#[test]
fn the_file_relay_log_feeds_the_workers_too() {
    run(31, CoordinatorConfig { workers: 4, preserve_commit_order: true, mode: CoordinatorMode::BoundaryQueue }, false);
    run(32, CoordinatorConfig { workers: 2, preserve_commit_order: false, mode: CoordinatorMode::EventScan }, false);
}

/// A parallel run is actually parallel: with independent transactions and
/// a 20 ms apply, 4 workers take well under the serial time.
#[test]
fn independent_transactions_apply_in_parallel() {
    let directory = tempfile::tempdir().unwrap();
    let config =
        RelayLogConfig::Memory { limit_bytes: 1 << 20, spill_threshold_bytes: 64 << 10, spill_directory: directory.path().to_path_buf() };
    let relay = Arc::new(RelayLog::open(&config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(64));
    let stop = StopFlag::new();
    for gno in 1..=20u64 {
        write_transaction(&relay, &queue, gno - 1, gno, (0, gno as i64), &transaction(gno, 0, gno as i64, 100), &stop);
    }
    struct Slow;
    impl replica::Applier for Slow {
        fn worker(&self, _: usize) -> Box<dyn replica::WorkerApplier> {
            Box::new(Slow)
        }
    }
    impl replica::WorkerApplier for Slow {
        fn apply(&mut self, _: &replica::BoundaryEntry, _: &mut replica::TransactionEvents<'_>) -> Result<(), protocol::MysqlError> {
            std::thread::sleep(Duration::from_millis(20));
            Ok(())
        }
        fn commit(&mut self, _: &replica::BoundaryEntry) -> Result<(), protocol::MysqlError> {
            Ok(())
        }
        fn rollback(&mut self, _: &replica::BoundaryEntry) {}
    }
    let started = std::time::Instant::now();
    let coordinator = Coordinator::start(
        CoordinatorConfig { workers: 4, preserve_commit_order: true, mode: CoordinatorMode::BoundaryQueue },
        relay,
        queue,
        Arc::new(Slow),
    );
    assert!(wait_until(Duration::from_secs(10), || coordinator.status().transactions_applied == 20));
    let elapsed = started.elapsed();
    coordinator.stop();
    assert!(elapsed < Duration::from_millis(300), "20 x 20 ms on 4 workers took {elapsed:?} (serial: 400 ms)");
}

#[test]
fn an_apply_error_stops_the_coordinator_with_the_error_kept() {
    let directory = tempfile::tempdir().unwrap();
    let config =
        RelayLogConfig::Memory { limit_bytes: 1 << 20, spill_threshold_bytes: 64 << 10, spill_directory: directory.path().to_path_buf() };
    let relay = Arc::new(RelayLog::open(&config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(1000));
    let stop = StopFlag::new();
    // All independent, so later ones run while gno 40 fails.
    for gno in 1..=100u64 {
        write_transaction(&relay, &queue, gno - 1, gno, (0, gno as i64), &transaction(gno, 0, gno as i64, 200), &stop);
    }
    let applier = Arc::new(RecordingApplier::new(500, Some(40)));
    let coordinator = Coordinator::start(
        CoordinatorConfig { workers: 4, preserve_commit_order: true, mode: CoordinatorMode::BoundaryQueue },
        relay,
        queue.clone(),
        applier.clone(),
    );
    assert!(wait_until(Duration::from_secs(10), || coordinator.is_finished()), "the coordinator did not stop on the error");
    let status = coordinator.status();
    let outcome = coordinator.stop();
    let (error, _) = status.last_error.expect("Last_SQL_Error is set");
    assert_eq!((error.code, error.sql_state_str()), (1062, "23000"));
    let gtid = format!("{}:40", SOURCE_UUID);
    assert!(error.message.starts_with("Coordinator stopped because there were error(s) in the worker(s)."), "{}", error.message);
    assert!(error.message.contains(&format!("failed executing transaction '{gtid}'")), "{}", error.message);
    assert!(error.message.ends_with("Duplicate entry '1' for key 't.PRIMARY'"), "{}", error.message);
    assert_eq!(outcome.error.map(|error| error.code), Some(1062));
    let record = applier.record.lock();
    // Commit order preserved: exactly 1..=39 committed, nothing after 40.
    assert_eq!(record.committed, (1..=39).collect::<Vec<_>>());
    assert!(record.rolled_back.contains(&40));
    // 40 and whatever was dispatched after it is handed back, in order,
    // and the rest is still queued: nothing is lost.
    let unapplied: Vec<u64> = outcome.unapplied.iter().map(|entry| entry.gtid.unwrap().gno).collect();
    assert_eq!(unapplied.first(), Some(&40));
    assert!(unapplied.windows(2).all(|pair| pair[1] == pair[0] + 1), "{unapplied:?}");
    assert_eq!(*unapplied.last().unwrap() + queue.len() as u64, 100, "{unapplied:?} and {} queued", queue.len());
}
