//! INFORMATION_SCHEMA.TABLES, SHOW TABLE STATUS and the PARTITIONS row of
//! a table report its rows and bytes as InnoDB reports its pages: the
//! engine's estimate of what it holds, rows with their versions as
//! DATA_LENGTH, secondary index entries as INDEX_LENGTH, so a DBA (or
//! `bench side-by-side`) compares a table's footprint with MariaDB's.

mod support;

use std::time::{Duration, Instant};

use support::ServerProcess;

/// TABLE_ROWS, AVG_ROW_LENGTH, DATA_LENGTH and INDEX_LENGTH of d.t.
fn sizes(server: &ServerProcess) -> [u64; 4] {
    let line = server.query(None, "SELECT TABLE_ROWS, AVG_ROW_LENGTH, DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't'");
    let numbers: Vec<u64> = line.split_whitespace().map(|field| field.parse().unwrap()).collect();
    numbers.try_into().unwrap()
}

#[test]
fn table_sizes_follow_the_rows_and_indexes() {
    let server = ServerProcess::start();
    server.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, k INT, c CHAR(120), KEY k (k))");
    assert_eq!(sizes(&server), [0, 0, 0, 0]);
    let rows: Vec<String> = (1..=200).map(|id| format!("({id}, {}, REPEAT('x', 120))", id % 7)).collect();
    server.query(None, &format!("INSERT INTO d.t VALUES {}", rows.join(", ")));
    let [rows, average, data, index] = sizes(&server);
    assert_eq!(rows, 200);
    // Each row holds at least its 120-byte CHAR value, and each index entry its key.
    assert!(data >= 200 * 120 && index > 0, "{data} {index}");
    assert_eq!(average, data / rows);

    // SHOW TABLE STATUS and the table's PARTITIONS row say the same.
    let status = server.query(Some("d"), "SHOW TABLE STATUS LIKE 't'");
    let fields: Vec<&str> = status.trim_end().split('\t').collect();
    assert_eq!(
        (fields[4], fields[5], fields[6], fields[8]),
        (&*rows.to_string(), &*average.to_string(), &*data.to_string(), &*index.to_string())
    );
    assert_eq!(
        server.query(None, "SELECT TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH FROM information_schema.PARTITIONS WHERE TABLE_NAME = 't'"),
        format!("{rows}\t{data}\t{index}\n")
    );

    // Without the index its bytes are gone; without the rows, all of them.
    server.query(None, "DROP INDEX k ON d.t");
    assert_eq!(sizes(&server), [200, average, data, 0]);
    server.query(None, "DELETE FROM d.t WHERE id > 100");
    // A deleted row stays, marked, until purge removes it (once no read
    // view can see it, as later commits go); then its bytes are gone.
    server.query(None, "CREATE TABLE d.later (id INT AUTO_INCREMENT PRIMARY KEY, at CHAR(2) DEFAULT 'x')");
    // `VALUES ()` is a row of defaults, as in MySQL.
    server.query(None, "INSERT INTO d.later VALUES (), ()");
    assert_eq!(server.query(None, "SELECT id, at FROM d.later"), "1\tx\n2\tx\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    let purged = loop {
        let [rows_now, _, data_now, _] = sizes(&server);
        assert!((100..=200).contains(&rows_now), "{rows_now}");
        if rows_now == 100 {
            break data_now;
        }
        assert!(Instant::now() < deadline, "purge left {rows_now} rows");
        server.query(None, "INSERT INTO d.later VALUES ()");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(purged < data, "{purged} {data}");
    server.query(None, "TRUNCATE TABLE d.t");
    assert_eq!(sizes(&server), [0, 0, 0, 0]);
}
