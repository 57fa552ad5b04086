//! The seam between the pipeline and the database: workers call an
//! [`Applier`]'s per-worker session with each transaction's events. The
//! database implementation (decode rows, apply them to the engine, DDL
//! through the SQL layer, commit with the transaction's GTID) comes with
//! the SQL integration; tests use recording fakes.

use protocol::MysqlError;

use crate::applied_positions::AppliedCheckpoint;
use crate::boundary_queue::BoundaryEntry;
use crate::relay::events::TransactionEvents;

/// Makes one session per worker.
pub trait Applier: Send + Sync {
    fn worker(&self, worker_index: usize) -> Box<dyn WorkerApplier>;
}

/// One worker's session. For every transaction: [`WorkerApplier::apply`],
/// then either [`WorkerApplier::commit`] (called in queue order when
/// replica_preserve_commit_order is ON) or [`WorkerApplier::rollback`]
/// (another worker failed before this one's turn to commit came).
pub trait WorkerApplier: Send {
    /// Decodes and applies the transaction's events, without committing.
    fn apply(&mut self, entry: &BoundaryEntry, events: &mut TransactionEvents<'_>) -> Result<(), MysqlError>;

    /// Commits what `apply` did, with the transaction's GTID.
    fn commit(&mut self, entry: &BoundaryEntry) -> Result<(), MysqlError>;

    /// [`WorkerApplier::commit`] that calls `ordered` once the commit's
    /// place in the commit order is fixed, before it is durable: the next
    /// transaction's commit turn begins there (MySQL hands the turn over
    /// once a transaction is in the binlog's flush queue), so ordered
    /// commits share group commits. By default the turn passes when the
    /// commit returns.
    fn commit_ordered(&mut self, entry: &BoundaryEntry, ordered: &dyn Fn()) -> Result<(), MysqlError> {
        let _ = ordered;
        self.commit(entry)
    }

    /// Called before the commit with the applier's progress to commit with
    /// the transaction's rows (see [`crate::applied_positions`]); an
    /// applier without crash-safe positions ignores it.
    fn applied_checkpoint(&mut self, checkpoint: AppliedCheckpoint) {
        let _ = checkpoint;
    }

    /// Undoes what `apply` did.
    fn rollback(&mut self, entry: &BoundaryEntry);
}
