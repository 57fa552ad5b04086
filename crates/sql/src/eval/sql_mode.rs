//! Writes outside strict mode: when `sql_mode` has neither
//! STRICT_TRANS_TABLES nor STRICT_ALL_TABLES, a value that does not fit
//! its column is stored clipped (the nearest value in range, '' for an
//! ENUM, the known members of a SET, a string cut to the column) and the
//! strict-mode error becomes a warning with the same code and message.

use binlog_format::ColumnType;
use engine::ColumnDef;

use crate::error::SqlResult;
use crate::eval::columns::{coerce, BINARY_COLLATION};
use crate::eval::value::{text_number, to_number, to_text, Number, Value};
use crate::session::{Warning, WARNINGS_MAX};

/// [`coerce`] in strict mode; outside it, the clipped value with the
/// strict error as a warning. Strict writes hand the value over without a
/// copy.
pub fn coerce_clipping(column: &ColumnDef, value: Value, strict: bool, warnings: &mut Vec<Warning>) -> SqlResult<Value> {
    if strict {
        return coerce(column, value);
    }
    let error = match coerce(column, value.clone()) {
        Ok(fitted) => return Ok(fitted),
        Err(error) => error,
    };
    let Some(clipped) = clipped(column, &value, error.code) else { return Err(error) };
    if warnings.len() < WARNINGS_MAX {
        warnings.push(Warning { level: "Warning", code: error.code, message: error.message });
    }
    Ok(clipped)
}

/// The value MySQL stores instead of `value` after `code`, for the types
/// whose clipping it defines; `None` leaves the error.
fn clipped(column: &ColumnDef, value: &Value, code: u16) -> Option<Value> {
    let number = || match value {
        Value::Bytes(bytes) => text_number(bytes),
        other => to_number(other).unwrap_or(Number::Int(0)),
    };
    let fitted = match (&column.column_type, code) {
        (ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong, 1264 | 1366) => {
            let (low, high) = crate::eval::columns::integer_range(column);
            let clamped = match number() {
                Number::Int(v) => v.clamp(low, high),
                Number::Float(v) if v.is_nan() => 0,
                Number::Float(v) => (v.round().clamp(low as f64, high as f64)) as i128,
            };
            Value::Decimal(clamped.to_string())
        }
        (ColumnType::Float | ColumnType::Double, 1264 | 1366) => {
            let max = match (column.attributes.float_digits, &column.column_type) {
                (Some((digits, decimals)), _) => 10f64.powi(i32::from(digits - decimals)) - 10f64.powi(-i32::from(decimals)),
                (None, ColumnType::Float) => f64::from(f32::MAX),
                (None, _) => f64::MAX,
            };
            let low = if column.unsigned { 0.0 } else { -max };
            let v = number().as_f64();
            Value::Double(if v.is_nan() { 0.0 } else { v.clamp(low, max) })
        }
        (ColumnType::NewDecimal { precision, scale }, 1264) => {
            let negative = number().as_f64() < 0.0 || crate::eval::value::text(value).trim_start().starts_with('-');
            Value::Decimal(crate::eval::decimal::limit(*precision, *scale, negative && !column.unsigned))
        }
        (ColumnType::NewDecimal { .. }, 1366) => match number() {
            Number::Int(v) => Value::Decimal(v.to_string()),
            Number::Float(v) => Value::Double(if v.is_finite() { v } else { 0.0 }),
        },
        (ColumnType::Bit { bits }, 1406) => Value::UInt(if *bits == 64 { u64::MAX } else { (1u64 << bits) - 1 }),
        (ColumnType::Enum { .. }, 1265) => return Some(Value::UInt(0)),
        (ColumnType::Set { .. }, 1265) => return Some(Value::UInt(known_members(column, value))),
        (ColumnType::String { .. } | ColumnType::VarChar { .. } | ColumnType::Blob { .. }, 1366) => {
            let text = crate::eval::value::text(value);
            let replaced = Value::Bytes(crate::charsets::with_unstorable_replaced(column.collation, &text).into_bytes());
            // Cut to the column too when it is longer than that (MySQL
            // warns of the first only).
            return coerce(column, replaced.clone()).ok().or_else(|| clipped(column, &replaced, 1406));
        }
        (ColumnType::String { max_length_bytes } | ColumnType::VarChar { max_length_bytes }, 1406) => {
            Value::Bytes(cut(column, to_text(value), usize::from(*max_length_bytes)))
        }
        _ => return None,
    };
    // The clipped value fits by construction; coerce once more for the
    // column's own form (unsigned, FLOAT rounding, BINARY padding).
    coerce(column, fitted).ok()
}

/// A SET value's known members as a mask: text keeps the members it
/// names, a number its bits that name members.
fn known_members(column: &ColumnDef, value: &Value) -> u64 {
    let members = &column.attributes.members;
    let all = if members.len() >= 64 { u64::MAX } else { (1u64 << members.len()) - 1 };
    match value {
        Value::Bytes(text) => text
            .split(|&b| b == b',')
            .filter_map(|part| crate::eval::enumeration::coerce_enum(members, &Value::Bytes(part.to_vec()), "").ok())
            .fold(0u64, |mask, index| match index {
                Value::UInt(index) => mask | 1 << (index - 1),
                _ => mask,
            }),
        other => match to_number(other) {
            Some(Number::Int(v)) if v >= 0 => (v as u64) & all,
            _ => 0,
        },
    }
}

/// `bytes` cut to the column: `limit_bytes` for binary strings, the
/// characters that fit for text.
fn cut(column: &ColumnDef, mut bytes: Vec<u8>, limit_bytes: usize) -> Vec<u8> {
    if column.collation == BINARY_COLLATION {
        bytes.truncate(limit_bytes);
        return bytes;
    }
    let text = String::from_utf8_lossy(&bytes);
    let characters = limit_bytes / usize::from(crate::charsets::bytes_per_character(column.collation));
    text.chars().take(characters).collect::<String>().into_bytes()
}
