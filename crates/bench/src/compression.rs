//! What `bench commit`, `bench engine` and `bench side-by-side` share to
//! measure `binlog_transaction_compression`: its list option (OFF and ON
//! measured in one invocation, alternated), the bytes a binary log's
//! files hold, this process's CPU time, and the ON/OFF ratios printed
//! under their tables. The goal: the binlog at least 2x smaller
//! with compression ON at no more than 10% TPS cost.

use std::path::Path;

use binlog::compression::{LEVEL_ZSTD_DEFAULT, LEVEL_ZSTD_MAX, LEVEL_ZSTD_MIN};
use binlog::Options;
use serde::Serialize;

use super::common::{parse_on_off, ratio};
use super::side_by_side::process_cpu;

/// The goal: OFF's binlog bytes per transaction over ON's at least this…
pub const GOAL_BYTES_RATIO_MIN: f64 = 2.0;
/// …at ON's TPS no lower than this fraction of OFF's.
pub const GOAL_TPS_RATIO_MIN: f64 = 0.9;

#[derive(Debug, Clone, clap::Args)]
pub struct CompressionArgs {
    /// `binlog_transaction_compression` of the runs, comma-separated: OFF
    /// and/or ON (zstd Transaction_payload events); with both, the runs
    /// alternate and the ON/OFF ratios are printed.
    #[arg(long, value_name = "OFF,ON", default_value = "OFF", value_delimiter = ',', value_parser = parse_on_off)]
    pub binlog_transaction_compression: Vec<bool>,

    /// `binlog_transaction_compression_level_zstd` of the ON runs.
    #[arg(long, value_name = "N", default_value_t = LEVEL_ZSTD_DEFAULT,
          value_parser = clap::value_parser!(i32).range(LEVEL_ZSTD_MIN as i64..=LEVEL_ZSTD_MAX as i64))]
    pub binlog_transaction_compression_level_zstd: i32,
}

impl Default for CompressionArgs {
    fn default() -> CompressionArgs {
        CompressionArgs { binlog_transaction_compression: vec![false], binlog_transaction_compression_level_zstd: LEVEL_ZSTD_DEFAULT }
    }
}

impl CompressionArgs {
    /// The settings to run, each once, in the given order.
    pub fn settings(&self) -> Vec<bool> {
        let mut settings = Vec::new();
        for &on in &self.binlog_transaction_compression {
            if !settings.contains(&on) {
                settings.push(on);
            }
        }
        settings
    }

    /// The zstd level a transaction committed under `on` carries (`None`: written as it is).
    pub fn level_zstd(&self, on: bool) -> Option<i32> {
        on.then_some(self.binlog_transaction_compression_level_zstd)
    }
}

/// `ON` or `OFF`, as MySQL shows the variable.
pub fn on_off(on: bool) -> &'static str {
    if on {
        "ON"
    } else {
        "OFF"
    }
}

/// Bytes of the binlog files (`binlog.NNNNNN`) in `dir` now.
pub fn binlog_file_bytes(dir: &Path) -> Result<u64, String> {
    let options = Options::new(dir);
    let mut bytes = 0;
    let listing = std::fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    for entry in listing {
        let entry = entry.map_err(|e| format!("listing {}: {e}", dir.display()))?;
        if options.file_number(&entry.file_name().to_string_lossy()).is_some() {
            bytes += entry.metadata().map_err(|e| format!("reading the size of {}: {e}", entry.path().display()))?.len();
        }
    }
    Ok(bytes)
}

/// User plus system CPU seconds of this process so far, its exited
/// threads included.
pub fn process_cpu_seconds() -> Result<f64, String> {
    process_cpu::cpu_seconds(std::process::id())
}

/// What a `bench commit` or `bench engine` run reports of compression:
/// its setting, and what the binlog and the CPU spent per transaction.
#[derive(Debug, Clone, Serialize)]
pub struct RunCompression {
    /// `binlog_transaction_compression` of the run.
    pub binlog_transaction_compression: bool,
    /// `binlog_transaction_compression_level_zstd` when ON.
    pub binlog_transaction_compression_level_zstd: Option<i32>,
    /// What the binlog files grew by during the run, per transaction.
    pub binlog_bytes_per_transaction: f64,
    /// This process's CPU time (every thread, user and system) during the
    /// run, per transaction.
    pub cpu_us_per_transaction: f64,
}

impl RunCompression {
    /// A run at `level_zstd` (`None`: OFF) whose binlog grew by
    /// `binlog_bytes` and which took `cpu_seconds` for `transactions`.
    pub fn of_run(level_zstd: Option<i32>, binlog_bytes: u64, cpu_seconds: f64, transactions: u64) -> RunCompression {
        RunCompression {
            binlog_transaction_compression: level_zstd.is_some(),
            binlog_transaction_compression_level_zstd: level_zstd,
            binlog_bytes_per_transaction: per_transaction(binlog_bytes, transactions),
            cpu_us_per_transaction: ratio(cpu_seconds.max(0.0) * 1e6, transactions as f64),
        }
    }

    /// What the ON/OFF ratios compare, at the run's `transactions_per_sec`.
    pub fn measured(&self, transactions_per_sec: f64) -> Measured {
        Measured {
            transactions_per_sec,
            binlog_bytes_per_transaction: self.binlog_bytes_per_transaction,
            cpu_us_per_transaction: self.cpu_us_per_transaction,
        }
    }
}

/// What a run measured that compression changes.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    pub transactions_per_sec: f64,
    pub binlog_bytes_per_transaction: f64,
    pub cpu_us_per_transaction: f64,
}

/// ON against OFF.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Ratios {
    /// ON's transactions/s over OFF's (the goal: at least 0.9).
    pub on_over_off_tps: f64,
    /// OFF's binlog bytes per transaction over ON's (the goal: at least 2).
    pub off_over_on_binlog_bytes: f64,
    /// ON's CPU per transaction over OFF's.
    pub on_over_off_cpu: f64,
}

impl Ratios {
    pub fn of(off: &Measured, on: &Measured) -> Ratios {
        Ratios {
            on_over_off_tps: ratio(on.transactions_per_sec, off.transactions_per_sec),
            off_over_on_binlog_bytes: ratio(off.binlog_bytes_per_transaction, on.binlog_bytes_per_transaction),
            on_over_off_cpu: ratio(on.cpu_us_per_transaction, off.cpu_us_per_transaction),
        }
    }

    pub fn goal_met(&self) -> bool {
        self.off_over_on_binlog_bytes >= GOAL_BYTES_RATIO_MIN && self.on_over_off_tps >= GOAL_TPS_RATIO_MIN
    }

    /// One line: the three ratios and the goal's verdict.
    pub fn describe(&self, what: &str) -> String {
        format!(
            "compression ON/OFF, {what}: TPS {:.3}, binlog bytes/trx {:.2}x smaller, CPU µs/trx {:.3} (goal >= {GOAL_BYTES_RATIO_MIN}x smaller at TPS >= {GOAL_TPS_RATIO_MIN}: {})",
            self.on_over_off_tps,
            self.off_over_on_binlog_bytes,
            self.on_over_off_cpu,
            if self.goal_met() { "met" } else { "NOT met" }
        )
    }
}

/// `bytes / transactions`, 0 without transactions.
pub fn per_transaction(bytes: u64, transactions: u64) -> f64 {
    ratio(bytes as f64, transactions as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_compare_on_with_off_and_judge_the_goal() {
        let off = Measured { transactions_per_sec: 1000.0, binlog_bytes_per_transaction: 900.0, cpu_us_per_transaction: 50.0 };
        let on = Measured { transactions_per_sec: 950.0, binlog_bytes_per_transaction: 300.0, cpu_us_per_transaction: 60.0 };
        let ratios = Ratios::of(&off, &on);
        assert_eq!(ratios, Ratios { on_over_off_tps: 0.95, off_over_on_binlog_bytes: 3.0, on_over_off_cpu: 1.2 });
        assert!(ratios.goal_met());
        let slow = Measured { transactions_per_sec: 850.0, ..on };
        assert!(!Ratios::of(&off, &slow).goal_met(), "15% TPS cost misses the goal");
        let big = Measured { binlog_bytes_per_transaction: 600.0, ..on };
        assert!(!Ratios::of(&off, &big).goal_met(), "1.5x smaller misses the goal");
    }

    #[test]
    fn counts_only_binlog_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("binlog.000001"), [0u8; 100]).unwrap();
        std::fs::write(dir.path().join("binlog.000002"), [0u8; 23]).unwrap();
        std::fs::write(dir.path().join("binlog.index"), [0u8; 40]).unwrap();
        std::fs::write(dir.path().join("notes.txt"), [0u8; 7]).unwrap();
        assert_eq!(binlog_file_bytes(dir.path()).unwrap(), 123);
    }
}
