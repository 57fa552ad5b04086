//! A JSON column's change in a Partial_update_rows event
//! (`binlog_row_value_options = PARTIAL_JSON`): instead of the whole new
//! document, the list of changes MySQL made to the old one.
//!
//! | bytes | field |
//! |-------|-------|
//! | 1 | operation: 0 REPLACE, 1 INSERT, 2 REMOVE |
//! | 1-9 | path length (length-encoded) |
//! | length | path, as text (`$.a[1]`) |
//! | 1-9 | REPLACE and INSERT only: value length (length-encoded) |
//! | length | REPLACE and INSERT only: the value, in MySQL's binary JSON |
//!
//! A column's diffs follow each other to the end of its value (whose
//! 4-byte length prefix the row image gives).

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;
use crate::value::json::path::{place_mut, Leg, Path};
use crate::value::json::{binary, Json};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonDiffOperation {
    Replace,
    Insert,
    Remove,
}

impl JsonDiffOperation {
    pub fn code(self) -> u8 {
        match self {
            JsonDiffOperation::Replace => 0,
            JsonDiffOperation::Insert => 1,
            JsonDiffOperation::Remove => 2,
        }
    }

    pub fn from_code(code: u8) -> Option<JsonDiffOperation> {
        match code {
            0 => Some(JsonDiffOperation::Replace),
            1 => Some(JsonDiffOperation::Insert),
            2 => Some(JsonDiffOperation::Remove),
            _ => None,
        }
    }

    /// The function `mysqlbinlog -v` shows the change as: an INSERT whose
    /// path ends in an array index is `JSON_ARRAY_INSERT`.
    pub fn function_name(self, path: &[u8]) -> &'static str {
        match self {
            JsonDiffOperation::Replace => "JSON_REPLACE",
            JsonDiffOperation::Insert if path.last() == Some(&b']') => "JSON_ARRAY_INSERT",
            JsonDiffOperation::Insert => "JSON_INSERT",
            JsonDiffOperation::Remove => "JSON_REMOVE",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonDiff {
    pub operation: JsonDiffOperation,
    /// The path as MySQL wrote it (`$.a`, `$[2]`).
    pub path: Vec<u8>,
    /// REPLACE and INSERT: the new value in binary JSON; REMOVE: none.
    pub value: Option<Vec<u8>>,
}

impl JsonDiff {
    /// The new value as a document.
    pub fn document(&self) -> Option<Result<Json, DecodeError>> {
        self.value.as_deref().map(binary::decode)
    }

    /// Reads every diff of one column's value. Values are checked to be
    /// binary JSON.
    pub fn decode_all(bytes: &[u8]) -> Result<Vec<JsonDiff>, DecodeError> {
        let mut reader = ByteReader::new(bytes);
        let mut diffs = Vec::new();
        while !reader.is_empty() {
            let code = reader.u8("JSON diff operation")?;
            let operation = JsonDiffOperation::from_code(code)
                .ok_or_else(|| DecodeError::invalid("JSON diff operation", format!("{code} is not REPLACE, INSERT or REMOVE")))?;
            let path_length = reader.packed_count(1, "JSON diff path")?;
            let path = reader.take(path_length, "JSON diff path")?.to_vec();
            let value = match operation {
                JsonDiffOperation::Remove => None,
                JsonDiffOperation::Replace | JsonDiffOperation::Insert => {
                    let length = reader.packed_count(1, "JSON diff value")?;
                    let value = reader.take(length, "JSON diff value")?;
                    binary::decode(value)?;
                    Some(value.to_vec())
                }
            };
            diffs.push(JsonDiff { operation, path, value });
        }
        Ok(diffs)
    }

    /// Applies `diffs` in order to `document` as a replica does (MySQL's
    /// `apply_json_diffs`, `sql/json_diff.cc`): a path names exactly one
    /// place (no auto-wrapping), REPLACE needs a value there, INSERT a free
    /// member of an object or a cell of an array (appended past the end),
    /// REMOVE a member or cell that is there. `Err` when one does not fit
    /// the document (MySQL's 3648, a replica whose row differs).
    pub fn apply_all(diffs: &[JsonDiff], document: &mut Json) -> Result<(), DecodeError> {
        for diff in diffs {
            let rejected = |why: &str| {
                DecodeError::invalid(
                    "JSON diff",
                    format!("{} {}: {why}", diff.operation.function_name(&diff.path), String::from_utf8_lossy(&diff.path)),
                )
            };
            let path = Path::parse(&diff.path).map_err(|error| rejected(&error.to_string()))?;
            let Some((last, parents)) = path.legs.split_last() else { return Err(rejected("the path is the whole document")) };
            let parent = place_mut(document, parents, false).ok_or_else(|| rejected("no value at the path"))?;
            let value = diff.document().transpose()?;
            match (diff.operation, last, parent, value) {
                (JsonDiffOperation::Replace, leg, parent, Some(value)) => {
                    *place_mut(parent, std::slice::from_ref(leg), false).ok_or_else(|| rejected("no value at the path"))? = value;
                }
                (JsonDiffOperation::Insert, Leg::Member(key), Json::Object(object), Some(value)) if object.get(key).is_none() => {
                    object.insert(key.clone(), value);
                }
                (JsonDiffOperation::Insert, Leg::Cell(index), Json::Array(elements), Some(value)) => {
                    let at = if index.from_end {
                        (elements.len() as u64).saturating_sub(u64::from(index.index) + 1) as usize
                    } else {
                        (index.index as usize).min(elements.len())
                    };
                    elements.insert(at, value);
                }
                (JsonDiffOperation::Remove, Leg::Member(key), Json::Object(object), None) => {
                    object.remove(key).ok_or_else(|| rejected("no value at the path"))?;
                }
                (JsonDiffOperation::Remove, Leg::Cell(index), Json::Array(elements), None) => {
                    let at = index.resolve(elements.len()).ok_or_else(|| rejected("no value at the path"))?;
                    elements.remove(at);
                }
                _ => return Err(rejected("the document has no place for it")),
            }
        }
        Ok(())
    }

    pub fn encode_all(diffs: &[JsonDiff], out: &mut Vec<u8>) {
        for diff in diffs {
            out.put_u8(diff.operation.code());
            out.put_packed_u64(diff.path.len() as u64);
            out.put_slice(&diff.path);
            if let Some(value) = &diff.value {
                out.put_packed_u64(value.len() as u64);
                out.put_slice(value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(value: i64) -> Vec<u8> {
        binary::to_binary(&Json::Int(value)).unwrap()
    }

    #[test]
    fn diffs_round_trip_and_name_their_function() {
        let diffs = vec![
            JsonDiff { operation: JsonDiffOperation::Replace, path: b"$.a".to_vec(), value: Some(int(2)) },
            JsonDiff { operation: JsonDiffOperation::Insert, path: b"$.b[1]".to_vec(), value: Some(int(3)) },
            JsonDiff { operation: JsonDiffOperation::Remove, path: b"$.c".to_vec(), value: None },
        ];
        let mut bytes = Vec::new();
        JsonDiff::encode_all(&diffs, &mut bytes);
        assert_eq!(JsonDiff::decode_all(&bytes).unwrap(), diffs);
        let names: Vec<_> = diffs.iter().map(|d| d.operation.function_name(&d.path)).collect();
        assert_eq!(names, ["JSON_REPLACE", "JSON_ARRAY_INSERT", "JSON_REMOVE"]);
    }

    #[test]
    fn diffs_apply_as_a_mysql_replica_applies_them() {
        let parse = |text: &str| crate::value::json::text::parse(text.as_bytes()).unwrap();
        let diff = |operation, path: &str, value: Option<&str>| JsonDiff {
            operation,
            path: path.as_bytes().to_vec(),
            value: value.map(|value| binary::to_binary(&parse(value)).unwrap()),
        };
        let mut document = parse(r#"{"a": 1, "b": [1, 2], "c": {"d": 0}}"#);
        let diffs = [
            diff(JsonDiffOperation::Replace, "$.a", Some("5")),
            diff(JsonDiffOperation::Insert, "$.b[9]", Some("3")),
            diff(JsonDiffOperation::Insert, "$.c.e", Some("[]")),
            diff(JsonDiffOperation::Remove, "$.b[0]", None),
            diff(JsonDiffOperation::Replace, "$.b[last]", Some(r#""z""#)),
        ];
        JsonDiff::apply_all(&diffs, &mut document).unwrap();
        assert_eq!(document, parse(r#"{"a": 5, "b": [2, "z"], "c": {"d": 0, "e": []}}"#));
        for refused in [
            diff(JsonDiffOperation::Replace, "$.zz", Some("1")),
            diff(JsonDiffOperation::Replace, "$.a[0]", Some("1")),
            diff(JsonDiffOperation::Insert, "$.a", Some("1")),
            diff(JsonDiffOperation::Remove, "$.b[5]", None),
            diff(JsonDiffOperation::Remove, "$", None),
        ] {
            assert!(JsonDiff::apply_all(std::slice::from_ref(&refused), &mut document.clone()).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn bad_operations_lengths_and_values_are_errors() {
        let mut bytes = Vec::new();
        JsonDiff::encode_all(&[JsonDiff { operation: JsonDiffOperation::Replace, path: b"$.a".to_vec(), value: Some(int(2)) }], &mut bytes);
        for cut in 1..bytes.len() {
            assert!(JsonDiff::decode_all(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad_operation = bytes.clone();
        bad_operation[0] = 3;
        assert!(JsonDiff::decode_all(&bad_operation).is_err());
        let mut huge_path = bytes.clone();
        huge_path[1] = 0xfe; // an 8-byte length follows: far past the input
        assert!(JsonDiff::decode_all(&huge_path).is_err());
        let mut bad_value = bytes.clone();
        bad_value[6] = 0x7f; // the value's type byte: no binary JSON type
        assert!(JsonDiff::decode_all(&bad_value).is_err());
    }
}
