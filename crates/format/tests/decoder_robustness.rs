//! The decoders never panic: random bytes and random mutations of valid
//! Table_map and rows events, and of files holding every other event kind
//! (`testkit::event_kinds`), go through `RawEvent::parse`, `Event::decode`
//! and `decode_rows`, and must come out as values or errors. Whatever does
//! decode re-encodes to the bytes it came from.

mod common;

use std::collections::HashMap;

use binlog_format::constants::BINLOG_MAGIC;
use binlog_format::events::{DecodeContext, RowsEvent, RowsKind, TableMap};
use binlog_format::file::{EventStream, WriterIdentity};
use binlog_format::{Event, RawEvent};
use proptest::prelude::*;
use proptest::sample::Index;
use testkit::event_kinds::{mysql_51_pre_ga_file, mysql_84_event_kinds_file_with};
use testkit::BinlogBuilder;

/// Decodes rows with every table map seen so far whose id matches, and
/// checks that decoded Table_map and rows events re-encode to their body.
fn exercise(event: &Event, body: &[u8], tables: &mut HashMap<u64, TableMap>) -> Result<(), TestCaseError> {
    let mut again = Vec::new();
    match event {
        Event::TableMap(map) => {
            map.encode_body(&mut again);
            prop_assert_eq!(&again[..], body);
            tables.insert(map.table_id, map.clone());
        }
        Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
            rows.encode_body(&mut again);
            prop_assert_eq!(&again[..], body);
            let _ = rows.extra_row_info();
            if let Some(map) = tables.get(&rows.table_id) {
                let _ = rows.decode_rows(map);
            }
        }
        Event::PartialUpdateRows(partial) => {
            partial.encode_body(&mut again);
            prop_assert_eq!(&again[..], body);
            if let Some(map) = tables.get(&partial.rows.table_id) {
                let _ = partial.decode_rows(map);
            }
        }
        Event::Incident(_) | Event::ViewChange(_) | Event::XaPrepare(_) => {
            event.encode_body(&mut again);
            prop_assert_eq!(&again[..], body);
        }
        _ => {}
    }
    Ok(())
}

fn exercise_file(bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok(stream) = EventStream::new(bytes) else { return Ok(()) };
    let mut tables = HashMap::new();
    for item in stream {
        let Ok((_, raw, event)) = item else { break };
        exercise(&event, raw.body, &mut tables)?;
    }
    Ok(())
}

/// `body` framed as an event of `event_type` and decoded the way a file
/// reader decodes it.
fn exercise_body(event_type: u8, body: &[u8], tables: &mut HashMap<u64, TableMap>) -> Result<(), TestCaseError> {
    let framed = testkit::framed_event(event_type, 0, body);
    let raw = RawEvent::parse(&framed, true).expect("a freshly framed event parses");
    if let Ok(event) = Event::decode(&raw, &DecodeContext::default()) {
        exercise(&event, body, tables)?;
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    Overwrite(Index, u8),
    Truncate(Index),
    Insert(Index, Vec<u8>),
    Remove(Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Overwrite(i, b)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        1 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..9)).prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => (any::<Index>(), 1usize..9).prop_map(|(i, n)| Mutation::Remove(i, n)),
    ]
}

fn mutate(bytes: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for mutation in mutations {
        if out.is_empty() {
            break;
        }
        match mutation {
            Mutation::Overwrite(at, byte) => {
                let at = at.index(out.len());
                out[at] = *byte;
            }
            Mutation::Truncate(at) => out.truncate(at.index(out.len())),
            Mutation::Insert(at, extra) => {
                let at = at.index(out.len() + 1);
                out.splice(at..at, extra.iter().copied());
            }
            Mutation::Remove(at, count) => {
                let at = at.index(out.len());
                out.drain(at..(at + count).min(out.len()));
            }
        }
    }
    out
}

fn table_and_rows() -> impl Strategy<Value = (TableMap, Vec<RowsEvent>)> {
    common::specs(common::any_column_type(), 10).prop_flat_map(|specs| {
        (Just(specs.clone()), prop::collection::vec(common::row(&specs), 1..4)).prop_map(|(specs, rows)| {
            let map = TableMap::new(3, "db", "t", &specs, &[0]).unwrap();
            let pairs: Vec<_> = rows.iter().map(|r| (r.clone(), r.clone())).collect();
            let events = vec![
                RowsEvent::write(3, &map, &rows).unwrap(),
                RowsEvent::update(3, &map, &pairs).unwrap(),
                RowsEvent::delete(3, &map, &rows).unwrap(),
            ];
            (map, events)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), event_type in prop_oneof![Just(19u8), 30u8..=32, any::<u8>()]) {
        let context = DecodeContext::default();
        for checksum in [false, true] {
            if let Ok(raw) = RawEvent::parse(&bytes, checksum) {
                let _ = Event::decode(&raw, &context);
            }
        }
        let mut tables = HashMap::new();
        exercise_body(event_type, &bytes, &mut tables)?;
        if let Ok(map) = TableMap::decode_body(&bytes) {
            for kind in [RowsKind::Write, RowsKind::Update, RowsKind::Delete] {
                if let Ok(rows) = RowsEvent::decode_body(kind, &bytes) {
                    let _ = rows.decode_rows(&map);
                }
            }
        }
        let mut file = BINLOG_MAGIC.to_vec();
        file.extend_from_slice(&bytes);
        exercise_file(&file)?;
    }

    #[test]
    fn mutated_events_never_panic(
        (map, rows_events) in table_and_rows(),
        table_mutations in prop::collection::vec(mutation(), 0..4),
        rows_mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut tables = HashMap::new();
        let mut map_body = Vec::new();
        map.encode_body(&mut map_body);
        exercise_body(19, &mutate(&map_body, &table_mutations), &mut tables)?;
        // Rows are decoded with the original map too, so mutated rows meet
        // a valid definition and valid rows meet a mutated one.
        let original = tables.entry(map.table_id).or_insert(map.clone()).clone();
        for rows in &rows_events {
            let mut body = Vec::new();
            rows.encode_body(&mut body);
            let mutated = mutate(&body, &rows_mutations);
            exercise_body(rows.event_type(), &mutated, &mut tables)?;
            let _ = rows.decode_rows(&original);
            if let Ok(decoded) = RowsEvent::decode_body(rows.kind, &mutated) {
                let _ = decoded.decode_rows(&map);
            }
        }
    }

    #[test]
    fn mutated_files_never_panic((map, rows_events) in table_and_rows(), mutations in prop::collection::vec(mutation(), 1..6)) {
        // Without checksums a flipped byte reaches the decoders instead of
        // failing the CRC.
        let identity = WriterIdentity { server_id: 1, checksum: false };
        let mut builder = BinlogBuilder::with_identity(identity, &binlog_format::GtidSet::new());
        let preamble_length = builder.bytes.len();
        let mut events = vec![common::begin()];
        for rows in rows_events {
            events.push(Event::TableMap(map.clone()));
            events.push(rows.into_event());
        }
        events.push(common::xid(9));
        builder.append_transaction(1, &events);
        let file = builder.bytes;
        exercise_file(&file)?;
        let mut mutated = file[..preamble_length].to_vec();
        mutated.extend(mutate(&file[preamble_length..], &mutations));
        exercise_file(&mutated)?;
    }

    #[test]
    fn mutated_files_of_every_event_kind_never_panic(v0 in any::<bool>(), mutations in prop::collection::vec(mutation(), 1..6)) {
        // Without checksums, so that mutations reach the decoders.
        let file = if v0 { mysql_51_pre_ga_file(binlog_format::RowsVersion::V0) } else { mysql_84_event_kinds_file_with(false) };
        exercise_file(&file)?;
        // The Format_description stays whole: it says how to read the rest.
        let format_end = 4 + u32::from_le_bytes(file[13..17].try_into().unwrap()) as usize;
        let mut mutated = file[..format_end].to_vec();
        mutated.extend(mutate(&file[format_end..], &mutations));
        exercise_file(&mutated)?;
    }
}
