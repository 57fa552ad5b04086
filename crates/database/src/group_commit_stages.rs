//! Where a cross-log group's time goes (`group_commit.rs`), as sums over
//! groups: a few `Instant`s per group and one per member, no log lines,
//! so the figures can stay on in production and a benchmark can divide
//! them by `groups` for a per-group breakdown
//! (`binlogd_group_commit_<stage>_us_total` in `SHOW GLOBAL STATUS`).
//!
//! ```text
//!   previous group ended ─► next leader runs        between_groups_us
//!   leader waits for the previous group's sessions  gather_us
//!   redo write (the group's prepares)               redo_write_us
//!   redo fdatasync                                  redo_sync_us
//!   binlog batch (FLUSH, SYNC, COMMIT and between)  binlog_us
//!   leader has the outcomes ─► group ended          hand_off_us
//!   outcomes handed ─► the last member runs again   wake_last_us
//! ```
//!
//! `leader_us` is the leader's whole cycle, from taking the lead to ending
//! the group; the stages above inside it add up to it but for the
//! bookkeeping between them. The binlog's own stages (FLUSH, SYNC, COMMIT
//! = the engine commits) are the binlog's counters
//! (`binlog::Counters::flush_stage_us` ...).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// The stage sums at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupCommitStages {
    pub groups: u64,
    /// Sessions in those groups (leaders included).
    pub members: u64,
    pub between_groups_us: u64,
    pub gather_us: u64,
    /// Gathers that ended at `binlogd_group_commit_gather_max` with
    /// fewer sessions than the previous group had.
    pub gather_timeouts: u64,
    pub redo_write_us: u64,
    pub redo_sync_us: u64,
    pub binlog_us: u64,
    pub hand_off_us: u64,
    pub leader_us: u64,
    /// Per group with other members: from the leader handing out the
    /// outcomes until its last member resumed.
    pub wake_last_us: u64,
    /// Groups counted in `wake_last_us` (those with members besides the
    /// leader).
    pub woken_groups: u64,
    /// Per member other than the leader: from the hand-off until it
    /// resumed, summed.
    pub wake_member_us: u64,
    pub woken_members: u64,
}

impl crate::DatabaseCounters {
    /// The group commit's stage times as `SHOW GLOBAL STATUS` shows them
    /// (no MySQL names: MySQL has only the performance_schema's stage
    /// events for this).
    pub fn group_commit_status(&self) -> [(&'static str, u64); 17] {
        let stages = &self.group_commit;
        [
            ("binlogd_group_commit_groups", stages.groups),
            ("binlogd_group_commit_members", stages.members),
            ("binlogd_group_commit_between_groups_us_total", stages.between_groups_us),
            ("binlogd_group_commit_gather_us_total", stages.gather_us),
            ("binlogd_group_commit_gather_timeouts", stages.gather_timeouts),
            ("binlogd_group_commit_redo_write_us_total", stages.redo_write_us),
            ("binlogd_group_commit_redo_sync_us_total", stages.redo_sync_us),
            ("binlogd_group_commit_binlog_us_total", stages.binlog_us),
            ("binlogd_group_commit_binlog_flush_us_total", self.binlog_flush_stage_us),
            ("binlogd_group_commit_binlog_sync_us_total", self.binlog_sync_stage_us),
            ("binlogd_group_commit_engine_commit_us_total", self.binlog_commit_stage_us),
            ("binlogd_group_commit_hand_off_us_total", stages.hand_off_us),
            ("binlogd_group_commit_leader_us_total", stages.leader_us),
            ("binlogd_group_commit_wake_last_us_total", stages.wake_last_us),
            ("binlogd_group_commit_woken_groups", stages.woken_groups),
            ("binlogd_group_commit_wake_member_us_total", stages.wake_member_us),
            ("binlogd_group_commit_woken_members", stages.woken_members),
        ]
    }
}

/// The running sums, added to by each group's leader and members.
#[derive(Default)]
pub(crate) struct StageClock {
    groups: AtomicU64,
    members: AtomicU64,
    between_groups_us: AtomicU64,
    gather_us: AtomicU64,
    gather_timeouts: AtomicU64,
    redo_write_us: AtomicU64,
    redo_sync_us: AtomicU64,
    binlog_us: AtomicU64,
    hand_off_us: AtomicU64,
    leader_us: AtomicU64,
    wake_last_us: AtomicU64,
    woken_groups: AtomicU64,
    wake_member_us: AtomicU64,
    woken_members: AtomicU64,
}

/// One stage of a group, for [`StageClock::add`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stage {
    BetweenGroups,
    Gather,
    RedoWrite,
    RedoSync,
    Binlog,
    HandOff,
    Leader,
}

impl StageClock {
    /// Adds the time since `since` to `stage`; returns now, where the
    /// next stage starts.
    pub fn add(&self, stage: Stage, since: Instant) -> Instant {
        let now = Instant::now();
        let counter = match stage {
            Stage::BetweenGroups => &self.between_groups_us,
            Stage::Gather => &self.gather_us,
            Stage::RedoWrite => &self.redo_write_us,
            Stage::RedoSync => &self.redo_sync_us,
            Stage::Binlog => &self.binlog_us,
            Stage::HandOff => &self.hand_off_us,
            Stage::Leader => &self.leader_us,
        };
        counter.fetch_add(micros(now - since), Ordering::Relaxed);
        now
    }

    /// Counts a group of `members` sessions (the leader included).
    pub fn group(&self, members: usize) {
        self.groups.fetch_add(1, Ordering::Relaxed);
        self.members.fetch_add(members as u64, Ordering::Relaxed);
    }

    pub fn gather_timed_out(&self) {
        self.gather_timeouts.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> GroupCommitStages {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        GroupCommitStages {
            groups: load(&self.groups),
            members: load(&self.members),
            between_groups_us: load(&self.between_groups_us),
            gather_us: load(&self.gather_us),
            gather_timeouts: load(&self.gather_timeouts),
            redo_write_us: load(&self.redo_write_us),
            redo_sync_us: load(&self.redo_sync_us),
            binlog_us: load(&self.binlog_us),
            hand_off_us: load(&self.hand_off_us),
            leader_us: load(&self.leader_us),
            wake_last_us: load(&self.wake_last_us),
            woken_groups: load(&self.woken_groups),
            wake_member_us: load(&self.wake_member_us),
            woken_members: load(&self.woken_members),
        }
    }
}

/// A group's hand-off to its other members: each member, once it runs
/// again, says so; the last one adds the group's wake time.
pub(crate) struct GroupWake {
    handed_at: Instant,
    remaining: AtomicUsize,
    latest_us: AtomicU64,
}

impl GroupWake {
    /// For a group whose leader hands out `others` members' outcomes now.
    pub fn new(others: usize) -> GroupWake {
        GroupWake { handed_at: Instant::now(), remaining: AtomicUsize::new(others), latest_us: AtomicU64::new(0) }
    }

    /// Called by each member other than the leader once it has resumed
    /// with its outcome.
    pub fn resumed(&self, clock: &StageClock) {
        let waited_us = micros(self.handed_at.elapsed());
        clock.wake_member_us.fetch_add(waited_us, Ordering::Relaxed);
        clock.woken_members.fetch_add(1, Ordering::Relaxed);
        self.latest_us.fetch_max(waited_us, Ordering::AcqRel);
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            clock.wake_last_us.fetch_add(self.latest_us.load(Ordering::Acquire), Ordering::Relaxed);
            clock.woken_groups.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn micros(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_member_to_resume_counts_its_group_once() {
        let clock = StageClock::default();
        let wake = GroupWake::new(3);
        for _ in 0..3 {
            wake.resumed(&clock);
        }
        let stages = clock.snapshot();
        assert_eq!((stages.woken_groups, stages.woken_members), (1, 3));
        assert!(stages.wake_last_us <= stages.wake_member_us, "{stages:?}");
    }
}
