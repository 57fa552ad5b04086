//! RESET MASTER killed at each of its crash points in a real server
//! process (`BINLOGD_CRASH_POINT` aborts there): the next start finishes
//! the reset, so the log is `binlog.000001` alone, `gtid_executed` is
//! empty, the rows are all there and the next transaction is
//! `server_uuid:1`.

mod support;

use std::time::Duration;

use support::ServerProcess;

#[test]
fn reset_master_killed_at_each_step_is_finished_at_restart() {
    for point in ["database::reset::after_marker", "database::reset::after_redo_record", "database::reset::after_binlog_reset"] {
        let mut server = ServerProcess::start();
        server.query(
            None,
            "CREATE DATABASE shop; CREATE TABLE shop.items (id INT PRIMARY KEY, c VARCHAR(10));
             INSERT INTO shop.items VALUES (1, 'a'), (2, 'b'); FLUSH BINARY LOGS; INSERT INTO shop.items VALUES (3, 'c')",
        );
        let uuid = server.query(None, "SELECT @@server_uuid").trim().to_string();
        assert!(server.stop().success());

        server.start_again(&[("BINLOGD_CRASH_POINT", point)]);
        let output = server.mariadb(None, "RESET MASTER");
        assert!(!output.status.success(), "{point}: RESET MASTER should not complete");
        let status = server.wait_exit(Duration::from_secs(30));
        assert!(!status.success(), "{point}: the server should have aborted");

        server.start_again(&[]);
        assert_eq!(server.query(None, "SHOW BINARY LOGS"), "binlog.000001\t159\tNo\n", "{point}");
        assert_eq!(server.query(None, "SELECT @@gtid_executed, @@gtid_purged"), "\t\n", "{point}");
        assert_eq!(server.query(Some("shop"), "SELECT id FROM items ORDER BY id"), "1\n2\n3\n", "{point}");
        server.query(Some("shop"), "INSERT INTO items VALUES (4, 'd')");
        assert_eq!(server.query(None, "SELECT @@gtid_executed"), format!("{uuid}:1\n"), "{point}");
        let index = std::fs::read_to_string(server.datadir.join("binlog/binlog.index")).unwrap();
        assert_eq!(index, "./binlog.000001\n", "{point}");
        assert!(server.stop().success());
    }
}
