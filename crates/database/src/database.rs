//! [`Database`]: the engine, its redo log and the binary log, opened
//! together by recovery (`recovery.rs`), committed together by two-phase
//! commit (`commit.rs`), checkpointed in the background (`checkpoint.rs`).
//! Other crates never hold the engine or the binary log: they read them
//! through narrow views (`views.rs`) and change them through `Database`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog::BinaryLog;
use binlog_format::{GtidSet, Uuid};
use engine::{Engine, Lsn, Transaction};
use parking_lot::{Mutex, RwLock};
use redo::RedoLog;

use crate::binlog_events::Tables;
use crate::checkpoint::Checkpointer;
use crate::config::DatabaseConfig;
use crate::crash_points::CrashPoints;
use crate::engine_binlog::{EngineBinlog, WriterGuard};
use crate::error::{DatabaseError, Result};
use crate::group_commit::BinlogGroupCommit;
use crate::redo_sink::RedoAdapter;
use crate::row_image::RowLoggingGlobals;
use crate::table_maps::TableMaps;

/// What `Database::open` found and did.
#[derive(Debug, Clone, Default)]
pub struct OpenReport {
    /// The binary log's recovery (the pass that repaired it, when two ran).
    pub binlog: binlog::RecoveryReport,
    /// XIDs of transactions prepared in redo without a commit record whose
    /// XID the binlog holds: committed with the binlog's GTID.
    pub committed_at_recovery: Vec<u64>,
    /// XIDs of prepared transactions the binlog lacks: rolled back.
    pub rolled_back_at_recovery: Vec<u64>,
    /// Redo records read from the checkpoint on.
    pub redo_records_replayed: u64,
    pub elapsed: Duration,
    /// The checkpoint recovery started from.
    pub checkpoint: Option<redo::CheckpointInfo>,
    /// A torn redo tail recovery cut.
    pub redo_truncation: Option<redo::Truncation>,
    /// Committed transactions replayed from redo.
    pub transactions_replayed: u64,
    /// GTIDs of DDL statements the binlog holds but whose engine record
    /// was lost: added to the engine's executed set.
    pub ddl_gtids_recovered: GtidSet,
    /// One-phase transactions and DDL intents without an outcome, rolled back.
    pub other_rolled_back: u64,
    /// Transactions redo committed with their binlog events (engine mode)
    /// that the binlog files lacked: appended at recovery.
    pub binlog_rebuilt_from_redo: GtidSet,
    /// The `binlog_storage_engine` the directory last ran with, when the
    /// configuration changed it.
    pub binlog_storage_engine_switched_from: Option<crate::config::BinlogStorageEngine>,
    pub server_uuid: Uuid,
}

/// Counters for `SHOW STATUS` and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatabaseCounters {
    /// Transactions committed through the binlog (two-phase).
    pub commits: u64,
    pub read_only_commits: u64,
    pub ddl_statements: u64,
    pub checkpoints: u64,
    pub binlog_rotations: u64,
    /// fdatasyncs of the redo log's append path (group syncs, rotations).
    pub redo_fsyncs: u64,
    /// fdatasyncs of the binary log (group syncs, rotations).
    pub binlog_fsyncs: u64,
    /// The cross-log group commit's stage times (zero when commits do
    /// not go through it: `innodb_flush_log_at_trx_commit` != 1 or
    /// `binlogd_cross_log_group_commit` OFF).
    pub group_commit: crate::GroupCommitStages,
    /// The binlog group commit's stages, summed over its groups:
    /// FLUSH (writes), SYNC (fdatasync), COMMIT (the engine commits).
    pub binlog_flush_stage_us: u64,
    pub binlog_sync_stage_us: u64,
    pub binlog_commit_stage_us: u64,
}

/// Lock order (a thread holding one may take those after it, never those
/// before): `checkpoint_lock` → `ddl_lock` → a group membership
/// (`group_commit.rs`) → `rotation` → the binlog's and the engine's own
/// locks. A commit in the binlog never waits for a row lock or for a group.
pub(crate) struct Inner {
    /// As opened: `binlog.dir`, `binlog.server_uuid` and
    /// `binlog.max_binlog_size` as configured (the log itself runs with an
    /// unbounded size: see `commit.rs`).
    pub config: DatabaseConfig,
    pub engine: Engine,
    pub binlog: BinaryLog,
    pub redo: RedoLog,
    pub sink: Arc<RedoAdapter>,
    /// Where the binlog is written: files joined by two-phase commit, or
    /// the redo log (`binlog_storage_engine`).
    pub binlog_mode: BinlogMode,
    /// How a commit's redo becomes durable: one group for both logs, or
    /// the redo log's own group commit.
    pub redo_sync: RedoSync,
    pub crash: CrashPoints,
    /// Encoded Table_map events, one per table definition.
    pub table_maps: TableMaps,
    /// `binlog_row_image`, `binlog_row_metadata` and
    /// `binlog_rows_query_log_events` as set globally.
    pub row_logging: RowLoggingGlobals,
    /// The next XID to hand out; starts above every XID recovery saw.
    pub next_xid: AtomicU64,
    /// Shared by every commit from its binlog write to its engine commit;
    /// exclusive for a rotation, which first makes every commit record
    /// durable (so a closed binlog file never holds a transaction redo
    /// could forget) and for close.
    pub rotation: RwLock<()>,
    /// DDL statements one at a time, and never during a checkpoint.
    pub ddl_lock: Mutex<()>,
    pub checkpoint_lock: Mutex<()>,
    /// When and at which start LSN the last checkpoint was taken.
    pub last_checkpoint: Mutex<(Instant, Lsn)>,
    /// Keys for DDL intent records (see `commit.rs`).
    pub next_ddl_intent: AtomicU64,
    /// The first in-doubt failure: writes are refused until reopen.
    pub failure: Mutex<Option<String>>,
    pub failed: AtomicBool,
    pub closed: AtomicBool,
    pub commits: AtomicU64,
    pub read_only_commits: AtomicU64,
    pub ddl_statements: AtomicU64,
    pub checkpoints: AtomicU64,
    pub binlog_rotations: AtomicU64,
}

/// Where the binlog is written (`binlog_storage_engine`, read at open).
pub(crate) enum BinlogMode {
    /// Classic binlog files, joined to the engine by two-phase commit
    /// (`commit.rs`).
    Files,
    /// The binlog rides the redo log: the order lock, the write-behind
    /// queue and its writer (`engine_binlog.rs`). The guard stops the
    /// writer when the database is dropped without close.
    Engine { binlog: Arc<EngineBinlog>, _writer: WriterGuard },
}

impl BinlogMode {
    /// The engine-integrated binlog, in that mode.
    pub fn engine(&self) -> Option<&Arc<EngineBinlog>> {
        match self {
            BinlogMode::Files => None,
            BinlogMode::Engine { binlog, .. } => Some(binlog),
        }
    }
}

/// How a commit's redo becomes durable, fixed at open.
pub(crate) enum RedoSync {
    /// `innodb_flush_log_at_trx_commit = 1` with
    /// `binlogd_cross_log_group_commit`: prepares are only buffered, and
    /// one group for both logs syncs them (`group_commit.rs`).
    Grouped(Arc<BinlogGroupCommit>),
    /// Each prepare is appended as `innodb_flush_log_at_trx_commit` says
    /// and waits on the redo log's own group commit; with classic files
    /// the binlog's group commit follows (the two chained).
    Alone,
}

impl RedoSync {
    /// Returns once every group member that arrived before has had its
    /// binlog commit logged: for what reaches the binlog another way (DDL,
    /// a promotion). At once without groups.
    pub fn barrier(&self) -> Result<()> {
        match self {
            RedoSync::Grouped(groups) => groups.barrier(),
            RedoSync::Alone => Ok(()),
        }
    }
}

impl Inner {
    /// What row events need to know of tables.
    pub fn tables(&self) -> Tables<'_> {
        Tables { engine: &self.engine, maps: &self.table_maps }
    }

    /// Writes (and checkpoints) are possible: not closed, no in-doubt failure.
    pub fn check_writable(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(DatabaseError::Closed);
        }
        if self.failed.load(Ordering::Acquire) {
            let first_error = self.failure.lock().clone().unwrap_or_default();
            return Err(DatabaseError::Unusable { first_error });
        }
        Ok(())
    }

    /// Records an in-doubt failure: from now on writes fail until reopen.
    pub fn fail(&self, reason: &str) {
        let mut failure = self.failure.lock();
        if failure.is_none() {
            tracing::error!("database: {reason}; refusing writes until restart (recovery settles the transaction)");
            *failure = Some(reason.to_string());
        }
        self.failed.store(true, Ordering::Release);
    }
}

/// An open database. Cheap to clone; all clones share it.
#[derive(Clone)]
pub struct Database {
    pub(crate) inner: Arc<Inner>,
    pub(crate) checkpointer: Option<Arc<Checkpointer>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("dir", &self.inner.config.dir).finish_non_exhaustive()
    }
}

impl Database {
    /// Opens the data directory: recovery (see `recovery.rs`), then a
    /// background checkpoint thread.
    pub fn open(config: DatabaseConfig) -> Result<(Database, OpenReport)> {
        crate::recovery::open(config)
    }

    pub fn redo(&self) -> &RedoLog {
        &self.inner.redo
    }

    pub fn config(&self) -> &DatabaseConfig {
        &self.inner.config
    }

    /// `server_uuid`.
    pub fn server_uuid(&self) -> Uuid {
        self.inner.binlog.options().server_uuid
    }

    /// The replica appliers' committed slots ([`engine::ApplierSlot`]):
    /// each the bytes its latest committed transaction carried, as
    /// recovered after a crash.
    pub fn applier_slots(&self) -> std::collections::BTreeMap<u32, Vec<u8>> {
        self.inner.engine.applier_slots()
    }

    /// `gtid_executed`: every GTID committed. The engine's set with the
    /// engine-integrated binlog (its files are written behind commits),
    /// the binlog's otherwise (it is ahead of the engine's only between a
    /// commit's binlog write and its engine commit).
    pub fn executed_gtids(&self) -> binlog_format::GtidSet {
        match &self.inner.binlog_mode {
            BinlogMode::Engine { .. } => self.inner.engine.executed_gtids(),
            BinlogMode::Files => self.inner.binlog.executed_gtids(),
        }
    }

    /// A REPEATABLE READ transaction; commit it with [`Database::commit`].
    pub fn begin(&self) -> Transaction {
        self.inner.engine.begin()
    }

    /// A transaction at `isolation`.
    pub fn begin_with(&self, isolation: engine::IsolationLevel) -> Transaction {
        self.inner.engine.begin_with(isolation)
    }

    pub fn counters(&self) -> DatabaseCounters {
        let inner = &self.inner;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        DatabaseCounters {
            commits: load(&inner.commits),
            read_only_commits: load(&inner.read_only_commits),
            ddl_statements: load(&inner.ddl_statements),
            checkpoints: load(&inner.checkpoints),
            binlog_rotations: load(&inner.binlog_rotations),
            redo_fsyncs: inner.redo.counters().fsyncs,
            binlog_fsyncs: inner.binlog.counters().fsyncs.load(Ordering::Relaxed),
            group_commit: match &inner.redo_sync {
                RedoSync::Grouped(groups) => groups.stages(),
                RedoSync::Alone => crate::GroupCommitStages::default(),
            },
            binlog_flush_stage_us: inner.binlog.counters().flush_stage_us.load(Ordering::Relaxed),
            binlog_sync_stage_us: inner.binlog.counters().sync_stage_us.load(Ordering::Relaxed),
            binlog_commit_stage_us: inner.binlog.counters().commit_stage_us.load(Ordering::Relaxed),
        }
    }

    /// Whether an in-doubt failure stopped writes (reopen to recover).
    pub fn is_failed(&self) -> bool {
        self.inner.failed.load(Ordering::Acquire)
    }

    /// Clean shutdown: no more commits; the commits in flight finish; the
    /// engine's commit records are made durable; the binlog ends its file
    /// with a Stop event; the redo log is synced and closed. No checkpoint
    /// is taken (the next open replays redo since the last one).
    pub fn close(&self) -> Result<()> {
        let inner = &self.inner;
        if inner.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        if let Some(checkpointer) = &self.checkpointer {
            checkpointer.stop();
        }
        // Lock order: DDL before rotation (a DDL holds its lock while it
        // commits to the binlog). Waits for every commit between its
        // binlog write and engine commit.
        let _no_ddl = inner.ddl_lock.lock();
        let _no_commits = inner.rotation.write();
        let mut flushed = inner.redo.flush().map_err(DatabaseError::Redo);
        if let (Some(engine_binlog), true) = (inner.binlog_mode.engine(), flushed.is_ok()) {
            // Everything committed reaches the files before the Stop event.
            flushed = engine_binlog.drain_and_stop().map(|()| 0);
        }
        let binlog_closed = inner.binlog.close();
        let redo_closed = inner.redo.close();
        flushed?;
        binlog_closed?;
        redo_closed?;
        Ok(())
    }
}
