//! Named crash points of the database layer, `database::<stage>::<step>`,
//! in the same pattern as `binlog::crash_points` and `redo::crash_points`
//! (one registry per crate, because a point is registered where it is
//! reached).
//!
//! A test arms a point on the database's [`CrashPoints`]; when execution
//! reaches it the armed action runs (typically: freeze the simulated
//! storage) and the commit fails with a "crash" error. For tests that kill
//! a real process, `BINLOGD_CRASH_POINT=<name>` aborts the process there.
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
//! Every point is listed in [`ALL`]; the crash tests iterate over it.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use parking_lot::Mutex;

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

pub const ALL: &[&str] = &[COMMIT_BEFORE_PREPARE, COMMIT_AFTER_PREPARE, RESET_AFTER_MARKER, RESET_AFTER_REDO_RECORD, RESET_AFTER_BINLOG_RESET];

type Action = Box<dyn Fn() + Send + Sync>;

/// The armed points of one database (or one process).
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
