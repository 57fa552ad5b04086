//! Backup with `mariadb-dump` against `binlogd serve`: a dump taken with
//! `--single-transaction --master-data=2` under a running sysbench write
//! load restores, with the `mariadb` client, into a fresh binlogd whose
//! tables equal the source's as of the binlog coordinates the dump stamps
//! (the source's state there is rebuilt from the binlog's row events with
//! mysql_common, the independent decoder), and replaying the binlog from
//! those coordinates with `mariadb-binlog | mariadb` gives the source's
//! final tables. Then the statements the dump
//! stands on, one by one: FLUSH TABLES WITH READ LOCK holding writers
//! until UNLOCK TABLES, LOCK TABLES' rules and errors, savepoints, the
//! isolation levels and START TRANSACTION WITH CONSISTENT SNAPSHOT, and
//! INFORMATION_SCHEMA describing a table of several types as MySQL 8.4
//! does.

mod support;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::EventData;
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use mysql_common::value::Value as MValue;
use support::{sysbench, ServerProcess};

const SYSBENCH_TABLES: usize = 2;

/// Rows by (table, id), each as the `mariadb -B -N` line of `SELECT *`.
type TableRows = BTreeMap<(String, i64), String>;

fn text(value: &BinlogValue<'_>) -> String {
    match value {
        BinlogValue::Value(MValue::Int(v)) => v.to_string(),
        BinlogValue::Value(MValue::UInt(v)) => v.to_string(),
        BinlogValue::Value(MValue::Bytes(bytes)) => String::from_utf8(bytes.clone()).unwrap(),
        BinlogValue::Value(MValue::NULL) => "NULL".to_string(),
        other => panic!("sysbench's tables hold integers and text, not {other:?}"),
    }
}

/// The rows of the sysbench tables as the binlog's row events leave them
/// up to `stop` (file name, position): every event of earlier files and
/// the events of `stop`'s file that end at or before its position. Row
/// events carry full images, so applying them from an empty table gives
/// the table exactly.
fn binlog_rows(files: &[PathBuf], stop: Option<(&str, u64)>) -> TableRows {
    let mut rows = TableRows::new();
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let bytes = std::fs::read(path).unwrap();
        let mut binlog = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).expect("mysql_common reads the file");
        while let Some(event) = binlog.next() {
            let event = event.expect("mysql_common reads every event");
            if let Some((stop_file, stop_position)) = stop {
                if name == stop_file && u64::from(event.header().log_pos()) > stop_position {
                    return rows;
                }
            }
            let Some(EventData::RowsEvent(rows_event)) = event.read_data().expect("mysql_common decodes the event") else { continue };
            let table_map = binlog.reader().get_tme(rows_event.table_id()).expect("table map precedes rows");
            let table = table_map.table_name().to_string();
            if !table.starts_with("sbtest") {
                continue;
            }
            for row in rows_event.rows(table_map) {
                let (before, after) = row.expect("mysql_common decodes the row");
                let key_of = |values: &[BinlogValue<'_>]| -> (String, i64) { (table.clone(), text(&values[0]).parse().unwrap()) };
                if let Some(before) = before {
                    rows.remove(&key_of(&before.unwrap()));
                }
                if let Some(after) = after {
                    let values = after.unwrap();
                    rows.insert(key_of(&values), values.iter().map(text).collect::<Vec<_>>().join("\t"));
                }
            }
        }
        if stop.is_some_and(|(stop_file, _)| stop_file == name) {
            break;
        }
    }
    rows
}

/// The sysbench tables' rows as a server returns them.
fn served_rows(server: &ServerProcess) -> TableRows {
    let mut rows = TableRows::new();
    for n in 1..=SYSBENCH_TABLES {
        let table = format!("sbtest{n}");
        for line in server.query(Some("sbtest"), &format!("SELECT id, k, c, pad FROM {table} ORDER BY id")).lines() {
            let id = line.split('\t').next().unwrap().parse().unwrap();
            rows.insert((table.clone(), id), line.to_string());
        }
    }
    rows
}

/// `-- CHANGE MASTER TO MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=858;`
fn stamped_coordinates(dump: &str) -> (String, u64) {
    let line = dump.lines().find(|line| line.starts_with("-- CHANGE MASTER TO MASTER_LOG_FILE=")).expect("--master-data=2 stamps the dump");
    let file = line.split('\'').nth(1).unwrap().to_string();
    let position = line.rsplit("MASTER_LOG_POS=").next().unwrap().trim_end_matches(';').parse().unwrap();
    (file, position)
}

/// Runs `script` (a dump, or `mariadb-binlog`'s output) with the
/// `mariadb` client on `server`; it must succeed.
fn run_script(server: &ServerProcess, script: &str, what: &str) {
    let mut child = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the mariadb client");
    let mut stdin = child.stdin.take().unwrap();
    let script = script.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(script.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().expect("write the script");
    assert!(output.status.success(), "{what}: {}", String::from_utf8_lossy(&output.stderr));
}

/// `mariadb-binlog --start-position=POSITION` of `file` and the files
/// after it, as text.
fn binlog_from(files: &[PathBuf], file: &str, position: u64) -> String {
    let from: Vec<&PathBuf> = files.iter().skip_while(|path| path.file_name().and_then(|name| name.to_str()) != Some(file)).collect();
    assert!(!from.is_empty(), "{file} among {files:?}");
    let output = Command::new("mariadb-binlog")
        .arg(format!("--start-position={position}"))
        .args(&from)
        .output()
        .expect("run mariadb-binlog (mariadb-client)");
    assert!(output.status.success(), "mariadb-binlog: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("mariadb-binlog prints text")
}

#[test]
fn a_single_transaction_dump_under_load_restores_the_tables_as_of_its_binlog_coordinates() {
    // A transaction holding a row lock can wait for the dump's global read
    // lock while another waits for its row lock inside a statement, which
    // the read lock waits for (as in MySQL); a short row-lock timeout ends
    // such a wait quickly (sysbench ignores its 1205).
    let source = ServerProcess::start_with(&["--innodb_lock_wait_timeout=1"]);
    source.query(None, "CREATE DATABASE sbtest");
    const OPTIONS: [&str; 4] = ["--db-driver=mysql", "--mysql-db=sbtest", "--tables=2", "--table-size=200"];
    let options = OPTIONS;
    sysbench("oltp_write_only", source.port, &[&options[..], &["prepare"]].concat());
    let port = source.port;
    let load = std::thread::spawn(move || {
        sysbench("oltp_write_only", port, &[&options[..], &["--threads=4", "--time=6", "--report-interval=0", "run"]].concat())
    });
    std::thread::sleep(Duration::from_secs(2));
    let output = Command::new("mariadb-dump")
        .args(["-h127.0.0.1", &format!("-P{port}"), "-uroot"])
        .args([
            "--single-transaction",
            "--master-data=2",
            "--flush-logs",
            "--gtid",
            "--all-databases",
            "--routines",
            "--triggers",
            "--events",
        ])
        .output()
        .expect("run mariadb-dump (mariadb-client)");
    assert!(output.status.success(), "mariadb-dump: {}", String::from_utf8_lossy(&output.stderr));
    let dump = String::from_utf8(output.stdout).unwrap();
    let report = load.join().unwrap();
    assert!(report.transactions() > 0, "the load ran: {}", report.stdout);
    let (file, position) = stamped_coordinates(&dump);
    // --flush-logs: FLUSH LOGS under the dump's read lock started a new
    // binlog file, and the coordinates are its start.
    assert_eq!(file, "binlog.000002", "the dump's coordinates are in the file FLUSH LOGS started");

    // The source's rows at the stamped coordinates, and at the end (which
    // checks the decoding against the server itself).
    let files = source.binlog_files();
    let at_dump = binlog_rows(&files, Some((&file, position)));
    let at_end = binlog_rows(&files, None);
    assert_eq!(served_rows(&source), at_end, "the binlog's row events rebuild the source's tables");
    assert_ne!(at_dump, at_end, "the load went on committing after the dump's coordinates");
    assert_eq!(at_dump.len(), 2 * 200, "sysbench's delete and insert keep the row count");

    let restored = ServerProcess::start();
    run_script(&restored, &dump, "restoring the dump");
    assert_eq!(served_rows(&restored), at_dump, "the dump holds the tables exactly as of {file}:{position}");

    // Point-in-time recovery: the binlog from the dump's coordinates to its
    // end, replayed with `mariadb-binlog | mariadb`, brings the restored
    // server to the source's tables.
    run_script(&restored, &binlog_from(&files, &file, position), "replaying the binlog from the dump's coordinates");
    assert_eq!(served_rows(&restored), at_end, "the dump and the binlog after it give the source's tables");
    drop(restored);
    drop(source);
}

/// `sql` in its own `mariadb` session, in a thread; its stdout.
fn session(port: u16, sql: &'static str) -> std::thread::JoinHandle<(String, Duration)> {
    std::thread::spawn(move || {
        let start = Instant::now();
        let output = support::mariadb_client(port, "root", "", Some("d"), sql);
        assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
        (String::from_utf8(output.stdout).unwrap(), start.elapsed())
    })
}

#[test]
fn flush_tables_with_read_lock_holds_other_writers_until_unlock_tables() {
    let server = ServerProcess::start();
    server.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)");
    let holder =
        session(server.port, "FLUSH TABLES WITH READ LOCK; SELECT SLEEP(3); SELECT COUNT(*) FROM t; SHOW MASTER STATUS; UNLOCK TABLES");
    std::thread::sleep(Duration::from_secs(1));
    // Readers go on; a writer's lock_wait_timeout runs out (1205); the
    // holder itself may not write (1223).
    assert_eq!(server.query(Some("d"), "SELECT COUNT(*) FROM t"), "0\n");
    let refused = server.error(Some("d"), "SET SESSION lock_wait_timeout = 1; INSERT INTO t VALUES (9)");
    assert!(refused.contains("ERROR 1205") && refused.contains("Lock wait timeout exceeded"), "{refused}");
    let own = server.error(Some("d"), "FLUSH TABLES WITH READ LOCK; INSERT INTO t VALUES (8)");
    assert!(own.contains("ERROR 1223") && own.contains("conflicting read lock"), "{own}");
    // A writer that waits: its commit completes once the lock is released.
    let writer = session(server.port, "INSERT INTO t VALUES (1); SELECT COUNT(*) FROM t");
    let (held, _) = holder.join().unwrap();
    let (written, waited) = writer.join().unwrap();
    let lines: Vec<&str> = held.lines().collect();
    assert_eq!(&lines[..2], ["0", "0"], "nothing committed while the lock was held");
    let position_under_lock: u64 = lines[2].split('\t').nth(1).unwrap().parse().unwrap();
    assert_eq!(written, "1\n");
    assert!(waited >= Duration::from_millis(500), "the writer waited for UNLOCK TABLES ({waited:?})");
    let status = server.query(None, "SHOW MASTER STATUS");
    let position_after: u64 = status.split('\t').nth(1).unwrap().parse().unwrap();
    assert!(position_after > position_under_lock, "the insert was logged after the lock: {status}");
    // A disconnect releases the lock too.
    server.query(None, "FLUSH TABLES WITH READ LOCK");
    server.query(Some("d"), "SET SESSION lock_wait_timeout = 1; INSERT INTO t VALUES (2)");
}

#[test]
fn lock_tables_savepoints_and_transaction_characteristics_follow_mysql() {
    let server = ServerProcess::start();
    server.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); CREATE TABLE d.u (id INT PRIMARY KEY)");
    let error = |sql: &str, code: &str, message: &str| {
        let stderr = server.error(Some("d"), sql);
        assert!(stderr.contains(code) && stderr.contains(message), "{sql}: {stderr}");
    };
    error("LOCK TABLES t READ; SELECT * FROM u", "ERROR 1100", "Table 'u' was not locked with LOCK TABLES");
    error("LOCK TABLES t READ; INSERT INTO t VALUES (1)", "ERROR 1099", "Table 't' was locked with a READ lock and can't be updated");
    error("LOCK TABLES nope READ", "ERROR 1146", "Table 'd.nope' doesn't exist");
    error("LOCK TABLES t READ; FLUSH TABLES WITH READ LOCK", "ERROR 1192", "active locked tables");
    assert_eq!(
        server.query(Some("d"), "LOCK TABLES t WRITE, u AS a READ; INSERT INTO t VALUES (1); SELECT * FROM u AS a; UNLOCK TABLES"),
        ""
    );
    // LOCK TABLES commits the open transaction, as MySQL does.
    server.query(Some("d"), "BEGIN; INSERT INTO t VALUES (2); LOCK TABLES t READ; ROLLBACK; UNLOCK TABLES");
    assert_eq!(server.query(Some("d"), "SELECT id FROM t ORDER BY id"), "1\n2\n");
    // Another session's READ lock holds writers to the table.
    let holder = session(server.port, "LOCK TABLES t READ; SELECT SLEEP(3); UNLOCK TABLES");
    std::thread::sleep(Duration::from_secs(1));
    error("SET SESSION lock_wait_timeout = 1; INSERT INTO t VALUES (3)", "ERROR 1205", "Lock wait timeout exceeded");
    assert_eq!(server.query(Some("d"), "INSERT INTO u VALUES (3); SELECT COUNT(*) FROM t"), "2\n");
    holder.join().unwrap();

    // Savepoints.
    server.query(Some("d"), "BEGIN; INSERT INTO u VALUES (4); SAVEPOINT a; INSERT INTO u VALUES (5); ROLLBACK TO SAVEPOINT a; COMMIT");
    assert_eq!(server.query(Some("d"), "SELECT id FROM u ORDER BY id"), "3\n4\n");
    error("BEGIN; SAVEPOINT a; RELEASE SAVEPOINT a; ROLLBACK TO a", "ERROR 1305", "SAVEPOINT a does not exist");

    // Isolation levels and access modes.
    assert_eq!(
        server.query(None, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; SELECT @@transaction_isolation"),
        "READ-COMMITTED\n"
    );
    error("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", "ERROR 1235", "READ-UNCOMMITTED");
    error("SET transaction_isolation = 'SERIALIZABLE'", "ERROR 1235", "SERIALIZABLE");
    error("SET transaction_isolation = 'SOMETIMES'", "ERROR 1231", "can't be set to the value of 'SOMETIMES'");
    error("BEGIN; SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "ERROR 1568", "while a transaction is in progress");
    error("START TRANSACTION READ ONLY; INSERT INTO u VALUES (6)", "ERROR 1792", "Cannot execute statement in a READ ONLY transaction.");
    error("SET TRANSACTION READ ONLY; INSERT INTO u VALUES (6)", "ERROR 1792", "READ ONLY transaction");
    assert_eq!(server.query(Some("d"), "SET TRANSACTION READ ONLY; SELECT 1; INSERT INTO u VALUES (6); SELECT COUNT(*) FROM u"), "1\n3\n");

    // WITH CONSISTENT SNAPSHOT takes the view at once; a plain START
    // TRANSACTION at its first read; READ COMMITTED at every read.
    let snapshot = session(server.port, "START TRANSACTION WITH CONSISTENT SNAPSHOT; SELECT SLEEP(2); SELECT COUNT(*) FROM t; COMMIT");
    let lazy = session(server.port, "START TRANSACTION; SELECT SLEEP(2); SELECT COUNT(*) FROM t; COMMIT");
    let read_committed = session(
        server.port,
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN; SELECT COUNT(*) FROM t; SELECT SLEEP(2); SELECT COUNT(*) FROM t; COMMIT",
    );
    let repeatable_read = session(server.port, "BEGIN; SELECT COUNT(*) FROM t; SELECT SLEEP(2); SELECT COUNT(*) FROM t; COMMIT");
    std::thread::sleep(Duration::from_secs(1));
    server.query(Some("d"), "INSERT INTO t VALUES (7)");
    assert_eq!(snapshot.join().unwrap().0, "0\n2\n");
    assert_eq!(lazy.join().unwrap().0, "0\n3\n");
    assert_eq!(read_committed.join().unwrap().0, "2\n0\n3\n");
    assert_eq!(repeatable_read.join().unwrap().0, "2\n0\n2\n");
}

#[test]
fn information_schema_describes_a_table_of_several_types_as_mysql_does() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE d; CREATE TABLE d.typed (id INT UNSIGNED NOT NULL AUTO_INCREMENT, name VARCHAR(20) NOT NULL DEFAULT 'x',
            price DECIMAL(10,2), ratio DOUBLE, created DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3), body TEXT, flag ENUM('a','bb'),
            bits BIT(5), raw VARBINARY(16), j JSON, big BIGINT UNSIGNED,
            PRIMARY KEY (id), UNIQUE KEY name (name), KEY price (price));
         INSERT INTO d.typed (name) VALUES ('p'), ('q')",
    );
    // MySQL 8.4's INFORMATION_SCHEMA.COLUMNS for these declarations
    // (reference manual, "The INFORMATION_SCHEMA COLUMNS Table" and "Data
    // Type Storage Requirements"), the collation being the table's.
    let columns = server.query(
        None,
        "SELECT COLUMN_NAME, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH,
            NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME, COLLATION_NAME, COLUMN_TYPE, COLUMN_KEY, EXTRA
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 'typed' ORDER BY ORDINAL_POSITION",
    );
    let expected = [
        "id\tNULL\tNO\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint unsigned\tPRI\tauto_increment",
        "name\tx\tNO\tvarchar\t20\t80\tNULL\tNULL\tNULL\tutf8mb4\tutf8mb4_general_ci\tvarchar(20)\tUNI\t",
        "price\tNULL\tYES\tdecimal\tNULL\tNULL\t10\t2\tNULL\tNULL\tNULL\tdecimal(10,2)\tMUL\t",
        "ratio\tNULL\tYES\tdouble\tNULL\tNULL\t22\tNULL\tNULL\tNULL\tNULL\tdouble\t\t",
        "created\tCURRENT_TIMESTAMP(3)\tYES\tdatetime\tNULL\tNULL\tNULL\tNULL\t3\tNULL\tNULL\tdatetime(3)\t\tDEFAULT_GENERATED",
        "body\tNULL\tYES\ttext\t65535\t65535\tNULL\tNULL\tNULL\tutf8mb4\tutf8mb4_general_ci\ttext\t\t",
        "flag\tNULL\tYES\tenum\t2\t8\tNULL\tNULL\tNULL\tutf8mb4\tutf8mb4_general_ci\tenum('a','bb')\t\t",
        "bits\tNULL\tYES\tbit\tNULL\tNULL\t5\tNULL\tNULL\tNULL\tNULL\tbit(5)\t\t",
        "raw\tNULL\tYES\tvarbinary\t16\t16\tNULL\tNULL\tNULL\tNULL\tNULL\tvarbinary(16)\t\t",
        "j\tNULL\tYES\tjson\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tjson\t\t",
        "big\tNULL\tYES\tbigint\tNULL\tNULL\t20\t0\tNULL\tNULL\tNULL\tbigint unsigned\t\t",
    ];
    assert_eq!(columns.lines().collect::<Vec<_>>(), expected);
    assert_eq!(
        server.query(
            None,
            "SELECT INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, NULLABLE, INDEX_TYPE FROM information_schema.STATISTICS
             WHERE TABLE_SCHEMA = 'd' ORDER BY INDEX_NAME DESC"
        ),
        "price\t1\t1\tprice\tYES\tBTREE\nname\t0\t1\tname\t\tBTREE\nPRIMARY\t0\t1\tid\t\tBTREE\n"
    );
    assert_eq!(
        server.query(
            None,
            "SELECT CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_NAME = 'typed'"
        ),
        "PRIMARY\tid\t1\nname\tname\t1\n"
    );
    assert_eq!(
        server.query(
            None,
            "SELECT TABLE_TYPE, ENGINE, ROW_FORMAT, AUTO_INCREMENT, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd'"
        ),
        "BASE TABLE\tInnoDB\tDynamic\t3\tutf8mb4_general_ci\n"
    );
    assert_eq!(
        server.query(None, "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME"),
        "d\tutf8mb4\ninformation_schema\tutf8mb4\n"
    );
    assert_eq!(
        server.query(None, "SELECT COUNT(*) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = 'd' AND PARTITION_NAME IS NULL"),
        "1\n"
    );
    for empty in ["FILES", "ROUTINES", "TRIGGERS", "VIEWS", "EVENTS"] {
        assert_eq!(server.query(None, &format!("SELECT COUNT(*) FROM information_schema.{empty}")), "0\n");
    }
    let unknown = server.error(None, "SELECT * FROM information_schema.nope");
    assert!(unknown.contains("ERROR 1109") && unknown.contains("Unknown table 'NOPE' in information_schema"), "{unknown}");
    let status = server.query(Some("d"), "SHOW TABLE STATUS LIKE 'typ%'");
    let status: Vec<&str> = status.trim_end().split('\t').collect();
    assert_eq!((&status[..4], status[10], status[14]), (&["typed", "InnoDB", "10", "Dynamic"][..], "3", "utf8mb4_general_ci"));
    assert_eq!(server.query(Some("d"), "SHOW TRIGGERS; SHOW EVENTS; SHOW FUNCTION STATUS WHERE Db = 'd'; SHOW PROCEDURE STATUS"), "");
    // SHOW ... WHERE over the SHOW's own columns (Debezium's table listing).
    assert_eq!(server.query(None, "SHOW FULL TABLES IN d WHERE Table_type = 'BASE TABLE'"), "typed\tBASE TABLE\n");
    assert_eq!(
        server.query(None, "SHOW VARIABLES WHERE Variable_name IN ('lock_wait_timeout', 'transaction_read_only')"),
        "lock_wait_timeout\t31536000\ntransaction_read_only\tOFF\n"
    );
    assert_eq!(
        server.query(None, "SHOW CREATE DATABASE d"),
        "d\tCREATE DATABASE `d` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */ /*!80016 DEFAULT ENCRYPTION='N' */\n"
    );
}
