//! One client connection: handshake, then the command loop that reads a
//! command, hands it to the [`Session`] and writes the response.
//!
//! Errors come in two kinds. A [`MysqlError`] (bad SQL, unknown statement,
//! unknown command) is answered with an ERR packet and the connection goes
//! on. A [`ProtocolError`] (malformed or oversized packet, packets out of
//! order, I/O failure) ends this connection, after an ERR packet when the
//! peer can still read one; no other connection is affected.

use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use tracing::{debug, warn};

use crate::auth::{generate_scramble, Authenticator, SCRAMBLE_BYTES};
use crate::authentication::{authenticate, Exchange};
use crate::caching_sha2::{RsaKeys, Sha2Cache};
use crate::errors::{MysqlError, ProtocolError};
use crate::handshake::{encode_initial_handshake_offering, is_ssl_request, parse_handshake_response};
use crate::login_gate::LoginTicket;
use crate::memory::MemoryPart;
use crate::packet::PacketStream;
use crate::prepared::StatementTable;
use crate::registry::{client_host, ConnectionHandle, Registration};
use crate::response::{write_err, write_ok, OkResponse};
use crate::session::{ConnectionInfo, Session, SessionFactory};
use crate::tls::{TlsAcceptor, TlsInfo};

/// Per-connection settings (MySQL's variable names, durations as values).
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// Sent in the handshake and shown by `SELECT VERSION()` clients.
    pub server_version: String,
    /// Largest packet accepted, in bytes (MySQL 8.4's default is 64 MiB).
    pub max_allowed_packet: usize,
    /// Time from accept to the end of authentication (the login gate's
    /// watchdog enforces it; each read is bounded by it too).
    pub connect_timeout: Duration,
    /// Idle time after which a connection is closed.
    pub wait_timeout: Duration,
    /// Time a write may block on a client that does not read.
    pub net_write_timeout: Duration,
    /// max_prepared_stmt_count at startup: prepared statements the whole
    /// server may hold open (counted in the [`crate::Registry`]).
    pub prepared_statements_max: usize,
    /// The server's certificate and key when it offers TLS (CLIENT_SSL in
    /// the handshake); `None` offers plain connections only.
    pub tls: Option<TlsAcceptor>,
    /// caching_sha2_password's RSA keys, for clients without TLS.
    pub rsa: Option<Arc<RsaKeys>>,
    /// caching_sha2_password's fast-path cache, shared by every
    /// connection (each config is a clone of the server's).
    pub sha2_cache: Arc<Sha2Cache>,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            server_version: "8.4.0-binlogd".into(),
            max_allowed_packet: 64 * 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            wait_timeout: Duration::from_secs(28_800),
            net_write_timeout: Duration::from_secs(60),
            prepared_statements_max: crate::registry::PREPARED_STATEMENTS_MAX_DEFAULT,
            tls: None,
            rsa: None,
            sha2_cache: Arc::default(),
        }
    }
}

/// Bound on packets before authentication, whatever max_allowed_packet is:
/// an unauthenticated peer gets no more memory than a handshake needs.
const HANDSHAKE_PACKET_BYTES_MAX: usize = 1024 * 1024;

/// How long to keep reading (and discarding) after a fatal error, so the
/// ERR packet is not lost to a connection reset.
const CLOSE_LINGER: Duration = Duration::from_secs(2);

/// Whether the command loop goes on.
pub(crate) enum Flow {
    Continue,
    Quit,
}

/// A client connection over TCP.
pub struct Connection {
    pub(crate) stream: PacketStream,
    pub(crate) peer: SocketAddr,
    pub(crate) config: ConnectionConfig,
    pub(crate) handle: ConnectionHandle,
    /// Negotiated: the client's flags limited to the server's (empty until
    /// the client has answered the handshake).
    pub(crate) capabilities: CapabilityFlags,
    pub(crate) multi_statements: bool,
    pub(crate) statements: StatementTable,
    /// Status after the last statement, for the EOF between column
    /// definitions and rows (sent before the statement has finished).
    pub(crate) last_status: StatusFlags,
    /// The handshake's scramble, which COM_CHANGE_USER answers to again.
    pub(crate) scramble: [u8; SCRAMBLE_BYTES],
    /// The connection's TLS, `None` while plain.
    pub(crate) tls: Option<TlsInfo>,
}

impl Connection {
    pub fn new(socket: TcpStream, config: ConnectionConfig, handle: ConnectionHandle) -> std::io::Result<Self> {
        let peer = socket.peer_addr()?;
        let stream = PacketStream::new(socket, HANDSHAKE_PACKET_BYTES_MAX.min(config.max_allowed_packet))?;
        stream.set_read_timeout(config.connect_timeout)?;
        stream.set_write_timeout(config.connect_timeout)?;
        let statements = StatementTable::new(Arc::clone(handle.registry()), config.max_allowed_packet);
        Ok(Connection {
            stream,
            peer,
            config,
            handle,
            capabilities: CapabilityFlags::empty(),
            multi_statements: false,
            statements,
            last_status: StatusFlags::SERVER_STATUS_AUTOCOMMIT,
            scramble: [0; SCRAMBLE_BYTES],
            tls: None,
        })
    }

    pub fn id(&self) -> u32 {
        self.handle.id()
    }

    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    pub fn capabilities(&self) -> CapabilityFlags {
        self.capabilities
    }

    /// Sends the handshake, reads the client's answer and authenticates it.
    /// On `Ok(Err(_))` the caller sends that error and closes. The OK that
    /// completes the login is sent by [`Connection::complete_login`], after
    /// the session exists.
    pub fn handshake(&mut self, authenticator: &dyn Authenticator) -> Result<Result<ConnectionInfo, MysqlError>, ProtocolError> {
        let scramble = generate_scramble();
        self.scramble = scramble;
        let offer_tls = self.config.tls.is_some();
        self.stream.write_packet(&encode_initial_handshake_offering(&self.config.server_version, self.id(), &scramble, offer_tls))?;
        self.stream.flush()?;
        let mut packet = self.stream.read_packet()?;
        let mut tls = None;
        if is_ssl_request(&packet) {
            let Some(acceptor) = &self.config.tls else {
                return Ok(Err(MysqlError::bad_handshake()));
            };
            tls = Some(self.stream.start_tls(acceptor)?);
            self.handle.set_tls();
            packet = self.stream.read_packet()?;
        }
        self.tls = tls.clone();
        let hello = match parse_handshake_response(&packet, offer_tls)? {
            Ok(hello) => hello,
            Err(error) => return Ok(Err(error)),
        };
        self.capabilities = hello.capabilities;
        let host = client_host(self.peer);
        let exchange = Exchange { authenticator, cache: &self.config.sha2_cache, rsa: self.config.rsa.as_deref(), tls: tls.as_ref() };
        let account = match authenticate(&mut self.stream, &hello, &host, &scramble, &exchange)? {
            Ok(account) => account,
            Err(error) => return Ok(Err(error)),
        };
        self.multi_statements = self.capabilities.contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS);
        self.handle.set_user(&hello.user);
        self.handle.set_db(hello.database.as_deref());
        Ok(Ok(ConnectionInfo {
            connection_id: self.id(),
            user: hello.user,
            host,
            peer: self.peer,
            account,
            database: hello.database,
            capabilities: self.capabilities,
            collation: hello.collation,
            attributes: hello.attributes,
            handle: self.handle.clone(),
            system_thread: false,
            tls,
        }))
    }

    /// Sends the OK that ends the connection phase and switches to the
    /// command phase's limits (`max_allowed_packet_bytes` is the session's,
    /// `None` for the server's startup value).
    pub fn complete_login(&mut self, status: StatusFlags, max_allowed_packet_bytes: Option<usize>) -> Result<(), ProtocolError> {
        write_ok(&mut self.stream, &OkResponse::default(), status)?;
        self.stream.flush()?;
        self.stream.set_max_allowed_packet_bytes(max_allowed_packet_bytes.unwrap_or(self.config.max_allowed_packet));
        self.stream.set_read_timeout(self.config.wait_timeout)?;
        self.stream.set_write_timeout(self.config.net_write_timeout)?;
        self.last_status = status;
        self.account_memory(0);
        Ok(())
    }

    /// Sends an ERR packet now.
    pub fn send_error(&mut self, error: &MysqlError) -> Result<(), ProtocolError> {
        write_err(&mut self.stream, error, self.capabilities)?;
        self.stream.flush()
    }

    /// Ends the connection, draining input briefly so that a just-sent ERR
    /// packet reaches the client.
    pub fn close(self) {
        self.stream.close_gracefully(CLOSE_LINGER);
    }

    /// The command phase: runs until the client quits or disconnects, the
    /// connection is killed, or a protocol error (returned) ends it. Open
    /// prepared statements are closed in the session at the end.
    pub fn run<S: Session>(&mut self, session: &mut S, authenticator: &dyn Authenticator) -> Result<(), ProtocolError> {
        let result = self.command_loop(session, authenticator);
        for id in self.statements.drain_ids() {
            session.close_statement(id);
        }
        session.disconnect();
        result
    }

    fn command_loop<S: Session>(&mut self, session: &mut S, authenticator: &dyn Authenticator) -> Result<(), ProtocolError> {
        loop {
            if self.handle.is_killed() {
                return Ok(());
            }
            self.stream.reset_sequence();
            let packet = match self.stream.read_packet() {
                Ok(packet) => packet,
                Err(ProtocolError::Closed) => return Ok(()),
                Err(error) => return Err(error),
            };
            self.account_memory(packet.capacity());
            let flow = self.dispatch(session, &packet, authenticator)?;
            if self.handle.is_killed_by_statement() {
                // KILL CONNECTION: the statement's answer is not sent, as
                // in mysqld; the close follows (`serve_connection`).
                self.stream.discard_unsent()?;
                return Ok(());
            }
            self.stream.flush()?;
            drop(packet);
            self.account_memory(0);
            self.handle.end_command();
            if let Flow::Quit = flow {
                return Ok(());
            }
        }
    }
}

impl Connection {
    /// Sets the connection's memory figure between commands and while one
    /// runs: buffers, the command packet of `packet_bytes`, prepared
    /// statements (a result's part is set while it is written).
    fn account_memory(&self, packet_bytes: usize) {
        let memory = self.handle.memory();
        memory.set(MemoryPart::Packets, self.stream.buffers_bytes() + packet_bytes);
        memory.set(MemoryPart::Statements, self.statements.held_bytes());
        memory.set(MemoryPart::Result, 0);
    }
}

/// The whole life of one accepted connection: handshake, login (a session
/// slot from `ticket`'s gate, or 1040), session, command loop, close. Runs
/// on the connection's own thread.
pub fn serve_connection<F: SessionFactory>(
    socket: TcpStream,
    config: ConnectionConfig,
    registration: Registration,
    ticket: LoginTicket,
    authenticator: &dyn Authenticator,
    factory: &F,
) {
    let handle = registration.handle().clone();
    let mut connection = match Connection::new(socket, config, handle) {
        Ok(connection) => connection,
        Err(error) => {
            debug!(%error, "connection setup failed");
            return;
        }
    };
    let id = connection.id();
    let info = match connection.handshake(authenticator) {
        Ok(Ok(info)) => info,
        Ok(Err(error)) => {
            debug!(id, %error, "login refused");
            let _ = connection.send_error(&error);
            connection.close();
            return;
        }
        Err(error) => {
            fail(connection, id, error);
            return;
        }
    };
    let _slot = match ticket.enter(info.account.connection_admin) {
        Ok(slot) => slot,
        Err(error) => {
            debug!(id, %error, "login refused after authentication");
            let _ = connection.send_error(&error);
            connection.close();
            return;
        }
    };
    let mut session = match factory.open_session(&info) {
        Ok(session) => session,
        Err(error) => {
            let _ = connection.send_error(&error);
            connection.close();
            return;
        }
    };
    if let Err(error) = connection.complete_login(session.server_status(), session.max_allowed_packet_bytes()) {
        session.disconnect();
        fail(connection, id, error);
        return;
    }
    let result = connection.run(&mut session, authenticator);
    if connection.handle.is_killed() {
        // KILL left a TLS connection's sending side open: the close_notify
        // goes out, then the close (a plain one is shut already).
        debug!(id, "connection killed");
        connection.close();
    } else {
        match result {
            Ok(()) => debug!(id, "connection ended"),
            Err(error) => fail(connection, id, error),
        }
    }
    drop(registration);
}

/// Ends a connection after a protocol error: the ERR packet if the peer can
/// still read one, then a close that does not reset it away.
fn fail(mut connection: Connection, id: u32, error: ProtocolError) {
    if error.is_disconnect() {
        debug!(id, %error, "client went away");
        return;
    }
    warn!(id, peer = %connection.peer(), %error, "closing connection after a protocol error");
    if let Some(client_error) = error.client_error() {
        let _ = connection.send_error(&client_error);
    }
    connection.close();
}
