//! The commit registry: which transactions are in flight, the sequence
//! number of the last commit, and the executed GTID set.
//!
//! One lock guards all three, so a commit's visibility (its sequence
//! number), its GTID and its state change happen in one step: a reader that
//! takes a read view either sees the whole commit (data and GTID) or none
//! of it.

use std::collections::{BTreeMap, HashMap};

use binlog_format::GtidSet;

use crate::redo::Lsn;

/// Transaction ids are handed out from 1 and never reused while the engine
/// runs. 0 is the writer of data loaded from a checkpoint.
pub type TrxId = u64;
pub(crate) const RESTORED_WRITER: TrxId = 0;
/// The commit sequence number of data loaded from a checkpoint.
pub(crate) const RESTORED_COMMIT_SEQ: u64 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrxState {
    /// `log_prepare` has been or is being called. `redo_lsn_lower_bound` is
    /// the redo's LSN before that call, so it is at most the prepare
    /// record's LSN: a checkpoint must keep redo from there.
    Prepared { redo_lsn_lower_bound: Lsn },
    /// Still running, with changes written to redo ahead of its prepare
    /// ([`crate::Transaction::log_changes_ahead`]) from this LSN on.
    LoggedAhead { redo_lsn_lower_bound: Lsn },
    /// Visible to read views with `seq >= this`; the entry goes away once
    /// every version it wrote carries the number itself.
    Committed { seq: u64 },
}

#[derive(Debug)]
pub(crate) struct CommitState {
    pub(crate) last_commit_seq: u64,
    pub(crate) executed_gtids: GtidSet,
    /// The latest [`ApplierSlot`](crate::ApplierSlot) bytes committed per
    /// slot, changed with the data in the same step as the GTID.
    pub(crate) applier_slots: BTreeMap<u32, Vec<u8>>,
    /// Prepared and committed transactions, until their versions are
    /// stamped. An active transaction has no entry: its versions are
    /// invisible to others whether or not it has one.
    pub(crate) states: HashMap<TrxId, TrxState>,
}

impl CommitState {
    pub(crate) fn new() -> CommitState {
        CommitState {
            last_commit_seq: RESTORED_COMMIT_SEQ,
            executed_gtids: GtidSet::new(),
            applier_slots: BTreeMap::new(),
            states: HashMap::new(),
        }
    }

    pub(crate) fn committed_seq(&self, trx: TrxId) -> Option<u64> {
        match self.states.get(&trx) {
            Some(TrxState::Committed { seq }) => Some(*seq),
            _ => None,
        }
    }

    /// The lowest LSN a prepared (not yet committed) transaction may have
    /// logged its prepare record at.
    pub(crate) fn oldest_prepare_lsn(&self) -> Option<Lsn> {
        self.states
            .values()
            .filter_map(|state| match state {
                TrxState::Prepared { redo_lsn_lower_bound } | TrxState::LoggedAhead { redo_lsn_lower_bound } => Some(*redo_lsn_lower_bound),
                _ => None,
            })
            .min()
    }
}
