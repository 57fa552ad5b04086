//! Crash tests: for every named crash point, run a concurrent workload
//! (commits, large promoted transactions, rotations, purges, close) on the
//! simulated storage, stop durability when the point is reached, take what
//! a power cut (with a torn tail) or a process kill would leave, reopen,
//! and check: the log holds exactly a prefix of the transactions in commit
//! order, every acknowledged commit (sync_binlog = 1) is there, index and
//! files agree, no spill file is left, and recovery's XIDs match the files.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use binlog::crash_points::{self, CrashPoints};
use binlog::BinaryLog;
use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use storage::SimStorage;
use support::*;

#[derive(Clone, Copy, Debug)]
enum Image {
    PowerCut,
    PowerCutTorn,
    ProcessKill,
}

struct Outcome {
    acknowledged: BTreeSet<u64>,
}

/// Runs the workload until the armed point fires (or the workload ends).
fn run_workload(storage: &SimStorage, crash: &CrashPoints, dir: &Path, seed: u64) -> Outcome {
    let mut options = options(dir);
    options.max_binlog_size = 16 * 1024;
    options.binlog_cache_size = 4 * 1024;
    options.binlog_expire_logs_seconds = 0;
    // The 200-row transactions (~12 KiB) are promoted.
    options.large_transaction_optimization_threshold = 8 * 1024;
    options.spill_sync_chunk_bytes = 4 * 1024;
    let log = match BinaryLog::open(options, Arc::new(storage.clone()), crash.clone()) {
        Ok((log, _)) => log,
        // The point fired while the first open created its file or index.
        Err(_) => return Outcome { acknowledged: BTreeSet::new() },
    };
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let next_xid = Arc::new(AtomicU64::new(1));
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for thread in 0..4u64 {
        let (log, acknowledged, next_xid, stop) = (log.clone(), acknowledged.clone(), next_xid.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed * 31 + thread);
            for _ in 0..40 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let xid = next_xid.fetch_add(1, Ordering::Relaxed);
                // One in eight is large enough to spill.
                let rows = if rng.gen_ratio(1, 8) { 200 } else { rng.gen_range(1..4) };
                let mut cache = log.new_cache();
                let built = (|| -> binlog::Result<()> {
                    cache.append(&binlog_format::Event::Query(binlog_format::events::QueryEvent::new(1, "test", "BEGIN")), 1)?;
                    for row in 0..rows {
                        let q = binlog_format::events::QueryEvent::new(1, "test", &format!("INSERT INTO t VALUES ({xid}, {row})"));
                        cache.append(&binlog_format::Event::Query(q), 1)?;
                    }
                    cache.append(&binlog_format::Event::Xid(binlog_format::events::XidEvent { xid }), 1)
                })();
                if built.is_err() {
                    break;
                }
                match log.commit(cache) {
                    Ok(info) => {
                        acknowledged.lock().insert(info.gtid.gno);
                    }
                    Err(_) => break,
                }
            }
        }));
    }
    // Maintenance alongside: rotations and purges.
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for round in 0..40 {
        std::thread::sleep(std::time::Duration::from_millis(2));
        if storage.is_frozen() {
            break;
        }
        if round % 5 == 2 {
            if let Err(error) = log.rotate() {
                assert!(storage.is_frozen() || error.to_string().contains("simulated"), "rotate failed without a fault: {error}");
            }
        }
        if round % 7 == 3 {
            let names = log.file_names();
            if names.len() > 2 {
                if let Err(error) = log.purge_to(&names[rng.gen_range(1..names.len() - 1)]) {
                    assert!(storage.is_frozen() || error.to_string().contains("simulated"), "purge failed without a fault: {error}");
                }
            }
        }
    }
    for thread in threads {
        thread.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let _ = log.close();
    let acknowledged = acknowledged.lock().clone();
    Outcome { acknowledged }
}

fn check_recovered(image: &SimStorage, dir: &Path, acknowledged: &BTreeSet<u64>, context: &str) {
    let (log, report) = BinaryLog::open(options(dir), Arc::new(image.clone()), CrashPoints::default())
        .unwrap_or_else(|e| panic!("{context}: reopen failed: {e}"));
    let active = log.active_position().0;
    let contents = check_log(image, dir, Some(&active));
    let present: BTreeSet<u64> = contents.transactions.iter().map(|t| t.gno).collect();
    // gtid_executed covers purged files too: every acknowledged GTID is in it.
    let executed = log.executed_gtids();
    for gno in acknowledged {
        let gtid = binlog_format::Gtid::new(uuid(), *gno);
        assert!(executed.contains(&gtid), "{context}: acknowledged commit {gno} lost; executed {executed}");
    }
    // The recovered log is a prefix: executed = 1..n without holes.
    let last = executed.last_gno(&uuid());
    assert_eq!(executed.count(), last, "{context}: holes in gtid_executed {executed}");
    // Recovery's XIDs are exactly those of complete transactions in the scanned files.
    for trx in contents.transactions.iter().filter(|t| report.scanned_files.contains(&t.file)) {
        assert!(report.xids.contains(&trx.xid.unwrap()), "{context}: xid of gno {} not reported", trx.gno);
    }
    assert!(present.iter().all(|gno| *gno <= last));
    // The log keeps working after recovery.
    let info = log.commit(transaction(&log, 1_000_000, 1)).unwrap();
    assert_eq!(info.gtid.gno, last + 1, "{context}");
    log.close().unwrap();
}

fn crash_case(point: &'static str, seed: u64, image_kind: Image) {
    let dir = sim_dir();
    let storage = SimStorage::new();
    let crash = CrashPoints::default();
    let frozen = storage.clone();
    // Close happens once per run; other points many times: vary which passage crashes.
    let skip = if point == crash_points::CLOSE_AFTER_STOP_EVENT { 0 } else { seed % 3 };
    crash.arm(point, skip, move || frozen.freeze());
    let outcome = run_workload(&storage, &crash, &dir, seed);
    let context = format!("point {point}, seed {seed}, {image_kind:?}");
    assert!(crash.fired(point), "{context}: the workload never reached the point");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let image = match image_kind {
        Image::PowerCut => storage.crash_image(None),
        Image::PowerCutTorn => storage.crash_image(Some(&mut rng)),
        Image::ProcessKill => storage.process_kill_image(),
    };
    check_recovered(&image, &dir, &outcome.acknowledged, &context);
}

#[test]
fn every_crash_point_recovers_to_a_prefix_with_nothing_acknowledged_lost() {
    let workload_points: Vec<&str> = crash_points::ALL.iter().copied().filter(|p| *p != crash_points::RECOVERY_AFTER_TRUNCATE).collect();
    for point in workload_points {
        for seed in 0..3 {
            for image in [Image::PowerCut, Image::PowerCutTorn, Image::ProcessKill] {
                crash_case(point, seed, image);
            }
        }
    }
}

#[test]
fn crash_during_recovery_is_recovered_by_recovering_again() {
    for seed in 0..5u64 {
        let dir = sim_dir();
        let storage = SimStorage::new();
        let outcome = run_workload(&storage, &CrashPoints::default(), &dir, seed);
        // A process kill leaves the last file in use; tear its tail.
        let image = storage.process_kill_image();
        let log = binlog::BinaryLog::open(options(&dir), Arc::new(image.clone()), CrashPoints::default()).unwrap().0;
        log.commit(transaction(&log, 77, 1)).unwrap();
        let active = dir.join(log.active_position().0);
        drop(log);
        let mut bytes = image.file_bytes(&active).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let cut = bytes.len() - rng.gen_range(1..60);
        bytes.truncate(cut);
        image.set_file_bytes(&active, bytes);
        let crash = CrashPoints::default();
        let frozen = image.clone();
        crash.arm(crash_points::RECOVERY_AFTER_TRUNCATE, 0, move || frozen.freeze());
        assert!(binlog::BinaryLog::open(options(&dir), Arc::new(image.clone()), crash.clone()).is_err());
        assert!(crash.fired(crash_points::RECOVERY_AFTER_TRUNCATE));
        check_recovered(&image.crash_image(None), &dir, &outcome.acknowledged, &format!("recovery crash, seed {seed}"));
    }
}

#[test]
fn failed_fsync_poisons_the_log_until_reopen_and_loses_nothing_acknowledged() {
    for failing_sync in [6u64, 9, 14, 25] {
        let dir = sim_dir();
        let storage = SimStorage::new();
        storage.fail_sync_number(failing_sync);
        let outcome = run_workload(&storage, &CrashPoints::default(), &dir, failing_sync);
        // After the failure every commit fails with the "previous I/O" error.
        let (log, _) = (binlog::BinaryLog::open(options(&dir), Arc::new(storage.crash_image(None)), CrashPoints::default()).unwrap(), ());
        drop(log);
        check_recovered(&storage.crash_image(None), &dir, &outcome.acknowledged, &format!("failed sync {failing_sync}"));
    }
}

#[test]
fn a_poisoned_log_refuses_commits_with_a_clear_error() {
    let dir = sim_dir();
    let storage = SimStorage::new();
    let log = open(&dir, Arc::new(storage.clone()), |_| {});
    log.commit(transaction(&log, 1, 1)).unwrap();
    storage.fail_sync_number(storage.sync_count() + 1);
    let error = log.commit(transaction(&log, 2, 1)).unwrap_err();
    assert!(error.to_string().contains("simulated EIO"), "{error}");
    let error = log.commit(transaction(&log, 3, 1)).unwrap_err();
    assert!(matches!(error, binlog::BinlogError::PreviousIo { .. }), "{error}");
    assert_eq!(error.mysql_code(), 1598);
    assert!(log.rotate().is_err());
}
