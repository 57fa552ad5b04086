//! Recovery after checkpoints: checkpoints taken under load bound what
//! recovery replays, and a transaction prepared before a checkpoint and
//! settled after it is still recoverable (redo is kept from its prepare).

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use binlog_format::{ColumnType, Value};
use database::{CommitRequest, Database};
use engine::{ColumnDef, TableSpec};
use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use storage::{SimStorage, Storage};
use support::*;

const DIR: &str = "/data";

#[test]
fn background_checkpoints_under_load_then_crash() {
    for seed in 0..4u64 {
        let storage = SimStorage::new();
        let mut config = config(Path::new(DIR), Arc::new(storage.clone()));
        config.checkpoint_interval = Duration::from_millis(10);
        config.checkpoint_redo_bytes = 32 * 1024;
        let (db, _) = Database::open(config).unwrap();
        let tables = create_schema(&db).unwrap();
        let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let sessions: Vec<_> = (0..4u32)
            .map(|thread| {
                let (db, acknowledged, stop) = (db.clone(), acknowledged.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(seed * 17 + thread as u64);
                    while !stop.load(Ordering::Relaxed) {
                        match random_transaction(&db, &mut rng, tables, thread + 1) {
                            Attempt::Committed(gtid) => acknowledged.lock().extend(gtid),
                            Attempt::Retry => {}
                            Attempt::Skipped(gtid) => unreachable!("automatic commit of {gtid} skipped"),
                            Attempt::Failed(_) => break,
                        }
                    }
                })
            })
            .collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        std::thread::sleep(Duration::from_millis(rng.gen_range(150..400)));
        storage.freeze();
        stop.store(true, Ordering::Relaxed);
        for session in sessions {
            session.join().unwrap();
        }
        let checkpoints = db.counters().checkpoints;
        let records_appended = db.redo().counters().records;
        let acknowledged = acknowledged.lock().clone();
        drop(db);
        assert!(checkpoints > 0, "seed {seed}: no background checkpoint in the run");
        for (kind, image) in [("power cut", storage.crash_image(Some(&mut rng))), ("process kill", storage.process_kill_image())] {
            let label = format!("seed {seed}, {kind} after {checkpoints} checkpoints");
            let (db, report) =
                Database::open(support::config(Path::new(DIR), Arc::new(image.clone()))).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert!(report.checkpoint.is_some(), "{label}: recovery did not start from a checkpoint");
            assert!(
                report.redo_records_replayed < records_appended,
                "{label}: replayed {} of {records_appended} records",
                report.redo_records_replayed
            );
            eprintln!(
                "{label}: replayed {} of {records_appended} redo records, {} transactions, {} acknowledged",
                report.redo_records_replayed,
                report.transactions_replayed,
                acknowledged.len()
            );
            check(&db, &image, &acknowledged, &label);
            db.close().unwrap();
        }
    }
}

#[test]
fn a_checkpoint_bounds_replay_and_drops_old_redo() {
    let storage = SimStorage::new();
    let (db, _) = Database::open(config(Path::new(DIR), Arc::new(storage.clone()))).unwrap();
    let tables = create_schema(&db).unwrap();
    let mut acknowledged = BTreeSet::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for _ in 0..300 {
        if let Attempt::Committed(gtid) = random_transaction(&db, &mut rng, tables, 1) {
            acknowledged.extend(gtid);
        }
    }
    let segments_before = redo_segments(&storage);
    db.checkpoint().unwrap();
    let segments_after = redo_segments(&storage);
    assert!(segments_after < segments_before, "old redo segments deleted: {segments_before} → {segments_after}");
    let mut late = 0;
    for _ in 0..5 {
        if let Attempt::Committed(Some(gtid)) = random_transaction(&db, &mut rng, tables, 1) {
            acknowledged.insert(gtid);
            late += 1;
        }
    }
    let image = storage.process_kill_image();
    drop(db);
    let (db, report) = Database::open(config(Path::new(DIR), Arc::new(image.clone()))).unwrap();
    assert!(report.checkpoint.is_some());
    // The last commit record may still have been in the log buffer (it is
    // appended without waiting): then the binlog's XID commits it.
    assert_eq!(
        report.transactions_replayed + report.committed_at_recovery.len() as u64,
        late,
        "only what followed the checkpoint is replayed"
    );
    check(&db, &image, &acknowledged, "after one checkpoint");
    db.close().unwrap();
}

/// Column DEFAULTs are part of the engine's table definitions: redo replay
/// brings them back after a restart, and so does a checkpoint's image once
/// replay starts after the CREATE TABLE.
#[test]
fn column_defaults_survive_a_restart_and_a_checkpoint() {
    let storage = SimStorage::new();
    let (db, _) = Database::open(config(Path::new(DIR), Arc::new(storage.clone()))).unwrap();
    let session = context(0);
    db.execute_ddl(&session, "CREATE DATABASE d", |e| e.create_database("d")).unwrap();
    let spec = TableSpec {
        database: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnDef::new("id", ColumnType::Long).not_null(),
            ColumnDef::new("v", ColumnType::Long).with_default(Value::Int(7)),
            ColumnDef::new("note", ColumnType::VarChar { max_length_bytes: 40 }).with_default(Value::Null),
            ColumnDef::new("plain", ColumnType::Long),
        ],
        primary_key: vec!["id".into()],
        ..TableSpec::default()
    };
    let query = "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v INT DEFAULT 7, note VARCHAR(10) DEFAULT NULL, plain INT)";
    db.execute_ddl(&session, query, |e| e.create_table(&spec)).unwrap();
    let defaults = |db: &Database| -> Vec<Option<Value>> {
        db.catalog().table("d", "t").unwrap().columns.iter().map(|column| column.default.clone()).collect()
    };
    let expected = vec![None, Some(Value::Int(7)), Some(Value::Null), None];
    let image = storage.process_kill_image();
    drop(db);

    let (db, report) = Database::open(config(Path::new(DIR), Arc::new(image.clone()))).unwrap();
    assert!(report.checkpoint.is_none(), "the CREATE TABLE came back through redo replay");
    assert_eq!(defaults(&db), expected, "after redo replay");
    db.checkpoint().unwrap();
    let image = image.process_kill_image();
    drop(db);

    let (db, report) = Database::open(config(Path::new(DIR), Arc::new(image))).unwrap();
    assert!(report.checkpoint.is_some(), "recovery started from the checkpoint");
    assert_eq!(defaults(&db), expected, "after a checkpoint");
    db.close().unwrap();
}

fn redo_segments(storage: &SimStorage) -> usize {
    storage.list(&Path::new(DIR).join("redo")).unwrap().iter().filter(|n| n.starts_with("redo.0")).count()
}

/// A transaction is prepared and written to the binlog, its binlog sync is
/// held, and a checkpoint completes meanwhile: its prepare record is
/// before the checkpoint's start, yet recovery must still commit it when
/// the binlog has it (process kill) and roll it back when not (power cut).
#[test]
fn a_transaction_in_doubt_across_a_checkpoint() {
    for kind in ["process kill", "power cut"] {
        let storage = SimStorage::new();
        let (db, _) = Database::open(config(Path::new(DIR), Arc::new(storage.clone()))).unwrap();
        let tables = create_schema(&db).unwrap();
        let mut trx = db.begin();
        trx.insert(tables.accounts, vec![Value::Int(1), Value::Bytes(b"first@x".to_vec()), Value::Int(1)]).unwrap();
        let first = db.commit(CommitRequest::new(trx, &context(1))).unwrap().unwrap();

        storage.close_sync_gate("binlog/binlog.0");
        let committer = {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut trx = db.begin();
                trx.insert(tables.accounts, vec![Value::Int(2), Value::Bytes(b"doubt@x".to_vec()), Value::Int(2)]).unwrap();
                db.commit(CommitRequest::new(trx, &context(2)))
            })
        };
        while storage.syncs_waiting_at_gate() == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Other writers keep the redo moving past the prepare record.
        let mut trx = db.begin();
        trx.insert(tables.orders, vec![Value::Int(9), Value::Null, Value::Null]).unwrap();
        let prepared_other = trx.prepare(None).unwrap();
        prepared_other.rollback();
        db.checkpoint().unwrap();
        let checkpoint = db.redo().last_checkpoint().unwrap();
        storage.freeze();
        storage.open_sync_gate();
        assert!(committer.join().unwrap().is_err(), "the held commit cannot succeed on frozen storage");
        let image = if kind == "power cut" { storage.crash_image(None) } else { storage.process_kill_image() };
        drop(db);

        let (db, report) = Database::open(config(Path::new(DIR), Arc::new(image.clone()))).unwrap();
        let label = format!("in doubt across a checkpoint, {kind}");
        assert_eq!(report.checkpoint.as_ref().map(|c| c.number), Some(checkpoint.number), "{label}");
        let row = db.begin().get(tables.accounts, &[Value::Int(2)]).unwrap();
        if kind == "power cut" {
            assert_eq!(report.rolled_back_at_recovery.len(), 1, "{label}: {report:?}");
            assert_eq!(row, None, "{label}");
        } else {
            assert_eq!(report.committed_at_recovery.len(), 1, "{label}: {report:?}");
            assert!(row.is_some(), "{label}");
        }
        check(&db, &image, &BTreeSet::from([first.gtid]), &label);
        db.close().unwrap();
    }
}
