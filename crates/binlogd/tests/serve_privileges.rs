//! Users, privileges and bad input through the real server: the `mariadb`
//! client and a raw socket client (testkit::raw_client) against
//! `binlogd serve`. Accounts are created, granted, refused with MySQL's
//! errors (1045, 1142, 1044, 1227, 1396), revoked under a live session,
//! dropped, and survive a restart; malformed, truncated and oversized
//! packets and unsupported SQL close or fail only their own connection
//! while another session keeps committing.

mod support;

use std::io::Write;

use support::{failed_start, mariadb_client, ServerProcess};
use testkit::raw_client::RawClient;

/// The mariadb client's stderr for a failed statement contains this.
fn assert_error(stderr: &str, code_and_state: &str, message: &str) {
    assert!(stderr.contains(code_and_state) && stderr.contains(message), "expected {code_and_state} {message}, got: {stderr}");
}

const SETUP: &str = "
    CREATE DATABASE shop; CREATE DATABASE secret;
    CREATE TABLE shop.items (id INTEGER NOT NULL, c CHAR(10) NOT NULL, PRIMARY KEY (id));
    CREATE TABLE secret.t (id INTEGER NOT NULL, PRIMARY KEY (id));
    INSERT INTO shop.items VALUES (1, 'pen'), (2, 'ink');
";

#[test]
fn accounts_and_grants_through_the_mariadb_client() {
    let server = ServerProcess::start();
    server.query(None, SETUP);
    server.query(None, "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'; GRANT SELECT ON shop.* TO 'app'@'%'");
    assert_error(
        &server.error(None, "CREATE USER 'app'@'%' IDENTIFIED BY 'x'"),
        "ERROR 1396 (HY000)",
        "Operation CREATE USER failed for 'app'@'%'",
    );
    server.query(None, "CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED BY 'x'");

    let app = |database: Option<&str>, sql: &str| server.query_as("app", "app-pw", database, sql);
    let app_error = |database: Option<&str>, sql: &str| server.error_as("app", "app-pw", database, sql);
    assert_eq!(app(None, "SELECT CURRENT_USER(), USER()"), "app@%\tapp@localhost\n");
    assert_eq!(app(Some("shop"), "SELECT c FROM items ORDER BY id"), "pen\nink\n");
    assert_error(
        &app_error(Some("shop"), "INSERT INTO items VALUES (3, 'cap')"),
        "ERROR 1142 (42000)",
        "INSERT command denied to user 'app'@'localhost' for table 'items'",
    );
    assert_error(&app_error(Some("shop"), "UPDATE items SET c = 'x' WHERE id = 1"), "ERROR 1142 (42000)", "UPDATE command denied");
    assert_error(&app_error(Some("shop"), "DELETE FROM items"), "ERROR 1142 (42000)", "DELETE command denied");
    assert_error(
        &app_error(Some("shop"), "CREATE TABLE t2 (id INTEGER NOT NULL, PRIMARY KEY (id))"),
        "ERROR 1142 (42000)",
        "CREATE command denied",
    );
    assert_error(
        &app_error(None, "SELECT id FROM secret.t"),
        "ERROR 1142 (42000)",
        "SELECT command denied to user 'app'@'localhost' for table 't'",
    );
    assert_error(&app_error(Some("secret"), "SELECT 1"), "ERROR 1044 (42000)", "Access denied for user 'app'@'%' to database 'secret'");
    assert_error(&app_error(None, "USE secret"), "ERROR 1044 (42000)", "to database 'secret'");
    assert_error(&app_error(None, "CREATE DATABASE mine"), "ERROR 1044 (42000)", "to database 'mine'");
    assert_eq!(app(None, "SHOW DATABASES"), "information_schema\nshop\n");
    assert_error(
        &app_error(None, "SET GLOBAL binlog_large_transaction_optimization_enabled = OFF"),
        "ERROR 1227 (42000)",
        "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation",
    );
    assert_eq!(server.query(None, "SELECT @@global.binlog_large_transaction_optimization_enabled"), "1\n");
    assert_error(&app_error(None, "SHOW BINARY LOGS"), "ERROR 1227 (42000)", "the SUPER, REPLICATION CLIENT privilege(s)");
    assert_error(&app_error(None, "SHOW MASTER STATUS"), "ERROR 1227 (42000)", "REPLICATION CLIENT");
    assert_error(&app_error(None, "FLUSH BINARY LOGS"), "ERROR 1227 (42000)", "RELOAD");
    assert_error(&app_error(None, "FLUSH LOCAL LOGS"), "ERROR 1227 (42000)", "RELOAD");
    assert_error(&app_error(None, "CREATE USER 'x'@'%'"), "ERROR 1227 (42000)", "the CREATE USER privilege(s)");
    assert_error(&app_error(None, "GRANT SELECT ON shop.* TO 'app'@'%'"), "ERROR 1044 (42000)", "to database 'shop'");
    assert_error(
        &app_error(None, "GRANT SELECT ON *.* TO 'app'@'%'"),
        "ERROR 1045 (28000)",
        "Access denied for user 'app'@'localhost' (using password: YES)",
    );
    assert_eq!(app(None, "SHOW GRANTS"), "GRANT USAGE ON *.* TO `app`@`%`\nGRANT SELECT ON `shop`.* TO `app`@`%`\n");

    // Wrong password, unknown user.
    let wrong = mariadb_client(server.port, "app", "nope", None, "SELECT 1");
    assert_error(
        &String::from_utf8_lossy(&wrong.stderr),
        "ERROR 1045 (28000)",
        "Access denied for user 'app'@'localhost' (using password: YES)",
    );
    let nobody = mariadb_client(server.port, "nobody", "", None, "SELECT 1");
    assert_error(
        &String::from_utf8_lossy(&nobody.stderr),
        "ERROR 1045 (28000)",
        "Access denied for user 'nobody'@'localhost' (using password: NO)",
    );

    // More grants: a table-level INSERT and global administrative privileges.
    server.query(None, "GRANT INSERT ON shop.items TO 'app'@'%'; GRANT SYSTEM_VARIABLES_ADMIN, REPLICATION CLIENT ON *.* TO 'app'@'%'");
    app(Some("shop"), "INSERT INTO items VALUES (3, 'cap')");
    app(None, "SET GLOBAL binlog_large_transaction_optimization_enabled = OFF");
    assert_eq!(server.query(None, "SELECT @@global.binlog_large_transaction_optimization_enabled"), "0\n");
    app(None, "SET GLOBAL binlog_large_transaction_optimization_enabled = ON");
    assert!(app(None, "SHOW BINARY LOGS").starts_with("binlog.000001"));
    assert_eq!(
        server.query(None, "SHOW GRANTS FOR 'app'@'%'"),
        "GRANT REPLICATION CLIENT ON *.* TO `app`@`%`\n\
         GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO `app`@`%`\n\
         GRANT SELECT ON `shop`.* TO `app`@`%`\n\
         GRANT INSERT ON `shop`.`items` TO `app`@`%`\n"
    );
    assert_error(
        &server.error(None, "GRANT SUPER ON shop.* TO 'app'@'%'"),
        "ERROR 1221 (HY000)",
        "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
    );
    assert_error(&server.error(None, "GRANT SELECT ON shop.nope TO 'app'@'%'"), "ERROR 1146 (42S02)", "nope");
    assert_error(
        &server.error(None, "GRANT SELECT ON shop.* TO 'ghost'@'%'"),
        "ERROR 1410 (42000)",
        "You are not allowed to create a user with GRANT",
    );
    assert_error(
        &server.error(None, "REVOKE SELECT ON secret.* FROM 'app'@'%'"),
        "ERROR 1141 (42000)",
        "There is no such grant defined for user 'app' on host '%'",
    );
    assert_error(&server.error(None, "GRANT FILE ON *.* TO 'app'@'%'"), "ERROR 1235 (42000)", "FILE");

    // ALTER USER: the old password stops working, the new one works; a
    // user may change their own password without privileges.
    server.query(None, "ALTER USER 'app'@'%' IDENTIFIED BY 'new-pw'");
    assert_error(
        &String::from_utf8_lossy(&mariadb_client(server.port, "app", "app-pw", None, "SELECT 1").stderr),
        "ERROR 1045 (28000)",
        "(using password: YES)",
    );
    server.query_as("app", "new-pw", None, "ALTER USER CURRENT_USER() IDENTIFIED WITH mysql_native_password BY 'own-pw'");
    assert_eq!(server.query_as("app", "own-pw", None, "SELECT 1"), "1\n");
    assert_error(
        &server.error_as("app", "own-pw", None, "ALTER USER 'root'@'localhost' IDENTIFIED BY 'x'"),
        "ERROR 1227 (42000)",
        "CREATE USER",
    );
}

#[test]
fn revoke_applies_to_a_live_session_and_grants_survive_a_restart() {
    let mut server = ServerProcess::start();
    server.query(None, SETUP);
    server.query(
        None,
        "CREATE USER 'live'@'localhost' IDENTIFIED BY 'live-pw';
         GRANT SELECT ON shop.* TO 'live'@'localhost';
         GRANT INSERT ON shop.items TO 'live'@'localhost';
         GRANT REPLICATION CLIENT ON *.* TO 'live'@'localhost'",
    );
    let mut live = RawClient::login_to(server.port, "live", "live-pw", Some("shop")).expect("login");
    assert_eq!(live.value("SELECT COUNT(*) FROM items"), "2");

    server.query(None, "REVOKE SELECT ON shop.* FROM 'live'@'localhost'");
    let denied = live.query_rows("SELECT COUNT(*) FROM items").unwrap_err();
    assert_eq!((denied.code, denied.state.as_str()), (1142, "42000"));
    assert_eq!(denied.message, "SELECT command denied to user 'live'@'localhost' for table 'items'");
    live.query_rows("INSERT INTO items VALUES (3, 'cap')").expect("the table-level INSERT grant remains");
    // COM_STMT_PREPARE is checked too: its answer would describe the columns.
    live.command(b"\x16SELECT id, c FROM items WHERE id = ?");
    let prepare_denied = live.read_err();
    assert_eq!(
        (prepare_denied.code, prepare_denied.message.as_str()),
        (1142, "SELECT command denied to user 'live'@'localhost' for table 'items'")
    );

    server.query(None, "REVOKE INSERT ON shop.items FROM 'live'@'localhost'");
    assert_eq!(live.query_rows("INSERT INTO items VALUES (4, 'nib')").unwrap_err().code, 1142);
    assert_eq!(server.query(None, "SELECT COUNT(*) FROM shop.items"), "3\n");

    live.query_rows("SHOW BINARY LOGS").expect("REPLICATION CLIENT still granted");
    server.query(None, "DROP USER 'live'@'localhost'");
    assert_eq!(live.query_rows("SHOW BINARY LOGS").unwrap_err().code, 1227, "a dropped account keeps no privileges");
    assert_eq!(RawClient::login_to(server.port, "live", "live-pw", None).err().map(|error| error.code), Some(1045));
    assert_error(
        &server.error(None, "DROP USER 'live'@'localhost'"),
        "ERROR 1396 (HY000)",
        "Operation DROP USER failed for 'live'@'localhost'",
    );
    server.query(None, "DROP USER IF EXISTS 'live'@'localhost'");

    // Grants and passwords persist across a restart; the dropped user stays dropped.
    server.query(
        None,
        "CREATE USER 'keep'@'localhost' IDENTIFIED WITH mysql_native_password BY 'keep-pw';
         GRANT SELECT, INSERT ON shop.* TO 'keep'@'localhost';
         GRANT REPLICATION SLAVE ON *.* TO 'keep'@'localhost';
         CREATE USER 'gone'@'%' IDENTIFIED BY 'x'; DROP USER 'gone'@'%'",
    );
    drop(live);
    server.restart();
    assert_eq!(
        server.query_as("keep", "keep-pw", None, "SHOW GRANTS"),
        "GRANT REPLICATION SLAVE ON *.* TO `keep`@`localhost`\nGRANT SELECT, INSERT ON `shop`.* TO `keep`@`localhost`\n"
    );
    server.query_as("keep", "keep-pw", Some("shop"), "INSERT INTO items VALUES (5, 'ruler')");
    assert_eq!(server.query_as("keep", "keep-pw", Some("shop"), "SELECT COUNT(*) FROM items"), "4\n");
    assert_error(
        &server.error_as("keep", "keep-pw", Some("shop"), "DELETE FROM items WHERE id = 5"),
        "ERROR 1142 (42000)",
        "DELETE command denied",
    );
    assert_eq!(RawClient::login_to(server.port, "live", "live-pw", None).err().map(|error| error.code), Some(1045));
    assert_eq!(RawClient::login_to(server.port, "gone", "x", None).err().map(|error| error.code), Some(1045));
    assert_eq!(server.query(None, "SELECT CURRENT_USER()"), "root@localhost\n");
    let leftovers: Vec<_> = std::fs::read_dir(&server.datadir)
        .unwrap()
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name())
        .filter(|name| name.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

#[test]
fn a_bad_accounts_file_is_a_clear_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().join("data");
    std::fs::create_dir_all(&datadir).unwrap();
    std::fs::write(datadir.join("users.json"), b"{\"version\": 1, \"accounts\": [{\"user\": \"root\"").unwrap();
    let stderr = failed_start(&datadir, &[]);
    assert!(
        stderr.contains("cannot load the accounts") && stderr.contains("users.json") && stderr.contains("not a valid accounts file"),
        "{stderr}"
    );
}

/// The session that must not notice other connections' bad input: it
/// commits a row and reads the count back.
fn still_commits(steady: &mut RawClient, next_id: &mut u32) {
    *next_id += 1;
    steady.query_rows("BEGIN").unwrap();
    steady.query_rows(&format!("INSERT INTO items VALUES ({next_id}, 'row')")).unwrap();
    steady.query_rows("COMMIT").unwrap();
    assert_eq!(steady.value(&format!("SELECT COUNT(*) FROM items WHERE id = {next_id}")), "1");
}

fn new_connections_work(port: u16) {
    let mut fresh = RawClient::login_to(port, "root", "", None).expect("a new connection logs in");
    assert_eq!(fresh.value("SELECT 1 + 1"), "2");
}

#[test]
fn bad_input_fails_only_its_own_connection() {
    let max_allowed_packet_bytes = 1 << 20;
    let server = ServerProcess::start_with(&[&format!("--max_allowed_packet={max_allowed_packet_bytes}")]);
    server.query(None, SETUP);
    let mut steady = RawClient::login_to(server.port, "root", "", Some("shop")).unwrap();
    let mut next_id = 100;
    still_commits(&mut steady, &mut next_id);

    // Garbage instead of a handshake response: ERR 1835, then closed.
    let mut garbage = RawClient::connect(([127, 0, 0, 1], server.port).into());
    garbage.read_handshake();
    garbage.write_packet(&[0x01, 0x02, 0x03]);
    let packets = garbage.read_until_closed();
    assert_eq!(packets.len(), 1, "one ERR, then the close");
    assert_eq!(garbage.parse_err(&packets[0]).code, 1835);
    still_commits(&mut steady, &mut next_id);
    new_connections_work(server.port);

    // A malformed command after login (COM_PROCESS_KILL with 1 of its 4 bytes).
    let mut malformed = RawClient::login_to(server.port, "root", "", None).unwrap();
    malformed.command(&[0x0C, 0x01]);
    let packets = malformed.read_until_closed();
    assert_eq!(packets.iter().map(|packet| malformed.parse_err(packet).code).collect::<Vec<_>>(), [1835]);
    still_commits(&mut steady, &mut next_id);

    // A truncated header, then close.
    let mut truncated = RawClient::connect(([127, 0, 0, 1], server.port).into());
    truncated.read_handshake();
    truncated.socket.write_all(&[0x20, 0x00]).unwrap();
    truncated.close_write();
    truncated.read_until_closed();
    still_commits(&mut steady, &mut next_id);

    // A packet claiming more bytes than sent, then close, mid-session.
    let mut short = RawClient::login_to(server.port, "root", "", Some("shop")).unwrap();
    short.socket.write_all(&[0xE8, 0x03, 0x00, 0x00, 0x03, b'S', b'E', b'L']).unwrap();
    short.close_write();
    short.read_until_closed();
    still_commits(&mut steady, &mut next_id);
    new_connections_work(server.port);

    // A packet over max_allowed_packet: ERR 1153, then closed.
    let mut oversized = RawClient::login_to(server.port, "root", "", None).unwrap();
    let mut query = b"\x03SELECT '".to_vec();
    query.resize(max_allowed_packet_bytes + 1024, b'a');
    query.push(b'\'');
    // The server may stop reading after the header; a failed write is fine.
    let _ = oversized.try_command(&query);
    let packets = oversized.read_until_closed();
    let error = oversized.parse_err(packets.last().expect("an ERR before the close"));
    assert_eq!(
        (error.code, error.state.as_str(), error.message.as_str()),
        (1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes")
    );
    still_commits(&mut steady, &mut next_id);
    new_connections_work(server.port);

    // Unsupported and malformed SQL: an error, and the same session goes on.
    assert_eq!(steady.query_rows("HANDLER items OPEN").unwrap_err().code, 1235);
    assert_eq!(steady.query_rows("SELEC 1").unwrap_err().code, 1064);
    assert_eq!(steady.query_rows("GRANT SELECT (c) ON items TO root@localhost").unwrap_err().code, 1235);
    assert_eq!(steady.query_rows("CREATE USER 'bad'@'%' PASSWORD EXPIRE").unwrap_err().code, 1235);
    let unknown_command = {
        steady.command(&[0xEE]);
        steady.read_err()
    };
    assert_eq!(unknown_command.code, 1047);
    still_commits(&mut steady, &mut next_id);
    assert_eq!(server.query(Some("shop"), "SELECT COUNT(*) FROM items WHERE id > 100"), format!("{}\n", next_id - 100));
}
