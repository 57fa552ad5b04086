//! Row versions and who sees which.
//!
//! Each clustered key maps to a chain of versions, oldest first. A writer
//! appends a version (a row, or a delete marker) tagged with its
//! transaction id; the version is invisible to everyone else until that
//! transaction commits. Commit gives the transaction a sequence number in
//! the commit registry — one step, which is what makes a commit atomic to
//! readers — and afterwards copies the number into each version
//! ("stamping") so readers stop consulting the registry. Stamping stores
//! into an atomic under a table's *read* lock: readers and the stamping
//! commit share the table (a write lock per commit made every reader of
//! a busy table queue and spin behind it), and a reader that loaded a
//! version unstamped resolves it through the registry, whose entry goes
//! only after the stamps.
//!
//! A read view is a commit sequence number: it sees, per key, the newest
//! version committed at or before it, or the reader's own newest
//! uncommitted version. Writers instead act on the *current* version: the
//! newest one that is committed or their own. Row locks make sure no other
//! transaction's uncommitted version sits on top of a row being written.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{RwLock, RwLockReadGuard};

use crate::registry::{CommitState, TrxId};
use crate::row::Row;

/// `commit_seq` of a version whose writer has not been stamped yet.
pub(crate) const UNSTAMPED: u64 = 0;

#[derive(Debug)]
pub(crate) struct Version {
    pub(crate) writer: TrxId,
    /// [`UNSTAMPED`] until the writer's commit stamps it (see the module
    /// docs); read with [`Version::commit_seq`].
    commit_seq: AtomicU64,
    /// `None` marks a delete.
    pub(crate) row: Option<Arc<Row>>,
}

impl Clone for Version {
    fn clone(&self) -> Version {
        Version { writer: self.writer, commit_seq: AtomicU64::new(self.commit_seq()), row: self.row.clone() }
    }
}

impl Version {
    pub(crate) fn uncommitted(writer: TrxId, row: Option<Arc<Row>>) -> Version {
        Version { writer, commit_seq: AtomicU64::new(UNSTAMPED), row }
    }

    /// A version committed at `seq` (data loaded from a checkpoint).
    pub(crate) fn committed(writer: TrxId, seq: u64, row: Option<Arc<Row>>) -> Version {
        Version { writer, commit_seq: AtomicU64::new(seq), row }
    }

    /// The stamped commit number, or [`UNSTAMPED`].
    pub(crate) fn commit_seq(&self) -> u64 {
        // Acquire pairs with `stamp`'s release: whoever sees the number
        // also sees everything the commit did before stamping.
        self.commit_seq.load(Ordering::Acquire)
    }

    /// Stamps the writer's commit number; callers hold the table's lock
    /// (read is enough: the chain does not change, only this number).
    pub(crate) fn stamp(&self, seq: u64) {
        self.commit_seq.store(seq, Ordering::Release);
    }

    pub(crate) fn is_unstamped(&self) -> bool {
        self.commit_seq() == UNSTAMPED
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadView {
    pub(crate) seq: u64,
    pub(crate) reader: TrxId,
}

/// Resolves unstamped versions against the commit registry, taking its
/// read lock only when a chain needs it and keeping it for the rest of a
/// batch. Callers hold a table lock first (lock order: table, then
/// registry).
pub(crate) struct CommitLookup<'a> {
    commits: &'a RwLock<CommitState>,
    guard: Option<RwLockReadGuard<'a, CommitState>>,
}

impl<'a> CommitLookup<'a> {
    pub(crate) fn new(commits: &'a RwLock<CommitState>) -> CommitLookup<'a> {
        CommitLookup { commits, guard: None }
    }

    /// The version's commit sequence number, or `None` while uncommitted.
    pub(crate) fn commit_seq(&mut self, version: &Version) -> Option<u64> {
        let stamped = version.commit_seq();
        if stamped != UNSTAMPED {
            return Some(stamped);
        }
        let commits = self.commits;
        self.guard.get_or_insert_with(|| commits.read()).committed_seq(version.writer).or_else(|| {
            // Stamped since the load above, and its registry entry gone
            // already: the entry is dropped (under the registry's write
            // lock) only after the stamps, so with the read lock held here
            // a second load sees the number.
            Some(version.commit_seq()).filter(|&seq| seq != UNSTAMPED)
        })
    }
}

fn is_own_uncommitted(version: &Version, reader: TrxId) -> bool {
    version.writer == reader && version.is_unstamped()
}

/// What `view` sees of a chain: its reader's own newest version, else the
/// newest committed at or before `view.seq`.
pub(crate) fn visible<'c>(chain: &'c [Version], view: &ReadView, lookup: &mut CommitLookup<'_>) -> Option<&'c Version> {
    chain
        .iter()
        .rev()
        .find(|version| is_own_uncommitted(version, view.reader) || lookup.commit_seq(version).is_some_and(|seq| seq <= view.seq))
}

/// The version a writer acts on: its own newest, else the newest committed.
pub(crate) fn current<'c>(chain: &'c [Version], reader: TrxId, lookup: &mut CommitLookup<'_>) -> Option<&'c Version> {
    chain.iter().rev().find(|version| is_own_uncommitted(version, reader) || lookup.commit_seq(version).is_some())
}

/// The live row of `version`, if any.
pub(crate) fn live_row(version: Option<&Version>) -> Option<&Arc<Row>> {
    version.and_then(|version| version.row.as_ref())
}
