//! Runs sysbench against one server and reads its report: the per-second
//! lines (`--report-interval=1`), each stamped with when it arrived, and
//! the final summary (transactions, errors, latency).
//!
//! sysbench 1.0.20 prints, per interval,
//! `[ 3s ] thds: 8 tps: 412.95 qps: 2477.72 (r/w/o: 0.00/1651.81/825.91) lat (ms,99%): 41.10 err/s: 0.00 reconn/s: 0.00`
//! and at the end a block with `transactions: N (X per sec.)`,
//! `ignored errors: N`, and under `Latency (ms):` the `min`, `avg`,
//! `max` and `99th percentile` (with `--percentile=99`).

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::cpus::CpuList;
use super::servers::{ChildGuard, Interrupt};

/// The latency percentile sysbench reports (`--percentile`).
pub const PERCENTILE: u32 = 99;
/// Most output lines kept from one sysbench run (a run prints one line a
/// second plus a few dozen): a runaway run fails instead of growing.
const OUTPUT_LINES_MAX: usize = 100_000;
/// How often the waiting loop checks for the end of the run and Ctrl-C.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Where sysbench's Lua scripts live in the Debian package.
pub const LUA_DIR: &str = "/usr/share/sysbench";

/// One `[ Ns ]` line.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalReport {
    /// End of the interval, in seconds since sysbench started its clock.
    pub second: f64,
    pub threads: u32,
    pub tps: f64,
    pub qps: f64,
    pub latency_ms_percentile: f64,
    pub errors_per_sec: f64,
}

/// The final summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub transactions: u64,
    pub tps: f64,
    pub ignored_errors: u64,
    pub latency_ms_avg: f64,
    pub latency_ms_max: f64,
    /// The `--percentile` (99th) latency.
    pub latency_ms_percentile: f64,
}

/// The first number in `text` (digits, `.`, sign).
fn leading_number(text: &str) -> Option<f64> {
    let text = text.trim_start();
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).unwrap_or(text.len());
    text[..end].parse().ok()
}

/// The number after `label` in `line`.
fn number_after(line: &str, label: &str) -> Option<f64> {
    let start = line.find(label)? + label.len();
    leading_number(&line[start..])
}

/// Parses one per-second line; `None` for any other line.
pub fn parse_interval_line(line: &str) -> Option<IntervalReport> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (second, rest) = rest.split_once("s ]")?;
    Some(IntervalReport {
        second: second.trim().parse().ok()?,
        threads: number_after(rest, "thds:")? as u32,
        tps: number_after(rest, "tps:")?,
        qps: number_after(rest, "qps:")?,
        latency_ms_percentile: number_after(rest, "%):")?,
        errors_per_sec: number_after(rest, "err/s:")?,
    })
}

/// Parses sysbench's final report.
pub fn parse_summary(text: &str) -> Result<Summary, String> {
    let mut transactions = None;
    let mut ignored_errors = None;
    let (mut avg, mut max, mut percentile) = (None, None, None);
    let mut in_latency = false;
    let percentile_label = format!("{PERCENTILE}th percentile:");
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Latency (ms):") {
            in_latency = true;
        } else if let Some(rest) = line.strip_prefix("transactions:") {
            let count = leading_number(rest);
            let rate = rest.split_once('(').and_then(|(_, r)| leading_number(r));
            transactions = count.zip(rate);
        } else if let Some(rest) = line.strip_prefix("ignored errors:") {
            ignored_errors = leading_number(rest);
        } else if in_latency {
            if let Some(rest) = line.strip_prefix("avg:") {
                avg = leading_number(rest);
            } else if let Some(rest) = line.strip_prefix("max:") {
                max = leading_number(rest);
            } else if let Some(rest) = line.strip_prefix(percentile_label.as_str()) {
                percentile = leading_number(rest);
            }
        }
    }
    let missing = |what: &str| format!("sysbench's report has no {what}");
    let (transactions, tps) = transactions.ok_or_else(|| missing("`transactions:` line"))?;
    Ok(Summary {
        transactions: transactions as u64,
        tps,
        ignored_errors: ignored_errors.ok_or_else(|| missing("`ignored errors:` line"))? as u64,
        latency_ms_avg: avg.ok_or_else(|| missing("average latency"))?,
        latency_ms_max: max.ok_or_else(|| missing("maximum latency"))?,
        latency_ms_percentile: percentile.ok_or_else(|| missing(&format!("{PERCENTILE}th percentile latency")))?,
    })
}

/// sysbench's clock origin: each line is printed right after its interval
/// ends, but a pipe may deliver lines late (in bursts), never early, so
/// the earliest `arrival - second` over all lines is the closest estimate.
pub fn clock_origin(lines: &[(Instant, IntervalReport)]) -> Option<Instant> {
    lines.iter().map(|(arrived, report)| arrived.checked_sub(Duration::from_secs_f64(report.second)).unwrap_or(*arrived)).min()
}

/// Where and as whom sysbench connects, and the tables it uses.
#[derive(Debug, Clone)]
pub struct Target {
    pub port: u16,
    pub tables: u32,
    pub table_size: u64,
    /// The CPUs sysbench runs on (`--client-cpus`); `None`: any.
    pub cpus: Option<CpuList>,
}

impl Target {
    fn command(&self, workload: &str) -> Command {
        let mut command = Command::new("sysbench");
        if let Some(cpus) = &self.cpus {
            cpus.pin(&mut command);
        }
        command.arg(format!("{LUA_DIR}/{workload}.lua")).args([
            "--db-driver=mysql".to_string(),
            "--mysql-host=127.0.0.1".to_string(),
            format!("--mysql-port={}", self.port),
            "--mysql-user=root".to_string(),
            "--mysql-db=sbtest".to_string(),
            format!("--tables={}", self.tables),
            format!("--table-size={}", self.table_size),
        ]);
        command
    }

    /// `sysbench oltp_read_write prepare` (the tables every oltp_* script uses).
    pub fn prepare(&self, threads: u32, interrupt: &Interrupt) -> Result<(), String> {
        let mut command = self.command("oltp_read_write");
        command.arg(format!("--threads={threads}")).arg("prepare");
        Running::start(command, "sysbench prepare")?.finish(interrupt).map(|_| ())
    }

    /// Starts `sysbench <workload> run` for `seconds` with a report every second.
    pub fn start_run(&self, workload: &str, threads: u32, seconds: u64) -> Result<Running, String> {
        self.start_run_with(workload, threads, seconds, &[])
    }

    /// [`Target::start_run`] with `--histogram=on`: the summary ends with
    /// the latency histogram ([`latency_percentile_ms`] reads it).
    pub fn start_run_with_histogram(&self, workload: &str, threads: u32, seconds: u64) -> Result<Running, String> {
        self.start_run_with(workload, threads, seconds, &["--histogram=on"])
    }

    fn start_run_with(&self, workload: &str, threads: u32, seconds: u64, options: &[&str]) -> Result<Running, String> {
        let mut command = self.command(workload);
        command.args([
            format!("--threads={threads}"),
            format!("--time={seconds}"),
            "--report-interval=1".to_string(),
            format!("--percentile={PERCENTILE}"),
        ]);
        command.args(options).arg("run");
        Running::start(command, &format!("sysbench {workload} {threads} threads"))
    }
}

/// The `percentile` (0–100) latency of a run's `--histogram=on` block:
/// the upper edge of the bucket holding that share of the transactions.
/// sysbench prints it as `Latency histogram (values are in milliseconds)`
/// then one `   VALUE |*****   COUNT` line per non-empty bucket.
pub fn latency_percentile_ms(text: &str, percentile: f64) -> Result<f64, String> {
    let after = text.split_once("Latency histogram").map(|(_, rest)| rest).ok_or("no latency histogram in sysbench's output")?;
    let buckets: Vec<(f64, u64)> = after
        .lines()
        .filter_map(|line| {
            let (value, rest) = line.split_once('|')?;
            let count = rest.split_whitespace().last()?.parse().ok()?;
            Some((value.trim().parse().ok()?, count))
        })
        .collect();
    let total: u64 = buckets.iter().map(|(_, count)| count).sum();
    if total == 0 {
        return Err("an empty latency histogram in sysbench's output".into());
    }
    let wanted = (total as f64 * percentile / 100.0).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (value, count) in &buckets {
        seen += count;
        if seen >= wanted {
            return Ok(*value);
        }
    }
    Ok(buckets.last().expect("not empty").0)
}

/// A sysbench process whose stdout a thread reads as it comes.
pub struct Running {
    what: String,
    child: ChildGuard,
    reader: std::thread::JoinHandle<Result<Vec<(Instant, String)>, String>>,
    stderr: std::thread::JoinHandle<String>,
}

/// What a finished run printed.
pub struct Output {
    pub intervals: Vec<(Instant, IntervalReport)>,
    pub text: String,
}

impl Running {
    fn start(mut command: Command, what: &str) -> Result<Running, String> {
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = ChildGuard::spawn(command, what)?;
        let stdout = child.take_stdout();
        let stderr = child.take_stderr();
        let reader = std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let line = line.map_err(|e| format!("reading sysbench's output: {e}"))?;
                if lines.len() >= OUTPUT_LINES_MAX {
                    return Err(format!("sysbench printed more than {OUTPUT_LINES_MAX} lines"));
                }
                lines.push((Instant::now(), line));
            }
            Ok(lines)
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            // Bounded: sysbench prints a few lines of errors at most.
            let _ = stderr.take(1 << 20).read_to_string(&mut text);
            text
        });
        Ok(Running { what: what.to_string(), child, reader, stderr })
    }

    /// Waits for the end (stopping sysbench on Ctrl-C); fails unless it
    /// exited with 0 and without FATAL errors.
    pub fn finish(mut self, interrupt: &Interrupt) -> Result<Output, String> {
        let status = loop {
            if let Some(status) = self.child.try_wait()? {
                break status;
            }
            interrupt.check()?;
            std::thread::sleep(POLL_INTERVAL);
        };
        let lines = self.reader.join().map_err(|_| "the sysbench reader thread panicked".to_string())??;
        let stderr = self.stderr.join().unwrap_or_default();
        let text: String = lines.iter().map(|(_, line)| format!("{line}\n")).collect();
        if !status.success() || text.contains("FATAL") || stderr.contains("FATAL") {
            let tail: Vec<&str> = text.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect();
            return Err(format!("{} failed ({status}):\n{}\n{}", self.what, tail.join("\n"), stderr.trim()));
        }
        let intervals = lines.iter().filter_map(|(arrived, line)| parse_interval_line(line).map(|report| (*arrived, report))).collect();
        Ok(Output { intervals, text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 8
Report intermediate results every 1 second(s)

Threads started!

[ 1s ] thds: 8 tps: 412.95 qps: 2477.72 (r/w/o: 0.00/1651.81/825.91) lat (ms,99%): 41.10 err/s: 0.00 reconn/s: 0.00
[ 2s ] thds: 8 tps: 0.00 qps: 0.00 (r/w/o: 0.00/0.00/0.00) lat (ms,99%): 0.00 err/s: 1.50 reconn/s: 0.00
SQL statistics:
    queries performed:
        read:                            0
        write:                           3303
        other:                           1652
        total:                           4955
    transactions:                        826    (82.43 per sec.)
    queries:                             4955   (494.50 per sec.)
    ignored errors:                      3      (0.30 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          10.0194s
    total number of events:              826

Latency (ms):
         min:                                    2.71
         avg:                                   19.39
         max:                                 1032.50
         99th percentile:                       41.10
         sum:                                16015.11

Threads fairness:
    events (avg/stddev):           103.2500/1.64
    execution time (avg/stddev):   2.0019/0.00
";

    #[test]
    fn parses_per_second_lines() {
        let lines: Vec<IntervalReport> = REPORT.lines().filter_map(parse_interval_line).collect();
        assert_eq!(
            lines,
            vec![
                IntervalReport { second: 1.0, threads: 8, tps: 412.95, qps: 2477.72, latency_ms_percentile: 41.10, errors_per_sec: 0.0 },
                IntervalReport { second: 2.0, threads: 8, tps: 0.0, qps: 0.0, latency_ms_percentile: 0.0, errors_per_sec: 1.5 },
            ]
        );
        assert_eq!(parse_interval_line("Threads started!"), None);
        assert_eq!(parse_interval_line("[ 3s ] thds: 8 tps: x"), None, "a cut line is not a report");
    }

    #[test]
    fn parses_the_summary() {
        assert_eq!(
            parse_summary(REPORT),
            Ok(Summary {
                transactions: 826,
                tps: 82.43,
                ignored_errors: 3,
                latency_ms_avg: 19.39,
                latency_ms_max: 1032.50,
                latency_ms_percentile: 41.10,
            })
        );
        // The 95th percentile (sysbench's default) is not what is reported.
        let p95 = REPORT.replace("99th percentile", "95th percentile");
        assert!(parse_summary(&p95).unwrap_err().contains("99th percentile"));
        assert!(parse_summary("FATAL: error 2013").unwrap_err().contains("transactions"));
    }

    #[test]
    fn percentiles_come_from_the_histogram() {
        let text = "Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n\
                    \x20     1.010 |**********                               10\n\
                    \x20     2.030 |****************************************  80\n\
                    \x20    10.090 |**                                       10\n \n";
        assert_eq!(latency_percentile_ms(text, 50.0), Ok(2.03));
        assert_eq!(latency_percentile_ms(text, 10.0), Ok(1.01));
        assert_eq!(latency_percentile_ms(text, 99.0), Ok(10.09));
        assert!(latency_percentile_ms("Latency (ms):", 50.0).is_err());
    }

    #[test]
    fn clock_origin_is_the_earliest_arrival_less_its_second() {
        let base = Instant::now();
        let report = |second: f64| parse_interval_line(&format!("[ {second}s ] thds: 1 tps: 1 qps: 1 lat (ms,99%): 1 err/s: 0")).unwrap();
        // The 1 s line came 0.3 s late, the 2 s line 0.1 s late.
        let lines = vec![(base + Duration::from_millis(1300), report(1.0)), (base + Duration::from_millis(2100), report(2.0))];
        assert_eq!(clock_origin(&lines), Some(base + Duration::from_millis(100)));
        assert_eq!(clock_origin(&[]), None);
    }
}
