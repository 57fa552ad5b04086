//! Memcomparable keys: a list of values encodes to bytes whose
//! lexicographic order is SQL's order of the values, so a `BTreeMap` keyed
//! by these bytes is an index. Every value starts with a tag byte:
//!
//! | tag | value | then |
//! |-----|-------|------|
//! | `0x00` | NULL (sorts first, as in MySQL) | nothing |
//! | `0x10` | negative integer (`Int`) | 8 bytes BE two's complement |
//! | `0x11` | non-negative integer (`Int` or `UInt`) | 8 bytes BE |
//! | `0x20` | FLOAT / DOUBLE (as f64) | 8 bytes: sign bit flipped, all bits flipped when negative |
//! | `0x30` / `0x31` / `0x32` | negative / zero / positive DECIMAL | exponent u16 BE, digits, terminator (see below) |
//! | `0x40` | bytes (CHAR, VARCHAR, BLOB, raw columns) | bytes with `00` escaped as `00 FF`, then `00 01` |
//! | `0x50` | DATE | year u16 BE, month, day |
//! | `0x51` | DATETIME | year u16 BE, month, day, hour, minute, second, micros u32 BE |
//! | `0x52` | TIMESTAMP | seconds u32 BE, micros u32 BE |
//! | `0x53` | TIME | signed microseconds i64 BE with the sign bit flipped |
//! | `0x60` | JSON (binary document) | as bytes |
//!
//! Signed and unsigned integers share one encoding, so a bound given as
//! `Int(5)` finds an unsigned column's `UInt(5)`. A DECIMAL `0.D × 10^E`
//! (D without leading or trailing zeros) stores E (biased by 0x8000) and
//! D's ASCII digits then `00`; a negative one stores all of that inverted,
//! ending in `FF`, so a larger magnitude sorts first. `1.50` and `1.5`
//! encode the same, as SQL compares them equal.
//!
//! A character column's text is keyed by its collation's weights (see
//! [`crate::collation`]), so under `utf8mb4_general_ci` `'a'` and `'A'`
//! are one key, as a unique index in MySQL counts them; a binary column's
//! by its bytes. Tables written before keys followed collations keep byte
//! keys ([`TableDef::keys_by_collation`]) until ALTER TABLE rebuilds them.
//!
//! No tag is `0xFF`: a prefix followed by `0xFF` sorts after every key that
//! starts with the prefix, which turns bounds on a key prefix (the first
//! columns of a composite key) into byte ranges.

use std::ops::Bound;

use binlog_format::Value;

use crate::catalog::TableDef;

pub const TAG_NULL: u8 = 0x00;
const TAG_NEGATIVE_INTEGER: u8 = 0x10;
const TAG_INTEGER: u8 = 0x11;
const TAG_FLOAT: u8 = 0x20;
const TAG_DECIMAL_NEGATIVE: u8 = 0x30;
const TAG_DECIMAL_ZERO: u8 = 0x31;
const TAG_DECIMAL_POSITIVE: u8 = 0x32;
const TAG_BYTES: u8 = 0x40;
const TAG_DATE: u8 = 0x50;
const TAG_DATETIME: u8 = 0x51;
const TAG_TIMESTAMP: u8 = 0x52;
const TAG_TIME: u8 = 0x53;
/// JSON documents by their binary bytes: equal documents encode equally,
/// which is all a key needs (the SQL layer indexes no JSON column).
const TAG_JSON: u8 = 0x60;
/// Sorts after any continuation of a prefix (no tag uses it).
const AFTER_PREFIX: u8 = 0xFF;

/// A row's clustered key (primary key values, or the hidden row id of a
/// table without one), encoded. Opaque to callers: scans hand it out and
/// updates and deletes take it back.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey(pub(crate) Vec<u8>);

impl RowKey {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The key of `def`'s row with `primary_key` values, in primary-key
    /// column order.
    pub fn from_values(def: &TableDef, primary_key: &[Value]) -> RowKey {
        RowKey(encode_columns(def, &def.primary_key, primary_key))
    }

    /// The primary key of `def`'s `row` (NULL for a column past its end):
    /// [`RowKey::from_values`] without copying the values out.
    pub fn of_row(def: &TableDef, row: &[Value]) -> RowKey {
        let mut out = Vec::with_capacity(def.primary_key.len() * 10);
        for &column in &def.primary_key {
            encode_column_value(def, column, row.get(column).unwrap_or(&Value::Null), &mut out);
        }
        RowKey(out)
    }
}

/// `values` of `def`'s `columns` (a key's columns, in order; fewer values
/// than columns encode a key prefix), as [`encode_column_value`] keys them.
pub fn encode_columns(def: &TableDef, columns: &[usize], values: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 10);
    for (value, &column) in values.iter().zip(columns) {
        encode_column_value(def, column, value, &mut out);
    }
    out
}

/// `value` of `def`'s column `column` as a key holds it: a character
/// column's text by its collation's weights, anything else as
/// [`encode_value`] does.
pub fn encode_column_value(def: &TableDef, column: usize, value: &Value, out: &mut Vec<u8>) {
    if let Value::Bytes(text) = value {
        let collation = def.key_collation(column);
        if !collation.is_binary() {
            let mut weights = Vec::with_capacity(text.len() * 4);
            collation.append_weights(text, &mut weights);
            encode_bytes(&weights, out);
            return;
        }
    }
    encode_value(value, out);
}

pub fn encode_key(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 10);
    for value in values {
        encode_value(value, &mut out);
    }
    out
}

pub fn encode_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.push(TAG_NULL),
        Value::Int(v) if *v < 0 => {
            out.push(TAG_NEGATIVE_INTEGER);
            out.extend_from_slice(&(*v as u64).to_be_bytes());
        }
        Value::Int(v) => {
            out.push(TAG_INTEGER);
            out.extend_from_slice(&(*v as u64).to_be_bytes());
        }
        Value::UInt(v) => {
            out.push(TAG_INTEGER);
            out.extend_from_slice(&v.to_be_bytes());
        }
        Value::Float(v) => encode_float(*v as f64, out),
        Value::Double(v) => encode_float(*v, out),
        Value::Decimal(text) => {
            if !encode_decimal(text, out) {
                // Not decimal text: keep it orderable as bytes rather than fail;
                // row validation stops such values before they reach an index.
                encode_bytes(text.as_bytes(), out);
            }
        }
        Value::Bytes(bytes) => encode_bytes(bytes, out),
        Value::Date { year, month, day } => {
            out.push(TAG_DATE);
            out.extend_from_slice(&year.to_be_bytes());
            out.extend_from_slice(&[*month, *day]);
        }
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            out.push(TAG_DATETIME);
            out.extend_from_slice(&year.to_be_bytes());
            out.extend_from_slice(&[*month, *day, *hour, *minute, *second]);
            out.extend_from_slice(&micros.to_be_bytes());
        }
        Value::Timestamp { seconds, micros } => {
            out.push(TAG_TIMESTAMP);
            out.extend_from_slice(&seconds.to_be_bytes());
            out.extend_from_slice(&micros.to_be_bytes());
        }
        Value::Time { negative, hours, minute, second, micros } => {
            let seconds = i64::from(*hours) * 3600 + i64::from(*minute) * 60 + i64::from(*second);
            let magnitude = seconds * 1_000_000 + i64::from(*micros);
            let signed = if *negative { -magnitude } else { magnitude };
            out.push(TAG_TIME);
            out.extend_from_slice(&((signed as u64) ^ 1 << 63).to_be_bytes());
        }
        Value::Json(document) => {
            let start = out.len();
            encode_bytes(document, out);
            out[start] = TAG_JSON;
        }
    }
}

fn encode_float(value: f64, out: &mut Vec<u8>) {
    // -0.0 == 0.0 in SQL; NaN gets one canonical spot (above +inf).
    let value = if value == 0.0 {
        0.0
    } else if value.is_nan() {
        f64::NAN
    } else {
        value
    };
    let bits = value.to_bits();
    let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
    out.push(TAG_FLOAT);
    out.extend_from_slice(&ordered.to_be_bytes());
}

fn encode_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(TAG_BYTES);
    for &byte in bytes {
        out.push(byte);
        if byte == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// Returns false (writing nothing) when `text` is not `-?digits[.digits]`.
fn encode_decimal(text: &str, out: &mut Vec<u8>) -> bool {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if (integer.is_empty() && fraction.is_empty()) || !all_digits(integer) || !all_digits(fraction) {
        return false;
    }
    let integer = integer.trim_start_matches('0');
    let (exponent, digits) = if integer.is_empty() {
        let significant = fraction.trim_start_matches('0');
        (-((fraction.len() - significant.len()) as i64), significant.to_string())
    } else {
        (integer.len() as i64, format!("{integer}{fraction}"))
    };
    let digits = digits.trim_end_matches('0');
    if digits.is_empty() {
        out.push(TAG_DECIMAL_ZERO);
        return true;
    }
    // DECIMAL(65, 30) keeps |exponent| far below 0x8000.
    let biased = (exponent.clamp(-0x7FFF, 0x7FFF) as i16 as u16) ^ 0x8000;
    let invert = |byte: u8| if negative { !byte } else { byte };
    out.push(if negative { TAG_DECIMAL_NEGATIVE } else { TAG_DECIMAL_POSITIVE });
    out.extend(biased.to_be_bytes().map(invert));
    out.extend(digits.bytes().map(invert));
    out.push(invert(0x00));
    true
}

/// Bytes taken by the encoded value at the start of `bytes`, or `None` when
/// they do not start with a whole encoded value.
pub(crate) fn encoded_value_length(bytes: &[u8]) -> Option<usize> {
    let fixed = |length: usize| (bytes.len() > length).then_some(1 + length);
    match *bytes.first()? {
        TAG_NULL | TAG_DECIMAL_ZERO => Some(1),
        TAG_NEGATIVE_INTEGER | TAG_INTEGER | TAG_FLOAT | TAG_TIMESTAMP | TAG_TIME => fixed(8),
        TAG_DATE => fixed(4),
        TAG_DATETIME => fixed(11),
        tag @ (TAG_DECIMAL_NEGATIVE | TAG_DECIMAL_POSITIVE) => {
            let terminator = if tag == TAG_DECIMAL_NEGATIVE { 0xFF } else { 0x00 };
            let digits = bytes.get(3..)?;
            digits.iter().position(|&b| b == terminator).map(|at| 3 + at + 1)
        }
        TAG_BYTES | TAG_JSON => {
            let mut at = 1;
            loop {
                match (bytes.get(at)?, bytes.get(at + 1)) {
                    (0x00, Some(0x01)) => return Some(at + 2),
                    (0x00, Some(0xFF)) => at += 2,
                    (0x00, _) => return None,
                    _ => at += 1,
                }
            }
        }
        _ => None,
    }
}

/// Splits a secondary index entry (index values then the clustered key)
/// after its first `column_count` values.
pub(crate) fn split_index_entry(entry: &[u8], column_count: usize) -> Option<(&[u8], &[u8])> {
    let mut at = 0;
    for _ in 0..column_count {
        at += encoded_value_length(&entry[at..])?;
    }
    Some(entry.split_at(at))
}

/// The clustered key of a table without a primary key: its hidden row id
/// (InnoDB's DB_ROW_ID), encoded like an unsigned integer.
pub(crate) fn hidden_row_key(row_id: u64) -> Vec<u8> {
    encode_key(&[Value::UInt(row_id)])
}

pub(crate) fn hidden_row_id(key: &[u8]) -> Option<u64> {
    match key {
        [TAG_INTEGER, rest @ ..] if rest.len() == 8 => Some(u64::from_be_bytes(rest.try_into().ok()?)),
        _ => None,
    }
}

/// The byte bound of a lower bound on a prefix of the key of `def`'s
/// `columns`.
pub(crate) fn lower_bound(bound: Bound<&[Value]>, def: &TableDef, columns: &[usize]) -> Bound<Vec<u8>> {
    match bound {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(values) => Bound::Included(encode_columns(def, columns, values)),
        Bound::Excluded(values) => Bound::Included(past_prefix(encode_columns(def, columns, values))),
    }
}

/// The byte bound of an upper bound on a prefix of the key of `def`'s
/// `columns`.
pub(crate) fn upper_bound(bound: Bound<&[Value]>, def: &TableDef, columns: &[usize]) -> Bound<Vec<u8>> {
    match bound {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(values) => Bound::Excluded(past_prefix(encode_columns(def, columns, values))),
        Bound::Excluded(values) => Bound::Excluded(encode_columns(def, columns, values)),
    }
}

pub(crate) fn past_prefix(mut prefix: Vec<u8>) -> Vec<u8> {
    prefix.push(AFTER_PREFIX);
    prefix
}

/// True when no key lies between the bounds. `BTreeMap::range` panics on
/// such bounds, so every range goes through this check first.
pub(crate) fn range_is_empty(lower: &Bound<Vec<u8>>, upper: &Bound<Vec<u8>>) -> bool {
    match (lower, upper) {
        (Bound::Included(low), Bound::Included(high)) => low > high,
        (Bound::Included(low), Bound::Excluded(high))
        | (Bound::Excluded(low), Bound::Included(high))
        | (Bound::Excluded(low), Bound::Excluded(high)) => low >= high,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> Vec<u8> {
        encode_key(&[Value::Decimal(text.into())])
    }

    #[test]
    fn decimals_order_numerically_and_ignore_trailing_zeros() {
        let ordered = ["-100.5", "-12.340", "-12.3", "-1.55", "-1.5", "-0.001", "0.000", "0.0001", "0.5", "1.5", "1.55", "12.3", "100"];
        for pair in ordered.windows(2) {
            assert!(decimal(pair[0]) < decimal(pair[1]), "{} < {}", pair[0], pair[1]);
        }
        assert_eq!(decimal("1.50"), decimal("1.5"));
        assert_eq!(decimal("-0.00"), decimal("0"));
        assert_eq!(decimal("007.10"), decimal("7.1"));
    }

    #[test]
    fn integers_order_across_signedness() {
        let keys: Vec<Vec<u8>> =
            [Value::Null, Value::Int(i64::MIN), Value::Int(-1), Value::Int(0), Value::UInt(1), Value::Int(2), Value::UInt(u64::MAX)]
                .iter()
                .map(|v| encode_key(std::slice::from_ref(v)))
                .collect();
        assert!(keys.windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(encode_key(&[Value::Int(7)]), encode_key(&[Value::UInt(7)]));
    }

    #[test]
    fn composite_keys_compare_column_by_column() {
        let a = encode_key(&[Value::Bytes(b"a".to_vec()), Value::Int(9)]);
        let a_nul = encode_key(&[Value::Bytes(b"a\0".to_vec()), Value::Int(0)]);
        let ab = encode_key(&[Value::Bytes(b"ab".to_vec()), Value::Int(0)]);
        assert!(a < a_nul && a_nul < ab);
        let prefix = encode_key(&[Value::Bytes(b"a".to_vec())]);
        assert!(a > prefix && a < past_prefix(prefix));
    }

    #[test]
    fn times_order_as_signed_durations() {
        let time = |negative, hours, minute, second, micros| Value::Time { negative, hours, minute, second, micros };
        let ordered = [
            time(true, 838, 59, 59, 0),
            time(true, 25, 0, 0, 0),
            time(true, 0, 0, 1, 0),
            time(true, 0, 0, 0, 1),
            time(false, 0, 0, 0, 0),
            time(false, 0, 0, 0, 1),
            time(false, 23, 59, 59, 999_999),
            time(false, 24, 0, 0, 0),
            time(false, 838, 59, 59, 0),
        ];
        for pair in ordered.windows(2) {
            assert!(encode_key(&pair[..1]) < encode_key(&pair[1..]), "{pair:?}");
        }
    }

    #[test]
    fn encoded_lengths_split_entries() {
        let values = [
            Value::Decimal("-3.25".into()),
            Value::Bytes(vec![0, 1, 0]),
            Value::Null,
            Value::DateTime { year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5, micros: 6 },
            Value::Time { negative: true, hours: 838, minute: 59, second: 59, micros: 0 },
        ];
        let mut entry = encode_key(&values);
        let clustered = hidden_row_key(42);
        entry.extend_from_slice(&clustered);
        let (index_part, key_part) = split_index_entry(&entry, values.len()).unwrap();
        assert_eq!(index_part, encode_key(&values).as_slice());
        assert_eq!(hidden_row_id(key_part), Some(42));
    }

    #[test]
    fn floats_order_with_negative_zero_equal_to_zero() {
        let ordered = [f64::NEG_INFINITY, -2.5, -1e-300, 0.0, 1e-300, 3.0, f64::INFINITY];
        for pair in ordered.windows(2) {
            assert!(encode_key(&[Value::Double(pair[0])]) < encode_key(&[Value::Double(pair[1])]));
        }
        assert_eq!(encode_key(&[Value::Double(-0.0)]), encode_key(&[Value::Double(0.0)]));
    }
}
