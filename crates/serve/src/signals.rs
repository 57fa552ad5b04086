//! SIGINT and SIGTERM: blocked in every thread (call [`block`] before
//! spawning any), then awaited with `sigwait` by the main thread, so a
//! signal is a normal event rather than an interrupt in some random thread.

/// Blocks SIGINT and SIGTERM in the calling thread and the threads it
/// spawns afterwards.
pub fn block() -> std::io::Result<()> {
    // SAFETY: plain libc calls on a local, initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        let result = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if result != 0 {
            return Err(std::io::Error::from_raw_os_error(result));
        }
    }
    Ok(())
}

/// Waits for SIGINT or SIGTERM; returns its name.
pub fn wait() -> &'static str {
    // SAFETY: as in `block`; sigwait writes the signal number into `signal`.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        let mut signal: libc::c_int = 0;
        loop {
            if libc::sigwait(&set, &mut signal) == 0 {
                return if signal == libc::SIGINT { "SIGINT" } else { "SIGTERM" };
            }
        }
    }
}
