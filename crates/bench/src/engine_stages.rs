//! `bench engine`'s per-group stage breakdown: where one cycle of the
//! cross-log group commit goes (mean µs per group, from the database's
//! `binlogd_group_commit_*` sums over the run; see
//! `database/src/group_commit_stages.rs` for what each stage spans).

use database::DatabaseCounters;
use serde::Serialize;

use super::report::Table;

/// Mean microseconds per group of each stage, over one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StageBreakdown {
    pub groups: u64,
    /// Sessions per group (the leader included).
    pub group_size: f64,
    /// Previous group ended until the next leader runs.
    pub between_groups_us: f64,
    /// The leader waiting for the previous group's sessions.
    pub gather_us: f64,
    /// Share of gathers that ended at the gather's limit.
    pub gather_timeout_share: f64,
    pub redo_write_us: f64,
    pub redo_sync_us: f64,
    /// The binlog's FLUSH (writes), SYNC (fdatasync) and COMMIT (the
    /// engine commits), per database group.
    pub binlog_flush_us: f64,
    pub binlog_sync_us: f64,
    pub engine_commit_us: f64,
    /// The binlog batch's time outside those three stages (queueing,
    /// locks, the leader collecting its results).
    pub binlog_other_us: f64,
    /// The leader's outcomes handed out until its group ended.
    pub hand_off_us: f64,
    /// The leader's whole cycle (gather to group end).
    pub leader_us: f64,
    /// Outcomes handed out until the group's last member ran again.
    pub wake_last_us: f64,
    /// The same for the average member.
    pub wake_member_us: f64,
    /// `between_groups_us + leader_us`: one group every this often.
    pub cycle_us: f64,
}

impl StageBreakdown {
    /// The run between two counter snapshots.
    pub fn between(before: &DatabaseCounters, after: &DatabaseCounters) -> StageBreakdown {
        let (b, a) = (&before.group_commit, &after.group_commit);
        let groups = a.groups - b.groups;
        let per = |count: u64, total: u64| if count > 0 { total as f64 / count as f64 } else { 0.0 };
        let per_group = |total: u64| per(groups, total);
        let binlog_flush = after.binlog_flush_stage_us - before.binlog_flush_stage_us;
        let binlog_sync = after.binlog_sync_stage_us - before.binlog_sync_stage_us;
        let engine_commit = after.binlog_commit_stage_us - before.binlog_commit_stage_us;
        let binlog = a.binlog_us - b.binlog_us;
        let between_groups = a.between_groups_us - b.between_groups_us;
        let leader = a.leader_us - b.leader_us;
        StageBreakdown {
            groups,
            group_size: per_group(a.members - b.members),
            between_groups_us: per_group(between_groups),
            gather_us: per_group(a.gather_us - b.gather_us),
            gather_timeout_share: per_group(a.gather_timeouts - b.gather_timeouts),
            redo_write_us: per_group(a.redo_write_us - b.redo_write_us),
            redo_sync_us: per_group(a.redo_sync_us - b.redo_sync_us),
            binlog_flush_us: per_group(binlog_flush),
            binlog_sync_us: per_group(binlog_sync),
            engine_commit_us: per_group(engine_commit),
            binlog_other_us: per_group(binlog.saturating_sub(binlog_flush + binlog_sync + engine_commit)),
            hand_off_us: per_group(a.hand_off_us - b.hand_off_us),
            leader_us: per_group(leader),
            wake_last_us: per(a.woken_groups - b.woken_groups, a.wake_last_us - b.wake_last_us),
            wake_member_us: per(a.woken_members - b.woken_members, a.wake_member_us - b.wake_member_us),
            cycle_us: per_group(between_groups + leader),
        }
    }
}

/// One row per run: mean µs per group of each stage.
pub fn table(runs: &[(u32, &StageBreakdown)]) -> Table {
    let mut table = Table::new(&[
        "sessions",
        "groups",
        "size",
        "between",
        "gather",
        "timed out",
        "redo write",
        "redo sync",
        "bl flush",
        "bl sync",
        "eng commit",
        "bl other",
        "hand-off",
        "leader",
        "wake last",
        "wake avg",
        "cycle",
    ]);
    for (sessions, stages) in runs {
        let us = |value: f64| format!("{value:.0}");
        table.push_row(vec![
            sessions.to_string(),
            stages.groups.to_string(),
            format!("{:.1}", stages.group_size),
            us(stages.between_groups_us),
            us(stages.gather_us),
            format!("{:.0}%", stages.gather_timeout_share * 100.0),
            us(stages.redo_write_us),
            us(stages.redo_sync_us),
            us(stages.binlog_flush_us),
            us(stages.binlog_sync_us),
            us(stages.engine_commit_us),
            us(stages.binlog_other_us),
            us(stages.hand_off_us),
            us(stages.leader_us),
            us(stages.wake_last_us),
            us(stages.wake_member_us),
            us(stages.cycle_us),
        ]);
    }
    table
}
