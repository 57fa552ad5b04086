//! The live connections: what SHOW PROCESSLIST lists, and where KILL and
//! KILL QUERY land.
//!
//! Each connection thread owns a [`Registration`] (dropping it removes the
//! entry) and hands [`ConnectionHandle`]s to its session, which polls the
//! kill flags at safe points of long statements.

use std::collections::BTreeMap;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::errors::MysqlError;
use crate::memory::MemoryAccount;

/// Bound on the statement text kept per connection for SHOW PROCESSLIST's
/// Info column, so a 1 GiB statement is not copied for display.
pub const INFO_BYTES_MAX: usize = 64 * 1024;

/// What `KILL` ends: the running statement (`KILL QUERY`) or the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillScope {
    Query,
    Connection,
}

/// One row of SHOW PROCESSLIST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    pub id: u32,
    pub user: String,
    /// `host:port` as MySQL shows it.
    pub host: String,
    pub db: Option<String>,
    /// `Sleep`, `Query`, `Execute`, `Binlog Dump`, ...
    pub command: String,
    /// Seconds in the current command.
    pub time_secs: u64,
    pub state: String,
    pub info: Option<String>,
    /// MariaDB's MEMORY_USED and MAX_MEMORY_USED ([`MemoryAccount`]).
    pub memory_used_bytes: usize,
    pub memory_used_bytes_max: usize,
}

#[derive(Debug)]
struct Status {
    user: String,
    host: String,
    db: Option<String>,
    command: &'static str,
    state: String,
    info: Option<String>,
    command_started: Instant,
}

#[derive(Debug)]
struct Entry {
    id: u32,
    /// A clone of the connection's socket, so KILL can wake a thread blocked
    /// in a read by shutting the socket down.
    socket: Option<TcpStream>,
    connection_killed: AtomicBool,
    query_killed: AtomicBool,
    /// The connection speaks TLS: KILL leaves its sending side open for
    /// the close_notify ([`KILLED_TLS_CLOSE_GRACE`]).
    tls: AtomicBool,
    /// A KILL statement (not a server shutdown) ended the connection: the
    /// statement it interrupted gets no answer, as in mysqld.
    killed_by_statement: AtomicBool,
    status: Mutex<Status>,
    memory: MemoryAccount,
}

/// How long a killed TLS connection's thread has to send its close_notify
/// (and the mariadb client to report 2013 "Lost connection", as against
/// MySQL, rather than a TLS error) before its socket is shut both ways: a
/// thread blocked writing to a client that reads nothing wakes only then.
pub const KILLED_TLS_CLOSE_GRACE: Duration = Duration::from_secs(2);

/// All live connections of one server.
#[derive(Debug)]
pub struct Registry {
    entries: Mutex<BTreeMap<u32, Arc<Entry>>>,
    next_id: AtomicU32,
    started: Instant,
    /// Statements received (COM_QUERY and COM_STMT_EXECUTE): the
    /// `Questions` status counter.
    questions: AtomicU64,
    /// Prepared statements open on every connection (`Prepared_stmt_count`).
    prepared_statements_open: AtomicUsize,
    /// `max_prepared_stmt_count`: a bound on the whole server's, as in MySQL.
    prepared_statements_max: AtomicUsize,
}

/// MySQL's default `max_prepared_stmt_count`.
pub const PREPARED_STATEMENTS_MAX_DEFAULT: usize = 16_382;

impl Registry {
    pub fn new() -> Arc<Registry> {
        Arc::new(Registry {
            entries: Mutex::new(BTreeMap::new()),
            next_id: AtomicU32::new(1),
            started: Instant::now(),
            questions: AtomicU64::new(0),
            prepared_statements_open: AtomicUsize::new(0),
            prepared_statements_max: AtomicUsize::new(PREPARED_STATEMENTS_MAX_DEFAULT),
        })
    }

    /// Registers a new connection in the state "unauthenticated user /
    /// Connect", with the next connection id.
    pub fn register(self: &Arc<Self>, peer: SocketAddr, socket: Option<TcpStream>) -> Registration {
        let mut entries = self.entries.lock();
        // Ids are 32-bit on the wire and wrap after 4 billion connections;
        // skip 0 (reserved) and any id still alive.
        let id = loop {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            if id != 0 && !entries.contains_key(&id) {
                break id;
            }
        };
        let entry = Arc::new(Entry {
            id,
            socket,
            connection_killed: AtomicBool::new(false),
            query_killed: AtomicBool::new(false),
            tls: AtomicBool::new(false),
            killed_by_statement: AtomicBool::new(false),
            status: Mutex::new(Status {
                user: "unauthenticated user".into(),
                host: display_host(peer),
                db: None,
                command: "Connect",
                state: "login".into(),
                info: None,
                command_started: Instant::now(),
            }),
            memory: MemoryAccount::default(),
        });
        entries.insert(id, entry.clone());
        Registration { handle: ConnectionHandle { entry, registry: self.clone() } }
    }

    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn uptime_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    pub fn questions(&self) -> u64 {
        self.questions.load(Ordering::Relaxed)
    }

    pub(crate) fn count_question(&self) {
        self.questions.fetch_add(1, Ordering::Relaxed);
    }

    /// `Prepared_stmt_count`: prepared statements open on the server.
    pub fn prepared_statements(&self) -> usize {
        self.prepared_statements_open.load(Ordering::Relaxed)
    }

    pub fn prepared_statements_max(&self) -> usize {
        self.prepared_statements_max.load(Ordering::Relaxed)
    }

    /// SET GLOBAL max_prepared_stmt_count: statements already open stay
    /// open; new ones wait until the count is below the new bound.
    pub fn set_prepared_statements_max(&self, max: usize) {
        self.prepared_statements_max.store(max, Ordering::Relaxed);
    }

    /// Takes one of the server's prepared statement slots, or 1461 when
    /// all are taken. One compare-and-swap, so two connections preparing
    /// at once cannot both take the last slot.
    pub(crate) fn open_prepared_statement(&self) -> Result<(), MysqlError> {
        let max = self.prepared_statements_max();
        self.prepared_statements_open
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |open| (open < max).then_some(open + 1))
            .map(|_| ())
            .map_err(|_| MysqlError::too_many_prepared_statements(max))
    }

    pub(crate) fn close_prepared_statements(&self, count: usize) {
        self.prepared_statements_open.fetch_sub(count, Ordering::Relaxed);
    }

    /// `SHOW GLOBAL STATUS LIKE 'Memory_used'`: every connection's
    /// memory figure added up.
    pub fn memory_used_bytes(&self) -> usize {
        self.entries.lock().values().map(|entry| entry.memory.used_bytes()).sum()
    }

    /// SHOW PROCESSLIST, ordered by id.
    pub fn processes(&self) -> Vec<ProcessInfo> {
        let entries: Vec<Arc<Entry>> = self.entries.lock().values().cloned().collect();
        entries
            .iter()
            .map(|entry| {
                let status = entry.status.lock();
                ProcessInfo {
                    id: entry.id,
                    user: status.user.clone(),
                    host: status.host.clone(),
                    db: status.db.clone(),
                    command: if entry.connection_killed.load(Ordering::Relaxed) { "Killed".into() } else { status.command.into() },
                    time_secs: status.command_started.elapsed().as_secs(),
                    state: status.state.clone(),
                    info: status.info.clone(),
                    memory_used_bytes: entry.memory.used_bytes(),
                    memory_used_bytes_max: entry.memory.used_bytes_max(),
                }
            })
            .collect()
    }

    /// KILL [QUERY] id. Killing a connection also shuts its socket down, so a
    /// thread blocked reading the next command wakes up and exits.
    pub fn kill(&self, id: u32, scope: KillScope) -> Result<(), MysqlError> {
        let entry = self.entries.lock().get(&id).cloned().ok_or_else(|| MysqlError::no_such_thread(id.into()))?;
        entry.kill(scope);
        Ok(())
    }

    /// Kills every connection (server shutdown). With `KillScope::Query` the
    /// sockets are only shut for reading, so running statements can still
    /// answer; with `Connection` they are shut both ways.
    pub(crate) fn kill_all(&self, scope: KillScope) {
        let entries: Vec<Arc<Entry>> = self.entries.lock().values().cloned().collect();
        for entry in entries {
            entry.query_killed.store(true, Ordering::Relaxed);
            entry.connection_killed.store(true, Ordering::Relaxed);
            if let Some(socket) = &entry.socket {
                let how = if scope == KillScope::Connection { Shutdown::Both } else { Shutdown::Read };
                let _ = socket.shutdown(how);
            }
        }
    }

    fn unregister(&self, id: u32) {
        self.entries.lock().remove(&id);
    }
}

impl Entry {
    /// A plain connection's socket is shut both ways: its thread wakes,
    /// whether reading or writing, and the client sees the connection
    /// end. A TLS connection's is shut for reading, which wakes a thread
    /// waiting for the next command to close with a close_notify
    /// ([`crate::connection::serve_connection`]); both ways only after
    /// [`KILLED_TLS_CLOSE_GRACE`], for a thread blocked in a write.
    fn kill(self: &Arc<Self>, scope: KillScope) {
        self.query_killed.store(true, Ordering::Relaxed);
        if scope != KillScope::Connection {
            return;
        }
        self.killed_by_statement.store(true, Ordering::Relaxed);
        self.connection_killed.store(true, Ordering::Relaxed);
        let Some(socket) = &self.socket else { return };
        if !self.tls.load(Ordering::Relaxed) {
            let _ = socket.shutdown(Shutdown::Both);
            return;
        }
        let _ = socket.shutdown(Shutdown::Read);
        let entry = Arc::clone(self);
        // The entry's socket is its own descriptor (a clone), so a late
        // shutdown never reaches another connection's socket.
        let spawned = std::thread::Builder::new().name("kill-tls-grace".into()).spawn(move || {
            std::thread::sleep(KILLED_TLS_CLOSE_GRACE);
            if let Some(socket) = &entry.socket {
                let _ = socket.shutdown(Shutdown::Both);
            }
        });
        if spawned.is_err() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }
}

/// MySQL shows TCP clients as `host:port`, loopback ones as `localhost`.
fn display_host(peer: SocketAddr) -> String {
    format!("{}:{}", client_host(peer), peer.port())
}

/// The host part of a client's account name: `localhost` for loopback.
pub fn client_host(peer: SocketAddr) -> String {
    if peer.ip().is_loopback() {
        "localhost".into()
    } else {
        peer.ip().to_string()
    }
}

/// A view of one connection's registry entry, for its session (set the
/// state, poll kill flags) and for server code.
#[derive(Debug, Clone)]
pub struct ConnectionHandle {
    entry: Arc<Entry>,
    registry: Arc<Registry>,
}

impl ConnectionHandle {
    pub fn id(&self) -> u32 {
        self.entry.id
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// True after KILL (connection) or server shutdown.
    pub fn is_killed(&self) -> bool {
        self.entry.connection_killed.load(Ordering::Relaxed)
    }

    /// True after KILL QUERY or KILL of this connection: a running statement
    /// should stop and return [`MysqlError::query_interrupted`].
    pub fn is_query_killed(&self) -> bool {
        self.entry.query_killed.load(Ordering::Relaxed)
    }

    /// True after a KILL statement ended the connection (not a shutdown,
    /// whose interrupted statements still answer).
    pub(crate) fn is_killed_by_statement(&self) -> bool {
        self.entry.killed_by_statement.load(Ordering::Relaxed)
    }

    /// The connection now speaks TLS (see [`KILLED_TLS_CLOSE_GRACE`]).
    pub(crate) fn set_tls(&self) {
        self.entry.tls.store(true, Ordering::Relaxed);
    }

    /// The connection's memory figure: set by its thread, read by anyone.
    pub fn memory(&self) -> &MemoryAccount {
        &self.entry.memory
    }

    /// SHOW PROCESSLIST's State column (`executing`, `Sending data`, ...).
    pub fn set_state(&self, state: &str) {
        let mut status = self.entry.status.lock();
        status.state.clear();
        status.state.push_str(state);
    }

    pub fn set_db(&self, db: Option<&str>) {
        self.entry.status.lock().db = db.map(str::to_owned);
    }

    pub(crate) fn set_user(&self, user: &str) {
        self.entry.status.lock().user = user.to_owned();
    }

    /// A new command starts: clears a KILL QUERY aimed at the previous one
    /// (as MySQL does) and shows the command in the process list.
    pub(crate) fn begin_command(&self, command: &'static str, info: Option<&str>) {
        self.entry.query_killed.store(self.is_killed(), Ordering::Relaxed);
        let mut status = self.entry.status.lock();
        status.command = command;
        // In place: the string keeps its allocation from one command to
        // the next.
        status.state.clear();
        if command != "Sleep" {
            status.state.push_str("starting");
        }
        status.info = info.map(|text| truncate_on_char_boundary(text, INFO_BYTES_MAX).to_owned());
        status.command_started = Instant::now();
    }

    /// The command finished: back to Sleep.
    pub(crate) fn end_command(&self) {
        self.begin_command("Sleep", None);
    }

    pub(crate) fn set_info(&self, info: &str) {
        self.entry.status.lock().info = Some(truncate_on_char_boundary(info, INFO_BYTES_MAX).to_owned());
    }
}

fn truncate_on_char_boundary(text: &str, bytes_max: usize) -> &str {
    if text.len() <= bytes_max {
        return text;
    }
    let mut end = bytes_max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Owned by the connection thread; removes the entry when dropped, however
/// the thread ends (including a panic).
#[derive(Debug)]
pub struct Registration {
    handle: ConnectionHandle,
}

impl Registration {
    pub fn handle(&self) -> &ConnectionHandle {
        &self.handle
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.handle.registry.unregister(self.handle.entry.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_list_kill_unregister() {
        let registry = Registry::new();
        let peer: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let first = registry.register(peer, None);
        let second = registry.register(peer, None);
        assert_ne!(first.handle().id(), second.handle().id());
        first.handle().set_user("root");
        first.handle().begin_command("Query", Some("SELECT 1"));
        let list = registry.processes();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].host, "localhost:5000");
        assert_eq!(list[0].command, "Query");
        assert_eq!(list[0].info.as_deref(), Some("SELECT 1"));
        assert_eq!(list[1].user, "unauthenticated user");

        registry.kill(first.handle().id(), KillScope::Query).unwrap();
        assert!(first.handle().is_query_killed() && !first.handle().is_killed());
        first.handle().begin_command("Query", None);
        assert!(!first.handle().is_query_killed(), "a new statement clears KILL QUERY");
        registry.kill(second.handle().id(), KillScope::Connection).unwrap();
        assert!(second.handle().is_killed() && second.handle().is_query_killed());
        assert_eq!(registry.kill(999, KillScope::Query).unwrap_err().code, 1094);

        drop(first);
        assert_eq!(registry.len(), 1);
    }

    #[test]
    fn info_is_bounded() {
        let text = "é".repeat(INFO_BYTES_MAX);
        assert!(truncate_on_char_boundary(&text, INFO_BYTES_MAX).len() <= INFO_BYTES_MAX);
    }
}
