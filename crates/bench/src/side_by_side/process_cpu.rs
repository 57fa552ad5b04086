//! A server process's CPU time from its own counters: `utime + stime` of
//! `/proc/<pid>/stat`, which include the threads that have exited (the
//! kernel folds a thread's time into its process when it ends), so the
//! connection threads of a finished sysbench run still count. Per-thread
//! counters ([`crate::thread_cpu`]) would lose them.

/// Fields of `/proc/<pid>/stat` after the `(comm)` field: `state` is the
/// first (field 3 of proc(5)), so field N is at index N - 3.
const UTIME_INDEX: usize = 14 - 3;
const STIME_INDEX: usize = 15 - 3;

/// User plus system CPU seconds of process `pid` so far.
pub fn cpu_seconds(pid: u32) -> Result<f64, String> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    let ticks = cpu_ticks(&stat).ok_or_else(|| format!("{path}: no utime and stime in {stat:?}"))?;
    Ok(ticks as f64 / clock_ticks_per_second())
}

/// `utime + stime` in clock ticks from the text of a stat file. The
/// command name may hold spaces and parentheses, so the fields are
/// counted from the last `)`.
pub fn cpu_ticks(stat: &str) -> Option<u64> {
    let (_, after_name) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let utime: u64 = fields.get(UTIME_INDEX)?.parse().ok()?;
    let stime: u64 = fields.get(STIME_INDEX)?.parse().ok()?;
    Some(utime + stime)
}

fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a configuration value; no pointers involved.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// CPU microseconds per transaction between two readings; `None` without
/// transactions.
pub fn per_transaction_us(seconds_before: f64, seconds_after: f64, transactions: u64) -> Option<f64> {
    (transactions > 0).then(|| (seconds_after - seconds_before).max(0.0) * 1e6 / transactions as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utime_and_stime_after_a_name_with_spaces_and_parentheses() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
        let stat = "4242 (binlogd (x) y) S 1 4242 4242 0 -1 4194560 900 0 3 0 1234 567 8 9 20 0 17 0 100 0\n";
        assert_eq!(cpu_ticks(stat), Some(1234 + 567));
        assert_eq!(cpu_ticks("4242 (cut"), None);
        assert_eq!(cpu_ticks("4242 (binlogd) S 1 2"), None, "too few fields");
    }

    #[test]
    fn this_process_has_spent_cpu_and_per_transaction_divides() {
        // Spin until the counter has moved by a clock tick (bounded, so a
        // counter that never moves fails instead of hanging).
        let before = cpu_seconds(std::process::id()).unwrap();
        let mut spin = 0u64;
        let mut after = before;
        for _ in 0..10_000 {
            for i in 0..100_000u64 {
                spin = std::hint::black_box(spin.wrapping_mul(31).wrapping_add(i));
            }
            after = cpu_seconds(std::process::id()).unwrap();
            if after > before {
                break;
            }
        }
        assert!(after > before, "the process's CPU counter never moved");
        assert!(cpu_seconds(u32::MAX).is_err(), "no such process");
        assert_eq!(per_transaction_us(1.0, 1.5, 1000), Some(500.0));
        assert_eq!(per_transaction_us(1.0, 1.5, 0), None);
    }
}
