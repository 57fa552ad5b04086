//! `binlogd_engine_memory_limit`: one counter of estimated bytes held by
//! row versions, clustered-key entries and secondary index entries.
//!
//! Writes that add data reserve first and fail with 1114 when the limit
//! would be passed, so a full engine refuses work instead of the process
//! dying. Deletes, rollbacks and recovery reserve unconditionally: they are
//! how a full engine gets room back, and recovery must load what was
//! committed whatever the limit is now.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub(crate) struct MemoryAccount {
    used_bytes: AtomicU64,
}

impl MemoryAccount {
    /// Reserves `bytes` unless that would pass `limit_bytes`.
    pub(crate) fn try_reserve(&self, bytes: u64, limit_bytes: u64) -> bool {
        self.used_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| used.checked_add(bytes).filter(|&after| after <= limit_bytes))
            .is_ok()
    }

    pub(crate) fn force_reserve(&self, bytes: u64) {
        self.used_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn release(&self, bytes: u64) {
        let previous = self.used_bytes.fetch_sub(bytes, Ordering::Relaxed);
        debug_assert!(previous >= bytes, "released {bytes} bytes of {previous}");
    }

    pub(crate) fn used_bytes(&self) -> u64 {
        self.used_bytes.load(Ordering::Relaxed)
    }
}
