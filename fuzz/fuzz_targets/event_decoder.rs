//! Feeds arbitrary bytes to the event decoder as a binlog file: every
//! event `EventStream` frames is decoded (a Transaction_payload's events
//! and a MariaDB compressed event's plain one too), Table_maps are remembered by
//! table id, and every rows event (v0, v1, v2 with its extra row info,
//! Partial_update_rows with its JSON diffs) is decoded with its table's
//! map. Nothing may panic, and whatever decodes must re-encode to the bytes
//! it came from (a Heartbeat v2, whose unknown fields are skipped, to what
//! decodes to the same event; a Gtid event of any server's layout, 5.6's
//! to 8.4's tagged one, to what decodes to the same event in that layout).
//!
//! Run: `cargo +nightly fuzz run event_decoder` from this directory.
//! The first input byte picks whether the rest, parsed as one event,
//! carries a CRC32; the rest is also read as a file body (the binlog magic
//! is prepended so the fuzzer need not find it). Seeds written without
//! checksums (`seeds/event_decoder/`) let mutations reach the decoders
//! instead of failing CRC32; `event_kinds_no_checksum` and
//! `rows_v0_no_checksum` hold testkit's `event_kinds` files.

#![no_main]

use std::collections::HashMap;

use binlog_format::constants::BINLOG_MAGIC;
use binlog_format::events::{DecodeContext, GtidEvent, HeartbeatV2Event, TableMap};
use binlog_format::file::EventStream;
use binlog_format::{Event, RawEvent};
use libfuzzer_sys::fuzz_target;

/// Table maps remembered at once: a bound, like a real reader's.
const TABLE_MAPS_MAX: usize = 64;

fn check_reencodes(event: &Event, body: &[u8]) {
    let mut again = Vec::new();
    match event {
        Event::TableMap(map) => map.encode_body(&mut again),
        Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => rows.encode_body(&mut again),
        Event::TransactionPayload(_)
        | Event::MariadbCompressed(_)
        | Event::PartialUpdateRows(_)
        | Event::Incident(_)
        | Event::ViewChange(_)
        | Event::XaPrepare(_) => event.encode_body(&mut again),
        // MySQL's reader skips a heartbeat's unknown fields, and so does
        // ours: what it keeps must survive a round trip.
        Event::HeartbeatV2(heartbeat) => {
            heartbeat.encode_body(&mut again);
            let decoded = HeartbeatV2Event::decode_body(&again).expect("an encoded heartbeat decodes");
            assert_eq!(&decoded, heartbeat, "a decoded Heartbeat_v2 does not survive a round trip");
            return;
        }
        // A length-encoded integer may come in more bytes than needed, so
        // the bytes may differ; the event, and so its layout, may not.
        Event::Gtid(gtid) | Event::AnonymousGtid(gtid) => {
            gtid.encode_body(&mut again);
            assert_eq!(again.len(), gtid.body_length(), "a Gtid event's length disagrees with its encoding");
            let decoded = GtidEvent::decode_body_of_type(gtid.event_type(), &again).expect("an encoded Gtid event decodes");
            assert_eq!(&decoded, gtid, "a decoded Gtid event does not survive a round trip");
            return;
        }
        _ => return,
    }
    assert_eq!(again, body, "a decoded {} event re-encodes differently", event.type_name());
}

fn decode_file(file: &[u8]) {
    let Ok(stream) = EventStream::new(file) else { return };
    let mut tables: HashMap<u64, TableMap> = HashMap::new();
    for item in stream {
        let Ok((_, raw, event)) = item else { break };
        check_reencodes(&event, raw.body);
        // A compressed transaction's events, and a MariaDB compressed
        // event's plain one, go through the same decoders.
        let events = match event.into_uncompressed() {
            Event::TransactionPayload(payload) => match payload.events(&DecodeContext::default()) {
                Ok(inner) => inner.into_iter().map(|inner| inner.event).collect(),
                Err(_) => Vec::new(),
            },
            other => vec![other],
        };
        for event in events {
            observe(&mut tables, event);
        }
    }
}

/// Remembers a Table_map; decodes a rows event with its table's.
fn observe(tables: &mut HashMap<u64, TableMap>, event: Event) {
    match event {
        Event::TableMap(map) => {
            if tables.len() >= TABLE_MAPS_MAX {
                tables.clear();
            }
            tables.insert(map.table_id, map);
        }
        Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
            let _ = rows.extra_row_info();
            if let Some(map) = tables.get(&rows.table_id) {
                let _ = rows.decode_rows(map);
            }
        }
        Event::PartialUpdateRows(partial) => {
            let _ = partial.rows.extra_row_info();
            if let Some(map) = tables.get(&partial.rows.table_id) {
                let _ = partial.decode_rows(map);
            }
        }
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    // The input as one event, framed or not.
    if let Ok(raw) = RawEvent::parse(rest, mode & 1 == 1) {
        if let Ok(event) = Event::decode(&raw, &DecodeContext::default()) {
            check_reencodes(&event, raw.body);
        }
    }
    // The input as a file.
    let mut file = BINLOG_MAGIC.to_vec();
    file.extend_from_slice(rest);
    decode_file(&file);
});
