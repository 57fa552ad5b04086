//! Commits and DDL with a given GTID (a replica applying a source's
//! transactions), in both binlog modes: the GTID reaches the binlog and
//! the engine's executed set together, an executed one is skipped without
//! touching rows, an empty transaction marks a GTID executed, and all of
//! it survives a clean restart and a crash.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use binlog::{CommitOutcome, GivenGtid, Ownership};
use binlog_format::{ColumnType, Gtid, GtidSet, Value};
use database::{CommitRequest, Database, DatabaseConfig, NextGtid};
use engine::{ColumnDef, TableSpec};
use storage::OsStorage;
use storage::SimStorage;
use support::*;
use testkit::SOURCE_UUID;

fn given(gno: u64) -> GivenGtid {
    GivenGtid {
        gtid: Gtid::new(SOURCE_UUID, gno),
        original_commit_timestamp_us: Some(1_600_000_000_000_000),
        original_server_version: Some(80036),
    }
}

fn insert(db: &Database, id: i64) -> engine::Transaction {
    let tables = tables(db).unwrap();
    let mut trx = db.begin();
    trx.insert(tables.accounts, vec![Value::Int(id), Value::Bytes(format!("a{id}@x").into_bytes()), Value::Int(0)]).unwrap();
    trx
}

fn account_ids(db: &Database) -> Vec<String> {
    engine_tables(db)[&format!("{DB}.accounts")].keys().cloned().collect()
}

/// The workload both modes run; returns the GTIDs acknowledged.
fn apply_source_transactions(db: &Database) -> BTreeSet<Gtid> {
    let mut acknowledged = BTreeSet::new();
    create_schema(db).unwrap();
    // Automatic, given, automatic: numbering goes on with the server's UUID.
    let own = db.commit(CommitRequest::new(insert(db, 1), &context(1))).unwrap().unwrap().gtid;
    let CommitOutcome::Committed(Some(info)) = db.commit_given(insert(db, 2), &context(1), given(1)).unwrap() else {
        panic!("not skipped")
    };
    assert_eq!(info.gtid, given(1).gtid);
    let next_own = db.commit(CommitRequest::new(insert(db, 3), &context(1))).unwrap().unwrap().gtid;
    assert_eq!((next_own.uuid, next_own.gno), (own.uuid, own.gno + 1));
    acknowledged.extend([own, info.gtid, next_own]);

    // The same GTID again (an applier restarted): skipped, rows unchanged.
    let before = account_ids(db);
    let outcome = db.commit_given(insert(db, 4), &context(1), given(1)).unwrap();
    assert_eq!(outcome, CommitOutcome::SkippedAlreadyExecuted(given(1).gtid));
    assert_eq!(account_ids(db), before);

    // An empty transaction with a given GTID marks it executed.
    let CommitOutcome::Committed(Some(empty)) = db.commit_given(db.begin(), &context(1), given(2)).unwrap() else { panic!("logged") };
    assert_eq!(empty.gtid, given(2).gtid);
    acknowledged.insert(empty.gtid);

    // DDL with a given GTID.
    let Ownership::Owned(owned) = db.acquire_gtid(given(3).gtid) else { panic!("not executed") };
    let spec = TableSpec {
        database: DB.into(),
        name: "replicated".into(),
        columns: vec![ColumnDef::new("id", ColumnType::LongLong).not_null()],
        primary_key: vec!["id".into()],
        ..Default::default()
    };
    let (_, ddl) = db
        .execute_ddl_with_gtid(
            &context(1),
            "CREATE TABLE replicated (id BIGINT PRIMARY KEY)",
            NextGtid::Owned { owned: &owned, given: given(3) },
            |e| e.create_table(&spec),
        )
        .unwrap();
    drop(owned);
    assert_eq!(ddl.gtid, given(3).gtid);
    assert!(matches!(db.acquire_gtid(given(3).gtid), Ownership::AlreadyExecuted));
    acknowledged.insert(ddl.gtid);
    acknowledged
}

fn expected_set(db: &Database, own_count: u64) -> GtidSet {
    format!("{}:1-3,{}:1-{own_count}", SOURCE_UUID, db.server_uuid()).parse().unwrap()
}

fn run_mode(make_config: fn(&std::path::Path, Arc<dyn storage::Storage>) -> DatabaseConfig, label: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = Database::open(make_config(dir.path(), Arc::new(OsStorage))).unwrap();
    let acknowledged = apply_source_transactions(&db);
    // Schema DDL (CREATE DATABASE + 2 tables) and two automatic commits.
    let own_count = db.binlog_status().executed_gtids().last_gno(&db.server_uuid());
    assert_eq!(db.engine_status().executed_gtids(), expected_set(&db, own_count), "{label}");
    let rows = engine_tables(&db);
    db.close().unwrap();

    let (db, _) = Database::open(make_config(dir.path(), Arc::new(OsStorage))).unwrap();
    assert_eq!(db.engine_status().executed_gtids(), expected_set(&db, own_count), "{label}: after restart");
    assert_eq!(engine_tables(&db), rows, "{label}: rows after restart");
    check(&db, &OsStorage, &acknowledged, label);
    let gtids = binlog_gtids_in_order(&OsStorage, &db.config().binlog_dir());
    assert_contiguous(&gtids, label);
    // Still skipped after the restart.
    assert_eq!(db.commit_given(insert(&db, 9), &context(1), given(2)).unwrap(), CommitOutcome::SkippedAlreadyExecuted(given(2).gtid));
    db.close().unwrap();
}

#[test]
fn given_gtids_survive_a_restart_with_classic_binlog_files() {
    run_mode(config, "classic");
}

#[test]
fn given_gtids_survive_a_restart_with_the_engine_integrated_binlog() {
    run_mode(engine_config, "engine mode");
}

#[test]
fn given_gtids_survive_a_power_cut_and_a_process_kill() {
    for (make_config, label) in [(config as fn(&_, _) -> _, "classic"), (engine_config, "engine mode")] {
        let storage = SimStorage::new();
        let dir = std::path::PathBuf::from("/d");
        let (db, _) = Database::open(make_config(&dir, Arc::new(storage.clone()))).unwrap();
        let acknowledged = apply_source_transactions(&db);
        for (image, cut) in [(storage.crash_image(None), "power cut"), (storage.process_kill_image(), "process kill")] {
            let (reopened, _) = Database::open(make_config(&dir, Arc::new(image.clone()))).unwrap();
            check(&reopened, &image, &acknowledged, &format!("{label}, {cut}"));
            assert!(reopened.engine_status().executed_gtids().contains(&given(3).gtid));
            drop(reopened);
        }
        drop(db);
    }
}

/// Sessions race to commit the same source GTIDs (an applier restarted
/// while its old worker still runs): each is committed once, the others
/// skip, in both modes.
#[test]
fn racing_sessions_commit_each_given_gtid_once() {
    for (make_config, label) in [(config as fn(&_, _) -> _, "classic"), (engine_config, "engine mode")] {
        let dir = tempfile::tempdir().unwrap();
        let (db, _) = Database::open(make_config(dir.path(), Arc::new(OsStorage))).unwrap();
        create_schema(&db).unwrap();
        const SESSIONS: i64 = 4;
        const ROUNDS: u64 = 25;
        let barrier = Arc::new(std::sync::Barrier::new(SESSIONS as usize));
        let threads: Vec<_> = (0..SESSIONS)
            .map(|session| {
                let (db, barrier) = (db.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut committed = Vec::new();
                    for round in 1..=ROUNDS {
                        barrier.wait();
                        // Distinct keys: the losers' rows must not appear.
                        let trx = insert(&db, round as i64 * 100 + session);
                        if let CommitOutcome::Committed(_) = db.commit_given(trx, &context(session as u32 + 1), given(round)).unwrap() {
                            committed.push(round * 100 + session as u64);
                        }
                    }
                    committed
                })
            })
            .collect();
        let mut winners: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        winners.sort_unstable();
        assert_eq!(winners.iter().map(|id| id / 100).collect::<Vec<_>>(), (1..=ROUNDS).collect::<Vec<_>>(), "{label}: one winner per GTID");
        let expected: Vec<String> = winners.iter().map(|id| format!("{:?}", [Value::Int(*id as i64)])).collect();
        let mut rows = account_ids(&db);
        rows.sort();
        let mut expected_sorted = expected.clone();
        expected_sorted.sort();
        assert_eq!(rows, expected_sorted, "{label}: only the winners' rows");
        db.close().unwrap();
        let (db, _) = Database::open(make_config(dir.path(), Arc::new(OsStorage))).unwrap();
        check(&db, &OsStorage, &BTreeSet::new(), label);
        assert_contiguous(&binlog_gtids_in_order(&OsStorage, &db.config().binlog_dir()), label);
        db.close().unwrap();
    }
}
