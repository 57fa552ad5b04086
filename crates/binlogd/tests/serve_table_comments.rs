//! Table COMMENTs as MySQL keeps them: SHOW CREATE TABLE ends the table
//! options with it (before PARTITION BY), INFORMATION_SCHEMA.TABLES and
//! SHOW TABLE STATUS show it (where CDC connectors and schema tools read
//! it), ALTER TABLE changes or clears it, CREATE TABLE ... LIKE copies it,
//! it survives a crash (redo) and a clean restart (checkpoint), the binlog
//! carries it in the statement's text, and one longer than MySQL's 2,048
//! characters is refused with MySQL's error (cut with a warning outside
//! strict mode).

mod support;

use support::ServerProcess;

const COMMENTS: &str = "SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' ORDER BY TABLE_NAME";

const OPTIONS: &str = ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci";

/// SHOW TABLE STATUS's last column, Comment, for the table `name` in `d`.
fn status_comment(server: &ServerProcess, name: &str) -> String {
    let status = server.query(None, &format!("SHOW TABLE STATUS FROM d LIKE '{name}'"));
    status.trim_end_matches('\n').rsplit('\t').next().unwrap().to_string()
}

#[test]
fn table_comments_are_kept_shown_altered_and_copied() {
    let mut server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY) ENGINE=InnoDB COMMENT='it''s «orders»'; \
         CREATE TABLE d.plain (id INT); CREATE TABLE d.parts (id INT) COMMENT 'split' PARTITION BY HASH (id) PARTITIONS 2",
    );
    let expected = "parts\tsplit\nplain\t\nt\tit's «orders»\n";
    assert_eq!(server.query(None, COMMENTS), expected);

    let create = server.query(None, "SHOW CREATE TABLE d.t");
    assert!(create.ends_with(&format!("{OPTIONS} COMMENT='it''s «orders»'\n")), "{create}");
    let plain = server.query(None, "SHOW CREATE TABLE d.plain");
    assert!(plain.ends_with(&format!("{OPTIONS}\n")), "{plain}");
    let parts = server.query(None, "SHOW CREATE TABLE d.parts");
    assert!(parts.contains(&format!("{OPTIONS} COMMENT='split'\\n/*!50100 PARTITION BY HASH")), "{parts}");
    assert_eq!(status_comment(&server, "t"), "it's «orders»");
    assert_eq!(status_comment(&server, "plain"), "");

    // The binlog's Query event is the statement as the client sent it.
    let events = server.query(None, "SHOW BINLOG EVENTS");
    assert!(events.contains("ENGINE=InnoDB COMMENT='it''s «orders»'"), "{events}");

    // From the redo log after a crash.
    server.kill();
    server.start_again(&[]);
    assert_eq!(server.query(None, COMMENTS), expected);

    server.query(
        None,
        "ALTER TABLE d.t COMMENT = 'now said'; ALTER TABLE d.parts COMMENT=''; \
         ALTER TABLE d.plain ENGINE=InnoDB COMMENT 'given later' DEFAULT CHARSET=utf8mb4; CREATE TABLE d.u LIKE d.t",
    );
    let altered = "parts\t\nplain\tgiven later\nt\tnow said\nu\tnow said\n";
    assert_eq!(server.query(None, COMMENTS), altered);
    let parts = server.query(None, "SHOW CREATE TABLE d.parts");
    assert!(parts.contains(&format!("{OPTIONS}\\n/*!50100 PARTITION BY HASH")), "{parts}");

    // From a checkpoint after a clean restart.
    server.restart();
    assert_eq!(server.query(None, COMMENTS), altered);
    assert!(server.query(None, "SHOW CREATE TABLE d.u").ends_with(&format!("{OPTIONS} COMMENT='now said'\n")));
}

#[test]
fn a_comment_longer_than_mysqls_limit_is_refused_in_strict_mode_and_cut_otherwise() {
    let server = ServerProcess::start();
    server.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT)");
    let longest = "é".repeat(2048);
    let too_long = format!("{longest}x");

    let error = server.error(None, &format!("CREATE TABLE d.u (id INT) COMMENT '{too_long}'"));
    assert!(error.contains("ERROR 1628 (HY000)") && error.contains("Comment for table 'u' is too long (max = 2048)"), "{error}");
    let error = server.error(None, &format!("ALTER TABLE d.t COMMENT '{too_long}'"));
    assert!(error.contains("ERROR 1628 (HY000)") && error.contains("Comment for table 't' is too long (max = 2048)"), "{error}");
    server.query(None, &format!("CREATE TABLE d.u (id INT) COMMENT '{longest}'"));
    assert_eq!(status_comment(&server, "u"), longest);

    let warnings = server.query(None, &format!("SET sql_mode = ''; CREATE TABLE d.v (id INT) COMMENT '{too_long}'; SHOW WARNINGS"));
    assert_eq!(warnings, "Warning\t1628\tComment for table 'v' is too long (max = 2048)\n");
    assert_eq!(status_comment(&server, "v"), longest);
}

/// The replica's TABLE_COMMENT once `expected`, or a failure with what it
/// has after a minute.
fn wait_for_comments(replica: &ServerProcess, expected: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let comments = replica.query(None, COMMENTS);
        if comments == expected {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the replica has {comments:?}, not {expected:?}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_replica_sets_the_comment_from_the_statement_in_the_binlog() {
    let source = ServerProcess::start();
    source.query(None, "CREATE USER 'repl'@'%' IDENTIFIED BY 'repl-pw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'");
    let replica = ServerProcess::start_with(&["--server-id=2"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='repl-pw', \
             SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1; START REPLICA",
            source.port
        ),
    );
    source.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT) COMMENT = 'from the source'");
    wait_for_comments(&replica, "t\tfrom the source\n");
    source.query(None, "ALTER TABLE d.t COMMENT 'it''s changed'");
    wait_for_comments(&replica, "t\tit's changed\n");
}
