//! A spilled transaction streamed to its worker: queued by the receiver's
//! intake as it spills, applied while it still arrives, committed once its
//! last event is in; cut off by a lost connection, rolled back and applied
//! once when it comes again; a stop while it arrives leaves it to the next
//! applier run.

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use binlog_format::frame::set_log_pos;
use parking_lot::Mutex;
use protocol::MysqlError;
use replica::intake::{Intake, SourcePosition as IntakePosition};
use replica::relay::events::TransactionEvents;
use replica::relay::RelayLogConfig;
use replica::{
    AppliedCheckpoint, AppliedPositions, Applier, BoundaryEntry, BoundaryQueue, Coordinator, CoordinatorConfig, CoordinatorMode,
    ReceiverStatus, RelayLog, SourcePosition, StopFlag, WorkerApplier,
};
use support::*;

const WAIT: Duration = Duration::from_secs(20);

/// What the streaming applier saw.
#[derive(Default)]
struct Seen {
    /// Events read so far by the current apply of each GNO.
    events_read: HashMap<u64, usize>,
    /// Every event read, per GNO, by its last apply.
    bytes: HashMap<u64, Vec<Vec<u8>>>,
    committed: Vec<u64>,
    rolled_back: Vec<u64>,
}

/// Records each event as soon as it reads it.
struct StreamingApplier(Arc<Mutex<Seen>>);

impl Applier for StreamingApplier {
    fn worker(&self, _worker_index: usize) -> Box<dyn WorkerApplier> {
        Box::new(StreamingWorker(self.0.clone()))
    }
}

struct StreamingWorker(Arc<Mutex<Seen>>);

impl WorkerApplier for StreamingWorker {
    fn apply(&mut self, entry: &BoundaryEntry, events: &mut TransactionEvents<'_>) -> Result<(), MysqlError> {
        let gno = entry.gtid.unwrap().gno;
        self.0.lock().events_read.insert(gno, 0);
        self.0.lock().bytes.insert(gno, Vec::new());
        while let Some(event) = events.next_event()? {
            let mut seen = self.0.lock();
            *seen.events_read.get_mut(&gno).unwrap() += 1;
            seen.bytes.get_mut(&gno).unwrap().push(event.to_vec());
        }
        Ok(())
    }

    fn commit(&mut self, entry: &BoundaryEntry) -> Result<(), MysqlError> {
        self.0.lock().committed.push(entry.gtid.unwrap().gno);
        Ok(())
    }

    fn rollback(&mut self, entry: &BoundaryEntry) {
        self.0.lock().rolled_back.push(entry.gtid.unwrap().gno);
    }
}

/// A receiver's intake over a 256 KiB memory relay log spilling past
/// 32 KiB, and a coordinator with two workers behind it.
struct Pipeline {
    _directory: tempfile::TempDir,
    relay: Arc<RelayLog>,
    queue: Arc<BoundaryQueue>,
    status: Mutex<ReceiverStatus>,
    stop: StopFlag,
    positions: Arc<AppliedPositions>,
    seen: Arc<Mutex<Seen>>,
    next_index: u64,
    last_complete: IntakePosition,
    /// Where the next transaction starts in the source's file.
    source_pos: u64,
}

impl Pipeline {
    fn new() -> Pipeline {
        let directory = tempfile::tempdir().unwrap();
        let config = RelayLogConfig::memory(32 << 20, 32 << 10, directory.path().to_path_buf()).unwrap();
        Pipeline {
            _directory: directory,
            relay: Arc::new(RelayLog::open(&config).unwrap()),
            queue: Arc::new(BoundaryQueue::new(100)),
            status: Mutex::new(ReceiverStatus::default()),
            stop: StopFlag::new(),
            positions: Arc::new(AppliedPositions::new(AppliedCheckpoint::default())),
            seen: Arc::default(),
            next_index: 0,
            last_complete: IntakePosition { file_name: "binlog.000001".into(), position: 4 },
            source_pos: 4,
        }
    }

    fn coordinator(&self) -> Coordinator {
        self.coordinator_in(CoordinatorMode::BoundaryQueue)
    }

    fn coordinator_in(&self, mode: CoordinatorMode) -> Coordinator {
        let config = CoordinatorConfig { workers: 2, mode, ..CoordinatorConfig::default() };
        let applier = Arc::new(StreamingApplier(self.seen.clone()));
        Coordinator::start_with_positions(config, self.relay.clone(), self.queue.clone(), applier, self.positions.clone())
    }

    /// A transaction placed in the source's file after the previous one.
    fn transaction(&mut self, gno: u64, last_committed: i64, sequence_number: i64, filler_bytes: usize) -> Vec<Vec<u8>> {
        let mut events = transaction(gno, last_committed, sequence_number, filler_bytes);
        for event in events.iter_mut() {
            self.source_pos += event.len() as u64;
            set_log_pos(event, self.source_pos as u32, true);
        }
        events
    }
}

fn send(intake: &mut Intake<'_>, events: &[Vec<u8>]) {
    for event in events {
        intake.take(event).unwrap();
    }
}

fn events_read(seen: &Mutex<Seen>, gno: u64) -> usize {
    seen.lock().events_read.get(&gno).copied().unwrap_or(0)
}

#[test]
fn a_spilled_transaction_is_applied_while_it_arrives_and_committed_once_complete() {
    let mut pipeline = Pipeline::new();
    let coordinator = pipeline.coordinator();
    let small = pipeline.transaction(1, 0, 1, 500);
    let large = pipeline.transaction(2, 1, 2, 256 << 10);
    let after = pipeline.transaction(3, 2, 3, 500);
    let half = large.len() / 2;
    {
        let Pipeline { relay, queue, status, stop, next_index, last_complete, seen, .. } = &mut pipeline;
        let mut intake = Intake::new(relay, queue, status, stop, true, 1, next_index, last_complete);
        send(&mut intake, &small);
        send(&mut intake, &large[..half]);
        assert!(
            wait_until(WAIT, || events_read(seen, 2) >= 1 && seen.lock().committed == [1]),
            "the worker reads the spilled transaction before its end arrived: {} events read",
            events_read(seen, 2)
        );
        // An event appended while the worker waits is visible to it at once.
        send(&mut intake, &large[half..half + 1]);
        assert!(wait_until(WAIT, || events_read(seen, 2) > half), "caught up: every event appended is read ({})", events_read(seen, 2));
        assert_eq!(seen.lock().committed, [1], "not committed before its last event");
        assert_eq!(status.lock().transactions_received, 1, "counted as received once complete");
        send(&mut intake, &large[half + 1..]);
        send(&mut intake, &after);
    }
    assert!(wait_until(WAIT, || pipeline.seen.lock().committed.len() == 3), "committed: {:?}", pipeline.seen.lock().committed);
    let outcome = coordinator.stop();
    assert!(outcome.error.is_none() && outcome.unapplied.is_empty(), "{outcome:?}");
    let seen = pipeline.seen.lock();
    assert_eq!(seen.committed, [1, 2, 3], "commit order kept");
    assert!(seen.rolled_back.is_empty());
    assert_eq!(seen.bytes[&2], large, "every event of the streamed transaction, once, in order");
    assert_eq!(outcome.status.transactions_applied, 3);
    let all_bytes: u64 = [&small, &large, &after].iter().flat_map(|events| events.iter()).map(|event| event.len() as u64).sum();
    assert_eq!(outcome.status.bytes_applied, all_bytes, "the streamed one counted whole");
    assert_eq!(pipeline.positions.low_water(), Some(SourcePosition { file: "binlog.000001".into(), pos: pipeline.source_pos }));
    let stats = pipeline.relay.stats();
    assert_eq!((stats.streamed_transactions_total, stats.spilled_transactions_total), (1, 1));
    assert_eq!((stats.spilled_transactions, stats.spilled_bytes, stats.memory_bytes), (0, 0, 0), "all released");
    assert_eq!(pipeline.queue.last_pushed_position(), Some((Arc::from("binlog.000001"), pipeline.source_pos)));
}

#[test]
fn a_streamed_transaction_cut_off_is_rolled_back_and_applied_once_when_it_comes_again() {
    let mut pipeline = Pipeline::new();
    let coordinator = pipeline.coordinator();
    let small = pipeline.transaction(1, 0, 1, 500);
    let small_end = pipeline.source_pos;
    let large = pipeline.transaction(2, 1, 2, 256 << 10);
    let after = pipeline.transaction(3, 2, 3, 500);
    let half = large.len() / 2;
    {
        let Pipeline { relay, queue, status, stop, next_index, last_complete, seen, .. } = &mut pipeline;
        let mut intake = Intake::new(relay, queue, status, stop, true, 1, next_index, last_complete);
        send(&mut intake, &small);
        send(&mut intake, &large[..half]);
        assert!(wait_until(WAIT, || events_read(seen, 2) >= 1), "streamed before the cut");
        // The connection ends in the middle of it.
        intake.abandon_open().unwrap();
    }
    assert!(wait_until(WAIT, || pipeline.seen.lock().rolled_back == [2]), "rolled back: {:?}", pipeline.seen.lock().rolled_back);
    assert_eq!(pipeline.queue.last_pushed_position(), Some((Arc::from("binlog.000001"), small_end)), "a reconnect asks from here");
    // The next connection sends it again, whole, and what follows.
    {
        let Pipeline { relay, queue, status, stop, next_index, last_complete, .. } = &mut pipeline;
        let mut intake = Intake::new(relay, queue, status, stop, true, 2, next_index, last_complete);
        send(&mut intake, &large);
        send(&mut intake, &after);
    }
    assert!(wait_until(WAIT, || pipeline.seen.lock().committed.len() == 3), "committed: {:?}", pipeline.seen.lock().committed);
    let outcome = coordinator.stop();
    assert!(outcome.error.is_none() && outcome.unapplied.is_empty(), "no apply error: {outcome:?}");
    let seen = pipeline.seen.lock();
    assert_eq!(seen.committed, [1, 2, 3], "each once, in order");
    assert_eq!(seen.rolled_back, [2], "the cut-off apply only");
    assert_eq!(seen.bytes[&2], large);
    assert_eq!(outcome.status.transactions_applied, 3, "the withdrawn one is not counted");
    assert_eq!(pipeline.positions.low_water(), Some(SourcePosition { file: "binlog.000001".into(), pos: pipeline.source_pos }));
    let stats = pipeline.relay.stats();
    assert_eq!(stats.streamed_transactions_total, 2);
    assert_eq!((stats.spilled_transactions, stats.spilled_bytes, stats.memory_bytes), (0, 0, 0), "all released");
}

#[test]
fn a_stop_while_it_arrives_leaves_it_to_the_next_applier_run() {
    let mut pipeline = Pipeline::new();
    let large = pipeline.transaction(1, 0, 1, 256 << 10);
    let half = large.len() / 2;
    let Pipeline { relay, queue, status, stop, next_index, last_complete, seen, positions, .. } = &mut pipeline;
    let mut intake = Intake::new(relay, queue, status, stop, true, 1, next_index, last_complete);
    let start = || {
        let config = CoordinatorConfig { workers: 2, ..CoordinatorConfig::default() };
        let applier = Arc::new(StreamingApplier(seen.clone()));
        Coordinator::start_with_positions(config, relay.clone(), queue.clone(), applier, positions.clone())
    };
    let coordinator = start();
    send(&mut intake, &large[..half]);
    assert!(wait_until(WAIT, || events_read(seen, 1) >= 1), "streaming");
    let outcome = coordinator.stop();
    assert!(outcome.error.is_none(), "a stop is no error: {outcome:?}");
    assert_eq!(outcome.unapplied.len(), 1, "left for the next run");
    assert_eq!(seen.lock().rolled_back, [1]);
    queue.push_front_all(outcome.unapplied);
    let coordinator = start();
    send(&mut intake, &large[half..]);
    assert!(wait_until(WAIT, || seen.lock().committed == [1]), "committed by the next run");
    let outcome = coordinator.stop();
    assert!(outcome.error.is_none() && outcome.unapplied.is_empty(), "{outcome:?}");
    assert_eq!(seen.lock().bytes[&1], large, "read again from its start");
}

#[test]
fn after_a_crash_that_committed_it_a_streamed_transaction_is_skipped_by_its_end() {
    let mut pipeline = Pipeline::new();
    let small = pipeline.transaction(1, 0, 1, 500);
    let small_end = pipeline.source_pos;
    let large = pipeline.transaction(2, 1, 2, 256 << 10);
    let large_end = pipeline.source_pos;
    let after = pipeline.transaction(3, 2, 3, 500);
    // Recovered: 1 and 2 committed before the crash, 2 beyond the mark;
    // the receiver resumes after 1.
    let at = |pos: u64| SourcePosition { file: "binlog.000001".into(), pos };
    pipeline.positions = Arc::new(AppliedPositions::new(AppliedCheckpoint { low_water: Some(at(small_end)), beyond: vec![at(large_end)] }));
    let coordinator = pipeline.coordinator();
    {
        let Pipeline { relay, queue, status, stop, next_index, last_complete, .. } = &mut pipeline;
        let mut intake = Intake::new(relay, queue, status, stop, true, 1, next_index, last_complete);
        send(&mut intake, &large);
        send(&mut intake, &after);
    }
    assert!(wait_until(WAIT, || pipeline.seen.lock().committed == [3]), "committed: {:?}", pipeline.seen.lock().committed);
    let outcome = coordinator.stop();
    assert!(outcome.error.is_none() && outcome.unapplied.is_empty(), "{outcome:?}");
    assert!(!pipeline.seen.lock().bytes.contains_key(&2), "not applied again");
    assert_eq!(pipeline.relay.stats().streamed_transactions_total, 1);
    assert_eq!(pipeline.positions.low_water(), Some(at(pipeline.source_pos)));
    assert!(!pipeline.positions.any_applied_beyond());
    drop(small);
}

#[test]
fn the_event_scanning_coordinator_waits_for_a_streamed_transaction_and_drops_a_cut_one() {
    let mut pipeline = Pipeline::new();
    let coordinator = pipeline.coordinator_in(CoordinatorMode::EventScan);
    let cut = pipeline.transaction(1, 0, 1, 256 << 10);
    pipeline.source_pos = 4;
    let large = pipeline.transaction(1, 0, 1, 256 << 10);
    let after = pipeline.transaction(2, 1, 2, 500);
    {
        let Pipeline { relay, queue, status, stop, next_index, last_complete, .. } = &mut pipeline;
        let mut intake = Intake::new(relay, queue, status, stop, true, 1, next_index, last_complete);
        send(&mut intake, &cut[..cut.len() / 2]);
        intake.abandon_open().unwrap();
        let mut intake = Intake::new(relay, queue, status, stop, true, 2, next_index, last_complete);
        send(&mut intake, &large);
        send(&mut intake, &after);
    }
    assert!(wait_until(WAIT, || pipeline.seen.lock().committed.len() == 2), "committed: {:?}", pipeline.seen.lock().committed);
    let outcome = coordinator.stop();
    assert!(outcome.error.is_none() && outcome.unapplied.is_empty(), "{outcome:?}");
    let seen = pipeline.seen.lock();
    assert_eq!(seen.committed, [1, 2]);
    assert!(seen.rolled_back.is_empty(), "the cut one was never dispatched");
    assert_eq!(seen.bytes[&1], large);
    let stats = pipeline.relay.stats();
    assert_eq!((stats.spilled_transactions, stats.spilled_bytes, stats.memory_bytes), (0, 0, 0), "all released");
}
