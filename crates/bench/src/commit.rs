//! `binlogd bench commit`: N sessions commit small transactions through
//! the binary log at the same time, to show what ordered group commit
//! buys: with `sync_binlog = 1` one fdatasync should serve many commits,
//! so throughput grows with the number of sessions while each commit
//! still waits for one fsync.
//!
//! Each session is a thread (as a client connection is in mysqld). The
//! sessions start together behind a gate; each builds a row-based
//! transaction as mysqld logs `BEGIN; INSERT INTO bench.t VALUES (...),
//! ...; COMMIT` (Query `BEGIN`, Table_map, Write_rows with N rows split at
//! `binlog_row_event_max_size`, Xid) and times only `BinaryLog::commit`,
//! which returns once the group holding it is written and synced. `--compare-single-session` first runs the same
//! per-session count with one session in a fresh subdirectory, so the
//! speedup is measured on the same disk in the same invocation.
//!
//! `--binlog-transaction-compression OFF,ON` runs every run with each
//! setting (ON: the transaction's events in one zstd Transaction_payload,
//! compressed in the session's thread as `BinaryLog::commit` does it),
//! alternated round by round (`--rounds`, each run keeping its best
//! round), in `DIR` and `DIR/compression-on`; every run reports the
//! bytes the binlog files grew by and this process's CPU time (user and
//! system, every thread) per transaction, and the ON/OFF ratios follow
//! the table.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog::options::SPILL_DIR_NAME;
use binlog::{BinaryLog, CrashPoints, Options, OsStorage};
use binlog_format::column_type::ColumnType;
use binlog_format::events::{ColumnSpec, Event, QueryEvent, RowsEvent, RowsKind, TableMap, XidEvent};
use binlog_format::Uuid;
use binlog_format::Value;
use hdrhistogram::Histogram;
use parking_lot::{Condvar, Mutex};
use serde::Serialize;

use super::common::{create_dir_with_ancestors, new_latency_histogram, random_bytes, remove_created_dirs, ReportArgs, LATENCY_US_MAX};
use super::compression::{self, CompressionArgs, Measured, Ratios, RunCompression};
use super::report::{self, Bar, Table};

/// Most sessions (threads) one run may start.
pub const SESSIONS_MAX: u32 = 4096;
/// Most transactions one session may commit in a run.
pub const TRANSACTIONS_PER_SESSION_MAX: u64 = 100_000_000;
/// Most rows in one transaction (its cache spills to disk past
/// `binlog_cache_size`, which is a different benchmark).
pub const ROWS_PER_TRANSACTION_MAX: u32 = 100_000;
/// `binlog_row_event_max_size` (MySQL's default): a Write_rows event is
/// closed once its rows reach this many bytes and the next one started.
const ROW_EVENT_BYTES_MAX: usize = 8192;
/// Table id of `bench.t` in every Table_map and Write_rows.
const TABLE_ID: u64 = 1;
/// Bytes of the `payload` column's value in every row.
const PAYLOAD: &[u8] = b"binlogd group-commit benchmark row payload";
/// Subdirectory of `--dir` for the one-session run of `--compare-single-session`.
const SINGLE_SESSION_SUBDIR: &str = "single-session";
/// Subdirectory of `--dir` for the compression ON runs when OFF runs too.
const COMPRESSION_ON_SUBDIR: &str = "compression-on";
/// Most rounds of `--rounds`.
pub const ROUNDS_MAX: u32 = 100;
const PROGRESS_REFRESH: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, clap::Args)]
pub struct CommitBenchArgs {
    /// Directory for the binary log; created if missing. It must not
    /// already hold binlog files (binlog.NNNNNN, binlog.index) unless
    /// --clean is given.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Concurrent sessions, one thread each.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=SESSIONS_MAX as i64))]
    pub sessions: u32,

    /// Transactions each session commits.
    #[arg(long, value_name = "N", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(1..=TRANSACTIONS_PER_SESSION_MAX))]
    pub transactions: u64,

    /// Rows each transaction inserts (Write_rows; 0 = BEGIN and Xid only).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(0..=ROWS_PER_TRANSACTION_MAX as i64))]
    pub rows_per_transaction: u32,

    /// `sync_binlog`: 1 = fdatasync every group, N = every N groups, 0 = never.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub sync_binlog: u64,

    /// `binlog_group_commit_sync_delay` (µs): the commit leader waits this
    /// long before flushing, to gather a larger group.
    #[arg(long, value_name = "MICROSECONDS", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub binlog_group_commit_sync_delay: u64,

    /// `binlog_group_commit_sync_no_delay_count`: stop waiting once this
    /// many transactions are queued (0 = wait the whole delay).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub binlog_group_commit_sync_no_delay_count: usize,

    // --json, --csv FILE, --plot FILE.png.
    #[command(flatten)]
    pub report: ReportArgs,

    /// First run the same per-session transaction count with one session
    /// (in DIR/single-session) and report the speedup.
    #[arg(long)]
    pub compare_single_session: bool,

    // --binlog-transaction-compression OFF,ON and its zstd level.
    #[command(flatten)]
    pub compression: CompressionArgs,

    /// Run every run this many times, alternately, each on a fresh log;
    /// each keeps its best round (by commits/s).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=ROUNDS_MAX as i64))]
    pub rounds: u32,

    /// Delete binlog files already in DIR (and DIR/single-session) instead
    /// of refusing to run.
    #[arg(long)]
    pub clean: bool,

    /// Keep the binlog files written (default: delete them, and the
    /// directories the benchmark created, at the end).
    #[arg(long)]
    pub keep: bool,
}

/// What one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub sessions: u32,
    /// Per session.
    pub transactions: u64,
    pub rows_per_transaction: u32,
    pub sync_binlog: u64,
    pub binlog_group_commit_sync_delay_us: u64,
    pub binlog_group_commit_sync_no_delay_count: usize,
    pub commits: u64,
    pub seconds: f64,
    pub commits_per_sec: f64,
    pub latency_us_p50: u64,
    pub latency_us_p99: u64,
    pub latency_us_max: u64,
    /// fdatasyncs the log issued during the run.
    pub fsyncs: u64,
    /// Commit groups (one leader each) during the run.
    pub groups: u64,
    /// `None` when no fsync was issued (`sync_binlog = 0`).
    pub commits_per_fsync: Option<f64>,
    /// Compression's setting, and the binlog bytes and CPU per commit.
    #[serde(flatten)]
    pub compression: RunCompression,
}

impl RunResult {
    fn measured(&self) -> Measured {
        self.compression.measured(self.commits_per_sec)
    }
}

#[derive(Serialize)]
struct Comparison<'a> {
    runs: &'a [RunResult],
    /// Per compression setting run, in order: its sessions over one session.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    speedup: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    compression: Option<Ratios>,
}

/// A run of the plan: where, with how many sessions, compressed or not.
struct PlannedRun {
    dir: PathBuf,
    sessions: u32,
    compression: bool,
}

/// Runs the benchmark and prints its results on stdout.
pub fn run(args: &CommitBenchArgs) -> Result<(), String> {
    let main_dir = BenchDir::prepare(&args.dir, args.clean)?;
    let mut dirs = vec![main_dir];
    let outcome = (|| -> Result<Vec<RunResult>, String> {
        // Every directory is claimed before the first run, so a leftover
        // log is refused before any time is spent.
        let settings = args.compression.settings();
        let mut plan = Vec::new();
        for &compression in &settings {
            let base = if compression && settings.len() > 1 {
                let subdir = BenchDir::prepare(&args.dir.join(COMPRESSION_ON_SUBDIR), args.clean)?;
                let path = subdir.path.clone();
                dirs.push(subdir);
                path
            } else {
                args.dir.clone()
            };
            if args.compare_single_session {
                let single = BenchDir::prepare(&base.join(SINGLE_SESSION_SUBDIR), args.clean)?;
                plan.push(PlannedRun { dir: single.path.clone(), sessions: 1, compression });
                dirs.push(single);
            }
            plan.push(PlannedRun { dir: base, sessions: args.sessions, compression });
        }
        let mut best: Vec<Option<RunResult>> = vec![None; plan.len()];
        for round in 0..args.rounds {
            for (planned, best) in plan.iter().zip(best.iter_mut()) {
                if round > 0 {
                    remove_entries(&binlog_entries(&planned.dir)?)?;
                }
                let result = run_once(&planned.dir, planned.sessions, planned.compression, args)?;
                if args.rounds > 1 && !args.report.json {
                    eprintln!(
                        "round {} of {}: {}, compression {}: {:.0} commits/s",
                        round + 1,
                        args.rounds,
                        sessions_label(planned.sessions),
                        compression::on_off(planned.compression),
                        result.commits_per_sec
                    );
                }
                if best.as_ref().is_none_or(|kept| result.commits_per_sec > kept.commits_per_sec) {
                    *best = Some(result);
                }
            }
        }
        Ok(best.into_iter().map(|result| result.expect("every run ran at least once")).collect())
    })();
    // Clean up even when a run failed: the subdirectory first, it may be
    // inside a directory we created.
    let mut cleanup_errors = Vec::new();
    for dir in dirs.into_iter().rev() {
        if args.keep {
            continue;
        }
        if let Err(error) = dir.remove_created() {
            cleanup_errors.push(error);
        }
    }
    let results = outcome?;
    if let Some(error) = cleanup_errors.into_iter().next() {
        return Err(error);
    }
    print_results(args, &results)?;
    if let Some(path) = &args.report.csv {
        write_csv(path, &results)?;
    }
    if let Some(path) = &args.report.plot {
        let title = format!("binlog commits/s, sync_binlog={}, {} rows/trx", args.sync_binlog, args.rows_per_transaction);
        let bars: Vec<Bar> = results.iter().map(|r| Bar { label: run_label(r, args), value: r.commits_per_sec }).collect();
        report::plot_bars(path, &title, &bars)?;
    }
    Ok(())
}

fn sessions_label(sessions: u32) -> String {
    if sessions == 1 {
        "1 session".to_string()
    } else {
        format!("{sessions} sessions")
    }
}

/// A run's bar label: its sessions, and its compression when both settings ran.
fn run_label(result: &RunResult, args: &CommitBenchArgs) -> String {
    if args.compression.settings().len() > 1 {
        format!("{}, zstd {}", sessions_label(result.sessions), compression::on_off(result.compression.binlog_transaction_compression))
    } else {
        sessions_label(result.sessions)
    }
}

/// Per compression setting run: its multi-session commits/s over its
/// single-session run's (`--compare-single-session`).
fn speedups(results: &[RunResult], args: &CommitBenchArgs) -> Vec<Option<f64>> {
    if !args.compare_single_session {
        return Vec::new();
    }
    results
        .chunks(2)
        .map(|pair| match pair {
            [single, multi] if single.commits_per_sec > 0.0 => Some(multi.commits_per_sec / single.commits_per_sec),
            _ => None,
        })
        .collect()
}

/// ON against OFF, multi-session runs, when both ran.
fn compression_ratios(results: &[RunResult], args: &CommitBenchArgs) -> Option<Ratios> {
    let multi = |on: bool| results.iter().find(|r| r.sessions == args.sessions && r.compression.binlog_transaction_compression == on);
    let (off, on) = (multi(false)?, multi(true)?);
    Some(Ratios::of(&off.measured(), &on.measured()))
}

fn print_results(args: &CommitBenchArgs, results: &[RunResult]) -> Result<(), String> {
    let to_json = |value: Result<String, serde_json::Error>| value.map_err(|e| format!("encoding JSON: {e}"));
    let speedups = speedups(results, args);
    let ratios = compression_ratios(results, args);
    if args.report.json {
        let text = if results.len() > 1 {
            let speedup = speedups.iter().map(|s| s.unwrap_or(0.0)).collect();
            to_json(serde_json::to_string(&Comparison { runs: results, speedup, compression: ratios }))?
        } else {
            to_json(serde_json::to_string(&results[0]))?
        };
        println!("{text}");
        return Ok(());
    }
    let mut table = Table::new(&[
        "sessions",
        "compression",
        "commits",
        "seconds",
        "commits/s",
        "p50 µs",
        "p99 µs",
        "max µs",
        "fsyncs",
        "commits/fsync",
        "binlog bytes/trx",
        "CPU µs/trx",
    ]);
    for result in results {
        table.push_row(vec![
            result.sessions.to_string(),
            match result.compression.binlog_transaction_compression_level_zstd {
                Some(level) => format!("zstd {level}"),
                None => "OFF".to_string(),
            },
            result.commits.to_string(),
            format!("{:.3}", result.seconds),
            format!("{:.0}", result.commits_per_sec),
            result.latency_us_p50.to_string(),
            result.latency_us_p99.to_string(),
            result.latency_us_max.to_string(),
            result.fsyncs.to_string(),
            result.commits_per_fsync.map_or_else(|| "-".to_string(), |c| format!("{c:.1}")),
            format!("{:.1}", result.compression.binlog_bytes_per_transaction),
            format!("{:.1}", result.compression.cpu_us_per_transaction),
        ]);
    }
    print!("{}", table.render());
    for (speedup, on) in speedups.iter().zip(args.compression.settings()) {
        let what = if args.compression.settings().len() > 1 { format!(", compression {}", compression::on_off(on)) } else { String::new() };
        match speedup {
            Some(speedup) => println!("speedup vs 1 session{what}: {speedup:.1}x"),
            None => println!("speedup vs 1 session{what}: n/a (the single-session run committed nothing)"),
        }
    }
    if let Some(ratios) = ratios {
        println!("{}", ratios.describe(&format!("{} sessions, {} rows/trx", args.sessions, args.rows_per_transaction)));
    }
    Ok(())
}

const CSV_COLUMNS: [&str; 19] = [
    "sessions",
    "transactions",
    "rows_per_transaction",
    "sync_binlog",
    "binlog_group_commit_sync_delay_us",
    "binlog_group_commit_sync_no_delay_count",
    "commits",
    "seconds",
    "commits_per_sec",
    "latency_us_p50",
    "latency_us_p99",
    "latency_us_max",
    "fsyncs",
    "groups",
    "commits_per_fsync",
    "binlog_transaction_compression",
    "binlog_transaction_compression_level_zstd",
    "binlog_bytes_per_transaction",
    "cpu_us_per_transaction",
];

fn write_csv(path: &Path, results: &[RunResult]) -> Result<(), String> {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.sessions.to_string(),
                r.transactions.to_string(),
                r.rows_per_transaction.to_string(),
                r.sync_binlog.to_string(),
                r.binlog_group_commit_sync_delay_us.to_string(),
                r.binlog_group_commit_sync_no_delay_count.to_string(),
                r.commits.to_string(),
                format!("{:.6}", r.seconds),
                format!("{:.1}", r.commits_per_sec),
                r.latency_us_p50.to_string(),
                r.latency_us_p99.to_string(),
                r.latency_us_max.to_string(),
                r.fsyncs.to_string(),
                r.groups.to_string(),
                r.commits_per_fsync.map_or_else(String::new, |c| format!("{c:.3}")),
                compression::on_off(r.compression.binlog_transaction_compression).to_string(),
                r.compression.binlog_transaction_compression_level_zstd.map_or_else(String::new, |level| level.to_string()),
                format!("{:.1}", r.compression.binlog_bytes_per_transaction),
                format!("{:.2}", r.compression.cpu_us_per_transaction),
            ]
        })
        .collect();
    report::write_csv(path, &CSV_COLUMNS, &rows)
}

/// Opens a fresh log in `dir`, runs `sessions` committing threads to the
/// end (compressing each transaction when `compression`), closes the log.
fn run_once(dir: &Path, sessions: u32, compression: bool, args: &CommitBenchArgs) -> Result<RunResult, String> {
    let mut options = Options::new(dir);
    options.sync_binlog = args.sync_binlog;
    options.binlog_group_commit_sync_delay = Duration::from_micros(args.binlog_group_commit_sync_delay);
    options.binlog_group_commit_sync_no_delay_count = args.binlog_group_commit_sync_no_delay_count;
    options.server_uuid = Uuid::from_random_bytes(random_bytes());
    let (log, _report) = BinaryLog::open(options, Arc::new(OsStorage), CrashPoints::default())
        .map_err(|e| format!("opening the binary log in {}: {e}", dir.display()))?;
    let measured = measure(&log, dir, sessions, args.compression.level_zstd(compression), args);
    // Close even after a failed run, so the files are complete; the run's
    // error is the one worth reporting.
    let closed = log.close().map_err(|e| format!("closing the binary log in {}: {e}", dir.display()));
    let result = measured?;
    closed?;
    Ok(result)
}

/// What one session thread hands back.
struct SessionOutcome {
    latencies_us: Histogram<u64>,
    finished: Instant,
    error: Option<String>,
}

fn measure(log: &BinaryLog, dir: &Path, sessions: u32, level_zstd: Option<i32>, args: &CommitBenchArgs) -> Result<RunResult, String> {
    let gate = Arc::new(StartGate::default());
    let abort = Arc::new(AtomicBool::new(false));
    let committed = Arc::new(AtomicU64::new(0));
    let total = sessions as u64 * args.transactions;

    let mut handles = Vec::with_capacity(sessions as usize);
    let mut spawn_error = None;
    for session in 0..sessions {
        let (log, gate, session_abort, committed) = (log.clone(), gate.clone(), abort.clone(), committed.clone());
        let (transactions, rows) = (args.transactions, args.rows_per_transaction);
        let spawned = std::thread::Builder::new()
            .name(format!("bench-session-{session}"))
            .spawn(move || session_loop(&log, session, transactions, rows, level_zstd, &gate, &session_abort, &committed));
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(error) => {
                spawn_error = Some(format!("starting session thread {session} of {sessions}: {error}"));
                abort.store(true, Ordering::Relaxed);
                break;
            }
        }
    }

    // Every thread is spawned and waiting: the clock starts now.
    gate.wait_until_ready(handles.len());
    let counters = log.counters();
    let fsyncs_before = counters.fsyncs.load(Ordering::Relaxed);
    let groups_before = counters.groups.load(Ordering::Relaxed);
    let commits_before = counters.commits.load(Ordering::Relaxed);
    let binlog_bytes_before = compression::binlog_file_bytes(dir)?;
    let cpu_seconds_before = compression::process_cpu_seconds()?;
    let started = Instant::now();
    gate.open();

    let progress = std::io::stderr().is_terminal().then(|| progress_bar(total, sessions));
    if let Some(bar) = &progress {
        while !handles.iter().all(|h| h.is_finished()) {
            bar.set_position(committed.load(Ordering::Relaxed));
            std::thread::sleep(PROGRESS_REFRESH);
        }
        bar.finish_and_clear();
    }

    let mut latencies_us = new_latency_histogram();
    let mut finished = started;
    let mut first_error = spawn_error;
    for handle in handles {
        match handle.join() {
            Ok(outcome) => {
                latencies_us.add(&outcome.latencies_us).map_err(|e| format!("merging latency histograms: {e}"))?;
                finished = finished.max(outcome.finished);
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
    // Every commit has returned: its events are in the files (written,
    // synced or not per sync_binlog).
    let cpu_seconds = compression::process_cpu_seconds()? - cpu_seconds_before;
    let binlog_bytes = compression::binlog_file_bytes(dir)?.saturating_sub(binlog_bytes_before);

    let fsyncs = counters.fsyncs.load(Ordering::Relaxed) - fsyncs_before;
    let groups = counters.groups.load(Ordering::Relaxed) - groups_before;
    let commits = latencies_us.len();
    let logged = counters.commits.load(Ordering::Relaxed) - commits_before;
    if commits != total || logged != total {
        return Err(format!("expected {total} commits, sessions timed {commits} and the log counted {logged}"));
    }
    let seconds = finished.duration_since(started).as_secs_f64();
    Ok(RunResult {
        sessions,
        transactions: args.transactions,
        rows_per_transaction: args.rows_per_transaction,
        sync_binlog: args.sync_binlog,
        binlog_group_commit_sync_delay_us: args.binlog_group_commit_sync_delay,
        binlog_group_commit_sync_no_delay_count: args.binlog_group_commit_sync_no_delay_count,
        commits,
        seconds,
        commits_per_sec: if seconds > 0.0 { commits as f64 / seconds } else { 0.0 },
        latency_us_p50: latencies_us.value_at_quantile(0.50),
        latency_us_p99: latencies_us.value_at_quantile(0.99),
        latency_us_max: latencies_us.max(),
        fsyncs,
        groups,
        commits_per_fsync: (fsyncs > 0).then(|| commits as f64 / fsyncs as f64),
        compression: RunCompression::of_run(level_zstd, binlog_bytes, cpu_seconds, commits),
    })
}

#[allow(clippy::too_many_arguments)]
fn session_loop(
    log: &BinaryLog,
    session: u32,
    transactions: u64,
    rows: u32,
    level_zstd: Option<i32>,
    gate: &StartGate,
    abort: &AtomicBool,
    committed: &AtomicU64,
) -> SessionOutcome {
    let mut outcome = SessionOutcome { latencies_us: new_latency_histogram(), finished: Instant::now(), error: None };
    let table = table_map();
    gate.arrive_and_wait();
    let thread_id = session + 1;
    for transaction in 0..transactions {
        if abort.load(Ordering::Relaxed) {
            break;
        }
        let xid = session as u64 * transactions + transaction + 1;
        let first_id = (xid - 1) * rows as u64 + 1;
        let result = build_transaction(log, &table, thread_id, xid, first_id, rows).and_then(|mut cache| {
            cache.set_compression_level_zstd(level_zstd);
            let start = Instant::now();
            log.commit(cache).map_err(|e| e.to_string())?;
            Ok(start.elapsed())
        });
        match result {
            Ok(latency) => {
                let micros = (latency.as_micros() as u64).clamp(1, LATENCY_US_MAX);
                outcome.latencies_us.record(micros).expect("value within the histogram's bounds");
                committed.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                outcome.error = Some(format!("session {session}, transaction {transaction}: {error}"));
                abort.store(true, Ordering::Relaxed);
                break;
            }
        }
    }
    outcome.finished = Instant::now();
    outcome
}

/// `bench.t (id BIGINT UNSIGNED PRIMARY KEY, session INT, payload VARCHAR(64))`, utf8mb4.
fn table_map() -> TableMap {
    let column = |name: &str, column_type: ColumnType, unsigned: bool| ColumnSpec {
        name: name.to_string(),
        column_type,
        nullable: name != "id",
        unsigned,
        collation: 255,
    };
    let columns = [
        column("id", ColumnType::LongLong, true),
        column("session", ColumnType::Long, false),
        column("payload", ColumnType::VarChar { max_length_bytes: 256 }, false),
    ];
    TableMap::new(TABLE_ID, "bench", "t", &columns, &[0]).expect("the benchmark table is a valid definition")
}

/// One transaction of `rows` rows with ids `first_id..`, ready to commit.
fn build_transaction(
    log: &BinaryLog,
    table: &TableMap,
    thread_id: u32,
    xid: u64,
    first_id: u64,
    rows: u32,
) -> Result<binlog::TransactionCache, String> {
    let timestamp = binlog::log::now_seconds();
    let mut cache = log.new_cache();
    let append = |cache: &mut binlog::TransactionCache, event: Event| {
        cache.append(&event, timestamp).map_err(|e| format!("appending to the transaction cache: {e}"))
    };
    append(&mut cache, Event::Query(QueryEvent::new(thread_id, "bench", "BEGIN")))?;
    if rows > 0 {
        append(&mut cache, Event::TableMap(table.clone()))?;
        let mut event = RowsEvent::empty(RowsKind::Write, TABLE_ID, table.columns.len());
        for id in first_id..first_id + rows as u64 {
            if event.rows.len() >= ROW_EVENT_BYTES_MAX {
                let full = std::mem::replace(&mut event, RowsEvent::empty(RowsKind::Write, TABLE_ID, table.columns.len()));
                append(&mut cache, full.into_event())?;
            }
            let row = [Value::UInt(id), Value::Int(thread_id as i64), Value::Bytes(PAYLOAD.to_vec())];
            event.push_write(table, &row).map_err(|e| format!("encoding row {id}: {e}"))?;
            // What WRITESET dependency tracking would hash: the row's key.
            cache.writeset.push(id);
        }
        // The statement's last rows event carries STMT_END_F.
        event.flags = binlog_format::events::rows::rows_flags::STMT_END_F;
        append(&mut cache, event.into_event())?;
    }
    append(&mut cache, Event::Xid(XidEvent { xid }))?;
    Ok(cache)
}

fn progress_bar(total: u64, sessions: u32) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} commits, {per_sec}, eta {eta}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(sessions_label(sessions));
    bar
}

/// Holds the session threads until all of them are ready, so thread
/// start-up is not timed and every session begins at once. Unlike
/// `std::sync::Barrier` it cannot deadlock when a thread fails to spawn:
/// the coordinator waits for the threads that did start.
#[derive(Default)]
struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    open: bool,
}

impl StartGate {
    fn arrive_and_wait(&self) {
        let mut state = self.state.lock();
        state.arrived += 1;
        self.changed.notify_all();
        while !state.open {
            self.changed.wait(&mut state);
        }
    }

    fn wait_until_ready(&self, threads: usize) {
        let mut state = self.state.lock();
        while state.arrived < threads {
            self.changed.wait(&mut state);
        }
    }

    fn open(&self) {
        self.state.lock().open = true;
        self.changed.notify_all();
    }
}

/// A directory a run writes its binary log into, and what the benchmark
/// created there, so that it removes exactly that at the end.
struct BenchDir {
    path: PathBuf,
    /// Directories that did not exist before, outermost first.
    created: Vec<PathBuf>,
}

impl BenchDir {
    /// Creates `path` if missing. Refuses a directory that already holds
    /// binlog files, unless `clean`, which deletes them first: opening the
    /// log there would recover and extend the old log, not measure a fresh one.
    fn prepare(path: &Path, clean: bool) -> Result<BenchDir, String> {
        let created = create_dir_with_ancestors(path)?;
        let existing = binlog_entries(path)?;
        if !existing.is_empty() {
            if !clean {
                let names: Vec<String> = existing.iter().take(4).map(|p| file_name(p)).collect();
                let more = if existing.len() > names.len() { format!(" and {} more", existing.len() - names.len()) } else { String::new() };
                return Err(format!(
                    "{} already holds binlog files ({}{more}); pass --clean to delete them first, or choose another --dir",
                    path.display(),
                    names.join(", ")
                ));
            }
            remove_entries(&existing)?;
        }
        Ok(BenchDir { path: path.to_path_buf(), created })
    }

    /// Deletes the binlog files in the directory and the directories the
    /// benchmark created (only if empty: anything else in them stays).
    fn remove_created(self) -> Result<(), String> {
        remove_entries(&binlog_entries(&self.path)?)?;
        remove_created_dirs(&self.created)
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The entries of `dir` that belong to a binary log with binlogd's
/// basename: `binlog.NNNNNN`, the index and its temporary, the spill folder.
fn binlog_entries(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let options = Options::new(dir);
    let index_name = file_name(&options.index_path());
    let index_temp_name = file_name(&options.index_temp_path());
    let mut entries = Vec::new();
    let listing = std::fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    for entry in listing {
        let entry = entry.map_err(|e| format!("listing {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if options.file_number(&name).is_some() || name == index_name || name == index_temp_name || name == SPILL_DIR_NAME {
            entries.push(entry.path());
        }
    }
    entries.sort();
    Ok(entries)
}

fn remove_entries(entries: &[PathBuf]) -> Result<(), String> {
    for path in entries {
        let removed = if path.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
        removed.map_err(|e| format!("removing {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: CommitBenchArgs,
    }

    fn args(dir: &Path, extra: &[&str]) -> CommitBenchArgs {
        let mut argv = vec!["bench".to_string(), "--dir".to_string(), dir.display().to_string()];
        argv.extend(extra.iter().map(|s| s.to_string()));
        Wrapper::try_parse_from(argv).unwrap().args
    }

    #[test]
    fn runs_and_removes_what_it_created() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("new/bench");
        let args = args(&dir, &["--sessions", "4", "--transactions", "25", "--rows-per-transaction", "2"]);
        let prepared = BenchDir::prepare(&dir, false).unwrap();
        let result = run_once(&dir, 4, false, &args).unwrap();
        assert_eq!(result.commits, 100);
        assert!((1..=100).contains(&result.fsyncs), "{} fsyncs", result.fsyncs);
        assert!(result.latency_us_p50 <= result.latency_us_p99 && result.latency_us_p99 <= result.latency_us_max);
        prepared.remove_created().unwrap();
        assert!(!parent.path().join("new").exists(), "the directories the benchmark created are removed");

        run(&args).unwrap();
        assert!(!parent.path().join("new").exists(), "the directories the benchmark created are removed");
    }

    #[test]
    fn refuses_a_directory_with_binlog_files_unless_clean() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("binlog.000001"), b"\xfebin").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"keep me").unwrap();
        let error = run(&args(dir.path(), &["--sessions", "1", "--transactions", "1"])).unwrap_err();
        assert!(error.contains("already holds binlog files (binlog.000001)") && error.contains("--clean"), "{error}");

        let csv = dir.path().join("out.csv");
        let csv_text = csv.display().to_string();
        run(&args(dir.path(), &["--sessions", "2", "--transactions", "3", "--clean", "--compare-single-session", "--csv", &csv_text]))
            .unwrap();
        assert!(binlog_entries(dir.path()).unwrap().is_empty(), "binlog files removed after the run");
        assert!(!dir.path().join(SINGLE_SESSION_SUBDIR).exists());
        assert_eq!(std::fs::read(dir.path().join("notes.txt")).unwrap(), b"keep me");
        let csv = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(csv.lines().count(), 3, "{csv}");
        assert!(csv.starts_with("sessions,transactions,"));
    }

    /// The Transaction_payload events in `dir`'s first binlog file.
    fn payload_events(dir: &Path) -> usize {
        let bytes = std::fs::read(dir.join("binlog.000001")).unwrap();
        let mut stream = binlog_format::file::EventStream::new(&bytes).unwrap();
        let mut payloads = 0;
        while let Some(item) = stream.next_raw() {
            let (_, raw) = item.unwrap();
            if matches!(Event::decode(&raw, stream.context()).unwrap(), Event::TransactionPayload(_)) {
                payloads += 1;
            }
        }
        payloads
    }

    #[test]
    fn compression_on_writes_one_payload_per_commit_and_reports_bytes_and_cpu_beside_off() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("out.csv");
        let csv_text = csv.display().to_string();
        let extra =
            ["--sessions", "2", "--transactions", "10", "--rows-per-transaction", "40", "--binlog-transaction-compression", "OFF,ON"];
        let args = args(&dir.path().join("bench"), &[&extra[..], &["--csv", &csv_text]].concat());
        assert_eq!(args.compression.settings(), vec![false, true]);
        let off = run_once(&dir.path().join("off"), 2, false, &args).unwrap();
        let on = run_once(&dir.path().join("on"), 2, true, &args).unwrap();
        assert_eq!((payload_events(&dir.path().join("off")), payload_events(&dir.path().join("on"))), (0, 20));
        assert_eq!(
            (off.compression.binlog_transaction_compression_level_zstd, on.compression.binlog_transaction_compression_level_zstd),
            (None, Some(3))
        );
        assert!(
            on.compression.binlog_bytes_per_transaction > 0.0
                && on.compression.binlog_bytes_per_transaction * 2.0 < off.compression.binlog_bytes_per_transaction,
            "{} vs {} bytes/trx",
            on.compression.binlog_bytes_per_transaction,
            off.compression.binlog_bytes_per_transaction
        );
        // 40 rows of ~60 bytes each, and the events around them.
        assert!(off.compression.binlog_bytes_per_transaction > 40.0 * 60.0, "{}", off.compression.binlog_bytes_per_transaction);
        // The process's CPU counters tick every 10 ms: a run this short can
        // read zero, never less.
        assert!([off.compression.cpu_us_per_transaction, on.compression.cpu_us_per_transaction]
            .iter()
            .all(|cpu| cpu.is_finite() && *cpu >= 0.0));
        let ratios = compression_ratios(&[off, on], &args).unwrap();
        assert!(ratios.off_over_on_binlog_bytes > 2.0, "{ratios:?}");

        run(&args).unwrap();
        assert!(!dir.path().join("bench").exists(), "both runs' directories are removed");
        let csv = std::fs::read_to_string(&csv).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3, "{csv}");
        assert!(lines[1].contains(",OFF,,") && lines[2].contains(",ON,3,"), "{csv}");
    }

    #[test]
    fn keep_leaves_the_log() {
        let dir = tempfile::tempdir().unwrap();
        run(&args(dir.path(), &["--sessions", "2", "--transactions", "2", "--keep"])).unwrap();
        let names: Vec<String> = binlog_entries(dir.path()).unwrap().iter().map(|p| file_name(p)).collect();
        assert!(names.contains(&"binlog.000001".to_string()) && names.contains(&"binlog.index".to_string()), "{names:?}");
    }
}
