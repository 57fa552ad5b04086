//! A commit that earned more purge than it does itself leaves the rest to
//! the background purge thread: the old versions still go, and never
//! while an open read view can see them.

mod support;

use std::time::{Duration, Instant};

use binlog_format::Value;
use engine::Engine;
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
