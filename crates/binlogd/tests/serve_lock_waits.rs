//! Lock waits are bounded by the session's variables, as in MySQL:
//! - a row lock wait by the session's `innodb_lock_wait_timeout`, even
//!   when the global value is far longer;
//! - DDL waiting for an open transaction that wrote its table, and a
//!   write waiting for that DDL, by the session's `lock_wait_timeout`
//!   (the metadata lock wait), not by `innodb_lock_wait_timeout`.
//!
//! Each waiting statement runs on a thread given far longer than the
//! session's timeout but far shorter than the global one, so a wait that
//! followed the wrong variable fails the test instead of passing late.

mod support;

use std::sync::mpsc;
use std::time::Duration;

use support::ServerProcess;
use testkit::raw_client::{RawClient, ServerErr};

/// Far above the sessions' 1 s timeouts, far below the global values.
const RETURN_WITHIN: Duration = Duration::from_secs(30);

fn client(server: &ServerProcess) -> RawClient {
    RawClient::login_to(server.port, "root", "", None).unwrap()
}

fn ok(client: &mut RawClient, sql: &str) {
    client.query(sql).unwrap_or_else(|error| panic!("{sql}: {error:?}"));
}

/// Runs `statements` on a new connection and returns the last one's error;
/// panics when it does not come back within [`RETURN_WITHIN`].
fn error_within_bound(server: &ServerProcess, statements: &[&str]) -> ServerErr {
    let port = server.port;
    let owned: Vec<String> = statements.iter().map(|s| s.to_string()).collect();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let statements = owned;
        let mut waiter = RawClient::login_to(port, "root", "", None).unwrap();
        let (last, setup) = statements.split_last().unwrap();
        for sql in setup {
            waiter.query(sql).unwrap();
        }
        let _ = sender.send(waiter.query(last).map(|_| ()));
    });
    match receiver.recv_timeout(RETURN_WITHIN) {
        Ok(Err(error)) => error,
        Ok(other) => panic!("expected a server error, got {other:?}"),
        Err(_) => panic!("the wait was not bounded by the session's timeout: {statements:?}"),
    }
}

fn assert_lock_wait_timeout(error: &ServerErr) {
    assert_eq!(
        (error.code, error.state.as_str(), error.message.as_str()),
        (1205, "HY000", "Lock wait timeout exceeded; try restarting transaction")
    );
}

/// A server with d.t holding row 1, its global innodb_lock_wait_timeout
/// set, and an administrator's connection.
fn server_with_a_row(innodb_lock_wait_timeout_s: u32) -> (ServerProcess, RawClient) {
    let server = ServerProcess::start();
    let mut admin = client(&server);
    ok(&mut admin, "CREATE DATABASE d");
    ok(&mut admin, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
    ok(&mut admin, "INSERT INTO d.t VALUES (1, 1)");
    ok(&mut admin, &format!("SET GLOBAL innodb_lock_wait_timeout = {innodb_lock_wait_timeout_s}"));
    (server, admin)
}

#[test]
fn a_row_lock_wait_ends_after_the_sessions_innodb_lock_wait_timeout() {
    let (server, mut admin) = server_with_a_row(3600);
    let mut holder = client(&server);
    ok(&mut holder, "BEGIN");
    ok(&mut holder, "UPDATE d.t SET v = 2 WHERE id = 1");

    let error = error_within_bound(&server, &["SET SESSION innodb_lock_wait_timeout = 1", "UPDATE d.t SET v = 3 WHERE id = 1"]);
    assert_lock_wait_timeout(&error);
    // Inside an explicit transaction, and set after it began.
    let error = error_within_bound(&server, &["BEGIN", "SET SESSION innodb_lock_wait_timeout = 1", "DELETE FROM d.t WHERE id = 1"]);
    assert_lock_wait_timeout(&error);

    ok(&mut holder, "COMMIT");
    assert_eq!(server.query(None, "SELECT v FROM d.t"), "2\n");
    ok(&mut admin, "SET GLOBAL innodb_lock_wait_timeout = 50");
}

#[test]
fn ddl_and_writes_behind_it_wait_for_the_sessions_lock_wait_timeout() {
    let (server, mut admin) = server_with_a_row(1);
    let mut holder = client(&server);
    ok(&mut holder, "BEGIN");
    ok(&mut holder, "INSERT INTO d.t VALUES (2, 2)");

    // The row lock timeout is short, the metadata one long: DDL follows the
    // metadata one, so it is still waiting after the row lock timeout.
    let port = server.port;
    let alter = std::thread::spawn(move || {
        let mut alterer = RawClient::login_to(port, "root", "", None).unwrap();
        alterer.query("SET SESSION lock_wait_timeout = 3600").unwrap();
        alterer.query("ALTER TABLE d.t ADD COLUMN w INT").map(|_| ())
    });
    std::thread::sleep(Duration::from_secs(3));
    assert!(!alter.is_finished(), "ALTER gave up after innodb_lock_wait_timeout instead of lock_wait_timeout");
    // A write queued behind the waiting ALTER waits for its own session's
    // lock_wait_timeout, here short while its row lock timeout is long.
    let error = error_within_bound(
        &server,
        &["SET SESSION innodb_lock_wait_timeout = 3600", "SET SESSION lock_wait_timeout = 1", "INSERT INTO d.t VALUES (9, 9)"],
    );
    assert_lock_wait_timeout(&error);
    ok(&mut holder, "COMMIT");
    alter.join().unwrap().unwrap();

    // And with the metadata timeout short, every DDL statement on a held table gives up after it.
    ok(&mut admin, "SET GLOBAL innodb_lock_wait_timeout = 3600");
    ok(&mut holder, "BEGIN");
    ok(&mut holder, "INSERT INTO d.t VALUES (3, 3, 3)");
    for ddl in
        ["ALTER TABLE d.t ADD COLUMN x INT", "CREATE INDEX v ON d.t (v)", "TRUNCATE TABLE d.t", "RENAME TABLE d.t TO d.u", "DROP TABLE d.t"]
    {
        let error = error_within_bound(&server, &["SET SESSION lock_wait_timeout = 1", ddl]);
        assert_lock_wait_timeout(&error);
    }
    ok(&mut holder, "COMMIT");
    assert_eq!(server.query(None, "SELECT id, v, w FROM d.t ORDER BY id"), "1\t1\tNULL\n2\t2\tNULL\n3\t3\t3\n");
    ok(&mut admin, "SET GLOBAL innodb_lock_wait_timeout = 50");
}
