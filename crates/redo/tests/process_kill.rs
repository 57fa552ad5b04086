//! Real process kills: the test re-runs itself as a child process that
//! commits (flush=1) and checkpoints on the real file system with
//! `BINLOGD_CRASH_POINT` set, so the process aborts at that point. The
//! parent recovers the directory and checks that every commit the child
//! saw acknowledged is there, and that each thread's records form a
//! prefix of what it appended.

mod support;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use redo::crash_points::{self, CrashPoints};
use redo::{Options, RedoLog};
use storage::OsStorage;
use support::*;

const CHILD_DIR: &str = "BINLOGD_TEST_CHILD_DIR";
const THREADS: u64 = 3;
const PER_THREAD: u64 = 80;

fn child_options() -> Options {
    Options { binlogd_redo_segment_bytes: 4096, ..Options::default() }
}

/// The child's workload, run only by the test below.
#[test]
#[ignore = "the child process of killing_the_process_at_every_crash_point_loses_nothing_acknowledged"]
fn child_workload() {
    let dir = std::env::var(CHILD_DIR).expect("run by the parent test");
    let dir = Path::new(&dir);
    let (log, _) = RedoLog::open(dir.join("redo"), child_options(), Arc::new(OsStorage), CrashPoints::from_env()).unwrap();
    let acknowledged = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("acknowledged")).unwrap();
    let engine = Arc::new(Mutex::new(Vec::<u64>::new()));
    let threads: Vec<_> = (0..THREADS)
        .map(|thread| {
            let (log, engine) = (log.clone(), engine.clone());
            let mut acknowledged = acknowledged.try_clone().unwrap();
            std::thread::spawn(move || {
                for n in 0..PER_THREAD {
                    let id = thread * 1000 + n;
                    let end = {
                        let mut state = engine.lock();
                        let end = log.append(&record(id, 60), redo::Durability::Buffered).unwrap();
                        state.push(id);
                        end
                    };
                    log.wait_durable(end).unwrap();
                    // One write per line: lines from the threads must not interleave.
                    acknowledged.write_all(format!("{id}\n").as_bytes()).unwrap();
                    if thread == 0 && n % 20 == 19 {
                        let (start, snapshot) = {
                            let state = engine.lock();
                            (log.current_lsn(), encode_ids(&state))
                        };
                        log.checkpoint(start, |out| out.write_all(&snapshot)).unwrap();
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    log.close().unwrap();
    writeln!(&acknowledged, "closed").unwrap();
}

#[test]
fn killing_the_process_at_every_crash_point_loses_nothing_acknowledged() {
    let exe = std::env::current_exe().unwrap();
    for point in crash_points::ALL {
        let dir = tempfile::tempdir().unwrap();
        let output = std::process::Command::new(&exe)
            .args(["--exact", "child_workload", "--ignored", "--nocapture", "--test-threads", "1"])
            .env(CHILD_DIR, dir.path())
            .env("BINLOGD_CRASH_POINT", point)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{point}: the child finished without reaching the point");
        assert!(stderr.contains(&format!("crash point {point} reached")), "{point}: child died otherwise: {stderr}");
        let acknowledged: Vec<u64> =
            std::fs::read_to_string(dir.path().join("acknowledged")).unwrap_or_default().lines().filter_map(|l| l.parse().ok()).collect();

        let (_, recovered) = RedoLog::open(dir.path().join("redo"), child_options(), Arc::new(OsStorage), CrashPoints::default())
            .unwrap_or_else(|e| panic!("{point}: recovery failed: {e}"));
        let ids = recovered_ids(&recovered);
        let mut per_thread: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for id in &ids {
            per_thread.entry(id / 1000).or_default().push(id % 1000);
        }
        for (thread, sequence) in &per_thread {
            assert_eq!(sequence, &(0..sequence.len() as u64).collect::<Vec<_>>(), "{point}: thread {thread} is not a prefix");
        }
        for id in acknowledged {
            assert!(ids.contains(&id), "{point}: acknowledged {id} lost");
        }
    }
}
