//! A GTID set's binary form (MySQL's `Gtid_set::encode`), the body of a
//! Previous_gtids event and the set a COM_BINLOG_DUMP_GTID carries.
//!
//! | bytes | field |
//! |-------|-------|
//! | 8 | untagged: n_sids; tagged: `1 << 56 \| n_sids << 8 \| 1` |
//! | 16 | per source: UUID |
//! | 1-9 + n | tagged format only: the tag's length (serialization-library varint) and bytes, empty for untagged GTIDs |
//! | 8 | n_intervals |
//! | 16 each | interval start, end (exclusive) |
//!
//! The tagged format is written only when the set has a tag, so a set
//! without tags stays readable by servers and clients before MySQL 8.3.

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;
use crate::gtid_set::{GtidSet, Tsid, Uuid};
use crate::gtid_tag::Tag;
use crate::serialization::{put_varlen_u64, read_varlen_u64};

const TAGGED_FORMAT: u64 = 1;

impl GtidSet {
    pub fn encode_previous_gtids_body(&self, out: &mut Vec<u8>) {
        let tagged = self.has_tags();
        let sources = self.intervals().count() as u64;
        out.put_u64(if tagged { TAGGED_FORMAT << 56 | sources << 8 | TAGGED_FORMAT } else { sources });
        for (tsid, list) in self.intervals() {
            out.put_slice(&tsid.uuid.0);
            if tagged {
                put_varlen_u64(out, tsid.tag.as_str().len() as u64);
                out.put_slice(tsid.tag.as_str().as_bytes());
            }
            out.put_u64(list.len() as u64);
            for &(start, end) in list {
                out.put_u64(start);
                out.put_u64(end);
            }
        }
    }

    /// Byte length of [`GtidSet::encode_previous_gtids_body`]'s output.
    pub fn encoded_length(&self) -> usize {
        let mut out = Vec::new();
        self.encode_previous_gtids_body(&mut out);
        out.len()
    }

    pub fn decode_previous_gtids_body(body: &[u8]) -> Result<GtidSet, DecodeError> {
        let mut reader = ByteReader::new(body);
        let header = reader.u64("previous_gtids n_sids")?;
        let tagged = match header >> 56 {
            0 => false,
            TAGGED_FORMAT => true,
            other => return Err(DecodeError::invalid("previous_gtids format", format!("{other} is neither 0 nor 1"))),
        };
        // The tagged header's low byte repeats the format; clients of the
        // dump protocol may leave it 0.
        let uuid_count = if tagged { (header >> 8) & ((1 << 48) - 1) } else { header };
        // Each UUID takes at least 24 bytes: reject absurd counts up front.
        if uuid_count > (reader.remaining() / 24) as u64 {
            return Err(DecodeError::BadLength { length: uuid_count, reason: "n_sids exceeds body" });
        }
        let mut set = GtidSet::new();
        for _ in 0..uuid_count {
            let uuid = Uuid(reader.take(16, "previous_gtids uuid")?.try_into().unwrap());
            let tag = if tagged {
                let length = read_varlen_u64(&mut reader, "previous_gtids tag length")?;
                if length > crate::gtid_tag::TAG_MAX_LENGTH as u64 {
                    return Err(DecodeError::BadLength { length, reason: "gtid tag longer than 32 bytes" });
                }
                match length {
                    0 => Tag::NONE,
                    _ => Tag::from_stored(reader.take(length as usize, "previous_gtids tag")?)?,
                }
            } else {
                Tag::NONE
            };
            let interval_count = reader.u64("previous_gtids n_intervals")?;
            if interval_count > (reader.remaining() / 16) as u64 {
                return Err(DecodeError::BadLength { length: interval_count, reason: "n_intervals exceeds body" });
            }
            for _ in 0..interval_count {
                let start = reader.u64("previous_gtids interval start")?;
                let end = reader.u64("previous_gtids interval end")?;
                if start == 0 || start >= end {
                    return Err(DecodeError::invalid("previous_gtids interval", format!("[{start}, {end}) is empty or starts at 0")));
                }
                set.add_tsid_interval(Tsid { uuid, tag }, start, end);
            }
        }
        reader.finish("previous_gtids body")?;
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuid(n: u8) -> Uuid {
        Uuid([n; 16])
    }

    #[test]
    fn previous_gtids_body_round_trips_and_rejects_absurd_counts() {
        let mut set = GtidSet::new();
        set.add_interval(uuid(1), 1, 10);
        set.add_interval(uuid(2), 3, 4);
        let mut body = Vec::new();
        set.encode_previous_gtids_body(&mut body);
        assert_eq!(body.len(), 8 + 2 * 24 + 2 * 16);
        assert_eq!(body[..8], 2u64.to_le_bytes());
        assert_eq!(set.encoded_length(), body.len());
        assert_eq!(GtidSet::decode_previous_gtids_body(&body).unwrap(), set);
        let mut absurd = body.clone();
        absurd[..8].copy_from_slice(&(u64::MAX >> 8).to_le_bytes());
        assert!(GtidSet::decode_previous_gtids_body(&absurd).is_err());
        assert!(GtidSet::decode_previous_gtids_body(&body[..body.len() - 1]).is_err());
    }

    #[test]
    fn a_set_with_tags_takes_the_tagged_format() {
        let set: GtidSet = "01010101-0101-0101-0101-010101010101:1-3:abc:5".parse().unwrap();
        let mut body = Vec::new();
        set.encode_previous_gtids_body(&mut body);
        assert_eq!(body[..8], (1u64 << 56 | 2 << 8 | 1).to_le_bytes());
        // Untagged source: empty tag (one varint byte, 0).
        assert_eq!(body[8 + 16], 0);
        let tagged_at = 8 + 16 + 1 + 8 + 16;
        assert_eq!(body[tagged_at + 16], 3 << 1);
        assert_eq!(&body[tagged_at + 17..tagged_at + 20], b"abc");
        assert_eq!(GtidSet::decode_previous_gtids_body(&body).unwrap(), set);
        // A low byte of 0, as some dump clients write it, reads the same.
        body[0] = 0;
        assert_eq!(GtidSet::decode_previous_gtids_body(&body).unwrap(), set);
        for cut in 0..body.len() {
            assert!(GtidSet::decode_previous_gtids_body(&body[..cut]).is_err(), "cut at {cut}");
        }
    }
}
