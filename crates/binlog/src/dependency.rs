//! The logical clock replicas schedule by: each transaction's
//! `sequence_number` and `last_committed` (the newest transaction it may
//! depend on). Two transactions whose intervals overlap may apply in
//! parallel on a replica.
//!
//! Sequence numbers count from 1 in each file, as MySQL's do; internally a
//! never-reset counter is kept and translated per file.

use std::collections::HashMap;

use crate::options::DependencyTracking;

pub struct DependencyTracker {
    mode: DependencyTracking,
    /// Global counter of the last transaction given a sequence number.
    last_assigned: u64,
    /// Global number of the last transaction of the previous file.
    file_base: u64,
    /// WRITESET: row hash → global number of its last writer.
    writers: HashMap<u64, u64>,
    history_size_max: usize,
    /// WRITESET: transactions up to here may have been forgotten.
    history_start: u64,
}

/// A transaction's place in the logical clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogicalClock {
    pub last_committed: i64,
    pub sequence_number: i64,
    /// The never-reset counter value (for commit-order bookkeeping).
    pub global_sequence: u64,
}

impl DependencyTracker {
    pub fn new(mode: DependencyTracking, history_size_max: usize) -> DependencyTracker {
        DependencyTracker { mode, last_assigned: 0, file_base: 0, writers: HashMap::new(), history_size_max, history_start: 0 }
    }

    /// A new file starts: sequence numbers restart at 1 and nothing in it
    /// depends on anything before it.
    pub fn rotate(&mut self) {
        self.file_base = self.last_assigned;
        self.writers.clear();
        self.history_start = self.last_assigned;
    }

    /// Assigns the next number. `committed_when_queued` is the global
    /// number of the newest transaction whose commit had completed when
    /// this one entered the commit queue (COMMIT_ORDER). `writeset` holds
    /// the hashes of the rows it wrote; empty means "unknown", which makes
    /// it depend on everything before it under WRITESET.
    pub fn assign(&mut self, committed_when_queued: u64, writeset: &[u64]) -> LogicalClock {
        self.last_assigned += 1;
        let global = self.last_assigned;
        let commit_order = committed_when_queued.min(global - 1);
        let dependency = match self.mode {
            DependencyTracking::CommitOrder => commit_order,
            DependencyTracking::Writeset if writeset.is_empty() => global - 1,
            DependencyTracking::Writeset => {
                let mut newest = self.history_start;
                for hash in writeset {
                    if let Some(&writer) = self.writers.get(hash) {
                        newest = newest.max(writer);
                    }
                }
                newest.min(commit_order)
            }
        };
        if self.mode == DependencyTracking::Writeset {
            if writeset.is_empty() {
                // Unknown rows: nobody after it may run before it.
                self.writers.clear();
                self.history_start = global;
            } else {
                if self.writers.len() + writeset.len() > self.history_size_max {
                    self.writers.clear();
                    self.history_start = global - 1;
                }
                for hash in writeset {
                    self.writers.insert(*hash, global);
                }
            }
        }
        let dependency = dependency.max(self.file_base);
        LogicalClock {
            last_committed: (dependency - self.file_base) as i64,
            sequence_number: (global - self.file_base) as i64,
            global_sequence: global,
        }
    }

    /// Makes the next transaction depend on everything before it (used for
    /// transactions that must apply alone).
    pub fn barrier(&mut self) {
        self.writers.clear();
        self.history_start = self.last_assigned;
    }

    /// Resumes numbering in a reopened file (not used: every start opens a new file).
    pub fn last_assigned(&self) -> u64 {
        self.last_assigned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_order_groups_share_last_committed_and_files_restart_at_one() {
        let mut tracker = DependencyTracker::new(DependencyTracking::CommitOrder, 100);
        let a = tracker.assign(0, &[]);
        let b = tracker.assign(0, &[]);
        assert_eq!((a.last_committed, a.sequence_number), (0, 1));
        assert_eq!((b.last_committed, b.sequence_number), (0, 2));
        let c = tracker.assign(2, &[]);
        assert_eq!((c.last_committed, c.sequence_number), (2, 3));
        tracker.rotate();
        let d = tracker.assign(3, &[]);
        assert_eq!((d.last_committed, d.sequence_number), (0, 1));
    }

    #[test]
    fn writeset_lets_disjoint_rows_run_in_parallel() {
        let mut tracker = DependencyTracker::new(DependencyTracking::Writeset, 100);
        let a = tracker.assign(0, &[1]);
        let b = tracker.assign(1, &[2]); // committed after a, but disjoint rows
        let c = tracker.assign(2, &[1]); // conflicts with a
        assert_eq!(a.last_committed, 0);
        assert_eq!(b.last_committed, 0);
        assert_eq!(c.last_committed, 1);
        let ddl = tracker.assign(3, &[]);
        assert_eq!(ddl.last_committed, 3);
        let after = tracker.assign(4, &[9]);
        assert_eq!(after.last_committed, 4);
    }
}
