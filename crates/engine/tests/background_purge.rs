//! A commit that earned more purge than it does itself leaves the rest to
//! the background purge thread: the old versions still go, and never
//! while an open read view can see them. With purge deferred to group
//! syncs, small commits leave all of it to the thread until the queue
//! reaches its bound.

mod support;

use std::time::{Duration, Instant};

use binlog_format::Value;
use engine::{Engine, PURGE_QUEUED_KEYS_DEFERRED_MAX};
use support::*;

/// Enough updated rows that their purge is more than a commit does inline.
const ROWS: i64 = 3000;

fn wait_for_memory(engine: &Engine, bytes: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if engine.memory_used_bytes() == bytes {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn the_background_thread_purges_what_a_large_commit_left() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    for id in 0..ROWS {
        trx.insert(table, user(id, &format!("u{id}@x"), 20)).unwrap();
    }
    trx.commit(None).unwrap();
    let one_version_each = engine.memory_used_bytes();

    let reader = engine.begin();
    assert_eq!(reader.get(table, &[int(0)]).unwrap().unwrap()[2], int(20), "opens the reader's view");
    let mut trx = engine.begin();
    for id in 0..ROWS {
        trx.update_by_pk(table, &[int(id)], user(id, &format!("u{id}@x"), 21)).unwrap();
    }
    trx.commit(None).unwrap();
    // The thread runs meanwhile, but the reader's view holds the old versions.
    std::thread::sleep(Duration::from_millis(100));
    let rows = all_rows(&reader, table);
    assert_eq!(rows.len(), ROWS as usize);
    assert!(rows.iter().all(|row| row[2] == int(20)), "the reader lost an old version");
    assert!(engine.memory_used_bytes() > one_version_each);

    // Once the view closes, the next commit's purge (inline and then the
    // thread) removes every old version; no call to Engine::purge.
    drop(reader);
    let mut trx = engine.begin();
    for id in 0..ROWS {
        trx.update_by_pk(table, &[int(id)], user(id, &format!("u{id}@x"), 20)).unwrap();
    }
    trx.commit(None).unwrap();
    assert!(wait_for_memory(&engine, one_version_each), "{} bytes left, {one_version_each} expected", engine.memory_used_bytes());
    let rows = committed_rows(&engine, table);
    assert!(rows.iter().all(|row| row[2] == int(20)));
    assert_eq!(rows[7], vec![Value::Int(7), text("u7@x"), int(20)]);
}

/// Commits that each update one of 100 rows to an age no earlier commit
/// gave it (so every update leaves one old version and queues one key).
fn update_commits(engine: &Engine, table: engine::TableId, commits: i64, mut after_each: impl FnMut(&Engine)) {
    for n in 0..commits {
        let id = n % 100;
        let mut trx = engine.begin();
        trx.update_by_pk(table, &[int(id)], user(id, &format!("u{id}@x"), 1000 + n)).unwrap();
        trx.commit(None).unwrap();
        after_each(engine);
    }
}

/// An engine with 100 committed users (one version each) and purge
/// deferred to group syncs.
fn deferred_engine_with_100_users() -> (Engine, engine::TableId) {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    for id in 0..100 {
        trx.insert(table, user(id, &format!("u{id}@x"), 20)).unwrap();
    }
    trx.commit(None).unwrap();
    engine.defer_purge_to_group_syncs();
    (engine, table)
}

#[test]
fn deferred_purge_waits_for_the_request_and_then_the_thread_does_it_all() {
    let (engine, table) = deferred_engine_with_100_users();
    let one_version_each = engine.memory_used_bytes();

    update_commits(&engine, table, 500, |_| {});
    assert_eq!(engine.purge_queued_keys(), 500, "a deferred commit purged inline");
    assert!(engine.memory_used_bytes() > one_version_each);

    // What a group commit's leader does as its fsyncs begin.
    engine.purge_in_background();
    let deadline = Instant::now() + Duration::from_secs(10);
    while engine.purge_queued_keys() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(engine.purge_queued_keys(), 0, "the thread left queued keys");
    assert!(wait_for_memory(&engine, one_version_each), "{} bytes left, {one_version_each} expected", engine.memory_used_bytes());
}

#[test]
fn past_its_bound_the_deferred_queue_is_purged_by_the_commits_again() {
    let (engine, table) = deferred_engine_with_100_users();

    // Nobody asks the thread: only the bound keeps the queue in check.
    let commits = PURGE_QUEUED_KEYS_DEFERRED_MAX as i64 + 2000;
    let mut most_queued = 0;
    update_commits(&engine, table, commits, |engine| most_queued = most_queued.max(engine.purge_queued_keys()));
    // Each commit that takes the queue past the bound purges inline, so
    // after every commit it is at or below the bound, and reaches it.
    assert_eq!(most_queued, PURGE_QUEUED_KEYS_DEFERRED_MAX, "the queue after a commit, at most");
    let rows = committed_rows(&engine, table);
    assert_eq!(rows.len(), 100);
    let last_update_of_row_7 = (0..commits).rev().find(|n| n % 100 == 7).unwrap();
    assert_eq!(rows[7][2], int(1000 + last_update_of_row_7), "reads do not see row 7's last update");
}
