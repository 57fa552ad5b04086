//! The receiver's per-event work on a dump stream as a source sends it:
//! one queue entry per transaction, matching the transaction (GTID, clock,
//! bytes, size, source position); control events kept out of the relay
//! log; an incomplete transaction dropped.

mod support;

use binlog_format::constants::LOG_EVENT_ARTIFICIAL_F;
use binlog_format::events::format_description::FormatDescription;
use binlog_format::events::simple::{HeartbeatEvent, RotateEvent};
use binlog_format::frame::set_log_pos;
use binlog_format::gtid_set::{Gtid, GtidSet};
use binlog_format::EventType;
use parking_lot::Mutex;
use replica::intake::{Intake, SourcePosition};
use replica::relay::RelayLogConfig;
use replica::{BoundaryQueue, ReceiverStatus, RelayLog, StopFlag, TransactionLocation};
use support::*;

fn control(event_type: EventType, body: &[u8], flags: u16) -> Vec<u8> {
    testkit::framed_event(event_type as u8, flags, body)
}

fn rotate(file: &str) -> Vec<u8> {
    let mut body = Vec::new();
    RotateEvent { position: 4, next_file: file.to_owned() }.encode_body(&mut body);
    control(EventType::Rotate, &body, LOG_EVENT_ARTIFICIAL_F)
}

/// Gives each event the `log_pos` it would have in a file starting at
/// `start`; returns the end position.
fn place(events: &mut [Vec<u8>], start: u64) -> u64 {
    let mut position = start;
    for event in events.iter_mut() {
        position += event.len() as u64;
        set_log_pos(event, position as u32, true);
    }
    position
}

/// What an intake writes into: a 256 KiB memory relay log spilling past
/// 32 KiB (into a temporary directory), a queue, the receiver's status.
struct Fixture {
    _directory: tempfile::TempDir,
    relay: RelayLog,
    queue: BoundaryQueue,
    status: Mutex<ReceiverStatus>,
    stop: StopFlag,
}

impl Fixture {
    fn new() -> Fixture {
        let directory = tempfile::tempdir().unwrap();
        let config = RelayLogConfig::Memory {
            limit_bytes: 256 << 10,
            spill_threshold_bytes: 32 << 10,
            spill_directory: directory.path().to_path_buf(),
        };
        let relay = RelayLog::open(&config).unwrap();
        Fixture {
            _directory: directory,
            relay,
            queue: BoundaryQueue::new(100),
            status: Mutex::new(ReceiverStatus::default()),
            stop: StopFlag::new(),
        }
    }
}

#[test]
fn one_entry_per_transaction_matching_it() {
    let Fixture { _directory, relay, queue, status, stop } = Fixture::new();
    let mut next_index = 0;
    let mut last_complete = SourcePosition { file_name: String::new(), position: 4 };

    let mut fde = Vec::new();
    FormatDescription::binlogd(0, true).encode_body(&mut fde);
    let mut heartbeat = Vec::new();
    HeartbeatEvent { log_file: "binlog.000001".into() }.encode_body(&mut heartbeat);
    let mut previous_gtids = Vec::new();
    GtidSet::new().encode_previous_gtids_body(&mut previous_gtids);

    // The transactions: rows (BEGIN … Xid), a DDL (Gtid + one Query), a
    // large one that spills, one ended by Query COMMIT.
    let rows = transaction(1, 0, 1, 500);
    let ddl = vec![gtid_event(2, 1, 2), query_event("CREATE TABLE t (id INT PRIMARY KEY)")];
    let large = transaction(3, 2, 3, 100 << 10);
    let mut commit_by_query = transaction(4, 2, 4, 300);
    *commit_by_query.last_mut().unwrap() = query_event("COMMIT");
    let mut expected = [rows, ddl, large, commit_by_query];
    let mut position = 4 + 200;
    let mut ends = Vec::new();
    for transaction in expected.iter_mut() {
        position = place(transaction, position);
        ends.push(position);
    }
    let incomplete = transaction(5, 4, 5, 300);

    let mut stream = vec![
        rotate("binlog.000001"),
        control(EventType::FormatDescription, &fde, 0),
        control(EventType::PreviousGtids, &previous_gtids, 0),
    ];
    for (index, transaction) in expected.iter().enumerate() {
        stream.extend(transaction.iter().cloned());
        if index == 1 {
            stream.push(control(EventType::Heartbeat, &heartbeat, LOG_EVENT_ARTIFICIAL_F));
        }
    }
    stream.extend(incomplete.iter().take(3).cloned());

    {
        let mut intake = Intake::new(&relay, &queue, &status, &stop, true, 1, &mut next_index, &mut last_complete);
        for event in &stream {
            intake.take(event).unwrap();
        }
        intake.abandon_open().unwrap();
    }

    assert_eq!(queue.len(), 4, "one entry per complete transaction");
    let mut buffer = Vec::new();
    for (index, events) in expected.iter().enumerate() {
        let queued = queue.try_pop().unwrap();
        let gno = index as u64 + 1;
        assert_eq!(queued.is_streamed(), gno == 3, "the spilled one is queued as it spills");
        let entry = queued.completed().unwrap();
        assert_eq!(entry.index, index as u64);
        assert_eq!(entry.gtid, Some(Gtid::new(SOURCE_UUID, gno)));
        let (last_committed, sequence_number) = [(0, 1), (1, 2), (2, 3), (2, 4)][index];
        assert_eq!((entry.last_committed, entry.sequence_number), (last_committed, sequence_number), "gno {gno}");
        assert_eq!(entry.size_bytes, events.iter().map(|event| event.len() as u64).sum::<u64>(), "gno {gno}");
        assert_eq!(&*entry.source_log_file, "binlog.000001");
        assert_eq!(entry.source_end_log_pos, ends[index], "gno {gno}");
        assert_eq!(entry.connection_epoch, 1);
        assert_eq!(matches!(entry.location, TransactionLocation::Spilled(_)), gno == 3, "only gno 3 spills");
        assert_eq!(&read_back(&mut relay.events(&entry.location, &mut buffer, &stop).unwrap()), events, "gno {gno}: exactly its events");
        relay.release(&entry.location);
    }
    let stats = relay.stats();
    assert_eq!(stats.memory_bytes, 0, "the incomplete transaction was taken back");
    let status = status.lock();
    assert_eq!(status.retrieved_gtid_set.to_string(), format!("{SOURCE_UUID}:1-4"));
    assert_eq!(status.transactions_received, 4);
    assert_eq!(last_complete, SourcePosition { file_name: "binlog.000001".into(), position: ends[3] });
    assert_eq!(next_index, 4);
}

/// A binlog a real MariaDB 10.11 wrote (see the format crate's
/// tests/mariadb_source_binlog.rs for what it holds), as a dump sends it.
const MARIADB_FILE: &[u8] = include_bytes!("../../format/tests/data/mariadb-10.11-bin.000001");

/// The file's events as framed, and the events of each GTID's group.
fn mariadb_events_and_groups() -> (Vec<Vec<u8>>, Vec<Vec<Vec<u8>>>) {
    let mut events: Vec<Vec<u8>> = Vec::new();
    let mut at = 4;
    while at < MARIADB_FILE.len() {
        let size = binlog_format::frame::peek_event_size(&MARIADB_FILE[at..]).unwrap() as usize;
        events.push(MARIADB_FILE[at..at + size].to_vec());
        at += size;
    }
    let mut groups: Vec<Vec<Vec<u8>>> = Vec::new();
    for event in &events {
        match event[4] {
            t if t == EventType::MariadbGtid as u8 => groups.push(vec![event.clone()]),
            t if [EventType::Rotate, EventType::GtidList, EventType::BinlogCheckpoint, EventType::FormatDescription]
                .iter()
                .any(|&outside| t == outside as u8) => {}
            _ => groups.last_mut().expect("a GTID first").push(event.clone()),
        }
    }
    assert_eq!(groups.len(), 10);
    (events, groups)
}

/// A group cut short (its end never came) takes no sequence number: the
/// groups after it do not wait for it.
#[test]
fn an_abandoned_mariadb_group_takes_no_clock_slot() {
    let Fixture { _directory, relay, queue, status, stop } = Fixture::new();
    let (mut next_index, mut last_complete) = (0, SourcePosition { file_name: "mariadb-bin.000001".into(), position: 4 });
    let (events, groups) = mariadb_events_and_groups();
    let mut intake = Intake::new(&relay, &queue, &status, &stop, true, 1, &mut next_index, &mut last_complete);
    intake.take(&events[0]).unwrap(); // the FDE
                                      // 0-1-4 cut after two events, then 0-1-5 and 0-1-6 (commit id 26).
    for event in groups[3].iter().take(2).chain(groups[4].iter()).chain(groups[5].iter()) {
        intake.take(event).unwrap();
    }
    drop(intake);
    let clocks: Vec<(String, i64, i64)> =
        std::iter::from_fn(|| queue.try_pop()).map(|entry| (entry.gtid_text(), entry.last_committed, entry.sequence_number)).collect();
    assert_eq!(clocks, [("0-1-5".to_owned(), 0, 1), ("0-1-6".to_owned(), 0, 2)]);
    assert_eq!(relay.stats().memory_transactions, 2, "the cut group's bytes were taken back");
}

#[test]
fn a_mariadb_stream_gives_one_entry_per_event_group_with_commit_groups_as_clock() {
    let Fixture { _directory, relay, queue, status, stop } = Fixture::new();
    let mut next_index = 0;
    let mut last_complete = SourcePosition { file_name: "mariadb-bin.000001".into(), position: 4 };

    let (events, groups) = mariadb_events_and_groups();

    {
        let mut intake = Intake::new(&relay, &queue, &status, &stop, true, 1, &mut next_index, &mut last_complete);
        intake.take(&rotate("mariadb-bin.000001")).unwrap();
        for event in &events {
            intake.take(event).unwrap();
        }
    }

    assert_eq!(queue.len(), 10, "one entry per event group");
    // 1-3 DDL, 4 alone, 5 and 6 group-committed (commit id 26), 7 alone,
    // 8-9 DDL, 10 MyISAM (not transactional): only 6 shares 5's slot.
    let clocks = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (4, 6), (6, 7), (7, 8), (8, 9), (9, 10)];
    let mut buffer = Vec::new();
    for (index, group) in groups.iter().enumerate() {
        let entry = queue.try_pop().unwrap();
        let seq_no = index as u64 + 1;
        assert_eq!(entry.gtid, None, "no MySQL GTID");
        assert_eq!(entry.mariadb_gtid.map(|gtid| gtid.to_string()), Some(format!("0-1-{seq_no}")));
        assert_eq!(entry.gtid_text(), format!("0-1-{seq_no}"));
        assert_eq!((entry.last_committed, entry.sequence_number), clocks[index], "0-1-{seq_no}");
        assert_eq!(&read_back(&mut relay.events(&entry.location, &mut buffer, &stop).unwrap()), group, "0-1-{seq_no}: exactly its events");
        let last = group.last().unwrap();
        assert_eq!(entry.source_end_log_pos, u32::from_le_bytes(last[13..17].try_into().unwrap()) as u64);
        assert_eq!(&*entry.source_log_file, "mariadb-bin.000001");
        assert!(entry.format.format.is_mariadb());
        relay.release(&entry.location);
    }
    let status = status.lock();
    assert_eq!(status.gtid_io_pos.to_string(), "0-1-10");
    assert!(status.retrieved_gtid_set.is_empty());
    // The last complete group ends where the Rotate to the next file begins.
    let rotate_at = MARIADB_FILE.len() - events.last().unwrap().len();
    assert_eq!(last_complete, SourcePosition { file_name: "mariadb-bin.000001".into(), position: rotate_at as u64 });
    assert_eq!((status.source_log_file.as_str(), status.read_source_log_pos), ("mariadb-bin.000002", 4), "the Rotate moved on");
}
