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

use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::Lsn;
use parking_lot::{Condvar, Mutex};
use redo::{RedoError, RedoLog};

use crate::error::{DatabaseError, Result};

#[derive(Default)]
struct State {
    /// Prepare end LSNs of the sessions waiting for the next group.
    waiting: Vec<Lsn>,
    /// Tickets are handed out in arrival order; the members of every group
    /// taken so far hold tickets below `released_before`.
    next_ticket: u64,
    released_before: u64,
    /// Number of the group the waiting sessions will form.
    forming: u64,
    /// A group is between its redo sync and its last member's binlog commit.
    busy: bool,
    /// The leader is gathering until this many sessions wait.
    gather_target: Option<usize>,
    members_in_binlog: usize,
    last_group_size: usize,
    /// A failed redo sync: every member of that group and later gets it
    /// (the redo log refuses further appends anyway).
    failure: Option<(u64, String)>,
}

pub(crate) struct GroupCommit {
    redo: RedoLog,
    gather_max: Duration,
    state: Mutex<State>,
    /// Per group parity: at most two groups are live (one in its commit,
    /// one forming), so a release wakes its own members and nobody else.
    released: [Condvar; 2],
    /// The gathering leader's target was reached.
    gathered: Condvar,
}

/// A member of a released group; dropping it leaves the group.
pub(crate) struct Member {
    groups: Arc<GroupCommit>,
}

impl Drop for Member {
    fn drop(&mut self) {
        let groups = &self.groups;
        let mut state = groups.state.lock();
        state.members_in_binlog -= 1;
        if state.members_in_binlog == 0 {
            state.busy = false;
            // One session of the forming group becomes its leader.
            if !state.waiting.is_empty() {
                groups.released[(state.forming % 2) as usize].notify_one();
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
            released: [Condvar::new(), Condvar::new()],
            gathered: Condvar::new(),
        }
    }

    /// Returns once the redo is durable up to `prepare_lsn`, as a member of
    /// a group that may now write to the binlog.
    pub fn join(self: &Arc<Self>, prepare_lsn: Lsn) -> Result<Member> {
        let mut state = self.state.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.waiting.push(prepare_lsn);
        let group = state.forming;
        if state.gather_target.is_some_and(|target| state.waiting.len() >= target) {
            self.gathered.notify_one();
        }
        loop {
            if ticket < state.released_before {
                if let Some((failed_from, error)) = &state.failure {
                    if ticket >= *failed_from {
                        let error = error.clone();
                        drop(state);
                        // Still a member: leave so the group can end.
                        drop(Member { groups: self.clone() });
                        return Err(DatabaseError::Redo(RedoError::PreviousIo { first_error: error }));
                    }
                }
                return Ok(Member { groups: self.clone() });
            }
            if state.busy {
                self.released[(group % 2) as usize].wait(&mut state);
                continue;
            }
            // Lead the group being formed.
            debug_assert_eq!(group, state.forming);
            state.busy = true;
            let target = state.last_group_size.max(1);
            if state.waiting.len() < target && !self.gather_max.is_zero() {
                state.gather_target = Some(target);
                let deadline = Instant::now() + self.gather_max;
                while state.waiting.len() < target {
                    if self.gathered.wait_until(&mut state, deadline).timed_out() {
                        break;
                    }
                }
                state.gather_target = None;
            }
            let members = std::mem::take(&mut state.waiting);
            let first = state.released_before;
            let end = state.next_ticket;
            state.forming += 1;
            state.last_group_size = members.len();
            state.members_in_binlog = members.len();
            let target_lsn = members.iter().copied().max().expect("the leader is in its group");
            drop(state);
            // One fdatasync for the whole group (and anything before it).
            let synced = self.redo.wait_durable(target_lsn);
            state = self.state.lock();
            if let Err(error) = synced {
                state.failure.get_or_insert((first, error.to_string()));
            }
            state.released_before = end;
            self.released[(group % 2) as usize].notify_all();
        }
    }
}
