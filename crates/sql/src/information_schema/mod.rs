//! INFORMATION_SCHEMA: MySQL 8.4's tables (`tables.rs` lists their
//! columns), each built as an engine table definition plus rows from the
//! catalog (`rows.rs`), which SELECT scans like a stored table, so WHERE,
//! ORDER BY, GROUP BY and column lists behave as anywhere else.

mod column_facts;
mod layout;
mod processlist;
mod rows;
mod tables;

use std::sync::Arc;

use database::Catalog;
use engine::TableDef;
use protocol::MysqlError;

pub use column_facts::{column_default, column_extra, column_key};
pub use processlist::visible_processes;
pub use rows::collation_names;
pub use rows::indexes as table_indexes;

use crate::error::SqlResult;
use crate::eval::temporal::TimeZone;
use crate::eval::value::Value;
use crate::session::Context;

pub const DATABASE: &str = "information_schema";

/// Whether `database` names INFORMATION_SCHEMA (any case, as in MySQL).
pub fn is_information_schema(database: &str) -> bool {
    database.eq_ignore_ascii_case(DATABASE)
}

/// The names of INFORMATION_SCHEMA's tables, upper case as MySQL lists them.
pub fn table_names() -> impl Iterator<Item = &'static str> {
    tables::ALL.iter().map(|(name, _)| *name)
}

/// An INFORMATION_SCHEMA table as of now.
pub struct VirtualTable {
    pub def: Arc<TableDef>,
    pub rows: Vec<Vec<Value>>,
}

/// 1109 ER_UNKNOWN_TABLE.
fn unknown_table(name: &str) -> MysqlError {
    MysqlError::new(1109, "42S02", format!("Unknown table '{}' in information_schema", name.to_ascii_uppercase()))
}

/// The table `name`; its rows only with a `viewer` (a statement that runs
/// rather than one being described), filtered to what the viewer may see.
pub fn table(name: &str, catalog: Catalog<'_>, viewer: Option<&Context<'_>>) -> SqlResult<VirtualTable> {
    let upper = name.to_ascii_uppercase();
    let (table_name, columns) = tables::ALL.iter().find(|(table, _)| *table == upper).ok_or_else(|| unknown_table(name))?;
    let def = layout::definition(table_name, columns);
    let Some(context) = viewer else { return Ok(VirtualTable { def, rows: Vec::new() }) };
    let principal = context.principal();
    let databases: Vec<String> = catalog.databases().into_iter().filter(|database| principal.can_see_database(database)).collect();
    let mut tables = Vec::new();
    for database in &databases {
        for table in catalog.tables(database).unwrap_or_default() {
            if principal.can_see_table(database, &table) {
                if let Ok(def) = catalog.table(database, &table) {
                    tables.push(def);
                }
            }
        }
    }
    let visible = rows::Visible { tables, databases, zone: TimeZone::of(&context.env), catalog };
    let rows = match *table_name {
        "SCHEMATA" => rows::schemata(&visible),
        "TABLES" => rows::tables(&visible),
        "COLUMNS" => rows::columns(&visible),
        "STATISTICS" => rows::statistics(&visible),
        "KEY_COLUMN_USAGE" => rows::key_column_usage(&visible),
        "TABLE_CONSTRAINTS" => rows::table_constraints(&visible),
        "PARTITIONS" => rows::partitions(&visible),
        "ENGINES" => rows::engines(),
        "CHARACTER_SETS" => rows::character_sets(),
        "COLLATIONS" => rows::collations(),
        "PROCESSLIST" => processlist::rows(context),
        // No routines, triggers, views, events, foreign keys, histograms
        // or tablespace files exist in binlogd.
        _ => Vec::new(),
    };
    Ok(VirtualTable { def, rows })
}
