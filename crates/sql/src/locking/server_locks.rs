//! Every session's explicit locks in one table behind one mutex, with a
//! condition variable for the waiters.
//!
//! - The global read lock (FTWRL) is shared: several sessions may hold it.
//!   While anyone holds it, writing statements and commits of other
//!   sessions wait (`lock_wait_timeout`, then 1205); the holder's own are
//!   refused (1223). Taking it waits for the writers already inside a
//!   statement or a commit to leave, and a pending request holds back new
//!   writers, so FTWRL cannot starve under a steady write load (MySQL's
//!   pending scoped S lock outranks new IX requests the same way).
//! - Table locks (LOCK TABLES): a READ lock keeps other sessions from
//!   writing the table, a WRITE lock from reading or writing it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};
use protocol::MysqlError;

use crate::error::SqlResult;

/// A session, by its connection id.
pub(crate) type SessionId = u32;

/// A table as `(database, table)`.
pub(crate) type TableName = (String, String);

#[derive(Default)]
pub struct ServerLocks {
    state: Mutex<LockTable>,
    changed: Condvar,
    /// Whether any session holds a table lock: when none does, a
    /// statement need not work out which tables it touches.
    table_locks_held: AtomicBool,
}

#[derive(Default)]
struct LockTable {
    global_read_holders: HashSet<SessionId>,
    global_read_pending: usize,
    /// Sessions inside a writing statement or a commit, by nesting depth
    /// (a DDL statement's implicit commit enters again).
    writers: HashMap<SessionId, usize>,
    tables: HashMap<TableName, TableLocks>,
}

#[derive(Default)]
struct TableLocks {
    readers: HashSet<SessionId>,
    writer: Option<SessionId>,
}

impl LockTable {
    fn blocks_writer(&self, session: SessionId) -> bool {
        let others_hold = self.global_read_holders.iter().any(|&holder| holder != session);
        // A session already inside a write finishes it (re-entry never waits).
        let entered = self.writers.contains_key(&session);
        !entered && (others_hold || self.global_read_pending > 0)
    }

    fn table_conflict(&self, session: SessionId, table: &TableName, write: bool) -> bool {
        let Some(locks) = self.tables.get(table) else { return false };
        let foreign_writer = locks.writer.is_some_and(|writer| writer != session);
        let foreign_reader = locks.readers.iter().any(|&reader| reader != session);
        foreign_writer || (write && foreign_reader)
    }
}

/// 1205 ER_LOCK_WAIT_TIMEOUT.
pub(crate) fn lock_wait_timeout() -> MysqlError {
    MysqlError::new(1205, "HY000", "Lock wait timeout exceeded; try restarting transaction")
}

/// 1223 ER_CANT_UPDATE_WITH_READLOCK.
pub(crate) fn conflicting_read_lock() -> MysqlError {
    MysqlError::new(1223, "HY000", "Can't execute the query because you have a conflicting read lock")
}

impl ServerLocks {
    /// Waits until `blocked` is false, or `timeout` passes (1205).
    /// The timeout is read only when there is something to wait for.
    fn wait_while(
        &self,
        state: &mut MutexGuard<'_, LockTable>,
        timeout: impl FnOnce() -> Duration,
        blocked: impl Fn(&LockTable) -> bool,
    ) -> SqlResult<()> {
        if !blocked(state) {
            return Ok(());
        }
        let deadline = Instant::now().checked_add(timeout());
        while blocked(state) {
            match deadline {
                Some(deadline) => {
                    if self.changed.wait_until(state, deadline).timed_out() && blocked(state) {
                        return Err(lock_wait_timeout());
                    }
                }
                None => self.changed.wait(state),
            }
        }
        Ok(())
    }

    /// FLUSH TABLES WITH READ LOCK: waits for the writers inside a
    /// statement or a commit to leave, then holds the lock.
    pub fn acquire_global_read(&self, session: SessionId, timeout: impl FnOnce() -> Duration) -> SqlResult<()> {
        let mut state = self.state.lock();
        if state.global_read_holders.contains(&session) {
            return Ok(());
        }
        state.global_read_pending += 1;
        let waited = self.wait_while(&mut state, timeout, |state| state.writers.keys().any(|&writer| writer != session));
        state.global_read_pending -= 1;
        if waited.is_ok() {
            state.global_read_holders.insert(session);
        }
        drop(state);
        self.changed.notify_all();
        waited
    }

    /// Whether `session` holds the global read lock.
    pub fn holds_global_read(&self, session: SessionId) -> bool {
        self.state.lock().global_read_holders.contains(&session)
    }

    /// Enters a writing statement or a commit: refused (1223) to a holder of
    /// the global read lock, waits while another session holds it.
    pub fn enter_writer(&self, session: SessionId, timeout: impl FnOnce() -> Duration) -> SqlResult<WriterGuard<'_>> {
        let mut state = self.state.lock();
        if state.global_read_holders.contains(&session) {
            return Err(conflicting_read_lock());
        }
        self.wait_while(&mut state, timeout, |state| state.blocks_writer(session))?;
        *state.writers.entry(session).or_insert(0) += 1;
        Ok(WriterGuard { locks: self, session })
    }

    fn leave_writer(&self, session: SessionId) {
        let mut state = self.state.lock();
        if let Some(depth) = state.writers.get_mut(&session) {
            *depth -= 1;
            if *depth == 0 {
                state.writers.remove(&session);
            }
        }
        drop(state);
        self.changed.notify_all();
    }

    /// LOCK TABLES: waits until no other session holds a conflicting lock
    /// on any of `tables`, then takes them all at once.
    pub fn lock_tables(&self, session: SessionId, tables: &[(TableName, bool)], timeout: impl FnOnce() -> Duration) -> SqlResult<()> {
        let mut state = self.state.lock();
        self.wait_while(&mut state, timeout, |state| tables.iter().any(|(table, write)| state.table_conflict(session, table, *write)))?;
        for (table, write) in tables {
            let locks = state.tables.entry(table.clone()).or_default();
            if *write {
                locks.writer = Some(session);
            } else {
                locks.readers.insert(session);
            }
        }
        self.table_locks_held.store(!state.tables.is_empty(), Ordering::Release);
        Ok(())
    }

    /// Whether any session holds a table lock now.
    pub fn table_locks_held(&self) -> bool {
        self.table_locks_held.load(Ordering::Acquire)
    }

    /// A statement of a session without LOCK TABLES: waits while another
    /// session's table lock conflicts with reading (or writing) `tables`.
    pub fn wait_for_tables(&self, session: SessionId, tables: &[(TableName, bool)], timeout: impl FnOnce() -> Duration) -> SqlResult<()> {
        let mut state = self.state.lock();
        if state.tables.is_empty() {
            return Ok(());
        }
        self.wait_while(&mut state, timeout, |state| tables.iter().any(|(table, write)| state.table_conflict(session, table, *write)))
    }

    /// UNLOCK TABLES (table locks only).
    pub fn unlock_tables(&self, session: SessionId) {
        let mut state = self.state.lock();
        state.tables.retain(|_, locks| {
            locks.readers.remove(&session);
            if locks.writer == Some(session) {
                locks.writer = None;
            }
            !locks.readers.is_empty() || locks.writer.is_some()
        });
        self.table_locks_held.store(!state.tables.is_empty(), Ordering::Release);
        drop(state);
        self.changed.notify_all();
    }

    /// UNLOCK TABLES (the global read lock).
    pub fn release_global_read(&self, session: SessionId) {
        let removed = self.state.lock().global_read_holders.remove(&session);
        if removed {
            self.changed.notify_all();
        }
    }

    /// Everything `session` holds, at disconnect.
    pub fn release_all(&self, session: SessionId) {
        self.release_global_read(session);
        self.unlock_tables(session);
    }
}

/// A session inside a writing statement or a commit; leaving on drop.
pub struct WriterGuard<'a> {
    locks: &'a ServerLocks,
    session: SessionId,
}

impl Drop for WriterGuard<'_> {
    fn drop(&mut self) {
        self.locks.leave_writer(self.session);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn short() -> Duration {
        Duration::from_millis(50)
    }

    fn long() -> Duration {
        Duration::from_secs(10)
    }

    fn table(name: &str) -> TableName {
        ("d".to_string(), name.to_string())
    }

    #[test]
    fn the_global_read_lock_refuses_its_holder_and_holds_other_writers_until_released() {
        let locks = Arc::new(ServerLocks::default());
        locks.acquire_global_read(1, long).unwrap();
        assert_eq!(locks.enter_writer(1, long).err().map(|e| e.code), Some(1223));
        assert_eq!(locks.enter_writer(2, short).err().map(|e| e.code), Some(1205));
        let waiter = {
            let locks = Arc::clone(&locks);
            std::thread::spawn(move || locks.enter_writer(2, long).map(|_| ()).map_err(|e| e.code))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the writer waits while the lock is held");
        locks.release_all(1);
        assert_eq!(waiter.join().unwrap(), Ok(()));
    }

    #[test]
    fn the_global_read_lock_waits_for_writers_inside_and_a_writer_reenters_without_waiting() {
        let locks = ServerLocks::default();
        let outer = locks.enter_writer(2, long).unwrap();
        // A DDL statement's implicit commit enters again.
        let inner = locks.enter_writer(2, short).unwrap();
        assert_eq!(locks.acquire_global_read(1, short).err().map(|e| e.code), Some(1205));
        drop(inner);
        drop(outer);
        locks.acquire_global_read(1, short).unwrap();
        assert!(locks.holds_global_read(1));
    }

    #[test]
    fn a_read_lock_holds_writers_and_a_write_lock_holds_readers_of_other_sessions() {
        let locks = ServerLocks::default();
        locks.lock_tables(1, &[(table("t"), false)], long).unwrap();
        assert!(locks.table_locks_held());
        locks.wait_for_tables(2, &[(table("t"), false)], short).unwrap();
        assert_eq!(locks.wait_for_tables(2, &[(table("t"), true)], short).err().map(|e| e.code), Some(1205));
        locks.wait_for_tables(2, &[(table("u"), true)], short).unwrap();
        locks.lock_tables(2, &[(table("t"), false)], short).unwrap();
        locks.unlock_tables(1);
        locks.unlock_tables(2);
        locks.lock_tables(3, &[(table("t"), true)], short).unwrap();
        assert_eq!(locks.wait_for_tables(4, &[(table("t"), false)], short).err().map(|e| e.code), Some(1205));
        locks.release_all(3);
        assert!(!locks.table_locks_held());
        locks.wait_for_tables(4, &[(table("t"), true)], short).unwrap();
    }
}
