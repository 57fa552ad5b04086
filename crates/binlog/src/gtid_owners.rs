//! Given GTIDs (MySQL's `gtid_next = 'uuid:N'`) and their ownership.
//!
//! A replica commits each source transaction with the source's GTID. Two
//! sessions may try the same GTID (an applier restarted while an old
//! worker still runs, or `mysqlbinlog | mysql` replayed twice): MySQL lets
//! the first *own* it, the second waits until the owner commits or rolls
//! back, then skips it if it was committed. [`GtidOwners::acquire`] is
//! that rule:
//!
//! - under the owners lock it checks "executed?" then "owned?", so no two
//!   sessions own one GTID, and a GTID is released only after it is in
//!   the executed set (commit) or never will be (rollback): the next
//!   acquirer sees one or the other;
//! - a GTID with the server's own UUID also raises the automatic
//!   numbering's floor *before* the executed check, so an automatic
//!   commit can never be numbered with a GTID some session owns: either
//!   the automatic commit read the floor first (and its GTID is executed
//!   by the time the acquirer checks, so the acquirer skips), or it reads
//!   the raised floor and numbers past it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use binlog_format::gtid_set::{Gtid, Uuid};
use parking_lot::{Condvar, Mutex};

/// A transaction's GTID chosen by the caller, with what the source's Gtid
/// event said about it (the `immediate_*` fields stay local).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GivenGtid {
    pub gtid: Gtid,
    /// The source's `original_commit_timestamp` (µs); `None`: this commit's.
    pub original_commit_timestamp_us: Option<u64>,
    /// The source's `original_server_version`; `None`: this server's.
    pub original_server_version: Option<u32>,
}

impl GivenGtid {
    pub fn new(gtid: Gtid) -> GivenGtid {
        GivenGtid { gtid, original_commit_timestamp_us: None, original_server_version: None }
    }
}

/// How a commit with a given GTID ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome<T> {
    Committed(T),
    /// The GTID was already executed (possibly by a concurrent owner that
    /// committed while this one waited): nothing was written, as MySQL
    /// skips such a transaction silently.
    SkippedAlreadyExecuted(Gtid),
}

/// The outcome of [`GtidOwners::acquire`].
pub enum Ownership {
    Owned(OwnedGtid),
    AlreadyExecuted,
}

/// How often a waiting [`GtidOwners::acquire_unless`] checks for an interruption.
pub const INTERRUPT_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// GTIDs owned by sessions that have not committed or rolled back yet.
pub struct GtidOwners {
    server_uuid: Uuid,
    owned: Mutex<HashSet<Gtid>>,
    released: Condvar,
    /// Highest gno with the server's UUID ever owned: automatic numbering
    /// starts above it.
    own_gno_floor: AtomicU64,
}

impl GtidOwners {
    pub fn new(server_uuid: Uuid) -> GtidOwners {
        GtidOwners { server_uuid, owned: Mutex::new(HashSet::new()), released: Condvar::new(), own_gno_floor: AtomicU64::new(0) }
    }

    /// Owns `gtid` unless `is_executed` says it is executed; waits while
    /// another session owns it. `is_executed` must read the set the owner's
    /// commit adds the GTID to before it releases ownership.
    pub fn acquire(self: &Arc<Self>, gtid: Gtid, is_executed: impl Fn(&Gtid) -> bool) -> Ownership {
        self.acquire_unless(gtid, is_executed, &|| false).expect("never interrupted")
    }

    /// [`GtidOwners::acquire`] whose wait ends with `None` once
    /// `interrupted` says so (KILL QUERY of the waiting session), checked
    /// every [`INTERRUPT_POLL`].
    pub fn acquire_unless(
        self: &Arc<Self>,
        gtid: Gtid,
        is_executed: impl Fn(&Gtid) -> bool,
        interrupted: &dyn Fn() -> bool,
    ) -> Option<Ownership> {
        // Automatic numbering is of the untagged GTIDs only.
        if gtid.uuid == self.server_uuid && !gtid.is_tagged() {
            // Before the executed check: see the module docs.
            self.own_gno_floor.fetch_max(gtid.gno, Ordering::SeqCst);
        }
        let mut owned = self.owned.lock();
        loop {
            if is_executed(&gtid) {
                return Some(Ownership::AlreadyExecuted);
            }
            if owned.insert(gtid) {
                return Some(Ownership::Owned(OwnedGtid { owners: self.clone(), gtid }));
            }
            if interrupted() {
                return None;
            }
            self.released.wait_for(&mut owned, INTERRUPT_POLL);
        }
    }

    /// Whether some session owns `gtid` now.
    pub fn is_owned(&self, gtid: &Gtid) -> bool {
        self.owned.lock().contains(gtid)
    }

    /// Automatic GTIDs use numbers above this (0: none owned).
    pub fn own_gno_floor(&self) -> u64 {
        self.own_gno_floor.load(Ordering::SeqCst)
    }

    /// `RESET BINARY LOGS AND GTIDS`: numbering starts again at 1.
    pub fn reset_floor(&self) {
        self.own_gno_floor.store(0, Ordering::SeqCst);
    }

    fn release(&self, gtid: &Gtid) {
        self.owned.lock().remove(gtid);
        self.released.notify_all();
    }
}

/// Ownership of one GTID; released on drop (after the commit added it to
/// the executed set, or after a rollback).
pub struct OwnedGtid {
    owners: Arc<GtidOwners>,
    gtid: Gtid,
}

impl OwnedGtid {
    pub fn gtid(&self) -> Gtid {
        self.gtid
    }
}

impl std::fmt::Debug for OwnedGtid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OwnedGtid({})", self.gtid)
    }
}

impl Drop for OwnedGtid {
    fn drop(&mut self) {
        self.owners.release(&self.gtid);
    }
}

/// The next automatic gno: at least `next_gno`, above the owners' floor,
/// and not in `executed` (a given GTID with the server's UUID may sit
/// there).
pub fn next_automatic_gno(next_gno: u64, owners: &GtidOwners, is_executed: impl Fn(&Gtid) -> bool) -> u64 {
    let mut gno = next_gno.max(owners.own_gno_floor() + 1);
    while is_executed(&Gtid::new(owners.server_uuid, gno)) {
        gno += 1;
    }
    gno
}
