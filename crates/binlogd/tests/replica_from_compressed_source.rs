//! A real MariaDB 10.11 source writing compressed events
//! (`--log-bin-compress=ON`: Query_compressed and compressed rows events
//! v1) and a binlogd replica by file and position: the replica decompresses
//! them and every table ends with the same rows on both servers.

mod support;

use std::time::{Duration, Instant};

use support::mariadb::MariaDb;
use support::replica::replica_status;
use support::ServerProcess;

const REPL_PASSWORD: &str = "repl-pw";

fn master_status(source: &MariaDb) -> (String, String) {
    let status = source.query("SHOW MASTER STATUS");
    let mut fields = status.split('\t');
    (fields.next().unwrap().to_string(), fields.next().unwrap().to_string())
}

#[test]
fn a_mariadb_source_writing_compressed_events_replicates_into_binlogd() {
    let source = MariaDb::start(&[
        "--server-id=1",
        "--log-bin=mariadb-bin",
        "--binlog-format=ROW",
        "--log-bin-compress=ON",
        "--log-bin-compress-min-len=10",
    ]);
    source.query(&format!(
        "CREATE USER 'repl'@'localhost' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'localhost'"
    ));
    let (file, position) = master_status(&source);
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
    source.query(
        "CREATE DATABASE packed;
         CREATE TABLE packed.notes (id INT NOT NULL, title VARCHAR(40), body TEXT, amount DECIMAL(10,2), PRIMARY KEY (id));
         INSERT INTO packed.notes VALUES (1, 'alpha', REPEAT('compressible text ', 40), 1.50), (2, 'beta', REPEAT('more ', 60), -2.25), (3, 'gamma', NULL, 0);
         UPDATE packed.notes SET title = 'delta', amount = amount * 2 WHERE id = 2;
         DELETE FROM packed.notes WHERE id = 3;
         BEGIN; INSERT INTO packed.notes VALUES (4, 'epsilon', 'x', 4); UPDATE packed.notes SET body = REPEAT('z', 300) WHERE id = 1; COMMIT;",
    );
    let (end_file, end_position) = master_status(&source);
    let deadline = Instant::now() + Duration::from_secs(60);
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
    let sql = "SELECT * FROM packed.notes ORDER BY id";
    let theirs = source.query(sql);
    assert_eq!(theirs.lines().count(), 3, "{theirs}");
    assert_eq!(replica.query(None, sql), theirs);
    // The source did write compressed events.
    let events = source.query(&format!("SHOW BINLOG EVENTS IN '{end_file}'"));
    assert!(events.contains("Write_rows_compressed_v1") && events.contains("Query_compressed"), "{events}");
}
