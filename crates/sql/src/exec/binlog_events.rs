//! `SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] count]`:
//! MySQL's six columns, with the Info texts mysqld writes for each event
//! type, read through the binlog's file reader (bounded read-ahead; a
//! promoted large-transaction file reads like any other).

use binlog::BinlogError;
use binlog_format::constants::{EventType, LOG_EVENT_SUPPRESS_USE_F};
use binlog_format::events::{
    FormatDescription, GtidEvent, LargeTransactionHeaderEvent, QueryEvent, RotateEvent, RowsQueryEvent, TableMap, XidEvent,
};
use binlog_format::frame::RawEvent;
use binlog_format::GtidSet;
use protocol::{ColumnDefinition, MysqlError, ResultSet, Value as Wire};

use crate::error::{not_supported, SqlResult};
use crate::session::Context;

/// Rows one statement may return without LIMIT: the result is built in
/// memory, and a promoted file of a large transaction holds millions of
/// events.
pub const SHOW_BINLOG_EVENTS_ROWS_MAX: u64 = 1_000_000;

/// Rows events' flag: the last rows event of a statement.
const STMT_END_F: u16 = 1;

/// 1220 ER_ERROR_WHEN_EXECUTING_COMMAND.
fn command_error(reason: &str) -> MysqlError {
    MysqlError::new(1220, "HY000", format!("Error when executing command SHOW BINLOG EVENTS: {reason}"))
}

pub fn show_binlog_events(
    file: Option<&str>,
    from: Option<u64>,
    offset: u64,
    limit: Option<u64>,
    context: &Context<'_>,
) -> SqlResult<ResultSet> {
    context.db().wait_binlog_written().map_err(crate::error::database_error)?;
    let binlog = context.db().binlog_status();
    let name = match file {
        Some(name) => name.to_string(),
        None => binlog.file_names().into_iter().next().ok_or_else(|| command_error("Could not find target log"))?,
    };
    let mut reader = binlog.file_events(&name).map_err(|error| match error {
        BinlogError::LogNotFound => command_error("Could not find target log"),
        other => command_error(&other.to_string()),
    })?;
    let rows_max = limit.unwrap_or(SHOW_BINLOG_EVENTS_ROWS_MAX);
    let mut result = ResultSet::new(vec![
        ColumnDefinition::varchar("Log_name"),
        ColumnDefinition::bigint("Pos"),
        ColumnDefinition::varchar("Event_type"),
        ColumnDefinition::bigint("Server_id"),
        ColumnDefinition::bigint("End_log_pos"),
        ColumnDefinition::varchar("Info"),
    ]);
    // Positions below the magic number mean "from the start", as in mysqld.
    let start = from.unwrap_or(4).max(4);
    if start > 4 {
        // The first event tells whether the file's events carry checksums.
        reader.next_event().map_err(|error| command_error(&error.to_string()))?;
        if start >= reader.limit() {
            return Ok(result);
        }
        reader.seek(start);
    }
    let mut skipped = 0u64;
    let mut shown = 0u64;
    while shown < rows_max {
        let (position, raw) = match reader.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => break,
            // An offset inside an event reads as garbage (the checksum
            // catches it): mysqld's message for a wrong FROM.
            Err(_) if from.is_some_and(|f| f > 4) && shown == 0 && skipped == 0 => {
                return Err(command_error("Wrong offset or I/O error"));
            }
            Err(error) => return Err(command_error(&error.to_string())),
        };
        if skipped < offset {
            skipped += 1;
            continue;
        }
        let info = info(&raw).map_err(|error| command_error(&format!("at {position}: {error}")))?;
        result.push_row(vec![
            Wire::from(name.clone()),
            Wire::UInt(position),
            Wire::from(type_name(raw.header.event_type)),
            Wire::UInt(u64::from(raw.header.server_id)),
            Wire::UInt(u64::from(raw.header.log_pos)),
            Wire::from(info),
        ]);
        shown += 1;
    }
    if limit.is_none() && shown == rows_max && !matches!(reader.next_event(), Ok(None)) {
        return Err(not_supported(format!("SHOW BINLOG EVENTS of more than {SHOW_BINLOG_EVENTS_ROWS_MAX} events without LIMIT")));
    }
    Ok(result)
}

/// mysqld's `Log_event::get_type_str`.
fn type_name(code: u8) -> &'static str {
    match EventType::from_code(code) {
        Some(EventType::Query) => "Query",
        Some(EventType::Stop) => "Stop",
        Some(EventType::Rotate) => "Rotate",
        Some(EventType::FormatDescription) => "Format_desc",
        Some(EventType::Xid) => "Xid",
        Some(EventType::TableMap) => "Table_map",
        Some(EventType::WriteRows) => "Write_rows",
        Some(EventType::UpdateRows) => "Update_rows",
        Some(EventType::DeleteRows) => "Delete_rows",
        Some(EventType::PartialUpdateRows) => "Update_rows_partial",
        Some(EventType::Gtid) => "Gtid",
        Some(EventType::GtidTagged) => "Gtid_tagged",
        Some(EventType::AnonymousGtid) => "Anonymous_Gtid",
        Some(EventType::PreviousGtids) => "Previous_gtids",
        Some(EventType::RowsQuery) => "Rows_query",
        Some(EventType::Heartbeat) => "Heartbeat",
        Some(EventType::Ignorable) => "Ignorable",
        Some(EventType::LargeTransactionHeader) => "Large_transaction_header",
        _ => "Unknown",
    }
}

/// The Info column: what mysqld's `pack_info` writes for each type.
fn info(raw: &RawEvent<'_>) -> Result<String, binlog_format::DecodeError> {
    let body = raw.body;
    Ok(match EventType::from_code(raw.header.event_type) {
        Some(EventType::FormatDescription) => {
            let format = FormatDescription::decode_body(body)?;
            format!("Server ver: {}, Binlog ver: {}", format.server_version, format.binlog_version)
        }
        Some(EventType::PreviousGtids) => GtidSet::decode_previous_gtids_body(body)?.to_string(),
        Some(EventType::Gtid | EventType::GtidTagged) => {
            format!("SET @@SESSION.GTID_NEXT= '{}'", GtidEvent::decode_body_of_type(raw.header.event_type, body)?.gtid)
        }
        Some(EventType::AnonymousGtid) => "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'".to_string(),
        Some(EventType::Query) => {
            let query = QueryEvent::decode_body(body)?;
            let text = String::from_utf8_lossy(&query.query);
            let transaction_control = matches!(text.as_ref(), "BEGIN" | "COMMIT" | "ROLLBACK");
            if query.database.is_empty() || transaction_control || raw.header.flags & LOG_EVENT_SUPPRESS_USE_F != 0 {
                text.into_owned()
            } else {
                format!("use `{}`; {text}", String::from_utf8_lossy(&query.database).replace('`', "``"))
            }
        }
        Some(EventType::Xid) => format!("COMMIT /* xid={} */", XidEvent::decode_body(body)?.xid),
        Some(EventType::TableMap) => {
            let map = TableMap::decode_body(body)?;
            format!("table_id: {} ({}.{})", map.table_id, String::from_utf8_lossy(&map.database), String::from_utf8_lossy(&map.table))
        }
        Some(EventType::WriteRows | EventType::UpdateRows | EventType::DeleteRows | EventType::PartialUpdateRows) => {
            // Post-header: table id (6 bytes), flags (2); the rows need the
            // table map to decode and the Info shows none of them.
            if body.len() < 8 {
                return Err(binlog_format::DecodeError::Truncated { what: "rows event post-header", needed: 8, available: body.len() });
            }
            let mut id = [0u8; 8];
            id[..6].copy_from_slice(&body[..6]);
            let table_id = u64::from_le_bytes(id);
            let flags = u16::from_le_bytes([body[6], body[7]]);
            if flags & STMT_END_F != 0 {
                format!("table_id: {table_id} flags: STMT_END_F")
            } else {
                format!("table_id: {table_id}")
            }
        }
        Some(EventType::Rotate) => {
            let rotate = RotateEvent::decode_body(body)?;
            format!("{};pos={}", rotate.next_file, rotate.position)
        }
        Some(EventType::RowsQuery) => format!("# {}", String::from_utf8_lossy(&RowsQueryEvent::decode_body(body)?.query)),
        Some(EventType::LargeTransactionHeader) => {
            let header = LargeTransactionHeaderEvent::decode_body(body)?;
            format!(
                "version: {}, terminating event at {} ({})",
                header.version,
                header.terminating_event_offset,
                type_name(header.terminating_event_type)
            )
        }
        _ => String::new(),
    })
}
