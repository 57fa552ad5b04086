//! The binary protocol's value codec: parameters of COM_STMT_EXECUTE decoded
//! by their declared type, and result rows encoded by their column's type.
//!
//! A row value that does not fit its column (300 in a TINYINT, text that is
//! no number in a BIGINT) is an error, never a silently wrapped number: the
//! client would otherwise read a wrong answer.

use mysql_common::constants::{ColumnType, StmtExecuteParamFlags};
use mysql_common::io::{BufMutExt, ParseBuf};

use crate::errors::{MysqlError, ProtocolError};
use crate::resultset::ColumnDefinition;
use crate::value::{DateTime, Time, Value};

/// A parameter's type as COM_STMT_EXECUTE declares it (type byte and the
/// unsigned flag); remembered between executions that do not rebind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParameterType {
    pub column_type: ColumnType,
    pub unsigned: bool,
}

impl ParameterType {
    /// Parses the two bytes (type, flags) of one parameter.
    pub fn from_wire(type_byte: u8, flags_byte: u8) -> Result<Self, ProtocolError> {
        let column_type = ColumnType::try_from(type_byte)
            .map_err(|_| ProtocolError::malformed("COM_STMT_EXECUTE", format!("parameter type {type_byte}")))?;
        let unsigned = flags_byte & StmtExecuteParamFlags::UNSIGNED.bits() != 0;
        Ok(ParameterType { column_type, unsigned })
    }

    /// A parameter whose bytes are text in the client's character set;
    /// BLOB-typed parameters are bytes and are never converted (MySQL's rule).
    pub fn is_text(&self) -> bool {
        matches!(self.column_type, ColumnType::MYSQL_TYPE_STRING | ColumnType::MYSQL_TYPE_VAR_STRING | ColumnType::MYSQL_TYPE_VARCHAR)
    }
}

fn truncated() -> ProtocolError {
    ProtocolError::malformed("COM_STMT_EXECUTE", "parameter value truncated")
}

/// Decodes one non-NULL parameter value of type `parameter_type`.
pub fn decode_parameter(buf: &mut ParseBuf<'_>, parameter_type: ParameterType) -> Result<Value, ProtocolError> {
    use ColumnType::*;
    let unsigned = parameter_type.unsigned;
    let value = match parameter_type.column_type {
        MYSQL_TYPE_NULL => Value::Null,
        MYSQL_TYPE_TINY => {
            let raw = buf.checked_eat_u8().ok_or_else(truncated)?;
            if unsigned {
                Value::UInt(raw.into())
            } else {
                Value::Int((raw as i8).into())
            }
        }
        MYSQL_TYPE_SHORT | MYSQL_TYPE_YEAR => {
            let raw = buf.checked_eat_u16_le().ok_or_else(truncated)?;
            if unsigned {
                Value::UInt(raw.into())
            } else {
                Value::Int((raw as i16).into())
            }
        }
        MYSQL_TYPE_LONG | MYSQL_TYPE_INT24 => {
            let raw = buf.checked_eat_u32_le().ok_or_else(truncated)?;
            if unsigned {
                Value::UInt(raw.into())
            } else {
                Value::Int((raw as i32).into())
            }
        }
        MYSQL_TYPE_LONGLONG => {
            let raw = buf.checked_eat_u64_le().ok_or_else(truncated)?;
            if unsigned {
                Value::UInt(raw)
            } else {
                Value::Int(raw as i64)
            }
        }
        MYSQL_TYPE_FLOAT => Value::Float(buf.checked_eat_f32_le().ok_or_else(truncated)?),
        MYSQL_TYPE_DOUBLE => Value::Double(buf.checked_eat_f64_le().ok_or_else(truncated)?),
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE | MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP => Value::DateTime(decode_datetime(buf)?),
        MYSQL_TYPE_TIME => Value::Time(decode_time(buf)?),
        MYSQL_TYPE_DECIMAL
        | MYSQL_TYPE_NEWDECIMAL
        | MYSQL_TYPE_VARCHAR
        | MYSQL_TYPE_VAR_STRING
        | MYSQL_TYPE_STRING
        | MYSQL_TYPE_TINY_BLOB
        | MYSQL_TYPE_MEDIUM_BLOB
        | MYSQL_TYPE_LONG_BLOB
        | MYSQL_TYPE_BLOB
        | MYSQL_TYPE_BIT
        | MYSQL_TYPE_ENUM
        | MYSQL_TYPE_SET
        | MYSQL_TYPE_GEOMETRY
        | MYSQL_TYPE_JSON
        | MYSQL_TYPE_VECTOR => Value::Bytes(buf.checked_eat_lenenc_str().ok_or_else(truncated)?.to_vec()),
        other => {
            return Err(ProtocolError::malformed("COM_STMT_EXECUTE", format!("parameter type {other:?}")));
        }
    };
    Ok(value)
}

fn decode_datetime(buf: &mut ParseBuf<'_>) -> Result<DateTime, ProtocolError> {
    let length = buf.checked_eat_u8().ok_or_else(truncated)?;
    if !matches!(length, 0 | 4 | 7 | 11) {
        return Err(ProtocolError::malformed("COM_STMT_EXECUTE", format!("date length {length}")));
    }
    let mut body = buf.checked_eat_buf(length.into()).ok_or_else(truncated)?;
    let mut value = DateTime::default();
    if length >= 4 {
        value.year = body.eat_u16_le();
        value.month = body.eat_u8();
        value.day = body.eat_u8();
    }
    if length >= 7 {
        value.hour = body.eat_u8();
        value.minute = body.eat_u8();
        value.second = body.eat_u8();
    }
    if length == 11 {
        value.microsecond = body.eat_u32_le();
    }
    Ok(value)
}

fn decode_time(buf: &mut ParseBuf<'_>) -> Result<Time, ProtocolError> {
    let length = buf.checked_eat_u8().ok_or_else(truncated)?;
    if !matches!(length, 0 | 8 | 12) {
        return Err(ProtocolError::malformed("COM_STMT_EXECUTE", format!("time length {length}")));
    }
    let mut body = buf.checked_eat_buf(length.into()).ok_or_else(truncated)?;
    let mut value = Time::default();
    if length >= 8 {
        value.negative = body.eat_u8() != 0;
        value.days = body.eat_u32_le();
        value.hours = body.eat_u8();
        value.minutes = body.eat_u8();
        value.seconds = body.eat_u8();
    }
    if length == 12 {
        value.microseconds = body.eat_u32_le();
    }
    Ok(value)
}

/// NULL-bitmap bit of column `index` in a binary row: the first two bits are
/// reserved, so column 0 is bit 2.
const ROW_NULL_BITMAP_OFFSET: usize = 2;

/// Encodes one binary result row (header 0x00, NULL bitmap, values).
pub fn encode_binary_row(columns: &[ColumnDefinition], row: &[Value], out: &mut Vec<u8>) -> Result<(), MysqlError> {
    out.push(0x00);
    let bitmap_start = out.len();
    out.resize(bitmap_start + (columns.len() + 7 + ROW_NULL_BITMAP_OFFSET) / 8, 0);
    for (index, (value, column)) in row.iter().zip(columns).enumerate() {
        if value.is_null() {
            let bit = index + ROW_NULL_BITMAP_OFFSET;
            out[bitmap_start + bit / 8] |= 1 << (bit % 8);
            continue;
        }
        encode_binary_value(value, column, out)?;
    }
    Ok(())
}

fn cannot_encode(value: &Value, column: &ColumnDefinition) -> MysqlError {
    MysqlError::internal(format!("binlogd: value {value:?} does not fit column `{}` of type {:?}", column.name, column.column_type))
}

/// The integer a value stands for, if it is one (text is parsed).
fn integer_of(value: &Value) -> Option<i128> {
    match value {
        Value::Int(v) => Some((*v).into()),
        Value::UInt(v) => Some((*v).into()),
        Value::Bytes(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        Value::Float(v) if v.fract() == 0.0 => Some(*v as i128),
        Value::Double(v) if v.fract() == 0.0 => Some(*v as i128),
        _ => None,
    }
}

fn float_of(value: &Value) -> Option<f64> {
    match value {
        Value::Int(v) => Some(*v as f64),
        Value::UInt(v) => Some(*v as f64),
        Value::Float(v) => Some((*v).into()),
        Value::Double(v) => Some(*v),
        Value::Bytes(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        _ => None,
    }
}

fn datetime_of(value: &Value) -> Option<DateTime> {
    match value {
        Value::DateTime(dt) => Some(*dt),
        Value::Bytes(bytes) => DateTime::parse(std::str::from_utf8(bytes).ok()?),
        _ => None,
    }
}

fn time_of(value: &Value) -> Option<Time> {
    match value {
        Value::Time(time) => Some(*time),
        Value::Bytes(bytes) => Time::parse(std::str::from_utf8(bytes).ok()?),
        _ => None,
    }
}

/// Writes the low `width` bytes of `integer` after checking that it is in
/// range for a signed or unsigned column of that width.
fn put_integer(out: &mut Vec<u8>, integer: i128, width: u32, unsigned: bool) -> bool {
    let bits = 8 * width;
    let (min, max) = if unsigned { (0, (1i128 << bits) - 1) } else { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) };
    if integer < min || integer > max {
        return false;
    }
    out.extend_from_slice(&integer.to_le_bytes()[..width as usize]);
    true
}

fn put_datetime(out: &mut Vec<u8>, dt: &DateTime, date_only: bool) {
    let has_time = !date_only && (dt.has_time() || dt.microsecond != 0);
    if *dt == DateTime::default() {
        out.push(0);
        return;
    }
    let length = if !has_time {
        4
    } else if dt.microsecond == 0 {
        7
    } else {
        11
    };
    out.push(length);
    out.extend_from_slice(&dt.year.to_le_bytes());
    out.extend_from_slice(&[dt.month, dt.day]);
    if length >= 7 {
        out.extend_from_slice(&[dt.hour, dt.minute, dt.second]);
    }
    if length == 11 {
        out.extend_from_slice(&dt.microsecond.to_le_bytes());
    }
}

fn put_time(out: &mut Vec<u8>, time: &Time) {
    if time.days == 0 && time.hours == 0 && time.minutes == 0 && time.seconds == 0 && time.microseconds == 0 {
        out.push(0);
        return;
    }
    let length = if time.microseconds == 0 { 8 } else { 12 };
    out.push(length);
    out.push(u8::from(time.negative));
    out.extend_from_slice(&time.days.to_le_bytes());
    out.extend_from_slice(&[time.hours, time.minutes, time.seconds]);
    if length == 12 {
        out.extend_from_slice(&time.microseconds.to_le_bytes());
    }
}

fn encode_binary_value(value: &Value, column: &ColumnDefinition, out: &mut Vec<u8>) -> Result<(), MysqlError> {
    use ColumnType::*;
    let unsigned = column.is_unsigned();
    let width = match column.column_type {
        MYSQL_TYPE_TINY => Some(1),
        MYSQL_TYPE_SHORT | MYSQL_TYPE_YEAR => Some(2),
        MYSQL_TYPE_LONG | MYSQL_TYPE_INT24 => Some(4),
        MYSQL_TYPE_LONGLONG => Some(8),
        _ => None,
    };
    if let Some(width) = width {
        let integer = integer_of(value).ok_or_else(|| cannot_encode(value, column))?;
        return match put_integer(out, integer, width, unsigned) {
            true => Ok(()),
            false => Err(cannot_encode(value, column)),
        };
    }
    match column.column_type {
        MYSQL_TYPE_FLOAT => {
            let float = float_of(value).ok_or_else(|| cannot_encode(value, column))?;
            out.extend_from_slice(&(float as f32).to_le_bytes());
        }
        MYSQL_TYPE_DOUBLE => {
            let float = float_of(value).ok_or_else(|| cannot_encode(value, column))?;
            out.extend_from_slice(&float.to_le_bytes());
        }
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => put_datetime(out, &datetime_of(value).ok_or_else(|| cannot_encode(value, column))?, true),
        MYSQL_TYPE_DATETIME | MYSQL_TYPE_DATETIME2 | MYSQL_TYPE_TIMESTAMP | MYSQL_TYPE_TIMESTAMP2 => {
            put_datetime(out, &datetime_of(value).ok_or_else(|| cannot_encode(value, column))?, false)
        }
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => put_time(out, &time_of(value).ok_or_else(|| cannot_encode(value, column))?),
        MYSQL_TYPE_NULL => return Err(cannot_encode(value, column)),
        // Strings, blobs, DECIMAL, JSON, BIT, ENUM, SET, GEOMETRY: the text
        // form, length-encoded, as in the text protocol.
        _ => match value {
            Value::Bytes(bytes) => out.put_lenenc_str(bytes),
            other => out.put_lenenc_str(&other.to_text(column.decimals).unwrap_or_default()),
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::constants::ColumnFlags;
    use mysql_common::value::{BinValue, ValueDeserializer};

    fn decode_with_mysql_common(column_type: ColumnType, flags: ColumnFlags, bytes: &[u8]) -> mysql_common::Value {
        let decoded: ValueDeserializer<BinValue> = ParseBuf(bytes).parse((column_type, flags)).unwrap();
        decoded.0
    }

    #[test]
    fn binary_values_decode_with_mysql_common() {
        use mysql_common::Value as M;
        let cases: Vec<(ColumnDefinition, Value, M)> = vec![
            (ColumnDefinition::new("t", ColumnType::MYSQL_TYPE_TINY), Value::Int(-5), M::Int(-5)),
            (
                ColumnDefinition::new("s", ColumnType::MYSQL_TYPE_SHORT).with_flags(ColumnFlags::UNSIGNED_FLAG),
                Value::Bytes(b"65535".to_vec()),
                M::Int(65535),
            ),
            (ColumnDefinition::new("l", ColumnType::MYSQL_TYPE_LONG), Value::Int(-70000), M::Int(-70000)),
            (ColumnDefinition::bigint("b"), Value::Int(i64::MIN), M::Int(i64::MIN)),
            (ColumnDefinition::bigint("u").with_flags(ColumnFlags::UNSIGNED_FLAG), Value::UInt(u64::MAX), M::UInt(u64::MAX)),
            (ColumnDefinition::new("f", ColumnType::MYSQL_TYPE_FLOAT), Value::Float(1.5), M::Float(1.5)),
            (ColumnDefinition::new("d", ColumnType::MYSQL_TYPE_DOUBLE), Value::Bytes(b"2.25".to_vec()), M::Double(2.25)),
            (ColumnDefinition::varchar("v"), Value::Int(42), M::Bytes(b"42".to_vec())),
            (
                ColumnDefinition::new("dt", ColumnType::MYSQL_TYPE_DATETIME),
                Value::Bytes(b"2024-01-02 03:04:05.000006".to_vec()),
                M::Date(2024, 1, 2, 3, 4, 5, 6),
            ),
            (
                ColumnDefinition::new("da", ColumnType::MYSQL_TYPE_DATE),
                Value::DateTime(DateTime::date(2024, 1, 2)),
                M::Date(2024, 1, 2, 0, 0, 0, 0),
            ),
            (ColumnDefinition::new("ti", ColumnType::MYSQL_TYPE_TIME), Value::Bytes(b"-25:00:01".to_vec()), M::Time(true, 1, 1, 0, 1, 0)),
        ];
        for (column, value, expected) in cases {
            let mut out = Vec::new();
            encode_binary_value(&value, &column, &mut out).unwrap();
            let decoded = decode_with_mysql_common(column.column_type, column.flags, &out);
            assert_eq!(decoded, expected, "{column:?}");
        }
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let tiny = ColumnDefinition::new("t", ColumnType::MYSQL_TYPE_TINY);
        assert!(encode_binary_value(&Value::Int(200), &tiny, &mut Vec::new()).is_err());
        let unsigned = tiny.clone().with_flags(ColumnFlags::UNSIGNED_FLAG);
        assert!(encode_binary_value(&Value::Int(200), &unsigned, &mut Vec::new()).is_ok());
        assert!(encode_binary_value(&Value::Int(-1), &unsigned, &mut Vec::new()).is_err());
        assert!(encode_binary_value(&Value::Bytes(b"x".to_vec()), &tiny, &mut Vec::new()).is_err());
    }

    #[test]
    fn row_null_bitmap_starts_at_bit_two() {
        let columns: Vec<ColumnDefinition> = (0..7).map(|i| ColumnDefinition::bigint(format!("c{i}"))).collect();
        let mut row = vec![Value::Null; 7];
        row[0] = Value::Int(1);
        let mut out = Vec::new();
        encode_binary_row(&columns, &row, &mut out).unwrap();
        // 0x00, bitmap of (7 + 9) / 8 = 2 bytes, one 8-byte value.
        assert_eq!(out.len(), 1 + 2 + 8);
        assert_eq!(out[1], 0b1111_1000);
        assert_eq!(out[2], 0b0000_0001);
    }

    #[test]
    fn parameters_decode_by_declared_type() {
        let int = ParameterType { column_type: ColumnType::MYSQL_TYPE_LONGLONG, unsigned: false };
        let mut buf = ParseBuf(&[0xFF; 8]);
        assert_eq!(decode_parameter(&mut buf, int).unwrap(), Value::Int(-1));
        let tiny = ParameterType { column_type: ColumnType::MYSQL_TYPE_TINY, unsigned: true };
        assert_eq!(decode_parameter(&mut ParseBuf(&[0xFF]), tiny).unwrap(), Value::UInt(255));
        let date = ParameterType { column_type: ColumnType::MYSQL_TYPE_DATETIME, unsigned: false };
        let bytes = [7, 0xE8, 0x07, 1, 2, 3, 4, 5];
        assert_eq!(
            decode_parameter(&mut ParseBuf(&bytes), date).unwrap(),
            Value::DateTime(DateTime { year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5, microsecond: 0 })
        );
        let text = ParameterType { column_type: ColumnType::MYSQL_TYPE_VAR_STRING, unsigned: false };
        assert!(decode_parameter(&mut ParseBuf(&[5, b'a']), text).is_err());
        assert!(decode_parameter(&mut ParseBuf(&[9, 0, 0]), date).is_err());
        assert!(ParameterType::from_wire(0x42, 0).is_err());
    }
}
