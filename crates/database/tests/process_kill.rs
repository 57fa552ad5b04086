//! Random kill -9 of a child process under load on the real file system.
//! The test re-runs itself as a child that opens (recovering) the same
//! data directory and commits random transactions from four sessions
//! while taking checkpoints, writing each acknowledged GTID to a file;
//! the parent kills it with SIGKILL after a random 50–400 ms, five times,
//! and after each kill reopens the directory and checks: GTID sets equal,
//! binlog replay equals the engine, every acknowledged commit there.

mod support;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use binlog::OsStorage;
use binlog_format::Gtid;
use database::Database;
use rand::{Rng, SeedableRng};
use support::*;

const CHILD_DIR: &str = "BINLOGD_TEST_CHILD_DIR";
const ACKNOWLEDGED: &str = "acknowledged";

/// The child's workload, run only by the test below.
#[test]
#[ignore = "the child process of random_kills_under_load_lose_nothing"]
fn child_workload() {
    let dir = std::env::var(CHILD_DIR).expect("run by the parent test");
    let dir = Path::new(&dir);
    let data = dir.join("data");
    let mut config = config(&data, Arc::new(OsStorage));
    config.checkpoint_interval = Duration::from_millis(30);
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
    let exe = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut rng = rand::thread_rng();
    let mut total_acknowledged = 0;
    for round in 0..5 {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "child_workload", "--ignored", "--nocapture", "--test-threads", "1"])
            .env(CHILD_DIR, dir.path())
            .env_remove("BINLOGD_CRASH_POINT")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let after_ms = rng.gen_range(50..=400);
        std::thread::sleep(Duration::from_millis(after_ms));
        child.kill().unwrap(); // SIGKILL
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "round {round}: the child failed: {stderr}");

        let (db, report) = Database::open(config(&data, Arc::new(OsStorage)))
            .unwrap_or_else(|e| panic!("round {round} (killed after {after_ms} ms): recovery failed: {e}"));
        let uuid = db.server_uuid();
        let text = std::fs::read_to_string(dir.path().join(ACKNOWLEDGED)).unwrap_or_default();
        let acknowledged: BTreeSet<Gtid> = text.lines().filter_map(|l| l.parse().ok()).map(|gno| Gtid { uuid, gno }).collect();
        total_acknowledged = acknowledged.len();
        eprintln!(
            "round {round}: killed after {after_ms} ms; {} acknowledged so far; recovery: {} redo records, {} committed and {} rolled back in doubt, {:?}",
            acknowledged.len(),
            report.redo_records_replayed,
            report.committed_at_recovery.len(),
            report.rolled_back_at_recovery.len(),
            report.elapsed,
        );
        check(&db, &OsStorage, &acknowledged, &format!("round {round} (killed after {after_ms} ms)"));
        // Half the time the next child finds a clean shutdown.
        if round % 2 == 0 {
            db.close().unwrap();
        }
    }
    assert!(total_acknowledged > 0, "the children never committed");
}
