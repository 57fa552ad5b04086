//! Prepare and commit: the engine's side of two-phase commit.
//!
//! ```text
//! Transaction ──prepare(xid)──► PreparedTransaction ──commit(gtid)──► visible
//!      │         log_prepare         │      log_commit + one registry step
//!      └─rollback                    └─rollback (log_rollback)
//! ```
//!
//! Every logical check (duplicates, memory, locks) happens when a row is
//! written, so after `prepare` nothing but a redo failure can stop the
//! commit. Commit logs the commit record and makes the transaction visible
//! under the registry's write lock, in one step that also adds the GTID to
//! the executed set: a reader (or a checkpoint) sees the data and the GTID
//! together or neither. It then stamps the versions, releases the locks
//! and queues the keys for purge, each in bounded batches.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use binlog_format::Gtid;

use crate::change::RowChange;
use crate::error::{EngineError, Result};
use crate::purge::PurgeEntry;
use crate::purge_worker::Leftovers;
use crate::redo::{Lsn, Xid};
use crate::registry::{TrxId, TrxState};
use crate::transaction::{Status, Transaction, Undo};

/// Purge work a commit earns per key it queued for purge, on top of a
/// fixed amount (see `purge.rs` for who does it): more than it queues, so
/// commits work off a backlog a long read view held back.
const PURGE_KEYS_PER_QUEUED_KEY: usize = 2;
const PURGE_KEYS_PER_COMMIT: usize = 16;
/// Versions stamped under one hold of a table's write lock: stamping
/// 167,000 versions in one hold took ~140 ms.
pub(crate) const STAMP_BATCH_KEYS: usize = 1024;
/// A commit that wrote at least this many versions leaves its change and
/// undo lists and its lock set to the background thread to free
/// (`purge_worker.rs`).
const FREE_LATER_MIN_VERSIONS: usize = 4096;
/// A commit that wrote at least this many versions logs its finish's times.
const LARGE_FINISH_LOG_VERSIONS: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitOutcome {
    /// Position in the engine's commit order; `None` for a read-only
    /// transaction committed without a GTID (nothing became visible).
    pub commit_seq: Option<u64>,
    /// LSN of the commit record, when one was logged. The engine does not
    /// wait for it to be durable: a one-phase commit that must survive a
    /// crash waits for this LSN before answering the client (with the
    /// binlog, the prepare record and the binlog already make it durable).
    pub commit_lsn: Option<Lsn>,
}

/// A transaction whose changes are frozen and logged, waiting for the
/// binlog's verdict.
#[derive(Debug)]
pub struct PreparedTransaction {
    trx: Transaction,
    xid: Option<Xid>,
    prepare_lsn: Lsn,
}

/// A committed transaction (visible, its GTID executed) whose versions
/// are not yet stamped nor its locks released: [`VisibleCommit::finish`]
/// does that, and so does dropping it.
#[derive(Debug)]
pub struct VisibleCommit {
    trx: Transaction,
    seq: u64,
    commit_lsn: Lsn,
}

impl VisibleCommit {
    /// LSN of the commit record.
    pub fn commit_lsn(&self) -> Lsn {
        self.commit_lsn
    }

    pub fn finish(mut self) -> CommitOutcome {
        self.trx.finish_commit(self.seq);
        CommitOutcome { commit_seq: Some(self.seq), commit_lsn: Some(self.commit_lsn) }
    }
}

impl Drop for VisibleCommit {
    fn drop(&mut self) {
        if self.trx.status == Status::Committing {
            self.trx.finish_commit(self.seq);
        }
    }
}

/// A commit whose redo record could not be written. The transaction is
/// still prepared: retry, or roll back if the binlog does not have it.
#[derive(Debug)]
pub struct CommitError {
    pub error: EngineError,
    pub transaction: Box<PreparedTransaction>,
}

impl std::fmt::Display for CommitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for CommitError {}

impl Transaction {
    /// Logs the changes with `xid` and freezes them. A redo failure rolls
    /// the transaction back.
    pub fn prepare(mut self, xid: Option<Xid>) -> Result<PreparedTransaction> {
        self.ensure_active()?;
        {
            // The LSN before log_prepare bounds the prepare record's from
            // below; recorded under the registry lock so a checkpoint sees
            // either this entry or an LSN no later than the record's.
            let mut commits = self.shared.commits.write();
            let redo_lsn_lower_bound = match commits.states.get(&self.id) {
                // Its first record written ahead is the oldest it needs.
                Some(TrxState::LoggedAhead { redo_lsn_lower_bound }) => *redo_lsn_lower_bound,
                _ => self.shared.redo.current_lsn(),
            };
            commits.states.insert(self.id, TrxState::Prepared { redo_lsn_lower_bound });
        }
        self.status = Status::Prepared;
        match self.shared.redo.log_prepare(self.id, xid, &self.changes[self.logged_ahead..], self.applier_slot.as_ref()) {
            Ok(prepare_lsn) => Ok(PreparedTransaction { trx: self, xid, prepare_lsn }),
            Err(error) => {
                // The record may or may not be in the log: log_rollback
                // settles it.
                self.rollback();
                Err(error)
            }
        }
    }

    /// Writes the changes made since the last call to redo ahead of the
    /// prepare (see [`crate::RedoSink::log_changes_ahead`]); call it between
    /// statements. From then on a checkpoint keeps redo from the first
    /// record written ahead, and [`Transaction::rollback_to_savepoint`]
    /// refuses savepoints before the changes written. On an error the
    /// whole transaction is rolled back: part of its changes may be in redo.
    pub fn log_changes_ahead(&mut self) -> Result<()> {
        self.ensure_active()?;
        if self.logged_ahead == self.changes.len() {
            return Ok(());
        }
        if self.logged_ahead == 0 {
            // Registered before the first record, as prepare does, so a
            // checkpoint sees the entry or an LSN no later than the record's.
            let mut commits = self.shared.commits.write();
            let redo_lsn_lower_bound = self.shared.redo.current_lsn();
            commits.states.insert(self.id, TrxState::LoggedAhead { redo_lsn_lower_bound });
        }
        match self.shared.redo.log_changes_ahead(self.id, &self.changes[self.logged_ahead..]) {
            Ok(true) => {
                self.logged_ahead = self.changes.len();
                Ok(())
            }
            Ok(false) => {
                if self.logged_ahead == 0 {
                    self.shared.commits.write().states.remove(&self.id);
                }
                Ok(())
            }
            Err(error) => {
                // Keeps the registry entry until release (logged_ahead > 0).
                self.logged_ahead = self.logged_ahead.max(1);
                self.rollback_all();
                self.status = Status::Aborted;
                Err(error)
            }
        }
    }

    /// One-phase commit: prepare (without XID) and commit. A read-only
    /// transaction without GTID or applier slot logs nothing.
    pub fn commit(mut self, gtid: Option<Gtid>) -> Result<CommitOutcome> {
        self.ensure_active()?;
        if self.changes.is_empty() && gtid.is_none() && self.applier_slot.is_none() {
            self.release_resources();
            self.status = Status::Finished;
            return Ok(CommitOutcome { commit_seq: None, commit_lsn: None });
        }
        self.prepare(None)?.commit(gtid).map_err(|failed| {
            failed.transaction.rollback();
            failed.error
        })
    }
}

impl PreparedTransaction {
    pub fn id(&self) -> TrxId {
        self.trx.id
    }

    pub fn xid(&self) -> Option<Xid> {
        self.xid
    }

    pub fn prepare_lsn(&self) -> Lsn {
        self.prepare_lsn
    }

    pub fn changes(&self) -> &[RowChange] {
        &self.trx.changes
    }

    /// Makes the transaction visible, with `gtid` added to the executed set
    /// in the same step, then stamps its versions and releases its locks.
    pub fn commit(self, gtid: Option<Gtid>) -> Result<CommitOutcome, CommitError> {
        Ok(self.commit_visible(gtid)?.finish())
    }

    /// The first half of [`PreparedTransaction::commit`]: the commit record
    /// and visibility (with `gtid`), one short step under the registry
    /// lock. The rest (stamping every version, queueing purge, releasing
    /// row locks; time proportional to the rows written) is
    /// [`VisibleCommit::finish`], which a caller holding a lock others
    /// wait for (the binlog's commit stage, the rotation lock) runs after
    /// letting go of it.
    pub fn commit_visible(self, gtid: Option<Gtid>) -> Result<VisibleCommit, CommitError> {
        let shared = Arc::clone(&self.trx.shared);
        let made_visible = {
            let mut commits = shared.commits.write();
            // Logged under the registry lock: a checkpoint reads its start
            // LSN under the same lock, so every commit record before that
            // LSN belongs to a commit the checkpoint's data includes.
            shared.redo.log_commit(self.trx.id, gtid).map(|commit_lsn| {
                commits.last_commit_seq += 1;
                let seq = commits.last_commit_seq;
                commits.states.insert(self.trx.id, TrxState::Committed { seq });
                if let Some(gtid) = gtid {
                    commits.executed_gtids.add(gtid);
                }
                if let Some(slot) = &self.trx.applier_slot {
                    commits.applier_slots.insert(slot.slot, slot.bytes.clone());
                }
                (seq, commit_lsn)
            })
        };
        match made_visible {
            Ok((seq, commit_lsn)) => {
                let PreparedTransaction { mut trx, .. } = self;
                trx.status = Status::Committing;
                Ok(VisibleCommit { trx, seq, commit_lsn })
            }
            Err(error) => Err(CommitError { error, transaction: Box::new(self) }),
        }
    }

    pub fn rollback(self) {
        self.trx.rollback();
    }
}

impl Transaction {
    /// After the registry step: stamps the versions (so readers stop
    /// asking the registry), queues them for purge, then drops the registry
    /// entry and releases the locks — in that order, since a reader that
    /// finds an unstamped version must still find the entry. Every step
    /// lets go of the lock it needs (a table's, the lock table's) after a
    /// bounded batch, and purge past a bound is left to the background
    /// thread, so a transaction that wrote hundreds of thousands of rows
    /// holds nothing others wait for longer than one batch. A large
    /// transaction's change and undo lists and lock set are freed by that
    /// thread too.
    pub(crate) fn finish_commit(&mut self, seq: u64) {
        let started = Instant::now();
        let undo = std::mem::take(&mut self.undo);
        let (purge_entries, stamp_lock_holds) = stamp_all(&undo, self.id, seq);
        let written_versions = undo.len();
        let queued_keys = purge_entries.len();
        self.shared.purge.push_all(purge_entries);
        let stamped = Instant::now();
        let row_locks = self.locks.len();
        let locks = self.release_resources();
        self.status = Status::Finished;
        let released = Instant::now();
        self.shared.purge_after_commit(PURGE_KEYS_PER_COMMIT + PURGE_KEYS_PER_QUEUED_KEY * queued_keys);
        if written_versions >= LARGE_FINISH_LOG_VERSIONS {
            let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1e3;
            tracing::info!(
                trx = self.id,
                written_versions,
                queued_keys,
                row_locks,
                stamp_ms = ms(started, stamped),
                stamp_lock_holds,
                release_ms = ms(stamped, released),
                purge_inline_ms = ms(released, Instant::now()),
                "large commit finished (stamped, locks released, purge handed to the background)"
            );
        }
        if written_versions >= FREE_LATER_MIN_VERSIONS {
            let leftovers = Leftovers::new(std::mem::take(&mut self.changes), undo, locks);
            // Refused (too many waiting): dropped here.
            let _ = self.shared.purge_worker.free_later(leftovers);
        }
    }
}

/// Gives every version in `undo` (written by `writer`) the commit number
/// `seq`, holding each table's read lock for at most
/// [`STAMP_BATCH_KEYS`] versions at a time; returns one purge entry per
/// distinct key purge may have something to do at (a bulk insert of new
/// rows queues none) and how many times it took a table lock.
fn stamp_all(undo: &[Undo], writer: TrxId, seq: u64) -> (Vec<PurgeEntry>, usize) {
    let mut purge_entries = Vec::new();
    let mut queued = HashSet::new();
    let mut lock_holds = 0;
    let mut index = 0;
    while index < undo.len() {
        // One hold of the table's read lock (stamps are atomic stores, see
        // `mvcc.rs`) per run of versions in the same table, cut into
        // batches: writers of other rows of a table a large transaction
        // wrote get in between.
        let table = &undo[index].table;
        let batch_end = (index + STAMP_BATCH_KEYS).min(undo.len());
        let data = table.data.read();
        lock_holds += 1;
        while index < batch_end && Arc::ptr_eq(&undo[index].table, table) {
            let key = &undo[index].key;
            if data.stamp(key, writer, seq) && queued.insert((table.id, key.clone())) {
                purge_entries.push(PurgeEntry { seq, table: Arc::downgrade(table), key: key.clone() });
            }
            index += 1;
        }
        // A writer waiting for the table gets it before this thread's next
        // batch (see `TableLock`).
        drop(data);
    }
    (purge_entries, lock_holds)
}

#[cfg(test)]
mod tests {
    use binlog_format::{ColumnType, Value};

    use super::*;
    use crate::catalog::{ColumnDef, TableSpec};
    use crate::{Engine, EngineConfig};

    fn engine_with_table() -> (Engine, crate::TableId) {
        let engine = Engine::new(EngineConfig::default());
        engine.create_database("d").unwrap();
        let spec = TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("id", ColumnType::LongLong), ColumnDef::new("v", ColumnType::Long)],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        let id = engine.create_table(&spec).unwrap().id;
        (engine, id)
    }

    #[test]
    fn stamping_takes_the_table_lock_once_per_batch_and_queues_only_keys_with_history() {
        let (engine, table) = engine_with_table();
        let rows = 2 * STAMP_BATCH_KEYS + 1;
        let mut trx = engine.begin();
        for id in 0..rows as i64 {
            trx.insert(table, vec![Value::Int(id), Value::Int(0)]).unwrap();
        }
        // New rows: stamped in three holds, nothing for purge to do. (The
        // stamps make the rows look committed; the undo list is dropped
        // so that the end of the transaction leaves them.)
        let (entries, holds) = stamp_all(&trx.undo, trx.id, 5);
        assert_eq!(holds, 3);
        assert!(entries.is_empty());
        trx.undo.clear();
        drop(trx);

        let mut trx = engine.begin();
        for id in 0..rows as i64 {
            trx.update_by_pk(table, &[Value::Int(id)], vec![Value::Int(id), Value::Int(1)]).unwrap();
        }
        // Updated rows have an old version: one entry per key.
        let (entries, holds) = stamp_all(&trx.undo, trx.id, 6);
        assert_eq!(holds, 3);
        assert_eq!(entries.len(), rows);
        trx.undo.clear();
    }
}
