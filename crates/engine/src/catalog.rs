//! Databases, tables, columns and indexes: the definitions the SQL layer
//! creates and the binlog's Table_map needs.
//!
//! Names: database and table names are case-sensitive (MySQL on Linux with
//! `lower_case_table_names = 0`); column and index names are not, as in
//! MySQL everywhere.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use binlog_format::{ColumnSpec, ColumnType, Value};

use crate::collation::Collation;
use crate::column_attributes::ColumnAttributes;
use crate::error::{EngineError, Result};
use crate::partition::Partitioning;
use crate::table::Table;

/// Stable for a table's whole life and across checkpoints and redo replay;
/// never reused (a table dropped and created again gets a new id).
pub type TableId = u64;
/// Stable id of a secondary index within its table. 0 is the clustered
/// (primary) index, which is not in [`TableDef::indexes`].
pub type IndexId = u32;
pub const CLUSTERED_INDEX_ID: IndexId = 0;
/// The key name MySQL prints for the primary key in 1062 messages.
pub const PRIMARY_KEY_NAME: &str = "PRIMARY";
/// MySQL's identifier limit (NAME_CHAR_LEN).
pub const NAME_LENGTH_MAX: usize = 64;

// PartialEq only: a default may be a float.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub column_type: ColumnType,
    pub nullable: bool,
    /// UNSIGNED; meaningful for numeric columns only.
    pub unsigned: bool,
    pub auto_increment: bool,
    /// Collation id of a character column (63 = binary); keys hold the
    /// column's text by its weights (see [`crate::collation`]).
    pub collation: u16,
    /// The column's DEFAULT, already fit for the column by the SQL layer
    /// (`Some(Value::Null)` for an explicit DEFAULT NULL); `None` for no
    /// DEFAULT clause. Kept with the definition so that redo replay and
    /// checkpoints bring it back with the table.
    pub default: Option<Value>,
    /// Display width, ZEROFILL, FLOAT(M,D) digits, ENUM/SET members.
    pub attributes: ColumnAttributes,
    /// DEFAULT / ON UPDATE CURRENT_TIMESTAMP of a TIMESTAMP or DATETIME
    /// column, at the column's own precision.
    pub current_timestamp: CurrentTimestamp,
}

/// When a TIMESTAMP or DATETIME column takes the statement's start time:
/// on INSERT without a value (DEFAULT CURRENT_TIMESTAMP) and when an
/// UPDATE changes another column of the row (ON UPDATE CURRENT_TIMESTAMP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CurrentTimestamp {
    pub on_insert: bool,
    pub on_update: bool,
}

impl ColumnDef {
    /// A nullable, signed, non-auto-increment column with the binary
    /// collation; adjust the fields as needed.
    pub fn new(name: impl Into<String>, column_type: ColumnType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            column_type,
            nullable: true,
            unsigned: false,
            auto_increment: false,
            collation: 63,
            default: None,
            attributes: ColumnAttributes::default(),
            current_timestamp: CurrentTimestamp::default(),
        }
    }

    pub fn not_null(mut self) -> ColumnDef {
        self.nullable = false;
        self
    }

    pub fn unsigned(mut self) -> ColumnDef {
        self.unsigned = true;
        self
    }

    pub fn auto_increment(mut self) -> ColumnDef {
        self.auto_increment = true;
        self
    }

    pub fn with_default(mut self, default: Value) -> ColumnDef {
        self.default = Some(default);
        self
    }

    pub fn spec(&self) -> ColumnSpec {
        ColumnSpec {
            name: self.name.clone(),
            column_type: self.column_type.clone(),
            nullable: self.nullable,
            unsigned: self.unsigned,
            collation: self.collation,
        }
    }

    fn is_integer(&self) -> bool {
        matches!(self.column_type, ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    pub id: IndexId,
    pub name: String,
    /// Column positions, in key order.
    pub columns: Vec<usize>,
    /// UNIQUE: no two rows share the key unless one of its values is NULL
    /// (MySQL lets NULLs repeat in a unique index).
    pub unique: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    pub id: TableId,
    pub database: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Column positions of the clustered primary key, in key order; empty
    /// for a table without a primary key, whose rows are ordered by a hidden
    /// row id instead.
    pub primary_key: Vec<usize>,
    pub indexes: Vec<IndexDef>,
    /// First AUTO_INCREMENT value (the AUTO_INCREMENT= table option), and
    /// the value TRUNCATE goes back to.
    pub auto_increment_start: u64,
    /// Id the next CREATE INDEX gets. Ids are never reused, so a scan or a
    /// lock that names an index by id cannot land on a newer one.
    pub next_index_id: IndexId,
    /// PARTITION BY, for a partitioned table.
    pub partitioning: Option<Partitioning>,
    /// The COMMENT table option: SHOW CREATE TABLE, SHOW TABLE STATUS and
    /// INFORMATION_SCHEMA.TABLES show it; empty for none, as in MySQL.
    pub comment: String,
    /// Keys hold character columns by their collation's weights (see
    /// [`crate::key`]). Every table CREATE or a rebuilding ALTER makes has
    /// it; a table from before keys followed collations keeps byte keys,
    /// and its text compares as bytes, until ALTER TABLE rebuilds it.
    pub keys_by_collation: bool,
    /// The table's default collation (its DEFAULT CHARSET and COLLATE
    /// options): what a text column added without its own takes, and what
    /// SHOW CREATE TABLE prints. [`SERVER_DEFAULT_COLLATION`] unless given.
    pub default_collation: u16,
}

/// utf8mb4_general_ci: the default collation of a table created without
/// one in a database without one, and of every table from before tables
/// kept theirs.
pub const SERVER_DEFAULT_COLLATION: u16 = 45;

/// What CREATE TABLE asks for, by column names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TableSpec {
    pub database: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Primary key column names; empty for none.
    pub primary_key: Vec<String>,
    pub indexes: Vec<IndexSpec>,
    /// 0 means 1.
    pub auto_increment_start: u64,
    pub partitioning: Option<Partitioning>,
    /// The COMMENT table option; empty for none.
    pub comment: String,
    /// The table's default collation; `None` for
    /// [`SERVER_DEFAULT_COLLATION`].
    pub default_collation: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    pub name: String,
    pub columns: Vec<String>,
    pub unique: bool,
}

impl TableDef {
    /// The column named `name` (case-insensitive), or 1054.
    pub fn column_index(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| EngineError::UnknownColumn { column: name.to_string(), context: "field list".to_string() })
    }

    pub fn index(&self, name: &str) -> Result<&IndexDef> {
        self.indexes
            .iter()
            .find(|index| index.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| EngineError::NoSuchIndex { key: name.to_string(), table: self.name.clone() })
    }

    pub(crate) fn index_position(&self, id: IndexId) -> Option<usize> {
        self.indexes.iter().position(|index| index.id == id)
    }

    /// How the keys of column `column` compare its text.
    pub fn key_collation(&self, column: usize) -> Collation {
        match (self.keys_by_collation, self.columns.get(column)) {
            (true, Some(column)) => Collation::from_id(column.collation),
            _ => Collation::Binary,
        }
    }

    pub fn has_primary_key(&self) -> bool {
        !self.primary_key.is_empty()
    }

    pub fn auto_increment_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }

    /// The definition as CREATE TABLE declares it (keys by column name,
    /// AUTO_INCREMENT from 1): what ALTER TABLE starts from and CREATE
    /// TABLE ... LIKE copies.
    pub fn to_spec(&self) -> TableSpec {
        let names = |positions: &[usize]| positions.iter().map(|&p| self.columns[p].name.clone()).collect();
        TableSpec {
            database: self.database.clone(),
            name: self.name.clone(),
            columns: self.columns.clone(),
            primary_key: names(&self.primary_key),
            indexes: self
                .indexes
                .iter()
                .map(|index| IndexSpec { name: index.name.clone(), columns: names(&index.columns), unique: index.unique })
                .collect(),
            auto_increment_start: 0,
            partitioning: self.partitioning.clone(),
            comment: self.comment.clone(),
            default_collation: Some(self.default_collation),
        }
    }

    /// The columns as the binlog's Table_map wants them.
    pub fn column_specs(&self) -> Vec<ColumnSpec> {
        self.columns.iter().map(ColumnDef::spec).collect()
    }

    /// Each column's ENUM or SET members (empty for other columns), for
    /// the Table_map's ENUM_STR_VALUE and SET_STR_VALUE metadata.
    pub fn column_members(&self) -> Vec<Vec<Vec<u8>>> {
        self.columns.iter().map(|c| c.attributes.members.clone()).collect()
    }

    /// `db`.`table` as error messages print it.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.database, self.name)
    }

    pub(crate) fn from_spec(id: TableId, spec: &TableSpec) -> Result<TableDef> {
        check_name(&spec.database, EngineError::WrongDatabaseName)?;
        check_name(&spec.name, EngineError::WrongTableName)?;
        if spec.columns.is_empty() {
            return Err(EngineError::TableMustHaveColumns);
        }
        let mut columns = spec.columns.clone();
        for (position, column) in columns.iter().enumerate() {
            if columns[..position].iter().any(|c| c.name.eq_ignore_ascii_case(&column.name)) {
                return Err(EngineError::DuplicateColumnName(column.name.clone()));
            }
            if column.name.is_empty() || column.column_type.validate().is_err() {
                return Err(EngineError::WrongColumnSpec(column.name.clone()));
            }
            if column.auto_increment && !column.is_integer() {
                return Err(EngineError::WrongColumnSpec(column.name.clone()));
            }
        }
        let primary_key = key_columns(&columns, &spec.primary_key)?;
        // MySQL makes primary key columns NOT NULL implicitly.
        for &position in &primary_key {
            columns[position].nullable = false;
        }
        let mut def = TableDef {
            id,
            database: spec.database.clone(),
            name: spec.name.clone(),
            columns,
            primary_key,
            indexes: Vec::new(),
            auto_increment_start: spec.auto_increment_start.max(1),
            next_index_id: CLUSTERED_INDEX_ID + 1,
            partitioning: spec.partitioning.clone(),
            comment: spec.comment.clone(),
            keys_by_collation: true,
            default_collation: spec.default_collation.unwrap_or(SERVER_DEFAULT_COLLATION),
        };
        for index in &spec.indexes {
            let index = def.new_index(index)?;
            def.add_index(index);
        }
        def.check_auto_increment()?;
        def.check_partitioning()?;
        Ok(def)
    }

    /// The definition of a new index (not yet added).
    pub(crate) fn new_index(&self, spec: &IndexSpec) -> Result<IndexDef> {
        if spec.name.is_empty() || spec.name.len() > NAME_LENGTH_MAX || spec.name.eq_ignore_ascii_case(PRIMARY_KEY_NAME) {
            return Err(EngineError::WrongIndexName(spec.name.clone()));
        }
        if self.indexes.iter().any(|index| index.name.eq_ignore_ascii_case(&spec.name)) {
            return Err(EngineError::DuplicateKeyName(spec.name.clone()));
        }
        let columns = key_columns(&self.columns, &spec.columns)?;
        if columns.is_empty() {
            return Err(EngineError::WrongIndexName(spec.name.clone()));
        }
        Ok(IndexDef { id: self.next_index_id, name: spec.name.clone(), columns, unique: spec.unique })
    }

    /// Appends `index` (from [`TableDef::new_index`], or replayed).
    pub(crate) fn add_index(&mut self, index: IndexDef) {
        self.next_index_id = self.next_index_id.max(index.id + 1);
        self.indexes.push(index);
    }

    /// A partitioned table's partitioning columns exist, have types it
    /// takes, and are in every unique key (1503).
    pub(crate) fn check_partitioning(&self) -> Result<()> {
        self.partitioning.as_ref().map_or(Ok(()), |partitioning| partitioning.check(self))
    }

    /// The partition `row` belongs to: None for a table that is not
    /// partitioned, 1526 when a RANGE or LIST table has none for it.
    pub fn partition_of(&self, row: &[Value]) -> Result<Option<u16>> {
        self.partitioning.as_ref().map(|partitioning| partitioning.partition_of(self, row)).transpose()
    }

    /// An AUTO_INCREMENT column must be alone and lead some key.
    pub(crate) fn check_auto_increment(&self) -> Result<()> {
        let mut auto = self.columns.iter().enumerate().filter(|(_, c)| c.auto_increment).map(|(p, _)| p);
        let Some(position) = auto.next() else { return Ok(()) };
        let leads_key =
            self.primary_key.first() == Some(&position) || self.indexes.iter().any(|index| index.columns.first() == Some(&position));
        if auto.next().is_some() || !leads_key {
            return Err(EngineError::WrongAutoKey);
        }
        Ok(())
    }
}

pub(crate) fn check_name(name: &str, error: fn(String) -> EngineError) -> Result<()> {
    if name.is_empty() || name.len() > NAME_LENGTH_MAX || name.ends_with(' ') {
        return Err(error(name.to_string()));
    }
    Ok(())
}

fn key_columns(columns: &[ColumnDef], names: &[String]) -> Result<Vec<usize>> {
    let mut positions = Vec::with_capacity(names.len());
    for name in names {
        let position = columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| EngineError::KeyColumnDoesNotExist(name.clone()))?;
        if positions.contains(&position) {
            return Err(EngineError::DuplicateColumnName(name.clone()));
        }
        positions.push(position);
    }
    Ok(positions)
}

/// Names to tables. Guarded by one lock in the engine; DDL takes it for
/// writing, everything else only to look a table up.
#[derive(Default)]
pub(crate) struct Catalog {
    pub(crate) databases: BTreeMap<String, BTreeMap<String, TableId>>,
    /// The default collation of each database whose default is not
    /// [`SERVER_DEFAULT_COLLATION`].
    pub(crate) database_collations: BTreeMap<String, u16>,
    pub(crate) tables: HashMap<TableId, Arc<Table>>,
    /// Next id to hand out; ids only grow, so redo replay can tell tables apart.
    pub(crate) next_table_id: TableId,
}

impl Catalog {
    pub(crate) fn new() -> Catalog {
        Catalog { next_table_id: 1, ..Catalog::default() }
    }

    pub(crate) fn set_database_collation(&mut self, database: &str, collation: u16) {
        if collation == SERVER_DEFAULT_COLLATION {
            self.database_collations.remove(database);
        } else {
            self.database_collations.insert(database.to_string(), collation);
        }
    }

    /// `database`'s default collation (the server's when it has none of
    /// its own).
    pub(crate) fn database_collation(&self, database: &str) -> u16 {
        self.database_collations.get(database).copied().unwrap_or(SERVER_DEFAULT_COLLATION)
    }

    pub(crate) fn table_id(&self, database: &str, table: &str) -> Result<TableId> {
        self.databases
            .get(database)
            .and_then(|tables| tables.get(table))
            .copied()
            .ok_or_else(|| EngineError::NoSuchTable { database: database.to_string(), table: table.to_string() })
    }

    pub(crate) fn table(&self, id: TableId) -> Option<&Arc<Table>> {
        self.tables.get(&id)
    }

    pub(crate) fn insert_table(&mut self, table: Arc<Table>, def: &TableDef) {
        self.databases.entry(def.database.clone()).or_default().insert(def.name.clone(), def.id);
        self.tables.insert(def.id, table);
        self.next_table_id = self.next_table_id.max(def.id + 1);
    }

    pub(crate) fn remove_table(&mut self, def: &TableDef) -> Option<Arc<Table>> {
        if let Some(tables) = self.databases.get_mut(&def.database) {
            if tables.get(&def.name) == Some(&def.id) {
                tables.remove(&def.name);
            }
        }
        self.tables.remove(&def.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> TableSpec {
        TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef::new("id", ColumnType::Long).auto_increment(),
                ColumnDef::new("email", ColumnType::VarChar { max_length_bytes: 100 }),
            ],
            primary_key: vec!["ID".into()],
            indexes: vec![IndexSpec { name: "email".into(), columns: vec!["email".into()], unique: true }],
            auto_increment_start: 0,
            partitioning: None,
            comment: String::new(),
            default_collation: None,
        }
    }

    #[test]
    fn primary_key_columns_become_not_null_and_lookups_ignore_case() {
        let def = TableDef::from_spec(7, &spec()).unwrap();
        assert!(!def.columns[0].nullable);
        assert_eq!(def.column_index("EMAIL").unwrap(), 1);
        assert_eq!(def.column_index("nope").unwrap_err().mysql_code(), 1054);
        assert_eq!(def.index("Email").unwrap().id, 1);
        assert_eq!(def.auto_increment_start, 1);
    }

    #[test]
    fn bad_definitions_get_mysql_errors() {
        let mut twice = spec();
        twice.columns.push(ColumnDef::new("Id", ColumnType::Long));
        assert_eq!(TableDef::from_spec(1, &twice).unwrap_err().mysql_code(), 1060);
        let mut unkeyed_auto = spec();
        unkeyed_auto.primary_key.clear();
        assert_eq!(TableDef::from_spec(1, &unkeyed_auto).unwrap_err().mysql_code(), 1075);
        let mut missing = spec();
        missing.indexes[0].columns = vec!["phone".into()];
        assert_eq!(TableDef::from_spec(1, &missing).unwrap_err().mysql_code(), 1072);
        let mut same_name = spec();
        same_name.indexes.push(same_name.indexes[0].clone());
        assert_eq!(TableDef::from_spec(1, &same_name).unwrap_err().mysql_code(), 1061);
    }
}
