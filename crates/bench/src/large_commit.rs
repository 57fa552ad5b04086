//! `binlogd bench large-commit`: how long one large transaction takes to
//! commit, and what it does to everyone else's commits meanwhile, with
//! large-transaction promotion (AWS BOLT, seed 000 figure 4) ON and OFF.
//!
//! For each size and mode, in a fresh log directory: background sessions
//! commit one-row transactions continuously (`sync_binlog = 1`); one
//! thread builds a transaction of the given size (Query `BEGIN`,
//! Table_map, Write_rows events of about `binlog_row_event_max_size` =
//! 8 KiB holding rows with a 200-byte VARCHAR, Xid; its cache spills past
//! `binlog_cache_size`), which is not timed; after a quiet period that sets
//! the background baseline, it times `BinaryLog::commit` of the large
//! transaction. With OFF the leader copies the whole spill file into the
//! active file under the log lock, so every background commit waits; with
//! ON the spill file is renamed into the log and the lock is held for a
//! fixed number of small writes and syncs.
//!
//! Every background commit's completion time and latency is recorded:
//! commits per 100 ms window give the baseline (median window of the
//! quiet period before the large commit) and the worst window overlapping
//! the large commit; the commits in flight during it give the background
//! p99 and max latency. The quiet period's own worst window is reported
//! too, as the noise floor of that comparison, and the median window
//! during the build (ON syncs the growing spill file, which other
//! sessions' syncs wait behind). A sampler adds up the blocks allocated
//! under the log directory (spill files included, as `du` does) every
//! 50 ms, every 5 ms during the large commit: OFF holds the transaction
//! twice (spill file and copy), ON once.
//!
//! Each (size, mode) reports the median of `--repeat` runs and, where an
//! outlier matters, the worst run; every run is also summed up on stderr.
//!
//! The promotion threshold is `min(128 MiB, smallest size)` (never below
//! the 10 MiB minimum), so every listed size at or above it is promoted
//! with ON; the run fails if the promotion counter disagrees.
//!
//! The large transaction is built by [`build_large_transaction`], which
//! `bench recovery` ([`super::recovery`]) shares along with the argument
//! parsers and the per-iteration directories.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog::options::LARGE_TRANSACTION_THRESHOLD_MIN;
use binlog::{BinaryLog, CrashPoints, Options, OsStorage, TransactionCache};
use binlog_format::column_type::ColumnType;
use binlog_format::constants::COMMON_HEADER_LENGTH;
use binlog_format::events::rows::rows_flags::STMT_END_F;
use binlog_format::events::{ColumnSpec, Event, QueryEvent, RowsEvent, RowsKind, TableMap, XidEvent};
use binlog_format::{Uuid, Value};
use serde::Serialize;

use super::common::{distinct, format_size, format_size_approx, median, parse_size, random_bytes, ratio, ReportArgs, RunDirArgs, RunDirs};
use super::report::{self, LineChart, Scale, Series, Table};

/// Most background sessions (threads).
pub const BACKGROUND_SESSIONS_MAX: u32 = 1024;
/// Most repetitions of each (size, mode).
pub const REPEAT_MAX: u32 = 100;
/// MySQL's default `binlog_large_transaction_optimization_threshold`.
const THRESHOLD_DEFAULT_BYTES: u64 = 128 << 20;
/// `binlog_row_event_max_size` (MySQL's default): a Write_rows event is
/// closed once its rows reach this many bytes.
const ROW_EVENT_BYTES_MAX: usize = 8192;
/// Bytes of the VARCHAR value in every row of the large transaction.
const LARGE_ROW_PAYLOAD_BYTES: usize = 200;
/// Table ids: the background sessions write `bench.small`, the large
/// transaction `bench.large`.
const SMALL_TABLE_ID: u64 = 1;
const LARGE_TABLE_ID: u64 = 2;
/// Session (thread) id of the large transaction's `BEGIN`.
const LARGE_THREAD_ID: u32 = 100_000;
/// XIDs of the large transactions start here, far from the background
/// sessions' (session × 10^12 + n).
const LARGE_XID_BASE: u64 = u64::MAX / 2;
/// Background throughput is counted per window of this length.
const WINDOW: Duration = Duration::from_millis(100);
/// Disk usage of the log directory is sampled this often ...
const DISK_SAMPLE_INTERVAL: Duration = Duration::from_millis(50);
/// ... and this often while the large transaction commits: with OFF the
/// transaction is on disk twice from the end of the copy until the spill
/// file is deleted, which can be shorter than the usual interval.
const DISK_SAMPLE_INTERVAL_DURING_COMMIT: Duration = Duration::from_millis(5);
/// Background sessions run this long before the build starts (thread
/// start-up and the first groups are not part of any window that counts).
const WARM_UP: Duration = Duration::from_millis(300);
/// After the large commit returns the background keeps running this long,
/// so every window that overlaps the commit is complete.
const TAIL: Duration = Duration::from_millis(400);
/// Completion records one background session may keep; a run that
/// commits more fails rather than grow without bound.
const RECORDS_PER_SESSION_MAX: usize = 8_000_000;

/// Large-transaction promotion, as `binlog_large_transaction_optimization_enabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Optimization {
    On,
    Off,
}

impl Optimization {
    pub fn enabled(self) -> bool {
        self == Optimization::On
    }

    pub fn name(self) -> &'static str {
        match self {
            Optimization::On => "on",
            Optimization::Off => "off",
        }
    }
}

/// `on` or `off` (also MySQL's `1`/`0`), any case.
pub fn parse_optimization(text: &str) -> Result<Optimization, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "1" => Ok(Optimization::On),
        "off" | "0" => Ok(Optimization::Off),
        _ => Err(format!("{text:?} is not on or off")),
    }
}

/// The promotion threshold for a run over `sizes`: MySQL's 128 MiB default,
/// lowered to the smallest size so that every size is promoted, but never
/// below the variable's 10 MiB minimum.
pub fn promotion_threshold(sizes: &[u64]) -> u64 {
    let smallest = sizes.iter().copied().min().unwrap_or(THRESHOLD_DEFAULT_BYTES);
    smallest.clamp(LARGE_TRANSACTION_THRESHOLD_MIN, THRESHOLD_DEFAULT_BYTES)
}

/// One measured configuration: a transaction of `size` bytes with
/// promotion `mode` and threshold `threshold`.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub size: u64,
    pub mode: Optimization,
    pub threshold: u64,
}

impl Case {
    /// Whether the transaction must be promoted.
    pub fn promoted(&self) -> bool {
        self.mode.enabled() && self.size >= self.threshold
    }
}

/// The log's promotion counters at one moment.
pub struct PromotionCounters {
    promotions: u64,
    missed: u64,
}

impl PromotionCounters {
    pub fn read(log: &BinaryLog) -> PromotionCounters {
        let counters = log.counters();
        PromotionCounters {
            promotions: counters.large_transaction_promotions.load(Ordering::Relaxed),
            missed: counters.large_transaction_missed.load(Ordering::Relaxed),
        }
    }

    /// Fails loudly unless exactly the large commit of `case` was promoted
    /// since `self` was read, if it should have been, and none was missed.
    pub fn check_since(&self, log: &BinaryLog, case: Case) -> Result<(), String> {
        let now = PromotionCounters::read(log);
        let (promotions, missed) = (now.promotions - self.promotions, now.missed - self.missed);
        let expected = case.promoted() as u64;
        if promotions != expected || missed != 0 {
            return Err(format!(
                "PROMOTION CHECK FAILED: the {} transaction with optimization {} (threshold {}) counted {promotions} \
                 promotion(s) and {missed} missed, expected {expected} and 0",
                format_size(case.size),
                case.mode.name(),
                format_size(case.threshold)
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct LargeCommitBenchArgs {
    /// Directory for the runs; each (size, mode, repetition) gets a fresh
    /// subdirectory, deleted after it (unless --keep). Created if missing.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Transaction sizes (bytes of binlog events), comma-separated:
    /// 512KiB, 64MiB, 1GiB, ...
    #[arg(long, value_name = "SIZES", required = true, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<u64>,

    /// Large-transaction promotion modes to run, comma-separated.
    #[arg(long, value_name = "on,off", default_value = "on,off", value_delimiter = ',', value_parser = parse_optimization)]
    pub optimization: Vec<Optimization>,

    /// Sessions committing one-row transactions throughout each run.
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(0..=BACKGROUND_SESSIONS_MAX as i64))]
    pub background_sessions: u32,

    /// Runs of each (size, mode); the median is reported.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=REPEAT_MAX as i64))]
    pub repeat: u32,

    /// Quiet period (background only) between the build and the large
    /// commit; its median 100 ms window is the background baseline.
    #[arg(long, value_name = "MILLISECONDS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(200..=600_000))]
    pub baseline_ms: u64,

    // --json, --csv FILE, --plot FILE.png.
    #[command(flatten)]
    pub report: ReportArgs,

    // --clean, --keep.
    #[command(flatten)]
    pub run_dirs: RunDirArgs,
}

/// What one run (one size, mode and repetition) measured.
#[derive(Debug, Clone)]
struct Run {
    transaction_bytes: u64,
    build_seconds: f64,
    commit_ms: f64,
    background_tps_baseline: f64,
    /// Lowest window of the quiet period: how low the background dips
    /// with no large commit at all (the noise floor of the next field).
    background_tps_baseline_min: f64,
    background_tps_min_window: f64,
    /// Median window while the large transaction was being built (none
    /// when the build took less than a whole window).
    background_tps_build: Option<f64>,
    /// Background commits in flight at some point during the large commit.
    background_commits_during: usize,
    background_commit_ms_p99: f64,
    background_commit_ms_max: f64,
    peak_disk_bytes: u64,
}

impl Run {
    fn background_tps_min_ratio(&self) -> f64 {
        ratio(self.background_tps_min_window, self.background_tps_baseline)
    }

    fn background_tps_quiet_min_ratio(&self) -> f64 {
        ratio(self.background_tps_baseline_min, self.background_tps_baseline)
    }
}

/// Medians over the repetitions of one (size, mode).
#[derive(Debug, Clone, Serialize)]
pub struct LargeCommitResult {
    pub size_bytes: u64,
    pub size: String,
    pub optimization: Optimization,
    /// Bytes of events in the large transaction's cache (≥ size_bytes).
    pub transaction_bytes: u64,
    pub threshold_bytes: u64,
    pub promoted: bool,
    pub background_sessions: u32,
    pub repeat: u32,
    pub commit_ms: f64,
    /// Every repetition's commit_ms, in run order.
    pub commit_ms_runs: Vec<f64>,
    /// The slowest repetition's commit_ms (a median hides an outlier).
    pub commit_ms_worst: f64,
    pub background_commit_ms_max: f64,
    pub background_commit_ms_p99: f64,
    pub background_commits_during: usize,
    pub background_tps_min_window: f64,
    pub background_tps_baseline: f64,
    /// background_tps_min_window / background_tps_baseline (median of the
    /// repetitions' ratios).
    pub background_tps_min_ratio: f64,
    /// The lowest ratio of any repetition.
    pub background_tps_min_ratio_worst: f64,
    /// The same ratio for the lowest window of the quiet period before the
    /// large commit (median of the repetitions): how far the background
    /// dips with no large commit at all, to compare with the ratio above.
    pub background_tps_quiet_min_ratio: f64,
    /// Median background window while the large transaction was built
    /// (ON syncs its spill file as it grows; OFF leaves that to writeback);
    /// null when every build took less than a whole window.
    pub background_tps_build: Option<f64>,
    pub peak_disk_bytes: u64,
    pub build_seconds: f64,
}

/// Runs the benchmark and prints its results on stdout.
pub fn run(args: &LargeCommitBenchArgs) -> Result<(), String> {
    let threshold = promotion_threshold(&args.sizes);
    let dirs = RunDirs::prepare(&args.dir)?;
    let outcome = (|| -> Result<Vec<LargeCommitResult>, String> {
        let mut results = Vec::new();
        for &size in &args.sizes {
            for &mode in &args.optimization {
                let mut runs = Vec::new();
                for repetition in 1..=args.repeat {
                    let name = format!("large-commit-{}-{}-{repetition}", format_size(size), mode.name());
                    eprintln!("bench large-commit: {} {} run {repetition}/{}", format_size(size), mode.name(), args.repeat);
                    let dir = dirs.fresh(&name, args.run_dirs.clean)?;
                    let run = run_once(&dir, Case { size, mode, threshold }, args);
                    let removed = if args.run_dirs.keep { Ok(()) } else { RunDirs::remove(&dir) };
                    let run = run?;
                    removed?;
                    eprintln!(
                        "  commit {:.1} ms; background: baseline {:.0}/s, worst window {:.0}% of it (quiet period's \
                         worst {:.0}%), max latency {:.1} ms; peak disk {}",
                        run.commit_ms,
                        run.background_tps_baseline,
                        run.background_tps_min_ratio() * 100.0,
                        run.background_tps_quiet_min_ratio() * 100.0,
                        run.background_commit_ms_max,
                        format_size_approx(run.peak_disk_bytes)
                    );
                    runs.push(run);
                }
                results.push(summarize(Case { size, mode, threshold }, args, &runs));
            }
        }
        Ok(results)
    })();
    let finished = dirs.finish(args.run_dirs.keep);
    let results = outcome?;
    finished?;
    print_results(args, &results)?;
    if let Some(path) = &args.report.csv {
        write_csv(path, &results)?;
    }
    if let Some(path) = &args.report.plot {
        let title = format!("large transaction commit, {} background sessions", args.background_sessions);
        plot_against_size(path, &title, "commit ms", &results, |r| r.size_bytes, |r| r.optimization, |r| r.commit_ms)?;
    }
    Ok(())
}

fn summarize(case: Case, args: &LargeCommitBenchArgs, runs: &[Run]) -> LargeCommitResult {
    let median_of = |value: fn(&Run) -> f64| median(runs.iter().map(value).collect());
    let worst_of = |value: fn(&Run) -> f64, worse: fn(f64, f64) -> f64| runs.iter().map(value).reduce(worse).unwrap_or(0.0);
    LargeCommitResult {
        size_bytes: case.size,
        size: format_size(case.size),
        optimization: case.mode,
        transaction_bytes: runs[0].transaction_bytes,
        threshold_bytes: case.threshold,
        promoted: case.promoted(),
        background_sessions: args.background_sessions,
        repeat: runs.len() as u32,
        commit_ms: median_of(|r| r.commit_ms),
        commit_ms_runs: runs.iter().map(|r| r.commit_ms).collect(),
        commit_ms_worst: worst_of(|r| r.commit_ms, f64::max),
        background_commit_ms_max: median_of(|r| r.background_commit_ms_max),
        background_commit_ms_p99: median_of(|r| r.background_commit_ms_p99),
        background_commits_during: median_of(|r| r.background_commits_during as f64) as usize,
        background_tps_min_window: median_of(|r| r.background_tps_min_window),
        background_tps_baseline: median_of(|r| r.background_tps_baseline),
        background_tps_min_ratio: median_of(Run::background_tps_min_ratio),
        background_tps_min_ratio_worst: worst_of(Run::background_tps_min_ratio, f64::min),
        background_tps_quiet_min_ratio: median_of(Run::background_tps_quiet_min_ratio),
        background_tps_build: {
            let builds: Vec<f64> = runs.iter().filter_map(|r| r.background_tps_build).collect();
            (!builds.is_empty()).then(|| median(builds))
        },
        peak_disk_bytes: median_of(|r| r.peak_disk_bytes as f64) as u64,
        build_seconds: median_of(|r| r.build_seconds),
    }
}

/// Options for a fresh log in `dir` with promotion as in `case`.
pub fn bench_options(dir: &Path, case: Case) -> Options {
    let mut options = Options::new(dir);
    options.server_uuid = Uuid::from_random_bytes(random_bytes());
    options.large_transaction_optimization_enabled = case.mode.enabled();
    options.large_transaction_optimization_threshold = case.threshold;
    options
}

/// A fresh log in `dir`, the background sessions, the timed commit.
fn run_once(dir: &Path, case: Case, args: &LargeCommitBenchArgs) -> Result<Run, String> {
    let options = bench_options(dir, case);
    let (log, _) = BinaryLog::open(options, Arc::new(OsStorage), CrashPoints::default())
        .map_err(|e| format!("opening the binary log in {}: {e}", dir.display()))?;
    let origin = Instant::now();
    let disk = DiskSampler::start(dir)?;
    let background = Background::start(&log, args.background_sessions, origin);
    let measured = background.and_then(|background| {
        let measured = measure(&log, &background, &disk, case, args, origin);
        // Stop the sessions even when the large commit failed.
        let records = background.stop();
        let (measured, records) = (measured?, records?);
        Ok((measured, records))
    });
    let peak_disk_bytes = disk.stop();
    let closed = log.close().map_err(|e| format!("closing the binary log in {}: {e}", dir.display()));
    let (timing, records) = measured?;
    closed?;

    let commit = (timing.commit_start_us, timing.commit_end_us);
    let windows = WindowCounts::new(&records);
    // `--baseline-ms` is at least two windows long, so one lies wholly inside.
    let quiet = (timing.build_end_us, timing.commit_start_us);
    let background_tps_baseline = windows.median_tps_within(quiet.0, quiet.1).unwrap_or(0.0);
    let background_tps_baseline_min = windows.min_tps_within(quiet.0, quiet.1).unwrap_or(0.0);
    let background_tps_min_window = windows.min_tps_overlapping(commit.0, commit.1);
    let background_tps_build = windows.median_tps_within(timing.build_start_us, timing.build_end_us);
    let mut during: Vec<u32> = records.iter().filter(|r| r.start_us() < commit.1 && r.end_us > commit.0).map(|r| r.latency_us).collect();
    during.sort_unstable();
    let percentile_ms = |q: f64| -> f64 {
        if during.is_empty() {
            return 0.0;
        }
        let rank = ((q * during.len() as f64).ceil() as usize).clamp(1, during.len());
        during[rank - 1] as f64 / 1000.0
    };
    Ok(Run {
        transaction_bytes: timing.transaction_bytes,
        build_seconds: (timing.build_end_us - timing.build_start_us) as f64 / 1e6,
        commit_ms: (commit.1 - commit.0) as f64 / 1000.0,
        background_tps_baseline,
        background_tps_baseline_min,
        background_tps_min_window,
        background_tps_build,
        background_commits_during: during.len(),
        background_commit_ms_p99: percentile_ms(0.99),
        background_commit_ms_max: percentile_ms(1.0),
        peak_disk_bytes,
    })
}

/// Moments of one run, in µs since its origin.
struct Timing {
    build_start_us: u64,
    build_end_us: u64,
    commit_start_us: u64,
    commit_end_us: u64,
    transaction_bytes: u64,
}

fn measure(
    log: &BinaryLog,
    background: &Background,
    disk: &DiskSampler,
    case: Case,
    args: &LargeCommitBenchArgs,
    origin: Instant,
) -> Result<Timing, String> {
    let since = |at: Instant| at.duration_since(origin).as_micros() as u64;
    background.sleep_checking(WARM_UP)?;
    let build_start_us = since(Instant::now());
    let cache = build_large_transaction(log, case.size, LARGE_XID_BASE)?;
    let transaction_bytes = cache.len();
    let build_end_us = since(Instant::now());
    background.check()?;
    // The quiet period: the baseline windows.
    background.sleep_checking(Duration::from_millis(args.baseline_ms))?;

    let before = PromotionCounters::read(log);
    disk.set_fast(true);
    let started = Instant::now();
    let committed = log.commit(cache);
    let finished = Instant::now();
    disk.set_fast(false);
    committed.map_err(|e| format!("committing the {} transaction: {e}", format_size(case.size)))?;
    before.check_since(log, case)?;

    background.sleep_checking(TAIL)?;
    Ok(Timing { build_start_us, build_end_us, commit_start_us: since(started), commit_end_us: since(finished), transaction_bytes })
}

/// `bench.large (id BIGINT UNSIGNED PRIMARY KEY, payload VARCHAR(255))`, utf8mb4.
fn large_table_map() -> TableMap {
    let columns = [
        ColumnSpec { name: "id".into(), column_type: ColumnType::LongLong, nullable: false, unsigned: true, collation: 255 },
        ColumnSpec {
            name: "payload".into(),
            column_type: ColumnType::VarChar { max_length_bytes: 1020 },
            nullable: true,
            unsigned: false,
            collation: 255,
        },
    ];
    TableMap::new(LARGE_TABLE_ID, "bench", "large", &columns, &[0]).expect("the benchmark table is a valid definition")
}

/// `bench.small (id BIGINT UNSIGNED PRIMARY KEY, session INT, payload VARCHAR(64))`, utf8mb4.
fn small_table_map() -> TableMap {
    let columns = [
        ColumnSpec { name: "id".into(), column_type: ColumnType::LongLong, nullable: false, unsigned: true, collation: 255 },
        ColumnSpec { name: "session".into(), column_type: ColumnType::Long, nullable: true, unsigned: false, collation: 255 },
        ColumnSpec {
            name: "payload".into(),
            column_type: ColumnType::VarChar { max_length_bytes: 256 },
            nullable: true,
            unsigned: false,
            collation: 255,
        },
    ];
    TableMap::new(SMALL_TABLE_ID, "bench", "small", &columns, &[0]).expect("the benchmark table is a valid definition")
}

/// A transaction as mysqld logs `BEGIN; INSERT INTO bench.large ...; COMMIT`
/// whose cache holds at least `size` bytes: Query `BEGIN`, Table_map,
/// Write_rows events closed at `binlog_row_event_max_size` (the last with
/// `STMT_END_F`), Xid. Rows are `(id, 200-byte string)` with ids from 1.
pub fn build_large_transaction(log: &BinaryLog, size: u64, xid: u64) -> Result<TransactionCache, String> {
    let table = large_table_map();
    let timestamp = binlog::log::now_seconds();
    let mut cache = log.new_cache();
    let append = |cache: &mut TransactionCache, event: Event| {
        cache.append(&event, timestamp).map_err(|e| format!("appending to the large transaction's cache: {e}"))
    };
    append(&mut cache, Event::Query(QueryEvent::new(LARGE_THREAD_ID, "bench", "BEGIN")))?;
    append(&mut cache, Event::TableMap(table.clone()))?;
    let new_event = || RowsEvent::empty(RowsKind::Write, LARGE_TABLE_ID, table.columns.len());
    // Encoded size of an event = common header + body + CRC32.
    let checksum_bytes = if log.options().binlog_checksum { 4 } else { 0 };
    let event_bytes = |body_bytes: usize| (COMMON_HEADER_LENGTH + body_bytes + checksum_bytes) as u64;
    let rows_event_fixed = {
        let mut body = Vec::new();
        new_event().encode_body(&mut body);
        body.len()
    };
    let xid_bytes = {
        let mut body = Vec::new();
        Event::Xid(XidEvent { xid }).encode_body(&mut body);
        event_bytes(body.len())
    };
    let mut payload = vec![0u8; LARGE_ROW_PAYLOAD_BYTES];
    let mut event = new_event();
    for id in 1u64.. {
        if event.rows.len() >= ROW_EVENT_BYTES_MAX {
            append(&mut cache, std::mem::replace(&mut event, new_event()).into_event())?;
        }
        // Printable, and different from row to row.
        for (index, byte) in payload.iter_mut().enumerate() {
            *byte = b'a' + ((id as usize + index) % 26) as u8;
        }
        event.push_write(&table, &[Value::UInt(id), Value::Bytes(payload.clone())]).map_err(|e| format!("encoding row {id}: {e}"))?;
        if cache.len() + event_bytes(rows_event_fixed + event.rows.len()) + xid_bytes >= size {
            break;
        }
    }
    event.flags = STMT_END_F;
    append(&mut cache, event.into_event())?;
    append(&mut cache, Event::Xid(XidEvent { xid }))?;
    assert!(cache.len() >= size, "the large transaction holds {} bytes, wanted {size}", cache.len());
    Ok(cache)
}

/// One row in `bench.small`, ready to commit.
fn small_transaction(log: &BinaryLog, table: &TableMap, session: u32, xid: u64) -> Result<TransactionCache, String> {
    let timestamp = binlog::log::now_seconds();
    let mut cache = log.new_cache();
    let row = vec![Value::UInt(xid), Value::Int(session as i64), Value::Bytes(b"binlogd large-commit background row".to_vec())];
    let rows = RowsEvent::write(SMALL_TABLE_ID, table, &[row]).map_err(|e| format!("encoding a background row: {e}"))?;
    let events = [
        Event::Query(QueryEvent::new(session + 1, "bench", "BEGIN")),
        Event::TableMap(table.clone()),
        rows.into_event(),
        Event::Xid(XidEvent { xid }),
    ];
    for event in &events {
        cache.append(event, timestamp).map_err(|e| format!("appending to a background transaction's cache: {e}"))?;
    }
    cache.writeset.push(xid);
    Ok(cache)
}

/// Commits `count` one-row transactions (the log's history before a
/// large transaction); used by `bench recovery`.
pub fn commit_small_transactions(log: &BinaryLog, count: u32) -> Result<(), String> {
    let table = small_table_map();
    for n in 0..count {
        let cache = small_transaction(log, &table, 0, n as u64 + 1)?;
        log.commit(cache).map_err(|e| format!("committing small transaction {n}: {e}"))?;
    }
    Ok(())
}

/// One background commit: when it finished (µs since the run's origin)
/// and how long `BinaryLog::commit` took.
#[derive(Debug, Clone, Copy)]
struct Record {
    end_us: u64,
    latency_us: u32,
}

impl Record {
    fn start_us(&self) -> u64 {
        self.end_us.saturating_sub(self.latency_us as u64)
    }
}

/// The background sessions: threads committing one-row transactions until stopped.
struct Background {
    stop: Arc<AtomicBool>,
    /// First error of any session (they all stop on it).
    error: Arc<parking_lot::Mutex<Option<String>>>,
    handles: Vec<std::thread::JoinHandle<Vec<Record>>>,
}

impl Background {
    fn start(log: &BinaryLog, sessions: u32, origin: Instant) -> Result<Background, String> {
        let mut background = Background { stop: Arc::default(), error: Arc::default(), handles: Vec::new() };
        let table = small_table_map();
        for session in 0..sessions {
            let (log, stop, error, table) = (log.clone(), background.stop.clone(), background.error.clone(), table.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("bench-background-{session}"))
                .spawn(move || background_session(&log, &table, session, origin, &stop, &error));
            match spawned {
                Ok(handle) => background.handles.push(handle),
                Err(error) => {
                    let _ = background.stop();
                    return Err(format!("starting background session {session} of {sessions}: {error}"));
                }
            }
        }
        Ok(background)
    }

    fn check(&self) -> Result<(), String> {
        match self.error.lock().clone() {
            Some(error) => Err(format!("background session failed: {error}")),
            None => Ok(()),
        }
    }

    /// Sleeps `duration`, failing early if a session failed.
    fn sleep_checking(&self, duration: Duration) -> Result<(), String> {
        let deadline = Instant::now() + duration;
        loop {
            self.check()?;
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(20)));
        }
    }

    /// Stops every session and returns all their records.
    fn stop(self) -> Result<Vec<Record>, String> {
        self.stop.store(true, Ordering::Relaxed);
        let mut records = Vec::new();
        for handle in self.handles {
            match handle.join() {
                Ok(session) => records.extend(session),
                Err(_) => return Err("a background session panicked".to_string()),
            }
        }
        match self.error.lock().take() {
            Some(error) => Err(format!("background session failed: {error}")),
            None => Ok(records),
        }
    }
}

fn background_session(
    log: &BinaryLog,
    table: &TableMap,
    session: u32,
    origin: Instant,
    stop: &AtomicBool,
    error: &parking_lot::Mutex<Option<String>>,
) -> Vec<Record> {
    let mut records = Vec::new();
    let fail = |text: String| {
        error.lock().get_or_insert(text);
        stop.store(true, Ordering::Relaxed);
    };
    for n in 1u64.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let xid = (session as u64 + 1) * 1_000_000_000_000 + n;
        let cache = match small_transaction(log, table, session, xid) {
            Ok(cache) => cache,
            Err(text) => {
                fail(format!("session {session}: {text}"));
                break;
            }
        };
        let started = Instant::now();
        if let Err(e) = log.commit(cache) {
            fail(format!("session {session}, commit {n}: {e}"));
            break;
        }
        let finished = Instant::now();
        if records.len() >= RECORDS_PER_SESSION_MAX {
            fail(format!("session {session} committed more than {RECORDS_PER_SESSION_MAX} transactions in one run"));
            break;
        }
        records.push(Record {
            end_us: finished.duration_since(origin).as_micros() as u64,
            latency_us: u32::try_from(finished.duration_since(started).as_micros()).unwrap_or(u32::MAX),
        });
    }
    records
}

/// Background commits completed per [`WINDOW`], windows counted from the
/// run's origin.
struct WindowCounts {
    counts: Vec<u64>,
}

impl WindowCounts {
    fn window_us() -> u64 {
        WINDOW.as_micros() as u64
    }

    fn new(records: &[Record]) -> WindowCounts {
        let windows = records.iter().map(|r| r.end_us / Self::window_us() + 1).max().unwrap_or(0);
        let mut counts = vec![0u64; windows as usize];
        for record in records {
            counts[(record.end_us / Self::window_us()) as usize] += 1;
        }
        WindowCounts { counts }
    }

    fn tps(&self, window: u64) -> f64 {
        self.counts.get(window as usize).copied().unwrap_or(0) as f64 / WINDOW.as_secs_f64()
    }

    /// Commits/s of each window wholly inside `[from_us, to_us)`.
    fn tps_within(&self, from_us: u64, to_us: u64) -> Vec<f64> {
        let first = from_us.div_ceil(Self::window_us());
        let end = to_us / Self::window_us();
        (first..end).map(|window| self.tps(window)).collect()
    }

    /// Median commits/s over the windows wholly inside `[from_us, to_us)`;
    /// `None` when there is none.
    fn median_tps_within(&self, from_us: u64, to_us: u64) -> Option<f64> {
        let windows = self.tps_within(from_us, to_us);
        (!windows.is_empty()).then(|| median(windows))
    }

    /// Lowest commits/s of the windows wholly inside `[from_us, to_us)`.
    fn min_tps_within(&self, from_us: u64, to_us: u64) -> Option<f64> {
        self.tps_within(from_us, to_us).into_iter().reduce(f64::min)
    }

    /// Lowest commits/s of the windows that overlap `[from_us, to_us]`.
    fn min_tps_overlapping(&self, from_us: u64, to_us: u64) -> f64 {
        (from_us / Self::window_us()..=to_us / Self::window_us()).map(|window| self.tps(window)).fold(f64::INFINITY, f64::min)
    }
}

/// Samples the bytes allocated under a directory every
/// [`DISK_SAMPLE_INTERVAL`] in a thread; [`DiskSampler::stop`] returns the peak.
struct DiskSampler {
    stop: Arc<AtomicBool>,
    /// Set while the large transaction commits: sample more often.
    fast: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    handle: std::thread::JoinHandle<()>,
    dir: PathBuf,
}

impl DiskSampler {
    fn start(dir: &Path) -> Result<DiskSampler, String> {
        let (stop, fast) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let peak = Arc::new(AtomicU64::new(disk_usage_bytes(dir)));
        let (thread_stop, thread_fast, thread_peak, thread_dir) = (stop.clone(), fast.clone(), peak.clone(), dir.to_path_buf());
        let handle = std::thread::Builder::new()
            .name("bench-disk-sampler".into())
            .spawn(move || {
                while !thread_stop.load(Ordering::Relaxed) {
                    thread_peak.fetch_max(disk_usage_bytes(&thread_dir), Ordering::Relaxed);
                    let fast = thread_fast.load(Ordering::Relaxed);
                    std::thread::sleep(if fast { DISK_SAMPLE_INTERVAL_DURING_COMMIT } else { DISK_SAMPLE_INTERVAL });
                }
            })
            .map_err(|e| format!("starting the disk sampler: {e}"))?;
        Ok(DiskSampler { stop, fast, peak, handle, dir: dir.to_path_buf() })
    }

    fn set_fast(&self, fast: bool) {
        self.fast.store(fast, Ordering::Relaxed);
    }

    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
        self.peak.fetch_max(disk_usage_bytes(&self.dir), Ordering::Relaxed);
        self.peak.load(Ordering::Relaxed)
    }
}

/// Bytes allocated to the files under `dir`, as `du` counts them: each
/// inode once, holes not counted. Entries that vanish while being counted
/// (a spill file deleted or renamed meanwhile) are skipped.
pub fn disk_usage_bytes(dir: &Path) -> u64 {
    fn walk(dir: &Path, seen: &mut std::collections::HashSet<(u64, u64)>, total: &mut u64) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let Ok(metadata) = entry.path().symlink_metadata() else { continue };
            if seen.insert((metadata.dev(), metadata.ino())) {
                *total += metadata.blocks() * 512;
            }
            if metadata.is_dir() {
                walk(&entry.path(), seen, total);
            }
        }
    }
    let mut total = 0;
    walk(dir, &mut Default::default(), &mut total);
    total
}

/// Writes a line chart of `value` against transaction size, one line per
/// optimization mode, both axes logarithmic (sizes and latencies span
/// orders of magnitude).
pub fn plot_against_size<R>(
    path: &Path,
    title: &str,
    y_label: &str,
    results: &[R],
    size: impl Fn(&R) -> u64,
    mode: impl Fn(&R) -> Optimization,
    value: impl Fn(&R) -> f64,
) -> Result<(), String> {
    let mut sizes: Vec<u64> = results.iter().map(&size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let series = [Optimization::On, Optimization::Off]
        .into_iter()
        .filter(|m| results.iter().any(|r| mode(r) == *m))
        .map(|m| Series {
            label: format!("optimization {}", m.name()),
            points: results.iter().filter(|r| mode(r) == m).map(|r| (size(r) as f64, value(r))).collect(),
        })
        .collect();
    let chart = LineChart {
        title: title.to_string(),
        x_label: "transaction size".to_string(),
        y_label: y_label.to_string(),
        x_scale: Scale::Log,
        y_scale: Scale::Log,
        x_ticks: sizes.iter().map(|&s| (s as f64, format_size(s))).collect(),
        series,
    };
    report::plot_lines(path, &chart)
}

fn print_results(args: &LargeCommitBenchArgs, results: &[LargeCommitResult]) -> Result<(), String> {
    if args.report.json {
        let text = serde_json::to_string(results).map_err(|e| format!("encoding JSON: {e}"))?;
        println!("{text}");
        return Ok(());
    }
    let threshold = results.first().map_or(0, |r| r.threshold_bytes);
    println!(
        "large-transaction commit: {} background sessions, sync_binlog=1, threshold {}, median (and worst) of {} run(s)",
        args.background_sessions,
        format_size(threshold),
        args.repeat
    );
    for size in distinct(results.iter().map(|r| r.size_bytes)) {
        let rows: Vec<&LargeCommitResult> = results.iter().filter(|r| r.size_bytes == size).collect();
        println!();
        println!("{}", format_size(size));
        let mut table = Table::new(&[
            "optimization",
            "promoted",
            "commit ms",
            "worst",
            "bg tps build",
            "bg tps baseline",
            "bg tps min window",
            "min/baseline",
            "worst",
            "quiet min",
            "bg p99 ms",
            "bg max ms",
            "peak disk",
        ]);
        for r in &rows {
            table.push_row(vec![
                r.optimization.name().to_string(),
                if r.promoted { "yes" } else { "no" }.to_string(),
                format!("{:.1}", r.commit_ms),
                format!("{:.1}", r.commit_ms_worst),
                r.background_tps_build.map_or_else(|| "-".to_string(), |tps| format!("{tps:.0}")),
                format!("{:.0}", r.background_tps_baseline),
                format!("{:.0}", r.background_tps_min_window),
                format!("{:.0}%", r.background_tps_min_ratio * 100.0),
                format!("{:.0}%", r.background_tps_min_ratio_worst * 100.0),
                format!("{:.0}%", r.background_tps_quiet_min_ratio * 100.0),
                format!("{:.1}", r.background_commit_ms_p99),
                format!("{:.1}", r.background_commit_ms_max),
                format_size_approx(r.peak_disk_bytes),
            ]);
        }
        print!("{}", table.render());
        let on = rows.iter().find(|r| r.optimization == Optimization::On);
        let off = rows.iter().find(|r| r.optimization == Optimization::Off);
        if let (Some(on), Some(off)) = (on, off) {
            println!(
                "ratio: commit ms off/on {:.1}x, bg max ms off/on {:.1}x, peak disk on/off {:.2}",
                ratio(off.commit_ms, on.commit_ms),
                ratio(off.background_commit_ms_max, on.background_commit_ms_max),
                ratio(on.peak_disk_bytes as f64, off.peak_disk_bytes as f64),
            );
        }
    }
    for mode in [Optimization::On, Optimization::Off] {
        let rows: Vec<&LargeCommitResult> = results.iter().filter(|r| r.optimization == mode).collect();
        if let (Some(smallest), Some(largest)) = (rows.iter().min_by_key(|r| r.size_bytes), rows.iter().max_by_key(|r| r.size_bytes)) {
            if smallest.size_bytes != largest.size_bytes {
                println!(
                    "optimization {}: commit ms {}/{} = {:.1}x",
                    mode.name(),
                    largest.size,
                    smallest.size,
                    ratio(largest.commit_ms, smallest.commit_ms)
                );
            }
        }
    }
    Ok(())
}

const CSV_COLUMNS: [&str; 22] = [
    "size_bytes",
    "optimization",
    "transaction_bytes",
    "threshold_bytes",
    "promoted",
    "background_sessions",
    "repeat",
    "commit_ms",
    "commit_ms_runs",
    "commit_ms_worst",
    "background_commit_ms_max",
    "background_commit_ms_p99",
    "background_commits_during",
    "background_tps_min_window",
    "background_tps_baseline",
    "background_tps_min_ratio",
    "background_tps_min_ratio_worst",
    "background_tps_quiet_min_ratio",
    "background_tps_build",
    "peak_disk_bytes",
    "build_seconds",
    "size",
];

fn write_csv(path: &Path, results: &[LargeCommitResult]) -> Result<(), String> {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.size_bytes.to_string(),
                r.optimization.name().to_string(),
                r.transaction_bytes.to_string(),
                r.threshold_bytes.to_string(),
                r.promoted.to_string(),
                r.background_sessions.to_string(),
                r.repeat.to_string(),
                format!("{:.3}", r.commit_ms),
                r.commit_ms_runs.iter().map(|ms| format!("{ms:.3}")).collect::<Vec<_>>().join(" "),
                format!("{:.3}", r.commit_ms_worst),
                format!("{:.3}", r.background_commit_ms_max),
                format!("{:.3}", r.background_commit_ms_p99),
                r.background_commits_during.to_string(),
                format!("{:.1}", r.background_tps_min_window),
                format!("{:.1}", r.background_tps_baseline),
                format!("{:.3}", r.background_tps_min_ratio),
                format!("{:.3}", r.background_tps_min_ratio_worst),
                format!("{:.3}", r.background_tps_quiet_min_ratio),
                r.background_tps_build.map_or_else(String::new, |tps| format!("{tps:.1}")),
                r.peak_disk_bytes.to_string(),
                format!("{:.3}", r.build_seconds),
                r.size.clone(),
            ]
        })
        .collect();
    report::write_csv(path, &CSV_COLUMNS, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: LargeCommitBenchArgs,
    }

    fn args(argv: &[&str]) -> Result<LargeCommitBenchArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("bench").chain(argv.iter().copied())).map(|w| w.args)
    }

    #[test]
    fn arguments_parse_lists() {
        let parsed = args(&["--dir", "/tmp/x", "--sizes", "64MiB,1GiB", "--optimization", "ON,off"]).unwrap();
        assert_eq!(parsed.sizes, vec![64 << 20, 1 << 30]);
        assert_eq!(parsed.optimization, vec![Optimization::On, Optimization::Off]);
        assert_eq!((parsed.background_sessions, parsed.repeat), (8, 3));
        assert!(args(&["--dir", "/tmp/x", "--sizes", "64MiB", "--optimization", "maybe"]).is_err());
        assert!(args(&["--dir", "/tmp/x"]).is_err(), "--sizes is required");
    }

    #[test]
    fn threshold_covers_the_smallest_size_within_the_limits() {
        let (mib, gib) = (1u64 << 20, 1u64 << 30);
        assert_eq!(promotion_threshold(&[64 * mib, 4 * gib]), 64 * mib);
        assert_eq!(promotion_threshold(&[gib, 4 * gib]), 128 * mib);
        assert_eq!(promotion_threshold(&[mib, 64 * mib]), 10 * mib);
        assert!(Case { size: 64 * mib, mode: Optimization::On, threshold: 64 * mib }.promoted());
        assert!(!Case { size: mib, mode: Optimization::On, threshold: 10 * mib }.promoted());
        assert!(!Case { size: gib, mode: Optimization::Off, threshold: 64 * mib }.promoted());
    }

    #[test]
    fn windows_give_baseline_and_worst_window() {
        let ms = |m: u64| m * 1000;
        // 10 commits in each of windows 0-4, none in 5 (a stall), 10 in 6.
        let mut records = Vec::new();
        for window in [0u64, 1, 2, 3, 4, 6] {
            for n in 0..10 {
                records.push(Record { end_us: ms(window * 100 + n * 10), latency_us: 500 });
            }
        }
        let windows = WindowCounts::new(&records);
        assert_eq!(windows.median_tps_within(ms(0), ms(500)), Some(100.0));
        assert_eq!(windows.median_tps_within(ms(10), ms(150)), None, "no whole window inside");
        // Windows wholly inside [50 ms, 450 ms) are 1-3.
        assert_eq!(windows.median_tps_within(ms(50), ms(450)), Some(100.0));
        assert_eq!(windows.min_tps_within(ms(300), ms(700)), Some(0.0));
        assert_eq!(windows.min_tps_within(ms(10), ms(150)), None);
        assert_eq!(windows.min_tps_overlapping(ms(420), ms(480)), 100.0);
        assert_eq!(windows.min_tps_overlapping(ms(450), ms(520)), 0.0);
        assert_eq!(Record { end_us: 100, latency_us: 500 }.start_us(), 0);
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), 2.5);
    }

    #[test]
    fn large_transaction_reaches_its_size_in_8_kib_events() {
        let dir = tempfile::tempdir().unwrap();
        let case = Case { size: 300 << 10, mode: Optimization::On, threshold: LARGE_TRANSACTION_THRESHOLD_MIN };
        let options = bench_options(dir.path(), case);
        let (log, _) = BinaryLog::open(options, Arc::new(OsStorage), CrashPoints::default()).unwrap();
        let size = 300 << 10;
        let cache = build_large_transaction(&log, size, 7).unwrap();
        assert!(cache.len() >= size && cache.len() < size + 300, "{} bytes for {size}", cache.len());
        assert!(cache.is_spilled());
        // BEGIN, Table_map, Write_rows of 8 KiB and a little more each, Xid.
        let rows_events = cache.event_count() - 3;
        assert!((size / 8600..=size / 8192 + 1).contains(&rows_events), "{rows_events} rows events");
        drop(cache);
        log.close().unwrap();
    }

    #[test]
    fn promotes_with_on_and_copies_with_off() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("new/runs");
        let csv = parent.path().join("large.csv");
        let png = parent.path().join("large.png");
        let argv = [
            "--dir",
            dir.to_str().unwrap(),
            "--sizes",
            "10MiB",
            "--background-sessions",
            "2",
            "--repeat",
            "1",
            "--baseline-ms",
            "200",
            "--csv",
            csv.to_str().unwrap(),
            "--plot",
            png.to_str().unwrap(),
        ];
        let parsed = args(&argv).unwrap();
        let threshold = promotion_threshold(&parsed.sizes);
        let dirs = RunDirs::prepare(&dir).unwrap();
        for mode in [Optimization::On, Optimization::Off] {
            let run_dir = dirs.fresh(mode.name(), false).unwrap();
            let run = run_once(&run_dir, Case { size: 10 << 20, mode, threshold }, &parsed).unwrap();
            assert!(run.transaction_bytes >= 10 << 20);
            // Timings are not asserted: a test machine may stall any fsync.
            assert!(run.commit_ms > 0.0, "{run:?}");
            // OFF holds it twice only for the moment between the end of the
            // copy and the spill file's deletion, which a sample may miss.
            assert!(run.peak_disk_bytes >= 10 << 20, "{run:?}");
            RunDirs::remove(&run_dir).unwrap();
        }
        dirs.finish(false).unwrap();
        assert!(!parent.path().join("new").exists(), "the directories the benchmark created are removed");

        run(&parsed).unwrap();
        assert!(!parent.path().join("new").exists());
        let text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.lines().nth(1).unwrap().starts_with("10485760,on,"));
        assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    }

    #[test]
    fn promotion_check_fails_loudly() {
        let dir = tempfile::tempdir().unwrap();
        let small = 1 << 20;
        let case = Case { size: small, mode: Optimization::On, threshold: LARGE_TRANSACTION_THRESHOLD_MIN };
        let (log, _) = BinaryLog::open(bench_options(dir.path(), case), Arc::new(OsStorage), CrashPoints::default()).unwrap();
        let before = PromotionCounters::read(&log);
        log.commit(build_large_transaction(&log, small, 1).unwrap()).unwrap();
        before.check_since(&log, case).unwrap();
        // Claim it should have been promoted: it was not.
        let error = before.check_since(&log, Case { threshold: small, ..case }).unwrap_err();
        assert!(error.contains("PROMOTION CHECK FAILED"), "{error}");
        log.close().unwrap();
    }
}
