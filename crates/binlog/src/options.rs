//! The binary log's settings, under MySQL's variable names.

use std::path::PathBuf;
use std::time::Duration;

use binlog_format::Uuid;

/// `binlog_transaction_dependency_tracking`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DependencyTracking {
    /// `last_committed` = the last transaction committed when this one
    /// entered the commit queue.
    CommitOrder,
    /// Narrowed by write sets: transactions that touched no common row
    /// may share a `last_committed` even across groups.
    Writeset,
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Directory holding the binlog files, `binlog.index` and the spill folder.
    pub dir: PathBuf,
    /// `log_bin_basename`'s file part: files are `<basename>.000001`, ...
    pub basename: String,
    /// `server_id`, written in every event header.
    pub server_id: u32,
    /// `server_uuid`: the source id of the GTIDs this server generates.
    pub server_uuid: Uuid,
    /// `binlog_cache_size` (bytes, default 32 KiB): a transaction cache
    /// spills to a temp file past this.
    pub binlog_cache_size: u64,
    /// `max_binlog_cache_size` (bytes): a transaction past it gets error 1197.
    pub max_binlog_cache_size: u64,
    /// `max_binlog_size` (bytes, default 1 GiB): rotate once the active file
    /// reaches it. A transaction never spans files.
    pub max_binlog_size: u64,
    /// `sync_binlog`: 0 = never fdatasync (the OS decides), 1 = every group,
    /// N = every N groups.
    pub sync_binlog: u64,
    /// `binlog_group_commit_sync_delay` (µs): the leader waits this long
    /// before flushing, to gather a larger group.
    pub binlog_group_commit_sync_delay: Duration,
    /// `binlog_group_commit_sync_no_delay_count`: stop waiting once this
    /// many transactions queue (0 = no limit).
    pub binlog_group_commit_sync_no_delay_count: usize,
    /// `binlog_checksum` at startup: CRC32 (true) or NONE (false); `SET
    /// GLOBAL` changes it with a rotation (`BinaryLog::set_checksum`).
    pub binlog_checksum: bool,
    /// `binlog_expire_logs_seconds` (default 30 days; 0 = never): files
    /// older than this are purged at rotation and at open.
    pub binlog_expire_logs_seconds: u64,
    /// `binlog_transaction_dependency_tracking`.
    pub dependency_tracking: DependencyTracking,
    /// `binlog_transaction_dependency_history_size`: write-set entries kept.
    pub dependency_history_size: usize,
    /// `binlog_large_transaction_optimization_enabled` (dynamic, default ON):
    /// promote large spilled transactions into the log by rename.
    pub large_transaction_optimization_enabled: bool,
    /// `binlog_large_transaction_optimization_threshold` (bytes, dynamic,
    /// default 128 MiB, minimum 10 MiB; effective value at least
    /// `binlog_cache_size`).
    pub large_transaction_optimization_threshold: u64,
    /// `binlogd_large_transaction_header_room` (bytes, multiple of 64 KiB).
    pub large_transaction_header_room: u64,
    /// `binlogd_spill_sync_chunk_bytes` (2 MiB): small, so each fdatasync of a
    /// large transaction's spill file keeps the disk busy only briefly for
    /// other sessions' commit fsyncs (see the README's variable table).
    pub spill_sync_chunk_bytes: u64,
    /// `binlogd_verify_checksum_on_recovery`: scan promoted bodies in full
    /// at recovery instead of seeking to the terminating event.
    pub verify_checksum_on_recovery: bool,
}

pub const LARGE_TRANSACTION_THRESHOLD_MIN: u64 = 10 << 20;
pub const HEADER_ROOM_UNIT: u64 = 64 << 10;

/// `max_binlog_cache_size`'s MySQL default (the largest multiple of 4 KiB).
pub const MAX_BINLOG_CACHE_SIZE_DEFAULT: u64 = 18_446_744_073_709_547_520;

impl Options {
    pub fn new(dir: impl Into<PathBuf>) -> Options {
        Options {
            dir: dir.into(),
            basename: "binlog".to_string(),
            server_id: 1,
            server_uuid: Uuid::default(),
            binlog_cache_size: 32 * 1024,
            max_binlog_cache_size: MAX_BINLOG_CACHE_SIZE_DEFAULT,
            max_binlog_size: 1 << 30,
            sync_binlog: 1,
            binlog_group_commit_sync_delay: Duration::ZERO,
            binlog_group_commit_sync_no_delay_count: 0,
            binlog_checksum: true,
            binlog_expire_logs_seconds: 30 * 24 * 3600,
            dependency_tracking: DependencyTracking::CommitOrder,
            dependency_history_size: 25_000,
            large_transaction_optimization_enabled: true,
            large_transaction_optimization_threshold: 128 << 20,
            large_transaction_header_room: HEADER_ROOM_UNIT,
            spill_sync_chunk_bytes: 2 << 20,
            verify_checksum_on_recovery: false,
        }
    }

    /// Folder of spill files: inside the binlog directory, so a later
    /// promotion can rename a spill file into the log on the same file system.
    pub fn spill_dir(&self) -> PathBuf {
        self.dir.join(SPILL_DIR_NAME)
    }

    pub fn index_path(&self) -> PathBuf {
        self.dir.join(format!("{}.index", self.basename))
    }

    /// Marker naming a promotion in progress (spill file → binlog name).
    pub fn promotion_marker_path(&self) -> PathBuf {
        self.dir.join(format!("{}.promotion", self.basename))
    }

    pub fn promotion_marker_temp_path(&self) -> PathBuf {
        self.dir.join(format!("{}.promotion_crash_safe", self.basename))
    }

    pub fn index_temp_path(&self) -> PathBuf {
        self.dir.join(format!("{}.index_crash_safe", self.basename))
    }

    pub fn file_name(&self, number: u64) -> String {
        format!("{}.{:06}", self.basename, number)
    }

    /// The number of a file named `<basename>.NNNNNN`, if it is one.
    pub fn file_number(&self, name: &str) -> Option<u64> {
        let digits = name.strip_prefix(&self.basename)?.strip_prefix('.')?;
        (digits.len() >= 6 && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok())?
    }
}

pub const SPILL_DIR_NAME: &str = ".binlogd-tmp";
/// Prefix of every spill file; startup deletes leftovers with it.
pub const SPILL_FILE_PREFIX: &str = "binlogd-spill-";
/// Prefix of a spill file a redo record refers to (the engine-integrated
/// binlog's large transactions, `spill_reference.rs`): the binlog's own
/// startup keeps them; the database removes them once recovery is done.
pub const REFERENCED_SPILL_PREFIX: &str = "binlogd-referenced-";
