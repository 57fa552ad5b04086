//! Named crash points of the database layer, `database::<stage>::<step>`,
//! listed in the crate that reaches them and armed through
//! `storage::CrashPoints`, typed by this crate's list.
//!
//! A test arms a point on the database's [`CrashPoints`]; when execution
//! reaches it the armed action runs (typically: freeze the simulated
//! storage) and the commit fails with a "crash" error. For tests that kill
//! a real process, `BINLOGD_CRASH_POINT=<name>` aborts the process there.
//! Both need the `storage` crate's `fault-injection` feature (test builds);
//! without it the points compile to nothing.
//!
//! The two-phase commit passes these points, in order (the points of the
//! other crates are armed on their own registries through
//! [`crate::DatabaseConfig`]):
//!
//! | point | crate | what is durable when it is reached (flush = 1, sync_binlog = 1) | recovery gives |
//! |-------|-------|------------------------------------------|----------------|
//! | `database::commit::before_prepare` | database | nothing of the transaction | nothing of it |
//! | `database::commit::after_prepare` | database | the redo prepare record (XID) | rolled back: the binlog lacks the XID |
//! | `binlog::flush::after_write` | binlog | prepare; binlog events written, not synced | committed if the written events survived (process kill), else rolled back |
//! | `binlog::sync::after_sync` | binlog | prepare; binlog events synced | committed with the binlog's GTID |
//! | `binlog::commit::after_hooks` | binlog | prepare; binlog; engine commit record buffered | committed (from the commit record if it reached the disk, else from the binlog) |
//! | `redo::checkpoint::*` | redo | a checkpoint in progress | the checkpoint the control file names, plus replay |
//!
//! Every point is listed in [`ALL`] ([`TWO_PHASE`] for classic files,
//! [`ENGINE_BINLOG`] for `binlog_storage_engine = engine`, with its own
//! table); the crash tests iterate over them.

/// The transaction's binlog events are built, its XID allocated; nothing is
/// logged yet.
pub const COMMIT_BEFORE_PREPARE: &str = "database::commit::before_prepare";
/// The redo prepare record is durable (as `innodb_flush_log_at_trx_commit`
/// asks); the binlog has not seen the transaction.
pub const COMMIT_AFTER_PREPARE: &str = "database::commit::after_prepare";

/// RESET BINARY LOGS AND GTIDS: the marker is durable, nothing else done.
pub const RESET_AFTER_MARKER: &str = "database::reset::after_marker";
/// RESET: the redo GTID reset record is durable; the old binlog files remain.
pub const RESET_AFTER_REDO_RECORD: &str = "database::reset::after_redo_record";
/// RESET: the binlog starts again at file 1; the marker is still there.
pub const RESET_AFTER_BINLOG_RESET: &str = "database::reset::after_binlog_reset";

/// `binlog_storage_engine = engine` (`engine_binlog.rs`): the binlog cache
/// is built; nothing is logged.
pub const ENGINE_BEFORE_REDO_WRITE: &str = "database::engine_binlog::before_redo_write";
/// A large transaction's spill file is sealed and renamed for its redo
/// record to refer to; nothing is in redo.
pub const ENGINE_AFTER_REFERENCE_SEAL: &str = "database::engine_binlog::after_reference_seal";
/// The one redo record (changes, GTID, binlog events) is appended to the
/// log buffer and the engine committed (one step); not yet durable.
pub const ENGINE_AFTER_REDO_WRITE: &str = "database::engine_binlog::after_redo_write";
/// The record is durable as `innodb_flush_log_at_trx_commit` asks; the
/// commit is about to return.
pub const ENGINE_AFTER_REDO_SYNC: &str = "database::engine_binlog::after_redo_sync";
/// The writer appended a group to the binlog files (not synced).
pub const ENGINE_AFTER_BINLOG_WRITE: &str = "database::engine_binlog::after_binlog_write";
/// A checkpoint synced the binlog file before letting redo go.
pub const ENGINE_AFTER_BINLOG_SYNC: &str = "database::engine_binlog::after_binlog_sync";
/// Recovery appended a batch of transactions from redo to the binlog.
pub const ENGINE_IN_REBUILD: &str = "database::engine_binlog::in_rebuild";

/// A DDL statement (ALTER TABLE's copy among them) is applied in the
/// engine and its redo record synced; the binlog has not seen it. Recovery
/// keeps the engine's change (the new table whole, for ALTER TABLE) and
/// closes the statement's intent without a binlog event.
pub const DDL_AFTER_ENGINE: &str = "database::ddl::after_engine";

/// The two-phase commit's points (classic files).
pub const TWO_PHASE: &[&str] = &[COMMIT_BEFORE_PREPARE, COMMIT_AFTER_PREPARE];

/// The engine-integrated binlog's points. With flush = 1:
///
/// | point | durable when reached | recovery gives |
/// |-------|----------------------|----------------|
/// | `after_reference_seal` | a large transaction's spill file, under its referenced name | nothing of it; the file removed |
/// | `before_redo_write` | nothing of the transaction | nothing of it |
/// | `after_redo_write` | maybe the record (a later group's sync may cover it) | committed in engine and binlog if the record is durable, else in neither |
/// | `after_redo_sync` | the record | committed in both (the binlog rebuilt from redo) |
/// | `after_binlog_write` | records; binlog bytes written, not synced | committed in both (binlog bytes kept or rebuilt) |
/// | `after_binlog_sync` | records; binlog synced before a checkpoint | the checkpoint not taken; committed in both |
/// | `in_rebuild` | part of the missing tail re-appended | the next recovery appends the rest |
pub const ENGINE_BINLOG: &[&str] = &[
    ENGINE_AFTER_REFERENCE_SEAL,
    ENGINE_BEFORE_REDO_WRITE,
    ENGINE_AFTER_REDO_WRITE,
    ENGINE_AFTER_REDO_SYNC,
    ENGINE_AFTER_BINLOG_WRITE,
    ENGINE_AFTER_BINLOG_SYNC,
    ENGINE_IN_REBUILD,
];

/// RESET BINARY LOGS AND GTIDS (`reset.rs`; tested in tests/reset.rs).
pub const RESET: &[&str] = &[RESET_AFTER_MARKER, RESET_AFTER_REDO_RECORD, RESET_AFTER_BINLOG_RESET];

pub const ALL: &[&str] = &[
    COMMIT_BEFORE_PREPARE,
    COMMIT_AFTER_PREPARE,
    DDL_AFTER_ENGINE,
    RESET_AFTER_MARKER,
    RESET_AFTER_REDO_RECORD,
    RESET_AFTER_BINLOG_RESET,
    ENGINE_AFTER_REFERENCE_SEAL,
    ENGINE_BEFORE_REDO_WRITE,
    ENGINE_AFTER_REDO_WRITE,
    ENGINE_AFTER_REDO_SYNC,
    ENGINE_AFTER_BINLOG_WRITE,
    ENGINE_AFTER_BINLOG_SYNC,
    ENGINE_IN_REBUILD,
];

/// The database layer's points.
pub struct DatabasePoints;

impl storage::KnownPoints for DatabasePoints {
    const ALL: &'static [&'static str] = ALL;
}

/// The armed points of one database layer (or one process); the registry itself is
/// `storage::CrashPoints`.
pub type CrashPoints = storage::CrashPoints<DatabasePoints>;
