//! Writes: insert, update, delete, and their WHERE-style forms.
//!
//! Every row write takes the same steps. First the row locks, while
//! holding no other lock: the clustered key (old and new, when an update
//! moves the row) and each unique-index value the write adds or removes.
//! (An insert of a new key in a table without a unique secondary index
//! takes none: its version is an implicit lock, see `insert_new_row`.)
//! Then, under the table's write lock, it reads the current version,
//! checks duplicates and memory, and pushes new versions. Because every
//! writer of a unique value holds that value's lock, a duplicate check sees
//! only committed rows and its own: an uncommitted insert of the same value
//! by someone else makes it wait instead of guessing. All checks come
//! before the first push, so a failed write leaves nothing behind.

use std::sync::Arc;

use binlog_format::{ColumnType, Value};

use crate::catalog::{ColumnDef, TableDef, TableId, CLUSTERED_INDEX_ID, PRIMARY_KEY_NAME};
use crate::change::{ChangeKind, RowChange};
use crate::error::{EngineError, Result};
use crate::key::{hidden_row_id, RowKey};
use crate::locks::LockKey;
use crate::mvcc::{current, live_row, CommitLookup, Version};
use crate::row::{check_row, display_key, Row};
use crate::scan::ScanSpec;
use crate::table::{clustered_key, unique_prefix, values_at, Table, TableData};
use crate::transaction::{Transaction, Undo};

/// The result of an insert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    pub key: RowKey,
    /// The AUTO_INCREMENT value generated for the row (what
    /// LAST_INSERT_ID() reports), if one was.
    pub auto_increment_value: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateOutcome {
    /// No row at the key (or it no longer matched the WHERE).
    Missing,
    /// The new row equals the old one: nothing written, nothing logged.
    Unchanged,
    Updated,
}

/// MySQL's "Rows matched: N Changed: M".
/// How [`Transaction::lock_rows_where`] treats rows others hold, and
/// how many it locks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockingRead {
    /// SKIP LOCKED: pass over rows another transaction holds.
    pub skip_locked: bool,
    /// Stop after this many rows locked and returned.
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateCounts {
    pub matched: usize,
    pub changed: usize,
}

impl Transaction {
    /// Inserts `row`. An AUTO_INCREMENT column holding NULL or 0 gets the
    /// next value; an explicit value moves the counter past it.
    pub fn insert(&mut self, table_id: TableId, mut row: Row) -> Result<Inserted> {
        self.ensure_active()?;
        let table = self.writable_table(table_id)?;
        let def = table.def();
        if row.len() != def.columns.len() {
            return Err(EngineError::ColumnCountMismatch);
        }
        let auto_position = def.auto_increment_column();
        let generates = auto_position.is_some_and(|p| matches!(row[p], Value::Null | Value::Int(0) | Value::UInt(0)));
        if !generates {
            check_row(&def, &row)?;
        }
        let (auto_increment_value, hidden_row_id) = {
            let mut data = table.data.write();
            let generated = match auto_position {
                Some(position) if generates => Some(generate_auto_increment(&mut data, &def.columns[position], &mut row[position])?),
                _ => None,
            };
            let hidden_row_id = (!def.has_primary_key()).then(|| {
                data.hidden_row_id_next += 1;
                data.hidden_row_id_next - 1
            });
            (generated, hidden_row_id)
        };
        if generates {
            check_row(&def, &row)?;
        }
        let key = clustered_key(&def, &row, hidden_row_id);
        let row = Arc::new(row);
        if def.indexes.iter().all(|index| !index.unique) && self.insert_new_row(&table, &def, &key, &row)? {
            self.undo.push(Undo { table, key: key.clone() });
            self.changes.push(RowChange { table: table_id, kind: ChangeKind::Insert, before: None, after: Some(row), hidden_row_id });
            return Ok(Inserted { key: RowKey(key), auto_increment_value });
        }
        self.lock_row(&table, &key)?;
        let unique: Vec<(usize, Vec<u8>)> =
            (0..def.indexes.len()).filter_map(|position| unique_prefix(&def, position, &row).map(|p| (position, p))).collect();
        for (position, prefix) in &unique {
            self.lock(LockKey { table: table_id, index: def.indexes[*position].id, key: prefix.clone() })?;
        }
        {
            let mut data = table.data.write();
            let mut lookup = CommitLookup::new(&self.shared.commits);
            let chain = data.rows.get(&key).map(Vec::as_slice).unwrap_or_default();
            if live_row(current(chain, self.id, &mut lookup)).is_some() {
                return Err(duplicate_primary(&def, &row));
            }
            for (position, prefix) in &unique {
                if data.has_duplicate(*position, prefix, &[&key], self.id, &mut lookup) {
                    return Err(duplicate_unique(&def, *position, &row));
                }
            }
            drop(lookup);
            self.push_checked(&mut data, &def, &key, Some(Arc::clone(&row)))?;
            data.raise_counters(&row, &key);
        }
        self.undo.push(Undo { table, key: key.clone() });
        self.changes.push(RowChange { table: table_id, kind: ChangeKind::Insert, before: None, after: Some(row), hidden_row_id });
        Ok(Inserted { key: RowKey(key), auto_increment_value })
    }

    /// Inserts `row` at `key` without a row lock when the key has never
    /// held a row (no chain) and no one has it locked; returns false,
    /// changing nothing, otherwise. The uncommitted version is the lock
    /// (implicit, as InnoDB's inserts): whoever wants the row makes it
    /// explicit first ([`Transaction::lock_row`]). A bulk insert of new
    /// rows so takes and releases no lock per row, which for 167,000 rows
    /// kept every other session's lock requests waiting through the
    /// release at commit. Only for tables without a unique secondary
    /// index, whose values are locked explicitly.
    fn insert_new_row(&mut self, table: &Table, def: &TableDef, key: &[u8], row: &Arc<Row>) -> Result<bool> {
        let mut data = table.data.write();
        if data.rows.contains_key(key) {
            return Ok(false);
        }
        // Under the table lock, which lock_row holds while it checks for
        // this version and takes a lock without waiting.
        if self.shared.locks.is_locked(&LockKey { table: table.id, index: CLUSTERED_INDEX_ID, key: key.to_vec() }) {
            return Ok(false);
        }
        self.push_checked(&mut data, def, key, Some(Arc::clone(row)))?;
        data.raise_counters(row, key);
        self.inserted_without_lock = true;
        Ok(true)
    }

    /// Replaces the row at `key` with `new_row` (which may move it to
    /// another primary key).
    pub fn update(&mut self, table: TableId, key: &RowKey, new_row: Row) -> Result<UpdateOutcome> {
        let mut new_row = Some(new_row);
        self.update_row(table, key.as_bytes(), &mut |_| new_row.take())
    }

    pub fn update_by_pk(&mut self, table: TableId, primary_key: &[Value], new_row: Row) -> Result<UpdateOutcome> {
        let key = RowKey::from_values(&self.shared.table(table)?.def(), primary_key);
        self.update(table, &key, new_row)
    }

    /// Deletes the row at `key`; false when there is none.
    pub fn delete(&mut self, table: TableId, key: &RowKey) -> Result<bool> {
        self.delete_row(table, key.as_bytes(), &mut |_| true)
    }

    pub fn delete_by_pk(&mut self, table: TableId, primary_key: &[Value]) -> Result<bool> {
        let key = RowKey::from_values(&self.shared.table(table)?.def(), primary_key);
        self.delete(table, &key)
    }

    /// SELECT ... FOR UPDATE of one row: locks `key` (whether or not a row
    /// is there) and returns the latest committed row, or this
    /// transaction's own.
    pub fn get_for_update(&mut self, table_id: TableId, key: &RowKey) -> Result<Option<Row>> {
        self.ensure_active()?;
        let table = self.writable_table(table_id)?;
        self.lock_row(&table, &key.0)?;
        Ok(self.current_row(&table, &key.0).map(|row| (*row).clone()))
    }

    /// SELECT ... FOR UPDATE / FOR SHARE: locks every row in `spec`'s
    /// range for which `filter` holds and returns their latest versions
    /// (this transaction's own, or the latest committed), in scan order, as
    /// UPDATE finds them: candidates from a fresh view, each locked and
    /// `filter` checked again on its latest version. A lock wait that
    /// times out keeps the locks taken before it, as InnoDB's do.
    /// `read.skip_locked` passes over rows another transaction holds
    /// instead of waiting; `read.limit` stops once that many rows are
    /// locked and returned, so the rows after them stay free (InnoDB locks
    /// as it reads, and stops reading at LIMIT).
    pub fn lock_rows_where(
        &mut self,
        table_id: TableId,
        spec: &ScanSpec,
        read: LockingRead,
        mut filter: impl FnMut(&Row) -> bool,
    ) -> Result<Vec<std::sync::Arc<Row>>> {
        self.ensure_active()?;
        let candidates = self.candidate_keys(table_id, spec, &mut filter)?;
        let table = self.writable_table(table_id)?;
        let mut rows = Vec::with_capacity(candidates.len().min(read.limit.unwrap_or(usize::MAX)));
        for key in candidates {
            if read.limit.is_some_and(|limit| rows.len() >= limit) {
                break;
            }
            if read.skip_locked {
                if !self.try_lock_row(&table, &key.0) {
                    continue;
                }
            } else {
                self.lock_row(&table, &key.0)?;
            }
            if let Some(row) = self.current_row(&table, &key.0).filter(|row| filter(row)) {
                rows.push(row);
            }
        }
        Ok(rows)
    }

    /// UPDATE ... WHERE: every row in `spec`'s range for which `filter`
    /// holds becomes `set(row)`. Candidates come from a fresh view; each is
    /// then locked and `filter` re-checked on its latest version. The
    /// statement is atomic: on an error its own changes are undone (a
    /// deadlock undoes the whole transaction).
    pub fn update_where(
        &mut self,
        table: TableId,
        spec: &ScanSpec,
        mut filter: impl FnMut(&Row) -> bool,
        mut set: impl FnMut(&Row) -> Row,
    ) -> Result<UpdateCounts> {
        self.ensure_active()?;
        let savepoint = self.savepoint();
        let candidates = self.candidate_keys(table, spec, &mut filter)?;
        let mut counts = UpdateCounts::default();
        for key in candidates {
            match self.update_row(table, &key.0, &mut |row| filter(row).then(|| set(row))) {
                Ok(UpdateOutcome::Missing) => {}
                Ok(UpdateOutcome::Unchanged) => counts.matched += 1,
                Ok(UpdateOutcome::Updated) => {
                    counts.matched += 1;
                    counts.changed += 1;
                }
                Err(error) => {
                    self.undo_statement(savepoint);
                    return Err(error);
                }
            }
        }
        Ok(counts)
    }

    /// DELETE ... WHERE, with [`Transaction::update_where`]'s rules.
    pub fn delete_where(&mut self, table: TableId, spec: &ScanSpec, mut filter: impl FnMut(&Row) -> bool) -> Result<usize> {
        self.ensure_active()?;
        let savepoint = self.savepoint();
        let candidates = self.candidate_keys(table, spec, &mut filter)?;
        let mut deleted = 0;
        for key in candidates {
            match self.delete_row(table, &key.0, &mut filter) {
                Ok(true) => deleted += 1,
                Ok(false) => {}
                Err(error) => {
                    self.undo_statement(savepoint);
                    return Err(error);
                }
            }
        }
        Ok(deleted)
    }

    fn candidate_keys(&self, table: TableId, spec: &ScanSpec, filter: &mut impl FnMut(&Row) -> bool) -> Result<Vec<RowKey>> {
        Ok(self.scan_latest(table, spec)?.filter(|(_, row)| filter(row)).map(|(key, _)| key).collect())
    }

    fn undo_statement(&mut self, savepoint: crate::transaction::Savepoint) {
        if self.is_active() {
            // Cannot fail: the savepoint is this transaction's and current.
            let _ = self.rollback_to_savepoint(savepoint);
        }
    }

    /// Updates the row at `key` to what `decide` makes of its latest
    /// version (`None`: leave it, as if it were missing).
    fn update_row(&mut self, table_id: TableId, key: &[u8], decide: &mut dyn FnMut(&Row) -> Option<Row>) -> Result<UpdateOutcome> {
        self.ensure_active()?;
        let table = self.writable_table(table_id)?;
        let def = table.def();
        self.lock_row(&table, key)?;
        let Some(old) = self.current_row(&table, key) else { return Ok(UpdateOutcome::Missing) };
        let Some(new_row) = decide(&old).map(Arc::new) else { return Ok(UpdateOutcome::Missing) };
        check_row(&def, &new_row)?;
        if *new_row == *old {
            return Ok(UpdateOutcome::Unchanged);
        }
        let hidden_row_id = if def.has_primary_key() { None } else { hidden_row_id(key) };
        let new_key = clustered_key(&def, &new_row, hidden_row_id);
        let moves = new_key != key;
        if moves {
            self.lock_row(&table, &new_key)?;
        }
        // Unique values the update adds or removes (all of them when the
        // row moves, since its old key's entries then belong to a delete).
        let mut checks = Vec::new();
        for position in 0..def.indexes.len() {
            let old_prefix = unique_prefix(&def, position, &old);
            let new_prefix = unique_prefix(&def, position, &new_row);
            if old_prefix == new_prefix && !moves {
                continue;
            }
            for prefix in [&old_prefix, &new_prefix].into_iter().flatten() {
                self.lock(LockKey { table: table_id, index: def.indexes[position].id, key: prefix.clone() })?;
            }
            checks.extend(new_prefix.map(|prefix| (position, prefix)));
        }
        {
            let mut data = table.data.write();
            let mut lookup = CommitLookup::new(&self.shared.commits);
            if moves {
                let chain = data.rows.get(&new_key).map(Vec::as_slice).unwrap_or_default();
                if live_row(current(chain, self.id, &mut lookup)).is_some() {
                    return Err(duplicate_primary(&def, &new_row));
                }
            }
            for (position, prefix) in &checks {
                if data.has_duplicate(*position, prefix, &[key, &new_key], self.id, &mut lookup) {
                    return Err(duplicate_unique(&def, *position, &new_row));
                }
            }
            drop(lookup);
            // The checked push first: if memory is short nothing has changed.
            self.push_checked(&mut data, &def, &new_key, Some(Arc::clone(&new_row)))?;
            if moves {
                data.push_version(key, Version::uncommitted(self.id, None), &self.shared.memory, None)
                    .expect("unchecked pushes cannot fail");
            }
            data.raise_counters(&new_row, &new_key);
        }
        self.undo.push(Undo { table: table.clone(), key: new_key });
        if moves {
            self.undo.push(Undo { table, key: key.to_vec() });
        }
        self.changes.push(RowChange { table: table_id, kind: ChangeKind::Update, before: Some(old), after: Some(new_row), hidden_row_id });
        Ok(UpdateOutcome::Updated)
    }

    /// Deletes the row at `key` if `decide` says so of its latest version.
    fn delete_row(&mut self, table_id: TableId, key: &[u8], decide: &mut dyn FnMut(&Row) -> bool) -> Result<bool> {
        self.ensure_active()?;
        let table = self.writable_table(table_id)?;
        let def = table.def();
        self.lock_row(&table, key)?;
        let Some(old) = self.current_row(&table, key) else { return Ok(false) };
        if !decide(&old) {
            return Ok(false);
        }
        for position in 0..def.indexes.len() {
            if let Some(prefix) = unique_prefix(&def, position, &old) {
                self.lock(LockKey { table: table_id, index: def.indexes[position].id, key: prefix })?;
            }
        }
        // Deletes are never refused for memory: they are how a full engine
        // makes room.
        table
            .data
            .write()
            .push_version(key, Version::uncommitted(self.id, None), &self.shared.memory, None)
            .expect("unchecked pushes cannot fail");
        self.undo.push(Undo { table, key: key.to_vec() });
        let hidden_row_id = if def.has_primary_key() { None } else { hidden_row_id(key) };
        self.changes.push(RowChange { table: table_id, kind: ChangeKind::Delete, before: Some(old), after: None, hidden_row_id });
        Ok(true)
    }

    fn push_checked(&self, data: &mut TableData, def: &TableDef, key: &[u8], row: Option<Arc<Row>>) -> Result<()> {
        let limit_bytes = self.shared.variables.memory_limit_bytes();
        data.push_version(key, Version::uncommitted(self.id, row), &self.shared.memory, Some(limit_bytes))
            .map_err(|_| EngineError::TableFull { table: def.name.clone() })
    }
}

/// Takes the next AUTO_INCREMENT value into `value`.
fn generate_auto_increment(data: &mut TableData, column: &ColumnDef, value: &mut Value) -> Result<u64> {
    let next = data.auto_increment_next;
    if next > integer_max(&column.column_type, column.unsigned) {
        return Err(EngineError::AutoIncrementExhausted);
    }
    *value = if column.unsigned { Value::UInt(next) } else { Value::Int(next as i64) };
    data.auto_increment_next = next + 1;
    Ok(next)
}

fn integer_max(column_type: &ColumnType, unsigned: bool) -> u64 {
    let bits = match column_type {
        ColumnType::Tiny => 8,
        ColumnType::Short => 16,
        ColumnType::Int24 => 24,
        ColumnType::Long => 32,
        _ => 64,
    };
    if unsigned {
        u64::MAX >> (64 - bits)
    } else {
        u64::MAX >> (65 - bits)
    }
}

fn duplicate_primary(def: &TableDef, row: &Row) -> EngineError {
    EngineError::DuplicateEntry { entry: display_key(&values_at(row, &def.primary_key)), key: format!("{}.{PRIMARY_KEY_NAME}", def.name) }
}

fn duplicate_unique(def: &TableDef, position: usize, row: &Row) -> EngineError {
    let index = &def.indexes[position];
    EngineError::DuplicateEntry { entry: display_key(&values_at(row, &index.columns)), key: format!("{}.{}", def.name, index.name) }
}
