//! Temporal column types from SQL: the `(fsp)` of TIME, DATETIME and
//! TIMESTAMP, YEAR (which sqlparser leaves a custom type), and the result
//! column lengths MySQL gives them.

use binlog_format::column_type::FSP_MAX;
use binlog_format::ColumnType;
use protocol::ColumnDefinition;
use sqlparser::ast::{ObjectName, TypeModifier};

use crate::error::SqlResult;

/// The fractional-second precision of a column, or 1426 past 6.
pub fn precision(fsp: Option<u64>, name: &str) -> SqlResult<u8> {
    match fsp {
        None => Ok(0),
        Some(fsp) if fsp <= u64::from(FSP_MAX) => Ok(fsp as u8),
        Some(fsp) => {
            Err(protocol::MysqlError::new(1426, "42000", format!("Too-big precision {fsp} specified for '{name}'. Maximum is 6.")))
        }
    }
}

pub fn is_year(type_name: &ObjectName) -> bool {
    type_name.to_string().eq_ignore_ascii_case("YEAR")
}

/// YEAR or YEAR(4); MySQL 8.4 has no other width (1818).
pub fn year(modifiers: &[TypeModifier]) -> SqlResult<ColumnType> {
    match modifiers {
        [] => Ok(ColumnType::Year),
        [width] if width.to_string().trim() == "4" => Ok(ColumnType::Year),
        _ => Err(protocol::MysqlError::new(1818, "HY000", "Supports only YEAR or YEAR(4) column.")),
    }
}

/// A DATETIME, TIMESTAMP or TIME result column of precision `fsp`: its
/// digits after the point and its display length (`hh:mm:ss` or
/// `YYYY-MM-DD hh:mm:ss`, plus the point and digits).
pub fn with_precision(definition: ColumnDefinition, fsp: u8) -> ColumnDefinition {
    let base = definition.column_length;
    let length = if fsp == 0 { base } else { base + 1 + u32::from(fsp) };
    definition.with_length(length).with_decimals(fsp)
}
