//! CAST(expr AS type) and CONVERT(expr, type) as MySQL converts: SIGNED
//! and UNSIGNED [INTEGER], CHAR[(N)], BINARY[(N)], DATE, DATETIME[(fsp)],
//! TIME[(fsp)], YEAR, DECIMAL[(M[,D])], DOUBLE, FLOAT, REAL and JSON.
//! CONVERT(expr USING charset) keeps the text (binlogd's text is UTF-8).
//!
//! A cast never fails on a value: what does not convert gives MySQL's
//! result (the numeric prefix of a string, NULL for a date that is not
//! one) with a 1292 warning, whatever sql_mode says, as in MySQL.

use sqlparser::ast::{CharacterLength, DataType, ExactNumberInfo};

use crate::error::{not_supported, SqlResult};
use crate::eval::expr::Environment;
use crate::eval::value::{to_number, to_text, NullCheck, Number, Value};

/// `value` converted to `data_type`.
pub fn cast(value: Value, data_type: &DataType, environment: &dyn Environment) -> SqlResult<Value> {
    use DataType as D;
    if value.is_null() {
        return Ok(Value::Null);
    }
    match data_type {
        D::Signed | D::SignedInteger => Ok(integer(&value, true, environment)),
        D::Unsigned | D::UnsignedInteger => Ok(integer(&value, false, environment)),
        D::Char(length) | D::Character(length) => Ok(characters(value, length.as_ref(), environment)),
        D::Binary(length) => Ok(binary(value, *length, environment)),
        D::JSON => crate::eval::json_functions::cast(&value),
        D::Date | D::Datetime(_) | D::Time(..) => temporal(value, data_type, environment),
        D::Custom(name, modifiers) if crate::eval::temporal_columns::is_year(name) && modifiers.is_empty() => {
            temporal(value, data_type, environment)
        }
        D::Decimal(_) | D::Numeric(_) | D::Dec(_) => {
            let data_type = match data_type {
                D::Decimal(ExactNumberInfo::None) | D::Numeric(ExactNumberInfo::None) | D::Dec(ExactNumberInfo::None) => {
                    D::Decimal(ExactNumberInfo::PrecisionAndScale(10, 0))
                }
                D::Dec(info) => D::Decimal(*info),
                other => other.clone(),
            };
            converted(value, &data_type, environment)
        }
        D::Double(ExactNumberInfo::None) | D::DoublePrecision | D::Real => Ok(match to_number(&value) {
            Some(number) => Value::Double(number.as_f64()),
            None => Value::Null,
        }),
        D::Float(ExactNumberInfo::None) => Ok(match to_number(&value) {
            Some(number) => Value::Float(number.as_f64() as f32),
            None => Value::Null,
        }),
        other => Err(not_supported(format!("CAST AS {other}"))),
    }
}

fn truncated(environment: &dyn Environment, kind: &str, value: &Value) {
    environment.warning(1292, format!("Truncated incorrect {kind} value: '{}'", String::from_utf8_lossy(&to_text(value))));
}

/// SIGNED or UNSIGNED: a number rounds to the nearest integer; a string
/// reads as its integer prefix (1292 when that is not all of it);
/// UNSIGNED wraps a negative value around 2^64, SIGNED a large one.
fn integer(value: &Value, signed: bool, environment: &dyn Environment) -> Value {
    let wrap = |whole: i128| if signed { Value::Int(whole as i64) } else { Value::UInt(whole as u64) };
    match value {
        Value::Int(v) => wrap(i128::from(*v)),
        Value::UInt(v) => wrap(i128::from(*v)),
        Value::Bytes(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            let trimmed = text.trim_start();
            let digits_at = usize::from(trimmed.starts_with(['-', '+']));
            let digits = trimmed[digits_at..].bytes().take_while(u8::is_ascii_digit).count();
            let prefix = &trimmed[..digits_at + digits];
            let whole_text = digits > 0 && trimmed[digits_at + digits..].trim_end().is_empty();
            if !whole_text {
                truncated(environment, "INTEGER", value);
            }
            let limit = if signed { i128::from(i64::MAX) } else { i128::from(u64::MAX) };
            match prefix.parse::<i128>() {
                Ok(whole) if whole > limit => {
                    truncated(environment, "INTEGER", value);
                    wrap(limit)
                }
                Ok(whole) if signed && whole < i128::from(i64::MIN) => {
                    truncated(environment, "INTEGER", value);
                    Value::Int(i64::MIN)
                }
                Ok(whole) => wrap(whole),
                // No digits, or more than i128 holds.
                Err(_) if digits > 0 => wrap(if prefix.starts_with('-') { i128::from(i64::MIN) } else { limit }),
                Err(_) => wrap(0),
            }
        }
        other => match to_number(other) {
            Some(Number::Int(whole)) => wrap(whole),
            Some(Number::Float(real)) => {
                let rounded = real.round();
                match signed {
                    true => Value::Int(rounded.clamp(i64::MIN as f64, i64::MAX as f64) as i64),
                    false if rounded < 0.0 => Value::UInt(rounded.max(i64::MIN as f64) as i64 as u64),
                    false => Value::UInt(rounded.min(u64::MAX as f64) as u64),
                }
            }
            None => Value::Null,
        },
    }
}

/// CHAR(N): the text, cut to N characters with a 1292 warning.
fn characters(value: Value, length: Option<&CharacterLength>, environment: &dyn Environment) -> Value {
    let text = to_text(&value);
    let Some(CharacterLength::IntegerLength { length, .. }) = length else { return Value::Bytes(text) };
    let decoded = String::from_utf8_lossy(&text);
    match decoded.char_indices().nth(*length as usize) {
        Some((cut, _)) => {
            environment.warning(1292, format!("Truncated incorrect CHAR({length}) value: '{decoded}'"));
            Value::Bytes(decoded[..cut].as_bytes().to_vec())
        }
        None => Value::Bytes(text),
    }
}

/// BINARY(N): the bytes, cut to N with a 1292 warning or padded with
/// zero bytes to N.
fn binary(value: Value, length: Option<u64>, environment: &dyn Environment) -> Value {
    let mut bytes = to_text(&value);
    if let Some(length) = length.map(|length| length as usize) {
        if bytes.len() > length {
            environment.warning(1292, format!("Truncated incorrect BINARY({length}) value: '{}'", String::from_utf8_lossy(&bytes)));
            bytes.truncate(length);
        } else {
            bytes.resize(length, 0);
        }
    }
    Value::Bytes(bytes)
}

/// DATE, DATETIME, TIME and YEAR: the value as a column of the type would
/// take it outside strict mode, but NULL (and a 1292 warning) where the
/// column would take a zero value for a bad one.
fn temporal(value: Value, data_type: &DataType, environment: &dyn Environment) -> SqlResult<Value> {
    let shown = String::from_utf8_lossy(&to_text(&value)).into_owned();
    let mut warnings = Vec::new();
    let result = convert_as_column(value, data_type, environment, &mut warnings)?;
    if result.is_none() || warnings.iter().any(|warning| matches!(warning.code, 1292 | 1264 | 1366)) {
        let kind = match data_type {
            DataType::Time(..) => "time",
            DataType::Date => "date",
            _ => "datetime",
        };
        environment.warning(1292, format!("Incorrect {kind} value: '{shown}'"));
        return Ok(Value::Null);
    }
    Ok(result.unwrap_or(Value::Null))
}

/// DECIMAL(M,D): rounded to D digits; out of range the largest value of
/// the type with MySQL's 1264 warning, text that is no number 0 with 1292.
fn converted(value: Value, data_type: &DataType, environment: &dyn Environment) -> SqlResult<Value> {
    let shown = value.clone();
    let mut warnings = Vec::new();
    let result = convert_as_column(value, data_type, environment, &mut warnings)?;
    for warning in warnings {
        match warning.code {
            1366 | 1265 => truncated(environment, "DECIMAL", &shown),
            code => environment.warning(code, warning.message),
        }
    }
    Ok(result.unwrap_or(Value::Null))
}

/// `value` as a column of `data_type` takes it outside strict mode; `None`
/// where even that refuses it.
fn convert_as_column(
    value: Value,
    data_type: &DataType,
    environment: &dyn Environment,
    warnings: &mut Vec<crate::session::Warning>,
) -> SqlResult<Option<Value>> {
    let column = crate::eval::columns::column_from_sql("CAST", data_type)?;
    let mut rules = crate::eval::temporal::WriteRules::of(environment);
    rules.mode.strict = false;
    Ok(crate::eval::columns::coerce_write(&column, value, rules, warnings).ok())
}
