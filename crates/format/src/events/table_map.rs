//! Table_map event (type 19): maps a table id to a table definition. Every
//! group of row events of a statement is preceded by one per table.

use crate::bytes::{ByteReader, ByteWriter};
use crate::column_type::{metadata_length, ColumnType};
use crate::error::{DecodeError, EncodeError};
use crate::events::enum_set_metadata::enum_and_set_fields;
use crate::events::table_map_metadata::{charset_field, OptionalMetadata};

/// Table ids are 6 bytes in a Table_map and a rows event (post-header
/// lengths 8 and 10, every server since MySQL 5.1.4).
pub const TABLE_ID_MAX: u64 = (1 << 48) - 1;
/// `TM_BIT_LEN_EXACT_F`: MySQL sets it on every Table_map it writes.
pub const TM_BIT_LEN_EXACT_F: u16 = 1;
/// A name's length is one byte.
pub const NAME_LENGTH_MAX: usize = 255;

/// One column as the Table_map carries it outside the optional metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub column_type: ColumnType,
    pub nullable: bool,
}

/// One column as a table definition knows it: what the SQL layer hands to
/// [`TableMap::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    pub name: String,
    pub column_type: ColumnType,
    pub nullable: bool,
    /// UNSIGNED; meaningful for numeric columns only.
    pub unsigned: bool,
    /// Collation id of a character column (45 utf8mb4_general_ci, 255
    /// utf8mb4_0900_ai_ci, 63 binary); ignored for other columns.
    pub collation: u16,
}

/// | bytes | field |
/// |-------|-------|
/// | 6 | table_id |
/// | 2 | flags (`TM_BIT_LEN_EXACT_F`) |
/// | 1 | database name length |
/// | n + 1 | database name, NUL-terminated |
/// | 1 | table name length |
/// | n + 1 | table name, NUL-terminated |
/// | 1-9 | column count (length-encoded) |
/// | count | column type codes |
/// | 1-9 | metadata length (length-encoded) |
/// | m | per-column metadata ([`ColumnType`]) |
/// | (count + 7) / 8 | nullable bitmap, column 0 in the low bit of byte 0 |
/// | rest | optional metadata TLVs ([`OptionalMetadata`]) |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMap {
    pub table_id: u64,
    pub flags: u16,
    pub database: Vec<u8>,
    pub table: Vec<u8>,
    pub columns: Vec<Column>,
    /// In the order they appear in the event.
    pub optional_metadata: Vec<OptionalMetadata>,
}

impl TableMap {
    /// The Table_map MySQL 8.4 writes with `binlog_row_metadata=FULL` for
    /// a table: SIGNEDNESS, DEFAULT_CHARSET or COLUMN_CHARSET, COLUMN_NAME
    /// and SIMPLE_PRIMARY_KEY (each only when it has something to say).
    pub fn new(table_id: u64, database: &str, table: &str, columns: &[ColumnSpec], primary_key: &[usize]) -> Result<TableMap, EncodeError> {
        TableMap::with_members(table_id, database, table, columns, primary_key, &[])
    }

    /// [`TableMap::new`] for a table with ENUM or SET columns, whose
    /// members (one list per column, empty for other columns) MySQL writes
    /// in the ENUM_AND_SET charset, SET_STR_VALUE and ENUM_STR_VALUE fields
    /// between COLUMN_NAME and the primary key.
    pub fn with_members(
        table_id: u64,
        database: &str,
        table: &str,
        columns: &[ColumnSpec],
        primary_key: &[usize],
        members: &[Vec<Vec<u8>>],
    ) -> Result<TableMap, EncodeError> {
        if table_id > TABLE_ID_MAX {
            return Err(EncodeError::invalid("table id", format!("{table_id} does not fit 6 bytes")));
        }
        for name in [database, table] {
            if name.len() > NAME_LENGTH_MAX {
                return Err(EncodeError::invalid("name", format!("{name:?} is longer than {NAME_LENGTH_MAX} bytes")));
            }
        }
        for (index, spec) in columns.iter().enumerate() {
            spec.column_type.validate().map_err(|e| EncodeError::Value { column: index, reason: e.to_string() })?;
        }
        if let Some(&bad) = primary_key.iter().find(|&&c| c >= columns.len()) {
            return Err(EncodeError::invalid("primary key", format!("column {bad} of {}", columns.len())));
        }
        let mut optional_metadata = Vec::new();
        let numeric: Vec<bool> = columns.iter().filter(|c| c.column_type.is_numeric()).map(|c| c.unsigned).collect();
        if !numeric.is_empty() {
            optional_metadata.push(OptionalMetadata::Signedness(numeric));
        }
        let collations: Vec<u16> = columns.iter().filter(|c| c.column_type.is_character()).map(|c| c.collation).collect();
        optional_metadata.extend(charset_field(&collations));
        optional_metadata.push(OptionalMetadata::ColumnName(columns.iter().map(|c| c.name.as_bytes().to_vec()).collect()));
        optional_metadata.extend(enum_and_set_fields(columns, members));
        if !primary_key.is_empty() {
            optional_metadata.push(OptionalMetadata::SimplePrimaryKey(primary_key.iter().map(|&c| c as u64).collect()));
        }
        Ok(TableMap {
            table_id,
            flags: TM_BIT_LEN_EXACT_F,
            database: database.as_bytes().to_vec(),
            table: table.as_bytes().to_vec(),
            columns: columns.iter().map(|c| Column { column_type: c.column_type.clone(), nullable: c.nullable }).collect(),
            optional_metadata,
        })
    }

    /// This map with the GEOMETRY_TYPE field MySQL writes for a table with
    /// geometry columns (`init_geometry_type_field`): one length-encoded
    /// [`crate::value::geometry::Kind`] code per geometry column, after the
    /// charset fields and before COLUMN_NAME. `kinds` holds one code per
    /// column, `None` for the others; nothing is added without a geometry
    /// column.
    pub fn with_geometry_types(mut self, kinds: &[Option<u8>]) -> TableMap {
        use crate::events::table_map_metadata::field_type::{COLUMN_CHARSET, DEFAULT_CHARSET, GEOMETRY_TYPE, SIGNEDNESS};
        let mut value = Vec::new();
        kinds.iter().flatten().for_each(|&kind| value.put_packed_u64(u64::from(kind)));
        if value.is_empty() {
            return self;
        }
        let at = self
            .optional_metadata
            .iter()
            .position(|field| !matches!(field.field_type(), SIGNEDNESS | DEFAULT_CHARSET | COLUMN_CHARSET))
            .unwrap_or(self.optional_metadata.len());
        self.optional_metadata.insert(at, OptionalMetadata::Raw { field_type: GEOMETRY_TYPE, value });
        self
    }

    /// This map with the COLUMN_VISIBILITY field MySQL 8.0.23+ writes last
    /// under `binlog_row_metadata=FULL` (`init_column_visibility_field`):
    /// one bit per column, most significant bit first, 1 = visible (not
    /// INVISIBLE).
    pub fn with_column_visibility(mut self, visible: &[bool]) -> TableMap {
        use crate::events::table_map_metadata::field_type::COLUMN_VISIBILITY;
        let mut value = vec![0u8; visible.len().div_ceil(8)];
        for (index, &shown) in visible.iter().enumerate() {
            value[index / 8] |= u8::from(shown) << (7 - index % 8);
        }
        self.optional_metadata.push(OptionalMetadata::Raw { field_type: COLUMN_VISIBILITY, value });
        self
    }

    /// This map as MySQL writes it with `binlog_row_metadata=MINIMAL`:
    /// only the optional metadata a reader needs to decode the rows
    /// (SIGNEDNESS, DEFAULT_CHARSET or COLUMN_CHARSET, GEOMETRY_TYPE:
    /// MySQL's `init_metadata_fields` before its FULL-only part).
    pub fn with_minimal_metadata(&self) -> TableMap {
        use crate::events::table_map_metadata::field_type::{COLUMN_CHARSET, DEFAULT_CHARSET, GEOMETRY_TYPE, SIGNEDNESS};
        let mut map = self.clone();
        map.optional_metadata.retain(|field| matches!(field.field_type(), SIGNEDNESS | DEFAULT_CHARSET | COLUMN_CHARSET | GEOMETRY_TYPE));
        map
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        assert!(self.table_id <= TABLE_ID_MAX, "table id {} does not fit 6 bytes", self.table_id);
        out.put_u48(self.table_id);
        out.put_u16(self.flags);
        for name in [&self.database, &self.table] {
            assert!(name.len() <= NAME_LENGTH_MAX, "name of {} bytes in a Table_map", name.len());
            out.put_u8(name.len() as u8);
            out.put_slice(name);
            out.put_u8(0);
        }
        out.put_packed_u64(self.columns.len() as u64);
        self.columns.iter().for_each(|c| out.put_u8(c.column_type.type_code()));
        let mut metadata = Vec::new();
        self.columns.iter().for_each(|c| c.column_type.encode_metadata(&mut metadata));
        out.put_packed_u64(metadata.len() as u64);
        out.put_slice(&metadata);
        let mut nullable = vec![0u8; self.columns.len().div_ceil(8)];
        for (index, column) in self.columns.iter().enumerate() {
            nullable[index / 8] |= (column.nullable as u8) << (index % 8);
        }
        out.put_slice(&nullable);
        self.optional_metadata.iter().for_each(|field| field.encode(out));
    }

    pub fn decode_body(body: &[u8]) -> Result<TableMap, DecodeError> {
        let mut reader = ByteReader::new(body);
        let table_id = reader.u48("table map table_id")?;
        let flags = reader.u16("table map flags")?;
        let database = read_name(&mut reader, "table map database name")?;
        let table = read_name(&mut reader, "table map table name")?;
        let column_count = reader.packed_count(1, "table map column count")?;
        let type_codes = reader.take(column_count, "table map column types")?;
        let metadata_length_total = reader.packed_count(1, "table map metadata length")?;
        let mut metadata = ByteReader::new(reader.take(metadata_length_total, "table map metadata")?);
        let mut column_types = Vec::with_capacity(column_count);
        for &code in type_codes {
            let Some(length) = metadata_length(code) else {
                return Err(DecodeError::invalid("table map", format!("column type {code} has no known metadata length")));
            };
            column_types.push(ColumnType::from_metadata(code, metadata.take(length, "column metadata")?));
        }
        metadata.finish("table map metadata")?;
        let nullable = reader.take(column_count.div_ceil(8), "table map nullable bitmap")?;
        if !column_count.is_multiple_of(8) && nullable[column_count / 8] >> (column_count % 8) != 0 {
            return Err(DecodeError::invalid("table map nullable bitmap", "padding bits are set"));
        }
        let mut optional_metadata = Vec::new();
        while !reader.is_empty() {
            let field_type = reader.u8("optional metadata type")?;
            let length = reader.packed_count(1, "optional metadata length")?;
            let value = reader.take(length, "optional metadata value")?;
            optional_metadata.push(OptionalMetadata::decode(field_type, value, &column_types));
        }
        let columns = column_types
            .into_iter()
            .enumerate()
            .map(|(index, column_type)| Column { column_type, nullable: nullable[index / 8] & (1 << (index % 8)) != 0 })
            .collect();
        Ok(TableMap { table_id, flags, database, table, columns, optional_metadata })
    }

    /// Per column: UNSIGNED according to the first SIGNEDNESS field
    /// (`false` for every column when the event has none).
    pub fn unsigned_flags(&self) -> Vec<bool> {
        let mut flags = self.optional_metadata.iter().find_map(|field| match field {
            OptionalMetadata::Signedness(flags) => Some(flags.iter().copied()),
            _ => None,
        });
        self.columns.iter().map(|c| c.column_type.is_numeric() && flags.as_mut().and_then(|f| f.next()).unwrap_or(false)).collect()
    }

    /// Per column: the collation of a character column, when the event
    /// says (DEFAULT_CHARSET or COLUMN_CHARSET).
    pub fn collations(&self) -> Vec<Option<u16>> {
        let charset = self
            .optional_metadata
            .iter()
            .find(|field| matches!(field, OptionalMetadata::DefaultCharset { .. } | OptionalMetadata::ColumnCharset(_)));
        let mut character_index = 0u64;
        self.columns
            .iter()
            .map(|column| {
                if !column.column_type.is_character() {
                    return None;
                }
                let index = character_index;
                character_index += 1;
                match charset? {
                    OptionalMetadata::DefaultCharset { default_collation, exceptions } => {
                        Some(exceptions.iter().find(|(i, _)| *i == index).map_or(*default_collation, |&(_, c)| c))
                    }
                    OptionalMetadata::ColumnCharset(collations) => collations.get(index as usize).copied(),
                    _ => None,
                }
            })
            .collect()
    }

    /// Per column: its name, when the event carries COLUMN_NAME.
    pub fn column_names(&self) -> Vec<Option<&[u8]>> {
        let names = self.optional_metadata.iter().find_map(|field| match field {
            OptionalMetadata::ColumnName(names) => Some(names),
            _ => None,
        });
        (0..self.columns.len()).map(|i| names.and_then(|n| n.get(i)).map(Vec::as_slice)).collect()
    }

    /// Primary key column indexes, when the event carries them.
    pub fn primary_key(&self) -> Option<Vec<u64>> {
        self.optional_metadata.iter().find_map(|field| match field {
            OptionalMetadata::SimplePrimaryKey(columns) => Some(columns.clone()),
            OptionalMetadata::PrimaryKeyWithPrefix(parts) => Some(parts.iter().map(|&(c, _)| c).collect()),
            _ => None,
        })
    }

    /// The columns as [`ColumnSpec`]s (missing names are empty, missing
    /// collations 0). For a map made by [`TableMap::new`] these are the
    /// specs it was made from (non-character columns get collation 0).
    pub fn column_specs(&self) -> Vec<ColumnSpec> {
        let unsigned = self.unsigned_flags();
        let collations = self.collations();
        let names = self.column_names();
        self.columns
            .iter()
            .enumerate()
            .map(|(i, column)| ColumnSpec {
                name: names[i].map(|n| String::from_utf8_lossy(n).into_owned()).unwrap_or_default(),
                column_type: column.column_type.clone(),
                nullable: column.nullable,
                unsigned: unsigned[i],
                collation: collations[i].unwrap_or(0),
            })
            .collect()
    }
}

fn read_name(reader: &mut ByteReader<'_>, what: &'static str) -> Result<Vec<u8>, DecodeError> {
    let length = reader.u8(what)? as usize;
    let name = reader.take(length, what)?.to_vec();
    if reader.u8(what)? != 0 {
        return Err(DecodeError::invalid(what, "not NUL-terminated"));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, column_type: ColumnType, unsigned: bool, collation: u16) -> ColumnSpec {
        ColumnSpec { name: name.into(), column_type, nullable: name != "id", unsigned, collation }
    }

    #[test]
    fn round_trips_and_derives_the_specs_back() {
        let specs = vec![
            spec("id", ColumnType::LongLong, true, 0),
            spec("name", ColumnType::VarChar { max_length_bytes: 1000 }, false, 45),
            spec("code", ColumnType::String { max_length_bytes: 12 }, false, 63),
            spec("price", ColumnType::NewDecimal { precision: 10, scale: 2 }, false, 0),
            spec("at", ColumnType::DateTime2 { fsp: 6 }, false, 0),
        ];
        let map = TableMap::new(42, "shop", "items", &specs, &[0]).unwrap();
        let mut body = Vec::new();
        map.encode_body(&mut body);
        let decoded = TableMap::decode_body(&body).unwrap();
        assert_eq!(decoded, map);
        assert_eq!(decoded.column_specs(), specs);
        assert_eq!(decoded.primary_key(), Some(vec![0]));
        let mut again = Vec::new();
        decoded.encode_body(&mut again);
        assert_eq!(again, body);
    }

    #[test]
    fn minimal_metadata_keeps_what_decoding_needs_and_drops_names_and_keys() {
        let specs = vec![spec("id", ColumnType::LongLong, true, 0), spec("name", ColumnType::VarChar { max_length_bytes: 40 }, false, 45)];
        let full = TableMap::new(42, "shop", "items", &specs, &[0]).unwrap();
        let minimal = full.with_minimal_metadata();
        let kinds: Vec<u8> = minimal.optional_metadata.iter().map(OptionalMetadata::field_type).collect();
        use crate::events::table_map_metadata::field_type::{DEFAULT_CHARSET, SIGNEDNESS};
        assert_eq!(kinds, [SIGNEDNESS, DEFAULT_CHARSET]);
        assert_eq!((minimal.unsigned_flags(), minimal.collations()), (full.unsigned_flags(), full.collations()));
        assert_eq!((minimal.primary_key(), minimal.column_names()), (None, vec![None, None]));
        assert_eq!(TableMap { optional_metadata: Vec::new(), ..minimal.clone() }, TableMap { optional_metadata: Vec::new(), ..full });
    }

    #[test]
    fn absurd_counts_and_bad_terminators_are_errors() {
        let map = TableMap::new(1, "d", "t", &[spec("id", ColumnType::Long, false, 0)], &[]).unwrap();
        let mut body = Vec::new();
        map.encode_body(&mut body);
        let mut huge = body.clone();
        huge[14] = 0xfe; // column count: an 8-byte count follows
        assert!(TableMap::decode_body(&huge).is_err());
        let mut unterminated = body.clone();
        unterminated[10] = b'x';
        assert!(TableMap::decode_body(&unterminated).is_err());
        // Everything up to the nullable bitmap is mandatory.
        for cut in 0..18 {
            assert!(TableMap::decode_body(&body[..cut]).is_err(), "cut at {cut}");
        }
    }
}
