//! `SET gtid_next` through the `mariadb` client against `binlogd serve`:
//! transactions, DDL and empty transactions committed with a source's
//! GTID, skipped when executed, 1837 until gtid_next is set again, 1227
//! without the privilege, 1231 for a malformed value, `@@gtid_executed`
//! with two UUIDs, and all of it after a restart, with `binlogd inspect
//! --verify` and `mariadb-binlog` reading the files.

mod support;

use support::{inspect, ServerProcess};

use testkit::SOURCE_UUID as SOURCE;

fn assert_error(stderr: &str, code_and_state: &str, message: &str) {
    assert!(stderr.contains(code_and_state) && stderr.contains(message), "expected {code_and_state} {message}, got: {stderr}");
}

/// `@@gtid_executed` as MySQL prints it (UUIDs sorted, `,\n` between
/// them; the batch-mode client shows the newline as `\n`).
fn expected_executed(own: &str, own_last: u64, source: &str) -> String {
    let mut parts = [format!("{own}:1-{own_last}"), source.to_string()];
    parts.sort();
    format!("{}\n", parts.join(",\\n"))
}

#[test]
fn gtid_next_through_the_mariadb_client() {
    gtid_next_session(&[]);
}

#[test]
fn gtid_next_with_the_engine_integrated_binlog() {
    gtid_next_session(&["--binlog_storage_engine=engine"]);
}

/// SHOW BINLOG EVENTS once it holds `count` Gtid events (the engine
/// mode's files are written behind commits).
fn binlog_events(server: &ServerProcess, count: usize) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let events = server.query(None, "SHOW BINLOG EVENTS");
        if events.matches("\tGtid\t").count() >= count || std::time::Instant::now() > deadline {
            return events;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn gtid_next_session(options: &[&str]) {
    let mut server = ServerProcess::start_with(options);
    server.query(None, "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, PRIMARY KEY (id))");
    let own = server.query(None, "SELECT @@server_uuid").trim().to_string();
    let mode = if options.iter().any(|o| o.ends_with("=engine")) { "engine\n" } else { "\n" };
    assert_eq!(server.query(None, "SELECT @@binlog_storage_engine"), mode);
    assert_eq!(server.query(None, "SELECT @@gtid_next, @@session.gtid_next"), "AUTOMATIC\tAUTOMATIC\n");

    // An autocommit statement, then a multi-statement transaction, each
    // with the source's GTID.
    server.query(None, &format!("SET gtid_next = '{SOURCE}:1'; INSERT INTO shop.t VALUES (1); SET gtid_next = 'AUTOMATIC'"));
    server.query(None, &format!("SET @@SESSION.GTID_NEXT = '{SOURCE}:2'; BEGIN; INSERT INTO shop.t VALUES (2); INSERT INTO shop.t VALUES (3); COMMIT; SET gtid_next = AUTOMATIC"));
    // DDL and an empty transaction.
    server.query(
        None,
        &format!(
            "SET SESSION gtid_next = '{SOURCE}:3'; CREATE TABLE shop.u (id INT NOT NULL, PRIMARY KEY (id)); SET gtid_next = 'AUTOMATIC'"
        ),
    );
    server.query(None, &format!("SET gtid_next = '{SOURCE}:4'; BEGIN; COMMIT; SET gtid_next = 'AUTOMATIC'"));
    // Ownership shows in @@gtid_next and ends with the session.
    assert_eq!(server.query(None, &format!("SET gtid_next = '{SOURCE}:9'; SELECT @@gtid_next")), format!("{SOURCE}:9\n"));

    // Already executed: skipped without error, rows unchanged.
    server.query(None, &format!("SET gtid_next = '{SOURCE}:1'; INSERT INTO shop.t VALUES (100); SET gtid_next = 'AUTOMATIC'"));
    server.query(None, &format!("SET gtid_next = '{SOURCE}:2'; BEGIN; DELETE FROM shop.t; COMMIT; SET gtid_next = 'AUTOMATIC'"));
    server.query(
        None,
        &format!("SET gtid_next = '{SOURCE}:3'; CREATE TABLE shop.v (id INT NOT NULL, PRIMARY KEY (id)); SET gtid_next = 'AUTOMATIC'"),
    );
    assert_eq!(server.query(None, "SELECT id FROM shop.t ORDER BY id"), "1\n2\n3\n");
    assert_eq!(server.query(None, "SHOW TABLES FROM shop"), "t\nu\n");

    // After the commit gtid_next must be set again.
    let error = server.error(None, &format!("SET gtid_next = '{SOURCE}:5'; INSERT INTO shop.t VALUES (5); INSERT INTO shop.t VALUES (6)"));
    assert_error(
        &error,
        "ERROR 1837 (HY000)",
        &format!("When @@SESSION.GTID_NEXT is set to a GTID, you must explicitly set it to a different value after a COMMIT or ROLLBACK. Please check GTID_NEXT variable manual page for detailed explanation. Current @@SESSION.GTID_NEXT is '{SOURCE}:5'."),
    );
    assert_eq!(server.query(None, "SELECT id FROM shop.t ORDER BY id"), "1\n2\n3\n5\n");
    // Malformed values, SET GLOBAL, a change while owning a GTID.
    assert_error(
        &server.error(None, "SET gtid_next = 'bogus'"),
        "ERROR 1231 (42000)",
        "Variable 'gtid_next' can't be set to the value of 'bogus'",
    );
    assert_error(&server.error(None, &format!("SET gtid_next = '{SOURCE}:0'")), "ERROR 1231 (42000)", "can't be set to the value of");
    assert_error(
        &server.error(None, &format!("SET GLOBAL gtid_next = '{SOURCE}:7'")),
        "ERROR 1228 (HY000)",
        "Variable 'gtid_next' is a SESSION variable and can't be used with SET GLOBAL",
    );
    assert_error(
        &server.error(None, &format!("SET gtid_next = '{SOURCE}:7'; SET gtid_next = 'AUTOMATIC'")),
        "ERROR 1790 (HY000)",
        &format!("@@SESSION.GTID_NEXT cannot be changed by a client that owns a GTID. The client owns {SOURCE}:7. Ownership is released on COMMIT or ROLLBACK."),
    );
    assert_error(
        &server.error(None, &format!("BEGIN; INSERT INTO shop.t VALUES (7); SET gtid_next = '{SOURCE}:7'")),
        "ERROR 1768 (HY000)",
        "The system variable @@SESSION.GTID_NEXT cannot change inside a transaction.",
    );
    // Without SYSTEM_VARIABLES_ADMIN or SUPER.
    server.query(None, "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'; GRANT ALL ON shop.* TO 'app'@'%'");
    assert_error(
        &server.error_as("app", "app-pw", None, &format!("SET gtid_next = '{SOURCE}:8'")),
        "ERROR 1227 (42000)",
        "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation",
    );

    // Automatic GTIDs go on with the server's UUID.
    server.query(None, "INSERT INTO shop.t VALUES (10)");
    let executed = server.query(None, "SELECT @@global.gtid_executed");
    let own_last: u64 = {
        let own_part = executed.split("\\n").chain(executed.split(',')).find(|p| p.starts_with(&own)).unwrap().trim().trim_end_matches(',');
        own_part.rsplit('-').next().unwrap().parse().unwrap()
    };
    assert_eq!(executed, expected_executed(&own, own_last, &format!("{SOURCE}:1-5")));
    let status = server.query(None, "SHOW MASTER STATUS");
    assert!(status.ends_with(&expected_executed(&own, own_last, &format!("{SOURCE}:1-5"))), "{status}");

    let events = binlog_events(&server, own_last as usize + 5);
    for gno in 1..=5 {
        assert_eq!(events.matches(&format!("SET @@SESSION.GTID_NEXT= '{SOURCE}:{gno}'")).count(), 1, "{events}");
    }
    assert!(events.contains(&format!("SET @@SESSION.GTID_NEXT= '{own}:{own_last}'")), "{events}");
    assert!(events.contains("CREATE TABLE shop.u"), "{events}");

    // Two sessions set the same GTID: the second waits for the owner's
    // COMMIT, then skips its transaction.
    let owner = {
        let port = server.port;
        std::thread::spawn(move || {
            support::mariadb_client(
                port,
                "root",
                "",
                None,
                &format!("SET gtid_next = '{SOURCE}:30'; BEGIN; INSERT INTO shop.t VALUES (30); SELECT SLEEP(1); COMMIT"),
            )
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    server.query(None, &format!("SET gtid_next = '{SOURCE}:30'; INSERT INTO shop.t VALUES (31); SET gtid_next = 'AUTOMATIC'"));
    let waited = started.elapsed();
    assert!(owner.join().unwrap().status.success());
    assert!(waited >= std::time::Duration::from_millis(400), "the second session did not wait for the owner: {waited:?}");
    assert_eq!(server.query(None, "SELECT id FROM shop.t WHERE id >= 30 ORDER BY id"), "30\n");

    server.restart();
    assert_eq!(server.query(None, "SELECT @@gtid_executed"), expected_executed(&own, own_last, &format!("{SOURCE}:1-5:30")));
    server.query(None, &format!("SET gtid_next = '{SOURCE}:5'; INSERT INTO shop.t VALUES (55); SET gtid_next = 'AUTOMATIC'"));
    assert_eq!(server.query(None, "SELECT id FROM shop.t ORDER BY id"), "1\n2\n3\n5\n10\n30\n");
    server.query(None, &format!("SET gtid_next = '{SOURCE}:6'; INSERT INTO shop.t VALUES (6); SET gtid_next = 'AUTOMATIC'"));
    assert_eq!(server.query(None, "SELECT @@gtid_executed"), expected_executed(&own, own_last, &format!("{SOURCE}:1-6:30")));
    server.stop();

    for file in server.binlog_files() {
        inspect(&["--verify"], &file);
        let output = std::process::Command::new("mariadb-binlog").arg("--verbose").arg(&file).output().unwrap();
        assert!(output.status.success(), "mariadb-binlog {}: {}", file.display(), String::from_utf8_lossy(&output.stderr));
    }
}

/// A session setting gtid_next to a GTID another session owns waits, as
/// in MySQL, and KILL QUERY ends the wait with 1317; once the owner lets
/// go, the GTID can be owned again.
#[test]
fn kill_query_ends_a_wait_for_an_owned_gtid() {
    use std::process::{Command, Stdio};
    let server = ServerProcess::start();
    let client = |sql: &str| {
        Command::new("mariadb")
            .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", "-e", sql])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let owner_sql = format!("SET gtid_next = '{SOURCE}:7'; SELECT SLEEP(30)");
    let waiter_sql = format!("SET gtid_next = '{SOURCE}:7'");
    let mut owner = client(&owner_sql);
    let connection_of = |statement: &str| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let list = server.query(None, "SHOW FULL PROCESSLIST");
            if let Some(line) = list.lines().find(|line| line.ends_with(statement)) {
                return line.split('\t').next().unwrap().to_string();
            }
            assert!(std::time::Instant::now() < deadline, "{statement} never showed up:\n{list}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    // The owner is sleeping with the GTID owned.
    let owner_id = connection_of("SELECT SLEEP(30)");
    let waiter = client(&waiter_sql);
    let waiter_id = connection_of(&waiter_sql);
    std::thread::sleep(std::time::Duration::from_millis(200));
    server.query(None, &format!("KILL QUERY {waiter_id}"));
    let output = waiter.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the wait ended without an error");
    assert_error(&stderr, "ERROR 1317 (70100)", "Query execution was interrupted");
    // The owner's session ends: the GTID is free (and not executed).
    server.query(None, &format!("KILL {owner_id}"));
    let _ = owner.wait();
    assert_eq!(server.query(None, &format!("SET gtid_next = '{SOURCE}:7'; SELECT @@gtid_next")), format!("{SOURCE}:7\n"));
}
