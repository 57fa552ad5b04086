//! Privilege checks: what each statement needs, checked before it runs,
//! with MySQL's errors (1142 table, 1044 database, 1227 global).
//!
//! The session's grants are read afresh for every statement (from the
//! accounts' current snapshot), so GRANT and REVOKE apply to the next
//! statement of every session, as in MySQL. An account dropped while its
//! session is connected has no privileges left.
//!
//! [`authorize`] matches every [`Statement`] variant without a catch-all,
//! so a new statement does not compile until someone decides what it
//! needs. Statements whose needs depend on what they find (the account
//! statements) check inside their executor with the [`Principal`] methods;
//! code elsewhere uses `Context::require*` or `SqlSession::require*`.

use std::ops::ControlFlow;
use std::sync::Arc;

use protocol::{ConnectionInfo, MysqlError};
use sqlparser::ast::{visit_expressions, visit_relations, Expr, FromTable, ObjectName, ObjectType, Statement as Ast, TableObject};

use crate::access::accounts::Account;
use crate::access::privileges::{Grants, Level, Privilege};
use crate::error::SqlResult;
use crate::exec::dispatch::table_name;
use crate::parse::{FlushLogs, Show, Statement};
use crate::session::{Context, Shared};

/// 1227 ER_SPECIFIC_ACCESS_DENIED_ERROR, listing the privileges any one of
/// which would do, as MySQL words it: static privileges joined by ", ",
/// dynamic ones appended with " or " ("SUPER, REPLICATION CLIENT",
/// "SUPER or SYSTEM_VARIABLES_ADMIN").
pub fn specific_access_denied(privileges: &[Privilege]) -> MysqlError {
    let mut sorted = privileges.to_vec();
    sorted.sort();
    let static_names: Vec<&str> = sorted.iter().filter(|p| !p.is_dynamic()).map(|p| p.name()).collect();
    let mut text = static_names.join(", ");
    for privilege in sorted.iter().filter(|p| p.is_dynamic()) {
        if !text.is_empty() {
            text.push_str(" or ");
        }
        text.push_str(privilege.name());
    }
    crate::error::access_denied(&text)
}

/// 1142 ER_TABLEACCESS_DENIED_ERROR: `command` is the privilege's name.
pub fn table_access_denied(command: &str, user: &str, host: &str, table: &str) -> MysqlError {
    MysqlError::new(1142, "42000", format!("{command} command denied to user '{user}'@'{host}' for table '{table}'"))
}

/// 1044 ER_DBACCESS_DENIED_ERROR (MySQL names the account's host pattern).
pub fn database_access_denied(user: &str, account_host: &str, database: &str) -> MysqlError {
    MysqlError::new(1044, "42000", format!("Access denied for user '{user}'@'{account_host}' to database '{database}'"))
}

/// The schema every account may read (binlogd serves none of its tables
/// yet, but clients name it).
fn is_information_schema(database: &str) -> bool {
    database.eq_ignore_ascii_case("information_schema")
}

/// Who runs a statement and what they may do: one snapshot of the account
/// table, so every check of one statement sees the same grants.
pub struct Principal<'a> {
    info: &'a ConnectionInfo,
    accounts: Arc<Vec<Account>>,
    position: Option<usize>,
    grants_without_account: Grants,
}

impl<'a> Principal<'a> {
    pub fn new(shared: &Shared, info: &'a ConnectionInfo) -> Principal<'a> {
        let accounts = shared.accounts.snapshot();
        if info.system_thread {
            // The replica applier: every privilege, no account.
            return Principal { info, accounts, position: None, grants_without_account: Grants::everything() };
        }
        let position = accounts.iter().position(|account| account.named(&info.account.user, &info.account.host));
        Principal { info, accounts, position, grants_without_account: Grants::default() }
    }

    /// The session's grants now (none if its account was dropped; all of
    /// them for a system thread).
    pub fn grants(&self) -> &Grants {
        self.position.map_or(&self.grants_without_account, |position| &self.accounts[position].grants)
    }

    pub fn account(&self) -> Option<&Account> {
        self.position.map(|position| &self.accounts[position])
    }

    /// Whether the session's account is `user`@`host` (the account's own
    /// host pattern).
    pub fn is(&self, user: &str, host: &str) -> bool {
        self.info.account.user == user && self.info.account.host.eq_ignore_ascii_case(host)
    }

    /// Holds `privilege` globally (on `*.*`).
    pub fn has(&self, privilege: Privilege) -> bool {
        self.grants().global.contains(privilege)
    }

    /// `privilege` on `*.*`, or 1227.
    pub fn require(&self, privilege: Privilege) -> SqlResult<()> {
        self.require_any(&[privilege])
    }

    /// At least one of `privileges` on `*.*`, or 1227 naming them all.
    pub fn require_any(&self, privileges: &[Privilege]) -> SqlResult<()> {
        if privileges.iter().any(|privilege| self.has(*privilege)) {
            return Ok(());
        }
        Err(specific_access_denied(privileges))
    }

    /// `privilege` on `database.table` (from any level), or 1142.
    pub fn require_on_table(&self, privilege: Privilege, database: &str, table: &str) -> SqlResult<()> {
        if is_information_schema(database)
            || self.grants().effective(&Level::Table(database.to_string(), table.to_string())).contains(privilege)
        {
            return Ok(());
        }
        Err(self.table_denied(privilege.name(), table))
    }

    /// 1142 for this session's user and host.
    pub fn table_denied(&self, command: &str, table: &str) -> MysqlError {
        table_access_denied(command, &self.info.user, &self.info.host, table)
    }

    /// `privilege` on `database` (granted on `*.*` or `database.*`), or 1044.
    pub fn require_on_database(&self, privilege: Privilege, database: &str) -> SqlResult<()> {
        if self.grants().effective(&Level::Database(database.to_string())).contains(privilege) {
            return Ok(());
        }
        Err(self.database_denied(database))
    }

    /// Some privilege in or on `database` (USE, SHOW TABLES, the handshake's
    /// schema), or 1044.
    pub fn require_database_access(&self, database: &str) -> SqlResult<()> {
        if is_information_schema(database) || self.grants().can_see_database(database) {
            return Ok(());
        }
        Err(self.database_denied(database))
    }

    pub fn database_denied(&self, database: &str) -> MysqlError {
        database_access_denied(&self.info.account.user, &self.info.account.host, database)
    }

    /// Some privilege on `database.table` (SHOW COLUMNS, SHOW CREATE TABLE),
    /// or 1142 with `command`.
    pub fn require_table_access(&self, command: &str, database: &str, table: &str) -> SqlResult<()> {
        if is_information_schema(database) || self.grants().can_see_table(database, table) {
            return Ok(());
        }
        Err(table_access_denied(command, &self.info.user, &self.info.host, table))
    }

    pub fn can_see_database(&self, database: &str) -> bool {
        is_information_schema(database) || self.grants().can_see_database(database)
    }

    pub fn can_see_table(&self, database: &str, table: &str) -> bool {
        self.grants().can_see_table(database, table)
    }

    /// 1045, which MySQL answers for a global GRANT without the privilege.
    pub fn login_denied(&self) -> MysqlError {
        MysqlError::access_denied(&self.info.user, &self.info.host, !self.info.account.credential.is_empty())
    }
}

/// Checks that the session may run `statement`; the first missing
/// privilege is the error.
pub fn authorize(statement: &Statement, context: &Context<'_>) -> SqlResult<()> {
    let principal = context.principal();
    // Fast path: an account with every privilege on *.* (root) may run
    // anything; most statements of a benchmark take this branch.
    if principal.grants().global.contains_all(crate::access::privileges::PrivilegeSet::all_at(&Level::Global)) {
        return Ok(());
    }
    match statement {
        Statement::Ast(ast) | Statement::PartitionedCreateTable { create: ast, .. } => authorize_ast(ast, context, &principal),
        Statement::Begin | Statement::Commit | Statement::Rollback | Statement::Nothing => Ok(()),
        Statement::SetNames { .. } | Statement::SetCharacterSet(_) => Ok(()),
        Statement::StartTransaction { .. } | Statement::UnlockTables => Ok(()),
        Statement::Savepoint(_) | Statement::RollbackToSavepoint(_) | Statement::ReleaseSavepoint(_) => Ok(()),
        // SET GLOBAL TRANSACTION is checked where it runs, as SET GLOBAL is.
        Statement::SetTransaction { .. } => Ok(()),
        Statement::FlushTablesWithReadLock | Statement::FlushTables => principal.require(Privilege::Reload),
        Statement::LockTables(tables) => {
            for request in tables {
                let database = context.database(request.database.as_deref())?;
                // MySQL also wants LOCK TABLES, a privilege binlogd's grants do not have.
                principal.require_on_table(Privilege::Select, &database, &request.table)?;
            }
            Ok(())
        }
        // MySQL wants REPLICATION_SLAVE_ADMIN (or SUPER); binlogd has SUPER.
        Statement::Replica(_) => principal.require(Privilege::Super),
        // MySQL 8.4 wants BINLOG_ADMIN (or SUPER, or REPLICATION_APPLIER,
        // which binlogd does not have).
        Statement::Binlog(_) => principal.require_any(&[Privilege::BinlogAdmin, Privilege::Super]),
        Statement::Use(database) if crate::information_schema::is_information_schema(database) => Ok(()),
        Statement::Use(database) => principal.require_database_access(database),
        Statement::CreateDatabase { name, .. } => principal.require_on_database(Privilege::Create, name),
        Statement::AlterDatabase { name, .. } => principal.require_on_database(Privilege::Alter, &context.database(name.as_deref())?),
        Statement::DropDatabase { name, .. } => principal.require_on_database(Privilege::Drop, name),
        // MySQL: ALTER on the table; a rename also needs DROP on the old
        // name and CREATE and INSERT on the new.
        Statement::AlterTable(alter) => {
            let database = context.database(alter.table.0.as_deref())?;
            principal.require_on_table(Privilege::Alter, &database, &alter.table.1)?;
            for spec in &alter.specs {
                if let crate::parse::alter::AlterSpec::RenameTable((to_database, to)) = spec {
                    principal.require_on_table(Privilege::Drop, &database, &alter.table.1)?;
                    let to_database = context.database(to_database.as_deref())?;
                    principal.require_on_table(Privilege::Create, &to_database, to)?;
                    principal.require_on_table(Privilege::Insert, &to_database, to)?;
                }
            }
            Ok(())
        }
        Statement::RenameTable(pairs) => {
            for ((from_database, from), (to_database, to)) in pairs {
                let from_database = context.database(from_database.as_deref())?;
                principal.require_on_table(Privilege::Alter, &from_database, from)?;
                principal.require_on_table(Privilege::Drop, &from_database, from)?;
                let to_database = context.database(to_database.as_deref())?;
                principal.require_on_table(Privilege::Create, &to_database, to)?;
                principal.require_on_table(Privilege::Insert, &to_database, to)?;
            }
            Ok(())
        }
        Statement::Truncate { database, table } => {
            let database = context.database(database.as_deref())?;
            principal.require_on_table(Privilege::Drop, &database, table)
        }
        Statement::Show(show) => match show {
            Show::BinaryLogs | Show::BinaryLogStatus => principal.require_any(&[Privilege::Super, Privilege::ReplicationClient]),
            Show::BinlogEvents { .. } => principal.require_any(&[Privilege::Super, Privilege::ReplicationSlave]),
            Show::Replicas { .. } | Show::ReplicaStatus { .. } => principal.require_any(&[Privilege::Super, Privilege::ReplicationClient]),
            Show::Tables { database, .. } => principal.require_database_access(&context.database(database.as_deref())?),
            Show::CreateTable { database, table } => principal.require_table_access("SHOW", &context.database(database.as_deref())?, table),
            Show::Columns { database, table, .. } | Show::Index { database, table, .. } => {
                principal.require_table_access("SELECT", &context.database(database.as_deref())?, table)
            }
            // Filtered to what the account may see where they run.
            Show::Databases { .. } | Show::Processlist { .. } => Ok(()),
            Show::Variables { .. } | Show::Status { .. } | Show::Warnings | Show::Errors | Show::Engines => Ok(()),
            // Filtered to what the account may see where they run.
            Show::TableStatus { .. } | Show::Triggers { .. } | Show::Events { .. } | Show::RoutineStatus { .. } => Ok(()),
            Show::CreateDatabase { name, .. } => principal.require_database_access(name),
        },
        // MySQL 8.4 wants RELOAD for FLUSH; BINLOG_ADMIN and SUPER also
        // administer the binlog, so they may FLUSH BINARY LOGS too.
        Statement::Flush(FlushLogs { binary_logs: true, engine_logs: false }) => {
            principal.require_any(&[Privilege::Reload, Privilege::Super, Privilege::BinlogAdmin])
        }
        Statement::Flush(_) => principal.require(Privilege::Reload),
        Statement::PurgeBinaryLogsTo(_) | Statement::PurgeBinaryLogsBefore(_) => {
            principal.require_any(&[Privilege::Super, Privilege::BinlogAdmin])
        }
        // MySQL 8.4 wants RELOAD for RESET BINARY LOGS AND GTIDS.
        Statement::ResetBinaryLogsAndGtids => principal.require_any(&[Privilege::Reload, Privilege::Super, Privilege::BinlogAdmin]),
        // Whose connection it is decides: checked in admin::kill_as.
        Statement::Kill { .. } => Ok(()),
        // Depends on the accounts and levels named: checked in access/users.rs.
        Statement::Account(_) => Ok(()),
    }
}

/// Every table `node` reads, resolved against the current database.
fn relations<V: sqlparser::ast::Visit>(node: &V, context: &Context<'_>) -> SqlResult<Vec<(String, String)>> {
    let mut names: Vec<ObjectName> = Vec::new();
    let _ = visit_relations(node, |name| {
        names.push(name.clone());
        ControlFlow::<()>::Continue(())
    });
    names.iter().map(|name| table_name(name, context)).collect()
}

/// Removes one occurrence of `target` from `tables` (the statement's own
/// mention of it); the rest are read.
fn without_target(mut tables: Vec<(String, String)>, target: &(String, String)) -> Vec<(String, String)> {
    if let Some(position) = tables.iter().position(|table| table == target) {
        tables.remove(position);
    }
    tables
}

/// Whether `expr` reads a column (so UPDATE needs SELECT too, as in MySQL).
fn reads_columns(expr: &Expr) -> bool {
    let mut found = false;
    let _ = visit_expressions(expr, |expr| {
        match expr {
            Expr::Identifier(ident) if !ident.value.starts_with('@') => found = true,
            Expr::CompoundIdentifier(parts) if !parts[0].value.starts_with('@') => found = true,
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    found
}

fn require_reads(principal: &Principal<'_>, tables: &[(String, String)]) -> SqlResult<()> {
    // INFORMATION_SCHEMA is readable by every account; its rows are
    // filtered by what each may see.
    for (database, table) in tables.iter().filter(|(database, _)| !crate::information_schema::is_information_schema(database)) {
        principal.require_on_table(Privilege::Select, database, table)?;
    }
    Ok(())
}

fn authorize_ast(ast: &Ast, context: &Context<'_>, principal: &Principal<'_>) -> SqlResult<()> {
    match ast {
        Ast::Query(query) => require_reads(principal, &relations(query.as_ref(), context)?),
        Ast::Insert(insert) => {
            let TableObject::TableName(name) = &insert.table else { return Ok(()) };
            let (database, table) = table_name(name, context)?;
            principal.require_on_table(Privilege::Insert, &database, &table)?;
            if insert.on.is_some() {
                principal.require_on_table(Privilege::Update, &database, &table)?;
            }
            // REPLACE deletes the rows in its way.
            if insert.replace_into {
                principal.require_on_table(Privilege::Delete, &database, &table)?;
            }
            match &insert.source {
                Some(source) => require_reads(principal, &relations(source.as_ref(), context)?),
                None => Ok(()),
            }
        }
        Ast::Update(update) => {
            let sqlparser::ast::TableFactor::Table { name, .. } = &update.table.relation else { return Ok(()) };
            let target = table_name(name, context)?;
            principal.require_on_table(Privilege::Update, &target.0, &target.1)?;
            let reads_target = update.selection.is_some() || update.assignments.iter().any(|assignment| reads_columns(&assignment.value));
            if reads_target {
                principal.require_on_table(Privilege::Select, &target.0, &target.1)?;
            }
            require_reads(principal, &without_target(relations(ast, context)?, &target))
        }
        Ast::Delete(delete) => {
            let tables = match &delete.from {
                FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables) => tables,
            };
            let mut read = relations(ast, context)?;
            for table in tables {
                let sqlparser::ast::TableFactor::Table { name, .. } = &table.relation else { continue };
                let target = table_name(name, context)?;
                principal.require_on_table(Privilege::Delete, &target.0, &target.1)?;
                if delete.selection.is_some() {
                    principal.require_on_table(Privilege::Select, &target.0, &target.1)?;
                }
                read = without_target(read, &target);
            }
            require_reads(principal, &read)
        }
        Ast::CreateTable(create) => {
            let (database, table) = table_name(&create.name, context)?;
            principal.require_on_table(Privilege::Create, &database, &table)?;
            if let Some(like) = &create.like {
                let (sqlparser::ast::CreateTableLikeKind::Parenthesized(like) | sqlparser::ast::CreateTableLikeKind::Plain(like)) = like;
                let (database, table) = table_name(&like.name, context)?;
                principal.require_on_table(Privilege::Select, &database, &table)?;
            }
            match &create.query {
                Some(query) => require_reads(principal, &relations(query.as_ref(), context)?),
                None => Ok(()),
            }
        }
        Ast::CreateIndex(create) => {
            let (database, table) = table_name(&create.table_name, context)?;
            principal.require_on_table(Privilege::Index, &database, &table)
        }
        Ast::Drop { object_type: ObjectType::Table, names, .. } => {
            for name in names {
                let (database, table) = table_name(name, context)?;
                principal.require_on_table(Privilege::Drop, &database, &table)?;
            }
            Ok(())
        }
        Ast::Drop { object_type: ObjectType::Index, table: Some(table), .. } => {
            let (database, table) = table_name(table, context)?;
            principal.require_on_table(Privilege::Index, &database, &table)
        }
        // SET GLOBAL is checked in exec/set.rs, before any assignment applies.
        // Everything else is a transaction statement or is refused by
        // exec/dispatch.rs as unsupported.
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_mysqls() {
        assert_eq!(
            specific_access_denied(&[Privilege::Super, Privilege::SystemVariablesAdmin]).message,
            "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation"
        );
        assert_eq!(
            specific_access_denied(&[Privilege::ReplicationClient, Privilege::Super]).message,
            "Access denied; you need (at least one of) the SUPER, REPLICATION CLIENT privilege(s) for this operation"
        );
        assert_eq!(specific_access_denied(&[Privilege::ReplicationSlave]).code, 1227);
        let denied = table_access_denied("SELECT", "u", "localhost", "t");
        assert_eq!((denied.code, denied.sql_state_str()), (1142, "42000"));
        assert_eq!(denied.message, "SELECT command denied to user 'u'@'localhost' for table 't'");
        assert_eq!(database_access_denied("u", "%", "db").message, "Access denied for user 'u'@'%' to database 'db'");
    }
}
