//! Open read views. A view is the commit sequence number it reads as of;
//! purge may only drop a row version no open view can see, so every view
//! that outlives one table lock (a REPEATABLE READ transaction, a scan, a
//! checkpoint of a table) is registered here.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::registry::CommitState;

#[derive(Debug, Default)]
pub(crate) struct ViewRegistry {
    /// Sequence number → open views at it.
    open: Mutex<BTreeMap<u64, usize>>,
}

impl ViewRegistry {
    /// Opens a view at the last commit. The sequence number is read while
    /// the registry is locked, so purge (which also locks it) never computes
    /// its horizon between our read and our registration.
    pub(crate) fn open(self: &Arc<Self>, commits: &RwLock<CommitState>) -> ViewGuard {
        let mut open = self.open.lock();
        let seq = commits.read().last_commit_seq;
        *open.entry(seq).or_default() += 1;
        ViewGuard { registry: Arc::clone(self), seq }
    }

    /// Opens another view at `seq`, which an open view already holds (so
    /// purge has not passed it).
    pub(crate) fn open_at(self: &Arc<Self>, seq: u64) -> ViewGuard {
        let mut open = self.open.lock();
        debug_assert!(open.contains_key(&seq), "a view at {seq} opened without one holding it");
        *open.entry(seq).or_default() += 1;
        ViewGuard { registry: Arc::clone(self), seq }
    }

    /// The oldest sequence number any view may read as of: the oldest open
    /// view, or the last commit when none is open.
    pub(crate) fn horizon(&self, commits: &RwLock<CommitState>) -> u64 {
        let open = self.open.lock();
        match open.keys().next() {
            Some(&oldest) => oldest,
            None => commits.read().last_commit_seq,
        }
    }

    fn close(&self, seq: u64) {
        let mut open = self.open.lock();
        if let Some(count) = open.get_mut(&seq) {
            *count -= 1;
            if *count == 0 {
                open.remove(&seq);
            }
        }
    }
}

/// Keeps a view registered until dropped.
#[derive(Debug)]
pub(crate) struct ViewGuard {
    registry: Arc<ViewRegistry>,
    pub(crate) seq: u64,
}

impl Drop for ViewGuard {
    fn drop(&mut self) {
        self.registry.close(self.seq);
    }
}
