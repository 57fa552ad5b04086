//! Group commit and `innodb_flush_log_at_trx_commit` 0, 1, 2: what each
//! acknowledges, and what a process kill or a power cut then keeps.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use redo::{Durability, FlushLogAtTrxCommit, Options, RedoLog};
use storage::SimStorage;
use support::*;

fn with_flush(setting: FlushLogAtTrxCommit) -> Options {
    Options { innodb_flush_log_at_trx_commit: setting, ..options() }
}

/// `threads` threads append `per_thread` commit records each with the
/// setting's commit durability; returns the log and the acknowledged ids.
fn concurrent_commits(storage: &SimStorage, options: Options, threads: u64, per_thread: u64) -> (RedoLog, BTreeSet<u64>) {
    let (log, _) = open(storage, options);
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let workers: Vec<_> = (0..threads)
        .map(|thread| {
            let (log, acknowledged) = (log.clone(), acknowledged.clone());
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let id = thread * 1_000_000 + i;
                    log.append(&record(id, 40), log.options().commit_durability()).unwrap();
                    acknowledged.lock().insert(id);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let acknowledged = acknowledged.lock().clone();
    (log, acknowledged)
}

#[test]
fn flush_1_groups_concurrent_commits_into_fewer_fsyncs() {
    let storage = SimStorage::new();
    storage.set_sync_delay("redo.0", Duration::from_millis(2));
    let (log, acknowledged) = concurrent_commits(&storage, with_flush(FlushLogAtTrxCommit::WriteAndSyncAtCommit), 16, 40);
    let counters = log.counters();
    assert_eq!(counters.records, 640);
    let group_syncs = counters.fsyncs - 3 * counters.rotations;
    assert!(group_syncs * 3 < counters.records, "{group_syncs} group fsyncs for {} records: no grouping", counters.records);
    assert!(counters.groups < counters.records, "{counters:?}");
    eprintln!("16 threads x 40 commits, flush=1: {counters:?}");
    // Every acknowledged commit survives a power cut.
    let (_, recovered) = open(&storage.crash_image(None), options());
    let ids: BTreeSet<u64> = recovered_ids(&recovered).into_iter().collect();
    assert!(acknowledged.is_subset(&ids));
}

#[test]
fn flush_1_every_acknowledged_append_survives_a_torn_power_cut() {
    use rand::SeedableRng;
    for seed in 0..5 {
        let storage = SimStorage::new();
        let (log, acknowledged) = concurrent_commits(&storage, with_flush(FlushLogAtTrxCommit::WriteAndSyncAtCommit), 8, 30);
        // Appends nobody waits for, so there is an unsynced tail to tear.
        for id in 0..20 {
            log.append(&record(5_000_000 + id, 30), Durability::Written).unwrap();
        }
        let image = storage.crash_image(Some(&mut rand::rngs::StdRng::seed_from_u64(seed)));
        let (_, recovered) = open(&image, options());
        let ids: BTreeSet<u64> = recovered_ids(&recovered).into_iter().collect();
        assert!(acknowledged.is_subset(&ids), "seed {seed}");
    }
}

#[test]
fn flush_2_survives_a_process_kill_but_not_a_power_cut() {
    let storage = SimStorage::new();
    let (log, acknowledged) = concurrent_commits(&storage, with_flush(FlushLogAtTrxCommit::WriteAtCommit), 4, 25);
    assert_eq!(log.flushed_lsn(), log.current_lsn(), "flush=2 writes at commit");
    assert!(log.durable_lsn() < log.current_lsn(), "flush=2 does not sync at commit (rotations sync closed segments)");
    let counters = log.counters();
    assert_eq!(counters.fsyncs, 3 * counters.rotations, "only rotations synced");

    let (_, killed) = open(&storage.process_kill_image(), options());
    let ids: BTreeSet<u64> = recovered_ids(&killed).into_iter().collect();
    assert_eq!(ids, acknowledged, "a process kill loses nothing written");

    // A power cut keeps only what rotation synced: closed segments.
    let (_, cut) = open(&storage.crash_image(None), options());
    let kept = recovered_ids(&cut).len();
    assert!(kept < acknowledged.len(), "a power cut loses the unsynced tail");
}

#[test]
fn flush_2_background_flusher_syncs_within_the_timeout() {
    let storage = SimStorage::new();
    let options = Options { innodb_flush_log_at_timeout: Duration::from_millis(20), ..with_flush(FlushLogAtTrxCommit::WriteAtCommit) };
    let (log, _) = open(&storage, options);
    let mut end = 0;
    for id in 0..30 {
        end = log.append(&record(id, 40), log.options().commit_durability()).unwrap();
    }
    wait_until(|| log.durable_lsn() >= end);
    let (_, recovered) = open(&storage.crash_image(None), self::options());
    assert_eq!(recovered_ids(&recovered), (0..30).collect::<Vec<_>>());
}

#[test]
fn flush_0_keeps_records_in_memory_until_the_background_flush() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, with_flush(FlushLogAtTrxCommit::WriteAndSyncPerSecond));
    for id in 0..30 {
        log.append(&record(id, 40), log.options().commit_durability()).unwrap();
    }
    assert_eq!(log.flushed_lsn(), 0, "flush=0 does not even write at commit");
    let (_, killed) = open(&storage.process_kill_image(), options());
    assert_eq!(recovered_ids(&killed), Vec::<u64>::new(), "a process kill loses the log buffer");
    drop(log);

    let storage = SimStorage::new();
    let options =
        Options { innodb_flush_log_at_timeout: Duration::from_millis(20), ..with_flush(FlushLogAtTrxCommit::WriteAndSyncPerSecond) };
    let (log, _) = open(&storage, options);
    let mut end = 0;
    for id in 0..30 {
        end = log.append(&record(id, 40), log.options().commit_durability()).unwrap();
    }
    wait_until(|| log.durable_lsn() >= end);
    // What the background flush wrote survives; what is appended after the
    // process "dies" (frozen storage) does not.
    storage.freeze();
    for id in 30..40 {
        let _ = log.append(&record(id, 40), Durability::Buffered);
    }
    let (_, recovered) = open(&storage.crash_image(None), self::options());
    assert_eq!(recovered_ids(&recovered), (0..30).collect::<Vec<_>>());
}

#[test]
fn a_full_log_buffer_makes_the_appender_write_it() {
    let storage = SimStorage::new();
    let options = Options { innodb_log_buffer_size: 1024, ..with_flush(FlushLogAtTrxCommit::WriteAndSyncPerSecond) };
    let (log, _) = open(&storage, options);
    for id in 0..200 {
        log.append(&record(id, 60), Durability::Buffered).unwrap();
        assert!(log.current_lsn() - log.flushed_lsn() <= 1024, "the log buffer exceeded innodb_log_buffer_size");
    }
    assert!(log.counters().buffer_full_writes > 0);
    // Back-pressure wrote all but the last buffer's worth.
    let (_, killed) = open(&storage.process_kill_image(), self::options());
    let kept = recovered_ids(&killed).len() as u64;
    assert!(kept >= 200 - 1024 / record(0, 60).encoded_len() - 1, "kept {kept}");
}

#[test]
fn wait_durable_joins_a_group_sync() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let first = log.append(&record(0, 10), Durability::Buffered).unwrap();
    let second = log.append(&record(1, 10), Durability::Buffered).unwrap();
    log.wait_durable(first).unwrap();
    assert!(log.durable_lsn() >= second, "one sync covered everything written");
    assert!(log.wait_durable(second + 1).is_err(), "cannot wait for an LSN never appended");
    assert_eq!(log.counters().fsyncs, 1);
}

fn wait_until(condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "background flusher did not run");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn watch_durable_waits_without_forcing_a_sync() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let end = log.append(&record(0, 10), Durability::Written).unwrap();
    assert!(!log.watch_durable(end, Duration::from_millis(20)), "nobody synced");
    assert_eq!(log.counters().fsyncs, 0, "watching forces nothing");
    let watcher = {
        let log = log.clone();
        std::thread::spawn(move || log.watch_durable(end, Duration::from_secs(10)))
    };
    std::thread::sleep(Duration::from_millis(10));
    log.wait_durable(end).unwrap();
    assert!(watcher.join().unwrap());
}
