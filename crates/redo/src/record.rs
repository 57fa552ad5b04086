//! One redo record and its byte codec.
//!
//! ```text
//! offset  size  field
//! 0       4     length   u32 LE  whole record, header included (>= 17)
//! 4       4     crc32    u32 LE  CRC-32 of bytes 0..4 and 8..length
//! 8       8     lsn      u64 LE  the record's own LSN
//! 16      1     kind     u8      the engine's record type
//! 17      ..    payload          sections, each: tag u8 | length u32 LE | bytes
//! ```
//!
//! The payload is a list of typed sections rather than one opaque blob so
//! that one commit record can carry the row changes, the GTID and the
//! transaction's binlog events side by side (the engine-integrated binlog
//! mode) without the redo log knowing what any of them mean. An engine
//! that wants one opaque payload uses [`Record::opaque`].
//!
//! The LSN is the record's byte offset in the logical log stream (the
//! concatenation of all records, segment headers excluded), so the LSN of
//! the next record is `lsn + length`. Storing it in the record lets
//! recovery tell a record from stale bytes that happen to checksum.

use std::fmt;

/// Byte offset in the logical redo stream.
pub type Lsn = u64;

pub const LENGTH_OFFSET: usize = 0;
pub const CRC_OFFSET: usize = LENGTH_OFFSET + 4;
pub const LSN_OFFSET: usize = CRC_OFFSET + 4;
pub const KIND_OFFSET: usize = LSN_OFFSET + 8;
pub const RECORD_HEADER_BYTES: usize = KIND_OFFSET + 1;
/// Tag and length in front of each section's bytes.
pub const SECTION_HEADER_BYTES: usize = 1 + 4;

/// Section tags. Tag 0 is never valid, so zero-filled bytes cannot pass
/// for a section. 1..=0x7F are reserved for binlogd's layers; 0x80..=0xFF
/// are free for the engine's own use.
pub mod section {
    /// Opaque engine bytes: row changes, prepare/commit/rollback, DDL.
    pub const PAYLOAD: u8 = 1;
    /// The transaction's GTID (engine-integrated binlog mode).
    pub const GTID: u8 = 2;
    /// The transaction's binlog events, as they will appear in the file.
    pub const BINLOG_EVENTS: u8 = 3;
    /// A promoted large transaction: a reference to its binlog file
    /// instead of its body.
    pub const BINLOG_FILE_REFERENCE: u8 = 4;
    /// First tag free for the engine.
    pub const ENGINE_FIRST: u8 = 0x80;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub tag: u8,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub kind: u8,
    pub sections: Vec<Section>,
}

impl Record {
    pub fn new(kind: u8) -> Record {
        Record { kind, sections: Vec::new() }
    }

    /// A record with one [`section::PAYLOAD`] section.
    pub fn opaque(kind: u8, payload: impl Into<Vec<u8>>) -> Record {
        Record::new(kind).with_section(section::PAYLOAD, payload)
    }

    pub fn with_section(mut self, tag: u8, bytes: impl Into<Vec<u8>>) -> Record {
        self.push_section(tag, bytes);
        self
    }

    pub fn push_section(&mut self, tag: u8, bytes: impl Into<Vec<u8>>) {
        assert_ne!(tag, 0, "section tag 0 is reserved");
        self.sections.push(Section { tag, bytes: bytes.into() });
    }

    /// The first section with `tag`.
    pub fn section(&self, tag: u8) -> Option<&[u8]> {
        self.sections.iter().find(|s| s.tag == tag).map(|s| s.bytes.as_slice())
    }

    /// The [`section::PAYLOAD`] section.
    pub fn payload(&self) -> Option<&[u8]> {
        self.section(section::PAYLOAD)
    }

    /// Bytes the record takes in the log (its LSN advance).
    pub fn encoded_len(&self) -> u64 {
        RECORD_HEADER_BYTES as u64 + self.sections.iter().map(|s| (SECTION_HEADER_BYTES + s.bytes.len()) as u64).sum::<u64>()
    }

    /// Encodes everything but the LSN and the checksum, which depend on
    /// where the record lands; [`Encoded::seal`] fills them in.
    pub(crate) fn encode(&self) -> Encoded {
        let length = self.encoded_len();
        let mut bytes = Vec::with_capacity(length as usize);
        bytes.resize(RECORD_HEADER_BYTES, 0);
        bytes[LENGTH_OFFSET..CRC_OFFSET].copy_from_slice(&(length as u32).to_le_bytes());
        bytes[KIND_OFFSET] = self.kind;
        for section in &self.sections {
            bytes.push(section.tag);
            bytes.extend_from_slice(&(section.bytes.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&section.bytes);
        }
        debug_assert_eq!(bytes.len() as u64, length);
        // The body's CRC is computed here, in the appending thread and
        // outside every lock; sealing only combines it with the CRC of the
        // length and LSN, which costs O(log n) instead of O(n) under the
        // log buffer's lock.
        let mut body_crc = crc32fast::Hasher::new();
        body_crc.update(&bytes[KIND_OFFSET..]);
        Encoded { bytes, body_crc }
    }
}

/// A record encoded but not yet placed in the log.
pub(crate) struct Encoded {
    pub bytes: Vec<u8>,
    body_crc: crc32fast::Hasher,
}

impl Encoded {
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Writes the LSN and the checksum.
    pub fn seal(&mut self, lsn: Lsn) {
        self.bytes[LSN_OFFSET..KIND_OFFSET].copy_from_slice(&lsn.to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&self.bytes[LENGTH_OFFSET..CRC_OFFSET]);
        crc.update(&self.bytes[LSN_OFFSET..KIND_OFFSET]);
        crc.combine(&self.body_crc);
        self.bytes[CRC_OFFSET..LSN_OFFSET].copy_from_slice(&crc.finalize().to_le_bytes());
    }
}

/// Why bytes are not a valid record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// Fewer bytes left than the header or the length field says.
    Truncated {
        needed: u64,
        available: u64,
    },
    LengthTooSmall(u32),
    ChecksumMismatch {
        stored: u32,
        computed: u32,
    },
    LsnMismatch {
        expected: Lsn,
        found: Lsn,
    },
    /// The checksum holds but the sections do not parse: not a torn
    /// write but a writer bug or a foreign format, never repaired.
    Malformed(String),
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::Truncated { needed, available } => {
                write!(f, "record truncated: needs {needed} bytes, {available} available")
            }
            Invalid::LengthTooSmall(length) => write!(f, "record length {length} is below the {RECORD_HEADER_BYTES}-byte header"),
            Invalid::ChecksumMismatch { stored, computed } => {
                write!(f, "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")
            }
            Invalid::LsnMismatch { expected, found } => write!(f, "record claims LSN {found}, expected {expected}"),
            Invalid::Malformed(reason) => write!(f, "malformed record: {reason}"),
        }
    }
}

/// The length field of a record header (the first 4 bytes).
pub fn peek_length(header: &[u8]) -> u32 {
    u32::from_le_bytes(header[LENGTH_OFFSET..CRC_OFFSET].try_into().unwrap())
}

/// Checks and decodes one whole record (`bytes.len()` == its length field)
/// expected at `expected_lsn`.
pub fn decode(bytes: &[u8], expected_lsn: Lsn) -> Result<Record, Invalid> {
    if bytes.len() < RECORD_HEADER_BYTES {
        return Err(Invalid::Truncated { needed: RECORD_HEADER_BYTES as u64, available: bytes.len() as u64 });
    }
    let length = peek_length(bytes);
    if (length as usize) < RECORD_HEADER_BYTES {
        return Err(Invalid::LengthTooSmall(length));
    }
    if bytes.len() != length as usize {
        return Err(Invalid::Truncated { needed: length as u64, available: bytes.len() as u64 });
    }
    let stored = u32::from_le_bytes(bytes[CRC_OFFSET..LSN_OFFSET].try_into().unwrap());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[LENGTH_OFFSET..CRC_OFFSET]);
    crc.update(&bytes[LSN_OFFSET..]);
    let computed = crc.finalize();
    if stored != computed {
        return Err(Invalid::ChecksumMismatch { stored, computed });
    }
    let lsn = u64::from_le_bytes(bytes[LSN_OFFSET..KIND_OFFSET].try_into().unwrap());
    if lsn != expected_lsn {
        return Err(Invalid::LsnMismatch { expected: expected_lsn, found: lsn });
    }
    let mut record = Record::new(bytes[KIND_OFFSET]);
    let mut at = RECORD_HEADER_BYTES;
    while at < bytes.len() {
        if bytes.len() - at < SECTION_HEADER_BYTES {
            return Err(Invalid::Malformed(format!("{} trailing bytes after the last section", bytes.len() - at)));
        }
        let tag = bytes[at];
        if tag == 0 {
            return Err(Invalid::Malformed(format!("section tag 0 at record offset {at}")));
        }
        let section_bytes = u32::from_le_bytes(bytes[at + 1..at + SECTION_HEADER_BYTES].try_into().unwrap()) as usize;
        let start = at + SECTION_HEADER_BYTES;
        if bytes.len() - start < section_bytes {
            return Err(Invalid::Malformed(format!("section at record offset {at} overruns the record")));
        }
        record.sections.push(Section { tag, bytes: bytes[start..start + section_bytes].to_vec() });
        at = start + section_bytes;
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(record: &Record, lsn: Lsn) -> Vec<u8> {
        let mut encoded = record.encode();
        encoded.seal(lsn);
        encoded.bytes
    }

    #[test]
    fn round_trip_with_sections() {
        let record = Record::opaque(7, b"rows".to_vec()).with_section(section::GTID, vec![1, 2, 3]).with_section(0x90, vec![]);
        let bytes = sealed(&record, 4242);
        assert_eq!(bytes.len() as u64, record.encoded_len());
        assert_eq!(decode(&bytes, 4242).unwrap(), record);
    }

    #[test]
    fn combined_checksum_equals_plain_checksum() {
        let bytes = sealed(&Record::opaque(3, vec![9u8; 1000]), 17);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[..4]);
        crc.update(&bytes[8..]);
        assert_eq!(crc.finalize().to_le_bytes(), bytes[4..8]);
    }

    #[test]
    fn every_damage_is_detected() {
        let bytes = sealed(&Record::opaque(1, b"hello".to_vec()), 100);
        assert!(matches!(decode(&bytes, 101), Err(Invalid::LsnMismatch { .. })));
        assert!(matches!(decode(&bytes[..bytes.len() - 1], 100), Err(Invalid::Truncated { .. })));
        for index in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[index] ^= 0x10;
            assert!(decode(&flipped, 100).is_err(), "flip at {index} undetected");
        }
    }
}
