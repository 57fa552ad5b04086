//! The log's visible end, published by the commit path and read and waited
//! on by log readers (dump threads) without any lock the commit path takes.
//!
//! Why not a `Mutex<VisibleEnd>` with a condvar: every group commit
//! published under that mutex and woke every waiting dump with
//! `notify_all`; each woken dump then took the same mutex (to return from
//! its wait, and again per look-up), so with 16 dumps the committing
//! thread queued behind readers, and on a 2-core machine behind readers
//! that had been preempted while holding it. Measured with
//! `binlogd bench dump --tail-readers`: commits/s fell to about a third.
//!
//! Here readers load the end from atomics (a sequence lock: they retry
//! instead of blocking a publisher) and wait on an event count keyed on
//! the sequence word (`parking_lot_core::park`): a publish bumps the
//! sequence and, only when someone is parked, wakes them all. The only
//! lock shared with readers is parking_lot's bucket lock, held for the
//! few instructions that queue or dequeue a waiter, never while a reader
//! runs. Publishers serialize among themselves (a group's sync leader and
//! a rotation can publish at once) on `publish_lock`, which no reader takes.

use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use parking_lot_core::{ParkResult, DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};

/// How far readers may read: the end of durable (sync_binlog=1) or
/// written (otherwise) data in the active file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisibleEnd {
    pub file_number: u64,
    pub position: u64,
    /// Bumped on every publish, so waiters can tell something changed.
    pub generation: u64,
}

/// Spins of a reader that finds a publish half done before it yields the
/// CPU to the (possibly preempted) publisher.
const SPINS_BEFORE_YIELD: u32 = 64;

pub struct PublishedEnd {
    publish_lock: Mutex<()>,
    /// Odd while a publish is storing `file_number` and `position`;
    /// `generation = sequence / 2`. Its address is also the parking key.
    sequence: AtomicU64,
    file_number: AtomicU64,
    position: AtomicU64,
    /// Readers between announcing a wait and leaving it: a publish with
    /// none skips the wake-up (no bucket lock on the commit path).
    waiters: AtomicU64,
}

impl PublishedEnd {
    pub fn new(file_number: u64, position: u64) -> PublishedEnd {
        PublishedEnd {
            publish_lock: Mutex::new(()),
            sequence: AtomicU64::new(0),
            file_number: AtomicU64::new(file_number),
            position: AtomicU64::new(position),
            waiters: AtomicU64::new(0),
        }
    }

    /// The current end; never blocks (retries while a publish is storing).
    pub fn load(&self) -> VisibleEnd {
        let mut spins = 0u32;
        loop {
            let before = self.sequence.load(Ordering::Acquire);
            if before & 1 == 0 {
                let file_number = self.file_number.load(Ordering::Relaxed);
                let position = self.position.load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                if self.sequence.load(Ordering::Relaxed) == before {
                    return VisibleEnd { file_number, position, generation: before / 2 };
                }
            }
            spins += 1;
            if spins.is_multiple_of(SPINS_BEFORE_YIELD) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    pub fn generation(&self) -> u64 {
        self.sequence.load(Ordering::Acquire) / 2
    }

    /// Moves the end forward to (`file_number`, `position`) and wakes the
    /// waiting readers; an end at or behind the current one is ignored.
    pub fn advance(&self, file_number: u64, position: u64) {
        let _publishing = self.publish_lock.lock();
        let current = (self.file_number.load(Ordering::Relaxed), self.position.load(Ordering::Relaxed));
        if (file_number, position) > current {
            self.store_locked(file_number, position);
            drop(_publishing);
            self.wake_all();
        }
    }

    /// Sets the end, forward or back (RESET BINARY LOGS starts over), and
    /// wakes the waiting readers.
    pub fn reset(&self, file_number: u64, position: u64) {
        let publishing = self.publish_lock.lock();
        self.store_locked(file_number, position);
        drop(publishing);
        self.wake_all();
    }

    fn store_locked(&self, file_number: u64, position: u64) {
        let sequence = self.sequence.load(Ordering::Relaxed);
        self.sequence.store(sequence + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.file_number.store(file_number, Ordering::Relaxed);
        self.position.store(position, Ordering::Relaxed);
        self.sequence.store(sequence + 2, Ordering::Release);
    }

    /// Wakes every parked reader (they re-check what changed). Also used
    /// when the log is poisoned or closed.
    pub fn wake_all(&self) {
        // Pairs with the fence in `wait_for_change`: either this load sees
        // the waiter, or the waiter's check sees the new sequence.
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::Relaxed) > 0 {
            // SAFETY: the key is the address of our own sequence word,
            // which nothing else parks on; no callbacks are run.
            unsafe {
                parking_lot_core::unpark_all(self.key(), DEFAULT_UNPARK_TOKEN);
            }
        }
    }

    /// Waits until the generation differs from `generation` or `deadline`
    /// passes; true when it changed. Spurious returns are fine: callers
    /// loop on what they read.
    pub fn wait_for_change(&self, generation: u64, deadline: Instant) -> bool {
        loop {
            if self.generation() != generation {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            self.waiters.fetch_add(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            // SAFETY: as in `wake_all`; `validate` runs under parking_lot's
            // bucket lock, which `unpark_all` also takes, so a publish
            // between our check and our sleep is not missed.
            let result = unsafe {
                parking_lot_core::park(self.key(), || self.generation() == generation, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, Some(deadline))
            };
            self.waiters.fetch_sub(1, Ordering::Relaxed);
            if let ParkResult::TimedOut = result {
                return self.generation() != generation;
            }
        }
    }

    fn key(&self) -> usize {
        &self.sequence as *const AtomicU64 as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_waiting_reader_wakes_for_a_publish() {
        let end = Arc::new(PublishedEnd::new(1, 100));
        let generation = end.load().generation;
        let waiter = {
            let end = Arc::clone(&end);
            std::thread::spawn(move || {
                let started = Instant::now();
                let changed = end.wait_for_change(generation, Instant::now() + Duration::from_secs(30));
                (changed, started.elapsed(), end.load())
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        end.advance(1, 200);
        let (changed, waited, seen) = waiter.join().unwrap();
        assert!(changed);
        assert!(waited < Duration::from_secs(10), "woke only after {waited:?}");
        assert_eq!((seen.file_number, seen.position), (1, 200));
        assert_eq!(seen.generation, generation + 1);
    }

    #[test]
    fn a_wait_without_publish_times_out_and_an_old_end_is_ignored() {
        let end = PublishedEnd::new(2, 500);
        end.advance(2, 400);
        end.advance(1, 900);
        let seen = end.load();
        assert_eq!((seen.file_number, seen.position, seen.generation), (2, 500, 0));
        let started = Instant::now();
        assert!(!end.wait_for_change(0, Instant::now() + Duration::from_millis(30)));
        assert!(started.elapsed() >= Duration::from_millis(30));
        end.reset(1, 4);
        assert_eq!((end.load().file_number, end.load().position, end.load().generation), (1, 4, 1));
    }

    /// Readers wait for each next generation while a publisher advances
    /// as fast as it can: a lost wake-up would leave a reader asleep until
    /// its (long) deadline, and every reader must see every end it loads
    /// consistent (file and position from the same publish).
    #[test]
    fn no_wake_up_is_lost_under_a_stress_loop() {
        const PUBLISHES: u64 = 20_000;
        const READERS: usize = 4;
        let end = Arc::new(PublishedEnd::new(1, 0));
        let readers: Vec<_> = (0..READERS)
            .map(|_| {
                let end = Arc::clone(&end);
                std::thread::spawn(move || {
                    let mut seen = end.load();
                    let mut wait_max = Duration::ZERO;
                    while seen.position < PUBLISHES {
                        let started = Instant::now();
                        assert!(
                            end.wait_for_change(seen.generation, Instant::now() + Duration::from_secs(20)),
                            "reader stuck at generation {}",
                            seen.generation
                        );
                        wait_max = wait_max.max(started.elapsed());
                        let next = end.load();
                        // Every publish sets file_number = position / 1000 + 1.
                        assert_eq!(next.file_number, next.position / 1000 + 1, "torn read {next:?}");
                        assert!(next.generation > seen.generation && next.position > seen.position);
                        seen = next;
                    }
                    wait_max
                })
            })
            .collect();
        for position in 1..=PUBLISHES {
            end.advance(position / 1000 + 1, position);
            if position % 1000 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        for reader in readers {
            let wait_max = reader.join().unwrap();
            assert!(wait_max < Duration::from_secs(10), "a reader slept {wait_max:?}: lost wake-up");
        }
    }

    /// A reader that never comes back to read (parked forever, or busy)
    /// does not slow publishes: advance never waits for a reader.
    #[test]
    fn a_stalled_reader_does_not_block_publishes() {
        let end = Arc::new(PublishedEnd::new(1, 0));
        let stop = Arc::new(AtomicBool::new(false));
        // Holds a stale generation and waits on it once, then never reads.
        let stalled = {
            let end = Arc::clone(&end);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                end.wait_for_change(0, Instant::now() + Duration::from_secs(30));
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        let started = Instant::now();
        for position in 1..=100_000u64 {
            end.advance(1, position);
        }
        let elapsed = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        stalled.join().unwrap();
        assert_eq!(end.load().position, 100_000);
        assert!(elapsed < Duration::from_secs(5), "100000 publishes took {elapsed:?}");
    }
}
