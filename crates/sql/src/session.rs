//! One connection's SQL state and the protocol's [`Session`] seam: the
//! open transaction, autocommit, the current database, session variables
//! and prepared statements.
//!
//! Transactions: with autocommit on and no BEGIN, every statement runs in
//! its own transaction, committed (through the database's two-phase commit
//! with the binlog) when the statement ends, rolled back when it fails. In
//! an explicit transaction (BEGIN, or autocommit off) a failed statement
//! undoes only itself, except a deadlock, which the engine ends whole.
//! DDL commits the open transaction first, as MySQL does.

use std::collections::HashMap;
use std::sync::Arc;

use database::{Database, StatementContext};
use engine::{TableId, Transaction};
use protocol::{
    ConnectionInfo, MysqlError, OkResponse, PreparedStatement, QueryResponse, Session, SessionFactory, StatusFlags,
    Value as WireValue,
};
use parking_lot::RwLock;

use crate::accounts::Accounts;
use crate::authorize::Principal;
use crate::privileges::Privilege;
use crate::error::{database_error, unknown_database, unknown_variable, SqlResult};
use crate::expr::{Columns, Environment, Scope};
use crate::parse::{parse, Parsed, Statement};
use crate::value::{from_wire, Value};
use crate::variables::{definition, GlobalVariables, Kind, VariableScope};

/// What every session shares.
pub struct Shared {
    pub db: Arc<Database>,
    pub globals: GlobalVariables,
    pub accounts: Arc<Accounts>,
    /// Explicit column DEFAULTs by table (the engine's catalog has none).
    pub defaults: RwLock<HashMap<TableId, Vec<Option<Value>>>>,
}

/// Makes a [`SqlSession`] per connection.
pub struct SqlService {
    shared: Arc<Shared>,
}

impl SqlService {
    pub fn new(db: Arc<Database>, globals: GlobalVariables, accounts: Arc<Accounts>) -> SqlService {
        SqlService { shared: Arc::new(Shared { db, globals, accounts, defaults: RwLock::new(HashMap::new()) }) }
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl SessionFactory for SqlService {
    type Session = SqlSession;

    fn open_session(&self, info: &ConnectionInfo) -> Result<SqlSession, MysqlError> {
        if let Some(database) = &info.database {
            // The privilege first, as MySQL does: 1044 does not reveal
            // whether the database exists.
            Principal::new(&self.shared, info).require_database_access(database)?;
            if !self.shared.db.engine().databases().contains(database) {
                return Err(unknown_database(database));
            }
        }
        Ok(SqlSession {
            shared: Arc::clone(&self.shared),
            info: info.clone(),
            state: State { database: info.database.clone(), ..State::default() },
            prepared: HashMap::new(),
        })
    }
}

/// The session's state other than prepared statements.
#[derive(Default)]
pub struct State {
    pub database: Option<String>,
    pub trx: Option<Transaction>,
    /// BEGIN was issued: the transaction lasts until COMMIT or ROLLBACK.
    pub explicit: bool,
    pub autocommit_off: bool,
    pub last_insert_id: u64,
    pub variables: HashMap<&'static str, Value>,
    /// The last statement's warnings, for SHOW WARNINGS.
    pub warnings: Vec<Warning>,
}

/// A note or warning a statement raised (SHOW WARNINGS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub code: u16,
    pub message: String,
}

/// Warnings kept per statement; MySQL's `max_error_count` default.
pub const WARNINGS_MAX: usize = 1024;

pub struct SqlSession {
    shared: Arc<Shared>,
    info: ConnectionInfo,
    state: State,
    prepared: HashMap<u32, Arc<(Parsed, String)>>,
}

/// What expressions see of the session.
pub struct Env<'a> {
    pub shared: &'a Shared,
    pub info: &'a ConnectionInfo,
    pub database: Option<&'a str>,
    pub variables: &'a HashMap<&'static str, Value>,
    pub last_insert_id: u64,
    pub autocommit: bool,
}

impl Environment for Env<'_> {
    fn database(&self) -> Option<String> {
        self.database.map(str::to_string)
    }

    fn system_variable(&self, name: &str, scope: VariableScope) -> SqlResult<Value> {
        let definition = definition(name).ok_or_else(|| unknown_variable(name))?;
        if scope == VariableScope::Session && definition.kind != Kind::Both {
            return Err(MysqlError::new(1238, "HY000", format!("Variable '{}' is a GLOBAL variable", definition.name)));
        }
        if scope != VariableScope::Global {
            if definition.name == "autocommit" {
                return Ok(Value::Int(i64::from(self.autocommit)));
            }
            if let Some(value) = self.variables.get(definition.name) {
                return Ok(value.clone());
            }
        }
        let (enabled, threshold) = self.shared.db.binlog().large_transaction_optimization();
        Ok(match definition.name {
            "binlog_large_transaction_optimization_enabled" => Value::Int(i64::from(enabled)),
            "binlog_large_transaction_optimization_threshold" => Value::UInt(threshold),
            "server_uuid" => Value::Bytes(self.shared.db.server_uuid().to_string().into_bytes()),
            "gtid_executed" => Value::Bytes(self.shared.db.binlog().executed_gtids().to_string().into_bytes()),
            "gtid_purged" => Value::Bytes(self.shared.db.binlog().purged_gtids().to_string().into_bytes()),
            _ => self.shared.globals.get(definition.name).unwrap_or(Value::Null),
        })
    }

    fn last_insert_id(&self) -> u64 {
        self.last_insert_id
    }

    fn connection_id(&self) -> u32 {
        self.info.connection_id
    }

    fn user(&self) -> String {
        format!("{}@{}", self.info.user, self.info.host)
    }

    fn current_user(&self) -> String {
        format!("{}@{}", self.info.account.user, self.info.account.host)
    }

    fn is_query_killed(&self) -> bool {
        self.info.handle.is_query_killed()
    }
}

/// Everything a statement needs, borrowed apart so the transaction can be
/// mutated while expressions read the rest.
pub struct Context<'a> {
    pub shared: &'a Shared,
    pub env: Env<'a>,
    pub sql: &'a str,
    pub params: &'a [Value],
    /// The previous statement's warnings.
    pub warnings: &'a [Warning],
}

impl Context<'_> {
    pub fn db(&self) -> &Database {
        &self.shared.db
    }

    /// The session's account and its grants as of now.
    pub fn principal(&self) -> Principal<'_> {
        Principal::new(self.shared, self.env.info)
    }

    /// `privilege` on `*.*`, or 1227 ("Access denied; you need (at least
    /// one of) the ... privilege(s) for this operation").
    pub fn require(&self, privilege: Privilege) -> SqlResult<()> {
        self.principal().require(privilege)
    }

    /// At least one of `privileges` on `*.*`, or 1227 naming them.
    pub fn require_any(&self, privileges: &[Privilege]) -> SqlResult<()> {
        self.principal().require_any(privileges)
    }

    /// A scope for constants (no row).
    pub fn constants<'s>(&'s self, columns: &'s Columns) -> Scope<'s> {
        Scope { columns, row: None, params: self.params, environment: &self.env, aggregates: None }
    }

    pub fn statement_context(&self) -> StatementContext {
        StatementContext {
            thread_id: self.env.info.connection_id,
            database: self.env.database.unwrap_or_default().to_string(),
            timestamp: binlog::log::now_seconds(),
        }
    }

    pub fn database(&self, named: Option<&str>) -> SqlResult<String> {
        match named.or(self.env.database) {
            Some(name) => Ok(name.to_string()),
            None => Err(crate::error::no_database()),
        }
    }
}

impl SqlSession {
    /// The session's account and its grants as of now (re-read at each
    /// call, so a REVOKE applies to the next command).
    pub fn principal(&self) -> Principal<'_> {
        Principal::new(&self.shared, &self.info)
    }

    /// `privilege` on `*.*`, or 1227.
    pub fn require(&self, privilege: Privilege) -> Result<(), MysqlError> {
        self.principal().require(privilege)
    }

    /// At least one of `privileges` on `*.*`, or 1227 naming them.
    pub fn require_any(&self, privileges: &[Privilege]) -> Result<(), MysqlError> {
        self.principal().require_any(privileges)
    }

    /// For COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID and COM_REGISTER_SLAVE:
    /// REPLICATION SLAVE, or MySQL's 1227 "Access denied; you need (at
    /// least one of) the REPLICATION SLAVE privilege(s) for this operation".
    pub fn require_replication_slave(&self) -> Result<(), MysqlError> {
        self.require(Privilege::ReplicationSlave)
    }

    fn run(&mut self, parsed: &Parsed, sql: &str, params: &[Value]) -> SqlResult<QueryResponse<'static>> {
        if params.len() != parsed.param_count {
            return Err(MysqlError::wrong_arguments("mysqld_stmt_execute"));
        }
        let state = &mut self.state;
        let autocommit = !state.autocommit_off;
        let context = Context {
            shared: &self.shared,
            env: Env {
                shared: &self.shared,
                info: &self.info,
                database: state.database.as_deref(),
                variables: &state.variables,
                last_insert_id: state.last_insert_id,
                autocommit,
            },
            sql,
            params,
            warnings: &state.warnings,
        };
        let transaction = Transactions { trx: &mut state.trx, explicit: &mut state.explicit, autocommit };
        let result = crate::execute::execute(&parsed.statement, &context, transaction);
        let keeps_warnings = matches!(&parsed.statement, Statement::Show(crate::parse::Show::Warnings | crate::parse::Show::Errors));
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(error) => {
                state.warnings.clear();
                return Err(error);
            }
        };
        let Outcome { mut response, use_database, last_insert_id, set_variables, autocommit_change, mut warnings } = outcome;
        if !keeps_warnings {
            warnings.truncate(WARNINGS_MAX);
            if let QueryResponse::Ok(ok) = &mut response {
                ok.warnings = u16::try_from(warnings.len()).unwrap_or(u16::MAX);
            }
            state.warnings = warnings;
        }
        if let Some(database) = use_database {
            state.database = database;
        }
        if let Some(id) = last_insert_id {
            state.last_insert_id = id;
        }
        for (name, value) in set_variables {
            state.variables.insert(name, value);
        }
        if let Some(on) = autocommit_change {
            state.autocommit_off = !on;
        }
        Ok(response)
    }
}

/// The session's transaction, lent to one statement.
pub struct Transactions<'a> {
    pub trx: &'a mut Option<Transaction>,
    pub explicit: &'a mut bool,
    pub autocommit: bool,
}

impl Transactions<'_> {
    /// Commits (or for a read-only one, just ends) the open transaction.
    pub fn commit(&mut self, context: &Context<'_>) -> SqlResult<()> {
        *self.explicit = false;
        let Some(trx) = self.trx.take() else { return Ok(()) };
        if trx.is_read_only() {
            trx.rollback();
            return Ok(());
        }
        context.db().commit(trx, &context.statement_context()).map(|_| ()).map_err(database_error)
    }

    pub fn rollback(&mut self) {
        *self.explicit = false;
        if let Some(trx) = self.trx.take() {
            trx.rollback();
        }
    }

    pub fn begin(&mut self, context: &Context<'_>) -> SqlResult<()> {
        self.commit(context)?;
        *self.trx = Some(context.db().begin());
        *self.explicit = true;
        Ok(())
    }

    /// True when a statement's transaction ends with the statement.
    fn statement_scoped(&self) -> bool {
        self.autocommit && !*self.explicit
    }

    /// Runs a reading statement in the open transaction, or in one of its
    /// own that ends with it.
    pub fn read<T>(&mut self, context: &Context<'_>, f: impl FnOnce(&Transaction) -> SqlResult<T>) -> SqlResult<T> {
        if let Some(trx) = self.trx.as_ref() {
            let result = f(trx);
            if !trx.is_active() {
                self.rollback();
            }
            return result;
        }
        let trx = context.db().begin();
        let result = f(&trx);
        if self.statement_scoped() {
            trx.rollback();
        } else {
            *self.trx = Some(trx);
        }
        result
    }

    /// Runs a writing statement: statement-atomic, committed at its end
    /// under autocommit.
    pub fn write<T>(&mut self, context: &Context<'_>, f: impl FnOnce(&mut Transaction) -> SqlResult<T>) -> SqlResult<T> {
        let mut trx = self.trx.take().unwrap_or_else(|| context.db().begin());
        let savepoint = trx.savepoint();
        match f(&mut trx) {
            Ok(value) => {
                if self.statement_scoped() {
                    if trx.is_read_only() {
                        trx.rollback();
                    } else {
                        context.db().commit(trx, &context.statement_context()).map_err(database_error)?;
                    }
                } else {
                    *self.trx = Some(trx);
                }
                Ok(value)
            }
            Err(error) => {
                if !trx.is_active() {
                    // A deadlock: the engine rolled the whole transaction back.
                    *self.explicit = false;
                    drop(trx);
                } else if self.statement_scoped() {
                    trx.rollback();
                } else {
                    let _ = trx.rollback_to_savepoint(savepoint);
                    *self.trx = Some(trx);
                }
                Err(error)
            }
        }
    }
}

/// What a statement did, for the session to apply after it.
pub struct Outcome {
    pub response: QueryResponse<'static>,
    pub use_database: Option<Option<String>>,
    pub last_insert_id: Option<u64>,
    pub set_variables: Vec<(&'static str, Value)>,
    pub autocommit_change: Option<bool>,
    pub warnings: Vec<Warning>,
}

impl Outcome {
    pub fn new(response: impl Into<QueryResponse<'static>>) -> Outcome {
        Outcome { response: response.into(), use_database: None, last_insert_id: None, set_variables: Vec::new(), autocommit_change: None, warnings: Vec::new() }
    }

    pub fn ok() -> Outcome {
        Outcome::new(OkResponse::default())
    }
}

impl Session for SqlSession {
    fn process_kill(&mut self, connection_id: u32, registry: &protocol::Registry) -> Result<(), MysqlError> {
        crate::admin::kill_as(&self.principal(), &self.info.user, registry, connection_id, protocol::KillScope::Connection)
    }

    fn query(&mut self, sql: &str) -> Result<QueryResponse<'_>, MysqlError> {
        let parsed = parse(sql)?;
        self.run(&parsed, sql, &[])
    }

    fn init_db(&mut self, database: &str) -> Result<(), MysqlError> {
        self.principal().require_database_access(database)?;
        if !self.shared.db.engine().databases().iter().any(|name| name == database) {
            return Err(unknown_database(database));
        }
        self.state.database = Some(database.to_string());
        Ok(())
    }

    fn prepare(&mut self, statement_id: u32, sql: &str) -> Result<PreparedStatement, MysqlError> {
        let parsed = parse(sql)?;
        // Checked at prepare too, as MySQL does: the column definitions sent
        // back would otherwise describe tables the account may not read.
        // (Checked again at every execute, where grants may have changed.)
        let context = Context {
            shared: &self.shared,
            env: Env {
                shared: &self.shared,
                info: &self.info,
                database: self.state.database.as_deref(),
                variables: &self.state.variables,
                last_insert_id: self.state.last_insert_id,
                autocommit: !self.state.autocommit_off,
            },
            sql,
            params: &[],
            warnings: &self.state.warnings,
        };
        crate::authorize::authorize(&parsed.statement, &context)?;
        let columns = match &parsed.statement {
            Statement::Ast(ast) => match ast.as_ref() {
                sqlparser::ast::Statement::Query(query) => {
                    let database = self.state.database.clone();
                    crate::select::describe(query, self.shared.db.engine(), database.as_deref())?
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let param_count = u16::try_from(parsed.param_count).map_err(|_| MysqlError::new(1390, "HY000", "Prepared statement contains too many placeholders"))?;
        self.prepared.insert(statement_id, Arc::new((parsed, sql.to_string())));
        Ok(PreparedStatement { param_count, params: None, columns, warnings: 0 })
    }

    fn execute(&mut self, statement_id: u32, params: &[WireValue]) -> Result<QueryResponse<'_>, MysqlError> {
        let prepared = self
            .prepared
            .get(&statement_id)
            .cloned()
            .ok_or_else(|| MysqlError::unknown_statement(statement_id, "mysqld_stmt_execute"))?;
        let params: Vec<Value> = params.iter().map(from_wire).collect();
        self.run(&prepared.0, &prepared.1, &params)
    }

    fn close_statement(&mut self, statement_id: u32) {
        self.prepared.remove(&statement_id);
    }

    fn reset_connection(&mut self) -> Result<(), MysqlError> {
        if let Some(trx) = self.state.trx.take() {
            trx.rollback();
        }
        let database = self.state.database.take();
        self.state = State { database, ..State::default() };
        Ok(())
    }

    fn server_status(&self) -> StatusFlags {
        let mut flags = StatusFlags::empty();
        if !self.state.autocommit_off {
            flags |= StatusFlags::SERVER_STATUS_AUTOCOMMIT;
        }
        if self.state.trx.is_some() || self.state.explicit {
            flags |= StatusFlags::SERVER_STATUS_IN_TRANS;
        }
        flags
    }

    fn disconnect(&mut self) {
        if let Some(trx) = self.state.trx.take() {
            trx.rollback();
        }
    }
}
