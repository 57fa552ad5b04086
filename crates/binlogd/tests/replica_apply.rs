//! binlogd replicating from binlogd: CHANGE REPLICATION SOURCE TO
//! with auto-position, START REPLICA, and then the source's sysbench
//! oltp_write_only, a promoted large transaction and DDL arrive through the
//! memory relay log and the parallel applier. Afterwards both servers have
//! the same rows in every table and the same GTID set. Also: kill -9 of the
//! replica at random moments under load (it converges, nothing lost or
//! applied twice), each thread stopped and started, a source restart, a
//! wrong password and an apply error, with MySQL's messages.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use support::mariadb::MariaDb;
use support::replica::replica_status;
use support::{sysbench, ServerProcess, DDL_WORKLOAD};

const REPL_PASSWORD: &str = "repl-pw";

fn start_source() -> ServerProcess {
    let source = ServerProcess::start();
    source.query(None, &format!("CREATE USER 'repl'@'%' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'"));
    source
}

/// A replica (server_id 2) of `source`, with its threads started. The
/// spill threshold is low so the large transaction goes through a spill file.
fn start_replica(source: &ServerProcess, extra: &[&str]) -> ServerProcess {
    let mut options = vec!["--server-id=2"];
    options.extend_from_slice(extra);
    let replica = ServerProcess::start_with(&options);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=1,
                 IN_MEMORY_RELAYLOG_LIMIT=33554432, IN_MEMORY_RELAYLOG_SPILL_THRESHOLD=4194304;
             START REPLICA",
            source.port
        ),
    );
    replica
}

fn gtid_executed(server: &ServerProcess) -> String {
    server.query(None, "SELECT @@global.gtid_executed").trim().replace("\\n", "")
}

/// Waits until the replica has executed every GTID the source has (the
/// source's UUID:intervals parts all appear in the replica's set; the
/// replica may have its own transactions too).
fn wait_caught_up(source: &ServerProcess, replica: &ServerProcess) {
    let deadline = Instant::now() + Duration::from_secs(240);
    let wanted = gtid_executed(source);
    loop {
        let executed = gtid_executed(replica);
        if wanted.split(',').all(|part| executed.split(',').any(|ours| ours == part)) {
            return;
        }
        let status = replica_status(replica);
        let sql_error = status.get("Last_SQL_Error").cloned().unwrap_or_default();
        assert!(sql_error.is_empty(), "the applier stopped: {sql_error}");
        assert!(
            Instant::now() < deadline,
            "replica at {}, source at {wanted}: {status:#?}\n{}",
            gtid_executed(replica),
            std::fs::read_to_string(&replica.log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every table of the user databases with its rows sorted (primary-key
/// order as text is not needed: sorted lines compare the same rows).
fn contents(server: &ServerProcess) -> BTreeMap<String, Vec<String>> {
    let mut tables = BTreeMap::new();
    for database in server.query(None, "SHOW DATABASES").lines() {
        if ["information_schema", "mysql", "performance_schema", "sys"].contains(&database) {
            continue;
        }
        for table in server.query(None, &format!("SHOW TABLES FROM `{database}`")).lines() {
            let mut rows: Vec<String> =
                server.query(None, &format!("SELECT * FROM `{database}`.`{table}`")).lines().map(str::to_string).collect();
            rows.sort();
            tables.insert(format!("{database}.{table}"), rows);
        }
    }
    tables
}

fn assert_same_contents(source: &ServerProcess, replica: &ServerProcess) {
    let (ours, theirs) = (contents(source), contents(replica));
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>(), "the same tables");
    for (table, rows) in &ours {
        assert!(
            *rows == theirs[table],
            "{table}: {} rows on the source, {} on the replica, or different rows",
            rows.len(),
            theirs[table].len()
        );
    }
    assert_eq!(gtid_executed(source), gtid_executed(replica));
}

fn sysbench_write_only(port: u16, args: &[&str]) {
    let mut all = vec!["--tables=2", "--table-size=500", "--db-ps-mode=disable"];
    all.extend_from_slice(args);
    sysbench("oltp_write_only", port, &all);
}

#[test]
fn binlogd_replica_replicates_sysbench_a_large_transaction_and_ddl() {
    let source = start_source();
    let replica = start_replica(&source, &[]);
    source.query(None, "CREATE DATABASE sbtest");
    sysbench_write_only(source.port, &["prepare"]);
    sysbench_write_only(source.port, &["--threads=8", "--time=10", "run"]);

    // A promoted large transaction (past the 10 MiB minimum threshold);
    // 12 MB, so it passes the replica through a spill file (4 MiB threshold).
    source.query(
        None,
        "SET GLOBAL binlog_large_transaction_optimization_threshold = 10485760;
         CREATE DATABASE extra; CREATE TABLE extra.big (id INT NOT NULL, note LONGTEXT, PRIMARY KEY (id));",
    );
    let mut large = String::from("BEGIN;");
    for id in 1..=24u8 {
        large.push_str(&format!("INSERT INTO extra.big VALUES ({id}, REPEAT('{}', 500000));", char::from(b'A' + id)));
    }
    large.push_str("COMMIT;");
    source.query(None, &large);
    assert_eq!(
        source.query(None, "SHOW GLOBAL STATUS LIKE 'binlog_large_transaction_optimization_count'").trim(),
        "binlog_large_transaction_optimization_count\t1"
    );

    // DDL: tables and indexes come and go, a rotation, a TRUNCATE.
    source.query(None, DDL_WORKLOAD);

    wait_caught_up(&source, &replica);
    assert_same_contents(&source, &replica);
    assert_eq!(replica.query(None, "SHOW CREATE TABLE extra.kv"), source.query(None, "SHOW CREATE TABLE extra.kv"));

    let status = replica_status(&replica);
    assert_eq!((status["Replica_IO_Running"].as_str(), status["Replica_SQL_Running"].as_str()), ("Yes", "Yes"));
    assert_eq!((status["Last_IO_Errno"].as_str(), status["Last_SQL_Errno"].as_str()), ("0", "0"));
    assert_eq!(status["Retrieved_Gtid_Set"].replace('\n', ""), gtid_executed(&source));
    assert_eq!(status["Seconds_Behind_Source"], "0");
    assert_eq!(status["Source_UUID"], source.query(None, "SELECT @@server_uuid").trim());
    // The replica logs what it applied with the source's GTIDs (its own
    // binlog feeds its own replicas).
    let replica_binlog = replica.query(None, "SHOW BINLOG EVENTS");
    assert!(replica_binlog.contains(&format!("SET @@SESSION.GTID_NEXT= '{}:1'", status["Source_UUID"])), "{replica_binlog}");
    let spilled = replica.query(None, "SHOW GLOBAL STATUS LIKE 'Replica_relay_log_spilled_transactions_total'");
    assert!(spilled.trim().ends_with("\t1"), "the large transaction went through a spill file: {spilled:?}");
}

/// A deterministic pseudo-random sequence for the kill moments (the seed
/// is printed, so a failure can be replayed).
struct Moments(u64);

impl Moments {
    fn next_millis(&mut self, low: u64, high: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        low + (self.0 >> 33) % (high - low)
    }
}

#[test]
fn replica_killed_at_random_moments_under_load_converges() {
    let source = start_source();
    let mut replica = start_replica(&source, &[]);
    source.query(None, "CREATE DATABASE sbtest");
    sysbench_write_only(source.port, &["prepare"]);
    let port = source.port;
    let load = std::thread::spawn(move || sysbench_write_only(port, &["--threads=4", "--time=25", "run"]));
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
    eprintln!("kill moments seed {seed}");
    let mut moments = Moments(seed);
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(moments.next_millis(1000, 4000)));
        replica.kill();
        // The threads start with the server (skip_replica_start is OFF) and
        // ask for everything after the replica's durable GTID set.
        replica.start_again(&[]);
    }
    load.join().unwrap();
    wait_caught_up(&source, &replica);
    assert_same_contents(&source, &replica);
    let restarts = std::fs::read_to_string(&replica.log).unwrap().matches("replica threads started").count();
    assert_eq!(restarts, 5, "the threads started with each restart");
}

#[test]
fn replica_threads_stop_start_source_restart_and_errors() {
    let mut source = start_source();
    let replica = start_replica(&source, &[]);
    source.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT NOT NULL, v INT, PRIMARY KEY (id)); INSERT INTO d.t VALUES (1, 1)");
    wait_caught_up(&source, &replica);

    // Both running: START is a note, CHANGE and RESET are refused.
    assert_eq!(
        replica.query(None, "START REPLICA; SHOW WARNINGS"),
        "Note\t3083\tReplication thread(s) for channel '' are already runnning.\n"
    );
    let refused = replica.error(None, "CHANGE REPLICATION SOURCE TO SOURCE_CONNECT_RETRY=2");
    assert!(refused.contains("ERROR 1198 (HY000)") && refused.contains("run STOP REPLICA first"), "{refused}");
    assert!(replica.error(None, "RESET REPLICA").contains("ERROR 1198"));

    // The receiver stopped: the applier runs on, nothing new arrives.
    replica.query(None, "STOP REPLICA IO_THREAD");
    let status = replica_status(&replica);
    assert_eq!((status["Replica_IO_Running"].as_str(), status["Replica_SQL_Running"].as_str()), ("No", "Yes"));
    source.query(None, "INSERT INTO d.t VALUES (2, 2)");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(replica.query(None, "SELECT COUNT(*) FROM d.t").trim(), "1");
    replica.query(None, "START REPLICA IO_THREAD");
    wait_caught_up(&source, &replica);

    // The applier stopped: transactions are retrieved, not executed.
    replica.query(None, "STOP REPLICA SQL_THREAD");
    assert_eq!(
        replica.query(None, "STOP REPLICA SQL_THREAD; SHOW WARNINGS"),
        "Note\t3084\tReplication thread(s) SQL for channel '' are already stopped.\n"
    );
    source.query(None, "INSERT INTO d.t VALUES (3, 3); INSERT INTO d.t VALUES (4, 4)");
    let deadline = Instant::now() + Duration::from_secs(30);
    while replica_status(&replica)["Retrieved_Gtid_Set"].replace('\n', "") != gtid_executed(&source) {
        assert!(Instant::now() < deadline, "the receiver did not retrieve the new transactions");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_ne!(gtid_executed(&replica), gtid_executed(&source));
    assert_eq!(replica_status(&replica)["In_Memory_Queue_Length"], "2");
    replica.query(None, "START REPLICA SQL_THREAD");
    wait_caught_up(&source, &replica);

    // A source restart: the receiver reconnects (SOURCE_CONNECT_RETRY=1).
    source.restart();
    source.query(None, "INSERT INTO d.t VALUES (5, 5)");
    wait_caught_up(&source, &replica);
    assert_same_contents(&source, &replica);

    // An apply error: the row exists on the replica already (1062); the
    // applier stops with MySQL's message, the receiver runs on.
    replica.query(None, "INSERT INTO d.t VALUES (6, 60)");
    source.query(None, "INSERT INTO d.t VALUES (6, 6)");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let status = replica_status(&replica);
        if status["Replica_SQL_Running"] == "No" {
            break status;
        }
        assert!(Instant::now() < deadline, "the applier did not stop: {status:#?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status["Last_SQL_Errno"], "1062", "{status:#?}");
    assert_eq!(status["Last_Errno"], "1062");
    assert!(
        status["Last_SQL_Error"].contains("Coordinator stopped because there were error(s) in the worker(s)")
            || status["Last_SQL_Error"].contains("Duplicate entry '6'"),
        "{status:#?}"
    );
    assert!(!status["Last_SQL_Error_Timestamp"].is_empty());
    assert_eq!(status["Replica_IO_Running"], "Yes");
    // Fixed by hand, the applier goes on from the failed transaction.
    replica.query(None, "STOP REPLICA; DELETE FROM d.t WHERE id = 6; START REPLICA");
    wait_caught_up(&source, &replica);
    assert_eq!(replica.query(None, "SELECT v FROM d.t WHERE id = 6").trim(), "6");
    assert_eq!(replica_status(&replica)["Last_SQL_Errno"], "0", "START REPLICA clears the error");

    // A wrong password: the receiver retries and shows MySQL's 1045.
    replica.query(None, "STOP REPLICA; CHANGE REPLICATION SOURCE TO SOURCE_PASSWORD='wrong', SOURCE_RETRY_COUNT=2; START REPLICA");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let status = replica_status(&replica);
        if status["Last_IO_Errno"] != "0" {
            break status;
        }
        assert!(Instant::now() < deadline, "no IO error: {status:#?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status["Last_IO_Errno"], "1045", "{status:#?}");
    assert!(
        status["Last_IO_Error"].starts_with(&format!("Error connecting to source 'repl@127.0.0.1:{}'.", source.port))
            && status["Last_IO_Error"].contains("Access denied for user 'repl'"),
        "{status:#?}"
    );
    replica.query(None, "STOP REPLICA");
    let status = replica_status(&replica);
    assert_eq!((status["Replica_IO_Running"].as_str(), status["Replica_SQL_Running"].as_str()), ("No", "No"));
    assert_eq!(status["Seconds_Behind_Source"], "NULL");
}

/// IN_MEMORY_RELAYLOG_ENABLED=0: the receiver writes relay-log files
/// (MySQL's way) and the workers read them back; applied files are purged.
#[test]
fn a_file_relay_log_replicates_the_same() {
    let source = start_source();
    let replica = ServerProcess::start_with(&["--server-id=2"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1, IN_MEMORY_RELAYLOG_ENABLED=0;
             START REPLICA",
            source.port
        ),
    );
    source.query(None, "CREATE DATABASE sbtest");
    sysbench_write_only(source.port, &["prepare"]);
    sysbench_write_only(source.port, &["--threads=4", "--time=5", "run"]);
    wait_caught_up(&source, &replica);
    assert_same_contents(&source, &replica);
    let status =
        |name: &str| replica.query(None, &format!("SHOW GLOBAL STATUS LIKE '{name}'")).trim().rsplit('\t').next().unwrap().to_string();
    assert_eq!(status("Replica_relay_log_memory_bytes_peak"), "0", "nothing went through the ring");
    assert_eq!(status("Replica_relay_log_file_transactions"), "0", "every relay-log transaction was applied");
    let applied: u64 = status("Replica_transactions_applied").parse().unwrap();
    assert!(applied > 100, "{applied} transactions applied");
    let relay_files: Vec<_> = std::fs::read_dir(replica.datadir.join("relay-log")).unwrap().collect();
    assert!(!relay_files.is_empty(), "relay-log files in the data directory");
}

/// A real MariaDB 10.11 source (started by the test, `--log-bin
/// --binlog-format=ROW`) and a binlogd replica by file and position under
/// sysbench oltp_write_only, with DDL: every table ends with the same rows
/// on both servers. MariaDB's GTIDs are not MySQL's, so the replica commits
/// with its own; SHOW REPLICA STATUS shows the source's file and position.
#[test]
fn a_mariadb_source_replicates_into_binlogd() {
    let source = MariaDb::start(&["--server-id=1", "--log-bin=mariadb-bin", "--binlog-format=ROW"]);
    // 'repl'@'localhost': mariadb-install-db's anonymous ''@'localhost'
    // would match a loopback login before 'repl'@'%'.
    source.query(&format!(
        "CREATE USER 'repl'@'localhost' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'localhost'"
    ));
    let start = source.query("SHOW MASTER STATUS");
    let mut fields = start.split('\t');
    let (file, position) = (fields.next().unwrap().to_string(), fields.next().unwrap().to_string());
    let replica = ServerProcess::start_with(&["--server-id=2"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 SOURCE_LOG_FILE='{file}', SOURCE_LOG_POS={position}, SOURCE_CONNECT_RETRY=1;
             START REPLICA",
            source.port
        ),
    );
    source.query("CREATE DATABASE sbtest");
    sysbench_write_only(source.port, &["prepare"]);
    sysbench_write_only(source.port, &["--threads=4", "--time=10", "run"]);
    source.query(
        "CREATE DATABASE extra;
         CREATE TABLE extra.kv (id INT UNSIGNED NOT NULL AUTO_INCREMENT, k VARCHAR(32) NOT NULL, v DECIMAL(10,2), at DATETIME, PRIMARY KEY (id));
         INSERT INTO extra.kv (k, v, at) VALUES ('a', 1.50, '2026-11-30 01:02:03'), ('b', NULL, NULL), ('c', -3.25, '1999-12-31 23:59:59');
         UPDATE extra.kv SET v = v + 10 WHERE k <> 'b'; DELETE FROM extra.kv WHERE k = 'a';
         CREATE TABLE extra.gone (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO extra.gone VALUES (1); DROP TABLE extra.gone;",
    );
    // Caught up: the applier's position is the source's binlog end.
    let end = source.query("SHOW MASTER STATUS");
    let mut fields = end.split('\t');
    let (end_file, end_position) = (fields.next().unwrap().to_string(), fields.next().unwrap().to_string());
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let status = replica_status(&replica);
        assert!(status["Last_SQL_Error"].is_empty() && status["Last_IO_Errno"] == "0", "{status:#?}");
        if status["Relay_Source_Log_File"] == end_file && status["Exec_Source_Log_Pos"] == end_position {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "replica at {} {}, source at {end_file} {end_position}",
            status["Relay_Source_Log_File"],
            status["Exec_Source_Log_Pos"]
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    for table in ["sbtest.sbtest1", "sbtest.sbtest2", "extra.kv"] {
        let sql = format!("SELECT * FROM {table} ORDER BY id");
        let theirs = source.query(&sql);
        assert!(!theirs.is_empty(), "{table} is empty on the source");
        assert_eq!(replica.query(None, &sql), theirs, "{table} differs between the MariaDB source and the binlogd replica");
    }
    assert_eq!(replica.query(None, "SHOW TABLES FROM extra"), "kv\n");
}
