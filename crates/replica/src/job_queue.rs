//! The coordinator's hand-off to workers: a bounded FIFO (one slot per
//! worker) on a mutex and two condition variables. Waiters sleep rather
//! than spin: on a machine with fewer cores than workers, a spinning
//! coordinator would take the CPU the workers need.

use std::collections::VecDeque;

use parking_lot::{Condvar, Mutex};

use crate::stop::{StopFlag, WAIT_SLICE};

pub struct JobQueue<T> {
    jobs: Mutex<VecDeque<T>>,
    added: Condvar,
    taken: Condvar,
    capacity: usize,
}

impl<T> JobQueue<T> {
    pub fn new(capacity: usize) -> JobQueue<T> {
        assert!(capacity > 0, "a job queue of 0 slots");
        JobQueue { jobs: Mutex::new(VecDeque::with_capacity(capacity)), added: Condvar::new(), taken: Condvar::new(), capacity }
    }

    /// Waits for a free slot; gives the job back when `give_up` says so
    /// (checked every wait slice).
    pub fn push(&self, job: T, mut give_up: impl FnMut() -> bool) -> Result<(), T> {
        let mut jobs = self.jobs.lock();
        while jobs.len() >= self.capacity {
            if give_up() {
                return Err(job);
            }
            self.taken.wait_for(&mut jobs, WAIT_SLICE);
        }
        jobs.push_back(job);
        drop(jobs);
        self.added.notify_one();
        Ok(())
    }

    /// The next job; `None` once `stop` is requested and nothing is left
    /// (jobs already handed over are always taken: their tickets must
    /// commit for later ones to).
    pub fn pop(&self, stop: &StopFlag) -> Option<T> {
        let mut jobs = self.jobs.lock();
        loop {
            if let Some(job) = jobs.pop_front() {
                drop(jobs);
                self.taken.notify_one();
                return Some(job);
            }
            if stop.is_requested() {
                return None;
            }
            self.added.wait_for(&mut jobs, WAIT_SLICE);
        }
    }
}
