//! A transaction: its lifecycle, savepoints and point reads. Writes are in
//! [`crate::write`], scans in [`crate::scan`], prepare and commit in
//! [`crate::commit`].
//!
//! Visibility: REPEATABLE READ reads as of one view taken at the first
//! read; READ COMMITTED takes a new view for every read (a point read, or
//! a whole scan). Either way a transaction sees its own writes and never
//! another's uncommitted ones. Writes act on the latest committed row
//! whatever the view (InnoDB's "current read"), under row locks.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use binlog_format::Value;

use crate::catalog::{TableId, CLUSTERED_INDEX_ID};
use crate::change::RowChange;
use crate::engine::Shared;
use crate::error::{EngineError, Result};
use crate::key::RowKey;
use crate::locks::LockKey;
use crate::mvcc::{current, live_row, visible, CommitLookup, ReadView};
use crate::redo::ApplierSlot;
use crate::registry::TrxId;
use crate::row::Row;
use crate::scan::ScanSpec;
use crate::table::Table;
use crate::views::ViewGuard;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    ReadCommitted,
    RepeatableRead,
}

/// A point to roll back to. Rolling back to a savepoint makes every
/// savepoint taken after it meaningless (SQL drops them; so must callers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Savepoint {
    trx: TrxId,
    changes: usize,
    undo: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Active,
    /// Changes frozen and logged; only commit or rollback remain.
    Prepared,
    /// Visible and committed; versions not yet stamped, locks held
    /// (`VisibleCommit`).
    Committing,
    /// Rolled back by the engine (deadlock victim); calls fail until dropped.
    Aborted,
    Finished,
}

/// One version this transaction pushed, for rollback and for stamping.
pub(crate) struct Undo {
    pub(crate) table: Arc<Table>,
    pub(crate) key: Vec<u8>,
}

pub struct Transaction {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: TrxId,
    isolation: IsolationLevel,
    pub(crate) status: Status,
    /// The REPEATABLE READ view, opened at the first read.
    snapshot: OnceLock<ViewGuard>,
    pub(crate) changes: Vec<RowChange>,
    pub(crate) undo: Vec<Undo>,
    pub(crate) locks: HashSet<LockKey>,
    /// Tables this transaction holds a writer registration on.
    pub(crate) written_tables: HashMap<TableId, Arc<Table>>,
    lock_wait_timeout: Option<Duration>,
    /// The session's `lock_wait_timeout`, for a write that finds DDL
    /// running on its table; `None` is MySQL's default of one year.
    metadata_lock_wait_timeout: Option<Duration>,
    /// `changes[..logged_ahead]` are in redo already, written ahead of the
    /// prepare by [`Transaction::log_changes_ahead`].
    pub(crate) logged_ahead: usize,
    /// Set once a row was inserted without a row lock (an implicit lock).
    pub(crate) inserted_without_lock: bool,
    /// Committed with the changes (see [`ApplierSlot`]).
    pub(crate) applier_slot: Option<ApplierSlot>,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("id", &self.id)
            .field("status", &self.status)
            .field("changes", &self.changes.len())
            .finish_non_exhaustive()
    }
}

impl Transaction {
    pub(crate) fn new(shared: Arc<Shared>, isolation: IsolationLevel) -> Transaction {
        let id = shared.new_trx_id();
        Transaction {
            shared,
            id,
            isolation,
            status: Status::Active,
            snapshot: OnceLock::new(),
            changes: Vec::new(),
            undo: Vec::new(),
            locks: HashSet::new(),
            written_tables: HashMap::new(),
            lock_wait_timeout: None,
            metadata_lock_wait_timeout: None,
            logged_ahead: 0,
            inserted_without_lock: false,
            applier_slot: None,
        }
    }

    /// Commits `slot` with this transaction: its prepare record carries
    /// it, and once the transaction is visible so is the slot's value
    /// ([`crate::Engine::applier_slots`]). The last call wins.
    pub fn set_applier_slot(&mut self, slot: ApplierSlot) {
        self.applier_slot = Some(slot);
    }

    pub fn id(&self) -> TrxId {
        self.id
    }

    pub fn isolation(&self) -> IsolationLevel {
        self.isolation
    }

    /// Every change so far, in order, with full before and after images.
    pub fn changes(&self) -> &[RowChange] {
        &self.changes
    }

    /// True when nothing was written: such a transaction needs no prepare
    /// record and no binlog events.
    pub fn is_read_only(&self) -> bool {
        self.changes.is_empty()
    }

    /// False once the engine rolled the transaction back (a deadlock).
    /// Opens the REPEATABLE READ view now instead of at the first read
    /// (START TRANSACTION WITH CONSISTENT SNAPSHOT); nothing under READ
    /// COMMITTED, whose reads each take their own.
    pub fn open_view(&self) {
        let _ = self.repeatable_view_seq();
    }

    pub fn is_active(&self) -> bool {
        self.status == Status::Active
    }

    /// The session's `innodb_lock_wait_timeout`; `None` follows the global.
    pub fn set_lock_wait_timeout(&mut self, timeout: Option<Duration>) {
        self.lock_wait_timeout = timeout;
    }

    /// The session's `lock_wait_timeout`: how long a write waits for DDL
    /// on its table. `None` is MySQL's default, one year.
    pub fn set_metadata_lock_wait_timeout(&mut self, timeout: Option<Duration>) {
        self.metadata_lock_wait_timeout = timeout;
    }

    pub fn savepoint(&self) -> Savepoint {
        Savepoint { trx: self.id, changes: self.changes.len(), undo: self.undo.len() }
    }

    /// Undoes every change made after `savepoint`. Row locks taken since
    /// stay held until the transaction ends, as in InnoDB.
    pub fn rollback_to_savepoint(&mut self, savepoint: Savepoint) -> Result<()> {
        self.ensure_active()?;
        if savepoint.trx != self.id || savepoint.undo > self.undo.len() || savepoint.changes > self.changes.len() {
            return Err(EngineError::Internal("savepoint does not exist".to_string()));
        }
        if savepoint.changes < self.logged_ahead {
            // Redo holds the changes past it: only a whole rollback undoes them.
            return Err(EngineError::Internal("savepoint precedes changes already written to redo".to_string()));
        }
        self.undo_to(savepoint.undo);
        self.changes.truncate(savepoint.changes);
        Ok(())
    }

    pub fn rollback(mut self) {
        self.rollback_all();
        self.status = Status::Finished;
    }

    /// The clustered key of `table`'s row with `primary_key` values (what
    /// [`Transaction::get_for_update`] takes).
    pub fn primary_key(&self, table: TableId, primary_key: &[Value]) -> Result<RowKey> {
        Ok(RowKey::from_values(&self.shared.table(table)?.def(), primary_key))
    }

    /// The row with primary key `primary_key`, as this transaction sees it.
    pub fn get(&self, table: TableId, primary_key: &[Value]) -> Result<Option<Row>> {
        let key = RowKey::from_values(&self.shared.table(table)?.def(), primary_key);
        self.get_by_key(table, &key)
    }

    pub fn get_by_key(&self, table: TableId, key: &RowKey) -> Result<Option<Row>> {
        self.ensure_active()?;
        let repeatable_view = self.repeatable_view_seq();
        let table = self.shared.table(table)?;
        let data = table.data.read();
        // Without a registered view, the sequence number must be read under
        // the table lock: purge needs that lock, so nothing this view sees
        // can go before the read is done.
        let seq = repeatable_view.unwrap_or_else(|| self.shared.commits.read().last_commit_seq);
        let view = ReadView { seq, reader: self.id };
        let mut lookup = CommitLookup::new(&self.shared.commits);
        let chain = data.rows.get(&key.0).map(Vec::as_slice).unwrap_or_default();
        Ok(live_row(visible(chain, &view, &mut lookup)).map(|row| (**row).clone()))
    }

    /// The row whose unique index `index` has `values`. With NULLs among
    /// them several rows may match; this returns the first.
    pub fn get_by_unique(&self, table: TableId, index: &str, values: &[Value]) -> Result<Option<(RowKey, Row)>> {
        let spec = ScanSpec::index(index).equal(values.to_vec());
        Ok(self.scan(table, &spec)?.next())
    }

    pub(crate) fn ensure_active(&self) -> Result<()> {
        match self.status {
            Status::Active => Ok(()),
            Status::Aborted => Err(EngineError::Internal("the transaction was rolled back after a deadlock".to_string())),
            Status::Prepared | Status::Committing | Status::Finished => Err(EngineError::Internal("the transaction has ended".to_string())),
        }
    }

    pub(crate) fn lock_wait_timeout(&self) -> Duration {
        self.lock_wait_timeout.unwrap_or_else(|| self.shared.variables.lock_wait_timeout())
    }

    /// The REPEATABLE READ view's sequence number (opening it on first
    /// use), or `None` under READ COMMITTED.
    pub(crate) fn repeatable_view_seq(&self) -> Option<u64> {
        (self.isolation == IsolationLevel::RepeatableRead)
            .then(|| self.snapshot.get_or_init(|| self.shared.views.open(&self.shared.commits)).seq)
    }

    /// `table`, registered for writing (waits while DDL runs on it).
    pub(crate) fn writable_table(&mut self, id: TableId) -> Result<Arc<Table>> {
        if let Some(table) = self.written_tables.get(&id) {
            return Ok(Arc::clone(table));
        }
        let table = self.shared.table(id)?;
        table.mdl.enter_writer(self.metadata_lock_wait_timeout.unwrap_or(crate::config::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT))?;
        if table.dropped.load(std::sync::atomic::Ordering::Acquire) {
            table.mdl.exit_writer();
            // Waited behind DDL that dropped the table or, when its name
            // now holds another table, rebuilt it (ALTER TABLE's copy).
            let def = table.def();
            if self.shared.catalog.read().table_id(&def.database, &def.name).is_ok() {
                return Err(EngineError::TableDefinitionChanged);
            }
            return Err(EngineError::NoSuchTable { database: def.database.clone(), table: def.name.clone() });
        }
        self.written_tables.insert(id, Arc::clone(&table));
        Ok(table)
    }

    /// Takes a row lock. A deadlock rolls the whole transaction back first.
    pub(crate) fn lock(&mut self, key: LockKey) -> Result<()> {
        if self.locks.contains(&key) {
            return Ok(());
        }
        match self.shared.locks.acquire(self.id, &key, self.lock_wait_timeout()) {
            Ok(()) => {
                self.locks.insert(key);
                Ok(())
            }
            Err(EngineError::Deadlock) => {
                self.rollback_all();
                self.status = Status::Aborted;
                Err(EngineError::Deadlock)
            }
            Err(error) => Err(error),
        }
    }

    /// Takes the row lock on the clustered `key` of `table`. A row another
    /// transaction inserted without a lock (its newest version is that
    /// writer's, unstamped: an implicit lock) first gets an explicit lock
    /// for that writer, so this one waits for it. The check and a lock
    /// taken without waiting happen under the table's lock, which an
    /// insert without a lock holds (exclusively) while it checks that no
    /// one has the key locked: one of the two sees the other. The writer
    /// may stamp meanwhile (stamping needs only the table's read lock):
    /// the conversion checks again under the lock table's mutex.
    pub(crate) fn lock_row(&mut self, table: &Table, key: &[u8]) -> Result<()> {
        let lock_key = LockKey { table: table.id, index: CLUSTERED_INDEX_ID, key: key.to_vec() };
        if self.locks.contains(&lock_key) {
            return Ok(());
        }
        {
            let data = table.data.read();
            if let Some(newest) = data.rows.get(key).and_then(|chain| chain.last()) {
                if newest.is_unstamped() && newest.writer != self.id {
                    self.shared.locks.lock_for_implicit_owner(newest.writer, &lock_key, || newest.is_unstamped());
                }
            }
            if self.shared.locks.try_acquire(self.id, &lock_key) {
                self.locks.insert(lock_key);
                return Ok(());
            }
        }
        self.lock(lock_key)
    }

    /// Takes the row lock on the clustered `key` of `table` if no other
    /// transaction holds it, explicitly or implicitly (its unstamped
    /// insert or change): false, without waiting, when one does.
    pub(crate) fn try_lock_row(&mut self, table: &Table, key: &[u8]) -> bool {
        let lock_key = LockKey { table: table.id, index: CLUSTERED_INDEX_ID, key: key.to_vec() };
        if self.locks.contains(&lock_key) {
            return true;
        }
        let data = table.data.read();
        let implicitly_held =
            data.rows.get(key).and_then(|chain| chain.last()).is_some_and(|newest| newest.is_unstamped() && newest.writer != self.id);
        if implicitly_held || !self.shared.locks.try_acquire(self.id, &lock_key) {
            return false;
        }
        self.locks.insert(lock_key);
        true
    }

    /// The current (latest committed, or own) row at `key`.
    pub(crate) fn current_row(&self, table: &Table, key: &[u8]) -> Option<Arc<Row>> {
        let data = table.data.read();
        let mut lookup = CommitLookup::new(&self.shared.commits);
        let chain = data.rows.get(key).map(Vec::as_slice).unwrap_or_default();
        live_row(current(chain, self.id, &mut lookup)).cloned()
    }

    pub(crate) fn undo_to(&mut self, length: usize) {
        while self.undo.len() > length {
            let entry = self.undo.pop().expect("length checked");
            entry.table.data.write().pop_version(&entry.key, self.id, &self.shared.memory);
        }
    }

    /// Undoes everything and lets go of every lock and registration.
    pub(crate) fn rollback_all(&mut self) {
        if matches!(self.status, Status::Finished | Status::Aborted) {
            return;
        }
        self.undo_to(0);
        self.changes.clear();
        if self.status == Status::Prepared {
            self.shared.redo.log_rollback(self.id);
        }
        self.release_resources();
    }

    /// Forgets the registry entry, releases row locks and writer
    /// registrations, and closes the read view. Versions must already be
    /// stamped (commit) or undone (rollback). Returns the released lock
    /// keys, for the caller to free.
    pub(crate) fn release_resources(&mut self) -> HashSet<LockKey> {
        // Only a prepared transaction, or one that wrote redo ahead, has a
        // registry entry.
        if self.status == Status::Prepared || self.logged_ahead > 0 {
            self.shared.commits.write().states.remove(&self.id);
        }
        let locks = std::mem::take(&mut self.locks);
        // A transaction that inserted rows without a lock may have been
        // given explicit locks on them by others (`lock_row`).
        if !locks.is_empty() || std::mem::take(&mut self.inserted_without_lock) {
            self.shared.locks.release_all(self.id, &locks);
        }
        for (_, table) in self.written_tables.drain() {
            table.mdl.exit_writer();
        }
        self.snapshot = OnceLock::new();
        locks
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        match self.status {
            Status::Active => self.rollback_all(),
            Status::Prepared => {
                tracing::warn!(trx = self.id, "a prepared transaction was dropped: rolling it back");
                self.rollback_all();
            }
            // VisibleCommit finishes it before this runs.
            Status::Aborted | Status::Finished | Status::Committing => {}
        }
        self.status = Status::Finished;
    }
}
