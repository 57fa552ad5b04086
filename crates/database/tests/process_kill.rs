//! Random kill -9 of a child process under load on the real file system.
//! The test re-runs itself as a child that opens (recovering) the same
//! data directory and commits random transactions from four sessions
//! while taking checkpoints, writing each acknowledged GTID to a file;
//! the parent kills it with SIGKILL after a random 50–400 ms, five times,
//! and after each kill reopens the directory and checks: GTID sets equal,
//! binlog replay equals the engine, every acknowledged commit there.
//! The same with `binlog_storage_engine = engine`, and a child aborted at
//! each named point of the engine-integrated commit path.

mod support;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use binlog_format::Gtid;
use database::Database;
use rand::{Rng, SeedableRng};
use storage::OsStorage;
use support::*;

const CHILD_DIR: &str = "BINLOGD_TEST_CHILD_DIR";
/// Set for the child: `binlog_storage_engine = engine`.
const CHILD_ENGINE_BINLOG: &str = "BINLOGD_TEST_ENGINE_BINLOG";

fn config_for_mode(data: &Path, engine_binlog: bool) -> database::DatabaseConfig {
    if engine_binlog {
        engine_config(data, Arc::new(OsStorage))
    } else {
        config(data, Arc::new(OsStorage))
    }
}
const ACKNOWLEDGED: &str = "acknowledged";

/// The child's workload, run only by the test below.
#[test]
#[ignore = "the child process of random_kills_under_load_lose_nothing"]
fn child_workload() {
    let dir = std::env::var(CHILD_DIR).expect("run by the parent test");
    let dir = Path::new(&dir);
    let data = dir.join("data");
    let mut config = config_for_mode(&data, std::env::var(CHILD_ENGINE_BINLOG).is_ok());
    config.checkpoint_interval = Duration::from_millis(30);
    // BINLOGD_CRASH_POINT=<name> aborts the child at that point.
    config.crash_points = database::CrashPoints::from_env();
    config.binlog_crash_points = binlog::CrashPoints::from_env();
    config.redo_crash_points = redo::CrashPoints::from_env();
    let (db, _) = Database::open(config).unwrap();
    let tables = create_schema(&db).unwrap();
    let acknowledged = std::fs::OpenOptions::new().create(true).append(true).open(dir.join(ACKNOWLEDGED)).unwrap();
    let seed: u64 = rand::thread_rng().gen();
    let sessions: Vec<_> = (0..4u32)
        .map(|thread| {
            let db = db.clone();
            let mut acknowledged = acknowledged.try_clone().unwrap();
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed + thread as u64);
                loop {
                    match random_transaction(&db, &mut rng, tables, thread + 1) {
                        Attempt::Committed(Some(gtid)) => {
                            // One write per line: lines of the threads must not interleave.
                            acknowledged.write_all(format!("{}\n", gtid.gno).as_bytes()).unwrap();
                        }
                        Attempt::Committed(None) | Attempt::Retry => {}
                        Attempt::Skipped(gtid) => unreachable!("automatic commit of {gtid} skipped"),
                        Attempt::Failed(error) => panic!("commit failed: {error}"),
                    }
                }
            })
        })
        .collect();
    for session in sessions {
        session.join().unwrap();
    }
}

#[test]
fn random_kills_under_load_lose_nothing() {
    random_kills(false);
}

#[test]
fn random_kills_in_engine_binlog_mode_lose_nothing() {
    random_kills(true);
}

/// Starts the child; `crash_point` is passed as `BINLOGD_CRASH_POINT`.
fn spawn_child(dir: &Path, engine_binlog: bool, crash_point: Option<&str>) -> std::process::Child {
    let exe = std::env::current_exe().unwrap();
    let mut command = std::process::Command::new(&exe);
    command
        .args(["--exact", "child_workload", "--ignored", "--nocapture", "--test-threads", "1"])
        .env(CHILD_DIR, dir)
        .env_remove("BINLOGD_CRASH_POINT")
        .env_remove(CHILD_ENGINE_BINLOG)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if engine_binlog {
        command.env(CHILD_ENGINE_BINLOG, "1");
    }
    if let Some(point) = crash_point {
        command.env("BINLOGD_CRASH_POINT", point);
    }
    command.spawn().unwrap()
}

/// Reopens after a kill and checks the three promises.
fn reopen_and_check(dir: &Path, engine_binlog: bool, label: &str) -> (Database, usize) {
    let data = dir.join("data");
    let (db, report) = Database::open(config_for_mode(&data, engine_binlog)).unwrap_or_else(|e| panic!("{label}: recovery failed: {e}"));
    let uuid = db.server_uuid();
    let text = std::fs::read_to_string(dir.join(ACKNOWLEDGED)).unwrap_or_default();
    let acknowledged: BTreeSet<Gtid> = text.lines().filter_map(|l| l.parse().ok()).map(|gno| Gtid::new(uuid, gno)).collect();
    eprintln!(
        "{label}: {} acknowledged so far; recovery: {} redo records, {} committed and {} rolled back in doubt, {} rebuilt from redo, {:?}",
        acknowledged.len(),
        report.redo_records_replayed,
        report.committed_at_recovery.len(),
        report.rolled_back_at_recovery.len(),
        report.binlog_rebuilt_from_redo,
        report.elapsed,
    );
    check(&db, &OsStorage, &acknowledged, label);
    assert_contiguous(&binlog_gtids_in_order(&OsStorage, &db.config().binlog_dir()), label);
    (db, acknowledged.len())
}

fn random_kills(engine_binlog: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::thread_rng();
    let mut total_acknowledged = 0;
    for round in 0..5 {
        let mut child = spawn_child(dir.path(), engine_binlog, None);
        let after_ms = rng.gen_range(50..=400);
        std::thread::sleep(Duration::from_millis(after_ms));
        child.kill().unwrap(); // SIGKILL
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "round {round}: the child failed: {stderr}");
        let (db, acknowledged) = reopen_and_check(dir.path(), engine_binlog, &format!("round {round} (killed after {after_ms} ms)"));
        total_acknowledged = acknowledged;
        // Half the time the next child finds a clean shutdown.
        if round % 2 == 0 {
            db.close().unwrap();
        }
    }
    assert!(total_acknowledged > 0, "the children never committed");
}

/// A real process aborted at each named point of the engine-integrated
/// commit path (`BINLOGD_CRASH_POINT`), one data directory carried across
/// all of them: recovery agrees every time.
#[test]
fn engine_binlog_crash_points_abort_a_real_process() {
    let dir = tempfile::tempdir().unwrap();
    let points = database::crash_points::ENGINE_BINLOG.iter().filter(|p| **p != database::crash_points::ENGINE_IN_REBUILD);
    for point in points {
        let mut child = spawn_child(dir.path(), true, Some(point));
        // The point is reached within seconds (checkpoints every 30 ms);
        // kill the child if it is not.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&format!("crash point {point} reached")), "{point}: not reached: {stderr}");
        let (db, _) = reopen_and_check(dir.path(), true, point);
        db.close().unwrap();
    }
}
