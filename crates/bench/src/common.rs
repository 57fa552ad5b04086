//! What the `binlogd bench` subcommands share: their directories (created
//! if missing, removed at the end only if the benchmark created them),
//! how they report (`--json`, `--csv`, `--plot`), sizes with binary units, a run's server UUID, latency histograms,
//! small statistics and the end of a server's log for error messages.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use hdrhistogram::Histogram;

/// How a benchmark reports besides its table; what the rows and the chart
/// hold is the benchmark's own.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReportArgs {
    /// Print the results as JSON instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Also write the results as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Also write a PNG chart of the results.
    #[arg(long, value_name = "FILE.png")]
    pub plot: Option<PathBuf>,
}

/// The run subdirectories of a benchmark that opens one data directory per
/// run ([`RunDirs`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RunDirArgs {
    /// Delete run subdirectories left in DIR by an earlier --keep instead
    /// of refusing to run.
    #[arg(long)]
    pub clean: bool,

    /// Keep each run's binlog files (needs the disk space of every run).
    #[arg(long)]
    pub keep: bool,
}

/// Largest size `--sizes`/`--large-trx-size` accept (a run that copies the
/// transaction needs twice this on disk).
pub const SIZE_BYTES_MAX: u64 = 1 << 40;
/// Slowest operation a latency histogram can hold (µs); slower ones are
/// recorded as this.
pub const LATENCY_US_MAX: u64 = 3_600_000_000;

/// A latency histogram in µs, 1 µs to [`LATENCY_US_MAX`], 3 significant digits.
pub fn new_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_US_MAX, 3).expect("static histogram bounds are valid")
}

/// 16 bytes for a run's server UUID; need not be cryptographic, only
/// different between runs (and between processes started at once).
pub fn random_bytes() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut bytes = [0u8; 16];
    for (index, half) in bytes.chunks_exact_mut(8).enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(index);
        hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
        hasher.write_u32(std::process::id());
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    bytes
}

/// `ON`/`OFF` (also `1`/`0`, `TRUE`/`FALSE`), any case.
pub fn parse_on_off(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_uppercase().as_str() {
        "ON" | "1" | "TRUE" => Ok(true),
        "OFF" | "0" | "FALSE" => Ok(false),
        _ => Err(format!("{text:?} is not ON or OFF")),
    }
}

/// A byte count: a number with an optional binary unit (`B`, `KiB`, `MiB`,
/// `GiB`, `TiB`), e.g. `512KiB`, `64MiB`, `1GiB`; at most [`SIZE_BYTES_MAX`].
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let number = u64::from_str(digits).map_err(|_| format!("{text:?} is not a size like 64MiB or 1GiB"))?;
    let shift = match unit.trim() {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        "TiB" => 40,
        other => return Err(format!("{text:?}: unknown unit {other:?} (use B, KiB, MiB, GiB or TiB)")),
    };
    let bytes = number.checked_shl(shift).filter(|b| b >> shift == number).ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes == 0 || bytes > SIZE_BYTES_MAX {
        return Err(format!("{text:?}: a size must be between 1 byte and {}", format_size(SIZE_BYTES_MAX)));
    }
    Ok(bytes)
}

/// `bytes` in the largest binary unit that divides it (`64MiB`), else
/// with one decimal (`1.5GiB`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    for (unit, shift) in UNITS {
        if bytes >= 1 << shift {
            return format!("{:.1}{unit}", bytes as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{bytes}B")
}

/// The median (mean of the middle two for an even count); 0 when empty.
pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// The values in first-seen order, each once.
pub fn distinct(values: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut seen: Vec<u64> = Vec::new();
    for value in values {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    seen
}

/// `a / b`, or 0 when `b` is 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Bytes to one decimal in the largest unit below them (`8.0GiB`).
pub fn format_size_approx(bytes: u64) -> String {
    const UNITS: [(&str, u32); 3] = [("GiB", 30), ("MiB", 20), ("KiB", 10)];
    UNITS
        .iter()
        .find(|(_, shift)| bytes >= 1 << shift)
        .map_or_else(|| format!("{bytes}B"), |(unit, shift)| format!("{:.1}{unit}", bytes as f64 / (1u64 << shift) as f64))
}

/// Creates `path` and its missing ancestors; returns the directories that
/// did not exist before, outermost first, so that exactly those can be
/// removed at the end.
pub fn create_dir_with_ancestors(path: &Path) -> Result<Vec<PathBuf>, String> {
    let mut created = Vec::new();
    let mut ancestor = Some(path);
    while let Some(dir) = ancestor {
        if dir.as_os_str().is_empty() || dir.exists() {
            break;
        }
        created.push(dir.to_path_buf());
        ancestor = dir.parent();
    }
    created.reverse();
    if path.exists() && !path.is_dir() {
        return Err(format!("{} exists and is not a directory", path.display()));
    }
    std::fs::create_dir_all(path).map_err(|e| format!("creating directory {}: {e}", path.display()))?;
    Ok(created)
}

/// Removes the directories [`create_dir_with_ancestors`] created,
/// innermost first, only if empty: anything else in them stays.
pub fn remove_created_dirs(created: &[PathBuf]) -> Result<(), String> {
    for dir in created.iter().rev() {
        if let Err(error) = std::fs::remove_dir(dir) {
            if error.kind() != std::io::ErrorKind::NotFound {
                return Err(format!("removing directory {}: {error} (it holds files the benchmark did not write)", dir.display()));
            }
        }
    }
    Ok(())
}

/// The directory of a benchmark's runs: created if missing (and then
/// removed at the end if left empty); each run gets a fresh subdirectory.
pub struct RunDirs {
    base: PathBuf,
    /// Directories that did not exist before, outermost first.
    created: Vec<PathBuf>,
}

impl RunDirs {
    pub fn prepare(base: &Path) -> Result<RunDirs, String> {
        let created = create_dir_with_ancestors(base)?;
        Ok(RunDirs { base: base.to_path_buf(), created })
    }

    /// `base/name`, new and empty. One left by an earlier run is deleted
    /// with `clean`, else refused: opening a log there would recover and
    /// extend the old log, not measure a fresh one.
    pub fn fresh(&self, name: &str, clean: bool) -> Result<PathBuf, String> {
        let path = self.base.join(name);
        if path.symlink_metadata().is_ok() {
            if !clean {
                return Err(format!(
                    "{} already exists (left by an earlier --keep run?); pass --clean to delete it, or choose another --dir",
                    path.display()
                ));
            }
            Self::remove(&path)?;
        }
        std::fs::create_dir(&path).map_err(|e| format!("creating directory {}: {e}", path.display()))?;
        Ok(path)
    }

    /// Deletes a run's subdirectory and everything in it (all written by the run).
    pub fn remove(path: &Path) -> Result<(), String> {
        std::fs::remove_dir_all(path).map_err(|e| format!("removing {}: {e}", path.display()))
    }

    /// Removes the directories `prepare` created, if empty (`keep` leaves them).
    pub fn finish(self, keep: bool) -> Result<(), String> {
        if keep {
            return Ok(());
        }
        remove_created_dirs(&self.created)
    }
}

/// Lines of a server's log an error message quotes.
const LOG_TAIL_LINES: usize = 20;
/// Bytes read from the end of the log to find them.
const LOG_TAIL_BYTES_MAX: u64 = 64 << 10;

/// The last [`LOG_TAIL_LINES`] lines of the log at `path` (empty when it
/// cannot be read), read from its end however long it grew.
pub fn log_tail(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else { return String::new() };
    let length = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = length.saturating_sub(LOG_TAIL_BYTES_MAX);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        // Cut mid-line.
        lines.remove(0);
    }
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_odd_and_even_counts() {
        assert_eq!(median(Vec::new()), 0.0);
        assert_eq!(median(vec![6.7, 5.5, 6.1]), 6.1);
        assert_eq!(median(vec![6.0, 5.0, 7.0, 6.5]), 6.25);
    }

    #[test]
    fn a_log_tail_is_the_last_lines_even_of_a_long_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.err");
        assert_eq!(log_tail(&path), "", "a missing log");
        let text: String = (0..20_000).map(|n| format!("line {n}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let tail = log_tail(&path);
        let expected: Vec<String> = (19_980..20_000).map(|n| format!("line {n}")).collect();
        assert_eq!(tail, expected.join("\n"));
        std::fs::write(&path, "ready\nstopped\n").unwrap();
        assert_eq!(log_tail(&path), "ready\nstopped");
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("512KiB"), Ok(512 << 10));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("1000"), Ok(1000));
        for bad in ["", "MiB", "64MB", "64 mib", "0", "2TiB", "99999999999999999999GiB", "-1KiB"] {
            assert!(parse_size(bad).is_err(), "{bad:?} should be refused");
        }
        for bytes in [1000, 512 << 10, 64 << 20, 4 << 30, 1536 << 20] {
            let text = format_size(bytes);
            if !text.contains('.') {
                assert_eq!(parse_size(&text), Ok(bytes), "{text}");
            }
        }
        assert_eq!(format_size(1536 << 20), "1536MiB");
        assert_eq!(format_size_approx(3 << 29), "1.5GiB");
    }
}
