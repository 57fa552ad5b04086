//! Values as the SQL layer computes with them (the engine's
//! `binlog_format::Value`): MySQL's comparison and truth rules, numbers
//! from text, the text form, and the conversion to and from the wire.

use std::borrow::Cow;
use std::cmp::Ordering;

use engine::collation::Collation;

pub use binlog_format::Value;

/// `IS NULL` for the engine's value type.
pub trait NullCheck {
    fn is_null(&self) -> bool;
}

impl NullCheck for Value {
    fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// A number taken out of a value, for arithmetic and comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(value) => value as f64,
            Number::Float(value) => value,
        }
    }
}

/// The number MySQL reads from `value`: integers as they are, text by its
/// longest numeric prefix (`'12abc'` is 12, `'abc'` is 0), NULL as none.
pub fn to_number(value: &Value) -> Option<Number> {
    Some(match value {
        Value::Null => return None,
        Value::Int(v) => Number::Int(i128::from(*v)),
        Value::UInt(v) => Number::Int(i128::from(*v)),
        Value::Float(v) => Number::Float(f64::from(*v)),
        Value::Double(v) => Number::Float(*v),
        Value::Decimal(text) => text_number(text.as_bytes()),
        Value::Bytes(bytes) => text_number(bytes),
        other => text_number(&to_text(other)),
    })
}

/// The numeric prefix of `bytes`, as MySQL's string-to-number conversion.
pub fn text_number(bytes: &[u8]) -> Number {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let end = numeric_prefix_length(text);
    let prefix = &text[..end];
    if let Ok(value) = prefix.parse::<i128>() {
        return Number::Int(value);
    }
    Number::Float(prefix.parse::<f64>().unwrap_or(0.0))
}

fn numeric_prefix_length(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut end = 0;
    if end < bytes.len() && (bytes[end] == b'-' || bytes[end] == b'+') {
        end += 1;
    }
    let digits_start = end;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    if end < bytes.len() && bytes[end] == b'.' {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    }
    if end == digits_start {
        return 0;
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut exponent_end = end + 1;
        if exponent_end < bytes.len() && (bytes[exponent_end] == b'-' || bytes[exponent_end] == b'+') {
            exponent_end += 1;
        }
        let exponent_digits = exponent_end;
        while exponent_end < bytes.len() && bytes[exponent_end].is_ascii_digit() {
            exponent_end += 1;
        }
        if exponent_end > exponent_digits {
            end = exponent_end;
        }
    }
    end
}

/// True when `bytes` is entirely a number (what an exact key lookup needs).
pub fn is_whole_number_text(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    !text.is_empty() && numeric_prefix_length(text) == text.len()
}

fn is_numeric(value: &Value) -> bool {
    matches!(value, Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Double(_) | Value::Decimal(_))
}

/// MySQL's comparison: NULL compares as unknown (`None`); two strings compare
/// as bytes (see [`compare_in`] for a collation); anything with a number on
/// one side compares as numbers.
pub fn compare(left: &Value, right: &Value) -> Option<Ordering> {
    compare_in(left, right, Collation::Binary)
}

/// [`compare`], two strings compared under `collation`.
pub fn compare_in(left: &Value, right: &Value, collation: Collation) -> Option<Ordering> {
    // The common pairs first: what the general rules below give them.
    match (left, right) {
        (Value::Int(a), Value::Int(b)) => return Some(a.cmp(b)),
        (Value::Bytes(a), Value::Bytes(b)) => return Some(collation.compare(a, b)),
        _ => {}
    }
    if left.is_null() || right.is_null() {
        return None;
    }
    if matches!(left, Value::Json(_)) || matches!(right, Value::Json(_)) {
        return crate::eval::json::compare(left, right);
    }
    if let Some(ordering) = crate::eval::temporal::compare_times(left, right) {
        return ordering;
    }
    if let Some(ordering) = crate::eval::temporal::compare_datetimes(left, right) {
        return Some(ordering);
    }
    if is_numeric(left) || is_numeric(right) {
        let (a, b) = (to_number(left)?, to_number(right)?);
        return match (a, b) {
            (Number::Int(a), Number::Int(b)) => Some(a.cmp(&b)),
            _ => a.as_f64().partial_cmp(&b.as_f64()),
        };
    }
    Some(collation.compare(&text_bytes(left), &text_bytes(right)))
}

/// [`to_text`] without a copy where the value already holds its text:
/// comparisons (WHERE, ORDER BY) run once per row, or per pair of rows.
pub fn text_bytes(value: &Value) -> Cow<'_, [u8]> {
    match value {
        Value::Bytes(bytes) => Cow::Borrowed(bytes),
        Value::Decimal(text) => Cow::Borrowed(text.as_bytes()),
        other => Cow::Owned(to_text(other)),
    }
}

/// An ordering for ORDER BY and DISTINCT: NULL first, then [`compare`].
pub fn sort_order(left: &Value, right: &Value) -> Ordering {
    sort_order_in(left, right, Collation::Binary)
}

/// [`sort_order`], two strings compared under `collation`.
pub fn sort_order_in(left: &Value, right: &Value, collation: Collation) -> Ordering {
    match (left.is_null(), right.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => compare_in(left, right, collation).unwrap_or(Ordering::Equal),
    }
}

/// Appends what tells `value` apart under `collation` (GROUP BY and
/// DISTINCT keys): its text, or its text's weights when it is a string
/// and the collation is not binary.
pub fn append_group_key(value: &Value, collation: Collation, key: &mut Vec<u8>) {
    key.push(u8::from(value.is_null()));
    match value {
        Value::Bytes(text) => collation.append_weights(text, key),
        other => key.extend_from_slice(&text_bytes(other)),
    }
    key.push(0);
}

/// The truth of a value in WHERE: NULL is unknown, numbers are true when
/// not zero, text by its number.
pub fn truth(value: &Value) -> Option<bool> {
    to_number(value).map(|number| number.as_f64() != 0.0)
}

pub fn from_bool(value: Option<bool>) -> Value {
    match value {
        None => Value::Null,
        Some(value) => Value::Int(i64::from(value)),
    }
}

/// The text form MySQL prints.
pub fn to_text(value: &Value) -> Vec<u8> {
    match value {
        Value::Null => Vec::new(),
        Value::Int(v) => v.to_string().into_bytes(),
        Value::UInt(v) => v.to_string().into_bytes(),
        Value::Decimal(text) => text.clone().into_bytes(),
        Value::Bytes(bytes) => bytes.clone(),
        Value::Json(document) => crate::eval::json::document_text(document).into_bytes(),
        // A DATETIME keeps its time even at midnight (the protocol's
        // DATETIME text drops a zero time).
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            let fraction = if *micros == 0 { String::new() } else { format!(".{micros:06}") };
            format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{fraction}").into_bytes()
        }
        other => to_wire(other).to_text(31).unwrap_or_default(),
    }
}

pub fn text(value: &Value) -> String {
    String::from_utf8_lossy(&to_text(value)).into_owned()
}

/// The protocol's value for a result row.
/// A DATE or DATETIME value as the protocol carries and prints it.
pub fn wire_datetime(value: &Value) -> Option<protocol::DateTime> {
    match value {
        Value::Date { year, month, day } => Some(protocol::DateTime::date(*year, *month, *day)),
        Value::DateTime { year, month, day, hour, minute, second, micros } => Some(protocol::DateTime {
            year: *year,
            month: *month,
            day: *day,
            hour: *hour,
            minute: *minute,
            second: *second,
            microsecond: *micros,
        }),
        _ => None,
    }
}

pub fn to_wire(value: &Value) -> protocol::Value {
    use protocol::Value as Wire;
    match value {
        Value::Null => Wire::Null,
        Value::Int(v) => Wire::Int(*v),
        Value::UInt(v) => Wire::UInt(*v),
        Value::Float(v) => Wire::Float(*v),
        Value::Double(v) => Wire::Double(*v),
        Value::Decimal(text) => Wire::Bytes(text.clone().into_bytes()),
        Value::Bytes(bytes) => Wire::Bytes(bytes.clone()),
        Value::Date { .. } | Value::DateTime { .. } => wire_datetime(value).map_or(Wire::Null, Wire::DateTime),
        Value::Timestamp { seconds, micros } => Wire::Bytes(format!("{seconds}.{micros:06}").into_bytes()),
        Value::Time { negative, hours, minute, second, micros } => Wire::Time(protocol::Time {
            negative: *negative,
            days: u32::from(*hours / 24),
            hours: (*hours % 24) as u8,
            minutes: *minute,
            seconds: *second,
            microseconds: *micros,
        }),
        Value::Json(_) => Wire::Bytes(to_text(value)),
    }
}

/// [`to_wire`] of a value the caller is done with: text moves instead of
/// being copied (every string of every result row passes here).
pub fn into_wire(value: Value) -> protocol::Value {
    match value {
        Value::Bytes(bytes) => protocol::Value::Bytes(bytes),
        Value::Decimal(text) => protocol::Value::Bytes(text.into_bytes()),
        other => to_wire(&other),
    }
}

/// A prepared statement parameter as a value.
pub fn from_wire(value: &protocol::Value) -> Value {
    use protocol::Value as Wire;
    match value {
        Wire::Null => Value::Null,
        Wire::Int(v) => Value::Int(*v),
        Wire::UInt(v) => Value::UInt(*v),
        Wire::Float(v) => Value::Float(*v),
        Wire::Double(v) => Value::Double(*v),
        Wire::Bytes(bytes) => Value::Bytes(bytes.clone()),
        Wire::DateTime(dt) => Value::DateTime {
            year: dt.year,
            month: dt.month,
            day: dt.day,
            hour: dt.hour,
            minute: dt.minute,
            second: dt.second,
            micros: dt.microsecond,
        },
        Wire::Time(time) => {
            let hours = time.total_hours();
            if hours > u64::from(binlog_format::value::time::TIME_HOURS_MAX) {
                Value::Bytes(time.to_text(31).into_bytes())
            } else {
                let zero = hours == 0 && time.minutes == 0 && time.seconds == 0 && time.microseconds == 0;
                Value::Time {
                    negative: time.negative && !zero,
                    hours: hours as u16,
                    minute: time.minutes,
                    second: time.seconds,
                    micros: time.microseconds,
                }
            }
        }
    }
}

/// A prepared statement's parameter, checked as mysqld's `Item_param`
/// checks binary-protocol temporal values: a DATE, DATETIME or TIME with a
/// field out of range (month 13, hour 24, minute 60, a fraction past six
/// digits) becomes the zero value with warning 1292; a TIME past 838 hours
/// is 838:59:59, silently.
pub fn from_wire_parameter(value: &protocol::Value, warnings: &mut Vec<crate::session::Warning>) -> Value {
    use protocol::Value as Wire;
    let mut incorrect = |kind: &str, text: String| {
        if warnings.len() < crate::session::WARNINGS_MAX {
            warnings.push(crate::session::Warning { level: "Warning", code: 1292, message: format!("Incorrect {kind} value: '{text}'") });
        }
    };
    match value {
        Wire::DateTime(dt) => {
            let out_of_range = dt.year > 9999
                || dt.month > 12
                || dt.day > 31
                || dt.hour > 23
                || dt.minute > 59
                || dt.second > 59
                || dt.microsecond > 999_999;
            if !out_of_range {
                return from_wire(value);
            }
            let with_time = dt.hour != 0 || dt.minute != 0 || dt.second != 0 || dt.microsecond != 0;
            incorrect(if with_time { "datetime" } else { "date" }, dt.to_text(with_time, if dt.microsecond != 0 { 6 } else { 0 }));
            Value::DateTime { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, micros: 0 }
        }
        Wire::Time(time) if time.minutes > 59 || time.seconds > 59 || time.microseconds > 999_999 => {
            incorrect("time", time.to_text(if time.microseconds != 0 { 6 } else { 0 }));
            Value::Time { negative: false, hours: 0, minute: 0, second: 0, micros: 0 }
        }
        Wire::Time(time) if time.total_hours() > u64::from(binlog_format::value::time::TIME_HOURS_MAX) => {
            Value::Time { negative: time.negative, hours: binlog_format::value::time::TIME_HOURS_MAX, minute: 59, second: 59, micros: 0 }
        }
        other => from_wire(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_follow_mysql() {
        assert_eq!(compare(&Value::Int(2), &Value::Bytes(b"10".to_vec())), Some(Ordering::Less));
        assert_eq!(compare(&Value::Bytes(b"2".to_vec()), &Value::Bytes(b"10".to_vec())), Some(Ordering::Greater));
        assert_eq!(compare(&Value::Null, &Value::Int(1)), None);
        assert_eq!(compare(&Value::UInt(3), &Value::Double(3.0)), Some(Ordering::Equal));
        assert_eq!(to_number(&Value::Bytes(b" 12abc".to_vec())), Some(Number::Int(12)));
        assert_eq!(to_number(&Value::Bytes(b"abc".to_vec())), Some(Number::Float(0.0)));
        assert!(is_whole_number_text(b"42"));
        assert!(!is_whole_number_text(b"42x"));
    }
}
