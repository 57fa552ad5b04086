//! A transaction's write set for WRITESET dependency tracking: a hash of
//! (table id, primary key) for every row image, and of (table id, index
//! id, values) for every unique secondary key without NULLs, so the
//! tracker never lets two transactions that touch one row or one unique
//! value run in parallel on a replica. A table without a primary key
//! leaves the write set empty, which the tracker reads as "depends on
//! everything" (MySQL does the same).
//!
//! A hash is XXH3 (64 bits, seed 0) of
//!
//! | bytes | field |
//! |-------|-------|
//! | 8 | table id, little endian |
//! | 8 | index id, little endian (`u64::MAX` for the primary key) |
//! | n | the key's values in the engine's memcomparable key encoding |
//!
//! The key encoding is the engine's, so keys the engine holds equal
//! (an INT 5 and an UNSIGNED 5, -0.0 and 0.0, 'a' and 'A' under a
//! case-insensitive collation) hash alike. XXH3 is a
//! specified function without a per-process seed: the same key hashes
//! alike in every process and every release. A collision only makes a
//! transaction wait for one it did not need to; it never lets two that
//! conflict run together.

use binlog_format::Value;
use engine::{RowChange, TableDef};

/// The index id a primary key's hash carries (no secondary index has it).
const PRIMARY_KEY_INDEX_ID: u64 = u64::MAX;

/// Row hashes of the changes added so far.
#[derive(Default)]
pub(crate) struct Writeset {
    hashes: Vec<u64>,
    /// A change to a table without a primary key: rows cannot be named.
    unknown: bool,
    /// Each hash's input is built here, one after the other.
    key_buffer: Vec<u8>,
}

impl Writeset {
    pub(crate) fn add_change(&mut self, def: &TableDef, change: &RowChange) {
        if !def.has_primary_key() {
            self.unknown = true;
            return;
        }
        for image in [&change.before, &change.after].into_iter().flatten() {
            let hash = row_hash(&mut self.key_buffer, def, PRIMARY_KEY_INDEX_ID, &def.primary_key, image);
            self.hashes.push(hash);
            for index in def.indexes.iter().filter(|index| index.unique) {
                // NULLs never collide in a unique index.
                if index.columns.iter().all(|&c| !matches!(image[c], Value::Null)) {
                    let hash = row_hash(&mut self.key_buffer, def, index.id as u64, &index.columns, image);
                    self.hashes.push(hash);
                }
            }
        }
    }

    /// The distinct hashes, sorted; empty when a row could not be named.
    pub(crate) fn finish(mut self) -> Vec<u64> {
        if self.unknown {
            return Vec::new();
        }
        self.hashes.sort_unstable();
        self.hashes.dedup();
        self.hashes
    }
}

/// The hash of the key of `def`'s `columns` in `row` (the table in the
/// module documentation). `buffer` is scratch space for its input.
fn row_hash(buffer: &mut Vec<u8>, def: &TableDef, index: u64, columns: &[usize], row: &[Value]) -> u64 {
    buffer.clear();
    buffer.extend_from_slice(&def.id.to_le_bytes());
    buffer.extend_from_slice(&index.to_le_bytes());
    for &column in columns {
        engine::key::encode_column_value(def, column, &row[column], buffer);
    }
    xxhash_rust::xxh3::xxh3_64(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog_format::ColumnType;
    use engine::{TableId, TableSpec};

    /// A table whose columns hold `values` (text in `collation`), keyed
    /// by all of them.
    fn table(id: TableId, values: &[Value], collation: u16) -> (TableDef, Vec<usize>) {
        let columns = values
            .iter()
            .enumerate()
            .map(|(i, value)| match value {
                Value::Bytes(_) => engine::ColumnDef {
                    collation,
                    ..engine::ColumnDef::new(format!("c{i}"), ColumnType::VarChar { max_length_bytes: 400 })
                },
                _ => engine::ColumnDef::new(format!("c{i}"), ColumnType::LongLong),
            })
            .collect();
        let spec = TableSpec { database: "d".into(), name: "t".into(), columns, ..Default::default() };
        let engine = engine::Engine::new(engine::EngineConfig::default());
        engine.create_database("d").unwrap();
        let mut def = (*engine.create_table(&spec).unwrap()).clone();
        def.id = id;
        (def, (0..values.len()).collect())
    }

    fn hash_in(table: TableId, index: u64, values: &[Value], collation: u16) -> u64 {
        let (def, columns) = self::table(table, values, collation);
        row_hash(&mut Vec::new(), &def, index, &columns, values)
    }

    fn hash(table: TableId, index: u64, values: &[Value]) -> u64 {
        hash_in(table, index, values, engine::collation::BINARY_COLLATION_ID)
    }

    #[test]
    fn text_equal_under_its_collation_hashes_alike() {
        let (upper, lower) = ([Value::Bytes(b"ABC".to_vec())], [Value::Bytes(b"abc".to_vec())]);
        assert_eq!(hash_in(7, 1, &upper, 45), hash_in(7, 1, &lower, 45));
        assert_ne!(hash_in(7, 1, &upper, 46), hash_in(7, 1, &lower, 46));
    }

    #[test]
    fn keys_the_engine_holds_equal_hash_alike() {
        assert_eq!(hash(7, PRIMARY_KEY_INDEX_ID, &[Value::Int(5)]), hash(7, PRIMARY_KEY_INDEX_ID, &[Value::UInt(5)]));
        assert_eq!(hash(7, 2, &[Value::Double(-0.0)]), hash(7, 2, &[Value::Double(0.0)]));
        let mut reused = Vec::new();
        let long = [Value::Bytes(vec![b'x'; 300]), Value::Int(1)];
        let (def, columns) = table(7, &long, 63);
        row_hash(&mut reused, &def, 2, &columns, &long);
        let (def, columns) = table(7, &[Value::Int(1)], 63);
        assert_eq!(row_hash(&mut reused, &def, 2, &columns, &[Value::Int(1)]), hash(7, 2, &[Value::Int(1)]), "scratch left over");
    }

    #[test]
    fn table_index_and_values_each_tell_keys_apart() {
        let key = [Value::Int(1), Value::Bytes(b"a".to_vec())];
        let base = hash(7, PRIMARY_KEY_INDEX_ID, &key);
        assert_ne!(base, hash(8, PRIMARY_KEY_INDEX_ID, &key));
        assert_ne!(base, hash(7, 1, &key));
        assert_ne!(base, hash(7, PRIMARY_KEY_INDEX_ID, &[Value::Int(1), Value::Bytes(b"b".to_vec())]));
        assert_ne!(base, hash(7, PRIMARY_KEY_INDEX_ID, &[Value::Int(2), Value::Bytes(b"a".to_vec())]));
    }

    /// The hash is a specified function of its input, with no per-process
    /// seed: these values hold in every process and every release.
    #[test]
    fn hashes_are_the_same_in_every_process() {
        assert_eq!(hash(1, PRIMARY_KEY_INDEX_ID, &[Value::Int(42)]), GOLDEN_INT_42);
        assert_eq!(hash(3, 4, &[Value::Bytes(b"one@x".to_vec())]), GOLDEN_BYTES);
    }

    const GOLDEN_INT_42: u64 = 11544188970867816769;
    const GOLDEN_BYTES: u64 = 9228199595074637282;
}
