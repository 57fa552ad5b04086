//! Crash tests on simulated storage shared by the redo log and the binlog:
//! for every crash point of the two-phase commit (and of the redo log's
//! checkpoints, the binlog's rotation and the redo's group commit),
//! concurrent sessions commit random small transactions (and now and
//! then a large one the binlog promotes into the log by rename) with
//! `innodb_flush_log_at_trx_commit = 1` and `sync_binlog = 1` while a
//! thread takes checkpoints; the storage freezes when the point is
//! reached. Then what a power cut leaves (with and without torn tails)
//! and what a process kill leaves are each reopened and checked (see
//! `support/mod.rs`): GTID sets equal, binlog replay equals the engine,
//! nothing acknowledged lost. Recovery is then run a second time on the
//! recovered image, which must change nothing.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use binlog_format::Gtid;
use database::{crash_points as database_points, Database};
use rand::{Rng, SeedableRng};
use storage::SimStorage;
use support::crash_workload::{self, Outcome, Point, Workload};
use support::*;
use testkit::SOURCE_UUID;

/// Every point a commit, a rotation or a checkpoint passes.
fn points() -> Vec<Point> {
    // The reset points have their own test (reset.rs), engine mode's its own too.
    let mut points: Vec<Point> = database_points::TWO_PHASE.iter().map(|p| Point::Database(p)).collect();
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
            b::PROMOTE_AFTER_REGISTER,
            b::PROMOTE_AFTER_RENAME,
            b::PROMOTE_AFTER_ROTATE_EVENT,
            b::PROMOTE_AFTER_NEW_FILE,
            b::PROMOTE_AFTER_INDEX,
            b::PROMOTE_AFTER_COUNT,
        ]
        .map(Point::Binlog),
    );
    points.extend(redo::crash_points::ALL.iter().map(|p| Point::Redo(p)));
    points
}

const DIR: &str = "/data";
const TRANSACTIONS_PER_SESSION: u32 = 100;

/// Runs the workload with `point` armed on the classic configuration
/// (small files so rotations happen).
fn run_workload(storage: &SimStorage, point: Point, skip: u64, seed: u64) -> Outcome {
    let mut config = config(Path::new(DIR), Arc::new(storage.clone()));
    // Rotations often enough for their points to fire.
    config.binlog.max_binlog_size = 8 * 1024;
    // Checkpoints are slower than commits: give them time to pass their points.
    let transactions_per_session = match point {
        Point::Redo(name) if name.contains("checkpoint") => 4 * TRANSACTIONS_PER_SESSION,
        _ => TRANSACTIONS_PER_SESSION,
    };
    crash_workload::run_workload(storage, config, &Workload { point: Some(point), skip, seed, transactions_per_session, checkpoints: true })
}

/// Reopens `image`, checks it, then reopens what recovery left (after a
/// process kill of the recovered server) and checks again.
/// Totals over every reopen: the test must exercise both decisions.
#[derive(Default)]
struct Settled {
    committed: usize,
    rolled_back: usize,
}

fn reopen_and_check(image: SimStorage, acknowledged: &BTreeSet<Gtid>, label: &str, settled_total: &mut Settled) {
    let config = config(Path::new(DIR), Arc::new(image.clone()));
    let (db, report) = Database::open(config).unwrap_or_else(|e| panic!("{label}: recovery failed: {e}"));
    check(&db, &image, acknowledged, label);
    let settled = report.committed_at_recovery.len() + report.rolled_back_at_recovery.len();
    settled_total.committed += report.committed_at_recovery.len();
    settled_total.rolled_back += report.rolled_back_at_recovery.len();
    let expected_tables = engine_tables(&db);
    drop(db);
    let again = image.process_kill_image();
    let (db, report) = Database::open(config_for(&again)).unwrap_or_else(|e| panic!("{label}: second recovery failed: {e}"));
    assert!(
        report.committed_at_recovery.is_empty() && report.rolled_back_at_recovery.is_empty(),
        "{label}: recovery settled {settled} transactions, yet the next open found more in doubt"
    );
    assert_eq!(engine_tables(&db), expected_tables, "{label}: a second recovery changed the data");
    check(&db, &again, acknowledged, &format!("{label}, second open"));
    db.close().unwrap();
}

fn config_for(storage: &SimStorage) -> database::DatabaseConfig {
    config(Path::new(DIR), Arc::new(storage.clone()))
}

#[test]
fn every_crash_point_recovers_to_agreement() {
    let mut fired = BTreeSet::new();
    let mut settled = Settled::default();
    // Acknowledged commits with a source's GTID (session 0 applies them).
    let mut foreign_acknowledged = 0;
    for (index, point) in points().into_iter().enumerate() {
        for round in 0..3u64 {
            let seed = index as u64 * 10 + round;
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            // Checkpoints, rotations and segment switches pass their points
            // less often than a commit passes its own.
            let skip = match point {
                Point::Redo(name) if name.contains("checkpoint") => rng.gen_range(0..3),
                Point::Binlog(name) if name.contains("rotate") || name.contains("index") => rng.gen_range(0..3),
                Point::Binlog(name) if name.contains("promote") || name.contains("spill") => rng.gen_range(0..3),
                Point::Redo(name) if name.contains("rotate") => rng.gen_range(0..3),
                _ => rng.gen_range(0..100),
            };
            let storage = SimStorage::new();
            let outcome = run_workload(&storage, point, skip, seed);
            let label = format!("{} (skip {skip}, seed {seed})", point.name());
            if outcome.fired {
                fired.insert(point.name());
            }
            foreign_acknowledged += outcome.acknowledged.iter().filter(|gtid| gtid.uuid == SOURCE_UUID).count();
            reopen_and_check(
                storage.crash_image(Some(&mut rng)),
                &outcome.acknowledged,
                &format!("{label}, power cut with torn tails"),
                &mut settled,
            );
            reopen_and_check(storage.crash_image(None), &outcome.acknowledged, &format!("{label}, power cut"), &mut settled);
            reopen_and_check(storage.process_kill_image(), &outcome.acknowledged, &format!("{label}, process kill"), &mut settled);
        }
    }
    let missed: Vec<&str> = points().iter().map(|p| p.name()).filter(|name| !fired.contains(name)).collect();
    assert!(missed.is_empty(), "points never reached: {missed:?}");
    eprintln!("in doubt at recovery: {} committed from the binlog, {} rolled back", settled.committed, settled.rolled_back);
    assert!(settled.committed > 0 && settled.rolled_back > 0, "both recovery decisions must be exercised");
    eprintln!("acknowledged with a source's GTID: {foreign_acknowledged}");
    assert!(foreign_acknowledged > 100, "given-GTID commits must be part of the workload");
}
