//! The applied source position as a crash must find it: the low-water
//! mark of consecutively committed transactions, plus the ones committed
//! beyond it (MySQL's gaps-aware checkpoint).
//!
//! Workers commit in parallel; without commit order a later transaction
//! may commit before an earlier one. So each committing transaction is
//! given an [`AppliedCheckpoint`] to commit with its rows (the SQL layer
//! writes it into its worker's slot, one redo record with the data): the
//! low-water mark as of now, every transaction committed beyond it, and
//! itself. A transaction counts as committed here only once its commit
//! returned (durable), so a checkpoint never names one a crash could lose.
//!
//! After a crash, the slots' checkpoints are merged ([`AppliedCheckpoint::merge`]):
//! the highest low-water mark, and every position beyond it that any slot
//! names. Each committed transaction is in the checkpoint its own commit
//! wrote or a later one of the same worker, and every position a
//! checkpoint names was committed, so the merge is exactly what was
//! applied. The receiver re-fetches from the low-water mark and the
//! workers skip the transactions named beyond it: none is applied twice,
//! none skipped.

use std::cmp::Ordering;
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;

/// The end of a transaction in the source's binlog.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourcePosition {
    pub file: Arc<str>,
    pub pos: u64,
}

impl Ord for SourcePosition {
    /// In the order the source wrote them: binlog files by sequence
    /// number (`binlog.999999` before `binlog.1000000`), then position.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.file.len(), &*self.file, self.pos).cmp(&(other.file.len(), &*other.file, other.pos))
    }
}

impl PartialOrd for SourcePosition {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What one committing transaction records of the applier's progress.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppliedCheckpoint {
    /// Every transaction up to here is committed.
    pub low_water: Option<SourcePosition>,
    /// Committed beyond the low-water mark, in position order.
    pub beyond: Vec<SourcePosition>,
}

impl AppliedCheckpoint {
    /// The slots' checkpoints as one: the highest low-water mark and what
    /// any of them committed beyond it.
    pub fn merge<'a>(checkpoints: impl IntoIterator<Item = &'a AppliedCheckpoint>) -> AppliedCheckpoint {
        let checkpoints: Vec<&AppliedCheckpoint> = checkpoints.into_iter().collect();
        let low_water = checkpoints.iter().filter_map(|checkpoint| checkpoint.low_water.clone()).max();
        let beyond: BTreeSet<SourcePosition> = checkpoints
            .iter()
            .flat_map(|checkpoint| checkpoint.beyond.iter())
            .filter(|position| low_water.as_ref().is_none_or(|low| *position > low))
            .cloned()
            .collect();
        AppliedCheckpoint { low_water, beyond: beyond.into_iter().collect() }
    }
}

/// The replica's applied positions while it runs; shared by the
/// coordinator (dispatch order) and the workers (commits).
#[derive(Debug, Default)]
pub struct AppliedPositions {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    low_water: Option<SourcePosition>,
    /// Dispatched, in dispatch (= source) order, from the first not yet
    /// under the low-water mark: (ticket, position, committed).
    window: VecDeque<(u64, SourcePosition, bool)>,
    /// Committed outside the window: before a crash (merged from the
    /// slots) or by an applier run since stopped. Arriving again, they
    /// are skipped; every checkpoint repeats them until the low-water
    /// mark passes them, so none is forgotten.
    done_beyond: BTreeSet<SourcePosition>,
}

impl AppliedPositions {
    /// Resuming from `recovered`.
    pub fn new(recovered: AppliedCheckpoint) -> AppliedPositions {
        let state = State { low_water: recovered.low_water, window: VecDeque::new(), done_beyond: recovered.beyond.into_iter().collect() };
        AppliedPositions { state: Mutex::new(state) }
    }

    pub fn low_water(&self) -> Option<SourcePosition> {
        self.state.lock().low_water.clone()
    }

    /// A new applier run: what the last one dispatched and did not commit
    /// is dispatched again; what it committed out of order is kept.
    pub fn start_run(&self) {
        let mut state = self.state.lock();
        let committed: Vec<SourcePosition> =
            state.window.drain(..).filter(|(_, _, committed)| *committed).map(|(_, position, _)| position).collect();
        state.done_beyond.extend(committed);
    }

    /// The coordinator hands `ticket` (the transaction ending at
    /// `position`) to a worker; tickets come in source order.
    pub fn dispatched(&self, ticket: u64, position: SourcePosition) {
        self.state.lock().window.push_back((ticket, position, false));
    }

    /// Whether the transaction ending at `position` was committed before
    /// (a crash, or an earlier run): it is not applied again.
    pub fn already_applied(&self, position: &SourcePosition) -> bool {
        self.state.lock().done_beyond.contains(position)
    }

    /// What `ticket`'s commit records: the low-water mark, what is
    /// committed beyond it, and the transaction itself.
    pub fn checkpoint_for(&self, ticket: u64) -> AppliedCheckpoint {
        let state = self.state.lock();
        let mut beyond: BTreeSet<SourcePosition> = state.done_beyond.clone();
        for (number, position, committed) in &state.window {
            if *committed || *number == ticket {
                beyond.insert(position.clone());
            }
        }
        AppliedCheckpoint { low_water: state.low_water.clone(), beyond: beyond.into_iter().collect() }
    }

    /// Whether some transaction beyond the low-water mark is known to be
    /// committed: a transaction whose end is not known yet (streamed) may
    /// be one of them.
    pub fn any_applied_beyond(&self) -> bool {
        !self.state.lock().done_beyond.is_empty()
    }

    /// `ticket` was dispatched before its end was known (a streamed
    /// transaction): it ends at `position`. Called before its commit,
    /// which is before anything dispatched after it exists.
    pub fn ended_at(&self, ticket: u64, position: SourcePosition) {
        if let Some(entry) = self.state.lock().window.iter_mut().find(|(number, _, _)| *number == ticket) {
            entry.1 = position;
        }
    }

    /// `ticket` will never commit: its transaction was cut off before its
    /// end (streamed, then its connection ended); it comes again as a new
    /// one.
    pub fn withdrawn(&self, ticket: u64) {
        let mut state = self.state.lock();
        state.window.retain(|(number, _, _)| *number != ticket);
        state.advance_low_water();
    }

    /// `ticket`'s commit returned (or it was skipped): the low-water mark
    /// moves over every consecutive committed transaction.
    pub fn committed(&self, ticket: u64) {
        let mut state = self.state.lock();
        if let Some(entry) = state.window.iter_mut().find(|(number, _, _)| *number == ticket) {
            entry.2 = true;
        }
        state.advance_low_water();
    }
}

impl State {
    fn advance_low_water(&mut self) {
        let state = self;
        while state.window.front().is_some_and(|(_, _, committed)| *committed) {
            let (_, position, _) = state.window.pop_front().expect("checked");
            state.low_water = Some(position);
        }
        if let Some(low) = state.low_water.clone() {
            // Positions under the mark need no naming (split_off keeps the
            // ones above).
            let above = state.done_beyond.split_off(&SourcePosition { file: low.file.clone(), pos: low.pos + 1 });
            state.done_beyond = above;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, pos: u64) -> SourcePosition {
        SourcePosition { file: file.into(), pos }
    }

    #[test]
    fn files_order_by_sequence_number() {
        assert!(at("binlog.999999", 900) < at("binlog.1000000", 4));
        assert!(at("binlog.000001", 900) < at("binlog.000002", 4));
        assert!(at("binlog.000002", 4) < at("binlog.000002", 5));
    }

    #[test]
    fn the_low_water_mark_waits_for_gaps_and_checkpoints_name_what_is_beyond() {
        let positions = AppliedPositions::new(AppliedCheckpoint::default());
        for ticket in 0..4 {
            positions.dispatched(ticket, at("b.000001", 100 * (ticket + 1)));
        }
        // 1 and 2 commit before 0.
        assert_eq!(positions.checkpoint_for(1), AppliedCheckpoint { low_water: None, beyond: vec![at("b.000001", 200)] });
        positions.committed(1);
        let second = positions.checkpoint_for(2);
        positions.committed(2);
        assert_eq!(second, AppliedCheckpoint { low_water: None, beyond: vec![at("b.000001", 200), at("b.000001", 300)] });
        assert_eq!(positions.low_water(), None);
        positions.committed(0);
        assert_eq!(positions.low_water(), Some(at("b.000001", 300)));
        assert_eq!(
            positions.checkpoint_for(3),
            AppliedCheckpoint { low_water: Some(at("b.000001", 300)), beyond: vec![at("b.000001", 400)] }
        );
    }

    #[test]
    fn a_crash_resumes_from_the_merge_and_skips_what_committed_beyond() {
        // Worker slots as a crash left them: 0 committed ticket 0 long ago,
        // 1 committed ticket 2 past the gap at ticket 1.
        let slots = [
            AppliedCheckpoint { low_water: None, beyond: vec![at("b.000001", 100)] },
            AppliedCheckpoint { low_water: Some(at("b.000001", 100)), beyond: vec![at("b.000001", 300)] },
        ];
        let merged = AppliedCheckpoint::merge(&slots);
        assert_eq!(merged, AppliedCheckpoint { low_water: Some(at("b.000001", 100)), beyond: vec![at("b.000001", 300)] });
        let positions = AppliedPositions::new(merged);
        assert!(positions.already_applied(&at("b.000001", 300)));
        assert!(!positions.already_applied(&at("b.000001", 200)));
        positions.dispatched(0, at("b.000001", 200));
        positions.dispatched(1, at("b.000001", 300));
        // The skipped one stays named until the mark passes it.
        assert_eq!(
            positions.checkpoint_for(0),
            AppliedCheckpoint { low_water: Some(at("b.000001", 100)), beyond: vec![at("b.000001", 200), at("b.000001", 300)] }
        );
        positions.committed(1);
        positions.committed(0);
        assert_eq!(positions.low_water(), Some(at("b.000001", 300)));
        assert!(!positions.already_applied(&at("b.000001", 300)));
    }

    #[test]
    fn a_streamed_transaction_gets_its_end_before_commit_or_is_withdrawn() {
        let positions = AppliedPositions::new(AppliedCheckpoint::default());
        positions.dispatched(0, at("b.000001", 100));
        // Dispatched while it arrives: where it was then.
        positions.dispatched(1, at("b.000001", 150));
        positions.committed(0);
        positions.ended_at(1, at("b.000001", 900));
        assert_eq!(positions.checkpoint_for(1).beyond, vec![at("b.000001", 900)]);
        positions.committed(1);
        assert_eq!(positions.low_water(), Some(at("b.000001", 900)));
        // Cut off: it never ends here, and the mark moves past its gap.
        positions.dispatched(2, at("b.000001", 950));
        positions.dispatched(3, at("b.000001", 1000));
        positions.committed(3);
        positions.withdrawn(2);
        assert_eq!(positions.low_water(), Some(at("b.000001", 1000)));
        assert!(!positions.any_applied_beyond());
    }

    #[test]
    fn a_new_run_keeps_what_the_last_committed_out_of_order() {
        let positions = AppliedPositions::new(AppliedCheckpoint::default());
        positions.dispatched(0, at("b.000001", 100));
        positions.dispatched(1, at("b.000001", 200));
        positions.committed(1);
        positions.start_run();
        assert!(positions.already_applied(&at("b.000001", 200)));
        positions.dispatched(0, at("b.000001", 100));
        positions.committed(0);
        assert_eq!(positions.low_water(), Some(at("b.000001", 100)));
        assert_eq!(positions.checkpoint_for(5).beyond, vec![at("b.000001", 200)]);
    }
}
