//! The check CREATE TABLE makes on an expression stored with a column (a
//! generated column's, an expression default): which columns it may read
//! and what it may not contain. Both kinds refuse the same things for
//! different reasons and with their own errors, so the walk is shared and
//! each kind gives its rules.

use std::ops::ControlFlow;

use engine::ColumnDef;
use protocol::MysqlError;
use sqlparser::ast::{visit_expressions, Expr, Value as Literal};

use crate::error::{unknown_column, SqlResult};

/// What one kind of column expression may contain.
pub(crate) struct ColumnExpressionRules<'a> {
    /// Where 1054 says the unknown column was looked for.
    pub context: &'a str,
    /// Functions the kind refuses (upper case).
    pub disallowed_functions: &'a [&'a str],
    /// The error for a variable, a parameter, a subquery or a refused
    /// function.
    pub disallowed: MysqlError,
    /// The error, if any, for reading the column at this position.
    pub reference: &'a dyn Fn(usize) -> Option<MysqlError>,
}

/// Checks a column's expression against the table's columns: known
/// columns only (1054), then `rules`; the first refusal is the error.
pub(crate) fn check(columns: &[ColumnDef], expr: &Expr, rules: &ColumnExpressionRules) -> SqlResult<()> {
    let mut error = None;
    let _ = visit_expressions(expr, |node| {
        let found = match node {
            Expr::Identifier(ident) if ident.value.starts_with('@') => Some(rules.disallowed.clone()),
            Expr::Identifier(ident) => match columns.iter().position(|c| c.name.eq_ignore_ascii_case(&ident.value)) {
                None => Some(unknown_column(&ident.value, rules.context)),
                Some(referred) => (rules.reference)(referred),
            },
            Expr::Subquery(_) | Expr::Exists { .. } => Some(rules.disallowed.clone()),
            Expr::Value(value) if matches!(value.value, Literal::Placeholder(_)) => Some(rules.disallowed.clone()),
            Expr::Function(function) => {
                let called = function.name.to_string().to_ascii_uppercase();
                rules.disallowed_functions.contains(&called.as_str()).then(|| rules.disallowed.clone())
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
