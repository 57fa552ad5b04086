//! Errors of the redo log. Each says what and where; all storage failures
//! wrap the one `io::Error` the storage seam returns.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::record::Lsn;

#[derive(Debug, Error)]
pub enum RedoError {
    #[error("redo log I/O error during {operation} on {path}: {source}")]
    Io { operation: &'static str, path: PathBuf, source: io::Error },
    /// Damage recovery may not repair: anywhere but the tail of the last
    /// segment, or in the control file or the checkpoint it names.
    #[error("redo log corruption in {file} at offset {offset}: {reason}")]
    Corruption { file: String, offset: u64, reason: String },
    /// An earlier write or fsync failed: what reached the disk is unknown
    /// (after a failed fsync the kernel may have dropped dirty pages), so
    /// the log refuses every append until it is reopened and recovery
    /// decides what the log holds.
    #[error("redo log is unusable after an earlier I/O error ({first_error}); reopen it to recover")]
    PreviousIo { first_error: String },
    #[error("redo record of {record_bytes} bytes exceeds the limit of {limit_bytes} bytes")]
    RecordTooLarge { record_bytes: u64, limit_bytes: u64 },
    /// A checkpoint or read asked for an LSN the log cannot serve.
    #[error("invalid LSN {lsn}: {reason}")]
    InvalidLsn { lsn: Lsn, reason: String },
    /// The engine's snapshot callback failed; the checkpoint was abandoned
    /// and the previous one stays in force.
    #[error("checkpoint snapshot failed: {0}")]
    Snapshot(io::Error),
    #[error("invalid redo log option: {0}")]
    InvalidOption(String),
    #[error("redo log is closed")]
    Closed,
}

impl RedoError {
    pub fn io(operation: &'static str, path: impl Into<PathBuf>, source: io::Error) -> RedoError {
        RedoError::Io { operation, path: path.into(), source }
    }

    pub fn corruption(file: impl Into<String>, offset: u64, reason: impl Into<String>) -> RedoError {
        RedoError::Corruption { file: file.into(), offset, reason: reason.into() }
    }
}

pub type Result<T> = std::result::Result<T, RedoError>;
