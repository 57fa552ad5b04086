//! The group boundary queue (seed 001's proposal 2): one entry per
//! complete transaction, pushed by the receiver, which already saw every
//! event on its way into the relay log, and popped by the coordinator,
//! which then schedules without reading or decoding a single event. A
//! spilled transaction's entry is pushed as it spills, before it is
//! complete (streamed: [`BoundaryEntry::streamed_end`]).
//!
//! Bounded: a full queue makes the receiver wait like a full ring does.

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use binlog_format::events::mariadb_gtid::MariadbGtid;
use binlog_format::events::DecodeContext;
use binlog_format::gtid_set::Gtid;
use parking_lot::{Condvar, Mutex};

use crate::boundary::TransactionClock;
use crate::relay::TransactionLocation;
use crate::stop::{StopFlag, Stopped, WAIT_SLICE};

/// Default bound: far more transactions than a 128 MiB ring holds at the
/// sizes sysbench writes (~1 KiB), so the ring, not the queue, is what
/// normally fills.
pub const QUEUE_ENTRIES_MAX_DEFAULT: usize = 1 << 17;

/// One transaction: complete, or streamed (a spilled transaction queued
/// while it still arrives, see [`crate::relay`]).
#[derive(Debug, Clone)]
pub struct BoundaryEntry {
    /// Position in the stream since the receiver started: 0, 1, 2, ...
    pub index: u64,
    /// The MySQL GTID; `None` for anonymous and MariaDB transactions.
    pub gtid: Option<Gtid>,
    /// A MariaDB source's GTID (domain-server-seq); its `last_committed` and
    /// `sequence_number` come from the group commit id
    /// ([`crate::mariadb_clock`]).
    pub mariadb_gtid: Option<MariadbGtid>,
    pub last_committed: i64,
    pub sequence_number: i64,
    /// Bumped at every (re)connect: logical clocks are per source binlog
    /// file and restart with a new dump, so an epoch change is a barrier.
    pub connection_epoch: u64,
    pub location: TransactionLocation,
    pub size_bytes: u64,
    /// The source's binlog file and the `log_pos` of the transaction's last
    /// event (its end in that file). For a streamed entry, where it was
    /// when queued, and `size_bytes` what was spilled then: the real ones
    /// are in `streamed_end` once it is complete.
    pub source_log_file: Arc<str>,
    pub source_end_log_pos: u64,
    /// How to decode the events: the source's Format_description.
    pub format: Arc<DecodeContext>,
    /// A streamed entry's end, set by the receiver before it marks the
    /// spill file complete.
    pub streamed_end: Option<Arc<OnceLock<StreamedEnd>>>,
}

/// Where a streamed transaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamedEnd {
    pub source_log_file: Arc<str>,
    pub source_end_log_pos: u64,
    pub size_bytes: u64,
}

impl BoundaryEntry {
    /// Where the transaction ends in the source's binlog.
    pub fn source_position(&self) -> crate::applied_positions::SourcePosition {
        crate::applied_positions::SourcePosition { file: self.source_log_file.clone(), pos: self.source_end_log_pos }
    }

    /// Queued before the transaction was complete.
    pub fn is_streamed(&self) -> bool {
        self.streamed_end.is_some()
    }

    /// The entry with its end known: itself when it was queued complete;
    /// `None` for a streamed one not complete yet.
    pub fn completed(&self) -> Option<BoundaryEntry> {
        let Some(streamed_end) = &self.streamed_end else {
            return Some(self.clone());
        };
        let end = streamed_end.get()?;
        Some(BoundaryEntry {
            source_log_file: end.source_log_file.clone(),
            source_end_log_pos: end.source_end_log_pos,
            size_bytes: end.size_bytes,
            streamed_end: None,
            ..self.clone()
        })
    }

    pub fn clock(&self) -> TransactionClock {
        TransactionClock { gtid: self.gtid, last_committed: self.last_committed, sequence_number: self.sequence_number }
    }

    /// The GTID as MySQL prints it in messages (`ANONYMOUS` without one);
    /// a MariaDB GTID as MariaDB prints it.
    pub fn gtid_text(&self) -> String {
        match (self.gtid, self.mariadb_gtid) {
            (Some(gtid), _) => gtid.to_string(),
            (None, Some(gtid)) => gtid.to_string(),
            (None, None) => "ANONYMOUS".to_owned(),
        }
    }
}

pub struct BoundaryQueue {
    entries: Mutex<VecDeque<BoundaryEntry>>,
    /// The source position after the last entry pushed: where a new
    /// receiver continues while the queue's entries are still to apply.
    last_pushed: Mutex<Option<(Arc<str>, u64)>>,
    changed: Condvar,
    entries_max: usize,
}

impl BoundaryQueue {
    pub fn new(entries_max: usize) -> BoundaryQueue {
        assert!(entries_max > 0, "a queue of 0 entries");
        BoundaryQueue { entries: Mutex::new(VecDeque::new()), last_pushed: Mutex::new(None), changed: Condvar::new(), entries_max }
    }

    /// Pushes at the back, waiting while the queue is full; returns how
    /// long it waited. A streamed entry leaves the last pushed position
    /// alone until [`BoundaryQueue::streamed_complete`].
    pub fn push(&self, entry: BoundaryEntry, stop: &StopFlag) -> Result<Duration, Stopped> {
        let mut entries = self.entries.lock();
        let mut blocked_since: Option<Instant> = None;
        while entries.len() >= self.entries_max {
            if stop.is_requested() {
                return Err(Stopped);
            }
            blocked_since.get_or_insert_with(Instant::now);
            self.changed.wait_for(&mut entries, WAIT_SLICE);
        }
        if !entry.is_streamed() {
            *self.last_pushed.lock() = Some((entry.source_log_file.clone(), entry.source_end_log_pos));
        }
        entries.push_back(entry);
        drop(entries);
        self.changed.notify_all();
        Ok(blocked_since.map(|since| since.elapsed()).unwrap_or_default())
    }

    /// The streamed entry pushed last is complete, ending at `end`.
    pub fn streamed_complete(&self, end: &StreamedEnd) {
        *self.last_pushed.lock() = Some((end.source_log_file.clone(), end.source_end_log_pos));
    }

    /// Pops the front entry, waiting while the queue is empty.
    pub fn pop(&self, stop: &StopFlag) -> Result<BoundaryEntry, Stopped> {
        let mut entries = self.entries.lock();
        loop {
            if let Some(entry) = entries.pop_front() {
                drop(entries);
                self.changed.notify_all();
                return Ok(entry);
            }
            if stop.is_requested() {
                return Err(Stopped);
            }
            self.changed.wait_for(&mut entries, WAIT_SLICE);
        }
    }

    /// Puts entries back at the front, in their order: what a stopped
    /// coordinator popped and did not commit (`CoordinatorOutcome::unapplied`)
    /// runs first when the applier starts again. Their relay space is
    /// still held, so the bound may be exceeded by these few entries.
    pub fn push_front_all(&self, entries: Vec<BoundaryEntry>) {
        if entries.is_empty() {
            return;
        }
        let mut queue = self.entries.lock();
        for entry in entries.into_iter().rev() {
            queue.push_front(entry);
        }
        drop(queue);
        self.changed.notify_all();
    }

    /// Pops the front entry if there is one.
    pub fn try_pop(&self) -> Option<BoundaryEntry> {
        let entry = self.entries.lock().pop_front();
        if entry.is_some() {
            self.changed.notify_all();
        }
        entry
    }

    /// The source file and end position of the last entry pushed.
    pub fn last_pushed_position(&self) -> Option<(Arc<str>, u64)> {
        self.last_pushed.lock().clone()
    }

    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every entry (RESET REPLICA, or a receiver restart that
    /// discards what was not applied); the caller releases their space.
    pub fn drain(&self) -> Vec<BoundaryEntry> {
        let drained: Vec<BoundaryEntry> = self.entries.lock().drain(..).collect();
        self.changed.notify_all();
        drained
    }
}
