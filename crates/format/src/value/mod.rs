//! Column values in row images: [`Value`] and its encoding per column type.
//!
//! | column type | value | stored as |
//! |-------------|-------|-----------|
//! | TINY, SHORT, INT24, LONG, LONGLONG | `Int` (signed) / `UInt` (unsigned) | 1, 2, 3, 4, 8 bytes LE, two's complement |
//! | FLOAT, DOUBLE | `Float`, `Double` | 4, 8 bytes LE IEEE 754 |
//! | NEWDECIMAL | `Decimal("-123.4500")` | [`decimal`] binary format |
//! | CHAR | `Bytes` | length u8 (u16 LE when the column is 256+ bytes) + bytes |
//! | VARCHAR | `Bytes` | length u8 (u16 LE when max length >= 256) + bytes |
//! | BLOB, TEXT | `Bytes` | length in 1..=4 bytes LE (the column's metadata) + bytes |
//! | DATE, DATETIME2, TIMESTAMP2 | `Date`, `DateTime`, `Timestamp` | see [`temporal`] |
//! | BIT(M) | `UInt` | big-endian in ceil(M/8) bytes ([`bit`]) |
//! | ENUM, SET | `UInt` (index, bit mask) | LE in the pack length ([`enumeration`]) |
//! | TIME2, YEAR | `Time`, `Int` (0 or 1901..=2155) | see [`time`] |
//! | anything else (`ColumnType::Raw`) | `Bytes` | the stored bytes verbatim, length prefix included |
//! | JSON | `Json` (the binary document) | length u32 LE + MySQL's binary JSON ([`json::binary`]) |
//! | GEOMETRY | `Bytes` (SRID u32 LE + WKB) | length u32 LE + the bytes ([`geometry`]) |
//!
//! Encoding accepts exactly the values decoding produces for a column (an
//! unsigned column takes `UInt`, a signed one `Int`), so decoding an
//! encoded row gives the same values back, and encoding decoded values
//! gives the same bytes back.

pub mod bit;
pub mod decimal;
pub mod enumeration;
pub mod geometry;
pub mod json;
pub mod raw;
pub mod temporal;
pub mod time;

use crate::bytes::ByteReader;
use crate::column_type::ColumnType;
use crate::error::DecodeError;
use temporal::DateTimeParts;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Float(f32),
    Double(f64),
    /// Canonical decimal text: optional `-` (never on zero), integer digits
    /// without leading zeros (`0` when none), then `.` and exactly `scale`
    /// digits.
    Decimal(String),
    Bytes(Vec<u8>),
    Date {
        year: u16,
        month: u8,
        day: u8,
    },
    DateTime {
        year: u16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        micros: u32,
    },
    /// Seconds since the epoch (UTC), as TIMESTAMP stores it.
    Timestamp {
        seconds: u32,
        micros: u32,
    },
    /// A TIME: a signed duration up to 838:59:59 (`negative` is never set
    /// on zero).
    Time {
        negative: bool,
        hours: u16,
        minute: u8,
        second: u8,
        micros: u32,
    },
    /// A JSON document in MySQL's binary JSON format ([`json::binary`]),
    /// as a JSON column stores it and a row event carries it.
    Json(Vec<u8>),
}

/// Bytes of an integer column's values; `None` for other types.
fn integer_width(column_type: &ColumnType) -> Option<usize> {
    match column_type {
        ColumnType::Tiny => Some(1),
        ColumnType::Short => Some(2),
        ColumnType::Int24 => Some(3),
        ColumnType::Long => Some(4),
        ColumnType::LongLong => Some(8),
        _ => None,
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "NULL",
        Value::Int(_) => "Int",
        Value::UInt(_) => "UInt",
        Value::Float(_) => "Float",
        Value::Double(_) => "Double",
        Value::Decimal(_) => "Decimal",
        Value::Bytes(_) => "Bytes",
        Value::Date { .. } => "Date",
        Value::DateTime { .. } => "DateTime",
        Value::Timestamp { .. } => "Timestamp",
        Value::Time { .. } => "Time",
        Value::Json(_) => "Json",
    }
}

/// Width of the length prefix of a CHAR/VARCHAR value.
fn string_prefix_length(max_length_bytes: u16) -> usize {
    if max_length_bytes < 256 {
        1
    } else {
        2
    }
}

fn put_length_prefixed(bytes: &[u8], prefix_length: usize, max_length: u64, out: &mut Vec<u8>) -> Result<(), String> {
    if bytes.len() as u64 > max_length {
        return Err(format!("{} bytes exceed the column's {max_length}", bytes.len()));
    }
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes()[..prefix_length]);
    out.extend_from_slice(bytes);
    Ok(())
}

/// Appends a non-NULL `value` as a `column_type` column stores it.
/// `unsigned` comes from the Table_map's SIGNEDNESS metadata.
pub fn encode_value(column_type: &ColumnType, unsigned: bool, value: &Value, out: &mut Vec<u8>) -> Result<(), String> {
    let mismatch =
        || format!("a {} value does not fit a {column_type:?} column{}", kind_of(value), if unsigned { " (unsigned)" } else { "" });
    if let Some(width) = integer_width(column_type) {
        let bits = 8 * width as u32;
        let stored = match (unsigned, value) {
            (false, Value::Int(v)) => {
                let (min, max) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
                if !(min..=max).contains(&(*v as i128)) {
                    return Err(format!("{v} is outside the signed {bits}-bit range"));
                }
                *v as u64
            }
            (true, Value::UInt(v)) => {
                if bits < 64 && *v >= 1u64 << bits {
                    return Err(format!("{v} is outside the unsigned {bits}-bit range"));
                }
                *v
            }
            _ => return Err(mismatch()),
        };
        out.extend_from_slice(&stored.to_le_bytes()[..width]);
        return Ok(());
    }
    match (column_type, value) {
        (ColumnType::Float, Value::Float(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (ColumnType::Double, Value::Double(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (ColumnType::NewDecimal { precision, scale }, Value::Decimal(text)) => decimal::encode_decimal(text, *precision, *scale, out)?,
        (ColumnType::String { max_length_bytes }, Value::Bytes(bytes))
        | (ColumnType::VarChar { max_length_bytes }, Value::Bytes(bytes)) => {
            put_length_prefixed(bytes, string_prefix_length(*max_length_bytes), *max_length_bytes as u64, out)?
        }
        (ColumnType::Blob { length_bytes }, Value::Bytes(bytes)) => {
            if !(1..=4).contains(length_bytes) {
                return Err(format!("BLOB length prefix of {length_bytes} bytes (1..=4)"));
            }
            let max_length = (1u64 << (8 * *length_bytes as u32)) - 1;
            put_length_prefixed(bytes, *length_bytes as usize, max_length, out)?
        }
        (ColumnType::Date, Value::Date { year, month, day }) => temporal::encode_date(*year, *month, *day, out)?,
        (ColumnType::DateTime2 { fsp }, Value::DateTime { year, month, day, hour, minute, second, micros }) => {
            let parts =
                DateTimeParts { year: *year, month: *month, day: *day, hour: *hour, minute: *minute, second: *second, micros: *micros };
            temporal::encode_datetime2(parts, *fsp, out)?
        }
        (ColumnType::Timestamp2 { fsp }, Value::Timestamp { seconds, micros }) => {
            temporal::encode_timestamp2(*seconds, *micros, *fsp, out)?
        }
        (ColumnType::Bit { bits }, Value::UInt(v)) => bit::encode_bit(*bits, *v, out)?,
        (ColumnType::Enum { length_bytes } | ColumnType::Set { length_bytes }, Value::UInt(v)) => {
            enumeration::encode_index(*length_bytes, *v, out)?
        }
        (ColumnType::Time2 { fsp }, Value::Time { negative, hours, minute, second, micros }) => {
            let parts = time::TimeParts { negative: *negative, hours: *hours, minute: *minute, second: *second, micros: *micros };
            time::encode_time2(parts, *fsp, out)?
        }
        (ColumnType::Year, Value::Int(year)) => time::encode_year(*year, out)?,
        (ColumnType::Json, Value::Json(document)) => {
            let max_length = (1u64 << (8 * u32::from(crate::column_type::JSON_LENGTH_BYTES))) - 1;
            put_length_prefixed(document, usize::from(crate::column_type::JSON_LENGTH_BYTES), max_length, out)?
        }
        (ColumnType::Geometry, Value::Bytes(bytes)) => {
            let max_length = (1u64 << (8 * u32::from(crate::column_type::GEOMETRY_LENGTH_BYTES))) - 1;
            put_length_prefixed(bytes, usize::from(crate::column_type::GEOMETRY_LENGTH_BYTES), max_length, out)?
        }
        (ColumnType::Raw { type_code, metadata }, Value::Bytes(bytes)) => {
            let length = raw::value_length(*type_code, metadata, bytes).map_err(|e| e.to_string())?;
            if length != bytes.len() {
                return Err(format!("{} bytes where a type {type_code} value takes {length}", bytes.len()));
            }
            out.extend_from_slice(bytes);
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

fn decode_integer(width: usize, unsigned: bool, reader: &mut ByteReader<'_>) -> Result<Value, DecodeError> {
    let stored = reader.uint_n(width, "integer value")?;
    let shift = 64 - 8 * width as u32;
    Ok(if unsigned {
        Value::UInt(stored)
    } else {
        // Sign-extend from the column's width.
        Value::Int(((stored << shift) as i64) >> shift)
    })
}

/// Reads one non-NULL value of `column_type`.
pub fn decode_value(column_type: &ColumnType, unsigned: bool, reader: &mut ByteReader<'_>) -> Result<Value, DecodeError> {
    let invalid = |what: &'static str| move |reason: String| DecodeError::invalid(what, reason);
    Ok(match column_type {
        ColumnType::Float => Value::Float(f32::from_le_bytes(reader.take(4, "FLOAT value")?.try_into().unwrap())),
        ColumnType::Double => Value::Double(f64::from_le_bytes(reader.take(8, "DOUBLE value")?.try_into().unwrap())),
        ColumnType::NewDecimal { precision, scale } => {
            let bytes = reader.take(decimal::decimal_binary_length(*precision, *scale), "DECIMAL value")?;
            Value::Decimal(decimal::decode_decimal(bytes, *precision, *scale).map_err(invalid("DECIMAL value"))?)
        }
        ColumnType::String { .. }
        | ColumnType::VarChar { .. }
        | ColumnType::Blob { .. }
        | ColumnType::Raw { .. }
        | ColumnType::Geometry => Value::Bytes(variable_bytes(column_type, reader)?.unwrap_or_default().to_vec()),
        // The document's bytes as written: a reader decodes them with
        // `json::binary::decode` when it needs the tree.
        ColumnType::Json => Value::Json(variable_bytes(column_type, reader)?.unwrap_or_default().to_vec()),
        ColumnType::Date => temporal::decode_date(reader.take(3, "DATE value")?).map_err(invalid("DATE value"))?,
        ColumnType::DateTime2 { fsp } => {
            let bytes = reader.take(5 + temporal::fraction_length(*fsp), "DATETIME2 value")?;
            temporal::decode_datetime2(bytes, *fsp).map_err(invalid("DATETIME2 value"))?
        }
        ColumnType::Timestamp2 { fsp } => {
            let bytes = reader.take(4 + temporal::fraction_length(*fsp), "TIMESTAMP2 value")?;
            temporal::decode_timestamp2(bytes, *fsp).map_err(invalid("TIMESTAMP2 value"))?
        }
        ColumnType::Bit { bits } => {
            let bytes = reader.take(bit::bit_length_bytes(*bits), "BIT value")?;
            Value::UInt(bit::decode_bit(*bits, bytes).map_err(invalid("BIT value"))?)
        }
        ColumnType::Enum { length_bytes } | ColumnType::Set { length_bytes } => {
            Value::UInt(enumeration::decode_index(reader.take(usize::from(*length_bytes), "ENUM or SET value")?))
        }
        ColumnType::Time2 { fsp } => {
            let bytes = reader.take(3 + temporal::fraction_length(*fsp), "TIME2 value")?;
            time::decode_time2(bytes, *fsp).map_err(invalid("TIME2 value"))?
        }
        ColumnType::Year => time::decode_year(reader.u8("YEAR value")?),
        ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong => {
            let width = integer_width(column_type).unwrap_or(8);
            decode_integer(width, unsigned, reader)?
        }
    })
}

/// Reads past one non-NULL value of `column_type` as [`decode_value`]
/// reads it, with its checks, without copying out the bytes of a string,
/// BLOB, JSON, GEOMETRY or raw value.
pub fn skip_value(column_type: &ColumnType, unsigned: bool, reader: &mut ByteReader<'_>) -> Result<(), DecodeError> {
    if variable_bytes(column_type, reader)?.is_none() {
        decode_value(column_type, unsigned, reader)?;
    }
    Ok(())
}

/// The bytes of a value stored behind a length (string, BLOB, JSON,
/// GEOMETRY; a raw column's by its type's rules), read past; `None`, reading
/// nothing, for the other types.
fn variable_bytes<'a>(column_type: &ColumnType, reader: &mut ByteReader<'a>) -> Result<Option<&'a [u8]>, DecodeError> {
    let prefixed = |reader: &mut ByteReader<'a>, prefix_bytes: usize, what_length, what| -> Result<&'a [u8], DecodeError> {
        let length = reader.uint_n(prefix_bytes, what_length)?;
        reader.take(usize::try_from(length).unwrap_or(usize::MAX), what)
    };
    Ok(Some(match column_type {
        ColumnType::String { max_length_bytes } | ColumnType::VarChar { max_length_bytes } => {
            let length = reader.uint_n(string_prefix_length(*max_length_bytes), "string length")?;
            if length > *max_length_bytes as u64 {
                return Err(DecodeError::invalid("string value", format!("{length} bytes exceed the column's {max_length_bytes}")));
            }
            reader.take(length as usize, "string value")?
        }
        ColumnType::Blob { length_bytes } => {
            if !(1..=4).contains(length_bytes) {
                return Err(DecodeError::invalid("BLOB column", format!("length prefix of {length_bytes} bytes (1..=4)")));
            }
            prefixed(reader, *length_bytes as usize, "BLOB length", "BLOB value")?
        }
        ColumnType::Raw { type_code, metadata } => {
            let rest = reader.clone().rest();
            let length = raw::value_length(*type_code, metadata, rest)?;
            reader.take(length, "raw column value")?
        }
        ColumnType::Json => prefixed(reader, usize::from(crate::column_type::JSON_LENGTH_BYTES), "JSON length", "JSON value")?,
        // SRID and WKB as stored: a reader parses them with
        // `geometry::Stored::parse` when it needs the shape.
        ColumnType::Geometry => {
            prefixed(reader, usize::from(crate::column_type::GEOMETRY_LENGTH_BYTES), "GEOMETRY length", "GEOMETRY value")?
        }
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_value_is_its_length_in_four_bytes_then_the_binary_document() {
        let document = json::binary::to_binary(&json::text::parse(br#"{"a": [1, "x"]}"#).unwrap()).unwrap();
        let mut stored = Vec::new();
        encode_value(&ColumnType::Json, false, &Value::Json(document.clone()), &mut stored).unwrap();
        assert_eq!(stored[..4], (document.len() as u32).to_le_bytes());
        assert_eq!(stored[4..], document[..]);
        let mut reader = ByteReader::new(&stored);
        assert_eq!(decode_value(&ColumnType::Json, false, &mut reader).unwrap(), Value::Json(document));
        assert!(encode_value(&ColumnType::Json, false, &Value::Bytes(b"{}".to_vec()), &mut Vec::new()).is_err());
    }
}
