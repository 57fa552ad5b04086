use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// A child process a test started: stopped by its PID with SIGTERM (a
/// clean shutdown) and waited for when dropped, so a failing test leaves
/// no server or reader behind.
pub struct ChildGuard {
    child: Child,
}

impl ChildGuard {
    pub fn new(child: Child) -> ChildGuard {
        ChildGuard { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The process itself, for its pipes.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Its exit status, if it has ended.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().unwrap()
    }

    pub fn is_running(&mut self) -> bool {
        self.try_wait().is_none()
    }

    /// SIGTERM, then wait for it to end.
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal(libc::SIGTERM);
        self.child.wait().unwrap()
    }

    /// SIGKILL (no shutdown at all), then wait for it to end.
    pub fn kill(&mut self) -> ExitStatus {
        self.signal(libc::SIGKILL);
        self.child.wait().unwrap()
    }

    /// Waits up to `timeout` for it to end by itself.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Signals the process only while it runs: once it has been waited
    /// for, its PID may belong to another process.
    fn signal(&mut self, signal: libc::c_int) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: kill(2) on our own child's PID, which it still holds
            // (not yet waited for).
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, signal);
            }
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.signal(libc::SIGTERM);
        let _ = self.child.wait();
    }
}
