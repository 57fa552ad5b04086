//! CPU time of this process's threads by name, from Linux's per-thread
//! `/proc/self/task/<tid>/schedstat` (nanoseconds on a CPU): `bench dump
//! --tail-readers` splits what readers cost per commit into the source's
//! dump threads and the bench's own reader threads, which the process's
//! total (getrusage) cannot tell apart from the commit sessions.

use std::path::Path;

/// Seconds on a CPU so far of the live threads whose name starts with
/// each prefix (a thread that has exited no longer counts: sample while
/// the threads of interest run).
pub fn cpu_seconds_by_name(prefixes: &[&str]) -> Vec<f64> {
    let mut seconds = vec![0.0; prefixes.len()];
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return seconds };
    for task in tasks.flatten() {
        let Some((name, nanoseconds)) = thread_cpu(&task.path()) else { continue };
        if let Some(slot) = prefixes.iter().position(|prefix| name.starts_with(prefix)) {
            seconds[slot] += nanoseconds as f64 / 1e9;
        }
    }
    seconds
}

/// A thread's name and CPU nanoseconds; `None` if it exited meanwhile.
fn thread_cpu(task: &Path) -> Option<(String, u64)> {
    let name = std::fs::read_to_string(task.join("comm")).ok()?;
    let schedstat = std::fs::read_to_string(task.join("schedstat")).ok()?;
    let nanoseconds = schedstat.split_whitespace().next()?.parse().ok()?;
    Some((name.trim_end().to_string(), nanoseconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    #[test]
    fn a_busy_named_thread_is_counted_under_its_name_only() {
        let stop = Arc::new(AtomicBool::new(false));
        let spinning = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("cpu-test-spin".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
                .unwrap()
        };
        let before = cpu_seconds_by_name(&["cpu-test-spin", "cpu-test-none"]);
        let started = Instant::now();
        // At least 50 ms of CPU for the spinning thread, however busy the machine.
        while cpu_seconds_by_name(&["cpu-test-spin"])[0] - before[0] < 0.05 {
            assert!(started.elapsed() < Duration::from_secs(60), "the spinning thread got no CPU");
            std::thread::sleep(Duration::from_millis(10));
        }
        let after = cpu_seconds_by_name(&["cpu-test-spin", "cpu-test-none"]);
        stop.store(true, Ordering::Relaxed);
        spinning.join().unwrap();
        assert!(after[0] - before[0] >= 0.05);
        assert_eq!(after[1], 0.0, "no thread has that name");
    }
}
