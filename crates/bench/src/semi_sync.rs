//! `binlogd bench semi-sync`: what semi-synchronous replication costs the
//! source. One `binlogd serve` source and one semi-synchronous binlogd
//! replica on this machine; the source runs sysbench oltp_write_only with
//! `rpl_semi_sync_source_enabled` OFF (asynchronous) and ON, alternated
//! round by round (OFF then ON, then ON then OFF, …) so that drift of the
//! machine falls on both alike. Each run starts with the replica caught
//! up. Prints TPS and commit latency p50/p99 (sysbench's histogram) per
//! run and the medians with their ON/OFF ratios; writes CSV and a PNG.
//! Both servers are stopped by their PID at the end (and on errors and
//! Ctrl-C) and their directories removed unless --keep.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::common::RunDirs;
use super::replication::connection::Connection;
use super::replication::measure::{self, REPL_PASSWORD, REPL_USER};
use super::replication::server::ServerProcess;
use super::replication::{parse_server_option, CoordinatorKind, Relay, ReplicaSetup};
use super::report::{self, Bar, Table};
use super::side_by_side::servers::Interrupt;
use super::side_by_side::sysbench::{self, Target};

pub const SECONDS_MAX: u64 = 3600;
pub const ROUNDS_MAX: u32 = 100;
pub const THREADS_MAX: u32 = 1000;
/// The replica's memory relay log: far above what a run writes between
/// two catch-ups.
const RING_LIMIT_BYTES: u64 = 256 << 20;
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(600);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
const POLL_INTERVAL: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, clap::Args)]
pub struct SemiSyncBenchArgs {
    /// Directory for the servers' data directories (DIR/source,
    /// DIR/replica), created if missing; removed at the end unless --keep.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// sysbench threads on the source.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=THREADS_MAX as i64))]
    pub threads: u32,

    /// Length of each sysbench run.
    #[arg(long, value_name = "S", default_value_t = 30, value_parser = clap::value_parser!(u64).range(3..=SECONDS_MAX))]
    pub seconds: u64,

    /// Rounds; each runs both modes once.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=ROUNDS_MAX as i64))]
    pub rounds: u32,

    /// sysbench --tables.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub tables: u32,

    /// sysbench --table-size.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub table_size: u64,

    /// rpl_semi_sync_source_wait_point of the ON runs.
    #[arg(long, value_name = "POINT", default_value = "AFTER_SYNC", value_parser = ["AFTER_SYNC", "AFTER_COMMIT"])]
    pub wait_point: String,

    /// rpl_semi_sync_source_timeout (ms): a run in which the source fell
    /// back to asynchronous replication is reported as such.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub timeout_ms: u64,

    /// A `binlogd serve` option of the source (`NAME=VALUE`, repeatable),
    /// e.g. `binlog_storage_engine=engine`.
    #[arg(long = "source-option", value_name = "NAME=VALUE", value_parser = parse_server_option)]
    pub source_options: Vec<String>,

    /// A `binlogd serve` option of the replica (`NAME=VALUE`, repeatable).
    #[arg(long = "replica-option", value_name = "NAME=VALUE", value_parser = parse_server_option)]
    pub replica_options: Vec<String>,

    /// Print the runs and the summary as one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,

    /// CSV of every run, one row each.
    #[arg(long, value_name = "FILE", default_value = "semi-sync.csv")]
    pub csv: PathBuf,

    /// PNG of the median p50 and p99 commit latency of both modes.
    #[arg(long, value_name = "FILE.png", default_value = "semi-sync.png")]
    pub plot: PathBuf,

    /// Delete directories left in DIR by an earlier --keep run.
    #[arg(long)]
    pub clean: bool,

    /// Keep the data directories (and the servers' logs, binlogd.err).
    #[arg(long)]
    pub keep: bool,
}

/// One sysbench run in one mode.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub round: u32,
    pub semi_sync: bool,
    pub tps: f64,
    pub latency_ms_p50: f64,
    pub latency_ms_p99: f64,
    pub latency_ms_avg: f64,
    /// Rpl_semi_sync_source_yes_tx / _no_tx over the run.
    pub yes_tx: u64,
    pub no_tx: u64,
    /// Rpl_semi_sync_source_tx_wait_time / _tx_waits over the run (µs).
    pub ack_wait_us_avg: f64,
    /// Rpl_semi_sync_source_status at the run's end.
    pub status_on_at_end: bool,
}

/// The medians of one mode over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct ModeSummary {
    pub semi_sync: bool,
    pub tps: f64,
    pub latency_ms_p50: f64,
    pub latency_ms_p99: f64,
}

#[derive(Debug, Serialize)]
struct Results {
    threads: u32,
    seconds: u64,
    rounds: u32,
    wait_point: String,
    source_options: Vec<String>,
    runs: Vec<RunRow>,
    summary: Vec<ModeSummary>,
    /// ON over OFF of the medians.
    p50_ratio: f64,
    p99_ratio: f64,
    tps_ratio: f64,
}

pub fn run(args: &SemiSyncBenchArgs) -> Result<(), String> {
    let script = Path::new(sysbench::LUA_DIR).join("oltp_write_only.lua");
    if !script.exists() {
        return Err(format!("no sysbench script {}", script.display()));
    }
    let interrupt = Interrupt::install()?;
    let dirs = RunDirs::prepare(&args.dir)?;
    let source_dir = dirs.fresh("source", args.clean)?;
    let replica_dir = dirs.fresh("replica", args.clean)?;
    let measured = run_rounds(args, &source_dir, &replica_dir, &interrupt);
    let removed = if args.keep {
        Ok(())
    } else {
        RunDirs::remove(&source_dir).and_then(|()| RunDirs::remove(&replica_dir)).and_then(|()| dirs.finish(false))
    };
    let runs = measured?;
    removed?;
    let results = summarize(args, runs);
    print(args, &results)?;
    write_files(args, &results)
}

fn run_rounds(args: &SemiSyncBenchArgs, source_dir: &Path, replica_dir: &Path, interrupt: &Interrupt) -> Result<Vec<RunRow>, String> {
    let mut source_options = vec![
        "--server-id=1".to_string(),
        format!("--rpl-semi-sync-source-timeout={}", args.timeout_ms),
        format!("--rpl-semi-sync-source-wait-point={}", args.wait_point),
    ];
    source_options.extend_from_slice(&args.source_options);
    eprintln!("bench semi-sync: starting the source in {}", source_dir.display());
    let source = ServerProcess::start("source", source_dir, &source_options, interrupt)?;
    let mut connection = source.connect()?;
    connection.execute(&format!("CREATE USER '{REPL_USER}'@'%' IDENTIFIED BY '{REPL_PASSWORD}'"))?;
    connection.execute(&format!("GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'"))?;
    connection.execute("CREATE DATABASE sbtest")?;
    let target = Target { port: source.port, tables: args.tables, table_size: args.table_size, cpus: None };
    eprintln!("bench semi-sync: sysbench prepare ({} tables of {} rows)", args.tables, args.table_size);
    target.prepare(args.tables.min(8), interrupt)?;

    let mut replica_options = vec!["--server-id=2".to_string(), "--rpl-semi-sync-replica-enabled=ON".to_string()];
    replica_options.extend_from_slice(&args.replica_options);
    let replica = ServerProcess::start("replica", replica_dir, &replica_options, interrupt)?;
    let mut replica_connection = replica.connect()?;
    let setup = ReplicaSetup { relay: Relay::Memory, coordinator: CoordinatorKind::Queue, workers: 4 };
    measure::configure(&mut replica_connection, source.port, &setup, RING_LIMIT_BYTES, true)?;
    replica_connection.execute("START REPLICA")?;
    wait_for("the replica to connect semi-synchronously", CONNECT_TIMEOUT, interrupt, || {
        Ok(connection.status_counters("Rpl_semi_sync_source_clients")?.get("Rpl_semi_sync_source_clients").copied() == Some(1))
    })?;
    eprintln!("bench semi-sync: replica (PID {}) connected to the source (PID {})", replica.pid(), source.pid());

    let mut runs = Vec::new();
    for round in 1..=args.rounds {
        // OFF first in odd rounds, ON first in even ones.
        let order = if round % 2 == 1 { [false, true] } else { [true, false] };
        for semi_sync in order {
            interrupt.check()?;
            let wanted = connection.gtid_executed()?;
            measure::wait_caught_up(&mut replica_connection, &wanted, CATCH_UP_TIMEOUT, interrupt)?;
            connection.execute(&format!("SET GLOBAL rpl_semi_sync_source_enabled = {}", if semi_sync { "ON" } else { "OFF" }))?;
            let row = one_run(args, &target, &mut connection, round, semi_sync, interrupt)?;
            eprintln!(
                "bench semi-sync: round {round} semi-sync {}: {:.0} TPS, p50 {:.2} ms, p99 {:.2} ms, {} acknowledged, {} not",
                on_off(semi_sync),
                row.tps,
                row.latency_ms_p50,
                row.latency_ms_p99,
                row.yes_tx,
                row.no_tx
            );
            runs.push(row);
        }
    }
    connection.execute("SET GLOBAL rpl_semi_sync_source_enabled = OFF")?;
    drop(replica_connection);
    drop(connection);
    replica.stop()?;
    source.stop()?;
    Ok(runs)
}

fn one_run(
    args: &SemiSyncBenchArgs,
    target: &Target,
    connection: &mut Connection,
    round: u32,
    semi_sync: bool,
    interrupt: &Interrupt,
) -> Result<RunRow, String> {
    let before = connection.status_counters("Rpl_semi_sync_source_%")?;
    let output = target.start_run_with_histogram("oltp_write_only", args.threads, args.seconds)?.finish(interrupt)?;
    let after = connection.status_counters("Rpl_semi_sync_source_%")?;
    let status = connection.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source_status'")?;
    let summary = sysbench::parse_summary(&output.text)?;
    let delta = |name: &str| after.get(name).copied().unwrap_or(0).saturating_sub(before.get(name).copied().unwrap_or(0));
    let waits = delta("Rpl_semi_sync_source_tx_waits");
    Ok(RunRow {
        round,
        semi_sync,
        tps: summary.tps,
        latency_ms_p50: sysbench::latency_percentile_ms(&output.text, 50.0)?,
        latency_ms_p99: summary.latency_ms_percentile,
        latency_ms_avg: summary.latency_ms_avg,
        yes_tx: delta("Rpl_semi_sync_source_yes_tx"),
        no_tx: delta("Rpl_semi_sync_source_no_tx"),
        ack_wait_us_avg: if waits == 0 { 0.0 } else { delta("Rpl_semi_sync_source_tx_wait_time") as f64 / waits as f64 },
        status_on_at_end: status.first().and_then(|row| row.get(1)).cloned().flatten().as_deref() == Some("ON"),
    })
}

fn wait_for(what: &str, timeout: Duration, interrupt: &Interrupt, mut done: impl FnMut() -> Result<bool, String>) -> Result<(), String> {
    let deadline = std::time::Instant::now() + timeout;
    while !done()? {
        if std::time::Instant::now() > deadline {
            return Err(format!("{what} did not happen within {}s", timeout.as_secs()));
        }
        interrupt.sleep(POLL_INTERVAL)?;
    }
    Ok(())
}

fn on_off(on: bool) -> &'static str {
    if on {
        "ON"
    } else {
        "OFF"
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn summarize(args: &SemiSyncBenchArgs, runs: Vec<RunRow>) -> Results {
    let mode = |semi_sync: bool| {
        let of = |value: fn(&RunRow) -> f64| median(runs.iter().filter(|row| row.semi_sync == semi_sync).map(value).collect());
        ModeSummary {
            semi_sync,
            tps: of(|row| row.tps),
            latency_ms_p50: of(|row| row.latency_ms_p50),
            latency_ms_p99: of(|row| row.latency_ms_p99),
        }
    };
    let (off, on) = (mode(false), mode(true));
    let ratio = |on: f64, off: f64| if off > 0.0 { on / off } else { 0.0 };
    Results {
        threads: args.threads,
        seconds: args.seconds,
        rounds: args.rounds,
        wait_point: args.wait_point.clone(),
        source_options: args.source_options.clone(),
        p50_ratio: ratio(on.latency_ms_p50, off.latency_ms_p50),
        p99_ratio: ratio(on.latency_ms_p99, off.latency_ms_p99),
        tps_ratio: ratio(on.tps, off.tps),
        runs,
        summary: vec![off, on],
    }
}

const CSV_HEADERS: [&str; 10] = [
    "round",
    "semi_sync",
    "tps",
    "latency_ms_p50",
    "latency_ms_p99",
    "latency_ms_avg",
    "yes_tx",
    "no_tx",
    "ack_wait_us_avg",
    "status_on_at_end",
];

fn run_cells(row: &RunRow) -> Vec<String> {
    vec![
        row.round.to_string(),
        on_off(row.semi_sync).to_string(),
        format!("{:.1}", row.tps),
        format!("{:.2}", row.latency_ms_p50),
        format!("{:.2}", row.latency_ms_p99),
        format!("{:.2}", row.latency_ms_avg),
        row.yes_tx.to_string(),
        row.no_tx.to_string(),
        format!("{:.0}", row.ack_wait_us_avg),
        on_off(row.status_on_at_end).to_string(),
    ]
}

fn print(args: &SemiSyncBenchArgs, results: &Results) -> Result<(), String> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(results).map_err(|e| e.to_string())?);
        return Ok(());
    }
    println!(
        "sysbench oltp_write_only, {} threads, {} s per run, {} rounds; semi-sync {} with one binlogd replica{}",
        results.threads,
        results.seconds,
        results.rounds,
        results.wait_point,
        if results.source_options.is_empty() { String::new() } else { format!("; source {}", results.source_options.join(" ")) }
    );
    let mut table = Table::new(&CSV_HEADERS);
    for row in &results.runs {
        table.push_row(run_cells(row));
    }
    println!("{}", table.render());
    let mut summary = Table::new(&["semi_sync", "tps (median)", "p50 ms (median)", "p99 ms (median)"]);
    for mode in &results.summary {
        summary.push_row(vec![
            on_off(mode.semi_sync).to_string(),
            format!("{:.1}", mode.tps),
            format!("{:.2}", mode.latency_ms_p50),
            format!("{:.2}", mode.latency_ms_p99),
        ]);
    }
    println!("{}", summary.render());
    println!("ON / OFF: p50 {:.2}x, p99 {:.2}x, TPS {:.2}x", results.p50_ratio, results.p99_ratio, results.tps_ratio);
    Ok(())
}

fn write_files(args: &SemiSyncBenchArgs, results: &Results) -> Result<(), String> {
    let rows: Vec<Vec<String>> = results.runs.iter().map(run_cells).collect();
    report::write_csv(&args.csv, &CSV_HEADERS, &rows)?;
    let mut bars = Vec::new();
    for mode in &results.summary {
        let name = if mode.semi_sync { "semi-sync" } else { "async" };
        bars.push(Bar { label: format!("{name} p50"), value: mode.latency_ms_p50 });
        bars.push(Bar { label: format!("{name} p99"), value: mode.latency_ms_p99 });
    }
    let title = format!("commit latency (ms), oltp_write_only {} threads, median of {} rounds", results.threads, results.rounds);
    report::plot_bars(&args.plot, &title, &bars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_even_and_odd_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
    }
}
