//! Transaction_payload (type 40, MySQL 8.0.20+ with
//! `binlog_transaction_compression=ON`): a whole transaction's events,
//! compressed together, in one event after its Gtid.
//!
//! The body is a header of fields, each `type`, `length`, `value` as
//! packed integers (MySQL's `net_store_length`), ended by type 0; then the
//! payload. Fields MySQL writes:
//!
//! | type | field | value |
//! |------|-------|-------|
//! | 1 | payload size | bytes of the payload after the header |
//! | 2 | compression type | 0 zstd, 255 none |
//! | 3 | uncompressed size | bytes of the events once decompressed |
//! | 0 | end of the header | (no length, no value) |
//!
//! Unknown field types are skipped by their length, as MySQL skips them.
//! The decompressed payload is the transaction's events back to back, each
//! a common header and body without a checksum (the outer event carries
//! the file's).

use std::cell::RefCell;
use std::io::Read;

use crate::bytes::{ByteReader, ByteWriter};
use crate::constants::EVENT_SIZE_MAX;
use crate::error::{DecodeError, EncodeError};
use crate::events::{DecodeContext, Event};
use crate::frame::RawEvent;
use crate::header::EventHeader;

pub const FIELD_END: u64 = 0;
pub const FIELD_PAYLOAD_SIZE: u64 = 1;
pub const FIELD_COMPRESSION_TYPE: u64 = 2;
pub const FIELD_UNCOMPRESSED_SIZE: u64 = 3;

/// `binary_log::transaction::compression::type`.
pub const COMPRESSION_ZSTD: u64 = 0;
pub const COMPRESSION_NONE: u64 = 255;

/// The most bytes one payload may decompress to: a transaction's events,
/// each at most an event's size, are bounded as MySQL bounds them by
/// `max_allowed_packet`.
pub const UNCOMPRESSED_SIZE_MAX: u64 = EVENT_SIZE_MAX;

/// One header field as stored: its type and its value's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadField {
    pub field_type: u64,
    pub value: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionPayloadEvent {
    /// The header's fields in their stored order, the end mark excluded.
    pub fields: Vec<PayloadField>,
    pub payload: Vec<u8>,
}

/// One event of a decompressed payload.
#[derive(Debug, Clone, PartialEq)]
pub struct InnerEvent {
    /// Offset of the event within the decompressed payload.
    pub offset: u64,
    pub header: EventHeader,
    pub event: Event,
}

impl TransactionPayloadEvent {
    /// A payload of `events` (each framed without a checksum), compressed
    /// with zstd at `level`, or stored as is when `level` is `None`.
    pub fn new(events: &[u8], level: Option<i32>) -> Result<TransactionPayloadEvent, EncodeError> {
        let (compression, payload) = match level {
            Some(level) => (COMPRESSION_ZSTD, compress_zstd(events, level)?),
            None => (COMPRESSION_NONE, events.to_vec()),
        };
        let field = |field_type, value: u64| {
            let mut bytes = Vec::new();
            bytes.put_packed_u64(value);
            PayloadField { field_type, value: bytes }
        };
        let mut fields = vec![field(FIELD_PAYLOAD_SIZE, payload.len() as u64), field(FIELD_COMPRESSION_TYPE, compression)];
        if compression != COMPRESSION_NONE {
            fields.push(field(FIELD_UNCOMPRESSED_SIZE, events.len() as u64));
        }
        Ok(TransactionPayloadEvent { fields, payload })
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        for field in &self.fields {
            out.put_packed_u64(field.field_type);
            out.put_packed_u64(field.value.len() as u64);
            out.put_slice(&field.value);
        }
        out.put_packed_u64(FIELD_END);
        out.put_slice(&self.payload);
    }

    pub fn decode_body(body: &[u8]) -> Result<TransactionPayloadEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let mut fields = Vec::new();
        loop {
            let field_type = reader.packed_u64("Transaction_payload field type")?;
            if field_type == FIELD_END {
                break;
            }
            let length = reader.packed_u64("Transaction_payload field length")?;
            let length = usize::try_from(length).map_err(|_| DecodeError::BadLength { length, reason: "a payload header field" })?;
            let value = reader.take(length, "Transaction_payload field value")?.to_vec();
            fields.push(PayloadField { field_type, value });
        }
        let event = TransactionPayloadEvent { fields, payload: reader.rest().to_vec() };
        let size = event.field(FIELD_PAYLOAD_SIZE)?.ok_or_else(|| DecodeError::invalid("Transaction_payload", "no payload size field"))?;
        if size != event.payload.len() as u64 {
            return Err(DecodeError::invalid(
                "Transaction_payload",
                format!("payload size field says {size} bytes, {} follow the header", event.payload.len()),
            ));
        }
        event.compression_type()?;
        Ok(event)
    }

    /// The value of the header field `field_type`, when present.
    pub fn field(&self, field_type: u64) -> Result<Option<u64>, DecodeError> {
        let Some(field) = self.fields.iter().find(|field| field.field_type == field_type) else { return Ok(None) };
        let mut reader = ByteReader::new(&field.value);
        let value = reader.packed_u64("Transaction_payload field value")?;
        reader.finish("Transaction_payload field value")?;
        Ok(Some(value))
    }

    /// `COMPRESSION_ZSTD` or `COMPRESSION_NONE`.
    pub fn compression_type(&self) -> Result<u64, DecodeError> {
        match self.field(FIELD_COMPRESSION_TYPE)? {
            Some(kind @ (COMPRESSION_ZSTD | COMPRESSION_NONE)) => Ok(kind),
            Some(other) => Err(DecodeError::invalid("Transaction_payload", format!("unknown compression type {other}"))),
            None => Err(DecodeError::invalid("Transaction_payload", "no compression type field")),
        }
    }

    pub fn compression_name(&self) -> &'static str {
        match self.compression_type() {
            Ok(COMPRESSION_ZSTD) => "ZSTD",
            Ok(_) => "NONE",
            Err(_) => "UNKNOWN",
        }
    }

    /// The events' bytes, decompressed: exactly the uncompressed size the
    /// header names, at most [`UNCOMPRESSED_SIZE_MAX`].
    pub fn decompress(&self) -> Result<Vec<u8>, DecodeError> {
        if self.compression_type()? == COMPRESSION_NONE {
            return Ok(self.payload.clone());
        }
        let expected = self.field(FIELD_UNCOMPRESSED_SIZE)?;
        let limit = expected.unwrap_or(UNCOMPRESSED_SIZE_MAX);
        if limit > UNCOMPRESSED_SIZE_MAX {
            return Err(DecodeError::BadLength { length: limit, reason: "an uncompressed payload above 1 GiB" });
        }
        let decoder = zstd::stream::read::Decoder::with_buffer(&self.payload[..])
            .map_err(|error| DecodeError::invalid("Transaction_payload zstd", error.to_string()))?;
        let mut events = Vec::with_capacity(expected.unwrap_or(0).min(1 << 20) as usize);
        // One byte past the limit tells a payload that inflates to more.
        decoder
            .take(limit + 1)
            .read_to_end(&mut events)
            .map_err(|error| DecodeError::invalid("Transaction_payload zstd", error.to_string()))?;
        if let Some(expected) = expected.filter(|&expected| expected != events.len() as u64) {
            return Err(DecodeError::invalid(
                "Transaction_payload",
                format!("the payload decompresses to {} bytes, its header says {expected}", events.len()),
            ));
        }
        if events.len() as u64 > limit {
            return Err(DecodeError::BadLength { length: events.len() as u64, reason: "an uncompressed payload above 1 GiB" });
        }
        Ok(events)
    }

    /// The transaction's events, decoded with the file's `context`.
    pub fn events(&self, context: &DecodeContext) -> Result<Vec<InnerEvent>, DecodeError> {
        let bytes = self.decompress()?;
        let mut events = Vec::new();
        let mut at = 0usize;
        while at < bytes.len() {
            let raw = RawEvent::parse(&bytes[at..], false).map_err(|error| inner_error(at, error))?;
            let event = Event::decode(&raw, context).map_err(|error| inner_error(at, error))?;
            if matches!(event, Event::TransactionPayload(_) | Event::FormatDescription(_)) {
                return Err(inner_error(
                    at,
                    DecodeError::invalid("Transaction_payload", "a payload holds no payload or Format_description"),
                ));
            }
            events.push(InnerEvent { offset: at as u64, header: raw.header, event });
            at += raw.bytes.len();
        }
        Ok(events)
    }
}

thread_local! {
    /// The committing thread's zstd context and its level, kept between
    /// transactions as MySQL keeps one compressor per session: making a
    /// context costs more than compressing a small transaction. One per
    /// thread bounds them by the threads that commit.
    static COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
}

/// `events` compressed at `level` as one zstd frame (its content size
/// in the frame header, as MySQL's writer leaves it), by this thread's context.
fn compress_zstd(events: &[u8], level: i32) -> Result<Vec<u8>, EncodeError> {
    let failed = |error: std::io::Error| EncodeError::invalid("zstd", error.to_string());
    COMPRESSOR.with_borrow_mut(|kept| {
        match kept {
            Some((kept_level, compressor)) if *kept_level != level => {
                compressor.set_compression_level(level).map_err(failed)?;
                *kept_level = level;
            }
            Some(_) => {}
            None => *kept = Some((level, zstd::bulk::Compressor::new(level).map_err(failed)?)),
        }
        let (_, compressor) = kept.as_mut().expect("set above");
        compressor.compress(events).map_err(failed)
    })
}

fn inner_error(at: usize, error: DecodeError) -> DecodeError {
    DecodeError::invalid("Transaction_payload", format!("the event at {at} of the decompressed payload: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threads_kept_context_compresses_as_a_fresh_one_at_every_level() {
        let events: Vec<u8> = (0..4000u32).flat_map(|n| (n % 251).to_le_bytes()).collect();
        for level in [3, 3, 19, 1, 3] {
            let fresh = zstd::bulk::compress(&events, level).unwrap();
            assert_eq!(compress_zstd(&events, level).unwrap(), fresh, "level {level}");
            let event = TransactionPayloadEvent::new(&events, Some(level)).unwrap();
            assert_eq!(event.decompress().unwrap(), events);
        }
    }
    use crate::events::XidEvent;
    use crate::frame::encode_event;

    fn xid_bytes(xid: u64) -> Vec<u8> {
        let mut body = Vec::new();
        Event::Xid(XidEvent { xid }).encode_body(&mut body);
        let mut out = Vec::new();
        let header = EventHeader { event_type: crate::EventType::Xid as u8, ..EventHeader::default() };
        encode_event(header, &body, false, &mut out);
        out
    }

    #[test]
    fn payloads_round_trip_compressed_or_not_and_give_their_events() {
        let mut events = xid_bytes(1);
        events.extend_from_slice(&xid_bytes(2));
        for level in [Some(3), None] {
            let payload = TransactionPayloadEvent::new(&events, level).unwrap();
            let mut body = Vec::new();
            payload.encode_body(&mut body);
            let decoded = TransactionPayloadEvent::decode_body(&body).unwrap();
            assert_eq!(decoded, payload);
            let inner = decoded.events(&DecodeContext::default()).unwrap();
            assert_eq!(
                inner.iter().map(|e| e.event.clone()).collect::<Vec<_>>(),
                vec![Event::Xid(XidEvent { xid: 1 }), Event::Xid(XidEvent { xid: 2 })]
            );
            assert_eq!(inner[1].offset, xid_bytes(1).len() as u64);
        }
    }

    #[test]
    fn a_payload_whose_sizes_lie_is_refused() {
        let events = xid_bytes(1);
        let mut payload = TransactionPayloadEvent::new(&events, Some(3)).unwrap();
        payload.fields[2].value = vec![5];
        assert!(payload.decompress().is_err());
        let mut body = Vec::new();
        TransactionPayloadEvent::new(&events, Some(3)).unwrap().encode_body(&mut body);
        body.push(0);
        assert!(TransactionPayloadEvent::decode_body(&body).is_err());
        body.truncate(body.len() - 3);
        assert!(TransactionPayloadEvent::decode_body(&body).is_err());
    }
}
