//! Relay log counters, read by SHOW REPLICA STATUS and the benchmark.
//! "Current" counters go down when a transaction is applied; totals only
//! go up.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Debug, Default)]
pub struct RelayStats {
    /// Complete transactions in the ring not yet applied.
    pub memory_transactions: AtomicU64,
    /// Bytes in spill files not yet applied.
    pub spilled_bytes: AtomicU64,
    pub spilled_transactions: AtomicU64,
    pub spilled_bytes_total: AtomicU64,
    pub spilled_transactions_total: AtomicU64,
    /// Spilled transactions queued before they were complete (streamed to
    /// a worker while they arrive).
    pub streamed_transactions_total: AtomicU64,
    /// Bytes in relay-log files not yet applied (file relay log).
    pub file_bytes: AtomicU64,
    pub file_transactions: AtomicU64,
    /// Time the receiver waited for space (back-pressure).
    pub receiver_blocked_ns: AtomicU64,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RelayStatsSnapshot {
    /// Bytes in the memory ring not yet applied.
    pub memory_bytes: u64,
    /// Most bytes the ring ever held: never above its capacity.
    pub memory_bytes_peak: u64,
    pub memory_transactions: u64,
    pub spilled_bytes: u64,
    pub spilled_transactions: u64,
    pub spilled_bytes_total: u64,
    pub spilled_transactions_total: u64,
    pub streamed_transactions_total: u64,
    pub file_bytes: u64,
    pub file_transactions: u64,
    pub receiver_blocked: Duration,
}

impl RelayStats {
    pub fn sub(counter: &AtomicU64, amount: u64) {
        counter.fetch_sub(amount, Ordering::Relaxed);
    }

    pub fn add(counter: &AtomicU64, amount: u64) {
        counter.fetch_add(amount, Ordering::Relaxed);
    }

    pub fn add_blocked(&self, blocked: Duration) {
        if !blocked.is_zero() {
            self.receiver_blocked_ns.fetch_add(blocked.as_nanos() as u64, Ordering::Relaxed);
        }
    }

    /// The counters; the ring's bytes (`memory_bytes`, its peak) are the
    /// caller's, read from the ring under its lock.
    pub fn snapshot(&self, memory_bytes: u64, memory_bytes_peak: u64) -> RelayStatsSnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        RelayStatsSnapshot {
            memory_bytes,
            memory_bytes_peak,
            memory_transactions: load(&self.memory_transactions),
            spilled_bytes: load(&self.spilled_bytes),
            spilled_transactions: load(&self.spilled_transactions),
            spilled_bytes_total: load(&self.spilled_bytes_total),
            spilled_transactions_total: load(&self.spilled_transactions_total),
            streamed_transactions_total: load(&self.streamed_transactions_total),
            file_bytes: load(&self.file_bytes),
            file_transactions: load(&self.file_transactions),
            receiver_blocked: Duration::from_nanos(load(&self.receiver_blocked_ns)),
        }
    }
}
