//! Named crash points of the redo log, `redo::<stage>::<step>`, in the
//! same pattern as `binlog::crash_points` (a separate registry because a
//! point must be registered in the crate that reaches it).
//!
//! A test arms a point on the log's [`CrashPoints`]; when execution
//! reaches it the armed action runs (typically: freeze the simulated
//! storage, so nothing after the point becomes durable) and the operation
//! fails with a "crash" error. For tests that kill a real process, the
//! environment variable `BINLOGD_CRASH_POINT=<name>` aborts the process at
//! that point.
//!
//! Every point is listed in [`ALL`]; the crash tests iterate over it, so a
//! point added here is a point tested.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use parking_lot::Mutex;

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

type Action = Box<dyn Fn() + Send + Sync>;

/// The armed points of one log (or one process).
#[derive(Clone, Default)]
pub struct CrashPoints {
    armed: Arc<Mutex<HashMap<&'static str, (u64, Action)>>>,
    fired: Arc<Mutex<Vec<&'static str>>>,
    abort_at: Option<Arc<str>>,
}

impl CrashPoints {
    /// Points armed from `BINLOGD_CRASH_POINT` (abort the process there).
    pub fn from_env() -> CrashPoints {
        CrashPoints {
            armed: Default::default(),
            fired: Default::default(),
            abort_at: std::env::var("BINLOGD_CRASH_POINT").ok().map(Arc::from),
        }
    }

    /// Arms `name`: its `skip`-th passage (0 = the first) runs `action`
    /// and fails the operation.
    pub fn arm(&self, name: &'static str, skip: u64, action: impl Fn() + Send + Sync + 'static) {
        assert!(ALL.contains(&name), "unknown crash point {name}");
        self.armed.lock().insert(name, (skip, Box::new(action)));
    }

    /// Whether `name` was armed and reached.
    pub fn fired(&self, name: &str) -> bool {
        self.fired.lock().contains(&name)
    }

    /// Called at each named point on the way.
    pub fn hit(&self, name: &'static str) -> io::Result<()> {
        debug_assert!(ALL.contains(&name), "unregistered crash point {name}");
        if self.abort_at.as_deref() == Some(name) {
            eprintln!("binlogd: crash point {name} reached, aborting (BINLOGD_CRASH_POINT)");
            std::process::abort();
        }
        let mut armed = self.armed.lock();
        if let Some((skip, _)) = armed.get_mut(name) {
            if *skip > 0 {
                *skip -= 1;
                return Ok(());
            }
            let (_, action) = armed.remove(name).unwrap();
            drop(armed);
            self.fired.lock().push(name);
            action();
            return Err(io::Error::other(format!("crash point {name}")));
        }
        Ok(())
    }
}
