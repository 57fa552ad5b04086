//! `--json`: one object per event and line.
//!
//! Every line has `file`, `position`, `end_log_pos`, `event_size`, `type`,
//! `type_code`, `timestamp`, `server_id`, `flags`, `crc32` (null without
//! checksums) and a type-specific `data` object. Rows events carry their
//! table, columns and rows: `{"after": {...}}` for an insert,
//! `{"before": {...}, "after": {...}}` for an update, `{"before": {...}}`
//! for a delete, each keyed by column name (`@N` without names), and the
//! extra row info of a v2 event (`partition_id`, an Update's
//! `source_partition_id`, `ndb_info`). A Partial_update_rows event's partial
//! JSON column is `{"json_diffs": [{"operation", "path", "value"}...]}`.

use std::io::{self, Write};

use binlog_format::constants::LOG_EVENT_BINLOG_IN_USE_F;
use binlog_format::events::gtid::FLAG_MAY_HAVE_SBR;
use binlog_format::events::transaction_payload::FIELD_UNCOMPRESSED_SIZE;
use binlog_format::events::{AfterValue, GtidEvent, PartialUpdateRowsEvent, QueryEvent, StatusVar};
use binlog_format::{Event, EventType, RowChange, RowsEvent, TableMap};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::mariadb::{self, MariadbEvent};
use super::record::{EventRecord, Extra, TargetCheck};
use super::rows;
use super::tables::{DecodedRows, RowsContext};
use super::text::{self, hex};
use super::Render;

/// Bytes of an undecoded event's body included in hex.
const UNKNOWN_BODY_HEX_BYTES_MAX: usize = 256;

pub struct JsonRenderer;

#[derive(Serialize)]
struct Line<'a> {
    file: &'a str,
    position: u64,
    end_log_pos: u32,
    event_size: u32,
    #[serde(rename = "type")]
    type_name: &'static str,
    type_code: u8,
    timestamp: u32,
    server_id: u32,
    flags: u16,
    crc32: Option<String>,
    data: Value,
}

impl Render for JsonRenderer {
    fn file_start(&mut self, _out: &mut dyn Write, _file: &str) -> io::Result<()> {
        Ok(())
    }

    fn event(&mut self, out: &mut dyn Write, record: &EventRecord<'_>) -> io::Result<()> {
        let header = &record.header;
        let line = Line {
            file: record.file,
            position: record.offset,
            end_log_pos: header.log_pos,
            event_size: header.event_size,
            type_name: EventType::name_of(header.event_type),
            type_code: header.event_type,
            timestamp: header.timestamp,
            server_id: header.server_id,
            flags: header.flags,
            crc32: record.checksum.map(|crc| format!("{crc:#010x}")),
            data: data(record),
        };
        serde_json::to_writer(&mut *out, &line).map_err(io::Error::from)?;
        out.write_all(b"\n")
    }

    fn file_end(&mut self, _out: &mut dyn Write, _file: &str, _complete: bool) -> io::Result<()> {
        Ok(())
    }
}

fn data(record: &EventRecord<'_>) -> Value {
    match record.event {
        Event::FormatDescription(format) => json!({
            "binlog_version": format.binlog_version,
            "server_version": format.server_version,
            "create_timestamp": format.create_timestamp,
            "checksum_alg": format.checksum_name(),
            "checksum_alg_code": format.checksum_alg,
            "in_use": record.header.flags & LOG_EVENT_BINLOG_IN_USE_F != 0,
            "post_header_lengths": format.post_header_lengths,
        }),
        Event::PreviousGtids(set) => json!({ "gtid_set": set.to_string() }),
        Event::Gtid(gtid) => gtid_data(gtid, false),
        Event::AnonymousGtid(gtid) => gtid_data(gtid, true),
        Event::Query(query) => query_data(query),
        Event::Xid(xid) => json!({ "xid": xid.xid }),
        Event::Rotate(rotate) => json!({ "next_file": rotate.next_file, "position": rotate.position }),
        Event::Stop => json!({}),
        Event::Heartbeat(heartbeat) => json!({ "log_file": heartbeat.log_file }),
        Event::RowsQuery(rows_query) => json!({ "query": String::from_utf8_lossy(&rows_query.query) }),
        Event::LargeTransactionHeader(lth) => {
            let mut data = json!({
                "version": lth.version,
                "terminating_event_offset": lth.terminating_event_offset,
                "terminating_event_type": EventType::name_of(lth.terminating_event_type),
                "terminating_event_type_code": lth.terminating_event_type,
                "padding_length": lth.padding_length,
            });
            if let Extra::Terminating(check) = &record.extra {
                let (found, detail) = match check {
                    TargetCheck::Found(header) if header.event_type == lth.terminating_event_type => (true, Value::Null),
                    TargetCheck::Found(header) => {
                        (false, json!(format!("the event there is {} ({})", EventType::name_of(header.event_type), header.event_type)))
                    }
                    TargetCheck::Missing(reason) => (false, json!(reason)),
                };
                data["terminating_event_found"] = json!(found);
                data["terminating_event_error"] = detail;
            }
            data
        }
        Event::TransactionPayload(payload) => json!({
            "payload_size": payload.payload.len(),
            "compression_type": payload.compression_name(),
            "uncompressed_size": payload.field(FIELD_UNCOMPRESSED_SIZE).ok().flatten(),
        }),
        // The driver shows the plain event inside instead.
        Event::MariadbCompressed(compressed) => undecoded(record.header.event_type, &compressed.body),
        Event::TableMap(table) => table_map_data(table),
        Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => rows_data(rows, &record.extra),
        Event::PartialUpdateRows(partial) => partial_rows_data(partial, &record.extra),
        Event::Incident(incident) => json!({
            "incident": incident.incident_name(),
            "incident_code": incident.incident,
            "message": String::from_utf8_lossy(&incident.message),
        }),
        Event::ViewChange(view) => json!({
            "view_id": view.view_id_text(),
            "seq_number": view.seq_number,
            "certification_info_entries": view.certification_info.len(),
        }),
        Event::XaPrepare(prepare) => json!({
            "xid": prepare.xid_text(),
            "one_phase": prepare.one_phase,
            "format_id": prepare.format_id,
            "gtrid_hex": hex(&prepare.gtrid),
            "bqual_hex": hex(&prepare.bqual),
        }),
        Event::HeartbeatV2(heartbeat) => json!({
            "log_file": String::from_utf8_lossy(&heartbeat.log_filename),
            "log_position": heartbeat.log_position,
        }),
        Event::Ignorable { body } => undecoded(record.header.event_type, body),
        Event::MariadbGtid(_) | Event::GtidList(_) | Event::BinlogCheckpoint(_) | Event::AnnotateRows(_) => {
            match mariadb::from_event(record.event, record.header.server_id) {
                Some(event) => mariadb_data(&event),
                None => json!({}),
            }
        }
        Event::Unknown { event_type, body } => undecoded(*event_type, body),
        #[allow(unreachable_patterns)]
        _ => json!({}),
    }
}

fn column_json(column: &rows::ColumnInfo) -> Value {
    json!({
        "index": column.number,
        "name": column.name,
        "type": column.type_name,
        "type_code": column.type_code,
        "meta": column.meta,
        "nullable": column.nullable,
        "unsigned": column.unsigned,
        "collation": column.collation,
    })
}

fn table_map_data(table: &TableMap) -> Value {
    json!({
        "table_id": table.table_id,
        "database": String::from_utf8_lossy(&table.database),
        "table": String::from_utf8_lossy(&table.table),
        "flags": table.flags,
        "columns": rows::columns(table).iter().map(column_json).collect::<Vec<_>>(),
        "primary_key": table.primary_key(),
    })
}

/// Rows as objects keyed by column name (`@N` when the table map has no
/// names); `columns` gives the order and types.
fn rows_data(event: &RowsEvent, extra: &Extra) -> Value {
    let Extra::Rows(context) = extra else { return rows_header(event) };
    table_rows_data(event, context, |decoded, change| {
        let image = |present: &[usize], values: &[binlog_format::Value]| image_json(&decoded.columns, present, values);
        match change {
            RowChange::Write(values) => json!({ "after": image(&decoded.present_after, values) }),
            RowChange::Update { before, after } => {
                json!({ "before": image(&decoded.present_before, before), "after": image(&decoded.present_after, after) })
            }
            RowChange::Delete(values) => json!({ "before": image(&decoded.present_before, values) }),
        }
    })
}

/// Like [`rows_data`]; a partial JSON column's `after` value is
/// `{"json_diffs": [{"operation", "path", "value"}...]}` (value as JSON
/// text, absent for a removal).
fn partial_rows_data(event: &PartialUpdateRowsEvent, extra: &Extra) -> Value {
    let Extra::PartialRows(context) = extra else { return rows_header(&event.rows) };
    table_rows_data(&event.rows, context, |decoded, update| {
        let columns = &decoded.columns;
        let mut after = Map::new();
        for (&index, value) in decoded.present_after.iter().zip(&update.after) {
            let shown = match value {
                AfterValue::Full(value) => rows::value_json(&columns[index], value),
                AfterValue::Diffs(diffs) => {
                    let diffs: Vec<Value> = diffs
                        .iter()
                        .map(|diff| {
                            json!({
                                "operation": diff.operation.function_name(&diff.path),
                                "path": String::from_utf8_lossy(&diff.path),
                                "value": diff.document().map(|document| match document {
                                    Ok(document) => document.to_string(),
                                    Err(error) => format!("(invalid JSON: {error})"),
                                }),
                            })
                        })
                        .collect();
                    json!({ "json_diffs": diffs })
                }
            };
            after.insert(columns[index].label(), shown);
        }
        json!({
            "before": image_json(columns, &decoded.present_before, &update.before),
            "after": after,
            "value_options": update.value_options,
        })
    })
}

/// A rows event's header, table names, columns and rows, each row shown
/// by `row`.
fn table_rows_data<R>(event: &RowsEvent, context: &RowsContext<R>, row: impl Fn(&DecodedRows<'_, R>, &R) -> Value) -> Value {
    let mut data = rows_header(event);
    if let Some(table) = &context.table {
        data["database"] = json!(String::from_utf8_lossy(&table.database));
        data["table"] = json!(String::from_utf8_lossy(&table.table));
    }
    match context.decoded(event) {
        Ok(Some(decoded)) => {
            let rows: Vec<Value> = decoded.rows.iter().map(|change| row(&decoded, change)).collect();
            data["columns"] = json!(decoded.columns.iter().map(column_json).collect::<Vec<_>>());
            data["rows"] = json!(rows);
        }
        Err(error) => data["error"] = json!(error),
        Ok(None) => {}
    }
    data
}

/// One image as an object keyed by column name.
fn image_json(columns: &[rows::ColumnInfo], present: &[usize], values: &[binlog_format::Value]) -> Value {
    let mut object = Map::new();
    for (&index, value) in present.iter().zip(values) {
        let column = &columns[index];
        object.insert(column.label(), rows::value_json(column, value));
    }
    Value::Object(object)
}

/// What every rows event carries before its rows: the table id, flags,
/// and the partition and NDB information of a v2 event's extra data.
fn rows_header(event: &RowsEvent) -> Value {
    let mut data = json!({
        "table_id": event.table_id,
        "flags": event.flags,
        "flag_names": text::rows_flag_names(event.flags),
        "column_count": event.column_count,
    });
    match event.extra_row_info() {
        Ok(info) => {
            if let Some(partition) = info.partition {
                data["partition_id"] = json!(partition.partition_id);
                if let Some(source) = partition.source_partition_id {
                    data["source_partition_id"] = json!(source);
                }
            }
            if let Some(ndb) = info.ndb {
                data["ndb_info"] = json!({ "format": ndb.format, "data_hex": hex(&ndb.data) });
            }
        }
        Err(error) => data["extra_row_info_error"] = json!(error.to_string()),
    }
    data
}

fn undecoded(event_type: u8, body: &[u8]) -> Value {
    let shown = &body[..body.len().min(UNKNOWN_BODY_HEX_BYTES_MAX)];
    json!({
        "decoded": false,
        "name": EventType::name_of(event_type),
        "body_length": body.len(),
        "body_hex": hex(shown),
        "body_hex_truncated": shown.len() < body.len(),
    })
}

fn mariadb_data(event: &MariadbEvent) -> Value {
    match event {
        MariadbEvent::Gtid { gtid, flags, commit_id } => json!({
            "gtid": gtid.to_string(),
            "domain_id": gtid.domain_id,
            "server_id": gtid.server_id,
            "seq_no": gtid.seq_no,
            "flags2": flags,
            "standalone": event.is_standalone(),
            "commit_id": commit_id,
        }),
        MariadbEvent::GtidList(list) => {
            json!({ "gtid_list": list.iter().map(ToString::to_string).collect::<Vec<_>>() })
        }
        MariadbEvent::BinlogCheckpoint(name) => json!({ "binlog_file": name }),
        MariadbEvent::AnnotateRows(query) => json!({ "query": query }),
    }
}

fn gtid_data(gtid: &GtidEvent, anonymous: bool) -> Value {
    json!({
        "gtid": if anonymous { "ANONYMOUS".to_string() } else { gtid.gtid.to_string() },
        "uuid": gtid.gtid.uuid.to_string(),
        // A tagged GTID's tag (MySQL 8.3+), null for an untagged one.
        "tag": gtid.gtid.is_tagged().then(|| gtid.gtid.tag.to_string()),
        "gno": gtid.gtid.gno,
        "last_committed": gtid.last_committed,
        "sequence_number": gtid.sequence_number,
        "rbr_only": gtid.flags & FLAG_MAY_HAVE_SBR == 0,
        "immediate_commit_timestamp": gtid.immediate_commit_timestamp_us,
        "original_commit_timestamp": gtid.original_commit_timestamp(),
        "transaction_length": gtid.transaction_length,
        "immediate_server_version": gtid.immediate_server_version,
        "original_server_version": gtid.original_server_version.unwrap_or(gtid.immediate_server_version),
        "commit_group_ticket": gtid.commit_group_ticket,
    })
}

fn query_data(query: &QueryEvent) -> Value {
    let mut status = Map::new();
    for var in &query.status_vars {
        let (key, value) = match var {
            StatusVar::Flags2(v) => ("flags2", json!(v)),
            StatusVar::SqlMode(v) => ("sql_mode", json!(v)),
            StatusVar::AutoIncrement { increment, offset } => ("auto_increment", json!({ "increment": increment, "offset": offset })),
            StatusVar::Charset { client, connection, server } => {
                ("charset", json!({ "client": client, "connection": connection, "server": server }))
            }
            StatusVar::TimeZone(v) => ("time_zone", json!(String::from_utf8_lossy(v))),
            StatusVar::CatalogNz(v) => ("catalog", json!(String::from_utf8_lossy(v))),
            StatusVar::LcTimeNames(v) => ("lc_time_names", json!(v)),
            StatusVar::CharsetDatabase(v) => ("charset_database", json!(v)),
            StatusVar::TableMapForUpdate(v) => ("table_map_for_update", json!(v)),
            StatusVar::UpdatedDbNames(names) => (
                "updated_db_names",
                match names {
                    Some(names) => json!(names.iter().map(|n| String::from_utf8_lossy(n)).collect::<Vec<_>>()),
                    None => json!("OVER_MAX_DBS_IN_EVENT_MTS"),
                },
            ),
            StatusVar::Microseconds(v) => ("microseconds", json!(v)),
            StatusVar::MasterDataWritten(v) => ("master_data_written", json!(v)),
            StatusVar::Invoker { user, host } => {
                ("invoker", json!({ "user": String::from_utf8_lossy(user), "host": String::from_utf8_lossy(host) }))
            }
            StatusVar::HrNow(v) => ("hrnow_microseconds", json!(v)),
            StatusVar::Xid(v) => ("xid", json!(v)),
            StatusVar::GtidFlags3 { flags, start_alter_seq_no } => {
                ("gtid_flags3", json!({ "flags": flags, "start_alter_seq_no": start_alter_seq_no }))
            }
            StatusVar::Unparsed { code, rest } => ("unparsed", json!({ "code": code, "bytes": rest.len() })),
        };
        status.insert(key.to_string(), value);
    }
    json!({
        "thread_id": query.thread_id,
        "exec_time": query.exec_time_s,
        "error_code": query.error_code,
        "database": String::from_utf8_lossy(&query.database),
        "query": query.query_text(),
        "status_vars": status,
    })
}
