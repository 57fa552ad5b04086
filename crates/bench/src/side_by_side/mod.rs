//! `binlogd bench side-by-side`: MariaDB 10.11 and `binlogd serve` with
//! equal durability (binlog on, `sync_binlog = 1`, the same
//! `innodb_flush_log_at_trx_commit`), driven by the same sysbench
//! workloads, then the large-transaction experiment of seed 002 on each.
//! binlogd runs in each `--binlog-storage-engine` mode (seed 004:
//! `file` = classic files with two-phase commit, `engine` = the binlog
//! inside the redo log) at each `--flush-log-at-trx-commit` value; MariaDB
//! once per flush value, as the reference. Each run also reports the
//! commit path's fsyncs per transaction ([`fsyncs`]).
//!
//! The server setups run one after the other, each alone on the machine:
//! start, `sysbench prepare`, every (workload, threads) for `--seconds`,
//! the large transaction ([`large_trx`], once per server: on its first
//! `file`-mode setup) with oltp_write_only running, stop.
//! Each is held by a guard that stops it by PID on any error or Ctrl-C
//! ([`servers`]). The results are one table (or JSON), a CSV of the
//! summary rows, a CSV of every per-second sysbench report and a PNG of
//! TPS per second during the large-transaction runs ([`output`]).

pub mod client;
pub mod fsyncs;
pub mod large_trx;
pub mod output;
pub mod servers;
pub mod sysbench;

use std::path::PathBuf;

use database::BinlogStorageEngine;
use serde::Serialize;

use self::servers::{Interrupt, Kind, Server, Sizing};
use self::sysbench::{IntervalReport, Target};
use super::common::{format_size, median, parse_size, RunDirs};

/// Longest run of one workload.
pub const SECONDS_MAX: u64 = 3600;
/// Most sysbench threads.
pub const THREADS_MAX: u32 = 1000;
/// Most sysbench tables and rows per table.
pub const TABLES_MAX: u32 = 1000;
pub const TABLE_SIZE_MAX: u64 = 100_000_000;
/// The large transaction needs the 10 MiB promotion minimum to be
/// promoted, and should stay below what fits on an ordinary disk.
pub const LARGE_TRX_BYTES_MIN: u64 = 10 << 20;
pub const LARGE_TRX_BYTES_MAX: u64 = 64 << 30;
/// `max_allowed_packet` of both servers.
const MAX_ALLOWED_PACKET_BYTES: u64 = 1 << 30;
/// MySQL's default `binlog_large_transaction_optimization_threshold`.
const PROMOTION_THRESHOLD_DEFAULT_BYTES: u64 = 128 << 20;
/// The promotion minimum.
const PROMOTION_THRESHOLD_MIN_BYTES: u64 = 10 << 20;

#[derive(Debug, Clone, clap::Args)]
pub struct SideBySideBenchArgs {
    /// Directory for every setup's data directory (DIR/mariadb-flush1,
    /// DIR/binlogd-engine-flush1, ...), created if missing and removed at
    /// the end unless --keep.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Length of every sysbench run, the large-transaction run included.
    #[arg(long, value_name = "S", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(3..=SECONDS_MAX))]
    pub seconds: u64,

    /// sysbench workloads (scripts in /usr/share/sysbench), comma-separated.
    #[arg(long, value_name = "LIST", default_value = "oltp_write_only,oltp_read_write", value_delimiter = ',')]
    pub workloads: Vec<String>,

    /// sysbench thread counts, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "8,32", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(1..=THREADS_MAX as i64))]
    pub threads: Vec<u32>,

    /// sysbench --tables.
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=TABLES_MAX as i64))]
    pub tables: u32,

    /// sysbench --table-size.
    #[arg(long, value_name = "N", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..=TABLE_SIZE_MAX))]
    pub table_size: u64,

    /// Binlog size of the large transaction (0 skips the experiment).
    #[arg(long, value_name = "SIZE", default_value = "640MiB", value_parser = parse_large_trx_size)]
    pub large_trx_size: u64,

    /// sysbench threads running oltp_write_only during the large commit.
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=THREADS_MAX as i64))]
    pub large_trx_threads: u32,

    /// Servers to run, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "mariadb,binlogd", value_delimiter = ',', value_parser = parse_server)]
    pub servers: Vec<Kind>,

    /// binlogd's `binlog_storage_engine` modes, comma-separated: `file`
    /// (classic files, two-phase commit) and `engine` (binlog inside the
    /// redo log). MariaDB 10.11 has classic files only.
    #[arg(long, value_name = "LIST", default_value = "file,engine", value_delimiter = ',', value_parser = parse_mode)]
    pub binlog_storage_engine: Vec<BinlogStorageEngine>,

    /// `innodb_flush_log_at_trx_commit` values, comma-separated (0, 1, 2),
    /// for every server; `sync_binlog` stays 1.
    #[arg(long, value_name = "LIST", default_value = "1", value_delimiter = ',',
          value_parser = clap::value_parser!(u64).range(0..=2))]
    pub flush_log_at_trx_commit: Vec<u64>,

    /// MariaDB's innodb_buffer_pool_size (default: 1 GiB + twice the large transaction).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub innodb_buffer_pool_size: Option<u64>,

    /// binlogd's binlogd_engine_memory_limit (default: 1 GiB + four times
    /// the large transaction: the rows, their versions and indexes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub binlogd_engine_memory_limit: Option<u64>,

    /// Print the summary as JSON instead of the table.
    #[arg(long)]
    pub json: bool,

    /// CSV of the summary, one row per (server, workload, threads).
    #[arg(long, value_name = "FILE", default_value = "side-by-side.csv")]
    pub csv: PathBuf,

    /// CSV of every per-second sysbench report.
    #[arg(long, value_name = "FILE", default_value = "side-by-side-tps.csv")]
    pub series_csv: PathBuf,

    /// PNG of TPS per second during the large-transaction run, both servers.
    #[arg(long, value_name = "FILE.png", default_value = "side-by-side-tps.png")]
    pub plot: PathBuf,

    /// Delete DIR/mariadb and DIR/binlogd left by an earlier --keep run.
    #[arg(long)]
    pub clean: bool,

    /// Keep the data directories (and the servers' logs in them).
    #[arg(long)]
    pub keep: bool,
}

fn parse_large_trx_size(text: &str) -> Result<u64, String> {
    if text.trim() == "0" {
        return Ok(0);
    }
    let bytes = parse_size(text)?;
    if !(LARGE_TRX_BYTES_MIN..=LARGE_TRX_BYTES_MAX).contains(&bytes) {
        return Err(format!(
            "{text:?}: the large transaction must be 0 or between {} and {}",
            format_size(LARGE_TRX_BYTES_MIN),
            format_size(LARGE_TRX_BYTES_MAX)
        ));
    }
    Ok(bytes)
}

fn parse_mode(text: &str) -> Result<BinlogStorageEngine, String> {
    BinlogStorageEngine::parse(text).ok_or_else(|| format!("{text:?} is not file or engine"))
}

/// `file` or `engine`: the mode as the table and the CSV name it.
pub fn mode_name(mode: BinlogStorageEngine) -> &'static str {
    match mode {
        BinlogStorageEngine::File => "file",
        BinlogStorageEngine::Engine => "engine",
    }
}

/// One server configuration of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    pub kind: Kind,
    /// binlogd's `binlog_storage_engine`; always `File` for MariaDB 10.11.
    pub mode: BinlogStorageEngine,
    pub flush_log_at_trx_commit: u64,
}

impl Setup {
    /// Its data directory's name and its name in progress lines.
    pub fn name(&self) -> String {
        match self.kind {
            Kind::MariaDb => format!("mariadb-flush{}", self.flush_log_at_trx_commit),
            Kind::Binlogd => format!("binlogd-{}-flush{}", mode_name(self.mode), self.flush_log_at_trx_commit),
        }
    }
}

/// Every setup, flush value by flush value: MariaDB (the reference), then
/// binlogd in each mode.
pub fn setups(args: &SideBySideBenchArgs) -> Vec<Setup> {
    let mut setups = Vec::new();
    for &flush_log_at_trx_commit in &args.flush_log_at_trx_commit {
        for &kind in &args.servers {
            let modes: &[BinlogStorageEngine] = match kind {
                Kind::MariaDb => &[BinlogStorageEngine::File],
                Kind::Binlogd => &args.binlog_storage_engine,
            };
            for &mode in modes {
                setups.push(Setup { kind, mode, flush_log_at_trx_commit });
            }
        }
    }
    setups
}

/// Whether `setup` runs the large-transaction experiment: once per server,
/// on its first `file`-mode setup, so the servers are compared at the same
/// mode and each run costs one large transaction per server.
fn runs_large_trx(args: &SideBySideBenchArgs, setup: &Setup) -> bool {
    args.large_trx_size > 0
        && setup.mode == BinlogStorageEngine::File
        && setups(args).into_iter().find(|s| s.kind == setup.kind && s.mode == BinlogStorageEngine::File) == Some(*setup)
}

fn parse_server(text: &str) -> Result<Kind, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "mariadb" => Ok(Kind::MariaDb),
        "binlogd" => Ok(Kind::Binlogd),
        _ => Err(format!("{text:?} is not mariadb or binlogd")),
    }
}

/// One summary row: a sysbench run on one server.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub server: Kind,
    /// `file` or `engine` (`binlog_storage_engine`; MariaDB: `file`).
    pub binlog_storage_engine: &'static str,
    pub flush_log_at_trx_commit: u64,
    pub workload: String,
    pub threads: u32,
    /// The large-transaction run (a commit happened a third of the way in).
    pub large_trx: bool,
    pub tps: f64,
    pub latency_ms_p99: f64,
    pub latency_ms_max: f64,
    pub ignored_errors: u64,
    /// Commit-path fsyncs (redo + binlog, [`fsyncs`]) per sysbench
    /// transaction; `None` when the server lacks a counter.
    pub fsyncs_per_transaction: Option<f64>,
    /// The median of the per-second TPS reports.
    pub tps_median_per_second: f64,
    pub large_trx_bytes: Option<u64>,
    pub large_trx_rows: Option<u64>,
    pub large_trx_build_seconds: Option<f64>,
    pub large_commit_seconds: Option<f64>,
    /// The lowest per-second TPS of the seconds the commit overlapped.
    pub tps_lowest_during_commit: Option<f64>,
    pub commit_from_second: Option<f64>,
    pub commit_to_second: Option<f64>,
    /// The commit ended after sysbench's last report (the lowest TPS then
    /// covers only part of it).
    pub commit_outlasted_run: Option<bool>,
    /// binlogd: the transaction went into its own binlog file.
    pub promoted: Option<bool>,
}

/// One per-second report of one run.
#[derive(Debug, Clone)]
pub struct SeriesPoint {
    pub server: Kind,
    pub binlog_storage_engine: &'static str,
    pub flush_log_at_trx_commit: u64,
    pub workload: String,
    pub threads: u32,
    pub large_trx: bool,
    pub report: IntervalReport,
}

/// Everything measured.
#[derive(Debug, Default)]
pub struct Results {
    pub rows: Vec<RunRow>,
    pub series: Vec<SeriesPoint>,
}

pub fn run(args: &SideBySideBenchArgs) -> Result<(), String> {
    for workload in &args.workloads {
        let script = std::path::Path::new(sysbench::LUA_DIR).join(format!("{workload}.lua"));
        if !script.exists() {
            return Err(format!("no sysbench script {}", script.display()));
        }
    }
    let interrupt = Interrupt::install()?;
    let dirs = RunDirs::prepare(&args.dir)?;
    let outcome = (|| -> Result<Results, String> {
        let mut results = Results::default();
        for setup in setups(args) {
            let dir = dirs.fresh(&setup.name(), args.clean)?;
            let measured = run_server(setup, &dir, args, &interrupt, &mut results);
            let removed = if args.keep { Ok(()) } else { RunDirs::remove(&dir) };
            measured?;
            removed?;
        }
        Ok(results)
    })();
    let finished = dirs.finish(args.keep);
    let results = outcome?;
    finished?;
    output::print(args, &results)?;
    output::write_summary_csv(&args.csv, &results.rows)?;
    output::write_series_csv(&args.series_csv, &results.series)?;
    if results.rows.iter().any(|row| row.large_trx) {
        output::plot_large_trx(&args.plot, &results)?;
    }
    eprintln!(
        "bench side-by-side: wrote {}, {}{}",
        args.csv.display(),
        args.series_csv.display(),
        if args.large_trx_size > 0 { format!(", {}", args.plot.display()) } else { String::new() }
    );
    Ok(())
}

fn sizing(args: &SideBySideBenchArgs) -> Sizing {
    Sizing {
        buffer_pool_bytes: args.innodb_buffer_pool_size.unwrap_or((1 << 30) + 2 * args.large_trx_size),
        engine_memory_limit_bytes: args.binlogd_engine_memory_limit.unwrap_or((1 << 30) + 4 * args.large_trx_size),
        max_allowed_packet_bytes: MAX_ALLOWED_PACKET_BYTES,
    }
}

/// The promotion threshold binlogd gets: the default, lowered so that a
/// smaller `--large-trx-size` is still promoted (never below the minimum).
fn promotion_threshold(large_trx_bytes: u64) -> u64 {
    (large_trx_bytes / 2).clamp(PROMOTION_THRESHOLD_MIN_BYTES, PROMOTION_THRESHOLD_DEFAULT_BYTES)
}

/// Starts one server setup, runs every workload (and the large
/// transaction, [`runs_large_trx`]) against it, stops it.
fn run_server(
    setup: Setup,
    dir: &std::path::Path,
    args: &SideBySideBenchArgs,
    interrupt: &Interrupt,
    results: &mut Results,
) -> Result<(), String> {
    let sizing = sizing(args);
    let (kind, name, flush) = (setup.kind, setup.name(), setup.flush_log_at_trx_commit);
    eprintln!("bench side-by-side: starting {name} in {}", dir.display());
    let mut server = match kind {
        Kind::MariaDb => Server::start_mariadb(dir, &sizing, flush, interrupt)?,
        Kind::Binlogd => Server::start_binlogd(dir, &sizing, setup.mode, flush, interrupt)?,
    };
    eprintln!("bench side-by-side: {name} is PID {} on port {}", server.pid(), server.port);
    let client = client::Client::new(server.port);
    client.query("CREATE DATABASE sbtest")?;
    let target = Target { port: server.port, tables: args.tables, table_size: args.table_size };
    eprintln!("bench side-by-side: {name}: sysbench prepare ({} tables of {} rows)", args.tables, args.table_size);
    target.prepare(args.tables.min(8), interrupt)?;
    for workload in &args.workloads {
        for &threads in &args.threads {
            eprintln!("bench side-by-side: {name}: {workload}, {threads} threads, {}s", args.seconds);
            let fsyncs_before = fsyncs::count(kind, &client)?;
            let output = target.start_run(workload, threads, args.seconds)?.finish(interrupt)?;
            server.check_alive()?;
            let fsyncs_after = fsyncs::count(kind, &client)?;
            let summary = sysbench::parse_summary(&output.text)?;
            let reports: Vec<IntervalReport> = output.intervals.into_iter().map(|(_, report)| report).collect();
            results.rows.push(RunRow {
                server: kind,
                binlog_storage_engine: mode_name(setup.mode),
                flush_log_at_trx_commit: flush,
                fsyncs_per_transaction: fsyncs::per_transaction(fsyncs_before, fsyncs_after, summary.transactions),
                workload: workload.clone(),
                threads,
                large_trx: false,
                tps: summary.tps,
                latency_ms_p99: summary.latency_ms_percentile,
                latency_ms_max: summary.latency_ms_max,
                ignored_errors: summary.ignored_errors,
                tps_median_per_second: median(reports.iter().map(|r| r.tps).collect()),
                large_trx_bytes: None,
                large_trx_rows: None,
                large_trx_build_seconds: None,
                large_commit_seconds: None,
                tps_lowest_during_commit: None,
                commit_from_second: None,
                commit_to_second: None,
                commit_outlasted_run: None,
                promoted: None,
            });
            push_series(results, setup, workload, threads, false, reports);
        }
    }
    if runs_large_trx(args, &setup) {
        eprintln!(
            "bench side-by-side: {name}: large transaction of {} with {} {} threads",
            format_size(args.large_trx_size),
            large_trx::WORKLOAD,
            args.large_trx_threads
        );
        let outcome = large_trx::run(
            &mut server,
            &target,
            args.large_trx_threads,
            args.seconds,
            args.large_trx_size,
            promotion_threshold(args.large_trx_size),
            interrupt,
        )?;
        results.rows.push(RunRow {
            server: kind,
            binlog_storage_engine: mode_name(setup.mode),
            flush_log_at_trx_commit: flush,
            fsyncs_per_transaction: None,
            workload: large_trx::WORKLOAD.to_string(),
            threads: args.large_trx_threads,
            large_trx: true,
            tps: outcome.summary.tps,
            latency_ms_p99: outcome.summary.latency_ms_percentile,
            latency_ms_max: outcome.summary.latency_ms_max,
            ignored_errors: outcome.summary.ignored_errors,
            tps_median_per_second: median(outcome.intervals.iter().map(|r| r.tps).collect()),
            large_trx_bytes: Some(args.large_trx_size),
            large_trx_rows: Some(outcome.rows),
            large_trx_build_seconds: Some(outcome.build_seconds),
            large_commit_seconds: Some(outcome.commit_seconds),
            tps_lowest_during_commit: large_trx::lowest_tps_during(
                &outcome.intervals,
                outcome.commit_from_second,
                outcome.commit_to_second,
            ),
            commit_from_second: Some(outcome.commit_from_second),
            commit_to_second: Some(outcome.commit_to_second),
            commit_outlasted_run: Some(outcome.commit_outlasted_run),
            promoted: outcome.promoted,
        });
        push_series(results, setup, large_trx::WORKLOAD, args.large_trx_threads, true, outcome.intervals);
    }
    eprintln!("bench side-by-side: stopping {name}");
    server.stop()
}

fn push_series(results: &mut Results, setup: Setup, workload: &str, threads: u32, large_trx: bool, reports: Vec<IntervalReport>) {
    results.series.extend(reports.into_iter().map(|report| SeriesPoint {
        server: setup.kind,
        binlog_storage_engine: mode_name(setup.mode),
        flush_log_at_trx_commit: setup.flush_log_at_trx_commit,
        workload: workload.to_string(),
        threads,
        large_trx,
        report,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: SideBySideBenchArgs,
    }

    fn args(argv: &[&str]) -> Result<SideBySideBenchArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("bench").chain(argv.iter().copied())).map(|w| w.args)
    }

    #[test]
    fn defaults_are_the_issue_sizes() {
        let parsed = args(&["--dir", "/tmp/x"]).unwrap();
        assert_eq!(parsed.seconds, 30);
        assert_eq!(parsed.threads, vec![8, 32]);
        assert_eq!(parsed.workloads, vec!["oltp_write_only", "oltp_read_write"]);
        assert_eq!(parsed.large_trx_size, 640 << 20);
        assert_eq!(parsed.servers, vec![Kind::MariaDb, Kind::Binlogd]);
        assert_eq!(parsed.binlog_storage_engine, vec![BinlogStorageEngine::File, BinlogStorageEngine::Engine]);
        assert_eq!(parsed.flush_log_at_trx_commit, vec![1]);
        let sizing = sizing(&parsed);
        assert_eq!(sizing.engine_memory_limit_bytes, (1 << 30) + 4 * (640 << 20));
        assert_eq!(promotion_threshold(parsed.large_trx_size), 128 << 20);
        assert_eq!(promotion_threshold(40 << 20), 20 << 20);
        assert_eq!(promotion_threshold(12 << 20), 10 << 20);
    }

    #[test]
    fn refuses_bad_values() {
        assert_eq!(args(&["--dir", "/x", "--large-trx-size", "0"]).unwrap().large_trx_size, 0);
        assert!(args(&["--dir", "/x", "--large-trx-size", "1MiB"]).is_err(), "below the promotion minimum");
        assert!(args(&["--dir", "/x", "--servers", "mysql"]).is_err());
        assert!(args(&["--dir", "/x", "--threads", "0"]).is_err());
        assert!(args(&["--dir", "/x", "--seconds", "1"]).is_err());
        assert!(args(&["--dir", "/x", "--flush-log-at-trx-commit", "3"]).is_err());
        assert!(args(&["--dir", "/x", "--binlog-storage-engine", "rocks"]).is_err());
    }

    #[test]
    fn mariadb_once_per_flush_binlogd_per_mode_and_flush() {
        let parsed = args(&["--dir", "/x", "--binlog-storage-engine", "file,engine", "--flush-log-at-trx-commit", "0,1,2"]).unwrap();
        let names: Vec<String> = setups(&parsed).iter().map(Setup::name).collect();
        assert_eq!(
            names,
            [
                "mariadb-flush0",
                "binlogd-file-flush0",
                "binlogd-engine-flush0",
                "mariadb-flush1",
                "binlogd-file-flush1",
                "binlogd-engine-flush1",
                "mariadb-flush2",
                "binlogd-file-flush2",
                "binlogd-engine-flush2",
            ]
        );
        let large: Vec<String> = setups(&parsed).iter().filter(|s| runs_large_trx(&parsed, s)).map(Setup::name).collect();
        assert_eq!(large, ["mariadb-flush0", "binlogd-file-flush0"]);
        let engine_only = args(&["--dir", "/x", "--servers", "binlogd", "--binlog-storage-engine", "engine"]).unwrap();
        assert!(setups(&engine_only).iter().all(|s| !runs_large_trx(&engine_only, s)));
    }
}
