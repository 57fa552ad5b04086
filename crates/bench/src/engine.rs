//! `binlogd bench engine`: N sessions run small read-write transactions
//! against the durable database (engine + redo log + binary log, two-phase
//! commit), to show that group commit works across both logs: with
//! `innodb_flush_log_at_trx_commit = 1` and `sync_binlog = 1` every commit
//! waits for a redo fdatasync (its prepare) and a binlog fdatasync, yet one
//! fdatasync of each log serves a whole group of sessions.
//!
//! The transaction is sysbench's read-write mix cut down to one of each
//! kind: two point selects, an update by primary key (`k = k + 1`), and a
//! delete and re-insert of one key, on a table of `--table-size` rows
//! (`id INT PRIMARY KEY, k INT, c VARCHAR(120), pad VARCHAR(60)`, index on
//! `k`). Each session is a thread, as a client connection is in mysqld.
//! Lock waits and deadlocks (sessions may pick the same keys) roll back
//! and retry; they are counted. Latency is the whole transaction's.
//!
//! `--workload json` and `--workload wide` run the same transaction on a
//! table whose rows are a JSON document, or 20 columns of mixed types
//! (`engine_workloads` has the tables); each run reports rows written per
//! second and binlog MB per second beside tps.
//!
//! `--binlog-storage-engine file,engine` runs the same benchmark in both
//! modes of `binlog_storage_engine` (classic files with two-phase commit;
//! the binlog inside the redo log, where `--sync-binlog` is ignored), one
//! after the other in one invocation, and prints the ratio of the two
//! (the targets: engine at least 1.3x file at flush 1, fsyncs per
//! transaction at most half).
//!
//! `--compare-single-session` first runs one session for the same time in
//! `DIR/single-session`, so the speedup is measured on the same disk in the
//! same invocation; `--rounds N` repeats both runs alternately and keeps
//! each one's best round (the speedup is best over best); each round's
//! own speedup and their median are printed too (`speedup_per_round` in
//! JSON), since a round's two runs share the machine's load and the
//! disk's fsync latency of the moment. The targets (16 sessions, flush 1, sync_binlog
//! 1: at most 0.25 fsyncs per transaction for both logs together, and at
//! least 6x the single-session transactions/s) are printed with the result.
//!
//! `--binlog-transaction-compression OFF,ON` runs every run with each
//! setting (ON: every session's transactions written as zstd
//! Transaction_payload events), all of them alternated round by round; each
//! run reports the bytes the binlog files grew by and this process's CPU
//! time (every thread, user and system) per transaction, and the ON/OFF
//! ratios of the multi-session runs follow the tables.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use binlog_format::Value;
use database::engine::TableId;
use database::redo::FlushLogAtTrxCommit;
use database::{BinlogStorageEngine, CommitRequest, Database, DatabaseConfig, DatabaseError, StatementContext};
use hdrhistogram::Histogram;
use serde::Serialize;

use super::common::{median, new_latency_histogram, parse_on_off, RunDirs, LATENCY_US_MAX};
use super::compression::{self, CompressionArgs, Measured, Ratios, RunCompression};
use super::engine_stages::{self, StageBreakdown};
use super::engine_workloads::{FastRng, Workload, DATABASE, ROWS_WRITTEN_PER_TRANSACTION};
use super::report::Table;

/// Most sessions (threads) one run may start.
pub const SESSIONS_MAX: u32 = 4096;
/// Longest run.
pub const SECONDS_MAX: u64 = 3600;
/// Most rounds of `--rounds`.
pub const ROUNDS_MAX: u32 = 100;
/// Largest table the benchmark preloads.
pub const TABLE_SIZE_MAX: u64 = 10_000_000;
/// Rows per preload transaction.
const PRELOAD_ROWS_PER_TRANSACTION: u64 = 1000;
/// Subdirectories of `--dir` for each run.
const SINGLE_SESSION_SUBDIR: &str = "single-session";
const SESSIONS_SUBDIR: &str = "sessions";
/// The targets of 16 sessions at flush 1 and sync_binlog 1.
const TARGET_FSYNCS_PER_TRANSACTION_MAX: f64 = 0.25;
const TARGET_SPEEDUP_MIN: f64 = 6.0;

#[derive(Debug, Clone, clap::Args)]
pub struct EngineBenchArgs {
    /// Directory for the data directories of the runs (created if
    /// missing; DIR/sessions and DIR/single-session must not exist unless
    /// --clean is given).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Concurrent sessions, one thread each.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=SESSIONS_MAX as i64))]
    pub sessions: u32,

    /// Length of each run.
    #[arg(long, value_name = "S", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=SECONDS_MAX))]
    pub seconds: u64,

    /// `innodb_flush_log_at_trx_commit`: 1 = fdatasync the prepare record
    /// at every commit (group commit), 2 = write it, 0 = leave it buffered.
    #[arg(long, value_name = "0|1|2", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(0..=2))]
    pub flush_log_at_trx_commit: u64,

    /// `sync_binlog`: 1 = fdatasync every group, N = every N groups, 0 = never.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub sync_binlog: u64,

    /// `binlogd_group_commit_gather_max` (µs): how long a group's leader
    /// waits for the previous group's sessions to come back (flush = 1).
    #[arg(long, value_name = "MICROSECONDS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub group_commit_gather_max: u64,

    /// `binlogd_cross_log_group_commit`: one group commit for both logs
    /// (ON), or the two logs' own group commits chained (OFF).
    #[arg(long, value_name = "ON|OFF", default_value = "ON", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub cross_log_group_commit: bool,

    /// `binlog_group_commit_sync_delay` (µs).
    #[arg(long, value_name = "MICROSECONDS", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub binlog_group_commit_sync_delay: u64,

    /// `binlog_storage_engine` of each run, comma-separated: `file` (empty,
    /// classic) and/or `engine`.
    #[arg(long, value_name = "file|engine", value_delimiter = ',', default_value = "file", value_parser = parse_mode)]
    pub binlog_storage_engine: Vec<BinlogStorageEngine>,

    /// The table and rows: sysbench's, a JSON document per row, or 20
    /// columns of mixed types (see `engine_workloads`).
    #[arg(long, value_enum, default_value = "sysbench")]
    pub workload: Workload,

    /// Rows preloaded into the table (sysbench's --table-size).
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(10..=TABLE_SIZE_MAX))]
    pub table_size: u64,

    // --binlog-transaction-compression OFF,ON and its zstd level.
    #[command(flatten)]
    pub compression: CompressionArgs,

    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,

    /// First run one session for the same time (in DIR/single-session)
    /// and report the speedup.
    #[arg(long)]
    pub compare_single_session: bool,

    /// Run the single-session and multi-session runs this many times,
    /// alternately, each in a fresh directory; each keeps its best round
    /// (by transactions/s), as `bench dump --rounds` does: on a shared
    /// machine a burst of other load hits one round, not the comparison.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=ROUNDS_MAX as i64))]
    pub rounds: u32,

    /// Delete DIR/sessions and DIR/single-session if they exist.
    #[arg(long)]
    pub clean: bool,

    /// Keep the data directories (default: delete them at the end).
    #[arg(long)]
    pub keep: bool,
}

/// What one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// "file" or "engine".
    pub binlog_storage_engine: &'static str,
    pub sessions: u32,
    pub innodb_flush_log_at_trx_commit: u64,
    pub sync_binlog: u64,
    pub cross_log_group_commit: bool,
    pub group_commit_gather_max_us: u64,
    pub binlog_group_commit_sync_delay_us: u64,
    /// "sysbench", "json" or "wide".
    pub workload: &'static str,
    pub table_size: u64,
    pub transactions: u64,
    /// Lock wait timeouts and deadlocks, retried.
    pub retries: u64,
    pub seconds: f64,
    pub tps: f64,
    pub latency_us_p50: u64,
    pub latency_us_p99: u64,
    pub latency_us_max: u64,
    pub redo_fsyncs: u64,
    pub binlog_fsyncs: u64,
    pub redo_fsyncs_per_sec: f64,
    pub binlog_fsyncs_per_sec: f64,
    /// Redo and binlog fdatasyncs together, per transaction.
    pub fsyncs_per_transaction: f64,
    /// Rows written (updated, deleted, inserted) per second.
    pub rows_per_sec: f64,
    /// Binlog bytes written per second, in MB (10^6 bytes).
    pub binlog_mb_per_sec: f64,
    /// Compression's setting, and the binlog bytes and CPU per
    /// transaction, from the start to the last commit written (the
    /// sessions finishing after the deadline included).
    #[serde(flatten)]
    pub compression: RunCompression,
    /// Mean µs per cross-log group of each of its stages (all zero when
    /// commits do not go through it).
    pub group_commit_stages: StageBreakdown,
}

impl RunResult {
    fn measured(&self) -> Measured {
        self.compression.measured(self.tps)
    }
}

/// `--json` with `--compare-single-session`: the multi-session run's keys
/// at the top level, the single-session run and the speedup beside them.
#[derive(Serialize)]
struct Comparison<'a> {
    #[serde(flatten)]
    run: &'a RunResult,
    single_session: &'a RunResult,
    speedup: f64,
    /// Each round's multi-session tps over the same round's single-session
    /// tps (`--rounds`): the two ran back to back, on the same machine
    /// load and disk latency.
    speedup_per_round: &'a [f64],
    target_fsyncs_per_transaction_met: bool,
    target_speedup_met: bool,
}

pub fn run(args: &EngineBenchArgs) -> Result<(), String> {
    let dirs = RunDirs::prepare(&args.dir)?;
    let mut modes = args.binlog_storage_engine.clone();
    modes.dedup();
    let outcome = (|| -> Result<Vec<RunResult>, String> {
        let mut multi_session = Vec::new();
        for mode in &modes {
            let mode_args = EngineBenchArgs { binlog_storage_engine: vec![*mode], ..args.clone() };
            // Classic runs keep their directory names; engine runs get a suffix.
            let suffix = if *mode == BinlogStorageEngine::Engine { "-engine" } else { "" };
            for (results, speedup_per_round) in run_mode(&dirs, &mode_args, suffix)? {
                print_results(&mode_args, &results, &speedup_per_round)?;
                multi_session.push(results.last().expect("at least one run").clone());
            }
        }
        Ok(multi_session)
    })();
    let finished = dirs.finish(args.keep);
    let multi_session = outcome?;
    finished?;
    for on in args.compression.settings() {
        let of_mode = |name: &str| {
            multi_session.iter().find(|r| r.binlog_storage_engine == name && r.compression.binlog_transaction_compression == on)
        };
        if let (Some(file), Some(engine)) = (of_mode("file"), of_mode("engine")) {
            print_comparison(args, file, engine)?;
        }
    }
    for mode in &modes {
        let of_setting = |on: bool| {
            multi_session.iter().find(|r| r.binlog_storage_engine == mode_name(*mode) && r.compression.binlog_transaction_compression == on)
        };
        if let (Some(off), Some(on)) = (of_setting(false), of_setting(true)) {
            print_compression(args, off, on)?;
        }
    }
    Ok(())
}

/// ON against OFF, the multi-session runs of one mode.
fn print_compression(args: &EngineBenchArgs, off: &RunResult, on: &RunResult) -> Result<(), String> {
    let ratios = Ratios::of(&off.measured(), &on.measured());
    if args.json {
        let json = serde_json::json!({ "binlog_storage_engine": off.binlog_storage_engine, "compression": ratios });
        println!("{json}");
        return Ok(());
    }
    println!("{}", ratios.describe(&format!("{} mode, {} sessions", off.binlog_storage_engine, off.sessions)));
    Ok(())
}

/// The ratio of the two modes' multi-session runs, beside its targets.
fn print_comparison(args: &EngineBenchArgs, file: &RunResult, engine: &RunResult) -> Result<(), String> {
    let speedup = if file.tps > 0.0 { engine.tps / file.tps } else { 0.0 };
    let fsync_ratio = if file.fsyncs_per_transaction > 0.0 { engine.fsyncs_per_transaction / file.fsyncs_per_transaction } else { 0.0 };
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    if args.json {
        let json = serde_json::json!({ "engine_vs_file_tps": speedup, "engine_vs_file_fsyncs_per_transaction": fsync_ratio });
        println!("{json}");
        return Ok(());
    }
    println!(
        "engine vs file, {} sessions: {speedup:.2}x tps (target >= 1.3x: {}), fsyncs/trx {:.3} vs {:.3} = {fsync_ratio:.2}x (target <= 0.5x: {})",
        file.sessions,
        verdict(speedup >= 1.3),
        engine.fsyncs_per_transaction,
        file.fsyncs_per_transaction,
        verdict(fsync_ratio <= 0.5)
    );
    Ok(())
}

/// Per compression setting, in order: the single-session run (if asked)
/// and the multi-session run of one mode, each the best of `--rounds`
/// (every run of the mode alternated), and with the single-session run
/// each round's speedup.
type ModeResults = Vec<(Vec<RunResult>, Vec<f64>)>;

fn run_mode(dirs: &RunDirs, args: &EngineBenchArgs, suffix: &str) -> Result<ModeResults, String> {
    // Every run's directory is claimed before the first run, so a
    // leftover one is refused before any time is spent.
    let settings = args.compression.settings();
    let mut runs = Vec::new();
    for &on in &settings {
        let suffix = if on && settings.len() > 1 { format!("{suffix}-compression-on") } else { suffix.to_string() };
        if args.compare_single_session {
            runs.push((dirs.fresh(&format!("{SINGLE_SESSION_SUBDIR}{suffix}"), args.clean)?, 1, on));
        }
        runs.push((dirs.fresh(&format!("{SESSIONS_SUBDIR}{suffix}"), args.clean)?, args.sessions, on));
    }
    let mut best: Vec<Option<RunResult>> = vec![None; runs.len()];
    let mut speedup_per_round: Vec<Vec<f64>> = vec![Vec::new(); settings.len()];
    let mut failure = None;
    'rounds: for round in 0..args.rounds {
        let mut single_session_tps = None;
        for ((dir, sessions, on), best) in runs.iter().zip(best.iter_mut()) {
            let setting = settings.iter().position(|s| s == on).expect("a run of a listed setting");
            if *sessions == 1 && args.compare_single_session {
                single_session_tps = None;
            }
            if round > 0 {
                // A fresh log and table for every round.
                if let Err(error) = RunDirs::remove(dir)
                    .and_then(|()| std::fs::create_dir(dir).map_err(|e| format!("creating directory {}: {e}", dir.display())))
                {
                    failure = Some(error);
                    break 'rounds;
                }
            }
            match run_once(dir, *sessions, *on, args) {
                Ok(result) => {
                    if args.rounds > 1 && !args.json {
                        eprintln!(
                            "round {} of {}: {} session(s), compression {}: {:.0} tps",
                            round + 1,
                            args.rounds,
                            sessions,
                            compression::on_off(*on),
                            result.tps
                        );
                    }
                    match single_session_tps {
                        None if args.compare_single_session => single_session_tps = Some(result.tps),
                        Some(single) if single > 0.0 => speedup_per_round[setting].push(result.tps / single),
                        _ => {}
                    }
                    if best.as_ref().is_none_or(|kept| result.tps > kept.tps) {
                        *best = Some(result);
                    }
                }
                Err(error) => {
                    failure = Some(error);
                    break 'rounds;
                }
            }
        }
    }
    if !args.keep {
        for (dir, _, _) in &runs {
            RunDirs::remove(dir)?;
        }
    }
    if let Some(error) = failure {
        return Err(error);
    }
    let mut best = best.into_iter().map(|result| result.expect("every run ran at least once"));
    let per_setting = if args.compare_single_session { 2 } else { 1 };
    Ok(speedup_per_round.into_iter().map(|speedups| ((&mut best).take(per_setting).collect(), speedups)).collect())
}

fn print_results(args: &EngineBenchArgs, results: &[RunResult], speedup_per_round: &[f64]) -> Result<(), String> {
    let multi = results.last().expect("at least one run");
    let single = args.compare_single_session.then(|| &results[0]);
    let speedup = single.map(|s| if s.tps > 0.0 { multi.tps / s.tps } else { 0.0 });
    if args.json {
        let text = match (single, speedup) {
            (Some(single), Some(speedup)) => serde_json::to_string(&Comparison {
                run: multi,
                single_session: single,
                speedup,
                speedup_per_round,
                target_fsyncs_per_transaction_met: multi.fsyncs_per_transaction <= TARGET_FSYNCS_PER_TRANSACTION_MAX,
                target_speedup_met: speedup >= TARGET_SPEEDUP_MIN,
            }),
            _ => serde_json::to_string(multi),
        };
        println!("{}", text.map_err(|e| format!("encoding JSON: {e}"))?);
        return Ok(());
    }
    let mut table = Table::new(&[
        "sessions",
        "transactions",
        "retries",
        "seconds",
        "tps",
        "p50 µs",
        "p99 µs",
        "redo fsyncs/s",
        "binlog fsyncs/s",
        "fsyncs/trx",
        "binlog bytes/trx",
        "rows/s",
        "binlog MB/s",
        "CPU µs/trx",
    ]);
    for result in results {
        table.push_row(vec![
            result.sessions.to_string(),
            result.transactions.to_string(),
            result.retries.to_string(),
            format!("{:.2}", result.seconds),
            format!("{:.0}", result.tps),
            result.latency_us_p50.to_string(),
            result.latency_us_p99.to_string(),
            format!("{:.0}", result.redo_fsyncs_per_sec),
            format!("{:.0}", result.binlog_fsyncs_per_sec),
            format!("{:.3}", result.fsyncs_per_transaction),
            format!("{:.1}", result.compression.binlog_bytes_per_transaction),
            format!("{:.0}", result.rows_per_sec),
            format!("{:.2}", result.binlog_mb_per_sec),
            format!("{:.1}", result.compression.cpu_us_per_transaction),
        ]);
    }
    println!(
        "workload={} binlog_storage_engine={} binlog_transaction_compression={} innodb_flush_log_at_trx_commit={} sync_binlog={} binlogd_cross_log_group_commit={} binlogd_group_commit_gather_max={}us binlog_group_commit_sync_delay={}us table_size={}",
        args.workload.name(),
        mode_name(args.binlog_storage_engine[0]),
        match multi.compression.binlog_transaction_compression_level_zstd {
            Some(level) => format!("ON (zstd level {level})"),
            None => "OFF".to_string(),
        },
        args.flush_log_at_trx_commit,
        args.sync_binlog,
        if args.cross_log_group_commit { "ON" } else { "OFF" },
        args.group_commit_gather_max,
        args.binlog_group_commit_sync_delay,
        args.table_size
    );
    print!("{}", table.render());
    if results.iter().any(|result| result.group_commit_stages.groups > 0) {
        println!("group commit stages, mean µs per group (bl = binlog; wake = outcomes handed out until the member runs again):");
        let runs: Vec<(u32, &StageBreakdown)> = results.iter().map(|result| (result.sessions, &result.group_commit_stages)).collect();
        print!("{}", engine_stages::table(&runs).render());
    }
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    let fsyncs_met = multi.fsyncs_per_transaction <= TARGET_FSYNCS_PER_TRANSACTION_MAX;
    println!(
        "redo + binlog fsyncs per transaction with {} sessions: {:.3} (target <= {TARGET_FSYNCS_PER_TRANSACTION_MAX}: {})",
        multi.sessions,
        multi.fsyncs_per_transaction,
        verdict(fsyncs_met)
    );
    if let Some(speedup) = speedup {
        println!("speedup vs 1 session: {speedup:.1}x (target >= {TARGET_SPEEDUP_MIN}x: {})", verdict(speedup >= TARGET_SPEEDUP_MIN));
    }
    if speedup_per_round.len() > 1 {
        let middle = median(speedup_per_round.to_vec());
        let rounds: Vec<String> = speedup_per_round.iter().map(|ratio| format!("{ratio:.2}")).collect();
        println!("speedup per round (best/best above): {} (median {middle:.2}x)", rounds.join(", "));
    }
    Ok(())
}

fn config(dir: &Path, args: &EngineBenchArgs) -> Result<DatabaseConfig, String> {
    let mut config = DatabaseConfig::new(dir);
    config.redo.innodb_flush_log_at_trx_commit = FlushLogAtTrxCommit::from_value(args.flush_log_at_trx_commit)
        .ok_or_else(|| format!("--flush-log-at-trx-commit {} is not 0, 1 or 2", args.flush_log_at_trx_commit))?;
    config.binlog.sync_binlog = args.sync_binlog;
    config.binlog.binlog_group_commit_sync_delay = Duration::from_micros(args.binlog_group_commit_sync_delay);
    config.group_commit_gather_max = Duration::from_micros(args.group_commit_gather_max);
    config.cross_log_group_commit = args.cross_log_group_commit;
    config.binlog_storage_engine = args.binlog_storage_engine.first().copied().unwrap_or_default();
    Ok(config)
}

fn parse_mode(text: &str) -> Result<BinlogStorageEngine, String> {
    BinlogStorageEngine::parse(text).ok_or_else(|| format!("{text:?} is not file or engine"))
}

fn mode_name(mode: BinlogStorageEngine) -> &'static str {
    match mode {
        BinlogStorageEngine::File => "file",
        BinlogStorageEngine::Engine => "engine",
    }
}

fn run_once(dir: &Path, sessions: u32, compression: bool, args: &EngineBenchArgs) -> Result<RunResult, String> {
    let config = config(dir, args)?;
    let binlog_dir = config.binlog.dir.clone();
    let (db, _) = Database::open(config).map_err(|e| format!("opening the database in {}: {e}", dir.display()))?;
    let level_zstd = args.compression.level_zstd(compression);
    let measured = prepare(&db, args).and_then(|table| measure(&db, &binlog_dir, table, sessions, level_zstd, args));
    let closed = db.close().map_err(|e| format!("closing the database in {}: {e}", dir.display()));
    let result = measured?;
    closed?;
    Ok(result)
}

/// Creates the table and loads `table_size` rows.
fn prepare(db: &Database, args: &EngineBenchArgs) -> Result<TableId, String> {
    let session = StatementContext::new(0, DATABASE);
    let failed = |e: DatabaseError| format!("preparing the table: {e}");
    db.execute_ddl(&session, &format!("CREATE DATABASE {DATABASE}"), |e| e.create_database(DATABASE)).map_err(failed)?;
    let spec = args.workload.table_spec();
    let create = args.workload.create_statement();
    let table = db.execute_ddl(&session, &create, |e| e.create_table(&spec)).map_err(failed)?.id;
    let mut rng = FastRng::new(7);
    let mut id = 1;
    while id <= args.table_size as i64 {
        let mut trx = db.begin();
        let end = (id + PRELOAD_ROWS_PER_TRANSACTION as i64).min(args.table_size as i64 + 1);
        for n in id..end {
            let k = rng.id(args.table_size);
            trx.insert(table, args.workload.row(&mut rng, n, k)).map_err(|e| failed(e.into()))?;
        }
        db.commit(CommitRequest::new(trx, &session)).map_err(failed)?;
        id = end;
    }
    Ok(table)
}

/// What one session thread hands back.
struct SessionOutcome {
    latencies_us: Histogram<u64>,
    transactions: u64,
    retries: u64,
    error: Option<String>,
}

/// The table a session writes, and how.
#[derive(Clone, Copy)]
struct Target {
    table: TableId,
    table_size: u64,
    workload: Workload,
}

/// One transaction: 2 point selects, an update by primary key (of `k`,
/// and more columns in the JSON and wide workloads), a delete and
/// re-insert of one key. `Ok(false)`: lock wait or deadlock, rolled back,
/// to retry.
fn transaction(db: &Database, target: Target, rng: &mut FastRng, session: &StatementContext) -> Result<bool, DatabaseError> {
    let Target { table, table_size, workload } = target;
    let mut trx = db.begin();
    let outcome = (|| -> Result<(), DatabaseError> {
        for _ in 0..2 {
            let _ = trx.get(table, &[Value::Int(rng.id(table_size))])?;
        }
        let id = rng.id(table_size);
        let key = trx.primary_key(table, &[Value::Int(id)])?;
        if let Some(mut current) = trx.get_for_update(table, &key)? {
            workload.update(rng, &mut current);
            trx.update_by_pk(table, &[Value::Int(id)], current)?;
        }
        let id = rng.id(table_size);
        trx.delete_by_pk(table, &[Value::Int(id)])?;
        let k = rng.id(table_size);
        trx.insert(table, workload.row(rng, id, k))?;
        Ok(())
    })();
    match outcome {
        Ok(()) => {}
        Err(error) if error.is_retryable() => return Ok(false),
        Err(error) => return Err(error),
    }
    match db.commit(CommitRequest::new(trx, session)) {
        Ok(_) => Ok(true),
        Err(error) if error.is_retryable() => Ok(false),
        Err(error) => Err(error),
    }
}

/// The binlog files' bytes once every commit so far is in them (the
/// engine-integrated binlog writes behind the commits).
fn written_binlog_bytes(db: &Database, binlog_dir: &Path) -> Result<u64, String> {
    db.wait_binlog_written().map_err(|e| format!("waiting for the binlog writer: {e}"))?;
    compression::binlog_file_bytes(binlog_dir)
}

fn measure(
    db: &Database,
    binlog_dir: &Path,
    table: TableId,
    sessions: u32,
    level_zstd: Option<i32>,
    args: &EngineBenchArgs,
) -> Result<RunResult, String> {
    let start = Arc::new(Barrier::new(sessions as usize + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let failed = Arc::new(AtomicBool::new(false));
    let completed = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::with_capacity(sessions as usize);
    for session in 0..sessions {
        let (db, start, session_stop, failed, completed) = (db.clone(), start.clone(), stop.clone(), failed.clone(), completed.clone());
        let target = Target { table, table_size: args.table_size, workload: args.workload };
        let handle = std::thread::Builder::new()
            .name(format!("bench-session-{session}"))
            .spawn(move || {
                let mut context = StatementContext::new(session + 1, DATABASE);
                context.compression_level_zstd = level_zstd;
                let mut rng = FastRng::new(session as u64 + 1);
                let mut outcome = SessionOutcome { latencies_us: new_latency_histogram(), transactions: 0, retries: 0, error: None };
                start.wait();
                while !session_stop.load(Ordering::Relaxed) {
                    let began = Instant::now();
                    match transaction(&db, target, &mut rng, &context) {
                        Ok(true) => {
                            let micros = began.elapsed().as_micros().min(LATENCY_US_MAX as u128) as u64;
                            outcome.latencies_us.saturating_record(micros.max(1));
                            outcome.transactions += 1;
                            completed.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(false) => outcome.retries += 1,
                        Err(error) => {
                            outcome.error = Some(format!("session {session}: {error}"));
                            failed.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                }
                outcome
            })
            .map_err(|e| format!("starting session thread {session}: {e}"));
        match handle {
            Ok(handle) => handles.push(handle),
            // The threads already started wait at the barrier forever:
            // exiting with the error ends them.
            Err(error) => return Err(error),
        }
    }
    let binlog_bytes_before = written_binlog_bytes(db, binlog_dir)?;
    let cpu_seconds_before = compression::process_cpu_seconds()?;
    start.wait();
    let before = db.counters();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.seconds);
    while Instant::now() < deadline && !failed.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(deadline.saturating_duration_since(Instant::now())));
    }
    // Counters at the deadline, not after the stragglers finish.
    let after = db.counters();
    let transactions_at_deadline = completed.load(Ordering::Relaxed);
    let seconds = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let mut latencies_us = new_latency_histogram();
    let (mut retries, mut first_error) = (0, None);
    for handle in handles {
        match handle.join() {
            Ok(outcome) => {
                latencies_us.add(&outcome.latencies_us).map_err(|e| format!("merging latency histograms: {e}"))?;
                retries += outcome.retries;
                if first_error.is_none() {
                    first_error = outcome.error;
                }
            }
            Err(_) => {
                first_error.get_or_insert_with(|| "a session thread panicked".to_string());
            }
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }
    // Bytes and CPU cover every transaction, those finished after the
    // deadline too.
    let binlog_bytes = written_binlog_bytes(db, binlog_dir)?.saturating_sub(binlog_bytes_before);
    let cpu_seconds = compression::process_cpu_seconds()? - cpu_seconds_before;
    let transactions_all = completed.load(Ordering::Relaxed);
    let transactions = transactions_at_deadline;
    let redo_fsyncs = after.redo_fsyncs - before.redo_fsyncs;
    let binlog_fsyncs = after.binlog_fsyncs - before.binlog_fsyncs;
    let per_second = |count: u64| if seconds > 0.0 { count as f64 / seconds } else { 0.0 };
    let compression = RunCompression::of_run(level_zstd, binlog_bytes, cpu_seconds, transactions_all);
    Ok(RunResult {
        binlog_storage_engine: mode_name(args.binlog_storage_engine.first().copied().unwrap_or_default()),
        sessions,
        innodb_flush_log_at_trx_commit: args.flush_log_at_trx_commit,
        sync_binlog: args.sync_binlog,
        cross_log_group_commit: args.cross_log_group_commit,
        group_commit_gather_max_us: args.group_commit_gather_max,
        binlog_group_commit_sync_delay_us: args.binlog_group_commit_sync_delay,
        workload: args.workload.name(),
        table_size: args.table_size,
        transactions,
        retries,
        seconds,
        tps: per_second(transactions),
        latency_us_p50: latencies_us.value_at_quantile(0.50),
        latency_us_p99: latencies_us.value_at_quantile(0.99),
        latency_us_max: latencies_us.max(),
        redo_fsyncs,
        binlog_fsyncs,
        redo_fsyncs_per_sec: per_second(redo_fsyncs),
        binlog_fsyncs_per_sec: per_second(binlog_fsyncs),
        fsyncs_per_transaction: if transactions > 0 { (redo_fsyncs + binlog_fsyncs) as f64 / transactions as f64 } else { 0.0 },
        rows_per_sec: per_second(transactions * ROWS_WRITTEN_PER_TRANSACTION),
        binlog_mb_per_sec: per_second(transactions) * compression.binlog_bytes_per_transaction / 1e6,
        compression,
        group_commit_stages: StageBreakdown::between(&before, &after),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sessions for one second on a 100-row table, durable, file mode.
    fn short_run_args(dir: &Path) -> EngineBenchArgs {
        EngineBenchArgs {
            dir: dir.to_path_buf(),
            sessions: 2,
            seconds: 1,
            flush_log_at_trx_commit: 1,
            sync_binlog: 1,
            group_commit_gather_max: 1000,
            cross_log_group_commit: true,
            binlog_group_commit_sync_delay: 0,
            binlog_storage_engine: vec![BinlogStorageEngine::File],
            workload: Workload::Sysbench,
            table_size: 100,
            compression: CompressionArgs::default(),
            json: true,
            compare_single_session: false,
            rounds: 1,
            clean: false,
            keep: false,
        }
    }

    #[test]
    fn a_short_run_commits_and_counts_fsyncs() {
        let dir = tempfile::tempdir().unwrap();
        let args = short_run_args(dir.path());
        let result = run_once(&dir.path().join("run"), 2, false, &args).unwrap();
        assert!(result.transactions > 0, "{result:?}");
        assert!(result.redo_fsyncs > 0 && result.binlog_fsyncs > 0, "{result:?}");
        let json = serde_json::to_value(&result).unwrap();
        for key in ["tps", "latency_us_p99", "redo_fsyncs_per_sec", "binlog_fsyncs_per_sec", "binlog_storage_engine"] {
            assert!(json.get(key).is_some(), "--json lacks {key}");
        }
        let stages = &result.group_commit_stages;
        assert!(stages.groups > 0 && stages.group_size >= 1.0, "{stages:?}");
        assert!(stages.redo_sync_us > 0.0 && stages.binlog_sync_us > 0.0 && stages.leader_us > 0.0, "{stages:?}");
        assert!(json["group_commit_stages"].get("redo_sync_us").is_some(), "--json lacks the stage breakdown");
        // The binlog inside redo: no binlog fdatasync on the commit path.
        let engine_args = EngineBenchArgs { binlog_storage_engine: vec![BinlogStorageEngine::Engine], ..args };
        let result = run_once(&dir.path().join("run-engine"), 2, false, &engine_args).unwrap();
        assert_eq!(result.binlog_storage_engine, "engine");
        assert!(result.transactions > 0 && result.redo_fsyncs > 0, "{result:?}");
        assert_eq!(result.binlog_fsyncs, 0, "{result:?}");
    }

    #[test]
    fn every_workload_commits_and_logs_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        for workload in [Workload::Sysbench, Workload::Json, Workload::Wide] {
            let args = EngineBenchArgs { workload, flush_log_at_trx_commit: 2, sync_binlog: 0, ..short_run_args(dir.path()) };
            let result = run_once(&dir.path().join(workload.name()), 2, false, &args).unwrap();
            assert_eq!(result.workload, workload.name());
            assert!(result.transactions > 0, "{result:?}");
            assert!((result.rows_per_sec - 3.0 * result.tps).abs() < 1e-6, "{result:?}");
            assert!(result.binlog_mb_per_sec > 0.0, "{result:?}");
            let json = serde_json::to_value(&result).unwrap();
            for key in ["workload", "rows_per_sec", "binlog_mb_per_sec"] {
                assert!(json.get(key).is_some(), "--json lacks {key}");
            }
        }
    }

    #[test]
    fn rounds_alternate_the_runs_keep_each_ones_best_and_leave_no_directory() {
        let dir = tempfile::tempdir().unwrap();
        let args = EngineBenchArgs {
            flush_log_at_trx_commit: 2,
            sync_binlog: 0,
            compare_single_session: true,
            rounds: 2,
            ..short_run_args(dir.path())
        };
        let dirs = RunDirs::prepare(&args.dir).unwrap();
        let mut per_setting = run_mode(&dirs, &args, "").unwrap();
        assert_eq!(per_setting.len(), 1);
        let (results, speedup_per_round) = per_setting.remove(0);
        assert_eq!(results.iter().map(|r| r.sessions).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(speedup_per_round.len(), 2, "one speedup per round");
        assert!(speedup_per_round.iter().all(|ratio| *ratio > 0.0), "{speedup_per_round:?}");
        assert!(results.iter().all(|r| r.transactions > 0), "{results:?}");
        for name in [SINGLE_SESSION_SUBDIR, SESSIONS_SUBDIR] {
            assert!(!dir.path().join(name).exists(), "{name} left behind");
        }
    }
}
