//! Purge: dropping row versions no read view can see any more.
//!
//! Each commit queues the keys it wrote with its sequence number; purge
//! takes entries whose commit is at or before the oldest open view and
//! trims their chains (a chain of one committed delete marker disappears
//! with its index entries). Commits run a bounded amount of purge each, so
//! the work keeps pace with writes without a background thread. A view held
//! open for long (a REPEATABLE READ transaction) holds the queue back; the
//! versions it keeps count against `binlogd_engine_memory_limit`, which is
//! the bound.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::engine::Shared;
use crate::table::Table;

pub(crate) struct PurgeEntry {
    pub(crate) seq: u64,
    pub(crate) table: Weak<Table>,
    pub(crate) key: Vec<u8>,
}

#[derive(Default)]
pub(crate) struct PurgeQueue {
    entries: Mutex<VecDeque<PurgeEntry>>,
}

impl PurgeQueue {
    pub(crate) fn push_all(&self, entries: impl IntoIterator<Item = PurgeEntry>) {
        self.entries.lock().extend(entries);
    }

    /// Up to `budget` entries committed at or before `horizon`, from the
    /// front. Commits push in roughly sequence order; an entry stuck behind
    /// a later one just waits for the next round.
    fn take(&self, horizon: u64, budget: usize) -> Vec<PurgeEntry> {
        let mut entries = self.entries.lock();
        let ready = entries.iter().take(budget).take_while(|entry| entry.seq <= horizon).count();
        entries.drain(..ready).collect()
    }
}

impl Shared {
    /// Purges up to `budget` queued keys; returns how many it examined.
    pub(crate) fn purge_pending(&self, budget: usize) -> usize {
        let horizon = self.views.horizon(&self.commits);
        let entries = self.purge.take(horizon, budget);
        let mut examined = 0;
        let mut index = 0;
        while index < entries.len() {
            // One write lock per run of entries of the same table.
            let Some(table) = entries[index].table.upgrade() else {
                index += 1;
                continue;
            };
            let mut data = table.data.write();
            while index < entries.len() && std::ptr::eq(entries[index].table.as_ptr(), Arc::as_ptr(&table)) {
                data.purge(&entries[index].key, horizon, &self.memory);
                examined += 1;
                index += 1;
            }
        }
        examined
    }
}
