//! `UPDATE ... [ORDER BY pk] LIMIT n` and `DELETE ... [ORDER BY pk] LIMIT
//! n`, the batches a purge job or a queue consumer writes: the statement
//! changes the first `n` rows its WHERE matches, in primary-key order (or
//! its reverse), locking only those, as InnoDB stops locking at LIMIT.
//! ORDER BY other than the primary key's columns in one direction is 1235;
//! so is LIMIT on a table without a primary key.

use std::ops::Bound;

use engine::{ScanSpec, TableDef};
use sqlparser::ast::{Expr, OrderByExpr, OrderBySort};

use crate::error::{not_supported, SqlResult};
use crate::eval::value::{to_number, Number};
use crate::session::Context;

/// The scan and row count of a limited UPDATE or DELETE; `None` when the
/// statement has neither ORDER BY nor LIMIT. `spec` is the plan's scan,
/// kept when it already reads in primary-key order.
pub fn plan(
    def: &TableDef,
    spec: ScanSpec,
    order_by: &[OrderByExpr],
    limit: Option<&Expr>,
    context: &Context<'_>,
) -> SqlResult<Option<(ScanSpec, usize)>> {
    if order_by.is_empty() && limit.is_none() {
        return Ok(None);
    }
    if !def.has_primary_key() {
        return Err(not_supported("UPDATE or DELETE ... LIMIT on a table without a primary key"));
    }
    let by_key = order_by.len() <= def.primary_key.len()
        && order_by.iter().zip(&def.primary_key).all(|(order, &column)| {
            matches!(&order.expr, Expr::Identifier(ident) if ident.value.eq_ignore_ascii_case(&def.columns[column].name))
        });
    let descending = |order: &OrderByExpr| matches!(order.options.sort, Some(OrderBySort::Desc));
    if !by_key || order_by.iter().any(|order| descending(order) != descending(&order_by[0])) {
        return Err(not_supported("UPDATE or DELETE ... ORDER BY other than the primary key"));
    }
    // An index range reads in the index's order: scan the primary key
    // instead (the WHERE clause is checked on every row either way).
    let mut spec = if spec.index.is_some() && !order_by.is_empty() { ScanSpec::primary() } else { spec };
    if spec.index.is_none() && order_by.first().is_some_and(descending) {
        spec.reverse = true;
    }
    let count = match limit {
        None => usize::MAX,
        Some(expr) => {
            let no_columns = crate::eval::expr::Columns::default();
            let value = context.constants(&no_columns).eval(expr)?;
            match to_number(&value) {
                Some(Number::Int(n)) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
                _ => return Err(crate::error::syntax_error(&expr.to_string())),
            }
        }
    };
    if count == 0 {
        // Nothing to change: an empty range.
        spec.lower = Bound::Excluded(Vec::new());
        spec.upper = Bound::Excluded(Vec::new());
        spec.more_ranges.clear();
    }
    Ok(Some((spec, count)))
}
