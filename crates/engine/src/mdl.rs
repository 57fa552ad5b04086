//! Table metadata locks: DDL waits until no open transaction has written
//! the table, and writers wait while DDL runs, like MySQL's MDL (shared
//! for DML, exclusive for DDL). Readers take none: they read whatever
//! definition the table has when a batch starts.
//!
//! A transaction holds its writer registration until it commits or rolls
//! back, so DDL on a table the same session has written must come after
//! that session's commit (MySQL commits implicitly before DDL). Waits on
//! both sides end with 1205 after the session's `lock_wait_timeout`, as in
//! MySQL (not `innodb_lock_wait_timeout`, which bounds row lock waits). A writer
//! that waited behind ALTER TABLE finds the table replaced and gets 1412,
//! on which the SQL layer runs its statement again against the new table.

use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{EngineError, Result};

#[derive(Debug, Default)]
pub(crate) struct MetadataLock {
    state: Mutex<MdlState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct MdlState {
    writers: usize,
    exclusive: bool,
}

impl MetadataLock {
    pub(crate) fn enter_writer(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock();
        while state.exclusive {
            if self.changed.wait_until(&mut state, deadline).timed_out() && state.exclusive {
                return Err(EngineError::LockWaitTimeout);
            }
        }
        state.writers += 1;
        Ok(())
    }

    pub(crate) fn exit_writer(&self) {
        let mut state = self.state.lock();
        state.writers -= 1;
        if state.writers == 0 {
            self.changed.notify_all();
        }
    }

    /// Waits for other DDL and then for every writer to finish. While this
    /// waits, new writers already queue behind it, so a busy table cannot
    /// starve DDL.
    pub(crate) fn enter_exclusive(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock();
        while state.exclusive {
            if self.changed.wait_until(&mut state, deadline).timed_out() && state.exclusive {
                return Err(EngineError::LockWaitTimeout);
            }
        }
        state.exclusive = true;
        while state.writers > 0 {
            if self.changed.wait_until(&mut state, deadline).timed_out() && state.writers > 0 {
                state.exclusive = false;
                self.changed.notify_all();
                return Err(EngineError::LockWaitTimeout);
            }
        }
        Ok(())
    }

    pub(crate) fn exit_exclusive(&self) {
        self.state.lock().exclusive = false;
        self.changed.notify_all();
    }
}
