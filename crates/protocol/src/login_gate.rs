//! The way in: connections between accept and the end of authentication
//! ("logins"), kept apart from the logged-in connections that
//! `max_connections` counts, so peers that never finish logging in cannot
//! lock anyone out.
//!
//! - A login has `connect_timeout` from accept to finish authenticating,
//!   however slowly its bytes arrive: a watchdog shuts the socket of a
//!   login past its deadline, and the connection's thread, reading, sees
//!   the end of the stream and ends. (A socket's read timeout alone starts
//!   again with every byte.)
//! - At most `logins_max` logins run at once; one more evicts the oldest
//!   (its socket is shut). An honest client authenticates within a few
//!   round trips, so the oldest login is the one most likely to be a slow
//!   or stalled peer, and a newcomer (an administrator locked out by such
//!   peers) gets its turn at once; refusing the newest instead would keep
//!   everyone out until the stalled logins time out.
//! - A logged-in connection takes a session slot. `max_connections` slots
//!   exist, and one more for an account with CONNECTION_ADMIN or SUPER
//!   (MySQL's connection reserved for an administrator); beyond them the
//!   login gets 1040. A connection is refused before the handshake only
//!   when not even the reserved slot is free.

use std::collections::BTreeMap;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::errors::MysqlError;

/// Logins running at once unless configured otherwise: enough for bursts
/// of honest clients, each a thread with a small handshake buffer.
pub const LOGINS_MAX_DEFAULT: usize = 128;

/// Longest the watchdog sleeps when no deadline is nearer (it is woken for
/// every new login anyway).
const WATCHDOG_IDLE: Duration = Duration::from_secs(1);

/// Logins in progress and session slots in use. Shared by the accept loop,
/// every connection thread and the watchdog.
pub struct LoginGate {
    logins_max: usize,
    max_connections: AtomicUsize,
    state: Mutex<State>,
    /// Wakes the watchdog for a new login or the server's stop.
    changed: Condvar,
}

struct State {
    /// Ticket numbers in accept order, so the first entry is the oldest.
    logins: BTreeMap<u64, Login>,
    next_ticket: u64,
    /// Logins whose socket is still open (evicted and timed-out logins
    /// stay in `logins` until their thread ends).
    live_logins: usize,
    sessions: usize,
    stopped: bool,
}

struct Login {
    deadline: Instant,
    /// A handle on the connection's socket; `None` once it has been shut
    /// (or could not be cloned).
    socket: Option<TcpStream>,
}

impl State {
    /// Shuts a login's socket; its thread ends on its own.
    fn shut(&mut self, ticket: u64) {
        if let Some(socket) = self.logins.get_mut(&ticket).and_then(|login| login.socket.take()) {
            let _ = socket.shutdown(Shutdown::Both);
            self.live_logins -= 1;
        }
    }
}

impl LoginGate {
    pub fn new(max_connections: usize, logins_max: usize) -> Arc<LoginGate> {
        Arc::new(LoginGate {
            logins_max: logins_max.max(1),
            max_connections: AtomicUsize::new(max_connections),
            state: Mutex::new(State { logins: BTreeMap::new(), next_ticket: 0, live_logins: 0, sessions: 0, stopped: false }),
            changed: Condvar::new(),
        })
    }

    pub fn set_max_connections(&self, max_connections: usize) {
        self.max_connections.store(max_connections, Ordering::Relaxed);
    }

    /// Whether a new connection may start logging in: false only when
    /// even the administrator's reserved slot is taken (it then gets 1040
    /// before the handshake).
    pub fn has_room(&self) -> bool {
        self.state.lock().sessions <= self.max_connections.load(Ordering::Relaxed)
    }

    /// Starts the login of a just-accepted `socket`, which must finish
    /// authenticating within `connect_timeout`. Evicts the oldest login
    /// when `logins_max` are running.
    pub fn admit(self: &Arc<Self>, socket: &TcpStream, connect_timeout: Duration) -> LoginTicket {
        let mut state = self.state.lock();
        while state.live_logins >= self.logins_max {
            let Some(oldest) = state.logins.iter().find(|(_, login)| login.socket.is_some()).map(|(ticket, _)| *ticket) else {
                break;
            };
            state.shut(oldest);
        }
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        let socket = socket.try_clone().ok();
        state.live_logins += usize::from(socket.is_some());
        state.logins.insert(ticket, Login { deadline: Instant::now() + connect_timeout, socket });
        drop(state);
        self.changed.notify_all();
        LoginTicket { gate: Arc::clone(self), ticket }
    }

    /// Logins in progress whose socket is open.
    pub fn logins(&self) -> usize {
        self.state.lock().live_logins
    }

    /// Logged-in connections.
    pub fn sessions(&self) -> usize {
        self.state.lock().sessions
    }

    /// Shuts every login past its deadline until [`LoginGate::stop`]; the
    /// body of the watchdog thread.
    pub fn watch(&self) {
        let mut state = self.state.lock();
        while !state.stopped {
            let now = Instant::now();
            let expired: Vec<u64> = state
                .logins
                .iter()
                .filter(|(_, login)| login.socket.is_some() && login.deadline <= now)
                .map(|(ticket, _)| *ticket)
                .collect();
            for ticket in expired {
                state.shut(ticket);
            }
            let next_deadline = state.logins.values().filter(|login| login.socket.is_some()).map(|login| login.deadline).min();
            let wait = next_deadline.map_or(WATCHDOG_IDLE, |deadline| deadline.saturating_duration_since(now).min(WATCHDOG_IDLE));
            self.changed.wait_for(&mut state, wait);
        }
    }

    /// Ends [`LoginGate::watch`].
    pub fn stop(&self) {
        self.state.lock().stopped = true;
        self.changed.notify_all();
    }
}

/// A login in progress; dropping it (the connection ended before logging
/// in) forgets it.
pub struct LoginTicket {
    gate: Arc<LoginGate>,
    ticket: u64,
}

impl LoginTicket {
    /// Ends the login of an authenticated connection: it takes a session
    /// slot (the reserved one only if `connection_admin`), or gets 1040.
    /// A login the watchdog has already shut gets 1043 (bad handshake),
    /// which its closed socket will not carry anyway.
    pub fn enter(self, connection_admin: bool) -> Result<SessionSlot, MysqlError> {
        let gate = Arc::clone(&self.gate);
        let mut state = gate.state.lock();
        let login = state.logins.remove(&self.ticket);
        let open = login.as_ref().is_some_and(|login| login.socket.is_some());
        state.live_logins -= usize::from(open);
        drop(login);
        let slots = gate.max_connections.load(Ordering::Relaxed) + usize::from(connection_admin);
        if !open {
            return Err(MysqlError::bad_handshake());
        }
        if state.sessions >= slots {
            return Err(MysqlError::too_many_connections());
        }
        state.sessions += 1;
        Ok(SessionSlot { gate: Arc::clone(&gate) })
    }
}

impl Drop for LoginTicket {
    fn drop(&mut self) {
        let mut state = self.gate.state.lock();
        if let Some(login) = state.logins.remove(&self.ticket) {
            state.live_logins -= usize::from(login.socket.is_some());
        }
    }
}

/// A logged-in connection's place among `max_connections`; dropping it
/// frees the place.
pub struct SessionSlot {
    gate: Arc<LoginGate>,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.gate.state.lock().sessions -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair(listener: &TcpListener) -> (TcpStream, TcpStream) {
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    }

    fn closed(client: &mut TcpStream) -> bool {
        use std::io::Read;
        client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        matches!(client.read(&mut [0u8; 1]), Ok(0) | Err(_))
    }

    #[test]
    fn the_oldest_login_is_evicted_beyond_logins_max() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let gate = LoginGate::new(10, 2);
        let (mut first_client, first) = pair(&listener);
        let (_second_client, second) = pair(&listener);
        let (_third_client, third) = pair(&listener);
        let _first = gate.admit(&first, Duration::from_secs(60));
        let second = gate.admit(&second, Duration::from_secs(60));
        assert_eq!(gate.logins(), 2);
        let third = gate.admit(&third, Duration::from_secs(60));
        assert_eq!(gate.logins(), 2);
        assert!(closed(&mut first_client), "the oldest login's socket is shut");
        let _sessions = [second.enter(false).expect("a slot"), third.enter(false).expect("a slot")];
        assert_eq!((gate.logins(), gate.sessions()), (0, 2));
    }

    #[test]
    fn max_connections_plus_one_for_an_administrator() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let gate = LoginGate::new(1, 8);
        let sockets: Vec<_> = (0..4).map(|_| pair(&listener)).collect();
        let ticket = |index: usize| gate.admit(&sockets[index].1, Duration::from_secs(60));
        let user = ticket(0).enter(false).expect("a free slot");
        assert!(gate.has_room(), "the reserved slot is free");
        assert_eq!(ticket(1).enter(false).err().map(|error| error.code), Some(1040));
        let admin = ticket(2).enter(true).expect("the reserved slot");
        assert!(!gate.has_room());
        assert_eq!(ticket(3).enter(true).err().map(|error| error.code), Some(1040));
        drop(user);
        assert!(gate.has_room());
        drop(admin);
        assert_eq!(gate.sessions(), 0);
    }

    #[test]
    fn the_watchdog_shuts_a_login_at_its_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let gate = LoginGate::new(10, 8);
        let watchdog = {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || gate.watch())
        };
        let (mut client, server) = pair(&listener);
        let started = Instant::now();
        let ticket = gate.admit(&server, Duration::from_millis(300));
        assert!(closed(&mut client));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(3), "{waited:?}");
        assert_eq!(ticket.enter(false).err().map(|error| error.code), Some(1043), "too late");
        gate.stop();
        watchdog.join().unwrap();
    }
}
