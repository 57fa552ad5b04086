//! MySQL's ordered group commit, in three stages with explicit queues.
//!
//! 1. **FLUSH** (under the log lock): the first thread to find the queue
//!    empty becomes the leader; it takes the whole queue and writes each transaction in queue
//!    order: a Gtid event (GTID, logical clock, transaction_length) then
//!    the cached events with their final `log_pos`.
//! 2. **SYNC**: the flushed group joins the sync queue (still under the log
//!    lock, so order is kept) and the log lock is released so the next
//!    group can flush meanwhile. The first group in an empty sync queue
//!    leads: under the sync lock it waits `binlog_group_commit_sync_delay`
//!    if set, takes every queued group and issues one fdatasync for all of
//!    them (`sync_binlog` = 1; every N groups when N > 1; never when 0).
//!    Readers see the groups only after this point (after FLUSH when
//!    sync_binlog != 1).
//! 3. **COMMIT** (under the commit lock): the transactions' commit hooks
//!    (engine commit) run in binlog order; then every follower is woken
//!    with its result.
//!
//! With semi-synchronous replication the COMMIT stage also waits for a
//! replica's acknowledgement, before the hooks (AFTER_SYNC) or after them
//! (AFTER_COMMIT): see `replica_acks.rs`.
//!
//! A write or sync error fails the whole group and poisons the log: every
//! later commit fails until the log is reopened and recovered.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog_format::constants::EventType;
use binlog_format::constants::SERVER_VERSION_ID;
use binlog_format::events::{Event, GtidEvent};
use binlog_format::file::{append_event, WriterIdentity};
use binlog_format::frame::{peek_event_size, set_log_pos};
use binlog_format::gtid_set::Gtid;
use parking_lot::{Condvar, Mutex};

use crate::cache::{SealedSpill, Shape, TransactionCache};
use crate::crash_points;
use crate::error::{BinlogError, Result};
use crate::gtid_owners::{next_automatic_gno, CommitOutcome, GivenGtid, OwnedGtid, Ownership};
use crate::log::{now_micros, BinaryLog, Writer};
use crate::reframe::{reframe, reframed_length};
use crate::replica_acks::AckWaitPoint;

/// Bytes the leader accumulates before one write call.
const FLUSH_BUFFER_BYTES: usize = 4 << 20;

/// Runs in the COMMIT stage, in binlog order, before the committer is
/// released: the storage engine's commit.
pub type CommitHook = Box<dyn FnOnce(&CommitInfo) + Send>;

/// Where and how a transaction was logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub gtid: Gtid,
    pub file_name: String,
    /// Offset of the transaction's Gtid event.
    pub start_position: u64,
    /// Offset just after its terminating event.
    pub end_position: u64,
    pub last_committed: i64,
    pub sequence_number: i64,
    pub transaction_length: u64,
}

struct Slot {
    result: Mutex<Option<Result<CommitInfo>>>,
    ready: Condvar,
}

struct Pending {
    cache: TransactionCache,
    /// Set for a large transaction sealed for promotion.
    sealed: Option<SealedSpill>,
    committed_when_queued: u64,
    hook: Option<CommitHook>,
    slot: Arc<Slot>,
    /// Set when the caller numbered the transaction (write-behind).
    assigned: Option<Assigned>,
    /// Set when the caller gave the GTID (`gtid_next`); it owns it.
    given: Option<GivenGtid>,
}

/// A transaction numbered before it reaches the log: the engine-integrated
/// binlog gives it its GTID (carried in its redo record) and its place in
/// the commit order, and the log only writes it behind.
#[derive(Debug, Clone, Copy)]
struct Assigned {
    gtid: Gtid,
    /// The global sequence number the log's dependency tracker must give it
    /// for `committed_when_queued` to be in the tracker's numbering; when it
    /// differs the transaction is logged as depending on its predecessor.
    global_sequence: u64,
}

/// One transaction for [`BinaryLog::append_behind`].
pub struct BehindTransaction {
    /// Must be `server_uuid:N` with N the log's next GTID number, unless
    /// `given` is set.
    pub gtid: Gtid,
    /// The GTID was given by the committer (`gtid_next`): any GTID not in
    /// the executed set is accepted, with the source's original_* fields.
    pub given: Option<GivenGtid>,
    pub cache: TransactionCache,
    /// Its position in the commit order (1 + transactions before it since
    /// the log opened, counting every write-behind transaction).
    pub global_sequence: u64,
    /// How many transactions had committed when it entered commit
    /// (COMMIT_ORDER's `last_committed`), in the same numbering.
    pub committed_when_queued: u64,
}

/// One transaction for [`BinaryLog::commit_batch`].
pub struct BatchCommit {
    pub cache: TransactionCache,
    /// Runs in the COMMIT stage, in binlog order (the engine's commit).
    pub hook: Option<CommitHook>,
    /// The GTID the committer owns (`gtid_next`), if given; the committer
    /// checked its ownership and keeps it until the batch returns.
    pub given: Option<GivenGtid>,
}

/// The stage queues: transactions waiting for FLUSH, and flushed groups
/// waiting for SYNC.
#[derive(Default)]
pub(crate) struct CommitQueue {
    pending: Mutex<Vec<Pending>>,
    flushed: Mutex<Vec<FlushedGroup>>,
}

/// A group written to the log, waiting for the SYNC stage.
struct FlushedGroup {
    group: Vec<Pending>,
    infos: Vec<CommitInfo>,
    file_number: u64,
    file: storage::FileHandle,
    path: std::path::PathBuf,
    end_position: u64,
    /// Global sequence number of its last transaction.
    last_global: u64,
    /// Files its transactions are in (counted in flight until COMMIT ends).
    files: Vec<u64>,
}

/// State of the SYNC stage.
#[derive(Default)]
pub(crate) struct SyncStage {
    groups_since_sync: u64,
}

impl BinaryLog {
    /// Commits a complete transaction: BEGIN … Xid/COMMIT, or one DDL
    /// statement. Returns once it is written (and synced when
    /// `sync_binlog` = 1 or this group reached N).
    pub fn commit(&self, cache: TransactionCache) -> Result<CommitInfo> {
        self.commit_with_hook(cache, None)
    }

    /// Like [`BinaryLog::commit`], with a hook run in the COMMIT stage in
    /// binlog order.
    pub fn commit_with_hook(&self, cache: TransactionCache, hook: Option<CommitHook>) -> Result<CommitInfo> {
        self.enqueue_commit(cache, hook, None)
    }

    /// Owns `gtid` for a commit with it, or says it is already executed;
    /// waits while another session owns it (see `gtid_owners.rs`).
    pub fn acquire_gtid(&self, gtid: Gtid) -> Ownership {
        self.inner.owners.acquire(gtid, |gtid| self.inner.writer.lock().executed.contains(gtid))
    }

    /// [`BinaryLog::acquire_gtid`] whose wait ends with `None` once
    /// `interrupted` says so.
    pub fn acquire_gtid_unless(&self, gtid: Gtid, interrupted: &dyn Fn() -> bool) -> Option<Ownership> {
        self.inner.owners.acquire_unless(gtid, |gtid| self.inner.writer.lock().executed.contains(gtid), interrupted)
    }

    /// Commits with a given GTID (MySQL's `gtid_next = 'uuid:N'`): owns
    /// it first, and skips the transaction (writing nothing, running no
    /// hook) when it is already executed.
    pub fn commit_given(&self, cache: TransactionCache, given: GivenGtid, hook: Option<CommitHook>) -> Result<CommitOutcome<CommitInfo>> {
        match self.acquire_gtid(given.gtid) {
            Ownership::AlreadyExecuted => Ok(CommitOutcome::SkippedAlreadyExecuted(given.gtid)),
            Ownership::Owned(owned) => self.commit_owned(cache, &owned, given, hook).map(CommitOutcome::Committed),
        }
    }

    /// Commits with a GTID the caller owns ([`BinaryLog::acquire_gtid`]);
    /// the caller releases the ownership (drops `owned`) after this returns.
    pub fn commit_owned(
        &self,
        cache: TransactionCache,
        owned: &OwnedGtid,
        given: GivenGtid,
        hook: Option<CommitHook>,
    ) -> Result<CommitInfo> {
        if owned.gtid() != given.gtid {
            return Err(BinlogError::Invalid(format!("commit with {} while owning {}", given.gtid, owned.gtid())));
        }
        self.enqueue_commit(cache, hook, Some(given))
    }

    fn enqueue_commit(&self, cache: TransactionCache, hook: Option<CommitHook>, given: Option<GivenGtid>) -> Result<CommitInfo> {
        self.check_usable()?;
        let pending = self.pending_commit(cache, hook, given)?;
        let slot = pending.slot.clone();
        self.enqueue_and_lead(vec![pending]);
        wait_for(&slot)
    }

    /// Commits transactions that arrive together (a group commit formed
    /// before the log, such as the database's one group for both logs)
    /// as one queue entry: they reach the FLUSH stage together, so one
    /// leader writes them all and one fdatasync serves them, instead of
    /// each committer racing to the queue and splitting the group.
    /// Results are in the batch's order; a transaction the batch could not
    /// even queue (an incomplete cache) fails alone.
    pub fn commit_batch(&self, batch: Vec<BatchCommit>) -> Vec<Result<CommitInfo>> {
        if let Err(error) = self.check_usable() {
            let text = error.to_string();
            return batch.iter().map(|_| Err(BinlogError::PreviousIo { first_error: text.clone() })).collect();
        }
        let mut outcomes: Vec<std::result::Result<Arc<Slot>, BinlogError>> = Vec::with_capacity(batch.len());
        let mut queued = Vec::with_capacity(batch.len());
        for item in batch {
            match self.pending_commit(item.cache, item.hook, item.given) {
                Ok(pending) => {
                    outcomes.push(Ok(pending.slot.clone()));
                    queued.push(pending);
                }
                Err(error) => outcomes.push(Err(error)),
            }
        }
        if !queued.is_empty() {
            self.enqueue_and_lead(queued);
        }
        outcomes.into_iter().map(|outcome| outcome.and_then(|slot| wait_for(&slot))).collect()
    }

    /// Checks a complete transaction, counts its cache and (when it will
    /// be promoted) makes its body durable, in the committer's thread and
    /// outside every lock; the leader then promotes it.
    fn pending_commit(&self, cache: TransactionCache, hook: Option<CommitHook>, given: Option<GivenGtid>) -> Result<Pending> {
        if cache.shape() != Shape::Complete {
            return Err(BinlogError::Invalid(format!("cannot commit an incomplete transaction ({:?})", cache.shape())));
        }
        let counters = &self.inner.counters;
        counters.cache_use.fetch_add(1, Ordering::Relaxed);
        if cache.is_spilled() {
            counters.cache_disk_use.fetch_add(1, Ordering::Relaxed);
        }
        let mut cache = self.compress(cache)?;
        let sealed = if cache.should_promote() { Some(cache.seal_for_promotion()?) } else { None };
        let slot = Arc::new(Slot { result: Mutex::new(None), ready: Condvar::new() });
        Ok(Pending {
            cache,
            sealed,
            committed_when_queued: self.inner.max_committed.load(Ordering::Acquire),
            hook,
            slot,
            assigned: None,
            given,
        })
    }

    /// The transaction as it is written: one Transaction_payload when its
    /// session compresses and it is one MySQL compresses
    /// (`compression.rs`), in the committer's thread, outside every lock.
    fn compress(&self, mut cache: TransactionCache) -> Result<TransactionCache> {
        let Some(level) = cache.compression_level_zstd() else { return Ok(cache) };
        let Some(compressed) = crate::compression::compress(&cache, level)? else { return Ok(cache) };
        let counters = &self.inner.counters;
        counters.compression_zstd_transactions.fetch_add(1, Ordering::Relaxed);
        counters.compression_zstd_uncompressed_bytes.fetch_add(compressed.uncompressed_bytes, Ordering::Relaxed);
        counters.compression_zstd_compressed_bytes.fetch_add(compressed.compressed_bytes, Ordering::Relaxed);
        Ok(cache.with_payload(compressed.event))
    }

    /// Queues `pendings` for the FLUSH stage, in order, and leads the
    /// group when the queue was empty.
    fn enqueue_and_lead(&self, pendings: Vec<Pending>) {
        let is_leader = {
            let mut pending = self.inner.queue.pending.lock();
            let was_empty = pending.is_empty();
            pending.extend(pendings);
            was_empty
        };
        if is_leader {
            self.lead_group();
        }
    }

    /// Writes transactions numbered elsewhere (the engine-integrated
    /// binlog: their GTIDs and order come from redo, which already made
    /// them durable), in the given order, as one group. Each GTID must be
    /// the log's next one. The log should be opened with `sync_binlog = 0`:
    /// durability is redo's, and readers may see the bytes once written.
    pub fn append_behind(&self, batch: Vec<BehindTransaction>) -> Result<Vec<CommitInfo>> {
        self.check_usable()?;
        // Validated and sealed before queueing: a group is all or nothing.
        let mut prepared = Vec::with_capacity(batch.len());
        for item in batch {
            if item.cache.shape() != Shape::Complete {
                return Err(BinlogError::Invalid(format!("cannot commit an incomplete transaction ({:?})", item.cache.shape())));
            }
            let mut cache = self.compress(item.cache)?;
            let sealed = if cache.should_promote() { Some(cache.seal_for_promotion()?) } else { None };
            let slot = Arc::new(Slot { result: Mutex::new(None), ready: Condvar::new() });
            let assigned = Some(Assigned { gtid: item.gtid, global_sequence: item.global_sequence });
            let given = item.given;
            prepared.push(Pending { cache, sealed, committed_when_queued: item.committed_when_queued, hook: None, slot, assigned, given });
        }
        let slots: Vec<Arc<Slot>> = prepared.iter().map(|p| p.slot.clone()).collect();
        self.inner.counters.cache_use.fetch_add(slots.len() as u64, Ordering::Relaxed);
        if !slots.is_empty() {
            self.enqueue_and_lead(prepared);
        }
        slots.iter().map(|slot| wait_for(slot)).collect()
    }

    /// The leader's work: all three stages for the queue it takes.
    fn lead_group(&self) {
        let inner = &self.inner;
        let options = &inner.options;
        let mut writer = inner.writer.lock();
        let mut group = std::mem::take(&mut *inner.queue.pending.lock());
        debug_assert!(!group.is_empty());
        if writer.closed {
            return finish(group, |_| Err(BinlogError::Closed));
        }
        if let Err(error) = self.check_usable() {
            let text = error.to_string();
            return finish(group, |_| Err(BinlogError::PreviousIo { first_error: text.clone() }));
        }

        // FLUSH.
        let flush_started = Instant::now();
        let flushed = self.flush_group(&mut writer, &mut group);
        add_elapsed_us(&inner.counters.flush_stage_us, flush_started);
        let (infos, end_position, files) = match flushed {
            Ok(flushed) => flushed,
            Err(error) => {
                self.poison(&error);
                let text = error.to_string();
                return finish(group, |_| Err(BinlogError::PreviousIo { first_error: text.clone() }));
            }
        };
        let flushed = FlushedGroup {
            group,
            infos,
            file_number: writer.active.number,
            file: writer.active.file.clone(),
            path: writer.active.path.clone(),
            end_position,
            last_global: writer.dependency.last_assigned(),
            files,
        };
        if options.sync_binlog != 1 {
            self.publish(flushed.file_number, end_position);
        }
        // Enter the SYNC queue while still holding the log lock, so groups
        // queue in the order they were written. The first group in an empty
        // queue leads the stage; later ones are synced and committed by it.
        let leads_sync = {
            let mut queue = inner.queue.flushed.lock();
            queue.push(flushed);
            queue.len() == 1
        };
        drop(writer);
        if leads_sync {
            self.lead_sync_and_commit();
        }
    }

    /// SYNC and COMMIT for every flushed group queued when the sync lock
    /// is ours: one fdatasync serves them all, then their commit hooks run
    /// in binlog order and each committer is released.
    fn lead_sync_and_commit(&self) {
        let inner = &self.inner;
        let options = &inner.options;
        let mut sync = inner.sync_stage.lock();
        // binlog_group_commit_sync_delay: let more groups queue for this sync.
        self.wait_for_group(options.binlog_group_commit_sync_delay, options.binlog_group_commit_sync_no_delay_count);
        let batch = std::mem::take(&mut *inner.queue.flushed.lock());
        let last = batch.last().expect("the sync leader's own group is queued");
        let (file_number, end_position, file, path) = (last.file_number, last.end_position, last.file.clone(), last.path.clone());
        // Groups in earlier files were synced by the rotation that closed them.
        sync.groups_since_sync += batch.len() as u64;
        let sync_started = Instant::now();
        let synced = (|| -> Result<()> {
            if options.sync_binlog != 0 && sync.groups_since_sync >= options.sync_binlog {
                file.sync_data().map_err(|e| BinlogError::io("fdatasync", &path, e))?;
                inner.counters.fsyncs.fetch_add(1, Ordering::Relaxed);
                sync.groups_since_sync = 0;
            }
            inner.crash.hit(crash_points::SYNC_AFTER_SYNC).map_err(|e| BinlogError::io("crash point", &path, e))
        })();
        add_elapsed_us(&inner.counters.sync_stage_us, sync_started);
        if let Err(error) = synced {
            drop(sync);
            self.poison(&error);
            let text = error.to_string();
            for flushed in batch {
                finish(flushed.group, |_| Err(BinlogError::PreviousIo { first_error: text.clone() }));
            }
            return;
        }
        if options.sync_binlog == 1 {
            self.publish(file_number, end_position);
        }

        // COMMIT: hooks in binlog order.
        let commit = inner.commit_stage.lock();
        drop(sync);
        // Semi-synchronous replication (replica_acks.rs): the batch's last
        // transaction stands for all of it. Write-behind batches (assigned
        // numbers) were committed in redo already: nothing to hold.
        let ack_wait =
            inner.replica_acks.active().filter(|_| !batch.iter().any(|flushed| flushed.group.iter().any(|p| p.assigned.is_some())));
        let ack_target = ack_wait.as_ref().and_then(|_| {
            batch.iter().rev().find_map(|flushed| flushed.infos.last()).map(|info| (info.file_name.clone(), info.end_position))
        });
        let transactions = batch.iter().map(|flushed| flushed.infos.len() as u64).sum::<u64>();
        let wait_for_ack = |point: AckWaitPoint| {
            if let (Some((acks, wait_point)), Some((file_name, end_position))) = (&ack_wait, &ack_target) {
                if *wait_point == point {
                    acks.wait_for_ack(file_name, *end_position, transactions);
                }
            }
        };
        wait_for_ack(AckWaitPoint::AfterSync);
        let hooks_started = Instant::now();
        let mut results = Vec::new();
        let mut last_global = 0;
        let groups = batch.len() as u64;
        let mut committed_files = Vec::new();
        for flushed in batch {
            last_global = last_global.max(flushed.last_global);
            committed_files.extend(flushed.files);
            for (mut pending, info) in flushed.group.into_iter().zip(flushed.infos) {
                if let Some(hook) = pending.hook.take() {
                    hook(&info);
                }
                // The cache (and its spill file) is dropped after the commit
                // lock is released: unlinking a GiB-sized spill file takes
                // hundreds of milliseconds nobody else should wait for.
                results.push((pending.slot, info, pending.cache));
            }
        }
        inner.max_committed.fetch_max(last_global, Ordering::AcqRel);
        let hooks_done = inner.crash.hit(crash_points::COMMIT_AFTER_HOOKS);
        drop(commit);
        add_elapsed_us(&inner.counters.commit_stage_us, hooks_started);
        inner.counters.groups.fetch_add(groups, Ordering::Relaxed);
        inner.counters.commits.fetch_add(results.len() as u64, Ordering::Relaxed);
        if let Err(error) = hooks_done {
            let error = BinlogError::io("crash point", &path, error);
            self.poison(&error);
            for (slot, _, _) in results {
                deliver(&slot, Err(BinlogError::PreviousIo { first_error: error.to_string() }));
            }
            return;
        }
        wait_for_ack(AckWaitPoint::AfterCommit);
        let mut caches = Vec::with_capacity(results.len());
        for (slot, info, cache) in results {
            deliver(&slot, Ok(info));
            caches.push(cache);
        }
        drop(caches);
        // Closed files whose last transactions just committed lose their in-use flag.
        for file_number in committed_files {
            inner.in_flight.remove(file_number);
        }
        if let Err(error) = self.clear_closed_files() {
            self.poison(&error);
        }

        if end_position >= options.max_binlog_size {
            let mut writer = inner.writer.lock();
            if !writer.closed && writer.active.number == file_number && self.check_usable().is_ok() {
                if let Err(error) = self.rotate_locked(&mut writer) {
                    self.poison(&error);
                }
            }
            drop(writer);
            if options.binlog_expire_logs_seconds > 0 {
                if let Err(error) = self.purge_expired() {
                    tracing::warn!("binlog_expire_logs_seconds purge failed: {error}");
                }
            }
        }
    }

    /// The FLUSH stage for one group, under the log lock: each
    /// transaction gets its GTID and logical clock and is written in queue
    /// order, copied into the active file or, when large, promoted into the
    /// log by rename. Returns the transactions' places and the active
    /// file's new end.
    fn flush_group(&self, writer: &mut Writer, group: &mut [Pending]) -> Result<(Vec<CommitInfo>, u64, Vec<u64>)> {
        let inner = &self.inner;
        let options = &inner.options;
        inner.crash.hit(crash_points::FLUSH_BEFORE_WRITE).map_err(|e| BinlogError::io("crash point", &writer.active.path, e))?;
        let mut infos = Vec::with_capacity(group.len());
        // Files this group writes into, each counted in flight once.
        let mut files: Vec<u64> = Vec::new();
        let mut buffer: Vec<u8> = Vec::new();
        // File offset of buffer[0] in the active file.
        let mut buffer_start = writer.active.position;
        for pending in group.iter_mut() {
            let automatic_gno = next_automatic_gno(writer.next_gno, &inner.owners, |gtid| writer.executed.contains(gtid));
            let gtid = match pending.given {
                Some(given) => {
                    // Ownership makes this impossible; a duplicate GTID in
                    // the log would be worse than a refused group.
                    if writer.executed.contains(&given.gtid) {
                        return Err(BinlogError::Invalid(format!("given GTID {} is already executed", given.gtid)));
                    }
                    given.gtid
                }
                None => Gtid::new(options.server_uuid, automatic_gno),
            };
            let mut committed_when_queued = pending.committed_when_queued;
            if let Some(assigned) = pending.assigned {
                if assigned.gtid != gtid {
                    return Err(BinlogError::Invalid(format!(
                        "write-behind transaction {} arrived where the log expects {gtid}",
                        assigned.gtid
                    )));
                }
                if assigned.global_sequence != writer.dependency.last_assigned() + 1 {
                    // Numbered differently: no parallelism claimed.
                    committed_when_queued = writer.dependency.last_assigned();
                }
            }
            let clock = writer.dependency.assign(committed_when_queued, &pending.cache.writeset);
            let mut gtid_event = GtidEvent {
                flags: 0,
                gtid,
                last_committed: clock.last_committed,
                sequence_number: clock.sequence_number,
                immediate_commit_timestamp_us: now_micros(),
                original_commit_timestamp_us: pending.given.and_then(|g| g.original_commit_timestamp_us),
                transaction_length: 0,
                immediate_server_version: SERVER_VERSION_ID,
                original_server_version: pending.given.and_then(|g| g.original_server_version),
                commit_group_ticket: None,
                layout: binlog_format::events::gtid::GtidLayout::ServerVersions,
            };
            if let Some(sealed) = pending.sealed.take() {
                // Everything before it must be in the file it closes.
                self.write_buffer(writer, &mut buffer, &mut buffer_start)?;
                writer.dependency.barrier();
                // Alone in its file: a fresh logical clock.
                gtid_event.last_committed = 0;
                gtid_event.sequence_number = 1;
                let timestamp = pending.cache.timestamp;
                // In flight before the promotion can close anything.
                let promoted_number = writer.active.number + 1;
                inner.in_flight.add(promoted_number);
                match self.promote_locked(writer, &sealed, &mut pending.cache, &mut gtid_event, timestamp)? {
                    Some(promoted) => {
                        files.push(promoted_number);
                        writer.note_logged(gtid, options.server_uuid);
                        infos.push(CommitInfo {
                            gtid,
                            file_name: promoted.file_name,
                            start_position: sealed.header_room - (promoted.transaction_length - sealed.body_length),
                            end_position: sealed.header_room + sealed.body_length,
                            last_committed: 0,
                            sequence_number: 1,
                            transaction_length: promoted.transaction_length,
                        });
                        buffer_start = writer.active.position;
                        continue;
                    }
                    None => {
                        inner.in_flight.remove(promoted_number);
                        inner.counters.large_transaction_missed.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!("large transaction {gtid} not promoted: header room {} too small; copying", sealed.header_room);
                        gtid_event.last_committed = clock.last_committed;
                        gtid_event.sequence_number = clock.sequence_number;
                    }
                }
            }
            if !files.contains(&writer.active.number) {
                files.push(writer.active.number);
                inner.in_flight.add(writer.active.number);
            }
            let cache = &pending.cache;
            // The active file's algorithm, which a cache begun before
            // `SET GLOBAL binlog_checksum` may not have: its events are re-framed.
            let identity = WriterIdentity { server_id: options.server_id, checksum: writer.active.checksum };
            let from_checksum = cache.checksum();
            let body_length = reframed_length(cache.len(), cache.event_count(), from_checksum, identity.checksum);
            let length = gtid_event.settle_transaction_length(body_length, identity.checksum);
            let start_position = buffer_start + buffer.len() as u64;
            let mut position = append_event(&mut buffer, start_position, &Event::Gtid(gtid_event), cache.timestamp, 0, identity);
            let (file, path) = (writer.active.file.clone(), writer.active.path.clone());
            let mut reframed = Vec::new();
            cache.for_each_event_chunk(FLUSH_BUFFER_BYTES, |chunk| {
                let chunk: &mut [u8] = if from_checksum == identity.checksum {
                    chunk
                } else {
                    reframed.clear();
                    reframe(chunk, from_checksum, identity.checksum, &mut reframed);
                    &mut reframed
                };
                let mut at = 0;
                while at < chunk.len() {
                    let size = peek_event_size(&chunk[at..]).expect("cached events are whole") as usize;
                    position += size as u64;
                    let log_pos = u32::try_from(position).unwrap_or(u32::MAX);
                    set_log_pos(&mut chunk[at..at + size], log_pos, identity.checksum);
                    at += size;
                }
                buffer.extend_from_slice(chunk);
                if buffer.len() >= FLUSH_BUFFER_BYTES {
                    file.write_at(buffer_start, &buffer).map_err(|e| BinlogError::io("write", &path, e))?;
                    buffer_start += buffer.len() as u64;
                    buffer.clear();
                }
                Ok(())
            })?;
            debug_assert_eq!(position - start_position, length);
            writer.note_logged(gtid, options.server_uuid);
            infos.push(CommitInfo {
                gtid,
                file_name: writer.active.name.clone(),
                start_position,
                end_position: position,
                last_committed: clock.last_committed,
                sequence_number: clock.sequence_number,
                transaction_length: length,
            });
        }
        self.write_buffer(writer, &mut buffer, &mut buffer_start)?;
        inner.crash.hit(crash_points::FLUSH_AFTER_WRITE).map_err(|e| BinlogError::io("crash point", &writer.active.path, e))?;
        Ok((infos, writer.active.position, files))
    }

    /// Writes the accumulated bytes at the active file's end.
    fn write_buffer(&self, writer: &mut Writer, buffer: &mut Vec<u8>, buffer_start: &mut u64) -> Result<()> {
        let active = &mut writer.active;
        if !buffer.is_empty() {
            active.file.write_at(*buffer_start, buffer).map_err(|e| BinlogError::io("write", &active.path, e))?;
            *buffer_start += buffer.len() as u64;
            self.inner.counters.bytes_written.fetch_add(buffer.len() as u64, Ordering::Relaxed);
            buffer.clear();
        }
        // Chunks written mid-transaction already advanced buffer_start.
        active.position = active.position.max(*buffer_start);
        Ok(())
    }

    /// `binlog_group_commit_sync_delay`: the leader lets the queue grow
    /// for up to `delay`, or until `no_delay_count` transactions wait.
    fn wait_for_group(&self, delay: Duration, no_delay_count: usize) {
        if delay.is_zero() {
            return;
        }
        let deadline = Instant::now() + delay;
        while Instant::now() < deadline {
            let queued: usize =
                self.inner.queue.flushed.lock().iter().map(|g| g.group.len()).sum::<usize>() + self.inner.queue.pending.lock().len();
            if no_delay_count > 0 && queued >= no_delay_count {
                return;
            }
            std::thread::sleep(Duration::from_micros(50).min(deadline - Instant::now()));
        }
    }
}

/// Adds the microseconds since `started` to a stage's time counter.
fn add_elapsed_us(counter: &std::sync::atomic::AtomicU64, started: Instant) {
    counter.fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
}

/// Waits for the stage leader to deliver `slot`'s result.
fn wait_for(slot: &Slot) -> Result<CommitInfo> {
    let mut result = slot.result.lock();
    while result.is_none() {
        slot.ready.wait(&mut result);
    }
    result.take().unwrap()
}

fn deliver(slot: &Slot, result: Result<CommitInfo>) {
    *slot.result.lock() = Some(result);
    slot.ready.notify_one();
}

fn finish(group: Vec<Pending>, make: impl Fn(&Pending) -> Result<CommitInfo>) {
    for pending in group {
        deliver(&pending.slot, make(&pending));
    }
}

/// Whether a cached event type ends a transaction.
pub fn is_transaction_end(event_type: u8) -> bool {
    event_type == EventType::Xid as u8
}
