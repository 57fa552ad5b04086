//! A real MariaDB 10.11 server replicates from binlogd: started by the test
//! on loopback, `CHANGE MASTER TO ... MASTER_USE_GTID=no` at
//! binlog.000001:4, then sysbench oltp_write_only (prepare + 30 s run), a
//! promoted large transaction and DDL on binlogd. Afterwards every table
//! has the same rows on both servers (ordered row checksums) and SHOW SLAVE
//! STATUS shows no error; once with classic binlog files, once with
//! `binlog_storage_engine = engine`. `.ci/run` installs mariadb-server and
//! sysbench.
//!
//! What MariaDB needs of our stream: it ignores MySQL's Gtid and
//! Previous_gtids events (types 33/35, it has its own 162/163) but must
//! accept our FDE (server version 8.4, its post-header lengths table),
//! Table_map optional metadata, rows events v2, the Query status
//! variables and collation 45 (utf8mb4_general_ci).

mod support;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use support::mariadb::MariaDb;
use support::{Binlogd, DDL_WORKLOAD};

fn sysbench(port: u16, args: &[&str]) -> String {
    let output = Command::new("sysbench")
        .arg("oltp_write_only")
        .args([
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            "--mysql-user=root",
            "--tables=2",
            "--table-size=500",
            "--threads=4",
        ])
        .args(args)
        .output()
        .expect("run sysbench (apt-get install sysbench)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success() && !stdout.contains("FATAL"),
        "sysbench {args:?}:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Row count and a hash of the rows in primary-key order, as the text
/// protocol prints them.
fn table_checksum(rows: &str) -> (usize, u64) {
    let mut hasher = DefaultHasher::new();
    rows.hash(&mut hasher);
    (rows.lines().count(), hasher.finish())
}

#[test]
fn mariadb_replica_replicates_sysbench_large_transaction_and_ddl() {
    replicates_sysbench_large_transaction_and_ddl(&[]);
}

/// The same with `binlog_storage_engine = engine`: the files the replica
/// reads are written behind the redo log.
#[test]
fn mariadb_replica_replicates_an_engine_mode_binlog() {
    replicates_sysbench_large_transaction_and_ddl(&["--binlog-storage-engine=engine"]);
}

fn replicates_sysbench_large_transaction_and_ddl(source_args: &[&str]) {
    let source = Binlogd::start(source_args);
    let replica = MariaDb::start(&["--server-id=2", "--skip-log-bin"]);
    replica.query(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', MASTER_PASSWORD='',
             MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4, MASTER_HEARTBEAT_PERIOD=1;
         START SLAVE;",
        source.port
    ));

    source.query("CREATE DATABASE sbtest");
    sysbench(source.port, &["prepare"]);
    let report = sysbench(source.port, &["--time=30", "run"]);
    assert!(report.contains("transactions:"), "{report}");

    // A promoted large transaction (past the 10 MiB minimum threshold).
    source.query(
        "SET GLOBAL binlog_large_transaction_optimization_threshold = 10485760;
         CREATE DATABASE extra; CREATE TABLE extra.big (id INT NOT NULL, note LONGTEXT, PRIMARY KEY (id));",
    );
    let mut large = String::from("BEGIN;");
    for id in 1..=24u8 {
        let letter = char::from(b'A' + id);
        large.push_str(&format!("INSERT INTO extra.big VALUES ({id}, REPEAT('{letter}', 500000));"));
    }
    large.push_str("COMMIT;");
    source.query(&large);
    assert_eq!(
        source.query("SHOW GLOBAL STATUS LIKE 'binlog_large_transaction_optimization_count'").trim(),
        "binlog_large_transaction_optimization_count\t1"
    );

    // DDL: tables and indexes come and go, and a rotation.
    source.query(DDL_WORKLOAD);

    replica.wait_caught_up(&source);

    let mut tables = Vec::new();
    for database in ["sbtest", "extra"] {
        for table in source.query(&format!("SHOW TABLES FROM {database}")).lines() {
            tables.push(format!("{database}.{table}"));
        }
    }
    assert_eq!(tables, ["sbtest.sbtest1", "sbtest.sbtest2", "extra.big", "extra.kv"]);
    assert_eq!(replica.query("SHOW TABLES FROM extra"), "big\nkv\n");
    for table in &tables {
        let sql = format!("SELECT * FROM {table} ORDER BY id");
        let ours = table_checksum(&source.query(&sql));
        let theirs = table_checksum(&replica.query(&sql));
        assert!(ours.0 > 0, "{table} is empty");
        assert_eq!(ours, theirs, "{table}: (rows, checksum) differ between binlogd and the MariaDB replica");
    }

    let status = replica.slave_status();
    let field = |name: &str| status.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str()).unwrap_or("?");
    assert_eq!((field("Slave_IO_Running"), field("Slave_SQL_Running")), ("Yes", "Yes"));
    assert_eq!((field("Last_Errno"), field("Last_IO_Errno"), field("Last_SQL_Errno")), ("0", "0", "0"));
    assert_eq!(field("Last_Error"), "");
    let _: (&Path, PathBuf) = (replica.dir.path(), source.binlog_dir());
    replica.query("STOP SLAVE");
}
