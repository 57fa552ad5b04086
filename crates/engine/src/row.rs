//! Rows: checking them against a table's columns, estimating the memory
//! they take, and printing key values the way MySQL's 1062 message does.

use std::mem::size_of;

use binlog_format::text_charset::{encode_column_value, TextCharset};
use binlog_format::{ColumnType, Value};
use time::OffsetDateTime;

use crate::catalog::{ColumnDef, TableDef};
use crate::error::{EngineError, Result};

/// A full row image: one value per column, in column order.
pub type Row = Vec<Value>;

/// Checks `row` against `def`: the column count, NOT NULL, and that each
/// value is one the binlog can encode for its column (type, range, length),
/// so a row the engine accepts always makes a valid row event.
pub(crate) fn check_row(def: &TableDef, row: &Row) -> Result<()> {
    if row.len() != def.columns.len() {
        return Err(EngineError::ColumnCountMismatch);
    }
    let mut scratch = Vec::new();
    for (column, value) in def.columns.iter().zip(row) {
        check_value(column, value, &mut scratch)?;
    }
    def.partition_of(row)?;
    Ok(())
}

fn check_value(column: &ColumnDef, value: &Value, scratch: &mut Vec<u8>) -> Result<()> {
    if *value == Value::Null {
        return if column.nullable { Ok(()) } else { Err(EngineError::ColumnCannotBeNull(column.name.clone())) };
    }
    scratch.clear();
    let charset = TextCharset::of_collation(column.collation);
    encode_column_value(&column.column_type, column.unsigned, charset, value, scratch).map_err(|_| EngineError::IncorrectValue {
        kind: type_kind(&column.column_type),
        value: display_value(value),
        column: column.name.clone(),
    })
}

fn type_kind(column_type: &ColumnType) -> &'static str {
    match column_type {
        ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong => "integer",
        ColumnType::Float | ColumnType::Double => "double",
        ColumnType::NewDecimal { .. } => "decimal",
        ColumnType::Date => "date",
        ColumnType::DateTime2 { .. } => "datetime",
        ColumnType::Timestamp2 { .. } => "timestamp",
        _ => "string",
    }
}

/// Estimated heap bytes of one row version: the values, their heap parts
/// and the version's own bookkeeping. An estimate, not an allocator count:
/// it is what `binlogd_engine_memory_limit` is compared with.
pub(crate) fn row_bytes(row: &Row) -> u64 {
    const VERSION_OVERHEAD_BYTES: usize = 64;
    let heap: usize = row
        .iter()
        .map(|value| match value {
            Value::Bytes(bytes) | Value::Json(bytes) => bytes.len(),
            Value::Decimal(text) => text.len(),
            _ => 0,
        })
        .sum();
    (VERSION_OVERHEAD_BYTES + row.len() * size_of::<Value>() + heap) as u64
}

/// A value as MySQL prints it inside `Duplicate entry '...'`.
pub fn display_value(value: &Value) -> String {
    match value {
        Value::Null => "NULL".to_string(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Float(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        Value::Decimal(text) => text.clone(),
        Value::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::Json(document) => binlog_format::value::json::binary::decode(document)
            .map_or_else(|_| "(invalid JSON)".to_owned(), |json| binlog_format::value::json::print::to_text(&json)),
        Value::Date { year, month, day } => format!("{year:04}-{month:02}-{day:02}"),
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            let fraction = if *micros == 0 { String::new() } else { format!(".{micros:06}") };
            format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{fraction}")
        }
        Value::Timestamp { seconds, micros } => {
            // Printed in UTC: the engine has no session time zone.
            let at = OffsetDateTime::from_unix_timestamp(i64::from(*seconds)).expect("u32 seconds are within the calendar");
            let fraction = if *micros == 0 { String::new() } else { format!(".{micros:06}") };
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}{fraction}",
                at.year(),
                u8::from(at.month()),
                at.day(),
                at.hour(),
                at.minute(),
                at.second()
            )
        }
        Value::Time { negative, hours, minute, second, micros } => {
            let sign = if *negative { "-" } else { "" };
            let fraction = if *micros == 0 { String::new() } else { format!(".{micros:06}") };
            format!("{sign}{hours:02}:{minute:02}:{second:02}{fraction}")
        }
    }
}

/// Values of a key joined by '-', as MySQL prints a composite key.
pub fn display_key(values: &[&Value]) -> String {
    values.iter().map(|v| display_value(v)).collect::<Vec<_>>().join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_print_as_utc_datetimes() {
        assert_eq!(display_value(&Value::Timestamp { seconds: 0, micros: 0 }), "1970-01-01 00:00:00");
        assert_eq!(display_value(&Value::Timestamp { seconds: 1_709_210_096, micros: 5 }), "2024-02-29 12:34:56.000005");
    }

    #[test]
    fn rows_are_checked_like_the_binlog_encodes_them() {
        let spec = crate::catalog::TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("a", ColumnType::Tiny).not_null(), ColumnDef::new("b", ColumnType::Long).unsigned()],
            ..Default::default()
        };
        let def = TableDef::from_spec(1, &spec).unwrap();
        assert!(check_row(&def, &vec![Value::Int(1), Value::Null]).is_ok());
        assert_eq!(check_row(&def, &vec![Value::Null, Value::Null]).unwrap_err().mysql_code(), 1048);
        assert_eq!(check_row(&def, &vec![Value::Int(300), Value::Null]).unwrap_err().mysql_code(), 1366);
        assert_eq!(check_row(&def, &vec![Value::Int(1), Value::Int(2)]).unwrap_err().mysql_code(), 1366);
        assert_eq!(check_row(&def, &vec![Value::Int(1)]).unwrap_err().mysql_code(), 1136);
    }
}
