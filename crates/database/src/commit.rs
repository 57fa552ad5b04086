//! Two-phase commit between the engine and the binary log (MySQL's
//! design, `binlog_storage_engine` empty), and DDL.
//!
//! ## A transaction that changed rows
//!
//! ```text
//! 1. build the binlog cache from trx.changes()      (BEGIN, Table_map, rows…, Xid)
//! 2. allocate the XID                                ── database::commit::before_prepare
//! 3. engine prepare: redo prepare record with the XID,
//!    durable per innodb_flush_log_at_trx_commit     ── database::commit::after_prepare
//!    (flush = 1: one group for both logs, `group_commit.rs`: the leader's
//!    one redo fdatasync covers every member's prepare, then the leader
//!    commits every member's cache to the binlog as one batch; a member's
//!    place in the commit order is fixed when it joins, which is where a
//!    replica preserving commit order hands the turn on)
//! 4. binlog group commit: FLUSH (write)              ── binlog::flush::after_write
//!                         SYNC (fdatasync)           ── binlog::sync::after_sync
//!                         COMMIT: hooks in binlog order:
//! 5.   engine commit: commit record (buffered), data
//!      and GTID visible in one step                  ── binlog::commit::after_hooks
//! 6. out of the binlog and the rotation lock: the session stamps its row
//!    versions and releases its row locks (`VisibleCommit::finish`), work
//!    proportional to the rows it wrote, so no one waits for it (the
//!    engine does it in batches and leaves a large transaction's purge
//!    and freeing to its background purge thread)
//! ```
//!
//! [`Database::commit`] takes one [`CommitRequest`]; `commit_two_phase`
//! runs the steps above and reaches the binlog by one `CommitPath` of
//! three: `Grouped` (flush = 1, the group's leader syncs the prepares and
//! logs the batch), `Promoted` (a large transaction, alone under the
//! exclusive rotation lock) or `Alone` (the two logs' own group commits
//! chained). With `binlog_storage_engine = engine` the commit is one redo
//! record instead (`engine_binlog.rs`).
//!
//! A large transaction is sent to redo in prepare parts (`redo_sink.rs`)
//! and, when promoted, syncs its own prepare rather than joining a group:
//! the group would stay busy for every other session until the promotion
//! ends. What it holds others up for is then the promotion's exclusive
//! window only (measured: ~3 ms for 640 MiB).
//!
//! Durability order: with flush = 1 the prepare record is durable before
//! the binlog write, and the binlog is synced before the engine commits,
//! so whatever the binlog holds, recovery can commit from redo; whatever
//! it lacks, recovery rolls back. The commit record need not be synced:
//! the binlog holds the XID.
//!
//! A failure after step 3 leaves the transaction *in doubt* (the binlog
//! may hold it, or not): it is released in memory without a rollback
//! record, the database refuses writes from then on
//! ([`DatabaseError::Unusable`]) and the next open settles it from the
//! binlog. mysqld does the same with `binlog_error_action = ABORT_SERVER`.
//!
//! ## Given GTIDs
//!
//! A commit or DDL may carry a GTID the caller owns ([`NextGtid::Owned`],
//! MySQL's `gtid_next = 'uuid:N'`; ownership rules in
//! `binlog::gtid_owners`). It follows exactly the path above, the binlog
//! writing the given GTID instead of the next automatic one, so data and
//! GTID stay atomic and recovery needs no new case. With nothing to
//! write, the GTID is logged as an empty `BEGIN; COMMIT` through the DDL
//! path below.
//!
//! ## Rotation
//!
//! The binlog's recovery scans only the files in use and the last file, so
//! a transaction in an older file must have its engine commit record
//! durable. The database therefore rotates, not the log
//! (`max_binlog_size` is enforced here): rotation takes [`Inner::rotation`]
//! exclusively (no commit is between its binlog write and its engine
//! commit), syncs redo, then rotates. This is MySQL's "flush the engine's
//! logs before rotating". A large transaction promoted into the log by
//! rename (BOLT) closes the active file too, so it commits under the same
//! exclusive lock after a redo sync; its body was made durable before,
//! outside every lock, so the lock is held for a time independent of its
//! size.
//!
//! ## DDL
//!
//! `apply` runs on the engine (its DDL record is synced to redo), then a
//! DDL intent record is synced, then the statement is written to the
//! binlog as its own transaction; in the COMMIT stage the GTID is added to
//! the engine's executed set and the intent's commit record (with the
//! GTID) appended. Recovery finding an intent without outcome looks for
//! GTIDs the binlog has and the engine lacks: they are the DDL's.
//! A replica worker's DDL statement ([`Database::execute_replicated_ddl`])
//! carries the worker's applied source position: the engine's DDL record
//! carries it too, so the position is durable exactly when the change is
//! (MySQL 8's atomic DDL updates `mysql.slave_worker_info` in the
//! data-dictionary transaction), in both binlog modes, whose DDL records
//! are the same.
//! The gap: DDL is not atomic with its binlog write. A crash after `apply`
//! and before the binlog write leaves the change in the engine and not in
//! the binlog (MySQL 8's atomic DDL closes this with the data dictionary;
//! binlogd does not yet). GTID sets stay equal either way.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use binlog::{BatchCommit, BinaryLog, CommitHook, CommitInfo, CommitOutcome, GivenGtid, OwnedGtid, Ownership, TransactionCache};
use binlog_format::Gtid;
use engine::{ApplierSlot, CommitError, Engine, EngineError, Lsn, PreparedTransaction, Transaction, VisibleCommit};
use parking_lot::Mutex;
use redo::Durability;

use crate::binlog_events::{self, StatementContext};
use crate::crash_points;
use crate::database::{BinlogMode, Database, RedoSync};
use crate::error::{DatabaseError, Result};
use crate::group_commit::BinlogGroupCommit;
use crate::redo_sink::{self, RedoTrxKey};
use crate::write_ahead::WrittenAhead;

/// Transactions with at least this many row changes log their commit's
/// phase times when promoted.
const LARGE_COMMIT_LOG_CHANGES: usize = 10_000;

/// DDL intent keys live above every engine transaction id.
pub(crate) const DDL_INTENT_TRX_BASE: u64 = 1 << 63;

/// The GTID a commit gets: the server's next automatic one, or one the
/// caller owns (`gtid_next = 'uuid:N'`; see `binlog::gtid_owners`), with
/// the source's original_* fields for the Gtid event.
#[derive(Debug, Clone, Copy)]
pub enum NextGtid<'a> {
    Automatic,
    Owned { owned: &'a OwnedGtid, given: GivenGtid },
}

impl NextGtid<'_> {
    /// The given GTID, checked against the ownership.
    pub(crate) fn given(&self) -> Result<Option<GivenGtid>> {
        match self {
            NextGtid::Automatic => Ok(None),
            NextGtid::Owned { owned, given } if owned.gtid() == given.gtid => Ok(Some(*given)),
            NextGtid::Owned { owned, given } => Err(DatabaseError::Binlog(binlog::BinlogError::Invalid(format!(
                "commit with {} while owning {}",
                given.gtid,
                owned.gtid()
            )))),
        }
    }
}

/// What the COMMIT-stage hook did with the prepared transaction.
enum HookState {
    /// The hook has not run (the binlog failed before its COMMIT stage).
    Waiting(PreparedTransaction),
    /// Visible and logged; its versions are stamped (and its locks
    /// released) by the session once it is out of the binlog's commit
    /// stage and the rotation lock, so a large transaction's stamping
    /// never holds up other commits.
    Visible(VisibleCommit),
    Committed,
    /// The engine's commit record could not be appended.
    Failed(CommitError),
}

/// A transaction to commit, and how: [`Database::commit`]'s one argument.
/// `CommitRequest::new(trx, &context)` for an ordinary commit; set the
/// other fields for what a session or a replica's applier needs.
pub struct CommitRequest<'a> {
    pub trx: Transaction,
    pub context: &'a StatementContext,
    /// Events and redo the transaction wrote ahead of its commit
    /// ([`Database::write_ahead`]).
    pub ahead: Option<WrittenAhead>,
    /// With a given GTID a transaction that changed nothing is still
    /// logged, as an empty `BEGIN; COMMIT` (how MySQL marks a GTID
    /// executed without data).
    pub gtid: NextGtid<'a>,
    /// Called as soon as the transaction's place in the commit order is
    /// fixed (every commit that starts afterwards is logged and committed
    /// after it), before its fsyncs: a replica preserving the source's
    /// commit order lets the next transaction commit from there, so that
    /// ordered commits share group commits (MySQL hands the turn over once
    /// a transaction is in the binlog's flush queue). Where the order is
    /// only fixed at the end (no cross-log group, a promotion or a
    /// read-only commit), it is called before returning, or not at all on
    /// an error before the order was fixed. It may be called twice (early,
    /// and again at a successful return), so it must be idempotent.
    pub on_ordered: &'a dyn Fn(),
}

impl<'a> CommitRequest<'a> {
    /// An ordinary commit: nothing written ahead, the next automatic GTID.
    pub fn new(trx: Transaction, context: &'a StatementContext) -> CommitRequest<'a> {
        CommitRequest { trx, context, ahead: None, gtid: NextGtid::Automatic, on_ordered: &|| {} }
    }
}

/// How one transaction reaches the binlog (classic files): chosen per
/// commit from [`RedoSync`] and the size of its cache.
enum CommitPath<'a> {
    /// One group for both logs (flush = 1): the group's leader makes the
    /// buffered prepare durable for every member at once, then logs every
    /// member's binlog commit as one batch.
    Grouped(&'a BinlogGroupCommit),
    /// A large transaction promoted into the log by rename: it syncs its
    /// own prepare rather than joining a group (a group stays busy until
    /// its logging ends, and the promotion, under the exclusive rotation
    /// lock, would keep every other session out of the next group). The
    /// promotion closes the active file, as a rotation does: the same rule
    /// (no commit in flight, redo durable first).
    Promoted,
    /// The prepare made durable by the redo log's own group commit, then
    /// the binlog's group commit.
    Alone,
}

/// A large transaction's phase times, logged when it is promoted (clock
/// reads for it only: an ordinary commit pays none).
struct PhaseTimes {
    started: Option<Instant>,
    built: Option<Instant>,
    sealed: Option<Instant>,
    prepare_written: Option<Instant>,
}

impl PhaseTimes {
    fn start(changes: usize) -> PhaseTimes {
        let started = (changes >= LARGE_COMMIT_LOG_CHANGES).then(Instant::now);
        PhaseTimes { started, built: None, sealed: None, prepare_written: None }
    }

    /// Now, for a large transaction.
    fn now(&self) -> Option<Instant> {
        self.started.map(|_| Instant::now())
    }
}

impl Database {
    /// Commits `request.trx`: two-phase commit of a transaction that
    /// changed rows (see the module docs), or one record with the
    /// engine-integrated binlog (`engine_binlog.rs`). Read-only or
    /// unchanged transactions commit in the engine only (no binlog) and
    /// return `None`, unless they carry a given GTID.
    ///
    /// On an error before the prepare (building the events), the
    /// transaction is rolled back. On an error after it, the outcome is up
    /// to recovery and the database refuses further writes.
    pub fn commit(&self, request: CommitRequest<'_>) -> Result<Option<CommitInfo>> {
        let on_ordered = request.on_ordered;
        let committed = self.commit_in_order(request);
        if committed.is_ok() {
            // For the paths that fix the order only at the end; a path that
            // called it early gets a second, idempotent call.
            on_ordered();
        }
        committed
    }

    /// Owns `gtid` for a commit with it (MySQL owns it at `SET gtid_next`),
    /// or says it is executed already; waits while another session owns it.
    /// The set checked is the one commits add to before they release: the
    /// binlog's (classic) or the engine's (engine-integrated binlog).
    pub fn acquire_gtid(&self, gtid: Gtid) -> Ownership {
        self.acquire_gtid_unless(gtid, &|| false).expect("never interrupted")
    }

    /// [`Database::acquire_gtid`] whose wait for another session's
    /// ownership ends with `None` once `interrupted` says so (KILL QUERY).
    pub fn acquire_gtid_unless(&self, gtid: Gtid, interrupted: &dyn Fn() -> bool) -> Option<Ownership> {
        let inner = &self.inner;
        match &inner.binlog_mode {
            BinlogMode::Engine { .. } => {
                inner.binlog.owners().acquire_unless(gtid, |gtid| inner.engine.is_gtid_executed(gtid), interrupted)
            }
            BinlogMode::Files => inner.binlog.acquire_gtid_unless(gtid, interrupted),
        }
    }

    /// Commits with a given GTID: owns it, or rolls the transaction back
    /// and reports it skipped when the GTID is executed already (MySQL
    /// skips such a transaction silently; an applier restarts on it).
    pub fn commit_given(
        &self,
        trx: Transaction,
        context: &StatementContext,
        given: GivenGtid,
    ) -> Result<CommitOutcome<Option<CommitInfo>>> {
        match self.acquire_gtid(given.gtid) {
            Ownership::AlreadyExecuted => {
                trx.rollback();
                Ok(CommitOutcome::SkippedAlreadyExecuted(given.gtid))
            }
            Ownership::Owned(owned) => {
                let committed =
                    self.commit(CommitRequest { gtid: NextGtid::Owned { owned: &owned, given }, ..CommitRequest::new(trx, context) });
                // Released after the GTID is executed (or never will be).
                drop(owned);
                committed.map(CommitOutcome::Committed)
            }
        }
    }

    fn commit_in_order(&self, request: CommitRequest<'_>) -> Result<Option<CommitInfo>> {
        let CommitRequest { trx, context, ahead, gtid: next, on_ordered } = request;
        let inner = &self.inner;
        let given = next.given()?;
        if trx.is_read_only() {
            trx.commit(None)?;
            inner.read_only_commits.fetch_add(1, Ordering::Relaxed);
            if given.is_none() {
                return Ok(None);
            }
            let cache = binlog_events::empty_transaction_cache(&inner.binlog, context)?;
            return self.log_statement_transaction(cache, next).map(Some);
        }
        match &inner.binlog_mode {
            BinlogMode::Engine { binlog, .. } => self.commit_engine_binlog(binlog, trx, context, given, on_ordered),
            BinlogMode::Files => self.commit_two_phase(trx, ahead, context, next, given, on_ordered),
        }
    }

    /// Steps 1–6 of the module docs.
    fn commit_two_phase(
        &self,
        trx: Transaction,
        ahead: Option<WrittenAhead>,
        context: &StatementContext,
        next: NextGtid<'_>,
        given: Option<GivenGtid>,
        on_ordered: &dyn Fn(),
    ) -> Result<Option<CommitInfo>> {
        let inner = &self.inner;
        inner.check_writable()?;
        let xid = inner.next_xid.fetch_add(1, Ordering::AcqRel);
        let mut times = PhaseTimes::start(trx.changes().len());
        // Built before the prepare, outside every lock; an error here
        // (1197, a row the format cannot encode) just rolls back.
        let mut cache = match ahead {
            Some(ahead) => {
                let mut events = ahead.events;
                events.append(&inner.tables(), trx.changes(), context)?;
                events.finish(xid, context)?
            }
            None => binlog_events::transaction_cache(&inner.binlog, &inner.tables(), trx.changes(), context, xid)?,
        };
        times.built = times.now();
        let path = if cache.should_promote() {
            // Promoted into the log as a file of its own: its body is made
            // durable here, outside every lock (the binlog would do it on
            // entry otherwise).
            cache.seal_for_promotion()?;
            CommitPath::Promoted
        } else {
            match &inner.redo_sync {
                RedoSync::Grouped(groups) => CommitPath::Grouped(groups),
                RedoSync::Alone => CommitPath::Alone,
            }
        };
        inner.crash.hit(crash_points::COMMIT_BEFORE_PREPARE).map_err(|e| DatabaseError::Crash(e.to_string()))?;
        times.sealed = times.now();
        let prepared = trx.prepare(Some(xid))?;
        times.prepare_written = times.now();
        let prepare_lsn = prepared.prepare_lsn();
        let prepared_changes = prepared.changes().len();
        let state = Arc::new(Mutex::new(HookState::Waiting(prepared)));
        let hook_state = state.clone();
        let hook: CommitHook = Box::new(move |info: &CommitInfo| {
            let mut state = hook_state.lock();
            let HookState::Waiting(prepared) = std::mem::replace(&mut *state, HookState::Committed) else {
                unreachable!("a commit hook runs once");
            };
            *state = match prepared.commit_visible(Some(info.gtid)) {
                Ok(visible) => HookState::Visible(visible),
                Err(failed) => HookState::Failed(failed),
            };
        });
        let logged = match path {
            CommitPath::Grouped(groups) => groups
                .commit(prepare_lsn, BatchCommit { cache, hook: Some(hook), given }, &|batch| self.log_group(batch), on_ordered)
                .and_then(|logged| logged),
            CommitPath::Promoted => self.log_promoted(prepare_lsn, cache, hook, next, &times, prepared_changes),
            CommitPath::Alone => self.after_prepare().and_then(|()| {
                let _commit_in_flight = inner.rotation.read();
                log_to_binlog(&inner.binlog, cache, hook, next).map_err(DatabaseError::Binlog)
            }),
        };
        let state = std::mem::replace(&mut *state.lock(), HookState::Committed);
        self.settle(logged, state)
    }

    /// The crash point every path passes between the prepare and the binlog.
    fn after_prepare(&self) -> Result<()> {
        self.inner.crash.hit(crash_points::COMMIT_AFTER_PREPARE).map_err(|e| DatabaseError::Crash(e.to_string()))
    }

    /// A group's logging, run by its leader once the group's prepares are
    /// durable: every member's binlog commit as one batch.
    fn log_group(&self, batch: Vec<BatchCommit>) -> Vec<Result<CommitInfo>> {
        if let Err(crash) = self.after_prepare() {
            return batch.iter().map(|_| Err(DatabaseError::Crash(crash.to_string()))).collect();
        }
        let inner = &self.inner;
        let _commit_in_flight = inner.rotation.read();
        inner.binlog.commit_batch(batch).into_iter().map(|logged| logged.map_err(DatabaseError::Binlog)).collect()
    }

    /// [`CommitPath::Promoted`]: alone under the exclusive rotation lock,
    /// after a redo sync; the body was made durable before, so the lock is
    /// held for a time independent of the transaction's size.
    fn log_promoted(
        &self,
        prepare_lsn: Lsn,
        cache: TransactionCache,
        hook: CommitHook,
        next: NextGtid<'_>,
        times: &PhaseTimes,
        prepared_changes: usize,
    ) -> Result<CommitInfo> {
        let inner = &self.inner;
        if let RedoSync::Grouped(groups) = &inner.redo_sync {
            // The prepare was only buffered, for a group to sync.
            inner.redo.wait_durable(prepare_lsn)?;
            // Commits ordered before it reach the binlog first.
            groups.barrier()?;
        }
        self.after_prepare()?;
        let waited = Instant::now();
        let _alone = inner.rotation.write();
        let locked = Instant::now();
        let flushed = inner.redo.flush().map_err(DatabaseError::Redo);
        let redo_synced = Instant::now();
        let logged = flushed.and_then(|_| Ok(log_to_binlog(&inner.binlog, cache, hook, next)?));
        let ms = |from: Option<Instant>, to: Option<Instant>| match (from, to) {
            (Some(from), Some(to)) => (to - from).as_secs_f64() * 1e3,
            _ => 0.0,
        };
        tracing::info!(
            changes = prepared_changes,
            build_binlog_cache_ms = ms(times.started, times.built),
            seal_spill_ms = ms(times.built, times.sealed),
            write_redo_prepare_ms = ms(times.sealed, times.prepare_written),
            prepare_durable_ms = ms(times.prepare_written, Some(waited)),
            lock_wait_ms = (locked - waited).as_secs_f64() * 1e3,
            redo_flush_ms = (redo_synced - locked).as_secs_f64() * 1e3,
            binlog_commit_ms = redo_synced.elapsed().as_secs_f64() * 1e3,
            "large transaction promoted (times under the exclusive rotation lock)"
        );
        logged
    }

    /// The commit's outcome from the binlog's answer and what its COMMIT
    /// hook did: committed, or in doubt (see the module docs).
    fn settle(&self, logged: Result<CommitInfo>, state: HookState) -> Result<Option<CommitInfo>> {
        let inner = &self.inner;
        let mut state = state;
        if let HookState::Visible(visible) = state {
            visible.finish();
            state = HookState::Committed;
        }
        match (logged, state) {
            (Ok(info), HookState::Committed) => {
                inner.commits.fetch_add(1, Ordering::Relaxed);
                self.rotate_if_full(&info)?;
                Ok(Some(info))
            }
            (Ok(_), HookState::Failed(failed)) => {
                // In the binlog, not committed in the engine: recovery commits it.
                let error = DatabaseError::Engine(failed.error);
                self.abandon_in_doubt(*failed.transaction, &error);
                Err(error)
            }
            (Ok(_), HookState::Waiting(_)) => unreachable!("the binlog acknowledged a commit without running its hook"),
            (_, HookState::Visible(_)) => unreachable!("finished above"),
            (Err(error), HookState::Waiting(prepared)) => {
                // The group may or may not have reached the file.
                self.abandon_in_doubt(prepared, &error);
                Err(error)
            }
            (Err(error), HookState::Failed(failed)) => {
                self.abandon_in_doubt(*failed.transaction, &error);
                Err(error)
            }
            (Err(error), HookState::Committed) => {
                // Committed in the engine, but the binlog failed after its
                // COMMIT stage: its state on disk is for recovery to judge.
                inner.fail(&error.to_string());
                Err(error)
            }
        }
    }
    /// Releases an in-doubt prepared transaction in memory (locks, row
    /// versions) without a rollback record, and stops writes: see the
    /// module docs.
    fn abandon_in_doubt(&self, prepared: PreparedTransaction, error: &DatabaseError) {
        self.inner.fail(&error.to_string());
        self.inner.sink.mark_in_doubt(prepared.id());
        prepared.rollback();
    }

    /// Rotates once the active file reached `max_binlog_size`.
    fn rotate_if_full(&self, info: &CommitInfo) -> Result<()> {
        if info.end_position >= self.inner.config.binlog.max_binlog_size {
            self.rotate_binlog_when(|binlog| binlog.active_position().1 >= self.inner.config.binlog.max_binlog_size, BinaryLog::rotate)?;
        }
        Ok(())
    }

    /// `FLUSH BINARY LOGS`: closes the active binlog file and starts the
    /// next, once every transaction in it is durably committed in redo.
    /// Use this rather than `binlog().rotate()`.
    pub fn rotate_binlog(&self) -> Result<()> {
        self.rotate_binlog_when(|_| true, BinaryLog::rotate)
    }

    /// `SET GLOBAL binlog_checksum`: a rotation (as `FLUSH BINARY LOGS`)
    /// whose new file has the algorithm given (CRC32 when `checksum`).
    pub fn set_binlog_checksum(&self, checksum: bool) -> Result<()> {
        self.rotate_binlog_when(|_| true, |binlog| binlog.set_checksum(checksum))
    }

    /// With `binlog_storage_engine = engine`, waits until every committed
    /// transaction is written to the binlog files (the writer is behind
    /// the commit path); with classic files a commit is in the file when
    /// it returns, so this returns at once. For statements that show the
    /// binlog's state (`gtid_executed`, SHOW BINARY LOG STATUS, SHOW
    /// BINLOG EVENTS): a session sees its own commits there, as in MySQL.
    pub fn wait_binlog_written(&self) -> Result<()> {
        match self.inner.binlog_mode.engine() {
            Some(engine_binlog) => engine_binlog.wait_written_all(),
            None => Ok(()),
        }
    }

    /// `PURGE BINARY LOGS TO` / `BEFORE` with no commit between its binlog
    /// write and its engine commit, so only readers stop a purge.
    pub fn purge_binary_logs(
        &self,
        purge: impl FnOnce(&BinaryLog) -> binlog::Result<binlog::purge::PurgeReport>,
    ) -> Result<binlog::purge::PurgeReport> {
        let _no_commit_in_flight = self.inner.rotation.write();
        self.inner.check_writable()?;
        Ok(purge(&self.inner.binlog)?)
    }

    fn rotate_binlog_when(
        &self,
        still_needed: impl FnOnce(&BinaryLog) -> bool,
        rotate: impl FnOnce(&BinaryLog) -> binlog::Result<()>,
    ) -> Result<()> {
        let inner = &self.inner;
        let _no_commit_in_flight = inner.rotation.write();
        inner.check_writable()?;
        if !still_needed(&inner.binlog) {
            return Ok(());
        }
        if let Some(engine_binlog) = inner.binlog_mode.engine() {
            // Files only hold transactions durable in redo already.
            engine_binlog.rotate_after_committed(rotate)?;
            inner.binlog_rotations.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        // Every transaction in the file is committed in the engine (the
        // lock above); its commit record becomes durable before the file
        // stops being scanned at recovery.
        inner.redo.flush()?;
        rotate(&inner.binlog)?;
        inner.binlog_rotations.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// DDL: runs `apply` on the engine, then logs `query` as a Query event
    /// in its own binlog transaction (with its own GTID); see the module docs.
    pub fn execute_ddl<T>(
        &self,
        context: &StatementContext,
        query: &str,
        apply: impl FnOnce(&Engine) -> Result<T, EngineError>,
    ) -> Result<T, DatabaseError> {
        self.execute_ddl_logged(context, query, apply).map(|(value, _)| value)
    }

    /// [`Database::execute_ddl`], also returning where the statement was
    /// logged (its GTID).
    pub fn execute_ddl_logged<T>(
        &self,
        context: &StatementContext,
        query: &str,
        apply: impl FnOnce(&Engine) -> Result<T, EngineError>,
    ) -> Result<(T, CommitInfo), DatabaseError> {
        self.execute_ddl_with_gtid(context, query, NextGtid::Automatic, apply)
    }

    /// [`Database::execute_ddl_logged`] with the GTID `next` (a DDL
    /// statement applied with the source's GTID on a replica).
    pub fn execute_ddl_with_gtid<T>(
        &self,
        context: &StatementContext,
        query: &str,
        next: NextGtid<'_>,
        apply: impl FnOnce(&Engine) -> Result<T, EngineError>,
    ) -> Result<(T, CommitInfo), DatabaseError> {
        self.execute_replicated_ddl(context, query, next, None, apply)
    }

    /// [`Database::execute_ddl_with_gtid`] for a replica worker's DDL
    /// statement: `slot`, the worker's applied source position, commits
    /// with the statement's engine part (see "DDL" in the module docs).
    pub fn execute_replicated_ddl<T>(
        &self,
        context: &StatementContext,
        query: &str,
        next: NextGtid<'_>,
        slot: Option<ApplierSlot>,
        apply: impl FnOnce(&Engine) -> Result<T, EngineError>,
    ) -> Result<(T, CommitInfo), DatabaseError> {
        let inner = &self.inner;
        next.given()?;
        inner.check_writable()?;
        let one_ddl = inner.ddl_lock.lock();
        inner.check_writable()?;
        let value = match slot {
            None => apply(&inner.engine)?,
            Some(slot) => self.apply_with_slot(slot, apply)?,
        };
        inner.crash.hit(crash_points::DDL_AFTER_ENGINE).map_err(|e| DatabaseError::Crash(e.to_string()))?;
        let cache = binlog_events::ddl_cache(&inner.binlog, context, query)?;
        let info = self.log_statement_transaction_locked(cache, next, one_ddl)?;
        inner.ddl_statements.fetch_add(1, Ordering::Relaxed);
        Ok((value, info))
    }

    /// Runs a DDL statement's engine part with `slot` staged for its first
    /// DDL record (the last, for `Engine::drop_tables`); one that logs no
    /// record (an ALTER TABLE changing nothing binlogd keeps) commits the
    /// slot in an engine transaction of its own, before the binlog write
    /// as a record would be. Called with the DDL lock, so the slot is the
    /// only one staged; the engine gives it to this thread's records only.
    fn apply_with_slot<T>(&self, slot: ApplierSlot, apply: impl FnOnce(&Engine) -> Result<T, EngineError>) -> Result<T> {
        let engine = &self.inner.engine;
        engine.stage_ddl_applier_slot(slot);
        let applied = apply(engine);
        let unused = engine.unstage_ddl_applier_slot();
        let value = applied?;
        if let Some(slot) = unused {
            let mut trx = engine.begin();
            trx.set_applier_slot(slot);
            trx.commit(None)?;
        }
        Ok(value)
    }

    /// Logs a transaction without row changes (an empty `BEGIN; COMMIT`)
    /// as DDL is logged: one at a time, under the DDL lock.
    fn log_statement_transaction(&self, cache: TransactionCache, next: NextGtid<'_>) -> Result<CommitInfo> {
        let inner = &self.inner;
        inner.check_writable()?;
        let one_ddl = inner.ddl_lock.lock();
        inner.check_writable()?;
        self.log_statement_transaction_locked(cache, next, one_ddl)
    }

    /// The binlog transaction of a DDL statement (already applied) or of
    /// an empty transaction; see the module docs. Called with the DDL lock.
    fn log_statement_transaction_locked(
        &self,
        cache: TransactionCache,
        next: NextGtid<'_>,
        one_ddl: parking_lot::MutexGuard<'_, ()>,
    ) -> Result<CommitInfo> {
        let inner = &self.inner;
        if let Some(engine_binlog) = inner.binlog_mode.engine() {
            return self.log_ddl_engine_binlog(engine_binlog, cache, next.given()?);
        }
        let key = RedoTrxKey { boot: inner.sink.boot(), trx: DDL_INTENT_TRX_BASE + inner.next_ddl_intent.fetch_add(1, Ordering::Relaxed) };
        // From here on a crash leaves the intent for recovery to settle.
        if let Err(error) = inner.redo.append(&redo_sink::ddl_intent_record(key), Durability::Sync) {
            // Applied in the engine, never to reach the binlog.
            let error = DatabaseError::Redo(error);
            inner.fail(&error.to_string());
            return Err(error);
        }

        let outcome: Arc<Mutex<Option<Result<(), EngineError>>>> = Arc::new(Mutex::new(None));
        let (hook_outcome, engine, redo) = (outcome.clone(), inner.engine.clone(), inner.redo.clone());
        let hook: CommitHook = Box::new(move |info: &CommitInfo| {
            // The GTID joins the engine's set first, then the record: a
            // checkpoint in between could only see the GTID twice, never lose it.
            let result = engine
                .apply_redo_transaction(&[], Some(info.gtid), None)
                .and_then(|()| {
                    redo.append(&redo_sink::commit_record(key, Some(info.gtid)), Durability::Buffered).map_err(redo_sink::storage_error)
                })
                .map(|_| ());
            *hook_outcome.lock() = Some(result);
        });
        // Commits ordered before it (a replica's, handed their commit turn
        // on in a group) reach the binlog first. The barrier fails only
        // after a failed redo sync: applied, never to reach the binlog.
        if let Err(error) = inner.redo_sync.barrier() {
            inner.fail(&error.to_string());
            return Err(error);
        }
        let logged = {
            let _commit_in_flight = inner.rotation.read();
            log_to_binlog(&inner.binlog, cache, hook, next)
        };
        let outcome = outcome.lock().take();
        match (logged, outcome) {
            (Ok(info), Some(Ok(()))) => {
                drop(one_ddl);
                self.rotate_if_full(&info)?;
                Ok(info)
            }
            (Ok(_), Some(Err(error))) => {
                let error = DatabaseError::Engine(error);
                inner.fail(&error.to_string());
                Err(error)
            }
            (Ok(_), None) => unreachable!("the binlog acknowledged a commit without running its hook"),
            (Err(error), _) => {
                let error = DatabaseError::Binlog(error);
                inner.fail(&error.to_string());
                Err(error)
            }
        }
    }
}

/// The binlog commit with the GTID `next`.
fn log_to_binlog(binlog: &BinaryLog, cache: TransactionCache, hook: CommitHook, next: NextGtid<'_>) -> binlog::Result<CommitInfo> {
    match next {
        NextGtid::Automatic => binlog.commit_with_hook(cache, Some(hook)),
        NextGtid::Owned { owned, given } => binlog.commit_owned(cache, owned, given, Some(hook)),
    }
}
