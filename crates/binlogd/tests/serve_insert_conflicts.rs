//! INSERT on a taken key as MySQL does it: ON DUPLICATE KEY UPDATE (with
//! VALUES() or a row alias, affected rows 1 / 2 / 0, the key compared under its
//! collation), INSERT IGNORE (warning 1062, the row skipped), REPLACE
//! (every row in the way deleted, one per key), INSERT ... SET; the row
//! images say what happened (Update_rows for an update, Delete_rows then
//! Write_rows for a replace) as mysql_common decodes them; REPLACE needs
//! the DELETE privilege, ON DUPLICATE KEY UPDATE the UPDATE one; a
//! failing row leaves the statement's earlier rows unwritten.

mod support;

use support::binlog_rows::logged_rows;
use support::ServerProcess;
use testkit::raw_client::{RawClient, Response};

fn rows(client: &mut RawClient, sql: &str) -> Vec<Vec<String>> {
    let found = client.query_rows(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    found.into_iter().map(|row| row.into_iter().map(|v| v.unwrap_or_else(|| "NULL".into())).collect()).collect()
}

/// Affected rows and info of an OK.
fn ok(client: &mut RawClient, sql: &str) -> (u64, String) {
    match client.query(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        Response::Ok { affected_rows, info, .. } => (affected_rows, info),
        other => panic!("{sql}: {other:?}"),
    }
}

/// The kinds of rows events of table `t`, in order.
fn row_event_kinds(server: &ServerProcess) -> Vec<&'static str> {
    let mut rows = logged_rows(&server.binlog_files());
    rows.retain(|row| row.table == "t");
    rows.dedup_by_key(|row| row.event);
    rows.iter().map(|row| row.kind).collect()
}

#[test]
fn taken_keys_update_skip_or_replace_as_mysql_does() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("USE a").unwrap();
    client
        .query_rows("CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, email VARCHAR(40), n INT DEFAULT 0, UNIQUE KEY email (email))")
        .unwrap();
    assert_eq!(ok(&mut client, "INSERT INTO t (email) VALUES ('a@x'), ('b@x'), ('c@x')").0, 3);

    // ON DUPLICATE KEY UPDATE: 2 for an update, 0 when nothing changes, 1
    // for an insert; the unique key is case-insensitive.
    assert_eq!(ok(&mut client, "INSERT INTO t (email, n) VALUES ('A@X', 5) ON DUPLICATE KEY UPDATE n = n + VALUES(n)").0, 2);
    assert_eq!(ok(&mut client, "INSERT INTO t (email, n) VALUES ('a@x', 5) ON DUPLICATE KEY UPDATE n = n").0, 0);
    assert_eq!(ok(&mut client, "INSERT INTO t (email, n) VALUES ('d@x', 1) ON DUPLICATE KEY UPDATE n = 99").0, 1);
    assert_eq!(
        ok(&mut client, "INSERT INTO t (id, email) VALUES (2, 'q@x') ON DUPLICATE KEY UPDATE email = CONCAT(email, '!'), n = 1").0,
        2
    );
    assert_eq!(
        rows(&mut client, "SELECT id, email, n FROM t ORDER BY id"),
        [
            ["1", "a@x", "5"],
            ["2", "b@x!", "1"],
            ["3", "c@x", "0"],
            // As in InnoDB, each row offered took an AUTO_INCREMENT value, the
            // two that updated instead of inserting too.
            ["6", "d@x", "1"],
        ]
    );

    // INSERT IGNORE skips the duplicate with warning 1062.
    assert_eq!(
        ok(&mut client, "INSERT IGNORE INTO t (email) VALUES ('c@x'), ('e@x')"),
        (1, "Records: 2  Duplicates: 1  Warnings: 1".to_string())
    );
    let warnings = rows(&mut client, "SHOW WARNINGS");
    assert_eq!(warnings, [["Warning", "1062", "Duplicate entry 'c@x' for key 't.email'"]]);

    // REPLACE deletes every row in the way: id 1 by the primary key and
    // the row holding 'c@x' by the unique key.
    assert_eq!(ok(&mut client, "REPLACE INTO t (id, email, n) VALUES (1, 'c@x', 7)").0, 3);
    assert_eq!(ok(&mut client, "REPLACE INTO t SET id = 10, email = 'z@x'").0, 1);
    assert_eq!(ok(&mut client, "INSERT INTO t SET email = 'f@x', n = 3").0, 1);
    assert_eq!(
        rows(&mut client, "SELECT id, email, n FROM t ORDER BY id"),
        [["1", "c@x", "7"], ["2", "b@x!", "1"], ["6", "d@x", "1"], ["8", "e@x", "0"], ["10", "z@x", "0"], ["11", "f@x", "3"],]
    );

    // Without IGNORE a duplicate fails the statement, rows before it too.
    let error = client.query_rows("INSERT INTO t (email) VALUES ('new@x'), ('B@X!')").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1062, "Duplicate entry 'B@X!' for key 't.email'"));
    assert_eq!(rows(&mut client, "SELECT COUNT(*) FROM t WHERE email = 'new@x'"), [["0"]]);

    let kinds = row_event_kinds(&server);
    // 1 insert of 3 rows, update, (none), insert, update, insert (IGNORE),
    // REPLACE: one event deleting two rows then a write, REPLACE, INSERT
    // ... SET.
    assert_eq!(kinds, ["write", "update", "write", "update", "write", "delete", "write", "write", "write"], "{kinds:?}");
}

#[test]
fn replace_needs_delete_and_on_duplicate_key_update_needs_update() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE a; CREATE TABLE a.t (id INT PRIMARY KEY, n INT); CREATE USER 'w'@'%' IDENTIFIED BY 'pw'; GRANT SELECT, INSERT ON a.* TO 'w'@'%'",
    );
    let error = server.error_as("w", "pw", Some("a"), "REPLACE INTO t VALUES (1, 1)");
    assert!(error.contains("ERROR 1142 (42000)") && error.contains("DELETE command denied"), "{error}");
    let error = server.error_as("w", "pw", Some("a"), "INSERT INTO t VALUES (1, 1) ON DUPLICATE KEY UPDATE n = 2");
    assert!(error.contains("ERROR 1142 (42000)") && error.contains("UPDATE command denied"), "{error}");
    assert_eq!(server.query_as("w", "pw", Some("a"), "INSERT IGNORE INTO t VALUES (1, 1), (1, 2); SELECT n FROM t"), "1\n");
}

#[test]
fn a_row_alias_names_the_offered_row_and_its_values() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("USE a").unwrap();
    client.query_rows("CREATE TABLE u (id INT PRIMARY KEY, a INT, b INT)").unwrap();
    client.query_rows("INSERT INTO u VALUES (1, 10, 100)").unwrap();

    // `new.c` is the offered row's column, a plain `a` the row in the way's.
    assert_eq!(ok(&mut client, "INSERT INTO u VALUES (1, 2, 3) AS new ON DUPLICATE KEY UPDATE a = a + new.a, b = new.b").0, 2);
    assert_eq!(rows(&mut client, "SELECT id, a, b FROM u"), [["1", "12", "3"]]);
    // Column aliases name the values in the column list's order, plain or
    // after the row alias.
    assert_eq!(
        ok(&mut client, "INSERT INTO u (id, a) VALUES (1, 5), (2, 6) AS v(i, x) ON DUPLICATE KEY UPDATE a = a * x, b = v.i + 1").0,
        3
    );
    assert_eq!(rows(&mut client, "SELECT id, a, b FROM u ORDER BY id"), [["1", "60", "2"], ["2", "6", "NULL"]]);

    let error = client.query_rows("INSERT INTO u VALUES (1, 0, 0) AS new ON DUPLICATE KEY UPDATE a = new.zz").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1054, "Unknown column 'new.zz' in 'field list'"));
    let error = client.query_rows("INSERT INTO u (id, a) VALUES (1, 1) AS v(i) ON DUPLICATE KEY UPDATE a = i").unwrap_err();
    assert_eq!(error.code, 1136);
    assert_eq!(rows(&mut client, "SELECT id, a, b FROM u ORDER BY id"), [["1", "60", "2"], ["2", "6", "NULL"]], "errors change nothing");
}
