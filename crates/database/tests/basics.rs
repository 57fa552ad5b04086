//! The database's everyday behaviour: commit, reopen, read-only commits,
//! DDL, row events, write sets, and what happens after a failure in the
//! middle of a commit or a DDL statement.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use binlog::DependencyTracking;
use binlog_format::events::Event;
use binlog_format::file::EventStream;
use binlog_format::{ColumnType, Value};
use database::{CommitRequest, Database, DatabaseError};
use engine::{ColumnDef, EngineError, TableSpec};
use rand::SeedableRng;
use storage::OsStorage;
use storage::SimStorage;
use support::*;

fn insert_account(db: &Database, id: i64, email: &str) -> binlog::CommitInfo {
    let tables = tables(db).unwrap();
    let mut trx = db.begin();
    trx.insert(tables.accounts, vec![Value::Int(id), Value::Bytes(email.as_bytes().to_vec()), Value::Int(0)]).unwrap();
    db.commit(CommitRequest::new(trx, &context(1))).unwrap().expect("a write is logged")
}

#[test]
fn commits_survive_a_clean_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (db, report) = Database::open(config(dir.path(), Arc::new(OsStorage))).unwrap();
    assert!(report.checkpoint.is_none() && report.redo_records_replayed == 0);
    let uuid = db.server_uuid();
    create_schema(&db).unwrap();
    let mut acknowledged = BTreeSet::new();
    for id in 0..20 {
        acknowledged.insert(insert_account(&db, id, &format!("a{id}@x")).gtid);
    }
    // A read-only transaction and an unchanged one never reach the binlog.
    let reader = db.begin();
    assert!(reader.get(tables(&db).unwrap().accounts, &[Value::Int(3)]).unwrap().is_some());
    assert_eq!(db.commit(CommitRequest::new(reader, &context(1))).unwrap(), None);
    let mut unchanged = db.begin();
    assert!(!unchanged.delete_by_pk(tables(&db).unwrap().accounts, &[Value::Int(999)]).unwrap());
    assert_eq!(db.commit(CommitRequest::new(unchanged, &context(1))).unwrap(), None);
    assert_eq!(db.counters().commits, 20);
    assert_eq!(db.counters().read_only_commits, 2);
    let before = engine_tables(&db);
    db.close().unwrap();
    assert!(matches!(insert_attempt(&db), Err(DatabaseError::Closed)));

    let (db, report) = Database::open(config(dir.path(), Arc::new(OsStorage))).unwrap();
    assert_eq!(db.server_uuid(), uuid, "auto.cnf keeps server_uuid");
    assert!(report.committed_at_recovery.is_empty() && report.rolled_back_at_recovery.is_empty());
    assert!(report.transactions_replayed >= 20);
    assert_eq!(engine_tables(&db), before);
    // XIDs continue above every earlier one (check() asserts they are unique).
    acknowledged.insert(insert_account(&db, 100, "late@x").gtid);
    check(&db, &OsStorage, &acknowledged, "clean restart");
    db.close().unwrap();
    let auto_cnf = std::fs::read_to_string(dir.path().join("auto.cnf")).unwrap();
    assert_eq!(auto_cnf, format!("[auto]\nserver-uuid={uuid}\n"));
}

fn insert_attempt(db: &Database) -> Result<Option<binlog::CommitInfo>, DatabaseError> {
    let mut trx = db.begin();
    trx.insert(tables(db)?.accounts, vec![Value::Int(77), Value::Bytes(b"closed@x".to_vec()), Value::Int(0)])?;
    db.commit(CommitRequest::new(trx, &context(1)))
}

#[test]
fn failed_ddl_is_not_logged() {
    let storage = SimStorage::new();
    let (db, _) = Database::open(config(Path::new("/d"), Arc::new(storage.clone()))).unwrap();
    create_schema(&db).unwrap();
    let executed = db.binlog_status().executed_gtids();
    let again = db.execute_ddl(&context(1), "CREATE DATABASE test", |e| e.create_database(DB));
    match again {
        Err(DatabaseError::Engine(EngineError::DatabaseExists(_))) => {}
        other => panic!("expected 1007, got {other:?}"),
    }
    let error = again.unwrap_err();
    assert_eq!((error.mysql_code(), error.to_string().as_str()), (1007, "Can't create database 'test'; database exists"));
    assert_eq!(db.binlog_status().executed_gtids(), executed);
    assert_eq!(db.engine_status().executed_gtids(), executed);
    db.close().unwrap();
}

#[test]
fn rows_events_are_split_at_binlog_row_event_max_size() {
    let storage = SimStorage::new();
    let mut config = config(Path::new("/d"), Arc::new(storage.clone()));
    config.binlog.max_binlog_size = 1 << 30;
    // Copied into the active file, not promoted into a file of its own.
    config.binlog.large_transaction_optimization_threshold = 1 << 30;
    let (db, _) = Database::open(config).unwrap();
    let tables = create_schema(&db).unwrap();
    let mut trx = db.begin();
    for id in 0..300 {
        let email = format!("{id:0>90}@example.com");
        trx.insert(tables.accounts, vec![Value::Int(id), Value::Bytes(email.into_bytes()), Value::Int(id)]).unwrap();
    }
    for id in 0..10 {
        trx.delete_by_pk(tables.accounts, &[Value::Int(id)]).unwrap();
    }
    let info = db.commit(CommitRequest::new(trx, &context(1))).unwrap().unwrap();
    let bytes = storage.file_bytes(&Path::new("/d/binlog").join(&info.file_name)).unwrap();
    let mut stream = EventStream::new(&bytes).unwrap();
    let mut shape = Vec::new();
    while let Some(next) = stream.next_raw() {
        let (offset, raw) = next.unwrap();
        if offset < info.start_position {
            continue;
        }
        match Event::decode(&raw, stream.context()).unwrap() {
            Event::WriteRows(e) | Event::DeleteRows(e) => {
                assert!(e.rows.len() < database::BINLOG_ROW_EVENT_MAX_SIZE + 200, "a rows event of {} bytes", e.rows.len());
                shape.push(format!("{:?}{}", e.kind, if e.flags & 1 != 0 { "+END" } else { "" }));
            }
            other => shape.push(other.type_name().to_string()),
        }
    }
    // Gtid, BEGIN, Table_map, Write_rows × n (the last ends the statement), Table_map, Delete_rows, Xid.
    let writes = shape.iter().filter(|s| s.starts_with("Write")).count();
    assert!(writes >= 4, "{shape:?}");
    assert_eq!(shape.iter().filter(|s| s.ends_with("+END")).count(), 2, "{shape:?}");
    assert_eq!(shape.last().map(String::as_str), Some("Xid"), "{shape:?}");
    check(&db, &storage, &BTreeSet::from([info.gtid]), "large transaction");
    db.close().unwrap();
}

#[test]
fn writeset_tracking_sees_rows_and_unique_keys() {
    let storage = SimStorage::new();
    let mut config = config(Path::new("/d"), Arc::new(storage.clone()));
    // The default, as in MySQL 8.4.
    assert_eq!(config.binlog.dependency_tracking, DependencyTracking::Writeset);
    config.binlog.max_binlog_size = 1 << 30;
    let (db, _) = Database::open(config).unwrap();
    create_schema(&db).unwrap();
    let first = insert_account(&db, 1, "one@x");
    let other_row = insert_account(&db, 2, "two@x");
    assert!(other_row.last_committed < first.sequence_number, "independent rows must not depend: {first:?} {other_row:?}");
    // Same row as the first: depends on it.
    let tables = tables(&db).unwrap();
    let mut trx = db.begin();
    trx.update_by_pk(tables.accounts, &[Value::Int(1)], vec![Value::Int(1), Value::Bytes(b"one@y".to_vec()), Value::Int(5)]).unwrap();
    let same_row = db.commit(CommitRequest::new(trx, &context(1))).unwrap().unwrap();
    assert!(same_row.last_committed >= first.sequence_number, "{same_row:?} after {first:?}");
    // Another row, but the unique email two@x freed... a new row taking
    // the email "two@x"'s old owner gave up depends on that owner.
    let mut trx = db.begin();
    trx.update_by_pk(tables.accounts, &[Value::Int(2)], vec![Value::Int(2), Value::Bytes(b"two@z".to_vec()), Value::Int(0)]).unwrap();
    let freed = db.commit(CommitRequest::new(trx, &context(1))).unwrap().unwrap();
    let taker = insert_account(&db, 3, "two@x");
    assert!(taker.last_committed >= freed.sequence_number, "{taker:?} after {freed:?}");
    db.close().unwrap();
}

#[test]
fn a_failure_after_prepare_stops_writes_and_recovery_settles_it() {
    let storage = SimStorage::new();
    let config = config(Path::new("/d"), Arc::new(storage.clone()));
    let crash = config.crash_points.clone();
    let (db, _) = Database::open(config).unwrap();
    create_schema(&db).unwrap();
    let kept = insert_account(&db, 1, "kept@x");
    crash.arm(database::crash_points::COMMIT_AFTER_PREPARE, 0, || {});
    let tables = tables(&db).unwrap();
    let mut trx = db.begin();
    trx.insert(tables.accounts, vec![Value::Int(2), Value::Bytes(b"lost@x".to_vec()), Value::Int(0)]).unwrap();
    let error = db.commit(CommitRequest::new(trx, &context(1))).unwrap_err();
    assert!(matches!(error, DatabaseError::Crash(_)), "{error}");
    assert!(db.is_failed());
    let refused = insert_attempt(&db).unwrap_err();
    assert_eq!(refused.mysql_code(), 1598, "{refused}");
    // The in-doubt row was released in memory.
    assert_eq!(db.begin().get(tables.accounts, &[Value::Int(2)]).unwrap(), None);
    let image = storage.process_kill_image();
    drop(db);
    let (db, report) = Database::open(support::config(Path::new("/d"), Arc::new(image.clone()))).unwrap();
    assert_eq!(report.rolled_back_at_recovery.len(), 1, "{report:?}");
    assert!(report.committed_at_recovery.is_empty());
    check(&db, &image, &BTreeSet::from([kept.gtid]), "failure after prepare");
    insert_account(&db, 3, "after@x");
    db.close().unwrap();
}

/// A DDL statement cut at each step of its binlog write: GTID sets always
/// agree after recovery.
#[test]
fn ddl_cut_at_each_binlog_step() {
    use binlog::crash_points as b;
    for (point, image_kind) in [
        (b::FLUSH_AFTER_WRITE, "power cut"),
        (b::FLUSH_AFTER_WRITE, "process kill"),
        (b::SYNC_AFTER_SYNC, "power cut"),
        (b::COMMIT_AFTER_HOOKS, "power cut"),
        (b::COMMIT_AFTER_HOOKS, "process kill"),
    ] {
        let storage = SimStorage::new();
        let config = config(Path::new("/d"), Arc::new(storage.clone()));
        let binlog_crash = config.binlog_crash_points.clone();
        let (db, _) = Database::open(config).unwrap();
        create_schema(&db).unwrap();
        let kept = insert_account(&db, 1, "kept@x");
        let with_ddl = db.binlog_status().executed_gtids().count() + 1;
        let frozen = storage.clone();
        binlog_crash.arm(point, 0, move || frozen.freeze());
        let spec = TableSpec {
            database: DB.into(),
            name: "late".into(),
            columns: vec![ColumnDef::new("id", ColumnType::Long).not_null()],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        assert!(db.execute_ddl(&context(1), "CREATE TABLE late (id INT PRIMARY KEY)", |e| e.create_table(&spec)).is_err());
        let image = if image_kind == "power cut" {
            storage.crash_image(Some(&mut rand::rngs::StdRng::seed_from_u64(7)))
        } else {
            storage.process_kill_image()
        };
        drop(db);
        let label = format!("DDL cut at {point}, {image_kind}");
        let (db, report) =
            Database::open(support::config(Path::new("/d"), Arc::new(image.clone()))).unwrap_or_else(|e| panic!("{label}: {e}"));
        check(&db, &image, &BTreeSet::from([kept.gtid]), &label);
        // The table is in the engine (its DDL record was synced first).
        assert!(db.catalog().table_id(DB, "late").is_ok(), "{label}");
        let in_binlog = db.binlog_status().executed_gtids().count() == with_ddl;
        eprintln!("{label}: DDL in the binlog: {in_binlog}, GTIDs taken from the binlog: {}", report.ddl_gtids_recovered);
        if point == b::SYNC_AFTER_SYNC || point == b::COMMIT_AFTER_HOOKS {
            assert!(in_binlog, "{label}: the synced DDL is in the binlog");
        }
        db.close().unwrap();
    }
}

/// A rotation closes the file holding transactions whose engine commit
/// records are still in the redo buffer; the next recovery does not scan
/// that file, so the rotation must make them durable first.
#[test]
fn a_rotation_right_before_a_power_cut_keeps_the_closed_files_transactions() {
    for rotation in ["FLUSH BINARY LOGS", "max_binlog_size"] {
        let storage = SimStorage::new();
        let mut config = config(Path::new("/d"), Arc::new(storage.clone()));
        config.binlog.max_binlog_size = if rotation == "max_binlog_size" { 1 } else { 1 << 30 };
        let (db, _) = Database::open(config).unwrap();
        create_schema(&db).unwrap();
        let last = insert_account(&db, 1, "last@x");
        if rotation == "FLUSH BINARY LOGS" {
            db.rotate_binlog().unwrap();
        }
        assert!(db.binlog_status().file_names().len() >= 2, "{rotation}: rotated");
        let image = storage.crash_image(None);
        drop(db);
        let (db, report) =
            Database::open(support::config(Path::new("/d"), Arc::new(image.clone()))).unwrap_or_else(|e| panic!("{rotation}: {e}"));
        assert!(!report.binlog.scanned_files.contains(&last.file_name), "{rotation}: the closed file is not scanned");
        check(&db, &image, &BTreeSet::from([last.gtid]), rotation);
        db.close().unwrap();
    }
}

#[test]
fn a_database_is_shared_between_threads() {
    fn shared<T: Send + Sync + Clone + 'static>() {}
    shared::<Database>();
    fn sendable<T: Send + 'static>() {}
    sendable::<DatabaseError>();
}

/// With flush 1 each group's leader hands purge to the engine's
/// background thread as its fsyncs begin, and commits purge nothing
/// themselves (engine/src/purge.rs): the old versions of 300 updates
/// still go, all but at most the last commit's (queued after its group
/// began; the thread may still be running then and take it too). With
/// nobody asking the thread, all 300 would stay (fewer than the bound).
#[test]
fn with_flush_1_purge_runs_during_group_syncs() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = Database::open(config(dir.path(), Arc::new(OsStorage))).unwrap();
    create_schema(&db).unwrap();
    for id in 0..10 {
        insert_account(&db, id, &format!("a{id}@x"));
    }
    let accounts = tables(&db).unwrap().accounts;
    for n in 0..300i64 {
        let mut trx = db.begin();
        let id = n % 10;
        trx.update_by_pk(
            accounts,
            &[Value::Int(id)],
            vec![Value::Int(id), Value::Bytes(format!("a{id}@x").into_bytes()), Value::Int(n + 1)],
        )
        .unwrap();
        db.commit(CommitRequest::new(trx, &context(1))).unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while db.engine_status().purge_queued_keys() > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(db.engine_status().purge_queued_keys() <= 1, "{} keys wait for purge", db.engine_status().purge_queued_keys());
    let reader = db.begin();
    assert_eq!(reader.get(accounts, &[Value::Int(9)]).unwrap().unwrap()[2], Value::Int(300), "the last update of account 9");
    drop(reader);
    db.close().unwrap();
}
