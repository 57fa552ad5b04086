//! One table's data: the clustered index (key → version chain), the
//! secondary indexes, the AUTO_INCREMENT and hidden row id counters, and
//! the memory the table holds.
//!
//! Secondary indexes are sets of `index values ++ clustered key` and are
//! not versioned themselves (InnoDB's design): an entry exists while any
//! version in its row's chain has those index values. A reader that finds
//! an entry checks that the version it sees still has them. Entries go
//! when the last version with those values is undone or purged.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use binlog_format::Value;

use crate::catalog::{TableDef, TableId};
use crate::key::{encode_column_value, hidden_row_key, past_prefix};
use crate::mdl::MetadataLock;
use crate::memory::MemoryAccount;
use crate::mvcc::{current, live_row, CommitLookup, Version};
use crate::registry::TrxId;
use crate::row::{row_bytes, Row};

/// Estimated bytes of a clustered-index entry besides its key.
const CHAIN_OVERHEAD_BYTES: u64 = 64;
/// Estimated bytes of a secondary index entry besides its key.
const INDEX_ENTRY_OVERHEAD_BYTES: u64 = 48;
/// Estimated bytes of a delete marker.
const DELETE_MARKER_BYTES: u64 = 48;

pub(crate) struct Table {
    pub(crate) id: TableId,
    pub(crate) data: TableLock,
    pub(crate) mdl: MetadataLock,
    /// Set by DROP under the exclusive metadata lock; a writer that looked
    /// the table up before the drop sees it once it holds its registration.
    pub(crate) dropped: AtomicBool,
}

impl Table {
    pub(crate) fn new(def: TableDef) -> Table {
        Table {
            id: def.id,
            data: TableLock::new(TableData::new(Arc::new(def))),
            mdl: MetadataLock::default(),
            dropped: AtomicBool::new(false),
        }
    }

    /// A table holding `data` already (an ALTER TABLE's copy).
    pub(crate) fn with_data(id: TableId, data: TableData) -> Table {
        Table { id, data: TableLock::new(data), mdl: MetadataLock::default(), dropped: AtomicBool::new(false) }
    }

    pub(crate) fn def(&self) -> Arc<TableDef> {
        Arc::clone(&self.data.read().def)
    }
}

/// A table's data lock: the standard library's reader-writer lock, which
/// spins briefly and then sleeps on a futex, and once a writer waits lets
/// no new reader in. `parking_lot`'s lock (used before) spins with
/// `sched_yield` before it sleeps: with 16 sessions on one busy table and
/// 2 cores, those yields were 8-12% of all CPU (`perf` of `bench engine
/// --sessions 16`). Poisoning is ignored, as it was with `parking_lot`
/// (which has none).
pub(crate) struct TableLock(std::sync::RwLock<TableData>);

impl TableLock {
    fn new(data: TableData) -> TableLock {
        TableLock(std::sync::RwLock::new(data))
    }

    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, TableData> {
        self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> std::sync::RwLockWriteGuard<'_, TableData> {
        self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A write would pass `binlogd_engine_memory_limit`.
#[derive(Debug)]
pub(crate) struct MemoryLimitReached;

pub(crate) struct TableData {
    pub(crate) def: Arc<TableDef>,
    pub(crate) rows: BTreeMap<Vec<u8>, Vec<Version>>,
    /// One set per `def.indexes`, in the same order.
    pub(crate) indexes: Vec<BTreeSet<Vec<u8>>>,
    /// Next value AUTO_INCREMENT generates. Not transactional (as in
    /// InnoDB): a rolled-back insert does not give its value back.
    pub(crate) auto_increment_next: u64,
    pub(crate) hidden_row_id_next: u64,
    /// This table's share of the memory account, released on DROP/TRUNCATE.
    pub(crate) memory_bytes: u64,
    /// The part of `memory_bytes` held by secondary index entries.
    index_bytes: u64,
}

/// A table's size as `INFORMATION_SCHEMA.TABLES` reports it, from the
/// engine's memory estimate (the bytes `binlogd_engine_memory_limit`
/// counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableSize {
    /// Clustered keys, counting a deleted row until purge removes it.
    pub rows: u64,
    /// Row versions and their clustered keys (DATA_LENGTH).
    pub data_bytes: u64,
    /// Secondary index entries (INDEX_LENGTH).
    pub index_bytes: u64,
}

impl TableData {
    pub(crate) fn new(def: Arc<TableDef>) -> TableData {
        TableData {
            rows: BTreeMap::new(),
            indexes: vec![BTreeSet::new(); def.indexes.len()],
            auto_increment_next: def.auto_increment_start,
            hidden_row_id_next: 1,
            memory_bytes: 0,
            index_bytes: 0,
            def,
        }
    }

    /// Appends `version` to `key`'s chain and adds the index entries its
    /// row needs. With a `limit`, refuses (changing nothing) when the
    /// estimated bytes would pass it.
    pub(crate) fn push_version(
        &mut self,
        key: &[u8],
        version: Version,
        memory: &MemoryAccount,
        limit_bytes: Option<u64>,
    ) -> Result<(), MemoryLimitReached> {
        let new_entries: Vec<(usize, Vec<u8>)> = match &version.row {
            Some(row) => index_entries(&self.def, row, key)
                .into_iter()
                .filter(|(position, entry)| !self.indexes[*position].contains(entry))
                .collect(),
            None => Vec::new(),
        };
        let chain_bytes = if self.rows.contains_key(key) { 0 } else { CHAIN_OVERHEAD_BYTES + key.len() as u64 };
        let index_bytes = new_entries.iter().map(|(_, entry)| entry_bytes(entry)).sum::<u64>();
        let bytes = version_bytes(&version) + chain_bytes + index_bytes;
        match limit_bytes {
            Some(limit_bytes) if !memory.try_reserve(bytes, limit_bytes) => return Err(MemoryLimitReached),
            Some(_) => {}
            None => memory.force_reserve(bytes),
        }
        self.memory_bytes += bytes;
        self.index_bytes += index_bytes;
        for (position, entry) in new_entries {
            self.indexes[position].insert(entry);
        }
        // The key is copied only for a new chain: most writes (every update
        // and delete) add to an existing one.
        match self.rows.get_mut(key) {
            Some(chain) => chain.push(version),
            None => {
                self.rows.insert(key.to_vec(), vec![version]);
            }
        }
        Ok(())
    }

    /// Undoes the newest version of `key`, which `writer` wrote and still
    /// holds the row lock for.
    pub(crate) fn pop_version(&mut self, key: &[u8], writer: TrxId, memory: &MemoryAccount) {
        let Some(chain) = self.rows.get_mut(key) else {
            debug_assert!(false, "undo of a missing chain");
            return;
        };
        let popped = chain.pop().expect("chains are never empty");
        debug_assert!(popped.writer == writer && popped.is_unstamped(), "undo of another writer's version");
        let mut freed = version_bytes(&popped);
        // A lone committed delete marker means purge already trimmed what
        // was under it (it stayed only because the undone version sat on
        // top): no view can see anything here, and no purge entry is left
        // to remove it.
        let lone_delete_marker = chain.len() == 1 && chain[0].row.is_none() && !chain[0].is_unstamped();
        if lone_delete_marker {
            freed += version_bytes(&chain[0]);
            chain.clear();
        }
        if chain.is_empty() {
            self.rows.remove(key);
            freed += CHAIN_OVERHEAD_BYTES + key.len() as u64;
        }
        freed += self.drop_unused_entries(key, &[popped]);
        self.release(freed, memory);
    }

    /// Gives `writer`'s versions of `key` their commit sequence number;
    /// returns whether purge may have something to drop there: not when
    /// the chain is one row (a first insert), which only a later write can
    /// change, and that write queues the key itself.
    pub(crate) fn stamp(&self, key: &[u8], writer: TrxId, seq: u64) -> bool {
        let Some(chain) = self.rows.get(key) else { return false };
        for version in chain.iter().rev() {
            if version.writer == writer && version.is_unstamped() {
                version.stamp(seq);
            }
        }
        chain.len() > 1 || chain[0].row.is_none()
    }

    /// Drops the versions of `key` that no view at or after `horizon` can
    /// see: all but the newest committed at or before it, and that one too
    /// when it is a delete marker with nothing on top.
    pub(crate) fn purge(&mut self, key: &[u8], horizon: u64, memory: &MemoryAccount) -> Vec<Version> {
        let Some(chain) = self.rows.get_mut(key) else { return Vec::new() };
        let Some(keep_from) = chain.iter().rposition(|v| !v.is_unstamped() && v.commit_seq() <= horizon) else {
            return Vec::new();
        };
        let mut removed: Vec<Version> = chain.drain(..keep_from).collect();
        let mut freed = 0;
        if chain.len() == 1 && chain[0].row.is_none() {
            removed.extend(chain.pop());
            self.rows.remove(key);
            freed += CHAIN_OVERHEAD_BYTES + key.len() as u64;
        }
        if removed.is_empty() {
            return removed;
        }
        freed += removed.iter().map(version_bytes).sum::<u64>();
        freed += self.drop_unused_entries(key, &removed);
        self.release(freed, memory);
        removed
    }

    /// Removes the index entries of `removed` versions that no version left
    /// in `key`'s chain still needs; returns the bytes freed.
    fn drop_unused_entries(&mut self, key: &[u8], removed: &[Version]) -> u64 {
        if self.def.indexes.is_empty() {
            return 0;
        }
        // A chain keeps few versions after purge: a list beats a hash set.
        let still_needed: Vec<(usize, Vec<u8>)> = self
            .rows
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|version| version.row.as_ref())
            .flat_map(|row| index_entries(&self.def, row, key))
            .collect();
        let mut freed = 0;
        for row in removed.iter().filter_map(|version| version.row.as_ref()) {
            for (position, entry) in index_entries(&self.def, row, key) {
                let needed = still_needed.iter().any(|(needed_position, needed)| *needed_position == position && *needed == entry);
                if !needed && self.indexes[position].remove(&entry) {
                    freed += entry_bytes(&entry);
                }
            }
        }
        self.index_bytes -= freed;
        freed
    }

    pub(crate) fn size(&self) -> TableSize {
        TableSize { rows: self.rows.len() as u64, data_bytes: self.memory_bytes - self.index_bytes, index_bytes: self.index_bytes }
    }

    fn release(&mut self, bytes: u64, memory: &MemoryAccount) {
        self.memory_bytes -= bytes;
        memory.release(bytes);
    }

    /// Empties the table (TRUNCATE, DROP) and gives its memory back.
    pub(crate) fn clear(&mut self, memory: &MemoryAccount) {
        self.rows.clear();
        for index in &mut self.indexes {
            index.clear();
        }
        let bytes = self.memory_bytes;
        self.release(bytes, memory);
        self.index_bytes = 0;
    }

    /// Installs `def`, which is the current definition plus one index at
    /// its end, and fills that index from every version of every row.
    pub(crate) fn add_index(
        &mut self,
        def: Arc<TableDef>,
        memory: &MemoryAccount,
        limit_bytes: Option<u64>,
    ) -> Result<(), MemoryLimitReached> {
        let position = def.indexes.len() - 1;
        let mut entries = BTreeSet::new();
        for (key, chain) in &self.rows {
            for row in chain.iter().filter_map(|version| version.row.as_ref()) {
                entries.insert(index_entry(&def, position, row, key));
            }
        }
        let bytes: u64 = entries.iter().map(|entry| entry_bytes(entry)).sum();
        match limit_bytes {
            Some(limit_bytes) if !memory.try_reserve(bytes, limit_bytes) => return Err(MemoryLimitReached),
            Some(_) => {}
            None => memory.force_reserve(bytes),
        }
        self.memory_bytes += bytes;
        self.index_bytes += bytes;
        self.indexes.push(entries);
        self.def = def;
        Ok(())
    }

    /// Installs `def`, which is the current definition without the index
    /// at `position`.
    pub(crate) fn remove_index(&mut self, def: Arc<TableDef>, position: usize, memory: &MemoryAccount) {
        let entries = self.indexes.remove(position);
        let bytes: u64 = entries.iter().map(|entry| entry_bytes(entry)).sum();
        self.release(bytes, memory);
        self.index_bytes -= bytes;
        self.def = def;
    }

    /// True when a row other than those at `exclude` currently (committed,
    /// or `reader`'s own) has the unique index values `prefix`.
    pub(crate) fn has_duplicate(
        &self,
        position: usize,
        prefix: &[u8],
        exclude: &[&[u8]],
        reader: TrxId,
        lookup: &mut CommitLookup<'_>,
    ) -> bool {
        let upper = past_prefix(prefix.to_vec());
        let range = (Bound::Included(prefix), Bound::Excluded(upper.as_slice()));
        self.indexes[position].range::<[u8], _>(range).any(|entry| {
            let key = &entry[prefix.len()..];
            if exclude.contains(&key) {
                return false;
            }
            let chain = self.rows.get(key).map(Vec::as_slice).unwrap_or_default();
            live_row(current(chain, reader, lookup)).is_some_and(|row| index_prefix(&self.def, position, row) == prefix)
        })
    }

    /// Raises the counters past the values `row` (stored under `key`) uses:
    /// explicit AUTO_INCREMENT values and replayed rows move them up.
    pub(crate) fn raise_counters(&mut self, row: &Row, key: &[u8]) {
        if let Some(position) = self.def.auto_increment_column() {
            if let Some(value) = row.get(position).and_then(positive_integer) {
                self.auto_increment_next = self.auto_increment_next.max(value.saturating_add(1));
            }
        }
        if !self.def.has_primary_key() {
            if let Some(row_id) = crate::key::hidden_row_id(key) {
                self.hidden_row_id_next = self.hidden_row_id_next.max(row_id + 1);
            }
        }
    }
}

fn version_bytes(version: &Version) -> u64 {
    version.row.as_deref().map_or(DELETE_MARKER_BYTES, row_bytes)
}

fn entry_bytes(entry: &[u8]) -> u64 {
    INDEX_ENTRY_OVERHEAD_BYTES + entry.len() as u64
}

/// A positive integer value, as AUTO_INCREMENT counts.
pub(crate) fn positive_integer(value: &Value) -> Option<u64> {
    match value {
        Value::Int(v) if *v > 0 => Some(*v as u64),
        Value::UInt(v) if *v > 0 => Some(*v),
        _ => None,
    }
}

/// The encoded values of index `position`'s columns.
pub(crate) fn index_prefix(def: &TableDef, position: usize, row: &Row) -> Vec<u8> {
    let mut out = Vec::new();
    for &column in &def.indexes[position].columns {
        encode_column_value(def, column, &row[column], &mut out);
    }
    out
}

pub(crate) fn index_entry(def: &TableDef, position: usize, row: &Row, key: &[u8]) -> Vec<u8> {
    let mut entry = index_prefix(def, position, row);
    entry.extend_from_slice(key);
    entry
}

fn index_entries(def: &TableDef, row: &Row, key: &[u8]) -> Vec<(usize, Vec<u8>)> {
    (0..def.indexes.len()).map(|position| (position, index_entry(def, position, row, key))).collect()
}

/// The values a unique index checks, or `None` when the index is not
/// unique or a value is NULL (NULLs never collide).
pub(crate) fn unique_prefix(def: &TableDef, position: usize, row: &Row) -> Option<Vec<u8>> {
    let index = &def.indexes[position];
    let has_null = index.columns.iter().any(|&column| row[column] == Value::Null);
    (index.unique && !has_null).then(|| index_prefix(def, position, row))
}

/// The clustered key of `row`: its primary key values, or the hidden row
/// id for a table without a primary key.
pub(crate) fn clustered_key(def: &TableDef, row: &Row, hidden_row_id: Option<u64>) -> Vec<u8> {
    if def.has_primary_key() {
        let mut out = Vec::new();
        for &column in &def.primary_key {
            encode_column_value(def, column, &row[column], &mut out);
        }
        out
    } else {
        hidden_row_key(hidden_row_id.unwrap_or_default())
    }
}

/// The values of the columns at `positions`, for 1062 messages.
pub(crate) fn values_at<'r>(row: &'r Row, positions: &[usize]) -> Vec<&'r Value> {
    positions.iter().map(|&position| &row[position]).collect()
}
