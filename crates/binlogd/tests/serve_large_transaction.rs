//! The large-transaction experiment through SQL: while sysbench
//! oltp_write_only runs (2 threads), one session commits a transaction of
//! about 16 MB built with `INSERT ... SELECT` and REPEAT(). With
//! `binlog_large_transaction_optimization_enabled = ON` (set with SET
//! GLOBAL, threshold at its 10 MiB minimum) the transaction lands in a
//! promoted file of its own (SHOW BINARY LOGS, SHOW BINLOG EVENTS, the
//! status counter); with OFF it is copied into the active file. sysbench
//! has no error either way, and `binlogd inspect --verify` passes on
//! every file.

mod support;

use std::time::Duration;

use support::{inspect, sysbench, ServerProcess};

const SYSBENCH: [&str; 6] =
    ["--tables=1", "--table-size=10000", "--threads=2", "--rand-type=uniform", "--db-ps-mode=auto", "--mysql-db=sbtest"];

/// `binlog_large_transaction_optimization_count`.
fn promotions(server: &ServerProcess) -> u64 {
    let row = server.query(None, "SHOW GLOBAL STATUS LIKE 'binlog_large_transaction_optimization_count'");
    row.trim().rsplit('\t').next().unwrap().parse().unwrap()
}

fn binary_logs(server: &ServerProcess) -> Vec<(String, u64)> {
    server
        .query(None, "SHOW BINARY LOGS")
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields[0].to_string(), fields[1].parse().unwrap())
        })
        .collect()
}

/// Files whose third event is a Large_transaction_header: promoted ones.
fn promoted_files(server: &ServerProcess) -> Vec<String> {
    binary_logs(server)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| {
            let events = server.query(None, &format!("SHOW BINLOG EVENTS IN '{name}' LIMIT 2, 1"));
            events.split('\t').nth(2) == Some("Large_transaction_header")
        })
        .collect()
}

/// Runs the big transaction while sysbench writes; returns sysbench's report.
fn big_commit_under_load(server: &ServerProcess, table: &str) -> support::SysbenchReport {
    let port = server.port;
    let load = std::thread::spawn(move || {
        let options: Vec<&str> = SYSBENCH.iter().copied().chain(["--time=10", "run"]).collect();
        sysbench("/usr/share/sysbench/oltp_write_only.lua", port, &options)
    });
    std::thread::sleep(Duration::from_secs(2));
    // 1 row of 8,000 bytes doubled 11 times: 2,048 rows, about 16 MB of row events.
    let mut big = format!(
        "CREATE TABLE {table} (id INTEGER NOT NULL AUTO_INCREMENT, pad VARCHAR(8000) NOT NULL, PRIMARY KEY (id));
         BEGIN; INSERT INTO {table} (pad) VALUES (REPEAT('x', 8000));"
    );
    for _ in 0..11 {
        big.push_str(&format!("INSERT INTO {table} (pad) SELECT pad FROM {table};"));
    }
    big.push_str("COMMIT;");
    server.query(Some("big"), &big);
    assert_eq!(server.query(Some("big"), &format!("SELECT COUNT(*) FROM {table}")), "2048\n");
    load.join().expect("sysbench thread")
}

#[test]
fn large_transaction_promoted_with_on_copied_with_off() {
    let mut server = ServerProcess::start();
    server.query(None, "CREATE DATABASE sbtest; CREATE DATABASE big");
    let options: Vec<&str> = SYSBENCH.iter().copied().chain(["prepare"]).collect();
    sysbench("/usr/share/sysbench/oltp_write_only.lua", server.port, &options);
    server.query(
        None,
        "SET GLOBAL binlog_large_transaction_optimization_enabled = ON;
         SET GLOBAL binlog_large_transaction_optimization_threshold = 10485760",
    );
    assert_eq!(
        server.query(None, "SELECT @@binlog_large_transaction_optimization_enabled, @@binlog_large_transaction_optimization_threshold"),
        "1\t10485760\n"
    );
    assert!(server.error(None, "SET GLOBAL binlog_large_transaction_optimization_threshold = 1024").contains("ERROR 1231"));

    // ON: promoted into a file of its own.
    let files_before = binary_logs(&server).len();
    assert_eq!(promotions(&server), 0);
    let report = big_commit_under_load(&server, "with_promotion");
    assert!(report.transactions() > 0 && report.ignored_errors() == 0, "{}", report.stdout);
    assert_eq!(promotions(&server), 1);
    let files = binary_logs(&server);
    assert_eq!(files.len(), files_before + 2, "the promoted file and a new active file: {files:?}");
    let promoted = promoted_files(&server);
    assert_eq!(promoted.len(), 1, "{files:?}");
    let size = files.iter().find(|(name, _)| *name == promoted[0]).unwrap().1;
    assert!(size > 16_000_000, "{promoted:?}: {size} bytes");
    // Its one transaction: Gtid, BEGIN, then row events up to one Xid.
    let events = server.query(None, &format!("SHOW BINLOG EVENTS IN '{}' LIMIT 3, 2", promoted[0]));
    assert!(events.contains("\tGtid\t") && events.contains("\tBEGIN\n"), "{events}");

    // OFF: copied into the active file like any transaction.
    server.query(None, "SET GLOBAL binlog_large_transaction_optimization_enabled = OFF");
    let files_before = binary_logs(&server).len();
    let report = big_commit_under_load(&server, "without_promotion");
    assert!(report.transactions() > 0 && report.ignored_errors() == 0, "{}", report.stdout);
    assert_eq!(promotions(&server), 1);
    assert_eq!(binary_logs(&server).len(), files_before, "no new file with OFF");
    assert_eq!(promoted_files(&server), promoted);
    let active = binary_logs(&server).last().unwrap().clone();
    assert!(active.1 > 16_000_000, "the copy is in the active file: {active:?}");

    assert!(server.stop().success());
    for file in server.binlog_files() {
        inspect(&["--verify"], &file);
    }
}
