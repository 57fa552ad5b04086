//! What SHOW COLUMNS and INFORMATION_SCHEMA.COLUMNS both say about a
//! column beyond its type: its key, its default as text, its extra.

use engine::{ColumnDef, TableDef};

use crate::eval::columns::default_text as column_default_text;
use crate::eval::temporal::{current_timestamp_text, default_text, TimeZone};

/// `PRI`, `UNI`, `MUL` or empty, as MySQL's COLUMN_KEY.
pub fn column_key(def: &TableDef, position: usize) -> &'static str {
    if def.primary_key.contains(&position) {
        "PRI"
    } else if def.indexes.iter().any(|i| i.columns.first() == Some(&position) && i.unique) {
        "UNI"
    } else if def.indexes.iter().any(|i| i.columns.first() == Some(&position)) {
        "MUL"
    } else {
        ""
    }
}

/// A generated column's expression as MySQL prints it; empty for others.
pub fn generation_expression(column: &ColumnDef) -> String {
    column.attributes.generated.as_ref().map_or_else(String::new, |generated| {
        crate::eval::generated::parse_expression(&generated.expression)
            .map(|expr| crate::eval::generated::mysql_text(&expr))
            .unwrap_or_else(|_| generated.expression.clone())
    })
}

/// The DEFAULT as SHOW COLUMNS prints it; `None` for none or NULL.
pub fn column_default(column: &ColumnDef, zone: TimeZone) -> Option<String> {
    if column.current_timestamp.on_insert {
        return Some(current_timestamp_text(column));
    }
    if let Some(text) = crate::eval::default_expressions::mysql_text(column) {
        return Some(text);
    }
    column
        .default
        .as_ref()
        .filter(|d| !matches!(d, binlog_format::Value::Null))
        .map(|d| default_text(column, d, zone).unwrap_or_else(|| column_default_text(column, d)))
}

/// MySQL's EXTRA: `auto_increment`, `DEFAULT_GENERATED`, `on update ...`,
/// then `INVISIBLE`.
pub fn column_extra(column: &ColumnDef) -> String {
    let extra = default_extra(column);
    match (column.attributes.invisible, extra.is_empty()) {
        (false, _) => extra,
        (true, true) => "INVISIBLE".to_string(),
        (true, false) => format!("{extra} INVISIBLE"),
    }
}

fn default_extra(column: &ColumnDef) -> String {
    if let Some(generated) = &column.attributes.generated {
        return if generated.stored { "STORED GENERATED" } else { "VIRTUAL GENERATED" }.to_string();
    }
    let on_insert = column.current_timestamp.on_insert || column.attributes.default_expression.is_some();
    match (column.auto_increment, on_insert, column.current_timestamp.on_update) {
        (true, ..) => "auto_increment".to_string(),
        (_, true, true) => format!("DEFAULT_GENERATED on update {}", current_timestamp_text(column)),
        (_, true, false) => "DEFAULT_GENERATED".to_string(),
        (_, false, true) => format!("on update {}", current_timestamp_text(column)),
        _ => String::new(),
    }
}
