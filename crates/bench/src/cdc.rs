//! `binlogd bench cdc`: end-to-end change data capture. A source server
//! (binlogd, or MariaDB 10.11 as the reference) runs sysbench
//! oltp_write_only while a CDC consumer streams its binlog:
//! Debezium's MySQL connector embedded (`interop/debezium`,
//! `CdcThroughput`) or go-mysql's BinlogSyncer (`interop/go-mysql`,
//! `harness consume`). Debezium 3.6.1's MySQL connector refuses MariaDB
//! (it sends `SHOW BINARY LOG STATUS`, and MariaDB's own connector is a
//! separate artifact), so MariaDB is measured with go-mysql only, which
//! reads both servers and makes the two sources comparable.
//!
//! Each (server, consumer) pair runs alone: a fresh server, `sysbench
//! prepare`, the consumer started from the current binlog position, and
//! once it printed `READY`, sysbench for `--seconds` while the consumer
//! measures. The consumer measures lag with probes (a row holding its
//! wall-clock send time inserted every 10 ms by a connection of its own,
//! the lag being arrival minus send) and counts row-change events per
//! second; after the window it waits for a probe sent at the end (the
//! drain). The protocol lines are documented in the two consumers.
//!
//! Output: a table (or JSON), a CSV of the summary, a CSV of the
//! per-second series and a PNG of the per-second p99 lag.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use database::BinlogStorageEngine;
use serde::Serialize;

use crate::common::RunDirs;
use crate::report::{plot_lines, write_csv, LineChart, Scale, Series, Table};
use crate::side_by_side::servers::{free_port, ChildGuard, Interrupt, Kind, Server, Sizing};
use crate::side_by_side::sysbench::{parse_summary, Target};

/// Longest measured window.
pub const SECONDS_MAX: u64 = 3600;
/// Most sysbench threads.
pub const THREADS_MAX: u32 = 1000;
pub const TABLE_SIZE_MAX: u64 = 10_000_000;
/// How long a consumer may take to start streaming (a cold JVM and Maven
/// classpath on a loaded machine), and to drain after the window.
const CONSUMER_START_TIMEOUT: Duration = Duration::from_secs(300);
const CONSUMER_DRAIN_TIMEOUT: Duration = Duration::from_secs(660);
/// Lines a consumer prints (one per second of the window, and a few more).
const CONSUMER_LINES_MAX: usize = SECONDS_MAX as usize + 100;

#[derive(Debug, Clone, clap::Args)]
pub struct CdcBenchArgs {
    /// Directory for the servers' data directories, created if missing and
    /// removed at the end unless --keep.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// The measured window of every run.
    #[arg(long, value_name = "S", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(5..=SECONDS_MAX))]
    pub seconds: u64,

    /// sysbench oltp_write_only threads.
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=THREADS_MAX as i64))]
    pub threads: u32,

    /// sysbench --table-size (one table).
    #[arg(long, value_name = "N", default_value_t = 20_000,
          value_parser = clap::value_parser!(u64).range(1..=TABLE_SIZE_MAX))]
    pub table_size: u64,

    /// Source servers, comma-separated: binlogd, mariadb.
    #[arg(long, value_name = "LIST", default_value = "binlogd,mariadb", value_delimiter = ',', value_parser = parse_server)]
    pub servers: Vec<Kind>,

    /// Consumers, comma-separated: debezium (binlogd only), go-mysql.
    #[arg(long, value_name = "LIST", default_value = "debezium,go-mysql", value_delimiter = ',', value_parser = parse_consumer)]
    pub consumers: Vec<Consumer>,

    /// The repository's `interop` directory (the consumers' sources; built
    /// with Maven and go before the runs).
    #[arg(long, value_name = "DIR", default_value = "interop")]
    pub interop: PathBuf,

    /// The binlogd executable whose `serve` is measured (default: this one).
    #[arg(long, value_name = "FILE")]
    pub binary: Option<PathBuf>,

    /// Print the summary as JSON instead of the table.
    #[arg(long)]
    pub json: bool,

    /// CSV of the summary, one row per (server, consumer).
    #[arg(long, value_name = "FILE", default_value = "cdc.csv")]
    pub csv: PathBuf,

    /// CSV of every second of every run.
    #[arg(long, value_name = "FILE", default_value = "cdc-seconds.csv")]
    pub series_csv: PathBuf,

    /// PNG of the p99 lag per second, one line per run.
    #[arg(long, value_name = "FILE.png", default_value = "cdc-lag.png")]
    pub plot: PathBuf,

    /// Keep the data directories (and the servers' logs in them).
    #[arg(long)]
    pub keep: bool,
}

/// A CDC consumer the benchmark can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Consumer {
    #[serde(rename = "debezium")]
    Debezium,
    #[serde(rename = "go-mysql")]
    GoMysql,
}

impl Consumer {
    pub fn name(self) -> &'static str {
        match self {
            Consumer::Debezium => "debezium",
            Consumer::GoMysql => "go-mysql",
        }
    }

    /// Whether this consumer can stream from `server`.
    fn reads(self, server: Kind) -> bool {
        self == Consumer::GoMysql || server == Kind::Binlogd
    }
}

fn parse_consumer(text: &str) -> Result<Consumer, String> {
    match text {
        "debezium" => Ok(Consumer::Debezium),
        "go-mysql" => Ok(Consumer::GoMysql),
        other => Err(format!("unknown consumer {other:?} (debezium, go-mysql)")),
    }
}

fn parse_server(text: &str) -> Result<Kind, String> {
    match text {
        "binlogd" => Ok(Kind::Binlogd),
        "mariadb" => Ok(Kind::MariaDb),
        other => Err(format!("unknown server {other:?} (binlogd, mariadb)")),
    }
}

/// What a consumer's `RESULT` line reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConsumerResult {
    pub events: u64,
    pub seconds: u64,
    pub probes_sent: u64,
    pub probes: u64,
    pub lag_p50_us: u64,
    pub lag_p99_us: u64,
    pub lag_max_us: u64,
    pub drain_ms: u64,
}

/// One `SECOND i events probes lag_p99_us` line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Second {
    pub second: u64,
    pub events: u64,
    pub probes: u64,
    pub lag_p99_us: u64,
}

/// Parses `RESULT key=value ...`.
pub fn parse_result(line: &str) -> Result<ConsumerResult, String> {
    let fields = line.strip_prefix("RESULT ").ok_or_else(|| format!("not a RESULT line: {line:?}"))?;
    let mut result = ConsumerResult::default();
    for field in fields.split_whitespace() {
        let (key, value) = field.split_once('=').ok_or_else(|| format!("bad field {field:?} in {line:?}"))?;
        let value: u64 = value.parse().map_err(|_| format!("bad number in {field:?}"))?;
        let slot = match key {
            "events" => &mut result.events,
            "seconds" => &mut result.seconds,
            "probes_sent" => &mut result.probes_sent,
            "probes" => &mut result.probes,
            "lag_p50_us" => &mut result.lag_p50_us,
            "lag_p99_us" => &mut result.lag_p99_us,
            "lag_max_us" => &mut result.lag_max_us,
            "drain_ms" => &mut result.drain_ms,
            _ => continue,
        };
        *slot = value;
    }
    Ok(result)
}

/// Parses `SECOND i events probes lag_p99_us`.
pub fn parse_second(line: &str) -> Option<Second> {
    let mut numbers = line.strip_prefix("SECOND ")?.split_whitespace().map(|n| n.parse::<u64>().ok());
    Some(Second { second: numbers.next()??, events: numbers.next()??, probes: numbers.next()??, lag_p99_us: numbers.next()?? })
}

/// One (server, consumer) run.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub server: &'static str,
    pub consumer: &'static str,
    pub tps: f64,
    pub transactions: u64,
    pub result: ConsumerResult,
    pub seconds: Vec<Second>,
}

impl Run {
    fn events_per_second(&self) -> f64 {
        self.result.events as f64 / self.result.seconds.max(1) as f64
    }
}

pub fn run(args: &CdcBenchArgs) -> Result<(), String> {
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?,
    };
    let pairs: Vec<(Kind, Consumer)> =
        args.servers.iter().flat_map(|&server| args.consumers.iter().filter(move |c| c.reads(server)).map(move |&c| (server, c))).collect();
    if pairs.is_empty() {
        return Err("no (server, consumer) pair to run: Debezium's MySQL connector reads binlogd only".into());
    }
    let consumers = build_consumers(args)?;
    let interrupt = Interrupt::install()?;
    let dirs = RunDirs::prepare(&args.dir)?;
    let mut runs = Vec::new();
    let outcome = (|| -> Result<(), String> {
        for &(server, consumer) in &pairs {
            let dir = dirs.fresh(&format!("{}-{}", server.name(), consumer.name()), true)?;
            let measured = run_one(args, &binary, &consumers, server, consumer, &dir, &interrupt);
            let removed = if args.keep { Ok(()) } else { RunDirs::remove(&dir) };
            runs.push(measured?);
            removed?;
        }
        Ok(())
    })();
    let finished = dirs.finish(args.keep);
    outcome?;
    finished?;
    report(args, &runs)
}

/// The commands that start each consumer, built once.
struct Consumers {
    debezium: Option<(PathBuf, String)>,
    go_mysql: Option<PathBuf>,
}

fn build_consumers(args: &CdcBenchArgs) -> Result<Consumers, String> {
    let mut consumers = Consumers { debezium: None, go_mysql: None };
    if args.consumers.contains(&Consumer::Debezium) {
        let dir = args.interop.join("debezium");
        run_build(Command::new("mvn").args(["-q", "-B", "compile", "dependency:build-classpath"]).current_dir(&dir), "mvn compile")?;
        let classpath = std::fs::read_to_string(dir.join("target/classpath.txt"))
            .map_err(|e| format!("reading {}: {e}", dir.join("target/classpath.txt").display()))?;
        let classes = dir.join("target/classes").canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
        consumers.debezium = Some((classes, classpath.trim().to_string()));
    }
    if args.consumers.contains(&Consumer::GoMysql) {
        let dir = args.interop.join("go-mysql");
        run_build(Command::new("go").args(["build", "-o", "harness", "."]).current_dir(&dir), "go build")?;
        consumers.go_mysql = Some(dir.join("harness").canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?);
    }
    Ok(consumers)
}

fn run_build(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command.stdin(Stdio::null()).output().map_err(|e| format!("{what}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

fn consumer_command(consumers: &Consumers, consumer: Consumer, server: Kind, port: u16, seconds: u64) -> Command {
    match consumer {
        Consumer::Debezium => {
            let (classes, classpath) = consumers.debezium.as_ref().expect("built");
            let mut command = Command::new("java");
            command
                .arg("-cp")
                .arg(format!("{}:{classpath}", classes.display()))
                .arg("binlogd.interop.debezium.CdcThroughput")
                .args([port.to_string(), seconds.to_string()]);
            command
        }
        Consumer::GoMysql => {
            let flavor = if server == Kind::MariaDb { "mariadb" } else { "mysql" };
            let mut command = Command::new(consumers.go_mysql.as_ref().expect("built"));
            command.args(["consume".to_string(), port.to_string(), seconds.to_string(), flavor.to_string()]);
            command
        }
    }
}

fn run_one(
    args: &CdcBenchArgs,
    binary: &Path,
    consumers: &Consumers,
    kind: Kind,
    consumer: Consumer,
    dir: &Path,
    interrupt: &Interrupt,
) -> Result<Run, String> {
    let sizing = Sizing { buffer_pool_bytes: 1 << 30, engine_memory_limit_bytes: 2 << 30, max_allowed_packet_bytes: 64 << 20, cpus: None };
    let mut server = match kind {
        Kind::MariaDb => Server::start_mariadb(dir, &sizing, 1, free_port()?, interrupt)?,
        Kind::Binlogd => Server::start_binlogd(binary, dir, &sizing, BinlogStorageEngine::File, 1, free_port()?, interrupt)?,
    };
    crate::side_by_side::client::Client::new(server.port).query("CREATE DATABASE sbtest")?;
    let target = Target { port: server.port, tables: 1, table_size: args.table_size, cpus: None };
    target.prepare(args.threads.min(4), interrupt)?;
    eprintln!("bench cdc: {} with {}: starting the consumer", kind.name(), consumer.name());

    let mut command = consumer_command(consumers, consumer, kind, server.port, args.seconds);
    let log_path = dir.join(format!("{}.log", consumer.name()));
    let log = std::fs::File::create(&log_path).map_err(|e| format!("creating {}: {e}", log_path.display()))?;
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(log);
    let mut child = ChildGuard::spawn(command, consumer.name())?;
    let (lines, receive) = mpsc::channel();
    let stdout = child.take_stdout();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().take(CONSUMER_LINES_MAX) {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let next_line = |timeout: Duration, child: &mut ChildGuard| -> Result<String, String> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            interrupt.check()?;
            match receive.recv_timeout(Duration::from_millis(200)) {
                Ok(line) => return Ok(line),
                Err(mpsc::RecvTimeoutError::Timeout) if std::time::Instant::now() < deadline => {}
                Err(_) => {
                    let status = child.try_wait()?;
                    return Err(format!("{} stopped or timed out ({status:?}):\n{}", consumer.name(), crate::common::log_tail(&log_path)));
                }
            }
        }
    };
    loop {
        if next_line(CONSUMER_START_TIMEOUT, &mut child)? == "READY" {
            break;
        }
    }
    eprintln!("bench cdc: {} with {}: sysbench oltp_write_only for {} s", kind.name(), consumer.name(), args.seconds);
    let output = target.start_run("oltp_write_only", args.threads, args.seconds)?.finish(interrupt)?;
    let summary = parse_summary(&output.text)?;
    server.check_alive()?;
    let mut seconds = Vec::new();
    let result = loop {
        let line = next_line(CONSUMER_DRAIN_TIMEOUT, &mut child)?;
        if let Some(second) = parse_second(&line) {
            seconds.push(second);
        } else if line.starts_with("RESULT ") {
            break parse_result(&line)?;
        }
    };
    // The consumer exits by itself after its report; this reaps it.
    child.stop()?;
    server.stop()?;
    Ok(Run { server: kind.name(), consumer: consumer.name(), tps: summary.tps, transactions: summary.transactions, result, seconds })
}

const HEADERS: [&str; 10] =
    ["server", "consumer", "sysbench TPS", "events/s", "events/trx", "lag p50 ms", "lag p99 ms", "lag max ms", "drain ms", "probes"];

fn row(run: &Run) -> Vec<String> {
    let ms = |us: u64| format!("{:.1}", us as f64 / 1000.0);
    vec![
        run.server.to_string(),
        run.consumer.to_string(),
        format!("{:.0}", run.tps),
        format!("{:.0}", run.events_per_second()),
        format!("{:.2}", run.events_per_second() / run.tps.max(f64::MIN_POSITIVE)),
        ms(run.result.lag_p50_us),
        ms(run.result.lag_p99_us),
        ms(run.result.lag_max_us),
        run.result.drain_ms.to_string(),
        format!("{}/{}", run.result.probes, run.result.probes_sent),
    ]
}

fn report(args: &CdcBenchArgs, runs: &[Run]) -> Result<(), String> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(runs).map_err(|e| e.to_string())?);
    } else {
        let mut table = Table::new(&HEADERS);
        for run in runs {
            table.push_row(row(run));
        }
        println!(
            "sysbench oltp_write_only, {} threads, 1 table of {} rows, {} s; sync_binlog=1, flush_log_at_trx_commit=1",
            args.threads, args.table_size, args.seconds
        );
        print!("{}", table.render());
    }
    let rows: Vec<Vec<String>> = runs.iter().map(row).collect();
    write_csv(&args.csv, &HEADERS, &rows)?;
    let series: Vec<Vec<String>> = runs
        .iter()
        .flat_map(|run| {
            run.seconds.iter().map(|s| {
                vec![
                    run.server.to_string(),
                    run.consumer.to_string(),
                    s.second.to_string(),
                    s.events.to_string(),
                    s.probes.to_string(),
                    s.lag_p99_us.to_string(),
                ]
            })
        })
        .collect();
    write_csv(&args.series_csv, &["server", "consumer", "second", "events", "probes", "lag_p99_us"], &series)?;
    let chart = LineChart {
        title: format!("CDC lag under sysbench oltp_write_only, {} threads", args.threads),
        x_label: "second".into(),
        y_label: "p99 lag (ms)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Log,
        x_ticks: (0..=args.seconds).step_by(10).map(|s| (s as f64, s.to_string())).collect(),
        series: runs
            .iter()
            .map(|run| Series {
                label: format!("{} / {}", run.server, run.consumer),
                points: run.seconds.iter().map(|s| (s.second as f64, s.lag_p99_us as f64 / 1000.0)).collect(),
            })
            .collect(),
    };
    plot_lines(&args.plot, &chart)?;
    eprintln!("bench cdc: wrote {}, {}, {}", args.csv.display(), args.series_csv.display(), args.plot.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_consumers_lines() {
        let result = parse_result(
            "RESULT events=1200 seconds=60 probes_sent=5900 probes=5890 lag_p50_us=4000 lag_p99_us=30000 lag_max_us=90000 drain_ms=12",
        )
        .unwrap();
        assert_eq!((result.events, result.probes_sent, result.lag_p99_us, result.drain_ms), (1200, 5900, 30000, 12));
        assert!(parse_result("SECOND 1 2 3 4").is_err());
        assert_eq!(parse_second("SECOND 3 410 98 25000"), Some(Second { second: 3, events: 410, probes: 98, lag_p99_us: 25000 }));
        assert_eq!(parse_second("SECOND 3 x"), None);
    }

    #[test]
    fn debezium_reads_binlogd_only() {
        assert!(Consumer::Debezium.reads(Kind::Binlogd));
        assert!(!Consumer::Debezium.reads(Kind::MariaDb));
        assert!(Consumer::GoMysql.reads(Kind::MariaDb));
    }
}
