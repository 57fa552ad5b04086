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
//! (an INT 5 and an UNSIGNED 5, -0.0 and 0.0) hash alike. XXH3 is a
//! specified function without a per-process seed: the same key hashes
//! alike in every process and every release. A collision only makes a
//! transaction wait for one it did not need to; it never lets two that
//! conflict run together.

use binlog_format::Value;
use engine::{RowChange, TableDef, TableId};

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
            let hash = row_hash(&mut self.key_buffer, def.id, PRIMARY_KEY_INDEX_ID, def.primary_key.iter().map(|&c| &image[c]));
            self.hashes.push(hash);
            for index in def.indexes.iter().filter(|index| index.unique) {
                // NULLs never collide in a unique index.
                if index.columns.iter().all(|&c| !matches!(image[c], Value::Null)) {
                    let hash = row_hash(&mut self.key_buffer, def.id, index.id as u64, index.columns.iter().map(|&c| &image[c]));
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

/// The hash of one key (the table in the module documentation). `buffer`
/// is scratch space for its input.
fn row_hash<'v>(buffer: &mut Vec<u8>, table: TableId, index: u64, values: impl Iterator<Item = &'v Value>) -> u64 {
    buffer.clear();
    buffer.extend_from_slice(&table.to_le_bytes());
    buffer.extend_from_slice(&index.to_le_bytes());
    for value in values {
        engine::key::encode_value(value, buffer);
    }
    xxhash_rust::xxh3::xxh3_64(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(table: TableId, index: u64, values: &[Value]) -> u64 {
        row_hash(&mut Vec::new(), table, index, values.iter())
    }

    #[test]
    fn keys_the_engine_holds_equal_hash_alike() {
        assert_eq!(hash(7, PRIMARY_KEY_INDEX_ID, &[Value::Int(5)]), hash(7, PRIMARY_KEY_INDEX_ID, &[Value::UInt(5)]));
        assert_eq!(hash(7, 2, &[Value::Double(-0.0)]), hash(7, 2, &[Value::Double(0.0)]));
        let mut reused = Vec::new();
        let long = [Value::Bytes(vec![b'x'; 300]), Value::Int(1)];
        row_hash(&mut reused, 7, 2, long.iter());
        assert_eq!(row_hash(&mut reused, 7, 2, [Value::Int(1)].iter()), hash(7, 2, &[Value::Int(1)]), "scratch left over");
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
