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

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use database::WrittenAhead;
use database::{CommitRequest, Database, LoggedStatement, RowJsonDiffs, StatementContext, StatementLog};
use engine::Transaction;
use protocol::{
    BinlogDumpGtidRequest, BinlogDumpRequest, BinlogStream, ConnectionInfo, MysqlError, OkResponse, PreparedStatement, QueryResponse,
    RegisterReplica, Session, SessionFactory, StatusFlags, Value as WireValue,
};

use crate::access::accounts::Accounts;
use crate::access::authorize::Principal;
use crate::access::privileges::Privilege;
use crate::error::{database_error, unknown_database, unknown_variable, SqlResult};
use crate::eval::expr::{Columns, Environment, Scope};
use crate::eval::value::{from_wire_parameter, Value};
use crate::exec::gtid_next::GtidNext;
use crate::locking::statement_locks::lock_wait_timeout;
use crate::parse::{parse, Parsed, Statement};
use crate::replica::source_settings::ReplicaSource;
use crate::replica::threads::ReplicaThreads;
use crate::variables::{definition, GlobalVariables, Kind, VariableScope};
use source::Replicas;
use source::{gtid_set_from_request, DumpSettings, DumpStart};

/// What every session shares.
pub struct Shared {
    pub db: Arc<Database>,
    pub globals: GlobalVariables,
    pub accounts: Arc<Accounts>,
    /// Replicas registered with COM_REGISTER_SLAVE (SHOW REPLICAS).
    pub replicas: Replicas,
    /// This server's own source, when it is a replica.
    pub replica_source: ReplicaSource,
    /// The replica's receiver and applier threads (START / STOP REPLICA).
    pub replica: ReplicaThreads,
    /// This value's own Arc, for what must outlive a statement (the
    /// replica threads' sessions).
    pub this: Weak<Shared>,
    /// FLUSH TABLES WITH READ LOCK and LOCK TABLES, across sessions.
    pub(crate) locks: crate::locking::ServerLocks,
    /// Semi-synchronous replication as a source: its settings, the
    /// replicas' acknowledgements and the binlog's wait for them.
    pub semi_sync: Arc<source::SemiSyncSource>,
    /// `Com_stmt_reprepare`: executions of prepared statements whose kept
    /// plan no longer held (`exec/select_plan.rs`).
    pub(crate) stmt_reprepares: std::sync::atomic::AtomicU64,
}

/// Makes a [`SqlSession`] per connection.
pub struct SqlService {
    shared: Arc<Shared>,
}

impl SqlService {
    pub fn new(db: Arc<Database>, globals: GlobalVariables, accounts: Arc<Accounts>, replica_source: ReplicaSource) -> SqlService {
        let shared = Arc::new_cyclic(|this| Shared {
            db,
            globals,
            accounts,
            replicas: Replicas::default(),
            replica_source,
            replica: ReplicaThreads::default(),
            this: this.clone(),
            locks: crate::locking::ServerLocks::default(),
            semi_sync: Arc::new(source::SemiSyncSource::default()),
            stmt_reprepares: Default::default(),
        });
        crate::variables::row_logging::publish_global_row_logging(&shared.db, &shared.globals);
        crate::variables::semi_sync::reconcile_aliases(&shared.globals);
        crate::variables::semi_sync::publish_source_settings(&shared.semi_sync, &shared.globals);
        shared.db.set_replica_acks(Some(shared.semi_sync.clone()));
        SqlService { shared }
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl SessionFactory for SqlService {
    type Session = SqlSession;

    fn open_session(&self, info: &ConnectionInfo) -> Result<SqlSession, MysqlError> {
        // TCP without TLS is insecure transport, loopback included, as in
        // MySQL (only a Unix socket would be secure without TLS).
        if info.tls.is_none() && matches!(self.shared.globals.get("require_secure_transport"), Some(Value::Int(1))) {
            return Err(MysqlError::new(
                3159,
                "HY000",
                "Connections using insecure transport are prohibited while --require_secure_transport=ON.",
            ));
        }
        if let Some(database) = &info.database {
            // The privilege first, as MySQL does: 1044 does not reveal
            // whether the database exists.
            Principal::new(&self.shared, info).require_database_access(database)?;
            // CDC readers (python-mysql-replication) open their metadata
            // connection with information_schema as the schema.
            if !database.eq_ignore_ascii_case("information_schema") && !self.shared.db.catalog().databases().contains(database) {
                return Err(unknown_database(database));
            }
        }
        let mut state = State { database: info.database.clone(), ..State::default() };
        state.variables.extend(handshake_character_sets(info.collation));
        state.refresh_character_sets(&self.shared);
        Ok(SqlSession { shared: Arc::clone(&self.shared), info: info.clone(), state, prepared: HashMap::new() })
    }
}

/// The session character sets the handshake's collation asks for, as
/// MySQL sets them: client, connection and results in its character set.
/// A collation binlogd does not know leaves the server's defaults.
fn handshake_character_sets(collation: u8) -> Vec<(&'static str, Value)> {
    let Some(collation) = crate::charsets::collation_by_id(u16::from(collation)) else { return Vec::new() };
    let name = |text: &str| Value::Bytes(text.as_bytes().to_vec());
    vec![
        ("character_set_client", name(collation.charset)),
        ("character_set_connection", name(collation.charset)),
        ("character_set_results", name(collation.charset)),
        ("collation_connection", name(collation.name)),
    ]
}

impl State {
    /// Recomputes `character_sets` from the variables (the session's value,
    /// else the global one).
    fn refresh_character_sets(&mut self, shared: &Shared) {
        let value = |name: &str| self.variables.get(name).cloned().or_else(|| shared.globals.get(name)).unwrap_or(Value::Null);
        self.character_sets = crate::charsets::session_character_sets(&value("character_set_client"), &value("character_set_results"));
    }
}

/// A session's user variables are bounded like everything else.
const USER_VARIABLES_MAX: usize = 1024;

/// A prepared statement: parsed once, at COM_STMT_PREPARE, and its plan
/// kept from its first execution.
struct Prepared {
    parsed: Parsed,
    sql: String,
    /// The current database at PREPARE.
    database: Option<String>,
    plan: crate::exec::select_plan::PlanSlot,
}

/// The session's state other than prepared statements.
#[derive(Default)]
pub struct State {
    pub database: Option<String>,
    pub trx: Option<Transaction>,
    /// What the open transaction has written ahead of its commit.
    pub ahead: Option<WrittenAhead>,
    /// The open transaction's statements logged with their own row settings.
    pub statements: StatementLog,
    /// BEGIN was issued: the transaction lasts until COMMIT or ROLLBACK.
    pub explicit: bool,
    pub autocommit_off: bool,
    pub last_insert_id: u64,
    pub variables: HashMap<&'static str, Value>,
    /// The last statement's warnings, for SHOW WARNINGS.
    pub warnings: Vec<Warning>,
    /// Warnings its streamed result raised after the statement returned,
    /// added to `warnings` once the last row is sent.
    pub late_warnings: LateWarnings,
    /// `@name` user variables, by lower-case name (MySQL's are
    /// case-insensitive). Replicas and CDC readers declare themselves with
    /// them (`@master_binlog_checksum`, `@master_heartbeat_period`, ...).
    pub user_variables: HashMap<String, Value>,
    /// `gtid_next` (see `exec/gtid_next.rs`); a Mutex so statements can change
    /// it through their shared [`Context`].
    pub gtid_next: parking_lot::Mutex<GtidNext>,
    /// The replica worker's applied position its next DDL statement
    /// commits with ([`SqlSession::applier_slot`]); never set in a
    /// client's session.
    pub applier_slot: parking_lot::Mutex<Option<engine::ApplierSlot>>,
    /// The format and table maps BINLOG statements gave.
    pub binlog_statement: crate::exec::binlog_statement::BinlogStatementState,
    /// The global read lock and table locks this session holds.
    pub locks: crate::locking::SessionLocks,
    pub characteristics: Characteristics,
    /// `character_set_client` and `character_set_results` as the protocol
    /// converts with them, kept current by every SET that changes them.
    pub character_sets: protocol::CharacterSets,
}

/// Isolation and access mode: `SET TRANSACTION`'s for the next
/// transaction only, and the open transaction's access mode.
#[derive(Debug, Default)]
pub struct Characteristics {
    pub next_isolation: Option<crate::parse::IsolationLevel>,
    pub next_read_only: Option<bool>,
    /// The open transaction is READ ONLY (1792 for its writes).
    pub read_only: bool,
    /// The open transaction's savepoints, oldest first (names compared
    /// without case, as MySQL does).
    pub savepoints: Vec<(String, engine::Savepoint)>,
}

/// A note or warning a statement raised (SHOW WARNINGS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// `Note` or `Warning`, as SHOW WARNINGS prints it.
    pub level: &'static str,
    pub code: u16,
    pub message: String,
}

/// Warnings kept per statement; MySQL's `max_error_count` default.
pub const WARNINGS_MAX: usize = 1024;

/// Where a streamed result's rows put their warnings: shared by the
/// session and the stream, which outlives the statement's borrow of it.
pub type LateWarnings = Arc<parking_lot::Mutex<Vec<Warning>>>;

pub struct SqlSession {
    shared: Arc<Shared>,
    info: ConnectionInfo,
    state: State,
    prepared: HashMap<u32, Arc<Prepared>>,
}

/// What expressions see of the session.
pub struct Env<'a> {
    pub shared: &'a Shared,
    pub info: &'a ConnectionInfo,
    pub database: Option<&'a str>,
    pub variables: &'a HashMap<&'static str, Value>,
    pub user_variables: &'a HashMap<String, Value>,
    pub last_insert_id: u64,
    pub autocommit: bool,
    pub gtid_next: &'a parking_lot::Mutex<GtidNext>,
    /// When the statement started (NOW(), CURRENT_TIMESTAMP), microseconds
    /// since the epoch: one value for every row of a statement.
    pub statement_time_micros: i64,
    /// The statement changes rows (INSERT, REPLACE, UPDATE, DELETE): in
    /// strict mode its warnings from evaluation are errors, as in mysqld.
    pub writes_rows: bool,
    /// Warnings raised while evaluating expressions (division by zero),
    /// added to the statement's own.
    pub evaluation_warnings: std::cell::RefCell<Vec<Warning>>,
    /// Where the rows of a streamed result, produced after the statement
    /// returned, put their warnings.
    pub late_warnings: &'a LateWarnings,
}

impl Env<'_> {
    /// `f` of the session's value of `name` (its own, else the global
    /// one), read in place: for variables kept as plain values, which
    /// [`Environment::system_variable`] returns as they are, such as
    /// `sql_mode` or `transaction_isolation`, on paths that run at every
    /// statement and need not copy them.
    pub(crate) fn with_variable<R>(&self, name: &'static str, f: impl FnOnce(&Value) -> R) -> Option<R> {
        match self.variables.get(name) {
            Some(value) => Some(f(value)),
            None => self.shared.globals.with(name, f),
        }
    }
}

impl Environment for Env<'_> {
    fn statement_time_micros(&self) -> i64 {
        self.statement_time_micros
    }

    fn database(&self) -> Option<String> {
        self.database.map(str::to_string)
    }

    fn system_variable(&self, name: &str, scope: VariableScope) -> SqlResult<Value> {
        let definition = definition(name).ok_or_else(|| unknown_variable(name))?;
        match (definition.kind, scope) {
            (Kind::Global, VariableScope::Session) => {
                return Err(MysqlError::new(1238, "HY000", format!("Variable '{}' is a GLOBAL variable", definition.name)))
            }
            (Kind::Session, VariableScope::Global) => {
                return Err(MysqlError::new(1238, "HY000", format!("Variable '{}' is a SESSION variable", definition.name)))
            }
            _ => {}
        }
        if definition.name == "gtid_next" {
            return Ok(Value::Bytes(self.gtid_next.lock().text().into_bytes()));
        }
        if scope != VariableScope::Global {
            match definition.name {
                // The session clock: SET TIMESTAMP's value, else now.
                "timestamp" => {
                    let micros = self.statement_time_micros;
                    return Ok(Value::Decimal(format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)));
                }
                "pseudo_thread_id" => return Ok(Value::Int(i64::from(self.connection_id()))),
                _ => {}
            }
            if definition.name == "autocommit" {
                return Ok(Value::Int(i64::from(self.autocommit)));
            }
            if let Some(value) = self.variables.get(definition.name) {
                return Ok(value.clone());
            }
        }
        let binlog = self.shared.db.binlog_status();
        let (enabled, threshold) = binlog.large_transaction_optimization();
        Ok(match definition.name {
            "binlog_large_transaction_optimization_enabled" => Value::Int(i64::from(enabled)),
            "binlog_large_transaction_optimization_threshold" => Value::UInt(threshold),
            // What the binlog really uses, whatever the option text said.
            "server_id" => Value::UInt(u64::from(binlog.options().server_id)),
            "server_uuid" => Value::Bytes(binlog.options().server_uuid.to_string().into_bytes()),
            "binlog_checksum" => Value::Bytes(if binlog.checksum() { b"CRC32".to_vec() } else { b"NONE".to_vec() }),
            "binlog_expire_logs_seconds" => Value::UInt(binlog.options().binlog_expire_logs_seconds),
            "binlog_group_commit_sync_delay" => {
                // MySQL's unit: microseconds.
                Value::UInt(u64::try_from(binlog.options().binlog_group_commit_sync_delay.as_micros()).unwrap_or(u64::MAX))
            }
            "binlog_group_commit_sync_no_delay_count" => Value::UInt(binlog.options().binlog_group_commit_sync_no_delay_count as u64),
            "max_binlog_cache_size" => Value::UInt(binlog.options().max_binlog_cache_size),
            "log_bin_basename" => Value::Bytes(binlog.options().dir.join(&binlog.options().basename).display().to_string().into_bytes()),
            "log_bin_index" => {
                let index = format!("{}.index", binlog.options().basename);
                Value::Bytes(binlog.options().dir.join(index).display().to_string().into_bytes())
            }
            "gtid_executed" => Value::Bytes(crate::exec::gtid_next::gtid_set_text(&self.shared.db.executed_gtids()).into_bytes()),
            "gtid_purged" => Value::Bytes(crate::exec::gtid_next::gtid_set_text(&binlog.purged_gtids()).into_bytes()),
            _ => self.shared.globals.get(definition.name).unwrap_or(Value::Null),
        })
    }

    /// MariaDB 10.11's mariadb-binlog (program_name `mysqlbinlog`) reads
    /// `SELECT VERSION()` before `--read-from-remote-server` and accepts
    /// only versions starting with 3, 4, 5 or 1 ("Master reported
    /// unrecognized MariaDB version '8.4.0-binlogd'"); what it does with
    /// the answer is pick binlog format v4 for '5'. So that one client
    /// hears a 5.7-prefixed version; everyone else, @@version included,
    /// sees 8.4.
    fn version(&self) -> SqlResult<Value> {
        let program = self.info.attributes.iter().find(|(key, _)| key == "program_name").map(|(_, value)| value.as_str());
        if matches!(program, Some("mysqlbinlog" | "mariadb-binlog")) {
            return Ok(Value::Bytes(format!("5.7.99-{}", crate::variables::SERVER_VERSION).into_bytes()));
        }
        self.system_variable("version", VariableScope::Default)
    }

    fn user_variable(&self, name: &str) -> Value {
        self.user_variables.get(&name.to_ascii_lowercase()).cloned().unwrap_or(Value::Null)
    }

    fn last_insert_id(&self) -> u64 {
        self.last_insert_id
    }

    /// MySQL's CONNECTION_ID() is `pseudo_thread_id` once a session (a
    /// binlog replay) set it.
    fn connection_id(&self) -> u32 {
        crate::variables::replay::pseudo_thread_id(self.variables).unwrap_or(self.info.connection_id)
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

    fn max_allowed_packet_bytes(&self) -> u64 {
        global_max_allowed_packet_bytes(self.shared)
    }

    fn warning(&self, code: u16, message: String) {
        let mut warnings = self.evaluation_warnings.borrow_mut();
        if warnings.len() < WARNINGS_MAX {
            warnings.push(Warning { level: "Warning", code, message });
        }
    }

    /// MySQL's ERROR_FOR_DIVISION_BY_ZERO: without it, silent; with it, a
    /// warning, or error 1365 in a strict-mode write.
    fn division_by_zero(&self) -> SqlResult<()> {
        let mode = crate::eval::temporal::SqlMode::of(self);
        if !mode.error_for_division_by_zero {
            return Ok(());
        }
        let error = MysqlError::new(1365, "22012", "Division by 0");
        if mode.strict && self.writes_rows {
            return Err(error);
        }
        let mut warnings = self.evaluation_warnings.borrow_mut();
        if warnings.len() < WARNINGS_MAX {
            warnings.push(Warning { level: "Warning", code: error.code, message: error.message });
        }
        Ok(())
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
    /// Where a prepared statement keeps its plan; `None` for a statement
    /// of COM_QUERY, planned every time.
    pub plan_slot: Option<&'a crate::exec::select_plan::PlanSlot>,
    /// The session's [`State::applier_slot`], taken by its next DDL.
    pub applier_slot: &'a parking_lot::Mutex<Option<engine::ApplierSlot>>,
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
        // The session's pseudo_thread_id and clock, so a replayed
        // statement is logged with the original's connection id and time.
        StatementContext {
            thread_id: self.env.connection_id(),
            database: self.env.database.unwrap_or_default().to_string(),
            timestamp: u32::try_from(self.env.statement_time_micros / 1_000_000).unwrap_or(u32::MAX),
            statements: StatementLog::new(),
            compression_level_zstd: self.compression_level_zstd(),
        }
    }

    /// The session's `binlog_transaction_compression_level_zstd` when its
    /// `binlog_transaction_compression` is ON (each the session's value,
    /// else the global one).
    fn compression_level_zstd(&self) -> Option<i32> {
        let value = |name: &'static str| self.env.variables.get(name).cloned().or_else(|| self.shared.globals.get(name));
        if value("binlog_transaction_compression") != Some(Value::Int(1)) {
            return None;
        }
        let level = match value("binlog_transaction_compression_level_zstd") {
            Some(Value::Int(level)) => level,
            Some(Value::UInt(level)) => i64::try_from(level).unwrap_or(i64::MAX),
            _ => i64::from(binlog::compression::LEVEL_ZSTD_DEFAULT),
        };
        Some(level.clamp(i64::from(binlog::compression::LEVEL_ZSTD_MIN), i64::from(binlog::compression::LEVEL_ZSTD_MAX)) as i32)
    }

    /// The context a commit builds its events in: this statement's, with
    /// the transaction's statements that log rows their own way.
    pub fn commit_context(&self, statements: StatementLog) -> StatementContext {
        StatementContext { statements, ..self.statement_context() }
    }

    /// DDL through the database, with the GTID `gtid_next` gives: the
    /// session's owned one (then gtid_next must be set again), or the
    /// next automatic one. (An executed one never gets here: skipped.)
    pub fn execute_ddl<T>(
        &self,
        statement: &StatementContext,
        apply: impl FnOnce(&engine::Engine) -> Result<T, engine::EngineError>,
    ) -> Result<T, database::DatabaseError> {
        // A replica worker's position, committed with the DDL; gone if
        // the statement fails (the worker stops before it).
        let slot = self.applier_slot.lock().take();
        let mut next = self.env.gtid_next.lock();
        let GtidNext::Owned(owned) = &*next else {
            drop(next);
            return Ok(self.db().execute_replicated_ddl(statement, self.sql, database::NextGtid::Automatic, slot, apply)?.0);
        };
        let given = crate::variables::replay::given_gtid(owned.gtid(), self.env.variables);
        let value = self.db().execute_replicated_ddl(statement, self.sql, database::NextGtid::Owned { owned, given }, slot, apply)?.0;
        next.finish();
        Ok(value)
    }

    pub fn database(&self, named: Option<&str>) -> SqlResult<String> {
        match named.or(self.env.database) {
            Some(name) => Ok(name.to_string()),
            None => Err(crate::error::no_database()),
        }
    }
}

impl SqlSession {
    /// A session for a server thread (the replica applier's "system
    /// user"): every privilege, no client, its own process-list entry
    /// outside the server's list.
    pub fn system(shared: Arc<Shared>) -> SqlSession {
        let peer = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let registration = protocol::Registry::new().register(peer, None);
        let info = ConnectionInfo {
            connection_id: registration.handle().id(),
            user: "system user".into(),
            host: String::new(),
            peer,
            account: protocol::StoredAccount::new("system user", "", protocol::Credential::Native(None)),
            database: None,
            capabilities: protocol::CapabilityFlags::empty(),
            collation: protocol::resultset::UTF8MB4_GENERAL_CI as u8,
            attributes: Vec::new(),
            handle: registration.handle().clone(),
            system_thread: true,
            tls: None,
        };
        SqlSession { shared, info, state: State::default(), prepared: HashMap::new() }
    }

    /// The current database (`USE`), set without the checks a client's
    /// USE makes: the replica applier runs a source's statement where the
    /// source ran it, which may not exist yet (CREATE DATABASE).
    pub fn set_database(&mut self, database: Option<String>) {
        self.state.database = database;
    }

    /// The session's gtid_next, for the replica applier to hand it an
    /// owned GTID.
    pub fn gtid_next(&mut self) -> &mut GtidNext {
        self.state.gtid_next.get_mut()
    }

    /// The applied position the session's next DDL statement commits with
    /// in its engine DDL record: for the replica applier's worker, which
    /// takes back a slot still here after the statement (one that reached
    /// no engine DDL) and commits it by itself.
    pub fn applier_slot(&mut self) -> &mut Option<engine::ApplierSlot> {
        self.state.applier_slot.get_mut()
    }

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

    /// Runs one statement; `param_warnings` are the warnings its parameters
    /// raised, the first of the statement's.
    fn run(
        &mut self,
        parsed: &Parsed,
        sql: &str,
        params: &[Value],
        param_warnings: Vec<Warning>,
        plan_slot: Option<&crate::exec::select_plan::PlanSlot>,
    ) -> SqlResult<QueryResponse<'static>> {
        if params.len() != parsed.param_count {
            return Err(MysqlError::wrong_arguments("mysqld_stmt_execute"));
        }
        let state = &mut self.state;
        state.late_warnings.lock().clear();
        let autocommit = !state.autocommit_off;
        let context = Context {
            shared: &self.shared,
            env: Env {
                shared: &self.shared,
                info: &self.info,
                database: state.database.as_deref(),
                variables: &state.variables,
                user_variables: &state.user_variables,
                last_insert_id: state.last_insert_id,
                autocommit,
                gtid_next: &state.gtid_next,
                statement_time_micros: crate::variables::replay::session_clock_micros(&state.variables),
                writes_rows: writes_rows(&parsed.statement),
                evaluation_warnings: std::cell::RefCell::new(param_warnings),
                late_warnings: &state.late_warnings,
            },
            sql,
            params,
            warnings: &state.warnings,
            plan_slot,
            applier_slot: &state.applier_slot,
        };
        let transaction = Transactions {
            trx: &mut state.trx,
            ahead: &mut state.ahead,
            statements: &mut state.statements,
            explicit: &mut state.explicit,
            autocommit,
            binlog_statement: &mut state.binlog_statement,
            locks: &mut state.locks,
            characteristics: &mut state.characteristics,
        };
        let result = crate::exec::dispatch::execute(&parsed.statement, &context, transaction);
        let evaluation_warnings = context.env.evaluation_warnings.take();
        let keeps_warnings = matches!(&parsed.statement, Statement::Show(crate::parse::Show::Warnings | crate::parse::Show::Errors));
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(error) => {
                state.warnings.clear();
                return Err(error);
            }
        };
        let Outcome { mut response, use_database, last_insert_id, set_variables, set_user_variables, autocommit_change, mut warnings } =
            outcome;
        if !keeps_warnings {
            warnings.splice(0..0, evaluation_warnings);
            warnings.truncate(WARNINGS_MAX);
            let count = u16::try_from(warnings.len()).unwrap_or(u16::MAX);
            match &mut response {
                QueryResponse::Ok(ok) => ok.warnings = count,
                QueryResponse::ResultSet(result) => result.warnings = result.warnings.max(count),
                QueryResponse::Stream(stream) => stream.warnings = stream.warnings.max(count),
            }
            state.warnings = warnings;
        }
        if let Some(database) = use_database {
            state.database = database;
        }
        if let Some(id) = last_insert_id {
            state.last_insert_id = id;
        }
        let charsets_changed = set_variables.iter().any(|(name, _)| name.starts_with("character_set_"));
        for (name, value) in set_variables {
            state.variables.insert(name, value);
        }
        if charsets_changed {
            state.refresh_character_sets(&self.shared);
        }
        for (name, value) in set_user_variables {
            if state.user_variables.len() >= USER_VARIABLES_MAX && !state.user_variables.contains_key(&name) {
                return Err(MysqlError::new(
                    1105,
                    "HY000",
                    format!("binlogd keeps at most {USER_VARIABLES_MAX} user variables per session"),
                ));
            }
            state.user_variables.insert(name, value);
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
    /// What `trx` wrote ahead of its commit (`database::write_ahead`).
    pub ahead: &'a mut Option<WrittenAhead>,
    /// `trx`'s statements logged with their own row settings
    /// (`binlog_row_image`, ...), handed to the commit.
    pub statements: &'a mut StatementLog,
    pub explicit: &'a mut bool,
    pub autocommit: bool,
    /// What earlier BINLOG statements left (`exec/binlog_statement.rs`).
    pub binlog_statement: &'a mut crate::exec::binlog_statement::BinlogStatementState,
    pub locks: &'a mut crate::locking::SessionLocks,
    pub characteristics: &'a mut Characteristics,
}

impl Transactions<'_> {
    /// Whether a transaction is open (BEGIN, or autocommit off with one started).
    pub fn in_transaction(&self) -> bool {
        *self.explicit || self.trx.as_ref().is_some_and(|trx| !trx.is_read_only())
    }

    /// The COMMIT statement: [`Transactions::commit`], and with gtid_next
    /// set to an owned GTID and nothing open, an empty transaction with it
    /// (MySQL's way to mark a GTID executed).
    pub fn commit_statement(&mut self, context: &Context<'_>) -> SqlResult<()> {
        let nothing_written = self.trx.as_ref().is_none_or(Transaction::is_read_only);
        if nothing_written && matches!(&*context.env.gtid_next.lock(), GtidNext::Owned(_)) {
            *self.explicit = false;
            let trx = match self.trx.take() {
                Some(trx) => trx,
                None => self.new_transaction(context)?,
            };
            // A read-only transaction wrote nothing ahead.
            *self.ahead = None;
            self.statements.clear();
            return commit_owned(trx, None, StatementLog::new(), context);
        }
        self.commit(context)?;
        context.env.gtid_next.lock().finish();
        Ok(())
    }

    /// The ROLLBACK statement: also releases a GTID gtid_next owns.
    pub fn rollback_statement(&mut self, context: &Context<'_>) {
        self.rollback();
        context.env.gtid_next.lock().finish();
    }

    /// Commits (or for a read-only one, just ends) the open transaction,
    /// with the GTID gtid_next owns if it does.
    pub fn commit(&mut self, context: &Context<'_>) -> SqlResult<()> {
        *self.explicit = false;
        self.characteristics.read_only = false;
        self.characteristics.savepoints.clear();
        let ahead = self.ahead.take();
        let statements = std::mem::take(self.statements);
        let Some(trx) = self.trx.take() else { return Ok(()) };
        // A commit waits for another session's global read lock.
        let _writer = match trx.is_read_only() {
            true => None,
            false => match context.shared.locks.enter_writer(context.env.info.connection_id, || lock_wait_timeout(context)) {
                Ok(guard) => Some(guard),
                Err(error) => {
                    *self.trx = Some(trx);
                    *self.ahead = ahead;
                    *self.explicit = true;
                    return Err(error);
                }
            },
        };
        // Implicit commits (BEGIN, DDL) of a transaction that wrote nothing
        // do not consume the GTID; the statement that follows gets it.
        if !trx.is_read_only() && commit_with_gtid_next(context) {
            return commit_owned(trx, ahead, statements, context);
        }
        if trx.is_read_only() {
            trx.rollback();
            return Ok(());
        }
        context
            .db()
            .commit(CommitRequest { ahead, ..CommitRequest::new(trx, &context.commit_context(statements)) })
            .map(|_| ())
            .map_err(database_error)
    }

    pub fn rollback(&mut self) {
        *self.explicit = false;
        self.characteristics.read_only = false;
        self.characteristics.savepoints.clear();
        *self.ahead = None;
        self.statements.clear();
        if let Some(trx) = self.trx.take() {
            trx.rollback();
        }
    }

    pub fn begin(&mut self, context: &Context<'_>) -> SqlResult<()> {
        self.begin_with(context, None)
    }

    /// BEGIN / START TRANSACTION [READ ONLY | READ WRITE]: commits what is
    /// open and releases LOCK TABLES' locks, as MySQL does.
    pub fn begin_with(&mut self, context: &Context<'_>, read_only: Option<bool>) -> SqlResult<()> {
        self.commit(context)?;
        if !self.locks.tables.is_empty() {
            context.shared.locks.unlock_tables(context.env.info.connection_id);
            self.locks.tables.clear();
        }
        if read_only.is_some() {
            self.characteristics.next_read_only = read_only;
        }
        *self.trx = Some(self.new_transaction(context)?);
        *self.explicit = true;
        Ok(())
    }

    /// A transaction with the session's characteristics (or the ones SET
    /// TRANSACTION gave the next transaction).
    fn new_transaction(&mut self, context: &Context<'_>) -> SqlResult<Transaction> {
        let isolation = match self.characteristics.next_isolation.take() {
            Some(level) => level,
            None => context
                .env
                .with_variable("transaction_isolation", |value| match value {
                    Value::Bytes(text) => std::str::from_utf8(text).ok().and_then(crate::parse::IsolationLevel::from_variable_text),
                    _ => None,
                })
                .flatten()
                .unwrap_or(crate::parse::IsolationLevel::RepeatableRead),
        };
        let read_only = match self.characteristics.next_read_only.take() {
            Some(read_only) => read_only,
            None => context.env.with_variable("transaction_read_only", |value| *value == Value::Int(1)).unwrap_or(false),
        };
        self.characteristics.read_only = read_only;
        Ok(match crate::exec::transaction_statements::engine_isolation(isolation)? {
            engine::IsolationLevel::RepeatableRead => context.db().begin(),
            level => context.db().begin_with(level),
        })
    }

    /// True when a statement's transaction ends with the statement.
    pub fn is_statement_scoped(&self) -> bool {
        self.statement_scoped()
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
        let trx = self.new_transaction(context)?;
        let result = f(&trx);
        if self.statement_scoped() {
            self.characteristics.read_only = false;
            trx.rollback();
        } else {
            *self.trx = Some(trx);
        }
        result
    }

    /// Runs a writing statement: statement-atomic, committed at its end
    /// under autocommit.
    pub fn write<T>(&mut self, context: &Context<'_>, f: impl FnOnce(&mut Transaction) -> SqlResult<T>) -> SqlResult<T> {
        self.write_assigning(context, &[], f)
    }

    /// [`Transactions::write`] for an UPDATE that assigns `assigned`
    /// columns: a partial after image (`binlog_row_image` MINIMAL or
    /// NOBLOB) carries them even where their values did not change.
    pub fn write_assigning<T>(
        &mut self,
        context: &Context<'_>,
        assigned: &[usize],
        f: impl FnOnce(&mut Transaction) -> SqlResult<T>,
    ) -> SqlResult<T> {
        self.write_updating(context, assigned, &RefCell::default(), f)
    }

    /// [`Transactions::write_assigning`] for an UPDATE whose rows may log
    /// JSON columns as diffs (`binlog_row_value_options = PARTIAL_JSON`):
    /// once `f` has run, `json_diffs` holds those of each row it changed,
    /// in the order of its changes.
    pub fn write_updating<T>(
        &mut self,
        context: &Context<'_>,
        assigned: &[usize],
        json_diffs: &RefCell<Vec<RowJsonDiffs>>,
        f: impl FnOnce(&mut Transaction) -> SqlResult<T>,
    ) -> SqlResult<T> {
        let mut trx = match self.trx.take() {
            Some(trx) => trx,
            None => self.new_transaction(context)?,
        };
        if self.characteristics.read_only {
            if self.statement_scoped() {
                self.characteristics.read_only = false;
                trx.rollback();
            } else {
                *self.trx = Some(trx);
            }
            return Err(MysqlError::new(1792, "25006", "Cannot execute statement in a READ ONLY transaction."));
        }
        crate::locking::statement_locks::apply_lock_waits(&mut trx, context);
        let savepoint = trx.savepoint();
        let first_change = trx.changes().len();
        match f(&mut trx) {
            Ok(value) => {
                self.log_statement(context, first_change, trx.changes().len(), assigned, json_diffs.take());
                if self.statement_scoped() && commit_with_gtid_next(context) {
                    let ahead = self.ahead.take();
                    commit_owned(trx, ahead, std::mem::take(self.statements), context)?;
                } else if self.statement_scoped() {
                    let ahead = self.ahead.take();
                    let statements = std::mem::take(self.statements);
                    if trx.is_read_only() {
                        trx.rollback();
                    } else {
                        context
                            .db()
                            .commit(CommitRequest { ahead, ..CommitRequest::new(trx, &context.commit_context(statements)) })
                            .map_err(database_error)?;
                    }
                } else {
                    // A large transaction writes its events and redo while
                    // it runs, not all at COMMIT.
                    let written = match context.db().wants_write_ahead(&trx, self.ahead) {
                        true => context.db().write_ahead(&mut trx, self.ahead, &context.commit_context(self.statements.clone())),
                        false => Ok(()),
                    };
                    if let Err(error) = written {
                        if trx.is_active() {
                            let _ = trx.rollback_to_savepoint(savepoint);
                            let kept = trx.changes().len();
                            self.statements.retain(|statement| statement.first_change < kept);
                            *self.trx = Some(trx);
                        } else {
                            *self.explicit = false;
                            *self.ahead = None;
                            self.statements.clear();
                        }
                        return Err(database_error(error));
                    }
                    *self.trx = Some(trx);
                }
                Ok(value)
            }
            Err(error) => {
                if !trx.is_active() {
                    // A deadlock: the engine rolled the whole transaction back.
                    *self.explicit = false;
                    *self.ahead = None;
                    self.statements.clear();
                    drop(trx);
                } else if self.statement_scoped() {
                    *self.ahead = None;
                    self.statements.clear();
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

impl Transactions<'_> {
    /// Keeps the statement that made changes `first_change..change_count`
    /// when it logs its rows other than by default (or follows one that
    /// did, so the settings before it end there).
    fn log_statement(
        &mut self,
        context: &Context<'_>,
        first_change: usize,
        change_count: usize,
        assigned: &[usize],
        json_diffs: Vec<RowJsonDiffs>,
    ) {
        if change_count == first_change {
            return;
        }
        let logging = crate::variables::row_logging::statement_row_logging(context.db(), context.env.variables);
        if logging.is_default() && self.statements.is_empty() {
            return;
        }
        let partial = logging.image != database::RowImage::Full;
        self.statements.push(LoggedStatement {
            first_change,
            logging,
            assigned_columns: if partial { assigned.to_vec() } else { Vec::new() },
            query: if logging.rows_query { context.sql.to_string() } else { String::new() },
            // One list per change, or none: the events pair them by position.
            json_diffs: if logging.partial_json && json_diffs.len() == change_count - first_change { json_diffs } else { Vec::new() },
        });
    }
}

/// Whether gtid_next owns a GTID the transaction must commit with (a
/// statement-scoped one even with no changes: MySQL logs it empty).
fn commit_with_gtid_next(context: &Context<'_>) -> bool {
    matches!(&*context.env.gtid_next.lock(), GtidNext::Owned(_))
}

/// Commits `trx` with gtid_next's owned GTID; gtid_next must then be set
/// again (1837 otherwise).
fn commit_owned(trx: Transaction, ahead: Option<WrittenAhead>, statements: StatementLog, context: &Context<'_>) -> SqlResult<()> {
    let mut next = context.env.gtid_next.lock();
    let GtidNext::Owned(owned) = &*next else { unreachable!("checked by the caller") };
    let given = crate::variables::replay::given_gtid(owned.gtid(), context.env.variables);
    context
        .db()
        .commit(CommitRequest {
            trx,
            context: &context.commit_context(statements),
            ahead,
            gtid: database::NextGtid::Owned { owned, given },
            on_ordered: &|| {},
        })
        .map_err(database_error)?;
    next.finish();
    Ok(())
}

/// What a statement did, for the session to apply after it.
pub struct Outcome {
    pub response: QueryResponse<'static>,
    pub use_database: Option<Option<String>>,
    pub last_insert_id: Option<u64>,
    pub set_variables: Vec<(&'static str, Value)>,
    /// `SET @name = value`, lower-case names.
    pub set_user_variables: Vec<(String, Value)>,
    pub autocommit_change: Option<bool>,
    pub warnings: Vec<Warning>,
}

impl Outcome {
    pub fn new(response: impl Into<QueryResponse<'static>>) -> Outcome {
        Outcome {
            response: response.into(),
            use_database: None,
            last_insert_id: None,
            set_variables: Vec::new(),
            set_user_variables: Vec::new(),
            autocommit_change: None,
            warnings: Vec::new(),
        }
    }

    pub fn ok() -> Outcome {
        Outcome::new(OkResponse::default())
    }
}

/// The global max_allowed_packet, in bytes: what string functions are
/// bounded by, and a new session's packet bound.
fn global_max_allowed_packet_bytes(shared: &Shared) -> u64 {
    match shared.globals.get("max_allowed_packet") {
        Some(Value::Int(bytes)) => u64::try_from(bytes).unwrap_or(0),
        Some(Value::UInt(bytes)) => bytes,
        _ => protocol::ConnectionConfig::default().max_allowed_packet as u64,
    }
}

impl Session for SqlSession {
    fn max_allowed_packet_bytes(&self) -> Option<usize> {
        usize::try_from(global_max_allowed_packet_bytes(&self.shared)).ok()
    }

    fn process_kill(&mut self, connection_id: u32, registry: &protocol::Registry) -> Result<(), MysqlError> {
        crate::exec::admin::kill_as(&self.principal(), &self.info.user, registry, connection_id, protocol::KillScope::Connection)
    }

    fn query(&mut self, sql: &str) -> Result<QueryResponse<'_>, MysqlError> {
        let parsed = parse(sql)?;
        self.run(&parsed, sql, &[], Vec::new(), None)
    }

    fn init_db(&mut self, database: &str) -> Result<(), MysqlError> {
        self.principal().require_database_access(database)?;
        if !self.shared.db.catalog().databases().iter().any(|name| name == database) {
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
                user_variables: &self.state.user_variables,
                last_insert_id: self.state.last_insert_id,
                autocommit: !self.state.autocommit_off,
                gtid_next: &self.state.gtid_next,
                statement_time_micros: crate::variables::replay::session_clock_micros(&self.state.variables),
                writes_rows: writes_rows(&parsed.statement),
                evaluation_warnings: Default::default(),
                late_warnings: &self.state.late_warnings,
            },
            sql,
            params: &[],
            warnings: &self.state.warnings,
            plan_slot: None,
            applier_slot: &self.state.applier_slot,
        };
        crate::access::authorize::authorize(&parsed.statement, &context)?;
        let columns = match &parsed.statement {
            Statement::Ast(ast) => match ast.as_ref() {
                sqlparser::ast::Statement::Query(query) => {
                    let database = self.state.database.clone();
                    crate::exec::select::describe(query, self.shared.db.catalog(), database.as_deref())?
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let param_count = u16::try_from(parsed.param_count)
            .map_err(|_| MysqlError::new(1390, "HY000", "Prepared statement contains too many placeholders"))?;
        let database = self.state.database.clone();
        self.prepared.insert(statement_id, Arc::new(Prepared { parsed, sql: sql.to_string(), database, plan: Default::default() }));
        Ok(PreparedStatement { param_count, params: None, columns, warnings: 0 })
    }

    fn execute(&mut self, statement_id: u32, params: &[WireValue]) -> Result<QueryResponse<'_>, MysqlError> {
        let prepared =
            self.prepared.get(&statement_id).cloned().ok_or_else(|| MysqlError::unknown_statement(statement_id, "mysqld_stmt_execute"))?;
        let mut param_warnings = Vec::new();
        let params: Vec<Value> = params.iter().map(|param| from_wire_parameter(param, &mut param_warnings)).collect();
        // It runs in the database that was current at its PREPARE, as
        // MySQL's do: a USE since then changes nothing it names.
        let current = std::mem::replace(&mut self.state.database, prepared.database.clone());
        let response = self.run(&prepared.parsed, &prepared.sql, &params, param_warnings, Some(&prepared.plan));
        if self.state.database == prepared.database {
            self.state.database = current;
        }
        response
    }

    fn close_statement(&mut self, statement_id: u32) {
        self.prepared.remove(&statement_id);
    }

    fn change_user(&mut self, info: &ConnectionInfo) -> Result<(), MysqlError> {
        if let Some(database) = &info.database {
            // As at login: the privilege first, then whether it exists.
            Principal::new(&self.shared, info).require_database_access(database)?;
            if !database.eq_ignore_ascii_case("information_schema") && !self.shared.db.catalog().databases().contains(database) {
                return Err(unknown_database(database));
            }
        }
        self.reset_connection()?;
        self.shared.replicas.unregister(self.info.connection_id);
        self.info = info.clone();
        self.state.database = info.database.clone();
        Ok(())
    }

    fn reset_connection(&mut self) -> Result<(), MysqlError> {
        self.shared.locks.release_all(self.info.connection_id);
        self.state.ahead = None;
        if let Some(trx) = self.state.trx.take() {
            trx.rollback();
        }
        let database = self.state.database.take();
        self.state = State { database, ..State::default() };
        self.state.refresh_character_sets(&self.shared);
        Ok(())
    }

    fn character_sets(&self) -> protocol::CharacterSets {
        self.state.character_sets
    }

    fn result_sent(&mut self, warnings: u16) -> u16 {
        let late = std::mem::take(&mut *self.state.late_warnings.lock());
        if late.is_empty() {
            return warnings;
        }
        let kept = &mut self.state.warnings;
        kept.extend(late);
        kept.truncate(WARNINGS_MAX);
        warnings.max(u16::try_from(kept.len()).unwrap_or(u16::MAX))
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

    fn register_replica(&mut self, request: &RegisterReplica) -> Result<(), MysqlError> {
        self.check_dump_privilege()?;
        let uuid = ["replica_uuid", "slave_uuid"]
            .iter()
            .find_map(|name| self.state.user_variables.get(*name))
            .map(crate::eval::value::text)
            .unwrap_or_default();
        self.shared.replicas.register(self.info.connection_id, request, uuid);
        Ok(())
    }

    fn binlog_dump(&mut self, request: &BinlogDumpRequest, stream: &mut BinlogStream<'_>) -> Result<(), MysqlError> {
        self.check_dump_privilege()?;
        let start = DumpStart::Position { file_name: request.file_name.clone(), position: u64::from(request.position) };
        let settings = self.dump_settings(request.is_non_blocking());
        source::dump(self.shared.db.binlog_status(), start, &settings, stream)
    }

    fn binlog_dump_gtid(&mut self, request: &BinlogDumpGtidRequest, stream: &mut BinlogStream<'_>) -> Result<(), MysqlError> {
        self.check_dump_privilege()?;
        // The file name and position of the request are ignored: MySQL
        // replicas send an empty name under auto-positioning, and the GTID
        // set alone decides where the stream starts.
        let start = DumpStart::Gtids(gtid_set_from_request(&request.gtid_set)?);
        let settings = self.dump_settings(request.is_non_blocking());
        source::dump(self.shared.db.binlog_status(), start, &settings, stream)
    }

    fn disconnect(&mut self) {
        self.shared.replicas.unregister(self.info.connection_id);
        // Locks go with the connection, as in MySQL.
        self.shared.locks.release_all(self.info.connection_id);
        self.state.ahead = None;
        if let Some(trx) = self.state.trx.take() {
            trx.rollback();
        }
    }
}

impl SqlSession {
    /// COM_REGISTER_SLAVE, COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID need
    /// the REPLICATION SLAVE privilege (1227 ER_SPECIFIC_ACCESS_DENIED_ERROR
    /// otherwise): one call site for all three commands.
    fn check_dump_privilege(&self) -> SqlResult<()> {
        self.require_replication_slave()
    }

    /// What the reader declared with user variables, as MySQL's dump reads
    /// them: `@master_binlog_checksum` set at all means the reader handles
    /// checksums; `@master_heartbeat_period` is in nanoseconds.
    fn dump_settings(&self, non_blocking: bool) -> DumpSettings {
        let variables = &self.state.user_variables;
        let declared = variables.get("master_binlog_checksum").filter(|value| !matches!(value, Value::Null));
        let checksum_declared = declared.is_some();
        let checksum_declared_crc32 = declared.is_some_and(|value| crate::eval::value::text(value).eq_ignore_ascii_case("CRC32"));
        let heartbeat_nanoseconds = variables
            .get("master_heartbeat_period")
            .and_then(crate::eval::value::to_number)
            .map_or(0.0, crate::eval::value::Number::as_f64);
        let heartbeat_period = (heartbeat_nanoseconds >= 1.0).then(|| Duration::from_nanos(heartbeat_nanoseconds as u64));
        let verify_checksums = self.shared.globals.get("source_verify_checksum").is_some_and(|value| value == Value::Int(1));
        let send_delay_us = match self.shared.globals.get("binlogd_dump_send_delay") {
            Some(Value::Int(us)) => us.max(0) as u64,
            Some(Value::UInt(us)) => us,
            _ => 0,
        };
        let send_delay = Duration::from_micros(send_delay_us).min(DumpSettings::SEND_DELAY_MAX);
        // MySQL 8.4's replica sets @rpl_semi_sync_replica, MariaDB's and
        // older MySQL's @rpl_semi_sync_slave; any non-zero number asks.
        let asks_semi_sync = ["rpl_semi_sync_replica", "rpl_semi_sync_slave"]
            .iter()
            .any(|name| variables.get(*name).and_then(crate::eval::value::to_number).is_some_and(|number| number.as_f64() != 0.0));
        let semi_sync = asks_semi_sync.then(|| self.shared.semi_sync.clone());
        DumpSettings { checksum_declared, checksum_declared_crc32, heartbeat_period, non_blocking, verify_checksums, send_delay, semi_sync }
    }
}

/// INSERT, REPLACE, UPDATE and DELETE: the statements whose evaluation
/// warnings strict mode turns into errors.
fn writes_rows(statement: &Statement) -> bool {
    use sqlparser::ast::Statement as Ast;
    matches!(statement, Statement::Ast(ast) if matches!(ast.as_ref(), Ast::Insert(_) | Ast::Update { .. } | Ast::Delete(_)))
}
