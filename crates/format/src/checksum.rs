//! CRC32 event checksums (`binlog_checksum = CRC32`), as MySQL computes
//! them: zlib's CRC-32 over the whole event (header and body), stored as
//! 4 little-endian bytes after the body.
//!
//! The Format_description event is checksummed with
//! `LOG_EVENT_BINLOG_IN_USE_F` cleared, so recovery can clear the flag in
//! place without rewriting the checksum.

use crate::constants::{EventType, FLAGS_OFFSET, LOG_EVENT_BINLOG_IN_USE_F, TYPE_OFFSET};

pub const CHECKSUM_LENGTH: usize = 4;

/// CRC32 of an event's bytes (header + body, without the checksum itself).
pub fn event_crc32(event_without_checksum: &[u8]) -> u32 {
    let is_format_description = event_without_checksum.get(TYPE_OFFSET) == Some(&(EventType::FormatDescription as u8));
    let flags_in_use = event_without_checksum.get(FLAGS_OFFSET).is_some_and(|flags| flags & LOG_EVENT_BINLOG_IN_USE_F as u8 != 0);
    if is_format_description && flags_in_use {
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&event_without_checksum[..FLAGS_OFFSET]);
        hasher.update(&[event_without_checksum[FLAGS_OFFSET] & !(LOG_EVENT_BINLOG_IN_USE_F as u8)]);
        hasher.update(&event_without_checksum[FLAGS_OFFSET + 1..]);
        hasher.finalize()
    } else {
        crc32fast::hash(event_without_checksum)
    }
}
