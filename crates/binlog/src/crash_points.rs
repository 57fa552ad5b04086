//! Named crash points of the binary log, `binlog::<stage>::<step>`: the
//! names live here, in the crate that reaches them; the registry that arms
//! them is `storage::CrashPoints`, typed by this crate's list.
//!
//! A test arms a point on a log's [`CrashPoints`]; when execution reaches
//! it, the armed action runs (typically: freeze the simulated storage, so
//! nothing after the point becomes durable) and the operation fails with a
//! "crash" error. For tests that kill a real process, the environment
//! variable `BINLOGD_CRASH_POINT=<name>` aborts the process at that point.
//! Both need the `storage` crate's `fault-injection` feature (test builds);
//! without it the points compile to nothing.
//!
//! Every point is listed in [`ALL`]; the crash tests iterate over it, so a
//! point added here is a point tested.

/// A group's events are about to be written to the active file.
pub const FLUSH_BEFORE_WRITE: &str = "binlog::flush::before_write";
/// A group's events are written, not yet synced.
pub const FLUSH_AFTER_WRITE: &str = "binlog::flush::after_write";
/// The group is synced; commits have not been acknowledged.
pub const SYNC_AFTER_SYNC: &str = "binlog::sync::after_sync";
/// The commit stage ran (the engine commit hooks); before acknowledging.
pub const COMMIT_AFTER_HOOKS: &str = "binlog::commit::after_hooks";
/// Rotation: the Rotate event is written and synced to the old file.
pub const ROTATE_AFTER_ROTATE_EVENT: &str = "binlog::rotate::after_rotate_event";
/// Rotation: the new file exists with its preamble; the index does not list it.
pub const ROTATE_AFTER_NEW_FILE: &str = "binlog::rotate::after_new_file";
/// Rotation: the index lists the new file; the old one is still flagged in use.
pub const ROTATE_AFTER_INDEX: &str = "binlog::rotate::after_index";
/// Index rewrite: the temporary index is written and synced, not renamed.
pub const INDEX_AFTER_TEMP_SYNC: &str = "binlog::index::after_temp_sync";
/// Index rewrite: renamed over the index, directory not yet synced.
pub const INDEX_AFTER_RENAME: &str = "binlog::index::after_rename";
/// Purge: the index no longer lists the purged files; they still exist.
pub const PURGE_AFTER_INDEX: &str = "binlog::purge::after_index";
/// Purge: some purged files are removed.
pub const PURGE_AFTER_FIRST_REMOVE: &str = "binlog::purge::after_first_remove";
/// A transaction cache has just spilled to its temp file.
pub const CACHE_AFTER_SPILL: &str = "binlog::cache::after_spill";
/// Recovery: the torn tail is truncated, the in-use flag not yet cleared.
pub const RECOVERY_AFTER_TRUNCATE: &str = "binlog::recovery::after_truncate";
/// Clean close: the Stop event is written, the in-use flag not yet cleared.
pub const CLOSE_AFTER_STOP_EVENT: &str = "binlog::close::after_stop_event";

/// Promotion steps (see `promotion.rs` for the outcome of each).
pub const PROMOTE_AFTER_HEADER_SYNC: &str = "binlog::promote::after_header_sync";
pub const PROMOTE_AFTER_REGISTER: &str = "binlog::promote::after_register";
pub const PROMOTE_AFTER_RENAME: &str = "binlog::promote::after_rename";
pub const PROMOTE_AFTER_ROTATE_EVENT: &str = "binlog::promote::after_rotate_event";
pub const PROMOTE_AFTER_NEW_FILE: &str = "binlog::promote::after_new_file";
pub const PROMOTE_AFTER_INDEX: &str = "binlog::promote::after_index";
pub const PROMOTE_AFTER_COUNT: &str = "binlog::promote::after_count";

/// Promotion points before which the transaction rolls back.
pub const PROMOTE_ROLL_BACK: &[&str] =
    &[PROMOTE_AFTER_HEADER_SYNC, PROMOTE_AFTER_REGISTER, PROMOTE_AFTER_RENAME, PROMOTE_AFTER_ROTATE_EVENT, PROMOTE_AFTER_NEW_FILE];
/// Promotion points after which the transaction rolls forward.
pub const PROMOTE_ROLL_FORWARD: &[&str] = &[PROMOTE_AFTER_INDEX, PROMOTE_AFTER_COUNT];

pub const ALL: &[&str] = &[
    PROMOTE_AFTER_HEADER_SYNC,
    PROMOTE_AFTER_REGISTER,
    PROMOTE_AFTER_RENAME,
    PROMOTE_AFTER_ROTATE_EVENT,
    PROMOTE_AFTER_NEW_FILE,
    PROMOTE_AFTER_INDEX,
    PROMOTE_AFTER_COUNT,
    FLUSH_BEFORE_WRITE,
    FLUSH_AFTER_WRITE,
    SYNC_AFTER_SYNC,
    COMMIT_AFTER_HOOKS,
    ROTATE_AFTER_ROTATE_EVENT,
    ROTATE_AFTER_NEW_FILE,
    ROTATE_AFTER_INDEX,
    INDEX_AFTER_TEMP_SYNC,
    INDEX_AFTER_RENAME,
    PURGE_AFTER_INDEX,
    PURGE_AFTER_FIRST_REMOVE,
    CACHE_AFTER_SPILL,
    RECOVERY_AFTER_TRUNCATE,
    CLOSE_AFTER_STOP_EVENT,
];

/// The binary log's points.
pub struct BinlogPoints;

impl storage::KnownPoints for BinlogPoints {
    const ALL: &'static [&'static str] = ALL;
}

/// The armed points of one binary log (or one process); the registry
/// itself is `storage::CrashPoints`.
pub type CrashPoints = storage::CrashPoints<BinlogPoints>;
