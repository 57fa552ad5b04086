//! File-level layout: magic, Format_description, then events back to back.
//! [`EventStream`] walks a file's bytes event by event with the
//! [`Framing`] every walker uses; every error names its offset.

use crate::constants::{BINLOG_CHECKSUM_ALG_UNDEF, BINLOG_MAGIC, BINLOG_MAGIC_LENGTH, COMMON_HEADER_LENGTH, LOG_EVENT_BINLOG_IN_USE_F};
use crate::error::DecodeError;
use crate::events::{DecodeContext, Event, FormatDescription};
use crate::frame::{encode_event, RawEvent};
use crate::gtid_set::GtidSet;
use crate::header::EventHeader;
use crate::walk::{FrameError, Framing};

/// An error at a known file offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at offset {offset}: {error}")]
pub struct OffsetError {
    pub offset: u64,
    pub error: DecodeError,
}

pub fn check_magic(bytes: &[u8]) -> Result<(), OffsetError> {
    if bytes.len() < BINLOG_MAGIC_LENGTH || bytes[..BINLOG_MAGIC_LENGTH] != BINLOG_MAGIC {
        return Err(OffsetError { offset: 0, error: DecodeError::BadMagic { found: bytes[..bytes.len().min(4)].to_vec() } });
    }
    Ok(())
}

/// Iterates the events of a whole file held in memory: the walk's
/// [`Framing`] over a slice.
pub struct EventStream<'a> {
    bytes: &'a [u8],
    offset: usize,
    framing: Framing,
    failed: bool,
}

impl<'a> EventStream<'a> {
    /// Starts after the magic, which it checks.
    pub fn new(bytes: &'a [u8]) -> Result<EventStream<'a>, OffsetError> {
        check_magic(bytes)?;
        Ok(EventStream { bytes, offset: BINLOG_MAGIC_LENGTH, framing: Framing::new(), failed: false })
    }

    pub fn offset(&self) -> u64 {
        self.offset as u64
    }

    pub fn has_checksum(&self) -> bool {
        self.framing.has_checksum()
    }

    /// The decode context of the last Format_description read.
    pub fn context(&self) -> &DecodeContext {
        &self.framing.context
    }

    /// Next framed event and its offset; `None` at a clean end of file.
    pub fn next_raw(&mut self) -> Option<Result<(u64, RawEvent<'a>), OffsetError>> {
        if self.failed || self.offset >= self.bytes.len() {
            return None;
        }
        let at = self.offset;
        let rest = &self.bytes[at..];
        let framed = match self.framing.header(rest, rest.len() as u64) {
            Ok(header) => self.framing.event(&rest[..header.event_size as usize], true),
            Err(FrameError::Invalid(error)) => Err(error),
            // The header's own error: which of its fields the bytes end in.
            Err(FrameError::ShortHeader { .. }) => Err(EventHeader::decode(rest).expect_err("fewer bytes than a common header")),
            Err(FrameError::ShortEvent { needed, available }) => {
                Err(DecodeError::Truncated { what: "event", needed: needed as usize, available: available as usize })
            }
        };
        match framed {
            Ok(raw) => {
                self.offset += raw.bytes.len();
                Some(Ok((at as u64, raw)))
            }
            Err(error) => {
                self.failed = true;
                Some(Err(OffsetError { offset: at as u64, error }))
            }
        }
    }
}

impl<'a> Iterator for EventStream<'a> {
    type Item = Result<(u64, RawEvent<'a>, Event), OffsetError>;
    fn next(&mut self) -> Option<Self::Item> {
        let (offset, raw) = match self.next_raw()? {
            Ok(pair) => pair,
            Err(error) => return Some(Err(error)),
        };
        match Event::decode(&raw, &self.framing.context) {
            Ok(event) => Some(Ok((offset, raw, event))),
            Err(error) => {
                self.failed = true;
                Some(Err(OffsetError { offset, error }))
            }
        }
    }
}

/// Parameters every event binlogd writes shares.
#[derive(Debug, Clone, Copy)]
pub struct WriterIdentity {
    pub server_id: u32,
    pub checksum: bool,
}

/// Appends one event at file offset `offset` (= `out.len()` for a whole
/// file buffer) with a correct `log_pos`; returns the end offset.
pub fn append_event(out: &mut Vec<u8>, offset: u64, event: &Event, timestamp: u32, flags: u16, identity: WriterIdentity) -> u64 {
    let mut body = Vec::new();
    event.encode_body(&mut body);
    // A Format_description carries the checksum field whenever its server
    // knew checksums, whatever the algorithm; one from before has none.
    let checksum = match event {
        Event::FormatDescription(format) => format.checksum_alg != BINLOG_CHECKSUM_ALG_UNDEF,
        _ => identity.checksum,
    };
    let size = COMMON_HEADER_LENGTH + body.len() + if checksum { 4 } else { 0 };
    let end = offset + size as u64;
    let header = EventHeader {
        timestamp,
        event_type: event.event_type(),
        server_id: identity.server_id,
        event_size: 0,
        log_pos: u32::try_from(end).unwrap_or(u32::MAX),
        flags,
    };
    encode_event(header, &body, checksum, out);
    end
}

/// Magic + Format_description (with the in-use flag) + Previous_gtids:
/// the first bytes of every binlog file.
pub fn file_preamble(create_timestamp: u32, previous_gtids: &GtidSet, identity: WriterIdentity) -> Vec<u8> {
    let mut out = BINLOG_MAGIC.to_vec();
    let fde = Event::FormatDescription(FormatDescription::binlogd(create_timestamp, identity.checksum));
    let end = append_event(&mut out, BINLOG_MAGIC_LENGTH as u64, &fde, create_timestamp, LOG_EVENT_BINLOG_IN_USE_F, identity);
    let previous = Event::PreviousGtids(previous_gtids.clone());
    append_event(&mut out, end, &previous, create_timestamp, 0, identity);
    out
}

/// Offset of the FDE's flags field in a file: the in-use flag lives there.
pub const FDE_FLAGS_FILE_OFFSET: u64 = (BINLOG_MAGIC_LENGTH + crate::constants::FLAGS_OFFSET) as u64;
