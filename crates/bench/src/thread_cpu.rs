//! CPU time of a process's threads by name, from Linux's per-thread
//! `/proc/<pid>/task/<tid>/schedstat` (nanoseconds on a CPU): `bench dump
//! --tail-readers` splits what readers cost per commit into the source's
//! dump threads and the bench's own reader threads, which the process's
//! total (getrusage) cannot tell apart from the commit sessions; `bench
//! replication` reads a replica server's coordinator and worker threads
//! (another process) to show what the coordinator costs per transaction.

use std::path::Path;

/// Linux keeps 15 bytes of a thread's name (`comm`, TASK_COMM_LEN less the
/// NUL): `replica-coordinator` reads back as `replica-coordin`.
const COMM_BYTES_MAX: usize = 15;

/// Seconds on a CPU so far of this process's live threads whose name
/// starts with each prefix (a thread that has exited no longer counts:
/// sample while the threads of interest run).
pub fn cpu_seconds_by_name(prefixes: &[&str]) -> Vec<f64> {
    process_cpu_seconds_by_name(std::process::id(), prefixes).unwrap_or_else(|_| vec![0.0; prefixes.len()])
}

/// CPU nanoseconds of each of this process's live threads whose name
/// starts with one of some prefixes, by thread id, at one moment.
pub struct ThreadCpuSample {
    /// (prefix index, thread id, nanoseconds on a CPU).
    threads: Vec<(usize, u64, u64)>,
    prefixes: usize,
}

impl ThreadCpuSample {
    pub fn now(prefixes: &[&str]) -> ThreadCpuSample {
        let cut: Vec<&str> = prefixes.iter().map(|prefix| comm_prefix(prefix)).collect();
        let mut threads = Vec::new();
        for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|tid| tid.parse().ok()) else { continue };
            let Some((name, nanoseconds)) = thread_cpu(&task.path()) else { continue };
            if let Some(slot) = cut.iter().position(|prefix| name.starts_with(prefix)) {
                threads.push((slot, tid, nanoseconds));
            }
        }
        ThreadCpuSample { threads, prefixes: prefixes.len() }
    }

    /// Seconds on a CPU per prefix between `before` and this sample, of
    /// the threads alive now: each thread's own difference, so a thread
    /// that exited in between (another user of the same names) takes
    /// nothing away, and one started in between counts whole.
    pub fn seconds_since(&self, before: &ThreadCpuSample) -> Vec<f64> {
        let mut seconds = vec![0.0; self.prefixes];
        for &(slot, tid, nanoseconds) in &self.threads {
            let earlier = before.threads.iter().find(|&&(_, before_tid, _)| before_tid == tid).map_or(0, |&(_, _, ns)| ns);
            seconds[slot] += nanoseconds.saturating_sub(earlier) as f64 / 1e9;
        }
        seconds
    }
}

/// The same for the threads of process `pid`; fails if the process is
/// gone (or not readable), so a caller does not take its zeros for a
/// measurement. A prefix longer than the kernel keeps of a name is
/// compared cut to that length.
pub fn process_cpu_seconds_by_name(pid: u32, prefixes: &[&str]) -> Result<Vec<f64>, String> {
    let mut seconds = vec![0.0; prefixes.len()];
    let tasks_dir = format!("/proc/{pid}/task");
    let tasks = std::fs::read_dir(&tasks_dir).map_err(|e| format!("reading {tasks_dir}: {e}"))?;
    let cut: Vec<&str> = prefixes.iter().map(|prefix| comm_prefix(prefix)).collect();
    for task in tasks.flatten() {
        let Some((name, nanoseconds)) = thread_cpu(&task.path()) else { continue };
        if let Some(slot) = cut.iter().position(|prefix| name.starts_with(prefix)) {
            seconds[slot] += nanoseconds as f64 / 1e9;
        }
    }
    Ok(seconds)
}

/// `prefix` as far as a thread's `comm` can hold it (cut at a character
/// boundary).
fn comm_prefix(prefix: &str) -> &str {
    if prefix.len() <= COMM_BYTES_MAX {
        return prefix;
    }
    let mut end = COMM_BYTES_MAX;
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    &prefix[..end]
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

    /// A thread named `name` that spins until the flag is set.
    fn spinner(name: &str) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
        let stop = Arc::new(AtomicBool::new(false));
        let spinning = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
                .unwrap()
        };
        (stop, spinning)
    }

    /// Waits until `read()[0]` grew by at least 50 ms of CPU past `before`,
    /// however busy the machine.
    fn wait_for_cpu(before: f64, read: impl Fn() -> f64) {
        let started = Instant::now();
        while read() - before < 0.05 {
            assert!(started.elapsed() < Duration::from_secs(60), "the spinning thread got no CPU");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_busy_named_thread_is_counted_under_its_name_only() {
        let (stop, spinning) = spinner("cpu-test-spin");
        let before = cpu_seconds_by_name(&["cpu-test-spin", "cpu-test-none"]);
        wait_for_cpu(before[0], || cpu_seconds_by_name(&["cpu-test-spin"])[0]);
        let after = cpu_seconds_by_name(&["cpu-test-spin", "cpu-test-none"]);
        stop.store(true, Ordering::Relaxed);
        spinning.join().unwrap();
        assert!(after[0] - before[0] >= 0.05);
        assert_eq!(after[1], 0.0, "no thread has that name");
    }

    #[test]
    fn a_sample_difference_counts_each_live_threads_own_time() {
        // One thread of the name exits between the samples after spinning
        // before the first: it must not subtract from the one that stays.
        let (stop_gone, gone) = spinner("cpu-sample-spin");
        wait_for_cpu(0.0, || cpu_seconds_by_name(&["cpu-sample-spin"])[0]);
        let (stop_kept, kept) = spinner("cpu-sample-spin");
        let before = ThreadCpuSample::now(&["cpu-sample-spin", "cpu-sample-none"]);
        stop_gone.store(true, Ordering::Relaxed);
        gone.join().unwrap();
        let started = Instant::now();
        while ThreadCpuSample::now(&["cpu-sample-spin"]).seconds_since(&before)[0] < 0.05 {
            assert!(started.elapsed() < Duration::from_secs(60), "the spinning thread got no CPU");
            std::thread::sleep(Duration::from_millis(10));
        }
        let seconds = ThreadCpuSample::now(&["cpu-sample-spin", "cpu-sample-none"]).seconds_since(&before);
        stop_kept.store(true, Ordering::Relaxed);
        kept.join().unwrap();
        assert!(seconds[0] >= 0.05, "{seconds:?}");
        assert_eq!(seconds[1], 0.0, "no thread has that name");
    }

    #[test]
    fn a_process_is_read_by_its_pid_and_long_names_by_what_the_kernel_keeps() {
        // 22 bytes: the kernel keeps "cpu-test-pid-sp" (as it keeps
        // "replica-coordin" of the replica's coordinator).
        let name = "cpu-test-pid-spinner-1";
        let (stop, spinning) = spinner(name);
        let pid = std::process::id();
        let read = |prefixes: &[&str]| process_cpu_seconds_by_name(pid, prefixes).unwrap();
        let before = read(&[name, "cpu-test-pid-none"]);
        wait_for_cpu(before[0], || read(&[name])[0]);
        let after = read(&[name, "cpu-test-pid-none"]);
        stop.store(true, Ordering::Relaxed);
        spinning.join().unwrap();
        assert!(after[0] - before[0] >= 0.05, "{before:?} {after:?}");
        assert_eq!(after[1], 0.0, "no thread has that name");
        assert_eq!(comm_prefix("replica-coordinator"), "replica-coordin");
        assert_eq!(comm_prefix("replica-worker-"), "replica-worker-");
        // No process has a PID above the kernel's pid_max (at most 2^22).
        assert!(process_cpu_seconds_by_name(u32::MAX, &[name]).is_err());
    }
}
