//! The engine handle: what every session shares.
//!
//! Lock order (a thread holding one may take the ones after it, never the
//! ones before): a table's metadata lock → the catalog → a table's data →
//! the commit registry. The view registry's mutex comes before the
//! commit registry too. Row locks are only waited for while holding none
//! of these.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use binlog_format::GtidSet;
use parking_lot::RwLock;

use crate::catalog::{Catalog, TableDef, TableId};
use crate::config::{EngineConfig, Variables};
use crate::error::{EngineError, Result};
use crate::locks::LockManager;
use crate::memory::MemoryAccount;
use crate::purge::PurgeQueue;
use crate::purge_worker::PurgeWorker;
use crate::redo::{ApplierSlot, DdlRecord, Lsn, NoRedo, RedoSink};
use crate::registry::{CommitState, TrxId};
use crate::table::Table;
use crate::transaction::{IsolationLevel, Transaction};
use crate::views::ViewRegistry;

pub(crate) struct Shared {
    pub(crate) variables: Variables,
    pub(crate) catalog: RwLock<Catalog>,
    pub(crate) commits: RwLock<CommitState>,
    pub(crate) views: Arc<ViewRegistry>,
    pub(crate) locks: LockManager,
    pub(crate) memory: MemoryAccount,
    pub(crate) purge: PurgeQueue,
    pub(crate) purge_worker: PurgeWorker,
    pub(crate) redo: Arc<dyn RedoSink>,
    /// The applier slot the next DDL record of the staging thread carries
    /// ([`Engine::stage_ddl_applier_slot`]).
    pub(crate) ddl_slot: parking_lot::Mutex<Option<(std::thread::ThreadId, ApplierSlot)>>,
    next_trx_id: AtomicU64,
}

impl Shared {
    pub(crate) fn new_trx_id(&self) -> TrxId {
        self.next_trx_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The slot staged by this thread, taken: the record being logged
    /// carries it. Another thread's stays staged.
    pub(crate) fn take_ddl_slot(&self) -> Option<ApplierSlot> {
        let mut staged = self.ddl_slot.lock();
        match &*staged {
            Some((thread, _)) if *thread == std::thread::current().id() => staged.take().map(|(_, slot)| slot),
            _ => None,
        }
    }

    /// Logs a DDL record, with this thread's staged applier slot if any,
    /// and makes the slot current. Called under the catalog's write lock,
    /// so a checkpoint (which reads the catalog and the slots under it)
    /// sees the record and the slot both before or both after its start.
    pub(crate) fn log_ddl(&self, record: &DdlRecord) -> Result<Lsn> {
        let slot = self.take_ddl_slot();
        let lsn = self.redo.log_ddl(record, slot.as_ref())?;
        if let Some(slot) = slot {
            self.commits.write().applier_slots.insert(slot.slot, slot.bytes);
        }
        Ok(lsn)
    }

    pub(crate) fn table(&self, id: TableId) -> Result<Arc<Table>> {
        self.catalog.read().table(id).cloned().ok_or_else(|| missing_table(id))
    }
}

/// 1146 for a table id that no longer exists (its name is gone with it).
pub(crate) fn missing_table(id: TableId) -> EngineError {
    EngineError::NoSuchTable { database: String::new(), table: format!("#{id}") }
}

/// A cheap-to-clone handle on one engine instance.
#[derive(Clone)]
pub struct Engine {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("memory_used_bytes", &self.memory_used_bytes()).finish_non_exhaustive()
    }
}

impl Engine {
    /// An empty engine that logs nothing (see [`NoRedo`]).
    pub fn new(config: EngineConfig) -> Engine {
        Engine::with_redo(config, Arc::new(NoRedo))
    }

    /// An empty engine that logs to `redo`.
    pub fn with_redo(config: EngineConfig, redo: Arc<dyn RedoSink>) -> Engine {
        Engine::from_parts(config, redo, Catalog::new(), CommitState::new())
    }

    pub(crate) fn from_parts(config: EngineConfig, redo: Arc<dyn RedoSink>, catalog: Catalog, commits: CommitState) -> Engine {
        Engine {
            shared: Arc::new_cyclic(|shared| Shared {
                variables: Variables::new(&config),
                catalog: RwLock::new(catalog),
                commits: RwLock::new(commits),
                views: Arc::new(ViewRegistry::default()),
                locks: LockManager::default(),
                memory: MemoryAccount::default(),
                purge: PurgeQueue::default(),
                purge_worker: PurgeWorker::start(shared.clone()),
                redo,
                ddl_slot: parking_lot::Mutex::new(None),
                next_trx_id: AtomicU64::new(1),
            }),
        }
    }

    /// Small commits leave their purge to the background thread, which
    /// [`Engine::purge_in_background`] wakes (`purge.rs`); past a bound on
    /// the queue they purge inline again. For a caller that calls it at
    /// regular moments: the cross-log group commit's leader.
    pub fn defer_purge_to_group_syncs(&self) {
        self.shared.purge.set_deferred_to_group_syncs(true);
    }

    /// Asks the background purge thread to purge every ready key (without
    /// waiting for it); when there is no thread, nothing happens and
    /// commits purge inline once the queue passes its bound.
    pub fn purge_in_background(&self) {
        self.shared.purge_worker.request();
    }

    /// Keys queued for purge (InnoDB's history list length, counted in
    /// keys): what commits wrote that old versions may still hang on.
    pub fn purge_queued_keys(&self) -> usize {
        self.shared.purge.queued_keys()
    }

    /// Starts a REPEATABLE READ transaction (MySQL's default isolation).
    pub fn begin(&self) -> Transaction {
        self.begin_with(IsolationLevel::RepeatableRead)
    }

    pub fn begin_with(&self, isolation: IsolationLevel) -> Transaction {
        Transaction::new(Arc::clone(&self.shared), isolation)
    }

    /// The id of `database`.`table`, or 1146.
    pub fn table_id(&self, database: &str, table: &str) -> Result<TableId> {
        self.shared.catalog.read().table_id(database, table)
    }

    /// The definition of `database`.`table`, or 1146.
    pub fn table(&self, database: &str, table: &str) -> Result<Arc<TableDef>> {
        let catalog = self.shared.catalog.read();
        let id = catalog.table_id(database, table)?;
        Ok(catalog.table(id).expect("catalog names only live tables").def())
    }

    /// The value AUTO_INCREMENT gives table `id` next (what
    /// INFORMATION_SCHEMA.TABLES shows), while the table exists.
    pub fn auto_increment_next(&self, id: TableId) -> Option<u64> {
        let table = self.shared.catalog.read().table(id).cloned()?;
        let next = table.data.read().auto_increment_next;
        Some(next)
    }

    /// Table `id`'s rows and estimated bytes, while it exists.
    pub fn table_size(&self, id: TableId) -> Option<crate::table::TableSize> {
        let table = self.shared.catalog.read().table(id).cloned()?;
        let size = table.data.read().size();
        Some(size)
    }

    /// The definition of table `id`, while it exists. A transaction's
    /// changes name tables by id; their tables cannot be dropped before the
    /// transaction ends (DDL waits for it).
    pub fn table_def(&self, id: TableId) -> Option<Arc<TableDef>> {
        self.shared.catalog.read().table(id).map(|table| table.def())
    }

    pub fn databases(&self) -> Vec<String> {
        self.shared.catalog.read().databases.keys().cloned().collect()
    }

    /// `database`'s default collation, or 1049.
    pub fn database_collation(&self, database: &str) -> Result<u16> {
        let catalog = self.shared.catalog.read();
        if !catalog.databases.contains_key(database) {
            return Err(EngineError::UnknownDatabase(database.to_string()));
        }
        Ok(catalog.database_collation(database))
    }

    /// Table names of `database`, sorted, or 1049.
    pub fn tables(&self, database: &str) -> Result<Vec<String>> {
        let catalog = self.shared.catalog.read();
        let tables = catalog.databases.get(database).ok_or_else(|| EngineError::UnknownDatabase(database.to_string()))?;
        Ok(tables.keys().cloned().collect())
    }

    /// GTIDs of every committed transaction, updated in the same step that
    /// makes each commit's data visible.
    pub fn executed_gtids(&self) -> GtidSet {
        self.shared.commits.read().executed_gtids.clone()
    }

    /// Hands `slot` to the next DDL record this thread logs (MySQL's
    /// atomic DDL updating `mysql.slave_worker_info` in the same
    /// data-dictionary transaction): a replica worker's applied position
    /// then commits in the DDL's own redo record. Other threads' DDL never
    /// takes it. The caller runs one DDL at a time and takes back, with
    /// [`Engine::unstage_ddl_applier_slot`], a slot no record took.
    pub fn stage_ddl_applier_slot(&self, slot: ApplierSlot) {
        *self.shared.ddl_slot.lock() = Some((std::thread::current().id(), slot));
    }

    /// The slot [`Engine::stage_ddl_applier_slot`] staged, if no DDL
    /// record took it.
    pub fn unstage_ddl_applier_slot(&self) -> Option<ApplierSlot> {
        self.shared.take_ddl_slot()
    }

    /// The latest committed bytes of every [`crate::ApplierSlot`], by slot.
    pub fn applier_slots(&self) -> std::collections::BTreeMap<u32, Vec<u8>> {
        self.shared.commits.read().applier_slots.clone()
    }

    /// Whether `gtid` is in the executed set (without copying the set).
    pub fn is_gtid_executed(&self, gtid: &binlog_format::Gtid) -> bool {
        self.shared.commits.read().executed_gtids.contains(gtid)
    }

    /// `RESET BINARY LOGS AND GTIDS`: forgets every executed GTID. The
    /// caller logs it to redo first (the database's GTID reset record) and
    /// holds off commits while it runs.
    pub fn reset_executed_gtids(&self) {
        self.shared.commits.write().executed_gtids = GtidSet::new();
    }

    /// Sequence number of the last commit; commits are numbered in the
    /// order their data became visible.
    pub fn last_commit_seq(&self) -> u64 {
        self.shared.commits.read().last_commit_seq
    }

    /// `innodb_lock_wait_timeout`.
    pub fn lock_wait_timeout(&self) -> Duration {
        self.shared.variables.lock_wait_timeout()
    }

    pub fn set_lock_wait_timeout(&self, timeout: Duration) {
        self.shared.variables.set_lock_wait_timeout(timeout);
    }

    /// `binlogd_engine_memory_limit`.
    pub fn memory_limit_bytes(&self) -> u64 {
        self.shared.variables.memory_limit_bytes()
    }

    pub fn set_memory_limit_bytes(&self, bytes: u64) {
        self.shared.variables.set_memory_limit_bytes(bytes);
    }

    /// Estimated bytes held by rows, old versions and index entries.
    pub fn memory_used_bytes(&self) -> u64 {
        self.shared.memory.used_bytes()
    }

    /// MySQL's `Innodb_row_lock_current_waits`: transactions waiting for a
    /// row lock right now.
    pub fn row_lock_current_waits(&self) -> usize {
        self.shared.locks.waiting_count()
    }

    /// Drops every row version no open read view can see any more; returns
    /// how many queued keys were examined. Commits purge as they go (and
    /// wake the background purge thread after a large one); this is for
    /// tests and tools that want it all done now.
    pub fn purge(&self) -> usize {
        let examined = self.shared.purge_pending(usize::MAX);
        // A batch the background thread took before is finished too.
        self.shared.purge_worker.wait_for_batch();
        examined
    }
}
