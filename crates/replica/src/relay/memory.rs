//! The in-memory relay log (IN_MEMORY_RELAYLOG_ENABLED=1, the default): a
//! [`ByteRing`] of IN_MEMORY_RELAYLOG_LIMIT bytes, plus spill files for
//! transactions larger than IN_MEMORY_RELAYLOG_SPILL_THRESHOLD.
//!
//! An open transaction grows in the ring until its next event would take
//! it over the threshold; then its bytes so far move to a spill file (in
//! 1 MiB pieces) and are taken back from the ring, and the rest of it goes
//! to that file. Since the threshold is at most half the ring, the open
//! transaction never needs more than half the ring, and complete
//! transactions ahead of it are released as they are applied: a full ring
//! makes the receiver wait, never deadlock.

use std::path::PathBuf;
use std::sync::Arc;

use protocol::MysqlError;

use crate::relay::ring::ByteRing;
use crate::relay::spill::{SpillFile, SpillWriter};
use crate::relay::stats::RelayStats;
use crate::relay::{AppendError, TransactionLocation};
use crate::stop::StopFlag;

/// Size of the pieces an open transaction moves to its spill file in.
const SPILL_MOVE_PIECE_BYTES: u64 = 1 << 20;

pub struct MemoryRelayLog {
    ring: ByteRing,
    spill_threshold_bytes: u64,
    spill_directory: PathBuf,
}

/// The transaction the receiver is writing.
pub struct OpenMemoryTransaction {
    begin: u64,
    length_bytes: u64,
    spill: Option<SpillWriter>,
}

impl OpenMemoryTransaction {
    pub fn length_bytes(&self) -> u64 {
        self.length_bytes
    }
}

impl MemoryRelayLog {
    pub fn new(limit_bytes: u64, spill_threshold_bytes: u64, spill_directory: PathBuf) -> MemoryRelayLog {
        assert!(spill_threshold_bytes <= limit_bytes / 2, "the spill threshold must be at most half the ring");
        MemoryRelayLog { ring: ByteRing::new(limit_bytes), spill_threshold_bytes, spill_directory }
    }

    /// Bytes in the ring not yet applied, and the most there ever were.
    pub fn used_bytes_and_peak(&self) -> (u64, u64) {
        self.ring.used_bytes_and_peak()
    }

    pub fn limit_bytes(&self) -> u64 {
        self.ring.capacity_bytes()
    }

    pub fn begin(&self) -> OpenMemoryTransaction {
        OpenMemoryTransaction { begin: self.ring.head(), length_bytes: 0, spill: None }
    }

    pub fn append(&self, open: &mut OpenMemoryTransaction, event: &[u8], stop: &StopFlag, stats: &RelayStats) -> Result<(), AppendError> {
        let length = event.len() as u64;
        if open.spill.is_none() && open.length_bytes + length > self.spill_threshold_bytes {
            open.spill = Some(self.move_to_spill(open)?);
        }
        match &mut open.spill {
            Some(spill) => spill.append(event)?,
            None => {
                self.ring.append(event, stop, &stats.receiver_blocked_ns).map_err(|_| AppendError::Stopped)?;
            }
        }
        open.length_bytes += length;
        Ok(())
    }

    /// Moves the open transaction's bytes from the ring to a new spill file.
    fn move_to_spill(&self, open: &OpenMemoryTransaction) -> Result<SpillWriter, MysqlError> {
        let mut spill = SpillWriter::create(&self.spill_directory)?;
        let mut piece = Vec::new();
        let end = open.begin + open.length_bytes;
        let mut offset = open.begin;
        while offset < end {
            let piece_end = end.min(offset + SPILL_MOVE_PIECE_BYTES);
            self.ring.copy_out(offset, piece_end, &mut piece);
            spill.append(&piece)?;
            offset = piece_end;
        }
        self.ring.truncate_head(open.begin);
        Ok(spill)
    }

    pub fn finish(&self, open: OpenMemoryTransaction, stats: &RelayStats) -> Result<TransactionLocation, MysqlError> {
        match open.spill {
            Some(spill) => {
                let file = spill.finish()?;
                let length = file.length_bytes();
                RelayStats::add(&stats.spilled_bytes, length);
                RelayStats::add(&stats.spilled_transactions, 1);
                RelayStats::add(&stats.spilled_bytes_total, length);
                RelayStats::add(&stats.spilled_transactions_total, 1);
                Ok(TransactionLocation::Spilled(file))
            }
            None => {
                RelayStats::add(&stats.memory_transactions, 1);
                Ok(TransactionLocation::Memory { begin: open.begin, end: open.begin + open.length_bytes })
            }
        }
    }

    /// Drops an incomplete transaction (its connection ended); a worker
    /// reading its spill file gets an error.
    pub fn abandon(&self, open: OpenMemoryTransaction) {
        match open.spill {
            Some(spill) => drop(spill.abandon()),
            None => self.ring.truncate_head(open.begin),
        }
    }

    /// The spill file of the open transaction, once it has one.
    pub fn spill_file(&self, open: &OpenMemoryTransaction) -> Option<Arc<SpillFile>> {
        open.spill.as_ref().map(|spill| spill.file().clone())
    }

    pub fn copy_out(&self, begin: u64, end: u64, out: &mut Vec<u8>) {
        self.ring.copy_out(begin, end, out);
    }

    pub fn release(&self, begin: u64, end: u64, stats: &RelayStats) {
        self.ring.release(begin, end);
        RelayStats::sub(&stats.memory_transactions, 1);
    }
}
