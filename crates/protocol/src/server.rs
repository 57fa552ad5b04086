//! The listening server: accepts connections, lets them in through the
//! [`LoginGate`] (logins bounded and timed apart from the `max_connections`
//! logged-in ones, one connection reserved for an administrator), runs each
//! accepted one on its own thread (DESIGN.md: blocking I/O, a thread per
//! connection), and shuts down gracefully.
//!
//! Shutdown: stop accepting; shut every connection's socket for reading
//! (idle clients wake up and leave; running statements can still answer);
//! after `shutdown_grace`, shut them both ways (dumps and stuck writers
//! fail); join every thread.

use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tracing::{info, warn};

use crate::auth::Authenticator;
use crate::connection::{serve_connection, ConnectionConfig};
use crate::errors::MysqlError;
use crate::login_gate::{LoginGate, LOGINS_MAX_DEFAULT};
use crate::registry::{KillScope, Registry};
use crate::response::encode_err;
use crate::session::SessionFactory;

/// The stack of every thread that runs SQL statements: each connection's,
/// and the replica's workers. Statements are parsed, planned and evaluated
/// by recursive walks as deep as their syntax trees; the SQL layer bounds
/// that depth so the walks fit here, with room to spare even in an
/// unoptimized build. Only the pages a thread touches are backed by
/// memory.
pub const STATEMENT_STACK_BYTES: usize = 16 << 20;

/// Server settings; MySQL's names where MySQL has the setting.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Loopback by default: binlogd refuses to listen elsewhere while an
    /// account has an empty password (the caller enforces that).
    pub bind_address: SocketAddr,
    /// Logged-in connections served at once, plus one for an account with
    /// CONNECTION_ADMIN or SUPER; one more gets 1040. Connections still
    /// logging in are not counted here but in `logins_max`.
    pub max_connections: usize,
    /// Connections between accept and the end of authentication at once;
    /// one more evicts the oldest (see [`LoginGate`]).
    pub logins_max: usize,
    pub connection: ConnectionConfig,
    /// How long shutdown waits for running statements before cutting
    /// connections.
    pub shutdown_grace: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind_address: SocketAddr::from(([127, 0, 0, 1], 3306)),
            max_connections: 151,
            logins_max: LOGINS_MAX_DEFAULT,
            connection: ConnectionConfig::default(),
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

/// Settings that SET GLOBAL may change while the server runs; new
/// connections pick them up.
#[derive(Debug)]
struct Dynamic {
    max_allowed_packet: AtomicUsize,
}

struct Shared {
    config: ServerConfig,
    dynamic: Dynamic,
    registry: Arc<Registry>,
    gate: Arc<LoginGate>,
    shutting_down: AtomicBool,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// A running server. Dropping it shuts the server down.
pub struct Server {
    shared: Arc<Shared>,
    local_address: SocketAddr,
    accept_thread: Option<JoinHandle<()>>,
    /// Shuts logins past `connect_timeout`.
    watchdog_thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `config.bind_address` (port 0 picks a free one) and starts
    /// accepting.
    pub fn start<F: SessionFactory>(
        config: ServerConfig,
        authenticator: Arc<dyn Authenticator>,
        factory: Arc<F>,
    ) -> std::io::Result<Server> {
        let listener = TcpListener::bind(config.bind_address)?;
        Server::start_on(listener, config, authenticator, factory)
    }

    /// Starts accepting on a listener bound earlier (a server binds its
    /// port before it opens its data, so a port in use fails the start
    /// before recovery writes anything); `config.bind_address` is unused.
    pub fn start_on<F: SessionFactory>(
        listener: TcpListener,
        config: ServerConfig,
        authenticator: Arc<dyn Authenticator>,
        factory: Arc<F>,
    ) -> std::io::Result<Server> {
        let local_address = listener.local_addr()?;
        let registry = Registry::new();
        registry.set_prepared_statements_max(config.connection.prepared_statements_max);
        let shared = Arc::new(Shared {
            dynamic: Dynamic { max_allowed_packet: AtomicUsize::new(config.connection.max_allowed_packet) },
            gate: LoginGate::new(config.max_connections, config.logins_max),
            config,
            registry,
            shutting_down: AtomicBool::new(false),
            threads: Mutex::new(Vec::new()),
        });
        let gate = Arc::clone(&shared.gate);
        let watchdog_thread = thread::Builder::new().name("mysql-login-watchdog".into()).spawn(move || gate.watch())?;
        let accept_shared = shared.clone();
        let accept_thread = thread::Builder::new()
            .name("mysql-accept".into())
            .spawn(move || accept_loop(listener, accept_shared, authenticator, factory))?;
        info!(address = %local_address, "listening for MySQL clients");
        Ok(Server { shared, local_address, accept_thread: Some(accept_thread), watchdog_thread: Some(watchdog_thread) })
    }

    pub fn local_address(&self) -> SocketAddr {
        self.local_address
    }

    /// The live connections (SHOW PROCESSLIST, KILL).
    pub fn registry(&self) -> &Arc<Registry> {
        &self.shared.registry
    }

    /// SET GLOBAL max_connections.
    pub fn set_max_connections(&self, max_connections: usize) {
        self.shared.gate.set_max_connections(max_connections);
    }

    /// SET GLOBAL max_allowed_packet (bytes; for new connections, as in
    /// MySQL).
    pub fn set_max_allowed_packet(&self, bytes: usize) {
        self.shared.dynamic.max_allowed_packet.store(bytes, Ordering::Relaxed);
    }

    /// Stops accepting, lets running statements finish for up to
    /// `shutdown_grace`, then closes every connection and joins its thread.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let Some(accept_thread) = self.accept_thread.take() else {
            return;
        };
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        // Wake the blocking accept with a connection of our own.
        let _ = TcpStream::connect_timeout(&wake_address(self.local_address), Duration::from_secs(1));
        let _ = accept_thread.join();
        self.shared.gate.stop();
        if let Some(watchdog_thread) = self.watchdog_thread.take() {
            let _ = watchdog_thread.join();
        }

        self.shared.registry.kill_all(KillScope::Query);
        let deadline = Instant::now() + self.shared.config.shutdown_grace;
        while !self.shared.registry.is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        if !self.shared.registry.is_empty() {
            warn!(connections = self.shared.registry.len(), "closing connections still busy at shutdown");
            self.shared.registry.kill_all(KillScope::Connection);
        }
        let threads = std::mem::take(&mut *self.shared.threads.lock());
        for thread in threads {
            let _ = thread.join();
        }
        info!(address = %self.local_address, "stopped listening");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The listener's own address, or loopback when it listens on all
/// addresses.
fn wake_address(local_address: SocketAddr) -> SocketAddr {
    let mut address = local_address;
    if address.ip().is_unspecified() {
        address.set_ip(if address.is_ipv4() { std::net::Ipv4Addr::LOCALHOST.into() } else { std::net::Ipv6Addr::LOCALHOST.into() });
    }
    address
}

fn accept_loop<F: SessionFactory>(listener: TcpListener, shared: Arc<Shared>, authenticator: Arc<dyn Authenticator>, factory: Arc<F>) {
    for incoming in listener.incoming() {
        if shared.shutting_down.load(Ordering::SeqCst) {
            break;
        }
        let socket = match incoming {
            Ok(socket) => socket,
            Err(error) => {
                // EMFILE and friends: back off instead of spinning.
                warn!(%error, "accept failed");
                thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        // Forget threads that have ended, so the list stays bounded.
        shared.threads.lock().retain(|thread| !thread.is_finished());
        // Only when not even the administrator's connection is free; else
        // the account decides after authentication.
        if !shared.gate.has_room() {
            refuse(socket, &MysqlError::too_many_connections());
            continue;
        }
        let peer = match socket.peer_addr() {
            Ok(peer) => peer,
            Err(_) => continue,
        };
        let registration = shared.registry.register(peer, socket.try_clone().ok());
        let mut config = shared.config.connection.clone();
        let ticket = shared.gate.admit(&socket, config.connect_timeout);
        config.max_allowed_packet = shared.dynamic.max_allowed_packet.load(Ordering::Relaxed);
        let authenticator = authenticator.clone();
        let factory = factory.clone();
        let id = registration.handle().id();
        let spawned = thread::Builder::new()
            .name(format!("mysql-conn-{id}"))
            .stack_size(STATEMENT_STACK_BYTES)
            .spawn(move || serve_connection(socket, config, registration, ticket, authenticator.as_ref(), factory.as_ref()));
        match spawned {
            Ok(thread) => shared.threads.lock().push(thread),
            Err(error) => warn!(%error, "cannot start a connection thread"),
        }
    }
}

/// Sends an error instead of the handshake (as MySQL does for "Too many
/// connections") and closes. The socket is fresh, so the short write does not
/// block; a timeout bounds it anyway.
fn refuse(mut socket: TcpStream, error: &MysqlError) {
    let payload = encode_err(error, mysql_common::constants::CapabilityFlags::empty());
    let mut packet = Vec::with_capacity(4 + payload.len());
    packet.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
    packet.push(0);
    packet.extend_from_slice(&payload);
    let _ = socket.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = socket.write_all(&packet);
    let _ = socket.shutdown(Shutdown::Write);
}
