//! The redo log's settings, under MySQL's variable names where MySQL has
//! one, `binlogd_` otherwise.

use std::time::Duration;

use crate::error::{RedoError, Result};
use crate::record::RECORD_HEADER_BYTES;
use crate::segment::SEGMENT_HEADER_BYTES;

/// `innodb_flush_log_at_trx_commit`, with MySQL's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushLogAtTrxCommit {
    /// 0: commit leaves its record in the log buffer; the background
    /// flusher writes and fdatasyncs once per `innodb_flush_log_at_timeout`.
    /// A process kill loses up to that much.
    WriteAndSyncPerSecond = 0,
    /// 1: commit writes and fdatasyncs (one fdatasync per group). Nothing
    /// acknowledged is ever lost.
    WriteAndSyncAtCommit = 1,
    /// 2: commit writes to the OS; the background flusher fdatasyncs once
    /// per timeout. A process kill loses nothing, a power cut up to that much.
    WriteAtCommit = 2,
}

impl FlushLogAtTrxCommit {
    pub fn from_value(value: u64) -> Option<FlushLogAtTrxCommit> {
        match value {
            0 => Some(FlushLogAtTrxCommit::WriteAndSyncPerSecond),
            1 => Some(FlushLogAtTrxCommit::WriteAndSyncAtCommit),
            2 => Some(FlushLogAtTrxCommit::WriteAtCommit),
            _ => None,
        }
    }

    pub fn value(self) -> u64 {
        self as u64
    }

    /// What a commit record's append must wait for under this setting.
    pub fn commit_durability(self) -> Durability {
        match self {
            FlushLogAtTrxCommit::WriteAndSyncPerSecond => Durability::Buffered,
            FlushLogAtTrxCommit::WriteAndSyncAtCommit => Durability::Sync,
            FlushLogAtTrxCommit::WriteAtCommit => Durability::Written,
        }
    }
}

/// What one append waits for before it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Until the record is fdatasynced (survives a power cut).
    Sync,
    /// Until the record is written to the OS (survives a process kill).
    Written,
    /// Not at all: the record waits in the log buffer for a later group or
    /// the background flusher.
    Buffered,
}

#[derive(Debug, Clone)]
pub struct Options {
    /// `innodb_flush_log_at_trx_commit` (default 1). The log itself does
    /// not look at it on append (each append names its [`Durability`]);
    /// it is here so the engine asks [`Options::commit_durability`] in one
    /// place.
    pub innodb_flush_log_at_trx_commit: FlushLogAtTrxCommit,
    /// `innodb_flush_log_at_timeout` (default 1 s): the background
    /// flusher writes and fdatasyncs everything appended this often.
    pub innodb_flush_log_at_timeout: Duration,
    /// `innodb_log_buffer_size` (bytes, default 16 MiB): records waiting to
    /// be written. An append that would overflow it first writes the buffer
    /// itself (back-pressure); a single record larger than the buffer is
    /// accepted alone.
    pub innodb_log_buffer_size: u64,
    /// `binlogd_redo_segment_bytes` (default 64 MiB): a segment is closed
    /// once the next record would take it past this. Records never span
    /// segments, so a larger record gets a segment of its own.
    pub binlogd_redo_segment_bytes: u64,
    /// `binlogd_redo_record_bytes_max` (default 1 GiB, at most 4 GiB - 1):
    /// larger appends fail. Large binlog transactions travel by reference
    /// to their promoted file, not inside a record.
    pub binlogd_redo_record_bytes_max: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            innodb_flush_log_at_trx_commit: FlushLogAtTrxCommit::WriteAndSyncAtCommit,
            innodb_flush_log_at_timeout: Duration::from_secs(1),
            innodb_log_buffer_size: 16 << 20,
            binlogd_redo_segment_bytes: 64 << 20,
            binlogd_redo_record_bytes_max: 1 << 30,
        }
    }
}

/// Smallest accepted segment: a header and one empty record, so tests can
/// rotate often.
pub const SEGMENT_BYTES_MIN: u64 = (SEGMENT_HEADER_BYTES + RECORD_HEADER_BYTES) as u64;

impl Options {
    pub fn commit_durability(&self) -> Durability {
        self.innodb_flush_log_at_trx_commit.commit_durability()
    }

    pub fn validate(&self) -> Result<()> {
        let invalid = |reason: String| Err(RedoError::InvalidOption(reason));
        if self.binlogd_redo_segment_bytes < SEGMENT_BYTES_MIN {
            return invalid(format!("binlogd_redo_segment_bytes must be at least {SEGMENT_BYTES_MIN}"));
        }
        if self.innodb_log_buffer_size == 0 {
            return invalid("innodb_log_buffer_size must be positive".into());
        }
        if self.innodb_flush_log_at_timeout.is_zero() {
            return invalid("innodb_flush_log_at_timeout must be positive".into());
        }
        if self.binlogd_redo_record_bytes_max > u32::MAX as u64 {
            return invalid(format!("binlogd_redo_record_bytes_max must be at most {}", u32::MAX));
        }
        Ok(())
    }
}
