//! Variable-length integers of MySQL's serialization library
//! (`libs/mysql/serialization`), which Gtid_tagged_log_event and the tags
//! of encoded GTID sets use.
//!
//! An unsigned value takes 1-9 bytes, little-endian: the count of trailing
//! one bits of the first byte, plus one, is the byte count, and the value
//! sits above those marker bits; a first byte of 0xFF is followed by the
//! 8 raw bytes. Signed values are zig-zag encoded first.

use crate::bytes::ByteReader;
use crate::error::DecodeError;

/// Bytes `value` takes.
pub fn varlen_u64_len(value: u64) -> usize {
    let bits = 64 - value.leading_zeros() as usize;
    // Each byte carries 7 value bits beside its marker bit, up to 8 bytes.
    if bits > 56 {
        9
    } else {
        bits.div_ceil(7).max(1)
    }
}

pub fn put_varlen_u64(out: &mut Vec<u8>, value: u64) {
    let length = varlen_u64_len(value);
    if length == 9 {
        out.push(0xFF);
        out.extend_from_slice(&value.to_le_bytes());
        return;
    }
    let marker = (1u64 << (length - 1)) - 1;
    let encoded = (value << length) | marker;
    out.extend_from_slice(&encoded.to_le_bytes()[..length]);
}

pub fn put_varlen_i64(out: &mut Vec<u8>, value: i64) {
    let zigzag = if value >= 0 { (value as u64) << 1 } else { ((-(value + 1)) as u64) << 1 | 1 };
    put_varlen_u64(out, zigzag);
}

pub fn read_varlen_u64(reader: &mut ByteReader<'_>, what: &'static str) -> Result<u64, DecodeError> {
    let first = reader.u8(what)?;
    let length = first.trailing_ones() as usize + 1;
    if length == 9 {
        return reader.u64(what);
    }
    let mut bytes = [0u8; 8];
    bytes[0] = first;
    bytes[1..length].copy_from_slice(reader.take(length - 1, what)?);
    Ok(u64::from_le_bytes(bytes) >> length)
}

pub fn read_varlen_i64(reader: &mut ByteReader<'_>, what: &'static str) -> Result<i64, DecodeError> {
    let zigzag = read_varlen_u64(reader, what)?;
    let magnitude = (zigzag >> 1) as i64;
    Ok(if zigzag & 1 == 0 { magnitude } else { -magnitude - 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_in_the_lengths_the_library_uses() {
        let cases: [(u64, usize); 8] =
            [(0, 1), (127, 1), (128, 2), (16383, 2), (16384, 3), ((1 << 56) - 1, 8), (1 << 56, 9), (u64::MAX, 9)];
        for (value, length) in cases {
            let mut out = Vec::new();
            put_varlen_u64(&mut out, value);
            assert_eq!(out.len(), length, "{value}");
            assert_eq!(varlen_u64_len(value), length, "{value}");
            let mut reader = ByteReader::new(&out);
            assert_eq!(read_varlen_u64(&mut reader, "v").unwrap(), value);
            assert!(reader.is_empty());
        }
        for value in [0, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            put_varlen_i64(&mut out, value);
            assert_eq!(read_varlen_i64(&mut ByteReader::new(&out), "v").unwrap(), value);
        }
        assert!(read_varlen_u64(&mut ByteReader::new(&[0b11]), "v").is_err());
    }
}
