//! Property tests: random tables of every column type and random rows
//! encode, decode to the same values, and re-encode to the same bytes —
//! body by body and through whole binlog files.

mod common;

use binlog_format::events::{ColumnSpec, RowChange, RowsEvent, TableMap};
use binlog_format::file::EventStream;
use binlog_format::GtidSet;
use binlog_format::{Event, Value};
use proptest::prelude::*;
use testkit::BinlogBuilder;

fn table_and_rows(columns_max: usize, rows_max: usize) -> impl Strategy<Value = (Vec<ColumnSpec>, Vec<usize>, Vec<Vec<Value>>)> {
    common::specs(common::any_column_type(), columns_max).prop_flat_map(move |specs| {
        let primary_key = prop::sample::subsequence((0..specs.len()).collect::<Vec<_>>(), 0..=specs.len().min(3));
        let rows = prop::collection::vec(common::row(&specs), 0..=rows_max);
        (Just(specs), primary_key, rows)
    })
}

fn body_of(event: &Event) -> Vec<u8> {
    let mut body = Vec::new();
    event.encode_body(&mut body);
    body
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn table_maps_round_trip((specs, primary_key, _) in table_and_rows(40, 0), table_id in 0u64..(1 << 48)) {
        let map = TableMap::new(table_id, "db", "t", &specs, &primary_key).unwrap();
        let mut body = Vec::new();
        map.encode_body(&mut body);
        let decoded = TableMap::decode_body(&body).unwrap();
        prop_assert_eq!(&decoded, &map);
        prop_assert_eq!(decoded.column_specs(), specs);
        let primary_key: Vec<u64> = primary_key.iter().map(|&c| c as u64).collect();
        prop_assert_eq!(decoded.primary_key(), (!primary_key.is_empty()).then_some(primary_key));
        let mut again = Vec::new();
        decoded.encode_body(&mut again);
        prop_assert_eq!(again, body);
    }

    #[test]
    fn write_and_delete_rows_round_trip((specs, primary_key, rows) in table_and_rows(12, 6)) {
        let map = TableMap::new(77, "db", "t", &specs, &primary_key).unwrap();
        for (event, expected) in [
            (RowsEvent::write(77, &map, &rows).unwrap(), rows.iter().cloned().map(RowChange::Write).collect::<Vec<_>>()),
            (RowsEvent::delete(77, &map, &rows).unwrap(), rows.iter().cloned().map(RowChange::Delete).collect()),
        ] {
            let body = body_of(&event.clone().into_event());
            let decoded = RowsEvent::decode_body(event.kind, &body).unwrap();
            prop_assert_eq!(&decoded, &event);
            let changes = decoded.decode_rows(&map).unwrap();
            prop_assert_eq!(&changes, &expected);
            // Encoding the decoded values gives the same bytes.
            let images: Vec<Vec<Value>> = changes.into_iter().map(|change| match change {
                RowChange::Write(row) | RowChange::Delete(row) => row,
                RowChange::Update { .. } => unreachable!(),
            }).collect();
            let again = match event.kind {
                binlog_format::RowsKind::Write => RowsEvent::write(77, &map, &images).unwrap(),
                _ => RowsEvent::delete(77, &map, &images).unwrap(),
            };
            prop_assert_eq!(body_of(&again.into_event()), body);
        }
    }

    #[test]
    fn update_rows_round_trip((specs, primary_key, rows) in table_and_rows(12, 6), shift in 0usize..6) {
        let map = TableMap::new(78, "db", "t", &specs, &primary_key).unwrap();
        let pairs: Vec<(Vec<Value>, Vec<Value>)> = rows.iter().enumerate()
            .map(|(i, before)| (before.clone(), rows[(i + shift) % rows.len()].clone()))
            .collect();
        let event = RowsEvent::update(78, &map, &pairs).unwrap();
        let body = body_of(&event.clone().into_event());
        let decoded = RowsEvent::decode_body(event.kind, &body).unwrap();
        let changes = decoded.decode_rows(&map).unwrap();
        let expected: Vec<RowChange> = pairs.iter().cloned()
            .map(|(before, after)| RowChange::Update { before, after }).collect();
        prop_assert_eq!(&changes, &expected);
        let again = RowsEvent::update(78, &map, &pairs).unwrap();
        prop_assert_eq!(body_of(&again.into_event()), body);
    }

    /// Whole transactions in a file: EventStream decodes the same events,
    /// and re-framing every decoded event reproduces the file.
    #[test]
    fn files_of_row_transactions_round_trip((specs, primary_key, rows) in table_and_rows(10, 4)) {
        let map = TableMap::new(90, "db", "t", &specs, &primary_key).unwrap();
        let write = RowsEvent::write(90, &map, &rows).unwrap().into_event();
        let delete = RowsEvent::delete(90, &map, &rows).unwrap().into_event();
        let mut file = BinlogBuilder::new(true, &GtidSet::new());
        let written = vec![common::begin(), Event::TableMap(map.clone()), write, Event::TableMap(map.clone()), delete, common::xid(5)];
        file.append_transaction(1, &written);

        let mut rebuilt = binlog_format::constants::BINLOG_MAGIC.to_vec();
        let mut read = Vec::new();
        for item in EventStream::new(&file.bytes).unwrap() {
            let (offset, raw, event) = item.unwrap();
            prop_assert_eq!(raw.header.log_pos as usize, offset as usize + raw.bytes.len());
            let mut body = Vec::new();
            event.encode_body(&mut body);
            binlog_format::encode_event(raw.header, &body, raw.has_checksum, &mut rebuilt);
            read.push(event);
        }
        prop_assert_eq!(rebuilt, file.bytes);
        prop_assert_eq!(&read[read.len() - written.len()..], &written[..]);
    }
}

#[test]
fn oracle_table_rows_round_trip() {
    let specs = common::oracle_table();
    let map = TableMap::new(5, "test", "all_types", &specs, &[0]).unwrap();
    let rows = common::oracle_rows();
    let event = RowsEvent::write(5, &map, &rows).unwrap();
    let changes = event.decode_rows(&map).unwrap();
    assert_eq!(changes, rows.into_iter().map(RowChange::Write).collect::<Vec<_>>());
}

#[test]
fn encoding_refuses_values_that_do_not_fit() {
    let specs = common::oracle_table();
    let map = TableMap::new(5, "test", "all_types", &specs, &[0]).unwrap();
    let good = common::oracle_rows().remove(0);
    let cases: Vec<(usize, Value)> = vec![
        (0, Value::Null),                         // NOT NULL
        (1, Value::Int(128)),                     // TINYINT range
        (2, Value::Int(5)),                       // unsigned column takes UInt
        (6, Value::UInt(1 << 24)),                // MEDIUMINT UNSIGNED range
        (12, Value::Decimal("1234567.0".into())), // DECIMAL(10,4) has 6 integer digits
        (12, Value::Decimal("1.23456".into())),   // and 4 fraction digits
        (15, Value::Bytes(vec![b'x'; 41])),       // CHAR(40 bytes)
        (19, Value::Bytes(vec![b'x'; 256])),      // TINYTEXT
        (23, Value::Date { year: 2024, month: 13, day: 1 }),
        (25, Value::DateTime { year: 2024, month: 1, day: 1, hour: 0, minute: 0, second: 0, micros: 1_500 }),
        (28, Value::Timestamp { seconds: 0, micros: 1_000_000 }),
        (10, Value::Double(1.0)), // FLOAT column
    ];
    for (column, bad) in cases {
        let mut row = good.clone();
        row[column] = bad.clone();
        let error = RowsEvent::write(5, &map, &[row]).unwrap_err();
        assert!(matches!(error, binlog_format::EncodeError::Value { column: c, .. } if c == column), "{bad:?} in column {column}: {error}");
    }
    let short_row = good[..3].to_vec();
    assert!(matches!(RowsEvent::write(5, &map, &[short_row]), Err(binlog_format::EncodeError::ColumnCount { .. })));

    // A row that fails half-way (its first image encoded) leaves the
    // event's rows as they were.
    let mut event = RowsEvent::write(5, &map, std::slice::from_ref(&good)).unwrap();
    let rows_before = event.rows.clone();
    let mut bad_after = good.clone();
    bad_after[1] = Value::Int(128); // past TINYINT, after column 0 was encoded
    let mut update = RowsEvent::update(5, &map, &[(good.clone(), good.clone())]).unwrap();
    let update_rows_before = update.rows.clone();
    assert!(update.push_update(&map, &good, &bad_after).is_err());
    assert_eq!(update.rows, update_rows_before, "a failed update row left bytes behind");
    assert!(event.push_write(&map, &bad_after).is_err());
    assert_eq!(event.rows, rows_before, "a failed row left bytes behind");
}
