//! The replica's applier: what each worker does with a transaction the
//! pipeline (`replica` crate) hands it. MySQL's `Rows_log_event::do_apply_event`
//! and `Query_log_event::do_apply_event`, per worker.
//!
//! | the transaction holds | `apply` (in parallel)                     | `commit` (in commit order)                          |
//! |-----------------------|-------------------------------------------|-----------------------------------------------------|
//! | a GTID already executed here | nothing (owning it fails: executed) | nothing: skipped, as MySQL skips it             |
//! | BEGIN, Table_map, rows…, Xid/COMMIT | rows applied to one engine transaction (`ReplicatedRows`); written ahead past `binlogd_write_ahead_min_changes` changes, as a session's | two-phase commit with the source's GTID (and its original commit timestamp and server version) |
//! | one Query (DDL)       | remembered                                | run by the worker's system session with `gtid_next` = the GTID, so the DDL and its GTID are logged as one transaction, and with the worker's applied position, which its engine DDL record carries |
//! | BEGIN; COMMIT (an empty GTID transaction) | nothing                | logged as an empty transaction with the GTID        |
//!
//! The GTID is owned from `apply` on (MySQL owns it at `SET gtid_next`):
//! a transaction received twice (after a reconnect) cannot be applied
//! twice, and one executed before a crash is skipped.
//!
//! DDL waits for its commit turn because it cannot be undone: a failure
//! of an earlier transaction must be able to stop the applier before it.
//!
//! Every commit carries the worker's applied position (`applied_slot.rs`)
//! in the same engine transaction as its rows. A DDL statement commits
//! through the SQL layer: the worker's system session hands the position
//! to the statement, and the engine's DDL redo record carries it
//! (`Database::execute_replicated_ddl`), so the position is durable
//! exactly when the DDL is, as MySQL 8's atomic DDL updates
//! `mysql.slave_worker_info` in its data-dictionary transaction: after a
//! crash a file-and-position replica of a source without GTIDs neither
//! runs the DDL again nor skips it. A statement that changed nothing in
//! the engine (`CREATE TABLE IF NOT EXISTS` of a table that exists)
//! commits its position by itself after it. `DROP TABLE a, b` logs a
//! record per table; the last one carries the position.
//! Transactions skipped for their GTID record nothing: they are skipped
//! again after a crash.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use binlog::{GivenGtid, OwnedGtid, Ownership};
use binlog_format::constants::EventType;
use binlog_format::events::gtid::GtidEvent;
use binlog_format::frame::RawEvent;
use binlog_format::Event;
use database::replicated_rows::{ApplyError, ReplicatedRows, SourcePosition};
use database::{CommitRequest, Database, DatabaseError, NextGtid, StatementContext, WrittenAhead};
use engine::{ApplierSlot, Transaction};
use protocol::MysqlError;
use replica::relay::events::TransactionEvents;
use replica::{AppliedCheckpoint, Applier, BoundaryEntry, WorkerApplier};

use crate::error::{database_error, not_supported};
use crate::exec::gtid_next::GtidNext;
use crate::replica::applied_slot;
use crate::replica::crash_points::{self, CrashPoints};
use crate::session::{Shared, SqlSession};

/// ER_REPLICA_RELAY_LOG_READ_FAILURE: an event that does not decode.
const ER_RELAY_LOG_READ_FAILURE: u16 = 1594;

/// Makes the workers' sessions; SHOW REPLICA STATUS reads what they share.
pub struct SqlApplier {
    shared: Arc<Shared>,
    progress: Arc<ApplierProgress>,
    /// The source settings' `position_epoch`, written into every slot.
    position_epoch: u64,
    crash: CrashPoints,
}

/// What the workers report for Seconds_Behind_Source.
#[derive(Debug, Default)]
pub struct ApplierProgress {
    /// The source's original commit timestamp (µs) of the last transaction
    /// committed here.
    pub last_original_commit_us: AtomicU64,
    /// Transactions skipped because their GTID was executed here already
    /// (received again): a replica that resumes where it applied up to
    /// receives none (SHOW STATUS Replica_transactions_skipped_executed).
    pub transactions_skipped_executed: AtomicU64,
}

impl SqlApplier {
    pub fn new(shared: Arc<Shared>, progress: Arc<ApplierProgress>, position_epoch: u64) -> SqlApplier {
        SqlApplier { shared, progress, position_epoch, crash: CrashPoints::from_env() }
    }
}

impl Applier for SqlApplier {
    fn worker(&self, worker_index: usize) -> Box<dyn WorkerApplier> {
        Box::new(WorkerSession {
            shared: self.shared.clone(),
            progress: self.progress.clone(),
            worker_index,
            system_session: None,
            pending: Pending::Nothing,
            position_epoch: self.position_epoch,
            checkpoint: None,
            crash: self.crash.clone(),
            tables: ReplicatedRows::new(),
        })
    }
}

/// What `apply` left for `commit`.
enum Pending {
    Nothing,
    /// The GTID is executed here already.
    Skip,
    Rows(Box<RowsTransaction>),
    Ddl {
        gtid: Option<(OwnedGtid, GivenGtid)>,
        database: String,
        query: String,
    },
}

struct RowsTransaction {
    trx: Transaction,
    ahead: Option<WrittenAhead>,
    gtid: Option<(OwnedGtid, GivenGtid)>,
    context: StatementContext,
}

struct WorkerSession {
    shared: Arc<Shared>,
    progress: Arc<ApplierProgress>,
    worker_index: usize,
    /// Runs the DDL statements, with every privilege; made at the first.
    system_session: Option<SqlSession>,
    pending: Pending,
    position_epoch: u64,
    /// What the next commit records in this worker's slot.
    checkpoint: Option<AppliedCheckpoint>,
    crash: CrashPoints,
    /// The table maps, kept from transaction to transaction.
    tables: ReplicatedRows,
}

impl WorkerSession {
    fn db(&self) -> &Database {
        &self.shared.db
    }

    /// The pseudo connection id this worker's events carry (Query events'
    /// thread_id): above the ids clients get for a long time.
    fn thread_id(&self) -> u32 {
        u32::MAX - self.worker_index as u32
    }

    /// The slot the coming commit writes, if the pipeline gave a checkpoint.
    fn take_slot(&mut self) -> Option<ApplierSlot> {
        let checkpoint = self.checkpoint.take()?;
        Some(ApplierSlot { slot: self.worker_index as u32, bytes: applied_slot::encode(self.position_epoch, &checkpoint) })
    }
}

/// The transaction as `apply` reads it, event by event.
struct Reading {
    gtid: Option<(OwnedGtid, GivenGtid)>,
    /// The Gtid event's header timestamp: the statement's time on the source.
    timestamp: u32,
    trx: Option<Transaction>,
    ahead: Option<WrittenAhead>,
    tables: ReplicatedRows,
    ddl: Option<(String, String)>,
    skip: bool,
}

impl WorkerApplier for WorkerSession {
    fn apply(&mut self, entry: &BoundaryEntry, events: &mut TransactionEvents<'_>) -> Result<(), MysqlError> {
        self.pending = Pending::Nothing;
        let has_checksum = entry.format.format.has_checksum();
        let mut tables = std::mem::take(&mut self.tables);
        tables.begin_transaction();
        let mut reading = Reading { gtid: None, timestamp: 0, trx: None, ahead: None, tables, ddl: None, skip: false };
        let outcome = (|| {
            while let Some(bytes) = events.next_event()? {
                let raw = RawEvent::parse(bytes, has_checksum).map_err(|error| relay_read_failure(&error.to_string()))?;
                if self.table_map_again(&raw, &mut reading)? {
                    continue;
                }
                let event = Event::decode(&raw, &entry.format).map_err(|error| relay_read_failure(&error.to_string()))?;
                self.apply_event(entry, &raw, event, &mut reading)?;
                if reading.skip {
                    return Ok(());
                }
            }
            Ok(())
        })();
        self.tables = std::mem::take(&mut reading.tables);
        if let Err(error) = outcome {
            if let Some(trx) = reading.trx.take() {
                trx.rollback();
            }
            return Err(error);
        }
        self.pending = if reading.skip {
            Pending::Skip
        } else if let Some((database, query)) = reading.ddl {
            Pending::Ddl { gtid: reading.gtid, database, query }
        } else {
            let trx = reading.trx.unwrap_or_else(|| self.db().begin());
            let context = StatementContext { thread_id: self.thread_id(), timestamp: reading.timestamp, ..StatementContext::default() };
            Pending::Rows(Box::new(RowsTransaction { trx, ahead: reading.ahead, gtid: reading.gtid, context }))
        };
        Ok(())
    }

    fn commit(&mut self, entry: &BoundaryEntry) -> Result<(), MysqlError> {
        self.commit_ordered(entry, &|| {})
    }

    /// Rows transactions hand the commit turn on once the database fixed
    /// their place (`CommitRequest::on_ordered`); DDL and
    /// skipped transactions when they return.
    fn commit_ordered(&mut self, _entry: &BoundaryEntry, ordered: &dyn Fn()) -> Result<(), MysqlError> {
        let original_commit_us = match std::mem::replace(&mut self.pending, Pending::Nothing) {
            Pending::Nothing => {
                self.checkpoint = None;
                return Ok(());
            }
            Pending::Skip => {
                self.checkpoint = None;
                self.progress.transactions_skipped_executed.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            Pending::Rows(rows) => {
                let RowsTransaction { mut trx, ahead, gtid, context } = *rows;
                if let Some(slot) = self.take_slot() {
                    trx.set_applier_slot(slot);
                }
                let next = match &gtid {
                    Some((owned, given)) => NextGtid::Owned { owned, given: *given },
                    None => NextGtid::Automatic,
                };
                let committed = self.db().commit(CommitRequest { trx, context: &context, ahead, gtid: next, on_ordered: ordered });
                // `gtid` (the ownership) lives until here: it is released
                // once the GTID is executed, or never will be.
                committed.map_err(database_error)?;
                // Without a MySQL GTID (MariaDB, anonymous): the event time.
                gtid.and_then(|(_, given)| given.original_commit_timestamp_us).or(Some(u64::from(context.timestamp) * 1_000_000))
            }
            Pending::Ddl { gtid, database, query } => {
                let original = gtid.as_ref().and_then(|(_, given)| given.original_commit_timestamp_us);
                let slot = self.take_slot();
                let unused = self.run_ddl(gtid.map(|(owned, _)| owned), database, &query, slot)?;
                self.crash
                    .hit(crash_points::DDL_AFTER_STATEMENT)
                    .map_err(|error| database_error(DatabaseError::Crash(error.to_string())))?;
                if let Some(slot) = unused {
                    // The statement changed nothing in the engine (IF [NOT]
                    // EXISTS with nothing to do): the position by itself.
                    let mut trx = self.db().begin();
                    trx.set_applier_slot(slot);
                    trx.commit(None).map_err(|error| database_error(error.into()))?;
                }
                original
            }
        };
        self.crash
            .hit(crash_points::COMMIT_AFTER_ENGINE_COMMIT)
            .map_err(|error| database_error(DatabaseError::Crash(error.to_string())))?;
        if let Some(original) = original_commit_us {
            self.progress.last_original_commit_us.fetch_max(original, Ordering::Relaxed);
        }
        Ok(())
    }

    fn applied_checkpoint(&mut self, checkpoint: AppliedCheckpoint) {
        self.checkpoint = Some(checkpoint);
    }

    fn rollback(&mut self, _entry: &BoundaryEntry) {
        self.checkpoint = None;
        if let Pending::Rows(rows) = std::mem::replace(&mut self.pending, Pending::Nothing) {
            rows.trx.rollback();
        }
    }
}

impl WorkerSession {
    /// A Table_map event the worker has seen before, byte for byte: mapped
    /// again without decoding it (true), else left for `apply_event`.
    fn table_map_again(&self, raw: &RawEvent<'_>, reading: &mut Reading) -> Result<bool, MysqlError> {
        if raw.header.event_type != EventType::TableMap as u8 {
            return Ok(false);
        }
        reading.tables.table_map_again(self.shared.db.catalog(), raw.body).map_err(apply_error)
    }

    fn apply_event(&mut self, entry: &BoundaryEntry, raw: &RawEvent<'_>, event: Event, reading: &mut Reading) -> Result<(), MysqlError> {
        match event {
            Event::Gtid(gtid) => {
                reading.timestamp = raw.header.timestamp;
                match self.db().acquire_gtid(gtid.gtid) {
                    Ownership::AlreadyExecuted => reading.skip = true,
                    Ownership::Owned(owned) => reading.gtid = Some((owned, given_gtid(&gtid))),
                }
            }
            Event::AnonymousGtid(_) => reading.timestamp = raw.header.timestamp,
            // MariaDB: its GTID event opens the transaction (no BEGIN), or
            // announces one DDL statement (standalone). Its GTIDs are not
            // MySQL's: the transaction commits with this server's next one.
            Event::MariadbGtid(gtid) => {
                reading.timestamp = raw.header.timestamp;
                if gtid.is_prepared_xa() {
                    return Err(not_supported("XA transactions from a MariaDB source"));
                }
                if !gtid.is_standalone() {
                    reading.trx.get_or_insert_with(|| self.shared.db.begin());
                }
            }
            Event::Query(query) => {
                let text = String::from_utf8_lossy(&query.query);
                if text.eq_ignore_ascii_case("BEGIN") {
                    reading.trx.get_or_insert_with(|| self.shared.db.begin());
                } else if text.eq_ignore_ascii_case("COMMIT") {
                } else if reading.trx.is_some() {
                    // Statement-based changes inside a transaction
                    // (binlog_format=STATEMENT or MIXED on the source).
                    return Err(not_supported(format!("statement-based events from a source ({text})")));
                } else {
                    reading.ddl = Some((String::from_utf8_lossy(&query.database).into_owned(), text.into_owned()));
                }
            }
            Event::TableMap(map) => {
                // Kept by its bytes only when they are the map's own (not
                // those of an event it came compressed in).
                let body = if raw.header.event_type == EventType::TableMap as u8 { raw.body } else { &[] };
                reading.tables.table_map_event(self.shared.db.catalog(), &map, body).map_err(apply_error)?
            }
            Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
                let trx = reading.trx.get_or_insert_with(|| self.shared.db.begin());
                let at = SourcePosition { log_file: &entry.source_log_file, end_log_pos: u64::from(raw.header.log_pos) };
                reading.tables.rows(trx, &rows, &at).map_err(apply_error)?;
                let db = &self.shared.db;
                if db.wants_write_ahead(trx, &reading.ahead) {
                    let context =
                        StatementContext { thread_id: self.thread_id(), timestamp: reading.timestamp, ..StatementContext::default() };
                    db.write_ahead(trx, &mut reading.ahead, &context).map_err(database_error)?;
                }
            }
            Event::PartialUpdateRows(partial) => {
                let trx = reading.trx.get_or_insert_with(|| self.shared.db.begin());
                let at = SourcePosition { log_file: &entry.source_log_file, end_log_pos: u64::from(raw.header.log_pos) };
                reading.tables.partial_update_rows(trx, &partial, &at).map_err(apply_error)?;
                let db = &self.shared.db;
                if db.wants_write_ahead(trx, &reading.ahead) {
                    let context =
                        StatementContext { thread_id: self.thread_id(), timestamp: reading.timestamp, ..StatementContext::default() };
                    db.write_ahead(trx, &mut reading.ahead, &context).map_err(database_error)?;
                }
            }
            // MariaDB's log_bin_compress=ON: the plain event inside.
            Event::MariadbCompressed(compressed) => self.apply_event(entry, raw, *compressed.inner, reading)?,
            // binlog_transaction_compression=ON: the transaction's events,
            // each applied as if it stood in the relay log.
            Event::TransactionPayload(payload) => {
                let bytes = payload.decompress().map_err(|error| relay_read_failure(&format!("a Transaction_payload: {error}")))?;
                let mut at = 0;
                while at < bytes.len() && !reading.skip {
                    let inner = RawEvent::parse(&bytes[at..], false).map_err(|error| relay_read_failure(&error.to_string()))?;
                    if self.table_map_again(&inner, reading)? {
                        at += inner.bytes.len();
                        continue;
                    }
                    let event = Event::decode(&inner, &entry.format).map_err(|error| relay_read_failure(&error.to_string()))?;
                    if matches!(event, Event::TransactionPayload(_) | Event::Gtid(_) | Event::FormatDescription(_)) {
                        return Err(relay_read_failure("a Transaction_payload holding a payload, Gtid or Format_description"));
                    }
                    at += inner.bytes.len();
                    self.apply_event(entry, &inner, event, reading)?;
                }
            }
            Event::Xid(_) | Event::RowsQuery(_) | Event::Ignorable { .. } | Event::LargeTransactionHeader(_) | Event::AnnotateRows(_) => {}
            Event::Unknown { event_type, .. } if is_ignorable(raw) || is_mariadb_annotation(event_type) => {}
            other => {
                return Err(relay_read_failure(&format!(
                    "an event of type {} inside a transaction is not supported by binlogd's applier",
                    other.event_type()
                )));
            }
        }
        Ok(())
    }

    /// Runs a DDL statement with its GTID through the worker's system
    /// session (the SQL layer's own DDL path: parse, check, engine, binlog),
    /// `slot` committing in the statement's engine DDL record. Returns the
    /// slot when the statement reached no engine DDL, for the caller to
    /// commit by itself.
    fn run_ddl(
        &mut self,
        owned: Option<OwnedGtid>,
        database: String,
        query: &str,
        slot: Option<ApplierSlot>,
    ) -> Result<Option<ApplierSlot>, MysqlError> {
        let shared = self.shared.clone();
        let session = self.system_session.get_or_insert_with(|| SqlSession::system(shared));
        session.set_database((!database.is_empty()).then_some(database));
        *session.gtid_next() = owned.map_or(GtidNext::Automatic, GtidNext::Owned);
        *session.applier_slot() = slot;
        let result = protocol::Session::query(session, query).map(|_| ());
        // Releases the GTID if the statement failed before logging it.
        *session.gtid_next() = GtidNext::Automatic;
        // Never left for a later statement.
        let unused = session.applier_slot().take();
        result.map(|()| unused)
    }
}

/// The Gtid event's GTID with the source's original commit timestamp and
/// server version, which a replica's own Gtid event repeats.
fn given_gtid(event: &GtidEvent) -> GivenGtid {
    GivenGtid {
        gtid: event.gtid,
        original_commit_timestamp_us: Some(event.original_commit_timestamp_us.unwrap_or(event.immediate_commit_timestamp_us)),
        original_server_version: Some(event.original_server_version.unwrap_or(event.immediate_server_version)),
    }
}

/// LOG_EVENT_IGNORABLE_F: a reader that does not know the event may skip it.
fn is_ignorable(raw: &RawEvent<'_>) -> bool {
    raw.header.flags & binlog_format::constants::LOG_EVENT_IGNORABLE_F != 0
}

/// MariaDB's Annotate_rows, Binlog_checkpoint, GTID and Gtid_list events
/// (160–163) carry nothing to apply.
fn is_mariadb_annotation(event_type: u8) -> bool {
    (160..=163).contains(&event_type)
}

fn relay_read_failure(reason: &str) -> MysqlError {
    MysqlError::new(ER_RELAY_LOG_READ_FAILURE, "HY000", format!("Relay log read failure: Could not parse relay log event entry. {reason}"))
}

fn apply_error(error: ApplyError) -> MysqlError {
    MysqlError::new(error.code, "HY000", error.message)
}
