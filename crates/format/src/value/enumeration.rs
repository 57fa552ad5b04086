//! ENUM and SET values: a member's 1-based index (ENUM) or a bit mask of
//! members (SET), little-endian in the column's pack length.

/// Appends `value` in `length_bytes` bytes, little-endian.
pub fn encode_index(length_bytes: u8, value: u64, out: &mut Vec<u8>) -> Result<(), String> {
    let length = usize::from(length_bytes);
    if length < 8 && value >> (8 * length) != 0 {
        return Err(format!("{value} does not fit {length} bytes"));
    }
    out.extend_from_slice(&value.to_le_bytes()[..length]);
    Ok(())
}

/// The number in a little-endian value.
pub fn decode_index(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0u64, |value, &byte| (value << 8) | u64::from(byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_and_masks_are_little_endian() {
        let mut out = Vec::new();
        encode_index(2, 300, &mut out).unwrap();
        assert_eq!(out, [0x2c, 0x01]);
        assert_eq!(decode_index(&out), 300);
        out.clear();
        encode_index(8, u64::MAX, &mut out).unwrap();
        assert_eq!(decode_index(&out), u64::MAX);
        assert!(encode_index(1, 256, &mut Vec::new()).is_err());
    }
}
