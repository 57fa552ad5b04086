//! An UPDATE's JSON columns logged as diffs with
//! `binlog_row_value_options = PARTIAL_JSON`: which columns may be, as
//! MySQL's `prepare_partial_update` (`sql/sql_update.cc`) decides, and
//! each row's diffs as the functions make them (`eval/json_modify.rs`).
//!
//! A JSON column may be logged as diffs when every assignment to it is
//! JSON_SET, JSON_REPLACE or JSON_REMOVE whose first argument is the
//! column itself or another such call on it
//! (`Item_json_func::supports_partial_update`): `j = JSON_SET(j, ...)`,
//! `j = JSON_REMOVE(JSON_SET(j, ...), ...)`. Whether a row's change is
//! logged as its diffs is then up to the binlog (`database::partial_json`).

use binlog_format::ColumnType;
use engine::TableDef;
use protocol::MysqlError;
use sqlparser::ast::{Expr, Function};

use crate::error::{syntax_error, SqlResult};
use crate::eval::expr::{function_args, function_name, Columns, Scope};
use crate::eval::json_modify::{self, DiffLog, PARTIAL_UPDATE_FUNCTIONS};
use crate::eval::value::Value;

/// The JSON columns of an UPDATE whose changes are logged as diffs.
pub struct PartialJson {
    columns: Vec<usize>,
}

impl PartialJson {
    /// `None` when the statement logs no diffs: the session's
    /// `binlog_row_value_options` is not PARTIAL_JSON (`enabled`), or no
    /// assigned column qualifies.
    pub fn plan(def: &TableDef, columns: &Columns, assignments: &[(usize, &Expr)], enabled: bool) -> Option<PartialJson> {
        if !enabled {
            return None;
        }
        let mut qualifying: Vec<usize> = Vec::new();
        for &(position, _) in assignments {
            let assigned_by = || assignments.iter().filter(|(assigned, _)| *assigned == position).map(|(_, expr)| *expr);
            if def.columns[position].column_type == ColumnType::Json
                && !qualifying.contains(&position)
                && assigned_by().all(|expr| changes_itself(expr, position, columns))
            {
                qualifying.push(position);
            }
        }
        (!qualifying.is_empty()).then_some(PartialJson { columns: qualifying })
    }

    /// Diff logs for the next row.
    pub fn row(&self) -> RowDiffs {
        RowDiffs { logs: self.columns.iter().map(|&column| (column, DiffLog::default())).collect() }
    }
}

/// One row's diffs, column by column.
pub struct RowDiffs {
    logs: Vec<(usize, DiffLog)>,
}

impl RowDiffs {
    /// Evaluates the assignment of `expr` to column `position`, logging the
    /// changes when the column is one whose diffs are logged.
    pub fn eval(&mut self, position: usize, expr: &Expr, scope: &Scope<'_>) -> SqlResult<Value> {
        match self.logs.iter_mut().find(|(column, _)| *column == position) {
            Some((_, log)) => eval_logged(expr, scope, log),
            None => scope.eval(expr),
        }
    }

    /// The whole value of column `position` is logged for this row (what
    /// the functions made of it was changed again when it was stored).
    pub fn disable(&mut self, position: usize) {
        if let Some((_, log)) = self.logs.iter_mut().find(|(column, _)| *column == position) {
            log.disable();
        }
    }

    pub fn finish(self) -> database::RowJsonDiffs {
        self.logs.into_iter().map(|(column, log)| (column, log.into_diffs())).collect()
    }
}

fn unnested(expr: &Expr) -> &Expr {
    match expr {
        Expr::Nested(inner) => unnested(inner),
        other => other,
    }
}

/// A call of JSON_SET, JSON_REPLACE or JSON_REMOVE, and its name.
fn partial_update_call(expr: &Expr) -> Option<(String, &Function)> {
    let Expr::Function(function) = unnested(expr) else { return None };
    let name = function_name(function);
    PARTIAL_UPDATE_FUNCTIONS.contains(&name.as_str()).then_some((name, function))
}

/// Whether `expr` is such a call whose first argument is column
/// `position` itself, or such a call on it.
fn changes_itself(expr: &Expr, position: usize, columns: &Columns) -> bool {
    let Some((_, function)) = partial_update_call(expr) else { return false };
    match function_args(function).ok().and_then(|args| args.first().copied().flatten()) {
        Some(first) => is_column(first, position, columns) || changes_itself(first, position, columns),
        None => false,
    }
}

fn is_column(expr: &Expr, position: usize, columns: &Columns) -> bool {
    match unnested(expr) {
        Expr::Identifier(ident) => columns.position(&ident.value) == Some(position),
        Expr::CompoundIdentifier(parts) => {
            let [.., table, column] = parts.as_slice() else { return false };
            columns.position(&column.value) == Some(position)
                && columns.table_names.iter().any(|name| name.eq_ignore_ascii_case(&table.value))
        }
        _ => false,
    }
}

/// Evaluates `expr` as the scope would, the chain of calls down to the
/// column recording its changes in `log`.
fn eval_logged(expr: &Expr, scope: &Scope<'_>, log: &mut DiffLog) -> SqlResult<Value> {
    let Some((name, function)) = partial_update_call(expr) else { return scope.eval(expr) };
    let args = function_args(function)?;
    let mut values = Vec::with_capacity(args.len());
    for (index, arg) in args.iter().enumerate() {
        let Some(arg) = arg else { return Err(syntax_error("*")) };
        values.push(if index == 0 { eval_logged(arg, scope, log)? } else { scope.eval(arg)? });
    }
    json_modify::call(&name, &args, &values, Some(log))?.ok_or_else(|| MysqlError::internal(format!("{name} is not a JSON function")))
}
