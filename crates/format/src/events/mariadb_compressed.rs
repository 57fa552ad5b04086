//! MariaDB's compressed events (`log_bin_compress=ON`, MariaDB 10.2+):
//! Query_compressed (165), Write/Update/Delete_rows_compressed v1
//! (166-168) and v2 (169-171). Each is its plain event with one part
//! compressed, so each decodes to that plain event ([`CompressedEvent::inner`])
//! and keeps its stored body for a byte-for-byte encode.
//!
//! What is compressed (MariaDB's `Query_compressed_log_event` and
//! `row_log_event_uncompress`):
//!
//! | event | kept as is | compressed |
//! |-------|-----------|------------|
//! | Query_compressed | post-header, status variables, database, NUL | the statement |
//! | rows v1 | table id (6), flags (2), width, column bitmaps | rows |
//! | rows v2 | table id, flags, extra data (length included), width, column bitmaps | rows |
//!
//! A compressed part starts with one byte: 0x80 set, the algorithm in bits
//! 4-6 (0, zlib: the only one MariaDB writes), the width 1-4 of the
//! uncompressed length in bits 0-2; then that length, big-endian; then a
//! zlib stream inflating to exactly that many bytes.

use std::io::Read;

use crate::bytes::ByteReader;
use crate::constants::{EventType, EVENT_SIZE_MAX};
use crate::error::DecodeError;
use crate::events::query::QueryEvent;
use crate::events::rows::{RowsEvent, RowsKind, RowsVersion};
use crate::events::Event;

/// A compressed event: its type and stored body, and the plain event it
/// holds (a Query, or a rows event of the same version).
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedEvent {
    pub event_type: u8,
    pub body: Vec<u8>,
    pub inner: Box<Event>,
}

/// Query_compressed's post-header: thread id 4, exec time 4, database
/// length 1, error code 2, status variables length 2.
const QUERY_POST_HEADER_LENGTH: usize = 13;
const ROWS_V1_POST_HEADER_LENGTH: usize = 8;

impl CompressedEvent {
    /// True for the codes 165-171.
    pub fn is_compressed_type(event_type: u8) -> bool {
        (EventType::QueryCompressed as u8..=EventType::DeleteRowsCompressed as u8).contains(&event_type)
    }

    pub fn decode_body(event_type: u8, body: &[u8]) -> Result<CompressedEvent, DecodeError> {
        let inner = match event_type {
            165 => {
                let mut reader = ByteReader::new(body);
                let post_header = reader.take(QUERY_POST_HEADER_LENGTH, "Query_compressed post-header")?;
                let database_length = post_header[8] as usize;
                let status_length = u16::from_le_bytes([post_header[11], post_header[12]]) as usize;
                reader.take(status_length + database_length + 1, "Query_compressed status variables and database")?;
                let kept = reader.position();
                let mut plain = body[..kept].to_vec();
                plain.extend_from_slice(&uncompress(reader.rest(), "Query_compressed statement")?);
                Event::Query(QueryEvent::decode_body(&plain)?)
            }
            166..=171 => {
                let (kind, version) = match event_type {
                    166 => (RowsKind::Write, RowsVersion::V1),
                    167 => (RowsKind::Update, RowsVersion::V1),
                    168 => (RowsKind::Delete, RowsVersion::V1),
                    169 => (RowsKind::Write, RowsVersion::V2),
                    170 => (RowsKind::Update, RowsVersion::V2),
                    _ => (RowsKind::Delete, RowsVersion::V2),
                };
                let mut reader = ByteReader::new(body);
                reader.take(ROWS_V1_POST_HEADER_LENGTH, "compressed rows post-header")?;
                if version == RowsVersion::V2 {
                    let extra_length = reader.u16("compressed rows extra-data length")? as usize;
                    let rest = extra_length
                        .checked_sub(2)
                        .ok_or_else(|| DecodeError::invalid("compressed rows extra-data length", format!("{extra_length} is below 2")))?;
                    reader.take(rest, "compressed rows extra data")?;
                }
                let width = reader.packed_u64("compressed rows width")?;
                let bitmap_length = usize::try_from(width.div_ceil(8)).unwrap_or(usize::MAX);
                let bitmaps = if kind == RowsKind::Update { 2 } else { 1 };
                for _ in 0..bitmaps {
                    reader.take(bitmap_length, "compressed rows column bitmap")?;
                }
                let kept = reader.position();
                let mut plain = body[..kept].to_vec();
                plain.extend_from_slice(&uncompress(reader.rest(), "compressed rows")?);
                RowsEvent::decode_body_version(kind, version, &plain)?.into_event()
            }
            _ => return Err(DecodeError::invalid("compressed event", format!("type {event_type} is not one of MariaDB's 165-171"))),
        };
        Ok(CompressedEvent { event_type, body: body.to_vec(), inner: Box::new(inner) })
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.body);
    }
}

/// The bytes of one compressed part (`binlog_buf_uncompress`).
pub fn uncompress(part: &[u8], what: &'static str) -> Result<Vec<u8>, DecodeError> {
    let mut reader = ByteReader::new(part);
    let first = reader.u8(what)?;
    if first & 0x80 == 0 {
        return Err(DecodeError::invalid(what, format!("header byte {first:#04x} lacks the compressed flag 0x80")));
    }
    let algorithm = (first >> 4) & 0x07;
    if algorithm != 0 {
        return Err(DecodeError::invalid(what, format!("compression algorithm {algorithm}; MariaDB writes 0 (zlib)")));
    }
    let width = (first & 0x07) as usize;
    if !(1..=4).contains(&width) {
        return Err(DecodeError::invalid(what, format!("an uncompressed length of {width} bytes")));
    }
    let length = reader.take(width, what)?.iter().fold(0u64, |length, &byte| length << 8 | u64::from(byte));
    if length > EVENT_SIZE_MAX {
        return Err(DecodeError::BadLength { length, reason: "larger than the 1 GiB event size limit" });
    }
    let mut plain = Vec::with_capacity(length as usize);
    // One byte past the declared length tells a stream that inflates to more.
    flate2::read::ZlibDecoder::new(reader.rest())
        .take(length + 1)
        .read_to_end(&mut plain)
        .map_err(|error| DecodeError::invalid(what, format!("zlib: {error}")))?;
    if plain.len() as u64 != length {
        return Err(DecodeError::invalid(what, format!("inflates to {} bytes, its header says {length}", plain.len())));
    }
    Ok(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_that_inflates_to_other_than_its_length_is_refused() {
        let mut part = vec![0x81, 4];
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, b"hello").unwrap();
        part.extend_from_slice(&encoder.finish().unwrap());
        assert!(matches!(uncompress(&part, "t"), Err(DecodeError::Invalid { .. })));
        part[1] = 5;
        assert_eq!(uncompress(&part, "t").unwrap(), b"hello");
        assert!(uncompress(&[0x01, 5], "t").is_err());
        assert!(uncompress(&[0x85, 5], "t").is_err());
        assert!(uncompress(&[0x91, 5], "t").is_err());
    }
}
