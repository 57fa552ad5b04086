//! The INFORMATION_SCHEMA tables' columns, as MySQL 8.4 declares them
//! (names, order, text or number, nullability), turned into engine table
//! definitions so SELECT describes and evaluates them like any table's.

use std::sync::Arc;

use binlog_format::ColumnType;
use engine::{ColumnAttributes, ColumnDef, CurrentTimestamp, TableDef};

/// utf8mb4_general_ci, the collation binlogd's tables show.
const TEXT_COLLATION: u16 = 45;

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// VARCHAR(n characters).
    Text(u16),
    /// LONGTEXT.
    LongText,
    /// BIGINT UNSIGNED.
    Number,
    /// DATETIME.
    DateTime,
}

/// One column: name, kind, and whether it may hold NULL.
pub type Column = (&'static str, Kind, bool);

pub const NAME: Kind = Kind::Text(64);

fn column(&(name, kind, nullable): &Column) -> ColumnDef {
    let (column_type, unsigned, collation) = match kind {
        Kind::Text(characters) => (ColumnType::VarChar { max_length_bytes: characters.saturating_mul(4) }, false, TEXT_COLLATION),
        Kind::LongText => (ColumnType::Blob { length_bytes: 4 }, false, TEXT_COLLATION),
        Kind::Number => (ColumnType::LongLong, true, 63),
        Kind::DateTime => (ColumnType::DateTime2 { fsp: 0 }, false, 63),
    };
    ColumnDef {
        name: name.to_string(),
        column_type,
        nullable,
        unsigned,
        auto_increment: false,
        collation,
        default: None,
        attributes: ColumnAttributes::default(),
        current_timestamp: CurrentTimestamp::default(),
    }
}

/// A definition for the INFORMATION_SCHEMA table `name`.
pub fn definition(name: &str, columns: &[Column]) -> Arc<TableDef> {
    Arc::new(TableDef {
        id: 0,
        database: "information_schema".to_string(),
        name: name.to_string(),
        columns: columns.iter().map(column).collect(),
        primary_key: Vec::new(),
        indexes: Vec::new(),
        auto_increment_start: 1,
        next_index_id: 1,
        partitioning: None,
        comment: String::new(),
        // Names compare as bytes, as on a case-sensitive file system.
        keys_by_collation: false,
        default_collation: engine::SERVER_DEFAULT_COLLATION,
    })
}
