//! Applying a source's row events to the engine: what a replica's workers
//! do with each transaction's `Table_map` and `Write/Update/Delete_rows`
//! events (MySQL's `Rows_log_event::do_apply_event`).
//!
//! | event | finds the row by | no row |
//! |-------|------------------|--------|
//! | Write_rows | (inserts) | — (a duplicate key is 1062) |
//! | Update_rows | primary key of the before image; a table without one: the first row equal to the whole before image | 1032 |
//! | Delete_rows | the same | 1032 |
//!
//! Rows are matched by their before image's key only (MySQL's default
//! `replica_exec_mode=STRICT` with a primary key): a row whose other
//! columns differ is still updated, as MySQL does.
//!
//! A Partial_update_rows event applies as Update_rows does, its JSON
//! columns sent as diffs applied to the replica's values.
//!
//! Partial images (a source with `binlog_row_image` MINIMAL or NOBLOB)
//! carry only the columns their bitmaps mark:
//!
//! | image | applied as |
//! |-------|------------|
//! | before, with the primary key | the row of that key |
//! | before, without it | the first row equal to it on the columns it has |
//! | after of an Update | its columns written over the stored row |
//! | after of a Write | its columns over the columns' defaults (NULL without one) |
//!
//! Signedness comes from the replica's own table: a source that sends no
//! SIGNEDNESS metadata (MariaDB with `binlog_row_metadata=NO_LOG`) would
//! otherwise decode an UNSIGNED column's high values as negative.
//!
//! Errors carry MySQL's replica message, the one `SHOW REPLICA STATUS`
//! shows in `Last_SQL_Error`.

use std::collections::HashMap;
use std::sync::Arc;

use binlog_format::events::table_map_metadata::OptionalMetadata;
use binlog_format::events::{AfterValue, JsonDiff, PartialUpdateRowsEvent};
use binlog_format::value::json::binary;
use binlog_format::{RowChange, RowsEvent, RowsKind, TableMap};
use engine::{EngineError, Row, ScanSpec, TableDef, TableId, Transaction, UpdateOutcome};

use crate::views::Catalog;

/// ER_KEY_NOT_FOUND: "Can't find record in '%s'".
pub const ER_KEY_NOT_FOUND: u16 = 1032;

/// Where the event that failed ends in the source's binlog, for the message.
/// Borrowed: only a failure's message reads it, so the rows events that
/// apply make no copy of the file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourcePosition<'a> {
    pub log_file: &'a str,
    pub end_log_pos: u64,
}

/// An apply failure as MySQL reports it: the code of the underlying error
/// and the replica's full message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApplyError {
    pub code: u16,
    pub message: String,
}

struct MappedTable {
    id: TableId,
    def: Arc<TableDef>,
    /// The source's map with the replica's signedness, for decoding.
    decode_map: TableMap,
    /// The primary key's columns (by column index): all a before image
    /// that holds them is decoded for.
    key_columns: Vec<bool>,
    /// The body of the Table_map event it came from (empty when it came
    /// decoded), to know that event again without decoding it.
    body: Vec<u8>,
}

/// At most this many table maps are kept between transactions (those of
/// the current transaction are kept beyond it).
const TABLE_MAPS_KEPT_MAX: usize = 1024;

/// The table maps a worker resolved. A source maps the same tables under
/// the same ids in transaction after transaction, so they are kept across
/// transactions: a Table_map event whose bytes equal the kept one's is
/// neither decoded nor mapped again (the table's definition is still looked
/// up by name each time, so DDL in between is seen). A rows event may use
/// only the maps of its own transaction, as before.
#[derive(Default)]
pub struct ReplicatedRows {
    tables: HashMap<u64, MappedTable>,
    /// The table ids the current transaction mapped.
    mapped: Vec<u64>,
}

impl ReplicatedRows {
    pub fn new() -> ReplicatedRows {
        ReplicatedRows::default()
    }

    /// Forgets which tables the previous transaction mapped.
    pub fn begin_transaction(&mut self) {
        self.mapped.clear();
    }

    /// A `Table_map` event: resolves the table (1146 if the replica lacks it).
    pub fn table_map(&mut self, catalog: Catalog<'_>, map: &TableMap) -> Result<(), ApplyError> {
        self.table_map_event(catalog, map, &[])
    }

    /// [`ReplicatedRows::table_map`] of a decoded event with its body, so
    /// that [`ReplicatedRows::table_map_again`] knows the event again.
    pub fn table_map_event(&mut self, catalog: Catalog<'_>, map: &TableMap, body: &[u8]) -> Result<(), ApplyError> {
        let def = table_def(catalog, &map.database, &map.table)?;
        let decode_map = with_local_signedness(map, &def);
        if self.tables.len() >= TABLE_MAPS_KEPT_MAX && !self.tables.contains_key(&map.table_id) {
            let mapped = &self.mapped;
            self.tables.retain(|table_id, _| mapped.contains(table_id));
        }
        let key_columns = key_columns(&def);
        self.tables.insert(map.table_id, MappedTable { id: def.id, def, decode_map, key_columns, body: body.to_vec() });
        self.mark_mapped(map.table_id);
        Ok(())
    }

    /// A Table_map event's body, not decoded: true when it equals the body
    /// of the map kept under its table id, which then maps the table for
    /// this transaction; false when it must be decoded and given to
    /// [`ReplicatedRows::table_map_event`].
    pub fn table_map_again(&mut self, catalog: Catalog<'_>, body: &[u8]) -> Result<bool, ApplyError> {
        // The first 6 bytes are the table id (a format with 4-byte ids
        // only misses here: its maps are kept under their decoded ids).
        let Some(id_bytes) = body.get(..6) else { return Ok(false) };
        let table_id = id_bytes.iter().rev().fold(0u64, |id, &byte| (id << 8) | u64::from(byte));
        let Some(kept) = self.tables.get_mut(&table_id) else { return Ok(false) };
        if kept.body.is_empty() || kept.body != body {
            return Ok(false);
        }
        let def = table_def(catalog, &kept.decode_map.database, &kept.decode_map.table)?;
        if !Arc::ptr_eq(&def, &kept.def) {
            // Altered since: the signedness comes from the new definition.
            kept.decode_map = with_local_signedness(&kept.decode_map, &def);
            kept.key_columns = key_columns(&def);
            kept.id = def.id;
            kept.def = def;
        }
        self.mark_mapped(table_id);
        Ok(true)
    }

    fn mark_mapped(&mut self, table_id: u64) {
        if !self.mapped.contains(&table_id) {
            self.mapped.push(table_id);
        }
    }

    /// A rows event: applies every row in it to `trx`. On an error the
    /// event's earlier rows stay applied; the caller rolls the
    /// transaction back, as the replica applier does.
    pub fn rows(&mut self, trx: &mut Transaction, event: &RowsEvent, at: &SourcePosition<'_>) -> Result<usize, ApplyError> {
        let Some(table) = self.tables.get(&event.table_id).filter(|_| self.mapped.contains(&event.table_id)) else {
            return Err(ApplyError {
                code: 1032,
                message: format!(
                    "Could not execute {} event; no Table_map for table id {}, Error_code: 1032; the event's source log {}, end_log_pos {}",
                    event_name(event.kind),
                    event.table_id,
                    at.log_file,
                    at.end_log_pos
                ),
            });
        };
        let fail = |code: u16, reason: String, handler: &str| {
            ApplyError {
            code,
            message: format!(
                "Could not execute {} event on table {}; {reason}, Error_code: {code}; handler error {handler}; the event's source log {}, end_log_pos {}",
                event_name(event.kind),
                table.def.qualified_name(),
                at.log_file,
                at.end_log_pos
            ),
        }
        };
        let engine_error = |error: EngineError| {
            let handler = match error {
                EngineError::DuplicateEntry { .. } => "HA_ERR_FOUND_DUPP_KEY",
                EngineError::LockWaitTimeout => "HA_ERR_LOCK_WAIT_TIMEOUT",
                EngineError::Deadlock => "HA_ERR_LOCK_DEADLOCK",
                EngineError::TableFull { .. } => "HA_ERR_RECORD_FILE_FULL",
                _ => "HA_ERR_GENERIC",
            };
            fail(error.mysql_code(), error.to_string(), handler)
        };
        let not_found = || fail(ER_KEY_NOT_FOUND, format!("Can't find record in '{}'", table.def.name), "HA_ERR_KEY_NOT_FOUND");
        let (before_columns, after_columns) = (event.before_columns(), event.after_columns());
        // A before image that holds the primary key finds its row by it
        // alone (below and in `find_row`): its other columns are not decoded.
        let by_key = table.def.has_primary_key() && table.def.primary_key.iter().all(|column| before_columns.contains(column));
        let changes = event
            .decode_rows_keeping(&table.decode_map, by_key.then_some(&table.key_columns[..]))
            .map_err(|error| fail(1594, format!("Relay log read failure: {error}"), "HA_ERR_CORRUPT_EVENT"))?;
        let applied = changes.len();
        let column_count = table.def.columns.len();
        let partial_before = event.kind.has_before_image() && before_columns.len() < column_count;
        let partial_after = event.kind.has_after_image() && after_columns.len() < column_count;
        for change in changes {
            match change {
                RowChange::Write(row) => {
                    let row = if partial_after { with_defaults(&table.def, &after_columns, row) } else { row };
                    trx.insert(table.id, row).map_err(engine_error)?;
                }
                RowChange::Update { before, after } if partial_before || partial_after => {
                    let Some((found, mut row)) = find_row(trx, table, &before_columns, &before).map_err(engine_error)? else {
                        return Err(not_found());
                    };
                    for (&column, value) in after_columns.iter().zip(after) {
                        row[column] = value;
                    }
                    let outcome = match found {
                        Found::ByPrimaryKey(key) => trx.update_by_pk(table.id, &key, row),
                        Found::ByRowKey(key) => trx.update(table.id, &key, row),
                    };
                    if outcome.map_err(engine_error)? == UpdateOutcome::Missing {
                        return Err(not_found());
                    }
                }
                RowChange::Delete(before) if partial_before => {
                    let deleted = match find_row(trx, table, &before_columns, &before).map_err(engine_error)? {
                        Some((Found::ByPrimaryKey(key), _)) => trx.delete_by_pk(table.id, &key).map_err(engine_error)?,
                        Some((Found::ByRowKey(key), _)) => trx.delete(table.id, &key).map_err(engine_error)?,
                        None => false,
                    };
                    if !deleted {
                        return Err(not_found());
                    }
                }
                RowChange::Update { before, after } => {
                    let outcome = match primary_row_key(&table.def, &before) {
                        Some(key) => trx.update(table.id, &key, after).map_err(engine_error)?,
                        None => match first_equal_row(trx, table, &before).map_err(engine_error)? {
                            Some(key) => trx.update(table.id, &key, after).map_err(engine_error)?,
                            None => UpdateOutcome::Missing,
                        },
                    };
                    if outcome == UpdateOutcome::Missing {
                        return Err(not_found());
                    }
                }
                RowChange::Delete(before) => {
                    let deleted = match primary_row_key(&table.def, &before) {
                        Some(key) => trx.delete(table.id, &key).map_err(engine_error)?,
                        None => match first_equal_row(trx, table, &before).map_err(engine_error)? {
                            Some(key) => trx.delete(table.id, &key).map_err(engine_error)?,
                            None => false,
                        },
                    };
                    if !deleted {
                        return Err(not_found());
                    }
                }
            }
        }
        Ok(applied)
    }
}

impl ReplicatedRows {
    /// A Partial_update_rows event (a source with
    /// `binlog_row_value_options = PARTIAL_JSON`): each row found as an
    /// Update_rows row is, its after image written over it, a JSON column
    /// sent as diffs applied to the value the replica holds (MySQL's
    /// `Field_json::unpack_diff`; 3648 when they do not fit it).
    pub fn partial_update_rows(
        &mut self,
        trx: &mut Transaction,
        event: &PartialUpdateRowsEvent,
        at: &SourcePosition<'_>,
    ) -> Result<usize, ApplyError> {
        const EVENT: &str = "Update_rows_partial";
        let rows = &event.rows;
        let fail = |code: u16, reason: String, table: &str| ApplyError {
            code,
            message: format!(
                "Could not execute {EVENT} event on table {table}; {reason}, Error_code: {code}; the event's source log {}, end_log_pos {}",
                at.log_file, at.end_log_pos
            ),
        };
        let Some(table) = self.tables.get(&rows.table_id).filter(|_| self.mapped.contains(&rows.table_id)) else {
            return Err(fail(ER_KEY_NOT_FOUND, format!("no Table_map for table id {}", rows.table_id), "?"));
        };
        let name = table.def.qualified_name();
        let engine_error = |error: EngineError| fail(error.mysql_code(), error.to_string(), &name);
        let updates =
            event.decode_rows(&table.decode_map).map_err(|error| fail(1594, format!("Relay log read failure: {error}"), &name))?;
        let (before_columns, after_columns) = (rows.before_columns(), rows.after_columns());
        let applied = updates.len();
        for update in updates {
            let Some((found, mut row)) = find_row(trx, table, &before_columns, &update.before).map_err(engine_error)? else {
                return Err(fail(ER_KEY_NOT_FOUND, format!("Can't find record in '{}'", table.def.name), &name));
            };
            for (&column, value) in after_columns.iter().zip(update.after) {
                row[column] = match value {
                    AfterValue::Full(value) => value,
                    AfterValue::Diffs(diffs) => with_diffs(&row[column], &diffs).ok_or_else(|| {
                        let reason =
                            format!("Could not apply JSON diff in table {}, column {}.", table.def.name, table.def.columns[column].name);
                        fail(ER_COULD_NOT_APPLY_JSON_DIFF, reason, &name)
                    })?,
                };
            }
            let outcome = match found {
                Found::ByPrimaryKey(key) => trx.update_by_pk(table.id, &key, row),
                Found::ByRowKey(key) => trx.update(table.id, &key, row),
            };
            if outcome.map_err(engine_error)? == UpdateOutcome::Missing {
                return Err(fail(ER_KEY_NOT_FOUND, format!("Can't find record in '{}'", table.def.name), &name));
            }
        }
        Ok(applied)
    }
}

/// ER_COULD_NOT_APPLY_JSON_DIFF: the replica's document is not the one
/// the source's diffs change.
pub const ER_COULD_NOT_APPLY_JSON_DIFF: u16 = 3648;

/// A stored JSON value with `diffs` applied; `None` when it is NULL or they
/// do not fit it.
fn with_diffs(stored: &binlog_format::Value, diffs: &[JsonDiff]) -> Option<binlog_format::Value> {
    let binlog_format::Value::Json(document) = stored else { return None };
    let mut document = binary::decode(document).ok()?;
    JsonDiff::apply_all(diffs, &mut document).ok()?;
    binary::to_binary(&document).ok().map(binlog_format::Value::Json)
}

/// Which columns (by index) make up `def`'s primary key.
fn key_columns(def: &TableDef) -> Vec<bool> {
    let mut columns = vec![false; def.columns.len()];
    for &column in &def.primary_key {
        if let Some(is_key) = columns.get_mut(column) {
            *is_key = true;
        }
    }
    columns
}

/// The replica's definition of a mapped table (1146 when it has none).
fn table_def(catalog: Catalog<'_>, database: &[u8], table: &[u8]) -> Result<Arc<TableDef>, ApplyError> {
    catalog
        .table(&String::from_utf8_lossy(database), &String::from_utf8_lossy(table))
        .map_err(|error| ApplyError { code: error.mysql_code(), message: format!("Error executing row event: '{error}'") })
}

/// How a partial before image found its row.
enum Found {
    ByPrimaryKey(Vec<binlog_format::Value>),
    ByRowKey(engine::RowKey),
}

/// The row a before image of `columns` names, with the row as stored: by
/// the primary key when the image has it, else the first row equal to the
/// image on its columns.
fn find_row(trx: &Transaction, table: &MappedTable, columns: &[usize], image: &Row) -> Result<Option<(Found, Row)>, EngineError> {
    let def = &table.def;
    let key: Option<Vec<binlog_format::Value>> = def
        .has_primary_key()
        .then(|| def.primary_key.iter().map(|column| columns.iter().position(|c| c == column).map(|at| image[at].clone())).collect())
        .flatten();
    if let Some(key) = key {
        return Ok(trx.get(table.id, &key)?.map(|row| (Found::ByPrimaryKey(key), row)));
    }
    let mut scan = trx.scan(table.id, &ScanSpec::primary())?;
    Ok(scan
        .find(|(_, row)| columns.iter().zip(image).all(|(&column, value)| row.get(column) == Some(value)))
        .map(|(key, row)| (Found::ByRowKey(key), row)))
}

/// A Write's partial after image completed with the other columns'
/// defaults, as MySQL's applier fills a record before unpacking into it.
fn with_defaults(def: &TableDef, columns: &[usize], image: Row) -> Row {
    let mut row: Row = def.columns.iter().map(|column| column.default.clone().unwrap_or(binlog_format::Value::Null)).collect();
    for (&column, value) in columns.iter().zip(image) {
        row[column] = value;
    }
    row
}

/// MySQL's event names, as its messages print them.
fn event_name(kind: RowsKind) -> &'static str {
    match kind {
        RowsKind::Write => "Write_rows",
        RowsKind::Update => "Update_rows",
        RowsKind::Delete => "Delete_rows",
    }
}

/// The clustered key of `row`'s primary key values, encoded straight
/// from the row; `None` for a table without a primary key.
fn primary_row_key(def: &TableDef, row: &Row) -> Option<engine::RowKey> {
    def.has_primary_key().then(|| engine::RowKey::of_row(def, row))
}

/// The clustered key of the first row equal to `image` (a table without a
/// primary key: MySQL scans for it too).
fn first_equal_row(trx: &Transaction, table: &MappedTable, image: &Row) -> Result<Option<engine::RowKey>, EngineError> {
    let mut scan = trx.scan(table.id, &ScanSpec::primary())?;
    Ok(scan.find(|(_, row)| row == image).map(|(key, _)| key))
}

/// `map` with a SIGNEDNESS field taken from the replica's columns.
fn with_local_signedness(map: &TableMap, def: &TableDef) -> TableMap {
    let mut decode_map = map.clone();
    decode_map.optional_metadata.retain(|field| !matches!(field, OptionalMetadata::Signedness(_)));
    let flags: Vec<bool> = map
        .columns
        .iter()
        .enumerate()
        .filter(|(_, column)| column.column_type.is_numeric())
        .map(|(position, _)| def.columns.get(position).is_some_and(|column| column.unsigned))
        .collect();
    decode_map.optional_metadata.push(OptionalMetadata::Signedness(flags));
    decode_map
}
