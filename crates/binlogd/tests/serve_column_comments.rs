//! Column COMMENTs as MySQL keeps them: SHOW CREATE TABLE ends a column's
//! line with it, SHOW FULL COLUMNS and INFORMATION_SCHEMA.COLUMNS show it
//! (where CDC connectors read it), ALTER TABLE changes it, it survives a
//! crash (redo) and a clean restart (checkpoint), and one longer than
//! MySQL's 1,024 characters is refused with MySQL's error.

mod support;

use support::ServerProcess;

const COMMENTS: &str =
    "SELECT COLUMN_NAME, COLUMN_COMMENT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION";

#[test]
fn column_comments_are_kept_shown_and_altered() {
    let mut server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY COMMENT 'the key', name VARCHAR(20) NOT NULL DEFAULT '' COMMENT 'it''s «name»', plain INT)",
    );
    let expected = "id\tthe key\nname\tit's «name»\nplain\t\n";
    assert_eq!(server.query(None, COMMENTS), expected);

    let create = server.query(None, "SHOW CREATE TABLE d.t");
    assert!(create.contains("`id` int NOT NULL COMMENT 'the key'"), "{create}");
    assert!(create.contains("DEFAULT '' COMMENT 'it''s «name»'"), "{create}");
    assert!(create.contains("`plain` int DEFAULT NULL,"), "{create}");
    let full: Vec<String> =
        server.query(None, "SHOW FULL COLUMNS FROM d.t").lines().map(|line| line.rsplit('\t').next().unwrap().to_string()).collect();
    assert_eq!(full, ["the key", "it's «name»", ""]);

    // From the redo log after a crash, then from a checkpoint.
    server.kill();
    server.start_again(&[]);
    assert_eq!(server.query(None, COMMENTS), expected);
    server.query(None, "ALTER TABLE d.t MODIFY plain INT COMMENT 'now said', MODIFY id INT");
    server.restart();
    assert_eq!(server.query(None, COMMENTS), "id\t\nname\tit's «name»\nplain\tnow said\n");

    let long = "é".repeat(1025);
    let error = server.error(None, &format!("CREATE TABLE d.u (c INT COMMENT '{long}')"));
    assert!(error.contains("ERROR 1629 (HY000)") && error.contains("Comment for field 'c' is too long (max = 1024)"), "{error}");
    server.query(None, &format!("CREATE TABLE d.u (c INT COMMENT '{}')", &long[2..]));
}
