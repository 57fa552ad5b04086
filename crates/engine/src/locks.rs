//! Row locks: exclusive locks on clustered keys and on unique-index
//! values, held until the transaction ends, with waits, a timeout
//! (`innodb_lock_wait_timeout`, 1205) and deadlock detection (1213).
//!
//! Waiters queue per lock and a release hands the lock to the first of
//! them, as InnoDB grants in order. Without the hand-off a deadlock victim
//! that retries at once can take back the lock its survivor was about to
//! get, and the two can make each other victims forever.
//!
//! Every lock is exclusive, so a waiting transaction waits for the lock's
//! owner (and for the waiters queued ahead of it, which become owners
//! before they can ask for anything else). A transaction about to wait
//! follows the chain owner → the lock that owner waits for → its owner …;
//! reaching itself means its wait closes a cycle, and it is the victim.
//! Any cycle is closed by some transaction starting or resuming a wait,
//! and that transaction runs the check under the same mutex, so no cycle
//! goes unnoticed.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::catalog::{IndexId, TableId};
use crate::error::{EngineError, Result};
use crate::registry::TrxId;

/// What a lock protects: a clustered key (`index` 0) or the value of a
/// unique index (`key` = the encoded index values).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct LockKey {
    pub(crate) table: TableId,
    pub(crate) index: IndexId,
    pub(crate) key: Vec<u8>,
}

/// Locks released under one hold of the lock table's mutex (InnoDB's
/// `LOCK_RELEASE_INTERVAL` is 1000): releasing 167,000 row locks in one
/// hold kept every other session's row lock requests waiting for
/// ~200 ms; with batches and no pause the releasing thread, asking for
/// the mutex again at once, still held it most of the time, and a session
/// needing it five times per transaction ran at a third of its rate.
pub(crate) const LOCK_RELEASE_BATCH_KEYS: usize = 256;
/// Longest pause between two batches of a release.
const LOCK_RELEASE_PAUSE_MAX: Duration = Duration::from_millis(5);

#[derive(Debug, Default)]
pub(crate) struct LockManager {
    table: Mutex<LockTable>,
    changed: Condvar,
    /// Pauses releases made between batches.
    #[cfg(test)]
    release_pauses: std::sync::atomic::AtomicUsize,
}

#[derive(Debug)]
struct Lock {
    owner: TrxId,
    /// Waiters in arrival order; the first gets the lock on release.
    queue: VecDeque<TrxId>,
}

#[derive(Debug, Default)]
struct LockTable {
    locks: HashMap<LockKey, Lock>,
    /// The lock each waiting transaction waits for.
    waiting: HashMap<TrxId, LockKey>,
    /// Locks made explicit for a transaction that holds them implicitly
    /// (see [`LockManager::lock_for_implicit_owner`]): it does not know of
    /// them, so its release takes them from here.
    converted: HashMap<TrxId, Vec<LockKey>>,
}

impl LockTable {
    fn owner(&self, key: &LockKey) -> Option<TrxId> {
        self.locks.get(key).map(|lock| lock.owner)
    }

    /// True when `trx` waiting for `key` closes a cycle.
    fn closes_cycle(&self, trx: TrxId, key: &LockKey) -> bool {
        let Some(mut owner) = self.owner(key) else { return false };
        // A chain visits each waiter at most once unless it loops without
        // `trx`, which the bound cuts short.
        for _ in 0..=self.waiting.len() {
            if owner == trx {
                return true;
            }
            let Some(next_key) = self.waiting.get(&owner) else { return false };
            let Some(next_owner) = self.owner(next_key) else { return false };
            owner = next_owner;
        }
        false
    }

    fn leave_queue(&mut self, trx: TrxId, key: &LockKey) {
        self.waiting.remove(&trx);
        if let Some(lock) = self.locks.get_mut(key) {
            lock.queue.retain(|&waiter| waiter != trx);
        }
    }
}

impl LockManager {
    /// Takes `key` for `trx`, waiting at most `timeout` for it.
    pub(crate) fn acquire(&self, trx: TrxId, key: &LockKey, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut table = self.table.lock();
        match table.locks.get_mut(key) {
            None => {
                table.locks.insert(key.clone(), Lock { owner: trx, queue: VecDeque::new() });
                return Ok(());
            }
            Some(lock) if lock.owner == trx => return Ok(()),
            Some(lock) => lock.queue.push_back(trx),
        }
        table.waiting.insert(trx, key.clone());
        loop {
            // A release hands the lock over while we sleep.
            if table.owner(key) == Some(trx) {
                return Ok(());
            }
            if table.closes_cycle(trx, key) {
                table.leave_queue(trx, key);
                tracing::debug!(trx, ?key, "deadlock: rolling back the requester");
                return Err(EngineError::Deadlock);
            }
            if self.changed.wait_until(&mut table, deadline).timed_out() && table.owner(key) != Some(trx) {
                table.leave_queue(trx, key);
                return Err(EngineError::LockWaitTimeout);
            }
        }
    }

    /// Takes `key` for `trx` if it is free (or `trx`'s already), without
    /// waiting.
    pub(crate) fn try_acquire(&self, trx: TrxId, key: &LockKey) -> bool {
        let mut table = self.table.lock();
        match table.locks.get(key) {
            None => {
                table.locks.insert(key.clone(), Lock { owner: trx, queue: VecDeque::new() });
                true
            }
            Some(lock) => lock.owner == trx,
        }
    }

    /// True when someone holds `key`.
    pub(crate) fn is_locked(&self, key: &LockKey) -> bool {
        self.table.lock().locks.contains_key(key)
    }

    /// Makes the implicit lock `writer` holds on `key` explicit: `writer`
    /// inserted the row there without a lock (the row was new) and has
    /// not committed or rolled it back, so whoever wants the row must wait
    /// for it (InnoDB's implicit-to-explicit conversion). The caller holds
    /// the table's lock and saw `writer`'s unstamped version. The writer
    /// may commit and stamp concurrently (stamps need only the table's read
    /// lock), so `still_unstamped` is asked again under the mutex: the
    /// writer stamps before its release takes this mutex, so while the
    /// version is unstamped here its release is still to come and will
    /// find this lock; once stamped, there is nothing to wait for.
    pub(crate) fn lock_for_implicit_owner(&self, writer: TrxId, key: &LockKey, still_unstamped: impl FnOnce() -> bool) {
        let mut table = self.table.lock();
        if !still_unstamped() {
            return;
        }
        if let Some(lock) = table.locks.get(key) {
            debug_assert_eq!(lock.owner, writer, "a lock on a row another transaction wrote without one");
            return;
        }
        table.locks.insert(key.clone(), Lock { owner: writer, queue: VecDeque::new() });
        table.converted.entry(writer).or_default().push(key.clone());
    }

    /// Releases the locks `trx` holds among `keys`, handing each to its
    /// first waiter, and those made explicit for it. A large release works
    /// in batches of
    /// [`LOCK_RELEASE_BATCH_KEYS`] and lets go of the mutex every lock
    /// request needs after each, for as long as the batch took, so a
    /// transaction that locked many rows neither stops every other session
    /// for the whole release nor takes the mutex back at once (InnoDB's
    /// `lock_release` also lets go of its mutex between batches). Waiters
    /// handed a lock in a batch are woken at its end.
    pub(crate) fn release_all<'k>(&self, trx: TrxId, keys: impl IntoIterator<Item = &'k LockKey>) {
        let converted = self.table.lock().converted.remove(&trx).unwrap_or_default();
        let mut keys = keys.into_iter().map(|key| -> &LockKey { key }).chain(converted.iter()).peekable();
        // Freed after the mutex is let go.
        let mut removed = Vec::new();
        loop {
            let started = Instant::now();
            let mut table = self.table.lock();
            let mut handed_over = false;
            for key in keys.by_ref().take(LOCK_RELEASE_BATCH_KEYS) {
                // One hash lookup for the usual case (no waiter): remove,
                // and put back only what stays locked.
                let Some((key, mut lock)) = table.locks.remove_entry(key) else { continue };
                if lock.owner != trx {
                    table.locks.insert(key, lock);
                    continue;
                }
                match lock.queue.pop_front() {
                    Some(next) => {
                        lock.owner = next;
                        table.waiting.remove(&next);
                        table.locks.insert(key, lock);
                        handed_over = true;
                    }
                    None => removed.push(key),
                }
            }
            drop(table);
            removed.clear();
            if handed_over {
                self.changed.notify_all();
            }
            if keys.peek().is_none() {
                return;
            }
            #[cfg(test)]
            self.release_pauses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::thread::sleep(started.elapsed().min(LOCK_RELEASE_PAUSE_MAX));
        }
    }

    /// Transactions waiting for a row lock right now.
    pub(crate) fn waiting_count(&self) -> usize {
        self.table.lock().waiting.len()
    }

    #[cfg(test)]
    fn owner(&self, key: &LockKey) -> Option<TrxId> {
        self.table.lock().owner(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    fn key(n: u8) -> LockKey {
        LockKey { table: 1, index: 0, key: vec![n] }
    }

    #[test]
    fn a_waiter_gets_the_lock_when_the_owner_releases() {
        let locks = Arc::new(LockManager::default());
        locks.acquire(1, &key(1), Duration::ZERO).unwrap();
        assert_eq!(locks.acquire(2, &key(1), Duration::from_millis(10)), Err(EngineError::LockWaitTimeout));
        let waiter = {
            let locks = Arc::clone(&locks);
            thread::spawn(move || locks.acquire(2, &key(1), Duration::from_secs(10)))
        };
        thread::sleep(Duration::from_millis(20));
        locks.release_all(1, [&key(1)]);
        waiter.join().unwrap().unwrap();
        assert_eq!(locks.owner(&key(1)), Some(2));
    }

    #[test]
    fn an_implicit_lock_is_made_explicit_only_while_its_writer_is_unstamped() {
        let locks = LockManager::default();
        // The writer stamped (and may have released) before the mutex was
        // taken: no lock for it, the row is free.
        locks.lock_for_implicit_owner(1, &key(1), || false);
        assert_eq!(locks.owner(&key(1)), None);
        assert!(locks.try_acquire(2, &key(1)));
        // Still unstamped: the lock is the writer's until its release.
        locks.lock_for_implicit_owner(3, &key(2), || true);
        assert_eq!(locks.owner(&key(2)), Some(3));
        assert!(!locks.try_acquire(2, &key(2)));
        locks.release_all(3, []);
        assert_eq!(locks.owner(&key(2)), None);
    }

    #[test]
    fn a_large_release_lets_go_of_the_mutex_between_batches() {
        let locks = LockManager::default();
        let keys: Vec<LockKey> =
            (0..2 * LOCK_RELEASE_BATCH_KEYS + 1).map(|n| LockKey { table: 1, index: 0, key: (n as u64).to_be_bytes().to_vec() }).collect();
        for key in &keys {
            locks.acquire(1, key, Duration::ZERO).unwrap();
        }
        locks.release_all(1, &keys);
        // Three batches (two full ones and one key): two pauses.
        assert_eq!(locks.release_pauses.load(std::sync::atomic::Ordering::Relaxed), 2);
        assert!(keys.iter().all(|key| locks.owner(key).is_none()));
    }

    #[test]
    fn waiters_handed_a_lock_in_an_early_batch_get_it() {
        let locks = Arc::new(LockManager::default());
        let keys: Vec<LockKey> =
            (0..3 * LOCK_RELEASE_BATCH_KEYS).map(|n| LockKey { table: 1, index: 0, key: (n as u64).to_be_bytes().to_vec() }).collect();
        for key in &keys {
            locks.acquire(1, key, Duration::ZERO).unwrap();
        }
        let waiters: Vec<_> = [0, LOCK_RELEASE_BATCH_KEYS + 5, keys.len() - 1]
            .into_iter()
            .enumerate()
            .map(|(n, position)| {
                let (locks, key) = (Arc::clone(&locks), keys[position].clone());
                thread::spawn(move || locks.acquire(10 + n as u64, &key, Duration::from_secs(10)))
            })
            .collect();
        while locks.waiting_count() < 3 {
            thread::yield_now();
        }
        locks.release_all(1, &keys);
        for waiter in waiters {
            waiter.join().unwrap().unwrap();
        }
        assert_eq!(locks.owner(&keys[0]), Some(10));
        assert_eq!(locks.owner(&keys[LOCK_RELEASE_BATCH_KEYS + 5]), Some(11));
        assert_eq!(locks.owner(&keys[keys.len() - 1]), Some(12));
        assert_eq!(locks.waiting_count(), 0);
    }

    #[test]
    fn the_transaction_closing_a_cycle_is_the_victim() {
        let locks = Arc::new(LockManager::default());
        locks.acquire(1, &key(1), Duration::ZERO).unwrap();
        locks.acquire(2, &key(2), Duration::ZERO).unwrap();
        let first = {
            let locks = Arc::clone(&locks);
            thread::spawn(move || locks.acquire(1, &key(2), Duration::from_secs(10)))
        };
        // Wait until trx 1 is registered as waiting.
        while locks.waiting_count() == 0 {
            thread::yield_now();
        }
        assert_eq!(locks.acquire(2, &key(1), Duration::from_secs(10)), Err(EngineError::Deadlock));
        locks.release_all(2, [&key(2)]);
        first.join().unwrap().unwrap();
    }
}
