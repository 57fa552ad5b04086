//! The files the `inspect` tests build are real binlogs: MariaDB's own
//! reader, `mariadb-binlog --verbose` (Debian package mariadb-client,
//! installed by `.ci/run`), decodes them with exit status 0.

mod inspect_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use inspect_support::*;

const MARIADB_BINLOG: &str = "mariadb-binlog";

fn mariadb_binlog() -> PathBuf {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join(MARIADB_BINLOG)).find(|path| path.is_file()));
    found.unwrap_or_else(|| {
        panic!(
            "{MARIADB_BINLOG} not found on PATH: install the Debian package mariadb-client \
             (`apt-get install -y mariadb-client`; .ci/run does it)"
        )
    })
}

fn decode_with_mariadb_binlog(path: &Path) -> String {
    let output = Command::new(mariadb_binlog()).arg("--verbose").arg(path).output().expect("run mariadb-binlog");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let errors = String::from_utf8_lossy(&output.stderr).into_owned();
    // mariadb-binlog reports an event it cannot read as "ERROR: ..." on
    // stderr and still exits 0.
    assert!(
        output.status.success() && !errors.contains("ERROR"),
        "mariadb-binlog --verbose {} failed with {:?}\nstderr:\n{errors}\nstdout:\n{text}",
        path.display(),
        output.status
    );
    text
}

#[test]
fn mariadb_binlog_decodes_the_generated_files() {
    let dir = tempfile::tempdir().unwrap();
    for checksum in [true, false] {
        let sample = sample(checksum);
        let path = sample.builder.write(dir.path(), if checksum { "binlog.000001" } else { "binlog.000002" });
        let text = decode_with_mariadb_binlog(&path);
        for expected in [
            "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))",
            "### INSERT INTO `shop`.`items`",
            "### UPDATE `shop`.`items`",
            "### DELETE FROM `shop`.`items`",
            "Xid = 101",
            "Xid = 102",
            "Rotate to binlog.000002  pos: 4",
        ] {
            assert!(text.contains(expected), "mariadb-binlog output lacks {expected:?}:\n{text}");
        }
        let ours = inspect(&[], &[&path]);
        assert_succeeded(&ours, "binlogd inspect");
        // Both readers see the same row values, in the same order.
        let values = row_values_of_binlogd(&stdout(&ours));
        assert_eq!(values.len(), 5 * 6, "five row images (two inserts, an update, a delete) of six columns");
        assert_eq!(values, row_values_of_mariadb_binlog(&text));
        // Both readers agree on where every event starts.
        for &(offset, _) in &sample.builder.events {
            let at = format!("# at {offset}\n");
            assert!(text.contains(&at), "mariadb-binlog has no {at:?}:\n{text}");
            assert!(stdout(&ours).contains(&at), "binlogd has no {at:?}");
        }
    }
}

/// `###   name=value /* TYPE ... */` lines of binlogd, as values.
fn row_values_of_binlogd(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("###   "))
        .map(|assignment| {
            let value = assignment.split_once('=').expect("name=value").1;
            let value = value.rsplit_once(" /* ").expect("type comment").0;
            value.replace("\\'", "'")
        })
        .collect()
}

/// `###   @N=value` lines of mariadb-binlog, as values. It shows an
/// UNSIGNED value above the signed range as `signed (unsigned)`: without
/// reading the SIGNEDNESS metadata it cannot know which one is meant.
fn row_values_of_mariadb_binlog(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("###   @"))
        .map(|assignment| {
            let value = assignment.split_once('=').expect("@N=value").1;
            match value.split_once(" (") {
                Some((signed, unsigned)) if signed.parse::<i64>().is_ok() => unsigned.trim_end_matches(')').to_string(),
                _ => value.to_string(),
            }
        })
        .collect()
}

#[test]
fn mariadb_binlog_agrees_on_a_mariadb_style_file() {
    let dir = tempfile::tempdir().unwrap();
    let builder = mariadb_sample();
    let path = builder.write(dir.path(), "mariadb-bin.000001");
    let text = decode_with_mariadb_binlog(&path);
    let ours = inspect(&[], &[&path]);
    assert_succeeded(&ours, "binlogd inspect");
    let ours = stdout(&ours);
    for expected in [
        "\tGtid list [0-7-4]\n",
        "\tBinlog checkpoint mariadb-bin.000001\n",
        "\tGTID 0-7-5 ddl\n",
        "\tGTID 0-7-6 trans\n",
        "#Q> INSERT INTO items VALUES (1, 'apple')\n",
        "\tXid = 77\n",
    ] {
        assert!(text.contains(expected), "mariadb-binlog output lacks {expected:?}:\n{text}");
        assert!(ours.contains(expected), "binlogd output lacks {expected:?}:\n{ours}");
    }
    assert_eq!(row_values_of_binlogd(&ours), row_values_of_mariadb_binlog(&text));
    for &(offset, _) in &builder.events {
        let at = format!("# at {offset}\n");
        assert!(text.contains(&at) && ours.contains(&at), "{at:?} missing from one of the outputs");
    }
}

/// A file a real MariaDB 10.11 wrote (the format crate's fixture: DDL, row
/// events v1, a group commit, a MyISAM insert): `binlogd inspect` decodes
/// every event (GTIDs with their commit id, the rows of every row event
/// v1) where mariadb-binlog does, and `--verify` finds its 10 transactions
/// well formed.
#[test]
fn binlogd_inspect_reads_a_file_a_real_mariadb_wrote() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../format/tests/data/mariadb-10.11-bin.000001");
    let text = decode_with_mariadb_binlog(&path);
    let ours = inspect(&["--verify"], &[&path]);
    assert_succeeded(&ours, "binlogd inspect --verify");
    assert!(stderr(&ours).contains("10 transactions, 0 problems"), "{}", stderr(&ours));
    let ours = stdout(&ours);
    for expected in
        ["\tGTID 0-1-1 ddl\n", "\tGTID 0-1-5 trans cid=26\n", "\tGTID 0-1-6 trans cid=26\n", "\tBinlog checkpoint mariadb-bin.000001\n"]
    {
        assert!(ours.contains(expected), "binlogd output lacks {expected:?}:\n{ours}");
    }
    for statement in ["### INSERT INTO ", "### UPDATE ", "### DELETE FROM "] {
        let count = |output: &str| output.lines().filter(|line| line.starts_with(statement)).count();
        assert!(count(&text) > 0, "{statement}");
        assert_eq!(count(&ours), count(&text), "{statement} rows");
    }
    for line in text.lines().filter(|line| line.starts_with("# at ")) {
        assert!(ours.contains(&format!("{line}\n")), "binlogd has no {line:?}");
    }
}
