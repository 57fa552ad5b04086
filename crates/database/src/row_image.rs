//! How much of each row the binlog carries: `binlog_row_image`,
//! `binlog_row_metadata`, `binlog_rows_query_log_events` and
//! `binlog_row_value_options`, and the
//! columns each image holds, as MySQL 8.4 chooses them
//! (`TABLE::mark_columns_per_binlog_row_image` in `sql/table.cc`,
//! `binlog_prepare_row_images` in `sql/binlog.cc`).
//!
//! | image | before image (Update, Delete) | after image of an Update | Write |
//! |-------|-------------------------------|--------------------------|-------|
//! | FULL | every column | every column | every column |
//! | MINIMAL | the primary key; every column without one | the assigned columns and the columns that changed | every column |
//! | NOBLOB | every column but BLOB/TEXT ones outside the primary key; every column without one | every column but BLOB/TEXT ones neither assigned nor changed | every column |
//!
//! "Changed" covers what MySQL adds to an UPDATE's write set besides its
//! assignments: ON UPDATE CURRENT_TIMESTAMP columns. An INSERT logs the
//! whole row it inserted (MySQL logs the columns of an INSERT's column
//! list; the row a replica gets is the same). BLOB/TEXT is MySQL's
//! `MYSQL_TYPE_BLOB`: JSON and spatial columns are not dropped by NOBLOB.
//!
//! The settings are read when a statement runs and kept with the
//! transaction as [`LoggedStatement`]s; a transaction whose statements all
//! ran with the defaults (FULL, FULL, OFF, no PARTIAL_JSON) keeps none, and
//! its events are built as they always were.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use binlog_format::{ColumnType, Value};
use engine::TableDef;

use crate::partial_json::RowJsonDiffs;

/// `binlog_row_image`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowImage {
    #[default]
    Full,
    Minimal,
    NoBlob,
}

impl RowImage {
    /// MySQL's spellings, as SHOW VARIABLES prints them.
    pub const WORDS: &'static [&'static str] = &["FULL", "MINIMAL", "NOBLOB"];

    pub fn parse(word: &str) -> Option<RowImage> {
        match word.to_ascii_uppercase().as_str() {
            "FULL" => Some(RowImage::Full),
            "MINIMAL" => Some(RowImage::Minimal),
            "NOBLOB" => Some(RowImage::NoBlob),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        Self::WORDS[self as usize]
    }
}

/// `binlog_row_metadata`: which optional metadata Table_maps carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowMetadata {
    /// Signedness, charsets and geometry types: what decoding needs.
    Minimal,
    /// Also column names, ENUM/SET values, the primary key.
    #[default]
    Full,
}

impl RowMetadata {
    pub const WORDS: &'static [&'static str] = &["MINIMAL", "FULL"];

    pub fn parse(word: &str) -> Option<RowMetadata> {
        match word.to_ascii_uppercase().as_str() {
            "MINIMAL" => Some(RowMetadata::Minimal),
            "FULL" => Some(RowMetadata::Full),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        Self::WORDS[self as usize]
    }
}

/// The settings one statement's rows are logged with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowLogging {
    pub image: RowImage,
    pub metadata: RowMetadata,
    /// `binlog_rows_query_log_events`: a Rows_query event with the
    /// statement's text before its Table_maps.
    pub rows_query: bool,
    /// `binlog_row_value_options = PARTIAL_JSON`: updates go in
    /// Partial_update_rows events (`partial_json.rs`).
    pub partial_json: bool,
}

impl RowLogging {
    pub fn is_default(&self) -> bool {
        *self == RowLogging::default()
    }
}

/// One statement of a transaction logged with [`RowLogging`] other than
/// the defaults: its changes start at `first_change` and last until the
/// next statement's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoggedStatement {
    /// Index of the statement's first change in the transaction's list.
    pub first_change: usize,
    pub logging: RowLogging,
    /// The columns an UPDATE assigns (its SET list), in the after images
    /// whether or not their values changed.
    pub assigned_columns: Vec<usize>,
    /// The statement's text, for its Rows_query event.
    pub query: String,
    /// With `partial_json`: the JSON diffs of each of the statement's
    /// changes, in order; empty when it computed none.
    pub json_diffs: Vec<RowJsonDiffs>,
}

/// The statements of a transaction that change how its rows are logged,
/// in order.
pub type StatementLog = Vec<LoggedStatement>;

/// Where `statements` (sorted by `first_change`) put change `index`: the
/// statement it belongs to, if any, and where that statement's changes end.
pub fn statement_at(statements: &[LoggedStatement], index: usize, change_count: usize) -> (Option<&LoggedStatement>, usize) {
    let next = statements.partition_point(|statement| statement.first_change <= index);
    let end = statements.get(next).map_or(change_count, |following| following.first_change.min(change_count));
    (next.checked_sub(1).map(|at| &statements[at]), end)
}

/// The global values, changed by SET GLOBAL and read by every statement.
#[derive(Debug, Default)]
pub struct RowLoggingGlobals {
    image: AtomicU8,
    metadata: AtomicU8,
    rows_query: AtomicBool,
    partial_json: AtomicBool,
}

impl RowLoggingGlobals {
    pub fn new(logging: RowLogging) -> RowLoggingGlobals {
        let globals = RowLoggingGlobals::default();
        globals.set(logging);
        globals
    }

    pub fn get(&self) -> RowLogging {
        let image = match self.image.load(Ordering::Relaxed) {
            1 => RowImage::Minimal,
            2 => RowImage::NoBlob,
            _ => RowImage::Full,
        };
        let metadata = if self.metadata.load(Ordering::Relaxed) == 0 { RowMetadata::Full } else { RowMetadata::Minimal };
        RowLogging {
            image,
            metadata,
            rows_query: self.rows_query.load(Ordering::Relaxed),
            partial_json: self.partial_json.load(Ordering::Relaxed),
        }
    }

    pub fn set(&self, logging: RowLogging) {
        self.image.store(logging.image as u8, Ordering::Relaxed);
        self.metadata.store(u8::from(logging.metadata == RowMetadata::Minimal), Ordering::Relaxed);
        self.rows_query.store(logging.rows_query, Ordering::Relaxed);
        self.partial_json.store(logging.partial_json, Ordering::Relaxed);
    }
}

/// MySQL's `MYSQL_TYPE_BLOB`: the BLOB and TEXT types NOBLOB leaves out.
fn is_blob(column_type: &ColumnType) -> bool {
    matches!(column_type, ColumnType::Blob { .. })
}

/// `bitmap` (one bit per column, column 0 in the low bit) set for the
/// columns `present` says, reusing its allocation.
fn fill_bitmap(bitmap: &mut Vec<u8>, column_count: usize, present: impl Fn(usize) -> bool) {
    bitmap.clear();
    bitmap.resize(column_count.div_ceil(8), 0);
    for column in (0..column_count).filter(|&column| present(column)) {
        bitmap[column / 8] |= 1 << (column % 8);
    }
}

/// The before image's columns of an Update or Delete on `def`.
pub fn before_image_columns(def: &TableDef, image: RowImage, bitmap: &mut Vec<u8>) {
    let count = def.columns.len();
    let in_key = |column: usize| def.primary_key.contains(&column);
    match image {
        _ if !def.has_primary_key() => fill_bitmap(bitmap, count, |_| true),
        RowImage::Full => fill_bitmap(bitmap, count, |_| true),
        RowImage::Minimal => fill_bitmap(bitmap, count, in_key),
        RowImage::NoBlob => fill_bitmap(bitmap, count, |column| in_key(column) || !is_blob(&def.columns[column].column_type)),
    }
}

/// The after image's columns of an Update from `before` to `after`.
pub fn update_after_image_columns(
    def: &TableDef,
    image: RowImage,
    assigned: &[usize],
    before: &[Value],
    after: &[Value],
    bitmap: &mut Vec<u8>,
) {
    let count = def.columns.len();
    let written = |column: usize| assigned.contains(&column) || before.get(column) != after.get(column);
    match image {
        RowImage::Full => fill_bitmap(bitmap, count, |_| true),
        RowImage::Minimal => fill_bitmap(bitmap, count, written),
        RowImage::NoBlob => fill_bitmap(bitmap, count, |column| !is_blob(&def.columns[column].column_type) || written(column)),
    }
}

#[cfg(test)]
mod tests {
    use engine::{ColumnDef, Engine, EngineConfig, TableSpec};

    use super::*;

    fn table(primary_key: &[&str]) -> std::sync::Arc<TableDef> {
        let engine = Engine::new(EngineConfig::default());
        engine.create_database("d").unwrap();
        let spec = TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef::new("id", ColumnType::Long),
                ColumnDef::new("body", ColumnType::Blob { length_bytes: 2 }),
                ColumnDef::new("doc", ColumnType::Json),
                ColumnDef::new("n", ColumnType::Long),
            ],
            primary_key: primary_key.iter().map(|c| c.to_string()).collect(),
            ..Default::default()
        };
        let id = engine.create_table(&spec).unwrap().id;
        engine.table_def(id).unwrap()
    }

    fn columns(bitmap: &[u8]) -> Vec<usize> {
        (0..8 * bitmap.len()).filter(|&c| bitmap[c / 8] & (1 << (c % 8)) != 0).collect()
    }

    #[test]
    fn images_hold_the_columns_mysql_logs() {
        let keyed = table(&["id"]);
        let mut bitmap = Vec::new();
        let before_of = |def: &TableDef, image, bitmap: &mut Vec<u8>| {
            before_image_columns(def, image, bitmap);
            columns(bitmap)
        };
        assert_eq!(before_of(&keyed, RowImage::Full, &mut bitmap), [0, 1, 2, 3]);
        assert_eq!(before_of(&keyed, RowImage::Minimal, &mut bitmap), [0]);
        assert_eq!(before_of(&keyed, RowImage::NoBlob, &mut bitmap), [0, 2, 3], "JSON stays: it is not MYSQL_TYPE_BLOB");
        let unkeyed = table(&[]);
        for image in [RowImage::Full, RowImage::Minimal, RowImage::NoBlob] {
            assert_eq!(before_of(&unkeyed, image, &mut bitmap), [0, 1, 2, 3], "{image:?} without a primary key");
        }

        let before = [Value::Int(1), Value::Bytes(b"a".to_vec()), Value::Null, Value::Int(5)];
        let after = [Value::Int(1), Value::Bytes(b"a".to_vec()), Value::Null, Value::Int(6)];
        let after_of = |image, assigned: &[usize], bitmap: &mut Vec<u8>| {
            update_after_image_columns(&keyed, image, assigned, &before, &after, bitmap);
            columns(bitmap)
        };
        assert_eq!(after_of(RowImage::Full, &[], &mut bitmap), [0, 1, 2, 3]);
        assert_eq!(after_of(RowImage::Minimal, &[], &mut bitmap), [3], "the changed column");
        assert_eq!(after_of(RowImage::Minimal, &[1], &mut bitmap), [1, 3], "an assigned column even unchanged");
        assert_eq!(after_of(RowImage::NoBlob, &[], &mut bitmap), [0, 2, 3]);
        assert_eq!(after_of(RowImage::NoBlob, &[1], &mut bitmap), [0, 1, 2, 3]);
    }

    #[test]
    fn a_change_belongs_to_the_last_statement_started_at_or_before_it() {
        let at = |first_change| LoggedStatement { first_change, ..Default::default() };
        let statements = [at(2), at(5)];
        let first = |(statement, end): (Option<&LoggedStatement>, usize)| (statement.map(|s| s.first_change), end);
        assert_eq!(first(statement_at(&statements, 0, 9)), (None, 2));
        assert_eq!(first(statement_at(&statements, 3, 9)), (Some(2), 5));
        assert_eq!(first(statement_at(&statements, 5, 9)), (Some(5), 9));
        assert_eq!(first(statement_at(&[], 4, 9)), (None, 9));
    }

    #[test]
    fn globals_keep_every_setting_and_the_words_round_trip() {
        let globals = RowLoggingGlobals::default();
        assert!(globals.get().is_default());
        for image in [RowImage::Full, RowImage::Minimal, RowImage::NoBlob] {
            for metadata in [RowMetadata::Minimal, RowMetadata::Full] {
                for (rows_query, partial_json) in [(false, false), (true, false), (false, true), (true, true)] {
                    let logging = RowLogging { image, metadata, rows_query, partial_json };
                    globals.set(logging);
                    assert_eq!(globals.get(), logging);
                }
            }
            assert_eq!(RowImage::parse(&image.as_str().to_lowercase()), Some(image));
        }
        assert_eq!(RowMetadata::parse("minimal"), Some(RowMetadata::Minimal));
        assert_eq!(RowImage::parse("PARTIAL"), None);
    }
}
