//! How columns and values of row events are shown: type names and `meta`
//! as `mysqlbinlog -vv` prints them, values as SQL literals (text) or JSON.

use binlog_format::column_type::type_code;
use binlog_format::{ColumnType, TableMap, Value};
use serde_json::json;

use super::text::hex;

/// One column of a table map, ready to print.
pub struct ColumnInfo {
    /// 1-based, as `@N`.
    pub number: usize,
    pub name: Option<String>,
    pub type_name: String,
    pub type_code: u8,
    pub meta: u32,
    pub nullable: bool,
    pub unsigned: bool,
    pub collation: Option<u16>,
    pub column_type: ColumnType,
}

impl ColumnInfo {
    /// `name` when the table map carries column names, `@N` otherwise.
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| format!("@{}", self.number))
    }
}

pub fn columns(table: &TableMap) -> Vec<ColumnInfo> {
    let names = table.column_names();
    let unsigned = table.unsigned_flags();
    let collations = table.collations();
    table
        .columns
        .iter()
        .enumerate()
        .map(|(index, column)| {
            let mut metadata = Vec::new();
            column.column_type.encode_metadata(&mut metadata);
            ColumnInfo {
                number: index + 1,
                name: names[index].map(|n| String::from_utf8_lossy(n).into_owned()),
                type_name: type_name(&column.column_type, &metadata),
                type_code: column.column_type.type_code(),
                meta: meta(column.column_type.type_code(), &metadata),
                nullable: column.nullable,
                unsigned: unsigned[index],
                collation: collations[index],
                column_type: column.column_type.clone(),
            }
        })
        .collect()
}

/// mysqlbinlog's `meta=`: the metadata bytes as one number.
fn meta(code: u8, metadata: &[u8]) -> u32 {
    match metadata {
        [] => 0,
        [one] => *one as u32,
        [first, second] => match code {
            // Stored little-endian.
            type_code::VARCHAR | type_code::VAR_STRING | type_code::BIT | type_code::VARCHAR_COMPRESSED => {
                u16::from_le_bytes([*first, *second]) as u32
            }
            // Two separate bytes, which mysqlbinlog shows as (first << 8) | second.
            _ => ((*first as u32) << 8) | *second as u32,
        },
        _ => 0,
    }
}

/// mysqlbinlog's type names in its `/* TYPE meta=... */` comments.
fn type_name(column_type: &ColumnType, metadata: &[u8]) -> String {
    let meta_byte = |index: usize| metadata.get(index).copied().unwrap_or(0);
    match column_type {
        ColumnType::Tiny => "TINYINT".into(),
        ColumnType::Short => "SMALLINT".into(),
        ColumnType::Int24 => "MEDIUMINT".into(),
        ColumnType::Long => "INT".into(),
        ColumnType::LongLong => "BIGINT".into(),
        ColumnType::Float => "FLOAT".into(),
        ColumnType::Double => "DOUBLE".into(),
        ColumnType::NewDecimal { precision, scale } => format!("DECIMAL({precision},{scale})"),
        ColumnType::String { max_length_bytes } => format!("STRING({max_length_bytes})"),
        ColumnType::VarChar { max_length_bytes } => format!("VARSTRING({max_length_bytes})"),
        ColumnType::Blob { length_bytes } => match length_bytes {
            1 => "TINYBLOB".into(),
            2 => "BLOB".into(),
            3 => "MEDIUMBLOB".into(),
            _ => "LONGBLOB".into(),
        },
        ColumnType::Date => "DATE".into(),
        ColumnType::DateTime2 { fsp } => format!("DATETIME({fsp})"),
        ColumnType::Timestamp2 { fsp } => format!("TIMESTAMP({fsp})"),
        ColumnType::Bit { bits } => format!("BIT({bits})"),
        ColumnType::Enum { length_bytes } => format!("ENUM({length_bytes} bytes)"),
        ColumnType::Set { length_bytes } => format!("SET({length_bytes} bytes)"),
        ColumnType::Time2 { fsp } => format!("TIME({fsp})"),
        ColumnType::Year => "YEAR".into(),
        ColumnType::Json => "JSON".into(),
        ColumnType::Geometry => "GEOMETRY".into(),
        ColumnType::Raw { .. } => match column_type.real_type_code() {
            type_code::DECIMAL => "OLD_DECIMAL".into(),
            type_code::NULL => "NULL".into(),
            type_code::TIMESTAMP => "TIMESTAMP".into(),
            type_code::TIME => "TIME".into(),
            type_code::DATETIME => "DATETIME".into(),
            type_code::YEAR => "YEAR".into(),
            type_code::NEWDATE => "NEWDATE".into(),
            type_code::TIME2 => format!("TIME({})", meta_byte(0)),
            type_code::TIMESTAMP2 => format!("TIMESTAMP({})", meta_byte(0)),
            type_code::DATETIME2 => format!("DATETIME({})", meta_byte(0)),
            type_code::BIT => format!("BIT({})", meta_byte(1) as u32 * 8 + meta_byte(0) as u32),
            type_code::ENUM => format!("ENUM({} bytes)", meta_byte(1)),
            type_code::SET => format!("SET({} bytes)", meta_byte(1)),
            type_code::JSON => "JSON".into(),
            type_code::GEOMETRY => "GEOMETRY".into(),
            type_code::VECTOR => "VECTOR".into(),
            type_code::VARCHAR | type_code::VAR_STRING => {
                format!("VARSTRING({})", u16::from_le_bytes([meta_byte(0), meta_byte(1)]))
            }
            type_code::VARCHAR_COMPRESSED => "VARSTRING_COMPRESSED".into(),
            type_code::BLOB_COMPRESSED => "BLOB_COMPRESSED".into(),
            type_code::STRING => "STRING".into(),
            code => format!("TYPE{code}"),
        },
    }
}

/// A value as mysqlbinlog prints it after `@N=`.
pub fn value_text(column: &ColumnInfo, value: &Value) -> String {
    match value {
        Value::Null => "NULL".into(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) if matches!(column.column_type, ColumnType::Bit { .. }) => format!("b'{v:b}'"),
        Value::UInt(v) => v.to_string(),
        Value::Float(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        Value::Decimal(text) => text.clone(),
        Value::Bytes(bytes) => match raw_number(column, bytes) {
            Some(number) => number,
            None if matches!(column.column_type, ColumnType::Raw { .. }) && !is_textual_raw(column) => {
                format!("x'{}'", hex(bytes))
            }
            None => quote(bytes),
        },
        Value::Date { year, month, day } => format!("'{year:04}-{month:02}-{day:02}'"),
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            let fraction = fraction(*micros, fsp_of(column));
            format!("'{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{fraction}'")
        }
        Value::Timestamp { seconds, micros } => format!("{seconds}{}", fraction(*micros, fsp_of(column))),
        Value::Time { .. } => format!("'{}'", time_text(column, value)),
        Value::Json(document) => quote(json_text(document).as_bytes()),
    }
}

/// A binary JSON document as MySQL prints it, or the decoder's complaint.
fn json_text(document: &[u8]) -> String {
    match binlog_format::value::json::binary::decode(document) {
        Ok(json) => json.to_string(),
        Err(error) => format!("(invalid JSON: {error})"),
    }
}

/// A value in `--json` output: numbers as numbers (decimals as strings, to
/// keep their digits), text as strings, binary as `{"hex": ...}`.
pub fn value_json(column: &ColumnInfo, value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Int(v) => json!(v),
        Value::UInt(v) if matches!(column.column_type, ColumnType::Bit { .. }) => json!(format!("b'{v:b}'")),
        Value::UInt(v) => json!(v),
        Value::Float(v) if v.is_finite() => json!(v),
        Value::Double(v) if v.is_finite() => json!(v),
        Value::Float(v) => json!(v.to_string()),
        Value::Double(v) => json!(v.to_string()),
        Value::Decimal(text) => json!(text),
        Value::Bytes(bytes) => match raw_number(column, bytes) {
            Some(number) if column.column_type.real_type_code() != type_code::BIT => {
                json!(number.parse::<u64>().unwrap_or_default())
            }
            Some(bits) => json!(bits),
            None => match std::str::from_utf8(bytes) {
                Ok(text) if column.collation != Some(BINARY_COLLATION) && is_textual_raw_or_typed(column) => {
                    json!(text)
                }
                _ => json!({ "hex": hex(bytes) }),
            },
        },
        Value::Date { year, month, day } => json!(format!("{year:04}-{month:02}-{day:02}")),
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            let fraction = fraction(*micros, fsp_of(column));
            json!(format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{fraction}"))
        }
        Value::Timestamp { seconds, micros } => json!(format!("{seconds}{}", fraction(*micros, fsp_of(column)))),
        Value::Time { .. } => json!(time_text(column, value)),
        Value::Json(document) => json!(json_text(document)),
    }
}

/// `[-]hh:mm:ss[.fff]`, hours past 24 as they are (`838:59:59`).
fn time_text(column: &ColumnInfo, value: &Value) -> String {
    let Value::Time { negative, hours, minute, second, micros } = value else { return String::new() };
    let sign = if *negative { "-" } else { "" };
    format!("{sign}{hours:02}:{minute:02}:{second:02}{}", fraction(*micros, fsp_of(column)))
}

/// The `binary` collation: BINARY, VARBINARY and BLOB columns.
const BINARY_COLLATION: u16 = 63;

/// Untyped columns whose stored bytes are a small integer: YEAR, ENUM
/// (index), SET (bit mask), BIT (shown as `b'...'`).
fn raw_number(column: &ColumnInfo, bytes: &[u8]) -> Option<String> {
    if !matches!(column.column_type, ColumnType::Raw { .. }) || bytes.is_empty() || bytes.len() > 8 {
        return None;
    }
    let little_endian = || bytes.iter().rev().fold(0u64, |v, &b| (v << 8) | b as u64);
    match column.column_type.real_type_code() {
        type_code::YEAR => Some(if bytes[0] == 0 { "0".into() } else { (1900 + bytes[0] as u64).to_string() }),
        type_code::ENUM | type_code::SET => Some(little_endian().to_string()),
        type_code::BIT => {
            // Big-endian on disk.
            let value = bytes.iter().fold(0u64, |v, &b| (v << 8) | b as u64);
            Some(format!("b'{value:b}'"))
        }
        _ => None,
    }
}

/// Raw columns whose bytes are a length prefix plus text.
fn is_textual_raw(column: &ColumnInfo) -> bool {
    matches!(column.column_type.real_type_code(), type_code::VARCHAR | type_code::VAR_STRING | type_code::STRING)
}

fn is_textual_raw_or_typed(column: &ColumnInfo) -> bool {
    !matches!(column.column_type, ColumnType::Raw { .. }) || is_textual_raw(column)
}

fn fsp_of(column: &ColumnInfo) -> u8 {
    match column.column_type {
        ColumnType::DateTime2 { fsp } | ColumnType::Timestamp2 { fsp } | ColumnType::Time2 { fsp } => fsp,
        _ => 6,
    }
}

/// `.ffffff` cut to `fsp` digits; empty for fsp 0.
fn fraction(micros: u32, fsp: u8) -> String {
    if fsp == 0 {
        return String::new();
    }
    let digits = format!("{micros:06}");
    format!(".{}", &digits[..fsp.min(6) as usize])
}

/// A string literal: printable UTF-8 as is, quotes and backslashes
/// escaped, anything else as `\xNN`.
pub fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('\'');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\'' => out.push_str("\\'"),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_quoted_and_escaped() {
        assert_eq!(quote(b"it's"), "'it\\'s'");
        assert_eq!(quote(b"a\\b\n"), "'a\\\\b\\x0a'");
        assert_eq!(quote(&[0x61, 0xff]), "'a\\xff'");
        assert_eq!(quote("pêche".as_bytes()), "'pêche'");
    }

    #[test]
    fn fractions_follow_the_precision() {
        assert_eq!(fraction(123_456, 0), "");
        assert_eq!(fraction(123_456, 3), ".123");
        assert_eq!(fraction(5, 6), ".000005");
    }
}
