//! `BINLOG '<base64>'`: the statement `mysqlbinlog` and `mariadb-binlog`
//! print for each row event group, so their output replays through a
//! client (MySQL's `mysql_client_binlog_statement`, sql/sql_binlog.cc).
//!
//! The text is base64 of one or more whole events, possibly in several
//! chunks each ending in its own padding. A Format_description sets the
//! session's format (checksums, post-header lengths) for this and later
//! BINLOG statements; Table_map and Write/Update/Delete_rows events (and
//! MySQL's Partial_update_rows) then
//! apply as the replica's applier applies them (`ReplicatedRows`), inside
//! the session's transaction, so binlogd logs the rows again as a normal
//! transaction (with the GTID `SET gtid_next` gave, if any). Table maps
//! last until the rows event that ends their statement (`STMT_END_F`),
//! which may come in a later BINLOG statement.
//!
//! | input | answer |
//! |-------|--------|
//! | not base64 | 1575 ER_BASE64_DECODE_ERROR |
//! | empty, or an event cut short or undecodable | 1149 ER_SYNTAX_ERROR |
//! | a non-FDE event before any Format_description | 1609 ER_NO_FORMAT_DESCRIPTION_EVENT_BEFORE_BINLOG_STATEMENT |
//! | an event other than FDE, Table_map or rows | 1730 ER_ONLY_FD_AND_RBR_EVENTS_ALLOWED_IN_BINLOG_STATEMENT |
//! | a row that does not apply | the replica applier's error (1032, 1062, 1146, ...) |
//!
//! Every event is decoded before any row applies, and the rows apply as
//! one statement of the session's transaction: a refused statement
//! changes nothing.

use base64::Engine as _;
use binlog_format::events::rows::rows_flags::STMT_END_F;
use binlog_format::events::DecodeContext;
use binlog_format::{Event, EventType, RawEvent};
use database::replicated_rows::{ApplyError, ReplicatedRows, SourcePosition};
use protocol::MysqlError;

use crate::error::SqlResult;
use crate::session::{Context, Outcome, Transactions};

/// The common header's event-length field: bytes 9..13 (`EVENT_LEN_OFFSET`).
const EVENT_LENGTH_OFFSET: usize = 9;

/// The log name MySQL's BINLOG statement puts in a row error's message
/// (its pseudo replica's relay position).
const REPLAY_LOG_NAME: &str = "FIRST";

/// What BINLOG statements leave for the session's next ones.
#[derive(Default)]
pub struct BinlogStatementState {
    /// The last Format_description given.
    format: Option<DecodeContext>,
    /// The table maps of the row statement being applied.
    tables: ReplicatedRows,
}

/// `BINLOG 'text'`.
pub fn execute(text: &str, context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let bytes = decode_base64(text)?;
    if bytes.is_empty() {
        return Err(syntax_error());
    }
    let events = decode_events(&bytes, &transaction.binlog_statement.format)?;
    let mut state = std::mem::take(transaction.binlog_statement);
    let result = apply(events, &mut state, context, transaction);
    if result.is_err() {
        // MySQL clears its pseudo replica's table maps after a failure.
        state.tables = ReplicatedRows::new();
    }
    *transaction.binlog_statement = state;
    result.map(|()| Outcome::ok())
}

/// One event of the statement, decoded, with where it ended in its file.
struct Decoded {
    event: Event,
    end_log_pos: u32,
}

/// Every event in `bytes`, decoded with the format in force at it.
fn decode_events(bytes: &[u8], session_format: &Option<DecodeContext>) -> SqlResult<Vec<Decoded>> {
    let mut format = session_format.clone();
    let mut events = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let length_field = rest.get(EVENT_LENGTH_OFFSET..EVENT_LENGTH_OFFSET + 4).ok_or_else(syntax_error)?;
        let length = u32::from_le_bytes(length_field.try_into().expect("four bytes")) as usize;
        if length > rest.len() || length <= EVENT_LENGTH_OFFSET + 4 {
            return Err(syntax_error());
        }
        let (event_bytes, next) = rest.split_at(length);
        rest = next;
        let event_type = event_bytes[4];
        let is_format = event_type == EventType::FormatDescription as u8;
        let has_checksum = match (&format, is_format) {
            (_, true) => false,
            (Some(context), false) => context.format.has_checksum(),
            (None, false) => return Err(no_format_description(event_type)),
        };
        let raw = RawEvent::parse(event_bytes, has_checksum).map_err(|_| syntax_error())?;
        let event = Event::decode(&raw, format.as_ref().unwrap_or(&DecodeContext::default())).map_err(|_| syntax_error())?;
        match &event {
            Event::FormatDescription(description) => format = Some(DecodeContext { format: description.clone() }),
            Event::TableMap(_) | Event::WriteRows(_) | Event::UpdateRows(_) | Event::DeleteRows(_) | Event::PartialUpdateRows(_) => {}
            _ => return Err(only_format_and_rows(event_type)),
        }
        events.push(Decoded { event, end_log_pos: raw.header.log_pos });
    }
    Ok(events)
}

/// Applies the decoded events: formats and table maps to the session,
/// rows to its transaction as one statement.
fn apply(
    events: Vec<Decoded>,
    state: &mut BinlogStatementState,
    context: &Context<'_>,
    transaction: &mut Transactions<'_>,
) -> SqlResult<()> {
    let has_rows = events.iter().any(|decoded| {
        matches!(decoded.event, Event::WriteRows(_) | Event::UpdateRows(_) | Event::DeleteRows(_) | Event::PartialUpdateRows(_))
    });
    if !has_rows {
        return apply_to(events, state, context, None);
    }
    transaction.write(context, |trx| apply_to(events, state, context, Some(trx)))
}

fn apply_to(
    events: Vec<Decoded>,
    state: &mut BinlogStatementState,
    context: &Context<'_>,
    mut trx: Option<&mut engine::Transaction>,
) -> SqlResult<()> {
    for Decoded { event, end_log_pos } in events {
        match event {
            Event::FormatDescription(format) => state.format = Some(DecodeContext { format }),
            Event::TableMap(map) => state.tables.table_map(context.db().catalog(), &map).map_err(apply_error)?,
            Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
                let trx = trx.as_deref_mut().expect("rows apply inside a transaction");
                let at = SourcePosition { log_file: REPLAY_LOG_NAME, end_log_pos: u64::from(end_log_pos) };
                state.tables.rows(trx, &rows, &at).map_err(apply_error)?;
                if rows.flags & STMT_END_F != 0 {
                    state.tables = ReplicatedRows::new();
                }
            }
            Event::PartialUpdateRows(partial) => {
                let trx = trx.as_deref_mut().expect("rows apply inside a transaction");
                let at = SourcePosition { log_file: REPLAY_LOG_NAME, end_log_pos: u64::from(end_log_pos) };
                state.tables.partial_update_rows(trx, &partial, &at).map_err(apply_error)?;
                if partial.rows.flags & STMT_END_F != 0 {
                    state.tables = ReplicatedRows::new();
                }
            }
            _ => unreachable!("decode_events lets only formats, table maps and rows through"),
        }
    }
    Ok(())
}

/// MySQL's base64 with whitespace anywhere and several padded chunks one
/// after another (MY_BASE64_DECODE_ALLOW_MULTIPLE_CHUNKS).
fn decode_base64(text: &str) -> SqlResult<Vec<u8>> {
    let compact: Vec<u8> = text.bytes().filter(|byte| !byte.is_ascii_whitespace()).collect();
    let mut decoded = Vec::with_capacity(compact.len() / 4 * 3);
    let mut rest = compact.as_slice();
    while !rest.is_empty() {
        // A chunk ends after its padding, or at the end of the text.
        let chunk_end = match rest.iter().position(|&byte| byte == b'=') {
            Some(first_pad) => first_pad + rest[first_pad..].iter().take_while(|&&byte| byte == b'=').count(),
            None => rest.len(),
        };
        let (chunk, next) = rest.split_at(chunk_end);
        base64::engine::general_purpose::STANDARD.decode_vec(chunk, &mut decoded).map_err(|_| base64_error())?;
        rest = next;
    }
    Ok(decoded)
}

/// MySQL's name of an event type, as its BINLOG errors print it.
fn event_type_name(event_type: u8) -> String {
    let name = match EventType::from_code(event_type) {
        Some(EventType::Query) => "Query",
        Some(EventType::Xid) => "Xid",
        Some(EventType::Rotate) => "Rotate",
        Some(EventType::Stop) => "Stop",
        Some(EventType::FormatDescription) => "Format_desc",
        Some(EventType::TableMap) => "Table_map",
        Some(EventType::WriteRows | EventType::WriteRowsV1) => "Write_rows",
        Some(EventType::UpdateRows | EventType::UpdateRowsV1) => "Update_rows",
        Some(EventType::DeleteRows | EventType::DeleteRowsV1) => "Delete_rows",
        Some(EventType::PartialUpdateRows) => "Update_rows_partial",
        Some(EventType::Gtid) => "Gtid",
        Some(EventType::AnonymousGtid) => "Anonymous_Gtid",
        Some(EventType::PreviousGtids) => "Previous_gtids",
        Some(EventType::RowsQuery) => "Rows_query",
        Some(EventType::TransactionPayload) => "Transaction_payload",
        _ => return format!("Unknown event type {event_type}"),
    };
    name.to_string()
}

/// 1575 ER_BASE64_DECODE_ERROR.
fn base64_error() -> MysqlError {
    MysqlError::new(1575, "HY000", "Decoding of base64 string failed")
}

/// 1149 ER_SYNTAX_ERROR: MySQL's answer to events it cannot read.
fn syntax_error() -> MysqlError {
    MysqlError::new(
        1149,
        "42000",
        "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use",
    )
}

/// 1609 ER_NO_FORMAT_DESCRIPTION_EVENT_BEFORE_BINLOG_STATEMENT.
fn no_format_description(event_type: u8) -> MysqlError {
    MysqlError::new(
        1609,
        "HY000",
        format!(
            "The BINLOG statement of type `{}` was not preceded by a format description BINLOG statement.",
            event_type_name(event_type)
        ),
    )
}

/// 1730 ER_ONLY_FD_AND_RBR_EVENTS_ALLOWED_IN_BINLOG_STATEMENT.
fn only_format_and_rows(event_type: u8) -> MysqlError {
    MysqlError::new(
        1730,
        "HY000",
        format!(
            "Only Format_description_log_event and row events are allowed in BINLOG statements (but {} was provided)",
            event_type_name(event_type)
        ),
    )
}

fn apply_error(error: ApplyError) -> MysqlError {
    let sqlstate = match error.code {
        1062 => "23000",
        1146 => "42S02",
        _ => "HY000",
    };
    MysqlError::new(error.code, sqlstate, error.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_takes_whitespace_and_several_padded_chunks() {
        assert_eq!(decode_base64("aGk=\naGVs\nbG8=").unwrap(), b"hihello");
        assert_eq!(decode_base64(" YWJj ").unwrap(), b"abc");
        assert_eq!(decode_base64("").unwrap(), b"");
        let error = decode_base64("a$b=").unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (1575, "Decoding of base64 string failed"));
    }

    #[test]
    fn events_need_a_format_description_first_and_whole_lengths() {
        // A Table_map header with no FDE before it.
        let mut event = vec![0u8; 19];
        event[4] = EventType::TableMap as u8;
        event[9..13].copy_from_slice(&19u32.to_le_bytes());
        let error = decode_events(&event, &None).err().unwrap();
        assert_eq!(
            (error.code, error.message.as_str()),
            (1609, "The BINLOG statement of type `Table_map` was not preceded by a format description BINLOG statement.")
        );
        // A length past the bytes given.
        event[9..13].copy_from_slice(&200u32.to_le_bytes());
        assert_eq!(decode_events(&event, &None).err().unwrap().code, 1149);
        assert_eq!(decode_events(&event[..10], &None).err().unwrap().code, 1149);
    }
}
