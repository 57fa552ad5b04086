//! GROUP_CONCAT([DISTINCT] expr [, expr ...] [ORDER BY ...] [SEPARATOR 'x']),
//! as MySQL computes it: each row's non-NULL arguments joined, rows with a
//! NULL argument left out, DISTINCT on the joined values, the separator
//! (`,` unless given) between rows, and the result cut at
//! `group_concat_max_len` bytes (on a character boundary) with warning
//! 1260. The column is VARCHAR up to 512 bytes, TEXT above, and their
//! binary twins when an argument is a binary string.

use std::cmp::Ordering;
use std::collections::HashSet;

use protocol::{ColumnDefinition, ColumnFlags, ColumnType};
use sqlparser::ast::{Expr, Function, FunctionArgumentClause, FunctionArguments, OrderByExpr};

use crate::error::{not_supported, SqlResult};
use crate::eval::expr::{function_args, Columns, Environment, Scope};
use crate::eval::value::{sort_order, to_text, NullCheck, Value};
use crate::variables::VariableScope;

/// MySQL's default `group_concat_max_len`, in bytes.
pub const MAX_LENGTH_BYTES_DEFAULT: u64 = 1024;

/// Above this `group_concat_max_len` the result is TEXT (BLOB on the
/// wire), as in MySQL.
const VARCHAR_BYTES_MAX: u64 = 512;

/// utf8mb4's widest character, for the column's display length.
const UTF8MB4_CHARACTER_BYTES_MAX: u64 = 4;

/// The session's `group_concat_max_len`.
pub fn max_length_bytes(environment: &dyn Environment) -> u64 {
    match environment.system_variable("group_concat_max_len", VariableScope::Default) {
        Ok(Value::Int(bytes)) => u64::try_from(bytes).unwrap_or(MAX_LENGTH_BYTES_DEFAULT),
        Ok(Value::UInt(bytes)) => bytes,
        _ => MAX_LENGTH_BYTES_DEFAULT,
    }
}

/// The result column of a GROUP_CONCAT named `name`.
pub fn definition(name: &str, max_length_bytes: u64, binary: bool) -> ColumnDefinition {
    let column_type = if max_length_bytes > VARCHAR_BYTES_MAX { ColumnType::MYSQL_TYPE_BLOB } else { ColumnType::MYSQL_TYPE_VAR_STRING };
    let mut definition = ColumnDefinition::new(name, column_type);
    let length_bytes = if binary { max_length_bytes } else { max_length_bytes.saturating_mul(UTF8MB4_CHARACTER_BYTES_MAX) };
    definition = definition.with_length(u32::try_from(length_bytes).unwrap_or(u32::MAX));
    if binary {
        definition.with_character_set(protocol::resultset::BINARY_CHARSET).with_flags(ColumnFlags::BINARY_FLAG)
    } else {
        definition.character_set = protocol::resultset::UTF8MB4_GENERAL_CI;
        definition.flags.remove(ColumnFlags::BINARY_FLAG);
        definition.with_decimals(31)
    }
}

/// The ORDER BY and SEPARATOR clauses of a call.
fn clauses(function: &Function) -> SqlResult<(Vec<&OrderByExpr>, Vec<u8>)> {
    let mut order_by = Vec::new();
    let mut separator = b",".to_vec();
    if let FunctionArguments::List(list) = &function.args {
        for clause in &list.clauses {
            match clause {
                FunctionArgumentClause::OrderBy(exprs) => order_by.extend(exprs.iter()),
                FunctionArgumentClause::Separator(value) => match &value.value {
                    sqlparser::ast::Value::SingleQuotedString(text) | sqlparser::ast::Value::DoubleQuotedString(text) => {
                        separator = text.clone().into_bytes()
                    }
                    other => return Err(not_supported(format!("SEPARATOR {other}"))),
                },
                other => return Err(not_supported(format!("GROUP_CONCAT(... {other})"))),
            }
        }
    }
    Ok((order_by, separator))
}

/// GROUP_CONCAT over one group's `rows`; a cut result raises warning 1260
/// naming the row (counted in the group) whose value did not fit.
pub fn evaluate(
    function: &Function,
    distinct: bool,
    rows: &[std::sync::Arc<Vec<Value>>],
    columns: &Columns,
    params: &[Value],
    environment: &dyn Environment,
) -> SqlResult<Value> {
    let args: Vec<&Expr> = function_args(function)?.into_iter().collect::<Option<_>>().ok_or_else(|| not_supported("GROUP_CONCAT(*)"))?;
    let (order_by, separator) = clauses(function)?;
    // Each kept row: its joined arguments and its sort keys.
    let mut values: Vec<(Vec<u8>, Vec<Value>)> = Vec::new();
    let mut seen = HashSet::new();
    'rows: for row in rows {
        let scope = Scope::for_row(columns, row, params, environment);
        let mut joined = Vec::new();
        for arg in &args {
            let value = scope.eval(arg)?;
            if value.is_null() {
                continue 'rows;
            }
            joined.extend_from_slice(&to_text(&value));
        }
        if distinct && !seen.insert(joined.clone()) {
            continue;
        }
        let keys = order_by.iter().map(|order| scope.eval(&order.expr)).collect::<SqlResult<Vec<_>>>()?;
        values.push((joined, keys));
    }
    if values.is_empty() {
        return Ok(Value::Null);
    }
    if !order_by.is_empty() {
        values.sort_by(|(_, left), (_, right)| {
            for ((left, right), order) in left.iter().zip(right).zip(&order_by) {
                let ordering = sort_order(left, right);
                let ordering =
                    if matches!(order.options.sort, Some(sqlparser::ast::OrderBySort::Desc)) { ordering.reverse() } else { ordering };
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
            Ordering::Equal
        });
    }
    let max_length_bytes = usize::try_from(max_length_bytes(environment)).unwrap_or(usize::MAX);
    let mut result = Vec::new();
    for (position, (joined, _)) in values.iter().enumerate() {
        if position > 0 {
            result.extend_from_slice(&separator);
        }
        result.extend_from_slice(joined);
        if result.len() > max_length_bytes {
            result.truncate(character_boundary(&result, max_length_bytes));
            environment.warning(1260, format!("Row {} was cut by GROUP_CONCAT()", position + 1));
            break;
        }
    }
    Ok(Value::Bytes(result))
}

/// The longest prefix of at most `bytes_max` bytes that does not split a
/// UTF-8 character (bytes that are not UTF-8 are cut anywhere).
fn character_boundary(text: &[u8], bytes_max: usize) -> usize {
    match std::str::from_utf8(text) {
        Ok(text) => (0..=bytes_max).rev().find(|&end| text.is_char_boundary(end)).unwrap_or(0),
        Err(_) => bytes_max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_between_characters() {
        assert_eq!(character_boundary("aé".as_bytes(), 2), 1);
        assert_eq!(character_boundary("aé".as_bytes(), 3), 3);
        assert_eq!(character_boundary(b"ab\xff", 2), 2);
    }

    #[test]
    fn the_column_is_varchar_up_to_512_bytes_then_text() {
        let short = definition("g", 512, false);
        assert_eq!((short.column_type, short.column_length, short.character_set), (ColumnType::MYSQL_TYPE_VAR_STRING, 2048, 45));
        let long = definition("g", 1024, false);
        assert_eq!((long.column_type, long.column_length), (ColumnType::MYSQL_TYPE_BLOB, 4096));
        assert!(!long.flags.contains(ColumnFlags::BINARY_FLAG));
        let binary = definition("g", 1024, true);
        assert_eq!((binary.column_type, binary.column_length, binary.character_set), (ColumnType::MYSQL_TYPE_BLOB, 1024, 63));
        assert!(binary.flags.contains(ColumnFlags::BINARY_FLAG));
    }
}
