//! The cross-log group commit's stage times (`binlogd_group_commit_*`):
//! after concurrent commits they count every member once, and the stages
//! measured inside a leader's cycle add up to no more than the cycle.

mod support;

use std::sync::Arc;

use binlog_format::Value;
use database::{CommitRequest, Database};
use storage::OsStorage;
use support::*;

const SESSIONS: i64 = 4;
const COMMITS_PER_SESSION: i64 = 25;

#[test]
fn stage_counters_count_every_member_and_add_up_within_the_leaders_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = Database::open(config(dir.path(), Arc::new(OsStorage))).unwrap();
    let accounts = create_schema(&db).unwrap().accounts;
    let before = db.counters();
    let threads: Vec<_> = (0..SESSIONS)
        .map(|session| {
            let db = db.clone();
            std::thread::spawn(move || {
                for n in 0..COMMITS_PER_SESSION {
                    let id = session * 1000 + n;
                    let mut trx = db.begin();
                    trx.insert(accounts, vec![Value::Int(id), Value::Bytes(format!("a{id}@x").into_bytes()), Value::Int(0)]).unwrap();
                    db.commit(CommitRequest::new(trx, &context(session as u32 + 1))).unwrap().expect("a write is logged");
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let after = db.counters();
    db.close().unwrap();

    let commits = after.commits - before.commits;
    assert_eq!(commits, (SESSIONS * COMMITS_PER_SESSION) as u64);
    let (b, a) = (&before.group_commit, &after.group_commit);
    let delta = |pick: fn(&database::GroupCommitStages) -> u64| pick(a) - pick(b);
    let groups = delta(|s| s.groups);
    let members = delta(|s| s.members);
    assert_eq!(members, commits, "every commit is one member of one group: {a:?}");
    assert!(groups >= 1 && groups <= members, "{groups} groups for {members} members");
    // Every member but its group's leader is woken once.
    assert_eq!(delta(|s| s.woken_members), members - groups, "{a:?}");
    assert!(delta(|s| s.woken_groups) <= groups);
    assert!(delta(|s| s.wake_last_us) <= delta(|s| s.wake_member_us), "a group's last wake-up is one of its members'");

    // Real fdatasyncs and writes: each takes time.
    let leader_us = delta(|s| s.leader_us);
    let binlog_us = delta(|s| s.binlog_us);
    assert!(delta(|s| s.redo_sync_us) > 0 && binlog_us > 0 && leader_us > 0, "{a:?}");
    assert!(after.binlog_sync_stage_us > before.binlog_sync_stage_us, "{after:?}");
    // Disjoint stages inside the leader's cycle, each rounded down.
    let inside_leader =
        delta(|s| s.gather_us) + delta(|s| s.redo_write_us) + delta(|s| s.redo_sync_us) + binlog_us + delta(|s| s.hand_off_us);
    assert!(inside_leader <= leader_us, "stages {inside_leader} µs > the leaders' cycles {leader_us} µs: {a:?}");
    // The binlog's own stages run inside the groups' binlog batches (no
    // DDL ran meanwhile).
    let binlog_stages = (after.binlog_flush_stage_us - before.binlog_flush_stage_us)
        + (after.binlog_sync_stage_us - before.binlog_sync_stage_us)
        + (after.binlog_commit_stage_us - before.binlog_commit_stage_us);
    assert!(binlog_stages <= binlog_us, "binlog stages {binlog_stages} µs > the batches {binlog_us} µs");

    // SHOW GLOBAL STATUS's rows carry the same sums.
    let status = after.group_commit_status();
    let value = |name: &str| status.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    assert_eq!(value("binlogd_group_commit_groups"), Some(a.groups));
    assert_eq!(value("binlogd_group_commit_redo_sync_us_total"), Some(a.redo_sync_us));
    assert_eq!(value("binlogd_group_commit_binlog_sync_us_total"), Some(after.binlog_sync_stage_us));
}
