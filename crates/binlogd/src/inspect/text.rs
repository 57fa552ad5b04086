//! mysqlbinlog-style text: `# at <pos>`, the `#<date> server id ...` line,
//! then what the event means, with `-vv`'s `###` pseudo-SQL for rows.

use std::io::{self, Write};

use binlog_format::constants::LOG_EVENT_BINLOG_IN_USE_F;
use binlog_format::events::gtid::FLAG_MAY_HAVE_SBR;
use binlog_format::events::transaction_payload::FIELD_UNCOMPRESSED_SIZE;
use binlog_format::events::{AfterValue, GtidEvent, JsonDiff, JsonDiffOperation, PartialUpdateRowsEvent, QueryEvent, StatusVar};
use binlog_format::value::json::Json;
use binlog_format::{Event, EventType, RowChange, RowsEvent, RowsKind, RowsVersion, TableMap, Value};

use super::mariadb::{self, MariadbEvent};
use super::record::{EventRecord, Extra, TargetCheck};
use super::rows;
use super::time::{long_datetime_us, short_datetime};
use super::Render;

/// Bytes of an undecoded event's body shown in hex.
const UNKNOWN_BODY_HEX_BYTES_MAX: usize = 64;

#[derive(Default)]
pub struct TextRenderer {}

impl Render for TextRenderer {
    fn file_start(&mut self, out: &mut dyn Write, file: &str) -> io::Result<()> {
        writeln!(out, "# binlogd inspect: {file}")?;
        writeln!(out, "DELIMITER /*!*/;")
    }

    fn payload_start(&mut self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "# Start of compressed events!")
    }

    fn payload_end(&mut self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "# End of compressed events!")
    }

    fn event(&mut self, out: &mut dyn Write, record: &EventRecord<'_>) -> io::Result<()> {
        let header = &record.header;
        writeln!(out, "# at {}", record.offset)?;
        write!(out, "#{} server id {}  end_log_pos {} ", short_datetime(header.timestamp as u64), header.server_id, header.log_pos)?;
        if let Some(crc) = record.checksum {
            write!(out, "CRC32 {crc:#010x} ")?;
        }
        match record.event {
            Event::FormatDescription(format) => {
                write!(out, "\tStart: binlog v {}, server v {}", format.binlog_version, format.server_version)?;
                if format.create_timestamp != 0 {
                    write!(out, " created {} at startup", short_datetime(format.create_timestamp as u64))?;
                }
                writeln!(out)?;
                let algorithm = format.checksum_name();
                let in_use = header.flags & LOG_EVENT_BINLOG_IN_USE_F != 0;
                writeln!(
                    out,
                    "# binlog_checksum={algorithm} ({}), in use={}, post-header lengths for {} event types",
                    format.checksum_alg,
                    if in_use { "yes" } else { "no" },
                    format.post_header_lengths.len()
                )?;
                if in_use {
                    writeln!(out, "# Warning: this binlog is either in use or was not closed properly.")?;
                }
            }
            Event::PreviousGtids(set) => {
                writeln!(out, "\tPrevious-GTIDs")?;
                if set.is_empty() {
                    writeln!(out, "# [empty]")?;
                } else {
                    writeln!(out, "# {set}")?;
                }
            }
            Event::Gtid(gtid) => write_gtid(out, gtid, false)?,
            Event::AnonymousGtid(gtid) => write_gtid(out, gtid, true)?,
            Event::Query(query) => write_query(out, header.timestamp, query)?,
            Event::Xid(xid) => {
                writeln!(out, "\tXid = {}", xid.xid)?;
                writeln!(out, "COMMIT/*!*/;")?;
            }
            Event::Rotate(rotate) => {
                writeln!(out, "\tRotate to {}  pos: {}", rotate.next_file, rotate.position)?;
            }
            Event::Stop => writeln!(out, "\tStop")?,
            Event::Heartbeat(heartbeat) => {
                writeln!(out, "\tHeartbeat\tlog_file={}\tlog_pos={}", heartbeat.log_file, header.log_pos)?;
            }
            Event::RowsQuery(rows_query) => {
                writeln!(out, "\tRows_query")?;
                for line in String::from_utf8_lossy(&rows_query.query).lines() {
                    writeln!(out, "# {line}")?;
                }
            }
            Event::LargeTransactionHeader(lth) => {
                writeln!(
                    out,
                    "\tLarge_transaction_header\tversion={}\tterminating_event_offset={}\tterminating_event_type={} ({})\tpadding={}",
                    lth.version,
                    lth.terminating_event_offset,
                    EventType::name_of(lth.terminating_event_type),
                    lth.terminating_event_type,
                    lth.padding_length
                )?;
                if let Extra::Terminating(check) = &record.extra {
                    write_target_check(out, lth.terminating_event_offset, lth.terminating_event_type, check)?;
                }
            }
            Event::TransactionPayload(payload) => {
                let uncompressed = payload.field(FIELD_UNCOMPRESSED_SIZE).ok().flatten().unwrap_or(payload.payload.len() as u64);
                writeln!(
                    out,
                    "\tTransaction_Payload\tpayload_size={}\tcompression_type={}\tuncompressed_size={uncompressed}",
                    payload.payload.len(),
                    payload.compression_name()
                )?;
            }
            // The driver shows the plain event inside instead.
            Event::MariadbCompressed(compressed) => write_undecoded(out, header.event_type, &compressed.body)?,
            Event::TableMap(table) => write_table_map(out, table)?,
            Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => write_rows(out, rows, &record.extra)?,
            Event::PartialUpdateRows(partial) => write_partial_rows(out, partial, &record.extra)?,
            // As mysqlbinlog prints them.
            Event::Incident(incident) => {
                writeln!(out)?;
                writeln!(out, "# Incident: {}", incident.incident_name())?;
                writeln!(out, "RELOAD DATABASE; # Shall generate syntax error")?;
                if !incident.message.is_empty() {
                    writeln!(out, "# message: {}", String::from_utf8_lossy(&incident.message))?;
                }
            }
            Event::ViewChange(view) => {
                writeln!(out, "\tView_change_log_event: view_id={}", view.view_id_text())?;
                writeln!(out, "# seq_number={} certification_info_entries={}", view.seq_number, view.certification_info.len())?;
            }
            Event::XaPrepare(prepare) => {
                let xid = prepare.xid_text();
                writeln!(out, "\tXA PREPARE {xid}")?;
                if prepare.one_phase {
                    writeln!(out, "XA COMMIT {xid} ONE PHASE")?;
                } else {
                    writeln!(out, "XA PREPARE {xid}")?;
                }
                writeln!(out, "/*!*/;")?;
            }
            Event::HeartbeatV2(heartbeat) => {
                write!(out, "\tHeartbeat_v2\tlog_file={}", String::from_utf8_lossy(&heartbeat.log_filename))?;
                if let Some(position) = heartbeat.log_position {
                    write!(out, "\tlog_pos={position}")?;
                }
                writeln!(out)?;
            }
            Event::Ignorable { body } => write_undecoded(out, header.event_type, body)?,
            Event::MariadbGtid(_) | Event::GtidList(_) | Event::BinlogCheckpoint(_) | Event::AnnotateRows(_) => {
                match mariadb::from_event(record.event, header.server_id) {
                    Some(event) => write_mariadb(out, &event)?,
                    None => writeln!(out, "\t{}", record.event.type_name())?,
                }
            }
            Event::Unknown { event_type, body } => write_undecoded(out, *event_type, body)?,
            #[allow(unreachable_patterns)]
            other => writeln!(out, "\t{}", other.type_name())?,
        }
        Ok(())
    }

    fn file_end(&mut self, out: &mut dyn Write, _file: &str, complete: bool) -> io::Result<()> {
        writeln!(out, "DELIMITER ;")?;
        if complete {
            writeln!(out, "# End of log file")?;
        } else {
            writeln!(out, "# Stopped before the end of the log file")?;
        }
        Ok(())
    }
}

fn write_gtid(out: &mut dyn Write, gtid: &GtidEvent, anonymous: bool) -> io::Result<()> {
    let original = gtid.original_commit_timestamp();
    let immediate = gtid.immediate_commit_timestamp_us;
    writeln!(
        out,
        "\t{}\tlast_committed={}\tsequence_number={}\trbr_only={}\toriginal_committed_timestamp={original}\timmediate_commit_timestamp={immediate}\ttransaction_length={}",
        if anonymous { "Anonymous_GTID" } else { "GTID" },
        gtid.last_committed,
        gtid.sequence_number,
        if gtid.flags & FLAG_MAY_HAVE_SBR == 0 { "yes" } else { "no" },
        gtid.transaction_length
    )?;
    if gtid.flags & FLAG_MAY_HAVE_SBR == 0 {
        writeln!(out, "/*!50718 SET TRANSACTION ISOLATION LEVEL READ COMMITTED*//*!*/;")?;
    }
    if original != 0 {
        writeln!(out, "# original_commit_timestamp={original} ({})", long_datetime_us(original))?;
    }
    if immediate != 0 {
        writeln!(out, "# immediate_commit_timestamp={immediate} ({})", long_datetime_us(immediate))?;
    }
    if original != 0 {
        writeln!(out, "/*!80001 SET @@session.original_commit_timestamp={original}*//*!*/;")?;
    }
    if gtid.immediate_server_version != 0 {
        let original_version = gtid.original_server_version.unwrap_or(gtid.immediate_server_version);
        writeln!(out, "/*!80014 SET @@session.original_server_version={original_version}*//*!*/;")?;
        writeln!(out, "/*!80014 SET @@session.immediate_server_version={}*//*!*/;", gtid.immediate_server_version)?;
    }
    if anonymous {
        writeln!(out, "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'/*!*/;")
    } else {
        writeln!(out, "SET @@SESSION.GTID_NEXT= '{}'/*!*/;", gtid.gtid)
    }
}

fn write_query(out: &mut dyn Write, timestamp: u32, query: &QueryEvent) -> io::Result<()> {
    writeln!(out, "\tQuery\tthread_id={}\texec_time={}\terror_code={}", query.thread_id, query.exec_time_s, query.error_code)?;
    if !query.database.is_empty() {
        writeln!(out, "use `{}`/*!*/;", String::from_utf8_lossy(&query.database))?;
    }
    let microseconds = query.status_vars.iter().find_map(|var| match var {
        StatusVar::Microseconds(us) => Some(*us),
        _ => None,
    });
    match microseconds {
        Some(us) => writeln!(out, "SET TIMESTAMP={timestamp}.{us:06}/*!*/;")?,
        None => writeln!(out, "SET TIMESTAMP={timestamp}/*!*/;")?,
    }
    for var in &query.status_vars {
        match var {
            StatusVar::SqlMode(mode) => writeln!(out, "SET @@session.sql_mode={mode}/*!*/;")?,
            StatusVar::AutoIncrement { increment, offset } => writeln!(
                out,
                "SET @@session.auto_increment_increment={increment}, @@session.auto_increment_offset={offset}/*!*/;"
            )?,
            StatusVar::Charset { client, connection, server } => writeln!(
                out,
                "/*!\\C */ SET @@session.character_set_client={client},@@session.collation_connection={connection},@@session.collation_server={server}/*!*/;"
            )?,
            StatusVar::TimeZone(zone) => {
                writeln!(out, "SET @@session.time_zone='{}'/*!*/;", String::from_utf8_lossy(zone))?
            }
            StatusVar::LcTimeNames(id) => writeln!(out, "SET @@session.lc_time_names={id}/*!*/;")?,
            StatusVar::CharsetDatabase(id) => writeln!(out, "SET @@session.collation_database={id}/*!*/;")?,
            StatusVar::Unparsed { code, rest } => {
                writeln!(out, "# status variable {code} and {} more bytes not decoded", rest.len())?
            }
            StatusVar::Invoker { user, host } => writeln!(
                out,
                "# invoker: '{}'@'{}'",
                String::from_utf8_lossy(user),
                String::from_utf8_lossy(host)
            )?,
            StatusVar::Flags2(_)
            | StatusVar::MasterDataWritten(_)
            | StatusVar::HrNow(_)
            | StatusVar::Xid(_)
            | StatusVar::GtidFlags3 { .. }
            | StatusVar::CatalogNz(_)
            | StatusVar::TableMapForUpdate(_)
            | StatusVar::UpdatedDbNames(_)
            | StatusVar::Microseconds(_) => {}
        }
    }
    out.write_all(&query.query)?;
    writeln!(out)?;
    writeln!(out, "/*!*/;")
}

fn write_target_check(out: &mut dyn Write, offset: u64, expected_type: u8, check: &TargetCheck) -> io::Result<()> {
    let expected = EventType::name_of(expected_type);
    match check {
        TargetCheck::Found(header) if header.event_type == expected_type => writeln!(
            out,
            "# terminating event: {expected} found at offset {offset} (end_log_pos {}, {} bytes)",
            header.log_pos, header.event_size
        ),
        TargetCheck::Found(header) => writeln!(
            out,
            "# terminating event: NOT FOUND: the event at offset {offset} is {} ({}), not {expected} ({expected_type})",
            EventType::name_of(header.event_type),
            header.event_type
        ),
        TargetCheck::Missing(reason) => {
            writeln!(out, "# terminating event: NOT FOUND: no valid event at offset {offset}: {reason}")
        }
    }
}

fn write_table_map(out: &mut dyn Write, table: &TableMap) -> io::Result<()> {
    writeln!(
        out,
        "\tTable_map: `{}`.`{}` mapped to number {}",
        String::from_utf8_lossy(&table.database),
        String::from_utf8_lossy(&table.table),
        table.table_id
    )?;
    for column in rows::columns(table) {
        write!(out, "#   @{}", column.number)?;
        if let Some(name) = &column.name {
            write!(out, " `{name}`")?;
        }
        write!(out, " {}", column.type_name)?;
        if column.unsigned {
            write!(out, " UNSIGNED")?;
        }
        write!(out, " meta={} nullable={}", column.meta, column.nullable as u8)?;
        if let Some(collation) = column.collation {
            write!(out, " collation={collation}")?;
        }
        writeln!(out)?;
    }
    if let Some(key) = table.primary_key() {
        let names = table.column_names();
        let parts: Vec<String> = key
            .iter()
            .map(|&index| match names.get(index as usize).copied().flatten() {
                Some(name) => String::from_utf8_lossy(name).into_owned(),
                None => format!("@{}", index + 1),
            })
            .collect();
        writeln!(out, "# Primary Key({})", parts.join(", "))?;
    }
    Ok(())
}

fn write_rows(out: &mut dyn Write, rows: &RowsEvent, extra: &Extra) -> io::Result<()> {
    // mysqlbinlog's names; MySQL 5.1's pre-GA events print as `_old`.
    let name = match (rows.kind, rows.version) {
        (RowsKind::Write, RowsVersion::V0) => "Write_rows_old",
        (RowsKind::Update, RowsVersion::V0) => "Update_rows_old",
        (RowsKind::Delete, RowsVersion::V0) => "Delete_rows_old",
        (RowsKind::Write, _) => "Write_rows",
        (RowsKind::Update, _) => "Update_rows",
        (RowsKind::Delete, _) => "Delete_rows",
    };
    write_rows_header(out, name, rows, rows.kind == RowsKind::Update)?;
    let Extra::Rows(context) = extra else { return Ok(()) };
    let decoded = match context.decoded(rows) {
        Ok(Some(decoded)) => decoded,
        Err(error) => return writeln!(out, "# rows not decoded: {error}"),
        Ok(None) => return Ok(()),
    };
    let qualified = decoded.qualified_name();
    let columns = &decoded.columns;
    for change in decoded.rows {
        match change {
            RowChange::Write(after) => {
                writeln!(out, "### INSERT INTO {qualified}")?;
                writeln!(out, "### SET")?;
                write_image(out, columns, &decoded.present_after, after)?;
            }
            RowChange::Update { before, after } => {
                writeln!(out, "### UPDATE {qualified}")?;
                writeln!(out, "### WHERE")?;
                write_image(out, columns, &decoded.present_before, before)?;
                writeln!(out, "### SET")?;
                write_image(out, columns, &decoded.present_after, after)?;
            }
            RowChange::Delete(before) => {
                writeln!(out, "### DELETE FROM {qualified}")?;
                writeln!(out, "### WHERE")?;
                write_image(out, columns, &decoded.present_before, before)?;
            }
        }
    }
    Ok(())
}

/// A rows event's first lines: its name, table id and flags, then its
/// extra row info (`two_partitions` as [`write_extra_row_info`] takes it).
fn write_rows_header(out: &mut dyn Write, name: &str, rows: &RowsEvent, two_partitions: bool) -> io::Result<()> {
    write!(out, "\t{name}: table id {}", rows.table_id)?;
    let flags = rows_flag_names(rows.flags);
    if !flags.is_empty() {
        write!(out, " flags: {}", flags.join(" "))?;
    }
    writeln!(out)?;
    write_extra_row_info(out, rows, two_partitions)
}

/// `###   @1=value /* TYPE meta=N nullable=N is_null=N */`, or the
/// column's name instead of `@1` when the table map carries names.
fn write_image(out: &mut dyn Write, columns: &[rows::ColumnInfo], present: &[usize], values: &[Value]) -> io::Result<()> {
    for (&index, value) in present.iter().zip(values) {
        let column = &columns[index];
        write_value_line(out, column, &rows::value_text(column, value), *value == Value::Null)?;
    }
    Ok(())
}

fn write_value_line(out: &mut dyn Write, column: &rows::ColumnInfo, text: &str, is_null: bool) -> io::Result<()> {
    writeln!(
        out,
        "###   {}={text} /* {}{} meta={} nullable={} is_null={} */",
        column.label(),
        column.type_name,
        if column.unsigned { " UNSIGNED" } else { "" },
        column.meta,
        column.nullable as u8,
        is_null as u8
    )
}

/// mysqlbinlog -v's lines for a rows event v2's extra data. An Update's
/// partition line names both partitions; MySQL prints a
/// Partial_update_rows' as a single partition (`two_partitions` false).
fn write_extra_row_info(out: &mut dyn Write, rows: &RowsEvent, two_partitions: bool) -> io::Result<()> {
    let info = match rows.extra_row_info() {
        Ok(info) => info,
        Err(error) => return writeln!(out, "# extra row info not decoded: {error}"),
    };
    if let Some(ndb) = &info.ndb {
        let data: String = ndb.data.iter().map(|b| format!("{b:02X}")).collect();
        writeln!(out, "### Extra row ndb info: data_format: {}, len: {}, data: 0x{data}", ndb.format, ndb.data.len())?;
    }
    if let Some(partition) = info.partition {
        match partition.source_partition_id.filter(|_| two_partitions) {
            Some(source) => writeln!(
                out,
                "### Extra row info for partitioning: source_partition: {source} target_partition: {}",
                partition.partition_id
            )?,
            None => writeln!(out, "### Extra row info for partitioning: partition: {}", partition.partition_id)?,
        }
    }
    Ok(())
}

/// A Partial_update_rows event as mysqlbinlog -vv prints it: a partial
/// JSON column as the JSON_REPLACE/JSON_INSERT/JSON_REMOVE calls that
/// turn its old value into the new one.
fn write_partial_rows(out: &mut dyn Write, partial: &PartialUpdateRowsEvent, extra: &Extra) -> io::Result<()> {
    let rows = &partial.rows;
    write_rows_header(out, "Update_rows_partial", rows, false)?;
    let Extra::PartialRows(context) = extra else { return Ok(()) };
    let decoded = match context.decoded(rows) {
        Ok(Some(decoded)) => decoded,
        Err(error) => return writeln!(out, "# rows not decoded: {error}"),
        Ok(None) => return Ok(()),
    };
    let qualified = decoded.qualified_name();
    let columns = &decoded.columns;
    for update in decoded.rows {
        writeln!(out, "### UPDATE {qualified}")?;
        writeln!(out, "### WHERE")?;
        write_image(out, columns, &decoded.present_before, &update.before)?;
        writeln!(out, "### SET")?;
        for (&index, value) in decoded.present_after.iter().zip(&update.after) {
            let column = &columns[index];
            match value {
                AfterValue::Full(value) => write_value_line(out, column, &rows::value_text(column, value), *value == Value::Null)?,
                AfterValue::Diffs(diffs) => write_value_line(out, column, &json_diff_text(&column.label(), diffs), false)?,
            }
        }
    }
    Ok(())
}

/// MySQL's `print_json_diff`: consecutive diffs of one operation share a
/// call, nested outermost-last, one call per line:
/// `JSON_INSERT(\n###      JSON_REPLACE(@2, '$.a', 2),\n###      '$.b', 3)`.
pub fn json_diff_text(column: &str, diffs: &[JsonDiff]) -> String {
    const LINE_SEPARATOR: &str = "\n###      ";
    let names: Vec<&str> = diffs.iter().map(|diff| diff.operation.function_name(&diff.path)).collect();
    let mut text = String::new();
    for i in (0..names.len()).rev() {
        if i == 0 || names[i - 1] != names[i] {
            if !text.is_empty() {
                text.push_str(LINE_SEPARATOR);
            }
            text.push_str(names[i]);
            text.push('(');
        }
    }
    text.push_str(column);
    if diffs.is_empty() {
        return text;
    }
    text.push_str(", ");
    for (i, diff) in diffs.iter().enumerate() {
        text.push_str(&rows::quote(&diff.path));
        if diff.operation != JsonDiffOperation::Remove {
            text.push_str(", ");
            text.push_str(&json_diff_value_text(diff));
        }
        let last = i + 1 == diffs.len();
        if last || names[i + 1] != names[i] {
            text.push(')');
        }
        if !last {
            text.push(',');
            text.push_str(LINE_SEPARATOR);
        }
    }
    text
}

/// A diff's value as an SQL argument: scalars bare, strings and temporal
/// values quoted, arrays and objects cast to JSON.
fn json_diff_value_text(diff: &JsonDiff) -> String {
    match diff.document() {
        None => String::new(),
        Some(Err(error)) => format!("(invalid JSON: {error})"),
        Some(Ok(document)) => {
            let text = document.to_string();
            match document {
                Json::Null | Json::Bool(_) | Json::Int(_) | Json::UInt(_) | Json::Double(_) | Json::Decimal(_) => text,
                Json::String(_) | Json::Temporal(_) | Json::Opaque { .. } => rows::quote(text.as_bytes()),
                Json::Array(_) | Json::Object(_) => format!("CAST({} AS JSON)", rows::quote(text.as_bytes())),
            }
        }
    }
}

/// Indexes of the columns whose bit is set in an image's column bitmap.
pub fn present(bitmap: &[u8], column_count: usize) -> Vec<usize> {
    (0..column_count).filter(|&i| bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)).collect()
}

pub fn rows_flag_names(flags: u16) -> Vec<&'static str> {
    use binlog_format::events::rows::rows_flags::*;
    let mut names = Vec::new();
    for (bit, name) in [
        (STMT_END_F, "STMT_END_F"),
        (NO_FOREIGN_KEY_CHECKS_F, "NO_FOREIGN_KEY_CHECKS_F"),
        (RELAXED_UNIQUE_CHECKS_F, "RELAXED_UNIQUE_CHECKS_F"),
        (COMPLETE_ROWS_F, "COMPLETE_ROWS_F"),
    ] {
        if flags & bit != 0 {
            names.push(name);
        }
    }
    names
}

fn write_undecoded(out: &mut dyn Write, event_type: u8, body: &[u8]) -> io::Result<()> {
    writeln!(out, "\t{} (event type {event_type}, {} body bytes, not decoded)", EventType::name_of(event_type), body.len())?;
    if !body.is_empty() {
        let shown = &body[..body.len().min(UNKNOWN_BODY_HEX_BYTES_MAX)];
        let ellipsis = if shown.len() < body.len() { " ..." } else { "" };
        writeln!(out, "# body: {}{ellipsis}", hex(shown))?;
    }
    Ok(())
}

/// As mariadb-binlog prints them.
fn write_mariadb(out: &mut dyn Write, event: &MariadbEvent) -> io::Result<()> {
    match event {
        MariadbEvent::Gtid { gtid, commit_id, .. } => {
            let standalone = event.is_standalone();
            write!(out, "\tGTID {gtid}{}", if standalone { " ddl" } else { " trans" })?;
            if let Some(commit_id) = commit_id {
                write!(out, " cid={commit_id}")?;
            }
            writeln!(out)?;
            writeln!(out, "/*!100001 SET @@session.gtid_domain_id={}*//*!*/;", gtid.domain_id)?;
            writeln!(out, "/*!100001 SET @@session.server_id={}*//*!*/;", gtid.server_id)?;
            writeln!(out, "/*!100001 SET @@session.gtid_seq_no={}*//*!*/;", gtid.seq_no)?;
            if !standalone {
                writeln!(out, "START TRANSACTION\n/*!*/;")?;
            }
        }
        MariadbEvent::GtidList(list) => {
            let list: Vec<String> = list.iter().map(ToString::to_string).collect();
            writeln!(out, "\tGtid list [{}]", list.join(",\n# "))?;
        }
        MariadbEvent::BinlogCheckpoint(name) => writeln!(out, "\tBinlog checkpoint {name}")?,
        MariadbEvent::AnnotateRows(query) => {
            writeln!(out, "\tAnnotate_rows:")?;
            for line in query.lines() {
                writeln!(out, "#Q> {line}")?;
            }
        }
    }
    Ok(())
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
