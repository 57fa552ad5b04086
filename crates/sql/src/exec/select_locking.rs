//! SELECT ... FOR UPDATE and FOR SHARE: a locking read of one stored
//! table. The rows WHERE selects are locked as UPDATE locks them and read
//! at their latest versions (this transaction's own, or the latest
//! committed), not at the transaction's snapshot, as InnoDB reads them;
//! the locks last to the end of the transaction (at once under
//! autocommit). binlogd's row locks are exclusive, so FOR SHARE locks as
//! FOR UPDATE does: two sessions locking the same rows wait for each
//! other. NOWAIT fails at the first row another transaction holds (MySQL's
//! 3572); SKIP LOCKED and `OF table` are not supported.

use std::time::Duration;

use engine::Transaction;
use protocol::{MysqlError, QueryResponse};
use sqlparser::ast::{NonBlock, Query};

use super::select::{run_over, source, the_select};
use crate::error::{engine_error, not_supported, SqlResult};
use crate::eval::expr::{Columns, Scope};
use crate::session::Context;

/// ER_LOCK_NOWAIT.
fn lock_nowait() -> MysqlError {
    MysqlError::new(3572, "HY000", "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
}

pub fn respond(query: &Query, context: &Context<'_>, trx: &mut Transaction) -> SqlResult<QueryResponse<'static>> {
    let mut nowait = false;
    for clause in &query.locks {
        match (&clause.of, &clause.nonblock) {
            (Some(_), _) => return Err(not_supported("FOR UPDATE OF")),
            (None, Some(NonBlock::SkipLocked)) => return Err(not_supported("SKIP LOCKED")),
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
    let plan = crate::exec::plan::plan(&source.def, select.selection.as_ref(), &constants);
    let mut failure = None;
    let locked = trx.lock_rows_where(source.def.id, &plan.spec, |row| match &plan.residual {
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
