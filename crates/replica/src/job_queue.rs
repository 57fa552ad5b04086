//! The coordinator's hand-off to workers: a bounded FIFO on a mutex and
//! two condition variables. Waiters sleep rather than spin: on a machine
//! with fewer cores than workers, a spinning coordinator would take the
//! CPU the workers need.
//!
//! A coordinator waiting for a free slot is woken once the queue has
//! drained to a quarter of its capacity, not at every job taken: waking a
//! sleeping thread is a system call and a context switch, and one at
//! every job took about a fifth of a worker's CPU on small (sysbench)
//! transactions. Taking a job when nobody waits costs no wake.

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
                let drained = jobs.len() <= self.capacity / 4;
                drop(jobs);
                if drained {
                    self.taken.notify_one();
                }
                return Some(job);
            }
            if stop.is_requested() {
                return None;
            }
            self.added.wait_for(&mut jobs, WAIT_SLICE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_refuses_a_job_until_one_is_taken_and_keeps_the_order() {
        let queue = JobQueue::new(4);
        let stop = StopFlag::new();
        for job in 0..4 {
            queue.push(job, || panic!("a queue with room does not wait")).unwrap();
        }
        assert_eq!(queue.push(4, || true), Err(4), "full");
        assert_eq!(queue.pop(&stop), Some(0));
        queue.push(4, || panic!("a slot is free")).unwrap();
        let taken: Vec<_> = (0..4).map_while(|_| queue.pop(&stop)).collect();
        assert_eq!(taken, vec![1, 2, 3, 4]);
    }

    #[test]
    fn a_waiting_coordinator_gets_its_slot_as_workers_take_jobs() {
        let queue = std::sync::Arc::new(JobQueue::new(4));
        let producer = {
            let queue = queue.clone();
            std::thread::spawn(move || {
                for job in 0..100 {
                    queue.push(job, || false).unwrap();
                }
            })
        };
        let stop = StopFlag::new();
        let taken: Vec<_> = (0..100).map_while(|_| queue.pop(&stop)).collect();
        producer.join().unwrap();
        assert_eq!(taken, (0..100).collect::<Vec<_>>());
    }
}
