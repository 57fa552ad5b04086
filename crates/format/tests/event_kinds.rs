//! The event kinds besides transactions of rows v1/v2: rows events with
//! extra row info (partition ids, NDB info), Partial_update_rows with JSON
//! diffs, XA_prepare, View_change, Incident, Heartbeat_log_event v2 and
//! rows events v0 (MySQL 5.1 before GA). Each decodes, re-encodes to its
//! own bytes, and agrees with an oracle: `mysql_common` frames every event
//! as we do and decodes the rows, partial JSON diffs and Incident fields;
//! `mariadb-binlog` (whose reader still has MySQL 5.1's pre-GA rows code
//! and MySQL's XA_prepare) reads the v0 events' table ids and flags and
//! prints the XA_prepare XIDs and the Incident.
//!
//! `mysql_common` 0.38.2 keeps the extra-data block of a rows event raw,
//! and XA_prepare, View_change and Heartbeat v2 as raw bytes: for these
//! the oracle is that it frames them identically and re-serializes its
//! own decoding of the rows events to our bytes; the fields are checked
//! against the layouts in MySQL's `rows_event.cpp` and `control_events.cpp`.

use std::process::Command;

use binlog_format::events::{AfterValue, JsonDiffOperation};
use binlog_format::file::EventStream;
use binlog_format::value::json::binary;
use binlog_format::{DecodeError, Event, RowChange, RowsVersion, Value};
use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{EventData, RowsEventData};
use mysql_common::binlog::jsondiff::JsonDiffOperation as TheirOperation;
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use mysql_common::proto::MySerialize;
use mysql_common::value::Value as TheirValue;
use testkit::event_kinds::{
    heartbeat_v2, incident, json_diffs, mysql_51_pre_ga_file, mysql_84_event_kinds_file, mysql_84_xa_file, partial_update_events,
    partition_infos, partitioned_events, pre_ga_events, view_change, xa_one_phase, xa_prepare, INCIDENT_MESSAGE, XA_ONE_PHASE_XID, XA_XID,
};

/// Every event of `file` as we frame and decode it: (offset, type, body, event).
fn ours(file: &[u8]) -> Vec<(u64, u8, Vec<u8>, Event)> {
    EventStream::new(file)
        .unwrap()
        .map(|item| {
            let (offset, raw, event) = item.unwrap_or_else(|e| panic!("{e}"));
            (offset, raw.header.event_type, raw.body.to_vec(), event)
        })
        .collect()
}

/// (offset, type, body) of every event as `mysql_common` frames it, each
/// decoded by it without error; a Format_description's body left out (it
/// holds it without the algorithm byte).
fn their_frames(file: &[u8]) -> Vec<(u64, u8, Vec<u8>)> {
    let binlog = BinlogFile::new(BinlogVersion::Version4, file).expect("mysql_common reads the magic");
    let mut frames = Vec::new();
    let mut offset = 4u64;
    for event in binlog {
        let event = event.unwrap_or_else(|e| panic!("mysql_common rejects the event at {offset}: {e}"));
        event.read_data().unwrap_or_else(|e| panic!("mysql_common cannot decode the event at {offset}: {e}"));
        let event_type = event.header().event_type_raw();
        let body = if event_type == 15 { Vec::new() } else { event.data().to_vec() };
        frames.push((offset, event_type, body));
        offset += u64::from(event.header().event_size());
    }
    frames
}

/// Our framing with Format_description bodies left out, to compare.
fn our_frames(file: &[u8]) -> Vec<(u64, u8, Vec<u8>)> {
    ours(file)
        .into_iter()
        .map(|(offset, event_type, body, _)| (offset, event_type, if event_type == 15 { Vec::new() } else { body }))
        .collect()
}

fn their_value(value: &Value) -> TheirValue {
    match value {
        Value::Null => TheirValue::NULL,
        Value::Int(v) => TheirValue::Int(*v),
        Value::Bytes(bytes) => TheirValue::Bytes(bytes.clone()),
        other => panic!("no plain mysql_common value for {other:?}"),
    }
}

/// A binary JSON document as serde_json sees it, through our decoder.
fn our_json(document: &[u8]) -> serde_json::Value {
    serde_json::from_str(&binary::decode(document).unwrap().to_string()).unwrap()
}

fn their_json(value: &mysql_common::binlog::jsonb::Value<'_>) -> serde_json::Value {
    serde_json::Value::try_from(value.clone()).expect("mysql_common converts the document")
}

fn their_plain(values: Vec<BinlogValue<'_>>) -> Vec<TheirValue> {
    values
        .into_iter()
        .map(|value| match value {
            BinlogValue::Value(value) => value,
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn every_event_of_the_84_file_decodes_reencodes_and_frames_as_mysql_common_frames_it() {
    let file = mysql_84_event_kinds_file();
    let events = ours(&file);
    for (offset, event_type, body, event) in &events {
        assert_eq!(event.event_type(), *event_type, "at {offset}");
        assert!(!matches!(event, Event::Unknown { .. }), "undecoded type {event_type} at {offset}");
        let mut again = Vec::new();
        event.encode_body(&mut again);
        if *event_type != 15 {
            assert_eq!(&again, body, "{} at {offset} re-encodes differently", event.type_name());
        }
    }
    let kinds = |wanted: fn(&Event) -> bool| events.iter().filter(|(_, _, _, e)| wanted(e)).count();
    assert_eq!(kinds(|e| matches!(e, Event::PartialUpdateRows(_))), 1);
    assert_eq!(kinds(|e| matches!(e, Event::XaPrepare(_))), 2);
    assert_eq!(kinds(|e| matches!(e, Event::ViewChange(_))), 1);
    assert_eq!(kinds(|e| matches!(e, Event::Incident(_))), 1);
    assert_eq!(kinds(|e| matches!(e, Event::HeartbeatV2(_))), 1);
    assert_eq!(our_frames(&file), their_frames(&file));
}

#[test]
fn extra_row_info_decodes_to_the_partitions_and_mysql_common_reads_the_same_rows() {
    let file = mysql_84_event_kinds_file();
    let (table, expected_events) = partitioned_events();
    let ours: Vec<_> = ours(&file)
        .into_iter()
        .filter_map(|(_, _, body, event)| match event {
            Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) if rows.table_id == table.table_id => {
                Some((body, rows))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ours.len(), 3);
    for ((_, rows), (expected, info)) in ours.iter().zip(expected_events.iter().zip(partition_infos())) {
        assert_eq!(rows, expected);
        assert_eq!(rows.version, RowsVersion::V2);
        assert_eq!(rows.extra_row_info().unwrap(), info);
    }

    let mut binlog = BinlogFile::new(BinlogVersion::Version4, &file[..]).unwrap();
    let mut theirs = Vec::new();
    while let Some(event) = binlog.next() {
        let event = event.unwrap();
        if let Some(EventData::RowsEvent(rows)) = event.read_data().unwrap() {
            if rows.table_id() != table.table_id {
                continue;
            }
            let mut serialized = Vec::new();
            rows.serialize(&mut serialized);
            let tme = binlog.reader().get_tme(rows.table_id()).expect("the table map came first");
            let images: Vec<_> = rows
                .rows(tme)
                .map(|row| {
                    let (before, after) = row.unwrap();
                    (before.map(|r| their_plain(r.unwrap())), after.map(|r| their_plain(r.unwrap())))
                })
                .collect();
            theirs.push((serialized, rows.flags().bits(), images));
        }
    }
    assert_eq!(theirs.len(), 3);
    for ((body, rows), (serialized, flags, images)) in ours.iter().zip(&theirs) {
        // mysql_common's own decoding, written back, is our body: it read
        // the extra data as the same number of bytes.
        assert_eq!(serialized, body);
        assert_eq!(*flags, rows.flags);
        let changes = rows.decode_rows(&table).unwrap();
        let expected: Vec<_> = changes
            .iter()
            .map(|change| match change {
                RowChange::Write(after) => (None, Some(after.iter().map(their_value).collect::<Vec<_>>())),
                RowChange::Update { before, after } => {
                    (Some(before.iter().map(their_value).collect()), Some(after.iter().map(their_value).collect()))
                }
                RowChange::Delete(before) => (Some(before.iter().map(their_value).collect()), None),
            })
            .collect();
        assert_eq!(images, &expected);
    }
}

#[test]
fn partial_update_rows_decode_their_json_diffs_as_mysql_common_does() {
    let file = mysql_84_event_kinds_file();
    let (table, expected) = partial_update_events();
    let partial = ours(&file)
        .into_iter()
        .find_map(|(_, _, _, event)| match event {
            Event::PartialUpdateRows(partial) => Some(partial),
            _ => None,
        })
        .unwrap();
    assert_eq!(partial, expected);
    let updates = partial.decode_rows(&table).unwrap();
    assert_eq!(updates.len(), 2);
    assert_eq!(updates[0].after[1], AfterValue::Diffs(json_diffs()));
    assert!(updates[1].after.iter().all(|value| matches!(value, AfterValue::Full(_))));

    let mut binlog = BinlogFile::new(BinlogVersion::Version4, &file[..]).unwrap();
    let mut rows_seen = 0;
    while let Some(event) = binlog.next() {
        let event = event.unwrap();
        let Some(EventData::RowsEvent(RowsEventData::PartialUpdateRowsEvent(theirs))) = event.read_data().unwrap() else { continue };
        let tme = binlog.reader().get_tme(theirs.table_id()).expect("the table map came first");
        for (row, update) in theirs.rows(tme).zip(&updates) {
            rows_seen += 1;
            let (before, after) = row.unwrap();
            let before = before.unwrap().unwrap();
            let after = after.unwrap().unwrap();
            assert_eq!(before.len(), update.before.len());
            for (their, our) in before.iter().zip(&update.before) {
                match (their, our) {
                    (BinlogValue::Jsonb(their), Value::Json(our)) => assert_eq!(their_json(their), our_json(our)),
                    (BinlogValue::Value(their), our) => assert_eq!(*their, their_value(our)),
                    other => panic!("before image: {other:?}"),
                }
            }
            assert_eq!(after.len(), update.after.len());
            for (their, our) in after.iter().zip(&update.after) {
                match (their, our) {
                    (BinlogValue::JsonDiff(their), AfterValue::Diffs(our)) => {
                        assert_eq!(their.len(), our.len());
                        for (their, our) in their.iter().zip(our) {
                            let operation = match their.operation() {
                                TheirOperation::REPLACE => JsonDiffOperation::Replace,
                                TheirOperation::INSERT => JsonDiffOperation::Insert,
                                TheirOperation::REMOVE => JsonDiffOperation::Remove,
                            };
                            assert_eq!(operation, our.operation);
                            assert_eq!(their.path(), &our.path[..]);
                            assert_eq!(their.value().map(their_json), our.value.as_deref().map(our_json));
                        }
                    }
                    (BinlogValue::Jsonb(their), AfterValue::Full(Value::Json(our))) => assert_eq!(their_json(their), our_json(our)),
                    (BinlogValue::Value(their), AfterValue::Full(our)) => assert_eq!(*their, their_value(our)),
                    other => panic!("after image: {other:?}"),
                }
            }
        }
    }
    assert_eq!(rows_seen, 2);
}

#[test]
fn control_events_decode_to_their_fields_and_mysql_common_agrees_on_the_incident() {
    let file = mysql_84_event_kinds_file();
    let events: Vec<Event> = ours(&file).into_iter().map(|(_, _, _, event)| event).collect();
    let prepares: Vec<_> = events.iter().filter_map(|e| if let Event::XaPrepare(p) = e { Some(p.clone()) } else { None }).collect();
    assert_eq!(prepares, [xa_prepare(), xa_one_phase()]);
    assert_eq!(prepares[0].xid_text(), XA_XID);
    assert_eq!(prepares[1].xid_text(), XA_ONE_PHASE_XID);
    assert!(events.contains(&Event::ViewChange(view_change())));
    assert!(events.contains(&Event::Incident(incident())));
    assert!(events.contains(&Event::HeartbeatV2(heartbeat_v2())));

    let binlog = BinlogFile::new(BinlogVersion::Version4, &file[..]).unwrap();
    let mut incidents = 0;
    for event in binlog {
        let event = event.unwrap();
        if let Some(EventData::IncidentEvent(theirs)) = event.read_data().unwrap() {
            incidents += 1;
            assert_eq!(theirs.incident_type().map(|t| t as u16), Ok(incident().incident));
            assert_eq!(theirs.message_raw(), INCIDENT_MESSAGE.as_bytes());
        }
    }
    assert_eq!(incidents, 1);
}

#[test]
fn corrupt_lengths_in_the_new_kinds_are_errors_never_panics_or_huge_allocations() {
    let file = mysql_84_event_kinds_file();
    for (offset, event_type, body, _) in ours(&file) {
        if ![26u8, 31, 37, 38, 39, 41].contains(&event_type) {
            continue;
        }
        // Every truncation, and every byte set to 0xff or 0xfe in turn:
        // each decodes or fails with an error.
        let context = binlog_format::events::DecodeContext::default();
        let decode = |body: &[u8]| -> Result<Event, DecodeError> {
            let mut framed = Vec::new();
            let header = binlog_format::EventHeader { event_type, ..Default::default() };
            binlog_format::encode_event(header, body, true, &mut framed);
            Event::decode(&binlog_format::RawEvent::parse(&framed, true).unwrap(), &context)
        };
        for cut in 0..body.len() {
            let _ = decode(&body[..cut]);
        }
        for at in 0..body.len() {
            for byte in [0xffu8, 0xfe, 0x00] {
                let mut bad = body.clone();
                bad[at] = byte;
                if let Ok(Event::PartialUpdateRows(partial)) = decode(&bad) {
                    let _ = partial.decode_rows(&partial_update_events().0);
                }
            }
        }
        assert!(decode(&body).is_ok(), "the intact event at {offset}");
    }
}

#[test]
fn rows_v0_decode_as_mysql_common_decodes_the_same_rows_as_v1() {
    let v0 = mysql_51_pre_ga_file(RowsVersion::V0);
    let v1 = mysql_51_pre_ga_file(RowsVersion::V1);
    let (table, expected) = pre_ga_events(RowsVersion::V0);
    let rows_of = |file: &[u8]| -> Vec<_> {
        ours(file)
            .into_iter()
            .filter_map(|(_, event_type, body, event)| match event {
                Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => Some((event_type, body, rows)),
                _ => None,
            })
            .collect()
    };
    let ours_v0 = rows_of(&v0);
    let ours_v1 = rows_of(&v1);
    assert_eq!(ours_v0.iter().map(|(t, _, _)| *t).collect::<Vec<_>>(), [20, 21, 22]);
    assert_eq!(ours_v1.iter().map(|(t, _, _)| *t).collect::<Vec<_>>(), [23, 24, 25]);
    for ((_, body0, rows0), ((_, body1, rows1), expected)) in ours_v0.iter().zip(ours_v1.iter().zip(&expected)) {
        assert_eq!(rows0, expected);
        assert_eq!(rows0.decode_rows(&table).unwrap(), rows1.decode_rows(&table).unwrap());
        // v0's Update has one bitmap where v1 has two equal ones.
        let bitmap = rows0.columns_before.len().max(rows0.columns_after.len());
        let extra = if rows0.kind == binlog_format::RowsKind::Update { bitmap } else { 0 };
        assert_eq!(body0.len() + extra, body1.len());
    }
    // mysql_common keeps v0 events raw but frames them as we do, and
    // decodes the v1 twin's rows to what we decode from v0.
    assert_eq!(our_frames(&v0), their_frames(&v0));
    let mut binlog = BinlogFile::new(BinlogVersion::Version4, &v1[..]).unwrap();
    let mut theirs = Vec::new();
    while let Some(event) = binlog.next() {
        let event = event.unwrap();
        if let Some(EventData::RowsEvent(rows)) = event.read_data().unwrap() {
            let tme = binlog.reader().get_tme(rows.table_id()).unwrap();
            for row in rows.rows(tme) {
                let (before, after) = row.unwrap();
                theirs.push((before.map(|r| their_plain(r.unwrap())), after.map(|r| their_plain(r.unwrap()))));
            }
        }
    }
    let ours_images: Vec<_> = ours_v0
        .iter()
        .flat_map(|(_, _, rows)| rows.decode_rows(&table).unwrap())
        .map(|change| match change {
            RowChange::Write(after) => (None, Some(after.iter().map(their_value).collect::<Vec<_>>())),
            RowChange::Update { before, after } => {
                (Some(before.iter().map(their_value).collect()), Some(after.iter().map(their_value).collect()))
            }
            RowChange::Delete(before) => (Some(before.iter().map(their_value).collect()), None),
        })
        .collect();
    assert_eq!(theirs, ours_images);
}

fn mariadb_binlog_verbose(file: &[u8]) -> String {
    let binary = std::env::var("MARIADB_BINLOG").unwrap_or_else(|_| "mariadb-binlog".to_string());
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("binlog.000001");
    std::fs::write(&path, file).unwrap();
    let output = Command::new(&binary)
        .arg("--verbose")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{binary}`: {e}; install the MariaDB client tools or set MARIADB_BINLOG"));
    assert!(output.status.success(), "mariadb-binlog failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn mariadb_binlog_reads_the_v0_events_and_prints_the_xa_prepare_xids_we_decode() {
    // MariaDB's reader of MySQL 5.1's pre-GA events reads their
    // post-header (table id and flags) but prints no row values for them.
    let printed = mariadb_binlog_verbose(&mysql_51_pre_ga_file(RowsVersion::V0));
    for name in ["Write_rows_old", "Update_rows_old", "Delete_rows_old"] {
        assert!(printed.contains(&format!("\t{name}: table id 20 flags: STMT_END_F\n")), "{printed}");
    }
    let printed = mariadb_binlog_verbose(&mysql_84_xa_file());
    // MariaDB prints each XA_prepare's XID (it shows a one-phase commit
    // as a prepare too; MySQL's mysqlbinlog prints `XA COMMIT ... ONE
    // PHASE`, as `binlogd inspect` does).
    for xid in [XA_XID, XA_ONE_PHASE_XID] {
        assert!(printed.contains(&format!("\tXID = {xid}\nXA PREPARE {xid}\n")), "{printed}");
    }
    assert!(printed.contains("# Incident: LOST_EVENTS"), "{printed}");
}
