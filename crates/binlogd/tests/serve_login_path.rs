//! The way in stays open: clients that never finish logging in neither
//! count towards `max_connections` nor outlast `connect_timeout` (measured
//! from accept, however slowly their bytes arrive), and an administrator
//! gets the one connection MySQL reserves beyond `max_connections`.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use support::ServerProcess;
use testkit::raw_client::RawClient;

const SLOW_CLIENTS: usize = 151;

/// A client that sends one byte of a handshake response every 500 ms and
/// never finishes; the time it connected and the time the server closed it.
struct SlowClient {
    socket: TcpStream,
    connected: Instant,
    closed: Option<Instant>,
}

#[test]
fn root_logs_in_while_151_slow_clients_hold_their_sockets() {
    let server = ServerProcess::start_with(&["--connect-timeout=2", "--max-connections=4"]);
    let mut slow: Vec<SlowClient> = (0..SLOW_CLIENTS)
        .map(|_| {
            let socket = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
            socket.set_nonblocking(true).unwrap();
            SlowClient { socket, connected: Instant::now(), closed: None }
        })
        .collect();
    let trickling = Arc::new(AtomicBool::new(true));
    let root_login = {
        let trickling = Arc::clone(&trickling);
        let port = server.port;
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(700));
            let started = Instant::now();
            let output = support::mariadb_client(port, "root", "", None, "SELECT CURRENT_USER()");
            let took = started.elapsed();
            trickling.store(false, Ordering::SeqCst);
            (output, took)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while slow.iter().any(|client| client.closed.is_none()) && Instant::now() < deadline {
        for client in slow.iter_mut().filter(|client| client.closed.is_none()) {
            if server_closed(&mut client.socket) {
                client.closed = Some(Instant::now());
            } else {
                // One byte of a handshake response, again and again: a
                // per-read timeout would start over with each.
                let _ = client.socket.write(&[0x01]);
            }
        }
        thread::sleep(Duration::from_millis(500));
    }
    let (output, took) = root_login.join().unwrap();
    assert!(output.status.success(), "root: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "root@localhost");
    assert!(took < Duration::from_secs(2), "root waited {took:?}");
    for (index, client) in slow.iter().enumerate() {
        let closed = client.closed.unwrap_or_else(|| panic!("slow client {index} still open after 10 s"));
        let held = closed - client.connected;
        assert!(held < Duration::from_millis(3_500), "slow client {index} held its socket {held:?} with connect_timeout=2");
    }
    assert!(slow.iter().filter(|client| client.closed.unwrap() - client.connected >= Duration::from_millis(1_500)).count() > 0);
    drop(trickling);
    assert_eq!(server.query(None, "SELECT 1").trim(), "1", "the server serves on");
}

/// True when the server has closed its end: a read gives end of stream or
/// an error (after the handshake it sent).
fn server_closed(socket: &mut TcpStream) -> bool {
    let mut buffer = [0u8; 256];
    loop {
        match socket.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

#[test]
fn max_connections_reached_by_logged_in_users_still_lets_an_administrator_in_once() {
    let server = ServerProcess::start_with(&["--max-connections=2"]);
    server.query(
        None,
        "CREATE USER app IDENTIFIED BY 'app-pw'; GRANT SELECT ON *.* TO app;
         CREATE USER ops IDENTIFIED BY 'ops-pw'; GRANT CONNECTION_ADMIN ON *.* TO ops",
    );
    let login = |user: &str, password: &str| RawClient::login_to(server.port, user, password, None);
    let _first = login("app", "app-pw").expect("app, first slot");
    let _second = login("app", "app-pw").expect("app, second slot");
    let refused = login("app", "app-pw").err().expect("no slot left for app");
    assert_eq!((refused.code, refused.state.as_str(), refused.message.as_str()), (1040, "08004", "Too many connections"));
    let error = server.error_as("app", "app-pw", None, "SELECT 1");
    assert!(error.contains("1040") && error.contains("Too many connections"), "{error}");

    let mut ops = login("ops", "ops-pw").expect("CONNECTION_ADMIN takes the reserved connection");
    assert_eq!(ops.value("SELECT CURRENT_USER()"), "ops@%");
    let error = server.error(None, "SELECT 1");
    assert!(error.contains("1040"), "the reserved connection is taken: {error}");
    drop(ops);
    thread::sleep(Duration::from_millis(200));
    assert_eq!(server.query(None, "SELECT CURRENT_USER()").trim(), "root@localhost", "SUPER takes it once it is free");
}
