//! Expression defaults (`col type DEFAULT (expr)`, MySQL 8.0.13+): the
//! checks CREATE TABLE makes on the expression, its text as MySQL prints
//! it, and the value a row written without the column gets.
//!
//! The expression is evaluated once per row, in column order after the
//! values the statement gives, so it may read them and the expression
//! defaults of earlier columns. The row images carry the value it gave,
//! so a replica or a CDC reader sees the value, never the expression.

use std::ops::ControlFlow;

use engine::{ColumnDef, TableDef};
use protocol::MysqlError;
use sqlparser::ast::{visit_expressions, Expr, Value as Literal};

use crate::error::{unknown_column, SqlResult};

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
    let mut error = None;
    let _ = visit_expressions(expr, |node| {
        let found = match node {
            Expr::Identifier(ident) if ident.value.starts_with('@') => Some(disallowed(name)),
            Expr::Identifier(ident) => match columns.iter().position(|c| c.name.eq_ignore_ascii_case(&ident.value)) {
                None => Some(unknown_column(&ident.value, "default value expression")),
                Some(referred) if columns[referred].auto_increment => Some(MysqlError::new(
                    3773,
                    "HY000",
                    format!("Default value expression of column '{name}' cannot refer to an auto-increment column."),
                )),
                Some(referred)
                    if referred >= position
                        && (columns[referred].attributes.generated.is_some() || columns[referred].attributes.default_expression.is_some()) =>
                {
                    Some(MysqlError::new(
                        3772,
                        "HY000",
                        format!(
                            "Default value expression of column '{name}' cannot refer to a column defined after it if that column is a generated column or has an expression as default value."
                        ),
                    ))
                }
                Some(_) => None,
            },
            Expr::Subquery(_) | Expr::Exists { .. } => Some(disallowed(name)),
            Expr::Value(value) if matches!(value.value, Literal::Placeholder(_)) => Some(disallowed(name)),
            Expr::Function(function) => {
                let called = function.name.to_string().to_ascii_uppercase();
                DISALLOWED_FUNCTIONS.contains(&called.as_str()).then(|| disallowed(name))
            }
            _ => None,
        };
        match found {
            Some(found) => {
                error = Some(found);
                ControlFlow::Break(())
            }
            None => ControlFlow::Continue(()),
        }
    });
    error.map_or(Ok(()), Err)
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
