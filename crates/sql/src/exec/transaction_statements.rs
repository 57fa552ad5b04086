//! START TRANSACTION with its characteristics, SET TRANSACTION and
//! savepoints.
//!
//! binlogd's engine is multi-versioned with a view per transaction
//! (REPEATABLE READ) or per read (READ COMMITTED): both are honoured
//! exactly. READ UNCOMMITTED (dirty reads) and SERIALIZABLE (plain reads
//! as locking reads) are refused rather than approximated.

use protocol::MysqlError;

use crate::error::{engine_error, not_supported, SqlResult};
use crate::eval::value::Value;
use crate::parse::{IsolationLevel, TransactionScope};
use crate::session::{Context, Outcome, Transactions};
use crate::variables::definition;

/// The engine's level for `level`, or 1235 for the two it cannot give.
pub fn engine_isolation(level: IsolationLevel) -> SqlResult<engine::IsolationLevel> {
    match level {
        IsolationLevel::ReadCommitted => Ok(engine::IsolationLevel::ReadCommitted),
        IsolationLevel::RepeatableRead => Ok(engine::IsolationLevel::RepeatableRead),
        IsolationLevel::ReadUncommitted | IsolationLevel::Serializable => Err(not_supported(format!(
            "transaction isolation level {} (binlogd gives READ-COMMITTED and REPEATABLE-READ)",
            level.variable_text()
        ))),
    }
}

/// 1568 ER_CANT_CHANGE_TX_CHARACTERISTICS.
fn in_progress() -> MysqlError {
    MysqlError::new(1568, "25001", "Transaction characteristics can't be changed while a transaction is in progress")
}

/// `START TRANSACTION [WITH CONSISTENT SNAPSHOT] [, READ ONLY | READ WRITE]`:
/// commits what is open, starts a transaction, and with CONSISTENT
/// SNAPSHOT opens its view at once rather than at its first read.
pub fn start_transaction(
    consistent_snapshot: bool,
    read_only: Option<bool>,
    context: &Context<'_>,
    transaction: &mut Transactions<'_>,
) -> SqlResult<Outcome> {
    transaction.begin_with(context, read_only)?;
    if consistent_snapshot {
        if let Some(trx) = transaction.trx.as_ref() {
            trx.open_view();
        }
    }
    Ok(Outcome::ok())
}

/// `SET [GLOBAL | SESSION] TRANSACTION ...`.
pub fn set_transaction(
    scope: TransactionScope,
    isolation: Option<IsolationLevel>,
    read_only: Option<bool>,
    context: &Context<'_>,
    transaction: &mut Transactions<'_>,
) -> SqlResult<Outcome> {
    if let Some(level) = isolation {
        engine_isolation(level)?;
    }
    let mut outcome = Outcome::ok();
    match scope {
        TransactionScope::Next => {
            if transaction.in_transaction() {
                return Err(in_progress());
            }
            if isolation.is_some() {
                transaction.characteristics.next_isolation = isolation;
            }
            if read_only.is_some() {
                transaction.characteristics.next_read_only = read_only;
            }
        }
        TransactionScope::Session | TransactionScope::Global => {
            let mut values = Vec::new();
            if let Some(level) = isolation {
                values.push(("transaction_isolation", Value::Bytes(level.variable_text().as_bytes().to_vec())));
            }
            if let Some(read_only) = read_only {
                values.push(("transaction_read_only", Value::Int(i64::from(read_only))));
            }
            for (name, value) in values {
                let definition = definition(name).ok_or_else(|| crate::error::unknown_variable(name))?;
                if scope == TransactionScope::Global {
                    context.require_any(&[
                        crate::access::privileges::Privilege::Super,
                        crate::access::privileges::Privilege::SystemVariablesAdmin,
                    ])?;
                    context.shared.globals.set(definition, value);
                } else {
                    outcome.set_variables.push((definition.name, value));
                }
            }
        }
    }
    Ok(outcome)
}

/// 1305 ER_SP_DOES_NOT_EXIST, as MySQL words it for a savepoint.
fn no_savepoint(name: &str) -> MysqlError {
    MysqlError::new(1305, "42000", format!("SAVEPOINT {name} does not exist"))
}

/// `SAVEPOINT name`: replaces one of the same name; outside a transaction
/// there is nothing to mark (MySQL accepts it and keeps nothing).
pub fn savepoint(name: &str, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let Some(trx) = transaction.trx.as_ref() else { return Ok(Outcome::ok()) };
    let point = trx.savepoint();
    let savepoints = &mut transaction.characteristics.savepoints;
    savepoints.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
    savepoints.push((name.to_string(), point));
    Ok(Outcome::ok())
}

/// `ROLLBACK TO SAVEPOINT name`: undoes the changes since, and forgets the
/// savepoints set after it.
pub fn rollback_to_savepoint(name: &str, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let savepoints = &mut transaction.characteristics.savepoints;
    let position = savepoints.iter().position(|(existing, _)| existing.eq_ignore_ascii_case(name)).ok_or_else(|| no_savepoint(name))?;
    let point = savepoints[position].1;
    let trx = transaction.trx.as_mut().ok_or_else(|| no_savepoint(name))?;
    if trx.savepoint() != point {
        trx.rollback_to_savepoint(point).map_err(engine_error)?;
    }
    savepoints.truncate(position + 1);
    Ok(Outcome::ok())
}

/// `RELEASE SAVEPOINT name`: forgets it and those set after it.
pub fn release_savepoint(name: &str, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let savepoints = &mut transaction.characteristics.savepoints;
    let position = savepoints.iter().position(|(existing, _)| existing.eq_ignore_ascii_case(name)).ok_or_else(|| no_savepoint(name))?;
    savepoints.truncate(position);
    Ok(Outcome::ok())
}
