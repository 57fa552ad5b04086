//! Group commit across both logs (`innodb_flush_log_at_trx_commit = 1`).
//!
//! Each log has its own group commit (the redo's write barrier, the
//! binlog's FLUSH/SYNC/COMMIT queues), but chained back to back they split
//! the sessions into cohorts: while one cohort waits for its binlog
//! fdatasync, the next waits for its redo fdatasync, so each fsync serves
//! only a fraction of the sessions and both disks' queues are busy with
//! small groups. This module forms one group for both logs, the way
//! MySQL's binlog leader flushes InnoDB's redo for its whole queue:
//!
//! ```text
//!   prepare (redo record buffered) ──► WAIT for the next group
//!   leader: gather up to `group_commit_gather_max` for the sessions of
//!           the previous group to come back, take every waiting session,
//!           one redo fdatasync up to the group's highest prepare LSN
//!   release the group ──► each member: binlog group commit (the binlog's
//!           FLUSH/SYNC/COMMIT, one fdatasync for the group) ──► leave
//!   the last member to leave ends the group; a waiting session leads the next
//! ```
//!
//! Groups run one at a time, so the redo and binlog fdatasyncs never
//! compete, and sessions that finished the previous group re-join the
//! next one (the gather step) instead of forming a cohort of their own.
//! The prepare record is durable before any member's binlog write, as
//! two-phase commit requires.
//!
//! The gather step waits for as many sessions as the previous group had
//! (a lone session never waits), at most `group_commit_gather_max`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

use engine::Lsn;
use parking_lot::Mutex;
use redo::{RedoError, RedoLog};

use crate::error::{DatabaseError, Result};

/// `failed_from` when no redo sync failed.
const NO_FAILURE: u64 = u64::MAX;

#[derive(Default)]
struct State {
    /// The sessions waiting for the next group: prepare end LSN, thread.
    waiting: Vec<(Lsn, Thread)>,
    /// Tickets are handed out in arrival order.
    next_ticket: u64,
    /// A group is between its redo sync and its last member's binlog commit.
    busy: bool,
    /// The leader gathering until this many sessions wait.
    gathering: Option<(usize, Thread)>,
    members_in_binlog: usize,
    last_group_size: usize,
}

pub(crate) struct GroupCommit {
    redo: RedoLog,
    gather_max: Duration,
    state: Mutex<State>,
    /// The members of every group released so far hold tickets below this.
    /// Read without the lock: a released member wakes (unpark) and goes
    /// straight to the binlog, so the group reaches it close together.
    released_before: AtomicU64,
    /// Tickets from here on failed (a redo sync error); `NO_FAILURE` if none.
    failed_from: AtomicU64,
    /// The first failed redo sync's error.
    failure: Mutex<Option<String>>,
}

/// A member of a released group; dropping it leaves the group.
pub(crate) struct Member {
    groups: Arc<GroupCommit>,
}

impl Drop for Member {
    fn drop(&mut self) {
        let mut state = self.groups.state.lock();
        state.members_in_binlog -= 1;
        if state.members_in_binlog == 0 {
            state.busy = false;
            // The first session of the forming group becomes its leader.
            if let Some((_, thread)) = state.waiting.first() {
                thread.unpark();
            }
        }
    }
}

impl GroupCommit {
    pub fn new(redo: RedoLog, gather_max: Duration) -> GroupCommit {
        GroupCommit {
            redo,
            gather_max,
            state: Mutex::new(State::default()),
            released_before: AtomicU64::new(0),
            failed_from: AtomicU64::new(NO_FAILURE),
            failure: Mutex::new(None),
        }
    }

    /// Whether `ticket`'s group was released; its outcome if so.
    fn released(self: &Arc<Self>, ticket: u64) -> Option<Result<Member>> {
        if ticket >= self.released_before.load(Ordering::Acquire) {
            return None;
        }
        let member = Member { groups: self.clone() };
        if ticket >= self.failed_from.load(Ordering::Acquire) {
            let first_error = self.failure.lock().clone().unwrap_or_default();
            // Still a member: leaving lets the group end.
            drop(member);
            return Some(Err(DatabaseError::Redo(RedoError::PreviousIo { first_error })));
        }
        Some(Ok(member))
    }

    /// Returns once the redo is durable up to `prepare_lsn`, as a member of
    /// a group that may now write to the binlog.
    pub fn join(self: &Arc<Self>, prepare_lsn: Lsn) -> Result<Member> {
        let mut state = self.state.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.waiting.push((prepare_lsn, std::thread::current()));
        if let Some((target, leader)) = &state.gathering {
            if state.waiting.len() >= *target {
                leader.unpark();
            }
        }
        loop {
            if ticket < self.released_before.load(Ordering::Acquire) {
                drop(state);
                return self.released(ticket).expect("released");
            }
            if state.busy {
                drop(state);
                std::thread::park();
                if let Some(outcome) = self.released(ticket) {
                    return outcome;
                }
                state = self.state.lock();
                continue;
            }
            // Lead the group being formed.
            state.busy = true;
            let target = state.last_group_size.max(1);
            if state.waiting.len() < target && !self.gather_max.is_zero() {
                state.gathering = Some((target, std::thread::current()));
                let deadline = Instant::now() + self.gather_max;
                while state.waiting.len() < target {
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    drop(state);
                    std::thread::park_timeout(deadline - now);
                    state = self.state.lock();
                }
                state.gathering = None;
            }
            let members = std::mem::take(&mut state.waiting);
            let end = state.next_ticket;
            state.last_group_size = members.len();
            state.members_in_binlog = members.len();
            drop(state);
            let target_lsn = members.iter().map(|(lsn, _)| *lsn).max().expect("the leader is in its group");
            // One fdatasync for the whole group (and anything before it).
            if let Err(error) = self.redo.wait_durable(target_lsn) {
                self.failure.lock().get_or_insert(error.to_string());
                let first = self.released_before.load(Ordering::Acquire);
                self.failed_from.fetch_min(first, Ordering::AcqRel);
            }
            self.released_before.store(end, Ordering::Release);
            let me = std::thread::current().id();
            for (_, thread) in &members {
                if thread.id() != me {
                    thread.unpark();
                }
            }
            state = self.state.lock();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog::sim_storage::SimStorage;
    use redo::{Durability, Record};
    use std::path::Path;

    fn redo(storage: &SimStorage) -> RedoLog {
        RedoLog::open(Path::new("/redo"), redo::Options::default(), Arc::new(storage.clone()), Default::default()).unwrap().0
    }

    /// Under concurrency every member's prepare is durable when it is
    /// released. (How many groups form depends on scheduling; the next
    /// test checks grouping deterministically.)
    #[test]
    fn every_member_is_durable_when_released() {
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups = Arc::new(GroupCommit::new(log.clone(), Duration::from_millis(1)));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (log, groups) = (log.clone(), groups.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        let lsn = log.append(&Record::opaque(1, vec![7u8; 40]), Durability::Buffered).unwrap();
                        let member = groups.join(lsn).unwrap();
                        assert!(log.durable_lsn() >= lsn, "released before its prepare was durable");
                        drop(member);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    }

    #[test]
    fn sessions_waiting_behind_a_busy_group_share_one_sync() {
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups = Arc::new(GroupCommit::new(log.clone(), Duration::ZERO));
        let lsn = log.append(&Record::opaque(1, vec![1u8; 40]), Durability::Buffered).unwrap();
        // The group stays busy while its member is in the binlog.
        let first = groups.join(lsn).unwrap();
        let syncs_before = log.counters().fsyncs;
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let (log, groups) = (log.clone(), groups.clone());
                std::thread::spawn(move || {
                    let lsn = log.append(&Record::opaque(1, vec![2u8; 40]), Durability::Buffered).unwrap();
                    let member = groups.join(lsn).unwrap();
                    assert!(log.durable_lsn() >= lsn, "released before its prepare was durable");
                    drop(member);
                })
            })
            .collect();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while groups.state.lock().waiting.len() < 3 {
            assert!(std::time::Instant::now() < deadline, "the sessions never queued behind the busy group");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(log.counters().fsyncs, syncs_before, "no sync while the group is busy");
        drop(first);
        for waiter in waiters {
            waiter.join().unwrap();
        }
        assert_eq!(log.counters().fsyncs - syncs_before, 1, "one redo sync for the three waiting sessions");
    }

    #[test]
    fn a_failed_sync_fails_its_group_and_every_later_one() {
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups = Arc::new(GroupCommit::new(log.clone(), Duration::ZERO));
        let lsn = log.append(&Record::opaque(1, vec![1]), Durability::Buffered).unwrap();
        drop(groups.join(lsn).unwrap());
        storage.fail_sync_number(storage.sync_count() + 1);
        let lsn = log.append(&Record::opaque(1, vec![2]), Durability::Buffered).unwrap();
        assert!(groups.join(lsn).is_err());
        assert!(groups.join(lsn).is_err(), "later members fail too");
    }
}
