//! `--server-cpus` and `--client-cpus`: the servers and sysbench on CPUs
//! of their own.
//!
//! On a machine with few cores the server and its client compete for
//! them, so a run's TPS mixes the server's cost per transaction with
//! sysbench's. Pinned apart, the server's throughput is bounded by its
//! own CPUs (or its fsyncs), which is what the comparison is about. Both
//! servers get the same CPUs, and every thread a process starts inherits
//! them: the affinity is set in the child between fork and exec.

use std::os::unix::process::CommandExt as _;
use std::process::Command;
use std::str::FromStr;

/// A set of CPU numbers, written `0`, `0,2` or `0-3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

impl FromStr for CpuList {
    type Err = String;

    fn from_str(text: &str) -> Result<CpuList, String> {
        let mut cpus = Vec::new();
        for part in text.split(',').map(str::trim) {
            let number = |text: &str| text.trim().parse::<usize>().map_err(|_| format!("`{text}` in `{part}` is not a CPU number"));
            let (first, last) = match part.split_once('-') {
                Some((first, last)) => (number(first)?, number(last)?),
                None => (number(part)?, number(part)?),
            };
            if first > last || last >= libc::CPU_SETSIZE as usize {
                return Err(format!("`{part}` is not a range of CPUs below {}", libc::CPU_SETSIZE));
            }
            cpus.extend(first..=last);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuList(cpus))
    }
}

impl std::fmt::Display for CpuList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let numbers: Vec<String> = self.0.iter().map(usize::to_string).collect();
        f.write_str(&numbers.join(","))
    }
}

impl CpuList {
    /// Makes `command`'s process (and every thread it starts) run only on
    /// these CPUs.
    pub fn pin(&self, command: &mut Command) {
        // SAFETY: cpu_set_t is plain bits, for which all zeroes is the
        // empty set; CPU_SET writes inside it for numbers below
        // CPU_SETSIZE, which `from_str` guarantees.
        let set = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in &self.0 {
                libc::CPU_SET(cpu, &mut set);
            }
            set
        };
        // SAFETY: the closure runs in the child between fork and exec,
        // where only async-signal-safe calls are allowed: it makes one
        // system call on a set built before the fork, and allocates
        // nothing.
        unsafe {
            command.pre_exec(move || match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges_read_as_sorted_cpu_numbers() {
        assert_eq!("1".parse::<CpuList>().unwrap().to_string(), "1");
        assert_eq!("2,0-1".parse::<CpuList>().unwrap().to_string(), "0,1,2");
        assert!("1-0".parse::<CpuList>().is_err());
        assert!("x".parse::<CpuList>().is_err());
        assert!("99999".parse::<CpuList>().is_err());
    }

    #[test]
    fn a_pinned_child_runs_only_on_its_cpus() {
        let mut command = Command::new("sh");
        command.args(["-c", "grep Cpus_allowed_list /proc/self/status"]);
        "0".parse::<CpuList>().unwrap().pin(&mut command);
        let output = command.output().expect("sh runs");
        assert_eq!(String::from_utf8_lossy(&output.stdout).split_whitespace().last(), Some("0"));
    }
}
