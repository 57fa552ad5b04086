//! `binlogd inspect` on files whose checksum setting differs from
//! binlogd's own: a MariaDB file written with `binlog_checksum=NONE`, a
//! MySQL 5.5 file whose Format_description predates the algorithm byte,
//! and files of binlog versions 1 and 3, refused by their version.

mod inspect_support;

use std::path::Path;

use inspect_support::*;
use testkit::older_servers::{mysql_55_file, start_v3_file, MYSQL_55_VERSION};

#[test]
fn a_mariadb_file_written_with_checksum_none_is_shown_and_verified() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../format/tests/data/mariadb-10.11-checksum-none.000002");
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "binlogd inspect --verify");
    assert!(stderr(&output).contains("7 transactions, 0 problems"), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("# binlog_checksum=NONE (0)"), "{text}");
    assert!(!text.contains(" CRC32 0x"), "no event of the file shows a checksum, as in mariadb-binlog:\n{text}");
    assert_eq!(text.lines().filter(|line| line.starts_with("### INSERT INTO ")).count(), 4, "{text}");
    let json = stdout(&inspect(&["--json"], &[&path]));
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["data"]["checksum_alg"], "NONE", "{first}");
}

#[test]
fn a_mysql_55_file_without_an_algorithm_byte_shows_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mysql-bin.000001");
    std::fs::write(&path, mysql_55_file()).unwrap();
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "binlogd inspect --verify");
    // Without GTIDs there are no transaction openers to count.
    assert!(stderr(&output).contains("6 events, 0 transactions, 0 problems"), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains(&format!("server v {MYSQL_55_VERSION}")), "{text}");
    assert!(text.contains("# binlog_checksum=UNDEF (255)"), "{text}");
    for expected in ["### INSERT INTO `test`.`t55`", "###   @1=1", "###   @2='old'", "###   @1=2", "###   @2=NULL"] {
        assert!(text.contains(expected), "inspect lacks {expected:?}:\n{text}");
    }
    let json = stdout(&inspect(&["--json"], &[&path]));
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["data"]["checksum_alg"], "UNDEF", "{first}");
}

#[test]
fn files_of_binlog_versions_1_and_3_are_refused_by_their_version_at_offset_4() {
    let dir = tempfile::tempdir().unwrap();
    for version in [1u16, 3] {
        let path = dir.path().join(format!("v{version}-bin.001"));
        std::fs::write(&path, start_v3_file(version)).unwrap();
        let output = inspect(&[], &[&path]);
        assert_failed_cleanly(&output, "binlogd inspect on an old version");
        let message = stderr(&output);
        assert!(message.contains(&format!("unsupported binlog version {version}")), "{message}");
        assert!(message.contains("offset 4"), "{message}");
        assert!(!message.contains("checksum"), "{message}");
    }
}
