//! The rows of the INFORMATION_SCHEMA tables, built from the catalog at
//! the moment a statement reads them. binlogd has no stored routines,
//! triggers, views, events, foreign keys, tablespace files or partitions,
//! so those tables are empty (PARTITIONS has MySQL's one row per table
//! with NULL partition columns).

use binlog_format::ColumnType;
use engine::{ColumnDef, TableDef};

use super::column_facts::{column_default, column_extra, column_key, generation_expression};
use crate::eval::columns::{type_name, BINARY_COLLATION};
use crate::eval::temporal::TimeZone;
use crate::eval::value::Value;

const DEF: &str = "def";

fn text(value: impl Into<String>) -> Value {
    Value::Bytes(value.into().into_bytes())
}

fn number(value: u64) -> Value {
    Value::UInt(value)
}

/// The character set and collation a collation id names.
pub fn collation_names(id: u16) -> (&'static str, &'static str) {
    let collation =
        crate::charsets::collation_by_id(id).unwrap_or_else(|| crate::charsets::collation_by_id(45).expect("utf8mb4_general_ci"));
    (collation.charset, collation.name)
}

/// The tables a statement may see: every database's, the account's
/// privileges permitting.
pub struct Visible<'a> {
    pub tables: Vec<std::sync::Arc<TableDef>>,
    pub databases: Vec<String>,
    pub zone: TimeZone,
    pub catalog: database::Catalog<'a>,
}

/// TABLE_ROWS, AVG_ROW_LENGTH, DATA_LENGTH, MAX_DATA_LENGTH, INDEX_LENGTH
/// and DATA_FREE (in TABLES and PARTITIONS) from the engine's estimate of
/// the bytes it holds for a table, as InnoDB reports its pages: rows with
/// their versions and clustered keys as data, secondary index entries as
/// index.
fn size_columns(size: engine::TableSize) -> [Value; 6] {
    let average_row_bytes = size.data_bytes.checked_div(size.rows).unwrap_or(0);
    [number(size.rows), number(average_row_bytes), number(size.data_bytes), number(0), number(size.index_bytes), number(0)]
}

pub fn schemata(visible: &Visible<'_>) -> Vec<Vec<Value>> {
    let mut names = visible.databases.clone();
    names.push("information_schema".to_string());
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let (charset, collation) =
                collation_names(visible.catalog.database_collation(&name).unwrap_or(engine::SERVER_DEFAULT_COLLATION));
            vec![text(DEF), text(name), text(charset), text(collation), Value::Null, text("NO")]
        })
        .collect()
}

pub fn tables(visible: &Visible<'_>) -> Vec<Vec<Value>> {
    let mut rows: Vec<Vec<Value>> = visible
        .tables
        .iter()
        .map(|def| {
            let auto_increment = match def.columns.iter().any(|c| c.auto_increment) {
                true => visible.catalog.auto_increment_next(def.id).map(number),
                false => None,
            };
            let mut row =
                vec![text(DEF), text(&def.database), text(&def.name), text("BASE TABLE"), text("InnoDB"), number(10), text("Dynamic")];
            row.extend(size_columns(visible.catalog.table_size(def.id).unwrap_or_default()));
            row.extend([
                auto_increment.unwrap_or(Value::Null),
                Value::Null,
                Value::Null,
                Value::Null,
                text(collation_names(def.default_collation).1),
                Value::Null,
                text(""),
                text(&def.comment),
            ]);
            row
        })
        .collect();
    for (name, _) in super::tables::ALL {
        let mut row = vec![text(DEF), text("information_schema"), text(*name), text("SYSTEM VIEW")];
        row.extend(std::iter::repeat_n(Value::Null, 13));
        row.extend([Value::Null, text(""), text("")]);
        rows.push(row);
    }
    rows
}

/// CHARACTER_MAXIMUM_LENGTH and CHARACTER_OCTET_LENGTH.
fn character_lengths(column: &ColumnDef) -> (Value, Value) {
    let bytes_per_character = u64::from(crate::charsets::bytes_per_character(column.collation));
    let (characters, octets) = match &column.column_type {
        ColumnType::String { max_length_bytes } | ColumnType::VarChar { max_length_bytes } => {
            let bytes = u64::from(*max_length_bytes);
            (bytes / bytes_per_character, bytes)
        }
        ColumnType::Blob { length_bytes } => {
            let bytes = (1u64 << (8 * u32::from((*length_bytes).clamp(1, 4)))) - 1;
            (bytes, bytes)
        }
        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
            let members = &column.attributes.members;
            let characters = |member: &Vec<u8>| String::from_utf8_lossy(member).chars().count() as u64;
            let longest = if matches!(column.column_type, ColumnType::Set { .. }) {
                members.iter().map(characters).sum::<u64>() + members.len().saturating_sub(1) as u64
            } else {
                members.iter().map(characters).max().unwrap_or(0)
            };
            (longest, longest * bytes_per_character)
        }
        _ => return (Value::Null, Value::Null),
    };
    (number(characters), number(octets))
}

/// NUMERIC_PRECISION, NUMERIC_SCALE and DATETIME_PRECISION.
fn precisions(column: &ColumnDef) -> (Value, Value, Value) {
    let integer = |digits: u64| (number(digits), number(0), Value::Null);
    let digits = column.attributes.float_digits;
    match column.column_type {
        ColumnType::Tiny => integer(3),
        ColumnType::Short => integer(5),
        ColumnType::Int24 => integer(7),
        ColumnType::Long => integer(10),
        ColumnType::LongLong => integer(if column.unsigned { 20 } else { 19 }),
        ColumnType::NewDecimal { precision, scale } => (number(u64::from(precision)), number(u64::from(scale)), Value::Null),
        ColumnType::Float | ColumnType::Double => match digits {
            Some((m, d)) => (number(u64::from(m)), number(u64::from(d)), Value::Null),
            None => (number(if column.column_type == ColumnType::Float { 12 } else { 22 }), Value::Null, Value::Null),
        },
        ColumnType::Bit { bits } => (number(u64::from(bits)), Value::Null, Value::Null),
        ColumnType::DateTime2 { fsp } | ColumnType::Timestamp2 { fsp } | ColumnType::Time2 { fsp } => {
            (Value::Null, Value::Null, number(u64::from(fsp)))
        }
        _ => (Value::Null, Value::Null, Value::Null),
    }
}

fn is_character(column: &ColumnDef) -> bool {
    match column.column_type {
        ColumnType::String { .. } | ColumnType::VarChar { .. } | ColumnType::Blob { .. } => column.collation != BINARY_COLLATION,
        ColumnType::Enum { .. } | ColumnType::Set { .. } => true,
        _ => false,
    }
}

fn column_row(def: &TableDef, position: usize, zone: TimeZone) -> Vec<Value> {
    let column = &def.columns[position];
    let column_type = type_name(column);
    let data_type = column_type.split(['(', ' ']).next().unwrap_or_default().to_string();
    let (characters, octets) = character_lengths(column);
    let (precision, scale, datetime_precision) = precisions(column);
    let (charset, collation) = match is_character(column) {
        true => {
            let (charset, collation) = collation_names(column.collation);
            (text(charset), text(collation))
        }
        false => (Value::Null, Value::Null),
    };
    vec![
        text(DEF),
        text(&def.database),
        text(&def.name),
        text(&column.name),
        number(position as u64 + 1),
        column_default(column, zone).map_or(Value::Null, text),
        text(if column.nullable { "YES" } else { "NO" }),
        text(data_type),
        characters,
        octets,
        precision,
        scale,
        datetime_precision,
        charset,
        collation,
        text(column_type),
        text(column_key(def, position)),
        text(column_extra(column)),
        text("select,insert,update,references"),
        text(&column.attributes.comment),
        text(generation_expression(column)),
        column.attributes.geometry.and_then(|geometry| geometry.srid).map_or(Value::Null, |srid| number(u64::from(srid))),
    ]
}

pub fn columns(visible: &Visible<'_>) -> Vec<Vec<Value>> {
    visible.tables.iter().flat_map(|def| (0..def.columns.len()).map(|position| column_row(def, position, visible.zone))).collect()
}

/// Each index with its columns: (name, unique, column positions); the
/// primary key first, as `PRIMARY`.
/// A table's indexes, PRIMARY first: name, unique, column positions.
pub fn indexes(def: &TableDef) -> Vec<(String, bool, Vec<usize>)> {
    let mut indexes = Vec::new();
    if def.has_primary_key() {
        indexes.push(("PRIMARY".to_string(), true, def.primary_key.clone()));
    }
    indexes.extend(def.indexes.iter().map(|index| (index.name.clone(), index.unique, index.columns.clone())));
    indexes
}

pub fn statistics(visible: &Visible<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for def in &visible.tables {
        for (name, unique, positions) in indexes(def) {
            for (sequence, &position) in positions.iter().enumerate() {
                let column = &def.columns[position];
                rows.push(vec![
                    text(DEF),
                    text(&def.database),
                    text(&def.name),
                    number(u64::from(!unique)),
                    text(&def.database),
                    text(&name),
                    number(sequence as u64 + 1),
                    text(&column.name),
                    text("A"),
                    number(0),
                    Value::Null,
                    Value::Null,
                    text(if column.nullable { "YES" } else { "" }),
                    text("BTREE"),
                    text(""),
                    text(""),
                    text("YES"),
                    Value::Null,
                ]);
            }
        }
    }
    rows
}

pub fn key_column_usage(visible: &Visible<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for def in &visible.tables {
        for (name, _, positions) in indexes(def).into_iter().filter(|(_, unique, _)| *unique) {
            for (sequence, &position) in positions.iter().enumerate() {
                rows.push(vec![
                    text(DEF),
                    text(&def.database),
                    text(&name),
                    text(DEF),
                    text(&def.database),
                    text(&def.name),
                    text(&def.columns[position].name),
                    number(sequence as u64 + 1),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
            }
        }
    }
    rows
}

pub fn table_constraints(visible: &Visible<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for def in &visible.tables {
        for (name, _, _) in indexes(def).into_iter().filter(|(_, unique, _)| *unique) {
            let kind = if name == "PRIMARY" { "PRIMARY KEY" } else { "UNIQUE" };
            rows.push(vec![text(DEF), text(&def.database), text(&name), text(&def.database), text(&def.name), text(kind), text("YES")]);
        }
    }
    rows
}

pub fn partitions(visible: &Visible<'_>) -> Vec<Vec<Value>> {
    visible
        .tables
        .iter()
        .flat_map(|def| {
            // binlogd keeps a partitioned table's rows together, so its
            // partitions have no sizes of their own.
            let stats = size_columns(engine::TableSize::default());
            let times = [Value::Null, Value::Null, Value::Null, Value::Null];
            let Some(partitioning) = &def.partitioning else {
                // A table that is not partitioned: one row, its partition
                // fields NULL, its sizes the table's.
                let mut row = vec![text(DEF), text(&def.database), text(&def.name)];
                row.extend(std::iter::repeat_n(Value::Null, 9));
                row.extend(size_columns(visible.catalog.table_size(def.id).unwrap_or_default()));
                row.extend(times);
                row.extend([text(""), Value::Null, Value::Null]);
                return vec![row];
            };
            let method = partitioning.method.name(partitioning.linear);
            let expression = crate::exec::show_partitions::expression_text(partitioning);
            partitioning
                .partitions
                .iter()
                .enumerate()
                .map(|(position, partition)| {
                    let description = crate::exec::show_partitions::description_text(partitioning, partition);
                    let mut row = vec![text(DEF), text(&def.database), text(&def.name)];
                    row.extend([text(&partition.name), Value::Null, number(position as u64 + 1), Value::Null]);
                    row.extend([text(method), Value::Null, text(&expression), Value::Null]);
                    row.push(description.as_deref().map_or(Value::Null, text));
                    row.extend(stats.clone());
                    row.extend(times.clone());
                    row.extend([text(partition.comment.as_deref().unwrap_or("")), text("default"), Value::Null]);
                    row
                })
                .collect()
        })
        .collect()
}

pub fn engines() -> Vec<Vec<Value>> {
    vec![vec![
        text("InnoDB"),
        text("DEFAULT"),
        text("binlogd's in-memory MVCC engine with a redo log"),
        text("YES"),
        text("YES"),
        text("YES"),
    ]]
}

pub fn character_sets() -> Vec<Vec<Value>> {
    crate::charsets::CHARACTER_SETS
        .iter()
        .map(|(name, description, bytes_max)| {
            vec![text(*name), text(crate::charsets::default_collation(name).name), text(*description), number(*bytes_max)]
        })
        .collect()
}

pub fn collations() -> Vec<Vec<Value>> {
    crate::charsets::COLLATIONS
        .iter()
        .map(|collation| {
            let default = if collation.is_default { "Yes" } else { "" };
            let pad = if collation.no_pad { "NO PAD" } else { "PAD SPACE" };
            // SORTLEN as MySQL reports it: 0 for the UCA 9.0.0 collations.
            let sort_length = if collation.name.contains("_0900_") { 0 } else { 1 };
            vec![
                text(collation.name),
                text(collation.charset),
                number(collation.id.into()),
                text(default),
                text("Yes"),
                number(sort_length),
                text(pad),
            ]
        })
        .collect()
}
