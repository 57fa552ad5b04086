//! ALTER TABLE and RENAME TABLE through the MySQL protocol:
//! - each spec (ADD/DROP/MODIFY/CHANGE/RENAME COLUMN, SET/DROP DEFAULT,
//!   ADD/DROP/RENAME INDEX, PRIMARY KEY, RENAME TO, table options) gives
//!   the shape MySQL 8.4 gives, and the rows are kept;
//! - MySQL's errors, each leaving the table as it was;
//! - values converted under strict (an error, nothing changed) and
//!   non-strict sql_mode (clipped, with warnings);
//! - literals with embedded quotes and backslashes keep them, and SHOW
//!   CREATE TABLE writes them back escaped;
//! - ALTER waits for an open transaction that wrote the table (1205 after
//!   the session's lock_wait_timeout), and an INSERT queued behind ALTER
//!   goes into the new table;
//! - RENAME TABLE's pairs apply together (a swap through a third name);
//! - mysql_common decodes the row events after an ALTER with the new
//!   Table_map's columns and values;
//! - a kill -9 after the engine applied the ALTER recovers the new table
//!   whole.

mod support;

use std::time::Duration;

use support::binlog_rows::{logged_rows_of, plain_text};
use support::ServerProcess;
use testkit::raw_client::{RawClient, Response, ServerErr};

fn client(server: &ServerProcess) -> RawClient {
    RawClient::login_to(server.port, "root", "", None).unwrap()
}

fn show_create(server: &ServerProcess, table: &str) -> String {
    let out = server.query(None, &format!("SHOW CREATE TABLE {table}"));
    out.split_once('\t').map(|(_, create)| create.replace("\\n", "\n").trim_end().to_string()).unwrap()
}

fn error(client: &mut RawClient, sql: &str) -> ServerErr {
    client.query(sql).expect_err(sql)
}

fn ok(client: &mut RawClient, sql: &str) -> Response {
    client.query(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"))
}

const SUFFIX: &str = ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci";

#[test]
fn each_spec_gives_mysqls_shape_and_keeps_the_rows() {
    let server = ServerProcess::start();
    let mut c = client(&server);
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY, a INT, b VARCHAR(10))");
    ok(&mut c, "INSERT INTO d.t VALUES (1, 10, 'x'), (2, NULL, 'y'), (3, 30, NULL)");

    ok(&mut c, "ALTER TABLE d.t ADD COLUMN c INT NOT NULL, ADD COLUMN z VARCHAR(5) DEFAULT 'q' FIRST, ADD w BIGINT AFTER id");
    assert_eq!(
        show_create(&server, "d.t"),
        format!(
            "CREATE TABLE `t` (\n  `z` varchar(5) DEFAULT 'q',\n  `id` int NOT NULL,\n  `w` bigint DEFAULT NULL,\n  `a` int DEFAULT NULL,\n  \
             `b` varchar(10) DEFAULT NULL,\n  `c` int NOT NULL,\n  PRIMARY KEY (`id`)\n{SUFFIX}"
        )
    );
    assert_eq!(
        server.query(None, "SELECT * FROM d.t ORDER BY id"),
        "q\t1\tNULL\t10\tx\t0\nq\t2\tNULL\tNULL\ty\t0\nq\t3\tNULL\t30\tNULL\t0\n"
    );

    // Strict mode: a NULL cannot go into a column made NOT NULL.
    let null = error(&mut c, "ALTER TABLE d.t CHANGE b bee VARCHAR(20) NOT NULL DEFAULT ''");
    assert_eq!((null.code, null.message.as_str()), (1138, "Invalid use of NULL value"));
    ok(&mut c, "UPDATE d.t SET b = '' WHERE b IS NULL");
    ok(&mut c, "ALTER TABLE d.t DROP COLUMN z, DROP w, MODIFY a BIGINT UNSIGNED, CHANGE b bee VARCHAR(20) NOT NULL DEFAULT '' AFTER c");
    assert_eq!(server.query(None, "SELECT id, a, c, bee FROM d.t ORDER BY id"), "1\t10\t0\tx\n2\tNULL\t0\ty\n3\t30\t0\t\n");
    ok(&mut c, "ALTER TABLE d.t RENAME COLUMN c TO cc, ALTER COLUMN a SET DEFAULT 7, ALTER cc DROP DEFAULT");
    ok(&mut c, "ALTER TABLE d.t ADD UNIQUE KEY ua (a), ADD INDEX (bee), ADD KEY two (cc, bee)");
    ok(&mut c, "ALTER TABLE d.t RENAME INDEX two TO pair, DROP KEY bee, ENGINE=InnoDB, COMMENT='kept', ALGORITHM=COPY, LOCK=EXCLUSIVE");
    assert_eq!(
        show_create(&server, "d.t"),
        format!(
            "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `a` bigint unsigned DEFAULT '7',\n  `cc` int NOT NULL,\n  \
             `bee` varchar(20) NOT NULL DEFAULT '',\n  PRIMARY KEY (`id`),\n  UNIQUE KEY `ua` (`a`),\n  KEY `pair` (`cc`,`bee`)\n{SUFFIX} COMMENT='kept'"
        )
    );
    ok(&mut c, "INSERT INTO d.t (id, cc) VALUES (4, 40)");
    assert_eq!(server.query(None, "SELECT id, a, cc, bee FROM d.t WHERE id = 4"), "4\t7\t40\t\n");

    ok(&mut c, "ALTER TABLE d.t DROP PRIMARY KEY, ADD PRIMARY KEY (cc, id)");
    ok(&mut c, "ALTER TABLE d.t ADD (x1 INT, x2 CHAR(2) DEFAULT 'ab')");
    ok(&mut c, "ALTER TABLE d.t RENAME TO d.renamed");
    assert_eq!(error(&mut c, "SELECT * FROM d.t").code, 1146);
    ok(&mut c, "CREATE DATABASE e");
    ok(&mut c, "ALTER TABLE d.renamed RENAME AS e.moved, ADD COLUMN y INT");
    assert_eq!(
        server.query(None, "SELECT id, a, cc, bee, x1, x2, y FROM e.moved ORDER BY id"),
        "1\t10\t0\tx\tNULL\tab\tNULL\n2\tNULL\t0\ty\tNULL\tab\tNULL\n3\t30\t0\t\tNULL\tab\tNULL\n4\t7\t40\t\tNULL\tab\tNULL\n"
    );
    assert_eq!(
        server.query(None, "SELECT COLUMN_NAME, COLUMN_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'e' AND TABLE_NAME = 'moved' ORDER BY ORDINAL_POSITION"),
        "id\tint\na\tbigint unsigned\ncc\tint\nbee\tvarchar(20)\nx1\tint\nx2\tchar(2)\ny\tint\n"
    );
    ok(&mut c, "ALTER TABLE e.moved MODIFY id INT NOT NULL AUTO_INCREMENT, ADD KEY (id), AUTO_INCREMENT = 100");
    ok(&mut c, "INSERT INTO e.moved (cc, a) VALUES (5, 8)");
    assert_eq!(server.query(None, "SELECT id FROM e.moved WHERE cc = 5"), "100\n");

    let mut server = server;
    server.restart();
    assert_eq!(server.query(None, "SELECT COUNT(*), SUM(id) FROM e.moved"), "5\t110\n", "the altered table survives a restart");
}

#[test]
fn quoted_literals_keep_their_embedded_quotes_and_backslashes() {
    let server = ServerProcess::start();
    let mut c = client(&server);
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY)");
    ok(
        &mut c,
        r"ALTER TABLE d.t ADD c VARCHAR(5) DEFAULT 'a''b' COMMENT 'it''s', ADD e VARCHAR(5) DEFAULT 'x\'y', ADD b VARCHAR(5) DEFAULT 'p\\q', ADD `we``ird` ENUM('o''k', 'no') DEFAULT 'o''k'",
    );
    ok(&mut c, "INSERT INTO d.t (id) VALUES (1)");
    // The client's batch output writes a backslash as `\\`.
    assert_eq!(server.query(None, "SELECT c, e, b, `we``ird` FROM d.t"), "a'b\tx'y\tp\\\\q\to'k\n");
    ok(&mut c, r"ALTER TABLE d.t ALTER COLUMN c SET DEFAULT 'q''r', MODIFY e VARCHAR(6) DEFAULT 'y\'z'");
    ok(&mut c, "INSERT INTO d.t (id) VALUES (2)");
    assert_eq!(server.query(None, "SELECT c, e FROM d.t WHERE id = 2"), "q'r\ty'z\n");
    // SHOW CREATE TABLE writes them back escaped, so its text reads back as the same table (the client's batch
    // output doubles the backslash once more).
    let shown = show_create(&server, "d.t");
    for column in [
        "`c` varchar(5) DEFAULT 'q''r'",
        "`e` varchar(6) DEFAULT 'y''z'",
        r"`b` varchar(5) DEFAULT 'p\\\\q'",
        "`we``ird` enum('o''k','no') DEFAULT 'o''k'",
    ] {
        assert!(shown.contains(column), "{column} in {shown}");
    }
}

#[test]
fn errors_are_mysqls_and_leave_the_table_as_it_was() {
    let server = ServerProcess::start();
    let mut c = client(&server);
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY, a INT, KEY ka (a))");
    ok(&mut c, "CREATE TABLE d.other (id INT)");
    ok(&mut c, "INSERT INTO d.t VALUES (1, 5), (2, 5)");
    let before = show_create(&server, "d.t");
    let cases: &[(&str, u16, &str)] = &[
        ("ALTER TABLE d.t ADD COLUMN a INT", 1060, "Duplicate column name 'a'"),
        ("ALTER TABLE d.t DROP COLUMN nope", 1091, "Can't DROP 'nope'; check that column/key exists"),
        ("ALTER TABLE d.t DROP INDEX nope", 1091, "Can't DROP 'nope'; check that column/key exists"),
        ("ALTER TABLE d.t MODIFY nope INT", 1054, "Unknown column 'nope' in 't'"),
        ("ALTER TABLE d.t ADD COLUMN b INT AFTER nope", 1054, "Unknown column 'nope' in 't'"),
        ("ALTER TABLE d.missing ADD COLUMN b INT", 1146, "Table 'd.missing' doesn't exist"),
        ("ALTER TABLE d.t RENAME TO d.other", 1050, "Table 'other' already exists"),
        ("ALTER TABLE d.t ADD PRIMARY KEY (a)", 1068, "Multiple primary key defined"),
        ("ALTER TABLE d.t DROP COLUMN id, DROP COLUMN a", 1090, "You can't delete all columns with ALTER TABLE; use DROP TABLE instead"),
        ("ALTER TABLE d.t ADD INDEX ka (id)", 1061, "Duplicate key name 'ka'"),
        ("ALTER TABLE d.t RENAME INDEX nope TO x", 1176, "Key 'nope' doesn't exist in table 't'"),
        ("ALTER TABLE d.t ADD UNIQUE (a)", 1062, "Duplicate entry '5' for key 't.a'"),
        ("ALTER TABLE d.t DROP PRIMARY KEY, ADD PRIMARY KEY (a)", 1062, "Duplicate entry '5' for key 't.PRIMARY'"),
        ("RENAME TABLE d.t TO d.t2, d.nope TO d.t3", 1146, "Table 'd.nope' doesn't exist"),
        ("RENAME TABLE d.t TO d.other", 1050, "Table 'other' already exists"),
        ("ALTER TABLE d.t ENGINE=MyISAM", 1235, "This version of MySQL doesn't yet support 'ENGINE=MyISAM'"),
    ];
    for (sql, code, message) in cases {
        let error = error(&mut c, sql);
        assert_eq!((error.code, error.message.as_str()), (*code, *message), "{sql}");
        assert_eq!(show_create(&server, "d.t"), before, "{sql} changed the table");
    }
    assert_eq!(server.query(None, "SELECT * FROM d.t ORDER BY id"), "1\t5\n2\t5\n");
    assert_eq!(server.query(None, "SHOW TABLES FROM d"), "other\nt\n");
}

#[test]
fn strict_mode_refuses_values_that_do_not_fit_and_non_strict_clips_them_with_warnings() {
    let server = ServerProcess::start();
    let mut c = client(&server);
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY, n INT, s VARCHAR(10), m INT)");
    ok(&mut c, "INSERT INTO d.t VALUES (1, 5, 'ok', 1), (2, 300, 'abc', NULL), (3, -1, '12', 2)");
    let before = show_create(&server, "d.t");

    let out_of_range = error(&mut c, "ALTER TABLE d.t MODIFY n TINYINT UNSIGNED");
    assert_eq!((out_of_range.code, out_of_range.message.as_str()), (1264, "Out of range value for column 'n' at row 2"));
    let truncated = error(&mut c, "ALTER TABLE d.t MODIFY s VARCHAR(2)");
    assert_eq!((truncated.code, truncated.message.as_str()), (1265, "Data truncated for column 's' at row 2"));
    let not_integer = error(&mut c, "ALTER TABLE d.t MODIFY s INT");
    assert_eq!((not_integer.code, not_integer.message.as_str()), (1366, "Incorrect integer value: 'ok' for column 's' at row 1"));
    let null = error(&mut c, "ALTER TABLE d.t MODIFY m INT NOT NULL");
    assert_eq!((null.code, null.message.as_str()), (1138, "Invalid use of NULL value"));
    assert_eq!(show_create(&server, "d.t"), before);
    assert_eq!(server.query(None, "SELECT * FROM d.t ORDER BY id"), "1\t5\tok\t1\n2\t300\tabc\tNULL\n3\t-1\t12\t2\n");

    ok(&mut c, "SET SESSION sql_mode = ''");
    match ok(&mut c, "ALTER TABLE d.t MODIFY n TINYINT UNSIGNED, MODIFY m INT NOT NULL") {
        Response::Ok { warnings, info, .. } => assert_eq!((warnings, info.as_str()), (3, "Records: 3  Duplicates: 0  Warnings: 3")),
        other => panic!("{other:?}"),
    }
    let shown = c.query("SHOW WARNINGS").unwrap();
    let Response::Rows { rows, .. } = shown else { panic!("rows") };
    let warnings: Vec<String> = rows
        .iter()
        .map(|row| {
            format!("{} {}", String::from_utf8_lossy(row[1].as_deref().unwrap()), String::from_utf8_lossy(row[2].as_deref().unwrap()))
        })
        .collect();
    assert_eq!(
        warnings,
        [
            "1264 Out of range value for column 'n' at row 2",
            "1265 Data truncated for column 'm' at row 2",
            "1264 Out of range value for column 'n' at row 3",
        ]
    );
    assert_eq!(server.query(None, "SELECT id, n, m FROM d.t ORDER BY id"), "1\t5\t1\n2\t255\t0\n3\t0\t2\n");
}

#[test]
fn alter_waits_for_an_open_transaction_on_the_table_and_later_statements_see_the_new_shape() {
    let server = ServerProcess::start();
    let mut c = client(&server);
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY)");
    ok(&mut c, "INSERT INTO d.t VALUES (1)");

    // An open transaction that wrote the table holds it: ALTER waits, and
    // gives up with 1205 after the session's lock_wait_timeout.
    let mut holder = client(&server);
    ok(&mut holder, "BEGIN");
    ok(&mut holder, "INSERT INTO d.t VALUES (2)");
    let mut short = client(&server);
    ok(&mut short, "SET SESSION lock_wait_timeout = 1");
    let timeout = error(&mut short, "ALTER TABLE d.t ADD COLUMN a INT DEFAULT 7");
    assert_eq!(
        (timeout.code, timeout.state.as_str(), timeout.message.as_str()),
        (1205, "HY000", "Lock wait timeout exceeded; try restarting transaction")
    );

    // Committed while ALTER waits: ALTER proceeds with the committed row.
    let port = server.port;
    let alter = std::thread::spawn(move || {
        let mut alterer = RawClient::login_to(port, "root", "", None).unwrap();
        alterer.query("ALTER TABLE d.t ADD COLUMN a INT DEFAULT 7").map(|_| ())
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(!alter.is_finished(), "ALTER went ahead of an open transaction that wrote the table");
    // An INSERT issued while ALTER waits queues behind it and then goes into the new table, as in MySQL.
    let queued = std::thread::spawn(move || {
        let mut writer = RawClient::login_to(port, "root", "", None).unwrap();
        writer.query("INSERT INTO d.t (id) VALUES (4)").map(|_| ())
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!queued.is_finished(), "an INSERT went ahead of the waiting ALTER");
    ok(&mut holder, "COMMIT");
    alter.join().unwrap().unwrap();
    queued.join().unwrap().unwrap();
    ok(&mut holder, "INSERT INTO d.t (id, a) VALUES (3, 30)");
    assert_eq!(server.query(None, "SELECT id, a FROM d.t ORDER BY id"), "1\t7\n2\t7\n3\t30\n4\t7\n");
}

#[test]
fn rename_table_applies_every_pair_together() {
    let server = ServerProcess::start();
    let mut c = client(&server);
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.a (x INT)");
    ok(&mut c, "CREATE TABLE d.b (y INT)");
    ok(&mut c, "INSERT INTO d.a VALUES (1)");
    ok(&mut c, "INSERT INTO d.b VALUES (2)");
    ok(&mut c, "RENAME TABLE d.a TO d.tmp, d.b TO d.a, d.tmp TO d.b");
    assert_eq!(server.query(None, "SELECT y FROM d.a"), "2\n");
    assert_eq!(server.query(None, "SELECT x FROM d.b"), "1\n");
    let mut server = server;
    server.restart();
    assert_eq!(server.query(None, "SELECT y FROM d.a"), "2\n", "the rename survives a restart");
    assert_eq!(server.query(None, "SHOW TABLES FROM d"), "a\nb\n");
}

/// Every row image of the file, as mysql_common decodes it (column count
/// and values as text).
fn row_images(file: &[u8]) -> Vec<Vec<Option<String>>> {
    logged_rows_of(file)
        .iter()
        .map(|row| row.after.as_ref().expect("an insert has an after image").iter().map(plain_text).collect())
        .collect()
}

#[test]
fn row_events_after_an_alter_carry_the_new_columns() {
    let server = ServerProcess::start();
    let mut c = client(&server);
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY, a INT)");
    ok(&mut c, "INSERT INTO d.t VALUES (1, 10)");
    ok(&mut c, "ALTER TABLE d.t ADD COLUMN s VARCHAR(8) DEFAULT 'new' FIRST, MODIFY a BIGINT UNSIGNED");
    ok(&mut c, "INSERT INTO d.t (id, a) VALUES (2, 20)");
    let file = std::fs::read(&server.binlog_files()[0]).unwrap();
    assert_eq!(
        row_images(&file),
        [vec![Some("1".to_string()), Some("10".to_string())], vec![Some("new".to_string()), Some("2".to_string()), Some("20".to_string())]]
    );
    let events = server.query(None, "SHOW BINLOG EVENTS");
    assert!(events.contains("ALTER TABLE d.t ADD COLUMN s VARCHAR(8) DEFAULT 'new' FIRST, MODIFY a BIGINT UNSIGNED"), "{events}");
}

#[test]
fn a_kill_after_the_engine_applied_an_alter_recovers_the_new_table_whole() {
    let mut server = ServerProcess::start();
    let mut c = client(&server);
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY, a INT)");
    ok(&mut c, "INSERT INTO d.t VALUES (1, 10), (2, 20), (3, 30)");
    drop(c);
    server.stop();
    server.start_again(&[("BINLOGD_CRASH_POINT", "database::ddl::after_engine")]);
    let output = server.mariadb(None, "ALTER TABLE d.t ADD COLUMN b INT NOT NULL DEFAULT 5, DROP COLUMN a");
    assert!(!output.status.success(), "the crash point ends the process");
    server.wait_exit(Duration::from_secs(30));
    server.start_again(&[]);
    assert_eq!(server.query(None, "SELECT * FROM d.t ORDER BY id"), "1\t5\n2\t5\n3\t5\n");
    assert_eq!(
        show_create(&server, "d.t"),
        format!("CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `b` int NOT NULL DEFAULT '5',\n  PRIMARY KEY (`id`)\n{SUFFIX}")
    );
}

#[test]
fn a_mariadb_replica_applies_the_alters_and_the_rows_after_them() {
    let source = support::Binlogd::start(&[]);
    let replica = support::mariadb::MariaDb::start(&["--server-id=2", "--skip-log-bin"]);
    replica.query(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', MASTER_PASSWORD='',
             MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4, MASTER_HEARTBEAT_PERIOD=1;
         START SLAVE;",
        source.port
    ));
    source.query(
        "CREATE DATABASE d;
         CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY, a INT, b VARCHAR(10));
         INSERT INTO d.t VALUES (1, 10, 'x'), (2, NULL, 'y');
         ALTER TABLE d.t ADD COLUMN c VARCHAR(8) NOT NULL DEFAULT 'new' AFTER id, MODIFY a BIGINT, ADD INDEX ia (a);
         INSERT INTO d.t VALUES (3, 'three', 30, 'z');
         ALTER TABLE d.t DROP COLUMN b, RENAME COLUMN c TO cee, RENAME INDEX ia TO ib;
         UPDATE d.t SET a = a + 1 WHERE id < 3;
         CREATE TABLE d.u (k INT);
         RENAME TABLE d.t TO d.tmp, d.u TO d.t, d.tmp TO d.u;
         INSERT INTO d.t VALUES (7);
         INSERT INTO d.u VALUES (4, 'four', 40);
         ALTER TABLE d.u RENAME TO d.final, ADD UNIQUE KEY ua (a);
         DELETE FROM d.final WHERE id = 2;",
    );
    replica.wait_caught_up(&source);
    for (table, order) in [("d.final", "id"), ("d.t", "k")] {
        let sql = format!("SELECT * FROM {table} ORDER BY {order}");
        assert_eq!(source.query(&sql), replica.query(&sql), "{table}");
    }
    assert_eq!(source.query("SELECT * FROM d.final ORDER BY id"), "1\tnew\t11\n3\tthree\t30\n4\tfour\t40\n");
    let columns = "SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 'final' ORDER BY ORDINAL_POSITION";
    assert_eq!(source.query(columns), replica.query(columns));
    replica.query("STOP SLAVE");
}
