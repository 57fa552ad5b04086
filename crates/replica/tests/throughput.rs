//! Short in-process measurements of the pipeline's two claims (seed 001),
//! without network or database: relay log write throughput with nothing
//! applied (memory ring vs relay-log files), and coordinator + workers
//! throughput over a pre-filled relay log (boundary queue vs event scan)
//! with an applier that only walks the events, and the CPU time the
//! coordinator thread and the worker threads used per transaction (what
//! the queue saves is the coordinator's work). Ignored by default:
//! `cargo test -p replica --test throughput -- --ignored --nocapture`.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog_format::EventType;
use replica::applier::{Applier, WorkerApplier};
use replica::relay::RelayLogConfig;
use replica::{BoundaryEntry, BoundaryQueue, Coordinator, CoordinatorConfig, CoordinatorMode, RelayLog, StopFlag, TransactionEvents};
use support::*;

const TRANSACTIONS: u64 = 100_000;
/// Transactions per commit group (same last_committed).
const GROUP: u64 = 8;

/// A sysbench oltp_write_only-like transaction: Gtid, BEGIN, four
/// (Table_map-sized, rows-sized) pairs, Xid: 11 events, ~1 KiB.
fn sysbench_like(gno: u64) -> Vec<Vec<u8>> {
    let group_start = (gno - 1) / GROUP * GROUP;
    let mut events = vec![gtid_event(gno, group_start as i64, gno as i64), query_event("BEGIN")];
    for _ in 0..4 {
        events.push(event(EventType::RowsQuery as u8, &[1u8; 40]));
        events.push(event(EventType::RowsQuery as u8, &[2u8; 150]));
    }
    let mut xid = Vec::new();
    binlog_format::events::simple::XidEvent { xid: gno }.encode_body(&mut xid);
    events.push(event(EventType::Xid as u8, &xid));
    events
}

fn relay_config(memory: bool, directory: &std::path::Path) -> RelayLogConfig {
    if memory {
        RelayLogConfig::memory(256 << 20, 16 << 20, directory.to_path_buf()).unwrap()
    } else {
        RelayLogConfig::Files { directory: directory.join("relay"), file_size_max_bytes: 1 << 30, space_limit_bytes: 1 << 40 }
    }
}

/// Fills a relay log with `TRANSACTIONS`; returns (bytes, time).
fn fill(relay: &RelayLog, queue: &BoundaryQueue) -> (u64, Duration) {
    let stop = StopFlag::new();
    let transactions: Vec<Vec<Vec<u8>>> = (1..=TRANSACTIONS).map(sysbench_like).collect();
    let bytes: u64 = transactions.iter().flatten().map(|event| event.len() as u64).sum();
    let started = Instant::now();
    for (index, events) in transactions.iter().enumerate() {
        let gno = index as u64 + 1;
        let group_start = (gno - 1) / GROUP * GROUP;
        write_transaction(relay, queue, index as u64, gno, (group_start as i64, gno as i64), events, &stop);
    }
    (bytes, started.elapsed())
}

struct Walk;
impl Applier for Walk {
    fn worker(&self, _: usize) -> Box<dyn WorkerApplier> {
        Box::new(Walk)
    }
}
impl WorkerApplier for Walk {
    fn apply(&mut self, _: &BoundaryEntry, events: &mut TransactionEvents<'_>) -> Result<(), protocol::MysqlError> {
        let mut checksum = 0u8;
        while let Some(event) = events.next_event()? {
            checksum ^= event[4];
        }
        std::hint::black_box(checksum);
        Ok(())
    }
    fn commit(&mut self, _: &BoundaryEntry) -> Result<(), protocol::MysqlError> {
        Ok(())
    }
    fn rollback(&mut self, _: &BoundaryEntry) {}
}

/// Linux keeps the first 15 bytes of a thread's name.
fn comm_prefix(name: &str) -> &str {
    &name[..name.len().min(15)]
}

/// On-CPU seconds so far of this process's live threads named like the
/// coordinator and like the workers (`/proc/self/task/*/schedstat`).
fn coordinator_and_workers_cpu_seconds() -> (f64, f64) {
    let (coordinator, workers) =
        (comm_prefix(replica::coordinator::COORDINATOR_THREAD_NAME), comm_prefix(replica::coordinator::WORKER_THREAD_NAME_PREFIX));
    let mut seconds = (0.0, 0.0);
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let (Ok(name), Ok(schedstat)) =
            (std::fs::read_to_string(task.path().join("comm")), std::fs::read_to_string(task.path().join("schedstat")))
        else {
            continue;
        };
        let nanoseconds: u64 = schedstat.split_whitespace().next().and_then(|field| field.parse().ok()).unwrap_or(0);
        if name.trim_end().starts_with(coordinator) {
            seconds.0 += nanoseconds as f64 / 1e9;
        } else if name.trim_end().starts_with(workers) {
            seconds.1 += nanoseconds as f64 / 1e9;
        }
    }
    seconds
}

fn mb_per_second(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 / (1 << 20) as f64 / elapsed.as_secs_f64()
}

#[test]
#[ignore]
fn relay_write_and_apply_throughput() {
    println!("relay log write, nothing applied ({TRANSACTIONS} transactions of ~1 KiB):");
    for memory in [true, false] {
        let directory = tempfile::tempdir().unwrap();
        let relay = RelayLog::open(&relay_config(memory, directory.path())).unwrap();
        let queue = BoundaryQueue::new(TRANSACTIONS as usize);
        let (bytes, elapsed) = fill(&relay, &queue);
        println!(
            "  {:6}: {:8.1} MB/s ({:.1} MiB in {elapsed:?})",
            if memory { "memory" } else { "files" },
            mb_per_second(bytes, elapsed),
            bytes as f64 / (1 << 20) as f64
        );
    }
    println!("apply over a pre-filled relay log (memory), walk-only applier, commit order preserved:");
    for mode in [CoordinatorMode::BoundaryQueue, CoordinatorMode::EventScan] {
        for workers in [1, 2, 4, 8] {
            let directory = tempfile::tempdir().unwrap();
            let relay = Arc::new(RelayLog::open(&relay_config(true, directory.path())).unwrap());
            let queue = Arc::new(BoundaryQueue::new(TRANSACTIONS as usize));
            let (bytes, _) = fill(&relay, &queue);
            let started = Instant::now();
            let coordinator =
                Coordinator::start(CoordinatorConfig { workers, preserve_commit_order: true, mode }, relay, queue, Arc::new(Walk));
            while coordinator.status().transactions_applied < TRANSACTIONS {
                std::thread::sleep(Duration::from_millis(1));
            }
            let elapsed = started.elapsed();
            // Before stop: the threads' CPU time leaves /proc with them
            // (none of them ran before start).
            let (coordinator_seconds, workers_seconds) = coordinator_and_workers_cpu_seconds();
            coordinator.stop();
            let us_per_transaction = |seconds: f64| seconds * 1e6 / TRANSACTIONS as f64;
            println!(
                "  {mode:?} workers={workers}: {:8.1} MB/s, {:8.0} trx/s, CPU per trx: coordinator {:6.2} µs, workers {:6.2} µs",
                mb_per_second(bytes, elapsed),
                TRANSACTIONS as f64 / elapsed.as_secs_f64(),
                us_per_transaction(coordinator_seconds),
                us_per_transaction(workers_seconds)
            );
        }
    }
}
