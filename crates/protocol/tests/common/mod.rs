//! A toy SQL layer for the protocol tests: answers a handful of statements,
//! echoes prepared-statement parameters back with their types, streams fake
//! binlog events, and refuses everything else with 1064.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use protocol::{
    syntax_error_near, AuthPlugin, BinlogDumpGtidRequest, BinlogDumpRequest, BinlogStream, ColumnDefinition, ColumnFlags, ColumnType,
    ConnectionInfo, Credential, KillScope, MysqlError, OkResponse, PreparedStatement, QueryResponse, RegisterReplica, ResultSet, RowStream,
    Server, ServerConfig, Session, SessionFactory, StatusFlags, StoredAccount, Value,
};

pub const VERSION: &str = "8.4.0-binlogd";

pub struct ToyFactory;

pub struct ToySession {
    info: ConnectionInfo,
    in_transaction: bool,
    database: Option<String>,
    prepared: HashMap<u32, String>,
}

impl SessionFactory for ToyFactory {
    type Session = ToySession;

    fn open_session(&self, info: &ConnectionInfo) -> Result<ToySession, MysqlError> {
        if let Some(database) = &info.database {
            check_database(database)?;
        }
        Ok(ToySession { info: info.clone(), in_transaction: false, database: info.database.clone(), prepared: HashMap::new() })
    }
}

fn check_database(database: &str) -> Result<(), MysqlError> {
    if database == "nosuchdb" {
        return Err(MysqlError::new(1049, "42000", format!("Unknown database '{database}'")));
    }
    Ok(())
}

fn one_value(name: &str, column: ColumnDefinition, value: Value) -> QueryResponse<'static> {
    let mut column = column;
    column.name = name.to_string();
    let mut result = ResultSet::new(vec![column]);
    result.push_row(vec![value]);
    result.into()
}

/// The number after `prefix` and before `)`, e.g. `SELECT SLEEP(2)`.
fn argument(sql: &str, prefix: &str) -> Option<u64> {
    sql.strip_prefix(prefix)?.trim_end_matches(')').trim().parse().ok()
}

impl ToySession {
    fn column_for(value: &Value, index: usize) -> ColumnDefinition {
        let name = format!("p{index}");
        match value {
            Value::Int(_) => ColumnDefinition::bigint(name),
            Value::UInt(_) => ColumnDefinition::bigint(name).with_flags(ColumnFlags::UNSIGNED_FLAG),
            Value::Float(_) => ColumnDefinition::new(name, ColumnType::MYSQL_TYPE_FLOAT),
            Value::Double(_) => ColumnDefinition::new(name, ColumnType::MYSQL_TYPE_DOUBLE),
            Value::DateTime(_) => ColumnDefinition::new(name, ColumnType::MYSQL_TYPE_DATETIME).with_decimals(6),
            Value::Time(_) => ColumnDefinition::new(name, ColumnType::MYSQL_TYPE_TIME).with_decimals(6),
            Value::Bytes(_) | Value::Null => ColumnDefinition::varchar(name),
        }
    }
}

impl Session for ToySession {
    fn query(&mut self, sql: &str) -> Result<QueryResponse<'_>, MysqlError> {
        let upper = sql.to_ascii_uppercase();
        if upper == "SELECT 1" {
            return Ok(one_value("1", ColumnDefinition::bigint(""), Value::Int(1)));
        }
        if upper == "SELECT @@VERSION" {
            return Ok(one_value("@@version", ColumnDefinition::varchar(""), VERSION.into()));
        }
        if upper == "SELECT CURRENT_USER()" {
            let account = format!("{}@{}", self.info.account.user, self.info.account.host);
            return Ok(one_value("CURRENT_USER()", ColumnDefinition::varchar(""), Value::from(account)));
        }
        if upper == "SELECT DATABASE()" {
            let value = self.database.clone().map_or(Value::Null, Value::from);
            return Ok(one_value("DATABASE()", ColumnDefinition::varchar(""), value));
        }
        if upper == "SELECT CONNECTION_ID()" {
            return Ok(one_value("CONNECTION_ID()", ColumnDefinition::bigint(""), Value::Int(self.info.connection_id.into())));
        }
        if upper == "SELECT CURRENT_USER()" {
            let text = format!("{}@{}", self.info.account.user, self.info.account.host);
            return Ok(one_value("CURRENT_USER()", ColumnDefinition::varchar(""), text.into()));
        }
        if upper.starts_with("SELECT LENGTH('") && sql.ends_with("')") {
            let length = sql.len() - "SELECT LENGTH('".len() - 2;
            return Ok(one_value("LENGTH", ColumnDefinition::bigint(""), Value::Int(length as i64)));
        }
        if let Some(count) = argument(&upper, "SELECT REPEAT('X', ") {
            let column = ColumnDefinition::new("", ColumnType::MYSQL_TYPE_LONG_BLOB);
            return Ok(one_value("REPEAT", column, Value::Bytes(vec![b'x'; count as usize])));
        }
        if let Some(count) = argument(&upper, "SELECT ROWS(") {
            let columns = vec![ColumnDefinition::bigint("id"), ColumnDefinition::varchar("name")];
            let rows = (0..count).map(|i| Ok(vec![Value::Int(i as i64), format!("row{i}").into()]));
            return Ok(QueryResponse::Stream(RowStream { columns, rows: Box::new(rows), warnings: 0 }));
        }
        if upper == "SELECT STREAM_ERROR" {
            let columns = vec![ColumnDefinition::bigint("id")];
            let rows = (0..3).map(|i| if i < 2 { Ok(vec![Value::Int(i)]) } else { Err(MysqlError::query_interrupted()) });
            return Ok(QueryResponse::Stream(RowStream { columns, rows: Box::new(rows), warnings: 0 }));
        }
        if let Some(seconds) = argument(&upper, "SELECT SLEEP(") {
            let deadline = Instant::now() + Duration::from_secs(seconds);
            while Instant::now() < deadline {
                if self.info.handle.is_query_killed() {
                    return Err(MysqlError::query_interrupted());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            return Ok(one_value("SLEEP", ColumnDefinition::bigint(""), Value::Int(0)));
        }
        if upper == "SHOW PROCESSLIST" {
            let columns = ["Id", "User", "Host", "db", "Command", "Time", "State", "Info"]
                .iter()
                .map(|name| ColumnDefinition::varchar(*name))
                .collect();
            let mut result = ResultSet::new(columns);
            for process in self.info.handle.registry().processes() {
                result.push_row(vec![
                    Value::Int(process.id.into()),
                    process.user.into(),
                    process.host.into(),
                    process.db.map_or(Value::Null, Value::from),
                    process.command.into(),
                    Value::UInt(process.time_secs),
                    process.state.into(),
                    process.info.map_or(Value::Null, Value::from),
                ]);
            }
            return Ok(result.into());
        }
        if let Some(rest) = upper.strip_prefix("KILL ") {
            let (scope, id) = match rest.strip_prefix("QUERY ") {
                Some(id) => (KillScope::Query, id),
                None => (KillScope::Connection, rest),
            };
            let id = id.trim().parse().map_err(|_| syntax_error_near(id))?;
            self.info.handle.registry().kill(id, scope)?;
            return Ok(OkResponse::default().into());
        }
        if upper == "BEGIN" {
            self.in_transaction = true;
            return Ok(OkResponse::default().into());
        }
        if upper == "COMMIT" {
            self.in_transaction = false;
            return Ok(OkResponse::default().into());
        }
        if upper.starts_with("INSERT") {
            let ok = OkResponse { affected_rows: 1, last_insert_id: 42, warnings: 1, info: String::new() };
            return Ok(ok.into());
        }
        if upper.starts_with("SET ") {
            return Ok(OkResponse::default().into());
        }
        Err(syntax_error_near(sql))
    }

    fn init_db(&mut self, database: &str) -> Result<(), MysqlError> {
        check_database(database)?;
        self.database = Some(database.to_string());
        Ok(())
    }

    fn field_list(&mut self, table: &str, wildcard: &str) -> Result<Vec<ColumnDefinition>, MysqlError> {
        if table != "t1" {
            return Err(MysqlError::new(1146, "42S02", format!("Table 'test.{table}' doesn't exist")));
        }
        let columns = vec![
            ColumnDefinition::new("id", ColumnType::MYSQL_TYPE_LONG).with_table("test", "t1"),
            ColumnDefinition::varchar("name").with_table("test", "t1"),
        ];
        let prefix = wildcard.trim_end_matches('%');
        Ok(columns.into_iter().filter(|c| c.name.starts_with(prefix)).collect())
    }

    fn prepare(&mut self, statement_id: u32, sql: &str) -> Result<PreparedStatement, MysqlError> {
        let upper = sql.to_ascii_uppercase();
        if !upper.starts_with("SELECT") && !upper.starts_with("INSERT") {
            return Err(syntax_error_near(sql));
        }
        let param_count = sql.matches('?').count() as u16;
        let columns = if upper.starts_with("SELECT") {
            (0..param_count).map(|i| ColumnDefinition::varchar(format!("p{i}"))).collect()
        } else {
            Vec::new()
        };
        self.prepared.insert(statement_id, sql.to_string());
        Ok(PreparedStatement { param_count, params: None, columns, warnings: 0 })
    }

    fn execute(&mut self, statement_id: u32, params: &[Value]) -> Result<QueryResponse<'_>, MysqlError> {
        let sql = self.prepared.get(&statement_id).ok_or_else(|| MysqlError::internal("toy: unknown statement"))?;
        if sql.to_ascii_uppercase().starts_with("INSERT") {
            return Ok(OkResponse { affected_rows: params.len() as u64, ..Default::default() }.into());
        }
        if sql.eq_ignore_ascii_case("SELECT LENGTH(?)") {
            let length = match &params[0] {
                Value::Bytes(bytes) => bytes.len() as i64,
                _ => -1,
            };
            return Ok(one_value("LENGTH", ColumnDefinition::bigint(""), Value::Int(length)));
        }
        let columns = params.iter().enumerate().map(|(i, v)| Self::column_for(v, i)).collect();
        let mut result = ResultSet::new(columns);
        result.push_row(params.to_vec());
        Ok(result.into())
    }

    fn change_user(&mut self, info: &ConnectionInfo) -> Result<(), MysqlError> {
        if let Some(database) = &info.database {
            check_database(database)?;
        }
        self.info = info.clone();
        self.database = info.database.clone();
        self.in_transaction = false;
        Ok(())
    }

    fn close_statement(&mut self, statement_id: u32) {
        self.prepared.remove(&statement_id);
    }

    fn server_status(&self) -> StatusFlags {
        let mut status = StatusFlags::SERVER_STATUS_AUTOCOMMIT;
        if self.in_transaction {
            status |= StatusFlags::SERVER_STATUS_IN_TRANS;
        }
        status
    }

    fn register_replica(&mut self, _request: &RegisterReplica) -> Result<(), MysqlError> {
        Ok(())
    }

    /// Streams fake events: three small ones (or one of `position` bytes when
    /// the file is `big`), then EOF when non-blocking, else heartbeats until
    /// the reader leaves or the connection is killed.
    fn binlog_dump(&mut self, request: &BinlogDumpRequest, stream: &mut BinlogStream<'_>) -> Result<(), MysqlError> {
        let send = |stream: &mut BinlogStream<'_>, event: &[u8]| stream.send_event(event).map_err(|e| MysqlError::internal(e.to_string()));
        if request.file_name == "purged" {
            return Err(MysqlError::new(1236, "HY000", "Could not find first log file name in binary log index file"));
        }
        if request.file_name == "big" {
            send(stream, &vec![0xAB; request.position as usize])?;
        } else {
            for event in [&b"event-1"[..], b"event-2", b"event-3"] {
                send(stream, event)?;
            }
        }
        if request.is_non_blocking() {
            return stream.send_eof().map_err(|e| MysqlError::internal(e.to_string()));
        }
        stream.flush().map_err(|e| MysqlError::internal(e.to_string()))?;
        while !stream.is_killed() && !stream.peer_closed() {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    fn binlog_dump_gtid(&mut self, request: &BinlogDumpGtidRequest, stream: &mut BinlogStream<'_>) -> Result<(), MysqlError> {
        let text: Vec<String> = request.gtid_set.iter().map(|entry| entry.to_string()).collect();
        let event = format!("{}|{}|{}", request.server_id, request.file_name, text.join(","));
        stream.send_event(event.as_bytes()).map_err(|e| MysqlError::internal(e.to_string()))?;
        stream.send_eof().map_err(|e| MysqlError::internal(e.to_string()))
    }
}

/// Accounts: root@localhost without a password (CONNECTION_ADMIN), alice with `secret`
/// (mysql_native_password), carol with `sha2-pw` (caching_sha2_password),
/// dana without a password (caching_sha2_password, as binlogd's own root),
/// and a locked account.
pub fn accounts(user: &str, _host: &str) -> Option<StoredAccount> {
    match user {
        "root" => {
            let mut account = StoredAccount::with_password("root", "localhost", "");
            account.connection_admin = true;
            Some(account)
        }
        "alice" => Some(StoredAccount::with_password("alice", "%", "secret")),
        "carol" => Some(carol()),
        "dana" => Some(StoredAccount::new("dana", "%", Credential::new(AuthPlugin::CachingSha2, ""))),
        "locked" => {
            let mut account = StoredAccount::with_password("locked", "%", "x");
            account.locked = true;
            Some(account)
        }
        _ => None,
    }
}

/// A caching_sha2_password account, its hash made once (5000 rounds of
/// SHA-256 crypt per login check are enough).
fn carol() -> StoredAccount {
    static CREDENTIAL: std::sync::OnceLock<Credential> = std::sync::OnceLock::new();
    let credential = CREDENTIAL.get_or_init(|| Credential::new(AuthPlugin::CachingSha2, "sha2-pw")).clone();
    StoredAccount::new("carol", "%", credential)
}

/// A toy server on 127.0.0.1 and a free port.
pub fn start_server(configure: impl FnOnce(&mut ServerConfig)) -> Server {
    let mut config =
        ServerConfig { bind_address: "127.0.0.1:0".parse().unwrap(), shutdown_grace: Duration::from_secs(2), ..Default::default() };
    config.connection.server_version = VERSION.into();
    configure(&mut config);
    Server::start(config, Arc::new(accounts), Arc::new(ToyFactory)).expect("server starts")
}

/// Whether an external client is installed; in CI its absence fails the
/// test (the CI script must install it), elsewhere the test is skipped.
pub fn have_tool(check: &mut std::process::Command, name: &str) -> bool {
    let found = check.output().map(|output| output.status.success()).unwrap_or(false);
    if !found {
        assert!(std::env::var_os("CI").is_none(), "{name} is required in CI");
        eprintln!("skipping: {name} is not installed");
    }
    found
}
