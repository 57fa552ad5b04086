//! Columns: SQL data types to engine column types, engine columns to
//! result-set column definitions, and values made fit for a column before
//! a write (MySQL's strict mode: a value that does not fit is an error).

use binlog_format::ColumnType;
use engine::ColumnAttributes;
use engine::{ColumnDef, TableDef};
use protocol::resultset::UTF8MB4_GENERAL_CI;
use protocol::{ColumnDefinition, ColumnFlags, ColumnType as WireType};
use sqlparser::ast::{BinaryLength, CharacterLength, DataType, ExactNumberInfo};

use crate::error::{data_too_long, incorrect_value, not_supported, out_of_range, SqlResult};
use crate::eval::value::{text, to_number, to_text, NullCheck, Number, Value};
use crate::eval::{bit, enumeration, numeric_display};

pub const BINARY_COLLATION: u16 = 63;

fn char_length(length: &Option<CharacterLength>, default: u64) -> SqlResult<u64> {
    match length {
        None => Ok(default),
        Some(CharacterLength::IntegerLength { length, .. }) => Ok(*length),
        Some(CharacterLength::Max) => Err(not_supported("MAX length")),
    }
}

/// The bytes a CHAR or VARCHAR of `characters` takes in a character set
/// of `bytes_per_character`, or MySQL's 1074 (`characters_max` is what
/// the message names).
fn string_bytes(characters: u64, bytes_per_character: u16, bytes_max: u64, characters_max: u64, name: &str) -> SqlResult<u16> {
    let bytes = characters * u64::from(bytes_per_character);
    if characters == 0 || characters > characters_max || bytes > bytes_max {
        return Err(protocol::MysqlError::new(
            1074,
            "42000",
            format!("Column length too big for column '{name}' (max = {characters_max}); use BLOB or TEXT instead"),
        ));
    }
    Ok(bytes as u16)
}

/// MySQL's longest CHAR, in characters.
const CHAR_CHARACTERS_MAX: u64 = 255;
/// The most bytes a VARCHAR's values may take.
const VARCHAR_BYTES_MAX: u64 = 65_532;
/// A row's size limit, which MySQL's 1074 for a VARCHAR divides by the
/// character set's widest character.
const ROW_BYTES_MAX: u64 = 65_535;

/// The engine column for `name data_type`, text in utf8mb4.
pub fn column_from_sql(name: &str, data_type: &DataType) -> SqlResult<ColumnDef> {
    column_in_collation(name, data_type, UTF8MB4_GENERAL_CI)
}

/// The engine column for `name data_type`, a character type in collation
/// `text_collation` (lengths in its character set's bytes; the `binary`
/// collation makes CHAR BINARY, VARCHAR VARBINARY and TEXT BLOB, as
/// `CHARACTER SET binary` does in MySQL).
pub fn column_in_collation(name: &str, data_type: &DataType, text_collation: u16) -> SqlResult<ColumnDef> {
    use DataType as D;
    let bytes_per_character = crate::charsets::bytes_per_character(text_collation);
    let mut unsigned = false;
    let mut collation = BINARY_COLLATION;
    let mut attributes = ColumnAttributes::default();
    let column_type = match data_type {
        D::Zerofill(inner) => {
            let mut column = column_in_collation(name, inner, text_collation)?;
            column.unsigned = true;
            column.attributes.zerofill = true;
            if column.attributes.display_width == 0 && column.attributes.float_digits.is_none() {
                column.attributes.display_width = numeric_display::default_width(&column.column_type, true);
            }
            return Ok(column);
        }
        D::Bool | D::Boolean => ColumnType::Tiny,
        D::TinyInt(_) => ColumnType::Tiny,
        D::TinyIntUnsigned(_) => {
            unsigned = true;
            ColumnType::Tiny
        }
        D::SmallInt(_) => ColumnType::Short,
        D::SmallIntUnsigned(_) => {
            unsigned = true;
            ColumnType::Short
        }
        D::MediumInt(_) => ColumnType::Int24,
        D::MediumIntUnsigned(_) => {
            unsigned = true;
            ColumnType::Int24
        }
        D::Int(_) | D::Integer(_) => ColumnType::Long,
        D::IntUnsigned(_) | D::IntegerUnsigned(_) => {
            unsigned = true;
            ColumnType::Long
        }
        D::BigInt(_) => ColumnType::LongLong,
        D::BigIntUnsigned(_) => {
            unsigned = true;
            ColumnType::LongLong
        }
        D::Float(ExactNumberInfo::None) => ColumnType::Float,
        D::Double(ExactNumberInfo::None) | D::DoublePrecision | D::Real => ColumnType::Double,
        D::Decimal(info) | D::Numeric(info) => {
            let (precision, scale) = match info {
                ExactNumberInfo::None => (10, 0),
                ExactNumberInfo::Precision(p) => (*p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => (*p, (*s).max(0) as u64),
            };
            if precision == 0 || precision > 65 || scale > 30 || scale > precision {
                return Err(not_supported(data_type.to_string()));
            }
            ColumnType::NewDecimal { precision: precision as u8, scale: scale as u8 }
        }
        D::Char(length) | D::Character(length) => {
            collation = text_collation;
            let characters = char_length(length, 1)?;
            ColumnType::String { max_length_bytes: string_bytes(characters, bytes_per_character, u64::MAX, CHAR_CHARACTERS_MAX, name)? }
        }
        D::Varchar(length) | D::CharacterVarying(length) | D::CharVarying(length) => {
            collation = text_collation;
            let Some(_) = length else { return Err(protocol::syntax_error_near(&data_type.to_string())) };
            let characters_max = ROW_BYTES_MAX / u64::from(bytes_per_character);
            let characters = char_length(length, 1)?;
            ColumnType::VarChar {
                max_length_bytes: string_bytes(characters, bytes_per_character, VARCHAR_BYTES_MAX, characters_max, name)?,
            }
        }
        D::Binary(length) => ColumnType::String { max_length_bytes: length.unwrap_or(1).clamp(1, 255) as u16 },
        D::Text => {
            collation = text_collation;
            ColumnType::Blob { length_bytes: 2 }
        }
        D::TinyText => {
            collation = text_collation;
            ColumnType::Blob { length_bytes: 1 }
        }
        D::MediumText => {
            collation = text_collation;
            ColumnType::Blob { length_bytes: 3 }
        }
        D::LongText => {
            collation = text_collation;
            ColumnType::Blob { length_bytes: 4 }
        }
        D::Blob(_) => ColumnType::Blob { length_bytes: 2 },
        D::TinyBlob => ColumnType::Blob { length_bytes: 1 },
        D::MediumBlob => ColumnType::Blob { length_bytes: 3 },
        D::LongBlob => ColumnType::Blob { length_bytes: 4 },
        D::Date => ColumnType::Date,
        D::Datetime(fsp) => ColumnType::DateTime2 { fsp: crate::eval::temporal_columns::precision(*fsp, name)? },
        D::Timestamp(fsp, _) => ColumnType::Timestamp2 { fsp: crate::eval::temporal_columns::precision(*fsp, name)? },
        D::Time(fsp, _) => ColumnType::Time2 { fsp: crate::eval::temporal_columns::precision(*fsp, name)? },
        D::Custom(type_name, modifiers) if crate::eval::temporal_columns::is_year(type_name) => {
            crate::eval::temporal_columns::year(modifiers)?
        }
        D::JSON => ColumnType::Json,
        D::Custom(type_name, modifiers) if modifiers.is_empty() && spatial_kind(type_name).is_some() => {
            let kind = spatial_kind(type_name).expect("checked by the guard");
            attributes.geometry = Some(engine::GeometryAttributes { kind, srid: None });
            ColumnType::Geometry
        }
        D::Float(info) | D::FloatUnsigned(info) | D::Double(info) | D::DoubleUnsigned(info) => {
            unsigned = matches!(data_type, D::FloatUnsigned(_) | D::DoubleUnsigned(_));
            let (column_type, digits) =
                numeric_display::float_from_sql(name, info, matches!(data_type, D::Double(_) | D::DoubleUnsigned(_)))?;
            attributes.float_digits = digits;
            column_type
        }
        D::RealUnsigned | D::DoublePrecisionUnsigned => {
            unsigned = true;
            ColumnType::Double
        }
        D::Bit(bits) => {
            let bits = bits.unwrap_or(1);
            if !(1..=64).contains(&bits) {
                return Err(numeric_display::display_width_too_big(name, 64));
            }
            ColumnType::Bit { bits: bits as u8 }
        }
        D::Enum(members, None) => {
            collation = text_collation;
            let (column_type, members) = enumeration::enumeration_from_sql(name, false, &enumeration::enum_member_names(members)?)?;
            attributes.members = members;
            column_type
        }
        D::Set(members) => {
            collation = text_collation;
            let (column_type, members) = enumeration::enumeration_from_sql(name, true, members)?;
            attributes.members = members;
            column_type
        }
        D::Varbinary(Some(BinaryLength::IntegerLength { length })) => {
            if *length > 65_532 {
                return Err(protocol::MysqlError::new(
                    1074,
                    "42000",
                    format!("Column length too big for column '{name}' (max = 65532); use BLOB or TEXT instead"),
                ));
            }
            ColumnType::VarChar { max_length_bytes: *length as u16 }
        }
        other => return Err(not_supported(format!("column type {other}"))),
    };
    if let Some(width) = numeric_display::declared_width(data_type) {
        if width > 255 {
            return Err(numeric_display::display_width_too_big(name, 255));
        }
        attributes.display_width = width as u8;
    }
    let mut column = ColumnDef::new(name, column_type);
    column.unsigned = unsigned;
    column.collation = collation;
    column.attributes = attributes;
    Ok(column)
}

/// The spatial kind a type name (GEOMETRY, POINT, ...) declares.
fn spatial_kind(type_name: &sqlparser::ast::ObjectName) -> Option<binlog_format::value::geometry::Kind> {
    match type_name.0.as_slice() {
        [part] => binlog_format::value::geometry::Kind::from_sql_name(&part.to_string()),
        _ => None,
    }
}

/// `column` in collation `collation`, as ALTER TABLE ... CONVERT TO makes
/// it: a text column (CHAR, VARCHAR, TEXT, ENUM, SET) keeps its length in
/// characters, its bytes counted in the new set (1074 when a VARCHAR no
/// longer fits), and a TEXT too small for as many characters in the new
/// set becomes the next larger one (TEXT latin1 to MEDIUMTEXT utf8mb4), as
/// in MySQL. Other columns are unchanged.
pub fn converted_to_collation(column: &ColumnDef, collation: u16) -> SqlResult<ColumnDef> {
    let is_text = match column.column_type {
        ColumnType::String { .. } | ColumnType::VarChar { .. } | ColumnType::Blob { .. } => column.collation != BINARY_COLLATION,
        ColumnType::Enum { .. } | ColumnType::Set { .. } => true,
        _ => false,
    };
    let mut converted = column.clone();
    if !is_text {
        return Ok(converted);
    }
    let old_bytes_per_character = crate::charsets::bytes_per_character(column.collation);
    let bytes_per_character = crate::charsets::bytes_per_character(collation);
    let name = &column.name;
    match &mut converted.column_type {
        ColumnType::String { max_length_bytes } => {
            let characters = u64::from(*max_length_bytes / old_bytes_per_character);
            *max_length_bytes = string_bytes(characters, bytes_per_character, u64::MAX, CHAR_CHARACTERS_MAX, name)?;
        }
        ColumnType::VarChar { max_length_bytes } => {
            let characters = u64::from(*max_length_bytes / old_bytes_per_character);
            let characters_max = ROW_BYTES_MAX / u64::from(bytes_per_character);
            *max_length_bytes = string_bytes(characters, bytes_per_character, VARCHAR_BYTES_MAX, characters_max, name)?;
        }
        ColumnType::Blob { length_bytes } => {
            let bytes_max = |length_bytes: u8| (1u64 << (8 * u32::from(length_bytes))) - 1;
            let characters = bytes_max(*length_bytes) / u64::from(old_bytes_per_character);
            while *length_bytes < 4 && bytes_max(*length_bytes) < characters * u64::from(bytes_per_character) {
                *length_bytes += 1;
            }
        }
        _ => {}
    }
    converted.collation = collation;
    Ok(converted)
}

/// The type as SHOW CREATE TABLE / DESCRIBE print it.
pub fn type_name(column: &ColumnDef) -> String {
    let characters = |bytes: u16| bytes / crate::charsets::bytes_per_character(column.collation);
    let numeric = numeric_display::type_suffix(column);
    match &column.column_type {
        ColumnType::Tiny => format!("tinyint{numeric}"),
        ColumnType::Short => format!("smallint{numeric}"),
        ColumnType::Int24 => format!("mediumint{numeric}"),
        ColumnType::Long => format!("int{numeric}"),
        ColumnType::LongLong => format!("bigint{numeric}"),
        ColumnType::Float => format!("float{numeric}"),
        ColumnType::Double => format!("double{numeric}"),
        ColumnType::Bit { bits } => format!("bit({bits})"),
        ColumnType::Enum { .. } => enumeration::enumeration_type_name(false, &column.attributes.members),
        ColumnType::Set { .. } => enumeration::enumeration_type_name(true, &column.attributes.members),
        ColumnType::NewDecimal { precision, scale } => format!("decimal({precision},{scale})"),
        ColumnType::String { max_length_bytes } if column.collation == BINARY_COLLATION => format!("binary({max_length_bytes})"),
        ColumnType::String { max_length_bytes } => format!("char({})", characters(*max_length_bytes)),
        ColumnType::VarChar { max_length_bytes } if column.collation == BINARY_COLLATION => format!("varbinary({max_length_bytes})"),
        ColumnType::VarChar { max_length_bytes } => format!("varchar({})", characters(*max_length_bytes)),
        ColumnType::Blob { length_bytes } => {
            let size = ["tiny", "", "medium", "long"][usize::from(length_bytes.clamp(&1, &4) - 1)];
            if column.collation == BINARY_COLLATION {
                format!("{size}blob")
            } else {
                format!("{size}text")
            }
        }
        ColumnType::Date => "date".into(),
        ColumnType::DateTime2 { fsp: 0 } => "datetime".into(),
        ColumnType::DateTime2 { fsp } => format!("datetime({fsp})"),
        ColumnType::Timestamp2 { fsp: 0 } => "timestamp".into(),
        ColumnType::Timestamp2 { fsp } => format!("timestamp({fsp})"),
        ColumnType::Time2 { fsp: 0 } => "time".into(),
        ColumnType::Time2 { fsp } => format!("time({fsp})"),
        ColumnType::Year => "year".into(),
        ColumnType::Raw { type_code, .. } => format!("type{type_code}"),
        ColumnType::Json => "json".into(),
        ColumnType::Geometry => column.attributes.geometry.map_or("geometry", |geometry| geometry.kind.sql_name()).into(),
    }
}

pub fn wire_type(column_type: &ColumnType) -> WireType {
    match column_type {
        ColumnType::Tiny => WireType::MYSQL_TYPE_TINY,
        ColumnType::Short => WireType::MYSQL_TYPE_SHORT,
        ColumnType::Int24 => WireType::MYSQL_TYPE_INT24,
        ColumnType::Long => WireType::MYSQL_TYPE_LONG,
        ColumnType::LongLong => WireType::MYSQL_TYPE_LONGLONG,
        ColumnType::Float => WireType::MYSQL_TYPE_FLOAT,
        ColumnType::Double => WireType::MYSQL_TYPE_DOUBLE,
        ColumnType::NewDecimal { .. } => WireType::MYSQL_TYPE_NEWDECIMAL,
        ColumnType::String { .. } => WireType::MYSQL_TYPE_STRING,
        ColumnType::VarChar { .. } => WireType::MYSQL_TYPE_VAR_STRING,
        ColumnType::Blob { .. } => WireType::MYSQL_TYPE_BLOB,
        ColumnType::Date => WireType::MYSQL_TYPE_DATE,
        ColumnType::DateTime2 { .. } => WireType::MYSQL_TYPE_DATETIME,
        ColumnType::Timestamp2 { .. } => WireType::MYSQL_TYPE_TIMESTAMP,
        ColumnType::Bit { .. } => WireType::MYSQL_TYPE_BIT,
        ColumnType::Enum { .. } | ColumnType::Set { .. } => WireType::MYSQL_TYPE_STRING,
        ColumnType::Time2 { .. } => WireType::MYSQL_TYPE_TIME,
        ColumnType::Year => WireType::MYSQL_TYPE_YEAR,
        ColumnType::Raw { .. } => WireType::MYSQL_TYPE_BLOB,
        ColumnType::Json => WireType::MYSQL_TYPE_JSON,
        ColumnType::Geometry => WireType::MYSQL_TYPE_GEOMETRY,
    }
}

/// The result-set definition of table column `position`.
pub fn column_definition(def: &TableDef, position: usize, alias: Option<&str>) -> ColumnDefinition {
    let column = &def.columns[position];
    let name = alias.unwrap_or(&column.name);
    let mut definition = ColumnDefinition::new(name, wire_type(&column.column_type))
        .with_table(def.database.clone(), def.name.clone())
        .with_org_name(column.name.clone());
    let mut flags = ColumnFlags::empty();
    if !column.nullable {
        flags |= ColumnFlags::NOT_NULL_FLAG;
    }
    if column.unsigned {
        flags |= ColumnFlags::UNSIGNED_FLAG;
    }
    if column.auto_increment {
        flags |= ColumnFlags::AUTO_INCREMENT_FLAG;
    }
    if def.primary_key.contains(&position) {
        flags |= ColumnFlags::PRI_KEY_FLAG;
    } else if def.indexes.iter().any(|index| index.columns.first() == Some(&position)) {
        flags |= ColumnFlags::MULTIPLE_KEY_FLAG;
    }
    match &column.column_type {
        ColumnType::String { max_length_bytes } | ColumnType::VarChar { max_length_bytes } => {
            let (length, collation) = result_length_and_collation(column, *max_length_bytes);
            definition = definition.with_length(length).with_character_set(collation);
            // BINARY and VARBINARY carry MySQL's BINARY_FLAG: Connector/J
            // takes a binary-charset string without it for text and
            // decodes its bytes as UTF-8.
            if column.collation == BINARY_COLLATION {
                flags |= ColumnFlags::BINARY_FLAG;
            }
        }
        ColumnType::Blob { .. } if column.collation != BINARY_COLLATION => {
            definition = definition.with_character_set(result_length_and_collation(column, 0).1);
            definition.flags.remove(ColumnFlags::BINARY_FLAG);
        }
        ColumnType::NewDecimal { precision, scale } => {
            definition = definition.with_length(u32::from(*precision) + 2).with_decimals(*scale);
        }
        ColumnType::DateTime2 { fsp } | ColumnType::Timestamp2 { fsp } | ColumnType::Time2 { fsp } => {
            definition = crate::eval::temporal_columns::with_precision(definition, *fsp);
        }
        ColumnType::Bit { bits } => definition = definition.with_length(u32::from(*bits)),
        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
            let is_set = matches!(column.column_type, ColumnType::Set { .. });
            definition = definition
                .with_length(enumeration::enumeration_length(is_set, &column.attributes.members))
                .with_character_set(column.collation);
            flags |= if is_set { ColumnFlags::SET_FLAG } else { ColumnFlags::ENUM_FLAG };
        }
        _ => {}
    }
    let attributes = &column.attributes;
    if let Some((digits, decimals)) = attributes.float_digits {
        definition = definition.with_length(u32::from(digits)).with_decimals(decimals);
    } else if attributes.display_width != 0 {
        definition = definition.with_length(u32::from(attributes.display_width));
    }
    if attributes.zerofill {
        flags |= ColumnFlags::ZEROFILL_FLAG | ColumnFlags::UNSIGNED_FLAG;
    }
    if column.current_timestamp.on_update {
        flags |= ColumnFlags::ON_UPDATE_NOW_FLAG;
    }
    definition.with_flags(flags)
}

/// A CHAR or VARCHAR result column's length and character set. Values
/// leave as UTF-8 (in `character_set_results`, which the protocol seam
/// relabels when it converts), so a column stored in another character set
/// is sent as MySQL sends it to a utf8mb4 client: utf8mb4's default
/// collation, its characters times 4 bytes. A utf8mb4 or binary column
/// keeps its own.
fn result_length_and_collation(column: &ColumnDef, max_length_bytes: u16) -> (u32, u16) {
    let bytes_per_character = crate::charsets::bytes_per_character(column.collation);
    match column.collation == BINARY_COLLATION || bytes_per_character == 4 {
        true => (u32::from(max_length_bytes), column.collation),
        false => (u32::from(max_length_bytes / bytes_per_character) * 4, protocol::ClientCharset::Utf8mb4.default_collation()),
    }
}

/// The values an integer column holds, by its width and signedness.
pub(crate) fn integer_range(column: &ColumnDef) -> (i128, i128) {
    let bits = match column.column_type {
        ColumnType::Tiny => 8,
        ColumnType::Short => 16,
        ColumnType::Int24 => 24,
        ColumnType::Long => 32,
        _ => 64,
    };
    if column.unsigned {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}

/// `value` made fit for `column`, or MySQL's strict-mode error.
pub fn coerce(column: &ColumnDef, value: Value) -> SqlResult<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let shown = || text(&value);
    match &column.column_type {
        ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong => {
            if let Value::Bytes(bytes) = &value {
                if !crate::eval::value::is_whole_number_text(bytes) {
                    return Err(incorrect_value("integer", &shown(), &column.name));
                }
            }
            let number = match to_number(&value) {
                Some(Number::Int(v)) => v,
                Some(Number::Float(v)) if v.is_finite() && v.abs() < 1.0e20 => v.round() as i128,
                _ => return Err(out_of_range(&column.name)),
            };
            let (low, high) = integer_range(column);
            if number < low || number > high {
                return Err(out_of_range(&column.name));
            }
            Ok(if column.unsigned { Value::UInt(number as u64) } else { Value::Int(number as i64) })
        }
        ColumnType::Float | ColumnType::Double => {
            if let Value::Bytes(bytes) = &value {
                if !crate::eval::value::is_whole_number_text(bytes) {
                    return Err(incorrect_value("double", &shown(), &column.name));
                }
            }
            let number = to_number(&value).map_or(0.0, Number::as_f64);
            // A binary-protocol DOUBLE can carry a NaN or an infinity,
            // which MySQL has no way to store or send.
            if !number.is_finite() {
                return Err(out_of_range(&column.name));
            }
            let number = numeric_display::fit_float_digits(column, number)?;
            if column.unsigned && number < 0.0 {
                return Err(out_of_range(&column.name));
            }
            if matches!(column.column_type, ColumnType::Float) && number.abs() > f64::from(f32::MAX) {
                return Err(out_of_range(&column.name));
            }
            Ok(if matches!(column.column_type, ColumnType::Float) { Value::Float(number as f32) } else { Value::Double(number) })
        }
        ColumnType::NewDecimal { precision, scale } => {
            if let Value::Bytes(bytes) = &value {
                if !crate::eval::value::is_whole_number_text(bytes) {
                    return Err(incorrect_value("decimal", &shown(), &column.name));
                }
            }
            // Exact where the value is decimal text; through a double only
            // for text in exponent form and the like.
            let text = crate::eval::decimal::exact_text(&value).unwrap_or_else(|| {
                let number = to_number(&value).map_or(0.0, Number::as_f64);
                format!("{:.*}", usize::from(*scale) + 1, number)
            });
            let (formatted, integer_digits) = crate::eval::decimal::round(&text, *scale);
            if integer_digits > usize::from(precision - scale) {
                return Err(out_of_range(&column.name));
            }
            Ok(Value::Decimal(formatted))
        }
        ColumnType::String { max_length_bytes } | ColumnType::VarChar { max_length_bytes } => {
            let bytes = to_text(&value);
            let fits = if column.collation == BINARY_COLLATION {
                bytes.len() <= usize::from(*max_length_bytes)
            } else {
                match std::str::from_utf8(&bytes) {
                    Ok(s) => {
                        check_repertoire(column, s)?;
                        s.chars().count() <= usize::from(*max_length_bytes / crate::charsets::bytes_per_character(column.collation))
                    }
                    Err(_) => return Err(protocol::MysqlError::invalid_character_string("utf8mb4", &bytes)),
                }
            };
            if !fits {
                return Err(data_too_long(&column.name));
            }
            let mut bytes = bytes;
            if let (ColumnType::String { max_length_bytes }, BINARY_COLLATION) = (&column.column_type, column.collation) {
                // BINARY(n) stores (and returns, and logs) n bytes, padded with 0x00.
                bytes.resize(usize::from(*max_length_bytes), 0);
            }
            Ok(Value::Bytes(bytes))
        }
        ColumnType::Blob { length_bytes } => {
            let bytes = to_text(&value);
            if let (false, Ok(text)) = (column.collation == BINARY_COLLATION, std::str::from_utf8(&bytes)) {
                check_repertoire(column, text)?;
            }
            if (bytes.len() as u64) >> (8 * u32::from(*length_bytes)).min(63) != 0 {
                return Err(data_too_long(&column.name));
            }
            Ok(Value::Bytes(bytes))
        }
        ColumnType::Date | ColumnType::DateTime2 { .. } | ColumnType::Timestamp2 { .. } | ColumnType::Time2 { .. } | ColumnType::Year => {
            crate::eval::temporal::coerce_temporal(column, &value, crate::eval::temporal::WriteRules::strict_utc(), &mut Vec::new())
                .unwrap_or(Ok(value))
        }
        ColumnType::Json => crate::eval::json::for_column("", &column.name, &value),
        ColumnType::Geometry => crate::eval::spatial::for_column(column, &value),
        ColumnType::Bit { bits } => bit::coerce_bit(*bits, &value, &column.name),
        ColumnType::Enum { .. } => enumeration::coerce_enum(&column.attributes.members, &value, &column.name),
        ColumnType::Set { .. } => enumeration::coerce_set(&column.attributes.members, &value, &column.name),
        _ => Ok(value),
    }
}

/// 1366 when `text` has a character the column's character set lacks
/// (outside latin1 or ascii, or beyond the BMP for utf8mb3), with the
/// bytes from it on as MySQL prints them.
fn check_repertoire(column: &ColumnDef, text: &str) -> SqlResult<()> {
    match crate::charsets::first_unstorable(column.collation, text) {
        Some(at) => Err(crate::error::incorrect_string_value(&text.as_bytes()[at..], &column.name)),
        None => Ok(()),
    }
}

/// A column's DEFAULT as SHOW COLUMNS prints it: ENUM and SET members by
/// name, BIT as `b'101'`, FLOAT(M,D) with D decimals, ZEROFILL padded.
pub fn default_text(column: &ColumnDef, value: &Value) -> String {
    match (&column.column_type, value) {
        (ColumnType::Bit { .. }, Value::UInt(bits)) => bit::bit_default_text(*bits),
        (ColumnType::Enum { .. } | ColumnType::Set { .. }, Value::UInt(stored)) => {
            let is_set = matches!(column.column_type, ColumnType::Set { .. });
            String::from_utf8_lossy(&enumeration::member_text(is_set, &column.attributes.members, *stored)).into_owned()
        }
        _ => numeric_display::numeric_text(column, text(value)),
    }
}

/// A column's DEFAULT clause value as SHOW CREATE TABLE prints it: quoted,
/// except BIT's `b'...'`.
pub fn default_clause(column: &ColumnDef, value: &Value) -> String {
    match column.column_type {
        ColumnType::Bit { .. } => default_text(column, value),
        _ => super::quoting::quoted_string(&default_text(column, value)),
    }
}

/// `value` made fit for `column` under the session's rules: temporal
/// columns by sql_mode (warnings of a non-strict write go to `warnings`),
/// the others as [`coerce`].
pub fn coerce_write(
    column: &ColumnDef,
    value: Value,
    rules: crate::eval::temporal::WriteRules,
    warnings: &mut Vec<crate::session::Warning>,
) -> SqlResult<Value> {
    match crate::eval::temporal::coerce_temporal(column, &value, rules, warnings) {
        Some(result) => result,
        None => crate::eval::sql_mode::coerce_clipping(column, value, rules.mode.strict, warnings),
    }
}

/// [`coerce_write`] for column `position` of table `def`: a JSON column's 3140
/// names the column as `table.column`, as MySQL's does.
pub fn coerce_in_table(
    def: &TableDef,
    position: usize,
    value: Value,
    rules: crate::eval::temporal::WriteRules,
    warnings: &mut Vec<crate::session::Warning>,
) -> SqlResult<Value> {
    let column = &def.columns[position];
    match column.column_type {
        ColumnType::Json => crate::eval::json::for_column(&def.name, &column.name, &value),
        ColumnType::Geometry => crate::eval::spatial::for_column(column, &value),
        _ => coerce_write(column, value, rules, warnings),
    }
}

/// The implicit value of a column an INSERT leaves out, when it has no
/// DEFAULT: NULL when nullable, generated for AUTO_INCREMENT, else none
/// (strict mode's 1364).
pub fn implicit_default(column: &ColumnDef) -> Option<Value> {
    (column.nullable || column.auto_increment).then_some(Value::Null)
}
