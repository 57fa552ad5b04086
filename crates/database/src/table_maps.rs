//! Table_map events, built and encoded once per table definition.
//!
//! Every row-based transaction logs a Table_map for each table it writes,
//! and the event depends only on the table's definition. Building one per
//! transaction (names, column types, metadata, a clone per run of rows,
//! an encoding per event) was about 4% of the CPU of small commits
//! (`bench engine --sessions 16`), so the database keeps the encoded body
//! per table and hands it out while the definition is the same one
//! (`Arc` identity: DDL installs a new definition).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use binlog_format::events::TableMap;
use engine::{Engine, TableDef, TableId};
use parking_lot::Mutex;

use crate::error::{DatabaseError, Result};
use crate::row_image::RowMetadata;

/// Tables kept: more are dropped all at once (a cache miss only costs the
/// build this module saves), so dropped tables never pile up.
const TABLE_MAPS_MAX: usize = 4096;

/// One table's Table_map for one definition.
#[derive(Debug)]
pub struct EncodedTableMap {
    pub def: Arc<TableDef>,
    pub map: TableMap,
    /// `map`'s event body.
    pub body: Vec<u8>,
    /// The body with `binlog_row_metadata=MINIMAL`, built when first asked for.
    minimal_body: OnceLock<Vec<u8>>,
}

impl EncodedTableMap {
    /// The event body with the optional metadata `metadata` asks for.
    pub fn body_for(&self, metadata: RowMetadata) -> &[u8] {
        match metadata {
            RowMetadata::Full => &self.body,
            RowMetadata::Minimal => self.minimal_body.get_or_init(|| {
                let mut body = Vec::new();
                self.map.with_minimal_metadata().encode_body(&mut body);
                body
            }),
        }
    }
}

#[derive(Debug, Default)]
pub struct TableMaps {
    by_table: Mutex<HashMap<TableId, Arc<EncodedTableMap>>>,
}

impl TableMaps {
    /// The Table_map of `table` as it is defined now.
    pub fn get(&self, engine: &Engine, table: TableId) -> Result<Arc<EncodedTableMap>> {
        // DDL waits for open writers, so a changed table still exists.
        let def = engine.table_def(table).ok_or_else(|| DatabaseError::RowEvent(format!("table {table} of a change no longer exists")))?;
        if let Some(found) = self.by_table.lock().get(&table) {
            if Arc::ptr_eq(&found.def, &def) {
                return Ok(Arc::clone(found));
            }
        }
        let geometry_kinds: Vec<Option<u8>> =
            def.columns.iter().map(|column| column.attributes.geometry.map(|geometry| geometry.kind.code())).collect();
        let map = TableMap::with_members(table, &def.database, &def.name, &def.column_specs(), &def.primary_key, &def.column_members())
            .map_err(|error| DatabaseError::RowEvent(error.to_string()))?
            .with_geometry_types(&geometry_kinds)
            .with_column_visibility(&def.columns.iter().map(|column| !column.attributes.invisible).collect::<Vec<_>>());
        let mut body = Vec::new();
        map.encode_body(&mut body);
        let encoded = Arc::new(EncodedTableMap { def, map, body, minimal_body: OnceLock::new() });
        let mut by_table = self.by_table.lock();
        if by_table.len() >= TABLE_MAPS_MAX {
            by_table.clear();
        }
        by_table.insert(table, Arc::clone(&encoded));
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use binlog_format::ColumnType;
    use engine::{ColumnDef, EngineConfig, IndexSpec, TableSpec};

    use super::*;

    #[test]
    fn one_build_per_definition_and_a_new_one_after_ddl() {
        let engine = Engine::new(EngineConfig::default());
        engine.create_database("d").unwrap();
        let spec = TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("id", ColumnType::LongLong), ColumnDef::new("v", ColumnType::Long)],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        let table = engine.create_table(&spec).unwrap().id;
        let maps = TableMaps::default();
        let first = maps.get(&engine, table).unwrap();
        assert!(Arc::ptr_eq(&first, &maps.get(&engine, table).unwrap()), "the same definition is built once");
        let mut expected = Vec::new();
        first.map.encode_body(&mut expected);
        assert_eq!(first.body, expected);
        assert_eq!(first.map.table, b"t");
        assert_eq!(first.body_for(RowMetadata::Full), expected);
        let mut minimal = Vec::new();
        first.map.with_minimal_metadata().encode_body(&mut minimal);
        assert_eq!(first.body_for(RowMetadata::Minimal), minimal);
        assert!(minimal.len() < expected.len(), "no column names nor primary key");

        engine
            .create_index(
                "d",
                "t",
                &IndexSpec { name: "v".into(), columns: vec!["v".into()], unique: false },
                engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT,
            )
            .unwrap();
        let after_ddl = maps.get(&engine, table).unwrap();
        assert!(!Arc::ptr_eq(&first, &after_ddl), "DDL installs a new definition, so a new map");
        assert!(Arc::ptr_eq(&after_ddl.def, &engine.table_def(table).unwrap()));
    }

    #[test]
    fn a_missing_table_is_a_row_event_error() {
        let engine = Engine::new(EngineConfig::default());
        let error = TableMaps::default().get(&engine, 999).unwrap_err();
        assert!(matches!(error, DatabaseError::RowEvent(_)), "{error}");
    }
}
