//! Gtid_tagged_log_event (type 42, MySQL 8.3+): the Gtid event of a tagged
//! GTID, written in MySQL's serialization-library format instead of the
//! fixed layout of type 33.
//!
//! | bytes | field |
//! |-------|-------|
//! | 1 | serialization format version (= 2) |
//! | varint | payload size: every byte of the body, this field included |
//! | varint | last non-ignorable field id (= 0: every field may be skipped) |
//! | ... | (field id varint, value) pairs in field-id order |
//!
//! | id | field | value |
//! |----|-------|-------|
//! | 0 | gtid_flags | unsigned |
//! | 1 | source UUID | 16 unsigned varints, one per byte |
//! | 2 | gno | signed |
//! | 3 | tag | length varint and the bytes |
//! | 4 | last_committed | signed |
//! | 5 | sequence_number | signed |
//! | 6 | immediate_commit_timestamp µs | unsigned |
//! | 7 | original_commit_timestamp µs (only when it differs) | unsigned |
//! | 8 | transaction_length | unsigned |
//! | 9 | immediate_server_version | unsigned |
//! | 10 | original_server_version (only when it differs) | unsigned |
//! | 11 | commit_group_ticket (only when set) | unsigned |

use crate::bytes::ByteReader;
use crate::error::DecodeError;
use crate::events::gtid::GtidEvent;
use crate::gtid_set::{Gtid, Uuid};
use crate::gtid_tag::{Tag, TAG_MAX_LENGTH};
use crate::serialization::{put_varlen_i64, put_varlen_u64, read_varlen_i64, read_varlen_u64, varlen_u64_len};

const SERIALIZATION_VERSION: u8 = 2;
const LAST_NON_IGNORABLE_FIELD: u64 = 0;

mod field {
    pub const GTID_FLAGS: u64 = 0;
    pub const UUID: u64 = 1;
    pub const GNO: u64 = 2;
    pub const TAG: u64 = 3;
    pub const LAST_COMMITTED: u64 = 4;
    pub const SEQUENCE_NUMBER: u64 = 5;
    pub const IMMEDIATE_COMMIT_TIMESTAMP: u64 = 6;
    pub const ORIGINAL_COMMIT_TIMESTAMP: u64 = 7;
    pub const TRANSACTION_LENGTH: u64 = 8;
    pub const IMMEDIATE_SERVER_VERSION: u64 = 9;
    pub const ORIGINAL_SERVER_VERSION: u64 = 10;
    pub const COMMIT_GROUP_TICKET: u64 = 11;
}

impl GtidEvent {
    fn encode_tagged_fields(&self, out: &mut Vec<u8>) {
        let unsigned = |out: &mut Vec<u8>, id: u64, value: u64| {
            put_varlen_u64(out, id);
            put_varlen_u64(out, value);
        };
        let signed = |out: &mut Vec<u8>, id: u64, value: i64| {
            put_varlen_u64(out, id);
            put_varlen_i64(out, value);
        };
        unsigned(out, field::GTID_FLAGS, u64::from(self.flags));
        put_varlen_u64(out, field::UUID);
        for &byte in &self.gtid.uuid.0 {
            put_varlen_u64(out, u64::from(byte));
        }
        signed(out, field::GNO, self.gtid.gno as i64);
        put_varlen_u64(out, field::TAG);
        put_varlen_u64(out, self.gtid.tag.as_str().len() as u64);
        out.extend_from_slice(self.gtid.tag.as_str().as_bytes());
        signed(out, field::LAST_COMMITTED, self.last_committed);
        signed(out, field::SEQUENCE_NUMBER, self.sequence_number);
        unsigned(out, field::IMMEDIATE_COMMIT_TIMESTAMP, self.immediate_commit_timestamp_us);
        if let Some(original) = self.original_commit_timestamp_us {
            unsigned(out, field::ORIGINAL_COMMIT_TIMESTAMP, original);
        }
        unsigned(out, field::TRANSACTION_LENGTH, self.transaction_length);
        unsigned(out, field::IMMEDIATE_SERVER_VERSION, u64::from(self.immediate_server_version));
        if let Some(original) = self.original_server_version {
            unsigned(out, field::ORIGINAL_SERVER_VERSION, u64::from(original));
        }
        if let Some(ticket) = self.commit_group_ticket {
            unsigned(out, field::COMMIT_GROUP_TICKET, ticket);
        }
    }

    pub(crate) fn encode_tagged_body(&self, out: &mut Vec<u8>) {
        let mut fields = Vec::with_capacity(64);
        self.encode_tagged_fields(&mut fields);
        out.push(SERIALIZATION_VERSION);
        put_varlen_u64(out, payload_size(fields.len()));
        put_varlen_u64(out, LAST_NON_IGNORABLE_FIELD);
        out.extend_from_slice(&fields);
    }

    pub(crate) fn tagged_body_length(&self) -> usize {
        let mut fields = Vec::with_capacity(64);
        self.encode_tagged_fields(&mut fields);
        payload_size(fields.len()) as usize
    }

    /// Decodes a Gtid_tagged_log_event body.
    pub fn decode_tagged_body(body: &[u8]) -> Result<GtidEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let version = reader.u8("gtid_tagged serialization version")?;
        if version != SERIALIZATION_VERSION {
            return Err(DecodeError::invalid("gtid_tagged", format!("serialization version {version}, expected 2")));
        }
        let size = read_varlen_u64(&mut reader, "gtid_tagged payload size")?;
        let last_non_ignorable = read_varlen_u64(&mut reader, "gtid_tagged last non-ignorable field")?;
        let fields_length = (size as usize)
            .checked_sub(reader.position())
            .filter(|&n| n <= reader.remaining())
            .ok_or(DecodeError::BadLength { length: size, reason: "gtid_tagged payload size disagrees with the body" })?;
        let mut fields = ByteReader::new(reader.take(fields_length, "gtid_tagged fields")?);
        let mut event = GtidEvent {
            flags: 0,
            gtid: Gtid::new(Uuid::default(), 0),
            last_committed: 0,
            sequence_number: 0,
            immediate_commit_timestamp_us: 0,
            original_commit_timestamp_us: None,
            transaction_length: 0,
            immediate_server_version: 0,
            original_server_version: None,
            commit_group_ticket: None,
            layout: crate::events::gtid::GtidLayout::ServerVersions,
        };
        let non_negative =
            |value: i64, what: &'static str| u64::try_from(value).map_err(|_| DecodeError::invalid(what, format!("{value} is negative")));
        let u32_field = |value: u64, what: &'static str| {
            u32::try_from(value).map_err(|_| DecodeError::invalid(what, format!("{value} exceeds 32 bits")))
        };
        let mut previous_id = None;
        while !fields.is_empty() {
            let id = read_varlen_u64(&mut fields, "gtid_tagged field id")?;
            if previous_id.is_some_and(|previous| id <= previous) {
                return Err(DecodeError::invalid("gtid_tagged", format!("field {id} out of order")));
            }
            previous_id = Some(id);
            match id {
                field::GTID_FLAGS => {
                    let flags = read_varlen_u64(&mut fields, "gtid_tagged flags")?;
                    event.flags =
                        u8::try_from(flags).map_err(|_| DecodeError::invalid("gtid_tagged flags", format!("{flags} exceeds 8 bits")))?;
                }
                field::UUID => {
                    for byte in event.gtid.uuid.0.iter_mut() {
                        let value = read_varlen_u64(&mut fields, "gtid_tagged uuid")?;
                        *byte = u8::try_from(value).map_err(|_| DecodeError::invalid("gtid_tagged uuid", format!("byte {value}")))?;
                    }
                }
                field::GNO => event.gtid.gno = non_negative(read_varlen_i64(&mut fields, "gtid_tagged gno")?, "gtid_tagged gno")?,
                field::TAG => {
                    let length = read_varlen_u64(&mut fields, "gtid_tagged tag length")?;
                    if length > TAG_MAX_LENGTH as u64 {
                        return Err(DecodeError::BadLength { length, reason: "gtid tag longer than 32 bytes" });
                    }
                    event.gtid.tag = Tag::from_stored(fields.take(length as usize, "gtid_tagged tag")?)?;
                }
                field::LAST_COMMITTED => event.last_committed = read_varlen_i64(&mut fields, "gtid_tagged last_committed")?,
                field::SEQUENCE_NUMBER => event.sequence_number = read_varlen_i64(&mut fields, "gtid_tagged sequence_number")?,
                field::IMMEDIATE_COMMIT_TIMESTAMP => {
                    event.immediate_commit_timestamp_us = read_varlen_u64(&mut fields, "gtid_tagged immediate_commit_timestamp")?
                }
                field::ORIGINAL_COMMIT_TIMESTAMP => {
                    event.original_commit_timestamp_us = Some(read_varlen_u64(&mut fields, "gtid_tagged original_commit_timestamp")?)
                }
                field::TRANSACTION_LENGTH => event.transaction_length = read_varlen_u64(&mut fields, "gtid_tagged transaction_length")?,
                field::IMMEDIATE_SERVER_VERSION => {
                    let version = read_varlen_u64(&mut fields, "gtid_tagged immediate_server_version")?;
                    event.immediate_server_version = u32_field(version, "gtid_tagged immediate_server_version")?;
                }
                field::ORIGINAL_SERVER_VERSION => {
                    let version = read_varlen_u64(&mut fields, "gtid_tagged original_server_version")?;
                    event.original_server_version = Some(u32_field(version, "gtid_tagged original_server_version")?);
                }
                field::COMMIT_GROUP_TICKET => {
                    event.commit_group_ticket = Some(read_varlen_u64(&mut fields, "gtid_tagged commit_group_ticket")?)
                }
                // A later server's field: its length is unknown, so the
                // rest is skipped, which the writer allows unless it marked
                // the field non-ignorable.
                unknown if unknown <= last_non_ignorable => {
                    return Err(DecodeError::invalid("gtid_tagged", format!("unknown non-ignorable field {unknown}")));
                }
                _ => break,
            }
        }
        reader.finish("gtid_tagged body")?;
        if event.gtid.tag.is_empty() {
            return Err(DecodeError::invalid("gtid_tagged", "no tag"));
        }
        if event.gtid.gno == 0 {
            return Err(DecodeError::invalid("gtid_tagged", "no gno"));
        }
        Ok(event)
    }
}

/// The payload size counts the version byte, its own varint, the
/// last-non-ignorable varint and the fields; its varint's length depends
/// on the value, so it is iterated until it settles.
fn payload_size(fields_length: usize) -> u64 {
    let fixed = (1 + varlen_u64_len(LAST_NON_IGNORABLE_FIELD) + fields_length) as u64;
    let mut size = fixed + 1;
    loop {
        let next = fixed + varlen_u64_len(size) as u64;
        if next == size {
            return size;
        }
        size = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gtid_set::Tsid;

    fn event() -> GtidEvent {
        let tsid = Tsid { uuid: Uuid([0xab; 16]), tag: "domain_1".parse().unwrap() };
        GtidEvent {
            flags: 1,
            gtid: Gtid::tagged(tsid, 42),
            last_committed: 7,
            sequence_number: 8,
            immediate_commit_timestamp_us: 1_700_000_000_000_000,
            original_commit_timestamp_us: Some(1_600_000_000_000_000),
            transaction_length: 300,
            immediate_server_version: 80400,
            original_server_version: None,
            commit_group_ticket: None,
            layout: crate::events::gtid::GtidLayout::ServerVersions,
        }
    }

    #[test]
    fn tagged_bodies_round_trip_and_say_their_own_size() {
        let event = event();
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(body[0], 2);
        assert_eq!(body.len(), event.body_length());
        let mut reader = ByteReader::new(&body[1..]);
        assert_eq!(read_varlen_u64(&mut reader, "size").unwrap(), body.len() as u64);
        assert_eq!(GtidEvent::decode_tagged_body(&body).unwrap(), event);
        for cut in 0..body.len() {
            assert!(GtidEvent::decode_tagged_body(&body[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn fields_of_a_later_server_are_skipped_unless_marked_non_ignorable() {
        let event = event();
        let mut fields = Vec::new();
        event.encode_tagged_fields(&mut fields);
        put_varlen_u64(&mut fields, 12);
        put_varlen_u64(&mut fields, 5);
        let framed = |last_non_ignorable: u64| {
            let mut body = vec![SERIALIZATION_VERSION];
            put_varlen_u64(&mut body, payload_size(fields.len()));
            put_varlen_u64(&mut body, last_non_ignorable);
            body.extend_from_slice(&fields);
            body
        };
        assert_eq!(GtidEvent::decode_tagged_body(&framed(0)).unwrap(), event);
        assert!(GtidEvent::decode_tagged_body(&framed(12)).is_err());
    }
}
