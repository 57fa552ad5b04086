//! Errors of the binary log. Each carries what and where, and maps to the
//! MySQL error code and SQLSTATE a client would see.

use std::io;
use std::path::PathBuf;

use binlog_format::DecodeError;
use thiserror::Error;

use crate::file_reader::ReadError;

#[derive(Debug, Error)]
pub enum BinlogError {
    #[error("binary log I/O error during {operation} on {path}: {source}")]
    Io { operation: &'static str, path: PathBuf, source: io::Error },
    #[error("binary log corruption in {file} at offset {offset}: {reason}")]
    Corruption { file: String, offset: u64, kind: CorruptionKind, reason: String },
    /// ER_TRANS_CACHE_FULL.
    #[error("Multi-statement transaction required more than 'max_binlog_cache_size' bytes of storage; increase this mysqld variable and try again")]
    CacheFull { max_binlog_cache_size: u64 },
    /// An earlier write or sync failed: the log's state on disk is
    /// unknown, so it refuses every write until it is reopened (and
    /// recovery decides what is in the log).
    #[error("binary log is unusable after an earlier I/O error ({first_error}); restart the server to recover it")]
    PreviousIo { first_error: String },
    #[error("{0}")]
    Invalid(String),
    /// ER_BINLOG_PURGE_... / target file not in the index.
    #[error("Target log not found in binlog index")]
    LogNotFound,
    /// The requested GTIDs or position are no longer (or never were) in the log.
    #[error("{0}")]
    SourceLogUnavailable(String),
    #[error("binary log is closed")]
    Closed,
}

/// What a [`BinlogError::Corruption`] found, for callers that answer each
/// differently (a dump's 1236 message names it in MySQL's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorruptionKind {
    /// The file ends inside an event.
    Truncated,
    /// An event's CRC32 does not match its bytes.
    Checksum,
    /// Anything else: bytes that are not a valid event, a bad preamble or
    /// index, a file missing.
    Malformed,
}

impl CorruptionKind {
    /// The kind of a file reader's error.
    pub fn of_read(error: &ReadError) -> CorruptionKind {
        match error {
            ReadError::Truncated { .. } => CorruptionKind::Truncated,
            ReadError::Corrupt { error, .. } => CorruptionKind::of_decode(error),
            ReadError::Io(_) => CorruptionKind::Malformed,
        }
    }

    /// The kind of an event decoder's error.
    pub fn of_decode(error: &DecodeError) -> CorruptionKind {
        match error {
            DecodeError::BadChecksum { .. } => CorruptionKind::Checksum,
            _ => CorruptionKind::Malformed,
        }
    }
}

impl BinlogError {
    pub fn io(operation: &'static str, path: impl Into<PathBuf>, source: io::Error) -> BinlogError {
        BinlogError::Io { operation, path: path.into(), source }
    }

    /// MySQL error number for a client.
    pub fn mysql_code(&self) -> u16 {
        match self {
            BinlogError::CacheFull { .. } => 1197,                           // ER_TRANS_CACHE_FULL
            BinlogError::LogNotFound => 1373,                                // ER_UNKNOWN_TARGET_BINLOG
            BinlogError::Io { .. } | BinlogError::PreviousIo { .. } => 1598, // ER_BINLOG_LOGGING_IMPOSSIBLE
            BinlogError::Corruption { .. } => 1595,                          // ER_SLAVE_RELAY_LOG_WRITE_FAILURE family; binlog corrupt
            BinlogError::Invalid(_) => 1210,                                 // ER_WRONG_ARGUMENTS
            BinlogError::Closed => 1598,
            BinlogError::SourceLogUnavailable(_) => 1236, // ER_SOURCE_FATAL_ERROR_READING_BINLOG
        }
    }

    pub fn sqlstate(&self) -> &'static str {
        "HY000"
    }
}

pub type Result<T> = std::result::Result<T, BinlogError>;
