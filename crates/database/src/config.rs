//! [`DatabaseConfig`]: where the data directory is and the settings of the
//! three parts (binlog, redo, engine), under MySQL's variable names.
//!
//! Data directory layout:
//!
//! | path | what |
//! |------|------|
//! | `auto.cnf` | `[auto]\nserver-uuid=...`, as mysqld writes it at first start |
//! | `binlog/` | binary log files, `binlog.index`, the spill folder |
//! | `redo/` | redo segments, `redo.control`, checkpoint snapshots |

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use storage::{OsStorage, Storage};

use crate::crash_points::CrashPoints;

/// `binlogd_checkpoint_interval_seconds`' default.
pub const CHECKPOINT_INTERVAL_DEFAULT: Duration = Duration::from_secs(60);
/// `binlogd_checkpoint_redo_bytes`' default (256 MiB).
pub const CHECKPOINT_REDO_BYTES_DEFAULT: u64 = 256 << 20;

/// `binlogd_group_commit_gather_max`'s default.
pub const GROUP_COMMIT_GATHER_MAX_DEFAULT: Duration = Duration::from_millis(1);

/// `binlogd_redo_prepare_part_bytes`' default (1 MiB).
pub const REDO_PREPARE_PART_BYTES_DEFAULT: usize = 1 << 20;

/// `binlogd_engine_binlog_queue_bytes_max`'s default (64 MiB).
pub const ENGINE_BINLOG_QUEUE_BYTES_MAX_DEFAULT: u64 = 64 << 20;

/// `binlog_storage_engine` (MariaDB 12.3's name): where the binlog's
/// durability comes from. Read at open, so a change takes effect at the
/// next start; either way the binlog stays one sequence of MySQL v4 files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BinlogStorageEngine {
    /// Empty (the default): classic binlog files, synced per `sync_binlog`,
    /// joined to the engine by two-phase commit (`commit.rs`).
    #[default]
    File,
    /// `engine`: each commit's binlog events travel inside its one redo
    /// record; `innodb_flush_log_at_trx_commit` alone decides durability
    /// and the files are written behind (`engine_binlog.rs`).
    Engine,
}

impl BinlogStorageEngine {
    /// The variable's value: "" or "engine" (`file` is accepted as "").
    pub fn parse(value: &str) -> Option<BinlogStorageEngine> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "file" => Some(BinlogStorageEngine::File),
            "engine" | "innodb" => Some(BinlogStorageEngine::Engine),
            _ => None,
        }
    }

    /// As `SHOW VARIABLES` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            BinlogStorageEngine::File => "",
            BinlogStorageEngine::Engine => "engine",
        }
    }
}

pub const BINLOG_SUBDIR: &str = "binlog";
pub const REDO_SUBDIR: &str = "redo";
pub const AUTO_CNF: &str = "auto.cnf";
/// The `binlog_storage_engine` the data directory last ran with.
pub const BINLOG_STORAGE_ENGINE_FILE: &str = "binlog_storage_engine.cnf";

#[derive(Clone)]
pub struct DatabaseConfig {
    /// The data directory (`datadir`).
    pub dir: PathBuf,
    /// The binary log's settings. `dir` is overwritten with `dir/binlog`
    /// and `server_uuid` with the one in `auto.cnf`. `max_binlog_size` is
    /// honoured by the database, not by the log: rotation waits for the
    /// engine's commit records to be durable (see `commit.rs`).
    pub binlog: binlog::Options,
    /// The redo log's settings (`innodb_flush_log_at_trx_commit`, ...).
    pub redo: redo::Options,
    pub engine: engine::EngineConfig,
    /// `binlogd_checkpoint_interval_seconds` (default 60 s; zero: no
    /// time-based checkpoints).
    pub checkpoint_interval: Duration,
    /// `binlogd_checkpoint_redo_bytes` (default 256 MiB; 0: no size-based
    /// checkpoints): a checkpoint also starts once this much redo was
    /// appended since the last one, so recovery replays at most about this
    /// much.
    pub checkpoint_redo_bytes: u64,
    /// `binlogd_group_commit_gather_max` (default 1 ms; zero: never
    /// wait): with `innodb_flush_log_at_trx_commit = 1`, how long a group's
    /// leader waits for the sessions of the previous group to come back
    /// before syncing the redo for the next (see `group_commit.rs`). A
    /// lone session never waits.
    pub group_commit_gather_max: Duration,
    /// `binlogd_cross_log_group_commit` (default ON): with
    /// `innodb_flush_log_at_trx_commit = 1`, one group commit for both
    /// logs (`group_commit.rs`). OFF chains the two logs' own group
    /// commits (each prepare synced by the redo's), for side-by-side
    /// measurement.
    pub cross_log_group_commit: bool,
    /// `binlogd_redo_prepare_part_bytes` (default 1 MiB): a transaction
    /// whose changes encode to more goes to redo as prepare parts of about
    /// this size, so it never holds the redo writer for long
    /// (`redo_sink.rs`).
    pub redo_prepare_part_bytes: usize,
    /// `binlogd_write_ahead_min_changes` (default 1024): an open
    /// transaction's statement end writes its new row events and redo
    /// ahead of COMMIT once this many changes have gathered
    /// (`write_ahead.rs`); 0 never writes ahead.
    pub write_ahead_min_changes: usize,
    /// `binlog_storage_engine` (default empty: classic files). Persisted
    /// in `binlog_storage_engine.cnf` at open; a change takes effect at
    /// restart. `sync_binlog` is ignored in `Engine` mode.
    pub binlog_storage_engine: BinlogStorageEngine,
    /// `binlogd_engine_binlog_queue_bytes_max` (default 64 MiB): in
    /// `engine` mode, binlog bytes committed in redo and not yet written to
    /// the files; commits wait (and the writer forces a redo sync) beyond it.
    pub engine_binlog_queue_bytes_max: u64,
    /// The storage seam every file of the three logs goes through
    /// (`OsStorage`; tests put `storage::SimStorage` here).
    pub storage: Arc<dyn Storage>,
    /// Crash points of each layer (default: armed from `BINLOGD_CRASH_POINT`).
    pub crash_points: CrashPoints,
    pub binlog_crash_points: binlog::CrashPoints,
    pub redo_crash_points: redo::CrashPoints,
}

impl std::fmt::Debug for DatabaseConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseConfig")
            .field("dir", &self.dir)
            .field("binlog", &self.binlog)
            .field("redo", &self.redo)
            .field("engine", &self.engine)
            .field("checkpoint_interval", &self.checkpoint_interval)
            .field("checkpoint_redo_bytes", &self.checkpoint_redo_bytes)
            .field("group_commit_gather_max", &self.group_commit_gather_max)
            .field("cross_log_group_commit", &self.cross_log_group_commit)
            .field("redo_prepare_part_bytes", &self.redo_prepare_part_bytes)
            .field("write_ahead_min_changes", &self.write_ahead_min_changes)
            .field("binlog_storage_engine", &self.binlog_storage_engine)
            .finish_non_exhaustive()
    }
}

impl DatabaseConfig {
    /// Defaults (MySQL's where MySQL has one) for data directory `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        DatabaseConfig {
            binlog: binlog::Options {
                // MySQL 8.4 has no other mode (8.4 removed
                // binlog_transaction_dependency_tracking): transactions that
                // wrote no common row share a `last_committed` across
                // groups, so replicas apply them in parallel.
                dependency_tracking: binlog::DependencyTracking::Writeset,
                ..binlog::Options::new(dir.join(BINLOG_SUBDIR))
            },
            redo: redo::Options::default(),
            engine: engine::EngineConfig::default(),
            checkpoint_interval: CHECKPOINT_INTERVAL_DEFAULT,
            checkpoint_redo_bytes: CHECKPOINT_REDO_BYTES_DEFAULT,
            group_commit_gather_max: GROUP_COMMIT_GATHER_MAX_DEFAULT,
            cross_log_group_commit: true,
            redo_prepare_part_bytes: REDO_PREPARE_PART_BYTES_DEFAULT,
            write_ahead_min_changes: crate::write_ahead::WRITE_AHEAD_MIN_CHANGES_DEFAULT,
            binlog_storage_engine: BinlogStorageEngine::File,
            engine_binlog_queue_bytes_max: ENGINE_BINLOG_QUEUE_BYTES_MAX_DEFAULT,
            storage: Arc::new(OsStorage),
            crash_points: CrashPoints::from_env(),
            binlog_crash_points: binlog::CrashPoints::from_env(),
            redo_crash_points: redo::CrashPoints::from_env(),
            dir,
        }
    }

    pub fn binlog_dir(&self) -> PathBuf {
        self.dir.join(BINLOG_SUBDIR)
    }

    pub fn redo_dir(&self) -> PathBuf {
        self.dir.join(REDO_SUBDIR)
    }

    /// Whether an acknowledged commit survives a power cut: then recovery
    /// must find the engine and the binlog in exact agreement.
    /// In `engine` mode only `innodb_flush_log_at_trx_commit` counts.
    pub fn is_fully_durable(&self) -> bool {
        let redo_synced = self.redo.innodb_flush_log_at_trx_commit == redo::FlushLogAtTrxCommit::WriteAndSyncAtCommit;
        redo_synced && (self.is_engine_binlog() || self.binlog.sync_binlog == 1)
    }

    pub fn is_engine_binlog(&self) -> bool {
        self.binlog_storage_engine == BinlogStorageEngine::Engine
    }
}
