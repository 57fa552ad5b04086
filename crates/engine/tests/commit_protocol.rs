//! Prepare / commit / rollback as the binlog's two-phase commit drives
//! them, the redo calls they make, and the executed GTID set.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use binlog_format::{Gtid, GtidSet, Uuid};
use engine::{
    ApplierSlot, DdlRecord, Engine, EngineConfig, EngineError, IsolationLevel, Lsn, MemoryRedo, RedoEntry, RedoSink, RowChange, TrxId, Xid,
};
use support::*;

fn gtid(gno: u64) -> Gtid {
    Gtid::new(Uuid([0xab; 16]), gno)
}

fn engine_with(redo: Arc<dyn RedoSink>) -> Engine {
    let engine = Engine::with_redo(EngineConfig::default(), redo);
    engine.create_database("d").unwrap();
    engine
}

#[test]
fn prepare_then_commit_logs_both_and_publishes_data_with_the_gtid() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = engine_with(redo.clone());
    let table = users(&engine).id;
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    let trx_id = trx.id();
    let prepared = trx.prepare(Some(77)).unwrap();
    assert_eq!(prepared.xid(), Some(77));
    assert_eq!(prepared.changes().len(), 1);
    // Prepared is not committed: nobody sees it, and the GTID is not in yet.
    assert!(committed_rows(&engine, table).is_empty());
    let outcome = prepared.commit(Some(gtid(1))).unwrap();
    assert!(outcome.commit_seq.is_some());
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 1)]);
    let mut expected = GtidSet::new();
    expected.add(gtid(1));
    assert_eq!(engine.executed_gtids(), expected);
    let entries = redo.entries();
    let tail = &entries[entries.len() - 2..];
    assert!(
        matches!(&tail[0], RedoEntry::Prepare { trx_id: id, xid: Some(77), changes, slot: None } if *id == trx_id && changes.len() == 1)
    );
    assert_eq!(tail[1], RedoEntry::Commit { trx_id, gtid: Some(gtid(1)) });
    assert!(entries.iter().any(|entry| matches!(entry, RedoEntry::Ddl(record, _) if matches!(**record, DdlRecord::CreateTable { .. }))));
}

#[test]
fn rolling_back_a_prepared_transaction_logs_it_and_frees_its_locks() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = engine_with(redo.clone());
    let table = users(&engine).id;
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    let trx_id = trx.id();
    trx.prepare(Some(5)).unwrap().rollback();
    assert_eq!(redo.entries().last(), Some(&RedoEntry::Rollback { trx_id }));
    let mut next = engine.begin();
    next.insert(table, user(1, "a@x", 2)).unwrap();
    next.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 2)]);
    // Dropping a prepared transaction rolls it back too.
    let mut dropped = engine.begin();
    dropped.delete_by_pk(table, &[int(1)]).unwrap();
    drop(dropped.prepare(Some(6)).unwrap());
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 2)]);
}

#[test]
fn read_only_commits_log_nothing_and_empty_gtid_commits_still_count() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = engine_with(redo.clone());
    let table = users(&engine).id;
    let before = redo.entries().len();
    let trx = engine.begin_with(IsolationLevel::ReadCommitted);
    assert!(all_rows(&trx, table).is_empty());
    assert!(trx.is_read_only());
    assert_eq!(trx.commit(None).unwrap().commit_seq, None);
    assert_eq!(redo.entries().len(), before);
    // A replica applying an empty transaction still records its GTID.
    engine.begin().commit(Some(gtid(9))).unwrap();
    assert!(engine.executed_gtids().contains(&gtid(9)));
}

/// A redo sink whose writes fail on demand.
#[derive(Default)]
struct FlakyRedo {
    failing: AtomicBool,
}

impl RedoSink for FlakyRedo {
    fn log_prepare(&self, _: TrxId, _: Option<Xid>, _: &[RowChange], _: Option<&ApplierSlot>) -> engine::Result<Lsn> {
        self.outcome()
    }
    fn log_commit(&self, _: TrxId, _: Option<Gtid>) -> engine::Result<Lsn> {
        self.outcome()
    }
    fn log_rollback(&self, _: TrxId) {}
    fn log_ddl(&self, _: &DdlRecord, _: Option<&ApplierSlot>) -> engine::Result<Lsn> {
        self.outcome()
    }
    fn current_lsn(&self) -> Lsn {
        0
    }
}

impl FlakyRedo {
    fn outcome(&self) -> engine::Result<Lsn> {
        if self.failing.load(Ordering::Relaxed) {
            Err(EngineError::Storage { errno: 5, reason: "Input/output error".into() })
        } else {
            Ok(1)
        }
    }
}

#[test]
fn redo_failures_roll_back_at_prepare_and_hand_the_transaction_back_at_commit() {
    let redo = Arc::new(FlakyRedo::default());
    let engine = engine_with(redo.clone());
    let table = users(&engine).id;
    redo.failing.store(true, Ordering::Relaxed);
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    assert_eq!(trx.prepare(Some(1)).unwrap_err().mysql_code(), 1030);
    assert!(engine.create_database("e").is_err());
    assert!(!engine.databases().contains(&"e".to_string()));

    redo.failing.store(false, Ordering::Relaxed);
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    let prepared = trx.prepare(Some(2)).unwrap();
    redo.failing.store(true, Ordering::Relaxed);
    let failed = prepared.commit(Some(gtid(1))).unwrap_err();
    assert_eq!(failed.error.mysql_code(), 1030);
    assert!(committed_rows(&engine, table).is_empty());
    assert!(engine.executed_gtids().is_empty());
    redo.failing.store(false, Ordering::Relaxed);
    failed.transaction.commit(Some(gtid(1))).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 1)]);
    assert!(engine.executed_gtids().contains(&gtid(1)));
}

/// The binlog's commit stage runs only the visible step; the session
/// stamps and releases afterwards. In between, readers see the commit and
/// its GTID, and its row locks still hold.
#[test]
fn commit_visible_publishes_at_once_and_finish_releases_the_locks() {
    let engine = engine_with(Arc::new(MemoryRedo::default()));
    let table = users(&engine).id;
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    let visible = trx.prepare(Some(9)).unwrap().commit_visible(Some(gtid(1))).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 1)]);
    assert!(engine.executed_gtids().contains(&gtid(1)));

    engine.set_lock_wait_timeout(std::time::Duration::from_millis(100));
    let mut writer = engine.begin();
    let error = writer.update_by_pk(table, &[int(1)], user(1, "a@x", 2)).unwrap_err();
    assert_eq!(error.mysql_code(), 1205, "the row lock holds until finish");

    let outcome = visible.finish();
    assert!(outcome.commit_seq.is_some());
    writer.update_by_pk(table, &[int(1)], user(1, "a@x", 2)).unwrap();
    writer.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 2)]);

    // Dropping a visible commit finishes it too.
    let mut other = engine.begin();
    other.insert(table, user(2, "b@x", 1)).unwrap();
    drop(other.prepare(None).unwrap().commit_visible(None).unwrap());
    let mut again = engine.begin();
    again.update_by_pk(table, &[int(2)], user(2, "b@x", 5)).unwrap();
    again.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 2), user(2, "b@x", 5)]);
}
