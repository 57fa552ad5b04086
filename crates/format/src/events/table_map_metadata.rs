//! The optional metadata fields that follow a Table_map's null bitmap
//! (MySQL 8.0.1+, `binlog_row_metadata`). Each field is a TLV: type u8,
//! length (length-encoded integer), value.
//!
//! | type | name | value |
//! |------|------|-------|
//! | 1 | SIGNEDNESS | one bit per numeric column, most significant bit first; 1 = UNSIGNED |
//! | 2 | DEFAULT_CHARSET | default collation, then (index among character columns, collation) for each exception; all length-encoded |
//! | 3 | COLUMN_CHARSET | the collation of each character column, length-encoded |
//! | 4 | COLUMN_NAME | each column's name: length-encoded length + bytes |
//! | 5, 6 | SET_STR_VALUE, ENUM_STR_VALUE | kept raw |
//! | 7 | GEOMETRY_TYPE | kept raw |
//! | 8 | SIMPLE_PRIMARY_KEY | column indexes, length-encoded |
//! | 9 | PRIMARY_KEY_WITH_PREFIX | (column index, prefix length) pairs, length-encoded |
//! | 10, 11 | ENUM_AND_SET_DEFAULT_CHARSET, ENUM_AND_SET_COLUMN_CHARSET | kept raw |
//! | 12, 13 | COLUMN_VISIBILITY, VECTOR_DIMENSIONALITY | kept raw |
//!
//! A field whose value would not re-encode to the same bytes (a value
//! that is not in its shortest form, padding bits set, a collation above
//! 65535) is kept raw too, so a Table_map always re-encodes byte for byte.

use crate::bytes::{ByteReader, ByteWriter};
use crate::column_type::ColumnType;
use crate::error::DecodeError;

/// Optional metadata field types (`Optional_metadata_field_type`).
pub mod field_type {
    pub const SIGNEDNESS: u8 = 1;
    pub const DEFAULT_CHARSET: u8 = 2;
    pub const COLUMN_CHARSET: u8 = 3;
    pub const COLUMN_NAME: u8 = 4;
    pub const SET_STR_VALUE: u8 = 5;
    pub const ENUM_STR_VALUE: u8 = 6;
    pub const GEOMETRY_TYPE: u8 = 7;
    pub const SIMPLE_PRIMARY_KEY: u8 = 8;
    pub const PRIMARY_KEY_WITH_PREFIX: u8 = 9;
    pub const ENUM_AND_SET_DEFAULT_CHARSET: u8 = 10;
    pub const ENUM_AND_SET_COLUMN_CHARSET: u8 = 11;
    pub const COLUMN_VISIBILITY: u8 = 12;
    pub const VECTOR_DIMENSIONALITY: u8 = 13;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionalMetadata {
    /// One flag per numeric column ([`ColumnType::is_numeric`]), in
    /// column order: `true` = UNSIGNED.
    Signedness(Vec<bool>),
    /// The most used collation, plus the character columns that differ:
    /// (index counted among character columns only, collation).
    DefaultCharset {
        default_collation: u16,
        exceptions: Vec<(u64, u16)>,
    },
    /// The collation of every character column, in column order.
    ColumnCharset(Vec<u16>),
    ColumnName(Vec<Vec<u8>>),
    /// Primary key columns (indexes into the table's columns).
    SimplePrimaryKey(Vec<u64>),
    /// Primary key parts as (column index, prefix length; 0 = whole column).
    PrimaryKeyWithPrefix(Vec<(u64, u64)>),
    /// Any other field, or one that does not re-encode to its bytes.
    Raw {
        field_type: u8,
        value: Vec<u8>,
    },
}

impl OptionalMetadata {
    pub fn field_type(&self) -> u8 {
        use field_type::*;
        match self {
            OptionalMetadata::Signedness(_) => SIGNEDNESS,
            OptionalMetadata::DefaultCharset { .. } => DEFAULT_CHARSET,
            OptionalMetadata::ColumnCharset(_) => COLUMN_CHARSET,
            OptionalMetadata::ColumnName(_) => COLUMN_NAME,
            OptionalMetadata::SimplePrimaryKey(_) => SIMPLE_PRIMARY_KEY,
            OptionalMetadata::PrimaryKeyWithPrefix(_) => PRIMARY_KEY_WITH_PREFIX,
            OptionalMetadata::Raw { field_type, .. } => *field_type,
        }
    }

    /// The value bytes (without type and length).
    pub fn encode_value(&self, out: &mut Vec<u8>) {
        match self {
            OptionalMetadata::Signedness(flags) => {
                for chunk in flags.chunks(8) {
                    let byte = chunk.iter().enumerate().fold(0u8, |b, (i, &unsigned)| b | (unsigned as u8) << (7 - i));
                    out.put_u8(byte);
                }
            }
            OptionalMetadata::DefaultCharset { default_collation, exceptions } => {
                out.put_packed_u64(*default_collation as u64);
                for &(index, collation) in exceptions {
                    out.put_packed_u64(index);
                    out.put_packed_u64(collation as u64);
                }
            }
            OptionalMetadata::ColumnCharset(collations) => {
                collations.iter().for_each(|&c| out.put_packed_u64(c as u64));
            }
            OptionalMetadata::ColumnName(names) => {
                for name in names {
                    out.put_packed_u64(name.len() as u64);
                    out.put_slice(name);
                }
            }
            OptionalMetadata::SimplePrimaryKey(columns) => columns.iter().for_each(|&c| out.put_packed_u64(c)),
            OptionalMetadata::PrimaryKeyWithPrefix(parts) => {
                for &(column, prefix) in parts {
                    out.put_packed_u64(column);
                    out.put_packed_u64(prefix);
                }
            }
            OptionalMetadata::Raw { value, .. } => out.put_slice(value),
        }
    }

    /// The whole TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut value = Vec::new();
        self.encode_value(&mut value);
        out.put_u8(self.field_type());
        out.put_packed_u64(value.len() as u64);
        out.put_slice(&value);
    }

    /// Reads one field's value; `columns` are the table's column types.
    pub fn decode(field_type: u8, value: &[u8], columns: &[ColumnType]) -> OptionalMetadata {
        let typed = parse_typed(field_type, value, columns).ok().flatten();
        match typed {
            Some(field)
                if {
                    let mut again = Vec::new();
                    field.encode_value(&mut again);
                    again == value
                } =>
            {
                field
            }
            _ => OptionalMetadata::Raw { field_type, value: value.to_vec() },
        }
    }
}

/// Parses the fields binlogd types; `Ok(None)` for the others.
fn parse_typed(field_type: u8, value: &[u8], columns: &[ColumnType]) -> Result<Option<OptionalMetadata>, DecodeError> {
    use field_type::*;
    let mut reader = ByteReader::new(value);
    let collation = |reader: &mut ByteReader<'_>| -> Result<u16, DecodeError> {
        let id = reader.packed_u64("collation")?;
        u16::try_from(id).map_err(|_| DecodeError::invalid("collation", format!("{id} is above 65535")))
    };
    let field = match field_type {
        SIGNEDNESS => {
            let numeric = columns.iter().filter(|c| c.is_numeric()).count();
            let bytes = reader.take(numeric.div_ceil(8), "SIGNEDNESS")?;
            let flags = (0..numeric).map(|i| bytes[i / 8] & (0x80 >> (i % 8)) != 0).collect();
            OptionalMetadata::Signedness(flags)
        }
        DEFAULT_CHARSET => {
            let default_collation = collation(&mut reader)?;
            let mut exceptions = Vec::new();
            while !reader.is_empty() {
                let index = reader.packed_u64("DEFAULT_CHARSET column index")?;
                exceptions.push((index, collation(&mut reader)?));
            }
            OptionalMetadata::DefaultCharset { default_collation, exceptions }
        }
        COLUMN_CHARSET => {
            let mut collations = Vec::new();
            while !reader.is_empty() {
                collations.push(collation(&mut reader)?);
            }
            OptionalMetadata::ColumnCharset(collations)
        }
        COLUMN_NAME => {
            let mut names = Vec::new();
            while !reader.is_empty() {
                let length = reader.packed_count(1, "COLUMN_NAME length")?;
                names.push(reader.take(length, "COLUMN_NAME")?.to_vec());
            }
            OptionalMetadata::ColumnName(names)
        }
        SIMPLE_PRIMARY_KEY => {
            let mut key = Vec::new();
            while !reader.is_empty() {
                key.push(reader.packed_u64("SIMPLE_PRIMARY_KEY")?);
            }
            OptionalMetadata::SimplePrimaryKey(key)
        }
        PRIMARY_KEY_WITH_PREFIX => {
            let mut parts = Vec::new();
            while !reader.is_empty() {
                let column = reader.packed_u64("PRIMARY_KEY_WITH_PREFIX column")?;
                parts.push((column, reader.packed_u64("PRIMARY_KEY_WITH_PREFIX prefix")?));
            }
            OptionalMetadata::PrimaryKeyWithPrefix(parts)
        }
        _ => return Ok(None),
    };
    reader.finish("optional metadata field")?;
    Ok(Some(field))
}

/// The charset field MySQL would write for character columns with
/// `collations` (`Table_map_log_event::init_charset_field`): the most used
/// collation (the lowest id on a tie) as default plus exceptions, unless
/// listing every column is shorter (counting one byte per number).
pub fn charset_field(collations: &[u16]) -> Option<OptionalMetadata> {
    if collations.is_empty() {
        return None;
    }
    let mut counts = std::collections::BTreeMap::<u16, usize>::new();
    collations.iter().for_each(|&c| *counts.entry(c).or_default() += 1);
    let (mut most_used, mut most_used_count) = (0u16, 0usize);
    for (&collation, &count) in &counts {
        if count > most_used_count {
            (most_used, most_used_count) = (collation, count);
        }
    }
    let column_charset_size = collations.len();
    let default_charset_size = 1 + (collations.len() - most_used_count) * 2;
    Some(if column_charset_size < default_charset_size {
        OptionalMetadata::ColumnCharset(collations.to_vec())
    } else {
        let exceptions = collations.iter().enumerate().filter(|&(_, &c)| c != most_used).map(|(index, &c)| (index as u64, c)).collect();
        OptionalMetadata::DefaultCharset { default_collation: most_used, exceptions }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signedness_is_most_significant_bit_first() {
        let columns = [ColumnType::Tiny, ColumnType::Date, ColumnType::LongLong, ColumnType::Double];
        let field = OptionalMetadata::decode(field_type::SIGNEDNESS, &[0b0100_0000], &columns);
        assert_eq!(field, OptionalMetadata::Signedness(vec![false, true, false]));
        let mut value = Vec::new();
        field.encode_value(&mut value);
        assert_eq!(value, [0b0100_0000]);
        // Padding bits set: kept raw so the bytes survive.
        let odd = OptionalMetadata::decode(field_type::SIGNEDNESS, &[0b0100_0001], &columns);
        assert!(matches!(odd, OptionalMetadata::Raw { .. }));
    }

    #[test]
    fn charset_field_picks_the_shorter_form() {
        assert_eq!(
            charset_field(&[45, 45, 63, 45]),
            Some(OptionalMetadata::DefaultCharset { default_collation: 45, exceptions: vec![(2, 63)] })
        );
        assert_eq!(charset_field(&[45, 63]), Some(OptionalMetadata::ColumnCharset(vec![45, 63])));
        assert_eq!(charset_field(&[8]), Some(OptionalMetadata::DefaultCharset { default_collation: 8, exceptions: vec![] }));
        assert_eq!(charset_field(&[]), None);
    }

    #[test]
    fn non_minimal_numbers_keep_the_field_raw() {
        // 45 written as 0xfc 0x2d 0x00.
        let field = OptionalMetadata::decode(field_type::COLUMN_CHARSET, &[0xfc, 0x2d, 0x00], &[]);
        assert_eq!(field, OptionalMetadata::Raw { field_type: 3, value: vec![0xfc, 0x2d, 0x00] });
    }
}
