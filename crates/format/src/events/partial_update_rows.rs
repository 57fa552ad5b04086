//! Partial_update_rows (39): an Update_rows v2 whose after images may
//! carry JSON columns as the changes made to them (MySQL 8.0 with
//! `binlog_row_value_options = PARTIAL_JSON`). The event's layout is
//! [`RowsEvent`]'s; only each row's after image differs:
//!
//! | bytes | field |
//! |-------|-------|
//! | 1-9 | value options (length-encoded): bit 0 `PARTIAL_JSON_UPDATES` |
//! | (json columns + 7) / 8 | with `PARTIAL_JSON_UPDATES`: one bit per JSON column of the table, set when its value below is diffs |
//! | rest | the image as in any rows event; a partial JSON column's value is a 4-byte length and its [`JsonDiff`]s |
//!
//! The partial bitmap counts every JSON column of the table, whether the
//! image holds it or not, as MySQL writes and reads it.

use crate::bytes::{ByteReader, ByteWriter};
use crate::column_type::ColumnType;
use crate::error::{DecodeError, EncodeError};
use crate::events::json_diff::JsonDiff;
use crate::events::rows::{decode_image, encode_image, present_columns, ImageColumns, Picked, Row, RowsEvent, RowsKind};
use crate::events::table_map::TableMap;
use crate::value::Value;

/// The value option under which JSON columns may be diffs.
pub const PARTIAL_JSON_UPDATES: u64 = 1;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialUpdateRowsEvent {
    /// An Update, version 2: bitmaps, flags and the rows' bytes.
    pub rows: RowsEvent,
}

/// A value of a partial after image.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterValue {
    Full(Value),
    /// A JSON column as the changes to its before value.
    Diffs(Vec<JsonDiff>),
}

/// One updated row.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialUpdate {
    pub before: Row,
    pub value_options: u64,
    /// One value per column of the after image.
    pub after: Vec<AfterValue>,
}

impl PartialUpdateRowsEvent {
    /// An event with no rows yet whose images hold the columns the bitmaps
    /// mark.
    pub fn with_columns(table_id: u64, column_count: usize, before: &[u8], after: &[u8]) -> PartialUpdateRowsEvent {
        PartialUpdateRowsEvent { rows: RowsEvent::with_columns(RowsKind::Update, table_id, column_count, before, after) }
    }

    pub fn decode_body(body: &[u8]) -> Result<PartialUpdateRowsEvent, DecodeError> {
        Ok(PartialUpdateRowsEvent { rows: RowsEvent::decode_body(RowsKind::Update, body)? })
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        self.rows.encode_body(out)
    }

    /// Encodes one row: `before` holds a value per before-image column,
    /// `after` one per after-image column. A [`AfterValue::Diffs`] needs a
    /// JSON column and `PARTIAL_JSON_UPDATES` in `value_options`.
    pub fn push_update(&mut self, table: &TableMap, before: &[Value], value_options: u64, after: &[AfterValue]) -> Result<(), EncodeError> {
        self.push(table, before, Picked::InOrder, value_options, after)
    }

    /// [`PartialUpdateRowsEvent::push_update`] with the whole row before
    /// the update (a value per column of the table): the before image
    /// takes the columns its bitmap marks.
    pub fn push_update_of_row(
        &mut self,
        table: &TableMap,
        before_row: &[Value],
        value_options: u64,
        after: &[AfterValue],
    ) -> Result<(), EncodeError> {
        self.push(table, before_row, Picked::FromWholeRow, value_options, after)
    }

    fn push(
        &mut self,
        table: &TableMap,
        before: &[Value],
        picked: Picked,
        value_options: u64,
        after: &[AfterValue],
    ) -> Result<(), EncodeError> {
        let rows = &mut self.rows;
        if table.columns.len() != rows.column_count {
            return Err(EncodeError::invalid(
                "row",
                format!("table map has {} columns, the event {}", table.columns.len(), rows.column_count),
            ));
        }
        let after_columns = present_columns(&rows.columns_after, rows.column_count);
        if after.len() != after_columns.len() {
            return Err(EncodeError::ColumnCount { expected: after_columns.len(), found: after.len() });
        }
        let columns = ImageColumns::of(table);
        let mut out = Vec::new();
        encode_image(table, &columns, &rows.columns_before, rows.column_count, before, picked, &mut out)?;
        out.put_packed_u64(value_options);
        let partial_json = value_options & PARTIAL_JSON_UPDATES != 0;
        if partial_json {
            let json_columns = json_columns(table);
            let mut bitmap = vec![0u8; json_columns.len().div_ceil(8)];
            for (k, column) in json_columns.iter().enumerate() {
                let position = after_columns.iter().position(|c| c == column);
                if position.is_some_and(|p| matches!(after[p], AfterValue::Diffs(_))) {
                    bitmap[k / 8] |= 1 << (k % 8);
                }
            }
            out.put_slice(&bitmap);
        }
        let nulls_at = out.len();
        out.resize(nulls_at + after_columns.len().div_ceil(8), 0);
        for (k, (&column, value)) in after_columns.iter().zip(after).enumerate() {
            let definition = &table.columns[column];
            match value {
                AfterValue::Full(Value::Null) => {
                    if !definition.nullable {
                        return Err(EncodeError::Value { column, reason: "NULL in a NOT NULL column".into() });
                    }
                    out[nulls_at + k / 8] |= 1 << (k % 8);
                }
                AfterValue::Full(value) => {
                    columns
                        .encode(column, &definition.column_type, value, &mut out)
                        .map_err(|reason| EncodeError::Value { column, reason })?;
                }
                AfterValue::Diffs(diffs) => {
                    if definition.column_type != ColumnType::Json || !partial_json {
                        return Err(EncodeError::Value { column, reason: "JSON diffs need a JSON column and PARTIAL_JSON_UPDATES".into() });
                    }
                    let mut bytes = Vec::new();
                    JsonDiff::encode_all(diffs, &mut bytes);
                    out.put_u32(bytes.len() as u32);
                    out.put_slice(&bytes);
                }
            }
        }
        rows.rows.extend_from_slice(&out);
        Ok(())
    }

    /// Decodes every row with the event's table map.
    pub fn decode_rows(&self, table: &TableMap) -> Result<Vec<PartialUpdate>, DecodeError> {
        let rows = &self.rows;
        if table.columns.len() != rows.column_count {
            return Err(DecodeError::invalid(
                "rows event",
                format!("{} columns, but its table map has {}", rows.column_count, table.columns.len()),
            ));
        }
        let columns = ImageColumns::of(table);
        let before_columns = present_columns(&rows.columns_before, rows.column_count);
        let after_columns = present_columns(&rows.columns_after, rows.column_count);
        let json_columns = json_columns(table);
        let mut reader = ByteReader::new(&rows.rows);
        let mut updates = Vec::new();
        while !reader.is_empty() {
            let before = decode_image(table, &columns, &before_columns, &mut reader)?;
            // Read in every row: each row makes progress.
            let value_options = reader.packed_u64("partial update value options")?;
            let mut partial = vec![false; rows.column_count];
            if value_options & PARTIAL_JSON_UPDATES != 0 {
                let bitmap = reader.take(json_columns.len().div_ceil(8), "partial JSON columns")?;
                for (k, &column) in json_columns.iter().enumerate() {
                    partial[column] = bitmap[k / 8] & (1 << (k % 8)) != 0;
                }
            }
            let nulls = reader.take(after_columns.len().div_ceil(8), "row null bitmap")?;
            let mut after = Vec::with_capacity(after_columns.len());
            for (k, &column) in after_columns.iter().enumerate() {
                let definition = &table.columns[column];
                if nulls[k / 8] & (1 << (k % 8)) != 0 {
                    if !definition.nullable {
                        return Err(DecodeError::invalid("row image", format!("NULL in NOT NULL column {column}")));
                    }
                    after.push(AfterValue::Full(Value::Null));
                } else if partial[column] {
                    let length = reader.u32("JSON diffs length")? as usize;
                    after.push(AfterValue::Diffs(JsonDiff::decode_all(reader.take(length, "JSON diffs")?)?));
                } else {
                    after.push(AfterValue::Full(columns.decode(column, &definition.column_type, &mut reader)?));
                }
            }
            updates.push(PartialUpdate { before, value_options, after });
        }
        Ok(updates)
    }
}

/// Indexes of the table's JSON columns, in order.
fn json_columns(table: &TableMap) -> Vec<usize> {
    table.columns.iter().enumerate().filter(|(_, c)| c.column_type == ColumnType::Json).map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::json_diff::JsonDiffOperation;
    use crate::events::table_map::ColumnSpec;
    use crate::value::json::{binary, Json};

    fn table() -> TableMap {
        let column =
            |name: &str, column_type| ColumnSpec { name: name.into(), column_type, nullable: true, unsigned: false, collation: 63 };
        let specs = [column("id", ColumnType::Long), column("j", ColumnType::Json), column("k", ColumnType::Json)];
        TableMap::new(7, "db", "t", &specs, &[0]).unwrap()
    }

    #[test]
    fn partial_json_rows_round_trip_and_full_values_stay_full() {
        let map = table();
        let document = binary::to_binary(&Json::Int(1)).unwrap();
        let diffs = vec![JsonDiff { operation: JsonDiffOperation::Replace, path: b"$.a".to_vec(), value: Some(document.clone()) }];
        let mut event = PartialUpdateRowsEvent::with_columns(7, 3, &[0b111], &[0b110]);
        let before = [Value::Int(1), Value::Json(document.clone()), Value::Null];
        event
            .push_update(
                &map,
                &before,
                PARTIAL_JSON_UPDATES,
                &[AfterValue::Diffs(diffs.clone()), AfterValue::Full(Value::Json(document.clone()))],
            )
            .unwrap();
        event.push_update(&map, &before, 0, &[AfterValue::Full(Value::Null), AfterValue::Full(Value::Null)]).unwrap();
        let rows = event.decode_rows(&map).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].after, [AfterValue::Diffs(diffs), AfterValue::Full(Value::Json(document))]);
        assert_eq!(rows[1].value_options, 0);
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(PartialUpdateRowsEvent::decode_body(&body).unwrap(), event);
        let mut single = PartialUpdateRowsEvent::with_columns(7, 3, &[0b111], &[0b110]);
        single.push_update(&map, &before, PARTIAL_JSON_UPDATES, &rows[0].after).unwrap();
        // A before image of the key only, taken from the whole row.
        let mut of_row = PartialUpdateRowsEvent::with_columns(7, 3, &[0b001], &[0b110]);
        of_row.push_update_of_row(&map, &before, PARTIAL_JSON_UPDATES, &rows[0].after).unwrap();
        let mut picked = PartialUpdateRowsEvent::with_columns(7, 3, &[0b001], &[0b110]);
        picked.push_update(&map, &before[..1], PARTIAL_JSON_UPDATES, &rows[0].after).unwrap();
        assert_eq!(of_row, picked);
        assert_eq!(of_row.decode_rows(&map).unwrap()[0].before, vec![Value::Int(1)]);
        for cut in 1..single.rows.rows.len() {
            let mut short = single.clone();
            short.rows.rows.truncate(cut);
            assert!(short.decode_rows(&map).is_err(), "cut at {cut}");
        }
        assert!(
            event.push_update(&map, &before, 0, &[AfterValue::Diffs(Vec::new()), AfterValue::Full(Value::Null)]).is_err(),
            "diffs without PARTIAL_JSON_UPDATES"
        );
    }
}
