//! JSON_SET, JSON_INSERT, JSON_REPLACE and JSON_REMOVE: a document changed
//! at paths, and the changes as the logical diffs MySQL logs for an UPDATE
//! with `binlog_row_value_options = PARTIAL_JSON` (`Item_func_json_set_replace::val_json`
//! and `Item_func_json_remove::val_json` in `sql/item_json_func.cc`).
//!
//! Each path first loses the `[0]` and `[last]` legs that stand for a value
//! that is not an array (MySQL's `clone_without_autowrapping`); the diff
//! names the path that is left.
//!
//! | change | diff |
//! |--------|------|
//! | a value that is there replaced (JSON_SET, JSON_REPLACE) | REPLACE path, new value |
//! | a member added to an object, a cell to an array (JSON_SET) | INSERT path, new value |
//! | a value that is not an array made an array of itself and the new value (JSON_SET) | REPLACE the value's place, the new array |
//! | a member or cell removed (JSON_REMOVE) | REMOVE path |
//! | a path that names nothing | none |
//! | the whole document replaced, or a NULL document or path | no diffs for the row: the whole value is logged |

use binlog_format::events::{JsonDiff, JsonDiffOperation};
use binlog_format::value::json::path::{Leg, Path, PathError};
use binlog_format::value::json::Json;
use protocol::MysqlError;
use sqlparser::ast::Expr;

use crate::error::SqlResult;
use crate::eval::json::{document_argument, to_value};
use crate::eval::value::{text as value_text, Value};

/// The functions whose changes an UPDATE may log as diffs (MySQL's
/// `can_use_in_partial_update`); JSON_INSERT is not one of them.
pub const PARTIAL_UPDATE_FUNCTIONS: [&str; 3] = ["JSON_SET", "JSON_REPLACE", "JSON_REMOVE"];

/// The diffs one row's JSON column collects while the functions change it
/// (`TABLE::add_logical_diff`), until a change cannot be told as a diff
/// (`disable_logical_diffs_for_current_row`): from then on the row logs the
/// column's whole value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLog {
    /// `None` once disabled.
    diffs: Option<Vec<JsonDiff>>,
}

impl Default for DiffLog {
    fn default() -> Self {
        DiffLog { diffs: Some(Vec::new()) }
    }
}

impl DiffLog {
    /// The diffs, or `None` when the whole value must be logged.
    pub fn into_diffs(self) -> Option<Vec<JsonDiff>> {
        self.diffs
    }

    pub fn disable(&mut self) {
        self.diffs = None;
    }

    fn record(&mut self, operation: JsonDiffOperation, path: &Path, value: Option<&Json>) -> SqlResult<()> {
        let Some(diffs) = &mut self.diffs else { return Ok(()) };
        let value = match value {
            Some(json) => match to_value(json)? {
                Value::Json(binary) => Some(binary),
                other => return Err(MysqlError::internal(format!("a JSON value encoded as {other:?}"))),
            },
            None => None,
        };
        diffs.push(JsonDiff { operation, path: path.to_string().into_bytes(), value });
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// JSON_SET: replace what is there, add what is not.
    Set,
    /// JSON_INSERT: add only.
    Insert,
    /// JSON_REPLACE: replace only.
    Replace,
}

/// Calls JSON_SET, JSON_INSERT, JSON_REPLACE or JSON_REMOVE (`name`, upper
/// case) on evaluated `values`, recording its changes in `log` when given.
/// `args` are the argument expressions (a comparison is a JSON boolean).
/// `None` when `name` is none of them.
pub fn call(name: &str, args: &[Option<&Expr>], values: &[Value], log: Option<&mut DiffLog>) -> SqlResult<Option<Value>> {
    let change = match name {
        "JSON_SET" => Change::Set,
        "JSON_INSERT" => Change::Insert,
        "JSON_REPLACE" => Change::Replace,
        "JSON_REMOVE" => return remove(values, log).map(Some),
        _ => return Ok(None),
    };
    let function = name.to_ascii_lowercase();
    if values.len() < 3 || values.len().is_multiple_of(2) {
        return Err(crate::error::wrong_argument_count(&function));
    }
    let mut log = log;
    let Some(mut document) = document_argument(&values[0], 1, &function)? else { return Ok(Some(null_result(log))) };
    for (index, pair) in values[1..].chunks(2).enumerate() {
        let Some(path) = path_argument(&pair[0])? else { return Ok(Some(null_result(log))) };
        refuse_wildcards(&path)?;
        let value = crate::eval::json_functions::argument_scalar(args.get(2 + 2 * index).copied().flatten(), &pair[1])?;
        change_document(&mut document, &path, value, change, log.as_deref_mut())?;
    }
    to_value(&document).map(Some)
}

/// A NULL result: the whole value changes, so no diffs tell it.
fn null_result(log: Option<&mut DiffLog>) -> Value {
    if let Some(log) = log {
        log.disable();
    }
    Value::Null
}

/// A path argument: `None` for NULL, 3143 when it does not parse.
pub fn path_argument(value: &Value) -> SqlResult<Option<Path>> {
    match value {
        Value::Null => Ok(None),
        other => {
            let text = match other {
                Value::Bytes(bytes) => bytes.clone(),
                other => value_text(other).into_bytes(),
            };
            Path::parse(&text).map(Some).map_err(|error| MysqlError::new(PathError::CODE, PathError::SQL_STATE, error.to_string()))
        }
    }
}

/// 3149: the functions that change or measure one place take no
/// wildcards or ranges.
pub fn refuse_wildcards(path: &Path) -> SqlResult<()> {
    if path.has_wildcards() {
        return Err(MysqlError::new(
            3149,
            "42000",
            "In this situation, path expressions may not contain the * and ** tokens or an array range.",
        ));
    }
    Ok(())
}

/// `path` without the `[0]` and `[last]` legs that follow a value that is
/// not an array (those legs name the value itself).
fn without_autowrapping(path: &Path, document: &Json) -> Path {
    let mut kept = Path::default();
    for leg in &path.legs {
        if let Leg::Cell(index) = leg {
            if index.resolve(1) == Some(0) && kept.seek(document).first().is_some_and(|value| !matches!(value, Json::Array(_))) {
                continue;
            }
        }
        kept.legs.push(leg.clone());
    }
    kept
}

/// Where `path` (without wildcards) leads in `document`, with every array
/// position counted from the start (MySQL's `Json_dom::get_location`).
fn location(document: &Json, path: &Path) -> Path {
    let mut current = document;
    let mut located = Path::default();
    for leg in &path.legs {
        let step = match (leg, current) {
            (Leg::Member(key), Json::Object(object)) => object.get(key).map(|value| (leg.clone(), value)),
            (Leg::Cell(index), Json::Array(elements)) => index.resolve(elements.len()).map(|at| {
                let from_start = binlog_format::value::json::path::ArrayIndex { index: at as u32, from_end: false };
                (Leg::Cell(from_start), &elements[at])
            }),
            _ => None,
        };
        let Some((leg, value)) = step else { break };
        located.legs.push(leg);
        current = value;
    }
    located
}

/// One path and value of JSON_SET, JSON_INSERT or JSON_REPLACE. A missing
/// member is added to its object; a missing array cell is appended (or
/// put first for `[last - n]`, as MySQL clamps the position); a value that
/// is not an array becomes an array of itself and the new value.
fn change_document(document: &mut Json, path: &Path, value: Json, change: Change, log: Option<&mut DiffLog>) -> SqlResult<()> {
    let path = without_autowrapping(path, document);
    // What the diff carries, when there is a log to take one.
    let logged = log.is_some().then(|| value.clone());
    if let Some(target) = path.target_mut(document) {
        if change == Change::Insert {
            return Ok(());
        }
        *target = value;
        return match log {
            // Replacing the whole document: no point in a diff.
            Some(log) if path.legs.is_empty() => {
                log.disable();
                Ok(())
            }
            Some(log) => log.record(JsonDiffOperation::Replace, &path, logged.as_ref()),
            None => Ok(()),
        };
    }
    if change == Change::Replace {
        return Ok(());
    }
    let Some((parent, last)) = path.split_last() else { return Ok(()) };
    let parent_location = location(document, &parent);
    match (last, parent.target_mut(document)) {
        (Leg::Member(key), Some(Json::Object(object))) => {
            object.insert(key.clone(), value);
        }
        (Leg::Cell(index), Some(Json::Array(elements))) => {
            if index.from_end {
                elements.insert(0, value);
            } else {
                elements.push(value);
            }
        }
        // `[n]` past a non-array wraps it (`[last - n]` cannot reach past it).
        (Leg::Cell(index), Some(other)) if !index.from_end => {
            let old = std::mem::replace(other, Json::Null);
            *other = Json::Array(vec![old, value]);
            let Some(log) = log else { return Ok(()) };
            if parent.legs.is_empty() {
                log.disable();
                return Ok(());
            }
            return log.record(JsonDiffOperation::Replace, &parent_location, Some(&*other));
        }
        _ => return Ok(()),
    }
    match log {
        Some(log) => log.record(JsonDiffOperation::Insert, &path, logged.as_ref()),
        None => Ok(()),
    }
}

/// JSON_REMOVE: each path's member or cell removed from the document the
/// paths before left.
fn remove(values: &[Value], mut log: Option<&mut DiffLog>) -> SqlResult<Value> {
    if values.len() < 2 {
        return Err(crate::error::wrong_argument_count("json_remove"));
    }
    let Some(mut document) = document_argument(&values[0], 1, "json_remove")? else { return Ok(null_result(log)) };
    let mut paths = Vec::with_capacity(values.len() - 1);
    for value in &values[1..] {
        let Some(path) = path_argument(value)? else { return Ok(null_result(log)) };
        refuse_wildcards(&path)?;
        if path.legs.is_empty() {
            return Err(MysqlError::new(3153, "42000", "The path expression '$' is not allowed in this context."));
        }
        paths.push(path);
    }
    for path in &paths {
        let path = without_autowrapping(path, &document);
        // The document itself cannot be removed.
        let Some((parent, last)) = path.split_last() else { continue };
        let removed = match (last, parent.target_mut(&mut document)) {
            (Leg::Member(key), Some(Json::Object(object))) => object.remove(key).is_some(),
            (Leg::Cell(index), Some(Json::Array(elements))) => match index.resolve(elements.len()) {
                Some(at) => {
                    elements.remove(at);
                    true
                }
                None => false,
            },
            _ => false,
        };
        if let (true, Some(log)) = (removed, log.as_deref_mut()) {
            log.record(JsonDiffOperation::Remove, &path, None)?;
        }
    }
    to_value(&document)
}

#[cfg(test)]
mod tests {
    use binlog_format::value::json::{binary, text};

    use super::*;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn document(json: &str) -> Value {
        to_value(&text::parse(json.as_bytes()).unwrap()).unwrap()
    }

    /// The result as text and each diff as `OPERATION path value`.
    fn logged(name: &str, values: &[Value]) -> (String, Option<Vec<String>>) {
        let mut log = DiffLog::default();
        let result = call(name, &[], values, Some(&mut log)).unwrap().unwrap();
        let result = match result {
            Value::Json(bytes) => binary::decode(&bytes).unwrap().to_string(),
            other => format!("{other:?}"),
        };
        let diffs = log.into_diffs().map(|diffs| {
            diffs
                .iter()
                .map(|diff| {
                    let value = diff.document().map(|json| format!(" {}", json.unwrap())).unwrap_or_default();
                    format!("{:?} {}{value}", diff.operation, String::from_utf8_lossy(&diff.path))
                })
                .collect()
        });
        (result, diffs)
    }

    #[test]
    fn changes_are_logged_as_mysql_logs_them() {
        let doc = document(r#"{"a": 1, "b": [1, 2], "c": {"d": true}}"#);
        assert_eq!(
            logged("JSON_SET", &[doc.clone(), s("$.a"), Value::Int(5), s("$.e"), s("x"), s("$.b[5]"), Value::Int(3)]),
            (
                r#"{"a": 5, "b": [1, 2, 3], "c": {"d": true}, "e": "x"}"#.into(),
                Some(vec!["Replace $.a 5".into(), r#"Insert $.e "x""#.into(), "Insert $.b[5] 3".into()])
            )
        );
        // [0] on a value that is not an array names the value itself.
        assert_eq!(
            logged("JSON_REPLACE", &[doc.clone(), s("$.a[0]"), Value::Int(7), s("$.zz"), Value::Int(1)]).1,
            Some(vec!["Replace $.a 7".into()])
        );
        // A value made an array: its place replaced, counted from the start.
        assert_eq!(
            logged("JSON_SET", &[doc.clone(), s("$.c.d[1]"), Value::Int(0)]),
            (r#"{"a": 1, "b": [1, 2], "c": {"d": [true, 0]}}"#.into(), Some(vec!["Replace $.c.d [true, 0]".into()]))
        );
        assert_eq!(logged("JSON_SET", &[doc.clone(), s("$.b[last]"), s("a b")]).1, Some(vec![r#"Replace $.b[last] "a b""#.into()]));
        assert_eq!(
            logged("JSON_REMOVE", &[doc.clone(), s("$.b[0]"), s("$.nothing"), s("$.a[0]")]),
            (r#"{"b": [2], "c": {"d": true}}"#.into(), Some(vec!["Remove $.b[0]".into(), "Remove $.a".into()]))
        );
        assert_eq!(logged("JSON_SET", &[doc.clone(), s(r#"$."x y""#), Value::Null]).1, Some(vec![r#"Insert $."x y" null"#.into()]));
        // The whole document replaced, or NULL: no diffs.
        assert_eq!(logged("JSON_SET", &[doc.clone(), s("$"), Value::Int(1)]), ("1".into(), None));
        assert_eq!(logged("JSON_SET", &[doc.clone(), Value::Null, Value::Int(1)]).1, None);
        assert_eq!(logged("JSON_REMOVE", &[Value::Null, s("$.a")]).1, None);
        // Nothing changed: no diffs, and still logged as diffs.
        assert_eq!(logged("JSON_REPLACE", &[doc, s("$.q"), Value::Int(1)]).1, Some(vec![]));
    }
}
