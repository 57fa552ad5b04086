//! `binlogd bench recovery`: how long binlog recovery takes after a crash
//! that leaves a large transaction last in the log, with large-transaction
//! promotion (AWS BOLT, seed 000 figure 5) ON and OFF.
//!
//! For each size and mode, in a fresh log directory: a few one-row
//! transactions, then the large transaction (built as in
//! `bench large-commit`), then a crash: the `BinaryLog` is dropped without
//! `close()`, so no Stop event is written and the newest file keeps its
//! in-use flag, as after `kill -9` (every committed byte was already
//! synced, `sync_binlog = 1`). Then the page cache is dropped (when the
//! process may write `/proc/sys/vm/drop_caches`) and `BinaryLog::open`
//! is timed: `recovery_ms` is the recovery stage as the library reports
//! it (`RecoveryReport::elapsed`), `open_ms` the whole open, which also
//! creates the next active file.
//!
//! What recovery has to read:
//! - OFF: the transaction was copied into the active file, which the crash
//!   left flagged in use; recovery scans it in full (every event's header
//!   and checksum), so its time grows with the size.
//! - ON: the transaction was promoted into its own file, followed by a new
//!   (empty) active file. Recovery scans the promoted file because it
//!   immediately precedes the last file, but validates it by seeking from
//!   the Large_transaction_header to the terminating event, so its time does
//!   not depend on the size.
//!
//! `max_binlog_size` is raised above the transaction size: with the 1 GiB
//! default the leader would rotate right after an OFF commit of 1 GiB or
//! more, closing the file that holds it; a crash before that rotation is
//! the case measured (the transaction last in the in-use file).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use binlog::{BinaryLog, CrashPoints, OsStorage};
use serde::Serialize;

use super::common::{distinct, format_size, format_size_approx, median, parse_size, ratio, ReportArgs, RunDirArgs, RunDirs};
use super::large_commit::{
    bench_options, build_large_transaction, commit_small_transactions, parse_optimization, plot_against_size, promotion_threshold, Case,
    Optimization, PromotionCounters, REPEAT_MAX,
};
use super::report::{self, Table};

/// One-row transactions committed before the large one.
const SMALL_TRANSACTIONS_MAX: u32 = 1_000_000;
/// XID of the large transaction.
const LARGE_XID: u64 = 1 << 40;
/// `max_binlog_size` for these runs: above any transaction the benchmark
/// builds, so no rotation follows the large commit.
const MAX_BINLOG_SIZE: u64 = 1 << 50;
/// Writing `3` here drops the page cache, dentries and inodes (root only).
const DROP_CACHES_PATH: &str = "/proc/sys/vm/drop_caches";

#[derive(Debug, Clone, clap::Args)]
pub struct RecoveryBenchArgs {
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

    /// Runs of each (size, mode); the median is reported.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=REPEAT_MAX as i64))]
    pub repeat: u32,

    /// One-row transactions committed before the large one.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(0..=SMALL_TRANSACTIONS_MAX as i64))]
    pub small_transactions: u32,

    /// Do not drop the page cache before each timed open (recovery then
    /// reads from memory).
    #[arg(long)]
    pub warm_cache: bool,

    // --json, --csv FILE, --plot FILE.png.
    #[command(flatten)]
    pub report: ReportArgs,

    // --clean, --keep.
    #[command(flatten)]
    pub run_dirs: RunDirArgs,
}

/// What one run measured.
#[derive(Debug, Clone)]
struct Run {
    transaction_bytes: u64,
    recovery_ms: f64,
    open_ms: f64,
    promoted_transactions_skipped: u64,
    scanned_files: usize,
    scanned_bytes: u64,
    caches_dropped: bool,
}

/// Medians over the repetitions of one (size, mode).
#[derive(Debug, Clone, Serialize)]
pub struct RecoveryResult {
    pub size_bytes: u64,
    pub size: String,
    pub optimization: Optimization,
    pub transaction_bytes: u64,
    pub threshold_bytes: u64,
    pub promoted: bool,
    pub repeat: u32,
    /// The recovery stage (`RecoveryReport::elapsed`).
    pub recovery_ms: f64,
    pub recovery_ms_runs: Vec<f64>,
    /// The slowest repetition's recovery_ms.
    pub recovery_ms_worst: f64,
    /// All of `BinaryLog::open`: recovery, the new active file, the index.
    pub open_ms: f64,
    pub promoted_transactions_skipped: u64,
    pub scanned_files: usize,
    /// Bytes of the files recovery scanned (their length, not what it read).
    pub scanned_bytes: u64,
    /// Whether the page cache was dropped before every timed open.
    pub caches_dropped: bool,
}

/// Runs the benchmark and prints its results on stdout.
pub fn run(args: &RecoveryBenchArgs) -> Result<(), String> {
    let threshold = promotion_threshold(&args.sizes);
    let dirs = RunDirs::prepare(&args.dir)?;
    let outcome = (|| -> Result<Vec<RecoveryResult>, String> {
        let mut results = Vec::new();
        for &size in &args.sizes {
            for &mode in &args.optimization {
                let mut runs = Vec::new();
                for repetition in 1..=args.repeat {
                    let name = format!("recovery-{}-{}-{repetition}", format_size(size), mode.name());
                    eprintln!("bench recovery: {} {} run {repetition}/{}", format_size(size), mode.name(), args.repeat);
                    let dir = dirs.fresh(&name, args.run_dirs.clean)?;
                    let run = run_once(&dir, Case { size, mode, threshold }, args);
                    let removed = if args.run_dirs.keep { Ok(()) } else { RunDirs::remove(&dir) };
                    runs.push(run?);
                    removed?;
                }
                results.push(summarize(Case { size, mode, threshold }, &runs));
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
        let caches = if results.iter().all(|r| r.caches_dropped) { "cold cache" } else { "warm cache" };
        let title = format!("binlog recovery after a crash, {caches}");
        plot_against_size(path, &title, "recovery ms", &results, |r| r.size_bytes, |r| r.optimization, |r| r.recovery_ms)?;
    }
    Ok(())
}

fn summarize(case: Case, runs: &[Run]) -> RecoveryResult {
    let median_of = |value: fn(&Run) -> f64| median(runs.iter().map(value).collect());
    RecoveryResult {
        size_bytes: case.size,
        size: format_size(case.size),
        optimization: case.mode,
        transaction_bytes: runs[0].transaction_bytes,
        threshold_bytes: case.threshold,
        promoted: case.promoted(),
        repeat: runs.len() as u32,
        recovery_ms: median_of(|r| r.recovery_ms),
        recovery_ms_runs: runs.iter().map(|r| r.recovery_ms).collect(),
        recovery_ms_worst: runs.iter().map(|r| r.recovery_ms).fold(0.0, f64::max),
        open_ms: median_of(|r| r.open_ms),
        promoted_transactions_skipped: runs.iter().map(|r| r.promoted_transactions_skipped).min().unwrap_or(0),
        scanned_files: runs.iter().map(|r| r.scanned_files).max().unwrap_or(0),
        scanned_bytes: runs.iter().map(|r| r.scanned_bytes).max().unwrap_or(0),
        caches_dropped: runs.iter().all(|r| r.caches_dropped),
    }
}

/// Writes the log, crashes it, times the recovering open.
fn run_once(dir: &Path, case: Case, args: &RecoveryBenchArgs) -> Result<Run, String> {
    let mut options = bench_options(dir, case);
    options.max_binlog_size = MAX_BINLOG_SIZE;
    let open = |what: &str| {
        BinaryLog::open(options.clone(), Arc::new(OsStorage), CrashPoints::default())
            .map_err(|e| format!("{what} the binary log in {}: {e}", dir.display()))
    };

    let (log, _) = open("opening")?;
    commit_small_transactions(&log, args.small_transactions)?;
    let cache = build_large_transaction(&log, case.size, LARGE_XID)?;
    let transaction_bytes = cache.len();
    let before = PromotionCounters::read(&log);
    let info = log.commit(cache).map_err(|e| format!("committing the {} transaction: {e}", format_size(case.size)))?;
    before.check_since(&log, case)?;
    // The crash: no close(), so no Stop event and the in-use flag stays set.
    drop(log);

    let caches_dropped = !args.warm_cache && drop_page_cache();
    let started = Instant::now();
    let (log, report) = open("recovering")?;
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    let closed = log.close().map_err(|e| format!("closing the recovered binary log in {}: {e}", dir.display()));

    // Recovery must have dealt with the large transaction: scanned (or
    // skipped through) its file and found its XID.
    if !report.scanned_files.contains(&info.file_name) || !report.xids.contains(&LARGE_XID) {
        return Err(format!(
            "recovery did not see the large transaction: it is in {}, recovery scanned {:?} and found {} XIDs",
            info.file_name,
            report.scanned_files,
            report.xids.len()
        ));
    }
    let expected_skips = case.promoted() as u64;
    if report.promoted_transactions_skipped != expected_skips {
        return Err(format!(
            "recovery skipped {} promoted transaction(s), expected {expected_skips} (the {} transaction, optimization {})",
            report.promoted_transactions_skipped,
            format_size(case.size),
            case.mode.name()
        ));
    }
    closed?;
    let scanned_bytes = report.scanned_files.iter().map(|name| std::fs::metadata(dir.join(name)).map(|m| m.len()).unwrap_or(0)).sum();
    Ok(Run {
        transaction_bytes,
        recovery_ms: report.elapsed.as_secs_f64() * 1000.0,
        open_ms,
        promoted_transactions_skipped: report.promoted_transactions_skipped,
        scanned_files: report.scanned_files.len(),
        scanned_bytes,
        caches_dropped,
    })
}

/// Writes dirty pages back (`sync`), then drops the page cache, so the
/// timed open reads the log from disk. False when not permitted (not root,
/// or a read-only /proc in a container).
fn drop_page_cache() -> bool {
    // The log's own bytes are already synced; other dirty pages would stay
    // cached (drop_caches only drops clean pages).
    let synced = std::process::Command::new("sync").status().map(|s| s.success()).unwrap_or(false);
    synced && std::fs::write(DROP_CACHES_PATH, b"3").is_ok()
}

fn print_results(args: &RecoveryBenchArgs, results: &[RecoveryResult]) -> Result<(), String> {
    if args.report.json {
        let text = serde_json::to_string(results).map_err(|e| format!("encoding JSON: {e}"))?;
        println!("{text}");
        return Ok(());
    }
    let caches = if args.warm_cache {
        "page cache kept (--warm-cache)".to_string()
    } else if results.iter().all(|r| r.caches_dropped) {
        format!("page cache dropped before each open ({DROP_CACHES_PATH})")
    } else {
        format!("page cache NOT dropped (cannot write {DROP_CACHES_PATH}): recovery read from memory")
    };
    let threshold = results.first().map_or(0, |r| r.threshold_bytes);
    println!(
        "binlog recovery after a crash: {} small transactions then the large one, threshold {}, {caches}, median (and worst) of {} run(s)",
        args.small_transactions,
        format_size(threshold),
        args.repeat
    );
    let mut table = Table::new(&[
        "size",
        "optimization",
        "promoted",
        "recovery ms",
        "worst",
        "open ms",
        "skipped by seek",
        "files scanned",
        "bytes in scanned files",
    ]);
    for r in results {
        table.push_row(vec![
            r.size.clone(),
            r.optimization.name().to_string(),
            if r.promoted { "yes" } else { "no" }.to_string(),
            format!("{:.1}", r.recovery_ms),
            format!("{:.1}", r.recovery_ms_worst),
            format!("{:.1}", r.open_ms),
            r.promoted_transactions_skipped.to_string(),
            r.scanned_files.to_string(),
            format_size_approx(r.scanned_bytes),
        ]);
    }
    print!("{}", table.render());
    for size in distinct(results.iter().map(|r| r.size_bytes)) {
        let on = results.iter().find(|r| r.size_bytes == size && r.optimization == Optimization::On);
        let off = results.iter().find(|r| r.size_bytes == size && r.optimization == Optimization::Off);
        if let (Some(on), Some(off)) = (on, off) {
            println!("{}: recovery ms off/on {:.1}x", format_size(size), ratio(off.recovery_ms, on.recovery_ms));
        }
    }
    Ok(())
}

const CSV_COLUMNS: [&str; 15] = [
    "size_bytes",
    "optimization",
    "transaction_bytes",
    "threshold_bytes",
    "promoted",
    "repeat",
    "recovery_ms",
    "recovery_ms_runs",
    "recovery_ms_worst",
    "open_ms",
    "promoted_transactions_skipped",
    "scanned_files",
    "scanned_bytes",
    "caches_dropped",
    "size",
];

fn write_csv(path: &Path, results: &[RecoveryResult]) -> Result<(), String> {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.size_bytes.to_string(),
                r.optimization.name().to_string(),
                r.transaction_bytes.to_string(),
                r.threshold_bytes.to_string(),
                r.promoted.to_string(),
                r.repeat.to_string(),
                format!("{:.3}", r.recovery_ms),
                r.recovery_ms_runs.iter().map(|ms| format!("{ms:.3}")).collect::<Vec<_>>().join(" "),
                format!("{:.3}", r.recovery_ms_worst),
                format!("{:.3}", r.open_ms),
                r.promoted_transactions_skipped.to_string(),
                r.scanned_files.to_string(),
                r.scanned_bytes.to_string(),
                r.caches_dropped.to_string(),
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
        args: RecoveryBenchArgs,
    }

    #[test]
    fn recovery_seeks_past_a_promoted_transaction_and_scans_a_copied_one() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("runs");
        let csv = parent.path().join("recovery.csv");
        let argv = ["bench", "--dir", dir.to_str().unwrap(), "--sizes", "10MiB", "--repeat", "1", "--warm-cache", "--json"];
        let args = Wrapper::try_parse_from(argv.iter().chain(&["--csv", csv.to_str().unwrap()])).unwrap().args;
        let threshold = promotion_threshold(&args.sizes);
        let dirs = RunDirs::prepare(&dir).unwrap();

        let on_dir = dirs.fresh("on", false).unwrap();
        let on = run_once(&on_dir, Case { size: 10 << 20, mode: Optimization::On, threshold }, &args).unwrap();
        assert_eq!(on.promoted_transactions_skipped, 1);
        assert!(!on.caches_dropped);
        // The promoted file and the active file the crash left.
        assert_eq!(on.scanned_files, 2, "{on:?}");

        let off_dir = dirs.fresh("off", false).unwrap();
        let off = run_once(&off_dir, Case { size: 10 << 20, mode: Optimization::Off, threshold }, &args).unwrap();
        assert_eq!(off.promoted_transactions_skipped, 0);
        assert!(off.scanned_bytes >= 10 << 20, "{off:?}");
        RunDirs::remove(&on_dir).unwrap();
        RunDirs::remove(&off_dir).unwrap();
        dirs.finish(false).unwrap();

        run(&args).unwrap();
        assert!(!dir.exists(), "the directory the benchmark created is removed");
        let text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
    }
}
