//! JSON values in the SQL layer: a `Value::Json` holds a document in
//! MySQL's binary JSON format (what a JSON column stores and the binlog
//! carries). Here: SQL values made JSON (for a column, as a function's
//! document argument, as a scalar inside a document), documents printed,
//! and MySQL's JSON comparator for `=`, `<`, ORDER BY.

use std::cmp::Ordering;

use binlog_format::value::json::{binary, text, Json, JsonDecimal, Temporal, SQL_STATE};
use protocol::MysqlError;

use crate::error::SqlResult;
use crate::eval::value::Value;

/// The tree of a stored document; a document that does not decode is an
/// internal error (the SQL layer only stores what it encoded).
pub fn decode(document: &[u8]) -> SqlResult<Json> {
    binary::decode(document).map_err(|error| MysqlError::internal(format!("a stored JSON document does not decode: {error}")))
}

/// A stored document as MySQL prints it.
pub fn document_text(document: &[u8]) -> String {
    match binary::decode(document) {
        Ok(json) => json.to_string(),
        Err(error) => format!("(invalid JSON: {error})"),
    }
}

/// `json` as a JSON-typed value, or MySQL's error for a document it
/// cannot store (3150 too big, 3151 key too long, 3157 too deep).
pub fn to_value(json: &Json) -> SqlResult<Value> {
    binary::to_binary(json).map(Value::Json).map_err(|error| {
        let state = if error.code() == 1105 { "HY000" } else { SQL_STATE };
        MysqlError::new(error.code(), state, error.to_string())
    })
}

/// `value` made fit for JSON column `table.column`: JSON stays, text must
/// parse (3140 with RapidJSON's message), anything else is 3140 as MySQL
/// refuses a number or a date there without CAST.
pub fn for_column(table: &str, column: &str, value: &Value) -> SqlResult<Value> {
    let name = format!("{table}.{column}");
    match value {
        Value::Null | Value::Json(_) => Ok(value.clone()),
        Value::Bytes(bytes) => match text::parse(bytes) {
            Ok(json) => to_value(&json),
            Err(error) => Err(MysqlError::new(error.code_for_column(), SQL_STATE, error.message_for_column(&name))),
        },
        _ => Err(MysqlError::new(
            3140,
            SQL_STATE,
            format!("Invalid JSON text: \"not a JSON text, may need CAST\" at position 0 in value for column '{name}'."),
        )),
    }
}

/// A function's document argument (`argument` counts from 1): JSON as it
/// is, text parsed (3141), NULL as `None`, anything else 3146.
pub fn document_argument(value: &Value, argument: usize, function: &str) -> SqlResult<Option<Json>> {
    match value {
        Value::Null => Ok(None),
        Value::Json(document) => decode(document).map(Some),
        Value::Bytes(bytes) => text::parse(bytes)
            .map(Some)
            .map_err(|error| MysqlError::new(error.code_for_argument(), SQL_STATE, error.message_for_argument(argument, function))),
        _ => Err(MysqlError::new(
            3146,
            SQL_STATE,
            format!(
                "Invalid data type for JSON data in argument {argument} to function {function}; a JSON string or JSON type is required."
            ),
        )),
    }
}

/// A SQL value as a JSON scalar (`JSON_ARRAY(1, 'a')`, the other side of a
/// comparison): text is a JSON string, numbers keep their type, DECIMAL and
/// temporal values become MySQL's opaque DECIMAL and DATE/DATETIME.
pub fn scalar(value: &Value) -> SqlResult<Json> {
    Ok(match value {
        Value::Null => Json::Null,
        Value::Int(v) => Json::Int(*v),
        Value::UInt(v) => Json::UInt(*v),
        Value::Float(v) => Json::Double(f64::from(*v)),
        Value::Double(v) => Json::Double(*v),
        Value::Decimal(text) => decimal(text),
        Value::Bytes(bytes) => Json::String(String::from_utf8_lossy(bytes).into_owned()),
        Value::Date { year, month, day } => Json::Temporal(Temporal::date(*year, *month, *day)),
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            Json::Temporal(Temporal::datetime((*year, *month, *day), (u16::from(*hour), *minute, *second, *micros)))
        }
        Value::Timestamp { seconds, micros } => {
            let at = time::OffsetDateTime::from_unix_timestamp(i64::from(*seconds))
                .map_err(|error| MysqlError::internal(format!("TIMESTAMP {seconds}: {error}")))?;
            Json::Temporal(Temporal::timestamp(
                (at.year() as u16, u8::from(at.month()), at.day()),
                (u16::from(at.hour()), at.minute(), at.second(), *micros),
            ))
        }
        Value::Time { negative, hours, minute, second, micros } => {
            Json::Temporal(Temporal::time(*negative, *hours, *minute, *second, *micros))
        }
        Value::Json(document) => decode(document)?,
    })
}

/// DECIMAL text as the opaque DECIMAL MySQL stores, with the precision and
/// scale its digits need.
fn decimal(text: &str) -> Json {
    let digits = text.trim_start_matches('-');
    let (integer, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let integer = integer.trim_start_matches('0');
    let scale = fraction.len().min(30) as u8;
    let precision = (integer.len() + usize::from(scale)).clamp(1, 65) as u8;
    match JsonDecimal::new(text, precision.max(scale), scale) {
        Ok(decimal) => Json::Decimal(decimal),
        Err(_) => Json::Double(text.parse().unwrap_or(0.0)),
    }
}

/// MySQL's JSON comparator (`Json_wrapper::compare`) when either side is
/// JSON; the other side is made a JSON scalar first. NULL is unknown.
pub fn compare(left: &Value, right: &Value) -> Option<Ordering> {
    if matches!(left, Value::Null) || matches!(right, Value::Null) {
        return None;
    }
    let (left, right) = (scalar(left).ok()?, scalar(right).ok()?);
    Some(compare_json(&left, &right))
}

/// Precedence of a JSON type when two values of different types meet
/// (MySQL's manual, "Comparison and Ordering of JSON Values"): NULL lowest,
/// numbers, STRING, OBJECT, ARRAY, BOOLEAN, DATE, TIME, DATETIME, OPAQUE.
fn precedence(json: &Json) -> u8 {
    use binlog_format::value::json::TemporalKind;
    match json {
        Json::Null => 0,
        Json::Int(_) | Json::UInt(_) | Json::Double(_) | Json::Decimal(_) => 1,
        Json::String(_) => 2,
        Json::Object(_) => 3,
        Json::Array(_) => 4,
        Json::Bool(_) => 5,
        Json::Temporal(t) => match t.kind {
            TemporalKind::Date => 6,
            TemporalKind::Time => 7,
            TemporalKind::DateTime | TemporalKind::Timestamp => 8,
        },
        Json::Opaque { .. } => 9,
    }
}

/// A JSON number as an exact-enough value for comparison.
fn number(json: &Json) -> Option<f64> {
    match json {
        Json::Int(v) => Some(*v as f64),
        Json::UInt(v) => Some(*v as f64),
        Json::Double(v) => Some(*v),
        Json::Decimal(d) => d.text.parse().ok(),
        _ => None,
    }
}

pub fn compare_json(left: &Json, right: &Json) -> Ordering {
    let by_type = precedence(left).cmp(&precedence(right));
    if by_type != Ordering::Equal {
        return by_type;
    }
    match (left, right) {
        (Json::Int(a), Json::Int(b)) => a.cmp(b),
        (Json::UInt(a), Json::UInt(b)) => a.cmp(b),
        (Json::Int(a), Json::UInt(b)) => i128::from(*a).cmp(&i128::from(*b)),
        (Json::UInt(a), Json::Int(b)) => i128::from(*a).cmp(&i128::from(*b)),
        (Json::String(a), Json::String(b)) => a.as_bytes().cmp(b.as_bytes()),
        (Json::Bool(a), Json::Bool(b)) => a.cmp(b),
        (Json::Array(a), Json::Array(b)) => {
            for (x, y) in a.iter().zip(b) {
                let ordering = compare_json(x, y);
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
            a.len().cmp(&b.len())
        }
        (Json::Object(a), Json::Object(b)) => {
            // Equal when the same keys hold equal values; otherwise an
            // order that is stable, as MySQL promises no more.
            let by_length = a.len().cmp(&b.len());
            if by_length != Ordering::Equal {
                return by_length;
            }
            for ((key_a, value_a), (key_b, value_b)) in a.iter().zip(b.iter()) {
                let ordering = binlog_format::value::json::key_order(key_a, key_b).then_with(|| compare_json(value_a, value_b));
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
            Ordering::Equal
        }
        (Json::Temporal(a), Json::Temporal(b)) => a.packed().cmp(&b.packed()),
        (Json::Opaque { field_type: ta, bytes: a }, Json::Opaque { field_type: tb, bytes: b }) => ta.cmp(tb).then_with(|| a.cmp(b)),
        (Json::Null, Json::Null) => Ordering::Equal,
        _ => match (number(left), number(right)) {
            (Some(a), Some(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            _ => Ordering::Equal,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value {
        to_value(&text::parse(text.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn column_values_parse_or_get_mysqls_3140() {
        assert_eq!(
            document_text(match &for_column("t", "j", &Value::Bytes(br#"{"b":1,"a":[true]}"#.to_vec())).unwrap() {
                Value::Json(document) => document,
                other => panic!("{other:?}"),
            }),
            r#"{"a": [true], "b": 1}"#
        );
        let error = for_column("t", "j", &Value::Bytes(b"{".to_vec())).unwrap_err();
        assert_eq!(
            (error.code, error.message.as_str()),
            (3140, "Invalid JSON text: \"Missing a name for object member.\" at position 1 in value for column 't.j'.")
        );
        let error = for_column("t", "j", &Value::Int(1)).unwrap_err();
        assert_eq!(error.message, "Invalid JSON text: \"not a JSON text, may need CAST\" at position 0 in value for column 't.j'.");
        assert_eq!(for_column("t", "j", &Value::Null).unwrap(), Value::Null);
    }

    #[test]
    fn comparison_follows_mysqls_json_comparator() {
        assert_eq!(compare(&json("1"), &Value::Double(1.0)), Some(Ordering::Equal));
        assert_eq!(compare(&json("1.5"), &Value::Int(2)), Some(Ordering::Less));
        assert_eq!(compare(&json(r#""abc""#), &Value::Bytes(b"abc".to_vec())), Some(Ordering::Equal));
        // A string is not the document its text spells.
        assert_ne!(compare(&json(r#"{"a": 1}"#), &Value::Bytes(br#"{"a": 1}"#.to_vec())), Some(Ordering::Equal));
        assert_eq!(compare(&json(r#"{"a": 1, "b": [1, 2]}"#), &json(r#"{"b": [1, 2.0], "a": 1}"#)), Some(Ordering::Equal));
        assert_eq!(compare(&json("[1, 2]"), &json("[1, 3]")), Some(Ordering::Less));
        assert_eq!(compare(&json("true"), &json("[1]")), Some(Ordering::Greater));
        assert_eq!(compare(&json("null"), &json("0")), Some(Ordering::Less));
        assert_eq!(compare(&json("1"), &Value::Null), None);
    }

    #[test]
    fn function_arguments_are_documents_or_mysqls_errors() {
        let error = document_argument(&Value::Bytes(b"[1,".to_vec()), 1, "json_extract").unwrap_err();
        assert_eq!(
            (error.code, error.message.as_str()),
            (3141, "Invalid JSON text in argument 1 to function json_extract: \"Invalid value.\" at position 3.")
        );
        let error = document_argument(&Value::Int(1), 2, "json_type").unwrap_err();
        assert_eq!(error.code, 3146);
        assert_eq!(document_argument(&Value::Null, 1, "json_type").unwrap(), None);
        assert_eq!(scalar(&Value::Decimal("-1.50".into())).unwrap().to_string(), "-1.50");
    }
}
