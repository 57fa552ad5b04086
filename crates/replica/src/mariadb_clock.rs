//! MariaDB's group commit ids as the logical clock the scheduler already
//! uses, assigned once per transaction as it arrives, so the scheduler and
//! the coordinator need not know MariaDB.
//!
//! A MariaDB source writes, in each GTID event, the id of the group commit
//! the transaction was part of: transactions with the same id committed
//! together, so none of them saw another's changes, and a replica may
//! apply them in parallel (MariaDB's conservative parallel replication).
//!
//! | transaction | sequence_number | last_committed |
//! |-------------|-----------------|----------------|
//! | same commit id as the group open before it, and groupable | next | the group's (it waits only for what came before the group) |
//! | anything else | next | sequence_number - 1 (it waits for every earlier transaction) |
//!
//! Groupable: has a commit id, FL_TRANSACTIONAL (it can be rolled back if
//! a worker before it fails), FL_ALLOW_PARALLEL, and is neither standalone
//! nor DDL nor XA. Anything else opens no group, so the transaction after
//! it also waits for it: DDL, non-transactional writes and transactions
//! without a commit id run alone, in order.
//!
//! Sequence numbers count transactions of one connection from 1; a new
//! connection starts a new clock (the scheduler treats the epoch change as
//! a barrier).

use crate::boundary::MariadbGroup;
use binlog_format::events::mariadb_gtid::gtid_flags::{
    FL_ALLOW_PARALLEL, FL_COMPLETED_XA, FL_DDL, FL_PREPARED_XA, FL_STANDALONE, FL_TRANSACTIONAL,
};

#[derive(Debug, Default)]
pub struct MariadbClock {
    connection_epoch: u64,
    sequence_number: i64,
    /// The open group: its commit id and the `last_committed` its members get.
    open_group: Option<(u64, i64)>,
}

impl MariadbClock {
    pub fn new() -> MariadbClock {
        MariadbClock::default()
    }

    /// `(last_committed, sequence_number)` for the next transaction of
    /// connection `connection_epoch`.
    pub fn assign(&mut self, group: &MariadbGroup, connection_epoch: u64) -> (i64, i64) {
        if connection_epoch != self.connection_epoch {
            *self = MariadbClock { connection_epoch, ..MariadbClock::default() };
        }
        self.sequence_number += 1;
        let sequence_number = self.sequence_number;
        let commit_id = group.commit_id.filter(|_| groupable(group.flags2));
        let last_committed = match (commit_id, self.open_group) {
            (Some(id), Some((open_id, last_committed))) if id == open_id => last_committed,
            _ => sequence_number - 1,
        };
        self.open_group = commit_id.map(|id| (id, last_committed));
        (last_committed, sequence_number)
    }
}

fn groupable(flags2: u8) -> bool {
    let required = FL_TRANSACTIONAL | FL_ALLOW_PARALLEL;
    let excluded = FL_STANDALONE | FL_DDL | FL_PREPARED_XA | FL_COMPLETED_XA;
    flags2 & required == required && flags2 & excluded == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog_format::events::mariadb_gtid::MariadbGtid;

    const TRX: u8 = FL_TRANSACTIONAL | FL_ALLOW_PARALLEL;

    fn group(seq_no: u64, commit_id: Option<u64>, flags2: u8) -> MariadbGroup {
        MariadbGroup { gtid: MariadbGtid { domain_id: 0, server_id: 1, seq_no }, commit_id, flags2 }
    }

    #[test]
    fn a_group_commit_shares_a_slot_and_ddl_runs_alone() {
        let mut clock = MariadbClock::new();
        let clocks: Vec<(i64, i64)> = [
            group(1, None, TRX),                     // alone
            group(2, Some(10), TRX),                 // group 10 opens: waits for 1
            group(3, Some(10), TRX),                 // joins: waits for 1 only
            group(4, Some(10), TRX | FL_DDL),        // DDL with the same id: alone
            group(5, Some(10), TRX),                 // 10 again but after DDL: waits for 4
            group(6, Some(11), TRX),                 // new group: waits for 5
            group(7, Some(11), FL_ALLOW_PARALLEL),   // not transactional: alone
            group(8, Some(12), TRX | FL_STANDALONE), // standalone: alone
            group(9, Some(12), TRX),                 // waits for 8
        ]
        .iter()
        .map(|g| clock.assign(g, 1))
        .collect();
        assert_eq!(clocks, [(0, 1), (1, 2), (1, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 8), (8, 9)]);
        // A new connection starts the clock again.
        assert_eq!(clock.assign(&group(10, Some(12), TRX), 2), (0, 1));
        assert_eq!(clock.assign(&group(11, Some(12), TRX), 2), (0, 2));
    }
}
