//! Real process kills: the test re-runs itself as a child process that
//! commits (with rotations, promotions and purges) on the real file system
//! with `BINLOGD_CRASH_POINT` set, so the process aborts at that point.
//! The parent then recovers the directory and checks that the log is a
//! prefix of the commit order holding every commit the child saw
//! acknowledged, with index and files in agreement.

mod support;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use binlog::crash_points::{self, CrashPoints};
use binlog::BinaryLog;
use storage::OsStorage;
use support::*;

const CHILD_DIR: &str = "BINLOGD_TEST_CHILD_DIR";

/// The child's workload, run only by the test below.
#[test]
#[ignore = "the child process of killing_the_process_at_every_crash_point_loses_nothing_acknowledged"]
fn child_workload() {
    let dir = std::env::var(CHILD_DIR).expect("run by the parent test");
    let dir = Path::new(&dir);
    let mut options = options(dir);
    options.max_binlog_size = 16 * 1024;
    options.binlog_cache_size = 4 * 1024;
    options.large_transaction_optimization_threshold = 16 * 1024;
    options.spill_sync_chunk_bytes = 8 * 1024;
    options.binlog_expire_logs_seconds = 0;
    let (log, _) = BinaryLog::open(options, Arc::new(OsStorage), CrashPoints::from_env()).unwrap();
    let mut acknowledged = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("acknowledged")).unwrap();
    let threads: Vec<_> = (0..3u64)
        .map(|thread| {
            let log = log.clone();
            let mut acknowledged = acknowledged.try_clone().unwrap();
            std::thread::spawn(move || {
                for n in 0..60u64 {
                    let rows = if n % 10 == 9 { 1000 } else { 2 };
                    let info = log.commit(transaction(&log, thread * 1000 + n + 1, rows)).unwrap();
                    // One write per line: lines from the threads must not interleave.
                    acknowledged.write_all(format!("{}\n", info.gtid.gno).as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for round in 0..20 {
        std::thread::sleep(std::time::Duration::from_millis(3));
        if round % 4 == 1 {
            log.rotate().unwrap();
        }
        if round % 6 == 2 {
            let names = log.file_names();
            if names.len() > 3 {
                log.purge_to(&names[names.len() - 3]).unwrap();
            }
        }
    }
    for thread in threads {
        thread.join().unwrap();
    }
    log.close().unwrap();
    writeln!(acknowledged, "closed").unwrap();
}

#[test]
fn killing_the_process_at_every_crash_point_loses_nothing_acknowledged() {
    let exe = std::env::current_exe().unwrap();
    let mut reached = 0;
    for point in crash_points::ALL.iter().filter(|p| **p != crash_points::RECOVERY_AFTER_TRUNCATE) {
        let dir = temp_dir();
        let output = std::process::Command::new(&exe)
            .args(["--exact", "child_workload", "--ignored", "--nocapture", "--test-threads", "1"])
            .env(CHILD_DIR, dir.path())
            .env("BINLOGD_CRASH_POINT", point)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let acknowledged_text = std::fs::read_to_string(dir.path().join("acknowledged")).unwrap_or_default();
        if output.status.success() {
            // The workload finished without passing the point.
            eprintln!("not reached: {point}");
            assert!(acknowledged_text.contains("closed"), "{point}: child exited cleanly without closing: {stderr}");
            continue;
        }
        assert!(stderr.contains(&format!("crash point {point} reached")), "{point}: child died otherwise: {stderr}");
        reached += 1;
        let acknowledged: Vec<u64> = acknowledged_text.lines().filter_map(|l| l.parse().ok()).collect();
        let (log, _) = BinaryLog::open(options(dir.path()), Arc::new(OsStorage), CrashPoints::default())
            .unwrap_or_else(|e| panic!("{point}: recovery failed: {e}"));
        let executed = log.executed_gtids();
        for gno in &acknowledged {
            assert!(executed.contains(&binlog_format::Gtid::new(uuid(), *gno)), "{point}: acknowledged {gno} lost");
        }
        assert_eq!(executed.count(), executed.last_gno(&uuid()), "{point}: holes in {executed}");
        let active = log.active_position().0;
        drop(log);
        check_log(&OsStorage, dir.path(), Some(&active));
    }
    assert_eq!(reached, crash_points::ALL.len() - 1, "every point but recovery's is reached");
}
