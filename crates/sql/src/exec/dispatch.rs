//! Dispatch: one parsed statement to the module that runs it.

use sqlparser::ast::{ObjectName, ObjectNamePart, Statement as Ast};

use crate::error::{engine_error, not_supported, syntax_error, unknown_database, SqlResult};
use crate::eval::expr::first_words;
use crate::parse::Statement;
use crate::session::{Context, Outcome, Transactions};

pub fn execute(statement: &Statement, context: &Context<'_>, mut transaction: Transactions<'_>) -> SqlResult<Outcome> {
    // Before anything runs, so a refused statement changes nothing.
    crate::access::authorize::authorize(statement, context)?;
    let (in_transaction, statement_scoped) = (transaction.in_transaction(), transaction.is_statement_scoped());
    if crate::exec::gtid_next::gate(statement, context, in_transaction, statement_scoped)? == crate::exec::gtid_next::Gate::Skip {
        // gtid_next names an executed GTID: MySQL skips the transaction.
        return Ok(Outcome::ok());
    }
    // Held to the statement's end: FTWRL waits for it.
    let _writer = crate::locking::before_statement(statement, context, transaction.locks)?;
    match statement {
        Statement::Begin => {
            transaction.begin(context)?;
            Ok(Outcome::ok())
        }
        Statement::Commit => {
            transaction.commit_statement(context)?;
            Ok(Outcome::ok())
        }
        Statement::Rollback => {
            transaction.rollback_statement(context);
            Ok(Outcome::ok())
        }
        Statement::Nothing => Ok(Outcome::ok()),
        Statement::SetNames { charset, collation } => crate::exec::set_names::set_names(charset.as_deref(), collation.as_deref(), context),
        Statement::SetCharacterSet(charset) => crate::exec::set_names::set_character_set(charset.as_deref(), context),
        Statement::Use(name) => {
            if !crate::information_schema::is_information_schema(name) && !context.db().catalog().databases().contains(name) {
                return Err(unknown_database(name));
            }
            let mut outcome = Outcome::ok();
            outcome.use_database = Some(Some(name.clone()));
            let collation = context.db().catalog().database_collation(name).unwrap_or(engine::SERVER_DEFAULT_COLLATION);
            outcome.set_variables.extend(crate::charsets::database_variables(collation));
            Ok(outcome)
        }
        Statement::CreateDatabase { .. }
        | Statement::AlterDatabase { .. }
        | Statement::DropDatabase { .. }
        | Statement::Truncate { .. } => {
            transaction.commit(context)?;
            crate::exec::ddl::database_statement(statement, context)
        }
        Statement::AlterTable(alter) => {
            transaction.commit(context)?;
            crate::exec::alter::alter_table(alter, context)
        }
        Statement::RenameTable(pairs) => {
            transaction.commit(context)?;
            crate::exec::alter::rename_table(pairs, context)
        }
        Statement::Show(show) => crate::exec::show::show(show, context, &mut transaction),
        Statement::Flush(flush) => crate::exec::admin::flush_logs(*flush, context),
        Statement::PurgeBinaryLogsTo(name) => crate::exec::admin::purge_to(name, context),
        Statement::PurgeBinaryLogsBefore(time) => crate::exec::admin::purge_before(time, context),
        Statement::ResetBinaryLogsAndGtids => crate::exec::admin::reset(context, &transaction),
        Statement::Kill { id, query_only } => crate::exec::admin::kill(*id, *query_only, context),
        Statement::Account(account) => crate::access::users::execute(account, context),
        Statement::Replica(replica) => {
            // An implicit commit, as in MySQL.
            transaction.commit(context)?;
            crate::replica::statements::execute(replica, context)
        }
        Statement::Binlog(text) => crate::exec::binlog_statement::execute(text, context, &mut transaction),
        Statement::StartTransaction { consistent_snapshot, read_only } => {
            crate::exec::transaction_statements::start_transaction(*consistent_snapshot, *read_only, context, &mut transaction)
        }
        Statement::SetTransaction { scope, isolation, read_only } => {
            crate::exec::transaction_statements::set_transaction(*scope, *isolation, *read_only, context, &mut transaction)
        }
        Statement::FlushTablesWithReadLock => crate::exec::lock_statements::flush_tables_with_read_lock(context, &mut transaction),
        Statement::FlushTables => crate::exec::lock_statements::flush_tables(context, &mut transaction),
        Statement::LockTables(tables) => crate::exec::lock_statements::lock_tables(tables, context, &mut transaction),
        Statement::UnlockTables => crate::exec::lock_statements::unlock_tables(context, &mut transaction),
        Statement::Savepoint(name) => crate::exec::transaction_statements::savepoint(name, &mut transaction),
        Statement::RollbackToSavepoint(name) => crate::exec::transaction_statements::rollback_to_savepoint(name, &mut transaction),
        Statement::ReleaseSavepoint(name) => crate::exec::transaction_statements::release_savepoint(name, &mut transaction),
        Statement::Ast(ast) => execute_ast(ast, context, transaction),
        Statement::PartitionedCreateTable { create, partitioning } => {
            transaction.commit(context)?;
            let Ast::CreateTable(create) = create.as_ref() else { return Err(syntax_error("CREATE TABLE")) };
            crate::exec::ddl::create_table(create, Some(partitioning), context)
        }
    }
}

fn execute_ast(ast: &Ast, context: &Context<'_>, mut transaction: Transactions<'_>) -> SqlResult<Outcome> {
    match ast {
        Ast::Query(query) if !query.locks.is_empty() => {
            let response = transaction.write(context, |trx| crate::exec::select_locking::respond(query, context, trx))?;
            Ok(Outcome::new(response))
        }
        Ast::Query(query) => {
            let response = transaction.read(context, |trx| crate::exec::select::respond(query, context, trx))?;
            Ok(Outcome::new(response))
        }
        Ast::Insert(insert) => again_after_rebuild(|| crate::exec::dml::insert(insert, context, &mut transaction)),
        Ast::Update(update) => again_after_rebuild(|| crate::exec::dml::update(update, context, &mut transaction)),
        Ast::Delete(delete) => again_after_rebuild(|| crate::exec::dml::delete(delete, context, &mut transaction)),
        Ast::CreateTable(_) | Ast::CreateIndex(_) | Ast::Drop { .. } => {
            transaction.commit(context)?;
            crate::exec::ddl::ddl(ast, context)
        }
        Ast::Set(set) => crate::exec::set::set(set, context, &mut transaction),
        Ast::StartTransaction { .. } => {
            transaction.begin(context)?;
            Ok(Outcome::ok())
        }
        Ast::Commit { .. } => {
            transaction.commit_statement(context)?;
            Ok(Outcome::ok())
        }
        Ast::Rollback { .. } => {
            transaction.rollback_statement(context);
            Ok(Outcome::ok())
        }
        other => Err(not_supported(first_words(&other.to_string()))),
    }
}

/// How many times a write runs again after ALTER TABLE replaced a table
/// it waited for; each try waits for at most one ALTER, so this is only
/// reached when ALTERs follow each other on the same table.
const REBUILD_RETRIES_MAX: usize = 8;

/// Runs a write, and runs it again when it waited behind ALTER TABLE and
/// found the table replaced (1412): as in MySQL, a statement queued behind
/// ALTER's metadata lock goes on against the new table. The failed try was
/// rolled back to the statement's start, so it left nothing behind.
fn again_after_rebuild(mut write: impl FnMut() -> SqlResult<Outcome>) -> SqlResult<Outcome> {
    let mut tries = 0;
    loop {
        match write() {
            Err(error) if error.code == TABLE_DEFINITION_CHANGED && tries < REBUILD_RETRIES_MAX => tries += 1,
            result => return result,
        }
    }
}

/// ER_TABLE_DEF_CHANGED.
const TABLE_DEFINITION_CHANGED: u16 = 1412;

/// `db.table` or `table` (in the current database).
pub fn table_name(name: &ObjectName, context: &Context<'_>) -> SqlResult<(String, String)> {
    let parts: Vec<&str> = name
        .0
        .iter()
        .map(|part| match part {
            ObjectNamePart::Identifier(ident) => Ok(ident.value.as_str()),
            other => Err(syntax_error(&other.to_string())),
        })
        .collect::<SqlResult<_>>()?;
    match parts.as_slice() {
        [table] => Ok((context.database(None)?, table.to_string())),
        [database, table] => Ok((database.to_string(), table.to_string())),
        _ => Err(syntax_error(&name.to_string())),
    }
}

/// The table's definition, or 1146.
pub fn table_def(context: &Context<'_>, database: &str, table: &str) -> SqlResult<std::sync::Arc<engine::TableDef>> {
    context.db().catalog().table(database, table).map_err(engine_error)
}
