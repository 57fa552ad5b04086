//! Framing: common header + body + optional CRC32 footer.
//!
//! [`RawEvent::parse`] checks lengths and the checksum and hands out the
//! body; [`encode_event`] fills `event_size` and the checksum. `log_pos` is
//! the caller's: it depends on where the event lands in a file.

use crate::checksum::{event_crc32, CHECKSUM_LENGTH};
use crate::constants::{BINLOG_CHECKSUM_ALG_OFF, COMMON_HEADER_LENGTH, EVENT_SIZE_MAX, EVENT_SIZE_OFFSET, LOG_POS_OFFSET, TYPE_OFFSET};
use crate::error::DecodeError;
use crate::events::format_description::footer_length_of_event;
use crate::header::EventHeader;

/// One framed event, borrowed from a buffer.
#[derive(Debug, Clone, Copy)]
pub struct RawEvent<'a> {
    pub header: EventHeader,
    /// Bytes between the common header and the checksum.
    pub body: &'a [u8],
    /// The whole event, header and checksum included.
    pub bytes: &'a [u8],
    pub has_checksum: bool,
}

impl<'a> RawEvent<'a> {
    /// Parses the event at the start of `buffer`. `has_checksum` says
    /// whether the file's events carry a CRC32 footer (the FDE decides).
    /// The Format_description event always carries one.
    pub fn parse(buffer: &'a [u8], has_checksum: bool) -> Result<RawEvent<'a>, DecodeError> {
        let (header, footer) = frame_bounds(buffer, has_checksum)?;
        let size = header.event_size as usize;
        let bytes = &buffer[..size];
        // A Format_description event of a file written with
        // binlog_checksum=NONE carries the algorithm byte 0 and a
        // checksum field MySQL leaves unverified (`event_checksum_test`
        // tests what the event's own algorithm names).
        if footer > 0 && (!is_format_description(bytes) || fde_checksum_alg(bytes) != Some(BINLOG_CHECKSUM_ALG_OFF)) {
            let stored = u32::from_le_bytes(bytes[size - 4..].try_into().unwrap());
            let computed = event_crc32(&bytes[..size - 4]);
            if stored != computed {
                return Err(DecodeError::BadChecksum { stored, computed });
            }
        }
        Ok(RawEvent { header, body: &bytes[COMMON_HEADER_LENGTH..size - footer], bytes, has_checksum: footer > 0 })
    }

    /// As [`RawEvent::parse`] without the CRC: every framing check, the
    /// checksum left unread.
    pub fn parse_unverified(buffer: &'a [u8], has_checksum: bool) -> Result<RawEvent<'a>, DecodeError> {
        let (header, footer) = frame_bounds(buffer, has_checksum)?;
        let bytes = &buffer[..header.event_size as usize];
        Ok(RawEvent { header, body: &bytes[COMMON_HEADER_LENGTH..bytes.len() - footer], bytes, has_checksum: footer > 0 })
    }
}

/// The header of the event at the start of `buffer` and the length of its
/// footer, once its size is within bounds and within `buffer`.
fn frame_bounds(buffer: &[u8], has_checksum: bool) -> Result<(EventHeader, usize), DecodeError> {
    let header = EventHeader::decode(buffer)?;
    let size = header.event_size as usize;
    check_event_size(header.event_type, header.event_size as u64, has_checksum)?;
    if size > buffer.len() {
        return Err(DecodeError::Truncated { what: "event", needed: size, available: buffer.len() });
    }
    let footer = footer_length(&buffer[..size], has_checksum);
    if size < COMMON_HEADER_LENGTH + footer {
        return Err(DecodeError::BadLength { length: size as u64, reason: "shorter than the common header and checksum" });
    }
    Ok((header, footer))
}

/// Bytes of the CRC32 footer of the whole event `event` in a file whose
/// events carry checksums or not. A Format_description says for itself:
/// it has the field whenever its server knew checksums, NONE included.
pub fn footer_length(event: &[u8], has_checksum: bool) -> usize {
    if is_format_description(event) {
        footer_length_of_event(event)
    } else if has_checksum {
        CHECKSUM_LENGTH
    } else {
        0
    }
}

fn is_format_description(event: &[u8]) -> bool {
    event.get(TYPE_OFFSET) == Some(&(crate::EventType::FormatDescription as u8))
}

/// The least footer an event of `event_type` has, known from its type
/// alone: a Format_description's depends on its body.
pub fn least_footer_length(event_type: u8, has_checksum: bool) -> usize {
    if has_checksum && event_type != crate::EventType::FormatDescription as u8 {
        CHECKSUM_LENGTH
    } else {
        0
    }
}

/// The bounds on `event_size` that hold before the body is read: room for
/// the common header and the footer, and at most `EVENT_SIZE_MAX`. Every
/// reader checks them here, so a bad length reads the same everywhere.
pub fn check_event_size(event_type: u8, event_size: u64, has_checksum: bool) -> Result<(), DecodeError> {
    if event_size < (COMMON_HEADER_LENGTH + least_footer_length(event_type, has_checksum)) as u64 {
        return Err(DecodeError::BadLength { length: event_size, reason: "shorter than the common header and checksum" });
    }
    if event_size > EVENT_SIZE_MAX {
        return Err(DecodeError::BadLength { length: event_size, reason: "larger than the 1 GiB event size limit" });
    }
    Ok(())
}

/// The checksum algorithm byte of a Format_description event's bytes.
fn fde_checksum_alg(event: &[u8]) -> Option<u8> {
    event.len().checked_sub(CHECKSUM_LENGTH + 1).map(|at| event[at])
}

/// Frames `body` as an event: header (with `event_size` computed), body,
/// and a CRC32 footer when `checksum` is set. Appends to `out`.
pub fn encode_event(header: EventHeader, body: &[u8], checksum: bool, out: &mut Vec<u8>) {
    let start = out.len();
    let size = COMMON_HEADER_LENGTH + body.len() + if checksum { CHECKSUM_LENGTH } else { 0 };
    assert!(size as u64 <= EVENT_SIZE_MAX, "event of {size} bytes exceeds EVENT_SIZE_MAX");
    EventHeader { event_size: size as u32, ..header }.encode(out);
    out.extend_from_slice(body);
    if checksum {
        let crc = event_crc32(&out[start..]);
        out.extend_from_slice(&crc.to_le_bytes());
    }
    debug_assert_eq!(out.len() - start, size);
}

/// Rewrites the `log_pos` of an encoded event in place and refreshes its
/// checksum. Used when a transaction cache's events move to their final
/// file offset.
pub fn set_log_pos(event: &mut [u8], log_pos: u32, checksum: bool) {
    event[LOG_POS_OFFSET..LOG_POS_OFFSET + 4].copy_from_slice(&log_pos.to_le_bytes());
    if checksum {
        let size = event.len();
        let crc = event_crc32(&event[..size - CHECKSUM_LENGTH]);
        event[size - CHECKSUM_LENGTH..].copy_from_slice(&crc.to_le_bytes());
    }
}

/// `event_size` of the event whose header starts `buffer`, if 19 bytes are there.
pub fn peek_event_size(buffer: &[u8]) -> Option<u32> {
    buffer.get(EVENT_SIZE_OFFSET..EVENT_SIZE_OFFSET + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()))
}
