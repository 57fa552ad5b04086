//! A transaction's binlog events, built from the engine's row changes the
//! way mysqld logs a row-based transaction:
//!
//! ```text
//! Query "BEGIN"
//! per run of consecutive changes to one table of one kind:
//!     Rows_query (binlog_rows_query_log_events, before a statement's first run)
//!     Table_map (binlog_row_metadata: FULL, or MINIMAL)
//!     Write_rows | Update_rows | Delete_rows (binlog_row_image, see
//!     `row_image.rs`; updates are Partial_update_rows with
//!     binlog_row_value_options=PARTIAL_JSON, see `partial_json.rs`), each
//!     closed at binlog_row_event_max_size or where the columns of the
//!     images change; the run's last carries STMT_END_F
//! Xid
//! ```
//!
//! A run never spans two statements logged with their own settings
//! ([`StatementContext::statements`]); without such statements, consecutive
//! statements' changes to one table share a run.
//!
//! The cache's write set gets the row hashes of every change (`writeset.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use binlog::{BinaryLog, TransactionCache};
use binlog_format::constants::EventType;
use binlog_format::events::rows::rows_flags;
use binlog_format::events::{Event, ExtraRowInfo, PartialUpdateRowsEvent, PartitionInfo, QueryEvent, RowsEvent, RowsQueryEvent, XidEvent};
use binlog_format::RowsKind;
use engine::{ChangeKind, Engine, RowChange, TableDef, TableId};

use crate::error::{DatabaseError, Result};
use crate::partial_json::{self, RowJsonDiffs};
use crate::row_image::{before_image_columns, statement_at, update_after_image_columns, RowImage, RowMetadata, StatementLog};
use crate::table_maps::{EncodedTableMap, TableMaps};
use crate::writeset::Writeset;

/// `binlog_row_event_max_size` (MySQL's default): a rows event is closed
/// once its rows reach this many bytes.
pub const BINLOG_ROW_EVENT_MAX_SIZE: usize = 8192;

/// The session context a statement runs in, for the events' headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatementContext {
    /// The connection id (Query events' `thread_id`).
    pub thread_id: u32,
    /// The current database (`USE db`), written in Query events.
    pub database: String,
    /// Seconds since the epoch for event headers; 0 = now.
    pub timestamp: u32,
    /// The transaction's statements that ran with other than the default
    /// row logging (FULL images, FULL metadata, no Rows_query), in order.
    pub statements: StatementLog,
    /// `binlog_transaction_compression_level_zstd` when the session's
    /// `binlog_transaction_compression` is ON at commit; `None` when OFF.
    pub compression_level_zstd: Option<i32>,
}

impl StatementContext {
    pub fn new(thread_id: u32, database: impl Into<String>) -> StatementContext {
        StatementContext {
            thread_id,
            database: database.into(),
            timestamp: 0,
            statements: StatementLog::new(),
            compression_level_zstd: None,
        }
    }

    pub(crate) fn timestamp_or_now(&self) -> u32 {
        if self.timestamp != 0 {
            self.timestamp
        } else {
            binlog::log::now_seconds()
        }
    }
}

fn row_event_error(error: impl std::fmt::Display) -> DatabaseError {
    DatabaseError::RowEvent(error.to_string())
}

fn kind_of(change: &RowChange) -> RowsKind {
    match change.kind {
        ChangeKind::Insert => RowsKind::Write,
        ChangeKind::Update => RowsKind::Update,
        ChangeKind::Delete => RowsKind::Delete,
    }
}

/// The events of a row-based transaction, ending with Xid `xid`.
pub fn transaction_cache(
    binlog: &BinaryLog,
    tables: &Tables<'_>,
    changes: &[RowChange],
    context: &StatementContext,
    xid: u64,
) -> Result<TransactionCache> {
    let mut events = RowEvents::begin(binlog, context)?;
    events.append(tables, changes, context)?;
    events.finish(xid, context)
}

/// Where row events find their tables: the engine's definitions and the
/// database's encoded Table_maps.
#[derive(Clone, Copy)]
pub struct Tables<'a> {
    pub engine: &'a Engine,
    pub maps: &'a TableMaps,
}

/// A transaction's events built as it runs: `BEGIN`, then the row events
/// of its changes, appended statement by statement (`append` encodes the
/// changes it has not seen), then the Xid at commit. A run of changes
/// that a statement boundary splits gets a Table_map on each side, as in
/// mysqld, which logs each statement's rows with its own Table_map.
pub struct RowEvents {
    cache: TransactionCache,
    tables: HashMap<TableId, Arc<EncodedTableMap>>,
    writeset: Writeset,
    /// `changes[..encoded]` are in the cache.
    encoded: usize,
}

impl RowEvents {
    pub fn begin(binlog: &BinaryLog, context: &StatementContext) -> Result<RowEvents> {
        let mut cache = binlog.new_cache();
        cache.append(&Event::Query(QueryEvent::new(context.thread_id, &context.database, "BEGIN")), context.timestamp_or_now())?;
        Ok(RowEvents { cache, tables: HashMap::new(), writeset: Writeset::default(), encoded: 0 })
    }

    /// How many of the transaction's changes are in the cache.
    pub fn encoded_changes(&self) -> usize {
        self.encoded
    }

    /// Appends the row events of `changes[self.encoded_changes()..]`
    /// (`changes` is the transaction's whole list). An error leaves the
    /// cache part-written: the transaction must be rolled back.
    pub fn append(&mut self, tables: &Tables<'_>, changes: &[RowChange], context: &StatementContext) -> Result<()> {
        if changes.len() < self.encoded {
            return Err(row_event_error(format!("{} changes, but {} are logged already", changes.len(), self.encoded)));
        }
        let timestamp = context.timestamp_or_now();
        let mut start = self.encoded;
        while start < changes.len() {
            let (statement, statement_end) = statement_at(&context.statements, start, changes.len());
            let (table_id, kind) = (changes[start].table, kind_of(&changes[start]));
            let end = start + changes[start..statement_end].iter().take_while(|c| c.table == table_id && kind_of(c) == kind).count();
            let encoded = match self.tables.entry(table_id) {
                std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
                std::collections::hash_map::Entry::Vacant(entry) => entry.insert(tables.maps.get(tables.engine, table_id)?),
            };
            let encoded = Arc::clone(encoded);
            let metadata = statement.map_or(RowMetadata::Full, |statement| statement.logging.metadata);
            if let Some(statement) = statement.filter(|statement| statement.logging.rows_query && statement.first_change == start) {
                let query = RowsQueryEvent { query: statement.query.as_bytes().to_vec() };
                self.cache.append(&Event::RowsQuery(query), timestamp)?;
            }
            self.cache.append_body(EventType::TableMap as u8, encoded.body_for(metadata), timestamp)?;
            let run = &changes[start..end];
            let image = statement.map_or(RowImage::Full, |statement| statement.logging.image);
            let assigned = statement.map_or(&[][..], |statement| &statement.assigned_columns);
            match statement {
                Some(statement) if statement.logging.partial_json && kind == RowsKind::Update => {
                    let first = start - statement.first_change;
                    let diffs = statement.json_diffs.get(first..first + run.len());
                    let images = RunImages { image, assigned, json_diffs: diffs };
                    self.append_partial_json_updates(&encoded, run, images, timestamp)?
                }
                _ if image == RowImage::Full => self.append_full_rows(&encoded, kind, run, timestamp)?,
                _ => self.append_partial_rows(&encoded, kind, run, image, assigned, timestamp)?,
            }
            start = end;
            self.encoded = end;
        }
        Ok(())
    }

    /// One run's rows with every column in each image.
    fn append_full_rows(&mut self, encoded: &EncodedTableMap, kind: RowsKind, run: &[RowChange], timestamp: u32) -> Result<()> {
        let (def, map) = (&*encoded.def, &encoded.map);
        let table_id = def.id;
        let mut event = RowsEvent::empty(kind, table_id, map.columns.len());
        for change in run {
            let extra_data = partition_extra_data(def, change)?;
            if event.rows.is_empty() {
                event.extra_data.clone_from(&extra_data);
            }
            // Closed before the row that would follow a full event, so the
            // run's last event always holds rows and carries STMT_END_F; and
            // before a row of another partition, whose id the event's extra
            // data names (as mysqld does).
            if event.rows.len() >= BINLOG_ROW_EVENT_MAX_SIZE || event.extra_data != extra_data {
                let mut next = RowsEvent::empty(kind, table_id, map.columns.len());
                next.extra_data = extra_data;
                let full = std::mem::replace(&mut event, next);
                self.cache.append(&full.into_event(), timestamp)?;
            }
            self.writeset.add_change(def, change);
            let pushed = match (kind, &change.before, &change.after) {
                (RowsKind::Write, _, Some(after)) => event.push_write(map, after),
                (RowsKind::Update, Some(before), Some(after)) => event.push_update(map, before, after),
                (RowsKind::Delete, Some(before), _) => event.push_delete(map, before),
                _ => return Err(row_event_error(format!("a {kind:?} change without its images"))),
            };
            pushed.map_err(row_event_error)?;
        }
        event.flags |= rows_flags::STMT_END_F;
        self.cache.append(&event.into_event(), timestamp)?;
        Ok(())
    }

    /// One run's rows with the images `image` gives: an event holds rows
    /// whose images have the same columns, so a row whose columns differ
    /// from the last one's starts a new event (as MySQL's
    /// `binlog_prepare_pending_rows_event` does).
    fn append_partial_rows(
        &mut self,
        encoded: &EncodedTableMap,
        kind: RowsKind,
        run: &[RowChange],
        image: RowImage,
        assigned: &[usize],
        timestamp: u32,
    ) -> Result<()> {
        let (def, map) = (&*encoded.def, &encoded.map);
        let column_count = map.columns.len();
        let mut before_columns = Vec::new();
        let mut after_columns = Vec::new();
        let mut all = Vec::new();
        before_image_columns(def, RowImage::Full, &mut all);
        if kind.has_before_image() {
            before_image_columns(def, image, &mut before_columns);
        }
        let mut event: Option<RowsEvent> = None;
        for change in run {
            let (before, after) = (change.before.as_deref().map(Vec::as_slice), change.after.as_deref().map(Vec::as_slice));
            match (kind, before, after) {
                (RowsKind::Update, Some(before), Some(after)) => {
                    update_after_image_columns(def, image, assigned, before, after, &mut after_columns)
                }
                (RowsKind::Write, _, Some(_)) => after_columns.clone_from(&all),
                (RowsKind::Delete, Some(_), _) => {}
                _ => return Err(row_event_error(format!("a {kind:?} change without its images"))),
            }
            let extra_data = partition_extra_data(def, change)?;
            if !event.as_ref().is_some_and(|event| takes_next_row(event, &extra_data, &before_columns, &after_columns)) {
                if let Some(done) = event.take() {
                    self.cache.append(&done.into_event(), timestamp)?;
                }
                let mut next = RowsEvent::with_columns(kind, def.id, column_count, &before_columns, &after_columns);
                next.extra_data = extra_data;
                event = Some(next);
            }
            self.writeset.add_change(def, change);
            let event = event.as_mut().expect("set above");
            event.push_full_rows(map, before, after).map_err(row_event_error)?;
        }
        if let Some(mut last) = event {
            last.flags |= rows_flags::STMT_END_F;
            self.cache.append(&last.into_event(), timestamp)?;
        }
        Ok(())
    }

    /// One run of updates as Partial_update_rows events
    /// (`binlog_row_value_options = PARTIAL_JSON`, see `partial_json.rs`),
    /// each closed where `append_partial_rows` closes one.
    fn append_partial_json_updates(
        &mut self,
        encoded: &EncodedTableMap,
        run: &[RowChange],
        images: RunImages<'_>,
        timestamp: u32,
    ) -> Result<()> {
        let (def, map) = (&*encoded.def, &encoded.map);
        let mut before_columns = Vec::new();
        let mut after_columns = Vec::new();
        before_image_columns(def, images.image, &mut before_columns);
        let mut event: Option<PartialUpdateRowsEvent> = None;
        // The current event's after-image columns by position.
        let mut after_positions = Vec::new();
        for (index, change) in run.iter().enumerate() {
            let (Some(before), Some(after)) = (change.before.as_deref(), change.after.as_deref()) else {
                return Err(row_event_error("an update without its images"));
            };
            update_after_image_columns(def, images.image, images.assigned, before, after, &mut after_columns);
            let extra_data = partition_extra_data(def, change)?;
            if !event.as_ref().is_some_and(|event| takes_next_row(&event.rows, &extra_data, &before_columns, &after_columns)) {
                if let Some(done) = event.take() {
                    self.cache.append(&Event::PartialUpdateRows(done), timestamp)?;
                }
                let mut next = PartialUpdateRowsEvent::with_columns(def.id, map.columns.len(), &before_columns, &after_columns);
                next.rows.extra_data = extra_data;
                after_positions = next.rows.after_columns();
                event = Some(next);
            }
            self.writeset.add_change(def, change);
            let event = event.as_mut().expect("set above");
            let diffs = images.json_diffs.and_then(|diffs| diffs.get(index));
            let (value_options, after_values) = partial_json::after_image(def, &after_positions, before, after, diffs);
            event.push_update_of_row(map, before, value_options, &after_values).map_err(row_event_error)?;
        }
        if let Some(mut last) = event {
            last.rows.flags |= rows_flags::STMT_END_F;
            self.cache.append(&Event::PartialUpdateRows(last), timestamp)?;
        }
        Ok(())
    }

    /// The cache, ended by Xid `xid`.
    pub fn finish(mut self, xid: u64, context: &StatementContext) -> Result<TransactionCache> {
        self.cache.writeset = std::mem::take(&mut self.writeset).finish();
        self.cache.append(&Event::Xid(XidEvent { xid }), context.timestamp_or_now())?;
        // Read at commit, as MySQL reads it when it compresses the cache.
        self.cache.set_compression_level_zstd(context.compression_level_zstd);
        Ok(self.cache)
    }
}

/// How a run of updates logged with PARTIAL_JSON takes its images: the
/// statement's `binlog_row_image` and assigned columns, and the JSON diffs
/// of each of the run's rows (`None` when the statement computed none).
struct RunImages<'a> {
    image: RowImage,
    assigned: &'a [usize],
    json_diffs: Option<&'a [RowJsonDiffs]>,
}

/// The extra row info of a partitioned table's row event: the partition
/// the row is in (a Write's new row, a Delete's old one), and for an
/// Update the partition it came from too, as MySQL 8.0.16+ writes them.
/// Empty for a table that is not partitioned.
fn partition_extra_data(def: &TableDef, change: &RowChange) -> Result<Vec<u8>> {
    if def.partitioning.is_none() {
        return Ok(Vec::new());
    }
    let partition_of = |row: &Option<Arc<engine::Row>>| -> Result<u16> {
        let row = row.as_deref().ok_or_else(|| row_event_error("a change without its image"))?;
        Ok(def.partition_of(row).map_err(row_event_error)?.unwrap_or(0))
    };
    let partition = match change.kind {
        ChangeKind::Insert => PartitionInfo { partition_id: partition_of(&change.after)?, source_partition_id: None },
        ChangeKind::Delete => PartitionInfo { partition_id: partition_of(&change.before)?, source_partition_id: None },
        ChangeKind::Update => {
            PartitionInfo { partition_id: partition_of(&change.after)?, source_partition_id: Some(partition_of(&change.before)?) }
        }
    };
    let mut extra_data = Vec::new();
    ExtraRowInfo { ndb: None, partition: Some(partition) }.encode(&mut extra_data);
    Ok(extra_data)
}

/// A DDL statement as its own binlog transaction (Gtid, Query).
pub fn ddl_cache(binlog: &BinaryLog, context: &StatementContext, query: &str) -> Result<TransactionCache> {
    let mut cache = binlog.new_cache();
    cache.append(&Event::Query(QueryEvent::new(context.thread_id, &context.database, query)), context.timestamp_or_now())?;
    Ok(cache)
}

/// `BEGIN; COMMIT`: a transaction that changed nothing, logged to mark a
/// given GTID executed (MySQL's empty transaction).
pub fn empty_transaction_cache(binlog: &BinaryLog, context: &StatementContext) -> Result<TransactionCache> {
    let mut cache = binlog.new_cache();
    let timestamp = context.timestamp_or_now();
    cache.append(&Event::Query(QueryEvent::new(context.thread_id, &context.database, "BEGIN")), timestamp)?;
    cache.append(&Event::Query(QueryEvent::new(context.thread_id, &context.database, "COMMIT")), timestamp)?;
    Ok(cache)
}

/// Whether the next row, of these partition data and column bitmaps,
/// goes into `event` rather than a new one. As in MySQL, an event ends
/// at `binlog_row_event_max_size` or where its rows' shape changes.
fn takes_next_row(event: &RowsEvent, extra_data: &[u8], before_columns: &[u8], after_columns: &[u8]) -> bool {
    event.rows.len() < BINLOG_ROW_EVENT_MAX_SIZE
        && event.extra_data == extra_data
        && (!event.kind.has_before_image() || event.columns_before == before_columns)
        && (!event.kind.has_after_image() || event.columns_after == after_columns)
}
