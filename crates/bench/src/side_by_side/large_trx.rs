//! The large-transaction experiment of seed 002: sysbench oltp_write_only
//! runs while another connection commits one transaction of a few hundred
//! MB of row events.
//!
//! The transaction is built first, in one explicit transaction that stays
//! open: one row of `ROW_PAYLOAD_BYTES` made by `REPEAT()`, then
//! `INSERT ... SELECT` from the same table doubling the rows, and a last
//! `INSERT ... SELECT ... LIMIT` for the rest, until the rows' binlog
//! events reach the requested size. Building is not timed with the
//! workload: sysbench starts afterwards, and `COMMIT` is sent a third of
//! the way into its run and timed alone. The commit's start and end are
//! placed on sysbench's per-second timeline (see
//! [`super::sysbench::clock_origin`]), which gives the lowest per-second
//! TPS while it ran.

use std::time::{Duration, Instant};

use super::client::{Client, Session};
use super::servers::{Interrupt, Kind, Server};
use super::sysbench::{self, IntervalReport, Target};

/// Bytes of the BLOB in every row of the large transaction.
pub const ROW_PAYLOAD_BYTES: u64 = 4000;
/// Bytes a row adds to the binlog besides its payload (id, length, row
/// header), roughly; only used to pick the row count.
const ROW_OVERHEAD_BYTES: u64 = 16;
/// The workload sysbench runs meanwhile.
pub const WORKLOAD: &str = "oltp_write_only";
const DATABASE: &str = "bigtrx";

/// What the experiment measured on one server.
#[derive(Debug, Clone)]
pub struct LargeTrxOutcome {
    pub rows: u64,
    pub build_seconds: f64,
    pub commit_seconds: f64,
    /// Commit start and end in seconds on sysbench's clock.
    pub commit_from_second: f64,
    pub commit_to_second: f64,
    /// The commit ended after sysbench's last report.
    pub commit_outlasted_run: bool,
    pub intervals: Vec<IntervalReport>,
    pub summary: sysbench::Summary,
    /// binlogd: whether the transaction was promoted into its own binlog file.
    pub promoted: Option<bool>,
}

/// Rows of `ROW_PAYLOAD_BYTES` whose events add up to about `size_bytes`.
pub fn rows_for(size_bytes: u64) -> u64 {
    size_bytes.div_ceil(ROW_PAYLOAD_BYTES + ROW_OVERHEAD_BYTES).max(1)
}

/// The statements that insert `rows` rows into `bigtrx.big` (inside an
/// open transaction): one `REPEAT()` row, then doublings, then the rest.
pub fn build_statements(rows: u64) -> Vec<String> {
    let mut statements = vec![format!("INSERT INTO {DATABASE}.big (pad) VALUES (REPEAT('x', {ROW_PAYLOAD_BYTES}))")];
    let mut have = 1;
    while have * 2 <= rows {
        statements.push(format!("INSERT INTO {DATABASE}.big (pad) SELECT pad FROM {DATABASE}.big"));
        have *= 2;
    }
    if have < rows {
        statements.push(format!("INSERT INTO {DATABASE}.big (pad) SELECT pad FROM {DATABASE}.big LIMIT {}", rows - have));
    }
    statements
}

/// Ratio: the commit's start on the timeline, as a fraction of the run.
const COMMIT_AT_FRACTION: f64 = 1.0 / 3.0;

pub fn run(
    server: &mut Server,
    target: &Target,
    threads: u32,
    seconds: u64,
    size_bytes: u64,
    promotion_threshold_bytes: u64,
    interrupt: &Interrupt,
) -> Result<LargeTrxOutcome, String> {
    let client = Client::new(server.port);
    client.query(&format!(
        "DROP DATABASE IF EXISTS {DATABASE}; CREATE DATABASE {DATABASE}; \
         CREATE TABLE {DATABASE}.big (id BIGINT NOT NULL AUTO_INCREMENT, pad BLOB NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB"
    ))?;
    let promotions_before = match server.kind {
        Kind::Binlogd => {
            client.query(&format!(
                "SET GLOBAL binlog_large_transaction_optimization_enabled = ON; \
                 SET GLOBAL binlog_large_transaction_optimization_threshold = {promotion_threshold_bytes}"
            ))?;
            Some(promotion_count(&client)?)
        }
        Kind::MariaDb => None,
    };

    let rows = rows_for(size_bytes);
    let mut session = Session::open(server.port)?;
    let build_started = Instant::now();
    session.execute("BEGIN", interrupt)?;
    for statement in build_statements(rows) {
        session.execute(&statement, interrupt)?;
        server.check_alive()?;
    }
    let build_seconds = build_started.elapsed().as_secs_f64();
    eprintln!("bench side-by-side: {}: built {rows} rows in {build_seconds:.1}s; starting sysbench", server.kind.name());

    let running = target.start_run(WORKLOAD, threads, seconds)?;
    let commit_at = Instant::now() + Duration::from_secs_f64(seconds as f64 * COMMIT_AT_FRACTION);
    let wait = commit_at.saturating_duration_since(Instant::now());
    interrupt.sleep(wait)?;
    let commit_started = Instant::now();
    let (commit_time, _) = session.execute("COMMIT", interrupt)?;
    let commit_ended = commit_started + commit_time;
    eprintln!("bench side-by-side: {}: COMMIT took {:.3}s", server.kind.name(), commit_time.as_secs_f64());
    let output = running.finish(interrupt)?;
    session.close()?;
    server.check_alive()?;

    let origin = sysbench::clock_origin(&output.intervals).ok_or("sysbench printed no per-second report")?;
    let run_end = output.intervals.iter().map(|(_, report)| report.second).fold(0.0, f64::max);
    let on_clock =
        |at: Instant| at.checked_duration_since(origin).map_or_else(|| -origin.duration_since(at).as_secs_f64(), |d| d.as_secs_f64());
    let promoted = match promotions_before {
        Some(before) => Some(promotion_count(&client)? > before),
        None => None,
    };
    client.query(&format!("DROP DATABASE {DATABASE}"))?;
    let commit_to_second = on_clock(commit_ended);
    if commit_to_second > run_end {
        eprintln!(
            "bench side-by-side: {}: the COMMIT ended at {commit_to_second:.1}s, after sysbench's last report ({run_end:.0}s): \
             the lowest TPS covers only the part of the commit sysbench saw; use a longer --seconds",
            server.kind.name()
        );
    }
    Ok(LargeTrxOutcome {
        commit_outlasted_run: commit_to_second > run_end,
        rows,
        build_seconds,
        commit_seconds: commit_time.as_secs_f64(),
        commit_from_second: on_clock(commit_started),
        commit_to_second,
        summary: sysbench::parse_summary(&output.text)?,
        intervals: output.intervals.into_iter().map(|(_, report)| report).collect(),
        promoted,
    })
}

fn promotion_count(client: &Client) -> Result<u64, String> {
    status_value(&client.query("SHOW GLOBAL STATUS LIKE 'binlog_large_transaction_optimization_count'")?)
}

/// The number in the client's batch output of `SHOW STATUS LIKE 'name'`:
/// one `name<TAB>value` line.
pub fn status_value(text: &str) -> Result<u64, String> {
    let mut lines = text.lines();
    match (lines.next().and_then(|line| line.split_once('\t')), lines.next()) {
        (Some((_, value)), None) => value.trim().parse().map_err(|_| format!("SHOW STATUS value {value:?} is not a number")),
        _ => Err(format!("expected one `name<TAB>value` line from SHOW STATUS, got {text:?}")),
    }
}

/// The lowest TPS of the intervals that overlap `[from, to]` (seconds on
/// sysbench's clock; interval `n` covers `(n - 1, n]`).
pub fn lowest_tps_during(intervals: &[IntervalReport], from_second: f64, to_second: f64) -> Option<f64> {
    intervals
        .iter()
        .filter(|report| report.second > from_second && report.second - 1.0 < to_second)
        .map(|report| report.tps)
        .min_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_double_then_top_up() {
        assert_eq!(build_statements(1).len(), 1);
        let statements = build_statements(13);
        // 1 → 2 → 4 → 8, then 5 more.
        assert_eq!(statements.len(), 5);
        assert!(statements[0].contains("REPEAT('x', 4000)"));
        assert!(statements[1].ends_with("SELECT pad FROM bigtrx.big"));
        assert!(statements[4].ends_with("LIMIT 5"));
        assert_eq!(build_statements(16).len(), 5, "a power of two needs no LIMIT");
        // 640 MiB: about 167,000 rows of 4000 bytes.
        let rows = rows_for(640 << 20);
        assert!((167_000..168_000).contains(&rows), "{rows}");
    }

    #[test]
    fn status_value_reads_one_line() {
        assert_eq!(status_value("binlog_large_transaction_optimization_count\t3\n"), Ok(3));
        assert!(status_value("").is_err(), "an unknown counter gives no row");
        assert!(status_value("a\t1\nb\t2\n").is_err());
        assert!(status_value("a\tON\n").is_err());
    }

    #[test]
    fn lowest_tps_counts_every_interval_the_commit_overlaps() {
        let report =
            |second: f64, tps: f64| IntervalReport { second, threads: 8, tps, qps: 0.0, latency_ms_percentile: 0.0, errors_per_sec: 0.0 };
        let intervals = vec![report(1.0, 500.0), report(2.0, 100.0), report(3.0, 20.0), report(4.0, 450.0), report(5.0, 10.0)];
        // 1.5 s to 2.2 s: intervals (1, 2] and (2, 3].
        assert_eq!(lowest_tps_during(&intervals, 1.5, 2.2), Some(20.0));
        // Within one interval.
        assert_eq!(lowest_tps_during(&intervals, 3.1, 3.2), Some(450.0));
        assert_eq!(lowest_tps_during(&intervals, 9.0, 10.0), None);
    }
}
