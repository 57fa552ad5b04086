//! The engine-integrated binlog (`binlog_storage_engine = engine`): the
//! binlog rides the redo log.
//!
//! ## Commit path
//!
//! ```text
//! 1. build the binlog cache from trx.changes()      (BEGIN, Table_map, rows…, Xid)
//!                                                    ── database::engine_binlog::before_redo_write
//! 2. under the order lock: GTID = next; engine commit, whose one redo
//!    record (kind 7) holds the changes, the GTID and the cache's events;
//!    data and GTID visible in one step; the cache joins the write-behind
//!    queue in that same order                       ── database::engine_binlog::after_redo_write
//! 3. wait per innodb_flush_log_at_trx_commit: 1 = fdatasync (one per
//!    group: `group_commit.rs`'s gather, or redo's own group sync), 2 =
//!    written to the OS, 0 = nothing                 ── database::engine_binlog::after_redo_sync
//! 4. semi-synchronous replication on: wait until the writer put the
//!    events in the files and a replica acknowledged them
//!                                                    ── database::engine_binlog::wait_for_replica_ack
//! 5. return (sync_binlog is ignored)
//!
//! writer thread, behind the commit path:
//!    wait until redo is durable past a prefix of the queue; append it to
//!    the binlog files as one group (Gtid event, logical clock, log_pos,
//!    checksums), without fdatasync              ── database::engine_binlog::after_binlog_write
//!    rotate at max_binlog_size (rotation syncs the closed file)
//! ```
//!
//! The engine commit and the redo record are one step (the engine appends
//! the record under its commit lock, right before the data becomes
//! visible), so there is no separate "after engine commit" point: a crash
//! anywhere after `after_redo_write` leaves the transaction exactly where
//! redo durability leaves it. Other sessions may read a commit before its
//! record is durable (as with InnoDB); their own commits come later in
//! redo, so a crash keeps a prefix of the commit order.
//!
//! ## Semi-synchronous replication
//!
//! A replica can only receive a transaction once the writer appended it to
//! the files, which it does once its redo record is durable. So both
//! `rpl_semi_sync_source_wait_point`s wait at the same place: after the
//! redo sync and the write, before the committer is answered. That keeps
//! the promise a failover relies on: a commit that returned OK is on a
//! replica (or the source fell back to asynchronous replication after
//! `rpl_semi_sync_source_timeout`, and counted it in `_no_tx`). What
//! AFTER_SYNC adds in the classic mode, that no other session reads the
//! transaction before a replica has it, does not hold here: the engine
//! commit makes it visible in step 2, as it may be read before its redo
//! record is durable. Each committer waits for itself (`wait_for_ack`
//! with one transaction), for the end of the writer's batch that holds
//! its transaction: the ack of that position covers it.
//!
//! ## Durability order
//!
//! - The binlog files only ever receive a transaction whose redo record is
//!   durable (the writer waits for `durable_lsn`), so the files always hold
//!   a prefix of the redo-committed sequence, and readers, which stop at
//!   the files' written end ([`binlog::BinaryLog::durable_end`]), never see
//!   a transaction a crash could take back.
//! - Statements that show the binlog (`gtid_executed`, SHOW BINARY LOG
//!   STATUS, SHOW BINLOG EVENTS, SHOW STATUS) and FLUSH BINARY LOGS first
//!   wait until every committed transaction is written
//!   ([`EngineBinlog::wait_written_all`]), so a session sees its own
//!   commits there as in the classic mode, and a rotation closes a file
//!   holding every commit that returned before it.
//! - Binlog bytes reach the disk by rotation (which syncs the closed file),
//!   by a checkpoint, and by close. A checkpoint first makes redo durable
//!   up to its start LSN, waits for the writer to pass every transaction
//!   before it, and fdatasyncs the active binlog file
//!   (`database::engine_binlog::after_binlog_sync`): only then may redo
//!   before the start LSN be deleted. The redo log's checkpoint floor is
//!   also set to the binlog-durable LSN, so no path deletes redo whose
//!   binlog bytes could still be lost.
//!
//! ## Recovery (rows of the decision table in `recovery.rs`)
//!
//! | redo holds (from the checkpoint on) | binlog files hold | decision |
//! |------------------------------------|-------------------|----------|
//! | engine commit record               | its GTID          | replay into the engine; the files are right |
//! | engine commit record               | not its GTID      | replay; re-append its events to the binlog, in redo order (`in_rebuild`) |
//! | nothing (lost redo tail, flush 0/2) | nothing of it (the files never get ahead of durable redo) | lost on both sides, sets still equal |
//!
//! The binlog's own recovery (torn tail cut at the last transaction
//! boundary) runs first and a new active file is opened, then the missing
//! transactions are appended to it and synced. This runs whatever mode
//! the database now opens in, so a switch in either direction keeps one
//! continuous binlog.
//!
//! ## Large transactions
//!
//! A transaction whose cache spilled and reached the promotion threshold
//! (`binlog_large_transaction_optimization_*`) goes by reference: its
//! spill file is sealed (the body was fdatasynced chunk by chunk as it
//! grew; the tail now) and renamed to a name the binlog's startup keeps
//! (`binlog::spill_reference`), and the record carries a
//! `BINLOG_FILE_REFERENCE` section (the file's name, sizes and last event)
//! instead of the body. The writer then promotes the file into the log by
//! rename, as the classic mode does. Recovery promotes a referenced file
//! whose GTID the log lacks, and removes referenced files no record
//! names (`database::engine_binlog::after_reference_seal`: sealed,
//! nothing in redo: rolled back). Smaller transactions' events travel in
//! the record, up to `binlogd_redo_record_bytes_max`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use binlog::{BehindTransaction, BinaryLog, BinlogError, CommitInfo, TransactionCache};
use binlog_format::{Gtid, GtidSet};
use engine::{Lsn, Transaction};
use parking_lot::{Condvar, Mutex};
use redo::{Durability, FlushLogAtTrxCommit, RedoLog};

use crate::binlog_events::{self, StatementContext};
use crate::crash_points::{self, CrashPoints};
use crate::database::{Database, Inner, RedoSync};
use crate::error::{DatabaseError, Result};
use crate::redo_sink::{self, BinlogBody, BinlogEvents};

/// How long the writer waits for redo durability before looking again.
const WRITER_POLL: Duration = Duration::from_millis(20);
/// Transactions appended to the binlog in one group by the writer or by
/// recovery, at most.
const BATCH_TRANSACTIONS_MAX: usize = 1024;

/// A transaction committed in redo, waiting to be written to the files.
struct Entry {
    /// Its redo record's end: durable once `durable_lsn()` reaches it.
    end_lsn: Lsn,
    gtid: Gtid,
    /// Set when the committer gave the GTID (`gtid_next`).
    given: Option<binlog::GivenGtid>,
    cache: TransactionCache,
    global_sequence: u64,
    committed_when_queued: u64,
    bytes: u64,
}

#[derive(Default)]
struct Queue {
    entries: VecDeque<Entry>,
    /// Binlog bytes of `entries` and of the batch being written.
    bytes: u64,
    /// End LSN of the first transaction of the batch being written.
    writing_from: Option<Lsn>,
    /// Every transaction ending at or below this is written to the files.
    written_through: Lsn,
    /// The files' end after the last batch written (file name, position):
    /// what a replica must acknowledge for every transaction written.
    written_end: Option<(String, u64)>,
    /// Commits or a checkpoint waiting: the writer forces a redo sync.
    urgent_waiters: usize,
    /// The writer failed: its first error.
    error: Option<String>,
    /// Close: write everything, then exit.
    stop: bool,
}

/// GTID numbering of the engine-integrated commit order.
struct Order {
    next_gno: u64,
}

impl Order {
    /// The GTID of the next commit, under the order lock: the given one,
    /// or the next automatic one (above GTIDs sessions own or executed).
    fn gtid_for(&self, inner: &Inner, given: Option<binlog::GivenGtid>) -> Result<Gtid> {
        let server_uuid = inner.binlog.options().server_uuid;
        match given {
            Some(given) if inner.engine.is_gtid_executed(&given.gtid) => {
                Err(DatabaseError::Binlog(BinlogError::Invalid(format!("given GTID {} is already executed", given.gtid))))
            }
            Some(given) => Ok(given.gtid),
            None => {
                let gno = binlog::gtid_owners::next_automatic_gno(self.next_gno, inner.binlog.owners(), |gtid| {
                    inner.engine.is_gtid_executed(gtid)
                });
                Ok(Gtid::new(server_uuid, gno))
            }
        }
    }

    /// `gtid` committed: automatic numbering continues after it when it
    /// has the server's UUID and no tag.
    fn note_committed(&mut self, gtid: Gtid, server_uuid: binlog_format::Uuid) {
        if gtid.uuid == server_uuid && !gtid.is_tagged() {
            self.next_gno = self.next_gno.max(gtid.gno + 1);
        }
    }
}

pub(crate) struct EngineBinlog {
    redo: RedoLog,
    binlog: BinaryLog,
    crash: CrashPoints,
    queue_bytes_max: u64,
    max_binlog_size: u64,
    order: Mutex<Order>,
    /// Transactions that passed the order lock, in the binlog dependency
    /// tracker's numbering (recovery's rebuilt transactions first).
    committed: AtomicU64,
    queue: Mutex<Queue>,
    queue_changed: Condvar,
    /// Redo below this has its binlog bytes durable in the files.
    synced_through: AtomicU64,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl EngineBinlog {
    /// `rebuilt`: transactions recovery appended to the log since it opened.
    pub fn new(redo: RedoLog, binlog: BinaryLog, crash: CrashPoints, config: &crate::DatabaseConfig, rebuilt: u64) -> EngineBinlog {
        let uuid = binlog.options().server_uuid;
        let next_gno = binlog.executed_gtids().last_gno(&uuid) + 1;
        let synced_through = redo.current_lsn();
        redo.set_checkpoint_floor(Some(synced_through));
        EngineBinlog {
            queue_bytes_max: config.engine_binlog_queue_bytes_max.max(1),
            max_binlog_size: config.binlog.max_binlog_size,
            redo,
            binlog,
            crash,
            order: Mutex::new(Order { next_gno }),
            committed: AtomicU64::new(rebuilt),
            queue: Mutex::new(Queue { written_through: synced_through, ..Queue::default() }),
            queue_changed: Condvar::new(),
            synced_through: AtomicU64::new(synced_through),
            thread: Mutex::new(None),
        }
    }

    /// Starts the writer thread.
    pub fn start(self: &Arc<Self>, inner: Weak<Inner>) -> Result<()> {
        let this = self.clone();
        let thread = std::thread::Builder::new()
            .name("engine-binlog-writer".into())
            .spawn(move || this.run_writer(inner))
            .map_err(|e| DatabaseError::io("spawn engine binlog writer", self.binlog.options().dir.clone(), e))?;
        *self.thread.lock() = Some(thread);
        Ok(())
    }

    fn writer_failed(queue: &Queue) -> Result<()> {
        match &queue.error {
            Some(first_error) => Err(DatabaseError::Unusable { first_error: first_error.clone() }),
            None => Ok(()),
        }
    }

    /// Back-pressure: waits while the queue holds more than its bound.
    fn wait_for_room(&self) -> Result<()> {
        let mut queue = self.queue.lock();
        while queue.bytes >= self.queue_bytes_max && queue.error.is_none() && !queue.stop {
            queue.urgent_waiters += 1;
            self.queue_changed.notify_all();
            self.queue_changed.wait_for(&mut queue, WRITER_POLL);
            queue.urgent_waiters -= 1;
        }
        Self::writer_failed(&queue)
    }

    /// Under the order lock: the cache joins the queue in commit order.
    fn enqueue(&self, entry: Entry) {
        let mut queue = self.queue.lock();
        queue.bytes += entry.bytes;
        queue.entries.push_back(entry);
        self.queue_changed.notify_all();
    }

    /// Waits until every transaction whose record ends at or below `lsn`
    /// is written to the files (the writer is pushed to sync redo).
    fn wait_written_through(&self, lsn: Lsn) -> Result<()> {
        let mut queue = self.queue.lock();
        loop {
            Self::writer_failed(&queue)?;
            let queued_below = queue.entries.front().is_some_and(|e| e.end_lsn <= lsn);
            let writing_below = queue.writing_from.is_some_and(|from| from <= lsn);
            if !queued_below && !writing_below {
                return Ok(());
            }
            if self.thread.lock().is_none() {
                return Err(DatabaseError::Closed);
            }
            queue.urgent_waiters += 1;
            self.queue_changed.notify_all();
            self.queue_changed.wait_for(&mut queue, WRITER_POLL);
            queue.urgent_waiters -= 1;
        }
    }

    /// Waits until the transaction whose record ends at `lsn` is written,
    /// and returns a position of the files at or after its end.
    fn written_end_through(&self, lsn: Lsn) -> Result<Option<(String, u64)>> {
        self.wait_written_through(lsn)?;
        Ok(self.queue.lock().written_end.clone())
    }

    /// Waits until every transaction committed so far (its GTID assigned)
    /// is written to the files, so what a session committed shows in
    /// `gtid_executed`, SHOW BINARY LOG STATUS and the files it names. Under
    /// `innodb_flush_log_at_trx_commit` 0 or 2 this syncs redo: the files
    /// never get ahead of durable redo.
    pub fn wait_written_all(&self) -> Result<()> {
        // A commit appends its record and joins the queue under the order
        // lock: once we hold it, every record up to `current_lsn` is queued.
        let lsn = {
            let _order = self.order.lock();
            self.redo.current_lsn()
        };
        self.wait_written_through(lsn)
    }

    /// After `RESET BINARY LOGS AND GTIDS` emptied the log (the caller
    /// holds the locks that keep commits out, and the queue was written):
    /// the next GTID is the log's next one again, `server_uuid:1`. The
    /// dependency numbering goes on, as the log's own does across a reset.
    pub fn restart_gtid_numbering(&self) {
        let mut order = self.order.lock();
        debug_assert!(self.queue.lock().entries.is_empty(), "a reset with transactions still queued");
        order.next_gno = self.binlog.executed_gtids().last_gno(&self.binlog.options().server_uuid) + 1;
    }

    /// Before a checkpoint deletes redo below `start_lsn`: everything
    /// before it is written to the binlog files and synced.
    pub fn make_durable_through(&self, start_lsn: Lsn) -> Result<()> {
        // A commit whose record lies below `start_lsn` joins the queue under
        // the order lock: once we hold it, every such commit is queued.
        drop(self.order.lock());
        self.redo.wait_durable(start_lsn)?;
        self.wait_written_through(start_lsn)?;
        let written = self.queue.lock().written_through;
        self.binlog.sync_active()?;
        self.crash.hit(crash_points::ENGINE_AFTER_BINLOG_SYNC).map_err(|e| DatabaseError::Crash(e.to_string()))?;
        self.note_synced(written.max(start_lsn));
        Ok(())
    }

    fn note_synced(&self, lsn: Lsn) {
        let previous = self.synced_through.fetch_max(lsn, Ordering::AcqRel);
        if lsn > previous {
            self.redo.set_checkpoint_floor(Some(lsn));
        }
    }

    /// `FLUSH BINARY LOGS` in engine mode: the closed file is synced by
    /// the rotation, so everything written before it is durable.
    pub fn rotate(&self) -> Result<()> {
        let written = self.queue.lock().written_through;
        self.binlog.rotate()?;
        self.note_synced(written);
        Ok(())
    }

    /// `FLUSH BINARY LOGS`: as in the classic mode, every transaction
    /// committed before the statement is in the file it closes. The caller
    /// holds the rotation lock, so no commit is between its record and the
    /// queue.
    /// `rotate` is `BinaryLog::rotate`, or `SET GLOBAL binlog_checksum`'s
    /// rotation to a file of the new algorithm.
    pub fn rotate_after_committed(&self, rotate: impl FnOnce(&BinaryLog) -> binlog::Result<()>) -> Result<()> {
        self.wait_written_all()?;
        let written = self.queue.lock().written_through;
        rotate(&self.binlog)?;
        self.note_synced(written);
        Ok(())
    }

    /// Clean close: every queued transaction is made durable in redo and
    /// written, then the writer exits.
    pub fn drain_and_stop(&self) -> Result<()> {
        {
            let mut queue = self.queue.lock();
            queue.stop = true;
            self.queue_changed.notify_all();
        }
        if let Some(thread) = self.thread.lock().take() {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
        let queue = self.queue.lock();
        Self::writer_failed(&queue)?;
        if !queue.entries.is_empty() {
            return Err(DatabaseError::Unusable { first_error: "the engine binlog writer stopped with transactions queued".into() });
        }
        Ok(())
    }

    /// Stops the writer without draining (the database is dropped
    /// without close: what is queued is in redo, recovery rebuilds it).
    fn abandon(&self) {
        {
            let mut queue = self.queue.lock();
            queue.error.get_or_insert_with(|| "the database was dropped without close".into());
            self.queue_changed.notify_all();
        }
        if let Some(thread) = self.thread.lock().take() {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }

    fn run_writer(self: Arc<Self>, inner: Weak<Inner>) {
        loop {
            let batch = match self.next_batch(&inner) {
                Some(Ok(batch)) => batch,
                Some(Err(error)) => return self.writer_error(&inner, error),
                None => return,
            };
            if batch.is_empty() {
                continue;
            }
            let last_end = batch.last().expect("not empty").end_lsn;
            let bytes: u64 = batch.iter().map(|e| e.bytes).sum();
            let items = batch
                .into_iter()
                .map(|e| BehindTransaction {
                    gtid: e.gtid,
                    given: e.given,
                    cache: e.cache,
                    global_sequence: e.global_sequence,
                    committed_when_queued: e.committed_when_queued,
                })
                .collect();
            let written = self.binlog.append_behind(items).map_err(DatabaseError::Binlog).and_then(|infos| {
                self.crash.hit(crash_points::ENGINE_AFTER_BINLOG_WRITE).map_err(|e| DatabaseError::Crash(e.to_string()))?;
                Ok(infos.last().map(|info| (info.file_name.clone(), info.end_position)))
            });
            let end = match written {
                Ok(end) => end,
                Err(error) => return self.writer_error(&inner, error),
            };
            {
                let mut queue = self.queue.lock();
                queue.bytes -= bytes;
                queue.writing_from = None;
                queue.written_through = queue.written_through.max(last_end);
                if end.is_some() {
                    queue.written_end = end;
                }
                self.queue_changed.notify_all();
            }
            if self.binlog.active_position().1 >= self.max_binlog_size {
                if let Err(error) = self.rotate() {
                    return self.writer_error(&inner, error);
                }
                if let Some(inner) = inner.upgrade() {
                    inner.binlog_rotations.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// The next durable prefix of the queue; `None` when the writer must
    /// exit.
    fn next_batch(&self, inner: &Weak<Inner>) -> Option<Result<Vec<Entry>>> {
        let (front_end, back_end, urgent) = {
            let mut queue = self.queue.lock();
            loop {
                if queue.error.is_some() || (queue.stop && queue.entries.is_empty()) {
                    return None;
                }
                if !queue.entries.is_empty() {
                    break;
                }
                self.queue_changed.wait_for(&mut queue, WRITER_POLL * 5);
                if inner.strong_count() == 0 && !queue.stop {
                    return None;
                }
            }
            let urgent = queue.stop || queue.urgent_waiters > 0 || queue.bytes * 2 >= self.queue_bytes_max;
            (queue.entries.front().expect("not empty").end_lsn, queue.entries.back().expect("not empty").end_lsn, urgent)
        };
        if urgent {
            // Someone waits for these bytes: sync redo rather than wait for
            // the flush policy (innodb_flush_log_at_trx_commit 0 or 2).
            if let Err(error) = self.redo.wait_durable(back_end) {
                return Some(Err(error.into()));
            }
        } else if !self.redo.watch_durable(front_end, WRITER_POLL) {
            return Some(Ok(Vec::new()));
        }
        let durable = self.redo.durable_lsn();
        let mut queue = self.queue.lock();
        let mut batch = Vec::new();
        while batch.len() < BATCH_TRANSACTIONS_MAX && queue.entries.front().is_some_and(|e| e.end_lsn <= durable) {
            batch.push(queue.entries.pop_front().expect("checked"));
        }
        queue.writing_from = batch.first().map(|e| e.end_lsn);
        Some(Ok(batch))
    }

    fn writer_error(&self, inner: &Weak<Inner>, error: DatabaseError) {
        let text = format!("engine binlog writer: {error}");
        {
            let mut queue = self.queue.lock();
            queue.error.get_or_insert(text.clone());
            queue.writing_from = None;
            self.queue_changed.notify_all();
        }
        if let Some(inner) = inner.upgrade() {
            inner.fail(&text);
        }
    }
}

/// Stops the writer when the database goes away without close.
pub(crate) struct WriterGuard(pub Arc<EngineBinlog>);

impl Drop for WriterGuard {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

/// The `BINLOG_EVENTS` of `cache`, within the redo record bound.
fn binlog_events(inner: &Inner, cache: &TransactionCache) -> Result<BinlogEvents> {
    // Room for the record header and the other sections.
    let limit = inner.redo.options().binlogd_redo_record_bytes_max.saturating_sub(1 << 20);
    if cache.len() > limit {
        // Large transactions do not travel by reference yet (module docs).
        return Err(DatabaseError::Binlog(BinlogError::CacheFull { max_binlog_cache_size: limit }));
    }
    Ok(BinlogEvents { checksum: cache.checksum(), events: cache.encoded_events()? })
}

/// The place of a transaction the writer has not written yet: its GTID;
/// file and positions are known only once written.
fn pending_info(gtid: Gtid, cache_len: u64) -> CommitInfo {
    CommitInfo {
        gtid,
        file_name: String::new(),
        start_position: 0,
        end_position: 0,
        last_committed: 0,
        sequence_number: 0,
        transaction_length: cache_len,
    }
}

impl Database {
    /// A commit with `binlog_storage_engine = engine`; see the module docs.
    pub(crate) fn commit_engine_binlog(
        &self,
        engine_binlog: &EngineBinlog,
        trx: Transaction,
        context: &StatementContext,
        given: Option<binlog::GivenGtid>,
        on_ordered: &dyn Fn(),
    ) -> Result<Option<CommitInfo>> {
        let inner = &self.inner;
        inner.check_writable()?;
        let xid = inner.next_xid.fetch_add(1, Ordering::AcqRel);
        let mut cache = binlog_events::transaction_cache(&inner.binlog, &inner.tables(), trx.changes(), context, xid)?;
        let events = if cache.should_promote() {
            // Large: the writer promotes its spill file by rename; the
            // record refers to that file instead of carrying the body.
            let reference = cache.seal_for_reference(&xid.to_string())?;
            inner.crash.hit(crash_points::ENGINE_AFTER_REFERENCE_SEAL).map_err(|e| DatabaseError::Crash(e.to_string()))?;
            BinlogBody::Reference(reference)
        } else {
            BinlogBody::Events(binlog_events(inner, &cache)?)
        };
        let cache_len = cache.len();
        inner.crash.hit(crash_points::ENGINE_BEFORE_REDO_WRITE).map_err(|e| DatabaseError::Crash(e.to_string()))?;
        // Close and rotation wait for commits between here and the queue.
        let in_flight = inner.rotation.read();
        inner.check_writable()?;
        engine_binlog.wait_for_room()?;
        let committed_when_queued = engine_binlog.committed.load(Ordering::Acquire);
        let trx_id = trx.id();
        inner.sink.stage_engine_commit(trx_id, Some(xid), &events);
        drop(events);
        // Logs nothing: the changes are encoded for the one record.
        let prepared = match trx.prepare(Some(xid)) {
            Ok(prepared) => prepared,
            Err(error) => {
                inner.sink.unstage(trx_id);
                return Err(error.into());
            }
        };
        let (gtid, commit_lsn, visible) = {
            let mut order = engine_binlog.order.lock();
            let gtid = match order.gtid_for(inner, given) {
                Ok(gtid) => gtid,
                Err(error) => {
                    drop(order);
                    inner.sink.unstage(trx_id);
                    prepared.rollback();
                    return Err(error);
                }
            };
            match prepared.commit_visible(Some(gtid)) {
                Ok(visible) => {
                    order.note_committed(gtid, inner.binlog.options().server_uuid);
                    let global_sequence = engine_binlog.committed.fetch_add(1, Ordering::AcqRel) + 1;
                    let end_lsn = visible.commit_lsn();
                    engine_binlog.enqueue(Entry { end_lsn, gtid, given, cache, global_sequence, committed_when_queued, bytes: cache_len });
                    (gtid, end_lsn, visible)
                }
                Err(failed) => {
                    drop(order);
                    // The append failed: the log is poisoned, the record
                    // may be partly there; recovery settles it.
                    let error = DatabaseError::Engine(failed.error);
                    inner.fail(&error.to_string());
                    inner.sink.mark_in_doubt(failed.transaction.id());
                    failed.transaction.rollback();
                    return Err(error);
                }
            }
        };
        // Its GTID and place in the log are fixed: later commits come after.
        on_ordered();
        // Stamping and releasing row locks (time proportional to the rows
        // written) outside the commit order lock, so that a large
        // transaction's finish holds up no other commit.
        visible.finish();
        // Committed in the engine; durable as the flush setting says.
        let durable = inner
            .crash
            .hit(crash_points::ENGINE_AFTER_REDO_WRITE)
            .map_err(|e| DatabaseError::Crash(e.to_string()))
            .and_then(|()| self.wait_commit_durable(commit_lsn))
            .and_then(|()| inner.crash.hit(crash_points::ENGINE_AFTER_REDO_SYNC).map_err(|e| DatabaseError::Crash(e.to_string())));
        if let Err(error) = durable {
            inner.fail(&error.to_string());
            return Err(error);
        }
        inner.commits.fetch_add(1, Ordering::Relaxed);
        // A close or rotation need not wait for a replica's ack.
        drop(in_flight);
        self.wait_for_replica_ack(engine_binlog, commit_lsn)?;
        Ok(Some(pending_info(gtid, cache_len)))
    }

    /// Semi-synchronous replication (module docs): once the writer put the
    /// transaction ending at `lsn` in the files, waits until a replica
    /// acknowledged it or `rpl_semi_sync_source_timeout` passed.
    fn wait_for_replica_ack(&self, engine_binlog: &EngineBinlog, lsn: Lsn) -> Result<()> {
        let Some((acks, _wait_point)) = self.inner.binlog.replica_acks() else { return Ok(()) };
        if let Some((file_name, end_position)) = engine_binlog.written_end_through(lsn)? {
            acks.wait_for_ack(&file_name, end_position, 1);
        }
        Ok(())
    }

    /// `innodb_flush_log_at_trx_commit` alone: 1 waits for the fdatasync
    /// (one per group), 2 for the write, 0 for nothing.
    fn wait_commit_durable(&self, lsn: Lsn) -> Result<()> {
        let inner = &self.inner;
        match inner.config.redo.innodb_flush_log_at_trx_commit {
            FlushLogAtTrxCommit::WriteAndSyncAtCommit => match &inner.redo_sync {
                RedoSync::Grouped(groups) => groups.join(lsn).map(drop),
                RedoSync::Alone => Ok(inner.redo.wait_durable(lsn)?),
            },
            FlushLogAtTrxCommit::WriteAtCommit => Ok(inner.redo.wait_written(lsn)?),
            FlushLogAtTrxCommit::WriteAndSyncPerSecond => Ok(()),
        }
    }

    /// DDL's binlog transaction in engine mode: the DDL record was synced
    /// by `apply`; this record carries its GTID and Query event, synced.
    /// Called with the DDL lock held.
    pub(crate) fn log_ddl_engine_binlog(
        &self,
        engine_binlog: &EngineBinlog,
        cache: TransactionCache,
        given: Option<binlog::GivenGtid>,
    ) -> Result<CommitInfo> {
        let inner = &self.inner;
        let events = binlog_events(inner, &cache)?;
        let cache_len = cache.len();
        let in_flight = inner.rotation.read();
        engine_binlog.wait_for_room()?;
        let committed_when_queued = engine_binlog.committed.load(Ordering::Acquire);
        let logged = (|| -> Result<(Gtid, Lsn)> {
            let mut order = engine_binlog.order.lock();
            let gtid = order.gtid_for(inner, given)?;
            // The GTID joins the engine's set first, then the record: a
            // checkpoint in between could only see the GTID twice.
            inner.engine.apply_redo_transaction(&[], Some(gtid), None)?;
            let end_lsn = inner.redo.append(&redo_sink::engine_ddl_binlog_record(gtid, &events), Durability::Buffered)?;
            order.note_committed(gtid, inner.binlog.options().server_uuid);
            let global_sequence = engine_binlog.committed.fetch_add(1, Ordering::AcqRel) + 1;
            engine_binlog.enqueue(Entry { end_lsn, gtid, given, cache, global_sequence, committed_when_queued, bytes: cache_len });
            Ok((gtid, end_lsn))
        })();
        let result = logged.and_then(|(gtid, lsn)| {
            inner.redo.wait_durable(lsn)?;
            Ok((gtid, lsn))
        });
        match result {
            Ok((gtid, lsn)) => {
                drop(in_flight);
                self.wait_for_replica_ack(engine_binlog, lsn)?;
                Ok(pending_info(gtid, cache_len))
            }
            Err(error) => {
                inner.fail(&error.to_string());
                Err(error)
            }
        }
    }
}

/// Recovery: re-appends, in redo order, every transaction redo committed
/// with its binlog events whose GTID the binlog lacks (after the binlog's
/// own recovery cut its torn tail), then syncs the file. Returns the
/// GTIDs appended.
pub(crate) fn rebuild(binlog: &BinaryLog, logged: Vec<(Gtid, BinlogBody)>, crash: &CrashPoints) -> Result<GtidSet> {
    let have = binlog.executed_gtids();
    let missing: Vec<(Gtid, BinlogBody)> = logged.into_iter().filter(|(gtid, _)| !have.contains(gtid)).collect();
    let mut rebuilt = GtidSet::new();
    if missing.is_empty() {
        remove_referenced_spills(binlog)?;
        return Ok(rebuilt);
    }
    let inconsistent = |reason: String| DatabaseError::Inconsistent { reason };
    let mut sequence = 0u64;
    let mut missing = missing.into_iter().peekable();
    while missing.peek().is_some() {
        let mut batch = Vec::new();
        for (gtid, body) in missing.by_ref().take(BATCH_TRANSACTIONS_MAX) {
            let cache = match body {
                // Framed as when the transaction began: re-framed when appended
                // if binlog_checksum has changed since.
                BinlogBody::Events(events) => binlog.cache_from_encoded_events(events.events, events.checksum)?,
                // Promoted by rename when appended, as the writer would have.
                BinlogBody::Reference(reference) => binlog.cache_from_spill_reference(&reference)?,
            };
            sequence += 1;
            // Given: redo numbered it, whatever its UUID (a replica's
            // foreign GTIDs, or the server's own given by `gtid_next`).
            let given = Some(binlog::GivenGtid::new(gtid));
            batch.push(BehindTransaction { gtid, given, cache, global_sequence: sequence, committed_when_queued: sequence - 1 });
            rebuilt.add(gtid);
        }
        binlog.append_behind(batch).map_err(|error| match error {
            BinlogError::Invalid(reason) => inconsistent(format!("rebuilding the binlog from redo: {reason}")),
            other => DatabaseError::Binlog(other),
        })?;
        crash.hit(crash_points::ENGINE_IN_REBUILD).map_err(|e| DatabaseError::Crash(e.to_string()))?;
    }
    binlog.sync_active()?;
    tracing::info!("recovery: appended {rebuilt} from redo to the binary log");
    remove_referenced_spills(binlog)?;
    Ok(rebuilt)
}

/// Once the log holds every transaction redo committed, no referenced
/// spill file is needed: one left never reached redo (rolled back).
fn remove_referenced_spills(binlog: &BinaryLog) -> Result<()> {
    let removed = binlog.remove_referenced_spills(&Default::default())?;
    if !removed.is_empty() {
        tracing::info!(?removed, "recovery: removed spill files of large transactions that never committed");
    }
    Ok(())
}

/// Transactions [`rebuild`] appended (the dependency tracker's numbering).
pub(crate) fn rebuilt_count(rebuilt: &GtidSet) -> u64 {
    rebuilt.intervals().map(|(_, list)| list.iter().map(|(start, end)| end - start).sum::<u64>()).sum()
}
