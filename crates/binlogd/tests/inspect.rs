//! `binlogd inspect` on files built with the format crate: text and JSON
//! output, positions, `--verify`.

mod inspect_support;

use binlog_format::constants::LOG_EVENT_IGNORABLE_F;
use binlog_format::events::{QueryEvent, XidEvent};
use binlog_format::{Event, EventType, GtidSet, RowsEvent};
use inspect_support::*;
use serde_json::{json, Value};

/// The sample plus an event of a type nobody knows, flagged ignorable.
/// (MariaDB's reader rejects it: its type is beyond the FDE's list.)
fn sample_with_unknown() -> Sample {
    sample_with(true, &[(Event::Unknown { event_type: 200, body: vec![1, 2, 3] }, LOG_EVENT_IGNORABLE_F)])
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("bad JSON line {line:?}: {e}"))).collect()
}

#[test]
fn text_output_reads_like_mysqlbinlog() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample_with_unknown();
    let path = sample.builder.write(dir.path(), "binlog.000001");
    let output = inspect(&[], &[&path]);
    assert_succeeded(&output, "inspect");
    let text = stdout(&output);
    for (offset, _) in &sample.builder.events {
        assert!(text.contains(&format!("\n# at {offset}\n")), "no '# at {offset}' in:\n{text}");
    }
    let expected = [
        "#240523 10:16:02 server id 7  end_log_pos ",
        "\tStart: binlog v 4, server v 8.4.0-binlogd created 240523 10:16:02 at startup",
        "# binlog_checksum=CRC32 (1), in use=yes",
        "# Warning: this binlog is either in use or was not closed properly.",
        "\tPrevious-GTIDs\n# 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9\n",
        "\tGTID\tlast_committed=0\tsequence_number=1\trbr_only=yes\toriginal_committed_timestamp=1716459362123456\timmediate_commit_timestamp=1716459362123456\ttransaction_length=",
        "# immediate_commit_timestamp=1716459362123456 (2024-05-23 10:16:02.123456 UTC)",
        "SET @@SESSION.GTID_NEXT= '3e11fa47-71ca-11e1-9e33-c80aa9429562:10'/*!*/;",
        "SET @@SESSION.GTID_NEXT= '3e11fa47-71ca-11e1-9e33-c80aa9429562:12'/*!*/;",
        "\tQuery\tthread_id=11\texec_time=0\terror_code=0\nuse `shop`/*!*/;\nSET TIMESTAMP=1716459362/*!*/;",
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))\n/*!*/;",
        "BEGIN\n/*!*/;",
        "\tTable_map: `shop`.`items` mapped to number 89\n#   @1 `id` INT meta=0 nullable=0\n",
        "#   @6 `qty` INT UNSIGNED meta=0 nullable=1\n# Primary Key(id)\n",
        concat!(
            "\tWrite_rows: table id 89 flags: STMT_END_F\n",
            "### INSERT INTO `shop`.`items`\n",
            "### SET\n",
            "###   id=1 /* INT meta=0 nullable=0 is_null=0 */\n",
            "###   name='apple' /* VARSTRING(80) meta=80 nullable=1 is_null=0 */\n",
            "###   price=1.50 /* DECIMAL(10,2) meta=2562 nullable=1 is_null=0 */\n",
            "###   added='2024-05-23 10:16:02.123456' /* DATETIME(6) meta=6 nullable=1 is_null=0 */\n",
            "###   note=NULL /* BLOB meta=2 nullable=1 is_null=1 */\n",
            "###   qty=4000000000 /* INT UNSIGNED meta=0 nullable=1 is_null=0 */\n",
            "### INSERT INTO `shop`.`items`\n",
        ),
        "###   note='it\\'s ripe' /* BLOB meta=2 nullable=1 is_null=0 */\n",
        "\tUpdate_rows: table id 89 flags: STMT_END_F\n### UPDATE `shop`.`items`\n### WHERE\n###   id=1 ",
        "### SET\n###   id=1 /* INT meta=0 nullable=0 is_null=0 */\n###   name='apple' /* VARSTRING(80) meta=80 nullable=1 is_null=0 */\n###   price=1.75 ",
        "\tDelete_rows: table id 89 flags: STMT_END_F\n### DELETE FROM `shop`.`items`\n### WHERE\n###   id=2 ",
        "\tXid = 101\nCOMMIT/*!*/;",
        "\tXid = 102\nCOMMIT/*!*/;",
        "\tLarge_transaction_header\tversion=1\tterminating_event_offset=",
        "terminating_event_type=Xid (16)\tpadding=16",
        &format!("# terminating event: Xid found at offset {} (end_log_pos ", sample.xid_offset),
        "\tUnknown (event type 200, 3 body bytes, not decoded)\n# body: 010203\n",
        "\tRotate to binlog.000002  pos: 4\n",
        "# End of log file",
    ];
    for line in expected {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    // Every event shows its stored CRC32.
    assert_eq!(text.matches(" CRC32 0x").count(), sample.builder.events.len());
}

#[test]
fn transaction_length_in_the_output_matches_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(true);
    let path = sample.builder.write(dir.path(), "binlog.000001");
    let output = inspect(&["--json"], &[&path]);
    assert_succeeded(&output, "inspect --json");
    let lines = json_lines(&stdout(&output));
    let gtid = lines.iter().find(|l| l["data"]["gtid"] == format!("{SOURCE_UUID}:11")).expect("gtid 11");
    let start = gtid["position"].as_u64().unwrap();
    let xid = lines.iter().find(|l| l["data"]["xid"] == 101).expect("xid 101");
    let end = xid["end_log_pos"].as_u64().unwrap();
    assert_eq!(gtid["data"]["transaction_length"].as_u64().unwrap(), end - start);
}

#[test]
fn json_output_has_one_object_per_event() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample_with_unknown();
    let path = sample.builder.write(dir.path(), "binlog.000001");
    let output = inspect(&["--json"], &[&path]);
    assert_succeeded(&output, "inspect --json");
    let lines = json_lines(&stdout(&output));
    assert_eq!(lines.len(), sample.builder.events.len());
    let file = path.display().to_string();
    for (line, (offset, type_code)) in lines.iter().zip(&sample.builder.events) {
        for key in ["file", "position", "end_log_pos", "type", "type_code", "timestamp", "server_id", "flags", "data"] {
            assert!(line.get(key).is_some(), "no {key} in {line}");
        }
        assert_eq!(line["file"], file.as_str());
        assert_eq!(line["position"], *offset);
        assert_eq!(line["type_code"], *type_code);
        assert_eq!(line["type"], EventType::name_of(*type_code));
        assert_eq!(line["server_id"], SERVER_ID);
        assert_eq!(line["timestamp"], TIMESTAMP);
        assert_eq!(line["end_log_pos"], line["position"].as_u64().unwrap() + line["event_size"].as_u64().unwrap());
    }
    let by_type = |name: &str| lines.iter().filter(|l| l["type"] == name).collect::<Vec<_>>();
    let fde = by_type("Format_desc");
    assert_eq!(fde[0]["data"]["server_version"], "8.4.0-binlogd");
    assert_eq!(fde[0]["data"]["checksum_alg"], "CRC32");
    assert_eq!(fde[0]["data"]["in_use"], true);
    assert_eq!(by_type("Previous_gtids")[0]["data"]["gtid_set"], format!("{SOURCE_UUID}:1-9"));
    let gtids = by_type("Gtid");
    assert_eq!(gtids.len(), 3);
    assert_eq!(gtids[2]["data"]["gtid"], format!("{SOURCE_UUID}:12"));
    assert_eq!(gtids[2]["data"]["last_committed"], 2);
    assert_eq!(gtids[2]["data"]["sequence_number"], 3);
    assert_eq!(gtids[2]["data"]["rbr_only"], true);
    let queries: Vec<_> = by_type("Query").iter().map(|l| l["data"]["query"].as_str().unwrap().to_string()).collect();
    assert_eq!(queries, ["CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))", "BEGIN", "BEGIN"]);
    assert_eq!(by_type("Query")[0]["data"]["database"], "shop");
    let table_map = &by_type("Table_map")[0]["data"];
    assert_eq!(table_map["table_id"], TABLE_ID);
    assert_eq!((&table_map["database"], &table_map["table"]), (&json!("shop"), &json!("items")));
    let names: Vec<_> = table_map["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["id", "name", "price", "added", "note", "qty"]);
    assert_eq!(table_map["columns"][2]["type"], "DECIMAL(10,2)");
    assert_eq!(table_map["columns"][5]["unsigned"], true);
    assert_eq!(table_map["primary_key"], json!([0]));
    let apple =
        json!({"id": 1, "name": "apple", "price": "1.50", "added": "2024-05-23 10:16:02.123456", "note": null, "qty": 4000000000u64});
    let pear = json!({"id": 2, "name": "pear", "price": "-0.25", "added": "2024-05-23 10:16:02.123456", "note": "it's ripe", "qty": 7});
    let dearer = json!({"id": 1, "name": "apple", "price": "1.75", "added": "2024-05-23 10:16:02.123456", "note": "dearer", "qty": 3});
    let write = &by_type("Write_rows")[0]["data"];
    assert_eq!((&write["database"], &write["table"], &write["flag_names"]), (&json!("shop"), &json!("items"), &json!(["STMT_END_F"])));
    assert_eq!(write["rows"], json!([{ "after": apple }, { "after": pear }]));
    assert_eq!(by_type("Update_rows")[0]["data"]["rows"], json!([{ "before": apple, "after": dearer }]));
    assert_eq!(by_type("Delete_rows")[0]["data"]["rows"], json!([{ "before": pear }]));
    assert_eq!(by_type("Xid").iter().map(|l| l["data"]["xid"].as_u64().unwrap()).collect::<Vec<_>>(), [101, 102]);
    let lth = &by_type("Large_transaction_header")[0];
    assert_eq!(lth["data"]["terminating_event_offset"], sample.xid_offset);
    assert_eq!(lth["data"]["terminating_event_type"], "Xid");
    assert_eq!(lth["data"]["terminating_event_found"], true);
    assert_eq!(lth["position"], sample.lth_offset);
    let unknown = lines.iter().find(|l| l["type_code"] == 200).unwrap();
    assert_eq!(unknown["data"]["decoded"], false);
    assert_eq!(unknown["data"]["body_hex"], "010203");
    assert_eq!(by_type("Rotate")[0]["data"]["next_file"], "binlog.000002");
    assert_eq!(by_type("Rotate")[0]["data"]["position"], 4);
}

#[test]
fn files_without_checksums_read_too() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(false);
    let path = sample.builder.write(dir.path(), "binlog.000001");
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "inspect --verify (no checksums)");
    let text = stdout(&output);
    assert!(text.contains("# binlog_checksum=NONE (0)"), "{text}");
    // Only the Format_description event carries a checksum field then,
    // which mysqlbinlog and mariadb-binlog do not print: its algorithm is NONE.
    assert_eq!(text.matches(" CRC32 0x").count(), 0, "{text}");
    assert!(text.contains("\tXid = 102\n"));
}

#[test]
fn start_and_stop_positions_select_events() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(true);
    let path = sample.builder.write(dir.path(), "binlog.000001");
    let events = &sample.builder.events;
    let lth_index = events.iter().position(|&(offset, _)| offset == sample.lth_offset).unwrap();
    let start = sample.lth_offset.to_string();
    let stop = sample.xid_offset.to_string();
    let output = inspect(&["--start-position", &start, "--stop-position", &stop], &[&path]);
    assert_succeeded(&output, "positions");
    let text = stdout(&output);
    assert!(text.contains("\n# at 4\n"), "text mode shows the Format_description event, like mysqlbinlog");
    assert!(!text.contains(&format!("\n# at {}\n", events[lth_index - 1].0)));
    assert!(text.contains(&format!("\n# at {}\n", sample.lth_offset)));
    assert!(!text.contains("Xid = 102"));
    assert!(!text.contains("# End of log file"));

    let output = inspect(&["--json", "--start-position", &start, "--stop-position", &stop], &[&path]);
    assert_succeeded(&output, "positions --json");
    let lines = json_lines(&stdout(&output));
    let positions: Vec<u64> = lines.iter().map(|l| l["position"].as_u64().unwrap()).collect();
    let expected: Vec<u64> = events.iter().map(|e| e.0).filter(|&o| o >= sample.lth_offset && o < sample.xid_offset).collect();
    assert_eq!(positions, expected);

    let inside = (sample.lth_offset + 3).to_string();
    let output = inspect(&["--start-position", &inside], &[&path]);
    assert_failed_cleanly(&output, "start inside an event");
    assert!(stderr(&output).contains("is not at an event boundary"), "{}", stderr(&output));

    let output = inspect(&["--start-position", "10"], &[&path]);
    assert_failed_cleanly(&output, "start inside the Format_description event");
    assert!(stderr(&output).contains("start position 10 is not at an event boundary"), "{}", stderr(&output));

    let output = inspect(&["--start-position", "99999999"], &[&path]);
    assert_failed_cleanly(&output, "start past the end");
    assert!(stderr(&output).contains("past the end of the file"), "{}", stderr(&output));
}

#[test]
fn verify_accepts_a_well_formed_file() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(true);
    let path = sample.builder.write(dir.path(), "binlog.000001");
    let output = inspect(&["--verify", "--json"], &[&path]);
    assert_succeeded(&output, "verify");
    let summary = format!("verify: {} events, 3 transactions, 0 problems", sample.builder.events.len());
    assert!(stderr(&output).contains(&summary), "{}", stderr(&output));
}

#[test]
fn a_wrong_large_transaction_header_target_is_shown_and_fails_verify() {
    let dir = tempfile::tempdir().unwrap();
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    let lth = builder.large_transaction_header(4, EventType::Xid as u8 /* offset 4 is the FDE */);
    builder.transaction(1, &[Event::Query(QueryEvent::new(3, "shop", "DELETE FROM items"))], 7);
    let path = builder.write(dir.path(), "binlog.000001");
    let output = inspect(&[], &[&path]);
    assert_succeeded(&output, "inspect without --verify only reports");
    assert!(
        stdout(&output).contains("# terminating event: NOT FOUND: the event at offset 4 is Format_desc (15), not Xid (16)"),
        "{}",
        stdout(&output)
    );
    let output = inspect(&["--verify"], &[&path]);
    assert_failed_cleanly(&output, "verify");
    let errors = stderr(&output);
    assert!(
        errors.contains(&format!("binlog.000001: at offset {lth}: verify: terminating event at 4 is Format_desc, not Xid")),
        "{errors}"
    );

    // A target past the end of the file.
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    builder.large_transaction_header(1 << 40, EventType::Xid as u8);
    let path = builder.write(dir.path(), "binlog.000002");
    let output = inspect(&["--json"], &[&path]);
    assert_succeeded(&output, "inspect --json");
    let lines = json_lines(&stdout(&output));
    assert_eq!(lines[2]["data"]["terminating_event_found"], false);
    assert!(lines[2]["data"]["terminating_event_error"].as_str().unwrap().contains("outside the file's events"));
}

#[test]
fn verify_catches_structural_problems() {
    let dir = tempfile::tempdir().unwrap();
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    // transaction_length one byte short.
    let rest = [Event::Query(QueryEvent::new(1, "shop", "BEGIN")), Event::Xid(XidEvent { xid: 1 })];
    let rest_bytes: u64 = rest.iter().map(|e| builder.event_size(e)).sum();
    let gtid = builder.gtid_event(1, rest_bytes - 1);
    let start = builder.push(&gtid, 0);
    for event in &rest {
        builder.push(event, 0);
    }
    // An Xid outside any transaction, then a transaction left open.
    let stray = builder.push(&Event::Xid(XidEvent { xid: 2 }), 0);
    let gtid = builder.gtid_event(1, 0);
    let open = builder.push(&gtid, 0);
    builder.push(&Event::Query(QueryEvent::new(1, "shop", "BEGIN")), 0);
    let path = builder.write(dir.path(), "binlog.000001");
    let output = inspect(&["--verify"], &[&path]);
    assert_failed_cleanly(&output, "verify");
    let errors = stderr(&output);
    for expected in [
        format!("at offset {start}: verify: transaction {SOURCE_UUID}:1 has transaction_length"),
        format!("at offset {stray}: verify: Xid outside a transaction"),
        format!("at offset {open}: verify: GTID {SOURCE_UUID}:1 was already logged"),
        format!("at offset {open}: verify: the file ends at {} inside the transaction", builder.offset()),
    ] {
        assert!(errors.contains(&expected), "missing {expected:?} in:\n{errors}");
    }
    assert!(errors.contains("4 problems"), "{errors}");
}

#[test]
fn several_files_print_in_order_and_a_bad_one_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let first = sample(true).builder.write(dir.path(), "binlog.000001");
    let bad = dir.path().join("binlog.000002");
    std::fs::write(&bad, b"not a binlog").unwrap();
    let third = sample(false).builder.write(dir.path(), "binlog.000003");
    let output = inspect(&["--json"], &[&first, &bad, &third]);
    assert_failed_cleanly(&output, "a bad file among good ones");
    let lines = json_lines(&stdout(&output));
    let files: std::collections::BTreeSet<String> = lines.iter().map(|l| l["file"].as_str().unwrap().to_string()).collect();
    assert_eq!(files.len(), 2, "both good files printed: {files:?}");
    let errors = stderr(&output);
    assert!(errors.contains(&format!("binlogd inspect: {}: at offset 0: bad magic number", bad.display())), "{errors}");
}

#[test]
fn help_lists_the_subcommands_and_options() {
    let output = binlogd().arg("--help").output().unwrap();
    assert_succeeded(&output, "--help");
    assert!(stdout(&output).contains("inspect"));
    let output = binlogd().args(["inspect", "--help"]).output().unwrap();
    assert_succeeded(&output, "inspect --help");
    for option in ["--json", "--start-position", "--stop-position", "--verify"] {
        assert!(stdout(&output).contains(option), "{option} missing from:\n{}", stdout(&output));
    }
    let output = binlogd().arg("inspect").output().unwrap();
    assert_eq!(output.status.code(), Some(2), "a missing FILE is a usage error");
}

#[test]
fn rows_without_column_names_use_positions() {
    let dir = tempfile::tempdir().unwrap();
    let full = items_table();
    let rows = RowsEvent::write(TABLE_ID, &full, &[item(1, "apple", "1.50", None, 4_000_000_000)]).unwrap();
    // A table map without optional metadata: no names, no signedness.
    let mut bare = full.clone();
    bare.optional_metadata.clear();
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    builder.transaction(1, &[Event::TableMap(bare), Event::WriteRows(rows)], 9);
    let path = builder.write(dir.path(), "binlog.000001");
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "inspect");
    let text = stdout(&output);
    assert!(text.contains("###   @1=1 /* INT meta=0 nullable=0 is_null=0 */\n"), "{text}");
    // Without SIGNEDNESS an INT is signed, as mysqlbinlog shows it.
    assert!(text.contains("###   @6=-294967296 /* INT meta=0 nullable=1 is_null=0 */\n"), "{text}");
    let output = inspect(&["--json"], &[&path]);
    let lines = json_lines(&stdout(&output));
    let write = lines.iter().find(|l| l["type"] == "Write_rows").unwrap();
    assert_eq!(write["data"]["rows"][0]["after"]["@2"], "apple");
    assert_eq!(write["data"]["rows"][0]["after"]["@6"], -294967296i64);
}

#[test]
fn rows_that_do_not_decode_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let table = items_table();
    let rows = RowsEvent::write(TABLE_ID, &table, &[item(1, "apple", "1.50", None, 4)]).unwrap();
    // No Table_map before the rows event: shown, and --verify complains.
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    builder.transaction(1, &[Event::WriteRows(rows.clone())], 9);
    let rows_offset = builder.events.iter().find(|e| e.1 == EventType::WriteRows as u8).unwrap().0;
    let path = builder.write(dir.path(), "binlog.000001");
    let output = inspect(&[], &[&path]);
    assert_succeeded(&output, "rows without a table map");
    assert!(stdout(&output).contains("# rows not decoded: no Table_map for table id 89 before this event"), "{}", stdout(&output));
    let output = inspect(&["--verify"], &[&path]);
    assert_failed_cleanly(&output, "verify");
    let expected = format!("at offset {rows_offset}: verify: no Table_map for table id 89");
    assert!(stderr(&output).contains(&expected), "{}", stderr(&output));

    // A table map that disagrees with the rows: an error with the offset.
    let mut other = table.clone();
    other.columns.pop();
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    builder.transaction(1, &[Event::TableMap(other), Event::WriteRows(rows)], 9);
    let rows_offset = builder.events.iter().rfind(|e| e.1 == EventType::WriteRows as u8).unwrap().0;
    let path = builder.write(dir.path(), "binlog.000002");
    let output = inspect(&[], &[&path]);
    assert_failed_cleanly(&output, "mismatched table map");
    let expected = format!("at offset {rows_offset}: cannot decode the rows of this Write_rows event: ");
    assert!(stderr(&output).contains(&expected), "{}", stderr(&output));
    assert!(stdout(&output).contains("Xid = 9"), "reading goes on after an undecodable rows event");
}

#[test]
fn mariadb_events_are_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let builder = mariadb_sample();
    let path = builder.write(dir.path(), "mariadb-bin.000001");
    let output = inspect(&["--verify"], &[&path]);
    assert_succeeded(&output, "inspect --verify");
    assert!(stderr(&output).contains("2 transactions, 0 problems"), "{}", stderr(&output));
    let text = stdout(&output);
    for expected in [
        "\tStart: binlog v 4, server v 10.11.6-MariaDB-log created 240523 10:16:02 at startup",
        "\tGtid list [0-7-4]\n",
        "\tBinlog checkpoint mariadb-bin.000001\n",
        "\tGTID 0-7-5 ddl\n",
        "/*!100001 SET @@session.gtid_seq_no=5*//*!*/;\n",
        "\tGTID 0-7-6 trans\n",
        "START TRANSACTION\n",
        "\tAnnotate_rows:\n#Q> INSERT INTO items VALUES (1, 'apple')\n",
        "### INSERT INTO `shop`.`items`\n### SET\n###   id=1 ",
        "\tXid = 77\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    let output = inspect(&["--json"], &[&path]);
    let lines = json_lines(&stdout(&output));
    let gtids: Vec<_> = lines.iter().filter(|l| l["type_code"] == 162).map(|l| l["data"].clone()).collect();
    assert_eq!(gtids[0]["gtid"], "0-7-5");
    assert_eq!(gtids[0]["standalone"], true);
    assert_eq!(gtids[1]["gtid"], "0-7-6");
    assert_eq!(gtids[1]["standalone"], false);
    assert_eq!(lines.iter().find(|l| l["type_code"] == 163).unwrap()["data"]["gtid_list"], json!(["0-7-4"]));
}
