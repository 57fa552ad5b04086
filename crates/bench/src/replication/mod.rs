//! `binlogd bench replication`: seed 001's measurement of a replica's
//! pipeline, binlogd → binlogd over loopback.
//!
//! 1. A source (`binlogd serve`, server_id 1) gets `sysbench prepare`; a
//!    template replica (server_id 2) replicates it, stops and is shut
//!    down: every measured replica starts from a copy of its data
//!    directory, so it holds the tables and nothing of the workload.
//! 2. The source runs sysbench oltp_write_only (`--threads`, `--seconds`):
//!    the workload the replicas fetch and apply.
//! 3. For each relay log (memory, file) × coordinator (queue, event scan)
//!    × workers: a fresh replica copy measures the receiver alone (applier
//!    stopped) and then the applier alone over the filled relay log
//!    ([`measure::receive`], [`measure::apply`]).
//! 4. End to end, for each relay log × coordinator at `--e2e-workers`:
//!    one replica, caught up first, with both threads running while the
//!    source runs sysbench again; lag sampled every second
//!    ([`measure::end_to_end`]).
//!
//! The memory ring is sized to hold the whole workload (so the receiver
//! never blocks on it): the next power of two above 1.25 × its binlog
//! bytes, 32 MiB–4 GiB; a workload above what 4 GiB holds, or above the
//! file relay log's 1 GiB space limit, is refused (use a shorter
//! `--seconds`). Every server is stopped by its PID (on errors and
//! Ctrl-C too) and its directory removed at the end of its run.

pub mod connection;
pub mod measure;
pub mod output;
pub mod server;

use std::path::{Path, PathBuf};
use std::time::Duration;

use binlog_format::gtid_set::GtidSet;
use serde::Serialize;

use self::connection::count_for;
use self::measure::{EndToEnd, REPL_PASSWORD, REPL_USER};
use self::server::{copy_tree, ServerProcess};
use super::common::{format_size, RunDirs};
use super::side_by_side::servers::Interrupt;
use super::side_by_side::sysbench::{self, Target};

/// Longest sysbench run.
pub const SECONDS_MAX: u64 = 3600;
pub const THREADS_MAX: u32 = 1000;
pub const TABLES_MAX: u32 = 100;
pub const TABLE_SIZE_MAX: u64 = 10_000_000;
/// The file relay log's relay_log_space_limit (sql's replica threads): a
/// workload above it would block the receiver in the file runs.
const FILE_RELAY_SPACE_LIMIT_BYTES: u64 = sql::replica::threads::RELAY_FILE_SPACE_LIMIT_BYTES;
/// The receiver's and the applier's waits; the end-to-end catch-up.
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(600);
const APPLY_TIMEOUT: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = JSON_HELP)]
pub struct ReplicationBenchArgs {
    /// Directory for the servers' data directories (DIR/source,
    /// DIR/template, DIR/<run>), created if missing; each is removed at
    /// the end of its run unless --keep.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Length of the source's sysbench oltp_write_only runs: the workload
    /// the throughput runs replicate, and each end-to-end run.
    #[arg(long, value_name = "S", default_value_t = 60, value_parser = clap::value_parser!(u64).range(3..=SECONDS_MAX))]
    pub seconds: u64,

    /// replica_parallel_workers values, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "1,2,4,8", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(1..=replica::coordinator::WORKERS_MAX as i64))]
    pub workers: Vec<u32>,

    /// Relay logs, comma-separated: `memory` (IN_MEMORY_RELAYLOG_ENABLED=1)
    /// and `file` (=0).
    #[arg(long, value_name = "LIST", default_value = "memory,file", value_delimiter = ',', value_parser = parse_relay)]
    pub relay: Vec<Relay>,

    /// Coordinators, comma-separated: `queue` (from the group boundary
    /// queue) and `event-scan` (reads back and decodes every event);
    /// binlogd_replica_coordinator_mode.
    #[arg(long, value_name = "LIST", default_value = "queue,event-scan", value_delimiter = ',', value_parser = parse_coordinator)]
    pub coordinator: Vec<CoordinatorKind>,

    /// sysbench threads on the source.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=THREADS_MAX as i64))]
    pub threads: u32,

    /// sysbench --tables.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=TABLES_MAX as i64))]
    pub tables: u32,

    /// sysbench --table-size.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=TABLE_SIZE_MAX))]
    pub table_size: u64,

    /// replica_parallel_workers of the end-to-end runs (default: the
    /// largest of --workers).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=replica::coordinator::WORKERS_MAX as i64))]
    pub e2e_workers: Option<u32>,

    /// Parts to run, comma-separated: `throughput` (receiver alone, then
    /// applier alone, per relay × coordinator × workers) and `end-to-end`.
    #[arg(long, value_name = "LIST", default_value = "throughput,end-to-end", value_delimiter = ',', value_parser = parse_part)]
    pub parts: Vec<Part>,

    /// replica_preserve_commit_order of every replica (ON or OFF).
    #[arg(long, value_name = "ON|OFF", default_value = "ON", action = clap::ArgAction::Set, value_parser = super::common::parse_on_off)]
    pub preserve_commit_order: bool,

    /// A `binlogd serve` option of every replica (`NAME=VALUE`, repeatable),
    /// e.g. `sync_binlog=0` and `innodb_flush_log_at_trx_commit=2` for a
    /// replica whose commits do not wait for fsync. The source keeps the
    /// defaults (durable).
    #[arg(long = "replica-option", value_name = "NAME=VALUE", value_parser = parse_server_option)]
    pub replica_options: Vec<String>,

    /// Print the results as one JSON object instead of the tables (keys below).
    #[arg(long)]
    pub json: bool,

    /// CSV of every measured run, one row each (a `part` column says which).
    #[arg(long, value_name = "FILE", default_value = "replication.csv")]
    pub csv: PathBuf,

    /// CSV of the end-to-end lag samples, one per second.
    #[arg(long, value_name = "FILE", default_value = "replication-lag.csv")]
    pub series_csv: PathBuf,

    /// PNG of applier throughput against workers, one line per relay log
    /// and coordinator.
    #[arg(long, value_name = "FILE.png", default_value = "replication.png")]
    pub plot: PathBuf,

    /// PNG of the end-to-end lag (transactions) over each run.
    #[arg(long, value_name = "FILE.png", default_value = "replication-lag.png")]
    pub lag_plot: PathBuf,

    /// Delete run directories left in DIR by an earlier --keep run.
    #[arg(long)]
    pub clean: bool,

    /// Keep the data directories (and the servers' logs, binlogd.err).
    #[arg(long)]
    pub keep: bool,
}

const JSON_HELP: &str = "\
--json prints one object:
  workload: {threads, seconds, tables, table_size, source_tps, transactions,
             binlog_bytes, ring_limit_bytes, preserve_commit_order, replica_options}
  receive: [{relay, coordinator, workers, seconds, bytes, transactions,
             mb_per_second, transactions_per_second, receiver_blocked_ms}]
           (one per throughput run: the receiver with the applier stopped)
  receive_summary: [{relay, runs, mb_per_second_median, mb_per_second_min,
             mb_per_second_max, transactions_per_second_median}]
  apply: [{relay, coordinator, workers, seconds, bytes, transactions,
           transactions_per_second, mb_per_second,
           coordinator_cpu_us_per_transaction, workers_cpu_us_per_transaction}]
           (the applier with the receiver stopped, over the filled relay log;
           the CPU time of the replica's replica-coordinator thread and of its
           replica-worker-* threads, per transaction applied)
  end_to_end: [{relay, coordinator, workers, seconds, source_tps (sysbench),
           source_commit_tps, replica_apply_tps, lag_transactions_max,
           lag_transactions_final, seconds_behind_source_max,
           lag_growth_per_second, catch_up_seconds, keeps_pace}]
  lag_samples: [{relay, coordinator, workers, second, source_transactions,
           replica_transactions, lag_transactions, seconds_behind_source}]
  ratios: {receiver_memory_over_file (median MB/s), applier_queue_over_event_scan:
           [{relay, workers, ratio}] (transactions/s), applier_queue_over_event_scan_best,
           coordinator_cpu_event_scan_over_queue: [{relay, workers, ratio}]
           (coordinator CPU per transaction)}
keeps_pace: the lag's least-squares growth over the run is below one second
of the source's commits.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relay {
    Memory,
    File,
}

impl Relay {
    pub fn name(self) -> &'static str {
        match self {
            Relay::Memory => "memory",
            Relay::File => "file",
        }
    }

    pub fn is_memory(self) -> bool {
        self == Relay::Memory
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoordinatorKind {
    Queue,
    EventScan,
}

impl CoordinatorKind {
    pub fn name(self) -> &'static str {
        match self {
            CoordinatorKind::Queue => "queue",
            CoordinatorKind::EventScan => "event-scan",
        }
    }

    /// binlogd_replica_coordinator_mode's word for it.
    pub fn variable_value(self) -> &'static str {
        match self {
            CoordinatorKind::Queue => "QUEUE",
            CoordinatorKind::EventScan => "EVENT_SCAN",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Throughput,
    EndToEnd,
}

fn parse_relay(text: &str) -> Result<Relay, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "memory" => Ok(Relay::Memory),
        "file" => Ok(Relay::File),
        _ => Err(format!("{text:?} is not memory or file")),
    }
}

fn parse_coordinator(text: &str) -> Result<CoordinatorKind, String> {
    match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "queue" => Ok(CoordinatorKind::Queue),
        "event-scan" => Ok(CoordinatorKind::EventScan),
        _ => Err(format!("{text:?} is not queue or event-scan")),
    }
}

/// `NAME=VALUE` as the `--NAME=VALUE` option `serve` takes.
pub(crate) fn parse_server_option(text: &str) -> Result<String, String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() && !name.starts_with('-') => Ok(format!("--{}={}", name.trim(), value.trim())),
        _ => Err(format!("{text:?} is not NAME=VALUE")),
    }
}

fn parse_part(text: &str) -> Result<Part, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "throughput" => Ok(Part::Throughput),
        "end-to-end" | "e2e" => Ok(Part::EndToEnd),
        _ => Err(format!("{text:?} is not throughput or end-to-end")),
    }
}

/// One replica configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReplicaSetup {
    pub relay: Relay,
    pub coordinator: CoordinatorKind,
    pub workers: u32,
}

impl ReplicaSetup {
    /// Its run directory's name and its name in progress lines.
    pub fn name(&self) -> String {
        format!("{}-{}-w{}", self.relay.name(), self.coordinator.name(), self.workers)
    }
}

/// The workload the throughput runs replicate.
#[derive(Debug, Clone, Serialize)]
pub struct Workload {
    pub threads: u32,
    pub seconds: u64,
    pub tables: u32,
    pub table_size: u64,
    /// sysbench's TPS on the source.
    pub source_tps: f64,
    /// The source's transactions (GTIDs) of the run.
    pub transactions: u64,
    /// The source's binlog bytes of the run.
    pub binlog_bytes: u64,
    /// IN_MEMORY_RELAYLOG_LIMIT of every memory-relay replica.
    pub ring_limit_bytes: u64,
    pub preserve_commit_order: bool,
    /// `--NAME=VALUE` options every replica server got.
    pub replica_options: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReceiveRow {
    #[serde(flatten)]
    pub setup: ReplicaSetup,
    pub seconds: f64,
    pub bytes: u64,
    pub transactions: u64,
    pub mb_per_second: f64,
    pub transactions_per_second: f64,
    pub receiver_blocked_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ApplyRow {
    #[serde(flatten)]
    pub setup: ReplicaSetup,
    pub seconds: f64,
    pub bytes: u64,
    pub transactions: u64,
    pub transactions_per_second: f64,
    pub mb_per_second: f64,
    /// CPU time of the replica's `replica-coordinator` thread over the
    /// run, per transaction applied (µs).
    pub coordinator_cpu_us_per_transaction: f64,
    /// The same for its `replica-worker-*` threads together.
    pub workers_cpu_us_per_transaction: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct E2eRow {
    #[serde(flatten)]
    pub setup: ReplicaSetup,
    pub seconds: f64,
    pub source_tps: f64,
    /// The source's GTIDs per second over the sampled run.
    pub source_commit_tps: f64,
    pub replica_apply_tps: f64,
    pub lag_transactions_max: u64,
    /// When sysbench ended.
    pub lag_transactions_final: u64,
    pub seconds_behind_source_max: Option<u64>,
    /// Least-squares slope of the lag (transactions per second).
    pub lag_growth_per_second: f64,
    /// From sysbench's end until the replica had every transaction.
    pub catch_up_seconds: f64,
    pub keeps_pace: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct LagSample {
    /// Since sysbench started.
    pub second: f64,
    pub source_transactions: u64,
    pub replica_transactions: u64,
    pub lag_transactions: u64,
    /// NULL (None) while the applier is not running.
    pub seconds_behind_source: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SetupSample {
    #[serde(flatten)]
    pub setup: ReplicaSetup,
    #[serde(flatten)]
    pub sample: LagSample,
}

/// Everything measured.
#[derive(Debug, Default)]
pub struct Results {
    pub workload: Option<Workload>,
    pub receive: Vec<ReceiveRow>,
    pub apply: Vec<ApplyRow>,
    pub end_to_end: Vec<E2eRow>,
    pub lag_samples: Vec<SetupSample>,
}

/// The ring that holds `binlog_bytes` with a quarter to spare.
pub fn ring_limit_bytes(binlog_bytes: u64) -> Result<u64, String> {
    let wanted = binlog_bytes + binlog_bytes / 4;
    if wanted > replica::relay::MEMORY_LIMIT_BYTES_MAX {
        return Err(format!(
            "the workload's {} of binlog does not fit the largest memory relay log ({}) with room to spare: use a shorter --seconds",
            format_size(binlog_bytes),
            format_size(replica::relay::MEMORY_LIMIT_BYTES_MAX)
        ));
    }
    Ok(wanted.next_power_of_two().clamp(replica::relay::MEMORY_LIMIT_BYTES_MIN, replica::relay::MEMORY_LIMIT_BYTES_MAX))
}

/// The throughput setups, relay log by relay log.
pub fn throughput_setups(args: &ReplicationBenchArgs) -> Vec<ReplicaSetup> {
    let mut setups = Vec::new();
    for &relay in &args.relay {
        for &coordinator in &args.coordinator {
            for &workers in &args.workers {
                setups.push(ReplicaSetup { relay, coordinator, workers });
            }
        }
    }
    setups
}

pub fn end_to_end_setups(args: &ReplicationBenchArgs) -> Vec<ReplicaSetup> {
    let workers = args.e2e_workers.unwrap_or_else(|| args.workers.iter().copied().max().unwrap_or(8));
    let mut setups = Vec::new();
    for &relay in &args.relay {
        for &coordinator in &args.coordinator {
            setups.push(ReplicaSetup { relay, coordinator, workers });
        }
    }
    setups
}

pub fn run(args: &ReplicationBenchArgs) -> Result<(), String> {
    let script = Path::new(sysbench::LUA_DIR).join("oltp_write_only.lua");
    if !script.exists() {
        return Err(format!("no sysbench script {}", script.display()));
    }
    if args.workers.is_empty() || args.relay.is_empty() || args.coordinator.is_empty() || args.parts.is_empty() {
        return Err("--workers, --relay, --coordinator and --parts each need at least one value".into());
    }
    let interrupt = Interrupt::install()?;
    let dirs = RunDirs::prepare(&args.dir)?;
    let mut results = Results::default();
    let outcome = run_all(args, &dirs, &interrupt, &mut results);
    let finished = dirs.finish(args.keep);
    outcome?;
    finished?;
    output::print(args, &results)?;
    output::write_files(args, &results)?;
    Ok(())
}

/// A directory of the run, removed when done with unless --keep.
fn remove_unless_kept(args: &ReplicationBenchArgs, dir: &Path) -> Result<(), String> {
    if args.keep {
        Ok(())
    } else {
        RunDirs::remove(dir)
    }
}

fn run_all(args: &ReplicationBenchArgs, dirs: &RunDirs, interrupt: &Interrupt, results: &mut Results) -> Result<(), String> {
    let source_dir = dirs.fresh("source", args.clean)?;
    let template_dir = dirs.fresh("template", args.clean)?;
    let measured = (|| -> Result<(), String> {
        eprintln!("bench replication: starting the source in {}", source_dir.display());
        let source = ServerProcess::start("source", &source_dir, &["--server-id=1".to_string()], interrupt)?;
        eprintln!("bench replication: source is PID {} on port {}", source.pid(), source.port);
        let mut connection = source.connect()?;
        connection.execute(&format!("CREATE USER '{REPL_USER}'@'%' IDENTIFIED BY '{REPL_PASSWORD}'"))?;
        connection.execute(&format!("GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'"))?;
        connection.execute("CREATE DATABASE sbtest")?;
        let target = Target { port: source.port, tables: args.tables, table_size: args.table_size, cpus: None };
        eprintln!("bench replication: sysbench prepare ({} tables of {} rows)", args.tables, args.table_size);
        target.prepare(args.tables.min(8), interrupt)?;

        let template_setup = ReplicaSetup { relay: Relay::Memory, coordinator: CoordinatorKind::Queue, workers: 4 };
        make_template(&source, &template_dir, &template_setup, &args.replica_options, interrupt)?;

        // The workload.
        let uuid = connection.server_uuid()?;
        let (bytes_before, count_before) = (connection.binlog_bytes()?, count_for(&connection.gtid_executed()?, &uuid));
        eprintln!("bench replication: source runs sysbench oltp_write_only, {} threads, {}s", args.threads, args.seconds);
        let output = target.start_run("oltp_write_only", args.threads, args.seconds)?.finish(interrupt)?;
        let summary = sysbench::parse_summary(&output.text)?;
        let source_set = connection.gtid_executed()?;
        let binlog_bytes = connection.binlog_bytes()? - bytes_before;
        let workload = Workload {
            threads: args.threads,
            seconds: args.seconds,
            tables: args.tables,
            table_size: args.table_size,
            source_tps: summary.tps,
            transactions: count_for(&source_set, &uuid) - count_before,
            binlog_bytes,
            ring_limit_bytes: ring_limit_bytes(binlog_bytes)?,
            preserve_commit_order: args.preserve_commit_order,
            replica_options: args.replica_options.clone(),
        };
        if args.relay.contains(&Relay::File) && binlog_bytes >= FILE_RELAY_SPACE_LIMIT_BYTES {
            return Err(format!(
                "the workload's {} of binlog exceeds the file relay log's space limit ({}): the receiver would block; use a shorter --seconds",
                format_size(binlog_bytes),
                format_size(FILE_RELAY_SPACE_LIMIT_BYTES)
            ));
        }
        if args.parts.contains(&Part::Throughput) && workload.transactions >= replica::QUEUE_ENTRIES_MAX_DEFAULT as u64 {
            return Err(format!(
                "the workload's {} transactions fill the replica's boundary queue ({} entries): the receiver alone would block before the \
                 last one; use a shorter --seconds or fewer --threads",
                workload.transactions,
                replica::QUEUE_ENTRIES_MAX_DEFAULT
            ));
        }
        eprintln!(
            "bench replication: workload: {} transactions, {} of binlog, {:.0} TPS; memory relay log limit {}",
            workload.transactions,
            super::common::format_size_approx(binlog_bytes),
            workload.source_tps,
            format_size(workload.ring_limit_bytes)
        );
        results.workload = Some(workload.clone());

        if args.parts.contains(&Part::Throughput) {
            for setup in throughput_setups(args) {
                interrupt.check()?;
                let (received, applied) = throughput_run(args, dirs, &template_dir, &source, &source_set, &workload, &setup, interrupt)?;
                eprintln!(
                    "bench replication: {}: receiver {:.1} MB/s ({:.0} trx/s), applier {:.0} trx/s ({:.1} MB/s), CPU per trx coordinator {:.1} µs, workers {:.1} µs",
                    setup.name(),
                    received.mb_per_second,
                    received.transactions_per_second,
                    applied.transactions_per_second,
                    applied.mb_per_second,
                    applied.coordinator_cpu_us_per_transaction,
                    applied.workers_cpu_us_per_transaction
                );
                results.receive.push(received);
                results.apply.push(applied);
            }
        }
        if args.parts.contains(&Part::EndToEnd) {
            end_to_end_runs(args, dirs, &template_dir, &source, &target, &workload, interrupt, results)?;
        }
        source.stop()
    })();
    let removed_template = remove_unless_kept(args, &template_dir);
    let removed_source = remove_unless_kept(args, &source_dir);
    measured?;
    removed_template?;
    removed_source
}

/// The template replica: replicates the source's prepared tables, stops
/// its threads and shuts down cleanly.
fn make_template(
    source: &ServerProcess,
    dir: &Path,
    setup: &ReplicaSetup,
    options: &[String],
    interrupt: &Interrupt,
) -> Result<(), String> {
    eprintln!("bench replication: template replica replicates the prepared tables");
    let wanted = source.connect()?.gtid_executed()?;
    let mut all = vec!["--server-id=2".to_string()];
    all.extend_from_slice(options);
    let template = ServerProcess::start("template", dir, &all, interrupt)?;
    let mut replica = template.connect()?;
    measure::configure(&mut replica, source.port, setup, 128 << 20, true)?;
    replica.execute("START REPLICA")?;
    measure::wait_caught_up(&mut replica, &wanted, APPLY_TIMEOUT, interrupt)?;
    replica.execute("STOP REPLICA")?;
    drop(replica);
    template.stop()
}

/// A replica started on a copy of the template's data directory, its
/// threads not started.
fn start_replica_copy(
    name: &str,
    dir: &Path,
    template_dir: &Path,
    options: &[String],
    interrupt: &Interrupt,
) -> Result<ServerProcess, String> {
    copy_tree(&template_dir.join("data"), &dir.join("data"))?;
    let mut all = vec!["--server-id=2".to_string(), "--skip-replica-start=ON".to_string()];
    all.extend_from_slice(options);
    ServerProcess::start(name, dir, &all, interrupt)
}

#[allow(clippy::too_many_arguments)]
fn throughput_run(
    args: &ReplicationBenchArgs,
    dirs: &RunDirs,
    template_dir: &Path,
    source: &ServerProcess,
    source_set: &GtidSet,
    workload: &Workload,
    setup: &ReplicaSetup,
    interrupt: &Interrupt,
) -> Result<(ReceiveRow, ApplyRow), String> {
    let name = setup.name();
    let dir = dirs.fresh(&name, args.clean)?;
    let measured = (|| -> Result<(ReceiveRow, ApplyRow), String> {
        let mut replica = start_replica_copy(&name, &dir, template_dir, &args.replica_options, interrupt)?;
        let mut connection = replica.connect()?;
        measure::configure(&mut connection, source.port, setup, workload.ring_limit_bytes, args.preserve_commit_order)?;
        let received = measure::receive(&mut connection, setup, source_set, RECEIVE_TIMEOUT, interrupt)?;
        let applied = measure::apply(&mut connection, replica.pid(), &received, source_set, APPLY_TIMEOUT, interrupt)?;
        connection.execute("STOP REPLICA")?;
        replica.check_alive()?;
        drop(connection);
        replica.stop()?;
        Ok((received, applied))
    })();
    let removed = remove_unless_kept(args, &dir);
    let measured = measured?;
    removed?;
    Ok(measured)
}

/// The end-to-end runs on one replica (caught up before each run), its
/// setup changed between runs.
#[allow(clippy::too_many_arguments)]
fn end_to_end_runs(
    args: &ReplicationBenchArgs,
    dirs: &RunDirs,
    template_dir: &Path,
    source: &ServerProcess,
    target: &Target,
    workload: &Workload,
    interrupt: &Interrupt,
    results: &mut Results,
) -> Result<(), String> {
    let dir = dirs.fresh("end-to-end", args.clean)?;
    let measured = (|| -> Result<(), String> {
        let mut replica = start_replica_copy("end-to-end", &dir, template_dir, &args.replica_options, interrupt)?;
        // The ring needs no room for a whole workload here (the applier
        // runs), but the same size keeps the runs comparable.
        for setup in end_to_end_setups(args) {
            interrupt.check()?;
            let mut connection = replica.connect()?;
            connection.execute("STOP REPLICA")?;
            measure::configure(&mut connection, source.port, &setup, workload.ring_limit_bytes, args.preserve_commit_order)?;
            eprintln!(
                "bench replication: end to end {}: catching up, then sysbench {} threads for {}s",
                setup.name(),
                args.threads,
                args.seconds
            );
            let run = EndToEnd {
                source,
                replica: &replica,
                target,
                threads: args.threads,
                seconds: args.seconds,
                catch_up_timeout: APPLY_TIMEOUT,
            };
            let (row, samples) = measure::end_to_end(&run, &setup, interrupt)?;
            replica.check_alive()?;
            eprintln!(
                "bench replication: end to end {}: source {:.0} TPS, replica {:.0} TPS, lag max {} final {} trx, grows {:.1} trx/s, caught up {:.2}s after: {}",
                setup.name(),
                row.source_tps,
                row.replica_apply_tps,
                row.lag_transactions_max,
                row.lag_transactions_final,
                row.lag_growth_per_second,
                row.catch_up_seconds,
                if row.keeps_pace { "keeps pace" } else { "falls behind" }
            );
            results.end_to_end.push(row);
            results.lag_samples.extend(samples.into_iter().map(|sample| SetupSample { setup, sample }));
        }
        let mut connection = replica.connect()?;
        connection.execute("STOP REPLICA")?;
        drop(connection);
        replica.stop()
    })();
    let removed = remove_unless_kept(args, &dir);
    measured?;
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ReplicationBenchArgs,
    }

    fn args(list: &[&str]) -> Result<ReplicationBenchArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("bench").chain(list.iter().copied())).map(|cli| cli.args)
    }

    #[test]
    fn defaults_and_setups() {
        let parsed = args(&["--dir", "/x"]).unwrap();
        assert_eq!((parsed.seconds, parsed.threads, parsed.workers.clone()), (60, 8, vec![1, 2, 4, 8]));
        let names: Vec<String> = throughput_setups(&parsed).iter().map(ReplicaSetup::name).collect();
        assert_eq!(names.len(), 16);
        assert_eq!(&names[..5], ["memory-queue-w1", "memory-queue-w2", "memory-queue-w4", "memory-queue-w8", "memory-event-scan-w1"]);
        let e2e: Vec<String> = end_to_end_setups(&parsed).iter().map(ReplicaSetup::name).collect();
        assert_eq!(e2e, ["memory-queue-w8", "memory-event-scan-w8", "file-queue-w8", "file-event-scan-w8"]);
        let chosen =
            args(&["--dir", "/x", "--relay", "file", "--coordinator", "EVENT_SCAN", "--e2e-workers", "3", "--parts", "e2e"]).unwrap();
        assert_eq!(end_to_end_setups(&chosen), [ReplicaSetup { relay: Relay::File, coordinator: CoordinatorKind::EventScan, workers: 3 }]);
        assert_eq!(chosen.parts, [Part::EndToEnd]);
    }

    #[test]
    fn refuses_bad_values() {
        assert!(args(&["--dir", "/x", "--relay", "disk"]).is_err());
        assert!(args(&["--dir", "/x", "--coordinator", "fifo"]).is_err());
        assert!(args(&["--dir", "/x", "--workers", "0"]).is_err());
        assert!(args(&["--dir", "/x", "--seconds", "1"]).is_err());
        assert!(args(&["--dir", "/x", "--parts", "all"]).is_err());
        assert!(args(&["--dir", "/x", "--replica-option", "sync_binlog"]).is_err());
        let options =
            args(&["--dir", "/x", "--replica-option", "sync_binlog=0", "--replica-option", "innodb_flush_log_at_trx_commit=2"]).unwrap();
        assert_eq!(options.replica_options, ["--sync_binlog=0", "--innodb_flush_log_at_trx_commit=2"]);
        assert!(options.preserve_commit_order);
        assert!(!args(&["--dir", "/x", "--preserve-commit-order", "OFF"]).unwrap().preserve_commit_order);
    }

    #[test]
    fn the_ring_holds_the_workload_with_room_to_spare() {
        assert_eq!(ring_limit_bytes(1 << 20), Ok(32 << 20), "never below the minimum");
        assert_eq!(ring_limit_bytes(100 << 20), Ok(128 << 20));
        assert_eq!(ring_limit_bytes(120 << 20), Ok(256 << 20), "a quarter to spare");
        assert_eq!(ring_limit_bytes(3 << 30), Ok(4 << 30));
        assert!(ring_limit_bytes(7 << 29).is_err(), "3.5 GiB + a quarter is past 4 GiB");
    }
}
