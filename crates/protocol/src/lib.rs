//! binlogd's MySQL client/server protocol, server side.
//!
//! A [`Server`] accepts TCP connections and runs each on its own thread
//! (blocking I/O, no async runtime); its [`LoginGate`] times and bounds
//! logins apart from the `max_connections` logged-in ones and keeps one
//! connection for an administrator. A [`Connection`] does the handshake
//! (TLS with rustls when the server has a certificate, [`tls`]) and the
//! authentication of the account's plugin, `caching_sha2_password` or
//! `mysql_native_password` ([`authentication`]), against the caller's
//! [`Authenticator`], then reads commands and hands them to the caller's
//! [`Session`] (one per connection, made by a [`SessionFactory`]):
//!
//! - COM_QUERY, one statement at a time (multi-statement texts are split
//!   here, respecting quotes and comments), answered with an
//!   [`OkResponse`], a [`ResultSet`] or a streamed [`RowStream`];
//! - prepared statements: ids, parameter decoding by declared type (NULL
//!   bitmap, new-params-bound flag, remembered types, long data) and binary
//!   result rows are done here; the session sees `prepare(id, sql)` and
//!   `execute(id, &[Value])`;
//! - COM_CHANGE_USER, COM_INIT_DB, COM_PING, COM_QUIT, COM_SET_OPTION, COM_FIELD_LIST,
//!   COM_PROCESS_KILL, COM_STATISTICS, COM_RESET_CONNECTION;
//! - replication: COM_REGISTER_SLAVE, COM_BINLOG_DUMP and
//!   COM_BINLOG_DUMP_GTID parsed into structs, with a [`BinlogStream`] to
//!   stream events through.
//!
//! Packets are framed, split above 16 MiB and joined, bounded by
//! `max_allowed_packet` (error 1153); a malformed packet ends its own
//! connection with an ERR packet and nothing else. The [`Registry`] lists
//! live connections for SHOW PROCESSLIST and carries KILL / KILL QUERY.
//!
//! Packet types and constants come from `mysql_common`.

#![forbid(unsafe_code)]

pub mod auth;
pub mod authentication;
pub mod binary;
pub mod caching_sha2;
mod change_user;
pub mod charset;
mod command;
pub mod connection;
pub mod errors;
pub mod handshake;
pub mod login_gate;
pub mod memory;
pub mod packet;
pub mod packet_reader;
mod prepared;
pub mod registry;
pub mod replication;
pub mod response;
pub mod resultset;
pub mod server;
pub mod session;
pub mod splitter;
pub mod tls;
pub mod value;

pub use auth::{
    native_password_hash, native_password_hash_hex, native_password_response, parse_native_password_hash_hex, AuthPlugin, Authenticator,
    Credential, SslRequirement, StoredAccount,
};
pub use caching_sha2::{RsaKeys, Sha2Cache, Sha2Hash};
pub use charset::{CharacterSets, ClientCharset};
pub use command::syntax_error_near;
pub use connection::{serve_connection, Connection, ConnectionConfig};
pub use errors::{MysqlError, ProtocolError};
pub use login_gate::{LoginGate, LoginTicket, SessionSlot};
pub use memory::{MemoryAccount, MemoryPart};
pub use registry::{ConnectionHandle, KillScope, ProcessInfo, Registry};
pub use replication::{BinlogDumpGtidRequest, BinlogDumpRequest, BinlogStream, GnoInterval, GtidSetEntry, RegisterReplica};
pub use response::OkResponse;
pub use resultset::{ColumnDefinition, QueryResponse, ResultSet, RowIterator, RowStream};
pub use server::{Server, ServerConfig, STATEMENT_STACK_BYTES};
pub use session::{ConnectionInfo, PreparedStatement, Session, SessionFactory};
pub use splitter::split_statements;
pub use tls::{TlsAcceptor, TlsInfo};
pub use value::{DateTime, Time, Value};

/// mysql_common's constants the API uses (column types and flags, status
/// and capability flags), re-exported so callers need not depend on it.
pub use mysql_common::constants::{CapabilityFlags, ColumnFlags, ColumnType, StatusFlags};
