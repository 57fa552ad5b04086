//! The three measurements of seed 001's method, on a replica started from
//! a copy of the prepared template (it has executed the source's
//! `sysbench prepare` and nothing after):
//!
//! 1. [`receive`]: START REPLICA IO_THREAD with the applier stopped; the
//!    time until Retrieved_Gtid_Set covers the source's set.
//! 2. [`apply`]: then START REPLICA SQL_THREAD and STOP REPLICA IO_THREAD
//!    (the receiver has nothing left to do: the source is idle); the time
//!    until the replica's gtid_executed covers the source's set, and the
//!    CPU time of the replica's coordinator and worker threads. The SQL
//!    thread starts before the receiver stops because a replica with both
//!    threads stopped starts its next thread on a new, empty memory relay
//!    log (nothing of it is kept across a full stop, by design).
//! 3. [`end_to_end`]: both threads running while sysbench runs on the
//!    source; the lag sampled every second.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog_format::gtid_set::{GtidSet, Uuid};

use super::super::side_by_side::servers::Interrupt;
use super::super::side_by_side::sysbench::{self, Target};
use super::super::thread_cpu::process_cpu_seconds_by_name;
use super::connection::{count_for, parse_gtid_set, Connection};
use super::server::ServerProcess;
use super::{ApplyRow, E2eRow, LagSample, ReceiveRow, ReplicaSetup};

/// How often the receive and apply waits look at the replica: short
/// against runs of a second or more, long enough that the polling
/// connection costs the server little.
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// The apply wait also reads SHOW REPLICA STATUS (for an apply error)
/// every this many polls.
const STATUS_EVERY_POLLS: u32 = 20;
/// End-to-end lag samples.
const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);
/// Most lag samples kept per run (one a second: a run of SECONDS_MAX).
const SAMPLES_MAX: usize = 10_000;

/// The source's replication account.
pub const REPL_USER: &str = "repl";
pub const REPL_PASSWORD: &str = "repl-bench";

/// What the replica is told by CHANGE REPLICATION SOURCE TO and the
/// global variables START REPLICA reads.
pub fn configure(
    replica: &mut Connection,
    source_port: u16,
    setup: &ReplicaSetup,
    ring_limit_bytes: u64,
    preserve_commit_order: bool,
) -> Result<(), String> {
    replica.execute(&format!("SET GLOBAL replica_parallel_workers = {}", setup.workers))?;
    replica.execute(&format!("SET GLOBAL binlogd_replica_coordinator_mode = {}", setup.coordinator.variable_value()))?;
    replica.execute(&format!("SET GLOBAL replica_preserve_commit_order = {}", if preserve_commit_order { "ON" } else { "OFF" }))?;
    replica.execute(&format!(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={source_port}, SOURCE_USER='{REPL_USER}', \
         SOURCE_PASSWORD='{REPL_PASSWORD}', SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1, \
         IN_MEMORY_RELAYLOG_ENABLED={}, IN_MEMORY_RELAYLOG_LIMIT={ring_limit_bytes}",
        u8::from(setup.relay.is_memory())
    ))
}

/// Fails with the replica's error if one of its threads stopped on one.
fn check_errors(status: &std::collections::BTreeMap<String, String>) -> Result<(), String> {
    for (errno, error) in [("Last_IO_Errno", "Last_IO_Error"), ("Last_SQL_Errno", "Last_SQL_Error")] {
        let code = status.get(errno).map_or("0", String::as_str);
        if code != "0" && !code.is_empty() {
            return Err(format!("the replica stopped with error {code}: {}", status.get(error).map_or("", String::as_str)));
        }
    }
    Ok(())
}

/// Calls `done` every [`POLL_INTERVAL`] until it says yes; fails after
/// `timeout` (or on Ctrl-C).
fn poll(what: &str, timeout: Duration, interrupt: &Interrupt, mut done: impl FnMut() -> Result<bool, String>) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        if done()? {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("{what} did not happen within {}s", timeout.as_secs()));
        }
        interrupt.sleep(POLL_INTERVAL)?;
    }
}

/// Waits (untimed) until `replica` has executed every transaction of
/// `wanted`, failing on a replica error.
pub fn wait_caught_up(replica: &mut Connection, wanted: &GtidSet, timeout: Duration, interrupt: &Interrupt) -> Result<(), String> {
    let mut polls = 0u32;
    poll("the replica catching up", timeout, interrupt, || {
        polls += 1;
        if polls.is_multiple_of(STATUS_EVERY_POLLS) {
            check_errors(&replica.replica_status()?)?;
        }
        Ok(wanted.is_subset_of(&replica.gtid_executed()?))
    })
}

/// Part 1: the receiver alone fetches everything the source has past the
/// replica's executed set into the relay log.
pub fn receive(
    replica: &mut Connection,
    setup: &ReplicaSetup,
    source_set: &GtidSet,
    timeout: Duration,
    interrupt: &Interrupt,
) -> Result<ReceiveRow, String> {
    let executed_before = replica.gtid_executed()?;
    let started = Instant::now();
    replica.execute("START REPLICA IO_THREAD")?;
    poll("the receiver fetching the source's transactions", timeout, interrupt, || {
        let status = replica.replica_status()?;
        check_errors(&status)?;
        let mut have = parse_gtid_set("replica", status.get("Retrieved_Gtid_Set").map_or("", String::as_str))?;
        have.union(&executed_before);
        Ok(source_set.is_subset_of(&have))
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let counters = replica.status_counters("Replica_%")?;
    let counter = |name: &str| counters.get(name).copied().unwrap_or(0);
    let bytes =
        counter("Replica_relay_log_memory_bytes") + counter("Replica_relay_log_spilled_bytes") + counter("Replica_relay_log_file_bytes");
    let transactions = counter("Replica_transactions_received");
    Ok(ReceiveRow {
        setup: *setup,
        seconds,
        bytes,
        transactions,
        mb_per_second: bytes as f64 / 1e6 / seconds,
        transactions_per_second: transactions as f64 / seconds,
        receiver_blocked_ms: counter("Replica_receiver_blocked_ms"),
    })
}

/// The replica's coordinator and workers, whose CPU time [`apply`] reads.
const APPLIER_THREADS: [&str; 2] = [replica::coordinator::COORDINATOR_THREAD_NAME, replica::coordinator::WORKER_THREAD_NAME_PREFIX];

/// Part 2: the applier alone applies the pre-filled relay log; with the
/// CPU time its coordinator and worker threads (in the replica process,
/// `replica_pid`) used, per transaction: the queue coordinator's gain is
/// its own work (it never reads an event), which the throughput hides
/// when the workers are the bottleneck.
pub fn apply(
    replica: &mut Connection,
    replica_pid: u32,
    received: &ReceiveRow,
    source_set: &GtidSet,
    timeout: Duration,
    interrupt: &Interrupt,
) -> Result<ApplyRow, String> {
    // Zero unless an earlier SQL thread of this server still runs.
    let cpu_before = process_cpu_seconds_by_name(replica_pid, &APPLIER_THREADS)?;
    let started = Instant::now();
    replica.execute("START REPLICA SQL_THREAD")?;
    replica.execute("STOP REPLICA IO_THREAD")?;
    wait_caught_up(replica, source_set, timeout, interrupt)?;
    let seconds = started.elapsed().as_secs_f64();
    // Read while the threads live: STOP REPLICA (the caller's) ends them,
    // and an ended thread's CPU time is no longer in /proc.
    let cpu_after = process_cpu_seconds_by_name(replica_pid, &APPLIER_THREADS)?;
    let counters = replica.status_counters("Replica_transactions_applied")?;
    let transactions = counters.get("Replica_transactions_applied").copied().unwrap_or(0);
    let us_per_transaction = |slot: usize| (cpu_after[slot] - cpu_before[slot]) * 1e6 / transactions.max(1) as f64;
    Ok(ApplyRow {
        setup: received.setup,
        seconds,
        bytes: received.bytes,
        transactions,
        transactions_per_second: transactions as f64 / seconds,
        mb_per_second: received.bytes as f64 / 1e6 / seconds,
        coordinator_cpu_us_per_transaction: us_per_transaction(0),
        workers_cpu_us_per_transaction: us_per_transaction(1),
    })
}

/// One lag sample: the source's and the replica's count of the source's
/// transactions, and Seconds_Behind_Source.
fn sample(source: &mut Connection, replica: &mut Connection, source_uuid: &Uuid, since: Instant) -> Result<LagSample, String> {
    let second = since.elapsed().as_secs_f64();
    let source_transactions = count_for(&source.gtid_executed()?, source_uuid);
    let status = replica.replica_status()?;
    check_errors(&status)?;
    let replica_transactions = count_for(&replica.gtid_executed()?, source_uuid);
    let seconds_behind_source = status.get("Seconds_Behind_Source").and_then(|text| text.parse().ok());
    Ok(LagSample {
        second,
        source_transactions,
        replica_transactions,
        lag_transactions: source_transactions.saturating_sub(replica_transactions),
        seconds_behind_source,
    })
}

/// What the end-to-end run needs besides the replica's setup.
pub struct EndToEnd<'a> {
    pub source: &'a ServerProcess,
    pub replica: &'a ServerProcess,
    pub target: &'a Target,
    pub threads: u32,
    pub seconds: u64,
    pub catch_up_timeout: Duration,
}

/// Part 3: sysbench on the source with the replica's threads running
/// (and caught up before it starts); lag sampled every second by a thread
/// of its own while this one waits for sysbench.
pub fn end_to_end(run: &EndToEnd<'_>, setup: &ReplicaSetup, interrupt: &Interrupt) -> Result<(E2eRow, Vec<LagSample>), String> {
    let mut source = run.source.connect()?;
    let mut replica = run.replica.connect()?;
    let source_uuid = source.server_uuid()?;
    let wanted = source.gtid_executed()?;
    replica.execute("START REPLICA")?;
    wait_caught_up(&mut replica, &wanted, run.catch_up_timeout, interrupt)?;

    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let sampler = {
        let (stop, interrupt) = (stop.clone(), interrupt.clone());
        std::thread::Builder::new()
            .name("bench-lag-sampler".into())
            .spawn(move || -> Result<Vec<LagSample>, String> {
                let mut samples = vec![sample(&mut source, &mut replica, &source_uuid, started)?];
                let mut next = started + SAMPLE_INTERVAL;
                while !stop.load(Ordering::SeqCst) && samples.len() < SAMPLES_MAX {
                    interrupt.sleep(next.saturating_duration_since(Instant::now()))?;
                    next += SAMPLE_INTERVAL;
                    samples.push(sample(&mut source, &mut replica, &source_uuid, started)?);
                }
                Ok(samples)
            })
            .map_err(|e| format!("starting the lag sampler: {e}"))?
    };
    let output = run.target.start_run("oltp_write_only", run.threads, run.seconds).and_then(|running| running.finish(interrupt));
    let run_seconds = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    let samples = sampler.join().map_err(|_| "the lag sampler panicked".to_string())??;
    let output = output?;
    let summary = sysbench::parse_summary(&output.text)?;

    // Catch-up: from sysbench's end until the replica has all of it.
    let mut source = run.source.connect()?;
    let mut replica = run.replica.connect()?;
    let final_set = source.gtid_executed()?;
    let after_run = sample(&mut source, &mut replica, &source_uuid, started)?;
    wait_caught_up(&mut replica, &final_set, run.catch_up_timeout, interrupt)?;
    let catch_up_seconds = started.elapsed().as_secs_f64() - after_run.second;

    let row = summarize(setup, &samples, &after_run, summary.tps, run_seconds, catch_up_seconds);
    Ok((row, samples))
}

/// The end-to-end row from the samples taken while sysbench ran and the
/// one taken right after it.
fn summarize(
    setup: &ReplicaSetup,
    samples: &[LagSample],
    after_run: &LagSample,
    source_tps: f64,
    run_seconds: f64,
    catch_up_seconds: f64,
) -> E2eRow {
    let first = samples.first().unwrap_or(after_run);
    let elapsed = after_run.second - first.second;
    let rate = |to: u64, from: u64| if elapsed > 0.0 { to.saturating_sub(from) as f64 / elapsed } else { 0.0 };
    let replica_apply_tps = rate(after_run.replica_transactions, first.replica_transactions);
    let source_commit_tps = rate(after_run.source_transactions, first.source_transactions);
    let all: Vec<&LagSample> = samples.iter().chain(std::iter::once(after_run)).collect();
    let lag_growth_per_second = slope(&all.iter().map(|s| (s.second, s.lag_transactions as f64)).collect::<Vec<_>>());
    // Bounded lag: over the whole run it grew by less than one second of
    // the source's work (a replica slower than the source by 2% at 60 s
    // grows it by more than that).
    let keeps_pace = lag_growth_per_second * run_seconds < source_commit_tps.max(1.0);
    E2eRow {
        setup: *setup,
        seconds: run_seconds,
        source_tps,
        source_commit_tps,
        replica_apply_tps,
        lag_transactions_max: all.iter().map(|s| s.lag_transactions).max().unwrap_or(0),
        lag_transactions_final: after_run.lag_transactions,
        seconds_behind_source_max: all.iter().filter_map(|s| s.seconds_behind_source).max(),
        lag_growth_per_second,
        catch_up_seconds,
        keeps_pace,
    }
}

/// Least-squares slope of `points` (0 for fewer than two distinct x).
pub fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if points.len() < 2 {
        return 0.0;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let covariance: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let variance: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if variance > 0.0 {
        covariance / variance
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CoordinatorKind, Relay};
    use super::*;

    fn lag(second: f64, source: u64, replica: u64) -> LagSample {
        LagSample {
            second,
            source_transactions: source,
            replica_transactions: replica,
            lag_transactions: source - replica,
            seconds_behind_source: Some(0),
        }
    }

    #[test]
    fn slope_of_a_line_and_of_noise() {
        assert!((slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]) - 2.0).abs() < 1e-9);
        assert_eq!(slope(&[(1.0, 5.0)]), 0.0);
        assert_eq!(slope(&[(1.0, 5.0), (1.0, 9.0)]), 0.0);
    }

    #[test]
    fn a_replica_whose_lag_grows_does_not_keep_pace() {
        let setup = ReplicaSetup { relay: Relay::Memory, coordinator: CoordinatorKind::Queue, workers: 8 };
        // 1000 trx/s on the source; the replica applies 1000/s (steady lag of 50) ...
        let steady: Vec<LagSample> = (0..10).map(|s| lag(s as f64, 1000 * s, (1000 * s).saturating_sub(50))).collect();
        let row = summarize(&setup, &steady, &lag(10.0, 10_000, 9_950), 1000.0, 10.0, 0.1);
        assert!(row.keeps_pace, "{row:?}");
        assert_eq!((row.lag_transactions_max, row.lag_transactions_final), (50, 50));
        assert!((row.replica_apply_tps - 1000.0).abs() < 10.0, "{row:?}");
        // ... or 800/s: the lag grows by 200 every second.
        let falling: Vec<LagSample> = (0..10).map(|s| lag(s as f64, 1000 * s, 800 * s)).collect();
        let row = summarize(&setup, &falling, &lag(10.0, 10_000, 8_000), 1000.0, 10.0, 2.5);
        assert!(!row.keeps_pace, "{row:?}");
        assert!((row.lag_growth_per_second - 200.0).abs() < 1e-6);
        assert_eq!(row.lag_transactions_max, 2000);
    }
}
