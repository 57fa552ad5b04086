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
//! start, `sysbench prepare`, every (workload, threads) for `--seconds`
//! (`--rounds` times), the large transaction ([`large_trx`], once per
//! server: on its first `file`-mode setup) with oltp_write_only running,
//! stop. With `--old-binary`, each binlogd setup runs beside the same
//! setup of the old binary: both started, and their runs alternated
//! workload by workload (the order swapped every round), so a shared
//! machine's load falls on both alike. Every run reports the server
//! process's CPU per transaction ([`process_cpu`]) beside its TPS.
//! Each is held by a guard that stops it by PID on any error or Ctrl-C
//! ([`servers`]). The results are one table (or JSON), a CSV of the
//! summary rows, a CSV of every per-second sysbench report and a PNG of
//! TPS per second during the large-transaction runs ([`output`]).
//!
//! `--binlog-transaction-compression OFF,ON` runs each binlogd setup once
//! per setting, the servers started together and their runs alternated
//! as with `--old-binary` (ON set with `SET GLOBAL` before sysbench
//! connects); every run reports the bytes the binlog grew by per
//! transaction (`SHOW BINARY LOGS`), and the ON/OFF ratios are printed
//! against the issue's goal (at least 2x smaller, at most 10% fewer TPS).

pub mod client;
pub mod cpus;
pub mod footprint;
pub mod fsyncs;
pub mod large_trx;
pub mod output;
pub mod process_cpu;
pub mod servers;
pub mod sysbench;

use std::path::PathBuf;

use database::BinlogStorageEngine;
use serde::Serialize;

use self::servers::{Interrupt, Kind, Ports, Server, Sizing};
use self::sysbench::{IntervalReport, Target};
use super::common::{format_size, median, parse_size, RunDirs};
use super::compression::CompressionArgs;

/// Longest run of one workload.
pub const SECONDS_MAX: u64 = 3600;
/// Most sysbench threads.
pub const THREADS_MAX: u32 = 1000;
/// Most rounds of each (workload, threads).
pub const ROUNDS_MAX: u32 = 100;
/// The sysbench scripts whose tables `sysbench oltp_read_write prepare`
/// creates (the ones the issue's workloads name).
pub const WORKLOADS: [&str; 10] = [
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
];
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

    /// sysbench workloads, comma-separated: oltp_point_select,
    /// oltp_read_only, oltp_read_write, oltp_write_only, oltp_update_index,
    /// oltp_update_non_index, oltp_insert, oltp_delete,
    /// select_random_points, select_random_ranges, or `all`.
    #[arg(long, value_name = "LIST", default_value = "oltp_write_only,oltp_read_write", value_delimiter = ',', value_parser = parse_workload)]
    pub workloads: Vec<String>,

    /// Runs of every (workload, threads) on every server; with
    /// --old-binary the two binaries alternate, the order swapped each round.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=ROUNDS_MAX as i64))]
    pub rounds: u32,

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

    /// The binlogd executable whose `serve` is measured (default: this one).
    #[arg(long, value_name = "FILE")]
    pub binary: Option<PathBuf>,

    /// A second binlogd executable (the build before a change): every
    /// binlogd setup also runs with it, started beside the --binary one
    /// and alternated with it run by run; the ratios new/old are printed.
    #[arg(long, value_name = "FILE")]
    pub old_binary: Option<PathBuf>,

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

    // --binlog-transaction-compression OFF,ON (binlogd) and its zstd level.
    #[command(flatten)]
    pub compression: CompressionArgs,

    /// The servers listen on this port and the next ones, in the order
    /// they start (default: a free port each).
    #[arg(long, value_name = "PORT")]
    pub first_port: Option<u16>,

    /// Start every server of a flush setting together and alternate them
    /// run by run (the order reversed each round), as --old-binary does
    /// for two binlogd builds: on a shared machine, MariaDB's runs and
    /// binlogd's then meet the same load instead of following each other.
    #[arg(long)]
    pub interleave: bool,

    /// CPUs every server runs on (`0`, `0,2`, `0-3`), each server alone
    /// on them. With --client-cpus, server and sysbench no longer share
    /// cores, so TPS measures the server rather than the pair.
    #[arg(long, value_name = "LIST")]
    pub server_cpus: Option<cpus::CpuList>,

    /// CPUs sysbench runs on (see --server-cpus).
    #[arg(long, value_name = "LIST")]
    pub client_cpus: Option<cpus::CpuList>,

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

    /// PNG of each server's CPU microseconds per transaction, run by run.
    #[arg(long, value_name = "FILE.png", default_value = "side-by-side-cpu.png")]
    pub cpu_plot: PathBuf,

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

/// A workload name of [`WORKLOADS`]; `all` stands for every one (expanded
/// by [`workloads`]).
fn parse_workload(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name == "all" || WORKLOADS.contains(&name) {
        Ok(name.to_string())
    } else {
        Err(format!("{name:?} is not one of all, {}", WORKLOADS.join(", ")))
    }
}

/// The workloads to run, `all` expanded, each once, in the given order.
pub fn workloads(args: &SideBySideBenchArgs) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in &args.workloads {
        let expanded: Vec<String> = match name.as_str() {
            "all" => WORKLOADS.iter().map(|w| w.to_string()).collect(),
            other => vec![other.to_string()],
        };
        for name in expanded {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
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

/// Which binlogd executable a setup runs: `--binary` (the one measured)
/// or `--old-binary` (the build it is compared with). MariaDB's setups
/// are `Current`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Binary {
    Current,
    Old,
}

impl Binary {
    pub fn name(self) -> &'static str {
        match self {
            Binary::Current => "current",
            Binary::Old => "old",
        }
    }
}

/// One server configuration of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    pub kind: Kind,
    /// binlogd's `binlog_storage_engine`; always `File` for MariaDB 10.11.
    pub mode: BinlogStorageEngine,
    pub flush_log_at_trx_commit: u64,
    pub binary: Binary,
    /// binlogd's `binlog_transaction_compression`; always OFF for MariaDB.
    pub compression: bool,
}

impl Setup {
    /// Its data directory's name and its name in progress lines.
    pub fn name(&self) -> String {
        let old = match self.binary {
            Binary::Current => "",
            Binary::Old => "old-",
        };
        match self.kind {
            Kind::MariaDb => format!("mariadb-flush{}", self.flush_log_at_trx_commit),
            Kind::Binlogd => {
                let compression = if self.compression { "-compression-on" } else { "" };
                format!("binlogd-{old}{}{compression}-flush{}", mode_name(self.mode), self.flush_log_at_trx_commit)
            }
        }
    }
}

/// Every setup, flush value by flush value: MariaDB (the reference), then
/// binlogd in each mode, once per compression setting (each followed by
/// the old binary's, if given).
pub fn setups(args: &SideBySideBenchArgs) -> Vec<Setup> {
    let mut setups = Vec::new();
    for &flush_log_at_trx_commit in &args.flush_log_at_trx_commit {
        for &kind in &args.servers {
            let (modes, compressions): (&[BinlogStorageEngine], Vec<bool>) = match kind {
                Kind::MariaDb => (&[BinlogStorageEngine::File], vec![false]),
                Kind::Binlogd => (&args.binlog_storage_engine, args.compression.settings()),
            };
            for &mode in modes {
                for &compression in &compressions {
                    setups.push(Setup { kind, mode, flush_log_at_trx_commit, binary: Binary::Current, compression });
                    if kind == Kind::Binlogd && args.old_binary.is_some() {
                        setups.push(Setup { kind, mode, flush_log_at_trx_commit, binary: Binary::Old, compression });
                    }
                }
            }
        }
    }
    setups
}

/// The setups that run together, alternating: the binlogd setups of one
/// mode and flush value (old binary, compression ON and OFF); every
/// MariaDB setup alone.
pub fn groups(args: &SideBySideBenchArgs) -> Vec<Vec<Setup>> {
    let mut groups: Vec<Vec<Setup>> = Vec::new();
    for setup in setups(args) {
        let joins = |first: &Setup| match args.interleave {
            true => first.flush_log_at_trx_commit == setup.flush_log_at_trx_commit,
            false => {
                setup.kind == Kind::Binlogd
                    && first.kind == Kind::Binlogd
                    && first.mode == setup.mode
                    && first.flush_log_at_trx_commit == setup.flush_log_at_trx_commit
            }
        };
        match groups.last_mut() {
            Some(last) if joins(&last[0]) => last.push(setup),
            _ => groups.push(vec![setup]),
        }
    }
    groups
}

/// The executable a binlogd setup runs.
fn executable(args: &SideBySideBenchArgs, binary: Binary) -> Result<PathBuf, String> {
    let path = match binary {
        Binary::Current => args.binary.clone(),
        Binary::Old => args.old_binary.clone(),
    };
    match path {
        Some(path) if path.is_file() => Ok(path),
        Some(path) => Err(format!("{} is not a file", path.display())),
        None => std::env::current_exe().map_err(|e| format!("finding this executable: {e}")),
    }
}

/// Whether `setup` runs the large-transaction experiment: once per server,
/// on its first `file`-mode setup, so the servers are compared at the same
/// mode and each run costs one large transaction per server.
fn runs_large_trx(args: &SideBySideBenchArgs, setup: &Setup) -> bool {
    args.large_trx_size > 0
        && setup.mode == BinlogStorageEngine::File
        && setup.binary == Binary::Current
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
    /// binlogd: `--binary` (current) or `--old-binary` (old).
    pub binary: Binary,
    /// 1-based: which of the `--rounds` runs of this (workload, threads).
    pub round: u32,
    /// `file` or `engine` (`binlog_storage_engine`; MariaDB: `file`).
    pub binlog_storage_engine: &'static str,
    /// binlogd's `binlog_transaction_compression` (MariaDB: OFF).
    pub binlog_transaction_compression: bool,
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
    /// The server process's CPU (user + system, [`process_cpu`]) over the
    /// run per sysbench transaction, in microseconds.
    pub cpu_us_per_transaction: Option<f64>,
    /// What the binlog files grew by over the run (`SHOW BINARY LOGS`),
    /// per sysbench transaction.
    pub binlog_bytes_per_transaction: Option<f64>,
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
    pub binary: Binary,
    pub round: u32,
    pub binlog_storage_engine: &'static str,
    pub binlog_transaction_compression: bool,
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
    /// Each server's bytes for the prepared tables, in start order.
    pub footprints: Vec<footprint::Footprint>,
}

pub fn run(args: &SideBySideBenchArgs) -> Result<(), String> {
    for workload in workloads(args) {
        let script = std::path::Path::new(sysbench::LUA_DIR).join(format!("{workload}.lua"));
        if !script.exists() {
            return Err(format!("no sysbench script {}", script.display()));
        }
    }
    for binary in [Binary::Current, Binary::Old] {
        if binary == Binary::Current || args.old_binary.is_some() {
            executable(args, binary)?;
        }
    }
    let interrupt = Interrupt::install()?;
    let dirs = RunDirs::prepare(&args.dir)?;
    let mut ports = Ports::new(args.first_port);
    let outcome = (|| -> Result<Results, String> {
        let mut results = Results::default();
        for group in groups(args) {
            let mut group_dirs = Vec::new();
            for setup in &group {
                group_dirs.push(dirs.fresh(&setup.name(), args.clean)?);
            }
            let measured = run_group(&group, &group_dirs, args, &mut ports, &interrupt, &mut results);
            let removed = if args.keep { Ok(()) } else { group_dirs.iter().try_for_each(|dir| RunDirs::remove(dir)) };
            measured?;
            removed?;
        }
        Ok(results)
    })();
    let finished = dirs.finish(args.keep);
    let results = outcome?;
    finished?;
    output::print(args, &results)?;
    if args.server_cpus.is_some() || args.client_cpus.is_some() {
        let any = |cpus: &Option<cpus::CpuList>| cpus.as_ref().map_or("any".to_string(), ToString::to_string);
        println!("Servers ran on CPUs {}, sysbench on CPUs {}.", any(&args.server_cpus), any(&args.client_cpus));
    }
    output::write_summary_csv(&args.csv, &results.rows)?;
    output::write_series_csv(&args.series_csv, &results.series)?;
    if results.rows.iter().any(|row| row.large_trx) {
        output::plot_large_trx(&args.plot, &results)?;
    }
    output::plot_cpu(&args.cpu_plot, &results.rows)?;
    eprintln!(
        "bench side-by-side: wrote {}, {}, {}{}",
        args.csv.display(),
        args.series_csv.display(),
        args.cpu_plot.display(),
        if args.large_trx_size > 0 { format!(", {}", args.plot.display()) } else { String::new() }
    );
    Ok(())
}

fn sizing(args: &SideBySideBenchArgs) -> Sizing {
    Sizing {
        buffer_pool_bytes: args.innodb_buffer_pool_size.unwrap_or((1 << 30) + 2 * args.large_trx_size),
        engine_memory_limit_bytes: args.binlogd_engine_memory_limit.unwrap_or((1 << 30) + 4 * args.large_trx_size),
        max_allowed_packet_bytes: MAX_ALLOWED_PACKET_BYTES,
        cpus: args.server_cpus.clone(),
    }
}

/// The promotion threshold binlogd gets: the default, lowered so that a
/// smaller `--large-trx-size` is still promoted (never below the minimum).
fn promotion_threshold(large_trx_bytes: u64) -> u64 {
    (large_trx_bytes / 2).clamp(PROMOTION_THRESHOLD_MIN_BYTES, PROMOTION_THRESHOLD_DEFAULT_BYTES)
}

/// A started and prepared server of a group.
struct Running {
    setup: Setup,
    server: Server,
    client: client::Client,
    target: Target,
}

/// The order of a group's servers in `round` (1-based): as listed in odd
/// rounds, reversed in even ones, so neither binary always runs first.
pub fn round_order(servers: usize, round: u32) -> Vec<usize> {
    let mut order: Vec<usize> = (0..servers).collect();
    if round.is_multiple_of(2) {
        order.reverse();
    }
    order
}

/// Starts a group's servers (one setup each, `dirs` in the same order),
/// runs every workload on each (alternating within the group), the large
/// transaction ([`runs_large_trx`]), and stops them.
fn run_group(
    group: &[Setup],
    dirs: &[PathBuf],
    args: &SideBySideBenchArgs,
    ports: &mut Ports,
    interrupt: &Interrupt,
    results: &mut Results,
) -> Result<(), String> {
    let sizing = sizing(args);
    let mut running: Vec<Running> = Vec::new();
    for (&setup, dir) in group.iter().zip(dirs) {
        let name = setup.name();
        eprintln!("bench side-by-side: starting {name} in {}", dir.display());
        let server = match setup.kind {
            Kind::MariaDb => Server::start_mariadb(dir, &sizing, setup.flush_log_at_trx_commit, ports.take()?, interrupt)?,
            Kind::Binlogd => {
                let exe = executable(args, setup.binary)?;
                Server::start_binlogd(&exe, dir, &sizing, setup.mode, setup.flush_log_at_trx_commit, ports.take()?, interrupt)?
            }
        };
        eprintln!("bench side-by-side: {name} is PID {} on port {}", server.pid(), server.port);
        let client = client::Client::new(server.port);
        if setup.compression {
            // Before sysbench connects: its sessions start with the global values.
            client.query(&format!(
                "SET GLOBAL binlog_transaction_compression = ON; SET GLOBAL binlog_transaction_compression_level_zstd = {}",
                args.compression.binlog_transaction_compression_level_zstd
            ))?;
        }
        client.query("CREATE DATABASE sbtest")?;
        let target = Target { port: server.port, tables: args.tables, table_size: args.table_size, cpus: args.client_cpus.clone() };
        eprintln!("bench side-by-side: {name}: sysbench prepare ({} tables of {} rows)", args.tables, args.table_size);
        target.prepare(args.tables.min(8), interrupt)?;
        let rows = u64::from(args.tables) * args.table_size;
        results.footprints.push(footprint::measure(&client, setup.kind, name.clone(), args.tables, rows)?);
        running.push(Running { setup, server, client, target });
    }
    for workload in workloads(args) {
        for &threads in &args.threads {
            for round in 1..=args.rounds {
                for index in round_order(running.len(), round) {
                    measure(&mut running[index], &workload, threads, round, args, interrupt, results)?;
                }
            }
        }
    }
    for one in &mut running {
        if runs_large_trx(args, &one.setup) {
            run_large_trx(one, args, interrupt, results)?;
        }
    }
    for one in running {
        eprintln!("bench side-by-side: stopping {}", one.setup.name());
        one.server.stop()?;
    }
    Ok(())
}

/// One sysbench run of `workload` on one server: TPS, latency, fsyncs
/// and the server's CPU per transaction.
fn measure(
    one: &mut Running,
    workload: &str,
    threads: u32,
    round: u32,
    args: &SideBySideBenchArgs,
    interrupt: &Interrupt,
    results: &mut Results,
) -> Result<(), String> {
    let setup = one.setup;
    let rounds = if args.rounds > 1 { format!(", round {round}/{}", args.rounds) } else { String::new() };
    eprintln!("bench side-by-side: {}: {workload}, {threads} threads, {}s{rounds}", setup.name(), args.seconds);
    let fsyncs_before = fsyncs::count(setup.kind, &one.client)?;
    let binlog_bytes_before = binlog_bytes(&one.client)?;
    let cpu_before = process_cpu::cpu_seconds(one.server.pid())?;
    let output = one.target.start_run(workload, threads, args.seconds)?.finish(interrupt)?;
    one.server.check_alive()?;
    let cpu_after = process_cpu::cpu_seconds(one.server.pid())?;
    let fsyncs_after = fsyncs::count(setup.kind, &one.client)?;
    let binlog_bytes_after = binlog_bytes(&one.client)?;
    let summary = sysbench::parse_summary(&output.text)?;
    let reports: Vec<IntervalReport> = output.intervals.into_iter().map(|(_, report)| report).collect();
    results.rows.push(RunRow {
        server: setup.kind,
        binary: setup.binary,
        round,
        binlog_storage_engine: mode_name(setup.mode),
        binlog_transaction_compression: setup.compression,
        flush_log_at_trx_commit: setup.flush_log_at_trx_commit,
        fsyncs_per_transaction: fsyncs::per_transaction(fsyncs_before, fsyncs_after, summary.transactions),
        cpu_us_per_transaction: process_cpu::per_transaction_us(cpu_before, cpu_after, summary.transactions),
        binlog_bytes_per_transaction: (summary.transactions > 0)
            .then(|| binlog_bytes_after.saturating_sub(binlog_bytes_before) as f64 / summary.transactions as f64),
        workload: workload.to_string(),
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
    push_series(results, setup, round, workload, threads, false, reports);
    Ok(())
}

/// The bytes of the server's binlog files now: the sum of `SHOW BINARY
/// LOGS`'s `File_size` (MariaDB and binlogd alike).
fn binlog_bytes(client: &client::Client) -> Result<u64, String> {
    let output = client.query("SHOW BINARY LOGS")?;
    binlog_bytes_of(&output)
}

fn binlog_bytes_of(output: &str) -> Result<u64, String> {
    let mut bytes = 0;
    for line in output.lines().filter(|line| !line.is_empty()) {
        let size = line.split('\t').nth(1).ok_or_else(|| format!("SHOW BINARY LOGS: no File_size in {line:?}"))?;
        bytes += size.trim().parse::<u64>().map_err(|_| format!("SHOW BINARY LOGS: File_size {size:?} is not a number"))?;
    }
    Ok(bytes)
}

/// Seed 002's large transaction on one server, oltp_write_only running.
fn run_large_trx(one: &mut Running, args: &SideBySideBenchArgs, interrupt: &Interrupt, results: &mut Results) -> Result<(), String> {
    let setup = one.setup;
    eprintln!(
        "bench side-by-side: {}: large transaction of {} with {} {} threads",
        setup.name(),
        format_size(args.large_trx_size),
        large_trx::WORKLOAD,
        args.large_trx_threads
    );
    let cpu_before = process_cpu::cpu_seconds(one.server.pid())?;
    let outcome = large_trx::run(
        &mut one.server,
        &one.target,
        args.large_trx_threads,
        args.seconds,
        args.large_trx_size,
        promotion_threshold(args.large_trx_size),
        interrupt,
    )?;
    let cpu_after = process_cpu::cpu_seconds(one.server.pid())?;
    results.rows.push(RunRow {
        server: setup.kind,
        binary: setup.binary,
        round: 1,
        binlog_storage_engine: mode_name(setup.mode),
        binlog_transaction_compression: setup.compression,
        flush_log_at_trx_commit: setup.flush_log_at_trx_commit,
        fsyncs_per_transaction: None,
        binlog_bytes_per_transaction: None,
        // Includes building and committing the large transaction.
        cpu_us_per_transaction: process_cpu::per_transaction_us(cpu_before, cpu_after, outcome.summary.transactions),
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
        tps_lowest_during_commit: large_trx::lowest_tps_during(&outcome.intervals, outcome.commit_from_second, outcome.commit_to_second),
        commit_from_second: Some(outcome.commit_from_second),
        commit_to_second: Some(outcome.commit_to_second),
        commit_outlasted_run: Some(outcome.commit_outlasted_run),
        promoted: outcome.promoted,
    });
    push_series(results, setup, 1, large_trx::WORKLOAD, args.large_trx_threads, true, outcome.intervals);
    Ok(())
}

fn push_series(
    results: &mut Results,
    setup: Setup,
    round: u32,
    workload: &str,
    threads: u32,
    large_trx: bool,
    reports: Vec<IntervalReport>,
) {
    results.series.extend(reports.into_iter().map(|report| SeriesPoint {
        server: setup.kind,
        binary: setup.binary,
        round,
        binlog_storage_engine: mode_name(setup.mode),
        binlog_transaction_compression: setup.compression,
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

    #[test]
    fn every_sysbench_oltp_script_is_accepted_and_all_expands_to_them() {
        let parsed = args(&["--dir", "/x", "--workloads", "oltp_point_select,all,select_random_ranges"]).unwrap();
        let names = workloads(&parsed);
        assert_eq!(names[0], "oltp_point_select");
        assert_eq!(names.len(), WORKLOADS.len(), "each once: {names:?}");
        for name in WORKLOADS {
            assert_eq!(workloads(&args(&["--dir", "/x", "--workloads", name]).unwrap()), [name]);
        }
        assert!(args(&["--dir", "/x", "--workloads", "bulk_insert"]).is_err(), "its own tables, not prepare's");
        assert!(args(&["--dir", "/x", "--rounds", "0"]).is_err());
    }

    #[test]
    fn an_old_binary_runs_beside_each_binlogd_setup_alternating_by_round() {
        let parsed =
            args(&["--dir", "/x", "--servers", "binlogd", "--old-binary", "/bin/true", "--binlog-storage-engine", "file,engine"]).unwrap();
        let groups: Vec<Vec<String>> = groups(&parsed).iter().map(|group| group.iter().map(Setup::name).collect()).collect();
        assert_eq!(groups, [["binlogd-file-flush1", "binlogd-old-file-flush1"], ["binlogd-engine-flush1", "binlogd-old-engine-flush1"]]);
        let large: Vec<String> = setups(&parsed).iter().filter(|s| runs_large_trx(&parsed, s)).map(Setup::name).collect();
        assert_eq!(large, ["binlogd-file-flush1"], "the large transaction runs on the measured build only");
        assert_eq!(round_order(2, 1), [0, 1]);
        assert_eq!(round_order(2, 2), [1, 0]);
        assert_eq!(executable(&parsed, Binary::Old), Ok(PathBuf::from("/bin/true")));
        let missing = args(&["--dir", "/x", "--old-binary", "/no/such/binlogd"]).unwrap();
        assert!(executable(&missing, Binary::Old).unwrap_err().contains("/no/such/binlogd"));
        let alone = args(&["--dir", "/x"]).unwrap();
        assert!(groups_of_one(&alone));
        let interleaved =
            args(&["--dir", "/x", "--interleave", "--binlog-storage-engine", "file", "--flush-log-at-trx-commit", "1,2"]).unwrap();
        let together: Vec<Vec<String>> = super::groups(&interleaved).iter().map(|group| group.iter().map(Setup::name).collect()).collect();
        assert_eq!(together, [["mariadb-flush1", "binlogd-file-flush1"], ["mariadb-flush2", "binlogd-file-flush2"]]);
        let pinned = args(&["--dir", "/x", "--server-cpus", "0", "--client-cpus", "1-3"]).unwrap();
        assert_eq!(pinned.client_cpus.map(|cpus| cpus.to_string()), Some("1,2,3".to_string()));
    }

    #[test]
    fn compression_on_and_off_run_together_per_binlogd_mode_and_mariadb_alone() {
        let parsed = args(&[
            "--dir",
            "/x",
            "--binlog-storage-engine",
            "file,engine",
            "--binlog-transaction-compression",
            "OFF,ON",
            "--binlog-transaction-compression-level-zstd",
            "7",
            "--first-port",
            "24250",
        ])
        .unwrap();
        let groups: Vec<Vec<String>> = groups(&parsed).iter().map(|group| group.iter().map(Setup::name).collect()).collect();
        assert_eq!(
            groups,
            [
                vec!["mariadb-flush1"],
                vec!["binlogd-file-flush1", "binlogd-file-compression-on-flush1"],
                vec!["binlogd-engine-flush1", "binlogd-engine-compression-on-flush1"]
            ]
        );
        assert_eq!(parsed.compression.level_zstd(true), Some(7));
        let large: Vec<String> = setups(&parsed).iter().filter(|s| runs_large_trx(&parsed, s)).map(Setup::name).collect();
        assert_eq!(large, ["mariadb-flush1", "binlogd-file-flush1"], "one large transaction per server");
        assert_eq!(parsed.first_port, Some(24250));
        assert!(args(&["--dir", "/x", "--binlog-transaction-compression", "maybe"]).is_err());
        assert!(args(&["--dir", "/x", "--binlog-transaction-compression-level-zstd", "23"]).is_err());
    }

    #[test]
    fn binlog_bytes_add_up_show_binary_logs_file_sizes() {
        // binlogd's three columns, MariaDB's two.
        assert_eq!(binlog_bytes_of("binlog.000001\t1000\tNo\nbinlog.000002\t234\tNo\n"), Ok(1234));
        assert_eq!(binlog_bytes_of("binlog.000001\t77\n"), Ok(77));
        assert!(binlog_bytes_of("binlog.000001\n").is_err());
    }

    fn groups_of_one(parsed: &SideBySideBenchArgs) -> bool {
        groups(parsed).iter().all(|group| group.len() == 1) && groups(parsed).len() == setups(parsed).len()
    }
}
