//! Column types as a Table_map event carries them: one type byte per column
//! plus that type's metadata bytes, exactly as MySQL 8.4 writes them.
//!
//! The types binlogd writes are typed variants; every other type code
//! (BIT, ENUM, SET, MariaDB's compressed
//! columns, ...) survives as [`ColumnType::Raw`] with its metadata, so files
//! from MySQL and MariaDB still decode and re-encode byte for byte.
//! Signedness and character sets are not part of a column's type in the
//! binlog: they travel in the Table_map's optional metadata.

use crate::error::EncodeError;

/// `enum_field_types` codes (MySQL `field_types.h`, MariaDB `mysql_com.h`).
pub mod type_code {
    pub const DECIMAL: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const NEWDATE: u8 = 14;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const TIMESTAMP2: u8 = 17;
    pub const DATETIME2: u8 = 18;
    pub const TIME2: u8 = 19;
    /// MariaDB's `VARCHAR ... COMPRESSED`.
    pub const VARCHAR_COMPRESSED: u8 = 140;
    /// MariaDB's `BLOB ... COMPRESSED`.
    pub const BLOB_COMPRESSED: u8 = 141;
    pub const VECTOR: u8 = 242;
    pub const JSON: u8 = 245;
    pub const NEWDECIMAL: u8 = 246;
    pub const ENUM: u8 = 247;
    pub const SET: u8 = 248;
    pub const TINY_BLOB: u8 = 249;
    pub const MEDIUM_BLOB: u8 = 250;
    pub const LONG_BLOB: u8 = 251;
    pub const BLOB: u8 = 252;
    pub const VAR_STRING: u8 = 253;
    pub const STRING: u8 = 254;
    pub const GEOMETRY: u8 = 255;
}

/// MySQL's limits on DECIMAL(precision, scale).
pub const DECIMAL_PRECISION_MAX: u8 = 65;
pub const DECIMAL_SCALE_MAX: u8 = 30;
/// Fractional-second precision is 0..=6 digits.
pub const FSP_MAX: u8 = 6;
/// CHAR's metadata keeps 10 bits of its byte length (CHAR(255) in
/// utf8mb4 is 1020 bytes).
pub const CHAR_LENGTH_BYTES_MAX: u16 = 0x3ff;
/// BIT(M) takes 1..=64 bits.
pub const BIT_LENGTH_MAX: u8 = 64;

/// One column's type with its metadata.
///
/// | variant | type code | metadata bytes |
/// |---------|-----------|----------------|
/// | `Tiny`, `Short`, `Int24`, `Long`, `LongLong` | 1, 2, 9, 3, 8 | none |
/// | `Float` | 4 | 1: pack length (= 4) |
/// | `Double` | 5 | 1: pack length (= 8) |
/// | `NewDecimal` | 246 | 2: precision, scale |
/// | `String` (CHAR, BINARY) | 254 | 2: real type 254 XOR high length bits, low length byte |
/// | `VarChar` (VARCHAR, VARBINARY) | 15 | 2: max length in bytes, u16 LE |
/// | `Blob` (TINY/MEDIUM/LONG BLOB and TEXT) | 252 | 1: bytes of the length prefix, 1..=4 |
/// | `Date` | 10 | none |
/// | `DateTime2` | 18 | 1: fsp |
/// | `Timestamp2` | 17 | 1: fsp |
/// | `Bit` | 16 | 2: bits % 8, bits / 8 |
/// | `Enum` | 254 | 2: real type 247, pack length (1 or 2) |
/// | `Set` | 254 | 2: real type 248, pack length (1, 2, 3, 4 or 8) |
/// | `Time2` | 19 | 1: fsp |
/// | `Year` | 13 | none |
/// | `Raw` | any other | as the type defines it |
/// | `Json` | 245 | 1: bytes of the length prefix (= 4) |
/// | `Geometry` | 255 | 1: bytes of the length prefix (= 4) |
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ColumnType {
    Tiny,
    Short,
    Int24,
    Long,
    LongLong,
    Float,
    Double,
    NewDecimal {
        precision: u8,
        scale: u8,
    },
    /// CHAR/BINARY. The length is in bytes (characters × the charset's
    /// maximum bytes per character).
    String {
        max_length_bytes: u16,
    },
    VarChar {
        max_length_bytes: u16,
    },
    /// BLOB or TEXT of any size; `length_bytes` is the width of each
    /// value's length prefix (1 TINY, 2 plain, 3 MEDIUM, 4 LONG).
    Blob {
        length_bytes: u8,
    },
    Date,
    DateTime2 {
        fsp: u8,
    },
    Timestamp2 {
        fsp: u8,
    },
    /// BIT(1..=64); values are stored big-endian in `bits.div_ceil(8)` bytes.
    Bit {
        bits: u8,
    },
    /// ENUM: the value is the member's 1-based index (0 for the error
    /// value ''), in `length_bytes` bytes LE: 1 up to 255 members, else 2.
    Enum {
        length_bytes: u8,
    },
    /// SET: the value is a bit mask of members (bit 0 = the first), in
    /// `length_bytes` bytes LE.
    Set {
        length_bytes: u8,
    },
    Time2 {
        fsp: u8,
    },
    Year,
    /// Any other type code, or a typed code with metadata binlogd does not
    /// write (a FLOAT whose pack length is not 4, a CHAR that is really an
    /// ENUM, ...). Values of such columns decode as their stored bytes.
    Raw {
        type_code: u8,
        metadata: Vec<u8>,
    },
    /// JSON: each value is a u32 LE length and a document in MySQL's
    /// binary JSON format ([`crate::value::json::binary`]).
    Json,
    /// GEOMETRY and its subtypes (POINT, ..., GEOMETRYCOLLECTION; the
    /// subtype is in the Table_map's GEOMETRY_TYPE metadata, not here):
    /// each value is a u32 LE length, then the 4-byte SRID and the WKB
    /// ([`crate::value::geometry`]).
    Geometry,
}

/// Bytes of a JSON value's length prefix (`Field_json::pack_length_no_ptr`).
pub const JSON_LENGTH_BYTES: u8 = 4;
/// Bytes of a GEOMETRY value's length prefix (`Field_geom::pack_length_no_ptr`).
pub const GEOMETRY_LENGTH_BYTES: u8 = 4;

/// Bytes of metadata the Table_map stores for `type_code`, or `None` for a
/// code whose metadata length is unknown (the event cannot be split then).
pub fn metadata_length(type_code: u8) -> Option<usize> {
    use type_code::*;
    match type_code {
        DECIMAL | TINY | SHORT | LONG | NULL | TIMESTAMP | LONGLONG | INT24 | DATE | TIME | DATETIME | YEAR | NEWDATE => Some(0),
        FLOAT | DOUBLE | TIMESTAMP2 | DATETIME2 | TIME2 | JSON | TINY_BLOB | MEDIUM_BLOB | LONG_BLOB | BLOB | GEOMETRY | VECTOR
        | BLOB_COMPRESSED => Some(1),
        VARCHAR | BIT | NEWDECIMAL | ENUM | SET | VAR_STRING | STRING | VARCHAR_COMPRESSED => Some(2),
        _ => None,
    }
}

impl ColumnType {
    pub fn type_code(&self) -> u8 {
        use type_code::*;
        match self {
            ColumnType::Tiny => TINY,
            ColumnType::Short => SHORT,
            ColumnType::Int24 => INT24,
            ColumnType::Long => LONG,
            ColumnType::LongLong => LONGLONG,
            ColumnType::Float => FLOAT,
            ColumnType::Double => DOUBLE,
            ColumnType::NewDecimal { .. } => NEWDECIMAL,
            ColumnType::String { .. } => STRING,
            ColumnType::VarChar { .. } => VARCHAR,
            ColumnType::Blob { .. } => BLOB,
            ColumnType::Date => DATE,
            ColumnType::DateTime2 { .. } => DATETIME2,
            ColumnType::Timestamp2 { .. } => TIMESTAMP2,
            ColumnType::Bit { .. } => BIT,
            ColumnType::Enum { .. } | ColumnType::Set { .. } => STRING,
            ColumnType::Time2 { .. } => TIME2,
            ColumnType::Year => YEAR,
            ColumnType::Raw { type_code, .. } => *type_code,
            ColumnType::Json => JSON,
            ColumnType::Geometry => GEOMETRY,
        }
    }

    /// Appends the metadata bytes of this column to the Table_map's block.
    pub fn encode_metadata(&self, out: &mut Vec<u8>) {
        match self {
            ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong | ColumnType::Date => {}
            ColumnType::Float => out.push(4),
            ColumnType::Double => out.push(8),
            ColumnType::NewDecimal { precision, scale } => out.extend_from_slice(&[*precision, *scale]),
            ColumnType::String { max_length_bytes } => {
                // Field_string::do_save_field_metadata: the two high bits
                // of the 10-bit length hide in the real-type byte.
                let high_bits = ((max_length_bytes & 0x300) >> 4) as u8;
                out.extend_from_slice(&[type_code::STRING ^ high_bits, *max_length_bytes as u8]);
            }
            ColumnType::VarChar { max_length_bytes } => out.extend_from_slice(&max_length_bytes.to_le_bytes()),
            ColumnType::Blob { length_bytes } => out.push(*length_bytes),
            ColumnType::DateTime2 { fsp } | ColumnType::Timestamp2 { fsp } => out.push(*fsp),
            ColumnType::Bit { bits } => out.extend_from_slice(&[bits % 8, bits / 8]),
            ColumnType::Enum { length_bytes } => out.extend_from_slice(&[type_code::ENUM, *length_bytes]),
            ColumnType::Set { length_bytes } => out.extend_from_slice(&[type_code::SET, *length_bytes]),
            ColumnType::Time2 { fsp } => out.push(*fsp),
            ColumnType::Year => {}
            ColumnType::Raw { metadata, .. } => out.extend_from_slice(metadata),
            ColumnType::Json => out.push(JSON_LENGTH_BYTES),
            ColumnType::Geometry => out.push(GEOMETRY_LENGTH_BYTES),
        }
    }

    /// The typed column for `type_code` and its metadata (which must be
    /// [`metadata_length`] bytes). Metadata binlogd would not write the
    /// same way keeps the column [`ColumnType::Raw`], so that encoding the
    /// result gives back exactly `metadata`.
    pub fn from_metadata(type_code: u8, metadata: &[u8]) -> ColumnType {
        let typed = match (type_code, metadata) {
            (type_code::TINY, []) => Some(ColumnType::Tiny),
            (type_code::SHORT, []) => Some(ColumnType::Short),
            (type_code::INT24, []) => Some(ColumnType::Int24),
            (type_code::LONG, []) => Some(ColumnType::Long),
            (type_code::LONGLONG, []) => Some(ColumnType::LongLong),
            (type_code::FLOAT, [4]) => Some(ColumnType::Float),
            (type_code::DOUBLE, [8]) => Some(ColumnType::Double),
            (type_code::NEWDECIMAL, &[precision, scale]) => {
                decimal_is_valid(precision, scale).then_some(ColumnType::NewDecimal { precision, scale })
            }
            (type_code::STRING, &[type_code::ENUM, length_bytes]) => {
                enum_length_is_valid(length_bytes).then_some(ColumnType::Enum { length_bytes })
            }
            (type_code::STRING, &[type_code::SET, length_bytes]) => {
                set_length_is_valid(length_bytes).then_some(ColumnType::Set { length_bytes })
            }
            (type_code::BIT, &[partial_bits, bytes]) => {
                let bits = u16::from(bytes) * 8 + u16::from(partial_bits);
                (partial_bits < 8 && (1..=u16::from(BIT_LENGTH_MAX)).contains(&bits)).then_some(ColumnType::Bit { bits: bits as u8 })
            }
            (type_code::STRING, &[real_type_and_high_bits, low_bits]) => {
                let is_char = real_type_and_high_bits != 0 && real_type_and_high_bits | 0x30 == type_code::STRING;
                let high_bits = ((real_type_and_high_bits & 0x30) ^ 0x30) as u16;
                is_char.then_some(ColumnType::String { max_length_bytes: (high_bits << 4) | low_bits as u16 })
            }
            (type_code::VARCHAR, &[low, high]) => Some(ColumnType::VarChar { max_length_bytes: u16::from_le_bytes([low, high]) }),
            (type_code::BLOB, &[length_bytes]) => (1..=4).contains(&length_bytes).then_some(ColumnType::Blob { length_bytes }),
            (type_code::DATE, []) => Some(ColumnType::Date),
            (type_code::DATETIME2, &[fsp]) => (fsp <= FSP_MAX).then_some(ColumnType::DateTime2 { fsp }),
            (type_code::TIMESTAMP2, &[fsp]) => (fsp <= FSP_MAX).then_some(ColumnType::Timestamp2 { fsp }),
            (type_code::TIME2, &[fsp]) => (fsp <= FSP_MAX).then_some(ColumnType::Time2 { fsp }),
            (type_code::YEAR, []) => Some(ColumnType::Year),
            (type_code::JSON, [JSON_LENGTH_BYTES]) => Some(ColumnType::Json),
            (type_code::GEOMETRY, [GEOMETRY_LENGTH_BYTES]) => Some(ColumnType::Geometry),
            _ => None,
        };
        typed.unwrap_or_else(|| ColumnType::Raw { type_code, metadata: metadata.to_vec() })
    }

    /// Checks that the column can be written and reads back as itself.
    pub fn validate(&self) -> Result<(), EncodeError> {
        let reason = match self {
            ColumnType::NewDecimal { precision, scale } if !decimal_is_valid(*precision, *scale) => {
                format!("DECIMAL({precision},{scale}) is outside MySQL's limits (65, 30)")
            }
            ColumnType::String { max_length_bytes } if *max_length_bytes > CHAR_LENGTH_BYTES_MAX => {
                format!("CHAR of {max_length_bytes} bytes exceeds {CHAR_LENGTH_BYTES_MAX}")
            }
            ColumnType::Blob { length_bytes } if !(1..=4).contains(length_bytes) => {
                format!("BLOB length prefix of {length_bytes} bytes (1..=4)")
            }
            ColumnType::DateTime2 { fsp } | ColumnType::Timestamp2 { fsp } | ColumnType::Time2 { fsp } if *fsp > FSP_MAX => {
                format!("fractional-second precision {fsp} exceeds {FSP_MAX}")
            }
            ColumnType::Bit { bits } if !(1..=BIT_LENGTH_MAX).contains(bits) => format!("BIT({bits}) is outside 1..=64"),
            ColumnType::Enum { length_bytes } if !enum_length_is_valid(*length_bytes) => {
                format!("ENUM of {length_bytes} bytes (1 or 2)")
            }
            ColumnType::Set { length_bytes } if !set_length_is_valid(*length_bytes) => {
                format!("SET of {length_bytes} bytes (1, 2, 3, 4 or 8)")
            }
            ColumnType::Raw { type_code, metadata } => {
                if metadata_length(*type_code) != Some(metadata.len()) {
                    format!("type {type_code} with {} metadata bytes", metadata.len())
                } else if ColumnType::from_metadata(*type_code, metadata) != *self {
                    format!("type {type_code} has a typed variant; use it instead of Raw")
                } else {
                    return Ok(());
                }
            }
            _ => return Ok(()),
        };
        Err(EncodeError::invalid("column type", reason))
    }

    /// The type a STRING column really holds: MySQL writes ENUM and SET
    /// columns as STRING with the real type in the first metadata byte.
    pub fn real_type_code(&self) -> u8 {
        match self {
            ColumnType::Enum { .. } => type_code::ENUM,
            ColumnType::Set { .. } => type_code::SET,
            ColumnType::Raw { type_code: type_code::STRING, metadata } if metadata.first() != Some(&0) => {
                metadata.first().map_or(type_code::STRING, |byte| byte | 0x30)
            }
            other => other.type_code(),
        }
    }

    /// Numeric columns, each of which has a bit in the SIGNEDNESS metadata
    /// (MySQL's `is_numeric_type`: YEAR and the pre-5.0 DECIMAL are not).
    pub fn is_numeric(&self) -> bool {
        use type_code::*;
        matches!(self.type_code(), TINY | SHORT | INT24 | LONG | LONGLONG | FLOAT | DOUBLE | NEWDECIMAL)
    }

    /// Character columns (binary strings included), which the
    /// DEFAULT_CHARSET / COLUMN_CHARSET metadata counts.
    pub fn is_character(&self) -> bool {
        use type_code::*;
        matches!(self.real_type_code(), STRING | VAR_STRING | VARCHAR | BLOB)
    }

    /// ENUM and SET columns, which ENUM_AND_SET_*_CHARSET counts.
    pub fn is_enum_or_set(&self) -> bool {
        matches!(self.real_type_code(), type_code::ENUM | type_code::SET)
    }
}

fn enum_length_is_valid(length_bytes: u8) -> bool {
    matches!(length_bytes, 1 | 2)
}

fn set_length_is_valid(length_bytes: u8) -> bool {
    matches!(length_bytes, 1..=4 | 8)
}

fn decimal_is_valid(precision: u8, scale: u8) -> bool {
    (1..=DECIMAL_PRECISION_MAX).contains(&precision) && scale <= DECIMAL_SCALE_MAX && scale <= precision
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_lengths_above_255_keep_their_high_bits_in_the_type_byte() {
        for length in [0u16, 1, 255, 256, 767, 1020, 1023] {
            let column = ColumnType::String { max_length_bytes: length };
            let mut metadata = Vec::new();
            column.encode_metadata(&mut metadata);
            assert_eq!(ColumnType::from_metadata(type_code::STRING, &metadata), column);
        }
        let mut metadata = Vec::new();
        ColumnType::String { max_length_bytes: 1020 }.encode_metadata(&mut metadata);
        assert_eq!(metadata, [0xce, 0xfc]);
    }

    #[test]
    fn enum_stored_as_string_is_typed_and_is_not_a_character_column() {
        let column = ColumnType::from_metadata(type_code::STRING, &[type_code::ENUM, 1]);
        assert_eq!(column, ColumnType::Enum { length_bytes: 1 });
        assert!(column.is_enum_or_set());
        assert!(!column.is_character());
    }

    #[test]
    fn bit_enum_and_set_metadata_is_mysqls() {
        // Field_bit::do_save_field_metadata: bits % 8, then bytes.
        for (column, metadata) in [
            (ColumnType::Bit { bits: 1 }, [1, 0]),
            (ColumnType::Bit { bits: 8 }, [0, 1]),
            (ColumnType::Bit { bits: 13 }, [5, 1]),
            (ColumnType::Bit { bits: 64 }, [0, 8]),
            (ColumnType::Enum { length_bytes: 2 }, [247, 2]),
            (ColumnType::Set { length_bytes: 8 }, [248, 8]),
        ] {
            let mut encoded = Vec::new();
            column.encode_metadata(&mut encoded);
            assert_eq!(encoded, metadata, "{column:?}");
            assert_eq!(ColumnType::from_metadata(column.type_code(), &metadata), column);
            assert!(column.validate().is_ok());
        }
        assert!(matches!(ColumnType::from_metadata(type_code::BIT, &[0, 9]), ColumnType::Raw { .. }));
        assert!(matches!(ColumnType::from_metadata(type_code::STRING, &[type_code::SET, 5]), ColumnType::Raw { .. }));
        assert!(ColumnType::Bit { bits: 0 }.validate().is_err());
        assert!(ColumnType::Set { length_bytes: 8 }.is_enum_or_set());
        assert!(!ColumnType::Bit { bits: 3 }.is_numeric());
    }

    #[test]
    fn unusual_metadata_falls_back_to_raw() {
        assert!(matches!(ColumnType::from_metadata(type_code::FLOAT, &[8]), ColumnType::Raw { .. }));
        assert!(matches!(ColumnType::from_metadata(type_code::DATETIME2, &[7]), ColumnType::Raw { .. }));
        assert!(matches!(ColumnType::from_metadata(type_code::NEWDECIMAL, &[10, 11]), ColumnType::Raw { .. }));
        assert!(ColumnType::Raw { type_code: type_code::TINY, metadata: vec![] }.validate().is_err());
        assert!(ColumnType::Raw { type_code: type_code::YEAR, metadata: vec![] }.validate().is_err());
        assert!(matches!(ColumnType::from_metadata(type_code::TIME2, &[7]), ColumnType::Raw { .. }));
        assert_eq!(ColumnType::from_metadata(type_code::TIME2, &[3]), ColumnType::Time2 { fsp: 3 });
    }

    #[test]
    fn json_is_type_245_with_a_four_byte_length_prefix() {
        let mut metadata = Vec::new();
        ColumnType::Json.encode_metadata(&mut metadata);
        assert_eq!((ColumnType::Json.type_code(), metadata.as_slice()), (245, &[4][..]));
        assert_eq!(ColumnType::from_metadata(type_code::JSON, &[4]), ColumnType::Json);
        assert!(matches!(ColumnType::from_metadata(type_code::JSON, &[2]), ColumnType::Raw { .. }));
        assert!(!ColumnType::Json.is_numeric() && !ColumnType::Json.is_character());
    }

    #[test]
    fn geometry_is_type_255_with_a_four_byte_length_prefix() {
        let mut metadata = Vec::new();
        ColumnType::Geometry.encode_metadata(&mut metadata);
        assert_eq!((ColumnType::Geometry.type_code(), metadata.as_slice()), (255, &[4][..]));
        assert_eq!(ColumnType::from_metadata(type_code::GEOMETRY, &[4]), ColumnType::Geometry);
        assert!(matches!(ColumnType::from_metadata(type_code::GEOMETRY, &[2]), ColumnType::Raw { .. }));
        assert!(!ColumnType::Geometry.is_numeric() && !ColumnType::Geometry.is_character());
    }
}
