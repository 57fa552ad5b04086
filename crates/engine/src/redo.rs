//! The seam to the redo log. The engine calls a [`RedoSink`] at every
//! step that must survive a crash and never looks at the bytes; the redo
//! crate (or a test) decides how they are stored and synced.
//!
//! | call | when | carries |
//! |------|------|---------|
//! | `log_prepare` | [`Transaction::prepare`](crate::Transaction::prepare) (also inside a one-phase commit) | the XID, every row change, in order, and the transaction's [`ApplierSlot`], if any |
//! | `log_commit` | [`PreparedTransaction::commit`](crate::PreparedTransaction::commit), under the commit lock, just before the data becomes visible | the GTID |
//! | `log_rollback` | rollback of a prepared transaction (nothing was logged before prepare) | — |
//! | `log_ddl` | every DDL, under the catalog lock, after validation and before the change is applied | a [`DdlRecord`], and the [`ApplierSlot`] the DDL's thread staged ([`Engine::stage_ddl_applier_slot`](crate::Engine::stage_ddl_applier_slot)), if any |
//!
//! Recovery replays a committed transaction by handing its prepare
//! record's changes and its commit record's GTID to
//! [`Engine::apply_redo_transaction`](crate::Engine::apply_redo_transaction), and DDL to
//! [`Engine::apply_redo_ddl`](crate::Engine::apply_redo_ddl). [`crate::codec`]
//! turns changes and DDL records into bytes and back.

use binlog_format::Gtid;
use parking_lot::Mutex;

use crate::catalog::{IndexDef, IndexId, TableDef, TableId};
use crate::change::RowChange;
use crate::error::Result;
use crate::registry::TrxId;
use crate::row::Row;

/// A position in the redo log; only ever compared, never interpreted.
pub type Lsn = u64;
/// The XID of a transaction's Xid event in the binlog.
pub type Xid = u64;

/// A replica applier's bookkeeping that commits with the transaction it
/// describes (MySQL's `mysql.slave_worker_info` row, one per worker): the
/// prepare record (or, for a DDL statement, its DDL record) carries it,
/// so it is durable exactly when the transaction's rows (or the DDL) are;
/// recovery replays it with them and checkpoints keep the latest per
/// slot. The engine never reads the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplierSlot {
    pub slot: u32,
    pub bytes: Vec<u8>,
}

/// Calls come with engine locks held (the commit registry for
/// `log_commit` and `current_lsn`, the catalog for `log_ddl`): an
/// implementation must not call back into the engine.
pub trait RedoSink: Send + Sync {
    /// Logs a transaction's changes before its binlog write. `xid` is
    /// `None` for a one-phase commit (no binlog participates); recovery
    /// rolls such a transaction back unless its commit record follows.
    fn log_prepare(&self, trx_id: TrxId, xid: Option<Xid>, changes: &[RowChange], slot: Option<&ApplierSlot>) -> Result<Lsn>;
    /// Logs a running transaction's `changes` ahead of its prepare (which
    /// will then carry only the changes after them), so a large
    /// transaction's redo is written while its statements run rather than
    /// at commit. `Ok(false)`: this sink does not write ahead (the default).
    /// Recovery joins what was written ahead to the prepare record and
    /// ignores it when no prepare follows.
    fn log_changes_ahead(&self, _trx_id: TrxId, _changes: &[RowChange]) -> Result<bool> {
        Ok(false)
    }
    /// Logs the commit. Called under the engine's commit lock: keep it to
    /// an append (durability came from the prepare record and the binlog).
    fn log_commit(&self, trx_id: TrxId, gtid: Option<Gtid>) -> Result<Lsn>;
    /// Logs that a prepared transaction was rolled back. Cannot fail the
    /// rollback: recovery rolls back a prepared transaction anyway unless
    /// the binlog has its XID.
    fn log_rollback(&self, trx_id: TrxId);
    /// Logs a DDL record; `slot` commits with it (recovery sets it exactly
    /// when it replays the record).
    fn log_ddl(&self, ddl: &DdlRecord, slot: Option<&ApplierSlot>) -> Result<Lsn>;
    /// The LSN the next record will get (or any LSN not past it); a
    /// checkpoint starts there.
    fn current_lsn(&self) -> Lsn;
}

/// Schema changes as redo records them. Ids, not names, so that replay
/// after a drop and re-create of a same-named table acts on the right one.
#[derive(Debug, Clone, PartialEq)]
pub enum DdlRecord {
    CreateDatabase {
        name: String,
        /// The database's default collation (its DEFAULT CHARACTER SET and
        /// COLLATE): what a table created in it without one takes.
        default_collation: u16,
    },
    /// ALTER DATABASE's new default collation.
    AlterDatabase {
        name: String,
        default_collation: u16,
    },
    DropDatabase {
        name: String,
    },
    CreateTable {
        def: TableDef,
    },
    DropTable {
        table: TableId,
    },
    CreateIndex {
        table: TableId,
        index: IndexDef,
    },
    DropIndex {
        table: TableId,
        index: IndexId,
    },
    TruncateTable {
        table: TableId,
    },
    /// ALTER TABLE by copy: the old table goes and `def` (a new id, maybe
    /// a new name) comes with `rows`, converted by the SQL layer, in one
    /// record, so a crash leaves either table whole.
    RebuildTable {
        table: TableId,
        def: TableDef,
        rows: Vec<Row>,
        auto_increment_next: u64,
    },
    /// RENAME TABLE (and ALTER TABLE ... RENAME without other changes):
    /// every pair at once.
    RenameTables {
        renames: Vec<TableRename>,
    },
}

/// One table's new name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRename {
    pub table: TableId,
    pub database: String,
    pub name: String,
}

/// A sink that logs nothing: an engine without durability (tests, or a
/// server run with the redo log off). Every LSN is 0.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoRedo;

impl RedoSink for NoRedo {
    fn log_prepare(&self, _: TrxId, _: Option<Xid>, _: &[RowChange], _: Option<&ApplierSlot>) -> Result<Lsn> {
        Ok(0)
    }
    fn log_commit(&self, _: TrxId, _: Option<Gtid>) -> Result<Lsn> {
        Ok(0)
    }
    fn log_rollback(&self, _: TrxId) {}
    fn log_ddl(&self, _: &DdlRecord, _: Option<&ApplierSlot>) -> Result<Lsn> {
        Ok(0)
    }
    fn current_lsn(&self) -> Lsn {
        0
    }
}

/// One record of a [`MemoryRedo`].
#[derive(Debug, Clone, PartialEq)]
pub enum RedoEntry {
    Prepare {
        trx_id: TrxId,
        xid: Option<Xid>,
        changes: Vec<RowChange>,
        slot: Option<ApplierSlot>,
    },
    Commit {
        trx_id: TrxId,
        gtid: Option<Gtid>,
    },
    Rollback {
        trx_id: TrxId,
    },
    /// A DDL record (boxed: a rebuild carries the table's rows) and the
    /// applier slot that commits with it.
    Ddl(Box<DdlRecord>, Option<ApplierSlot>),
}

/// A sink that keeps every record in memory, LSN = position + 1: for
/// tests of checkpoints and replay, and as a reference for the real one.
#[derive(Debug, Default)]
pub struct MemoryRedo {
    entries: Mutex<Vec<RedoEntry>>,
}

impl MemoryRedo {
    pub fn entries(&self) -> Vec<RedoEntry> {
        self.entries.lock().clone()
    }

    /// Records from `lsn` on, with their LSNs.
    pub fn entries_from(&self, lsn: Lsn) -> Vec<(Lsn, RedoEntry)> {
        let entries = self.entries.lock();
        let start = lsn.saturating_sub(1) as usize;
        entries.iter().enumerate().skip(start).map(|(at, entry)| (at as Lsn + 1, entry.clone())).collect()
    }

    fn push(&self, entry: RedoEntry) -> Lsn {
        let mut entries = self.entries.lock();
        entries.push(entry);
        entries.len() as Lsn
    }
}

impl RedoSink for MemoryRedo {
    fn log_prepare(&self, trx_id: TrxId, xid: Option<Xid>, changes: &[RowChange], slot: Option<&ApplierSlot>) -> Result<Lsn> {
        Ok(self.push(RedoEntry::Prepare { trx_id, xid, changes: changes.to_vec(), slot: slot.cloned() }))
    }
    fn log_commit(&self, trx_id: TrxId, gtid: Option<Gtid>) -> Result<Lsn> {
        Ok(self.push(RedoEntry::Commit { trx_id, gtid }))
    }
    fn log_rollback(&self, trx_id: TrxId) {
        self.push(RedoEntry::Rollback { trx_id });
    }
    fn log_ddl(&self, ddl: &DdlRecord, slot: Option<&ApplierSlot>) -> Result<Lsn> {
        Ok(self.push(RedoEntry::Ddl(Box::new(ddl.clone()), slot.cloned())))
    }
    fn current_lsn(&self) -> Lsn {
        self.entries.lock().len() as Lsn + 1
    }
}
