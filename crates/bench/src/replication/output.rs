//! What `bench replication` prints (three tables and the target ratios,
//! or JSON) and writes: a CSV of every run, a CSV of the lag samples, a
//! PNG of applier throughput against workers and a PNG of the lag.

use serde::Serialize;

use super::super::common::{format_size, median, ratio};
use super::super::report::{self, LineChart, Scale, Series, Table};
use super::{ApplyRow, ReceiveRow, Relay, ReplicaSetup, ReplicationBenchArgs, Results, Workload};

/// The receiver's throughput over the runs of one relay log.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReceiveSummary {
    pub relay: Relay,
    pub runs: usize,
    pub mb_per_second_median: f64,
    pub mb_per_second_min: f64,
    pub mb_per_second_max: f64,
    pub transactions_per_second_median: f64,
}

pub fn receive_summary(rows: &[ReceiveRow]) -> Vec<ReceiveSummary> {
    let mut relays: Vec<Relay> = Vec::new();
    for row in rows {
        if !relays.contains(&row.setup.relay) {
            relays.push(row.setup.relay);
        }
    }
    relays
        .into_iter()
        .map(|relay| {
            let mine: Vec<&ReceiveRow> = rows.iter().filter(|row| row.setup.relay == relay).collect();
            let rates: Vec<f64> = mine.iter().map(|row| row.mb_per_second).collect();
            ReceiveSummary {
                relay,
                runs: mine.len(),
                mb_per_second_median: median(rates.clone()),
                mb_per_second_min: rates.iter().copied().fold(f64::INFINITY, f64::min),
                mb_per_second_max: rates.iter().copied().fold(0.0, f64::max),
                transactions_per_second_median: median(mine.iter().map(|row| row.transactions_per_second).collect()),
            }
        })
        .collect()
}

/// One relay log and worker count's queue and event-scan runs compared.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CoordinatorRatio {
    pub relay: Relay,
    pub workers: u32,
    /// What the list holding it says (queue over event scan's
    /// transactions/s, or event scan over queue's coordinator CPU).
    pub ratio: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ratios {
    /// Median memory MB/s over median file MB/s (the target: at least 2).
    pub receiver_memory_over_file: Option<f64>,
    /// Per relay log and workers (the target: at least 1.3).
    pub applier_queue_over_event_scan: Vec<CoordinatorRatio>,
    /// The best queue run over the best event-scan run.
    pub applier_queue_over_event_scan_best: Option<f64>,
    /// Per relay log and workers: the event-scan coordinator thread's CPU
    /// time per transaction over the queue coordinator's.
    pub coordinator_cpu_event_scan_over_queue: Vec<CoordinatorRatio>,
}

pub fn ratios(results: &Results) -> Ratios {
    let summary = receive_summary(&results.receive);
    let rate = |relay: Relay| summary.iter().find(|s| s.relay == relay).map(|s| s.mb_per_second_median);
    let receiver_memory_over_file = rate(Relay::Memory).zip(rate(Relay::File)).map(|(memory, file)| ratio(memory, file));
    let find = |row: &ApplyRow, coordinator| {
        results.apply.iter().find(|other| {
            other.setup.coordinator == coordinator && other.setup.relay == row.setup.relay && other.setup.workers == row.setup.workers
        })
    };
    let pairs = || {
        results
            .apply
            .iter()
            .filter(|row| row.setup.coordinator == super::CoordinatorKind::Queue)
            .filter_map(move |queue| Some((queue, find(queue, super::CoordinatorKind::EventScan)?)))
    };
    let applier_queue_over_event_scan = pairs()
        .map(|(queue, scan)| CoordinatorRatio {
            relay: queue.setup.relay,
            workers: queue.setup.workers,
            ratio: ratio(queue.transactions_per_second, scan.transactions_per_second),
        })
        .collect();
    let coordinator_cpu_event_scan_over_queue = pairs()
        .map(|(queue, scan)| CoordinatorRatio {
            relay: queue.setup.relay,
            workers: queue.setup.workers,
            ratio: ratio(scan.coordinator_cpu_us_per_transaction, queue.coordinator_cpu_us_per_transaction),
        })
        .collect();
    let best = |coordinator| {
        results.apply.iter().filter(|row| row.setup.coordinator == coordinator).map(|row| row.transactions_per_second).reduce(f64::max)
    };
    let applier_queue_over_event_scan_best =
        best(super::CoordinatorKind::Queue).zip(best(super::CoordinatorKind::EventScan)).map(|(queue, scan)| ratio(queue, scan));
    Ratios {
        receiver_memory_over_file,
        applier_queue_over_event_scan,
        applier_queue_over_event_scan_best,
        coordinator_cpu_event_scan_over_queue,
    }
}

#[derive(Serialize)]
struct Json<'a> {
    workload: &'a Option<Workload>,
    receive: &'a [ReceiveRow],
    receive_summary: Vec<ReceiveSummary>,
    apply: &'a [ApplyRow],
    end_to_end: &'a [super::E2eRow],
    lag_samples: &'a [super::SetupSample],
    ratios: Ratios,
}

fn optional<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

pub fn print(args: &ReplicationBenchArgs, results: &Results) -> Result<(), String> {
    let ratios = ratios(results);
    if args.json {
        let json = Json {
            workload: &results.workload,
            receive: &results.receive,
            receive_summary: receive_summary(&results.receive),
            apply: &results.apply,
            end_to_end: &results.end_to_end,
            lag_samples: &results.lag_samples,
            ratios,
        };
        println!("{}", serde_json::to_string(&json).map_err(|e| format!("encoding JSON: {e}"))?);
        return Ok(());
    }
    if let Some(workload) = &results.workload {
        println!(
            "workload: sysbench oltp_write_only, {} threads, {}s, {} tables x {} rows: {:.1} TPS, {} transactions, {} of binlog; memory relay log limit {}; replica_preserve_commit_order {}; replica options: {}",
            workload.threads,
            workload.seconds,
            workload.tables,
            workload.table_size,
            workload.source_tps,
            workload.transactions,
            super::super::common::format_size_approx(workload.binlog_bytes),
            format_size(workload.ring_limit_bytes),
            if workload.preserve_commit_order { "ON" } else { "OFF" },
            if workload.replica_options.is_empty() { "defaults (durable)".to_string() } else { workload.replica_options.join(" ") }
        );
    }
    if !results.receive.is_empty() {
        println!("\n1. receiver, applier stopped (one run per throughput setup)");
        let mut table = Table::new(&["relay", "runs", "MB/s median", "MB/s min", "MB/s max", "trx/s median", "blocked ms max"]);
        for summary in receive_summary(&results.receive) {
            let blocked =
                results.receive.iter().filter(|row| row.setup.relay == summary.relay).map(|row| row.receiver_blocked_ms).max().unwrap_or(0);
            table.push_row(vec![
                summary.relay.name().to_string(),
                summary.runs.to_string(),
                format!("{:.1}", summary.mb_per_second_median),
                format!("{:.1}", summary.mb_per_second_min),
                format!("{:.1}", summary.mb_per_second_max),
                format!("{:.0}", summary.transactions_per_second_median),
                blocked.to_string(),
            ]);
        }
        print!("{}", table.render());
        if let Some(value) = ratios.receiver_memory_over_file {
            println!("receiver memory/file MB/s (medians): {value:.2} (target >= 2)");
        }
    }
    if !results.apply.is_empty() {
        println!("\n2. applier, receiver stopped, over the filled relay log");
        let mut table =
            Table::new(&["relay", "coordinator", "workers", "seconds", "trx/s", "MB/s", "coordinator CPU µs/trx", "workers CPU µs/trx"]);
        for row in &results.apply {
            table.push_row(vec![
                row.setup.relay.name().to_string(),
                row.setup.coordinator.name().to_string(),
                row.setup.workers.to_string(),
                format!("{:.2}", row.seconds),
                format!("{:.0}", row.transactions_per_second),
                format!("{:.1}", row.mb_per_second),
                format!("{:.1}", row.coordinator_cpu_us_per_transaction),
                format!("{:.1}", row.workers_cpu_us_per_transaction),
            ]);
        }
        print!("{}", table.render());
        println!("CPU µs/trx: on-CPU time of the replica's replica-coordinator thread, and of its replica-worker-* threads together, per transaction applied");
        for ratio in &ratios.applier_queue_over_event_scan {
            println!(
                "applier queue/event-scan trx/s, {} relay log, {} workers: {:.2} (target >= 1.3)",
                ratio.relay.name(),
                ratio.workers,
                ratio.ratio
            );
        }
        if let Some(best) = ratios.applier_queue_over_event_scan_best {
            println!("applier best queue / best event-scan trx/s: {best:.2}");
        }
        for ratio in &ratios.coordinator_cpu_event_scan_over_queue {
            println!(
                "coordinator CPU per trx event-scan/queue, {} relay log, {} workers: {:.2}",
                ratio.relay.name(),
                ratio.workers,
                ratio.ratio
            );
        }
    }
    if !results.end_to_end.is_empty() {
        println!("\n3. end to end, both threads running while the source runs sysbench");
        let mut table = Table::new(&[
            "relay",
            "coordinator",
            "workers",
            "source TPS",
            "replica TPS",
            "lag max trx",
            "lag final trx",
            "behind max s",
            "lag growth trx/s",
            "catch-up s",
            "keeps pace",
        ]);
        for row in &results.end_to_end {
            table.push_row(vec![
                row.setup.relay.name().to_string(),
                row.setup.coordinator.name().to_string(),
                row.setup.workers.to_string(),
                format!("{:.0}", row.source_tps),
                format!("{:.0}", row.replica_apply_tps),
                row.lag_transactions_max.to_string(),
                row.lag_transactions_final.to_string(),
                optional(row.seconds_behind_source_max),
                format!("{:.1}", row.lag_growth_per_second),
                format!("{:.2}", row.catch_up_seconds),
                if row.keeps_pace { "yes" } else { "NO" }.to_string(),
            ]);
        }
        print!("{}", table.render());
        println!("keeps pace: the lag's least-squares growth over the run is below one second of the source's commits");
    }
    Ok(())
}

const RUN_COLUMNS: [&str; 20] = [
    "part",
    "relay",
    "coordinator",
    "workers",
    "seconds",
    "bytes",
    "transactions",
    "transactions_per_second",
    "mb_per_second",
    "receiver_blocked_ms",
    "source_tps",
    "replica_apply_tps",
    "lag_transactions_max",
    "lag_transactions_final",
    "seconds_behind_source_max",
    "lag_growth_per_second",
    "catch_up_seconds",
    "keeps_pace",
    "coordinator_cpu_us_per_transaction",
    "workers_cpu_us_per_transaction",
];

const SAMPLE_COLUMNS: [&str; 8] = [
    "relay",
    "coordinator",
    "workers",
    "second",
    "source_transactions",
    "replica_transactions",
    "lag_transactions",
    "seconds_behind_source",
];

/// The first cells of every row of [`RUN_COLUMNS`]: the part and its setup.
fn setup_cells(part: &str, setup: &ReplicaSetup) -> Vec<String> {
    vec![part.to_string(), setup.relay.name().into(), setup.coordinator.name().into(), setup.workers.to_string()]
}

/// The throughput cells a receive and an apply row share, `seconds` to
/// `mb_per_second`.
fn throughput_cells(seconds: f64, bytes: u64, transactions: u64, transactions_per_second: f64, mb_per_second: f64) -> [String; 5] {
    [
        format!("{seconds:.4}"),
        bytes.to_string(),
        transactions.to_string(),
        format!("{transactions_per_second:.1}"),
        format!("{mb_per_second:.2}"),
    ]
}

fn run_cells(results: &Results) -> Vec<Vec<String>> {
    let blank = || String::new();
    let mut cells = Vec::new();
    for row in &results.receive {
        let mut line = setup_cells("receive", &row.setup);
        line.extend(throughput_cells(row.seconds, row.bytes, row.transactions, row.transactions_per_second, row.mb_per_second));
        line.push(row.receiver_blocked_ms.to_string());
        line.extend((0..10).map(|_| blank()));
        cells.push(line);
    }
    for row in &results.apply {
        let mut line = setup_cells("apply", &row.setup);
        line.extend(throughput_cells(row.seconds, row.bytes, row.transactions, row.transactions_per_second, row.mb_per_second));
        line.extend((0..9).map(|_| blank()));
        line.extend([format!("{:.2}", row.coordinator_cpu_us_per_transaction), format!("{:.2}", row.workers_cpu_us_per_transaction)]);
        cells.push(line);
    }
    for row in &results.end_to_end {
        let mut line = setup_cells("end-to-end", &row.setup);
        line.push(format!("{:.2}", row.seconds));
        line.extend((0..5).map(|_| blank()));
        line.extend([
            format!("{:.1}", row.source_tps),
            format!("{:.1}", row.replica_apply_tps),
            row.lag_transactions_max.to_string(),
            row.lag_transactions_final.to_string(),
            row.seconds_behind_source_max.map_or_else(String::new, |v| v.to_string()),
            format!("{:.2}", row.lag_growth_per_second),
            format!("{:.2}", row.catch_up_seconds),
            row.keeps_pace.to_string(),
        ]);
        line.extend((0..2).map(|_| blank()));
        cells.push(line);
    }
    cells
}

pub fn write_files(args: &ReplicationBenchArgs, results: &Results) -> Result<(), String> {
    report::write_csv(&args.csv, &RUN_COLUMNS, &run_cells(results))?;
    let mut written = vec![args.csv.display().to_string()];
    if !results.lag_samples.is_empty() {
        let cells: Vec<Vec<String>> = results
            .lag_samples
            .iter()
            .map(|point| {
                vec![
                    point.setup.relay.name().into(),
                    point.setup.coordinator.name().into(),
                    point.setup.workers.to_string(),
                    format!("{:.3}", point.sample.second),
                    point.sample.source_transactions.to_string(),
                    point.sample.replica_transactions.to_string(),
                    point.sample.lag_transactions.to_string(),
                    point.sample.seconds_behind_source.map_or_else(String::new, |v| v.to_string()),
                ]
            })
            .collect();
        report::write_csv(&args.series_csv, &SAMPLE_COLUMNS, &cells)?;
        written.push(args.series_csv.display().to_string());
        plot_lag(&args.lag_plot, results)?;
        written.push(args.lag_plot.display().to_string());
    }
    if !results.apply.is_empty() {
        plot_apply(&args.plot, results)?;
        written.push(args.plot.display().to_string());
    }
    eprintln!("bench replication: wrote {}", written.join(", "));
    Ok(())
}

/// Applier transactions/s against workers, one line per relay log and coordinator.
fn plot_apply(path: &std::path::Path, results: &Results) -> Result<(), String> {
    let mut series: Vec<Series> = Vec::new();
    for row in &results.apply {
        // Short: four legend entries share one line of the pixel font.
        let coordinator = match row.setup.coordinator {
            super::CoordinatorKind::Queue => "queue",
            super::CoordinatorKind::EventScan => "scan",
        };
        let relay = if row.setup.relay.is_memory() { "mem" } else { "file" };
        let label = format!("{relay} {coordinator}");
        let point = (f64::from(row.setup.workers), row.transactions_per_second);
        match series.iter_mut().find(|s| s.label == label) {
            Some(line) => line.points.push(point),
            None => series.push(Series { label, points: vec![point] }),
        }
    }
    let mut workers: Vec<u32> = results.apply.iter().map(|row| row.setup.workers).collect();
    workers.sort_unstable();
    workers.dedup();
    let chart = LineChart {
        title: "replica applier, relay log pre-filled: trx/s".into(),
        x_label: "replica_parallel_workers".into(),
        y_label: "trx/s".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        x_ticks: workers.iter().map(|&w| (f64::from(w), w.to_string())).collect(),
        series,
    };
    report::plot_lines(path, &chart)
}

/// The end-to-end lag (transactions) over each run.
fn plot_lag(path: &std::path::Path, results: &Results) -> Result<(), String> {
    let mut series: Vec<Series> = Vec::new();
    for point in &results.lag_samples {
        let label = format!("{} {} w{}", point.setup.relay.name(), point.setup.coordinator.name(), point.setup.workers);
        let xy = (point.sample.second, point.sample.lag_transactions as f64);
        match series.iter_mut().find(|s| s.label == label) {
            Some(line) => line.points.push(xy),
            None => series.push(Series { label, points: vec![xy] }),
        }
    }
    let last = results.lag_samples.iter().map(|p| p.sample.second).fold(0.0, f64::max);
    let step = ((last / 10.0).ceil() as u64).max(1);
    let chart = LineChart {
        title: "end-to-end lag (source trx - replica trx)".into(),
        x_label: "seconds".into(),
        y_label: "trx behind".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        x_ticks: (0..=(last as u64)).step_by(step as usize).map(|s| (s as f64, format!("{s}s"))).collect(),
        series,
    };
    report::plot_lines(path, &chart)
}

#[cfg(test)]
mod tests {
    use super::super::{CoordinatorKind, ReplicaSetup};
    use super::*;

    fn receive(relay: Relay, mb_per_second: f64) -> ReceiveRow {
        ReceiveRow {
            setup: ReplicaSetup { relay, coordinator: CoordinatorKind::Queue, workers: 1 },
            seconds: 1.0,
            bytes: 1,
            transactions: 1,
            mb_per_second,
            transactions_per_second: 1.0,
            receiver_blocked_ms: 0,
        }
    }

    fn apply(
        relay: Relay,
        coordinator: CoordinatorKind,
        workers: u32,
        transactions_per_second: f64,
        coordinator_cpu_us_per_transaction: f64,
    ) -> ApplyRow {
        ApplyRow {
            setup: ReplicaSetup { relay, coordinator, workers },
            seconds: 1.0,
            bytes: 1,
            transactions: 1,
            transactions_per_second,
            mb_per_second: 1.0,
            coordinator_cpu_us_per_transaction,
            workers_cpu_us_per_transaction: 70.0,
        }
    }

    #[test]
    fn ratios_pair_medians_and_setups() {
        let results = Results {
            receive: vec![
                receive(Relay::Memory, 90.0),
                receive(Relay::Memory, 100.0),
                receive(Relay::Memory, 300.0),
                receive(Relay::File, 50.0),
            ],
            apply: vec![
                apply(Relay::Memory, CoordinatorKind::Queue, 4, 1300.0, 2.0),
                apply(Relay::Memory, CoordinatorKind::EventScan, 4, 1000.0, 5.0),
                apply(Relay::Memory, CoordinatorKind::Queue, 8, 2000.0, 2.5),
            ],
            ..Results::default()
        };
        let found = ratios(&results);
        assert_eq!(found.receiver_memory_over_file, Some(2.0));
        assert_eq!(found.applier_queue_over_event_scan, vec![CoordinatorRatio { relay: Relay::Memory, workers: 4, ratio: 1.3 }]);
        assert_eq!(found.applier_queue_over_event_scan_best, Some(2.0));
        assert_eq!(found.coordinator_cpu_event_scan_over_queue, vec![CoordinatorRatio { relay: Relay::Memory, workers: 4, ratio: 2.5 }]);
        let cells = run_cells(&results);
        assert_eq!(cells.len(), 7);
        assert!(cells.iter().all(|line| line.len() == RUN_COLUMNS.len()));
        let column = |name: &str| RUN_COLUMNS.iter().position(|column| *column == name).unwrap();
        let (coordinator, workers) = (column("coordinator_cpu_us_per_transaction"), column("workers_cpu_us_per_transaction"));
        assert_eq!((cells[4][coordinator].as_str(), cells[4][workers].as_str()), ("2.00", "70.00"), "an apply row: {:?}", cells[4]);
        assert_eq!((cells[0][coordinator].as_str(), cells[0][workers].as_str()), ("", ""), "a receive row: {:?}", cells[0]);
    }
}
