//! Small control events: Xid, Rotate, Stop, Heartbeat, Rows_query.

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

/// Xid (type 16): ends a transaction of a transactional engine.
/// Body: xid u64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XidEvent {
    pub xid: u64,
}

impl XidEvent {
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u64(self.xid);
    }
    pub fn decode_body(body: &[u8]) -> Result<XidEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let xid = reader.u64("xid")?;
        reader.finish("xid body")?;
        Ok(XidEvent { xid })
    }
}

/// Rotate (type 4): last event of a file, names the next one. Also sent
/// first in a dump stream (with `LOG_EVENT_ARTIFICIAL_F`).
/// Body: position u64, next file name (rest of body, no terminator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotateEvent {
    pub position: u64,
    pub next_file: String,
}

impl RotateEvent {
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u64(self.position);
        out.put_slice(self.next_file.as_bytes());
    }
    pub fn decode_body(body: &[u8]) -> Result<RotateEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let position = reader.u64("rotate position")?;
        let name = reader.rest();
        let next_file = String::from_utf8(name.to_vec()).map_err(|_| DecodeError::invalid("rotate", "file name is not UTF-8"))?;
        Ok(RotateEvent { position, next_file })
    }
}

/// Heartbeat (type 27): sent by a source on an idle dump connection.
/// Body: the current file name; the header's log_pos is the position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatEvent {
    pub log_file: String,
}

impl HeartbeatEvent {
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_slice(self.log_file.as_bytes());
    }
    pub fn decode_body(body: &[u8]) -> Result<HeartbeatEvent, DecodeError> {
        let log_file = String::from_utf8(body.to_vec()).map_err(|_| DecodeError::invalid("heartbeat", "file name is not UTF-8"))?;
        Ok(HeartbeatEvent { log_file })
    }
}

/// Rows_query (type 29, ignorable): the statement text behind row events.
/// Body: 1 length byte (ignored by readers; MySQL truncates it to 255),
/// then the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsQueryEvent {
    pub query: Vec<u8>,
}

impl RowsQueryEvent {
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u8(self.query.len().min(255) as u8);
        out.put_slice(&self.query);
    }
    pub fn decode_body(body: &[u8]) -> Result<RowsQueryEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        reader.u8("rows_query length")?;
        Ok(RowsQueryEvent { query: reader.rest().to_vec() })
    }
}
