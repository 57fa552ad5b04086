//! Ordered group commit: one sync serves a group, sync_binlog 0/1/N, the
//! sync delay gathers larger groups, GTIDs and the logical clock follow
//! commit order.

mod support;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use binlog::BinaryLog;
use storage::SimStorage;
use support::*;

/// `sessions` threads commit `per_session` transactions each; returns
/// (commits, groups, fsyncs) counted during the run.
fn run(log: &BinaryLog, sessions: u64, per_session: u64) -> (u64, u64, u64) {
    let counters = log.counters();
    let (groups0, fsyncs0) = (counters.groups.load(Ordering::Relaxed), counters.fsyncs.load(Ordering::Relaxed));
    let barrier = Arc::new(std::sync::Barrier::new(sessions as usize));
    let threads: Vec<_> = (0..sessions)
        .map(|session| {
            let (log, barrier) = (log.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for n in 0..per_session {
                    log.commit(transaction(&log, session * 1_000_000 + n, 1)).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    (sessions * per_session, counters.groups.load(Ordering::Relaxed) - groups0, counters.fsyncs.load(Ordering::Relaxed) - fsyncs0)
}

#[test]
fn one_fsync_serves_a_whole_group() {
    let storage = SimStorage::new();
    // A slow disk: every fdatasync of a binlog file takes 2 ms, so commits
    // queue behind the leader's sync and form groups.
    storage.set_sync_delay("binlog.0", Duration::from_millis(2));
    let log = open(&sim_dir(), Arc::new(storage.clone()), |o| o.sync_binlog = 1);
    let (commits, groups, fsyncs) = run(&log, 16, 40);
    assert!(fsyncs <= groups, "sync_binlog=1 syncs each group at most once ({fsyncs} fsyncs, {groups} groups)");
    assert!(commits >= 4 * fsyncs, "expected groups of several commits: {commits} commits, {fsyncs} fsyncs");
    let active = log.active_position().0;
    drop(log);
    let contents = check_log(&storage, &sim_dir(), Some(&active));
    assert_eq!(contents.transactions.len() as u64, commits);
    // Transactions committed in one group share last_committed (COMMIT_ORDER).
    let shared = contents.transactions.windows(2).filter(|w| w[0].last_committed == w[1].last_committed).count();
    assert!(shared as u64 >= commits / 2, "logical clock shows no parallelism: {shared} of {commits}");
    for trx in &contents.transactions {
        assert!(trx.last_committed < trx.sequence_number);
    }
}

#[test]
fn sync_binlog_zero_never_syncs_and_n_syncs_every_n_groups() {
    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), |o| o.sync_binlog = 0);
    let (_, groups, fsyncs) = run(&log, 1, 50);
    assert_eq!(groups, 50);
    assert_eq!(fsyncs, 0);
    drop(log);

    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), |o| o.sync_binlog = 5);
    let (_, groups, fsyncs) = run(&log, 1, 50);
    assert_eq!(groups, 50);
    assert_eq!(fsyncs, 10);
}

#[test]
fn sync_delay_gathers_groups_up_to_the_no_delay_count() {
    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), |o| {
        o.binlog_group_commit_sync_delay = Duration::from_millis(20);
        o.binlog_group_commit_sync_no_delay_count = 8;
    });
    let (commits, _, fsyncs) = run(&log, 8, 10);
    assert!(fsyncs * 2 <= commits, "the delay should gather groups for one sync: {commits} commits, {fsyncs} fsyncs");
}

#[test]
fn writeset_tracking_gives_disjoint_transactions_the_same_last_committed() {
    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), |o| o.dependency_tracking = binlog::DependencyTracking::Writeset);
    for n in 0..10u64 {
        let mut cache = transaction(&log, n + 1, 1);
        cache.writeset = vec![n]; // disjoint rows
        log.commit(cache).unwrap();
    }
    let mut cache = transaction(&log, 11, 1);
    cache.writeset = vec![3]; // conflicts with the 4th
    log.commit(cache).unwrap();
    let active = log.active_position().0;
    drop(log);
    let contents = check_log(&storage, &sim_dir(), Some(&active));
    for trx in &contents.transactions[..10] {
        assert_eq!(trx.last_committed, 0, "disjoint serial commits may all apply in parallel");
    }
    assert_eq!(contents.transactions[10].last_committed, 4);
}

#[test]
fn a_rotated_file_stays_in_use_until_its_engine_commits_finish() {
    use binlog::CrashPoints;
    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), |_| {});
    let first = log.active_position().0;
    // A commit hook (the engine commit) that blocks until released.
    let (entered_sender, entered) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let committer_log = log.clone();
    let committer = std::thread::spawn(move || {
        let hook: binlog::CommitHook = Box::new(move |_| {
            entered_sender.send(()).unwrap();
            released.recv().unwrap();
        });
        committer_log.commit_with_hook(transaction(&committer_log, 42, 1), Some(hook)).unwrap()
    });
    entered.recv_timeout(Duration::from_secs(10)).unwrap();
    // FLUSH BINARY LOGS while the engine commit of xid 42 is pending.
    log.rotate().unwrap();
    // Crash now: the engine never committed xid 42, so recovery must hand
    // its XID over although its file is no longer the last one.
    let image = storage.process_kill_image();
    let (_, report) = BinaryLog::open(options(&sim_dir()), Arc::new(image), CrashPoints::default()).unwrap();
    assert!(report.scanned_files.contains(&first), "{:?}", report.scanned_files);
    assert!(report.xids.contains(&42));
    assert_eq!(report.xid_gtids[&42].gno, 1);
    // Once the engine commit finishes, the old file's flag is cleared.
    release.send(()).unwrap();
    committer.join().unwrap();
    let bytes = storage.file_bytes(&sim_dir().join(&first)).unwrap();
    let flags = u16::from_le_bytes(bytes[21..23].try_into().unwrap());
    assert_eq!(flags & binlog_format::constants::LOG_EVENT_BINLOG_IN_USE_F, 0);
}
