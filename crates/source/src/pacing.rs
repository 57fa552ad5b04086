//! When a dump that has caught up sends again: at the next multiple of
//! `binlogd_dump_send_delay` on the monotonic clock, the same instants for
//! every dump, instead of a full delay after its own last send. A reader
//! still sees a transaction at most one delay after it became visible,
//! but the dumps following the tail wake together: one timer expiry wakes
//! them all (on a virtual machine each timer programmed and fired is a
//! trip to the hypervisor), and they read the same just-written bytes
//! while they are in cache. Measured with `bench dump --tail-readers 0,16`
//! (five alternations, 2 shared cores): the 16 dump threads used 81
//! instead of 89 ms of CPU per second, the readers 48 instead of 51; a
//! small gain, inside the noise of single runs.

use std::time::Duration;

/// Sleeps until the next multiple of `period` of CLOCK_MONOTONIC (a
/// shorter sleep than `period`, never a longer one).
pub fn sleep_to_next_tick(period: Duration) {
    let period_ns = period.as_nanos().max(1);
    let now_ns = monotonic_ns();
    let next_ns = (now_ns / period_ns + 1) * period_ns;
    let deadline = libc::timespec { tv_sec: (next_ns / 1_000_000_000) as libc::time_t, tv_nsec: (next_ns % 1_000_000_000) as libc::c_long };
    // SAFETY: a plain system call with a valid timespec; EINTR (a signal)
    // is retried with the same absolute deadline.
    while unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &deadline, std::ptr::null_mut()) } == libc::EINTR {}
}

fn monotonic_ns() -> u128 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec it is given; CLOCK_MONOTONIC
    // always exists on Linux.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
    }
    now.tv_sec as u128 * 1_000_000_000 + now.tv_nsec as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each sleep ends on a tick: never later than a period after it
    /// started (give or take scheduling), and sleepers that start at
    /// different moments wake at the same tick.
    #[test]
    fn sleeps_end_on_the_shared_ticks() {
        let period = Duration::from_millis(50);
        for _ in 0..5 {
            let started = std::time::Instant::now();
            sleep_to_next_tick(period);
            let woke_ns = monotonic_ns();
            assert!(started.elapsed() <= period + Duration::from_millis(200), "slept {:?}", started.elapsed());
            // Woken at most a scheduling delay after a tick.
            let past_tick = Duration::from_nanos((woke_ns % period.as_nanos()) as u64);
            assert!(past_tick < Duration::from_millis(30), "woke {past_tick:?} after a tick");
            std::thread::sleep(Duration::from_millis(17));
        }
    }
}
