//! Heartbeat_log_event v2 (41): the heartbeat a MySQL 8.0.26+ source sends
//! a replica that asked for it, with a 64-bit position. Its body is a list
//! of fields, each a type, a length and a value (types and lengths
//! length-encoded), ended by type 0:
//!
//! | type | value |
//! |------|-------|
//! | 1 | log file name |
//! | 2 | log position, length-encoded |
//!
//! Fields of other types are skipped, as MySQL's reader skips them.

use crate::bytes::{packed_u64_len, ByteReader, ByteWriter};
use crate::error::DecodeError;

pub const FIELD_END_MARK: u64 = 0;
pub const FIELD_LOG_FILENAME: u64 = 1;
pub const FIELD_LOG_POSITION: u64 = 2;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeartbeatV2Event {
    pub log_filename: Vec<u8>,
    pub log_position: Option<u64>,
}

impl HeartbeatV2Event {
    pub fn decode_body(body: &[u8]) -> Result<HeartbeatV2Event, DecodeError> {
        let mut reader = ByteReader::new(body);
        let mut event = HeartbeatV2Event::default();
        while !reader.is_empty() {
            let field = reader.packed_u64("heartbeat field type")?;
            if field == FIELD_END_MARK {
                break;
            }
            let length = reader.packed_count(1, "heartbeat field length")?;
            let value = reader.take(length, "heartbeat field")?;
            match field {
                FIELD_LOG_FILENAME => event.log_filename = value.to_vec(),
                FIELD_LOG_POSITION => {
                    let mut position = ByteReader::new(value);
                    event.log_position = Some(position.packed_u64("heartbeat log position")?);
                    position.finish("heartbeat log position")?;
                }
                _ => {}
            }
        }
        reader.finish("heartbeat")?;
        Ok(event)
    }

    /// As MySQL writes it: the name, the position, the end mark.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_packed_u64(FIELD_LOG_FILENAME);
        out.put_packed_u64(self.log_filename.len() as u64);
        out.put_slice(&self.log_filename);
        if let Some(position) = self.log_position {
            out.put_packed_u64(FIELD_LOG_POSITION);
            out.put_packed_u64(packed_u64_len(position) as u64);
            out.put_packed_u64(position);
        }
        out.put_packed_u64(FIELD_END_MARK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeats_round_trip_skip_unknown_fields_and_reject_overruns() {
        let event = HeartbeatV2Event { log_filename: b"binlog.000041".to_vec(), log_position: Some(123_456_789) };
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(HeartbeatV2Event::decode_body(&body).unwrap(), event);
        let mut with_unknown = vec![9, 2, 0xaa, 0xbb];
        with_unknown.extend_from_slice(&body);
        assert_eq!(HeartbeatV2Event::decode_body(&with_unknown).unwrap(), event);
        let mut overrun = body.clone();
        overrun[1] = 200;
        assert!(HeartbeatV2Event::decode_body(&overrun).is_err());
        assert!(HeartbeatV2Event::decode_body(&body[..body.len() - 3]).is_err());
    }
}
