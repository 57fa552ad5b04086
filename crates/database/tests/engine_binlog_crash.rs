//! Crash tests of `binlog_storage_engine = engine` on simulated storage
//! shared by the redo log and the binlog: for every crash point of the
//! engine-integrated commit path (and of the binlog writer behind it, the
//! binlog's rotation and promotion, and the redo log's group commit and
//! checkpoints), concurrent sessions commit random transactions with
//! `innodb_flush_log_at_trx_commit = 1` while a thread takes checkpoints
//! and runs DDL; the storage freezes when the point is reached. What a
//! power cut leaves (with and without torn tails) and what a process kill
//! leaves are reopened and checked (`support/mod.rs`): engine GTID set ==
//! binlog GTID set, binlog row-event replay == the engine's tables, every
//! acknowledged commit present, the binlog one contiguous GTID sequence;
//! recovery run again changes nothing. `in_rebuild` is crashed during the
//! recovery of a power cut, then recovered again.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use binlog_format::Gtid;
use database::{crash_points as database_points, Database, DatabaseConfig};
use rand::{Rng, SeedableRng};
use storage::SimStorage;
use support::crash_workload::{self, Outcome, Point, Workload};
use support::*;

fn points() -> Vec<Point> {
    let mut points: Vec<Point> =
        database_points::ENGINE_BINLOG.iter().filter(|p| **p != database_points::ENGINE_IN_REBUILD).map(|p| Point::Database(p)).collect();
    use binlog::crash_points as b;
    points.extend(
        [
            b::FLUSH_BEFORE_WRITE,
            b::FLUSH_AFTER_WRITE,
            b::SYNC_AFTER_SYNC,
            b::COMMIT_AFTER_HOOKS,
            b::ROTATE_AFTER_ROTATE_EVENT,
            b::ROTATE_AFTER_NEW_FILE,
            b::ROTATE_AFTER_INDEX,
            b::INDEX_AFTER_TEMP_SYNC,
            b::INDEX_AFTER_RENAME,
            b::CACHE_AFTER_SPILL,
            b::PROMOTE_AFTER_HEADER_SYNC,
            b::PROMOTE_AFTER_RENAME,
            b::PROMOTE_AFTER_INDEX,
        ]
        .map(Point::Binlog),
    );
    points.extend(redo::crash_points::ALL.iter().map(|p| Point::Redo(p)));
    points
}

const DIR: &str = "/data";
const TRANSACTIONS_PER_SESSION: u32 = 100;

/// Runs the workload in engine mode (small files so rotations happen),
/// with `point` armed if any; `configure` adjusts the configuration.
fn run_workload(
    storage: &SimStorage,
    point: Option<Point>,
    skip: u64,
    seed: u64,
    checkpoints: bool,
    configure: impl FnOnce(&mut DatabaseConfig),
) -> Outcome {
    let mut config = engine_config(Path::new(DIR), Arc::new(storage.clone()));
    config.binlog.max_binlog_size = 8 * 1024;
    configure(&mut config);
    let slow = matches!(point, Some(Point::Redo(name)) if name.contains("checkpoint"))
        || matches!(point, Some(Point::Database(name)) if name.contains("binlog_sync"));
    let transactions_per_session = if slow { 4 * TRANSACTIONS_PER_SESSION } else { TRANSACTIONS_PER_SESSION };
    crash_workload::run_workload(storage, config, &Workload { point, skip, seed, transactions_per_session, checkpoints })
}

/// Reopens `image` and checks it, then reopens a process-kill image of
/// the recovered directory and checks again.
fn reopen_and_check(image: SimStorage, acknowledged: &BTreeSet<Gtid>, label: &str) {
    let (db, _) =
        Database::open(engine_config(Path::new(DIR), Arc::new(image.clone()))).unwrap_or_else(|e| panic!("{label}: recovery failed: {e}"));
    check(&db, &image, acknowledged, label);
    assert_contiguous(&binlog_gtids_in_order(&image, &db.config().binlog_dir()), label);
    let expected_tables = engine_tables(&db);
    drop(db);
    let again = image.process_kill_image();
    let (db, report) = Database::open(engine_config(Path::new(DIR), Arc::new(again.clone())))
        .unwrap_or_else(|e| panic!("{label}: second recovery failed: {e}"));
    assert!(report.binlog_rebuilt_from_redo.is_empty(), "{label}: the second recovery rebuilt {} again", report.binlog_rebuilt_from_redo);
    assert_eq!(engine_tables(&db), expected_tables, "{label}: a second recovery changed the data");
    check(&db, &again, acknowledged, &format!("{label}, second open"));
    db.close().unwrap();
}

#[test]
fn every_engine_binlog_crash_point_recovers_to_agreement() {
    let mut fired = BTreeSet::new();
    for (index, point) in points().into_iter().enumerate() {
        for round in 0..3u64 {
            let seed = index as u64 * 10 + round;
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let skip = match point {
                Point::Database(name) if name.contains("binlog_sync") => rng.gen_range(0..3),
                Point::Database(name) if name.contains("binlog_write") => rng.gen_range(0..20),
                // Only the bulk transactions (one in ten) go by reference.
                Point::Database(name) if name.contains("reference") => rng.gen_range(0..3),
                Point::Redo(name) if name.contains("checkpoint") || name.contains("rotate") => rng.gen_range(0..3),
                Point::Binlog(name) if name.contains("rotate") || name.contains("index") => rng.gen_range(0..3),
                Point::Binlog(name) if name.contains("promote") || name.contains("spill") => rng.gen_range(0..3),
                Point::Binlog(_) => rng.gen_range(0..20),
                _ => rng.gen_range(0..100),
            };
            let storage = SimStorage::new();
            let outcome = run_workload(&storage, Some(point), skip, seed, true, |_| {});
            let label = format!("{} (skip {skip}, seed {seed})", point.name());
            if outcome.fired {
                fired.insert(point.name());
            }
            reopen_and_check(storage.crash_image(Some(&mut rng)), &outcome.acknowledged, &format!("{label}, power cut with torn tails"));
            reopen_and_check(storage.crash_image(None), &outcome.acknowledged, &format!("{label}, power cut"));
            reopen_and_check(storage.process_kill_image(), &outcome.acknowledged, &format!("{label}, process kill"));
        }
    }
    let missed: Vec<&str> = points().iter().map(|p| p.name()).filter(|name| !fired.contains(name)).collect();
    assert!(missed.is_empty(), "points never reached: {missed:?}");
}

#[test]
fn a_crash_while_rebuilding_is_recovered_by_the_next_open() {
    for seed in 0..3u64 {
        let storage = SimStorage::new();
        // No rotation, promotion or checkpoint: the binlog is never synced,
        // so a power cut leaves all of it to rebuild.
        let outcome = run_workload(&storage, None, 0, 900 + seed, false, |config| {
            config.binlog.max_binlog_size = 1 << 30;
            config.binlog.large_transaction_optimization_enabled = false;
        });
        let cut = storage.crash_image(None);
        let config = engine_config(Path::new(DIR), Arc::new(cut.clone()));
        let freeze = {
            let cut = cut.clone();
            move || cut.freeze()
        };
        config.crash_points.arm(database_points::ENGINE_IN_REBUILD, 0, freeze);
        let error = match Database::open(config) {
            Ok((_, report)) => panic!("the rebuild crash point did not fire; rebuilt {:?}", report.binlog_rebuilt_from_redo),
            Err(error) => error,
        };
        assert!(matches!(error, database::DatabaseError::Crash(_)), "{error}");
        let label = format!("in_rebuild (seed {seed})");
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        reopen_and_check(cut.crash_image(Some(&mut rng)), &outcome.acknowledged, &format!("{label}, power cut with torn tails"));
        reopen_and_check(cut.crash_image(None), &outcome.acknowledged, &format!("{label}, power cut"));
        reopen_and_check(cut.process_kill_image(), &outcome.acknowledged, &format!("{label}, process kill"));
    }
}
