//! The 19-byte common header every v4 event starts with.

use crate::bytes::{ByteReader, ByteWriter};
use crate::constants::COMMON_HEADER_LENGTH;
use crate::error::DecodeError;

/// | offset | bytes | field      | meaning                                   |
/// |--------|-------|------------|-------------------------------------------|
/// | 0      | 4     | timestamp  | seconds since the epoch at statement start|
/// | 4      | 1     | type       | event type code                           |
/// | 5      | 4     | server_id  | originating server                        |
/// | 9      | 4     | event_size | header + body + checksum                  |
/// | 13     | 4     | log_pos    | file offset of the *next* event           |
/// | 17     | 2     | flags      | `LOG_EVENT_*_F`                           |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct EventHeader {
    pub timestamp: u32,
    pub event_type: u8,
    pub server_id: u32,
    pub event_size: u32,
    pub log_pos: u32,
    pub flags: u16,
}

impl EventHeader {
    pub fn decode(bytes: &[u8]) -> Result<EventHeader, DecodeError> {
        let mut reader = ByteReader::new(bytes);
        Ok(EventHeader {
            timestamp: reader.u32("header timestamp")?,
            event_type: reader.u8("header event type")?,
            server_id: reader.u32("header server_id")?,
            event_size: reader.u32("header event_size")?,
            log_pos: reader.u32("header log_pos")?,
            flags: reader.u16("header flags")?,
        })
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u32(self.timestamp);
        out.put_u8(self.event_type);
        out.put_u32(self.server_id);
        out.put_u32(self.event_size);
        out.put_u32(self.log_pos);
        out.put_u16(self.flags);
        debug_assert_eq!(out.len() - start, COMMON_HEADER_LENGTH);
    }
}
