//! RESET BINARY LOGS AND GTIDS on simulated storage: a power cut at each
//! of its crash points (and after it completed, with and without new
//! commits) reopens to a log that starts at `binlog.000001`, an index that
//! names only files that exist, engine and binlog GTID sets that agree
//! (recovery's check), the data intact, and the next GTID numbered from 1.

mod support;

use std::path::Path;
use std::sync::Arc;

use database::{crash_points, CommitRequest, Database};
use rand::SeedableRng;
use storage::SimStorage;
use support::*;

/// Commits `count` transactions (retrying lock conflicts); returns how
/// many got a GTID.
fn commit_some(db: &Database, tables: Tables, count: usize, seed: u64) -> usize {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut logged = 0;
    let mut done = 0;
    while done < count {
        match random_transaction(db, &mut rng, tables, 1) {
            Attempt::Committed(gtid) => {
                logged += usize::from(gtid.is_some());
                done += 1;
            }
            Attempt::Retry => {}
            Attempt::Skipped(gtid) => unreachable!("automatic commit of {gtid} skipped"),
            Attempt::Failed(error) => panic!("commit failed: {error}"),
        }
    }
    logged
}

/// A database with a few files of history.
fn with_history(storage: &SimStorage) -> (Database, Tables, database::DatabaseConfig) {
    let config = config(Path::new("/data"), Arc::new(storage.clone()));
    let (db, _) = Database::open(config.clone()).unwrap();
    let tables = create_schema(&db).unwrap();
    commit_some(&db, tables, 40, 1);
    db.rotate_binlog().unwrap();
    commit_some(&db, tables, 10, 2);
    assert!(db.binlog_status().file_names().len() >= 2);
    (db, tables, config)
}

/// What a reopened image must look like after a reset (finished by
/// recovery or not): a fresh log, no GTIDs, the rows of before.
/// `files`: the log after the reopen (every start opens a new file).
fn check_reset(
    image: &SimStorage,
    rows_before: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<binlog_format::Value>>>,
    files: &[&str],
    label: &str,
) {
    let config = config(Path::new("/data"), Arc::new(image.clone()));
    let (db, _) = Database::open(config).unwrap_or_else(|e| panic!("{label}: reopen failed: {e}"));
    assert_eq!(db.binlog_status().file_names(), files, "{label}");
    assert!(db.binlog_status().executed_gtids().is_empty(), "{label}: {}", db.binlog_status().executed_gtids());
    assert!(db.engine_status().executed_gtids().is_empty(), "{label}: {}", db.engine_status().executed_gtids());
    assert!(db.binlog_status().purged_gtids().is_empty(), "{label}");
    assert_eq!(&engine_tables(&db), rows_before, "{label}: the data changed");
    let names: Vec<String> = image.list(Path::new("/data/binlog")).unwrap();
    let mut on_disk: Vec<&str> = names.iter().map(String::as_str).filter(|n| n.starts_with("binlog.0")).collect();
    on_disk.sort();
    assert_eq!(on_disk, files, "{label}: leftover files {names:?}");
    assert!(!names.iter().any(|n| n == database::reset::RESET_MARKER_NAME), "{label}: marker left");
    // The next transaction is server_uuid:1.
    let tables = tables(&db).unwrap();
    let mut trx = db.begin();
    trx.insert(tables.orders, vec![binlog_format::Value::Int(1_000_000), binlog_format::Value::Null, binlog_format::Value::Null]).unwrap();
    let info = db.commit(CommitRequest::new(trx, &context(1))).unwrap().unwrap();
    assert_eq!(info.gtid.gno, 1, "{label}");
    db.close().unwrap();
}

use storage::Storage;

#[test]
fn a_crash_at_each_reset_step_reopens_to_a_fresh_log() {
    for point in [crash_points::RESET_AFTER_MARKER, crash_points::RESET_AFTER_REDO_RECORD, crash_points::RESET_AFTER_BINLOG_RESET] {
        let storage = SimStorage::new();
        let (db, _, config) = with_history(&storage);
        let rows_before = engine_tables(&db);
        let freeze = {
            let storage = storage.clone();
            move || storage.freeze()
        };
        config.crash_points.arm(point, 0, freeze);
        let error = db.reset_binary_logs_and_gtids().unwrap_err();
        assert!(error.to_string().contains(point), "{point}: {error}");
        assert!(db.is_failed(), "{point}: a half-done reset stops writes until restart");
        // Recovery finishes the reset: the log it opens is the first.
        check_reset(&storage.crash_image(None), &rows_before, &["binlog.000001"], point);
        check_reset(&storage.process_kill_image(), &rows_before, &["binlog.000001"], &format!("{point} (process kill)"));
    }
}

#[test]
fn a_power_cut_after_a_reset_keeps_it() {
    let storage = SimStorage::new();
    let (db, tables, _) = with_history(&storage);
    db.checkpoint().unwrap();
    let rows_before = engine_tables(&db);
    db.reset_binary_logs_and_gtids().unwrap();
    assert_eq!(db.binlog_status().file_names(), ["binlog.000001"]);
    assert!(db.engine_status().executed_gtids().is_empty() && db.binlog_status().executed_gtids().is_empty());
    // Redo replay from the checkpoint (before the reset) must not bring the old GTIDs back.
    check_reset(&storage.crash_image(None), &rows_before, &["binlog.000001", "binlog.000002"], "after reset");

    // New commits after the reset survive a power cut, numbered from 1.
    let logged = commit_some(&db, tables, 10, 3);
    let executed = db.binlog_status().executed_gtids();
    assert_eq!(executed.last_gno(&db.server_uuid()), logged as u64);
    let image = storage.crash_image(None);
    let (reopened, _) = Database::open(config(Path::new("/data"), Arc::new(image))).unwrap();
    assert_eq!(reopened.binlog_status().executed_gtids(), executed);
    assert_eq!(reopened.engine_status().executed_gtids(), executed);
    reopened.close().unwrap();
    db.close().unwrap();
}
