//! Expression defaults (`col type DEFAULT (expr)`, MySQL 8.0.13+): the
//! checks CREATE TABLE makes on the expression, its text as MySQL prints
//! it, and the value a row written without the column gets.
//!
//! The expression is evaluated once per row, in column order after the
//! values the statement gives, so it may read them and the expression
//! defaults of earlier columns. The row images carry the value it gave,
//! so a replica or a CDC reader sees the value, never the expression.

use engine::{ColumnDef, TableDef};
use protocol::MysqlError;
use sqlparser::ast::Expr;

use crate::error::SqlResult;
use crate::eval::column_expression_rules::{self, ColumnExpressionRules};

/// Functions MySQL refuses in a default expression (3770): those that read
/// the session or wait.
const DISALLOWED_FUNCTIONS: [&str; 6] = ["LAST_INSERT_ID", "CONNECTION_ID", "DATABASE", "SLEEP", "FOUND_ROWS", "ROW_COUNT"];

/// 3770 ER_DEFAULT_VAL_GENERATED_FUNCTION_IS_NOT_ALLOWED.
fn disallowed(column: &str) -> MysqlError {
    MysqlError::new(3770, "HY000", format!("Default value expression of column '{column}' contains a disallowed function."))
}

/// Checks column `position`'s default expression against the table's
/// columns as MySQL does: known columns (1054), no AUTO_INCREMENT column
/// (3773), no generated column or column with an expression default
/// defined after it (3772), no variables, parameters, subqueries or
/// functions that read the session (3770).
pub fn check(columns: &[ColumnDef], position: usize, expr: &Expr) -> SqlResult<()> {
    let name = &columns[position].name;
    let reference = |referred: usize| {
        let computed = |column: &ColumnDef| column.attributes.generated.is_some() || column.attributes.default_expression.is_some();
        if columns[referred].auto_increment {
            Some(MysqlError::new(
                3773,
                "HY000",
                format!("Default value expression of column '{name}' cannot refer to an auto-increment column."),
            ))
        } else if referred >= position && computed(&columns[referred]) {
            Some(MysqlError::new(
                3772,
                "HY000",
                format!(
                    "Default value expression of column '{name}' cannot refer to a column defined after it if that column is a generated column or has an expression as default value."
                ),
            ))
        } else {
            None
        }
    };
    let rules = ColumnExpressionRules {
        context: "default value expression",
        disallowed_functions: &DISALLOWED_FUNCTIONS,
        disallowed: disallowed(name),
        reference: &reference,
    };
    column_expression_rules::check(columns, expr, &rules)
}

/// The columns of `def` with an expression default, parsed, in column
/// order.
pub fn expressions(def: &TableDef) -> SqlResult<Vec<(usize, Expr)>> {
    def.columns
        .iter()
        .enumerate()
        .filter_map(|(position, column)| column.attributes.default_expression.as_ref().map(|text| (position, text)))
        .map(|(position, text)| Ok((position, crate::eval::generated::parse_expression(text)?)))
        .collect()
}

/// The expression as SHOW CREATE TABLE prints it after DEFAULT, and as
/// INFORMATION_SCHEMA.COLUMNS and SHOW COLUMNS show the default (the
/// latter without the outer parentheses).
pub fn mysql_text(column: &ColumnDef) -> Option<String> {
    let text = column.attributes.default_expression.as_ref()?;
    Some(match crate::eval::generated::parse_expression(text) {
        Ok(expr) => crate::eval::generated::mysql_text(&expr),
        Err(_) => text.clone(),
    })
}
