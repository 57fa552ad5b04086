//! Commits in a fixed order (a replica preserving its source's commit
//! order): each session may commit only after the previous one's place in
//! the order is fixed. With the hand-off at that point
//! (`CommitRequest::on_ordered`) instead of at
//! the commit's return, consecutive commits share group commits, and the
//! binlog still holds them in exactly the turn order, with nothing lost at
//! a crash.

mod support;

use std::sync::Arc;
use std::time::Duration;

use binlog_format::Value;
use database::{CommitRequest, Database};
use parking_lot::{Condvar, Mutex};
use storage::SimStorage;
use support::*;

const SESSIONS: u64 = 6;
const COMMITS: u64 = 120;

/// The turn: commit number `n` may start committing when it equals `n`.
#[derive(Default)]
struct Turn {
    next: Mutex<u64>,
    changed: Condvar,
}

impl Turn {
    fn wait(&self, n: u64) {
        let mut next = self.next.lock();
        while *next != n {
            self.changed.wait(&mut next);
        }
    }

    /// Passes the turn on from `n` (once: a second call is a no-op).
    fn pass(&self, n: u64) {
        let mut next = self.next.lock();
        if *next == n {
            *next += 1;
            self.changed.notify_all();
        }
    }
}

/// Runs COMMITS inserts from SESSIONS threads in turn order; `early`:
/// pass the turn when ordered (else when the commit returns). Returns the
/// redo fsyncs they took and the ids in binlog order.
fn run(db: &Arc<Database>, early: bool) -> u64 {
    let tables = tables(db).unwrap();
    let turn = Arc::new(Turn::default());
    let fsyncs_before = db.counters().redo_fsyncs;
    let threads: Vec<_> = (0..SESSIONS)
        .map(|session| {
            let (db, turn) = (db.clone(), turn.clone());
            std::thread::spawn(move || {
                for n in (session..COMMITS).step_by(SESSIONS as usize) {
                    let id = 1_000 + n as i64 + if early { 0 } else { 10_000 };
                    let mut trx = db.begin();
                    trx.insert(tables.accounts, vec![Value::Int(id), Value::Bytes(format!("o{id}").into_bytes()), Value::Int(n as i64)])
                        .unwrap();
                    turn.wait(n);
                    let on_ordered = || {
                        if early {
                            turn.pass(n);
                        }
                    };
                    db.commit(CommitRequest { on_ordered: &on_ordered, ..CommitRequest::new(trx, &context(session as u32 + 1)) }).unwrap();
                    turn.pass(n);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    db.counters().redo_fsyncs - fsyncs_before
}

/// The first column of every inserted row, in binlog order.
fn inserted_ids_in_binlog_order(storage: &SimStorage, binlog_dir: &std::path::Path) -> Vec<i64> {
    use binlog_format::events::Event;
    use binlog_format::file::EventStream;
    use storage::Storage;
    let index = String::from_utf8(storage.read_all(&binlog_dir.join("binlog.index")).unwrap()).unwrap();
    let mut ids = Vec::new();
    for name in index.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let name = std::path::Path::new(name).file_name().unwrap().to_owned();
        let bytes = storage.read_all(&binlog_dir.join(name)).unwrap();
        let mut stream = EventStream::new(&bytes).unwrap();
        let mut maps = std::collections::BTreeMap::new();
        while let Some(next) = stream.next_raw() {
            let (_, raw) = next.unwrap();
            match Event::decode(&raw, stream.context()).unwrap() {
                Event::TableMap(map) => {
                    maps.insert(map.table_id, map);
                }
                Event::WriteRows(rows) => {
                    for change in rows.decode_rows(&maps[&rows.table_id]).unwrap() {
                        if let binlog_format::RowChange::Write(row) = change {
                            if let Value::Int(id) = row[0] {
                                ids.push(id);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    ids
}

#[test]
fn ordered_commits_share_groups_and_keep_their_order_in_the_binlog() {
    let storage = SimStorage::new();
    // Each fdatasync takes a while, as on a disk: groups form behind it.
    storage.set_sync_delay("", Duration::from_millis(2));
    let dir = std::path::Path::new("/data");
    let storage_dyn: Arc<dyn storage::Storage> = Arc::new(storage.clone());
    let db = Arc::new(Database::open(config(dir, storage_dyn.clone())).unwrap().0);
    create_schema(&db).unwrap();

    let at_return = run(&db, false);
    let when_ordered = run(&db, true);
    eprintln!("redo fsyncs for {COMMITS} ordered commits: {at_return} passing the turn at return, {when_ordered} when ordered");
    // At the return every commit pays its own redo sync.
    assert!(at_return >= COMMITS * 9 / 10, "turn passed at return: {at_return} redo fsyncs for {COMMITS} commits");
    assert!(
        when_ordered <= COMMITS * 3 / 4,
        "turn passed when ordered: {when_ordered} redo fsyncs for {COMMITS} commits (at return: {at_return})"
    );

    // The binlog holds the inserts in turn order.
    let order = inserted_ids_in_binlog_order(&storage, &dir.join("binlog"));
    let early: Vec<i64> = order.iter().copied().filter(|id| (1_000..11_000).contains(id)).collect();
    let late: Vec<i64> = order.iter().copied().filter(|id| *id >= 11_000).collect();
    assert_eq!(late, (0..COMMITS as i64).map(|n| 11_000 + n).collect::<Vec<_>>(), "turn passed at return: binlog order");
    assert_eq!(early, (0..COMMITS as i64).map(|n| 1_000 + n).collect::<Vec<_>>(), "turn passed when ordered: binlog order");

    // A power cut now: every acknowledged commit is there after recovery.
    drop(db);
    let image = storage.crash_image(None);
    let image_dyn: Arc<dyn storage::Storage> = Arc::new(image.clone());
    let db = Database::open(config(dir, image_dyn)).unwrap().0;
    let ids: Vec<String> = engine_tables(&db)[&format!("{DB}.accounts")].keys().cloned().collect();
    assert_eq!(ids.len(), 2 * COMMITS as usize, "rows after recovery: {}", ids.len());
}
