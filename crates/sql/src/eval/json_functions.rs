//! The JSON functions applications use most, with MySQL's results and
//! errors: JSON_OBJECT, JSON_ARRAY, JSON_EXTRACT (and `->`, `->>`),
//! JSON_UNQUOTE, JSON_QUOTE, JSON_SET, JSON_INSERT, JSON_REPLACE,
//! JSON_REMOVE, JSON_ARRAY_APPEND, JSON_VALID, JSON_TYPE, JSON_CONTAINS,
//! JSON_CONTAINS_PATH, JSON_LENGTH, JSON_KEYS, and CAST(... AS JSON).
//!
//! | result | SQL value |
//! |--------|-----------|
//! | a document (JSON_OBJECT, JSON_EXTRACT, JSON_SET, ...) | `Value::Json`, so it stays JSON in a JSON column or another JSON function |
//! | text (JSON_UNQUOTE, `->>`, JSON_QUOTE, JSON_TYPE) | `Value::Bytes`, utf8mb4 |
//! | a count or truth (JSON_LENGTH, JSON_VALID, JSON_CONTAINS_PATH) | `Value::Int` |

use binlog_format::value::json::path::Path;
use binlog_format::value::json::{print, text, Json, Object, TemporalKind, SQL_STATE};
use protocol::MysqlError;
use sqlparser::ast::{BinaryOperator, Expr, UnaryOperator, Value as Literal};

use crate::error::SqlResult;
use crate::eval::json::{compare_json, document_argument, scalar, to_value};
use crate::eval::json_modify::{path_argument, refuse_wildcards};
use crate::eval::value::{text as value_text, truth, Value};

/// Functions whose result is a JSON document (MYSQL_TYPE_JSON columns).
pub const RETURNING_JSON: [&str; 9] = [
    "JSON_OBJECT",
    "JSON_ARRAY",
    "JSON_EXTRACT",
    "JSON_SET",
    "JSON_INSERT",
    "JSON_REPLACE",
    "JSON_REMOVE",
    "JSON_KEYS",
    "JSON_ARRAY_APPEND",
];

/// Functions whose result is an integer.
pub const RETURNING_INTEGER: [&str; 4] = ["JSON_VALID", "JSON_LENGTH", "JSON_CONTAINS_PATH", "JSON_CONTAINS"];

/// Calls JSON function `name` (upper case) on evaluated `values`; `args`
/// are the argument expressions (a comparison or TRUE is a JSON boolean).
/// `None` when `name` is not a JSON function.
pub fn call(name: &str, args: &[Option<&Expr>], values: &[Value]) -> SqlResult<Option<Value>> {
    let function = name.to_ascii_lowercase();
    let function = function.as_str();
    let result = match name {
        "JSON_OBJECT" => {
            if !values.len().is_multiple_of(2) {
                return Err(crate::error::wrong_argument_count(function));
            }
            let mut object = Object::new();
            for (index, pair) in values.chunks(2).enumerate() {
                if matches!(pair[0], Value::Null) {
                    return Err(MysqlError::new(3158, SQL_STATE, "JSON documents may not contain NULL member names."));
                }
                object.insert(value_text(&pair[0]), argument_scalar(args.get(2 * index + 1).copied().flatten(), &pair[1])?);
            }
            to_value(&Json::Object(object))?
        }
        "JSON_ARRAY" => {
            let mut elements = Vec::with_capacity(values.len());
            for (index, value) in values.iter().enumerate() {
                elements.push(argument_scalar(args.get(index).copied().flatten(), value)?);
            }
            to_value(&Json::Array(elements))?
        }
        "JSON_EXTRACT" => {
            if values.len() < 2 {
                return Err(crate::error::wrong_argument_count(function));
            }
            extract(&values[0], &values[1..], function)?
        }
        "JSON_UNQUOTE" => {
            let [value] = values else { return Err(crate::error::wrong_argument_count(function)) };
            unquote(value, function)?
        }
        "JSON_QUOTE" => {
            let [value] = values else { return Err(crate::error::wrong_argument_count(function)) };
            match value {
                Value::Null => Value::Null,
                other => {
                    let mut quoted = String::new();
                    print::write_quoted(&value_text(other), &mut quoted);
                    Value::Bytes(quoted.into_bytes())
                }
            }
        }
        "JSON_SET" | "JSON_INSERT" | "JSON_REPLACE" | "JSON_REMOVE" => {
            return crate::eval::json_modify::call(name, args, values, None);
        }
        "JSON_ARRAY_APPEND" => {
            if values.len() < 3 || values.len().is_multiple_of(2) {
                return Err(crate::error::wrong_argument_count(function));
            }
            let Some(mut document) = document_argument(&values[0], 1, function)? else { return Ok(Some(Value::Null)) };
            for (index, pair) in values[1..].chunks(2).enumerate() {
                let Some(path) = path_argument(&pair[0])? else { return Ok(Some(Value::Null)) };
                refuse_wildcards(&path)?;
                let value = argument_scalar(args.get(2 + 2 * index).copied().flatten(), &pair[1])?;
                match path.target_mut(&mut document) {
                    Some(Json::Array(elements)) => elements.push(value),
                    Some(other) => {
                        let old = std::mem::replace(other, Json::Null);
                        *other = Json::Array(vec![old, value]);
                    }
                    None => {}
                }
            }
            to_value(&document)?
        }
        "JSON_CONTAINS" => {
            if values.len() < 2 || values.len() > 3 {
                return Err(crate::error::wrong_argument_count(function));
            }
            let Some(document) = document_argument(&values[0], 1, function)? else { return Ok(Some(Value::Null)) };
            let Some(candidate) = document_argument(&values[1], 2, function)? else { return Ok(Some(Value::Null)) };
            let target = match values.get(2) {
                None => Some(&document),
                Some(path) => {
                    let Some(path) = path_argument(path)? else { return Ok(Some(Value::Null)) };
                    refuse_wildcards(&path)?;
                    path.seek(&document).into_iter().next()
                }
            };
            match target {
                None => Value::Null,
                Some(target) => Value::Int(i64::from(contains(target, &candidate))),
            }
        }
        "JSON_VALID" => {
            let [value] = values else { return Err(crate::error::wrong_argument_count(function)) };
            match value {
                Value::Null => Value::Null,
                Value::Json(_) => Value::Int(1),
                Value::Bytes(bytes) => Value::Int(i64::from(text::parse(bytes).is_ok())),
                _ => Value::Int(0),
            }
        }
        "JSON_TYPE" => {
            let [value] = values else { return Err(crate::error::wrong_argument_count(function)) };
            match document_argument(value, 1, function)? {
                None => Value::Null,
                Some(document) => Value::Bytes(type_name(&document).as_bytes().to_vec()),
            }
        }
        "JSON_LENGTH" | "JSON_KEYS" => {
            if values.is_empty() || values.len() > 2 {
                return Err(crate::error::wrong_argument_count(function));
            }
            let Some(document) = document_argument(&values[0], 1, function)? else { return Ok(Some(Value::Null)) };
            let target = match values.get(1) {
                None => Some(&document),
                Some(path) => {
                    let Some(path) = path_argument(path)? else { return Ok(Some(Value::Null)) };
                    refuse_wildcards(&path)?;
                    path.seek(&document).into_iter().next()
                }
            };
            match (name, target) {
                (_, None) => Value::Null,
                ("JSON_LENGTH", Some(Json::Array(elements))) => Value::Int(elements.len() as i64),
                ("JSON_LENGTH", Some(Json::Object(object))) => Value::Int(object.len() as i64),
                ("JSON_LENGTH", Some(_)) => Value::Int(1),
                (_, Some(Json::Object(object))) => to_value(&Json::Array(object.keys().map(|key| Json::String(key.to_owned())).collect()))?,
                (_, Some(_)) => Value::Null,
            }
        }
        "JSON_CONTAINS_PATH" => {
            if values.len() < 3 {
                return Err(crate::error::wrong_argument_count(function));
            }
            let Some(document) = document_argument(&values[0], 1, function)? else { return Ok(Some(Value::Null)) };
            let all = match &values[1] {
                Value::Null => return Ok(Some(Value::Null)),
                other => match value_text(other).to_ascii_lowercase().as_str() {
                    "one" => false,
                    "all" => true,
                    _ => {
                        return Err(MysqlError::new(
                            3154,
                            "42000",
                            "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.",
                        ))
                    }
                },
            };
            let mut found = Vec::with_capacity(values.len() - 2);
            for value in &values[2..] {
                let Some(path) = path_argument(value)? else { return Ok(Some(Value::Null)) };
                found.push(!path.seek(&document).is_empty());
            }
            let contains = if all { found.iter().all(|&f| f) } else { found.iter().any(|&f| f) };
            Value::Int(i64::from(contains))
        }
        _ => return Ok(None),
    };
    Ok(Some(result))
}

/// `document -> path`: JSON_EXTRACT with one path.
pub fn arrow(document: &Value, path: &Value) -> SqlResult<Value> {
    extract(document, std::slice::from_ref(path), "json_extract")
}

/// `document ->> path`: JSON_UNQUOTE(JSON_EXTRACT(document, path)).
pub fn long_arrow(document: &Value, path: &Value) -> SqlResult<Value> {
    unquote(&arrow(document, path)?, "json_unquote")
}

/// CAST(value AS JSON): text parsed, anything else as a JSON scalar.
pub fn cast(value: &Value) -> SqlResult<Value> {
    match value {
        Value::Null => Ok(Value::Null),
        Value::Json(_) => Ok(value.clone()),
        Value::Bytes(_) => match document_argument(value, 1, "cast_as_json")? {
            Some(document) => to_value(&document),
            None => Ok(Value::Null),
        },
        other => to_value(&scalar(other)?),
    }
}

/// One path without wildcards gives its match itself; several paths or
/// wildcards give an array of every match. No match is NULL.
fn extract(document: &Value, paths: &[Value], function: &str) -> SqlResult<Value> {
    let Some(document) = document_argument(document, 1, function)? else { return Ok(Value::Null) };
    let mut parsed = Vec::with_capacity(paths.len());
    for path in paths {
        match path_argument(path)? {
            Some(path) => parsed.push(path),
            None => return Ok(Value::Null),
        }
    }
    let wrap = parsed.len() > 1 || parsed.iter().any(Path::has_wildcards);
    let matches: Vec<&Json> = parsed.iter().flat_map(|path| path.seek(&document)).collect();
    match (wrap, matches.as_slice()) {
        (_, []) => Ok(Value::Null),
        (false, [only]) => to_value(only),
        _ => to_value(&Json::Array(matches.into_iter().cloned().collect())),
    }
}

/// JSON_UNQUOTE: a JSON value loses the quotes of a top-level string;
/// text in double quotes is read as a JSON string (3141 if it is not one);
/// other text is returned as it is.
fn unquote(value: &Value, function: &str) -> SqlResult<Value> {
    Ok(match value {
        Value::Null => Value::Null,
        Value::Json(document) => Value::Bytes(print::to_unquoted_text(&crate::eval::json::decode(document)?).into_bytes()),
        Value::Bytes(bytes) if bytes.len() >= 2 && bytes.starts_with(b"\"") && bytes.ends_with(b"\"") => match text::parse(bytes) {
            Ok(Json::String(s)) => Value::Bytes(s.into_bytes()),
            Ok(_) => value.clone(),
            Err(error) => return Err(MysqlError::new(error.code_for_argument(), SQL_STATE, error.message_for_argument(1, function))),
        },
        other => Value::Bytes(value_text(other).into_bytes()),
    })
}

/// An argument that becomes a value inside a document: a comparison, NOT,
/// TRUE or FALSE is a JSON boolean, as MySQL gives `JSON_ARRAY(1 = 1)`
/// `[true]`; anything else by [`scalar`].
pub(crate) fn argument_scalar(expr: Option<&Expr>, value: &Value) -> SqlResult<Json> {
    if !matches!(value, Value::Null) && expr.is_some_and(is_boolean) {
        return Ok(Json::Bool(truth(value) == Some(true)));
    }
    scalar(value)
}

fn is_boolean(expr: &Expr) -> bool {
    use BinaryOperator::*;
    match expr {
        Expr::Value(value) => matches!(value.value, Literal::Boolean(_)),
        Expr::Nested(inner) => is_boolean(inner),
        Expr::BinaryOp { op, .. } => matches!(op, Eq | NotEq | Lt | LtEq | Gt | GtEq | Spaceship | And | Or | Xor),
        Expr::UnaryOp { op: UnaryOperator::Not, .. } => true,
        Expr::IsNull(_) | Expr::IsNotNull(_) | Expr::IsTrue(_) | Expr::IsFalse(_) | Expr::Between { .. } | Expr::In { .. } => true,
        Expr::Like { .. } => true,
        _ => false,
    }
}

/// MySQL's JSON_CONTAINS: an object contains an object whose every member
/// it contains; an array contains each element of a candidate array (or a
/// lone candidate) when one of its own elements of the same kind does,
/// scalars by equality; a scalar contains only an equal scalar.
fn contains(document: &Json, candidate: &Json) -> bool {
    let is_container = |json: &Json| matches!(json, Json::Array(_) | Json::Object(_));
    match document {
        Json::Object(members) => match candidate {
            Json::Object(wanted) => wanted.iter().all(|(key, value)| members.get(key).is_some_and(|member| contains(member, value))),
            _ => false,
        },
        Json::Array(elements) => {
            let candidates = match candidate {
                Json::Array(wanted) => wanted.as_slice(),
                lone => std::slice::from_ref(lone),
            };
            candidates.iter().all(|wanted| match wanted {
                Json::Array(_) => elements.iter().any(|element| matches!(element, Json::Array(_)) && contains(element, wanted)),
                Json::Object(_) => elements.iter().any(|element| matches!(element, Json::Object(_)) && contains(element, wanted)),
                scalar => elements.iter().any(|element| !is_container(element) && compare_json(element, scalar).is_eq()),
            })
        }
        scalar => !is_container(candidate) && compare_json(scalar, candidate).is_eq(),
    }
}

/// JSON_TYPE's names (`json_type_string_map`, opaque BLOB, BIT and
/// GEOMETRY by their field type).
pub fn type_name(json: &Json) -> &'static str {
    use binlog_format::column_type::type_code;
    match json {
        Json::Null => "NULL",
        Json::Bool(_) => "BOOLEAN",
        Json::Int(_) => "INTEGER",
        Json::UInt(_) => "UNSIGNED INTEGER",
        Json::Double(_) => "DOUBLE",
        Json::String(_) => "STRING",
        Json::Array(_) => "ARRAY",
        Json::Object(_) => "OBJECT",
        Json::Decimal(_) => "DECIMAL",
        Json::Temporal(t) => match t.kind {
            TemporalKind::Date => "DATE",
            TemporalKind::Time => "TIME",
            TemporalKind::DateTime => "DATETIME",
            TemporalKind::Timestamp => "TIMESTAMP",
        },
        Json::Opaque { field_type, .. } => match *field_type {
            type_code::BIT => "BIT",
            type_code::GEOMETRY => "GEOMETRY",
            type_code::TINY_BLOB
            | type_code::MEDIUM_BLOB
            | type_code::LONG_BLOB
            | type_code::BLOB
            | type_code::VARCHAR
            | type_code::VAR_STRING
            | type_code::STRING => "BLOB",
            _ => "OPAQUE",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::json::document_text;

    fn text_of(value: Value) -> String {
        match value {
            Value::Json(document) => document_text(&document),
            Value::Bytes(bytes) => String::from_utf8(bytes).unwrap(),
            Value::Int(v) => v.to_string(),
            Value::Null => "NULL".into(),
            other => panic!("{other:?}"),
        }
    }

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn run(name: &str, values: &[Value]) -> String {
        text_of(call(name, &vec![None; values.len()], values).unwrap().unwrap())
    }

    fn error(name: &str, values: &[Value]) -> (u16, String) {
        let error = call(name, &vec![None; values.len()], values).unwrap_err();
        (error.code, error.message)
    }

    #[test]
    fn constructors_build_documents() {
        assert_eq!(run("JSON_OBJECT", &[]), "{}");
        assert_eq!(
            run("JSON_OBJECT", &[s("b"), Value::Int(1), s("a"), s("x"), s("c"), Value::Null, s("d"), Value::Decimal("2.50".into())]),
            r#"{"a": "x", "b": 1, "c": null, "d": 2.50}"#
        );
        assert_eq!(run("JSON_ARRAY", &[Value::Double(1.5), s("\"q\""), Value::UInt(u64::MAX)]), r#"[1.5, "\"q\"", 18446744073709551615]"#);
        assert_eq!(run("JSON_ARRAY", &[Value::Date { year: 2024, month: 2, day: 29 }]), r#"["2024-02-29"]"#);
        let nested =
            call("JSON_ARRAY", &[None], &[call("JSON_OBJECT", &[None, None], &[s("k"), s("v")]).unwrap().unwrap()]).unwrap().unwrap();
        assert_eq!(text_of(nested), r#"[{"k": "v"}]"#);
        assert_eq!(error("JSON_OBJECT", &[s("a")]).0, 1582);
        assert_eq!(error("JSON_OBJECT", &[Value::Null, Value::Int(1)]).0, 3158);
    }

    #[test]
    fn extract_and_unquote_follow_mysql() {
        let document = s(r#"{"a": {"b": [1, "two", null]}, "c": "x\ny"}"#);
        assert_eq!(run("JSON_EXTRACT", &[document.clone(), s("$.a.b[1]")]), r#""two""#);
        assert_eq!(run("JSON_EXTRACT", &[document.clone(), s("$.a.b[*]")]), r#"[1, "two", null]"#);
        assert_eq!(run("JSON_EXTRACT", &[document.clone(), s("$.c"), s("$.a.b[0]")]), r#"["x\ny", 1]"#);
        assert_eq!(run("JSON_EXTRACT", &[document.clone(), s("$.missing")]), "NULL");
        assert_eq!(run("JSON_EXTRACT", &[document.clone(), Value::Null]), "NULL");
        assert_eq!(text_of(long_arrow(&document, &s("$.c")).unwrap()), "x\ny");
        assert_eq!(text_of(arrow(&document, &s("$.c")).unwrap()), r#""x\ny""#);
        assert_eq!(text_of(long_arrow(&document, &s("$.a.b[2]")).unwrap()), "null");
        assert_eq!(run("JSON_UNQUOTE", &[s(r#""a\tb""#)]), "a\tb");
        assert_eq!(run("JSON_UNQUOTE", &[s("plain")]), "plain");
        assert_eq!(run("JSON_QUOTE", &[s("a\"b\n")]), r#""a\"b\n""#);
        assert_eq!(
            error("JSON_EXTRACT", &[document.clone(), s("$.")]),
            (3143, "Invalid JSON path expression. The error is around character position 2.".into())
        );
        assert_eq!(error("JSON_EXTRACT", &[s("{"), s("$")]).0, 3141);
    }

    #[test]
    fn changes_follow_mysql() {
        let document = s(r#"{"a": 1, "b": [1, 2]}"#);
        assert_eq!(
            run("JSON_SET", &[document.clone(), s("$.a"), Value::Int(10), s("$.c"), s("new")]),
            r#"{"a": 10, "b": [1, 2], "c": "new"}"#
        );
        assert_eq!(
            run("JSON_INSERT", &[document.clone(), s("$.a"), Value::Int(10), s("$.b[5]"), Value::Int(3)]),
            r#"{"a": 1, "b": [1, 2, 3]}"#
        );
        assert_eq!(
            run("JSON_REPLACE", &[document.clone(), s("$.a"), Value::Int(10), s("$.c"), Value::Int(3)]),
            r#"{"a": 10, "b": [1, 2]}"#
        );
        assert_eq!(run("JSON_SET", &[document.clone(), s("$.a[1]"), Value::Int(2)]), r#"{"a": [1, 2], "b": [1, 2]}"#);
        assert_eq!(run("JSON_SET", &[document.clone(), s("$.a[last-1]"), Value::Int(2)]), r#"{"a": 1, "b": [1, 2]}"#);
        assert_eq!(run("JSON_INSERT", &[document.clone(), s("$.b[last-5]"), Value::Int(0)]), r#"{"a": 1, "b": [0, 1, 2]}"#);
        assert_eq!(run("JSON_SET", &[document.clone(), s("$"), s("whole")]), r#""whole""#);
        assert_eq!(run("JSON_SET", &[document.clone(), s("$.x.y"), Value::Int(1)]), r#"{"a": 1, "b": [1, 2]}"#);
        assert_eq!(run("JSON_REMOVE", &[document.clone(), s("$.b[0]"), s("$.a"), s("$.zz")]), r#"{"b": [2]}"#);
        assert_eq!(error("JSON_REMOVE", &[document.clone(), s("$")]).0, 3153);
        assert_eq!(error("JSON_SET", &[document.clone(), s("$.*"), Value::Int(1)]).0, 3149);
        assert_eq!(error("JSON_SET", &[document.clone(), s("$.a")]).0, 1582);
    }

    #[test]
    fn contains_and_array_append_follow_mysql() {
        let document = s(r#"{"a": [1, 2, [3, 4], {"x": 1, "y": 2}], "b": "s"}"#);
        for (candidate, path, expected) in [
            (r#"{"b": "s"}"#, None, "1"),
            (r#"{"b": "t"}"#, None, "0"),
            ("1", Some("$.a"), "1"),
            ("[2, 1]", Some("$.a"), "1"),
            ("[[3]]", Some("$.a"), "1"),
            ("[[5]]", Some("$.a"), "0"),
            ("3", Some("$.a"), "0"),
            (r#"{"x": 1}"#, Some("$.a"), "1"),
            (r#"{"x": 2}"#, Some("$.a"), "0"),
            ("1.0", Some("$.a[0]"), "1"),
            ("1", Some("$.zz"), "NULL"),
        ] {
            let mut values = vec![document.clone(), s(candidate)];
            values.extend(path.map(s));
            assert_eq!(run("JSON_CONTAINS", &values), expected, "{candidate} at {path:?}");
        }
        assert_eq!(
            error("JSON_CONTAINS", &[document.clone(), s("{")]).1,
            "Invalid JSON text in argument 2 to function json_contains: \"Missing a name for object member.\" at position 1."
        );
        assert_eq!(
            run("JSON_ARRAY_APPEND", &[document.clone(), s("$.a"), Value::Int(5), s("$.b"), Value::Int(6), s("$.c"), Value::Int(7)]),
            r#"{"a": [1, 2, [3, 4], {"x": 1, "y": 2}, 5], "b": ["s", 6]}"#
        );
    }

    #[test]
    fn inspection_follows_mysql() {
        let document = s(r#"{"a": [1, 2, 3], "b": {"x": 1, "yy": 2}, "n": 18446744073709551615, "d": 1.5}"#);
        assert_eq!(run("JSON_LENGTH", std::slice::from_ref(&document)), "4");
        assert_eq!(run("JSON_LENGTH", &[document.clone(), s("$.a")]), "3");
        assert_eq!(run("JSON_LENGTH", &[document.clone(), s("$.n")]), "1");
        assert_eq!(run("JSON_LENGTH", &[document.clone(), s("$.zz")]), "NULL");
        assert_eq!(run("JSON_KEYS", std::slice::from_ref(&document)), r#"["a", "b", "d", "n"]"#);
        assert_eq!(run("JSON_KEYS", &[document.clone(), s("$.b")]), r#"["x", "yy"]"#);
        assert_eq!(run("JSON_KEYS", &[document.clone(), s("$.a")]), "NULL");
        assert_eq!(run("JSON_CONTAINS_PATH", &[document.clone(), s("one"), s("$.a"), s("$.q")]), "1");
        assert_eq!(run("JSON_CONTAINS_PATH", &[document.clone(), s("ALL"), s("$.a"), s("$.q")]), "0");
        assert_eq!(error("JSON_CONTAINS_PATH", &[document.clone(), s("some"), s("$.a")]).0, 3154);
        assert_eq!(run("JSON_VALID", &[s("[1, 2")]), "0");
        assert_eq!(run("JSON_VALID", &[s("[1, 2]")]), "1");
        assert_eq!(run("JSON_VALID", &[Value::Null]), "NULL");
        for (path, name) in
            [("$", "OBJECT"), ("$.a", "ARRAY"), ("$.a[0]", "INTEGER"), ("$.n", "UNSIGNED INTEGER"), ("$.d", "DOUBLE"), ("$.b.x", "INTEGER")]
        {
            let value = call("JSON_EXTRACT", &[None, None], &[document.clone(), s(path)]).unwrap().unwrap();
            assert_eq!(run("JSON_TYPE", &[value]), name, "{path}");
        }
        assert_eq!(run("JSON_TYPE", &[s(r#""x""#)]), "STRING");
        assert_eq!(run("JSON_TYPE", &[s("null")]), "NULL");
        assert_eq!(run("JSON_TYPE", &[s("true")]), "BOOLEAN");
        assert_eq!(run("JSON_TYPE", &[cast(&Value::Decimal("1.5".into())).unwrap()]), "DECIMAL");
        assert_eq!(
            run("JSON_TYPE", &[cast(&Value::DateTime { year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5, micros: 0 }).unwrap()]),
            "DATETIME"
        );
        assert_eq!(run("JSON_TYPE", &[cast(&Value::Date { year: 2024, month: 1, day: 2 }).unwrap()]), "DATE");
        assert_eq!(run("JSON_TYPE", &[cast(&Value::Timestamp { seconds: 86_400, micros: 5 }).unwrap()]), "TIMESTAMP");
        assert_eq!(
            run("JSON_EXTRACT", &[cast(&Value::Timestamp { seconds: 86_400, micros: 5 }).unwrap(), s("$")]),
            r#""1970-01-02 00:00:00.000005""#
        );
    }
}
