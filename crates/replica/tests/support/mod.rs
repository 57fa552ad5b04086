//! Shared by the replica crate's tests: transactions as real binlog events
//! (Gtid, Query BEGIN, filler rows, Xid), a writer that plays the
//! receiver's part, and a recording applier.
#![allow(dead_code)]

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use binlog_format::events::gtid::GtidEvent;
use binlog_format::events::query::QueryEvent;
use binlog_format::events::simple::XidEvent;
use binlog_format::events::DecodeContext;
use binlog_format::gtid_set::Gtid;
use binlog_format::EventType;
use parking_lot::Mutex;
use protocol::MysqlError;
use replica::relay::events::TransactionEvents;
use replica::{Applier, BoundaryEntry, BoundaryQueue, RelayLog, StopFlag, WorkerApplier};

pub use testkit::SOURCE_UUID;

pub fn event(event_type: u8, body: &[u8]) -> Vec<u8> {
    testkit::framed_event(event_type, 0, body)
}

pub fn gtid_event(gno: u64, last_committed: i64, sequence_number: i64) -> Vec<u8> {
    let gtid = GtidEvent {
        flags: 0,
        gtid: Gtid::new(SOURCE_UUID, gno),
        last_committed,
        sequence_number,
        immediate_commit_timestamp_us: 1,
        original_commit_timestamp_us: None,
        transaction_length: 0,
        immediate_server_version: 80400,
        original_server_version: None,
        commit_group_ticket: None,
        layout: binlog_format::events::gtid::GtidLayout::ServerVersions,
    };
    let mut body = Vec::new();
    gtid.encode_body(&mut body);
    event(EventType::Gtid as u8, &body)
}

pub fn query_event(text: &str) -> Vec<u8> {
    let mut body = Vec::new();
    QueryEvent::new(7, "test", text).encode_body(&mut body);
    event(EventType::Query as u8, &body)
}

/// A transaction: Gtid, BEGIN, filler events (Rows_query) of
/// `filler_bytes` in total in pieces of at most 8 KiB, Xid.
pub fn transaction(gno: u64, last_committed: i64, sequence_number: i64, filler_bytes: usize) -> Vec<Vec<u8>> {
    let mut events = vec![gtid_event(gno, last_committed, sequence_number), query_event("BEGIN")];
    let mut left = filler_bytes;
    let mut fill = gno as u8;
    while left > 0 {
        let piece = left.min(8 << 10);
        events.push(event(EventType::RowsQuery as u8, &vec![fill; piece]));
        fill = fill.wrapping_add(1);
        left -= piece;
    }
    let mut xid = Vec::new();
    XidEvent { xid: gno }.encode_body(&mut xid);
    events.push(event(EventType::Xid as u8, &xid));
    events
}

/// Writes one transaction into the relay log and queues its entry, as the
/// receiver does.
pub fn write_transaction(
    relay: &RelayLog,
    queue: &BoundaryQueue,
    index: u64,
    gno: u64,
    clock: (i64, i64),
    events: &[Vec<u8>],
    stop: &StopFlag,
) {
    let mut open = relay.begin().unwrap();
    for event in events {
        relay.append(&mut open, event, stop).map_err(|error| format!("{error:?}")).unwrap();
    }
    let location = relay.finish(open).unwrap();
    let entry = BoundaryEntry {
        index,
        gtid: Some(Gtid::new(SOURCE_UUID, gno)),
        mariadb_gtid: None,
        last_committed: clock.0,
        sequence_number: clock.1,
        connection_epoch: 1,
        size_bytes: location.length_bytes(),
        location,
        source_log_file: Arc::from("binlog.000001"),
        source_end_log_pos: 0,
        format: Arc::new(DecodeContext::default()),
        streamed_end: None,
    };
    queue.push(entry, stop).unwrap();
}

/// All events of a transaction read back.
pub fn read_back(events: &mut TransactionEvents<'_>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(event) = events.next_event().unwrap() {
        out.push(event.to_vec());
    }
    out
}

/// What the recording applier saw.
#[derive(Default)]
pub struct Record {
    /// GNOs in commit order.
    pub committed: Vec<u64>,
    pub committed_sequence_numbers: HashSet<i64>,
    /// Transactions that started before a dependency committed.
    pub violations: Vec<String>,
    /// GNOs rolled back.
    pub rolled_back: Vec<u64>,
    /// Transactions whose bytes did not match what was written.
    pub bad_bytes: Vec<u64>,
}

/// Records commits, checks dependencies at apply time, sleeps a random
/// time in apply, and fails the transaction `fail_gno` with 1062.
pub struct RecordingApplier {
    pub record: Arc<Mutex<Record>>,
    pub fail_gno: Option<u64>,
    pub delay_us_max: u64,
    /// Expected bytes per GNO (checked when present).
    pub expected: Arc<Mutex<std::collections::HashMap<u64, Vec<Vec<u8>>>>>,
}

impl RecordingApplier {
    pub fn new(delay_us_max: u64, fail_gno: Option<u64>) -> RecordingApplier {
        RecordingApplier { record: Arc::default(), fail_gno, delay_us_max, expected: Arc::default() }
    }
}

impl Applier for RecordingApplier {
    fn worker(&self, _worker_index: usize) -> Box<dyn WorkerApplier> {
        Box::new(RecordingWorker {
            record: self.record.clone(),
            fail_gno: self.fail_gno,
            delay_us_max: self.delay_us_max,
            expected: self.expected.clone(),
        })
    }
}

struct RecordingWorker {
    record: Arc<Mutex<Record>>,
    fail_gno: Option<u64>,
    delay_us_max: u64,
    expected: Arc<Mutex<std::collections::HashMap<u64, Vec<Vec<u8>>>>>,
}

impl WorkerApplier for RecordingWorker {
    fn apply(&mut self, entry: &BoundaryEntry, events: &mut TransactionEvents<'_>) -> Result<(), MysqlError> {
        let gno = entry.gtid.unwrap().gno;
        {
            let mut record = self.record.lock();
            let missing: Vec<i64> =
                (1..=entry.last_committed).filter(|sequence| !record.committed_sequence_numbers.contains(sequence)).collect();
            if !missing.is_empty() {
                record.violations.push(format!("gno {gno} (last_committed {}) started before {missing:?} committed", entry.last_committed));
            }
        }
        let bytes = read_back(events);
        if let Some(expected) = self.expected.lock().get(&gno) {
            if *expected != bytes {
                self.record.lock().bad_bytes.push(gno);
            }
        }
        if self.delay_us_max > 0 {
            std::thread::sleep(Duration::from_micros(rand::random::<u64>() % self.delay_us_max));
        }
        if Some(gno) == self.fail_gno {
            return Err(MysqlError::new(1062, "23000", "Duplicate entry '1' for key 't.PRIMARY'"));
        }
        Ok(())
    }

    fn commit(&mut self, entry: &BoundaryEntry) -> Result<(), MysqlError> {
        let mut record = self.record.lock();
        record.committed.push(entry.gtid.unwrap().gno);
        record.committed_sequence_numbers.insert(entry.sequence_number);
        Ok(())
    }

    fn rollback(&mut self, entry: &BoundaryEntry) {
        self.record.lock().rolled_back.push(entry.gtid.unwrap().gno);
    }
}

/// Waits until `condition` holds, up to `timeout`.
pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    condition()
}
