//! The seam between the wire protocol and the SQL layer: a [`Session`] per
//! connection, made by a [`SessionFactory`] once the client has logged in.
//!
//! The protocol side owns everything about bytes (framing, statement ids,
//! parameter decoding, long data, row encoding, multi-statement splitting,
//! status flags on the wire); the session owns meaning (parsing, executing,
//! transactions, privileges).

use std::net::SocketAddr;

use mysql_common::constants::{CapabilityFlags, StatusFlags};

use crate::auth::StoredAccount;
use crate::charset::CharacterSets;
use crate::errors::MysqlError;
use crate::registry::{ConnectionHandle, KillScope, Registry};
use crate::replication::{BinlogDumpGtidRequest, BinlogDumpRequest, BinlogStream, RegisterReplica};
use crate::resultset::{ColumnDefinition, QueryResponse};
use crate::tls::TlsInfo;
use crate::value::Value;

/// Who connected, as established by the handshake.
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    pub connection_id: u32,
    /// The user name the client sent.
    pub user: String,
    /// `localhost` for a loopback peer, else its IP address.
    pub host: String,
    pub peer: SocketAddr,
    /// The account that matched (for CURRENT_USER()).
    pub account: StoredAccount,
    /// The schema named in the handshake (CLIENT_CONNECT_WITH_DB), if any.
    pub database: Option<String>,
    /// Capabilities in force: the client's, limited to the server's.
    pub capabilities: CapabilityFlags,
    /// The collation id the client asked for.
    pub collation: u8,
    /// CLIENT_CONNECT_ATTRS (`_client_name`, `program_name`, ...).
    pub attributes: Vec<(String, String)>,
    /// The connection's process-list entry: set state, poll kill flags.
    pub handle: ConnectionHandle,
    /// A server thread (the replica applier's "system user"), not a
    /// client: it holds every privilege and no account. Only code inside
    /// the server makes one; the handshake always sets `false`.
    pub system_thread: bool,
    /// The connection's TLS (version, cipher), `None` for a plain one.
    pub tls: Option<TlsInfo>,
}

impl ConnectionInfo {
    /// CLIENT_FOUND_ROWS: UPDATE reports matched rows, not changed rows.
    pub fn found_rows(&self) -> bool {
        self.capabilities.contains(CapabilityFlags::CLIENT_FOUND_ROWS)
    }
}

/// Makes a session for each logged-in connection. Shared by all connection
/// threads.
pub trait SessionFactory: Send + Sync + 'static {
    type Session: Session;

    /// Called after authentication succeeded. An error (e.g. 1049 Unknown
    /// database for the handshake's schema, 1044 access denied to it) is sent
    /// to the client and ends the connection.
    fn open_session(&self, info: &ConnectionInfo) -> Result<Self::Session, MysqlError>;
}

/// What COM_STMT_PREPARE answers: how many `?` parameters the statement has
/// and the columns its result will have (empty for statements without rows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreparedStatement {
    pub param_count: u16,
    /// Parameter definitions to send; `None` sends MySQL's generic `?`
    /// definitions.
    pub params: Option<Vec<ColumnDefinition>>,
    pub columns: Vec<ColumnDefinition>,
    pub warnings: u16,
}

/// One connection's SQL state. Every method runs on the connection's own
/// thread; none is called concurrently.
pub trait Session {
    /// One statement of a COM_QUERY (multi-statement texts arrive one
    /// statement at a time, already split).
    fn query(&mut self, sql: &str) -> Result<QueryResponse<'_>, MysqlError>;

    /// The character sets statements arrive in and results leave in
    /// (`character_set_client`, `character_set_results`); the protocol
    /// converts, the session stores and computes in UTF-8.
    fn character_sets(&self) -> CharacterSets {
        CharacterSets::default()
    }

    /// The session's max_allowed_packet, in bytes, when the session opens
    /// (MySQL copies the global value into each new session); `None`
    /// keeps the server's startup value. It bounds the packets read and
    /// the result rows written on this connection.
    fn max_allowed_packet_bytes(&self) -> Option<usize> {
        None
    }

    /// A result set's rows are all sent; `warnings` is the count the
    /// statement answered with. Returns the count for the result's last
    /// packet, which may be larger: a streamed result's rows can raise
    /// warnings after the statement returned.
    fn result_sent(&mut self, warnings: u16) -> u16 {
        warnings
    }

    /// COM_INIT_DB (`USE db`).
    fn init_db(&mut self, database: &str) -> Result<(), MysqlError> {
        let _ = database;
        Ok(())
    }

    /// COM_FIELD_LIST: the columns of `table` whose names match `wildcard`
    /// (a LIKE pattern, empty for all). Deprecated, but clients still send it
    /// for tab completion.
    fn field_list(&mut self, table: &str, wildcard: &str) -> Result<Vec<ColumnDefinition>, MysqlError> {
        let _ = (table, wildcard);
        Err(MysqlError::unknown_command())
    }

    /// COM_STMT_PREPARE. `statement_id` is the protocol's id for the
    /// statement, used again by `execute` and `close_statement`.
    fn prepare(&mut self, statement_id: u32, sql: &str) -> Result<PreparedStatement, MysqlError> {
        let _ = (statement_id, sql);
        Err(MysqlError::unknown_command())
    }

    /// COM_STMT_EXECUTE with the parameters decoded (long data included).
    fn execute(&mut self, statement_id: u32, params: &[Value]) -> Result<QueryResponse<'_>, MysqlError> {
        let _ = (statement_id, params);
        Err(MysqlError::unknown_command())
    }

    /// COM_STMT_CLOSE, and every open statement on COM_RESET_CONNECTION and at
    /// disconnect.
    fn close_statement(&mut self, statement_id: u32) {
        let _ = statement_id;
    }

    /// COM_PING.
    fn ping(&mut self) -> Result<(), MysqlError> {
        Ok(())
    }

    /// COM_PROCESS_KILL (the old KILL command). The default kills without a
    /// privilege check; override to check PROCESS/CONNECTION_ADMIN.
    fn process_kill(&mut self, connection_id: u32, registry: &Registry) -> Result<(), MysqlError> {
        registry.kill(connection_id, KillScope::Connection)
    }

    /// COM_STATISTICS text; `None` for the protocol's own summary (uptime,
    /// threads, questions).
    fn statistics(&mut self) -> Option<String> {
        None
    }

    /// COM_CHANGE_USER, once `info`'s account has authenticated: roll back,
    /// reset the session as COM_RESET_CONNECTION does, and go on as that
    /// account in `info.database`. Prepared statements are closed by the
    /// protocol first. An error (1044, 1049 for the schema) is sent and ends
    /// the connection.
    fn change_user(&mut self, info: &ConnectionInfo) -> Result<(), MysqlError> {
        let _ = info;
        Err(MysqlError::unknown_command())
    }

    /// COM_RESET_CONNECTION: roll back, drop temporary state, reset session
    /// variables. Prepared statements are closed by the protocol first.
    fn reset_connection(&mut self) -> Result<(), MysqlError> {
        Ok(())
    }

    /// The SERVER_STATUS_* flags that describe the session now
    /// (AUTOCOMMIT, IN_TRANS, ...); the protocol adds MORE_RESULTS_EXISTS.
    fn server_status(&self) -> StatusFlags {
        StatusFlags::SERVER_STATUS_AUTOCOMMIT
    }

    /// COM_REGISTER_SLAVE.
    fn register_replica(&mut self, request: &RegisterReplica) -> Result<(), MysqlError> {
        let _ = request;
        Err(MysqlError::unknown_command())
    }

    /// COM_BINLOG_DUMP: stream events through `stream` until the end of the
    /// log (non-blocking) or until the reader goes away or the connection is
    /// killed. An `Err` is sent to the reader. The connection closes after a
    /// dump either way, as MySQL's does.
    fn binlog_dump(&mut self, request: &BinlogDumpRequest, stream: &mut BinlogStream<'_>) -> Result<(), MysqlError> {
        let _ = (request, stream);
        Err(MysqlError::unknown_command())
    }

    /// COM_BINLOG_DUMP_GTID: like `binlog_dump`, skipping transactions in the
    /// request's GTID set.
    fn binlog_dump_gtid(&mut self, request: &BinlogDumpGtidRequest, stream: &mut BinlogStream<'_>) -> Result<(), MysqlError> {
        let _ = (request, stream);
        Err(MysqlError::unknown_command())
    }

    /// The connection is ending (COM_QUIT, disconnect, KILL, shutdown):
    /// roll back what is open.
    fn disconnect(&mut self) {}
}
