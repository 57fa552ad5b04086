//! FLUSH TABLES WITH READ LOCK, LOCK TABLES and UNLOCK TABLES (the locks
//! themselves are in `locking/`).

use protocol::MysqlError;

use crate::error::{engine_error, SqlResult};
use crate::locking::statement_locks::{lock_wait_timeout, LockedTable};
use crate::parse::TableLockRequest;
use crate::session::{Context, Outcome, Transactions};

/// 1192 ER_LOCK_OR_ACTIVE_TRANSACTION.
fn locked_tables_active() -> MysqlError {
    MysqlError::new(1192, "HY000", "Can't execute the given command because you have active locked tables or an active transaction")
}

/// `FLUSH TABLES WITH READ LOCK`: an implicit commit, then the global read
/// lock once every statement and commit in progress elsewhere has ended.
pub fn flush_tables_with_read_lock(context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    if !transaction.locks.tables.is_empty() {
        return Err(locked_tables_active());
    }
    transaction.commit(context)?;
    context.shared.locks.acquire_global_read(context.env.info.connection_id, || lock_wait_timeout(context))?;
    transaction.locks.global_read = true;
    Ok(Outcome::ok())
}

/// `FLUSH TABLES`: an implicit commit; binlogd has no table cache to close.
pub fn flush_tables(context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    if !transaction.locks.tables.is_empty() {
        return Err(locked_tables_active());
    }
    transaction.commit(context)?;
    Ok(Outcome::ok())
}

/// `LOCK TABLES`: commits what is open and releases the session's earlier
/// table locks, checks every table exists (1146), then takes them all.
pub fn lock_tables(requests: &[TableLockRequest], context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let session = context.env.info.connection_id;
    transaction.commit(context)?;
    context.shared.locks.unlock_tables(session);
    transaction.locks.tables.clear();
    let mut locked = Vec::with_capacity(requests.len());
    for request in requests {
        let database = context.database(request.database.as_deref())?;
        let def = context.db().catalog().table(&database, &request.table).map_err(engine_error)?;
        let table = (def.database.clone(), def.name.clone());
        if request.write && context.shared.locks.holds_global_read(session) {
            return Err(crate::locking::server_locks::conflicting_read_lock());
        }
        locked.push(LockedTable { table, alias: request.alias.clone(), write: request.write });
    }
    let wanted: Vec<_> = locked.iter().map(|locked| (locked.table.clone(), locked.write)).collect();
    // A WRITE lock also waits for another session's global read lock.
    let _writer = match wanted.iter().any(|(_, write)| *write) {
        true => Some(context.shared.locks.enter_writer(session, || lock_wait_timeout(context))?),
        false => None,
    };
    context.shared.locks.lock_tables(session, &wanted, || lock_wait_timeout(context))?;
    transaction.locks.tables = locked;
    Ok(Outcome::ok())
}

/// `UNLOCK TABLES`: with table locks held, commits the open transaction
/// and releases them; releases the global read lock.
pub fn unlock_tables(context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let session = context.env.info.connection_id;
    if !transaction.locks.tables.is_empty() {
        transaction.commit(context)?;
        context.shared.locks.unlock_tables(session);
        transaction.locks.tables.clear();
    }
    if transaction.locks.global_read {
        context.shared.locks.release_global_read(session);
        transaction.locks.global_read = false;
    }
    Ok(Outcome::ok())
}
