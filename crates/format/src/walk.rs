//! The framing of a file's events, event after event: what every walker of
//! a binlog checks, in one order, wherever its bytes come from (a slice in
//! memory, a file read ahead in blocks, a file read one event at a time).
//!
//! 1. [`Framing::header`]: a whole common header, `event_size` within the
//!    format's bounds ([`check_event_size`]), and the event within the bytes
//!    the source still has.
//! 2. [`Framing::event`]: the whole event through [`RawEvent::parse`] (the
//!    CRC32 against the algorithm the file's Format_description named), and
//!    a Format_description's lesson for the events after it.

use crate::constants::{EventType, COMMON_HEADER_LENGTH};
use crate::error::DecodeError;
use crate::events::{DecodeContext, FormatDescription};
use crate::frame::{check_event_size, RawEvent};
use crate::header::EventHeader;

/// The common header of binlog version 1: no log_pos, no flags.
const V1_HEADER_LENGTH: usize = 13;

/// Why the event at a position cannot be framed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// Fewer bytes than a common header are left.
    ShortHeader { available: u64 },
    /// The event claims `needed` bytes; only `available` are left.
    ShortEvent { needed: u64, available: u64 },
    /// The bytes are not an event.
    Invalid(DecodeError),
}

/// What a walk has learnt of its file: whether events carry a CRC32 footer
/// and the Format_description in force.
#[derive(Debug, Clone)]
pub struct Framing {
    has_checksum: bool,
    /// Set by each Format_description read.
    pub context: DecodeContext,
    seen_format: bool,
}

impl Default for Framing {
    fn default() -> Framing {
        Framing::new()
    }
}

impl Framing {
    /// Before the Format_description: events are taken to carry a checksum
    /// (the Format_description always does, whatever the algorithm).
    pub fn new() -> Framing {
        Framing { has_checksum: true, context: DecodeContext::default(), seen_format: false }
    }

    pub fn has_checksum(&self) -> bool {
        self.has_checksum
    }

    /// The file's Format_description, once read.
    pub fn format(&self) -> Option<&FormatDescription> {
        self.seen_format.then_some(&self.context.format)
    }

    /// The header at the start of `bytes` (at least a common header's
    /// worth, when there is one), checked before the body is read:
    /// `available` is how many bytes the source has from the event's start.
    pub fn header(&self, bytes: &[u8], available: u64) -> Result<EventHeader, FrameError> {
        if available < COMMON_HEADER_LENGTH as u64 {
            return Err(FrameError::ShortHeader { available });
        }
        let header = EventHeader::decode(bytes).map_err(FrameError::Invalid)?;
        self.refuse_older_versions(bytes).map_err(FrameError::Invalid)?;
        let size = u64::from(header.event_size);
        check_event_size(header.event_type, size, self.has_checksum).map_err(FrameError::Invalid)?;
        if size > available {
            return Err(FrameError::ShortEvent { needed: size, available });
        }
        Ok(header)
    }

    /// The whole event `bytes`, framed and (when `verify_checksum`, and
    /// always for a Format_description) its CRC32 checked; a
    /// Format_description sets how the events after it are read.
    pub fn event<'a>(&mut self, bytes: &'a [u8], verify_checksum: bool) -> Result<RawEvent<'a>, DecodeError> {
        let raw = self.check(bytes, verify_checksum)?;
        if raw.header.event_type == EventType::FormatDescription as u8 {
            let format = FormatDescription::decode_body(raw.body)?;
            self.has_checksum = format.has_checksum();
            self.context.format = format;
            self.seen_format = true;
        }
        Ok(raw)
    }

    /// A file of binlog version 1 (MySQL 3.23) or 3 (MySQL 4.x) starts with
    /// a Start_event_v3 (type 1) where version 4 has its Format_description:
    /// its version is refused by name, before its framing (a 13-byte header
    /// in version 1, no checksum) reads as a corrupt event. The version
    /// field follows the header: at 13 in version 1, at 19 in version 3.
    fn refuse_older_versions(&self, bytes: &[u8]) -> Result<(), DecodeError> {
        if self.seen_format || bytes.get(crate::constants::TYPE_OFFSET) != Some(&(EventType::StartV3 as u8)) {
            return Ok(());
        }
        let field = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        let version = match (field(V1_HEADER_LENGTH), field(COMMON_HEADER_LENGTH)) {
            (Some(1), _) => 1,
            (_, Some(version)) => version,
            _ => 3,
        };
        Err(DecodeError::UnsupportedBinlogVersion { version })
    }

    /// As [`Framing::event`], learning nothing: for a look at an event away
    /// from the walk.
    pub fn check<'a>(&self, bytes: &'a [u8], verify_checksum: bool) -> Result<RawEvent<'a>, DecodeError> {
        self.refuse_older_versions(bytes)?;
        let is_format_description = bytes.get(crate::constants::TYPE_OFFSET) == Some(&(EventType::FormatDescription as u8));
        if verify_checksum || is_format_description {
            return RawEvent::parse(bytes, self.has_checksum);
        }
        RawEvent::parse_unverified(bytes, self.has_checksum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::{file_preamble, WriterIdentity};
    use crate::gtid_set::GtidSet;

    fn preamble(checksum: bool) -> Vec<u8> {
        file_preamble(1, &GtidSet::default(), WriterIdentity { server_id: 1, checksum })
    }

    #[test]
    fn the_format_description_decides_the_checksum_of_the_events_after_it() {
        for checksum in [true, false] {
            let bytes = preamble(checksum);
            let mut framing = Framing::new();
            assert!(framing.format().is_none());
            let mut at = 4;
            while at < bytes.len() {
                let header = framing.header(&bytes[at..], (bytes.len() - at) as u64).unwrap();
                let raw = framing.event(&bytes[at..at + header.event_size as usize], true).unwrap();
                at += raw.bytes.len();
            }
            assert_eq!(at, bytes.len());
            assert_eq!(framing.has_checksum(), checksum);
            assert_eq!(framing.format().map(FormatDescription::has_checksum), Some(checksum));
        }
    }

    #[test]
    fn headers_are_checked_before_bodies_in_one_order() {
        let bytes = preamble(true);
        let framing = Framing::new();
        assert_eq!(framing.header(&bytes[4..10], 6), Err(FrameError::ShortHeader { available: 6 }));
        let size = u64::from(EventHeader::decode(&bytes[4..]).unwrap().event_size);
        assert_eq!(framing.header(&bytes[4..], 30), Err(FrameError::ShortEvent { needed: size, available: 30 }));
        let mut tiny = bytes[4..4 + COMMON_HEADER_LENGTH].to_vec();
        tiny[crate::constants::EVENT_SIZE_OFFSET] = 5;
        tiny[crate::constants::EVENT_SIZE_OFFSET + 1] = 0;
        assert!(matches!(framing.header(&tiny, 100), Err(FrameError::Invalid(DecodeError::BadLength { .. }))));
    }

    #[test]
    fn an_unverified_event_keeps_its_framing_checks_and_a_format_description_is_always_verified() {
        let mut bytes = preamble(true);
        let framing = Framing::new();
        let fde_size = EventHeader::decode(&bytes[4..]).unwrap().event_size as usize;
        let previous = 4 + fde_size;
        // A flipped body byte in the Previous_gtids event: only a verifying look sees it.
        let last = bytes.len() - 5;
        bytes[last] ^= 1;
        assert!(framing.check(&bytes[previous..], false).is_ok());
        assert!(matches!(framing.check(&bytes[previous..], true), Err(DecodeError::BadChecksum { .. })));
        bytes[4 + COMMON_HEADER_LENGTH] ^= 1;
        assert!(matches!(framing.check(&bytes[4..previous], false), Err(DecodeError::BadChecksum { .. })));
    }
}
