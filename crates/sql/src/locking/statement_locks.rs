//! What a statement must wait for, or is refused, because of explicit
//! locks: MySQL's rules for a session under LOCK TABLES (1100 for a table
//! it did not lock, 1099 for writing one it locked READ), and for everyone
//! else the other sessions' table locks and global read lock.

use std::ops::ControlFlow;
use std::time::Duration;

use protocol::MysqlError;
use sqlparser::ast::{visit_relations, Statement as Ast};

use super::server_locks::{TableName, WriterGuard};
use crate::error::SqlResult;
use crate::eval::expr::Environment as _;
use crate::exec::dispatch::table_name;
use crate::parse::Statement;
use crate::session::Context;
use crate::variables::VariableScope;

/// One table a session locked with LOCK TABLES.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedTable {
    pub table: TableName,
    /// The name the statement may use for it (`LOCK TABLES t AS a`).
    pub alias: Option<String>,
    pub write: bool,
}

/// The explicit locks one session holds.
#[derive(Debug, Default)]
pub struct SessionLocks {
    /// FLUSH TABLES WITH READ LOCK until UNLOCK TABLES or disconnect.
    pub global_read: bool,
    /// LOCK TABLES until UNLOCK TABLES, the next LOCK TABLES, START
    /// TRANSACTION or disconnect; empty without.
    pub tables: Vec<LockedTable>,
}

/// The session's `lock_wait_timeout`, MySQL's bound on waits for metadata
/// locks (one year by default).
pub(crate) fn lock_wait_timeout(context: &Context<'_>) -> Duration {
    let one_year = engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT;
    session_seconds(context, "lock_wait_timeout", one_year).unwrap_or(one_year)
}

/// The session's `innodb_lock_wait_timeout`, MySQL's bound on row lock
/// waits; `None` when it cannot be read, and the engine's global applies.
pub(crate) fn innodb_lock_wait_timeout(context: &Context<'_>) -> Option<Duration> {
    session_seconds(context, "innodb_lock_wait_timeout", Duration::from_secs(1_073_741_824))
}

/// The session's value of a variable in seconds, within its range (1 s to
/// `max`); `None` when it cannot be read.
fn session_seconds(context: &Context<'_>, name: &str, max: Duration) -> Option<Duration> {
    let value = context.env.system_variable(name, VariableScope::Default).ok()?;
    let seconds = crate::eval::value::to_number(&value)?.as_f64();
    Some(Duration::from_secs_f64(seconds.clamp(1.0, max.as_secs_f64())))
}

/// Gives `trx` the session's lock waits: `innodb_lock_wait_timeout` for row
/// locks and `lock_wait_timeout` for a write that finds DDL on its table.
/// Read at each statement, so a SET SESSION applies to the next one.
pub(crate) fn apply_lock_waits(trx: &mut engine::Transaction, context: &Context<'_>) {
    trx.set_lock_wait_timeout(innodb_lock_wait_timeout(context));
    trx.set_metadata_lock_wait_timeout(Some(lock_wait_timeout(context)));
}

/// Whether `statement` changes data or definitions.
fn writes(statement: &Statement) -> bool {
    match statement {
        Statement::CreateDatabase { .. }
        | Statement::AlterDatabase { .. }
        | Statement::DropDatabase { .. }
        | Statement::Truncate { .. }
        | Statement::AlterTable(_)
        | Statement::RenameTable(_)
        | Statement::PartitionedCreateTable { .. } => true,
        Statement::Ast(ast) => matches!(
            ast.as_ref(),
            Ast::Insert(_) | Ast::Update(_) | Ast::Delete(_) | Ast::CreateTable(_) | Ast::CreateIndex(_) | Ast::Drop { .. }
        ),
        _ => false,
    }
}

/// The tables `statement` reads and writes (`true` for written).
fn touched_tables(statement: &Statement, context: &Context<'_>, writes: bool) -> SqlResult<Vec<(TableName, bool)>> {
    let Statement::Ast(ast) = statement else {
        return Ok(match statement {
            Statement::Truncate { database, table } => vec![((context.database(database.as_deref())?, table.clone()), true)],
            _ => Vec::new(),
        });
    };
    if !matches!(ast.as_ref(), Ast::Query(_) | Ast::Insert(_) | Ast::Update(_) | Ast::Delete(_)) {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    let _ = visit_relations(ast.as_ref(), |name| {
        names.push(name.clone());
        ControlFlow::<()>::Continue(())
    });
    let mut tables = Vec::new();
    for name in &names {
        if name.0.len() == 1 && name.to_string().eq_ignore_ascii_case("dual") {
            continue;
        }
        let table = table_name(name, context)?;
        if !table.0.eq_ignore_ascii_case("information_schema") {
            tables.push((table, writes));
        }
    }
    Ok(tables)
}

/// Checks `statement` against the explicit locks before it runs; a
/// writing statement gets a guard that keeps FTWRL out until it ends.
pub fn before_statement<'c>(statement: &Statement, context: &'c Context<'_>, locks: &SessionLocks) -> SqlResult<Option<WriterGuard<'c>>> {
    let writes = writes(statement);
    let session = context.env.info.connection_id;
    let timeout = || lock_wait_timeout(context);
    let tables = match locks.tables.is_empty() && !context.shared.locks.table_locks_held() {
        true => Vec::new(),
        false => touched_tables(statement, context, writes)?,
    };
    if !locks.tables.is_empty() {
        for ((database, table), write) in &tables {
            let locked = locks.tables.iter().find(|locked| {
                locked.table.0 == *database && (locked.alias.as_deref().unwrap_or(&locked.table.1) == table || locked.table.1 == *table)
            });
            match locked {
                None => return Err(MysqlError::new(1100, "HY000", format!("Table '{table}' was not locked with LOCK TABLES"))),
                Some(locked) if *write && !locked.write => {
                    return Err(MysqlError::new(1099, "HY000", format!("Table '{table}' was locked with a READ lock and can't be updated")))
                }
                Some(_) => {}
            }
        }
    } else if !tables.is_empty() {
        context.shared.locks.wait_for_tables(session, &tables, timeout)?;
    }
    if !writes {
        return Ok(None);
    }
    context.shared.locks.enter_writer(session, timeout).map(Some)
}
