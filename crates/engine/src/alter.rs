//! ALTER TABLE by copy, and RENAME TABLE.
//!
//! ALTER waits for the table's exclusive metadata lock, hands the SQL
//! layer the definition and every committed row, and gets back the new
//! definition and the converted rows. It builds the new table (checking
//! the primary and unique keys, 1062), then, under the catalog's write
//! lock, logs one [`DdlRecord::RebuildTable`] and swaps the tables. The
//! record is synced before the swap and holds everything the new table
//! is, so a crash at any point leaves the old table (the record did not
//! reach the disk) or the new one (replay rebuilds it from the record),
//! never a mix. The new table gets a new id, as MySQL's copy does: a
//! Table_map after the ALTER names a table whose columns are the new ones.
//!
//! Rows are read while the exclusive lock keeps writers out, and DDL runs
//! one statement at a time (the database's DDL lock), so nothing changes
//! between the read and the swap.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use crate::catalog::{check_name, Catalog, TableDef, TableId, TableSpec, PRIMARY_KEY_NAME};
use crate::ddl::{discard, ExclusiveMdl, NO_READER};
use crate::engine::{Engine, Shared};
use crate::error::{EngineError, Result};
use crate::memory::MemoryAccount;
use crate::mvcc::{current, live_row, CommitLookup, Version};
use crate::redo::{DdlRecord, TableRename};
use crate::registry::{RESTORED_COMMIT_SEQ, RESTORED_WRITER};
use crate::row::{check_row, display_key, Row};
use crate::table::{clustered_key, unique_prefix, values_at, Table, TableData};

/// `(database, table)`.
pub type QualifiedName = (String, String);

/// What the SQL layer makes of a table for ALTER TABLE.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRebuild {
    /// The new definition by names (its database and name may differ:
    /// `RENAME TO` among the changes).
    pub spec: TableSpec,
    /// Every row, converted to `spec`'s columns, in the old table's order.
    pub rows: Vec<Row>,
    /// The `AUTO_INCREMENT = N` table option, when given.
    pub auto_increment: Option<u64>,
}

impl Engine {
    /// ALTER TABLE `database`.`table` by copy: `rebuild` gets the current
    /// definition and its committed rows and returns the new table. 1050
    /// when the new name is taken, 1062 when rows share a primary or
    /// unique key of the new definition; on any error the table is as it
    /// was.
    pub fn alter_table(
        &self,
        database: &str,
        table: &str,
        metadata_lock_wait: Duration,
        rebuild: impl FnOnce(&TableDef, Vec<Row>) -> Result<TableRebuild>,
    ) -> Result<Arc<TableDef>> {
        let found = {
            let catalog = self.shared.catalog.read();
            let id = catalog.table_id(database, table)?;
            Arc::clone(catalog.table(id).expect("catalog names only live tables"))
        };
        let mdl = ExclusiveMdl::acquire(found, metadata_lock_wait)?;
        let (old_def, rows, auto_increment_next) = {
            let data = mdl.0.data.read();
            (Arc::clone(&data.def), self.committed_rows(&data), data.auto_increment_next)
        };
        let rebuilt = rebuild(&old_def, rows)?;
        let renamed = rebuilt.spec.database != old_def.database || rebuilt.spec.name != old_def.name;
        let mut catalog = self.shared.catalog.write();
        if catalog.table_id(database, table)? != mdl.0.id {
            return Err(EngineError::NoSuchTable { database: database.to_string(), table: table.to_string() });
        }
        if renamed {
            check_rename_target(&catalog, &rebuilt.spec.database, &rebuilt.spec.name)?;
        }
        let def = TableDef::from_spec(catalog.next_table_id, &rebuilt.spec)?;
        for row in &rebuilt.rows {
            check_row(&def, row)?;
        }
        let next = rebuilt.auto_increment.map_or(auto_increment_next, |wanted| wanted.max(1));
        // Built first to find duplicates and a full engine before anything
        // is logged; replay builds the same table from the record.
        let limit_bytes = self.shared.variables.memory_limit_bytes();
        let mut data = build_table_data(&self.shared.memory, Arc::new(def.clone()), &rebuilt.rows, next, Some(limit_bytes))?;
        let record = DdlRecord::RebuildTable { table: mdl.0.id, def, rows: rebuilt.rows, auto_increment_next: next };
        if let Err(error) = self.shared.log_ddl(&record) {
            data.clear(&self.shared.memory);
            return Err(error);
        }
        let DdlRecord::RebuildTable { def, .. } = record else { unreachable!("built above") };
        let id = def.id;
        swap_in(&self.shared, &mut catalog, mdl.0.id, def, data);
        Ok(catalog.table(id).expect("just swapped in").def())
    }

    /// RENAME TABLE a TO b [, c TO d ...]: all or nothing. Each pair sees
    /// the names as the pairs before it left them (MySQL's rule, which
    /// makes `a TO tmp, b TO a, tmp TO b` a swap). 1146 for a missing
    /// source, 1050 for a taken target.
    pub fn rename_tables(&self, pairs: &[(QualifiedName, QualifiedName)], metadata_lock_wait: Duration) -> Result<()> {
        // Lock every existing source table first (in id order, so two
        // renames cannot wait on each other), then check under the catalog
        // lock against the names as they stand.
        let mut tables: Vec<Arc<Table>> = {
            let catalog = self.shared.catalog.read();
            pairs.iter().filter_map(|((d, t), _)| catalog.table_id(d, t).ok().and_then(|id| catalog.table(id).cloned())).collect()
        };
        tables.sort_by_key(|table| table.id);
        tables.dedup_by_key(|table| table.id);
        let mut locked = Vec::with_capacity(tables.len());
        for table in tables {
            locked.push(ExclusiveMdl::acquire(table, metadata_lock_wait)?);
        }
        let mut catalog = self.shared.catalog.write();
        let mut names: std::collections::BTreeMap<(String, String), TableId> = catalog
            .databases
            .iter()
            .flat_map(|(database, tables)| tables.iter().map(move |(name, id)| ((database.clone(), name.clone()), *id)))
            .collect();
        let mut renames: Vec<TableRename> = Vec::with_capacity(pairs.len());
        for ((from_database, from_table), (to_database, to_table)) in pairs {
            let Some(id) = names.remove(&(from_database.clone(), from_table.clone())) else {
                return Err(EngineError::NoSuchTable { database: from_database.clone(), table: from_table.clone() });
            };
            if !locked.iter().any(|mdl| mdl.0.id == id) {
                // A table renamed into this name by an earlier pair is
                // locked under its first name; any other is new since.
                if !renames.iter().any(|rename| rename.table == id) {
                    return Err(EngineError::NoSuchTable { database: from_database.clone(), table: from_table.clone() });
                }
            }
            check_name(to_table, EngineError::WrongTableName)?;
            if !catalog.databases.contains_key(to_database) {
                return Err(EngineError::UnknownDatabase(to_database.clone()));
            }
            if names.contains_key(&(to_database.clone(), to_table.clone())) {
                return Err(EngineError::TableExists(to_table.clone()));
            }
            names.insert((to_database.clone(), to_table.clone()), id);
            renames.retain(|rename| rename.table != id);
            renames.push(TableRename { table: id, database: to_database.clone(), name: to_table.clone() });
        }
        let record = DdlRecord::RenameTables { renames };
        self.shared.log_ddl(&record)?;
        crate::ddl::apply_ddl(&self.shared, &mut catalog, &record)
    }

    /// The rows a transaction that starts now would see, in key order.
    fn committed_rows(&self, data: &TableData) -> Vec<Row> {
        let mut lookup = CommitLookup::new(&self.shared.commits);
        data.rows.values().filter_map(|chain| live_row(current(chain, NO_READER, &mut lookup)).map(|row| (**row).clone())).collect()
    }
}

/// 1050 when `database`.`name` is taken, 1049 when the database is missing.
fn check_rename_target(catalog: &Catalog, database: &str, name: &str) -> Result<()> {
    check_name(name, EngineError::WrongTableName)?;
    let tables = catalog.databases.get(database).ok_or_else(|| EngineError::UnknownDatabase(database.to_string()))?;
    if tables.contains_key(name) {
        return Err(EngineError::TableExists(name.to_string()));
    }
    Ok(())
}

/// A table holding `rows` as committed versions: keys from the primary
/// key, or hidden row ids 1, 2, ... in row order, so live building and
/// replay give the same keys. 1062 for two rows with one primary or
/// unique key; 1114 past `limit_bytes`.
pub(crate) fn build_table_data(
    memory: &MemoryAccount,
    def: Arc<TableDef>,
    rows: &[Row],
    auto_increment_next: u64,
    limit_bytes: Option<u64>,
) -> Result<TableData> {
    let mut data = TableData::new(Arc::clone(&def));
    let mut unique_seen: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); def.indexes.len()];
    for (position, row) in rows.iter().enumerate() {
        let key = clustered_key(&def, row, Some(position as u64 + 1));
        if data.rows.contains_key(&key) {
            data.clear(memory);
            let entry = display_key(&values_at(row, &def.primary_key));
            return Err(EngineError::DuplicateEntry { entry, key: format!("{}.{PRIMARY_KEY_NAME}", def.name) });
        }
        for (index, seen) in unique_seen.iter_mut().enumerate() {
            if let Some(prefix) = unique_prefix(&def, index, row) {
                if !seen.insert(prefix) {
                    data.clear(memory);
                    let entry = display_key(&values_at(row, &def.indexes[index].columns));
                    return Err(EngineError::DuplicateEntry { entry, key: format!("{}.{}", def.name, def.indexes[index].name) });
                }
            }
        }
        data.raise_counters(row, &key);
        // Committed before every view, like a restored table's rows.
        let version = Version::committed(RESTORED_WRITER, RESTORED_COMMIT_SEQ, Some(Arc::new(row.clone())));
        if data.push_version(&key, version, memory, limit_bytes).is_err() {
            data.clear(memory);
            return Err(EngineError::TableFull { table: def.name.clone() });
        }
    }
    data.auto_increment_next = data.auto_increment_next.max(auto_increment_next);
    Ok(data)
}

/// Replaces table `old` (when still there) by `def` holding `data`.
fn swap_in(shared: &Shared, catalog: &mut Catalog, old: TableId, def: TableDef, data: TableData) {
    if let Some(found) = catalog.table(old).cloned() {
        catalog.remove_table(&found.def());
        discard(shared, &found);
    }
    let table = Table::with_data(def.id, data);
    catalog.insert_table(Arc::new(table), &def);
}

/// Replays a [`DdlRecord::RebuildTable`]: nothing when the new table is
/// already there (a checkpoint taken after the ALTER holds it).
pub(crate) fn replay_rebuild(
    shared: &Shared,
    catalog: &mut Catalog,
    old: TableId,
    def: &TableDef,
    rows: &[Row],
    auto_increment_next: u64,
) -> Result<()> {
    if catalog.tables.contains_key(&def.id) {
        return Ok(());
    }
    let data = build_table_data(&shared.memory, Arc::new(def.clone()), rows, auto_increment_next, None)?;
    swap_in(shared, catalog, old, def.clone(), data);
    Ok(())
}

/// Replays a [`DdlRecord::RenameTables`]: each table still there takes
/// its new name (idempotent: a name already taken by the same table is a
/// no-op).
pub(crate) fn replay_renames(catalog: &mut Catalog, renames: &[TableRename]) {
    let found: Vec<(Arc<Table>, &TableRename)> =
        renames.iter().filter_map(|rename| catalog.table(rename.table).cloned().map(|table| (table, rename))).collect();
    for (table, _) in &found {
        catalog.remove_table(&table.def());
    }
    for (table, rename) in found {
        let mut data = table.data.write();
        let mut def = (*data.def).clone();
        def.database = rename.database.clone();
        def.name = rename.name.clone();
        data.def = Arc::new(def.clone());
        drop(data);
        catalog.insert_table(table, &def);
    }
}
