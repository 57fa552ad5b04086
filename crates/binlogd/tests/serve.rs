//! `binlogd serve` driven by real clients: the `mariadb` command-line client
//! (a scripted session with expected output) and sysbench (prepare, run in
//! both prepared-statement modes, cleanup, zero failures), then `binlogd
//! inspect` of the binlog shows the row events. `.ci/run` installs both.

mod support;

use std::process::Command;

use support::{sysbench, ServerProcess, BINLOGD};

#[test]
fn mariadb_client_scripted_session() {
    let mut server = ServerProcess::start();
    assert_eq!(server.query(None, "SELECT @@version_comment LIMIT 1"), "binlogd\n");
    assert_eq!(server.query(None, "SELECT DATABASE(); SELECT @@max_allowed_packet"), "NULL\n67108864\n");
    server.query(None, "CREATE DATABASE shop");
    let session = "
        CREATE TABLE items (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL,
            c CHAR(20) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;
        CREATE INDEX k_1 ON items(k);
        INSERT INTO items (k, c) VALUES (5, 'pen'), (3, 'ink'), (7, 'cap');
        INSERT INTO items (c) VALUES ('nib');
        SELECT id, k, c FROM items WHERE id BETWEEN 2 AND 4;
        SELECT SUM(k), COUNT(*), MIN(c), MAX(k) FROM items;
        SELECT DISTINCT c FROM items WHERE id BETWEEN 1 AND 4 ORDER BY c;
        SELECT c FROM items WHERE k = 3;
        BEGIN;
        UPDATE items SET k=k+1 WHERE id=1;
        UPDATE items SET c='quill' WHERE id=2;
        DELETE FROM items WHERE id=3;
        COMMIT;
        BEGIN; DELETE FROM items; ROLLBACK;
        SELECT id, k, c FROM items ORDER BY id;
        SHOW TABLES;
        SELECT REPEAT('ab', 3), 1+2, LAST_INSERT_ID();
    ";
    assert_eq!(
        server.query(Some("shop"), session),
        "2\t3\tink\n3\t7\tcap\n4\t0\tnib\n\
         15\t4\tcap\t7\n\
         cap\nink\nnib\npen\n\
         ink\n\
         1\t6\tpen\n2\t3\tquill\n4\t0\tnib\n\
         items\n\
         ababab\t3\t4\n"
    );
    assert!(server.error(Some("shop"), "SELECT * FROM nope").contains("ERROR 1146"));
    assert!(server.error(Some("shop"), "SELECT nope FROM items").contains("ERROR 1054"));
    assert!(server.error(Some("shop"), "SELEC 1").contains("ERROR 1064"));
    assert!(server.error(Some("shop"), "INSERT INTO items (id, k, c) VALUES (1, 1, 'x')").contains("ERROR 1062"));
    assert!(server.error(Some("shop"), "HANDLER items OPEN").contains("ERROR 1235"));
    assert!(server.error(None, "USE nowhere").contains("ERROR 1049"));
    // A failed statement in autocommit changes nothing.
    assert!(server
        .error(Some("shop"), "INSERT INTO items (k, c) VALUES (1, 'a'), (2, 'this is far too long for c')")
        .contains("ERROR 1406"));
    assert_eq!(server.query(Some("shop"), "SELECT COUNT(*) FROM items"), "3\n");
    administrative_statements(&server);
    server.query(None, "DROP DATABASE shop");
    assert!(server.stop().success());
    // What RESET, PURGE and FLUSH left is a well-formed log.
    for file in server.binlog_files() {
        support::inspect(&["--verify"], &file);
    }
}

/// Column DEFAULTs are part of the engine's table definitions: after a
/// kill -9 (redo replay) and a clean restart, INSERT still fills them in
/// and SHOW CREATE TABLE still shows them. (The database crate's
/// checkpoint_recovery tests recovery from a checkpoint.)
#[test]
fn column_defaults_survive_a_kill_and_a_restart() {
    let mut server = ServerProcess::start();
    server
        .query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY, k INT DEFAULT 7, c CHAR(5) NOT NULL DEFAULT 'x')");
    server.kill();
    server.start_again(&[]);
    server.query(None, "INSERT INTO d.t (id) VALUES (1)");
    server.restart();
    server.query(None, "INSERT INTO d.t (id) VALUES (2)");
    assert_eq!(server.query(None, "SELECT id, k, c FROM d.t ORDER BY id"), "1\t7\tx\n2\t7\tx\n");
    let create = server.query(None, "SHOW CREATE TABLE d.t");
    assert!(create.contains("`k` int DEFAULT '7'") && create.contains("`c` char(5) NOT NULL DEFAULT 'x'"), "{create}");
    assert!(server.stop().success());
}

/// SHOW BINLOG EVENTS, FLUSH / PURGE / RESET of the binary logs, KILL and
/// SHOW PROCESSLIST, with their errors and warnings.
fn administrative_statements(server: &ServerProcess) {
    let uuid = server.query(None, "SELECT @@server_uuid").trim().to_string();
    assert_eq!(uuid.len(), 36);
    assert!(server.query(None, "SELECT @@gtid_executed").starts_with(&uuid));
    server.query(None, "RESET MASTER");
    assert_eq!(server.query(None, "SELECT @@gtid_executed, @@gtid_purged; SHOW BINARY LOGS"), "\t\nbinlog.000001\t159\tNo\n");
    server.query(Some("shop"), "INSERT INTO items (k, c) VALUES (1, 'ruler'); UPDATE items SET k = 2 WHERE c = 'ruler'");
    let events = server.query(None, "SHOW BINLOG EVENTS").replace(&uuid, "UUID");
    assert_eq!(
        events,
        "binlog.000001\t4\tFormat_desc\t1\t128\tServer ver: 8.4.0-binlogd, Binlog ver: 4\n\
         binlog.000001\t128\tPrevious_gtids\t1\t159\t\n\
         binlog.000001\t159\tGtid\t1\t238\tSET @@SESSION.GTID_NEXT= 'UUID:1'\n\
         binlog.000001\t238\tQuery\t1\t310\tBEGIN\n\
         binlog.000001\t310\tTable_map\t1\t383\ttable_id: 1 (shop.items)\n\
         binlog.000001\t383\tWrite_rows\t1\t433\ttable_id: 1 flags: STMT_END_F\n\
         binlog.000001\t433\tXid\t1\t464\tCOMMIT /* xid=4 */\n\
         binlog.000001\t464\tGtid\t1\t543\tSET @@SESSION.GTID_NEXT= 'UUID:2'\n\
         binlog.000001\t543\tQuery\t1\t615\tBEGIN\n\
         binlog.000001\t615\tTable_map\t1\t688\ttable_id: 1 (shop.items)\n\
         binlog.000001\t688\tUpdate_rows\t1\t754\ttable_id: 1 flags: STMT_END_F\n\
         binlog.000001\t754\tXid\t1\t785\tCOMMIT /* xid=5 */\n"
    );
    server.query(None, "FLUSH BINARY LOGS");
    server.query(Some("shop"), "CREATE TABLE more (id INT PRIMARY KEY)");
    server.query(None, "FLUSH BINARY LOGS");
    let listed = server.query(None, "SHOW BINARY LOGS");
    let names: Vec<&str> = listed.lines().map(|line| line.split('\t').next().unwrap()).collect();
    assert_eq!(names, ["binlog.000001", "binlog.000002", "binlog.000003"]);
    assert_eq!(
        server.query(None, "SHOW BINLOG EVENTS IN 'binlog.000001' FROM 754").replace(&uuid, "UUID"),
        "binlog.000001\t754\tXid\t1\t785\tCOMMIT /* xid=5 */\nbinlog.000001\t785\tRotate\t1\t829\tbinlog.000002;pos=4\n"
    );
    assert_eq!(
        server.query(None, "SHOW BINLOG EVENTS IN 'binlog.000002' LIMIT 2, 2").replace(&uuid, "UUID"),
        "binlog.000002\t199\tGtid\t1\t276\tSET @@SESSION.GTID_NEXT= 'UUID:3'\n\
         binlog.000002\t276\tQuery\t1\t381\tuse `shop`; CREATE TABLE more (id INT PRIMARY KEY)\n"
    );
    assert_eq!(
        server.query(None, "SHOW BINLOG EVENTS IN 'binlog.000002' LIMIT 1, 1").replace(&uuid, "UUID"),
        "binlog.000002\t128\tPrevious_gtids\t1\t199\tUUID:1-2\n"
    );
    let error = server.error(None, "SHOW BINLOG EVENTS IN 'binlog.000009'");
    assert!(
        error.contains("ERROR 1220 (HY000)")
            && error.contains("Error when executing command SHOW BINLOG EVENTS: Could not find target log"),
        "{error}"
    );
    let error = server.error(None, "SHOW BINLOG EVENTS IN 'binlog.000001' FROM 5");
    assert!(error.contains("ERROR 1220 (HY000)") && error.contains("Wrong offset or I/O error"), "{error}");
    assert_eq!(server.query(None, "SHOW BINLOG EVENTS IN 'binlog.000001' FROM 100000"), "");
    assert!(server.error(None, "SHOW RELAYLOG EVENTS").contains("ERROR 1235"));

    server.query(None, "PURGE BINARY LOGS TO 'binlog.000002'");
    let listed = server.query(None, "SHOW BINARY LOGS");
    assert!(listed.starts_with("binlog.000002\t") && listed.lines().count() == 2, "{listed}");
    let error = server.error(None, "PURGE BINARY LOGS TO 'binlog.000009'");
    assert!(error.contains("ERROR 1373 (HY000)") && error.contains("Target log not found in binlog index"), "{error}");
    assert!(server.error(None, "PURGE BINARY LOGS BEFORE 'yesterday'").contains("ERROR 1210"));
    assert_eq!(server.query(None, "PURGE BINARY LOGS BEFORE '2000-01-01 00:00:00'; SHOW WARNINGS"), "");
    assert_eq!(server.query(None, "SHOW BINARY LOGS").lines().count(), 2);
    assert_eq!(
        server.query(None, "PURGE BINARY LOGS BEFORE '2999-01-01 00:00:00'; SHOW WARNINGS"),
        "Warning\t1868\tfile binlog.000003 was not purged because it is the active log file.\n"
    );
    assert_eq!(
        server.query(None, "SHOW BINARY LOGS").lines().map(|l| l.split('\t').next().unwrap()).collect::<Vec<_>>(),
        ["binlog.000003"]
    );
    assert_eq!(server.query(None, "SELECT @@gtid_purged").replace(&uuid, "UUID"), "UUID:1-3\n");

    // IF [NOT] EXISTS with nothing to do: OK, with MySQL's note.
    assert_eq!(
        server.query(None, "CREATE DATABASE IF NOT EXISTS shop; SHOW WARNINGS"),
        "Note\t1007\tCan't create database 'shop'; database exists\n"
    );
    assert_eq!(
        server.query(None, "DROP TABLE IF EXISTS shop.nothing_here; SHOW WARNINGS"),
        "Note\t1051\tUnknown table 'shop.nothing_here'\n"
    );

    let error = server.error(Some("shop"), "BEGIN; INSERT INTO more VALUES (1); RESET MASTER");
    assert!(error.contains("ERROR 1192 (HY000)") && error.contains("active transaction"), "{error}");
    assert!(server.error(None, "RESET PERSIST").contains("ERROR 1235"));
    server.query(None, "RESET BINARY LOGS AND GTIDS");
    server.query(Some("shop"), "INSERT INTO more VALUES (2)");
    assert_eq!(server.query(None, "SHOW BINARY LOGS; SELECT @@gtid_executed").replace(&uuid, "UUID"), "binlog.000001\t442\tNo\nUUID:1\n");
    assert_eq!(server.query(Some("shop"), "SELECT id FROM more"), "2\n");

    let error = server.error(None, "KILL 999999");
    assert!(error.contains("ERROR 1094 (HY000)") && error.contains("Unknown thread id: 999999"), "{error}");
    assert!(server.error(None, "KILL QUERY 999999").contains("ERROR 1094"));
    // SHOW PROCESSLIST: Id, User, Host, db, Command, Time, State, Info.
    let own = server.query(Some("shop"), "SELECT CONNECTION_ID(); SHOW FULL PROCESSLIST");
    let mut lines = own.lines();
    let id = lines.next().unwrap().to_string();
    let row: Vec<&str> = lines.find(|line| line.starts_with(&format!("{id}\t"))).unwrap().split('\t').collect();
    assert_eq!(row.len(), 8, "{row:?}");
    assert_eq!((row[1], row[3], row[4], row[7]), ("root", "shop", "Query", "SHOW FULL PROCESSLIST"));
    assert!(row[2].starts_with("localhost:"), "{row:?}");
    // KILL QUERY interrupts a statement, KILL CONNECTION ends the session,
    // over plain TCP and over TLS: a TLS session ends with its
    // close_notify, so the client reports the lost connection (2013) as
    // against MySQL, not a TLS error (2026).
    for (statement, kill, transport, expected) in [
        ("SELECT SLEEP(60) FROM items", "KILL QUERY", "--skip-ssl", "ERROR 1317 (70100) at line 1: Query execution was interrupted"),
        ("SELECT SLEEP(61)", "KILL CONNECTION", "--skip-ssl", "ERROR 2013"),
        ("SELECT SLEEP(62)", "KILL CONNECTION", "--ssl", "ERROR 2013"),
    ] {
        let sleeper = Command::new("mariadb")
            .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", transport, "-e", statement, "shop"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let id = loop {
            let list = server.query(None, "SHOW PROCESSLIST");
            if let Some(line) = list.lines().find(|line| line.ends_with(statement)) {
                break line.split('\t').next().unwrap().to_string();
            }
            assert!(std::time::Instant::now() < deadline, "{statement} never showed up:\n{list}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        server.query(None, &format!("{kill} {id}"));
        let output = sleeper.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success() && stderr.contains(expected), "{statement} after {kill} ({transport}): {stderr}");
    }
    assert_eq!(server.query(None, "SELECT 1"), "1\n");
}

const SMALL: [&str; 4] = ["--tables=2", "--table-size=1000", "--threads=4", "--time=10"];

#[test]
fn sysbench_oltp_read_write_both_ps_modes_then_inspect() {
    let mut server = ServerProcess::start();
    server.query(None, "CREATE DATABASE sbtest");
    sysbench("oltp_read_write", server.port, &[&SMALL[..], &["prepare"]].concat());
    for mode in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
        let report = sysbench("oltp_read_write", server.port, &[&SMALL[..], &[mode, "run"]].concat());
        assert!(report.transactions() > 0, "{mode}: no transactions\n{}", report.stdout);
    }
    assert_eq!(server.query(Some("sbtest"), "SELECT COUNT(*) FROM sbtest1"), "1000\n");
    sysbench("oltp_read_write", server.port, &[&SMALL[..], &["cleanup"]].concat());
    assert_eq!(server.query(Some("sbtest"), "SHOW TABLES"), "");
    assert!(server.stop().success());

    let mut kinds = std::collections::BTreeMap::<&str, usize>::new();
    for file in server.binlog_files() {
        let output = Command::new(BINLOGD).arg("inspect").arg(&file).output().unwrap();
        assert!(output.status.success(), "inspect {}: {}", file.display(), String::from_utf8_lossy(&output.stderr));
        let text = String::from_utf8_lossy(&output.stdout);
        for kind in ["Table_map", "Write_rows", "Update_rows", "Delete_rows", "Query", "Stop"] {
            *kinds.entry(kind).or_default() += text.matches(kind).count();
        }
    }
    for kind in ["Table_map", "Write_rows", "Update_rows", "Delete_rows", "Query", "Stop"] {
        assert!(kinds[kind] > 0, "no {kind} events in the binlog: {kinds:?}");
    }
}

/// The replica's settings through SQL: stored, checked, shown, kept across
/// a restart, reset; START REPLICA without a source is 1200. (The server
/// skips starting its replica threads at restart: the source configured
/// here does not exist.)
#[test]
fn replica_source_settings_statements() {
    let mut server = ServerProcess::start_with(&["--skip-replica-start=ON"]);
    assert_eq!(server.query(None, "SHOW REPLICA STATUS"), "", "no row before a source is configured");
    let error = server.error(None, "START REPLICA");
    assert!(error.contains("ERROR 1200 (HY000)") && error.contains("The server is not configured as replica"), "{error}");
    server.query(
        None,
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=3307, SOURCE_USER='repl', SOURCE_PASSWORD='pw', \
         SOURCE_AUTO_POSITION=1, IN_MEMORY_RELAYLOG_LIMIT=33554432",
    );
    let error = server.error(None, "CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='binlog.000002'");
    assert!(error.contains("ERROR 1776 (HY000)") && error.contains("Parameters SOURCE_LOG_FILE, SOURCE_LOG_POS"), "{error}");
    let error = server.error(None, "CHANGE MASTER TO MASTER_PORT=70000");
    assert!(error.contains("ERROR 1210 (HY000)") && error.contains("Incorrect arguments to SOURCE_PORT"), "{error}");
    assert!(server.error(None, "CHANGE REPLICATION SOURCE TO SOURCE_SSL=1").contains("ERROR 1235"));

    server.restart();
    let names = server.mariadb(None, "SHOW REPLICA STATUS");
    let text = String::from_utf8_lossy(&names.stdout).into_owned();
    let row: Vec<&str> = text.trim_end_matches('\n').split('\t').collect();
    assert_eq!(row.len(), 60, "{text}");
    let executed = server.query(None, "SELECT @@global.gtid_executed").trim().to_string();
    let column = |name: &str| {
        let output = mariadb_with_names(&server, "SHOW REPLICA STATUS");
        let mut lines = output.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        let values: Vec<&str> = lines.next().unwrap().split('\t').collect();
        values[header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"))].to_string()
    };
    assert_eq!(column("Source_Host"), "127.0.0.1");
    assert_eq!(column("Source_Port"), "3307");
    assert_eq!(column("Source_User"), "repl");
    assert_eq!(column("Auto_Position"), "1");
    assert_eq!(column("Replica_IO_Running"), "No");
    assert_eq!(column("Replica_SQL_Running"), "No");
    assert_eq!(column("Seconds_Behind_Source"), "NULL");
    assert_eq!(column("Executed_Gtid_Set"), executed);
    assert_eq!(column("In_Memory_Queue_Length"), "0");
    assert!(mariadb_with_names(&server, "SHOW SLAVE STATUS").starts_with("Slave_IO_State\tMaster_Host\tMaster_User\tMaster_Port"));

    assert_eq!(
        server.query(None, "STOP REPLICA; SHOW WARNINGS"),
        "Note\t3084\tReplication thread(s) for channel '' are already stopped.\n"
    );
    server.query(None, "CREATE USER 'ops'@'%'; GRANT REPLICATION CLIENT ON *.* TO 'ops'@'%'");
    assert!(server.query_as("ops", "", None, "SHOW REPLICA STATUS").contains("127.0.0.1"));
    let denied = server.error_as("ops", "", None, "CHANGE REPLICATION SOURCE TO SOURCE_PORT=3308");
    assert!(denied.contains("ERROR 1227 (42000)"), "{denied}");

    server.query(None, "RESET REPLICA");
    assert_eq!(column("Source_Host"), "127.0.0.1", "RESET REPLICA keeps the connection settings");
    server.query(None, "RESET REPLICA ALL");
    assert_eq!(server.query(None, "SHOW REPLICA STATUS"), "");
}

/// `mariadb -B` with the column-name line.
fn mariadb_with_names(server: &ServerProcess, sql: &str) -> String {
    let output = Command::new("mariadb").args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", "-B", "-e", sql]).output().unwrap();
    assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// `Innodb_history_list_length` (MariaDB's status name) counts the row
/// keys waiting for purge. With flush 1 a commit purges nothing itself:
/// each group's leader hands purge to the engine's thread as the group's
/// fsyncs begin, so after 20 updates one after another at most the last
/// one's key is left (the thread may still be purging when it is queued),
/// where nothing purging would leave 20.
#[test]
fn history_list_length_shows_what_waits_for_purge() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE h; CREATE TABLE h.t (id INT NOT NULL, v INT, PRIMARY KEY (id)); INSERT INTO h.t VALUES (1, 0), (2, 0)",
    );
    let updates: String = (1..=20).map(|n| format!("UPDATE h.t SET v = {n} WHERE id = {};", 1 + n % 2)).collect();
    server.query(None, &updates);
    let length = || -> u64 {
        let row = server.query(None, "SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'");
        row.trim().strip_prefix("Innodb_history_list_length\t").unwrap_or_else(|| panic!("no status row: {row:?}")).parse().unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while length() > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(length() <= 1, "{} keys wait for purge", length());
    assert_eq!(server.query(None, "SELECT id, v FROM h.t ORDER BY id"), "1\t20\n2\t19\n");
}

/// A transaction takes its isolation level and access mode from the
/// session's `transaction_isolation` and `transaction_read_only` when it
/// starts, or from the global values the session has not changed.
#[test]
fn transactions_start_with_the_sessions_isolation_and_access_mode() {
    let server = ServerProcess::start();
    server.query(None, "CREATE DATABASE iso; CREATE TABLE iso.t (id INT PRIMARY KEY, v INT); INSERT INTO iso.t VALUES (1, 10)");
    // The first session reads inside an open transaction while a second
    // one (the second `mariadb` call) commits a change in between.
    let reads_after_a_commit = |setting: &str| {
        use std::io::{BufRead as _, Write as _};
        let mut reader = Command::new("mariadb")
            .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", "-N", "-B", "--unbuffered", "iso"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = reader.stdin.take().unwrap();
        let mut output = std::io::BufReader::new(reader.stdout.take().unwrap());
        writeln!(input, "{setting} BEGIN; SELECT v FROM t WHERE id = 1;").unwrap();
        input.flush().unwrap();
        // The first read has answered before the other session commits.
        let mut lines = String::new();
        output.read_line(&mut lines).unwrap();
        server.query(Some("iso"), "UPDATE t SET v = v + 1 WHERE id = 1");
        writeln!(input, "SELECT v FROM t WHERE id = 1; COMMIT;").unwrap();
        drop(input);
        output.read_line(&mut lines).unwrap();
        assert!(reader.wait().unwrap().success());
        lines
    };
    assert_eq!(reads_after_a_commit(""), "10\n10\n", "REPEATABLE-READ by default: one snapshot");
    assert_eq!(reads_after_a_commit("SET SESSION transaction_isolation = 'READ-COMMITTED';"), "11\n12\n", "each read sees the last commit");
    server.query(None, "SET GLOBAL transaction_isolation = 'READ-COMMITTED'");
    assert_eq!(reads_after_a_commit(""), "12\n13\n", "a new session takes the global value");
    server.query(None, "SET GLOBAL transaction_isolation = 'REPEATABLE-READ'");

    let refused = server.error(Some("iso"), "SET SESSION transaction_read_only = ON; INSERT INTO iso.t VALUES (2, 20)");
    assert!(refused.contains("1792"), "{refused}");
    assert_eq!(
        server.query(Some("iso"), "SET SESSION transaction_read_only = OFF; INSERT INTO t VALUES (2, 20); SELECT COUNT(*) FROM t"),
        "2\n"
    );
}
