//! The seam semi-synchronous replication waits through: the COMMIT stage
//! asks it, once per sync batch, to hold the batch's committers until
//! enough replicas acknowledged the batch's last transaction (the `source`
//! crate's `semi_sync` implements it; the log knows nothing of sockets).
//!
//! Where the wait sits (MySQL's `rpl_semi_sync_source_wait_point`):
//!
//! ```text
//! FLUSH ─► SYNC (fdatasync, then readers see the batch) ─► COMMIT stage lock
//!    AFTER_SYNC:   wait for the ack ─► engine commits (hooks) ─► committers released
//!    AFTER_COMMIT: engine commits (hooks) ─► wait for the ack ─► committers released
//! ```
//!
//! AFTER_SYNC is lossless: no other session can see a transaction (the
//! engine has not committed it) before a replica holds it, so a failover
//! to that replica loses nothing anyone read or was told committed. The
//! wait holds the commit stage, as MySQL holds LOCK_commit: later batches
//! flush and sync meanwhile and wait their turn behind it, in binlog order.
//! Transactions written behind the engine-integrated binlog are not waited
//! for here: their commit was decided in redo, and each committer waits
//! for itself once the writer put its events in the files
//! (`database::engine_binlog`, through [`crate::BinaryLog::replica_acks`]).

use std::sync::Arc;

use parking_lot::RwLock;

/// `rpl_semi_sync_source_wait_point`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckWaitPoint {
    AfterSync,
    AfterCommit,
}

/// Semi-synchronous replication as the COMMIT stage sees it.
pub trait ReplicaAcks: Send + Sync {
    /// Where committers wait now; `None` when semi-synchronous replication
    /// is disabled (then nothing is asked).
    fn wait_point(&self) -> Option<AckWaitPoint>;

    /// Returns once enough replicas acknowledged having received the binlog
    /// up to `end_position` of `file_name`, or the timeout passed (the
    /// implementation then falls back to asynchronous replication).
    /// `transactions` is how many commits the wait stands for (they
    /// end at or before that position).
    fn wait_for_ack(&self, file_name: &str, end_position: u64, transactions: u64);
}

/// The log's one optional waiter.
#[derive(Default)]
pub(crate) struct AcksSlot {
    acks: RwLock<Option<Arc<dyn ReplicaAcks>>>,
}

impl AcksSlot {
    pub fn set(&self, acks: Option<Arc<dyn ReplicaAcks>>) {
        *self.acks.write() = acks;
    }

    /// The waiter and its wait point, when it waits at all.
    pub fn active(&self) -> Option<(Arc<dyn ReplicaAcks>, AckWaitPoint)> {
        let acks = self.acks.read().clone()?;
        let point = acks.wait_point()?;
        Some((acks, point))
    }
}
