//! binlogd's replica pipeline (receiver, memory relay log, boundary queue,
//! coordinator with 4 workers) receiving from a real MariaDB 10.11 source
//! started by the test (`--log-bin --binlog-format=ROW --server-id=1`, on
//! loopback; `.ci/run` installs mariadb-server), with a recording applier
//! that decodes every transaction's events as the database applier will:
//! MariaDB GTID events, Annotate_rows, Table_map, rows events v1, DDL
//! Queries with MariaDB's status variables.
//!
//! Checked: every transaction arrives exactly once and in the source's
//! order with the values the statements wrote (UNSIGNED, VARCHAR,
//! DECIMAL, DATETIME, TEXT, NULLs); two transactions MariaDB committed in
//! one group share a logical-clock slot; across a restart of the source
//! the receiver resumes from the end of the last complete transaction
//! (file and position) and nothing is lost or repeated; Source_Log_File /
//! Read_Source_Log_Pos, the applier's position and Gtid_IO_Pos end where
//! the source's binlog ends; a second receiver positioned by MariaDB GTID
//! (`@slave_connect_state`) gets exactly the transactions after it, also
//! across a source restart.

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog_format::events::table_map_metadata::OptionalMetadata;
use binlog_format::frame::RawEvent;
use binlog_format::{Event, RowChange, TableMap, Value};
use parking_lot::Mutex;
use protocol::MysqlError;
use replica::relay::RelayLogConfig;
use replica::{
    Applier, BoundaryEntry, BoundaryQueue, Coordinator, CoordinatorConfig, CoordinatorMode, IoState, MariadbGtidPosition, Receiver,
    ReceiverConfig, RelayLog, SourceAddress, StartPosition, TransactionEvents, WorkerApplier,
};
use support::mariadb::MariaDb;

const REPLICA_SERVER_ID: u32 = 2;

/// One applied transaction as the recording applier decoded it.
#[derive(Debug, Clone, PartialEq)]
struct Applied {
    gtid: String,
    last_committed: i64,
    sequence_number: i64,
    /// Row changes as (table, change), in event order.
    rows: Vec<(String, RowChange)>,
    /// Query events other than BEGIN/COMMIT (the DDL).
    statements: Vec<String>,
    annotations: usize,
}

#[derive(Default)]
struct Record {
    committed: Vec<Applied>,
    problems: Vec<String>,
}

/// UNSIGNED columns per table, as the replica's own tables would say
/// (MariaDB sends no SIGNEDNESS metadata by default: binlog_row_metadata
/// is NO_LOG).
fn unsigned_columns(table: &str) -> &'static [bool] {
    match table {
        "items" => &[true, true, true, false, false, false, false],
        _ => &[],
    }
}

fn with_local_signedness(map: &TableMap) -> TableMap {
    let unsigned = unsigned_columns(&String::from_utf8_lossy(&map.table));
    let mut map = map.clone();
    map.optional_metadata.retain(|field| !matches!(field, OptionalMetadata::Signedness(_)));
    let flags = map
        .columns
        .iter()
        .enumerate()
        .filter(|(_, column)| column.column_type.is_numeric())
        .map(|(index, _)| unsigned.get(index).copied().unwrap_or(false))
        .collect();
    map.optional_metadata.push(OptionalMetadata::Signedness(flags));
    map
}

struct RecordingApplier(Arc<Mutex<Record>>);

impl Applier for RecordingApplier {
    fn worker(&self, _: usize) -> Box<dyn WorkerApplier> {
        Box::new(RecordingWorker { record: self.0.clone(), pending: HashMap::new() })
    }
}

struct RecordingWorker {
    record: Arc<Mutex<Record>>,
    /// Decoded at apply, recorded at commit (in commit order).
    pending: HashMap<u64, Applied>,
}

fn corrupt(error: impl ToString) -> MysqlError {
    MysqlError::new(1594, "HY000", format!("Relay log read failure: {}", error.to_string()))
}

impl WorkerApplier for RecordingWorker {
    fn apply(&mut self, entry: &BoundaryEntry, events: &mut TransactionEvents<'_>) -> Result<(), MysqlError> {
        let mut applied = Applied {
            gtid: entry.gtid_text(),
            last_committed: entry.last_committed,
            sequence_number: entry.sequence_number,
            rows: Vec::new(),
            statements: Vec::new(),
            annotations: 0,
        };
        let mut maps: HashMap<u64, TableMap> = HashMap::new();
        let mut first = true;
        while let Some(bytes) = events.next_event()? {
            let raw = RawEvent::parse(bytes, entry.format.format.has_checksum()).map_err(corrupt)?;
            let event = Event::decode(&raw, &entry.format).map_err(corrupt)?;
            match &event {
                Event::MariadbGtid(gtid) if first => {
                    if Some(gtid.gtid(raw.header.server_id)) != entry.mariadb_gtid || entry.gtid.is_some() {
                        self.record.lock().problems.push(format!("{}: GTID event {:?} does not match the entry", applied.gtid, gtid));
                    }
                }
                _ if first => self.record.lock().problems.push(format!("{}: starts with {}", applied.gtid, event.type_name())),
                Event::AnnotateRows(_) => applied.annotations += 1,
                Event::TableMap(map) => {
                    maps.insert(map.table_id, with_local_signedness(map));
                }
                Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
                    let map = maps.get(&rows.table_id).ok_or_else(|| corrupt(format!("no Table_map for table id {}", rows.table_id)))?;
                    let table = String::from_utf8_lossy(&map.table).into_owned();
                    for change in rows.decode_rows(map).map_err(corrupt)? {
                        applied.rows.push((table.clone(), change));
                    }
                }
                Event::Query(query) if !query.is_begin() && !query.is_commit() => applied.statements.push(query.query_text().into_owned()),
                Event::Query(_) | Event::Xid(_) => {}
                other => self.record.lock().problems.push(format!("{}: unexpected {}", applied.gtid, other.type_name())),
            }
            first = false;
        }
        self.pending.insert(entry.index, applied);
        Ok(())
    }

    fn commit(&mut self, entry: &BoundaryEntry) -> Result<(), MysqlError> {
        let applied = self.pending.remove(&entry.index).expect("applied before commit");
        self.record.lock().committed.push(applied);
        Ok(())
    }

    fn rollback(&mut self, entry: &BoundaryEntry) {
        self.pending.remove(&entry.index);
    }
}

struct Pipeline {
    receiver: Receiver,
    coordinator: Coordinator,
    record: Arc<Mutex<Record>>,
    _spill_directory: tempfile::TempDir,
}

fn start_pipeline(port: u16, start: StartPosition, mode: CoordinatorMode) -> Pipeline {
    let spill_directory = tempfile::tempdir().unwrap();
    let relay_config = RelayLogConfig::memory(32 << 20, 1 << 20, spill_directory.path().to_path_buf()).unwrap();
    let relay = Arc::new(RelayLog::open(&relay_config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(1024));
    let source = SourceAddress { host: "127.0.0.1".into(), port, user: "repl".into(), password: "repl-pw".into() };
    let mut config = ReceiverConfig::new(source, REPLICA_SERVER_ID, start);
    config.connect_retry = Duration::from_millis(200);
    config.retry_count = 300;
    config.heartbeat_period = Duration::from_secs(1);
    config.net_timeout = Duration::from_secs(10);
    let record = Arc::new(Mutex::new(Record::default()));
    let receiver = Receiver::start(config, relay.clone(), queue.clone());
    let coordinator = Coordinator::start(
        CoordinatorConfig { workers: 4, preserve_commit_order: true, mode },
        relay,
        queue,
        Arc::new(RecordingApplier(record.clone())),
    );
    Pipeline { receiver, coordinator, record, _spill_directory: spill_directory }
}

/// Waits until `count` transactions are committed (or fails with what the
/// pipeline says), then returns them.
fn wait_for_committed(pipeline: &Pipeline, count: usize, source: &MariaDb) -> Vec<Applied> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let committed = pipeline.record.lock().committed.clone();
        let coordinator = pipeline.coordinator.status();
        if committed.len() >= count || Instant::now() > deadline || coordinator.last_error.is_some() {
            assert!(coordinator.last_error.is_none(), "applier error: {:?}", coordinator.last_error);
            assert_eq!(
                committed.len(),
                count,
                "committed {:#?}\nreceiver {:?}\nsource log:\n{}",
                committed.iter().map(|applied| &applied.gtid).collect::<Vec<_>>(),
                pipeline.receiver.status(),
                source.error_log()
            );
            return committed;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn write(row: &[Value]) -> (String, RowChange) {
    ("items".to_owned(), RowChange::Write(row.to_vec()))
}

fn text(value: &str) -> Value {
    Value::Bytes(value.as_bytes().to_vec())
}

fn decimal(value: &str) -> Value {
    Value::Decimal(value.to_owned())
}

/// An `items` row: id, qty, big, name, price, at, note (+ extra after the ALTER).
fn item(
    id: u64,
    qty: Option<u64>,
    big: Option<u64>,
    name: Option<&str>,
    price: Option<&str>,
    at: Option<(u16, u8, u8, u8, u8, u8)>,
    note: Option<&str>,
) -> Vec<Value> {
    vec![
        Value::UInt(id),
        qty.map_or(Value::Null, Value::UInt),
        big.map_or(Value::Null, Value::UInt),
        name.map_or(Value::Null, text),
        price.map_or(Value::Null, decimal),
        at.map_or(Value::Null, |(year, month, day, hour, minute, second)| Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros: 0,
        }),
        note.map_or(Value::Null, text),
    ]
}

/// What one transaction must contain: its DDL text, or its row changes.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    Ddl(&'static str),
    Rows(Vec<(String, RowChange)>),
}

fn check(applied: &[Applied], expected: &[Expected], first_seq_no: u64) {
    assert_eq!(applied.len(), expected.len());
    for (offset, (applied, expected)) in applied.iter().zip(expected).enumerate() {
        let seq_no = first_seq_no + offset as u64;
        assert_eq!(applied.gtid, format!("0-1-{seq_no}"), "exactly once, in order");
        match expected {
            Expected::Ddl(text) => {
                assert!(applied.rows.is_empty(), "{}: {:?}", applied.gtid, applied.rows);
                assert_eq!(applied.statements.len(), 1, "{}: {:?}", applied.gtid, applied.statements);
                assert!(applied.statements[0].contains(text), "{}: {:?} lacks {text:?}", applied.gtid, applied.statements);
            }
            Expected::Rows(rows) => {
                assert!(applied.statements.is_empty(), "{}: {:?}", applied.gtid, applied.statements);
                assert_eq!(&applied.rows, rows, "{}", applied.gtid);
                assert!(applied.annotations > 0, "{}: Annotate_rows was asked for", applied.gtid);
            }
        }
    }
}

#[test]
fn replica_receives_a_mariadb_source_exactly_once_across_a_source_restart() {
    let dir = tempfile::tempdir().unwrap();
    let binlog = dir.path().join("mariadb-bin");
    let log_bin = format!("--log-bin={}", binlog.display());
    let mut source = MariaDb::start(&["--server-id=1", &log_bin, "--binlog-format=ROW"]);
    // The replication user is not replicated (sql_log_bin=0): the binlog
    // starts with the workload. 127.0.0.1 resolves to localhost, where
    // MariaDB's anonymous user would win over 'repl'@'%'.
    source.query(
        "SET SESSION sql_log_bin = 0;
         CREATE USER 'repl'@'%' IDENTIFIED BY 'repl-pw';
         GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';
         CREATE USER 'repl'@'localhost' IDENTIFIED BY 'repl-pw';
         GRANT REPLICATION SLAVE ON *.* TO 'repl'@'localhost';",
    );
    let first_file = source.query("SHOW BINARY LOGS").lines().next().unwrap().split('\t').next().unwrap().to_owned();
    assert_eq!(first_file, "mariadb-bin.000001");
    let pipeline =
        start_pipeline(source.port, StartPosition::FilePosition { file_name: first_file, position: 4 }, CoordinatorMode::BoundaryQueue);

    // Phase 1: DDL, single-statement and multi-statement transactions, and
    // two transactions group-committed together (binlog_commit_wait_count
    // holds the first commit until the second joins it).
    source.query(
        "CREATE DATABASE shop;
         CREATE TABLE shop.items (id INT UNSIGNED NOT NULL PRIMARY KEY, qty TINYINT UNSIGNED, big BIGINT UNSIGNED,
             name VARCHAR(40), price DECIMAL(10,2), at DATETIME, note TEXT) ENGINE=InnoDB;
         INSERT INTO shop.items VALUES (1, 255, 18446744073709551615, 'first', 12.34, '2024-01-02 03:04:05', NULL),
                                       (2, NULL, 0, NULL, -0.5, NULL, 'a note');
         UPDATE shop.items SET name = 'second', qty = 7 WHERE id = 2;
         DELETE FROM shop.items WHERE id = 1;
         BEGIN;
         INSERT INTO shop.items (id, name, price) VALUES (3, 'third', 99999999.99);
         UPDATE shop.items SET note = NULL, big = 42 WHERE id = 2;
         DELETE FROM shop.items WHERE id = 3;
         INSERT INTO shop.items (id, at) VALUES (4, '1999-12-31 23:59:59');
         COMMIT;
         SET GLOBAL binlog_commit_wait_count = 2, binlog_commit_wait_usec = 10000000;",
    );
    std::thread::scope(|scope| {
        for id in [10, 11] {
            let source = &source;
            scope.spawn(move || source.query(&format!("INSERT INTO shop.items (id, name) VALUES ({id}, 'group')")));
        }
    });
    source.query("SET GLOBAL binlog_commit_wait_count = 0, binlog_commit_wait_usec = 100000");

    let row1 = item(1, Some(255), Some(u64::MAX), Some("first"), Some("12.34"), Some((2024, 1, 2, 3, 4, 5)), None);
    let row2 = item(2, None, Some(0), None, Some("-0.50"), None, Some("a note"));
    let row2_updated = item(2, Some(7), Some(0), Some("second"), Some("-0.50"), None, Some("a note"));
    let row2_again = item(2, Some(7), Some(42), Some("second"), Some("-0.50"), None, None);
    let row3 = item(3, None, None, Some("third"), Some("99999999.99"), None, None);
    let row4 = item(4, None, None, None, None, Some((1999, 12, 31, 23, 59, 59)), None);
    let update =
        |before: &[Value], after: &[Value]| ("items".to_owned(), RowChange::Update { before: before.to_vec(), after: after.to_vec() });
    let delete = |row: &[Value]| ("items".to_owned(), RowChange::Delete(row.to_vec()));
    let phase1 = vec![
        Expected::Ddl("CREATE DATABASE shop"),
        Expected::Ddl("CREATE TABLE shop.items"),
        Expected::Rows(vec![write(&row1), write(&row2)]),
        Expected::Rows(vec![update(&row2, &row2_updated)]),
        Expected::Rows(vec![delete(&row1)]),
        Expected::Rows(vec![write(&row3), update(&row2_updated, &row2_again), delete(&row3), write(&row4)]),
    ];
    let applied = wait_for_committed(&pipeline, phase1.len() + 2, &source);
    check(&applied[..phase1.len()], &phase1, 1);
    // The group-committed pair (in either order) shares one clock slot;
    // every other transaction waits for all before it.
    let pair = &applied[phase1.len()..];
    let mut ids: Vec<Value> = pair
        .iter()
        .map(|applied| match &applied.rows[..] {
            [(_, RowChange::Write(row))] => row[0].clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    ids.sort_by_key(|id| format!("{id:?}"));
    assert_eq!(ids, [Value::UInt(10), Value::UInt(11)]);
    assert_eq!(pair[0].last_committed, pair[1].last_committed, "one group commit, one slot: {pair:?}");
    for applied in applied.iter().filter(|applied| !pair.contains(applied)) {
        assert_eq!(applied.last_committed, applied.sequence_number - 1, "{applied:?}");
    }
    assert_eq!(pipeline.receiver.status().connections, 1);

    // Phase 2: the source restarts (a clean shutdown writes a Stop event
    // and the restart opens mariadb-bin.000002); the receiver reconnects
    // from the end of the last complete transaction in mariadb-bin.000001.
    source.restart();
    source.query(
        "ALTER TABLE shop.items ADD COLUMN extra INT;
         INSERT INTO shop.items (id, extra) VALUES (5, -7);
         BEGIN; UPDATE shop.items SET extra = 8 WHERE id = 5; DELETE FROM shop.items WHERE id = 4; COMMIT;
         DROP TABLE shop.items;",
    );
    let mut row5 = item(5, None, None, None, None, None, None);
    row5.push(Value::Int(-7));
    let mut row5_updated = row5.clone();
    row5_updated[7] = Value::Int(8);
    let mut row4_with_extra = row4.clone();
    row4_with_extra.push(Value::Null);
    let phase2 = vec![
        Expected::Ddl("ALTER TABLE shop.items ADD COLUMN extra INT"),
        Expected::Rows(vec![write(&row5)]),
        Expected::Rows(vec![update(&row5, &row5_updated), delete(&row4_with_extra)]),
        Expected::Ddl("DROP TABLE"),
    ];
    let total = applied.len() + phase2.len();
    let applied = wait_for_committed(&pipeline, total, &source);
    check(&applied[total - phase2.len()..], &phase2, (total - phase2.len()) as u64 + 1);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(pipeline.record.lock().committed.len(), total, "nothing repeated after the reconnect");
    assert!(pipeline.record.lock().problems.is_empty(), "{:?}", pipeline.record.lock().problems);

    // Where the receiver and the applier are: the end of the source's log.
    let master = source.query("SHOW MASTER STATUS");
    let mut fields = master.split('\t');
    let (file, position) = (fields.next().unwrap().to_owned(), fields.next().unwrap().parse::<u64>().unwrap());
    assert_eq!(file, "mariadb-bin.000002");
    let status = pipeline.receiver.status();
    assert!(status.connections >= 2, "reconnected: {status:?}");
    assert_eq!(status.state, IoState::Yes);
    assert!(status.source_version.contains("MariaDB"), "{}", status.source_version);
    assert_eq!((status.source_log_file.as_str(), status.read_source_log_pos), (file.as_str(), position));
    let gtid_binlog_pos = source.query("SELECT @@GLOBAL.gtid_binlog_pos").trim().to_owned();
    assert_eq!(status.gtid_io_pos.to_string(), gtid_binlog_pos);
    assert_eq!(gtid_binlog_pos, format!("0-1-{total}"));
    assert!(status.retrieved_gtid_set.is_empty(), "MariaDB GTIDs are not MySQL GTIDs");
    // The worker records the position just after the applier's commit.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut coordinator = pipeline.coordinator.status();
    while coordinator.transactions_applied < total as u64 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        coordinator = pipeline.coordinator.status();
    }
    assert_eq!((&*coordinator.source_log_file, coordinator.exec_source_log_pos), (file.as_str(), position));
    assert_eq!(coordinator.transactions_applied, total as u64);
    assert_eq!(pipeline.receiver.stop().state, IoState::No);
    let outcome = pipeline.coordinator.stop();
    assert!(outcome.error.is_none() && outcome.unapplied.is_empty(), "{outcome:?}");

    // MariaDB GTID positioning: a receiver that has everything up to the
    // multi-statement transaction (0-1-6) gets exactly what follows it.
    // Its coordinator scans events (boundaries and clock found again from
    // the relay log): the group-committed pair shares a slot there too.
    let start: MariadbGtidPosition = "0-1-6".parse().unwrap();
    let by_gtid = start_pipeline(source.port, StartPosition::MariadbGtids(start), CoordinatorMode::EventScan);
    let rest = wait_for_committed(&by_gtid, total - 6, &source);
    let gtids: Vec<String> = rest.iter().map(|applied| applied.gtid.clone()).collect();
    let expected: Vec<String> = (7..=total).map(|seq_no| format!("0-1-{seq_no}")).collect();
    assert_eq!(gtids, expected);
    assert_eq!(rest[0].last_committed, rest[1].last_committed, "the pair 0-1-7 and 0-1-8: {:?}", &rest[..2]);
    assert_eq!((rest[2].last_committed, rest[2].sequence_number), (rest[2].sequence_number - 1, 3));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(by_gtid.record.lock().committed.len(), total - 6, "nothing before the position, nothing twice");
    assert_eq!(by_gtid.receiver.status().gtid_io_pos.to_string(), gtid_binlog_pos);

    // Its reconnect asks from the start position moved forward by what it
    // received (Gtid_IO_Pos), not from the start position again.
    source.restart();
    source.query("CREATE TABLE shop.later (id INT PRIMARY KEY); INSERT INTO shop.later VALUES (1);");
    let rest = wait_for_committed(&by_gtid, total - 6 + 2, &source);
    let gtids: Vec<&str> = rest[total - 6..].iter().map(|applied| applied.gtid.as_str()).collect();
    assert_eq!(gtids, [format!("0-1-{}", total + 1), format!("0-1-{}", total + 2)]);
    assert_eq!(rest.last().unwrap().rows, [("later".to_owned(), RowChange::Write(vec![Value::Int(1)]))]);
    assert!(by_gtid.receiver.status().connections >= 2);
    assert!(by_gtid.record.lock().problems.is_empty(), "{:?}", by_gtid.record.lock().problems);
}

#[test]
fn auto_position_by_mysql_gtids_is_refused_by_a_mariadb_source() {
    let source = MariaDb::start(&["--server-id=1", "--log-bin=mariadb-bin", "--binlog-format=ROW"]);
    // 127.0.0.1 resolves to localhost, where MariaDB's anonymous user
    // would win over 'repl'@'%'.
    source.query("CREATE USER 'repl'@'localhost' IDENTIFIED BY 'repl-pw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'localhost';");
    let pipeline = start_pipeline(source.port, StartPosition::Gtids(Default::default()), CoordinatorMode::BoundaryQueue);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pipeline.receiver.is_finished() {
        assert!(Instant::now() < deadline, "a fatal error ends the receiver without retries");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (error, _) = pipeline.receiver.status().last_error.expect("Last_IO_Error");
    assert_eq!((error.code, error.sql_state_str()), (1593, "HY000"));
    assert!(error.message.starts_with("Fatal error: SOURCE_AUTO_POSITION = 1 needs MySQL GTIDs"), "{}", error.message);
    assert_eq!(pipeline.receiver.status().connections, 0);
}

/// sysbench oltp_write_only (4 threads, 10 s) on the MariaDB source while
/// the pipeline receives: every transaction (prepare's DDL and bulk
/// inserts included) arrives once and in order and decodes, and the source's
/// group commits let some transactions share a clock slot.
#[test]
fn sysbench_on_a_mariadb_source_arrives_exactly_once_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let log_bin = format!("--log-bin={}", dir.path().join("mariadb-bin").display());
    let source = MariaDb::start(&["--server-id=1", &log_bin, "--binlog-format=ROW"]);
    source.query(
        "SET SESSION sql_log_bin = 0;
         CREATE USER 'repl'@'localhost' IDENTIFIED BY 'repl-pw';
         GRANT REPLICATION SLAVE ON *.* TO 'repl'@'localhost';
         CREATE DATABASE sbtest;",
    );
    let started = Instant::now();
    let pipeline = start_pipeline(
        source.port,
        StartPosition::FilePosition { file_name: "mariadb-bin.000001".into(), position: 4 },
        CoordinatorMode::BoundaryQueue,
    );
    let args = ["--tables=2", "--table-size=1000", "--threads=4"];
    support::sysbench("oltp_write_only", source.port, &[&args[..], &["prepare"]].concat());
    let report = support::sysbench("oltp_write_only", source.port, &[&args[..], &["--time=10", "run"]].concat());
    let gtid_binlog_pos = source.query("SELECT @@GLOBAL.gtid_binlog_pos").trim().to_owned();
    let last: usize = gtid_binlog_pos.rsplit('-').next().unwrap().parse().unwrap();
    assert!(last as u64 > report.transactions(), "{gtid_binlog_pos} after {} sysbench transactions", report.transactions());
    let applied = wait_for_committed(&pipeline, last, &source);
    let elapsed = started.elapsed();
    for (index, applied) in applied.iter().enumerate() {
        assert_eq!(applied.gtid, format!("0-1-{}", index + 1), "exactly once, in order");
    }
    assert!(pipeline.record.lock().problems.is_empty(), "{:?}", pipeline.record.lock().problems);
    let rows: usize = applied.iter().map(|applied| applied.rows.len()).sum();
    let shared_slots = applied.iter().filter(|applied| applied.last_committed < applied.sequence_number - 1).count();
    let status = pipeline.receiver.status();
    println!(
        "{last} transactions ({rows} row changes, {} bytes) received and applied in {elapsed:.1?}; {shared_slots} shared a group commit's clock slot",
        status.bytes_received
    );
    assert!(rows as u64 >= 2000 + 4 * report.transactions(), "prepare's 2000 rows and 4 changes per write-only transaction: {rows}");
    assert!(shared_slots > 0, "4 sysbench threads on MariaDB commit in groups");
}
