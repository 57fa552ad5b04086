//! BIT(M) columns in the SQL layer: bit-value literals (`b'101'`,
//! `0b101`), a value made fit for a BIT column, and the bytes a result row
//! sends (the stored big-endian bytes, as MySQL sends them in both
//! protocols).

use crate::error::{data_too_long, SqlResult};
use crate::eval::value::{to_number, Number, Value};

/// The value of `b'digits'` or `0bdigits`: a number while it fits 64
/// bits, else its big-endian bytes; `None` when `digits` are not binary.
pub fn bit_literal(digits: &str) -> Option<Value> {
    if !digits.bytes().all(|b| b == b'0' || b == b'1') {
        return None;
    }
    let significant = digits.trim_start_matches('0');
    if significant.len() <= 64 {
        return Some(Value::UInt(if significant.is_empty() { 0 } else { u64::from_str_radix(significant, 2).ok()? }));
    }
    let padded = format!("{}{significant}", "0".repeat((8 - significant.len() % 8) % 8));
    Some(Value::Bytes((0..padded.len()).step_by(8).map(|i| u8::from_str_radix(&padded[i..i + 8], 2).unwrap_or(0)).collect()))
}

/// `0b101` as the tokenizer hands it over (an unquoted identifier).
pub fn bit_identifier(name: &str) -> Option<Value> {
    name.strip_prefix("0b").filter(|digits| !digits.is_empty()).and_then(bit_literal)
}

/// `value` as a BIT(`bits`) column stores it, or 1406 when it has more
/// bits (strict mode). Numbers are taken as integers (negative ones as
/// their 64-bit two's complement, as MySQL does); strings by their bytes,
/// big-endian.
pub fn coerce_bit(bits: u8, value: &Value, column: &str) -> SqlResult<Value> {
    let number = match value {
        Value::Bytes(bytes) => {
            let significant = &bytes[bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len())..];
            if significant.len() > 8 {
                return Err(data_too_long(column));
            }
            significant.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b))
        }
        other => match to_number(other) {
            Some(Number::Int(v)) if (i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&v) => v as u64,
            Some(Number::Float(v)) if v.is_finite() && v.abs() < 1.8e19 => v.round() as i64 as u64,
            _ => return Err(data_too_long(column)),
        },
    };
    if bits < 64 && number >> bits != 0 {
        return Err(data_too_long(column));
    }
    Ok(Value::UInt(number))
}

/// The bytes a BIT(`bits`) value is sent as: big-endian, ceil(bits/8).
pub fn bit_bytes(bits: u8, value: u64) -> Vec<u8> {
    value.to_be_bytes()[8 - usize::from(bits).div_ceil(8)..].to_vec()
}

/// `b'101'`, as SHOW CREATE TABLE prints a BIT default.
pub fn bit_default_text(value: u64) -> String {
    format!("b'{value:b}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_coercion_follow_mysql() {
        assert_eq!(bit_literal("101"), Some(Value::UInt(5)));
        assert_eq!(bit_literal("0"), Some(Value::UInt(0)));
        assert_eq!(bit_literal("12"), None);
        assert_eq!(bit_identifier("0b11"), Some(Value::UInt(3)));
        assert_eq!(bit_identifier("0bx"), None);
        assert_eq!(coerce_bit(5, &Value::Int(31), "b"), Ok(Value::UInt(31)));
        assert_eq!(coerce_bit(5, &Value::Int(32), "b").unwrap_err().code, 1406);
        assert_eq!(coerce_bit(64, &Value::Int(-1), "b"), Ok(Value::UInt(u64::MAX)));
        assert_eq!(coerce_bit(16, &Value::Bytes(b"AB".to_vec()), "b"), Ok(Value::UInt(0x4142)));
        assert_eq!(bit_bytes(9, 0x1ff), [1, 0xff]);
        assert_eq!(bit_default_text(5), "b'101'");
    }
}
