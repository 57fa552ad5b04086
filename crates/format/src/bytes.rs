//! Bounds-checked little-endian reading and writing. Every read names what
//! it reads, so a truncation error says which field ran out of bytes.

use crate::error::DecodeError;

/// A cursor over a byte slice whose every read is bounds-checked.
#[derive(Debug, Clone)]
pub struct ByteReader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> ByteReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        ByteReader { bytes, position: 0 }
    }

    pub fn position(&self) -> usize {
        self.position
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn take(&mut self, length: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if length > self.remaining() {
            return Err(DecodeError::Truncated { what, needed: length, available: self.remaining() });
        }
        let slice = &self.bytes[self.position..self.position + length];
        self.position += length;
        Ok(slice)
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        let slice = &self.bytes[self.position..];
        self.position = self.bytes.len();
        slice
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(1, what)?[0])
    }

    pub fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.take(2, what)?.try_into().unwrap()))
    }

    pub fn u24(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        self.uint_n(3, what).map(|v| v as u32)
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }

    pub fn u48(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        self.uint_n(6, what)
    }

    pub fn u56(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        self.uint_n(7, what)
    }

    pub fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }

    pub fn i64(&mut self, what: &'static str) -> Result<i64, DecodeError> {
        Ok(self.u64(what)? as i64)
    }

    /// Little-endian unsigned integer of `width` bytes (1..=8).
    pub fn uint_n(&mut self, width: usize, what: &'static str) -> Result<u64, DecodeError> {
        debug_assert!((1..=8).contains(&width));
        let bytes = self.take(width, what)?;
        Ok(bytes.iter().rev().fold(0u64, |value, &byte| (value << 8) | byte as u64))
    }

    /// MySQL's length-encoded integer (`net_field_length`).
    pub fn packed_u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        match self.u8(what)? {
            first @ 0..=250 => Ok(first as u64),
            251 => Err(DecodeError::invalid(what, "NULL marker 0xfb where an integer was expected")),
            252 => Ok(self.u16(what)? as u64),
            253 => self.u24(what).map(|v| v as u64),
            254 => self.u64(what),
            255 => Err(DecodeError::invalid(what, "0xff is not a length-encoded integer prefix")),
        }
    }

    /// A length-encoded integer that must use its shortest form, for
    /// fields whose re-encoding has to reproduce the input byte for byte.
    pub fn packed_u64_minimal(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        let start = self.position;
        let value = self.packed_u64(what)?;
        if self.position - start != packed_u64_len(value) {
            return Err(DecodeError::invalid(what, format!("{value} is not in its shortest length-encoded form")));
        }
        Ok(value)
    }

    /// A length-encoded count or length that must fit in what is left of
    /// the input, each item taking at least `item_bytes_min` bytes. Catches
    /// absurd counts before anything is allocated for them.
    pub fn packed_count(&mut self, item_bytes_min: usize, what: &'static str) -> Result<usize, DecodeError> {
        let count = self.packed_u64_minimal(what)?;
        let needed = count.saturating_mul(item_bytes_min as u64);
        if needed > self.remaining() as u64 {
            return Err(DecodeError::Truncated {
                what,
                needed: usize::try_from(needed).unwrap_or(usize::MAX),
                available: self.remaining(),
            });
        }
        Ok(count as usize)
    }

    /// Checks that nothing is left: trailing bytes are an error.
    pub fn finish(&self, what: &'static str) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(DecodeError::TrailingBytes { what, count }),
        }
    }
}

/// Writes little-endian integers of MySQL's widths.
pub trait ByteWriter {
    fn put_u8(&mut self, value: u8);
    fn put_slice(&mut self, value: &[u8]);
    fn put_u16(&mut self, value: u16) {
        self.put_slice(&value.to_le_bytes());
    }
    fn put_u24(&mut self, value: u32) {
        debug_assert!(value < 1 << 24);
        self.put_slice(&value.to_le_bytes()[..3]);
    }
    fn put_u32(&mut self, value: u32) {
        self.put_slice(&value.to_le_bytes());
    }
    fn put_u48(&mut self, value: u64) {
        debug_assert!(value < 1 << 48);
        self.put_slice(&value.to_le_bytes()[..6]);
    }
    fn put_u56(&mut self, value: u64) {
        debug_assert!(value < 1 << 56);
        self.put_slice(&value.to_le_bytes()[..7]);
    }
    fn put_u64(&mut self, value: u64) {
        self.put_slice(&value.to_le_bytes());
    }
    fn put_uint_n(&mut self, value: u64, width: usize) {
        debug_assert!((1..=8).contains(&width));
        self.put_slice(&value.to_le_bytes()[..width]);
    }
    /// MySQL's length-encoded integer (`net_store_length`).
    fn put_packed_u64(&mut self, value: u64) {
        if value < 251 {
            self.put_u8(value as u8);
        } else if value < 1 << 16 {
            self.put_u8(252);
            self.put_u16(value as u16);
        } else if value < 1 << 24 {
            self.put_u8(253);
            self.put_u24(value as u32);
        } else {
            self.put_u8(254);
            self.put_u64(value);
        }
    }
}

// Inline: the encoders of other crates (the engine's redo records) call
// these per byte and per field, and without it each call stays a call.
impl ByteWriter for Vec<u8> {
    #[inline]
    fn put_u8(&mut self, value: u8) {
        self.push(value);
    }
    #[inline]
    fn put_slice(&mut self, value: &[u8]) {
        self.extend_from_slice(value);
    }
}

/// Length of `value` as a length-encoded integer.
pub fn packed_u64_len(value: u64) -> usize {
    match value {
        0..=250 => 1,
        251..=0xffff => 3,
        0x1_0000..=0xff_ffff => 4,
        _ => 9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_integers_round_trip_at_every_width_boundary() {
        for value in [0u64, 250, 251, 0xffff, 0x1_0000, 0xff_ffff, 0x100_0000, u64::MAX] {
            let mut out = Vec::new();
            out.put_packed_u64(value);
            assert_eq!(out.len(), packed_u64_len(value));
            let mut reader = ByteReader::new(&out);
            assert_eq!(reader.packed_u64("v").unwrap(), value);
            reader.finish("v").unwrap();
        }
    }

    #[test]
    fn short_reads_are_errors_naming_the_field() {
        let mut reader = ByteReader::new(&[1, 2]);
        let error = reader.u32("xid").unwrap_err();
        assert_eq!(error, DecodeError::Truncated { what: "xid", needed: 4, available: 2 });
    }
}
