//! Named crash points, `binlog::<stage>::<step>`.
//!
//! A test arms a point on a log's [`CrashPoints`]; when execution reaches
//! it, the armed action runs (typically: freeze the simulated storage, so
//! nothing after the point becomes durable) and the operation fails with a
//! "crash" error. For tests that kill a real process, the environment
//! variable `BINLOGD_CRASH_POINT=<name>` aborts the process at that point.
//!
//! Every point is listed in [`ALL`]; the crash tests iterate over it, so a
//! point added here is a point tested.

use std::collections::HashMap;
use std::io;
use std::marker::PhantomData;
use std::sync::Arc;

use parking_lot::Mutex;

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
pub const PROMOTE_ROLL_BACK: &[&str] = &[
    PROMOTE_AFTER_HEADER_SYNC,
    PROMOTE_AFTER_REGISTER,
    PROMOTE_AFTER_RENAME,
    PROMOTE_AFTER_ROTATE_EVENT,
    PROMOTE_AFTER_NEW_FILE,
];
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

type Action = Box<dyn Fn() + Send + Sync>;

/// The points a crate knows: each crate that reaches crash points lists
/// them once (its `ALL`) and names its registry
/// `CrashPoints<ItsPoints>`, so arming a point of another crate's list is
/// caught at once.
pub trait KnownPoints: Send + Sync + 'static {
    const ALL: &'static [&'static str];
}

/// The binary log's points.
pub struct BinlogPoints;

impl KnownPoints for BinlogPoints {
    const ALL: &'static [&'static str] = ALL;
}

/// The armed points of one log (or one process), for the points `K` lists.
pub struct CrashPoints<K: KnownPoints = BinlogPoints> {
    armed: Arc<Mutex<HashMap<&'static str, (u64, Action)>>>,
    fired: Arc<Mutex<Vec<&'static str>>>,
    abort_at: Option<Arc<str>>,
    known: PhantomData<K>,
}

impl<K: KnownPoints> Default for CrashPoints<K> {
    fn default() -> Self {
        CrashPoints { armed: Default::default(), fired: Default::default(), abort_at: None, known: PhantomData }
    }
}

// Clones share the armed set: the log and its tests hold the same points.
impl<K: KnownPoints> Clone for CrashPoints<K> {
    fn clone(&self) -> Self {
        CrashPoints {
            armed: Arc::clone(&self.armed),
            fired: Arc::clone(&self.fired),
            abort_at: self.abort_at.clone(),
            known: PhantomData,
        }
    }
}

impl<K: KnownPoints> CrashPoints<K> {
    /// Points armed from `BINLOGD_CRASH_POINT` (abort the process there).
    pub fn from_env() -> Self {
        CrashPoints { abort_at: std::env::var("BINLOGD_CRASH_POINT").ok().map(Arc::from), ..Self::default() }
    }

    /// Arms `name`: its `skip`-th passage (0 = the first) runs `action`
    /// and fails the operation.
    pub fn arm(&self, name: &'static str, skip: u64, action: impl Fn() + Send + Sync + 'static) {
        assert!(K::ALL.contains(&name), "unknown crash point {name}");
        self.armed.lock().insert(name, (skip, Box::new(action)));
    }

    /// Whether `name` was armed and reached.
    pub fn fired(&self, name: &str) -> bool {
        self.fired.lock().contains(&name)
    }

    /// Called at each named point on the way.
    pub fn hit(&self, name: &'static str) -> io::Result<()> {
        debug_assert!(K::ALL.contains(&name), "unregistered crash point {name}");
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
