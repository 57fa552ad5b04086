//! Segment files `redo.000001`, `redo.000002`, ...: a header, then whole
//! records back to back. Records never span segments.
//!
//! ```text
//! offset  size  field
//! 0       8     magic          "BLDREDO1"
//! 8       8     number         u64 LE  the N of redo.N
//! 16      8     start_lsn      u64 LE  LSN of the first record in the segment
//! 24      4     version        u32 LE  1
//! 28      4     crc32          u32 LE  CRC-32 of bytes 0..28
//! 32      ..    records
//! ```
//!
//! A record at file offset `f` has LSN `start_lsn + (f - 32)`.

use std::io;
use std::path::Path;

use storage::{FileHandle, Storage};

use crate::record::{self, Invalid, Lsn, Record, RECORD_HEADER_BYTES};

pub const SEGMENT_MAGIC: &[u8; 8] = b"BLDREDO1";
pub const SEGMENT_VERSION: u32 = 1;
const MAGIC_OFFSET: usize = 0;
const NUMBER_OFFSET: usize = MAGIC_OFFSET + 8;
const START_LSN_OFFSET: usize = NUMBER_OFFSET + 8;
const VERSION_OFFSET: usize = START_LSN_OFFSET + 8;
const CRC_OFFSET: usize = VERSION_OFFSET + 4;
pub const SEGMENT_HEADER_BYTES: usize = CRC_OFFSET + 4;

pub const SEGMENT_PREFIX: &str = "redo.";

/// Bytes a scanner reads from a segment per call: big enough that
/// recovery of small records is not one syscall per record.
const READ_WINDOW_BYTES: usize = 1 << 20;

pub fn segment_name(number: u64) -> String {
    format!("{SEGMENT_PREFIX}{number:06}")
}

/// The N of `redo.N` (six or more digits), or `None` for other names.
pub fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(SEGMENT_PREFIX)?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    pub number: u64,
    pub start_lsn: Lsn,
}

impl SegmentHeader {
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_BYTES] {
        let mut bytes = [0u8; SEGMENT_HEADER_BYTES];
        bytes[MAGIC_OFFSET..NUMBER_OFFSET].copy_from_slice(SEGMENT_MAGIC);
        bytes[NUMBER_OFFSET..START_LSN_OFFSET].copy_from_slice(&self.number.to_le_bytes());
        bytes[START_LSN_OFFSET..VERSION_OFFSET].copy_from_slice(&self.start_lsn.to_le_bytes());
        bytes[VERSION_OFFSET..CRC_OFFSET].copy_from_slice(&SEGMENT_VERSION.to_le_bytes());
        let crc = crc32fast::hash(&bytes[..CRC_OFFSET]);
        bytes[CRC_OFFSET..].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    pub fn decode(bytes: &[u8]) -> Result<SegmentHeader, String> {
        if bytes.len() < SEGMENT_HEADER_BYTES {
            return Err(format!("segment header truncated: {} of {SEGMENT_HEADER_BYTES} bytes", bytes.len()));
        }
        if &bytes[MAGIC_OFFSET..NUMBER_OFFSET] != SEGMENT_MAGIC {
            return Err("bad segment magic".into());
        }
        let stored = u32::from_le_bytes(bytes[CRC_OFFSET..SEGMENT_HEADER_BYTES].try_into().unwrap());
        let computed = crc32fast::hash(&bytes[..CRC_OFFSET]);
        if stored != computed {
            return Err(format!("segment header checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"));
        }
        let version = u32::from_le_bytes(bytes[VERSION_OFFSET..CRC_OFFSET].try_into().unwrap());
        if version != SEGMENT_VERSION {
            return Err(format!("unsupported segment version {version}"));
        }
        Ok(SegmentHeader {
            number: u64::from_le_bytes(bytes[NUMBER_OFFSET..START_LSN_OFFSET].try_into().unwrap()),
            start_lsn: u64::from_le_bytes(bytes[START_LSN_OFFSET..VERSION_OFFSET].try_into().unwrap()),
        })
    }

    /// File offset of `lsn` in this segment.
    pub fn offset_of(&self, lsn: Lsn) -> u64 {
        debug_assert!(lsn >= self.start_lsn);
        SEGMENT_HEADER_BYTES as u64 + (lsn - self.start_lsn)
    }
}

/// Reads and checks a segment's header.
pub fn read_header(file: &FileHandle) -> io::Result<Result<SegmentHeader, String>> {
    let mut bytes = [0u8; SEGMENT_HEADER_BYTES];
    let length = file.len()?;
    let available = (length as usize).min(SEGMENT_HEADER_BYTES);
    file.read_exact_at(0, &mut bytes[..available])?;
    Ok(SegmentHeader::decode(&bytes[..available]))
}

/// Creates segment `number` starting at `start_lsn`, its header and its
/// name durable before it returns: a record is acknowledged durable only
/// after an fdatasync of its segment, and that must not leave the record
/// in a file whose name or header a power cut could lose.
pub fn create_segment(storage: &dyn Storage, dir: &Path, header: SegmentHeader) -> io::Result<FileHandle> {
    let path = dir.join(segment_name(header.number));
    let file = storage.create(&path)?;
    file.write_at(0, &header.encode())?;
    file.sync_data()?;
    storage.sync_dir(dir)?;
    Ok(file)
}

/// One step of a sequential scan.
#[derive(Debug)]
pub enum Scanned {
    Record {
        lsn: Lsn,
        record: Record,
    },
    /// The scan reached its end offset exactly.
    End,
    /// Bytes at `offset` are not a valid record.
    Invalid {
        offset: u64,
        reason: Invalid,
    },
}

/// Reads the records of one segment in order, from `offset` up to `end`.
pub struct SegmentScanner {
    file: FileHandle,
    header: SegmentHeader,
    offset: u64,
    end: u64,
    window: Vec<u8>,
    window_start: u64,
}

impl SegmentScanner {
    pub fn new(file: FileHandle, header: SegmentHeader, start_lsn: Lsn, end: u64) -> SegmentScanner {
        SegmentScanner { file, header, offset: header.offset_of(start_lsn), end, window: Vec::new(), window_start: 0 }
    }

    /// File offset of the next record (after the last valid one).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn lsn(&self) -> Lsn {
        self.header.start_lsn + (self.offset - SEGMENT_HEADER_BYTES as u64)
    }

    /// `length` bytes at `offset` (which the caller checked lie before `end`).
    fn bytes_at(&mut self, offset: u64, length: usize) -> io::Result<&[u8]> {
        let window_end = self.window_start + self.window.len() as u64;
        if offset < self.window_start || offset + length as u64 > window_end {
            let wanted = length.max(READ_WINDOW_BYTES).min((self.end - offset) as usize);
            self.window.resize(wanted, 0);
            self.file.read_exact_at(offset, &mut self.window)?;
            self.window_start = offset;
            if self.window.capacity() > 2 * READ_WINDOW_BYTES && wanted <= READ_WINDOW_BYTES {
                self.window.shrink_to(READ_WINDOW_BYTES);
            }
        }
        let at = (offset - self.window_start) as usize;
        Ok(&self.window[at..at + length])
    }

    pub fn next_record(&mut self) -> io::Result<Scanned> {
        let offset = self.offset;
        if offset == self.end {
            return Ok(Scanned::End);
        }
        let available = self.end - offset;
        if available < RECORD_HEADER_BYTES as u64 {
            let reason = Invalid::Truncated { needed: RECORD_HEADER_BYTES as u64, available };
            return Ok(Scanned::Invalid { offset, reason });
        }
        let length = record::peek_length(self.bytes_at(offset, RECORD_HEADER_BYTES)?);
        if (length as usize) < RECORD_HEADER_BYTES {
            return Ok(Scanned::Invalid { offset, reason: Invalid::LengthTooSmall(length) });
        }
        // A torn length field can claim gigabytes: never read past the end.
        if length as u64 > available {
            return Ok(Scanned::Invalid { offset, reason: Invalid::Truncated { needed: length as u64, available } });
        }
        let lsn = self.lsn();
        let bytes = self.bytes_at(offset, length as usize)?;
        match record::decode(bytes, lsn) {
            Ok(record) => {
                self.offset += length as u64;
                Ok(Scanned::Record { lsn, record })
            }
            Err(reason) => Ok(Scanned::Invalid { offset, reason }),
        }
    }
}
