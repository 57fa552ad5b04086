//! Point-in-time recovery through the clients a DBA uses: a workload on
//! binlogd A (many column types, inserts, updates, deletes, DDL, a
//! multi-statement transaction and a promoted large transaction), then
//! `mariadb-binlog` of A's files piped into `mariadb` against a fresh
//! binlogd B: B's tables equal A's, and B's own binlog (the rows logged
//! again as B's transactions) reads back with `mariadb-binlog`. Slices by
//! position and by time restore exactly their slice; the statements
//! MySQL 8.4's `mysqlbinlog` prints (GTID_NEXT, original commit
//! timestamps, numeric charsets) replay with their GTID; the session
//! clock and pseudo thread id behave as MySQL's; malformed BINLOG
//! statements get MySQL's errors and change nothing.

mod support;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use support::{inspect, ServerProcess};
use testkit::SOURCE_UUID;

/// `mariadb-binlog ARGS FILES` as text (UTC, so datetimes are the events').
fn binlog_text(args: &[&str], files: &[PathBuf]) -> String {
    let output = Command::new("mariadb-binlog").env("TZ", "UTC").args(args).args(files).output().expect("run mariadb-binlog");
    assert!(output.status.success(), "mariadb-binlog {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Feeds `script` to the `mariadb` client on `server`, as `mariadb-binlog
/// … | mariadb` does; `--force` goes on past errors.
fn mariadb_script(server: &ServerProcess, script: &str, force: bool) -> Output {
    use std::io::Write;
    let mut command = Command::new("mariadb");
    command.args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", "-B", "-N"]);
    if force {
        command.arg("--force");
    }
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run mariadb");
    let mut stdin = child.stdin.take().unwrap();
    let script = script.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(script.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().expect("write the script");
    output
}

/// Replays `mariadb-binlog ARGS FILES` into `target`; it must succeed.
fn replay(args: &[&str], files: &[PathBuf], target: &ServerProcess) {
    let output = mariadb_script(target, &binlog_text(args, files), false);
    assert!(output.status.success(), "replay {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// Every table of `database` with its definition and rows in key order,
/// as the client prints them (bytes: BLOB and BIT values are not text).
fn contents(server: &ServerProcess, database: &str) -> Vec<u8> {
    let tables = server.query(Some(database), "SHOW TABLES");
    let mut out = tables.clone().into_bytes();
    for table in tables.lines() {
        let sql = format!("SHOW CREATE TABLE {table}; SELECT * FROM {table} ORDER BY 1");
        let output = server.mariadb(Some(database), &sql);
        assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
        out.extend_from_slice(format!("== {table}\n").as_bytes());
        out.extend_from_slice(&output.stdout);
    }
    out
}

/// The body of each `BINLOG '…'` statement in mariadb-binlog's text.
fn binlog_statements(text: &str) -> Vec<String> {
    text.split("BINLOG '").skip(1).map(|rest| rest.split('\'').next().unwrap().to_string()).collect()
}

/// `(file, position)` of SHOW BINARY LOG STATUS.
fn position(server: &ServerProcess) -> (String, u64) {
    let status = server.query(None, "SHOW BINARY LOG STATUS");
    let fields: Vec<&str> = status.split('\t').collect();
    (fields[0].to_string(), fields[1].parse().unwrap())
}

const TYPES_TABLE: &str = "CREATE TABLE shop.kinds (
    id INT NOT NULL,
    big BIGINT UNSIGNED,
    price DECIMAL(12,4),
    ratio DOUBLE,
    name VARCHAR(40),
    photo BLOB,
    born DATE,
    seen DATETIME(6),
    stamp TIMESTAMP(6) NULL,
    span TIME,
    yr YEAR,
    mood ENUM('happy','sad'),
    tags SET('a','b','c'),
    flags BIT(8),
    doc JSON,
    made TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id))";

const TYPES_ROWS: &str =
    "INSERT INTO shop.kinds (id, big, price, ratio, name, photo, born, seen, stamp, span, yr, mood, tags, flags, doc) VALUES
    (1, 18446744073709551615, -12345678.1234, 2.5e-300, 'caf\u{e9} \u{1f600}', x'00ff10', '2024-02-29', '2024-02-29 23:59:59.999999',
     '2038-01-19 03:14:07.000001', '-838:59:59', 2155, 'sad', 'a,c', b'10100101', '{\"k\": [1, 2.5, \"\u{1f600}\", null, {\"n\": true}]}'),
    (2, 0, 0, 0, '', '', '1000-01-01', '1000-01-01 00:00:00', '1970-01-01 00:00:01', '00:00:00', 1901, 'happy', '', b'0', '[]'),
    (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)";

#[test]
fn a_workload_replays_into_a_fresh_server_with_identical_tables() {
    let a = ServerProcess::start();
    a.query(None, &format!("CREATE DATABASE shop; {TYPES_TABLE}; {TYPES_ROWS}"));
    a.query(
        None,
        "UPDATE shop.kinds SET price = price + 1, name = 'tr\u{e8}s \u{1f680}', span = '12:34:56.5', doc = JSON_SET(doc, '$.k[0]', 7) WHERE id = 1;
         UPDATE shop.kinds SET big = 42 WHERE id = 3;
         DELETE FROM shop.kinds WHERE id = 2",
    );
    // DDL between row changes: a table created, filled, indexed, dropped.
    a.query(
        None,
        "CREATE TABLE shop.notes (id INT NOT NULL AUTO_INCREMENT, body VARCHAR(100), PRIMARY KEY (id));
         CREATE TABLE shop.scratch (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO shop.scratch VALUES (1);
         CREATE INDEX notes_body ON shop.notes (body);
         DROP TABLE shop.scratch",
    );
    // A multi-statement transaction.
    a.query(
        None,
        "BEGIN; INSERT INTO shop.notes (body) VALUES ('one'), ('two'), ('three');
         UPDATE shop.notes SET body = 'TWO' WHERE id = 2; DELETE FROM shop.notes WHERE id = 1;
         INSERT INTO shop.kinds (id, name) VALUES (4, 'in a transaction'); COMMIT",
    );
    // A large transaction, promoted into a file of its own (threshold at
    // its 10 MiB minimum; 2,048 rows of 6,000 bytes).
    a.query(None, "SET GLOBAL binlog_large_transaction_optimization_threshold = 10485760");
    let mut big = String::from(
        "CREATE TABLE shop.big (id INT NOT NULL AUTO_INCREMENT, pad VARCHAR(6000) NOT NULL, PRIMARY KEY (id));
         BEGIN; INSERT INTO shop.big (pad) VALUES (REPEAT('x', 6000));",
    );
    for _ in 0..11 {
        big.push_str("INSERT INTO shop.big (pad) SELECT pad FROM shop.big;");
    }
    big.push_str("UPDATE shop.big SET pad = CONCAT('row ', id) WHERE id % 100 = 0; COMMIT");
    a.query(None, &big);
    let promoted = a.query(None, "SHOW GLOBAL STATUS LIKE 'binlog_large_transaction_optimization_count'");
    assert_eq!(promoted, "binlog_large_transaction_optimization_count\t1\n");
    let expected = contents(&a, "shop");
    let shown = String::from_utf8_lossy(&expected);
    assert!(shown.contains("tr\u{e8}s \u{1f680}") && shown.contains("in a transaction"), "{shown}");

    // Every file of A, in order, into a fresh B.
    let files = a.binlog_files();
    assert!(files.len() >= 3, "the promoted transaction has a file of its own: {files:?}");
    let b = ServerProcess::start();
    replay(&[], &files, &b);
    assert!(contents(&b, "shop") == expected, "B differs from A:\n{}", String::from_utf8_lossy(&contents(&b, "shop")));
    assert_eq!(
        b.query(None, "SELECT COUNT(*), SUM(LENGTH(pad)) FROM shop.big"),
        a.query(None, "SELECT COUNT(*), SUM(LENGTH(pad)) FROM shop.big")
    );

    // B logged the rows again, as its own transactions; mariadb-binlog
    // reads every file, and the events replay once more into C.
    let b_files = b.binlog_files();
    // (Not --verbose: MariaDB has no decoder for MySQL's binary JSON.)
    let b_text = binlog_text(&[], &b_files);
    assert!(b_text.contains("Table_map: `shop`.`kinds`") && b_text.contains("Update_rows: table id"), "{b_text}");
    let c = ServerProcess::start();
    replay(&[], &b_files, &c);
    assert!(contents(&c, "shop") == expected, "C differs from A:\n{}", String::from_utf8_lossy(&contents(&c, "shop")));
}

/// `seconds` since the epoch as a UTC datetime, as `--start-datetime` takes it.
fn utc_datetime(seconds: u64) -> String {
    let output = Command::new("date").args(["-u", "-d", &format!("@{seconds}"), "+%F %T"]).output().expect("run date");
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

#[test]
fn slices_by_position_and_by_time_restore_exactly_their_slice() {
    let a = ServerProcess::start();
    let schema = "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, note VARCHAR(20), PRIMARY KEY (id))";
    a.query(None, schema);
    // Three transactions a hundred seconds apart on the session clock
    // (their events carry it), after the DDL's real time.
    let base: u64 = a.query(None, "SELECT UNIX_TIMESTAMP()").trim().parse::<u64>().unwrap() + 1000;
    let mut ends = Vec::new();
    for id in [1, 2, 3] {
        let timestamp = base + 100 * (id - 1);
        a.query(
            None,
            &format!(
                "SET TIMESTAMP = {timestamp}; BEGIN; INSERT INTO shop.t VALUES ({id}, 'row {id}');
                 UPDATE shop.t SET note = CONCAT(note, '!') WHERE id = {id}; COMMIT"
            ),
        );
        ends.push(position(&a).1);
    }
    let files = a.binlog_files();
    assert_eq!(files.len(), 1);
    let fresh = || {
        let server = ServerProcess::start();
        server.query(None, schema);
        server
    };

    // By position: exactly the second transaction.
    let b = fresh();
    replay(&[&format!("--start-position={}", ends[0]), &format!("--stop-position={}", ends[1])], &files, &b);
    assert_eq!(b.query(None, "SELECT * FROM shop.t"), "2\trow 2!\n");

    // By time: the second only, then from the third on.
    let c = fresh();
    let (start, stop) = (utc_datetime(base + 50), utc_datetime(base + 150));
    replay(&[&format!("--start-datetime={start}"), &format!("--stop-datetime={stop}")], &files, &c);
    assert_eq!(c.query(None, "SELECT * FROM shop.t"), "2\trow 2!\n");
    replay(&[&format!("--start-datetime={stop}")], &files, &c);
    assert_eq!(c.query(None, "SELECT * FROM shop.t ORDER BY id"), "2\trow 2!\n3\trow 3!\n");

    // Up to a position, onto an empty server: the slice holds the DDL
    // and the first transaction.
    let d = ServerProcess::start();
    replay(&[&format!("--stop-position={}", ends[0])], &files, &d);
    assert_eq!(d.query(None, "SELECT * FROM shop.t"), "1\trow 1!\n");
}

/// What MySQL 8.4's `mysqlbinlog` prints for one transaction (its session
/// statements, with the charsets by number), around BINLOG statements
/// taken from `mariadb-binlog`'s output of the same file.
fn mysqlbinlog_script(format: &str, rows: &str, gno: u64) -> String {
    format!(
        "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;
/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;
DELIMITER /*!*/;
# at 4
ROLLBACK/*!*/;
BINLOG '{format}'/*!*/;
/*!80001 SET @@session.original_commit_timestamp=1700000000123456*//*!*/;
/*!80014 SET @@session.original_server_version=80400*//*!*/;
/*!80014 SET @@session.immediate_server_version=80400*//*!*/;
SET @@SESSION.GTID_NEXT= '{SOURCE_UUID}:{gno}'/*!*/;
SET TIMESTAMP=1700000000.123456/*!*/;
SET @@session.pseudo_thread_id=8/*!*/;
SET @@session.foreign_key_checks=1, @@session.sql_auto_is_null=0, @@session.unique_checks=1, @@session.autocommit=1/*!*/;
SET @@session.sql_mode=1168113696/*!*/;
SET @@session.auto_increment_increment=1, @@session.auto_increment_offset=1/*!*/;
/*!\\C utf8mb4 *//*!*/;
SET @@session.character_set_client=255,@@session.collation_connection=255,@@session.collation_server=255/*!*/;
SET @@session.lc_time_names=0/*!*/;
SET @@session.collation_database=DEFAULT/*!*/;
/*!80011 SET @@session.default_collation_for_utf8mb4=255*//*!*/;
/*!80016 SET @@session.default_table_encryption=0*//*!*/;
BEGIN
/*!*/;
BINLOG '{rows}'/*!*/;
COMMIT/*!*/;
SET @@SESSION.GTID_NEXT= 'AUTOMATIC' /* added by mysqlbinlog */ /*!*/;
DELIMITER ;
# End of log file
/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;
/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;
"
    )
}

#[test]
fn mysqlbinlog_statements_replay_with_their_gtid_and_original_commit_timestamp() {
    let a = ServerProcess::start();
    let schema = "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, note VARCHAR(20), PRIMARY KEY (id))";
    a.query(None, &format!("{schema}; INSERT INTO shop.t VALUES (1, 'one'), (2, 'two')"));
    let statements = binlog_statements(&binlog_text(&[], &a.binlog_files()));
    let (format, rows) = (&statements[0], &statements[1]);

    let b = ServerProcess::start();
    b.query(None, schema);
    let output = mariadb_script(&b, &mysqlbinlog_script(format, rows, 7), false);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(b.query(None, "SELECT * FROM shop.t ORDER BY id"), "1\tone\n2\ttwo\n");
    assert!(b.query(None, "SELECT @@gtid_executed").contains(&format!("{SOURCE_UUID}:7")));

    // B's Gtid event carries the source's GTID, original commit timestamp
    // and server version; its events the session clock and thread id.
    let b_files = b.binlog_files();
    let events = inspect(&["--json"], b_files.last().unwrap());
    let gtid = events.lines().find(|line| line.contains(&format!("\"gtid\":\"{SOURCE_UUID}:7\""))).expect("B's Gtid event");
    assert!(gtid.contains("\"original_commit_timestamp\":1700000000123456"), "{gtid}");
    assert!(gtid.contains("\"original_server_version\":80400"), "{gtid}");
    let text = binlog_text(&[], &b_files);
    assert!(text.contains("thread_id=8") && text.contains("SET TIMESTAMP=1700000000"), "{text}");

    // Replayed again: the GTID is executed, so the transaction is skipped.
    let again = mariadb_script(&b, &mysqlbinlog_script(format, rows, 7), false);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(b.query(None, "SELECT COUNT(*) FROM shop.t"), "2\n");
}

#[test]
fn the_session_clock_and_thread_id_are_the_replayed_ones() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, made DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (id))",
    );
    assert_eq!(
        server.query(
            None,
            "SET TIMESTAMP = 1700000000.123456; INSERT INTO shop.t (id) VALUES (1);
             SELECT NOW(6), @@timestamp; SELECT made FROM shop.t"
        ),
        "2023-11-14 22:13:20.123456\t1700000000.123456\n2023-11-14 22:13:20.123456\n"
    );
    // DEFAULT and 0 give the real clock back.
    assert_eq!(server.query(None, "SET TIMESTAMP = 1700000000; SET TIMESTAMP = DEFAULT; SELECT NOW() > '2025-01-01 00:00:00'"), "1\n");
    assert_eq!(server.query(None, "SET TIMESTAMP = 1700000000; SET TIMESTAMP = 0; SELECT NOW() > '2025-01-01 00:00:00'"), "1\n");
    assert!(server.error(None, "SET TIMESTAMP = -1").contains("ERROR 1231"));
    // pseudo_thread_id is CONNECTION_ID() and the Query events' thread id.
    assert_eq!(server.query(None, "SET pseudo_thread_id = 77; SELECT CONNECTION_ID(), @@pseudo_thread_id"), "77\t77\n");
    server.query(None, "SET pseudo_thread_id = 78; CREATE TABLE shop.u (id INT NOT NULL, PRIMARY KEY (id))");
    assert!(binlog_text(&[], &server.binlog_files()).contains("thread_id=78"));
    // The settings the binlog clients print, read back as MySQL shows them.
    assert_eq!(
        server.query(
            None,
            "SET @@session.sql_mode=1168113696, @@session.collation_connection=45, @@session.character_set_client=255, @@session.lc_time_names=0, \
             @@session.pseudo_slave_mode=1, @@session.collation_database=DEFAULT;
             SELECT @@sql_mode, @@collation_connection, @@character_set_client, @@lc_time_names, @@pseudo_slave_mode, @@collation_database"
        ),
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION\tutf8mb4_general_ci\tutf8mb4\ten_US\t1\tutf8mb4_general_ci\n"
    );
    assert!(server
        .error(None, "SET @@session.collation_connection=9999")
        .contains("ERROR 1273 (HY000) at line 1: Unknown collation: '9999'"));
    assert!(server.error(None, "SET @@session.sql_auto_is_null=1").contains("ERROR 1235"));
    // Restricted: an account without SYSTEM_VARIABLES_ADMIN may not set them.
    server.query(None, "CREATE USER plain IDENTIFIED BY 'pw'; GRANT SELECT, INSERT ON *.* TO plain");
    let refused = |sql: &str| server.error_as("plain", "pw", None, sql);
    assert!(refused("SET pseudo_thread_id = 5").contains("ERROR 1227"));
    assert!(refused("SET @@session.original_commit_timestamp = 1").contains("ERROR 1227"));
    assert_eq!(server.query_as("plain", "pw", None, "SET TIMESTAMP = 1700000000; SELECT UNIX_TIMESTAMP()"), "1700000000\n");
}

#[test]
fn malformed_binlog_statements_get_mysqls_errors_and_change_nothing() {
    let a = ServerProcess::start();
    let schema = "CREATE DATABASE shop; CREATE TABLE shop.t (id INT NOT NULL, note VARCHAR(20), PRIMARY KEY (id))";
    a.query(None, &format!("{schema}; INSERT INTO shop.t VALUES (1, 'one'), (2, 'two'); DELETE FROM shop.t WHERE id = 1"));
    let statements = binlog_statements(&binlog_text(&[], &a.binlog_files()));
    let (format, insert, delete) = (&statements[0], &statements[1], &statements[2]);

    let b = ServerProcess::start();
    b.query(None, &format!("{schema}; INSERT INTO shop.t VALUES (2, 'kept')"));
    let compact = |body: &str| body.split_whitespace().collect::<String>();
    let (format, insert, delete) = (compact(format), compact(insert), compact(delete));
    let truncated = &insert[..insert.len() - 8];
    // One session, going on past each error as `mariadb --force` does.
    let script = format!(
        "BINLOG '{insert}';
         BINLOG 'not base64!';
         BINLOG '{format}';
         BINLOG '{truncated}';
         BINLOG '{insert}';
         BINLOG '{delete}';
         BINLOG '{format}{format}';
         BINLOG;
         SELECT * FROM shop.t ORDER BY id;
         BEGIN; INSERT INTO shop.t VALUES (9, 'mine'); BINLOG '{insert}'; COMMIT;
         SELECT * FROM shop.t ORDER BY id;\n"
    );
    let output = mariadb_script(&b, &script, true);
    let errors = String::from_utf8(output.stderr).unwrap();
    // --force echoes each failed statement; the errors are the ERROR lines.
    let lines: Vec<&str> = errors.lines().filter(|line| line.starts_with("ERROR")).collect();
    let expected = [
        "ERROR 1609 (HY000) at line 1: The BINLOG statement of type `Table_map` was not preceded by a format description BINLOG statement.",
        "ERROR 1575 (HY000) at line 2: Decoding of base64 string failed",
        "ERROR 1149 (42000) at line 4: You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use",
        // Row 2 is there already: MySQL's applier message, nothing applied.
        "ERROR 1062 (23000) at line 5: Could not execute Write_rows event on table shop.t; Duplicate entry '2' for key 't.PRIMARY'",
        // Row 1 was never restored here.
        "ERROR 1032 (HY000) at line 6: Could not execute Delete_rows event on table shop.t; Can't find record in 't'",
        "ERROR 1064 (42000) at line 8",
        "ERROR 1062 (23000) at line 10",
    ];
    assert_eq!(lines.len(), expected.len(), "{errors}");
    for (line, expected) in lines.iter().zip(expected) {
        assert!(line.starts_with(expected), "expected {expected}\n got {line}\n all: {errors}");
    }
    // The connection stayed usable; only the open transaction's own
    // statement failed, and its commit kept the row before it.
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "2\tkept\n2\tkept\n9\tmine\n");

    // BINLOG needs BINLOG_ADMIN (or SUPER).
    b.query(None, "CREATE USER plain IDENTIFIED BY 'pw'; GRANT ALL ON shop.* TO plain");
    let refused = b.error_as("plain", "pw", None, &format!("BINLOG '{format}'"));
    assert!(refused.contains("ERROR 1227"), "{refused}");
}
