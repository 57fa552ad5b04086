//! Decode errors. Decoding never panics: every malformed input maps to one
//! of these, and callers that know the file and offset wrap it with them.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("truncated {what}: needed {needed} bytes, {available} available")]
    Truncated { what: &'static str, needed: usize, available: usize },
    #[error("{count} trailing bytes after {what}")]
    TrailingBytes { what: &'static str, count: usize },
    #[error("event length {length} is impossible ({reason})")]
    BadLength { length: u64, reason: &'static str },
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    BadChecksum { stored: u32, computed: u32 },
    #[error("bad magic number {found:02x?}, expected fe 62 69 6e")]
    BadMagic { found: Vec<u8> },
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
    /// A file of MySQL 3.23 (version 1) or 4.x (version 3), or any other
    /// version than 4: its headers and events are laid out differently.
    #[error("unsupported binlog version {version}: only version 4 (MySQL 5.0 and later, MariaDB) is read")]
    UnsupportedBinlogVersion { version: u16 },
}

impl DecodeError {
    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        DecodeError::Invalid { what, reason: reason.into() }
    }
}

/// Encode errors: a value or a definition that the binlog format cannot
/// carry (out of range for its column type, a name too long for its
/// length byte). Encoders check before they write, so a bad row never
/// reaches a file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    #[error("column {column}: {reason}")]
    Value { column: usize, reason: String },
    #[error("row has {found} values but the image has {expected} columns")]
    ColumnCount { expected: usize, found: usize },
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
}

impl EncodeError {
    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        EncodeError::Invalid { what, reason: reason.into() }
    }
}
