//! DDL: databases, tables, indexes, TRUNCATE.
//!
//! Each statement waits for the table's exclusive metadata lock (no open
//! transaction has written the table), then, under the catalog's write
//! lock, validates, logs a [`DdlRecord`] and applies it. Logging and
//! applying under the catalog lock keeps redo order equal to apply order,
//! and a checkpoint (which reads the catalog under the same lock) sees each
//! DDL entirely before or entirely after its start LSN. Replay applies the
//! same records through [`apply_ddl`] without the checks.
//!
//! DDL is not transactional (MySQL commits implicitly around it): the SQL
//! layer commits the session's transaction first.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::catalog::{check_name, Catalog, IndexSpec, TableDef, TableId, TableSpec, PRIMARY_KEY_NAME, SERVER_DEFAULT_COLLATION};
use crate::engine::{Engine, Shared};
use crate::error::{EngineError, Result};
use crate::mvcc::{current, live_row, CommitLookup};
use crate::redo::DdlRecord;
use crate::row::display_key;
use crate::table::{unique_prefix, values_at, Table, TableData};

/// Holds a table's exclusive metadata lock until dropped.
pub(crate) struct ExclusiveMdl(pub(crate) Arc<Table>);

impl ExclusiveMdl {
    /// Waits at most `timeout` (the session's `lock_wait_timeout`) for the
    /// table's open writers to end.
    pub(crate) fn acquire(table: Arc<Table>, timeout: Duration) -> Result<ExclusiveMdl> {
        table.mdl.enter_exclusive(timeout)?;
        Ok(ExclusiveMdl(table))
    }
}

impl Drop for ExclusiveMdl {
    fn drop(&mut self) {
        self.0.mdl.exit_exclusive();
    }
}

/// A reader id no transaction has: sees committed versions only.
pub(crate) const NO_READER: u64 = u64::MAX;

impl Engine {
    pub fn create_database(&self, name: &str) -> Result<()> {
        self.create_database_in_collation(name, SERVER_DEFAULT_COLLATION)
    }

    /// CREATE DATABASE with a default collation (its DEFAULT CHARACTER
    /// SET and COLLATE).
    pub fn create_database_in_collation(&self, name: &str, default_collation: u16) -> Result<()> {
        check_name(name, EngineError::WrongDatabaseName)?;
        let mut catalog = self.shared.catalog.write();
        if catalog.databases.contains_key(name) {
            return Err(EngineError::DatabaseExists(name.to_string()));
        }
        self.log_and_apply(&mut catalog, DdlRecord::CreateDatabase { name: name.to_string(), default_collation })
    }

    /// ALTER DATABASE's CHARACTER SET / COLLATE: the default of tables
    /// created from now on; existing tables keep theirs.
    pub fn alter_database_collation(&self, name: &str, default_collation: u16) -> Result<()> {
        let mut catalog = self.shared.catalog.write();
        if !catalog.databases.contains_key(name) {
            return Err(EngineError::UnknownDatabase(name.to_string()));
        }
        self.log_and_apply(&mut catalog, DdlRecord::AlterDatabase { name: name.to_string(), default_collation })
    }

    /// Drops `name` and its tables; returns their ids. Like every DDL on
    /// existing tables, it waits at most `metadata_lock_wait` (the session's
    /// `lock_wait_timeout`) for their open writers, then fails with 1205.
    pub fn drop_database(&self, name: &str, metadata_lock_wait: Duration) -> Result<Vec<TableId>> {
        loop {
            let tables: Vec<Arc<Table>> = {
                let catalog = self.shared.catalog.read();
                let ids = catalog.databases.get(name).ok_or_else(|| EngineError::DatabaseDoesNotExist(name.to_string()))?;
                ids.values().filter_map(|id| catalog.table(*id).cloned()).collect()
            };
            let mut locked = Vec::with_capacity(tables.len());
            for table in tables {
                locked.push(ExclusiveMdl::acquire(table, metadata_lock_wait)?);
            }
            let mut catalog = self.shared.catalog.write();
            let ids: HashSet<TableId> = match catalog.databases.get(name) {
                Some(tables) => tables.values().copied().collect(),
                None => return Err(EngineError::DatabaseDoesNotExist(name.to_string())),
            };
            // A table created meanwhile is not locked: start over.
            if ids != locked.iter().map(|mdl| mdl.0.id).collect() {
                continue;
            }
            self.log_and_apply(&mut catalog, DdlRecord::DropDatabase { name: name.to_string() })?;
            let mut ids: Vec<TableId> = ids.into_iter().collect();
            ids.sort_unstable();
            return Ok(ids);
        }
    }

    pub fn create_table(&self, spec: &TableSpec) -> Result<Arc<TableDef>> {
        let mut catalog = self.shared.catalog.write();
        let tables = catalog.databases.get(&spec.database).ok_or_else(|| EngineError::UnknownDatabase(spec.database.clone()))?;
        if tables.contains_key(&spec.name) {
            return Err(EngineError::TableExists(spec.name.clone()));
        }
        let def = TableDef::from_spec(catalog.next_table_id, spec)?;
        let id = def.id;
        self.log_and_apply(&mut catalog, DdlRecord::CreateTable { def })?;
        Ok(catalog.table(id).expect("just created").def())
    }

    /// Drops `database`.`table`; returns its id. 1051 when it is missing.
    pub fn drop_table(&self, database: &str, table: &str, metadata_lock_wait: Duration) -> Result<TableId> {
        let unknown = || EngineError::UnknownTable(format!("{database}.{table}"));
        let (mdl, mut catalog) = self.lock_table_for_ddl(database, table, metadata_lock_wait).map_err(|error| match error {
            EngineError::NoSuchTable { .. } => unknown(),
            other => other,
        })?;
        let id = mdl.0.id;
        self.log_and_apply(&mut catalog, DdlRecord::DropTable { table: id })?;
        Ok(id)
    }

    /// `DROP TABLE a, b, ...`: each table in turn, as [`Engine::drop_table`].
    /// A staged applier slot ([`Engine::stage_ddl_applier_slot`]) goes
    /// with the last table's record: a crash between the records leaves
    /// the position before the statement, never past a table still there.
    pub fn drop_tables(&self, tables: &[(String, String)], metadata_lock_wait: Duration) -> Result<Vec<TableId>> {
        let mut slot = self.shared.take_ddl_slot();
        let mut ids = Vec::with_capacity(tables.len());
        for (at, (database, table)) in tables.iter().enumerate() {
            if at + 1 == tables.len() {
                if let Some(slot) = slot.take() {
                    self.stage_ddl_applier_slot(slot);
                }
            }
            ids.push(self.drop_table(database, table, metadata_lock_wait)?);
        }
        Ok(ids)
    }

    pub fn truncate_table(&self, database: &str, table: &str, metadata_lock_wait: Duration) -> Result<()> {
        let (mdl, mut catalog) = self.lock_table_for_ddl(database, table, metadata_lock_wait)?;
        self.log_and_apply(&mut catalog, DdlRecord::TruncateTable { table: mdl.0.id })
    }

    /// `CREATE [UNIQUE] INDEX`. A unique index over duplicate rows fails with
    /// 1062, as in MySQL.
    pub fn create_index(&self, database: &str, table: &str, spec: &IndexSpec, metadata_lock_wait: Duration) -> Result<Arc<TableDef>> {
        let (mdl, _catalog) = self.lock_table_for_ddl(database, table, metadata_lock_wait)?;
        let mut data = mdl.0.data.write();
        let old_def = Arc::clone(&data.def);
        let index = old_def.new_index(spec)?;
        let mut def = (*old_def).clone();
        def.add_index(index.clone());
        let position = def.indexes.len() - 1;
        if index.unique {
            self.check_unique(&data, &def, position)?;
        }
        let limit_bytes = self.shared.variables.memory_limit_bytes();
        data.add_index(Arc::new(def), &self.shared.memory, Some(limit_bytes))
            .map_err(|_| EngineError::TableFull { table: old_def.name.clone() })?;
        // Built before logging so a full engine fails before the record
        // exists; a failed log takes the index back out.
        if let Err(error) = self.shared.log_ddl(&DdlRecord::CreateIndex { table: mdl.0.id, index }) {
            data.remove_index(old_def, position, &self.shared.memory);
            return Err(error);
        }
        Ok(Arc::clone(&data.def))
    }

    pub fn drop_index(&self, database: &str, table: &str, index: &str, metadata_lock_wait: Duration) -> Result<Arc<TableDef>> {
        let (mdl, mut catalog) = self.lock_table_for_ddl(database, table, metadata_lock_wait)?;
        let def = mdl.0.def();
        let cant_drop = || EngineError::CantDropKey(index.to_string());
        if index.eq_ignore_ascii_case(PRIMARY_KEY_NAME) {
            return Err(cant_drop());
        }
        let index_id = def.index(index).map_err(|_| cant_drop())?.id;
        let mut remaining = (*def).clone();
        remaining.indexes.retain(|index| index.id != index_id);
        remaining.check_auto_increment()?;
        self.log_and_apply(&mut catalog, DdlRecord::DropIndex { table: mdl.0.id, index: index_id })?;
        Ok(mdl.0.def())
    }

    /// The table's exclusive metadata lock, then the catalog's write lock,
    /// with the table checked to still be the one named.
    fn lock_table_for_ddl(
        &self,
        database: &str,
        table: &str,
        metadata_lock_wait: Duration,
    ) -> Result<(ExclusiveMdl, parking_lot::RwLockWriteGuard<'_, Catalog>)> {
        let found = {
            let catalog = self.shared.catalog.read();
            let id = catalog.table_id(database, table)?;
            Arc::clone(catalog.table(id).expect("catalog names only live tables"))
        };
        let mdl = ExclusiveMdl::acquire(found, metadata_lock_wait)?;
        let catalog = self.shared.catalog.write();
        if catalog.table_id(database, table)? != mdl.0.id {
            // Dropped and re-created while we waited.
            return Err(EngineError::NoSuchTable { database: database.to_string(), table: table.to_string() });
        }
        Ok((mdl, catalog))
    }

    fn log_and_apply(&self, catalog: &mut Catalog, record: DdlRecord) -> Result<()> {
        self.shared.log_ddl(&record)?;
        apply_ddl(&self.shared, catalog, &record)
    }

    /// 1062 when two committed rows share the new unique index's values.
    fn check_unique(&self, data: &TableData, def: &TableDef, position: usize) -> Result<()> {
        let mut lookup = CommitLookup::new(&self.shared.commits);
        let mut seen = HashSet::new();
        for chain in data.rows.values() {
            let Some(row) = live_row(current(chain, NO_READER, &mut lookup)) else { continue };
            if let Some(prefix) = unique_prefix(def, position, row) {
                if !seen.insert(prefix) {
                    let index = &def.indexes[position];
                    return Err(EngineError::DuplicateEntry {
                        entry: display_key(&values_at(row, &index.columns)),
                        key: format!("{}.{}", def.name, index.name),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Applies `record` to the catalog and the tables. Idempotent, and without
/// logical checks, so redo replay can run it over a fuzzy checkpoint.
pub(crate) fn apply_ddl(shared: &Shared, catalog: &mut Catalog, record: &DdlRecord) -> Result<()> {
    match record {
        DdlRecord::CreateDatabase { name, default_collation } => {
            catalog.databases.entry(name.clone()).or_default();
            catalog.set_database_collation(name, *default_collation);
        }
        DdlRecord::AlterDatabase { name, default_collation } => {
            if catalog.databases.contains_key(name) {
                catalog.set_database_collation(name, *default_collation);
            }
        }
        DdlRecord::DropDatabase { name } => {
            catalog.database_collations.remove(name);
            for id in catalog.databases.remove(name).unwrap_or_default().into_values() {
                if let Some(table) = catalog.tables.remove(&id) {
                    discard(shared, &table);
                }
            }
        }
        DdlRecord::CreateTable { def } => {
            if catalog.tables.contains_key(&def.id) {
                return Ok(());
            }
            let taken = catalog.databases.get(&def.database).and_then(|tables| tables.get(&def.name));
            if let Some(other) = taken {
                return Err(EngineError::corrupt(format!("table {} exists as id {other}, not {}", def.qualified_name(), def.id)));
            }
            catalog.insert_table(Arc::new(Table::new(def.clone())), def);
        }
        DdlRecord::DropTable { table } => {
            if let Some(found) = catalog.table(*table).cloned() {
                catalog.remove_table(&found.def());
                discard(shared, &found);
            }
        }
        DdlRecord::CreateIndex { table, index } => {
            let Some(found) = catalog.table(*table) else { return Ok(()) };
            let mut data = found.data.write();
            if data.def.index_position(index.id).is_some() {
                return Ok(());
            }
            if index.columns.iter().any(|&column| column >= data.def.columns.len()) {
                return Err(EngineError::corrupt(format!("index {} names a column past the table's", index.name)));
            }
            let mut def = (*data.def).clone();
            def.add_index(index.clone());
            data.add_index(Arc::new(def), &shared.memory, None).expect("unchecked builds cannot fail");
        }
        DdlRecord::DropIndex { table, index } => {
            let Some(found) = catalog.table(*table) else { return Ok(()) };
            let mut data = found.data.write();
            let Some(position) = data.def.index_position(*index) else { return Ok(()) };
            let mut def = (*data.def).clone();
            def.indexes.remove(position);
            data.remove_index(Arc::new(def), position, &shared.memory);
        }
        DdlRecord::TruncateTable { table } => {
            let Some(found) = catalog.table(*table) else { return Ok(()) };
            let mut data = found.data.write();
            data.clear(&shared.memory);
            data.auto_increment_next = data.def.auto_increment_start;
        }
        DdlRecord::RebuildTable { table, def, rows, auto_increment_next } => {
            crate::alter::replay_rebuild(shared, catalog, *table, def, rows, *auto_increment_next)?;
        }
        DdlRecord::RenameTables { renames } => crate::alter::replay_renames(catalog, renames),
    }
    Ok(())
}

/// A dropped table: writers that looked it up before see the flag; its
/// memory goes back now rather than when the last reader lets go.
pub(crate) fn discard(shared: &Shared, table: &Table) {
    table.dropped.store(true, Ordering::Release);
    table.data.write().clear(&shared.memory);
}
