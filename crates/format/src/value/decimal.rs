//! MySQL's binary DECIMAL (`decimal2bin`), used for NEWDECIMAL values in
//! row images.
//!
//! The digits are cut into groups of 9 (each a big-endian u32) counted
//! outwards from the decimal point; a leftover group of fewer digits at the
//! far left of the integer part, or the far right of the fraction, takes
//! only the bytes its digits need:
//!
//! | digits in the group | 0 | 1-2 | 3-4 | 5-6 | 7-9 |
//! |---------------------|---|-----|-----|-----|-----|
//! | bytes               | 0 | 1   | 2   | 3   | 4   |
//!
//! A negative number has every byte inverted. Finally the top bit of the
//! first byte is flipped, so that the bytes sort like the numbers.
//!
//! Values are decimal strings: `-123.4500`. Decoding gives the canonical
//! form (no leading zeros, exactly `scale` fraction digits); encoding also
//! accepts leading zeros and fewer fraction digits.

const DIGITS_PER_GROUP: usize = 9;
const BYTES_BY_DIGITS: [usize; DIGITS_PER_GROUP + 1] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/// The group sizes (in digits) from left to right for DECIMAL(precision, scale).
fn group_digits(precision: u8, scale: u8) -> Vec<usize> {
    let integer_digits = precision.saturating_sub(scale) as usize;
    let fraction_digits = scale as usize;
    let mut groups = Vec::new();
    if !integer_digits.is_multiple_of(DIGITS_PER_GROUP) {
        groups.push(integer_digits % DIGITS_PER_GROUP);
    }
    groups.extend(std::iter::repeat_n(DIGITS_PER_GROUP, integer_digits / DIGITS_PER_GROUP));
    groups.extend(std::iter::repeat_n(DIGITS_PER_GROUP, fraction_digits / DIGITS_PER_GROUP));
    if !fraction_digits.is_multiple_of(DIGITS_PER_GROUP) {
        groups.push(fraction_digits % DIGITS_PER_GROUP);
    }
    groups
}

/// A column definition hand-built without `ColumnType::validate` must not
/// make the codec index out of bounds.
fn check_definition(precision: u8, scale: u8) -> Result<(), String> {
    if precision == 0 || scale > precision {
        return Err(format!("DECIMAL({precision},{scale}) is not a column type"));
    }
    Ok(())
}

/// Bytes a DECIMAL(precision, scale) value occupies (`decimal_bin_size`).
pub fn decimal_binary_length(precision: u8, scale: u8) -> usize {
    group_digits(precision, scale).iter().map(|&digits| BYTES_BY_DIGITS[digits]).sum()
}

/// Appends `text` as DECIMAL(precision, scale).
pub fn encode_decimal(text: &str, precision: u8, scale: u8, out: &mut Vec<u8>) -> Result<(), String> {
    check_definition(precision, scale)?;
    let (negative, unsigned_text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (integer_text, fraction_text) = match unsigned_text.split_once('.') {
        Some((integer, fraction)) if !fraction.is_empty() => (integer, fraction),
        Some(_) => return Err(format!("{text:?} has a decimal point without digits after it")),
        None => (unsigned_text, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if integer_text.is_empty() || !all_digits(integer_text) || !all_digits(fraction_text) {
        return Err(format!("{text:?} is not a decimal number"));
    }
    let integer_text = integer_text.trim_start_matches('0');
    let integer_digits = (precision - scale) as usize;
    if integer_text.len() > integer_digits {
        return Err(format!("{text:?} has more than {integer_digits} integer digits for DECIMAL({precision},{scale})"));
    }
    if fraction_text.len() > scale as usize {
        return Err(format!("{text:?} has more than {scale} fraction digits for DECIMAL({precision},{scale})"));
    }
    // All digits, zero-padded to exactly precision digits.
    let mut digits = vec![b'0'; integer_digits - integer_text.len()];
    digits.extend_from_slice(integer_text.as_bytes());
    digits.extend_from_slice(fraction_text.as_bytes());
    digits.resize(precision as usize, b'0');

    let start = out.len();
    let mut at = 0;
    for group in group_digits(precision, scale) {
        let value = digits[at..at + group].iter().fold(0u32, |v, d| v * 10 + (d - b'0') as u32);
        at += group;
        let width = BYTES_BY_DIGITS[group];
        out.extend_from_slice(&value.to_be_bytes()[4 - width..]);
    }
    // MySQL has no negative zero: "-0.00" is stored as 0.00.
    if negative && digits.iter().any(|&digit| digit != b'0') {
        out[start..].iter_mut().for_each(|byte| *byte = !*byte);
    }
    out[start] ^= 0x80;
    Ok(())
}

/// Reads a DECIMAL(precision, scale) from exactly its binary bytes.
pub fn decode_decimal(bytes: &[u8], precision: u8, scale: u8) -> Result<String, String> {
    check_definition(precision, scale)?;
    if bytes.len() != decimal_binary_length(precision, scale) {
        return Err(format!("{} bytes for a DECIMAL({precision},{scale})", bytes.len()));
    }
    let mut bytes = bytes.to_vec();
    bytes[0] ^= 0x80;
    let negative = bytes[0] & 0x80 != 0;
    if negative {
        bytes.iter_mut().for_each(|byte| *byte = !*byte);
    }
    let mut digits = String::with_capacity(precision as usize);
    let mut at = 0;
    for group in group_digits(precision, scale) {
        let width = BYTES_BY_DIGITS[group];
        let value = bytes[at..at + width].iter().fold(0u32, |v, &b| (v << 8) | b as u32);
        at += width;
        if value >= 10u32.pow(group as u32) {
            return Err(format!("digit group {value} does not fit in {group} digits"));
        }
        digits.push_str(&format!("{value:0group$}"));
    }
    let (integer, fraction) = digits.split_at((precision - scale) as usize);
    let integer = match integer.trim_start_matches('0') {
        "" => "0",
        trimmed => trimmed,
    };
    let is_zero = digits.bytes().all(|digit| digit == b'0');
    let sign = if negative && !is_zero { "-" } else { "" };
    Ok(if scale == 0 { format!("{sign}{integer}") } else { format!("{sign}{integer}.{fraction}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_is_stored_and_read_as_zero() {
        assert_eq!(encoded("-0.00", 5, 2), encoded("0.00", 5, 2));
        assert_eq!(encoded("-0", 4, 0), encoded("0", 4, 0));
        assert_eq!(decode_decimal(&encoded("-0.00", 5, 2), 5, 2).unwrap(), "0.00");
        assert_eq!(decode_decimal(&encoded("-0.01", 5, 2), 5, 2).unwrap(), "-0.01");
    }

    fn encoded(text: &str, precision: u8, scale: u8) -> Vec<u8> {
        let mut out = Vec::new();
        encode_decimal(text, precision, scale, &mut out).unwrap();
        out
    }

    #[test]
    fn matches_the_example_in_mysql_decimal_c() {
        // decimal2bin's comment: 1234567890.1234 as DECIMAL(14,4) is
        // 81 0D FB 38 D2 04 D2, and its negation inverts every byte
        // except the flipped sign bit.
        assert_eq!(encoded("1234567890.1234", 14, 4), [0x81, 0x0d, 0xfb, 0x38, 0xd2, 0x04, 0xd2]);
        assert_eq!(encoded("-1234567890.1234", 14, 4), [0x7e, 0xf2, 0x04, 0xc7, 0x2d, 0xfb, 0x2d]);
    }

    #[test]
    fn decoding_gives_the_canonical_text() {
        for (text, canonical, precision, scale) in [
            ("-123.45", "-123.4500", 10, 4),
            ("0", "0.00", 5, 2),
            ("007", "7", 3, 0),
            ("0.5", "0.50000", 5, 5),
            (
                "99999999999999999999999999999999999.999999999999999999999999999999",
                "99999999999999999999999999999999999.999999999999999999999999999999",
                65,
                30,
            ),
        ] {
            let bytes = encoded(text, precision, scale);
            assert_eq!(bytes.len(), decimal_binary_length(precision, scale));
            assert_eq!(decode_decimal(&bytes, precision, scale).unwrap(), canonical);
        }
    }

    #[test]
    fn rejects_what_does_not_fit() {
        let mut out = Vec::new();
        assert!(encode_decimal("1000", 5, 2, &mut out).is_err());
        assert!(encode_decimal("1.234", 5, 2, &mut out).is_err());
        assert!(encode_decimal("1.", 5, 2, &mut out).is_err());
        assert!(encode_decimal("+1", 5, 2, &mut out).is_err());
        assert!(encode_decimal("", 5, 2, &mut out).is_err());
        assert!(decode_decimal(&[0x80 | 0x7f], 2, 0).is_err(), "127 is not a 2-digit group");
    }
}
