//! SELECT ... FOR UPDATE and FOR SHARE: a locking read of one stored
//! table. The rows WHERE selects are locked as UPDATE locks them and read
//! at their latest versions (this transaction's own, or the latest
//! committed), not at the transaction's snapshot, as InnoDB reads them;
//! the locks last to the end of the transaction (at once under
//! autocommit). binlogd's row locks are exclusive, so FOR SHARE locks as
//! FOR UPDATE does: two sessions locking the same rows wait for each
//! other. NOWAIT fails at the first row another transaction holds (MySQL's
//! 3572); SKIP LOCKED passes over such rows. With LIMIT, and rows read in
//! the order the result wants (no ORDER BY, or ORDER BY the primary key),
//! the read stops once LIMIT (plus OFFSET) rows are locked, as InnoDB's
//! does: `... ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED` hands each of
//! several sessions a different row (a job queue). `OF table` is not
//! supported.

use std::time::Duration;

use engine::{LockingRead, ScanSpec, TableDef, Transaction};
use protocol::{MysqlError, QueryResponse};
use sqlparser::ast::{Expr, GroupByExpr, NonBlock, OrderByKind, OrderBySort, Query, Select, SelectItem};

use super::select::{has_aggregates, limit_and_offset, run_over, source, the_select};
use crate::error::{engine_error, not_supported, SqlResult};
use crate::eval::expr::{Columns, Scope};
use crate::session::Context;

/// ER_LOCK_NOWAIT.
fn lock_nowait() -> MysqlError {
    MysqlError::new(3572, "HY000", "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
}

pub fn respond(query: &Query, context: &Context<'_>, trx: &mut Transaction) -> SqlResult<QueryResponse<'static>> {
    let (mut nowait, mut skip_locked) = (false, false);
    for clause in &query.locks {
        match (&clause.of, &clause.nonblock) {
            (Some(_), _) => return Err(not_supported("FOR UPDATE OF")),
            (None, Some(NonBlock::SkipLocked)) => skip_locked = true,
            (None, Some(NonBlock::Nowait)) => nowait = true,
            (None, None) => {}
        }
    }
    let select = the_select(query)?;
    // Without a table, or over INFORMATION_SCHEMA (built rows), there is
    // nothing to lock, as in MySQL.
    let stored = source(select, context.db().catalog(), context.env.database, Some(context))?.filter(|source| source.rows.is_none());
    let Some(source) = stored else {
        return run_over(query, context, Some(trx), None).map(QueryResponse::from);
    };
    if nowait {
        // The statement's own wait; the next statement sets it again.
        trx.set_lock_wait_timeout(Some(Duration::ZERO));
    }
    let no_columns = Columns::default();
    let constants = context.constants(&no_columns);
    let mut plan = crate::exec::plan::plan(&source.def, select.selection.as_ref(), &constants);
    let mut read = LockingRead { skip_locked, limit: None };
    if let (Some(limit), offset) = limit_and_offset(query, &constants)? {
        if read_in_result_order(query, select, &source.def, &mut plan.spec) {
            read.limit = Some(usize::try_from(limit.saturating_add(offset)).unwrap_or(usize::MAX));
        }
    }
    let mut failure = None;
    let locked = trx.lock_rows_where(source.def.id, &plan.spec, read, |row| match &plan.residual {
        None => true,
        Some(selection) => Scope::for_row(&source.columns, row, context.params, &context.env).is_true(selection).unwrap_or_else(|error| {
            failure.get_or_insert(error);
            false
        }),
    });
    if let Some(error) = failure {
        return Err(error);
    }
    let locked = match locked {
        Err(engine::EngineError::LockWaitTimeout) if nowait => return Err(lock_nowait()),
        other => other.map_err(engine_error)?,
    };
    run_over(query, context, Some(trx), Some(locked)).map(QueryResponse::from)
}

/// Whether the first rows `spec` reads are the result's first rows, so a
/// LIMIT may stop the locking: no grouping, aggregate or DISTINCT, and
/// either no ORDER BY or ORDER BY a prefix of the primary key, in one
/// direction, over a primary-key scan (turned to descending for DESC).
fn read_in_result_order(query: &Query, select: &Select, def: &TableDef, spec: &mut ScanSpec) -> bool {
    let grouped = !matches!(&select.group_by, GroupByExpr::Expressions(exprs, _) if exprs.is_empty()) || select.having.is_some();
    if grouped || select.distinct.is_some() || has_aggregates(select, query) {
        return false;
    }
    let order_by = match query.order_by.as_ref().map(|order_by| &order_by.kind) {
        None => return true,
        Some(OrderByKind::Expressions(exprs)) => exprs,
        Some(OrderByKind::All(_)) => return false,
    };
    if spec.index.is_some() || order_by.len() > def.primary_key.len() {
        return false;
    }
    let descending = |order: &sqlparser::ast::OrderByExpr| matches!(order.options.sort, Some(OrderBySort::Desc));
    let aliased = |name: &str| {
        select
            .projection
            .iter()
            .any(|item| matches!(item, SelectItem::ExprWithAlias { alias, .. } if alias.value.eq_ignore_ascii_case(name)))
    };
    let by_key = order_by.iter().zip(&def.primary_key).all(|(order, &column)| match &order.expr {
        Expr::Identifier(ident) => ident.value.eq_ignore_ascii_case(&def.columns[column].name) && !aliased(&ident.value),
        _ => false,
    });
    let one_direction = order_by.iter().all(|order| descending(order) == descending(&order_by[0]));
    if !by_key || !one_direction {
        return false;
    }
    spec.reverse = descending(&order_by[0]);
    true
}
