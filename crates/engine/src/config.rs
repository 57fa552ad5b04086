//! The engine's variables. Both are dynamic: a change applies to the next
//! lock wait or the next write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// MySQL's default `innodb_lock_wait_timeout` (50 seconds).
pub const LOCK_WAIT_TIMEOUT_DEFAULT: Duration = Duration::from_secs(50);
/// MySQL's default `lock_wait_timeout` (one year), the bound on metadata
/// lock waits: DDL behind an open writer, and a writer behind DDL.
pub const METADATA_LOCK_WAIT_TIMEOUT_DEFAULT: Duration = Duration::from_secs(31_536_000);
/// Default `binlogd_engine_memory_limit`: 1 GiB.
pub const MEMORY_LIMIT_DEFAULT_BYTES: u64 = 1 << 30;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// `binlogd_engine_memory_limit`: estimated bytes of rows, row versions
    /// and index entries past which writes fail with 1114.
    pub memory_limit_bytes: u64,
    /// `innodb_lock_wait_timeout`. MySQL counts whole seconds; a
    /// `Duration` lets tests use shorter waits.
    pub lock_wait_timeout: Duration,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig { memory_limit_bytes: MEMORY_LIMIT_DEFAULT_BYTES, lock_wait_timeout: LOCK_WAIT_TIMEOUT_DEFAULT }
    }
}

/// The live values, readable without a lock on every write.
#[derive(Debug)]
pub(crate) struct Variables {
    memory_limit_bytes: AtomicU64,
    lock_wait_timeout_micros: AtomicU64,
}

impl Variables {
    pub(crate) fn new(config: &EngineConfig) -> Variables {
        let variables = Variables { memory_limit_bytes: AtomicU64::new(0), lock_wait_timeout_micros: AtomicU64::new(0) };
        variables.set_memory_limit_bytes(config.memory_limit_bytes);
        variables.set_lock_wait_timeout(config.lock_wait_timeout);
        variables
    }

    pub(crate) fn memory_limit_bytes(&self) -> u64 {
        self.memory_limit_bytes.load(Ordering::Relaxed)
    }

    pub(crate) fn set_memory_limit_bytes(&self, bytes: u64) {
        self.memory_limit_bytes.store(bytes, Ordering::Relaxed);
    }

    pub(crate) fn lock_wait_timeout(&self) -> Duration {
        Duration::from_micros(self.lock_wait_timeout_micros.load(Ordering::Relaxed))
    }

    pub(crate) fn set_lock_wait_timeout(&self, timeout: Duration) {
        let micros = u64::try_from(timeout.as_micros()).unwrap_or(u64::MAX);
        self.lock_wait_timeout_micros.store(micros, Ordering::Relaxed);
    }
}
