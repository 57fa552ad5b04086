//! `binlogd inspect` on compressed transactions: MySQL's
//! Transaction_payload (zstd, and stored uncompressed) shows its inner
//! events and their rows and `--verify` checks the transaction inside;
//! MariaDB's compressed Query and rows events (a file a real MariaDB 10.11
//! wrote with `log_bin_compress=ON`) show the rows mariadb-binlog shows.

mod inspect_support;

use std::path::Path;
use std::process::Command;

use binlog_format::events::{QueryEvent, XidEvent};
use binlog_format::{Event, GtidSet, RowsEvent};
use inspect_support::*;

fn payload_file(dir: &Path, corrupt_inner: bool) -> std::path::PathBuf {
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    let table = items_table();
    let rows = [item(1, "apple", "1.50", None, 4), item(2, "pear", "-0.25", Some("ripe"), 7)];
    let insert = RowsEvent::write(TABLE_ID, &table, &rows).unwrap();
    let begin = Event::Query(QueryEvent::new(11, "shop", "BEGIN"));
    let mut events = vec![begin.clone(), Event::TableMap(table.clone()), Event::WriteRows(insert), Event::Xid(XidEvent { xid: 5 })];
    builder.append_compressed_transaction(1, &events, Some(3));
    let delete = RowsEvent::delete(TABLE_ID, &table, &rows[..1]).unwrap();
    events = vec![begin, Event::TableMap(table), Event::DeleteRows(delete)];
    if !corrupt_inner {
        events.push(Event::Xid(XidEvent { xid: 6 }));
    }
    builder.append_compressed_transaction(2, &events, None);
    builder.write(dir, "binlog.000001")
}

#[test]
fn inspect_shows_the_events_and_rows_inside_transaction_payloads_and_verifies_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = payload_file(dir.path(), false);
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "binlogd inspect --verify");
    assert!(stderr(&output).contains("2 transactions, 0 problems"), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("\tTransaction_Payload\tpayload_size="), "{text}");
    assert!(text.contains("compression_type=ZSTD"), "{text}");
    assert!(text.contains("compression_type=NONE"), "{text}");
    assert_eq!(text.matches("# Start of compressed events!").count(), 2, "{text}");
    for expected in
        ["### INSERT INTO `shop`.`items`", "###   name='apple'", "###   name='pear'", "### DELETE FROM `shop`.`items`", "\tXid = 5\n"]
    {
        assert!(text.contains(expected), "inspect lacks {expected:?}:\n{text}");
    }
    let json = stdout(&inspect(&["--json"], &[&path]));
    let lines: Vec<serde_json::Value> = json.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let payloads: Vec<_> = lines.iter().filter(|line| line["type_code"] == 40).collect();
    assert_eq!(payloads.len(), 2);
    assert_eq!(payloads[0]["data"]["compression_type"], "ZSTD");
    assert!(lines.iter().any(|line| line["type_code"] == 30 && line["position"] == payloads[0]["position"]), "{json}");
}

#[test]
fn verify_finds_a_payload_whose_transaction_does_not_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = payload_file(dir.path(), true);
    let output = inspect(&["--verify"], &[&path]);
    assert_failed_cleanly(&output, "binlogd inspect --verify");
    assert!(stderr(&output).contains("Transaction_payload: the payload ends with Delete_rows, not Xid or COMMIT"), "{}", stderr(&output));
}

/// `###` row lines of a mysqlbinlog-style text.
fn row_statements(text: &str) -> Vec<&str> {
    text.lines().filter(|line| line.starts_with("### INSERT") || line.starts_with("### UPDATE") || line.starts_with("### DELETE")).collect()
}

#[test]
fn inspect_shows_the_rows_of_mariadb_compressed_events_as_mariadb_binlog_does() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../format/tests/data/mariadb-10.11-compressed.000002");
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "binlogd inspect --verify");
    assert!(stderr(&output).contains("7 transactions, 0 problems"), "{}", stderr(&output));
    let ours = stdout(&output);
    let theirs = Command::new("mariadb-binlog").arg("--verbose").arg(&path).output().expect("run mariadb-binlog");
    let theirs = String::from_utf8_lossy(&theirs.stdout).into_owned();
    assert_eq!(row_statements(&ours).len(), 7, "{ours}");
    assert_eq!(row_statements(&ours), row_statements(&theirs));
    assert!(ours.contains("REPEAT('q',80)"), "the compressed statement shows:\n{ours}");
    for line in theirs.lines().filter(|line| line.starts_with("# at ")) {
        assert!(ours.contains(&format!("{line}\n")), "binlogd has no {line:?}");
    }
}
