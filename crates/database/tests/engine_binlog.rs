//! `binlog_storage_engine = engine`: commits, restarts, switches of mode
//! and what readers see (crashes are in `engine_binlog_crash.rs` and
//! `process_kill.rs`).

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use binlog::LogReader;
use binlog_format::constants::EventType;
use binlog_format::Gtid;
use database::{BinlogStorageEngine, CommitRequest, Database, DatabaseConfig};
use rand::SeedableRng;
use storage::SimStorage;
use support::*;

const DIR: &str = "/data";

/// Runs `sessions` × `per_session` random transactions; returns the
/// acknowledged GTIDs.
fn workload(db: &Database, sessions: u32, per_session: u32, seed: u64) -> BTreeSet<Gtid> {
    let tables = create_schema(db).unwrap();
    let threads: Vec<_> = (0..sessions)
        .map(|thread| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed * 31 + thread as u64);
                let mut acknowledged = BTreeSet::new();
                let mut done = 0;
                while done < per_session {
                    match random_transaction(&db, &mut rng, tables, thread + 1) {
                        Attempt::Committed(gtid) => {
                            acknowledged.extend(gtid);
                            done += 1;
                        }
                        Attempt::Retry => {}
                        Attempt::Skipped(gtid) => unreachable!("automatic commit of {gtid} skipped"),
                        Attempt::Failed(error) => panic!("commit failed: {error}"),
                    }
                }
                acknowledged
            })
        })
        .collect();
    threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
}

fn open(config: DatabaseConfig) -> (Database, database::OpenReport) {
    Database::open(config).unwrap_or_else(|e| panic!("open failed: {e}"))
}

#[test]
fn commits_survive_restart_and_use_fewer_fsyncs() {
    let storage = SimStorage::new();
    let mut config = engine_config(Path::new(DIR), Arc::new(storage.clone()));
    // No rotations or promotions, which sync the binlog by design.
    config.binlog.max_binlog_size = 1 << 30;
    config.binlog.large_transaction_optimization_enabled = false;
    let (db, _) = open(config.clone());
    let acknowledged = workload(&db, 4, 100, 1);
    let counters = db.counters();
    assert!(counters.commits > 150, "{counters:?}");
    // The binlog is synced by rotations and checkpoints only, never per commit.
    assert!(counters.binlog_fsyncs <= 2, "binlog synced on the commit path: {counters:?}");
    check(&db, &storage, &acknowledged, "engine mode, open");
    db.close().unwrap();
    let (db, report) = open(config);
    assert!(report.binlog_rebuilt_from_redo.is_empty(), "a clean close left the binlog behind redo: {}", report.binlog_rebuilt_from_redo);
    check(&db, &storage, &acknowledged, "engine mode, after clean restart");
    assert_contiguous(&binlog_gtids_in_order(&storage, &db.config().binlog_dir()), "engine mode");
    db.close().unwrap();
}

#[test]
fn a_power_cut_rebuilds_the_binlog_tail_from_redo() {
    let storage = SimStorage::new();
    let mut config = engine_config(Path::new(DIR), Arc::new(storage.clone()));
    // No rotation or promotion: the binlog bytes are never synced before the cut.
    config.binlog.max_binlog_size = 1 << 30;
    config.binlog.large_transaction_optimization_enabled = false;
    let (db, _) = open(config);
    let acknowledged = workload(&db, 4, 50, 2);
    let image = storage.crash_image(None);
    drop(db);
    let (db, report) = open(engine_config(Path::new(DIR), Arc::new(image.clone())));
    assert!(!report.binlog_rebuilt_from_redo.is_empty(), "nothing rebuilt: the binlog was synced on the commit path?");
    check(&db, &image, &acknowledged, "after a power cut");
    assert_contiguous(&binlog_gtids_in_order(&image, &db.config().binlog_dir()), "after a power cut");
    db.close().unwrap();
}

#[test]
fn switching_modes_keeps_one_binlog() {
    let storage = SimStorage::new();
    let mut acknowledged = BTreeSet::new();
    let modes = [BinlogStorageEngine::File, BinlogStorageEngine::Engine, BinlogStorageEngine::File, BinlogStorageEngine::Engine];
    let mut image = storage;
    for (round, mode) in modes.into_iter().enumerate() {
        let mut config = config(Path::new(DIR), Arc::new(image.clone()));
        config.binlog_storage_engine = mode;
        let (db, report) = open(config);
        if round > 0 {
            assert_eq!(report.binlog_storage_engine_switched_from, Some(modes[round - 1]), "round {round}");
        }
        check(&db, &image, &acknowledged, &format!("round {round} ({mode:?}) at open"));
        acknowledged.extend(workload(&db, 3, 40, round as u64 + 10));
        // Rounds alternate a clean close and a power cut.
        if round % 2 == 0 {
            db.close().unwrap();
        } else {
            let cut = image.crash_image(None);
            drop(db);
            image = cut;
        }
    }
    let (db, _) = open(config(Path::new(DIR), Arc::new(image.clone())));
    check(&db, &image, &acknowledged, "after the switches");
    let gtids = binlog_gtids_in_order(&image, &db.config().binlog_dir());
    assert_contiguous(&gtids, "across switches");
    assert!(gtids.len() >= acknowledged.len());
    // A reader (what a dump thread uses) follows every file across the switches.
    let names = db.binlog_status().file_names();
    let mut reader = db.binlog_status().reader_from_position(&names[0], 4).unwrap();
    let mut read = Vec::new();
    while let Some(event) = reader.next(Duration::from_millis(200)).unwrap() {
        if let binlog_format::events::Event::Gtid(g) = LogReader::decode(&event).unwrap() {
            read.push(g.gtid);
        }
    }
    assert_eq!(read, gtids, "the reader saw a different sequence than the files hold");
    db.close().unwrap();
}

#[test]
fn readers_stop_at_what_redo_made_durable() {
    let storage = SimStorage::new();
    let mut config = engine_config(Path::new(DIR), Arc::new(storage.clone()));
    // flush = 0 with a long timeout: nothing is durable until asked.
    config.redo.innodb_flush_log_at_trx_commit = redo::FlushLogAtTrxCommit::WriteAndSyncPerSecond;
    config.redo.innodb_flush_log_at_timeout = Duration::from_secs(3600);
    let (db, _) = open(config);
    let tables = create_schema(&db).unwrap();
    let names = db.binlog_status().file_names();
    let mut reader = db.binlog_status().reader_from_position(&names[0], 4).unwrap();
    let mut seen = Vec::new();
    let mut read_gtids = |reader: &mut LogReader, wait: Duration| {
        while let Some(event) = reader.next(wait).unwrap() {
            if event.header.event_type == EventType::Gtid as u8 {
                if let binlog_format::events::Event::Gtid(g) = LogReader::decode(&event).unwrap() {
                    seen.push(g.gtid);
                }
            }
        }
        seen.clone()
    };
    // The schema's DDL is synced (DDL always is): all of it becomes readable.
    let ddl = db.engine_status().executed_gtids().last_gno(&db.server_uuid()) as usize;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while read_gtids(&mut reader, Duration::from_millis(100)).len() < ddl {
        assert!(std::time::Instant::now() < deadline, "DDL not readable");
    }
    let mut trx = db.begin();
    trx.insert(tables.orders, vec![binlog_format::Value::Int(1), binlog_format::Value::Null, binlog_format::Value::Null]).unwrap();
    let info = db.commit(CommitRequest::new(trx, &context(1))).unwrap().unwrap();
    assert!(db.redo().durable_lsn() < db.redo().current_lsn(), "flush = 0 synced at commit");
    assert_eq!(read_gtids(&mut reader, Duration::from_millis(300)).len(), ddl, "a reader saw {} before redo made it durable", info.gtid);
    db.redo().flush().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while read_gtids(&mut reader, Duration::from_millis(100)).last() != Some(&info.gtid) {
        assert!(std::time::Instant::now() < deadline, "durable in redo, yet not readable");
    }
    db.close().unwrap();
}

#[test]
fn with_flush_0_and_2_a_power_cut_loses_the_same_tail_of_both() {
    for flush in [redo::FlushLogAtTrxCommit::WriteAndSyncPerSecond, redo::FlushLogAtTrxCommit::WriteAtCommit] {
        let storage = SimStorage::new();
        let mut config = engine_config(Path::new(DIR), Arc::new(storage.clone()));
        config.redo.innodb_flush_log_at_trx_commit = flush;
        config.redo.innodb_flush_log_at_timeout = Duration::from_millis(20);
        let (db, _) = open(config.clone());
        let acknowledged = workload(&db, 4, 60, 7);
        let label = format!("flush {flush:?}");
        let cut = storage.crash_image(None);
        let killed = storage.process_kill_image();
        drop(db);
        // A power cut may lose acknowledged commits, but of both logs alike.
        let (db, _) = open(engine_config(Path::new(DIR), Arc::new(cut.clone())));
        check(&db, &cut, &BTreeSet::new(), &format!("{label}, power cut"));
        assert_contiguous(&binlog_gtids_in_order(&cut, &db.config().binlog_dir()), &label);
        db.close().unwrap();
        // A process kill loses nothing with flush 2.
        let (db, _) = open(engine_config(Path::new(DIR), Arc::new(killed.clone())));
        let promised = if flush == redo::FlushLogAtTrxCommit::WriteAtCommit { acknowledged } else { BTreeSet::new() };
        check(&db, &killed, &promised, &format!("{label}, process kill"));
        db.close().unwrap();
    }
}

/// The files of an engine-mode run after a switch and a rebuild (real file
/// system) are read by `mariadb-binlog`, as classic ones are.
#[test]
fn mariadb_binlog_reads_the_files_after_a_switch_and_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (db, _) = open(config(&data, Arc::new(storage::OsStorage)));
    workload(&db, 2, 20, 21);
    db.close().unwrap();
    let mut engine = engine_config(&data, Arc::new(storage::OsStorage));
    engine.binlog.max_binlog_size = 1 << 30;
    engine.binlog.large_transaction_optimization_enabled = false;
    let (db, _) = open(engine.clone());
    workload(&db, 2, 20, 22);
    // Dropped without close: the writer's queue is left to the rebuild.
    drop(db);
    let (db, _) = open(engine);
    let names = db.binlog_status().file_names();
    db.close().unwrap();
    let mut inserts = 0;
    for name in &names {
        let output = std::process::Command::new("mariadb-binlog")
            .arg("--verbose")
            .arg(data.join("binlog").join(name))
            .output()
            .expect("mariadb-binlog must be installed (apt-get install mariadb-client); .ci/run installs it");
        assert!(output.status.success(), "mariadb-binlog failed on {name}: {}", String::from_utf8_lossy(&output.stderr));
        inserts += String::from_utf8_lossy(&output.stdout).matches("### INSERT INTO `test`.").count();
    }
    assert!(inserts > 0, "mariadb-binlog decoded no row event in {names:?}");
}

/// A large transaction goes by reference: its redo record
/// carries the row changes and a reference to its sealed spill file, not
/// its binlog events, so redo grows by about the changes alone; the writer
/// promotes the file into the log. After a process kill right after the
/// commit returned, before the writer could append it, recovery promotes
/// the referenced file, and no referenced file is left behind.
#[test]
fn a_large_transaction_goes_by_reference_and_survives_a_kill_before_the_writer() {
    let storage = SimStorage::new();
    let (db, _) = open(engine_config(Path::new(DIR), Arc::new(storage.clone())));
    let tables = create_schema(&db).unwrap();
    let payload = "r".repeat(1000);
    let rows = 400i64;
    let commit_bulk = |db: &Database, first_id: i64| {
        let mut trx = db.begin();
        for id in first_id..first_id + rows {
            trx.insert(tables.bulk, vec![binlog_format::Value::Int(id), binlog_format::Value::Bytes(payload.clone().into_bytes())])
                .unwrap();
        }
        db.commit(CommitRequest::new(trx, &context(1))).unwrap().expect("logged").gtid
    };
    let lsn_before = db.redo().current_lsn();
    commit_bulk(&db, 0);
    let redo_bytes = db.redo().current_lsn() - lsn_before;
    let row_bytes = rows as u64 * 1000;
    assert!(
        redo_bytes < row_bytes * 3 / 2,
        "the record carried {redo_bytes} bytes for {row_bytes} bytes of rows: the binlog body travelled too"
    );
    db.wait_binlog_written().unwrap();
    assert_eq!(db.binlog_status().counters().large_transaction_promotions.load(std::sync::atomic::Ordering::Relaxed), 1);

    // The next one: the storage freezes when the writer starts promoting
    // it (its commit has returned: the record is durable, flush = 1), so
    // the crash image has the record and the referenced file only.
    drop(db);
    let config = engine_config(Path::new(DIR), Arc::new(storage.clone()));
    let writer_crash = config.binlog_crash_points.clone();
    let (db, _) = open(config);
    let frozen = storage.clone();
    writer_crash.arm(binlog::crash_points::PROMOTE_AFTER_HEADER_SYNC, 0, move || frozen.freeze());
    let gtid = commit_bulk(&db, rows);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !writer_crash.fired(binlog::crash_points::PROMOTE_AFTER_HEADER_SYNC) {
        assert!(std::time::Instant::now() < deadline, "the writer never promoted");
        std::thread::sleep(Duration::from_millis(5));
    }
    let image = storage.crash_image(None);
    drop(db);
    let spill_dir = Path::new(DIR).join("binlog").join(".binlogd-tmp");
    let referenced = |storage: &SimStorage| -> Vec<String> {
        storage::Storage::list(storage, &spill_dir).unwrap().into_iter().filter(|name| name.starts_with("binlogd-referenced-")).collect()
    };
    assert_eq!(referenced(&image).len(), 1, "the crash image holds the referenced file");
    let (db, report) = open(engine_config(Path::new(DIR), Arc::new(image.clone())));
    assert!(
        report.binlog_rebuilt_from_redo.contains(&gtid),
        "recovery promoted {gtid} from its referenced file ({} rebuilt)",
        report.binlog_rebuilt_from_redo
    );
    assert!(referenced(&image).is_empty(), "referenced spill files left: {:?}", referenced(&image));
    check(&db, &image, &BTreeSet::from([gtid]), "after the crash");
    db.close().unwrap();
}
