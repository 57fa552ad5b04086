//! Files as servers older than MySQL 5.6 wrote them, laid out from MySQL's
//! `Format_description_log_event` and `Start_log_event_v3`: no server of
//! those versions is installed, so the bytes are built here.
//!
//! - A MySQL 5.5 file: its Format_description has no checksum algorithm
//!   byte and no checksum (the server predates `binlog_checksum`), and its
//!   transaction is a BEGIN Query, a Table_map, a Write_rows v1 (type 23)
//!   and an Xid, none with a checksum.
//! - The first event of a binlog version 3 (MySQL 4.x) or version 1
//!   (MySQL 3.23) file: a Start_event_v3 (type 1), whose header is 19
//!   bytes in version 3 and 13 in version 1.

use binlog_format::constants::{BINLOG_CHECKSUM_ALG_UNDEF, BINLOG_MAGIC, COMMON_HEADER_LENGTH};
use binlog_format::events::{FormatDescription, QueryEvent, XidEvent};
use binlog_format::file::WriterIdentity;
use binlog_format::{ColumnSpec, ColumnType, Event, EventType, RowsEvent, TableMap, Value};

use crate::{BinlogBuilder, SERVER_ID, TIMESTAMP};

/// The post-header lengths of MySQL 5.5's Format_description, types 1 to
/// 27 (Heartbeat): Start_v3 56, Query 13, Rotate 8, Load 18, the LOAD DATA
/// blocks 4, New_load 18, Format_description 84 (56 + 1 + 27),
/// Begin_load_query 4, Execute_load_query 26, Table_map 8 (6-byte table
/// ids), the pre-GA rows types 0, rows v1 8, Incident 2.
pub const MYSQL_55_POST_HEADER_LENGTHS: [u8; 27] = [56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0, 84, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0];

pub const MYSQL_55_VERSION: &str = "5.5.62-log";
pub const MYSQL_55_TABLE_ID: u64 = 33;

/// `test.t55` of the 5.5 file: an INT and a VARCHAR(20) in latin1.
pub fn mysql_55_columns() -> Vec<ColumnSpec> {
    vec![
        ColumnSpec { name: "id".into(), column_type: ColumnType::Long, nullable: false, unsigned: false, collation: 8 },
        ColumnSpec {
            name: "name".into(),
            column_type: ColumnType::VarChar { max_length_bytes: 20 },
            nullable: true,
            unsigned: false,
            collation: 8,
        },
    ]
}

/// The rows of the 5.5 file's one transaction.
pub fn mysql_55_rows() -> Vec<Vec<Value>> {
    vec![vec![Value::Int(1), Value::Bytes(b"old".to_vec())], vec![Value::Int(2), Value::Null]]
}

/// A whole MySQL 5.5 file: magic, Format_description without an algorithm
/// byte, one row transaction, a Stop event.
pub fn mysql_55_file() -> Vec<u8> {
    let identity = WriterIdentity { server_id: SERVER_ID, checksum: false };
    let mut builder = BinlogBuilder::magic_only(identity);
    let format = FormatDescription {
        binlog_version: 4,
        server_version: MYSQL_55_VERSION.to_string(),
        create_timestamp: TIMESTAMP,
        common_header_length: COMMON_HEADER_LENGTH as u8,
        post_header_lengths: MYSQL_55_POST_HEADER_LENGTHS.to_vec(),
        checksum_alg: BINLOG_CHECKSUM_ALG_UNDEF,
    };
    builder.push(&Event::FormatDescription(format), 0);
    // A 5.5 Table_map has no optional metadata: that came with 8.0.1.
    let mut table = TableMap::new(MYSQL_55_TABLE_ID, "test", "t55", &mysql_55_columns(), &[]).expect("a small table");
    table.optional_metadata.clear();
    let mut rows = RowsEvent::write(MYSQL_55_TABLE_ID, &table, &[]).expect("an empty rows event");
    for row in mysql_55_rows() {
        rows.push_write(&table, &row).expect("rows of the table's columns");
    }
    rows.version = binlog_format::RowsVersion::V1;
    rows.flags = 1; // STMT_END_F
    builder.push(&Event::Query(QueryEvent::new(3, "test", "BEGIN")), 0);
    builder.push(&Event::TableMap(table), 0);
    builder.push(&rows.into_event(), 0);
    builder.push(&Event::Xid(XidEvent { xid: 12 }), 0);
    builder.push(&Event::Stop, 0);
    builder.bytes
}

/// The magic and the Start_event_v3 a file of binlog `version` 1 or 3
/// begins with: binlog_version, a 50-byte server version, the creation
/// time, after a 13-byte (version 1) or 19-byte (version 3) header.
pub fn start_v3_file(version: u16) -> Vec<u8> {
    let server_version = if version == 1 { "3.23.58-log" } else { "4.1.22-log" };
    let mut body = version.to_le_bytes().to_vec();
    let mut padded = [0u8; 50];
    padded[..server_version.len()].copy_from_slice(server_version.as_bytes());
    body.extend_from_slice(&padded);
    body.extend_from_slice(&TIMESTAMP.to_le_bytes());
    let header_length = if version == 1 { 13 } else { COMMON_HEADER_LENGTH };
    let size = (header_length + body.len()) as u32;
    let mut out = BINLOG_MAGIC.to_vec();
    out.extend_from_slice(&TIMESTAMP.to_le_bytes());
    out.push(EventType::StartV3 as u8);
    out.extend_from_slice(&SERVER_ID.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    if version != 1 {
        out.extend_from_slice(&(4 + size).to_le_bytes()); // log_pos
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
    }
    out.extend_from_slice(&body);
    out
}
