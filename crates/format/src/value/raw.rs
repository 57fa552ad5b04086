//! Lengths of values of the column types binlogd does not type
//! ([`ColumnType::Raw`](crate::column_type::ColumnType::Raw)), so that rows
//! of MySQL and MariaDB tables with TIME2, YEAR, BIT, ENUM, SET, JSON or
//! GEOMETRY columns still decode (those values stay as their bytes).
//! The rules are those of MySQL's `calc_field_size`.

use super::decimal::decimal_binary_length;
use super::temporal::fraction_length;
use crate::column_type::{type_code, FSP_MAX};
use crate::error::DecodeError;

/// Bytes the value at the start of `rest` occupies, length prefix
/// included, for a column of `type_code` with `metadata`.
pub fn value_length(type_code: u8, metadata: &[u8], rest: &[u8]) -> Result<usize, DecodeError> {
    use type_code::*;
    let meta = |index: usize| metadata.get(index).copied().unwrap_or(0);
    let unknown =
        || DecodeError::invalid("raw column value", format!("cannot size a value of type {type_code} with metadata {metadata:02x?}"));
    let prefixed = |prefix_length: usize| -> Result<usize, DecodeError> {
        let prefix = rest.get(..prefix_length).ok_or(DecodeError::Truncated {
            what: "raw value length",
            needed: prefix_length,
            available: rest.len(),
        })?;
        let length = prefix.iter().rev().fold(0usize, |v, &b| (v << 8) | b as usize);
        Ok(prefix_length + length)
    };
    let string_prefix = |max_length: u16| if max_length < 256 { 1 } else { 2 };
    let temporal = |base: usize| {
        if meta(0) > FSP_MAX {
            Err(unknown())
        } else {
            Ok(base + fraction_length(meta(0)))
        }
    };
    match type_code {
        NULL => Ok(0),
        TINY | YEAR => Ok(1),
        SHORT => Ok(2),
        INT24 | DATE | NEWDATE | TIME => Ok(3),
        LONG | TIMESTAMP => Ok(4),
        LONGLONG | DATETIME => Ok(8),
        // The metadata of FLOAT and DOUBLE is their pack length.
        FLOAT | DOUBLE => Ok(meta(0) as usize),
        TIMESTAMP2 => temporal(4),
        DATETIME2 => temporal(5),
        TIME2 => temporal(3),
        NEWDECIMAL if meta(0) >= 1 && meta(1) <= meta(0) => Ok(decimal_binary_length(meta(0), meta(1))),
        // Metadata: bits in the last partial byte, then whole bytes.
        BIT => Ok(meta(1) as usize + usize::from(meta(0) > 0)),
        ENUM | SET => Ok(meta(1) as usize),
        VARCHAR | VAR_STRING | VARCHAR_COMPRESSED => prefixed(string_prefix(u16::from_le_bytes([meta(0), meta(1)]))),
        STRING => {
            let first = meta(0);
            if first == 0 {
                return prefixed(string_prefix(u16::from_le_bytes([meta(0), meta(1)])));
            }
            match first | 0x30 {
                ENUM | SET => Ok(meta(1) as usize),
                STRING => {
                    let max_length = (((first & 0x30) ^ 0x30) as u16) << 4 | meta(1) as u16;
                    prefixed(string_prefix(max_length))
                }
                _ => Err(unknown()),
            }
        }
        BLOB | TINY_BLOB | MEDIUM_BLOB | LONG_BLOB | GEOMETRY | JSON | VECTOR | BLOB_COMPRESSED if (1..=4).contains(&meta(0)) => {
            prefixed(meta(0) as usize)
        }
        _ => Err(unknown()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_common_untyped_columns() {
        assert_eq!(value_length(type_code::YEAR, &[], &[124]).unwrap(), 1);
        assert_eq!(value_length(type_code::TIME2, &[3], &[0; 5]).unwrap(), 5);
        assert_eq!(value_length(type_code::BIT, &[3, 1], &[0; 2]).unwrap(), 2);
        assert_eq!(value_length(type_code::STRING, &[type_code::ENUM, 2], &[0; 2]).unwrap(), 2);
        assert_eq!(value_length(type_code::JSON, &[4], &[2, 0, 0, 0, 0x7b, 0x7d]).unwrap(), 6);
        assert!(value_length(type_code::DECIMAL, &[], &[0; 8]).is_err());
        assert!(value_length(type_code::JSON, &[4], &[2, 0]).is_err());
    }
}
