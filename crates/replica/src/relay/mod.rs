//! The relay log: where the receiver puts each transaction until a worker
//! has applied it. Either a bounded memory ring with spill files
//! ([`memory`], the default) or relay-log files ([`file`], MySQL's way).
//!
//! The receiver writes one transaction at a time: [`RelayLog::begin`],
//! [`RelayLog::append`] per event, then [`RelayLog::finish`] (which gives
//! the [`TransactionLocation`] the boundary queue entry carries) or
//! [`RelayLog::abandon`] when the connection ended in the middle. A worker
//! reads a location with [`RelayLog::events`] and gives it back with
//! [`RelayLog::release`] once the transaction committed.
//!
//! Streaming: once an open transaction of the memory relay log moved to a
//! spill file, [`RelayLog::streamed`] gives its location before it is
//! complete, and the receiver queues it then. A worker reading it waits
//! for the bytes still to come ([`spill`]), so a 1 GiB transaction is
//! applied while it arrives, with the same bounded memory (the spill
//! writer's buffer, one event in the reader). Its end is known when
//! [`RelayLog::finish`] marks the file complete; [`RelayLog::abandon`]
//! marks it abandoned and the worker's read fails (the transaction comes
//! again on the next connection). The file relay log does not stream: its
//! transactions are queued when complete.

pub mod events;
pub mod file;
pub mod memory;
mod prefault;
pub mod ring;
pub mod spill;
pub mod stats;

use std::path::PathBuf;
use std::sync::Arc;

use protocol::MysqlError;

use crate::errors;
use crate::stop::StopFlag;
use events::{EventSource, TransactionEvents};
use file::{FileRelayLog, OpenFileTransaction, RelayFile};
use memory::{MemoryRelayLog, OpenMemoryTransaction};
use spill::{SpillEnd, SpillFile};
use stats::{RelayStats, RelayStatsSnapshot};

/// IN_MEMORY_RELAYLOG_LIMIT: default and bounds (MySQL option rules).
pub const MEMORY_LIMIT_BYTES_DEFAULT: u64 = 128 << 20;
pub const MEMORY_LIMIT_BYTES_MIN: u64 = 32 << 20;
pub const MEMORY_LIMIT_BYTES_MAX: u64 = 4 << 30;
/// IN_MEMORY_RELAYLOG_SPILL_THRESHOLD default.
pub const SPILL_THRESHOLD_BYTES_DEFAULT: u64 = 16 << 20;
/// max_relay_log_size when 0 (= max_binlog_size's default, 1 GiB).
pub const RELAY_FILE_SIZE_MAX_BYTES_DEFAULT: u64 = 1 << 30;
/// A file transaction up to this size is read in one pread; larger ones
/// event by event.
const WHOLE_READ_BYTES_MAX: u64 = 16 << 20;

/// How the relay log is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayLogConfig {
    Memory { limit_bytes: u64, spill_threshold_bytes: u64, spill_directory: PathBuf },
    Files { directory: PathBuf, file_size_max_bytes: u64, space_limit_bytes: u64 },
}

impl RelayLogConfig {
    /// The memory relay log with the CHANGE REPLICATION SOURCE TO options'
    /// rules: limit within 32 MiB–4 GiB, threshold at most half the limit
    /// (an open transaction may then always grow to the threshold while
    /// complete ones drain: the ring cannot deadlock).
    pub fn memory(limit_bytes: u64, spill_threshold_bytes: u64, spill_directory: PathBuf) -> Result<RelayLogConfig, MysqlError> {
        if !(MEMORY_LIMIT_BYTES_MIN..=MEMORY_LIMIT_BYTES_MAX).contains(&limit_bytes) {
            return Err(errors::wrong_argument(
                "IN_MEMORY_RELAYLOG_LIMIT",
                &format!("{limit_bytes} is outside {MEMORY_LIMIT_BYTES_MIN}..{MEMORY_LIMIT_BYTES_MAX}"),
            ));
        }
        if spill_threshold_bytes == 0 || spill_threshold_bytes > limit_bytes / 2 {
            return Err(errors::wrong_argument(
                "IN_MEMORY_RELAYLOG_SPILL_THRESHOLD",
                &format!("{spill_threshold_bytes} must be between 1 and half of IN_MEMORY_RELAYLOG_LIMIT ({limit_bytes})"),
            ));
        }
        Ok(RelayLogConfig::Memory { limit_bytes, spill_threshold_bytes, spill_directory })
    }
}

/// Where a complete transaction's bytes are.
#[derive(Debug, Clone)]
pub enum TransactionLocation {
    /// `begin..end` of the memory ring.
    Memory { begin: u64, end: u64 },
    /// The whole of a spill file (one still being written when queued
    /// early: see [`RelayLog::streamed`]).
    Spilled(Arc<SpillFile>),
    /// `begin..end` of a relay-log file.
    File { file: Arc<RelayFile>, begin: u64, end: u64 },
}

impl TransactionLocation {
    pub fn length_bytes(&self) -> u64 {
        match self {
            TransactionLocation::Memory { begin, end } | TransactionLocation::File { begin, end, .. } => end - begin,
            TransactionLocation::Spilled(file) => file.length_bytes(),
        }
    }

    /// The spill file of a spilled transaction.
    pub fn spill_file(&self) -> Option<&Arc<SpillFile>> {
        match self {
            TransactionLocation::Spilled(file) => Some(file),
            _ => None,
        }
    }
}

/// Why an append returned early.
#[derive(Debug)]
pub enum AppendError {
    /// The receiver was asked to stop while waiting for space.
    Stopped,
    Failed(MysqlError),
}

impl From<MysqlError> for AppendError {
    fn from(error: MysqlError) -> Self {
        AppendError::Failed(error)
    }
}

enum Store {
    Memory(MemoryRelayLog),
    Files(FileRelayLog),
}

pub struct RelayLog {
    store: Store,
    stats: RelayStats,
}

/// The transaction being written.
pub struct OpenTransaction(OpenKind);

enum OpenKind {
    Memory(OpenMemoryTransaction),
    File(OpenFileTransaction),
}

impl OpenTransaction {
    /// Bytes appended so far.
    pub fn length_bytes(&self) -> u64 {
        match &self.0 {
            OpenKind::Memory(open) => open.length_bytes(),
            OpenKind::File(open) => open.length_bytes(),
        }
    }
}

impl RelayLog {
    pub fn open(config: &RelayLogConfig) -> Result<RelayLog, MysqlError> {
        let store = match config {
            RelayLogConfig::Memory { limit_bytes, spill_threshold_bytes, spill_directory } => {
                Store::Memory(MemoryRelayLog::new(*limit_bytes, *spill_threshold_bytes, spill_directory.clone()))
            }
            RelayLogConfig::Files { directory, file_size_max_bytes, space_limit_bytes } => {
                Store::Files(FileRelayLog::open(directory.clone(), *file_size_max_bytes, *space_limit_bytes)?)
            }
        };
        Ok(RelayLog { store, stats: RelayStats::default() })
    }

    pub fn is_memory(&self) -> bool {
        matches!(self.store, Store::Memory(_))
    }

    pub fn begin(&self) -> Result<OpenTransaction, MysqlError> {
        Ok(OpenTransaction(match &self.store {
            Store::Memory(memory) => OpenKind::Memory(memory.begin()),
            Store::Files(files) => OpenKind::File(files.begin()?),
        }))
    }

    /// Appends one event; may wait for space (back-pressure).
    pub fn append(&self, open: &mut OpenTransaction, event: &[u8], stop: &StopFlag) -> Result<(), AppendError> {
        match (&self.store, &mut open.0) {
            (Store::Memory(memory), OpenKind::Memory(open)) => memory.append(open, event, stop, &self.stats),
            (Store::Files(files), OpenKind::File(open)) => files.append(open, event, stop, &self.stats),
            _ => unreachable!("an open transaction of another relay log"),
        }
    }

    pub fn finish(&self, open: OpenTransaction) -> Result<TransactionLocation, MysqlError> {
        match (&self.store, open.0) {
            (Store::Memory(memory), OpenKind::Memory(open)) => memory.finish(open, &self.stats),
            (Store::Files(files), OpenKind::File(open)) => files.finish(open, &self.stats),
            _ => unreachable!("an open transaction of another relay log"),
        }
    }

    /// The location of the open transaction if it is in a spill file,
    /// readable before it is complete; counted as streamed.
    pub fn streamed(&self, open: &OpenTransaction) -> Option<TransactionLocation> {
        let file = match (&self.store, &open.0) {
            (Store::Memory(memory), OpenKind::Memory(open)) => memory.spill_file(open)?,
            _ => return None,
        };
        RelayStats::add(&self.stats.streamed_transactions_total, 1);
        Some(TransactionLocation::Spilled(file))
    }

    pub fn abandon(&self, open: OpenTransaction) -> Result<(), MysqlError> {
        match (&self.store, open.0) {
            (Store::Memory(memory), OpenKind::Memory(open)) => {
                memory.abandon(open);
                Ok(())
            }
            (Store::Files(files), OpenKind::File(open)) => files.abandon(open, &self.stats),
            _ => unreachable!("an open transaction of another relay log"),
        }
    }

    /// The events of `location`; `buffer` holds the bytes of a transaction
    /// read whole (memory, small file transactions); `stop` ends a wait for
    /// a streamed transaction's next bytes (with an error).
    pub fn events<'a>(
        &self,
        location: &'a TransactionLocation,
        buffer: &'a mut Vec<u8>,
        stop: &'a StopFlag,
    ) -> Result<TransactionEvents<'a>, MysqlError> {
        Ok(match (&self.store, location) {
            (Store::Memory(memory), TransactionLocation::Memory { begin, end }) => {
                memory.copy_out(*begin, *end, buffer);
                TransactionEvents::new(EventSource::Buffer(buffer), 0, end - begin)
            }
            (_, TransactionLocation::Spilled(file)) => TransactionEvents::new(EventSource::Spill(file, stop), 0, u64::MAX),
            (_, TransactionLocation::File { file, begin, end }) if end - begin <= WHOLE_READ_BYTES_MAX => {
                buffer.clear();
                buffer.resize((end - begin) as usize, 0);
                file.read_exact_at(buffer, *begin)?;
                TransactionEvents::new(EventSource::Buffer(buffer), 0, end - begin)
            }
            (_, TransactionLocation::File { file, begin, end }) => TransactionEvents::new(EventSource::File(file), *begin, *end),
            (Store::Files(_), TransactionLocation::Memory { .. }) => unreachable!("a memory location in a file relay log"),
        })
    }

    /// The transaction at `location` was applied (or will never be): its
    /// space is free again. A spill file goes when its last handle drops;
    /// the spill counters hold complete ones only.
    pub fn release(&self, location: &TransactionLocation) {
        match (&self.store, location) {
            (Store::Memory(memory), TransactionLocation::Memory { begin, end }) => memory.release(*begin, *end, &self.stats),
            (_, TransactionLocation::Spilled(file)) if file.end() != SpillEnd::Complete => {}
            (_, TransactionLocation::Spilled(file)) => {
                RelayStats::sub(&self.stats.spilled_bytes, file.length_bytes());
                RelayStats::sub(&self.stats.spilled_transactions, 1);
            }
            (Store::Files(files), TransactionLocation::File { begin, end, .. }) => files.release(*begin, *end, &self.stats),
            _ => unreachable!("a location of another relay log"),
        }
    }

    pub fn stats(&self) -> RelayStatsSnapshot {
        let (memory_bytes, memory_bytes_peak) = match &self.store {
            Store::Memory(memory) => memory.used_bytes_and_peak(),
            Store::Files(_) => (0, 0),
        };
        self.stats.snapshot(memory_bytes, memory_bytes_peak)
    }

    /// The memory ring's size (0 for the file relay log).
    pub fn memory_limit_bytes(&self) -> u64 {
        match &self.store {
            Store::Memory(memory) => memory.limit_bytes(),
            Store::Files(_) => 0,
        }
    }
}
