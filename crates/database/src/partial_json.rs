//! `binlog_row_value_options = PARTIAL_JSON`: an updated row's after image
//! as MySQL 8.4's `pack_row` (`sql/rpl_record.cc`) and
//! `Field_json::get_diff_vector_and_length` (`sql/field.cc`) write it in a
//! Partial_update_rows event. Every update of a statement run with the
//! option goes into such an event (`Update_rows_log_event::get_update_rows_event_type`),
//! whether or not a column of it is logged as diffs; the before image is
//! `binlog_row_image`'s as for any update.
//!
//! A JSON column of the after image is written
//!
//! | when | as |
//! |------|------|
//! | its new value is NULL | NULL |
//! | its value did not change (the same bytes) | no diffs |
//! | the UPDATE logged diffs for it (`RowJsonDiffs`) and they take fewer bytes than the document (counting their 4-byte length) | those diffs |
//! | otherwise | the whole document |
//!
//! The row's value options are `PARTIAL_JSON_UPDATES` when a column is
//! written as diffs (with a bit per JSON column of the table saying which),
//! and 0 with no bitmap when none is.

use binlog_format::events::partial_update_rows::PARTIAL_JSON_UPDATES;
use binlog_format::events::{AfterValue, JsonDiff};
use binlog_format::{ColumnType, Value};
use engine::TableDef;

/// The JSON diffs an UPDATE computed for one row: for each JSON column it
/// set with JSON_SET, JSON_REPLACE or JSON_REMOVE of the column itself, the
/// column and its diffs, or `None` where the row's change could not be
/// told as diffs (MySQL's `disable_logical_diffs_for_current_row`).
pub type RowJsonDiffs = Vec<(usize, Option<Vec<JsonDiff>>)>;

/// The length prefix of a column's diffs (`Json_diff_vector::ENCODED_LENGTH_BYTES`).
const DIFFS_LENGTH_BYTES: usize = 4;

/// The value options and the values of an updated row's after image of
/// `after_columns` (column indexes, in order).
pub fn after_image(
    def: &TableDef,
    after_columns: &[usize],
    before: &[Value],
    after: &[Value],
    diffs: Option<&RowJsonDiffs>,
) -> (u64, Vec<AfterValue>) {
    let mut any_diffs = false;
    let values = after_columns
        .iter()
        .map(|&column| {
            let value = &after[column];
            if def.columns[column].column_type != ColumnType::Json || *value == Value::Null {
                return AfterValue::Full(value.clone());
            }
            let logged = diffs.and_then(|row| row.iter().find(|(logged, _)| *logged == column)).and_then(|(_, diffs)| diffs.as_ref());
            let written = json_after_value(before.get(column), value, logged);
            any_diffs |= matches!(written, AfterValue::Diffs(_));
            written
        })
        .collect();
    (if any_diffs { PARTIAL_JSON_UPDATES } else { 0 }, values)
}

/// One JSON column's after value (not NULL), from its diffs if it has any.
fn json_after_value(before: Option<&Value>, after: &Value, diffs: Option<&Vec<JsonDiff>>) -> AfterValue {
    if diffs.is_some_and(Vec::is_empty) || before == Some(after) {
        return AfterValue::Diffs(Vec::new());
    }
    let (Some(diffs), Value::Json(document)) = (diffs, after) else { return AfterValue::Full(after.clone()) };
    let mut encoded = Vec::new();
    JsonDiff::encode_all(diffs, &mut encoded);
    if encoded.len() + DIFFS_LENGTH_BYTES < document.len() {
        AfterValue::Diffs(diffs.clone())
    } else {
        AfterValue::Full(after.clone())
    }
}

#[cfg(test)]
mod tests {
    use binlog_format::events::JsonDiffOperation;
    use binlog_format::value::json::{binary, text};
    use engine::{ColumnDef, Engine, EngineConfig, TableSpec};

    use super::*;

    fn table() -> std::sync::Arc<TableDef> {
        let engine = Engine::new(EngineConfig::default());
        engine.create_database("d").unwrap();
        let spec = TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef::new("id", ColumnType::Long),
                ColumnDef::new("j", ColumnType::Json),
                ColumnDef::new("k", ColumnType::Json),
            ],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        let id = engine.create_table(&spec).unwrap().id;
        engine.table_def(id).unwrap()
    }

    fn json(text: &str) -> Value {
        Value::Json(binary::to_binary(&text::parse(text.as_bytes()).unwrap()).unwrap())
    }

    fn replace(path: &str, value: &str) -> JsonDiff {
        let Value::Json(value) = json(value) else { unreachable!() };
        JsonDiff { operation: JsonDiffOperation::Replace, path: path.as_bytes().to_vec(), value: Some(value) }
    }

    #[test]
    fn json_columns_are_diffs_only_when_mysql_would_write_them_so() {
        let def = table();
        let long = r#"{"a": 1, "b": "a long enough text to make a diff smaller than the document"}"#;
        let changed = r#"{"a": 5, "b": "a long enough text to make a diff smaller than the document"}"#;
        let before = [Value::Int(1), json(long), json("[1]")];
        let after = [Value::Int(1), json(changed), json("[1]")];
        let diffs: RowJsonDiffs = vec![(1, Some(vec![replace("$.a", "5")]))];
        let (options, values) = after_image(&def, &[0, 1, 2], &before, &after, Some(&diffs));
        assert_eq!(options, PARTIAL_JSON_UPDATES);
        assert_eq!(
            values,
            [AfterValue::Full(Value::Int(1)), AfterValue::Diffs(vec![replace("$.a", "5")]), AfterValue::Diffs(Vec::new())],
            "an unchanged JSON column is no diffs"
        );

        let (options, values) = after_image(&def, &[1], &before, &after, None);
        assert_eq!((options, values), (0, vec![AfterValue::Full(after[1].clone())]), "no diffs logged: the whole document");
        let disabled: RowJsonDiffs = vec![(1, None)];
        assert_eq!(after_image(&def, &[1], &before, &after, Some(&disabled)).0, 0);

        let small_before = [Value::Int(1), json(r#"{"a": 1}"#), Value::Null];
        let small_after = [Value::Int(1), json(r#"{"a": 5}"#), Value::Null];
        let (options, values) = after_image(&def, &[1, 2], &small_before, &small_after, Some(&diffs));
        assert_eq!(options, 0, "diffs as long as the document are not written");
        assert_eq!(values, [AfterValue::Full(small_after[1].clone()), AfterValue::Full(Value::Null)]);
    }
}
