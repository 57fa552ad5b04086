//! Compressed events decode to the events they hold: MariaDB's
//! Query_compressed and compressed rows events (a file a real MariaDB
//! 10.11 wrote with `log_bin_compress=ON`, whose rows equal those of the
//! same statements written uncompressed), and MySQL's Transaction_payload
//! with zstd, whose inner events `mysql_common` reads as we do.

mod common;

use binlog_format::events::transaction_payload::COMPRESSION_ZSTD;
use binlog_format::file::EventStream;
use binlog_format::{Event, EventType, GtidSet, RowChange, RowsEvent, TableMap, Value};
use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::EventData;
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use mysql_common::value::Value as TheirValue;
use std::collections::HashMap;
use testkit::BinlogBuilder;

const MARIADB_COMPRESSED: &[u8] = include_bytes!("data/mariadb-10.11-compressed.000002");
const MARIADB_PLAIN: &[u8] = include_bytes!("data/mariadb-10.11-checksum-none.000002");

/// Every row change of a file, in order, with its statement texts; a
/// compressed event counted by its plain event.
fn rows_and_statements(file: &[u8]) -> (Vec<RowChange>, Vec<String>, Vec<u8>) {
    let mut tables: HashMap<u64, TableMap> = HashMap::new();
    let mut changes = Vec::new();
    let mut statements = Vec::new();
    let mut types = Vec::new();
    for item in EventStream::new(file).unwrap() {
        let (offset, raw, event) = item.unwrap_or_else(|e| panic!("{e}"));
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(body, raw.body, "the event at {offset} re-encodes byte for byte");
        types.push(raw.header.event_type);
        match event.into_uncompressed() {
            Event::TableMap(map) => {
                tables.insert(map.table_id, map);
            }
            Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
                changes.extend(rows.decode_rows(&tables[&rows.table_id]).unwrap());
            }
            Event::Query(query) => statements.push(query.query_text().to_string()),
            _ => {}
        }
    }
    (changes, statements, types)
}

#[test]
fn mariadb_compressed_events_hold_the_rows_and_statements_of_their_plain_twins() {
    let (compressed_rows, compressed_statements, types) = rows_and_statements(MARIADB_COMPRESSED);
    for code in [165u8, 166, 167, 168] {
        assert!(types.contains(&code), "the file has a {} event", EventType::name_of(code));
    }
    let (plain_rows, plain_statements, plain_types) = rows_and_statements(MARIADB_PLAIN);
    assert!(plain_types.iter().all(|&code| !(165..=171).contains(&code)));
    assert_eq!(compressed_rows.len(), 7);
    assert_eq!(compressed_rows, plain_rows);
    assert_eq!(compressed_statements, plain_statements);
    assert!(compressed_statements.iter().any(|statement| statement.contains("REPEAT('q',80)")));
}

#[test]
fn corrupt_compressed_mariadb_events_are_errors_never_panics() {
    let mut offsets = Vec::new();
    for item in EventStream::new(MARIADB_COMPRESSED).unwrap() {
        let (offset, raw, _) = item.unwrap();
        if (165..=171).contains(&raw.header.event_type) {
            offsets.push((offset as usize, raw.bytes.len()));
        }
    }
    for (offset, size) in offsets {
        for at in (offset + 19..offset + size - 4).step_by(3) {
            let mut copy = MARIADB_COMPRESSED.to_vec();
            copy[at] ^= 0x21;
            // The CRC32 would catch the flip first: decode the body directly.
            let body = &copy[offset + 19..offset + size - 4];
            let _ = binlog_format::events::CompressedEvent::decode_body(copy[offset + 4], body);
        }
    }
}

fn table() -> TableMap {
    TableMap::new(71, "shop", "lines", &common::oracle_table(), &[0]).unwrap()
}

/// A file of two compressed transactions (zstd, then stored) and one plain.
fn file_with_payloads() -> Vec<u8> {
    let map = table();
    let rows = common::oracle_rows();
    let mut updated = rows.clone();
    updated.rotate_left(1);
    let pairs: Vec<_> = rows.iter().cloned().zip(updated).collect();
    let mut file = BinlogBuilder::new(true, &GtidSet::new());
    let events = |rows_event: RowsEvent, xid| [common::begin(), Event::TableMap(map.clone()), rows_event.into_event(), common::xid(xid)];
    file.append_compressed_transaction(1, &events(RowsEvent::write(71, &map, &rows).unwrap(), 10), Some(3));
    file.append_compressed_transaction(2, &events(RowsEvent::update(71, &map, &pairs).unwrap(), 11), None);
    file.append_transaction(3, &events(RowsEvent::delete(71, &map, &rows).unwrap(), 12));
    file.bytes
}

/// (event type, body) of every event, a payload's inner events in its
/// place, and every row value as `mysql_common` types it.
/// (event type, body) of one event.
type Frame = (u8, Vec<u8>);

fn read_with_mysql_common(file: &[u8]) -> (Vec<Frame>, Vec<Vec<TheirValue>>) {
    let mut binlog = BinlogFile::new(BinlogVersion::Version4, file).unwrap();
    let mut events = Vec::new();
    let mut values = Vec::new();
    let take_rows = |data: Option<EventData<'_>>, reader: &mysql_common::binlog::EventStreamReader, values: &mut Vec<Vec<TheirValue>>| {
        if let Some(EventData::RowsEvent(rows)) = data {
            let map = reader.get_tme(rows.table_id()).expect("a table map before the rows");
            for row in rows.rows(map) {
                let (before, after) = row.unwrap();
                for image in [before, after].into_iter().flatten() {
                    values.push(
                        image
                            .unwrap()
                            .into_iter()
                            .map(|value| match value {
                                BinlogValue::Value(value) => value,
                                other => panic!("{other:?}"),
                            })
                            .collect(),
                    );
                }
            }
        }
    };
    while let Some(event) = binlog.next() {
        let event = event.unwrap();
        match event.read_data().unwrap() {
            Some(EventData::TransactionPayloadEvent(payload)) => {
                let mut decompressed = payload.decompressed().unwrap();
                while let Some(inner) = binlog.reader_mut().read_decompressed(&mut decompressed).unwrap() {
                    events.push((inner.header().event_type_raw(), inner.data().to_vec()));
                    take_rows(inner.read_data().unwrap(), binlog.reader(), &mut values);
                }
            }
            data => {
                events.push((event.header().event_type_raw(), event.data().to_vec()));
                take_rows(data, binlog.reader(), &mut values);
            }
        }
    }
    (events, values)
}

#[test]
fn transaction_payloads_hold_the_events_mysql_common_finds_in_them() {
    let file = file_with_payloads();
    let mut ours = Vec::new();
    let mut payloads = 0;
    let mut stream = EventStream::new(&file).unwrap();
    while let Some(item) = stream.next() {
        let (_, raw, event) = item.unwrap_or_else(|e| panic!("{e}"));
        match event {
            Event::TransactionPayload(payload) => {
                payloads += 1;
                if payloads == 1 {
                    assert_eq!(payload.compression_type().unwrap(), COMPRESSION_ZSTD);
                }
                for inner in payload.events(stream.context()).unwrap() {
                    let mut body = Vec::new();
                    inner.event.encode_body(&mut body);
                    ours.push((inner.header.event_type, body));
                }
            }
            _ => ours.push((raw.header.event_type, if raw.header.event_type == 15 { Vec::new() } else { raw.body.to_vec() })),
        }
    }
    assert_eq!(payloads, 2);
    let (mut theirs, values) = read_with_mysql_common(&file);
    theirs[0].1.clear(); // the Format_description, held without its algorithm byte
    assert_eq!(ours, theirs);
    let rows = common::oracle_rows();
    assert_eq!(values.len(), rows.len() * 4, "written, updated (two images) and deleted rows");
    let first: Vec<TheirValue> = values[0].clone();
    assert_eq!(first.len(), rows[0].len());
    assert_eq!(
        first[0],
        TheirValue::Int(match rows[0][0] {
            Value::Int(id) => id,
            _ => unreachable!(),
        })
    );
}

#[test]
fn corrupt_or_cut_transaction_payloads_are_errors_never_panics() {
    let file = file_with_payloads();
    let mut bodies = Vec::new();
    for item in EventStream::new(&file).unwrap() {
        let (_, raw, _) = item.unwrap();
        if raw.header.event_type == EventType::TransactionPayload as u8 {
            bodies.push(raw.body.to_vec());
        }
    }
    let context = binlog_format::events::DecodeContext::default();
    let mut refused = 0;
    for body in bodies {
        for cut in 0..body.len() {
            assert!(binlog_format::events::TransactionPayloadEvent::decode_body(&body[..cut]).is_err(), "cut at {cut}");
        }
        // Every fifth byte: a flip in a zstd frame header can declare a
        // large window, which zstd allocates before it finds the damage.
        for at in (0..body.len()).step_by(5) {
            let mut copy = body.clone();
            copy[at] ^= 0x10;
            match binlog_format::events::TransactionPayloadEvent::decode_body(&copy).and_then(|payload| payload.events(&context)) {
                Ok(_) => {}
                Err(_) => refused += 1,
            }
        }
    }
    assert!(refused > 0);
}
