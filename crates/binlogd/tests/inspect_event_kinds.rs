//! `binlogd inspect` on the event kinds beyond transactions of rows v1/v2
//! (the files of `testkit::event_kinds`): the partition ids and NDB info of
//! rows events, Partial_update_rows with its JSON diffs as mysqlbinlog -v
//! prints them, XA_prepare (which `--verify` takes as a transaction's
//! end), View_change, Incident, Heartbeat v2, and MySQL 5.1's pre-GA rows
//! events. A malformed one is reported with file and offset.

mod inspect_support;

use std::path::PathBuf;

use binlog_format::{Event, GtidSet};
use inspect_support::*;
use testkit::event_kinds::{
    mysql_51_pre_ga_file, mysql_84_event_kinds_file, xa_prepare, HEARTBEAT_FILE, HEARTBEAT_POSITION, INCIDENT_MESSAGE, VIEW_ID,
    XA_ONE_PHASE_XID, XA_XID,
};
use testkit::BinlogBuilder;

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn every_event_kind_of_a_mysql_84_file_is_shown_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "binlog.000001", &mysql_84_event_kinds_file());
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "binlogd inspect --verify");
    // The partitioned rows, the partial update, the prepared XA
    // transaction, its XA COMMIT, the one-phase one, the View_change's.
    assert!(stderr(&output).contains("6 transactions, 0 problems"), "{}", stderr(&output));
    let text = stdout(&output);
    for expected in [
        "\tWrite_rows: table id 70 flags: STMT_END_F\n### Extra row info for partitioning: partition: 2\n### INSERT INTO `test`.`tp`",
        "\tUpdate_rows: table id 70 flags: STMT_END_F\n### Extra row info for partitioning: source_partition: 2 target_partition: 0\n",
        "### Extra row ndb info: data_format: 0, len: 2, data: 0xCAFE\n### Extra row info for partitioning: partition: 0\n",
        "\tUpdate_rows_partial: table id 71 flags: STMT_END_F\n### UPDATE `test`.`tj`\n### WHERE\n",
        concat!(
            "###   doc=JSON_REMOVE(\n",
            "###      JSON_ARRAY_INSERT(\n",
            "###      JSON_INSERT(\n",
            "###      JSON_REPLACE(doc, '$.a', 2),\n",
            "###      '$.b', '\"x\"',\n",
            "###      '$.o', CAST('{\"k\": [1]}' AS JSON)),\n",
            "###      '$.arr[1]', 5),\n",
            "###      '$.d') /* JSON meta=4 nullable=1 is_null=0 */\n",
        ),
        "###   note='\"n\"' /* JSON meta=4 nullable=1 is_null=0 */\n",
        &format!("\tXA PREPARE {XA_XID}\nXA PREPARE {XA_XID}\n/*!*/;\n"),
        &format!("\tXA PREPARE {XA_ONE_PHASE_XID}\nXA COMMIT {XA_ONE_PHASE_XID} ONE PHASE\n/*!*/;\n"),
        &format!("XA COMMIT {XA_XID}\n/*!*/;\n"),
        &format!("\tView_change_log_event: view_id={VIEW_ID}\n# seq_number=3 certification_info_entries=1\n"),
        &format!(" \n# Incident: LOST_EVENTS\nRELOAD DATABASE; # Shall generate syntax error\n# message: {INCIDENT_MESSAGE}\n"),
        &format!("\tHeartbeat_v2\tlog_file={HEARTBEAT_FILE}\tlog_pos={HEARTBEAT_POSITION}\n"),
    ] {
        assert!(text.contains(expected), "inspect lacks {expected:?}:\n{text}");
    }

    let json = stdout(&inspect(&["--json"], &[&path]));
    let lines: Vec<serde_json::Value> = json.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let of_type = |name: &str| lines.iter().filter(|line| line["type"] == name).collect::<Vec<_>>();
    let write_rows = of_type("Write_rows");
    assert_eq!(write_rows[0]["data"]["partition_id"], 2, "{}", write_rows[0]);
    let update = of_type("Update_rows")[0];
    assert_eq!((&update["data"]["partition_id"], &update["data"]["source_partition_id"]), (&0.into(), &2.into()), "{update}");
    let partial = of_type("Update_rows_partial")[0];
    let diffs = &partial["data"]["rows"][0]["after"]["doc"]["json_diffs"];
    assert_eq!(diffs[0], serde_json::json!({ "operation": "JSON_REPLACE", "path": "$.a", "value": "2" }), "{partial}");
    assert_eq!(diffs[4], serde_json::json!({ "operation": "JSON_REMOVE", "path": "$.d", "value": null }), "{partial}");
    assert_eq!(partial["data"]["rows"][1]["value_options"], 0, "{partial}");
    let prepares = of_type("XA_prepare");
    assert_eq!((&prepares[0]["data"]["xid"], &prepares[1]["data"]["one_phase"]), (&XA_XID.into(), &true.into()));
    assert_eq!(of_type("Incident")[0]["data"]["incident"], "LOST_EVENTS");
    assert_eq!(of_type("View_change")[0]["data"]["view_id"], VIEW_ID);
    assert_eq!(of_type("Heartbeat_v2")[0]["data"]["log_position"], HEARTBEAT_POSITION);
}

#[test]
fn verify_takes_xa_prepare_as_a_transaction_end_and_flags_a_stray_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    builder.ddl(1, "CREATE TABLE t (id INT)");
    let stray = builder.push(&Event::XaPrepare(xa_prepare()), 0);
    let path = write(&dir, "binlog.000001", &builder.bytes);
    let output = inspect(&["--verify"], &[&path]);
    assert_failed_cleanly(&output, "a stray XA_prepare");
    assert!(stderr(&output).contains(&format!("at offset {stray}: verify: XA_prepare outside a transaction")), "{}", stderr(&output));
}

#[test]
fn a_malformed_event_of_a_new_kind_is_reported_with_its_offset_and_reading_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    let mut body = Vec::new();
    xa_prepare().encode_body(&mut body);
    body[5..9].copy_from_slice(&65u32.to_le_bytes()); // gtrid length past MySQL's 64
    let bad = builder.push(&Event::Unknown { event_type: 38, body }, 0);
    builder.ddl(1, "CREATE TABLE t (id INT)");
    let path = write(&dir, "binlog.000001", &builder.bytes);
    let output = inspect(&[], &[&path]);
    assert_failed_cleanly(&output, "a malformed XA_prepare");
    let message = stderr(&output);
    assert!(message.contains(&format!("binlog.000001: at offset {bad}: cannot decode XA_prepare event")), "{message}");
    assert!(message.contains("gtrid length: 65 is above 64"), "{message}");
    assert!(stdout(&output).contains("CREATE TABLE t (id INT)"), "the events after it are shown");
}

#[test]
fn mysql_51_pre_ga_rows_events_show_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "mysql-bin.000001", &mysql_51_pre_ga_file(binlog_format::RowsVersion::V0));
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "binlogd inspect --verify");
    assert!(stderr(&output).contains("0 problems"), "{}", stderr(&output));
    let text = stdout(&output);
    for expected in [
        "\tWrite_rows_old: table id 20 flags: STMT_END_F\n### INSERT INTO `test`.`t51`\n### SET\n###   @1=1 ",
        "###   @2='one' ",
        "\tUpdate_rows_old: table id 20 flags: STMT_END_F\n### UPDATE `test`.`t51`\n### WHERE\n###   @1=2 ",
        "### SET\n###   @1=2 /* INT meta=0 nullable=0 is_null=0 */\n###   @2='two' ",
        "\tDelete_rows_old: table id 20 flags: STMT_END_F\n### DELETE FROM `test`.`t51`\n",
    ] {
        assert!(text.contains(expected), "inspect lacks {expected:?}:\n{text}");
    }
}
