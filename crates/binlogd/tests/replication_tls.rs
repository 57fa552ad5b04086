//! A MariaDB 10.11 replica reads binlogd's log over TLS: `MASTER_SSL=1`
//! with binlogd's generated CA and server-name verification, as an account
//! that `REQUIRE SSL` (so a plain connection would be refused), and
//! `Master_SSL_Allowed` says so.

mod support;

use std::time::{Duration, Instant};

use support::mariadb::MariaDb;
use support::Binlogd;

#[test]
fn a_mariadb_replica_with_master_ssl_replicates_over_tls() {
    let source = Binlogd::start(&[]);
    // MariaDB's replication client has no caching_sha2_password plugin.
    source.query(
        "CREATE USER 'repl'@'%' IDENTIFIED WITH mysql_native_password BY 'repl-pw' REQUIRE SSL;
         GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';
         CREATE DATABASE shop; CREATE TABLE shop.items (id INT NOT NULL, name VARCHAR(20), PRIMARY KEY (id));",
    );
    let replica = MariaDb::start(&["--server-id=2", "--skip-log-bin"]);
    replica.query(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl', MASTER_PASSWORD='repl-pw',
             MASTER_SSL=1, MASTER_SSL_CA='{}', MASTER_SSL_VERIFY_SERVER_CERT=1,
             MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4;
         START SLAVE;",
        source.port,
        source.datadir.join("ca.pem").display()
    ));
    source.query("INSERT INTO shop.items VALUES (1, 'one'), (2, 'two'); UPDATE shop.items SET name = 'TWO' WHERE id = 2");

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = replica.mariadb("SELECT id, name FROM shop.items ORDER BY id");
        if String::from_utf8_lossy(&rows.stdout) == "1\tone\n2\tTWO\n" {
            break;
        }
        let io_error = replica.status("Last_IO_Error");
        let sql_error = replica.status("Last_SQL_Error");
        assert!(Instant::now() < deadline, "not replicated; IO error: {io_error}; SQL error: {sql_error}\n{}", replica.error_log());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(replica.status("Master_SSL_Allowed"), "Yes");
    assert_eq!(replica.status("Last_IO_Error"), "");
}
