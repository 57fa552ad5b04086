//! The binlog files of `mysql_common`'s test data (`data/mysql_common/`,
//! see `data/README.md`): MySQL 5.1 to 9.x and MariaDB, with and without
//! checksums, compressed, partial JSON. Each decodes completely, and event
//! by event binlogd agrees with `mysql_common`, the oracle: headers, statements, GTIDs, table maps and
//! every row value, those inside a Transaction_payload too (both decompress
//! it and decode its events). A copy cut inside an event fails with that
//! event's offset.

use std::collections::HashMap;
use std::path::PathBuf;

use binlog_format::column_type::ColumnType;
use binlog_format::events::{RowChange, TableMap};
use binlog_format::file::EventStream;
use binlog_format::value::json::binary::decode as decode_json;
use binlog_format::value::json::print::to_text as json_text;
use binlog_format::{Event, Value};
use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{Event as TheirEvent, EventData};
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::{BinlogFile, EventStreamReader};
use mysql_common::value::Value as TheirValue;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/mysql_common");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    assert!(files.len() >= 30, "the corpus is in {}", dir.display());
    files
}

/// What both decoders say of one event, in a form both can give.
#[derive(Debug, PartialEq)]
enum Seen {
    Query {
        schema: Vec<u8>,
        query: Vec<u8>,
        error_code: u16,
    },
    Xid(u64),
    Rotate {
        position: u64,
        name: Vec<u8>,
    },
    Gtid {
        uuid: [u8; 16],
        gno: u64,
        tag: Option<String>,
    },
    TableMap {
        table_id: u64,
        database: Vec<u8>,
        table: Vec<u8>,
        types: Vec<u8>,
    },
    /// (before, after) images of every row.
    Rows {
        table_id: u64,
        rows: Vec<(Option<Image>, Option<Image>)>,
    },
    /// A Transaction_payload's events, decompressed; their offsets are
    /// within the decompressed bytes.
    Payload(Vec<(Header, Seen)>),
    Other,
}

/// One row image, column by column.
type Image = Vec<Compared>;

/// A column value as both decoders can state it.
#[derive(Debug, PartialEq)]
enum Compared {
    Value(TheirValue),
    Json(serde_json::Value),
}

#[derive(Debug, PartialEq)]
struct Header {
    offset: u64,
    event_type: u8,
    timestamp: u32,
    server_id: u32,
    size: u32,
    log_pos: u32,
    flags: u16,
}

fn their_image(row: Option<mysql_common::binlog::row::BinlogRow>) -> Option<Vec<Compared>> {
    row.map(|row| {
        row.unwrap()
            .into_iter()
            .map(|value| match value {
                BinlogValue::Value(value) => Compared::Value(value),
                // Parsed as MySQL prints it: opaque values (dates, decimals,
                // other types) become the text MySQL gives them.
                BinlogValue::Jsonb(document) => Compared::Json(serde_json::Value::from(document.parse().unwrap())),
                other => panic!("mysql_common gives {other:?} in a full image"),
            })
            .collect()
    })
}

fn their_header(event: &TheirEvent, offset: u64) -> Header {
    let header = event.header();
    Header {
        offset,
        event_type: header.event_type_raw(),
        timestamp: header.timestamp(),
        server_id: header.server_id(),
        size: header.event_size(),
        log_pos: header.log_pos(),
        flags: header.flags_raw(),
    }
}

fn read_with_mysql_common(name: &str, file: &[u8]) -> Vec<(Header, Seen)> {
    let mut binlog = BinlogFile::new(BinlogVersion::Version4, file).unwrap();
    let mut seen = Vec::new();
    let mut offset = 4;
    while let Some(event) = binlog.next() {
        let event = event.unwrap_or_else(|error| panic!("mysql_common reads {name} at {offset}: {error}"));
        let header = their_header(&event, offset);
        offset += u64::from(header.size);
        let what = their_seen(name, &event, header.offset, binlog.reader_mut());
        seen.push((header, what));
    }
    seen
}

/// What `mysql_common` decodes of `event` (at `offset`); a
/// Transaction_payload's events are read with `reader`, which keeps their
/// table maps for the rows that follow them.
fn their_seen(name: &str, event: &TheirEvent, offset: u64, reader: &mut EventStreamReader) -> Seen {
    let header = event.header();
    match event.read_data().unwrap_or_else(|error| panic!("mysql_common decodes {name} at {offset}: {error}")) {
        Some(EventData::QueryEvent(query)) => {
            Seen::Query { schema: query.schema_raw().to_vec(), query: query.query_raw().to_vec(), error_code: query.error_code() }
        }
        Some(EventData::XidEvent(xid)) => Seen::Xid(xid.xid),
        Some(EventData::RotateEvent(rotate)) => Seen::Rotate { position: rotate.position(), name: rotate.name_raw().to_vec() },
        Some(EventData::GtidEvent(gtid)) if header.event_type_raw() != 34 => {
            Seen::Gtid { uuid: gtid.sid(), gno: gtid.gno(), tag: gtid.tag().map(|tag| tag.as_str().to_owned()) }
        }
        Some(EventData::TableMapEvent(map)) => Seen::TableMap {
            table_id: map.table_id(),
            database: map.database_name_raw().to_vec(),
            table: map.table_name_raw().to_vec(),
            types: (0..map.columns_count() as usize).map(|i| map.get_raw_column_type(i).unwrap().unwrap() as u8).collect(),
        },
        Some(EventData::RowsEvent(rows)) if header.event_type_raw() != 39 => {
            let table_map = reader.get_tme(rows.table_id()).expect("a table map precedes rows");
            let rows_seen = rows
                .rows(table_map)
                .map(|row| {
                    let (before, after) = row.unwrap_or_else(|error| panic!("mysql_common decodes a row of {name}: {error}"));
                    (their_image(before), their_image(after))
                })
                .collect();
            Seen::Rows { table_id: rows.table_id(), rows: rows_seen }
        }
        Some(EventData::TransactionPayloadEvent(payload)) => {
            let mut decompressed =
                payload.decompressed().unwrap_or_else(|error| panic!("mysql_common decompresses {name} at {offset}: {error}"));
            let mut inner = Vec::new();
            let mut inner_offset = 0;
            while let Some(event) = reader
                .read_decompressed(&mut decompressed)
                .unwrap_or_else(|error| panic!("mysql_common reads the payload of {name} at {offset}, event at {inner_offset}: {error}"))
            {
                let header = their_header(&event, inner_offset);
                inner_offset += u64::from(header.size);
                let what = their_seen(name, &event, offset, reader);
                inner.push((header, what));
            }
            Seen::Payload(inner)
        }
        _ => Seen::Other,
    }
}

/// SET and BIT columns `mysql_common` gives as their stored bytes, not as
/// numbers: (length, big-endian).
fn stored_as_bytes(column: &ColumnType) -> Option<(usize, bool)> {
    match column {
        ColumnType::Set { length_bytes } => Some((usize::from(*length_bytes), false)),
        ColumnType::Bit { bits } => Some((usize::from(bits.div_ceil(8)), true)),
        _ => None,
    }
}

/// What `mysql_common` gives for one of our values: see
/// `oracle_mysql_common.rs` for the quirks the mapping follows.
fn compared(column: &ColumnType, value: &Value) -> Compared {
    const MEDIUMINT: u8 = 9;
    const YEAR: u8 = 13;
    const VECTOR: u8 = 242;
    let column_type = column.type_code();
    Compared::Value(match value {
        Value::Null => TheirValue::NULL,
        Value::Int(_) | Value::UInt(_) if stored_as_bytes(column).is_some() => {
            let mask = match value {
                Value::Int(mask) => *mask as u64,
                Value::UInt(mask) => *mask,
                _ => unreachable!(),
            };
            let (length, big_endian) = stored_as_bytes(column).unwrap();
            TheirValue::Bytes(if big_endian { mask.to_be_bytes()[8 - length..].to_vec() } else { mask.to_le_bytes()[..length].to_vec() })
        }
        Value::Int(v) if column_type == MEDIUMINT && *v < 0 => TheirValue::Int(v + (1 << 24)),
        Value::Int(0) if column_type == YEAR => TheirValue::Bytes(b"1900".to_vec()),
        Value::Int(v) if column_type == YEAR => TheirValue::Bytes(v.to_string().into_bytes()),
        Value::Int(v) => TheirValue::Int(*v),
        Value::UInt(v) => i64::try_from(*v).map_or(TheirValue::UInt(*v), TheirValue::Int),
        Value::Float(v) => TheirValue::Float(*v),
        Value::Double(v) => TheirValue::Double(*v),
        Value::Decimal(text) => TheirValue::Bytes(text.clone().into_bytes()),
        // binlogd keeps a column of a type it does not know (VECTOR, 242)
        // as its stored bytes: a VECTOR's are a 4-byte length, then the
        // floats mysql_common gives.
        Value::Bytes(bytes) if column_type == VECTOR => {
            let (length, floats) = bytes.split_at(4);
            assert_eq!(u32::from_le_bytes(length.try_into().unwrap()) as usize, floats.len(), "a VECTOR's length");
            TheirValue::Bytes(floats.to_vec())
        }
        Value::Bytes(bytes) => TheirValue::Bytes(bytes.clone()),
        Value::Date { year, month, day } => TheirValue::Date(*year, *month, *day, 0, 0, 0, 0),
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            TheirValue::Date(*year, *month, *day, *hour, *minute, *second, *micros)
        }
        Value::Timestamp { seconds, micros: 0 } => TheirValue::Bytes(seconds.to_string().into_bytes()),
        Value::Timestamp { seconds, micros } => TheirValue::Bytes(format!("{seconds}.{micros:06}").into_bytes()),
        Value::Time { negative, hours, minute, second, micros } => {
            TheirValue::Time(*negative, u32::from(*hours / 24), (*hours % 24) as u8, *minute, *second, *micros)
        }
        Value::Json(document) => {
            let text = json_text(&decode_json(document).expect("binlogd decodes the JSON document"));
            return Compared::Json(serde_json::from_str(&text).expect("binlogd prints JSON text"));
        }
    })
}

/// A row image holds the columns its event's bitmap names (all of them in
/// a full image), in column order.
fn our_image(map: &TableMap, present: &[usize], row: &[Value]) -> Vec<Compared> {
    assert_eq!(present.len(), row.len());
    present.iter().zip(row).map(|(&column, value)| compared(&map.columns[column].column_type, value)).collect()
}

fn read_with_binlogd(name: &str, file: &[u8]) -> Vec<(Header, Seen)> {
    let mut stream = EventStream::new(file).unwrap();
    let mut maps: HashMap<u64, TableMap> = HashMap::new();
    let mut seen = Vec::new();
    while let Some(next) = stream.next() {
        let (offset, raw, event) = next.unwrap_or_else(|error| panic!("binlogd reads {name}: {error:?}"));
        let header = our_header(offset, &raw.header);
        let what = our_seen(name, offset, event, stream.context(), &mut maps);
        seen.push((header, what));
    }
    assert_eq!(stream.offset(), file.len() as u64, "{name}: every byte is an event");
    seen
}

fn our_header(offset: u64, header: &binlog_format::header::EventHeader) -> Header {
    Header {
        offset,
        event_type: header.event_type,
        timestamp: header.timestamp,
        server_id: header.server_id,
        size: header.event_size,
        log_pos: header.log_pos,
        flags: header.flags,
    }
}

/// What binlogd decodes of `event` (at `offset`), keeping table maps in
/// `maps` for the rows that follow them.
fn our_seen(
    name: &str,
    offset: u64,
    event: Event,
    context: &binlog_format::events::DecodeContext,
    maps: &mut HashMap<u64, TableMap>,
) -> Seen {
    {
        match event.into_uncompressed() {
            Event::Query(query) => Seen::Query { schema: query.database, query: query.query, error_code: query.error_code },
            Event::Xid(xid) => Seen::Xid(xid.xid),
            Event::Rotate(rotate) => Seen::Rotate { position: rotate.position, name: rotate.next_file.into_bytes() },
            Event::Gtid(gtid) => {
                Seen::Gtid { uuid: gtid.gtid.uuid.0, gno: gtid.gtid.gno, tag: gtid.gtid.is_tagged().then(|| gtid.gtid.tag.to_string()) }
            }
            Event::TableMap(map) => {
                let seen = Seen::TableMap {
                    table_id: map.table_id,
                    database: map.database.clone(),
                    table: map.table.clone(),
                    types: map.columns.iter().map(|column| column.column_type.type_code()).collect(),
                };
                maps.insert(map.table_id, map);
                seen
            }
            Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
                let map = &maps[&rows.table_id];
                let changes =
                    rows.decode_rows(map).unwrap_or_else(|error| panic!("binlogd decodes the rows of {name} at {offset}: {error:?}"));
                let (before_columns, after_columns) = (rows.before_columns(), rows.after_columns());
                let rows_seen = changes
                    .iter()
                    .map(|change| match change {
                        RowChange::Write(after) => (None, Some(our_image(map, &after_columns, after))),
                        RowChange::Update { before, after } => {
                            (Some(our_image(map, &before_columns, before)), Some(our_image(map, &after_columns, after)))
                        }
                        RowChange::Delete(before) => (Some(our_image(map, &before_columns, before)), None),
                    })
                    .collect();
                Seen::Rows { table_id: rows.table_id, rows: rows_seen }
            }
            Event::TransactionPayload(payload) => {
                let inner =
                    payload.events(context).unwrap_or_else(|error| panic!("binlogd decodes the payload of {name} at {offset}: {error:?}"));
                Seen::Payload(
                    inner
                        .into_iter()
                        .map(|inner| (our_header(inner.offset, &inner.header), our_seen(name, offset, inner.event, context, maps)))
                        .collect(),
                )
            }
            _ => Seen::Other,
        }
    }
}

/// `mysql_common` renders an opaque DECIMAL inside a JSON document as a
/// string of its digits; MySQL prints it as a number, as binlogd does.
/// Where binlogd has a number and `mysql_common` text of the same value,
/// the text is taken as the number.
fn accept_decimal_as_text(ours: &serde_json::Value, theirs: &mut serde_json::Value) {
    use serde_json::Value as J;
    match (ours, theirs) {
        (J::Number(number), theirs @ J::String(_))
            if theirs.as_str().and_then(|text| text.parse::<f64>().ok()).is_some_and(|value| Some(value) == number.as_f64()) =>
        {
            *theirs = J::Number(number.clone())
        }
        (J::Array(ours), J::Array(theirs)) => ours.iter().zip(theirs.iter_mut()).for_each(|(o, t)| accept_decimal_as_text(o, t)),
        (J::Object(ours), J::Object(theirs)) => {
            for (key, value) in ours {
                if let Some(their_value) = theirs.get_mut(key) {
                    accept_decimal_as_text(value, their_value);
                }
            }
        }
        _ => {}
    }
}

fn accept_quirks(ours: &Seen, theirs: &mut Seen) {
    if let (Seen::Payload(ours), Seen::Payload(theirs)) = (ours, &mut *theirs) {
        for ((_, ours), (_, theirs)) in ours.iter().zip(theirs.iter_mut()) {
            accept_quirks(ours, theirs);
        }
        return;
    }
    let (Seen::Rows { rows: ours, .. }, Seen::Rows { rows: theirs, .. }) = (ours, theirs) else { return };
    let images = ours.iter().flat_map(|(b, a)| [b, a]).zip(theirs.iter_mut().flat_map(|(b, a)| [b, a]));
    for (our_image, their_image) in images {
        let (Some(our_image), Some(their_image)) = (our_image, their_image) else { continue };
        for (our_value, their_value) in our_image.iter().zip(their_image.iter_mut()) {
            if let (Compared::Json(ours), Compared::Json(theirs)) = (our_value, their_value) {
                accept_decimal_as_text(ours, theirs);
            }
        }
    }
}

/// Rows in `seen`, those inside payloads included; and of them, those inside payloads.
fn rows_of(seen: &[(Header, Seen)]) -> (usize, usize) {
    seen.iter().fold((0, 0), |(all, in_payloads), (_, seen)| match seen {
        Seen::Rows { rows, .. } => (all + rows.len(), in_payloads),
        Seen::Payload(inner) => {
            let (inner_rows, _) = rows_of(inner);
            (all + inner_rows, in_payloads + inner_rows)
        }
        _ => (all, in_payloads),
    })
}

#[test]
fn every_corpus_file_decodes_as_mysql_common_decodes_it() {
    let (mut rows, mut payload_rows) = (0, 0);
    for (name, file) in corpus() {
        let ours = read_with_binlogd(&name, &file);
        let mut theirs = read_with_mysql_common(&name, &file);
        let (all, in_payloads) = rows_of(&ours);
        rows += all;
        payload_rows += in_payloads;
        assert_eq!(ours.len(), theirs.len(), "{name}: event count");
        for ((our_header, our_event), (their_header, their_event)) in ours.iter().zip(&mut theirs) {
            assert_eq!(our_header, their_header, "{name}");
            accept_quirks(our_event, their_event);
            assert_eq!(our_event, &*their_event, "{name} at {}", our_header.offset);
        }
    }
    assert!(rows >= 70, "the corpus holds {rows} rows");
    assert!(payload_rows >= 1, "the compressed files' rows are compared too ({payload_rows})");
}

#[test]
fn a_corpus_file_cut_inside_an_event_fails_at_that_event() {
    for (name, file) in corpus() {
        let offsets: Vec<u64> = EventStream::new(&file).unwrap().map(|next| next.unwrap().0).collect();
        for (index, &start) in offsets.iter().enumerate() {
            let end = offsets.get(index + 1).copied().unwrap_or(file.len() as u64);
            for length in [start + 1, start + 19, end - 1] {
                let cut = &file[..length.min(end - 1) as usize];
                let error = EventStream::new(cut)
                    .and_then(|stream| stream.map(|next| next.map(|_| ())).collect::<Result<Vec<()>, _>>())
                    .expect_err(&format!("{name} cut to {length} bytes"));
                assert_eq!(error.offset, start, "{name} cut to {length} bytes: {error}");
            }
        }
    }
}
