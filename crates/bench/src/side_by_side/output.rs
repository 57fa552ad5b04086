//! What `bench side-by-side` prints and writes: the summary table (or
//! JSON) with binlogd/MariaDB, engine/file and new/old-binary ratios from
//! the same invocation, the two CSV files, the PNG of TPS per second
//! during the large commit and the PNG of CPU per transaction; with
//! compression ON and OFF, their ratios against the goal.

use std::path::Path;

use serde::Serialize;

use super::footprint::Footprint;
use super::servers::Kind;
use super::{Binary, Results, RunRow, SeriesPoint, SideBySideBenchArgs};
use crate::common::{median, ratio};
use crate::compression::{on_off, Measured, Ratios};
use crate::report::{self, Bar, LineChart, Scale, Series, Table};

fn optional(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

/// Whether two rows measured the same thing (workload, threads, flush
/// setting, compression, large transaction or not, round) on different setups.
fn same_run(a: &RunRow, b: &RunRow) -> bool {
    a.round == b.round
        && a.binlog_transaction_compression == b.binlog_transaction_compression
        && a.workload == b.workload
        && a.threads == b.threads
        && a.large_trx == b.large_trx
        && a.flush_log_at_trx_commit == b.flush_log_at_trx_commit
}

/// binlogd's TPS (in one mode) over MariaDB's for the same workload,
/// threads and flush setting.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ratio {
    pub round: u32,
    pub binlog_storage_engine: &'static str,
    pub flush_log_at_trx_commit: u64,
    pub workload: String,
    pub threads: u32,
    pub large_trx: bool,
    pub binlogd_over_mariadb_tps: f64,
    /// binlogd's CPU per transaction over MariaDB's.
    pub binlogd_over_mariadb_cpu: Option<f64>,
}

/// The rows of the binlogd build measured (`--binary`).
fn current_binlogd(row: &RunRow) -> bool {
    row.server == Kind::Binlogd && row.binary == Binary::Current
}

fn cpu_ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).map(|(a, b)| ratio(a, b))
}

pub fn ratios(rows: &[RunRow]) -> Vec<Ratio> {
    rows.iter()
        .filter(|row| current_binlogd(row))
        .filter_map(|binlogd| {
            let mariadb = rows.iter().find(|row| row.server == Kind::MariaDb && same_run(row, binlogd))?;
            Some(Ratio {
                round: binlogd.round,
                binlog_storage_engine: binlogd.binlog_storage_engine,
                flush_log_at_trx_commit: binlogd.flush_log_at_trx_commit,
                workload: binlogd.workload.clone(),
                threads: binlogd.threads,
                large_trx: binlogd.large_trx,
                binlogd_over_mariadb_tps: ratio(binlogd.tps, mariadb.tps),
                binlogd_over_mariadb_cpu: cpu_ratio(binlogd.cpu_us_per_transaction, mariadb.cpu_us_per_transaction),
            })
        })
        .collect()
}

/// binlogd's engine mode against its file mode (the target: at least
/// 1.3x TPS at flush 1, fsyncs per transaction at least halved).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ModeRatio {
    pub round: u32,
    pub flush_log_at_trx_commit: u64,
    pub workload: String,
    pub threads: u32,
    pub engine_over_file_tps: f64,
    pub fsyncs_per_transaction_file: Option<f64>,
    pub fsyncs_per_transaction_engine: Option<f64>,
}

pub fn mode_ratios(rows: &[RunRow]) -> Vec<ModeRatio> {
    let binlogd =
        |mode: &'static str| rows.iter().filter(move |row| current_binlogd(row) && !row.large_trx && row.binlog_storage_engine == mode);
    binlogd("engine")
        .filter_map(|engine| {
            let file = binlogd("file").find(|row| same_run(row, engine))?;
            Some(ModeRatio {
                round: engine.round,
                flush_log_at_trx_commit: engine.flush_log_at_trx_commit,
                workload: engine.workload.clone(),
                threads: engine.threads,
                engine_over_file_tps: ratio(engine.tps, file.tps),
                fsyncs_per_transaction_file: file.fsyncs_per_transaction,
                fsyncs_per_transaction_engine: engine.fsyncs_per_transaction,
            })
        })
        .collect()
}

/// The binlogd build measured (`--binary`) against the old one
/// (`--old-binary`), same setup and workload: the medians over the rounds
/// of each one's TPS and CPU per transaction, and their ratios.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BinaryRatio {
    pub binlog_storage_engine: &'static str,
    pub binlog_transaction_compression: bool,
    pub flush_log_at_trx_commit: u64,
    pub workload: String,
    pub threads: u32,
    pub rounds: usize,
    pub tps_old: f64,
    pub tps_current: f64,
    pub cpu_us_per_transaction_old: Option<f64>,
    pub cpu_us_per_transaction_current: Option<f64>,
    pub current_over_old_tps: f64,
    pub current_over_old_cpu: Option<f64>,
}

pub fn binary_ratios(rows: &[RunRow]) -> Vec<BinaryRatio> {
    let same_setup = |a: &RunRow, b: &RunRow| {
        a.binlog_storage_engine == b.binlog_storage_engine
            && a.binlog_transaction_compression == b.binlog_transaction_compression
            && a.flush_log_at_trx_commit == b.flush_log_at_trx_commit
            && a.workload == b.workload
            && a.threads == b.threads
            && !a.large_trx
            && !b.large_trx
    };
    let mut found: Vec<BinaryRatio> = Vec::new();
    for first in rows.iter().filter(|row| current_binlogd(row) && !row.large_trx) {
        if found.iter().any(|r| {
            r.binlog_storage_engine == first.binlog_storage_engine
                && r.binlog_transaction_compression == first.binlog_transaction_compression
                && r.flush_log_at_trx_commit == first.flush_log_at_trx_commit
                && r.workload == first.workload
                && r.threads == first.threads
        }) {
            continue;
        }
        let of = |binary: Binary| -> Vec<&RunRow> {
            rows.iter().filter(|row| row.server == Kind::Binlogd && row.binary == binary && same_setup(row, first)).collect()
        };
        let (current, old) = (of(Binary::Current), of(Binary::Old));
        if old.is_empty() {
            continue;
        }
        let tps = |runs: &[&RunRow]| median(runs.iter().map(|r| r.tps).collect());
        let cpu = |runs: &[&RunRow]| {
            let values: Vec<f64> = runs.iter().filter_map(|r| r.cpu_us_per_transaction).collect();
            (!values.is_empty()).then(|| median(values))
        };
        let (tps_current, tps_old, cpu_current, cpu_old) = (tps(&current), tps(&old), cpu(&current), cpu(&old));
        found.push(BinaryRatio {
            binlog_storage_engine: first.binlog_storage_engine,
            binlog_transaction_compression: first.binlog_transaction_compression,
            flush_log_at_trx_commit: first.flush_log_at_trx_commit,
            workload: first.workload.clone(),
            threads: first.threads,
            rounds: current.len().min(old.len()),
            tps_old,
            tps_current,
            cpu_us_per_transaction_old: cpu_old,
            cpu_us_per_transaction_current: cpu_current,
            current_over_old_tps: ratio(tps_current, tps_old),
            current_over_old_cpu: cpu_ratio(cpu_current, cpu_old),
        });
    }
    found
}

/// binlogd with compression ON against OFF, same mode, workload, threads
/// and round: the goal is the binlog at least 2x smaller at no
/// more than 10% TPS cost.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CompressionRatio {
    pub round: u32,
    pub binlog_storage_engine: &'static str,
    pub flush_log_at_trx_commit: u64,
    pub workload: String,
    pub threads: u32,
    pub tps_off: f64,
    pub tps_on: f64,
    pub binlog_bytes_per_transaction_off: f64,
    pub binlog_bytes_per_transaction_on: f64,
    #[serde(flatten)]
    pub ratios: Ratios,
}

pub fn compression_ratios(rows: &[RunRow]) -> Vec<CompressionRatio> {
    let measured = |row: &RunRow| Measured {
        transactions_per_sec: row.tps,
        binlog_bytes_per_transaction: row.binlog_bytes_per_transaction.unwrap_or(0.0),
        cpu_us_per_transaction: row.cpu_us_per_transaction.unwrap_or(0.0),
    };
    rows.iter()
        .filter(|row| current_binlogd(row) && row.binlog_transaction_compression && !row.large_trx)
        .filter_map(|on| {
            let off = rows.iter().find(|off| {
                current_binlogd(off)
                    && !off.binlog_transaction_compression
                    && off.binlog_storage_engine == on.binlog_storage_engine
                    && off.round == on.round
                    && off.workload == on.workload
                    && off.threads == on.threads
                    && off.flush_log_at_trx_commit == on.flush_log_at_trx_commit
                    && !off.large_trx
            })?;
            Some(CompressionRatio {
                round: on.round,
                binlog_storage_engine: on.binlog_storage_engine,
                flush_log_at_trx_commit: on.flush_log_at_trx_commit,
                workload: on.workload.clone(),
                threads: on.threads,
                tps_off: off.tps,
                tps_on: on.tps,
                binlog_bytes_per_transaction_off: off.binlog_bytes_per_transaction.unwrap_or(0.0),
                binlog_bytes_per_transaction_on: on.binlog_bytes_per_transaction.unwrap_or(0.0),
                ratios: Ratios::of(&measured(off), &measured(on)),
            })
        })
        .collect()
}

#[derive(Serialize)]
struct Json<'a> {
    rows: &'a [RunRow],
    ratios: Vec<Ratio>,
    mode_ratios: Vec<ModeRatio>,
    binary_ratios: Vec<BinaryRatio>,
    compression_ratios: Vec<CompressionRatio>,
    footprints: &'a [Footprint],
}

/// A row's server as the table names it: `binlogd-old` for --old-binary,
/// `+zstd` with compression ON.
fn server_label(row: &RunRow) -> String {
    let zstd = if row.binlog_transaction_compression { "+zstd" } else { "" };
    match row.binary {
        Binary::Current => format!("{}{zstd}", row.server.name()),
        Binary::Old => format!("{}-old{zstd}", row.server.name()),
    }
}

pub fn print(args: &SideBySideBenchArgs, results: &Results) -> Result<(), String> {
    if args.json {
        let json = Json {
            rows: &results.rows,
            ratios: ratios(&results.rows),
            mode_ratios: mode_ratios(&results.rows),
            binary_ratios: binary_ratios(&results.rows),
            compression_ratios: compression_ratios(&results.rows),
            footprints: &results.footprints,
        };
        let text = serde_json::to_string(&json).map_err(|e| format!("encoding JSON: {e}"))?;
        println!("{text}");
        return Ok(());
    }
    let mut table = Table::new(&[
        "server",
        "mode",
        "flush",
        "workload",
        "threads",
        "round",
        "TPS",
        "CPU µs/trx",
        "fsyncs/trx",
        "binlog bytes/trx",
        "p99 ms",
        "max ms",
        "errors",
        "large commit s",
        "lowest TPS during commit",
        "median TPS/s",
    ]);
    for row in &results.rows {
        let workload = if row.large_trx { format!("{} + large trx", row.workload) } else { row.workload.clone() };
        table.push_row(vec![
            server_label(row),
            row.binlog_storage_engine.to_string(),
            row.flush_log_at_trx_commit.to_string(),
            workload,
            row.threads.to_string(),
            row.round.to_string(),
            format!("{:.1}", row.tps),
            optional(row.cpu_us_per_transaction, 1),
            optional(row.fsyncs_per_transaction, 3),
            optional(row.binlog_bytes_per_transaction, 1),
            format!("{:.2}", row.latency_ms_p99),
            format!("{:.2}", row.latency_ms_max),
            row.ignored_errors.to_string(),
            optional(row.large_commit_seconds, 3),
            match (row.tps_lowest_during_commit, row.commit_outlasted_run) {
                (Some(lowest), Some(true)) => format!("{lowest:.1}*"),
                (lowest, _) => optional(lowest, 1),
            },
            format!("{:.1}", row.tps_median_per_second),
        ]);
    }
    print!("{}", table.render());
    if results.rows.iter().any(|row| row.commit_outlasted_run == Some(true)) {
        println!("* the COMMIT outlasted the sysbench run: the lowest TPS covers only part of it (use a longer --seconds)");
    }
    for ratio in ratios(&results.rows) {
        let what = if ratio.large_trx { " + large trx" } else { "" };
        println!(
            "binlogd ({})/mariadb, {}{what}, {} threads, flush {}, round {}: TPS {:.2}, CPU/trx {}",
            ratio.binlog_storage_engine,
            ratio.workload,
            ratio.threads,
            ratio.flush_log_at_trx_commit,
            ratio.round,
            ratio.binlogd_over_mariadb_tps,
            optional(ratio.binlogd_over_mariadb_cpu, 2)
        );
    }
    for mode in mode_ratios(&results.rows) {
        println!(
            "binlogd engine/file TPS, {}, {} threads, flush {}: {:.2}; fsyncs/trx file {} engine {}",
            mode.workload,
            mode.threads,
            mode.flush_log_at_trx_commit,
            mode.engine_over_file_tps,
            optional(mode.fsyncs_per_transaction_file, 3),
            optional(mode.fsyncs_per_transaction_engine, 3)
        );
    }
    for binary in binary_ratios(&results.rows) {
        println!(
            "binlogd current/old ({}), {}, {} threads, flush {}, median of {}: TPS {:.1}/{:.1} = {:.3}, CPU µs/trx {}/{} = {}",
            binary.binlog_storage_engine,
            binary.workload,
            binary.threads,
            binary.flush_log_at_trx_commit,
            binary.rounds,
            binary.tps_current,
            binary.tps_old,
            binary.current_over_old_tps,
            optional(binary.cpu_us_per_transaction_current, 1),
            optional(binary.cpu_us_per_transaction_old, 1),
            optional(binary.current_over_old_cpu, 3)
        );
    }
    for compression in compression_ratios(&results.rows) {
        let what = format!(
            "binlogd {}, {}, {} threads, flush {}, round {}: TPS {:.1}/{:.1}, binlog bytes/trx {:.1}/{:.1}",
            compression.binlog_storage_engine,
            compression.workload,
            compression.threads,
            compression.flush_log_at_trx_commit,
            compression.round,
            compression.tps_on,
            compression.tps_off,
            compression.binlog_bytes_per_transaction_on,
            compression.binlog_bytes_per_transaction_off
        );
        println!("{}", compression.ratios.describe(&what));
    }
    print_footprints(&results.footprints);
    for row in results.rows.iter().filter(|row| row.large_trx) {
        if let Some(lowest) = row.tps_lowest_during_commit {
            let promoted = match row.promoted {
                Some(true) => ", promoted into its own binlog file",
                Some(false) => ", NOT promoted",
                None => "",
            };
            println!(
                "{}: lowest TPS during the {:.3}s commit / median TPS = {:.2}{promoted}",
                row.server.name(),
                row.large_commit_seconds.unwrap_or(0.0),
                ratio(lowest, row.tps_median_per_second)
            );
        }
    }
    Ok(())
}

/// Each server's bytes for the prepared tables, and per row.
fn print_footprints(footprints: &[Footprint]) {
    if footprints.is_empty() {
        return;
    }
    let mut table = Table::new(&["server", "rows", "data MiB", "index MiB", "bytes/row"]);
    let mib = |bytes: u64| format!("{:.1}", bytes as f64 / (1 << 20) as f64);
    for footprint in footprints {
        table.push_row(vec![
            footprint.server.clone(),
            footprint.rows.to_string(),
            mib(footprint.data_bytes),
            mib(footprint.index_bytes),
            optional(footprint.bytes_per_row(), 1),
        ]);
    }
    println!("Prepared tables (INFORMATION_SCHEMA.TABLES: data and index bytes):");
    print!("{}", table.render());
}

const SUMMARY_COLUMNS: [&str; 29] = [
    "server",
    "binary",
    "round",
    "binlog_storage_engine",
    "binlog_transaction_compression",
    "flush_log_at_trx_commit",
    "workload",
    "threads",
    "large_trx",
    "tps",
    "latency_ms_p99",
    "latency_ms_max",
    "ignored_errors",
    "fsyncs_per_transaction",
    "cpu_us_per_transaction",
    "binlog_bytes_per_transaction",
    "tps_median_per_second",
    "large_trx_bytes",
    "large_trx_rows",
    "large_trx_build_seconds",
    "large_commit_seconds",
    "tps_lowest_during_commit",
    "commit_from_second",
    "commit_to_second",
    "commit_outlasted_run",
    "promoted",
    "binlogd_over_mariadb_tps",
    "binlogd_over_mariadb_cpu",
    "engine_over_file_tps",
];

/// The cells that name a run, first in the summary's and the series' rows.
#[allow(clippy::too_many_arguments)]
fn run_cells(
    server: Kind,
    binary: Binary,
    round: u32,
    binlog_storage_engine: &str,
    binlog_transaction_compression: bool,
    flush_log_at_trx_commit: u64,
    workload: &str,
    threads: u32,
    large_trx: bool,
) -> Vec<String> {
    vec![
        server.name().to_string(),
        binary.name().to_string(),
        round.to_string(),
        binlog_storage_engine.to_string(),
        on_off(binlog_transaction_compression).to_string(),
        flush_log_at_trx_commit.to_string(),
        workload.to_string(),
        threads.to_string(),
        large_trx.to_string(),
    ]
}

pub fn write_summary_csv(path: &Path, rows: &[RunRow]) -> Result<(), String> {
    let ratios = ratios(rows);
    let mode_ratios = mode_ratios(rows);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let number = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.3}"));
            let count = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
            let row_ratio = ratios.iter().find(|r| {
                current_binlogd(row)
                    && !row.binlog_transaction_compression
                    && r.round == row.round
                    && r.binlog_storage_engine == row.binlog_storage_engine
                    && r.flush_log_at_trx_commit == row.flush_log_at_trx_commit
                    && r.workload == row.workload
                    && r.threads == row.threads
                    && r.large_trx == row.large_trx
            });
            let tps_ratio = row_ratio.map(|r| format!("{:.3}", r.binlogd_over_mariadb_tps)).unwrap_or_default();
            let cpu_ratio = number(row_ratio.and_then(|r| r.binlogd_over_mariadb_cpu));
            let mode_ratio = mode_ratios
                .iter()
                .find(|r| {
                    current_binlogd(row)
                        && row.binlog_storage_engine == "engine"
                        && !row.binlog_transaction_compression
                        && !row.large_trx
                        && r.round == row.round
                        && r.flush_log_at_trx_commit == row.flush_log_at_trx_commit
                        && r.workload == row.workload
                        && r.threads == row.threads
                })
                .map(|r| format!("{:.3}", r.engine_over_file_tps))
                .unwrap_or_default();
            let mut line = run_cells(
                row.server,
                row.binary,
                row.round,
                row.binlog_storage_engine,
                row.binlog_transaction_compression,
                row.flush_log_at_trx_commit,
                &row.workload,
                row.threads,
                row.large_trx,
            );
            line.extend([
                format!("{:.2}", row.tps),
                format!("{:.2}", row.latency_ms_p99),
                format!("{:.2}", row.latency_ms_max),
                row.ignored_errors.to_string(),
                number(row.fsyncs_per_transaction),
                number(row.cpu_us_per_transaction),
                number(row.binlog_bytes_per_transaction),
                format!("{:.2}", row.tps_median_per_second),
                count(row.large_trx_bytes),
                count(row.large_trx_rows),
                number(row.large_trx_build_seconds),
                number(row.large_commit_seconds),
                number(row.tps_lowest_during_commit),
                number(row.commit_from_second),
                number(row.commit_to_second),
                row.commit_outlasted_run.map_or_else(String::new, |o| o.to_string()),
                row.promoted.map_or_else(String::new, |p| p.to_string()),
                tps_ratio,
                cpu_ratio,
                mode_ratio,
            ]);
            line
        })
        .collect();
    report::write_csv(path, &SUMMARY_COLUMNS, &cells)
}

const SERIES_COLUMNS: [&str; 14] = [
    "server",
    "binary",
    "round",
    "binlog_storage_engine",
    "binlog_transaction_compression",
    "flush_log_at_trx_commit",
    "workload",
    "threads",
    "large_trx",
    "second",
    "tps",
    "qps",
    "latency_ms_p99",
    "errors_per_sec",
];

pub fn write_series_csv(path: &Path, series: &[SeriesPoint]) -> Result<(), String> {
    let cells: Vec<Vec<String>> = series
        .iter()
        .map(|point| {
            let mut line = run_cells(
                point.server,
                point.binary,
                point.round,
                point.binlog_storage_engine,
                point.binlog_transaction_compression,
                point.flush_log_at_trx_commit,
                &point.workload,
                point.threads,
                point.large_trx,
            );
            line.extend([
                format!("{}", point.report.second),
                format!("{:.2}", point.report.tps),
                format!("{:.2}", point.report.qps),
                format!("{:.2}", point.report.latency_ms_percentile),
                format!("{:.2}", point.report.errors_per_sec),
            ]);
            line
        })
        .collect();
    report::write_csv(path, &SERIES_COLUMNS, &cells)
}

/// Each server's CPU microseconds per transaction, one bar per run
/// (server, mode, workload, threads; the median over rounds).
pub fn plot_cpu(path: &Path, rows: &[RunRow]) -> Result<(), String> {
    let mut bars: Vec<Bar> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for row in rows.iter().filter(|row| !row.large_trx && row.cpu_us_per_transaction.is_some()) {
        let server = match row.server {
            Kind::MariaDb => "maria".to_string(),
            Kind::Binlogd => format!(
                "{}{}{}",
                if row.binary == Binary::Old { "old " } else { "" },
                row.binlog_storage_engine,
                if row.binlog_transaction_compression { "+zstd" } else { "" }
            ),
        };
        let workload = row.workload.trim_start_matches("oltp_").trim_start_matches("select_");
        let label = format!("{server} {workload} {}", row.threads);
        if labels.contains(&label) {
            continue;
        }
        let same: Vec<f64> = rows
            .iter()
            .filter(|other| {
                other.server == row.server
                    && other.binary == row.binary
                    && other.binlog_storage_engine == row.binlog_storage_engine
                    && other.binlog_transaction_compression == row.binlog_transaction_compression
                    && other.flush_log_at_trx_commit == row.flush_log_at_trx_commit
                    && other.workload == row.workload
                    && other.threads == row.threads
                    && !other.large_trx
            })
            .filter_map(|other| other.cpu_us_per_transaction)
            .collect();
        bars.push(Bar { label: label.clone(), value: median(same) });
        labels.push(label);
    }
    if bars.is_empty() {
        return Ok(());
    }
    report::plot_bars(path, "server CPU µs per sysbench transaction (median of rounds)", &bars)
}

/// TPS per second of the large-transaction runs, one line per server; the
/// x axis is labelled every 5 s and where each server's commit started.
pub fn plot_large_trx(path: &Path, results: &Results) -> Result<(), String> {
    let mut series = Vec::new();
    let mut last_second: f64 = 0.0;
    for row in results.rows.iter().filter(|row| row.large_trx) {
        let points: Vec<(f64, f64)> =
            results.series.iter().filter(|p| p.large_trx && p.server == row.server).map(|p| (p.report.second, p.report.tps)).collect();
        last_second = points.iter().map(|p| p.0).fold(last_second, f64::max);
        let commit = match (row.commit_from_second, row.large_commit_seconds) {
            (Some(from), Some(seconds)) => format!(" {from:.1}-{:.1}s", from + seconds),
            _ => String::new(),
        };
        series.push(Series { label: format!("{}{commit}", row.server.name()), points });
    }
    if series.is_empty() {
        return Ok(());
    }
    let x_ticks = (0..=(last_second as u64)).step_by(5).map(|s| (s as f64, format!("{s}s"))).collect();
    let size = results.rows.iter().find_map(|row| row.large_trx_bytes).unwrap_or(0);
    let threads = results.rows.iter().find(|row| row.large_trx).map_or(0, |row| row.threads);
    let chart = LineChart {
        // Short: the pixel font fits about 60 characters across.
        title: format!("TPS/s, {threads} threads, {} commit (legend: commit time)", crate::common::format_size(size)),
        x_label: "seconds".to_string(),
        y_label: "TPS".to_string(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        x_ticks,
        series,
    };
    report::plot_lines(path, &chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(server: Kind, threads: u32, tps: f64) -> RunRow {
        RunRow {
            server,
            binary: Binary::Current,
            round: 1,
            cpu_us_per_transaction: Some(tps / 10.0),
            binlog_bytes_per_transaction: Some(1000.0),
            binlog_storage_engine: "file",
            binlog_transaction_compression: false,
            flush_log_at_trx_commit: 1,
            fsyncs_per_transaction: Some(2.0),
            workload: "oltp_write_only".into(),
            threads,
            large_trx: false,
            tps,
            latency_ms_p99: 1.0,
            latency_ms_max: 2.0,
            ignored_errors: 0,
            tps_median_per_second: tps,
            large_trx_bytes: None,
            large_trx_rows: None,
            large_trx_build_seconds: None,
            large_commit_seconds: None,
            tps_lowest_during_commit: None,
            commit_from_second: None,
            commit_to_second: None,
            commit_outlasted_run: None,
            promoted: None,
        }
    }

    #[test]
    fn ratios_pair_the_same_workload_and_threads() {
        let rows = vec![row(Kind::MariaDb, 8, 400.0), row(Kind::MariaDb, 32, 500.0), row(Kind::Binlogd, 8, 600.0)];
        assert_eq!(
            ratios(&rows),
            vec![Ratio {
                round: 1,
                binlog_storage_engine: "file",
                flush_log_at_trx_commit: 1,
                workload: "oltp_write_only".into(),
                threads: 8,
                large_trx: false,
                binlogd_over_mariadb_tps: 1.5,
                binlogd_over_mariadb_cpu: Some(1.5),
            }]
        );
    }

    #[test]
    fn mode_ratios_pair_engine_with_file_at_the_same_flush() {
        let engine = |flush, tps| RunRow {
            binlog_storage_engine: "engine",
            flush_log_at_trx_commit: flush,
            fsyncs_per_transaction: Some(0.5),
            ..row(Kind::Binlogd, 8, tps)
        };
        let file_flush2 = RunRow { flush_log_at_trx_commit: 2, ..row(Kind::Binlogd, 8, 100.0) };
        let rows = vec![
            row(Kind::MariaDb, 8, 400.0),
            row(Kind::Binlogd, 8, 600.0),
            file_flush2,
            engine(1, 900.0),
            engine(2, 300.0),
            engine(0, 1.0),
        ];
        let found = mode_ratios(&rows);
        assert_eq!(found.len(), 2, "no file row at flush 0: {found:?}");
        assert_eq!((found[0].flush_log_at_trx_commit, found[0].engine_over_file_tps), (1, 1.5));
        assert_eq!((found[0].fsyncs_per_transaction_file, found[0].fsyncs_per_transaction_engine), (Some(2.0), Some(0.5)));
        assert_eq!((found[1].flush_log_at_trx_commit, found[1].engine_over_file_tps), (2, 3.0));
        // MariaDB pairs with binlogd at the same flush only.
        assert_eq!(ratios(&rows).iter().filter(|r| r.flush_log_at_trx_commit == 1).count(), 2);
    }

    #[test]
    fn compression_ratios_pair_on_with_off_of_the_same_mode_and_run() {
        let on = |mode, tps, bytes| RunRow {
            binlog_transaction_compression: true,
            binlog_storage_engine: mode,
            binlog_bytes_per_transaction: Some(bytes),
            ..row(Kind::Binlogd, 8, tps)
        };
        let engine_off = RunRow { binlog_storage_engine: "engine", ..row(Kind::Binlogd, 8, 800.0) };
        let rows = vec![
            row(Kind::MariaDb, 8, 400.0),
            row(Kind::Binlogd, 8, 600.0),
            on("file", 570.0, 400.0),
            engine_off,
            on("engine", 640.0, 500.0),
        ];
        let found = compression_ratios(&rows);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].binlog_storage_engine, found[0].tps_off, found[0].binlog_bytes_per_transaction_off), ("file", 600.0, 1000.0));
        assert_eq!(found[0].ratios.off_over_on_binlog_bytes, 2.5);
        assert!(found[0].ratios.goal_met(), "5% fewer TPS, 2.5x smaller: {found:?}");
        assert_eq!(found[1].ratios.on_over_off_tps, 0.8);
        assert!(!found[1].ratios.goal_met(), "20% fewer TPS");
        // MariaDB pairs with the OFF runs only.
        assert_eq!(ratios(&rows).len(), 2);
        assert!(
            ratios(&rows).iter().all(|r| r.binlogd_over_mariadb_tps == 1.5 || r.binlogd_over_mariadb_tps == 2.0),
            "{:?}",
            ratios(&rows)
        );
        assert_eq!(mode_ratios(&rows).len(), 2, "engine/file paired at each compression setting");
    }

    #[test]
    fn binary_ratios_take_the_medians_of_each_builds_rounds() {
        let run =
            |binary, round, tps: f64, cpu: f64| RunRow { binary, round, cpu_us_per_transaction: Some(cpu), ..row(Kind::Binlogd, 8, tps) };
        let rows = vec![
            row(Kind::MariaDb, 8, 100.0),
            run(Binary::Current, 1, 300.0, 50.0),
            run(Binary::Old, 1, 200.0, 100.0),
            run(Binary::Old, 2, 220.0, 90.0),
            run(Binary::Current, 2, 330.0, 40.0),
            run(Binary::Current, 3, 600.0, 45.0),
            run(Binary::Old, 3, 180.0, 80.0),
            row(Kind::Binlogd, 32, 500.0),
        ];
        let found = binary_ratios(&rows);
        assert_eq!(found.len(), 1, "32 threads has no old run: {found:?}");
        let at_8 = &found[0];
        assert_eq!((at_8.rounds, at_8.tps_current, at_8.tps_old), (3, 330.0, 200.0));
        assert_eq!((at_8.cpu_us_per_transaction_current, at_8.cpu_us_per_transaction_old), (Some(45.0), Some(90.0)));
        assert_eq!((at_8.current_over_old_tps, at_8.current_over_old_cpu), (1.65, Some(0.5)));
        // The old build is never paired with MariaDB, nor counted as binlogd's mode ratio.
        assert_eq!(ratios(&rows).len(), 1, "round 1 at 8 threads only: MariaDB ran one round");
        assert!(mode_ratios(&rows).is_empty());
    }
}
