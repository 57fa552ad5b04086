//! Named crash points of the redo log, `redo::<stage>::<step>`: the names
//! live here, in the crate that reaches them; the registry that arms them
//! is `storage::CrashPoints`, typed by this crate's list.
//!
//! A test arms a point on the log's [`CrashPoints`]; when execution
//! reaches it the armed action runs (typically: freeze the simulated
//! storage, so nothing after the point becomes durable) and the operation
//! fails with a "crash" error. For tests that kill a real process, the
//! environment variable `BINLOGD_CRASH_POINT=<name>` aborts the process at
//! that point. Both need the `storage` crate's `fault-injection` feature
//! (test builds); without it the points compile to nothing.
//!
//! Every point is listed in [`ALL`]; the crash tests iterate over it, so a
//! point added here is a point tested.

/// A group's records are written to the segment, not yet synced.
pub const WRITE_AFTER_WRITE: &str = "redo::write::after_write";
/// A group's fdatasync returned; its waiters are not yet released.
pub const SYNC_AFTER_SYNC: &str = "redo::sync::after_sync";
/// Rotation: the new segment exists with a durable header and name; no
/// record is in it yet.
pub const ROTATE_AFTER_NEW_SEGMENT: &str = "redo::rotate::after_new_segment";
/// Checkpoint: the snapshot is written under its temporary name, not synced.
pub const CHECKPOINT_AFTER_SNAPSHOT_WRITE: &str = "redo::checkpoint::after_snapshot_write";
/// Checkpoint: the snapshot is synced and renamed to its final name; the
/// control file still names the previous checkpoint.
pub const CHECKPOINT_AFTER_SNAPSHOT_SYNC: &str = "redo::checkpoint::after_snapshot_sync";
/// Checkpoint: the control file names the new checkpoint; no old segment
/// or checkpoint is deleted yet.
pub const CHECKPOINT_AFTER_CONTROL_UPDATE: &str = "redo::checkpoint::after_control_update";
/// Checkpoint: segments below the checkpoint are deleted; older
/// checkpoint files are not.
pub const CHECKPOINT_AFTER_TRUNCATE: &str = "redo::checkpoint::after_truncate";

pub const ALL: &[&str] = &[
    WRITE_AFTER_WRITE,
    SYNC_AFTER_SYNC,
    ROTATE_AFTER_NEW_SEGMENT,
    CHECKPOINT_AFTER_SNAPSHOT_WRITE,
    CHECKPOINT_AFTER_SNAPSHOT_SYNC,
    CHECKPOINT_AFTER_CONTROL_UPDATE,
    CHECKPOINT_AFTER_TRUNCATE,
];

/// The redo log's points.
pub struct RedoPoints;

impl storage::KnownPoints for RedoPoints {
    const ALL: &'static [&'static str] = ALL;
}

/// The armed points of one redo log (or one process); the registry itself is
/// `storage::CrashPoints`.
pub type CrashPoints = storage::CrashPoints<RedoPoints>;
