//! Binlog files built event by event with the format crate's encoders, for
//! tests that read, verify, serve or corrupt them.

use std::path::{Path, PathBuf};

use binlog_format::constants::{BINLOG_MAGIC, LOG_EVENT_IGNORABLE_F, SERVER_VERSION_ID};
use binlog_format::events::large_transaction_header::LARGE_TRANSACTION_HEADER_VERSION;
use binlog_format::events::{GtidEvent, LargeTransactionHeaderEvent, QueryEvent, RotateEvent, TransactionPayloadEvent, XidEvent};
use binlog_format::file::{append_event, file_preamble, WriterIdentity};
use binlog_format::frame::{encode_event, peek_event_size};
use binlog_format::{Event, EventHeader, Gtid, GtidSet};

use crate::SOURCE_UUID;

/// The server_id every event of a built file carries.
pub const SERVER_ID: u32 = 7;
/// Every event's header timestamp, and the Gtid events' commit time (in
/// microseconds, plus 123456): 2024-05-23 10:16:02 UTC.
pub const TIMESTAMP: u32 = 1_716_459_362;

/// One event of type `event_type` framed around a raw `body`, as a source
/// sends it and a relay log holds it: timestamp 1, server_id 1, log_pos 0
/// (`binlog_format::frame::set_log_pos` places it), a CRC32 footer.
pub fn framed_event(event_type: u8, flags: u16, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let header = EventHeader { timestamp: 1, event_type, server_id: 1, event_size: 0, log_pos: 0, flags };
    encode_event(header, body, true, &mut out);
    out
}

/// A binlog file under construction, with the offset of every event. Its
/// transactions carry `SOURCE_UUID` GTIDs and one logical clock, one
/// transaction per commit group.
pub struct BinlogBuilder {
    pub bytes: Vec<u8>,
    pub identity: WriterIdentity,
    /// (offset, type code) of every event after the magic.
    pub events: Vec<(u64, u8)>,
    sequence_number: i64,
}

impl BinlogBuilder {
    /// Magic, Format_description (flagged in use) and Previous_gtids.
    pub fn new(checksum: bool, previous: &GtidSet) -> BinlogBuilder {
        BinlogBuilder::with_identity(WriterIdentity { server_id: SERVER_ID, checksum }, previous)
    }

    /// [`BinlogBuilder::new`] as the server `identity` writes it.
    pub fn with_identity(identity: WriterIdentity, previous: &GtidSet) -> BinlogBuilder {
        let bytes = file_preamble(TIMESTAMP, previous, identity);
        let mut builder = BinlogBuilder { bytes, identity, events: Vec::new(), sequence_number: 0 };
        // Recover the preamble's two event offsets from their sizes.
        let mut offset = 4u64;
        while (offset as usize) < builder.bytes.len() {
            let at = offset as usize;
            let size = peek_event_size(&builder.bytes[at..]).expect("a whole header");
            builder.events.push((offset, EventHeader::decode(&builder.bytes[at..]).expect("a whole header").event_type));
            offset += size as u64;
        }
        builder
    }

    /// The magic alone: the caller writes its own Format_description (a
    /// file as another server writes it).
    pub fn magic_only(identity: WriterIdentity) -> BinlogBuilder {
        BinlogBuilder { bytes: BINLOG_MAGIC.to_vec(), identity, events: Vec::new(), sequence_number: 0 }
    }

    pub fn offset(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Appends one event; returns its offset.
    pub fn push(&mut self, event: &Event, flags: u16) -> u64 {
        let offset = self.offset();
        append_event(&mut self.bytes, offset, event, TIMESTAMP, flags, self.identity);
        self.events.push((offset, event.event_type()));
        offset
    }

    /// Bytes `event` takes in this file.
    pub fn event_size(&self, event: &Event) -> u64 {
        let mut body = Vec::new();
        event.encode_body(&mut body);
        19 + body.len() as u64 + if self.identity.checksum { 4 } else { 0 }
    }

    /// A Gtid event for transaction `gno` whose transaction_length covers
    /// itself plus `rest_bytes`.
    pub fn gtid_event(&mut self, gno: u64, rest_bytes: u64) -> Event {
        self.sequence_number += 1;
        let mut gtid = GtidEvent {
            flags: 0,
            gtid: Gtid::new(SOURCE_UUID, gno),
            last_committed: self.sequence_number - 1,
            sequence_number: self.sequence_number,
            immediate_commit_timestamp_us: TIMESTAMP as u64 * 1_000_000 + 123_456,
            original_commit_timestamp_us: None,
            transaction_length: 0,
            immediate_server_version: SERVER_VERSION_ID,
            original_server_version: None,
            commit_group_ticket: None,
            layout: binlog_format::events::gtid::GtidLayout::ServerVersions,
        };
        // The length's own encoding width depends on its value: iterate.
        loop {
            let length = self.event_size(&Event::Gtid(gtid.clone())) + rest_bytes;
            if length == gtid.transaction_length {
                break;
            }
            gtid.transaction_length = length;
        }
        Event::Gtid(gtid)
    }

    /// A Gtid event for `gno`, then `events` as given (the caller's BEGIN
    /// ... Xid). Returns the Gtid's offset.
    pub fn append_transaction(&mut self, gno: u64, events: &[Event]) -> u64 {
        let rest_bytes = events.iter().map(|event| self.event_size(event)).sum();
        let gtid = self.gtid_event(gno, rest_bytes);
        let start = self.push(&gtid, 0);
        for event in events {
            self.push(event, 0);
        }
        start
    }

    /// A Gtid event for `gno`, then one Transaction_payload holding
    /// `events` (each framed without a checksum, log_pos 0), compressed
    /// with zstd at `level` or stored as is when `None`: a transaction as
    /// MySQL 8.0.20+ writes it with `binlog_transaction_compression=ON`.
    /// Returns the Gtid's offset.
    pub fn append_compressed_transaction(&mut self, gno: u64, events: &[Event], level: Option<i32>) -> u64 {
        let mut inner = Vec::new();
        for event in events {
            let mut body = Vec::new();
            event.encode_body(&mut body);
            let header = EventHeader {
                timestamp: TIMESTAMP,
                event_type: event.event_type(),
                server_id: self.identity.server_id,
                event_size: 0,
                log_pos: 0,
                flags: 0,
            };
            encode_event(header, &body, false, &mut inner);
        }
        let payload = TransactionPayloadEvent::new(&inner, level).expect("zstd compresses a transaction");
        self.append_transaction(gno, &[Event::TransactionPayload(payload)])
    }

    /// Gtid, BEGIN, `body`, Xid: one transaction. Returns the Gtid's offset.
    pub fn transaction(&mut self, gno: u64, body: &[Event], xid: u64) -> u64 {
        let mut events = vec![Event::Query(QueryEvent::new(11, "shop", "BEGIN"))];
        events.extend(body.iter().cloned());
        events.push(Event::Xid(XidEvent { xid }));
        self.append_transaction(gno, &events)
    }

    /// Gtid + one DDL statement.
    pub fn ddl(&mut self, gno: u64, statement: &str) -> u64 {
        self.append_transaction(gno, &[Event::Query(QueryEvent::new(11, "shop", statement))])
    }

    /// A Large_transaction_header naming `terminating_offset`, flagged
    /// ignorable as BOLT writes it.
    pub fn large_transaction_header(&mut self, terminating_offset: u64, terminating_type: u8) -> u64 {
        let event = Event::LargeTransactionHeader(LargeTransactionHeaderEvent {
            version: LARGE_TRANSACTION_HEADER_VERSION,
            terminating_event_offset: terminating_offset,
            terminating_event_type: terminating_type,
            padding_length: 16,
        });
        self.push(&event, LOG_EVENT_IGNORABLE_F)
    }

    pub fn rotate(&mut self, next_file: &str) -> u64 {
        self.push(&Event::Rotate(RotateEvent { position: 4, next_file: next_file.to_string() }), 0)
    }

    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, &self.bytes).unwrap();
        path
    }
}
