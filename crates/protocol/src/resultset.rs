//! Result sets: column definitions, rows, and how a statement's response is
//! put on the wire (column count, definitions, [EOF], rows, terminator), in
//! the text protocol (COM_QUERY) or the binary one (COM_STMT_EXECUTE).

use mysql_common::constants::{CapabilityFlags, ColumnFlags, ColumnType, StatusFlags};
use mysql_common::io::BufMutExt;

use crate::binary::encode_binary_row;
use crate::errors::{MysqlError, ProtocolError};
use crate::memory::{MemoryAccount, MemoryPart};
use crate::packet::PacketStream;
use crate::response::{write_err, write_terminator, OkResponse};
use crate::value::Value;

/// utf8mb4_general_ci: the server's default collation (MariaDB replicas do not
/// know MySQL 8's 255).
pub const UTF8MB4_GENERAL_CI: u16 = 45;
/// The `binary` character set of numbers, dates and blobs.
pub const BINARY_CHARSET: u16 = 63;

/// One column of a result set, as the column definition packet carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDefinition {
    pub schema: String,
    pub table: String,
    pub org_table: String,
    pub name: String,
    pub org_name: String,
    pub character_set: u16,
    /// Display width in bytes, used by clients to lay out tables.
    pub column_length: u32,
    pub column_type: ColumnType,
    pub flags: ColumnFlags,
    /// Digits after the point for numbers, fractional-second precision for
    /// temporal types, 31 for "not fixed" (FLOAT, DOUBLE, computed strings).
    pub decimals: u8,
}

impl ColumnDefinition {
    /// A column with MySQL's defaults for its type (character set, display
    /// width, flags, decimals), as for a computed expression.
    pub fn new(name: impl Into<String>, column_type: ColumnType) -> Self {
        use ColumnType::*;
        let binary_number = ColumnFlags::BINARY_FLAG | ColumnFlags::NUM_FLAG;
        let (character_set, column_length, flags, decimals) = match column_type {
            MYSQL_TYPE_TINY => (BINARY_CHARSET, 4, binary_number, 0),
            MYSQL_TYPE_SHORT => (BINARY_CHARSET, 6, binary_number, 0),
            MYSQL_TYPE_INT24 => (BINARY_CHARSET, 9, binary_number, 0),
            MYSQL_TYPE_LONG => (BINARY_CHARSET, 11, binary_number, 0),
            MYSQL_TYPE_LONGLONG => (BINARY_CHARSET, 20, binary_number, 0),
            MYSQL_TYPE_FLOAT => (BINARY_CHARSET, 12, binary_number, 31),
            MYSQL_TYPE_DOUBLE => (BINARY_CHARSET, 22, binary_number, 31),
            MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => (BINARY_CHARSET, 12, binary_number, 0),
            MYSQL_TYPE_YEAR => (BINARY_CHARSET, 4, binary_number | ColumnFlags::UNSIGNED_FLAG | ColumnFlags::ZEROFILL_FLAG, 0),
            MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => (BINARY_CHARSET, 10, ColumnFlags::BINARY_FLAG, 0),
            MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => (BINARY_CHARSET, 10, ColumnFlags::BINARY_FLAG, 0),
            MYSQL_TYPE_DATETIME | MYSQL_TYPE_DATETIME2 => (BINARY_CHARSET, 19, ColumnFlags::BINARY_FLAG, 0),
            MYSQL_TYPE_TIMESTAMP | MYSQL_TYPE_TIMESTAMP2 => (BINARY_CHARSET, 19, ColumnFlags::BINARY_FLAG | ColumnFlags::TIMESTAMP_FLAG, 0),
            MYSQL_TYPE_BLOB | MYSQL_TYPE_TINY_BLOB | MYSQL_TYPE_MEDIUM_BLOB | MYSQL_TYPE_LONG_BLOB => {
                (BINARY_CHARSET, 65_535, ColumnFlags::BINARY_FLAG | ColumnFlags::BLOB_FLAG, 0)
            }
            MYSQL_TYPE_JSON => (BINARY_CHARSET, u32::MAX, ColumnFlags::BINARY_FLAG | ColumnFlags::BLOB_FLAG, 0),
            MYSQL_TYPE_BIT => (BINARY_CHARSET, 1, ColumnFlags::UNSIGNED_FLAG, 0),
            MYSQL_TYPE_NULL => (BINARY_CHARSET, 0, ColumnFlags::BINARY_FLAG, 0),
            MYSQL_TYPE_GEOMETRY => (BINARY_CHARSET, u32::MAX, ColumnFlags::BINARY_FLAG | ColumnFlags::BLOB_FLAG, 0),
            // Strings: 255 characters of utf8mb4.
            _ => (UTF8MB4_GENERAL_CI, 1020, ColumnFlags::empty(), 0),
        };
        let name = name.into();
        ColumnDefinition {
            schema: String::new(),
            table: String::new(),
            org_table: String::new(),
            org_name: String::new(),
            name,
            character_set,
            column_length,
            column_type,
            flags,
            decimals,
        }
    }

    /// A string column computed by an expression (`SELECT @@version`).
    pub fn varchar(name: impl Into<String>) -> Self {
        let mut column = Self::new(name, ColumnType::MYSQL_TYPE_VAR_STRING);
        column.decimals = 31;
        column
    }

    /// A BIGINT column computed by an expression (`SELECT 1`).
    pub fn bigint(name: impl Into<String>) -> Self {
        Self::new(name, ColumnType::MYSQL_TYPE_LONGLONG)
    }

    /// Names the table the column comes from (schema, table and org_table).
    pub fn with_table(mut self, schema: impl Into<String>, table: impl Into<String>) -> Self {
        self.schema = schema.into();
        self.table = table.into();
        self.org_table = self.table.clone();
        self
    }

    pub fn with_org_name(mut self, org_name: impl Into<String>) -> Self {
        self.org_name = org_name.into();
        self
    }

    pub fn with_flags(mut self, flags: ColumnFlags) -> Self {
        self.flags |= flags;
        self
    }

    pub fn with_length(mut self, column_length: u32) -> Self {
        self.column_length = column_length;
        self
    }

    pub fn with_character_set(mut self, character_set: u16) -> Self {
        self.character_set = character_set;
        self
    }

    pub fn with_decimals(mut self, decimals: u8) -> Self {
        self.decimals = decimals;
        self
    }

    pub fn is_unsigned(&self) -> bool {
        self.flags.contains(ColumnFlags::UNSIGNED_FLAG)
    }

    /// The column definition packet (Protocol::ColumnDefinition41). Written
    /// by hand: mysql_common 0.38's `Column` serializer puts the column length
    /// before the character set (its deserializer, used by the tests as the
    /// oracle, reads them in the protocol's order).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.put_lenenc_str(b"def");
        out.put_lenenc_str(self.schema.as_bytes());
        out.put_lenenc_str(self.table.as_bytes());
        out.put_lenenc_str(self.org_table.as_bytes());
        out.put_lenenc_str(self.name.as_bytes());
        out.put_lenenc_str(self.org_name.as_bytes());
        // Length of the fixed-size fields that follow.
        out.push(0x0c);
        out.extend_from_slice(&self.character_set.to_le_bytes());
        out.extend_from_slice(&self.column_length.to_le_bytes());
        out.push(self.column_type as u8);
        out.extend_from_slice(&self.flags.bits().to_le_bytes());
        out.push(self.decimals);
        out.extend_from_slice(&[0, 0]);
    }
}

/// A whole result set held in memory. For large results use
/// [`QueryResponse::Stream`], which sends rows as they are produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<ColumnDefinition>,
    pub rows: Vec<Vec<Value>>,
    pub warnings: u16,
}

impl ResultSet {
    pub fn new(columns: Vec<ColumnDefinition>) -> Self {
        ResultSet { columns, rows: Vec::new(), warnings: 0 }
    }

    pub fn push_row(&mut self, row: Vec<Value>) {
        self.rows.push(row);
    }

    /// A row as the text protocol thinks of it: bytes or NULL per column.
    pub fn push_text_row(&mut self, row: Vec<Option<Vec<u8>>>) {
        self.rows.push(row.into_iter().map(Value::from).collect());
    }
}

/// The boxed row iterator of a streamed result set; it may borrow the
/// session.
pub type RowIterator<'a> = Box<dyn Iterator<Item = Result<Vec<Value>, MysqlError>> + 'a>;

/// A result set whose rows are produced while they are sent, so memory stays
/// bounded whatever the row count. An `Err` item ends the result set with
/// that error (the client sees the rows before it, then the ERR packet).
pub struct RowStream<'a> {
    pub columns: Vec<ColumnDefinition>,
    pub rows: RowIterator<'a>,
    pub warnings: u16,
}

/// What one statement answers.
pub enum QueryResponse<'a> {
    Ok(OkResponse),
    ResultSet(ResultSet),
    Stream(RowStream<'a>),
}

impl From<OkResponse> for QueryResponse<'_> {
    fn from(ok: OkResponse) -> Self {
        QueryResponse::Ok(ok)
    }
}

impl From<ResultSet> for QueryResponse<'_> {
    fn from(result_set: ResultSet) -> Self {
        QueryResponse::ResultSet(result_set)
    }
}

/// Which row format a result set uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowEncoding {
    Text,
    Binary,
}

/// What remains to send after a response's body: the packet that carries the
/// final status flags, which are only known once the statement is done.
#[derive(Debug)]
pub(crate) enum Pending {
    Ok(OkResponse),
    EndOfRows {
        warnings: u16,
    },
    /// An ERR packet already ended the response.
    Failed,
}

/// Writes column count, definitions and (without DEPRECATE_EOF) their EOF.
pub(crate) fn write_columns(
    stream: &mut PacketStream,
    capabilities: CapabilityFlags,
    columns: &[ColumnDefinition],
    status: StatusFlags,
) -> Result<(), ProtocolError> {
    let mut buffer = Vec::with_capacity(16);
    buffer.put_lenenc_int(columns.len() as u64);
    stream.write_packet(&buffer)?;
    write_column_definitions(stream, columns, None)?;
    write_terminator(stream, capabilities, 0, status, false)
}

/// Writes one packet per definition; `default_value` appends COM_FIELD_LIST's
/// extra field.
pub(crate) fn write_column_definitions(
    stream: &mut PacketStream,
    columns: &[ColumnDefinition],
    default_value: Option<&[u8]>,
) -> Result<(), ProtocolError> {
    let mut buffer = Vec::with_capacity(128);
    for column in columns {
        buffer.clear();
        column.encode(&mut buffer);
        if let Some(default_value) = default_value {
            buffer.extend_from_slice(default_value);
        }
        stream.write_packet(&buffer)?;
    }
    Ok(())
}

/// Appends one value in the text protocol: length-encoded text, or 0xFB for
/// NULL.
fn append_text_value(out: &mut Vec<u8>, value: &Value, column: &ColumnDefinition) {
    use ColumnType::*;
    match value {
        Value::Null => out.push(0xFB),
        Value::Bytes(bytes) => out.put_lenenc_str(bytes),
        Value::DateTime(dt) => {
            let text = match column.column_type {
                MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => dt.to_text(false, 0),
                MYSQL_TYPE_DATETIME | MYSQL_TYPE_DATETIME2 | MYSQL_TYPE_TIMESTAMP | MYSQL_TYPE_TIMESTAMP2 => {
                    dt.to_text(true, column.decimals)
                }
                _ => dt.to_text(dt.has_time() || dt.microsecond != 0, 31),
            };
            out.put_lenenc_str(text.as_bytes());
        }
        other => {
            let text = numeric_text(other, column).unwrap_or_else(|| other.to_text(column.decimals).unwrap_or_default());
            out.put_lenenc_str(&text);
        }
    }
}

/// Decimals at or above this mean "not fixed" (MySQL's NOT_FIXED_DEC).
const NOT_FIXED_DECIMALS: u8 = 31;

/// The text of a number in a FLOAT(M,D) / DOUBLE(M,D) column (D decimals)
/// or a ZEROFILL column (zeros up to the display width), as mysqld's
/// text protocol sends them; `None` for any other value or column.
fn numeric_text(value: &Value, column: &ColumnDefinition) -> Option<Vec<u8>> {
    let zerofill = column.flags.contains(ColumnFlags::ZEROFILL_FLAG);
    let fixed_decimals = column.decimals < NOT_FIXED_DECIMALS;
    let text = match value {
        Value::Float(v) if fixed_decimals => format!("{:.*}", usize::from(column.decimals), v),
        Value::Double(v) if fixed_decimals => format!("{:.*}", usize::from(column.decimals), v),
        Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Double(_) if zerofill => {
            String::from_utf8(value.to_text(column.decimals)?).ok()?
        }
        _ => return None,
    };
    let width = usize::try_from(column.column_length).unwrap_or(0);
    Some(if zerofill && text.len() < width { format!("{}{text}", "0".repeat(width - text.len())).into_bytes() } else { text.into_bytes() })
}

pub(crate) fn encode_text_row(columns: &[ColumnDefinition], row: &[Value], out: &mut Vec<u8>) {
    for (value, column) in row.iter().zip(columns) {
        append_text_value(out, value, column);
    }
}

/// The bytes one row of values holds in memory.
fn row_bytes(row: &[Value]) -> usize {
    row.iter().map(|value| std::mem::size_of::<Value>() + if let Value::Bytes(bytes) = value { bytes.capacity() } else { 0 }).sum()
}

/// Writes the body of one statement's response and says what is left to
/// send. Rows whose width differs from the column count are refused with an
/// error rather than sent: a client would misread every row after it.
/// `memory` is told what the result holds as it goes: the rows of a whole
/// result not sent yet and the row buffer.
pub(crate) fn write_response_body(
    stream: &mut PacketStream,
    capabilities: CapabilityFlags,
    response: QueryResponse<'_>,
    encoding: RowEncoding,
    status: StatusFlags,
    memory: &MemoryAccount,
) -> Result<Pending, ProtocolError> {
    // Bytes of the whole result's rows still to send; a streamed result
    // holds only the row being written.
    let mut held_bytes = 0;
    let (columns, rows, warnings): (Vec<ColumnDefinition>, RowIterator<'_>, u16) = match response {
        QueryResponse::Ok(ok) => return Ok(Pending::Ok(ok)),
        QueryResponse::ResultSet(result_set) => {
            held_bytes = result_set.rows.iter().map(|row| row_bytes(row)).sum();
            (result_set.columns, Box::new(result_set.rows.into_iter().map(Ok)), result_set.warnings)
        }
        QueryResponse::Stream(stream) => (stream.columns, stream.rows, stream.warnings),
    };
    write_columns(stream, capabilities, &columns, status)?;
    let mut buffer = Vec::with_capacity(256);
    for row in rows {
        memory.set(MemoryPart::Result, held_bytes + buffer.capacity());
        if let Ok(row) = &row {
            held_bytes = held_bytes.saturating_sub(row_bytes(row));
        }
        let row = match row {
            Ok(row) if row.len() == columns.len() => row,
            Ok(row) => {
                let error = MysqlError::internal(format!("binlogd: a row of {} values for {} columns", row.len(), columns.len()));
                write_err(stream, &error, capabilities)?;
                return Ok(Pending::Failed);
            }
            Err(error) => {
                write_err(stream, &error, capabilities)?;
                return Ok(Pending::Failed);
            }
        };
        buffer.clear();
        match encoding {
            RowEncoding::Text => encode_text_row(&columns, &row, &mut buffer),
            RowEncoding::Binary => {
                if let Err(error) = encode_binary_row(&columns, &row, &mut buffer) {
                    write_err(stream, &error, capabilities)?;
                    return Ok(Pending::Failed);
                }
            }
        }
        // mysqld's net layer refuses a packet over max_allowed_packet, a
        // row too: the rows before it stay sent and 1153 ends the result.
        if buffer.len() > stream.max_allowed_packet_bytes() {
            write_err(stream, &MysqlError::packet_too_large(), capabilities)?;
            return Ok(Pending::Failed);
        }
        stream.write_packet(&buffer)?;
    }
    Ok(Pending::EndOfRows { warnings })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::io::ParseBuf;
    use mysql_common::packets::Column;

    #[test]
    fn column_definitions_decode_with_mysql_common() {
        let column = ColumnDefinition::new("k", ColumnType::MYSQL_TYPE_LONG)
            .with_table("sbtest", "sbtest1")
            .with_org_name("k")
            .with_flags(ColumnFlags::NOT_NULL_FLAG | ColumnFlags::MULTIPLE_KEY_FLAG);
        let mut bytes = Vec::new();
        column.encode(&mut bytes);
        let decoded: Column = ParseBuf(&bytes).parse(()).unwrap();
        assert_eq!(decoded.name_str(), "k");
        assert_eq!(decoded.schema_str(), "sbtest");
        assert_eq!(decoded.org_table_str(), "sbtest1");
        assert_eq!(decoded.column_type(), ColumnType::MYSQL_TYPE_LONG);
        assert_eq!(decoded.character_set(), BINARY_CHARSET);
        assert_eq!(decoded.column_length(), 11);
        assert!(decoded.flags().contains(ColumnFlags::NOT_NULL_FLAG | ColumnFlags::NUM_FLAG));
    }

    #[test]
    fn text_rows_are_length_encoded() {
        let columns =
            vec![ColumnDefinition::bigint("a"), ColumnDefinition::varchar("b"), ColumnDefinition::new("c", ColumnType::MYSQL_TYPE_DATE)];
        let row = vec![Value::Int(-1), Value::Null, Value::DateTime(crate::value::DateTime::date(2024, 5, 6))];
        let mut out = Vec::new();
        encode_text_row(&columns, &row, &mut out);
        assert_eq!(out, b"\x02-1\xfb\x0a2024-05-06");
    }
}
