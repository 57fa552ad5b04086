//! Crash tests. For every named crash point: run concurrent commits and
//! checkpoints on simulated storage, freeze the storage when the point is
//! reached, take what a power cut (clean or torn) or a process kill would
//! leave, reopen, and check that recovery gives a prefix of the appended
//! records holding every acknowledged one, with a consistent checkpoint.
//! Then a property test against a reference model of what was durably
//! acknowledged, through random appends, checkpoints and crashes.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use proptest::prelude::*;
use rand::SeedableRng;
use redo::crash_points::{self, CrashPoints};
use redo::{Durability, Options, RedoLog};
use storage::SimStorage;
use storage::Storage;
use support::*;

#[derive(Debug, Clone, Copy)]
enum Image {
    PowerCut,
    PowerCutTorn(u64),
    ProcessKill,
}

fn take_image(storage: &SimStorage, image: Image) -> SimStorage {
    match image {
        Image::PowerCut => storage.crash_image(None),
        Image::PowerCutTorn(seed) => storage.crash_image(Some(&mut rand::rngs::StdRng::seed_from_u64(seed))),
        Image::ProcessKill => storage.process_kill_image(),
    }
}

fn crash_options() -> Options {
    Options { binlogd_redo_segment_bytes: 2048, innodb_flush_log_at_timeout: Duration::from_millis(3), ..Options::default() }
}

/// Checks the recovered state against what the engine applied (in LSN
/// order) and what was acknowledged durable; returns the recovered ids.
fn check_recovery(image: &SimStorage, applied: &[u64], acknowledged: &BTreeSet<u64>, context: &str) -> Vec<u64> {
    let (log, recovered) = RedoLog::open(dir(), crash_options(), Arc::new(image.clone()), CrashPoints::default())
        .unwrap_or_else(|e| panic!("{context}: recovery failed: {e}"));
    let ids = recovered_ids(&recovered);
    assert!(ids.len() <= applied.len() && ids[..] == applied[..ids.len()], "{context}: not a prefix of the appended records");
    let present: BTreeSet<u64> = ids.iter().copied().collect();
    let lost: Vec<&u64> = acknowledged.difference(&present).collect();
    assert!(lost.is_empty(), "{context}: acknowledged records lost: {lost:?}");
    // Only the checkpoint in force is left, and no temporary file.
    let names = image.list(&dir()).unwrap();
    let checkpoints: Vec<&String> = names.iter().filter(|n| n.starts_with("checkpoint.")).collect();
    let named: Vec<String> = recovered.checkpoint.iter().map(|c| c.file_name.clone()).collect();
    assert_eq!(checkpoints, named.iter().collect::<Vec<_>>(), "{context}: leftover checkpoint files");
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{context}: leftover temp files");
    // The recovered log takes appends, and they survive the next crash.
    log.append(&record(u64::MAX, 5), Durability::Sync).unwrap_or_else(|e| panic!("{context}: append after recovery: {e}"));
    drop(log);
    let (_, again) = RedoLog::open(dir(), crash_options(), Arc::new(image.crash_image(None)), CrashPoints::default()).unwrap();
    let mut expected = ids.clone();
    expected.push(u64::MAX);
    assert_eq!(recovered_ids(&again), expected, "{context}: second recovery");
    ids
}

/// Four committers until the armed point fires; two of them take a
/// checkpoint every 15 commits, while the others keep committing.
/// Returns what the engine applied and what was acknowledged durable.
fn run_workload(storage: &SimStorage, crash: CrashPoints) -> (Vec<u64>, BTreeSet<u64>) {
    let log = match RedoLog::open(dir(), crash_options(), Arc::new(storage.clone()), crash) {
        Ok((log, _)) => log,
        Err(_) => return (Vec::new(), BTreeSet::new()),
    };
    // The engine: a record is appended and applied under one lock, so its
    // state is always exactly the records below the log's current LSN.
    let engine = Arc::new(Mutex::new(Vec::<u64>::new()));
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let threads: Vec<_> = (0..4u64)
        .map(|thread| {
            let (log, engine, acknowledged) = (log.clone(), engine.clone(), acknowledged.clone());
            std::thread::spawn(move || {
                for i in 0..60 {
                    let id = thread * 1_000_000 + i;
                    let appended = {
                        let mut state = engine.lock();
                        let appended = log.append(&record(id, (id % 97) as usize), Durability::Buffered);
                        if appended.is_ok() {
                            state.push(id);
                        }
                        appended
                    };
                    match appended.and_then(|end| log.wait_durable(end)) {
                        Ok(()) => {
                            acknowledged.lock().insert(id);
                        }
                        Err(_) => break,
                    }
                    if thread % 2 == 0 && i % 15 == 14 {
                        let (start, snapshot) = {
                            let state = engine.lock();
                            (log.current_lsn(), encode_ids(&state))
                        };
                        if log.checkpoint(start, |out| out.write_all(&snapshot)).is_err() {
                            break;
                        }
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let applied = engine.lock().clone();
    let acknowledged = acknowledged.lock().clone();
    (applied, acknowledged)
}

#[test]
fn crash_at_every_point_recovers_a_prefix_with_every_acknowledged_record() {
    for &point in crash_points::ALL {
        let mut fired = 0;
        for skip in [0u64, 1, 3, 9, 27, 60] {
            for image in [Image::PowerCut, Image::PowerCutTorn(skip * 7 + 1), Image::ProcessKill] {
                let storage = SimStorage::new();
                let crash = CrashPoints::default();
                let frozen = storage.clone();
                crash.arm(point, skip, move || frozen.freeze());
                let (applied, acknowledged) = run_workload(&storage, crash.clone());
                if crash.fired(point) {
                    fired += 1;
                    assert!(storage.is_frozen());
                } else {
                    storage.freeze();
                }
                let context = format!("{point} (skip {skip}, {image:?}, fired {})", crash.fired(point));
                check_recovery(&take_image(&storage, image), &applied, &acknowledged, &context);
            }
        }
        assert!(fired > 0, "crash point {point} was never reached");
    }
}

#[derive(Debug, Clone)]
enum Op {
    Append { extra: usize, durability: u8 },
    Checkpoint,
    Flush,
    Crash(u8, u64),
    CloseAndReopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (0usize..300, 0u8..3).prop_map(|(extra, durability)| Op::Append { extra, durability }),
        2 => Just(Op::Checkpoint),
        1 => Just(Op::Flush),
        2 => (0u8..3, any::<u64>()).prop_map(|(kind, seed)| Op::Crash(kind, seed)),
        1 => Just(Op::CloseAndReopen),
    ]
}

fn model_options() -> Options {
    Options {
        binlogd_redo_segment_bytes: 1024,
        innodb_log_buffer_size: 700,
        // No background flush: what survives depends only on the ops.
        innodb_flush_log_at_timeout: Duration::from_secs(3600),
        ..Options::default()
    }
}

fn reopen(storage: &SimStorage) -> (RedoLog, Vec<u64>) {
    let (log, recovered) = RedoLog::open(dir(), model_options(), Arc::new(storage.clone()), CrashPoints::default()).expect("recovery");
    let ids = recovered_ids(&recovered);
    (log, ids)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The reference model: the engine's records in LSN order, and how
    /// many leading ones were acknowledged written (survive a process
    /// kill) and durable (survive a power cut).
    #[test]
    fn random_appends_checkpoints_and_crashes_match_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        let mut storage = SimStorage::new();
        let (mut log, _) = reopen(&storage);
        let mut applied: Vec<u64> = Vec::new();
        let (mut written, mut durable) = (0usize, 0usize);
        let mut next_id = 0u64;
        for op in ops {
            match op {
                Op::Append { extra, durability } => {
                    let durability = [Durability::Buffered, Durability::Written, Durability::Sync][durability as usize];
                    log.append(&record(next_id, extra), durability).unwrap();
                    applied.push(next_id);
                    next_id += 1;
                    match durability {
                        Durability::Sync => (written, durable) = (applied.len(), applied.len()),
                        Durability::Written => written = applied.len(),
                        Durability::Buffered => {}
                    }
                }
                Op::Checkpoint => {
                    log.checkpoint(log.current_lsn(), |out| out.write_all(&encode_ids(&applied))).unwrap();
                    // A checkpoint makes the redo it covers durable first.
                    (written, durable) = (applied.len(), applied.len());
                }
                Op::Flush => {
                    log.flush().unwrap();
                    (written, durable) = (applied.len(), applied.len());
                }
                Op::Crash(kind, seed) => {
                    let (image, promised) = match kind {
                        0 => (Image::PowerCut, durable),
                        1 => (Image::PowerCutTorn(seed), durable),
                        _ => (Image::ProcessKill, written),
                    };
                    drop(log);
                    storage = take_image(&storage, image);
                    let (reopened, ids) = reopen(&storage);
                    log = reopened;
                    prop_assert!(ids.len() <= applied.len() && ids[..] == applied[..ids.len()], "{image:?}: not a prefix");
                    prop_assert!(ids.len() >= promised, "{image:?}: kept {} records, {promised} were acknowledged", ids.len());
                    applied = ids;
                    (written, durable) = (applied.len(), applied.len());
                }
                Op::CloseAndReopen => {
                    log.close().unwrap();
                    drop(log);
                    let (reopened, ids) = reopen(&storage);
                    log = reopened;
                    prop_assert_eq!(&ids, &applied);
                    (written, durable) = (applied.len(), applied.len());
                }
            }
        }
        drop(log);
        let (_, ids) = reopen(&storage.crash_image(None));
        prop_assert!(ids.len() >= durable && ids[..] == applied[..ids.len()]);
    }
}
