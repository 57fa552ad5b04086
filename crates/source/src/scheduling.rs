//! A binlog dump's thread runs under Linux's SCHED_BATCH policy while it
//! streams: same CPU share as any thread (nice 0), but its wake-ups do not
//! preempt a running thread. On a small machine a dump woken by its rest
//! timer or by a commit then runs when a committing session waits (for
//! fsync, for its client) instead of displacing it, so readers slow
//! commits less; a reader behind by a whole time slice at most. The
//! thread's policy is put back when the dump ends (connection threads
//! serve other commands afterwards).

/// Restores the thread's default policy on drop.
pub struct BatchScheduling {
    entered: bool,
}

impl BatchScheduling {
    /// Switches the calling thread from SCHED_OTHER to SCHED_BATCH; leaves
    /// any other policy (set by an administrator) alone.
    pub fn enter() -> BatchScheduling {
        // SAFETY: plain system calls on the calling thread (pid 0) with a
        // valid sched_param.
        let entered = unsafe {
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_getscheduler(0) == libc::SCHED_OTHER && libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) == 0
        };
        BatchScheduling { entered }
    }
}

impl Drop for BatchScheduling {
    fn drop(&mut self) {
        if self.entered {
            // SAFETY: as in `enter`.
            unsafe {
                let param = libc::sched_param { sched_priority: 0 };
                libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_thread_runs_batch_and_gets_its_policy_back() {
        std::thread::spawn(|| {
            // SAFETY: reads the calling thread's policy.
            let policy = || unsafe { libc::sched_getscheduler(0) };
            assert_eq!(policy(), libc::SCHED_OTHER);
            {
                let _batch = BatchScheduling::enter();
                assert_eq!(policy(), libc::SCHED_BATCH);
            }
            assert_eq!(policy(), libc::SCHED_OTHER);
        })
        .join()
        .unwrap();
    }
}
