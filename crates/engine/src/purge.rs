//! Purge: dropping row versions no read view can see any more.
//!
//! Each commit queues the keys it wrote that have history (a first insert
//! of a key has none: only a later write, which queues the key itself,
//! gives purge something to do there) with its sequence number; purge
//! takes entries whose commit is at or before the oldest open view and
//! trims their chains (a chain of one committed delete marker disappears
//! with its index entries). A commit earns twice as many keys of purge as
//! it queued, so the work keeps pace with writes and works off what a
//! long read view held back; it does up to [`PURGE_INLINE_KEYS_MAX`]
//! itself and hands a larger share to the background purge thread
//! (`purge_worker.rs`), as InnoDB leaves purge to its purge threads: a
//! large transaction's share is a second of work that would otherwise
//! delay its COMMIT and, done in one go, other sessions' writes.
//!
//! Under the cross-log group commit (`innodb_flush_log_at_trx_commit =
//! 1`) the small commits' share goes to the thread too, at a chosen
//! moment: the group's leader asks for it as the group's fdatasyncs
//! begin ([`Engine::purge_in_background`]). Every session then waits for
//! the group, so the purge runs on cores that would idle through the
//! fsyncs and takes table locks no session is waiting for; measured with
//! `bench engine --sessions 16`, purge inline was ~10% of the sessions'
//! CPU, all of it between two groups. Past [`PURGE_QUEUED_KEYS_DEFERRED_MAX`]
//! queued keys commits purge inline again, so the queue stays bounded
//! when the thread falls behind.
//!
//! Either way purge works in batches of [`PURGE_BATCH_KEYS`] keys, taking
//! each table's write lock once per run of the batch's keys in that table
//! (and letting go of it after), so no table is held for more than one
//! batch. A view held open for long (a REPEATABLE READ transaction) holds
//! the queue back; the versions it keeps count against
//! `binlogd_engine_memory_limit`, which is the bound.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::engine::Shared;
use crate::table::Table;

/// Most keys a commit purges itself before answering; the rest of its
/// budget goes to the background thread.
pub(crate) const PURGE_INLINE_KEYS_MAX: usize = 1024;
/// Keys taken from the queue (and purged under at most one hold of each
/// table's write lock) at a time.
pub(crate) const PURGE_BATCH_KEYS: usize = 256;
/// Most queued keys commits leave to the background thread when purge is
/// deferred to group syncs: ~80 groups of 16 small transactions, a few
/// hundred KiB of old versions.
pub const PURGE_QUEUED_KEYS_DEFERRED_MAX: usize = 4096;

pub(crate) struct PurgeEntry {
    pub(crate) seq: u64,
    pub(crate) table: Weak<Table>,
    pub(crate) key: Vec<u8>,
}

#[derive(Default)]
pub(crate) struct PurgeQueue {
    entries: Mutex<VecDeque<PurgeEntry>>,
    /// `entries.len()`, read without the lock by every commit.
    queued_keys: AtomicUsize,
    /// Small commits leave their purge to the background thread, which
    /// the group commit's leader wakes (`Engine::defer_purge_to_group_syncs`).
    deferred_to_group_syncs: AtomicBool,
}

impl PurgeQueue {
    pub(crate) fn push_all(&self, entries: impl IntoIterator<Item = PurgeEntry>) {
        let mut queued = self.entries.lock();
        queued.extend(entries);
        self.queued_keys.store(queued.len(), Ordering::Relaxed);
    }

    pub(crate) fn queued_keys(&self) -> usize {
        self.queued_keys.load(Ordering::Relaxed)
    }

    pub(crate) fn set_deferred_to_group_syncs(&self, deferred: bool) {
        self.deferred_to_group_syncs.store(deferred, Ordering::Relaxed);
    }

    /// Whether a commit leaves its share of purge to the background thread.
    fn defers_commit_purge(&self) -> bool {
        self.deferred_to_group_syncs.load(Ordering::Relaxed) && self.queued_keys() <= PURGE_QUEUED_KEYS_DEFERRED_MAX
    }

    /// Up to `budget` entries committed at or before `horizon`, from the
    /// front. Commits push in roughly sequence order; an entry stuck behind
    /// a later one just waits for the next round.
    fn take(&self, horizon: u64, budget: usize) -> Vec<PurgeEntry> {
        let mut entries = self.entries.lock();
        let ready = entries.iter().take(budget).take_while(|entry| entry.seq <= horizon).count();
        let taken = entries.drain(..ready).collect();
        self.queued_keys.store(entries.len(), Ordering::Relaxed);
        taken
    }
}

impl Shared {
    /// Purge after a commit that earned `budget` keys of it: up to
    /// [`PURGE_INLINE_KEYS_MAX`] here, and a wake-up of the background
    /// thread when the budget is larger; nothing while purge is deferred
    /// to group syncs and the queue is within its bound.
    pub(crate) fn purge_after_commit(&self, budget: usize) {
        if self.purge.defers_commit_purge() {
            return;
        }
        self.purge_pending(budget.min(PURGE_INLINE_KEYS_MAX));
        if budget > PURGE_INLINE_KEYS_MAX && !self.purge_worker.request() {
            // No thread (it could not be started): the commit does it all.
            self.purge_pending(budget - PURGE_INLINE_KEYS_MAX);
        }
    }

    /// Purges up to `budget` queued keys, in batches; returns how many it
    /// took from the queue (stopping early when none is ready).
    pub(crate) fn purge_pending(&self, budget: usize) -> usize {
        let mut taken = 0;
        while taken < budget {
            let batch = self.purge_batch((budget - taken).min(PURGE_BATCH_KEYS));
            if batch == 0 {
                break;
            }
            taken += batch;
        }
        taken
    }

    /// Purges up to `keys` ready keys (at most [`PURGE_BATCH_KEYS`]) with
    /// the horizon as of now; returns how many it took from the queue.
    pub(crate) fn purge_batch(&self, keys: usize) -> usize {
        let horizon = self.views.horizon(&self.commits);
        let entries = self.purge.take(horizon, keys.min(PURGE_BATCH_KEYS));
        let mut index = 0;
        while index < entries.len() {
            // One write lock per run of entries of the same table.
            let Some(table) = entries[index].table.upgrade() else {
                index += 1;
                continue;
            };
            let mut data = table.data.write();
            // The versions purged are freed after the lock is let go:
            // freeing rows is most of a purge's time, and every reader and
            // writer of the table waits while it holds the lock.
            let mut removed = Vec::new();
            while index < entries.len() && std::ptr::eq(entries[index].table.as_ptr(), Arc::as_ptr(&table)) {
                removed.extend(data.purge(&entries[index].key, horizon, &self.memory));
                index += 1;
            }
            // Let go between runs: whoever waits is woken. (std's lock does
            // not hand itself over as `parking_lot`'s `unlock_fair` did, so
            // this thread may take it again first; the next run's queue
            // lookup comes in between.)
            drop(data);
            drop(removed);
        }
        entries.len()
    }
}
