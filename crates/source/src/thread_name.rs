//! A connection thread is named `binlog-dump` while it streams the binlog,
//! so that `top -H`, `perf` and `binlogd bench dump --tail-readers` (which
//! sums its threads' CPU time by name) tell dumps from sessions. The old
//! name is put back when the dump ends: connection threads serve other
//! commands afterwards.

/// Linux thread names are at most 15 bytes and a NUL.
const NAME_BYTES: usize = 16;

/// The thread name that dump threads carry.
pub const DUMP_THREAD_NAME: &str = "binlog-dump";
/// The same for prctl (the test checks they agree).
const DUMP_THREAD_NAME_C: &std::ffi::CStr = c"binlog-dump";

/// Restores the thread's previous name on drop.
pub struct DumpThreadName {
    previous: Option<[u8; NAME_BYTES]>,
}

impl DumpThreadName {
    /// Renames the calling thread to [`DUMP_THREAD_NAME`].
    pub fn enter() -> DumpThreadName {
        let mut previous = [0u8; NAME_BYTES];
        // SAFETY: PR_GET_NAME writes at most 16 bytes into the buffer
        // given; PR_SET_NAME reads a NUL-terminated string of at most 16.
        let previous = unsafe {
            (libc::prctl(libc::PR_GET_NAME, previous.as_mut_ptr()) == 0 && libc::prctl(libc::PR_SET_NAME, DUMP_THREAD_NAME_C.as_ptr()) == 0)
                .then_some(previous)
        };
        DumpThreadName { previous }
    }
}

impl Drop for DumpThreadName {
    fn drop(&mut self) {
        if let Some(previous) = &self.previous {
            // SAFETY: as in `enter`; `previous` is NUL-terminated (the
            // kernel wrote it so).
            unsafe {
                libc::prctl(libc::PR_SET_NAME, previous.as_ptr());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current_name() -> String {
        // SAFETY: gettid has no preconditions.
        let thread_id = unsafe { libc::gettid() };
        std::fs::read_to_string(format!("/proc/self/task/{thread_id}/comm")).unwrap().trim_end().to_string()
    }

    #[test]
    fn a_dump_thread_carries_the_dump_name_and_gets_its_own_back() {
        std::thread::Builder::new()
            .name("mysql-conn-7".into())
            .spawn(|| {
                assert_eq!(current_name(), "mysql-conn-7");
                {
                    let _named = DumpThreadName::enter();
                    assert_eq!(current_name(), DUMP_THREAD_NAME);
                }
                assert_eq!(current_name(), "mysql-conn-7");
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
