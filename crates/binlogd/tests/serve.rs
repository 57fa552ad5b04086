//! `binlogd serve` driven by real clients: the `mariadb` command-line client
//! (a scripted session with expected output) and sysbench (prepare, run in
//! both prepared-statement modes, cleanup, zero failures), then `binlogd
//! inspect` of the binlog shows the row events. `.ci/run` installs both.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{ServerProcess, BINLOGD};

fn binlog_files(datadir: &Path) -> Vec<PathBuf> {
    let index = std::fs::read_to_string(datadir.join("binlog/binlog.index")).unwrap();
    index.lines().map(|line| datadir.join("binlog").join(Path::new(line.trim()).file_name().unwrap())).collect()
}

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
    assert!(server.error(Some("shop"), "LOCK TABLES items WRITE").contains("ERROR 1235"));
    assert!(server.error(None, "USE nowhere").contains("ERROR 1049"));
    // A failed statement in autocommit changes nothing.
    assert!(server.error(Some("shop"), "INSERT INTO items (k, c) VALUES (1, 'a'), (2, 'this is far too long for c')").contains("ERROR 1406"));
    assert_eq!(server.query(Some("shop"), "SELECT COUNT(*) FROM items"), "3\n");
    server.query(None, "DROP DATABASE shop");
    assert!(server.stop().success());
}

fn sysbench(port: u16, args: &[&str]) -> String {
    let output = Command::new("sysbench")
        .arg("oltp_read_write")
        .args([
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            "--mysql-user=root",
            "--tables=2",
            "--table-size=1000",
            "--threads=4",
            "--time=10",
        ])
        .args(args)
        .output()
        .expect("run sysbench (apt-get install sysbench)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "sysbench {args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(!stdout.contains("FATAL"), "sysbench {args:?}:\n{stdout}");
    stdout
}

/// `transactions: N` from sysbench's report.
fn transactions(report: &str) -> u64 {
    let line = report.lines().find(|line| line.trim_start().starts_with("transactions:")).expect("a transactions line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn sysbench_oltp_read_write_both_ps_modes_then_inspect() {
    let mut server = ServerProcess::start();
    server.query(None, "CREATE DATABASE sbtest");
    sysbench(server.port, &["prepare"]);
    for mode in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
        let report = sysbench(server.port, &[mode, "run"]);
        assert!(transactions(&report) > 0, "{mode}: no transactions\n{report}");
    }
    assert_eq!(server.query(Some("sbtest"), "SELECT COUNT(*) FROM sbtest1"), "1000\n");
    sysbench(server.port, &["cleanup"]);
    assert_eq!(server.query(Some("sbtest"), "SHOW TABLES"), "");
    assert!(server.stop().success());

    let mut kinds = std::collections::BTreeMap::<&str, usize>::new();
    for file in binlog_files(&server.datadir) {
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
