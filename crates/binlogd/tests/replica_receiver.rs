//! The replica pipeline (receiver, memory relay log, boundary queue,
//! coordinator, workers) against a live `binlogd serve`, with a recording
//! applier: every transaction arrives exactly once and in order, across a
//! source restart and from a GTID set; a wrong password gives 1045.

mod support;

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog_format::frame::RawEvent;
use binlog_format::gtid_set::{Gtid, GtidSet};
use binlog_format::{Event, EventType};
use parking_lot::Mutex;
use protocol::MysqlError;
use replica::relay::RelayLogConfig;
use replica::{
    Applier, BoundaryEntry, BoundaryQueue, Coordinator, CoordinatorConfig, CoordinatorMode, IoState, Receiver, ReceiverConfig, RelayLog,
    SourceAddress, SourceClient, StartPosition, TransactionEvents, WorkerApplier,
};
use support::ServerProcess;

const REPLICA_SERVER_ID: u32 = 2;

/// GTIDs in commit order, and any transaction whose events were not a
/// well-formed transaction starting with its own Gtid event.
#[derive(Default)]
struct Record {
    committed: Vec<Gtid>,
    malformed: Vec<String>,
    rows_events: u64,
}

struct RecordingApplier(Arc<Mutex<Record>>);

impl Applier for RecordingApplier {
    fn worker(&self, _: usize) -> Box<dyn WorkerApplier> {
        Box::new(RecordingWorker(self.0.clone()))
    }
}

struct RecordingWorker(Arc<Mutex<Record>>);

impl WorkerApplier for RecordingWorker {
    fn apply(&mut self, entry: &BoundaryEntry, events: &mut TransactionEvents<'_>) -> Result<(), MysqlError> {
        // Decode every event, as the database applier will.
        let mut first = true;
        let mut rows_events = 0;
        while let Some(bytes) = events.next_event()? {
            let raw = RawEvent::parse(bytes, entry.format.format.has_checksum())
                .map_err(|error| MysqlError::new(1594, "HY000", error.to_string()))?;
            let event = Event::decode(&raw, &entry.format).map_err(|error| MysqlError::new(1594, "HY000", error.to_string()))?;
            if first && !matches!(&event, Event::Gtid(gtid) if Some(gtid.gtid) == entry.gtid) {
                self.0.lock().malformed.push(format!("{}: starts with {}", entry.gtid_text(), event.type_name()));
            }
            if matches!(raw.header.event_type, t if t == EventType::WriteRows as u8 || t == EventType::UpdateRows as u8 || t == EventType::DeleteRows as u8)
            {
                rows_events += 1;
            }
            first = false;
        }
        self.0.lock().rows_events += rows_events;
        Ok(())
    }

    fn commit(&mut self, entry: &BoundaryEntry) -> Result<(), MysqlError> {
        self.0.lock().committed.push(entry.gtid.expect("a binlogd source sends GTIDs"));
        Ok(())
    }

    fn rollback(&mut self, _: &BoundaryEntry) {}
}

struct Pipeline {
    receiver: Receiver,
    coordinator: Coordinator,
    record: Arc<Mutex<Record>>,
    relay: Arc<RelayLog>,
    _spill_directory: tempfile::TempDir,
}

fn source(port: u16, password: &str) -> SourceAddress {
    SourceAddress { host: "127.0.0.1".into(), port, user: "repl".into(), password: password.into() }
}

fn start_pipeline(port: u16, start: GtidSet, mode: CoordinatorMode) -> Pipeline {
    start_pipeline_at(port, StartPosition::Gtids(start), mode)
}

fn start_pipeline_at(port: u16, start: StartPosition, mode: CoordinatorMode) -> Pipeline {
    let spill_directory = tempfile::tempdir().unwrap();
    let relay_config = RelayLogConfig::memory(32 << 20, 1 << 20, spill_directory.path().to_path_buf()).unwrap();
    let relay = Arc::new(RelayLog::open(&relay_config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(1024));
    let mut config = ReceiverConfig::new(source(port, "repl-pw"), REPLICA_SERVER_ID, start);
    config.connect_retry = Duration::from_millis(200);
    config.retry_count = 100;
    config.heartbeat_period = Duration::from_secs(1);
    config.net_timeout = Duration::from_secs(10);
    config.replica_uuid = "00000000-0000-0000-0000-0000000000aa".into();
    let record = Arc::new(Mutex::new(Record::default()));
    let receiver = Receiver::start(config, relay.clone(), queue.clone());
    let coordinator = Coordinator::start(
        CoordinatorConfig { workers: 4, preserve_commit_order: true, mode },
        relay.clone(),
        queue,
        Arc::new(RecordingApplier(record.clone())),
    );
    Pipeline { receiver, coordinator, record, relay, _spill_directory: spill_directory }
}

fn executed(server: &ServerProcess) -> GtidSet {
    GtidSet::from_str(server.query(None, "SELECT @@GLOBAL.GTID_EXECUTED").trim()).unwrap()
}

/// `count` transactions of a few rows each, and one larger than the
/// pipeline's 1 MiB spill threshold.
fn workload(server: &ServerProcess, first_id: u64, count: u64) {
    let mut sql = String::new();
    for id in first_id..first_id + count {
        sql.push_str(&format!(
            "BEGIN; INSERT INTO shop.t VALUES ({id}, 'a'), ({}, 'b'); UPDATE shop.t SET v = 'c' WHERE id = {id}; COMMIT;",
            id + 1_000_000
        ));
    }
    sql.push_str(&format!("INSERT INTO shop.t VALUES ({}, REPEAT('x', 3000000));", first_id + 2_000_000));
    server.query(None, &sql);
}

/// Waits until the applier committed exactly `expected`, in order.
fn wait_for(pipeline: &Pipeline, expected: &[Gtid], server: &ServerProcess) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let committed = pipeline.record.lock().committed.clone();
        if committed.len() >= expected.len() || Instant::now() > deadline {
            assert_eq!(
                committed,
                expected,
                "exactly once, in order; receiver {:?}; log {}",
                pipeline.receiver.status(),
                std::fs::read_to_string(&server.log).unwrap_or_default().lines().rev().take(20).collect::<Vec<_>>().join("\n")
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn gtids(set: &GtidSet) -> Vec<Gtid> {
    set.intervals()
        .flat_map(|(tsid, intervals)| intervals.iter().flat_map(move |&(start, end)| (start..end).map(move |gno| Gtid::tagged(*tsid, gno))))
        .collect()
}

fn start_source() -> ServerProcess {
    let server = ServerProcess::start();
    server.query(None, "CREATE USER 'repl'@'%' IDENTIFIED BY 'repl-pw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'");
    server.query(None, "CREATE DATABASE shop; CREATE TABLE shop.t (id BIGINT PRIMARY KEY, v LONGTEXT)");
    server
}

#[test]
fn every_transaction_once_in_order_across_a_source_restart() {
    let mut server = start_source();
    workload(&server, 1, 40);
    let pipeline = start_pipeline(server.port, GtidSet::new(), CoordinatorMode::BoundaryQueue);
    let before_restart = executed(&server);
    wait_for(&pipeline, &gtids(&before_restart), &server);
    assert_eq!(pipeline.receiver.status().connections, 1);

    // The source goes away and comes back; the receiver reconnects and
    // asks from what it retrieved.
    server.restart();
    workload(&server, 100, 40);
    let after_restart = executed(&server);
    wait_for(&pipeline, &gtids(&after_restart), &server);
    let status = pipeline.receiver.status();
    assert!(status.connections >= 2, "reconnected: {status:?}");
    assert_eq!(status.state, IoState::Yes);
    assert_eq!(status.retrieved_gtid_set, after_restart);
    assert!(status.source_log_file.starts_with("binlog."), "{status:?}");
    let record = pipeline.record.lock();
    assert!(record.malformed.is_empty(), "{:?}", record.malformed);
    assert!(record.rows_events >= 80 * 2, "rows events decoded: {}", record.rows_events);
    drop(record);
    let relay = pipeline.relay.stats();
    assert_eq!(relay.spilled_transactions_total, 2, "the 3 MB inserts spill past the 1 MiB threshold: {relay:?}");
    assert_eq!((relay.memory_transactions, relay.spilled_transactions), (0, 0), "all applied and released");
    let coordinator_status = pipeline.coordinator.status();
    assert!(coordinator_status.last_error.is_none());
    assert_eq!(coordinator_status.transactions_applied, after_restart.count());
    let receiver = pipeline.receiver.stop();
    assert_eq!(receiver.state, IoState::No);
    let outcome = pipeline.coordinator.stop();
    assert!(outcome.error.is_none() && outcome.unapplied.is_empty());
}

#[test]
fn auto_position_from_a_gtid_set_sends_only_what_is_missing() {
    let server = start_source();
    workload(&server, 1, 30);
    let all = gtids(&executed(&server));
    let (have, missing) = all.split_at(all.len() / 2);
    let mut start = GtidSet::new();
    for gtid in have {
        start.add(*gtid);
    }
    let pipeline = start_pipeline(server.port, start, CoordinatorMode::EventScan);
    wait_for(&pipeline, missing, &server);
    // Nothing more comes: the set was honoured, not just a prefix skipped.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(pipeline.record.lock().committed.len(), missing.len());
}

#[test]
fn file_and_position_across_a_source_restart() {
    let mut server = start_source();
    workload(&server, 1, 20);
    let first_file = server.query(None, "SHOW BINARY LOGS").lines().next().unwrap().split('\t').next().unwrap().to_owned();
    let start = StartPosition::FilePosition { file_name: first_file, position: 4 };
    let pipeline = start_pipeline_at(server.port, start, CoordinatorMode::BoundaryQueue);
    wait_for(&pipeline, &gtids(&executed(&server)), &server);
    // The reconnect asks from the end of the last complete transaction in
    // the old file; the source goes on into the files written since.
    server.restart();
    workload(&server, 100, 20);
    wait_for(&pipeline, &gtids(&executed(&server)), &server);
    let status = pipeline.receiver.status();
    assert!(status.connections >= 2, "{status:?}");
    assert!(pipeline.record.lock().malformed.is_empty());
}

#[test]
fn a_wrong_password_gives_1045_with_mysqls_message() {
    let server = start_source();
    let error = SourceClient::connect(&source(server.port, "wrong"), Duration::from_secs(10)).err().expect("refused");
    assert_eq!((error.code, error.sql_state_str()), (1045, "28000"));
    assert!(
        error.message.starts_with("Access denied for user 'repl'@'") && error.message.ends_with("' (using password: YES)"),
        "{}",
        error.message
    );

    let spill_directory = tempfile::tempdir().unwrap();
    let relay =
        Arc::new(RelayLog::open(&RelayLogConfig::memory(32 << 20, 1 << 20, spill_directory.path().to_path_buf()).unwrap()).unwrap());
    let mut config = ReceiverConfig::new(source(server.port, "wrong"), REPLICA_SERVER_ID, StartPosition::Gtids(GtidSet::new()));
    config.connect_retry = Duration::from_millis(50);
    config.retry_count = 2;
    let receiver = Receiver::start(config, relay, Arc::new(BoundaryQueue::new(16)));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !receiver.is_finished() {
        assert!(Instant::now() < deadline, "the receiver kept retrying past its retry count");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = receiver.stop();
    assert_eq!(status.state, IoState::No);
    let (error, _) = status.last_error.expect("Last_IO_Error");
    assert_eq!(error.code, 1045);
    let prefix = format!("Error connecting to source 'repl@127.0.0.1:{}'. This was attempt 2/2, with a delay of 0 seconds between attempts. Message: Access denied for user 'repl'@'", server.port);
    assert!(error.message.starts_with(&prefix), "{}", error.message);
}
