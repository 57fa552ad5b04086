//! A binlog file written by a real MariaDB 10.11.19 (`--log-bin
//! --binlog-format=ROW --server-id=1`, default `binlog_row_metadata=NO_LOG`)
//! decodes into typed events only, every body re-encodes byte for byte,
//! and the row events v1 give the values the statements wrote.
//!
//! The file, `tests/data/mariadb-10.11-bin.000001`, holds: CREATE DATABASE
//! (GTID 0-1-1, a Query with MariaDB's Q_XID), DROP DATABASE IF EXISTS
//! (0-1-2), CREATE TABLE (0-1-3), a 2-row INSERT (0-1-4), two INSERTs
//! group-committed together (0-1-5 and 0-1-6, commit id 26: made with
//! `binlog_commit_wait_count=2`), a multi-statement transaction with
//! UPDATE, DELETE and INSERT (0-1-7), ALTER TABLE (0-1-8), a MyISAM
//! CREATE TABLE (0-1-9) and INSERT ending with a Query COMMIT (0-1-10).

use binlog_format::events::mariadb_gtid::gtid_flags;
use binlog_format::events::query::StatusVar;
use binlog_format::events::table_map_metadata::OptionalMetadata;
use binlog_format::file::EventStream;
use binlog_format::{Event, EventType, RowChange, RowsVersion, TableMap, Value};

const FILE: &[u8] = include_bytes!("data/mariadb-10.11-bin.000001");

fn events() -> Vec<(u64, u32, Event)> {
    let mut stream = EventStream::new(FILE).unwrap();
    let mut events = Vec::new();
    for next in stream.by_ref() {
        let (offset, raw, event) = next.unwrap_or_else(|error| panic!("{error:?}"));
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(body, raw.body, "{} at {offset} re-encodes to other bytes", event.type_name());
        assert_eq!(event.event_type(), raw.header.event_type, "at {offset}");
        events.push((offset, raw.header.server_id, event));
    }
    assert_eq!(stream.offset(), FILE.len() as u64, "every byte is an event");
    events
}

/// The table's map with its UNSIGNED columns marked, as a replica that
/// knows the table decodes it (MariaDB sends no SIGNEDNESS by default).
fn with_unsigned(map: &TableMap, unsigned: &[bool]) -> TableMap {
    let mut map = map.clone();
    let numeric = map.columns.iter().zip(unsigned).filter(|(column, _)| column.column_type.is_numeric()).map(|(_, &flag)| flag).collect();
    map.optional_metadata.push(OptionalMetadata::Signedness(numeric));
    map
}

#[test]
fn every_event_is_typed_and_round_trips() {
    let events = events();
    let unknown: Vec<_> = events
        .iter()
        .filter(|(_, _, event)| matches!(event, Event::Unknown { .. }))
        .map(|(offset, _, event)| (offset, event.type_name()))
        .collect();
    assert!(unknown.is_empty(), "undecoded: {unknown:?}");
    let Event::FormatDescription(format) = &events[0].2 else { panic!("starts with an FDE") };
    assert!(format.is_mariadb(), "{}", format.server_version);
    assert!(matches!(events[1].2, Event::GtidList(ref list) if list.gtids.is_empty()));
    assert!(matches!(events[2].2, Event::BinlogCheckpoint(ref checkpoint) if checkpoint.file_name == b"mariadb-bin.000001"));
    assert!(matches!(events.last().unwrap().2, Event::Rotate(ref rotate) if rotate.next_file == "mariadb-bin.000002"));

    let gtids: Vec<_> = events
        .iter()
        .filter_map(|(_, server_id, event)| match event {
            Event::MariadbGtid(gtid) => Some((gtid.gtid(*server_id).to_string(), gtid.is_standalone(), gtid.commit_id)),
            _ => None,
        })
        .collect();
    let expected: Vec<(String, bool, Option<u64>)> = [
        (1, true, None),
        (2, true, None),
        (3, true, None),
        (4, false, None),
        (5, false, Some(26)),
        (6, false, Some(26)),
        (7, false, None),
        (8, true, None),
        (9, true, None),
        (10, false, None),
    ]
    .iter()
    .map(|&(seq, standalone, commit_id)| (format!("0-1-{seq}"), standalone, commit_id))
    .collect();
    assert_eq!(gtids, expected);
    let flags: Vec<u8> =
        events.iter().filter_map(|(_, _, event)| if let Event::MariadbGtid(gtid) = event { Some(gtid.flags2) } else { None }).collect();
    assert!(flags[0] & gtid_flags::FL_DDL != 0 && flags[3] & gtid_flags::FL_TRANSACTIONAL != 0);
    assert_eq!(flags[9] & gtid_flags::FL_TRANSACTIONAL, 0, "the MyISAM insert cannot be rolled back");

    // DDL carries MariaDB's Q_XID; the query text is found after it.
    let create = events
        .iter()
        .find_map(|(_, _, event)| match event {
            Event::Query(query) if query.query.starts_with(b"CREATE TABLE shop.items") => Some(query),
            _ => None,
        })
        .expect("the CREATE TABLE");
    assert!(create.status_vars.iter().any(|var| matches!(var, StatusVar::Xid(xid) if *xid > 0)), "{:?}", create.status_vars);
    assert!(!create.status_vars.iter().any(|var| matches!(var, StatusVar::Unparsed { .. })), "{:?}", create.status_vars);
    let annotations = events.iter().filter(|(_, _, event)| matches!(event, Event::AnnotateRows(_))).count();
    assert_eq!(annotations, 7);
}

#[test]
fn rows_events_v1_decode_to_the_values_written() {
    // id INT UNSIGNED, qty TINYINT UNSIGNED, big BIGINT UNSIGNED, name
    // VARCHAR(40), price DECIMAL(10,2), at DATETIME, note TEXT.
    let unsigned = [true, true, true, false, false, false, false];
    let mut maps = std::collections::HashMap::new();
    let mut changes = Vec::new();
    for (offset, _, event) in events() {
        match event {
            Event::TableMap(table) => {
                maps.insert(table.table_id, table);
            }
            Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
                assert_eq!(rows.version, RowsVersion::V1, "at {offset}");
                assert!(rows.event_type() >= EventType::WriteRowsV1 as u8 && rows.event_type() <= EventType::DeleteRowsV1 as u8);
                let map = maps.get(&rows.table_id).expect("a Table_map first");
                if map.table == b"items" {
                    changes.extend(rows.decode_rows(&with_unsigned(map, &unsigned)).unwrap());
                } else {
                    assert_eq!(rows.decode_rows(map).unwrap(), [RowChange::Write(vec![Value::Int(1)])], "the MyISAM insert");
                }
            }
            _ => {}
        }
    }
    let datetime = Value::DateTime { year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5, micros: 0 };
    let first = vec![
        Value::UInt(1),
        Value::UInt(255),
        Value::UInt(u64::MAX),
        // The client sent 'héllo' to a latin1 column: é is one byte.
        Value::Bytes(b"h\xe9llo".to_vec()),
        Value::Decimal("12.34".into()),
        datetime,
        Value::Null,
    ];
    let second = vec![
        Value::UInt(2),
        Value::Null,
        Value::UInt(0),
        Value::Null,
        Value::Decimal("-0.50".into()),
        Value::Null,
        Value::Bytes(b"x".to_vec()),
    ];
    let only_id_name = |id: u64, name: Option<&str>| {
        let mut row = vec![Value::Null; 7];
        row[0] = Value::UInt(id);
        if let Some(name) = name {
            row[3] = Value::Bytes(name.as_bytes().to_vec());
        }
        row
    };
    let mut updated = second.clone();
    updated[1] = Value::UInt(7);
    updated[3] = Value::Bytes(b"b".to_vec());
    assert_eq!(
        changes,
        vec![
            RowChange::Write(first.clone()),
            RowChange::Write(second.clone()),
            RowChange::Write(only_id_name(10, Some("g1"))),
            RowChange::Write(only_id_name(11, Some("g2"))),
            RowChange::Update { before: second, after: updated },
            RowChange::Delete(first),
            RowChange::Write(only_id_name(3, None)),
        ]
    );
}
