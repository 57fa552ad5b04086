//! BIT(M) values: an unsigned number of at most M bits, stored big-endian
//! in `M.div_ceil(8)` bytes (MySQL's `Field_bit` without the NULL-bitmap
//! trick InnoDB uses, which the binlog never carries).

/// Bytes a BIT(`bits`) value takes.
pub fn bit_length_bytes(bits: u8) -> usize {
    usize::from(bits).div_ceil(8)
}

/// Appends `value` as a BIT(`bits`) column stores it.
pub fn encode_bit(bits: u8, value: u64, out: &mut Vec<u8>) -> Result<(), String> {
    if bits < 64 && value >> bits != 0 {
        return Err(format!("{value} does not fit BIT({bits})"));
    }
    let length = bit_length_bytes(bits);
    out.extend_from_slice(&value.to_be_bytes()[8 - length..]);
    Ok(())
}

/// The number in a BIT(`bits`) value's bytes.
pub fn decode_bit(bits: u8, bytes: &[u8]) -> Result<u64, String> {
    let value = bytes.iter().fold(0u64, |value, &byte| (value << 8) | u64::from(byte));
    if bits < 64 && value >> bits != 0 {
        return Err(format!("{value} has more than {bits} bits"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_big_endian_in_whole_bytes() {
        let cases: [(u8, u64, &[u8]); 5] =
            [(1, 1, &[1]), (5, 0b101, &[5]), (9, 0x1ff, &[1, 0xff]), (17, 0x1_0203, &[1, 2, 3]), (64, u64::MAX, &[0xff; 8])];
        for (bits, value, bytes) in cases {
            let mut out = Vec::new();
            encode_bit(bits, value, &mut out).unwrap();
            assert_eq!(out, bytes, "BIT({bits}) {value}");
            assert_eq!(decode_bit(bits, bytes), Ok(value));
        }
        assert!(encode_bit(5, 32, &mut Vec::new()).is_err());
        assert!(decode_bit(5, &[0x20]).is_err());
    }
}
