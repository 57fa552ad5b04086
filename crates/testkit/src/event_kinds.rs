//! Files holding the event kinds MySQL writes besides Gtid, Query, Xid,
//! Table_map and rows events v1/v2, each event laid out from MySQL's
//! sources (`rows_event.cpp`, `control_events.cpp`, `log_event_old.cc`):
//!
//! - [`mysql_84_event_kinds_file`]: a MySQL 8.4 file (CRC32) with rows
//!   events of a partitioned table (extra row info: the partition of a
//!   Write and a Delete, the source and target partitions of an Update,
//!   NDB info on the Delete), a Partial_update_rows event with JSON diffs
//!   (`binlog_row_value_options = PARTIAL_JSON`), an XA transaction
//!   prepared then committed, one committed in one phase, a Group
//!   Replication View_change, an Incident and a Heartbeat_log_event v2;
//! - [`mysql_51_pre_ga_file`]: a MySQL 5.1 file of rows events v0 (types
//!   20-22), whose Update carries one column bitmap for both images, and
//!   its twin with the same rows as v1 (types 23-25), which readers that
//!   know only v1 (mysql_common) decode.

use binlog_format::constants::{BINLOG_CHECKSUM_ALG_UNDEF, COMMON_HEADER_LENGTH};
use binlog_format::events::extra_row_info::{ExtraRowInfo, NdbInfo, PartitionInfo};
use binlog_format::events::incident::INCIDENT_LOST_EVENTS;
use binlog_format::events::partial_update_rows::PARTIAL_JSON_UPDATES;
use binlog_format::events::view_change::VIEW_ID_LENGTH;
use binlog_format::events::{
    AfterValue, FormatDescription, HeartbeatV2Event, IncidentEvent, JsonDiff, JsonDiffOperation, PartialUpdateRowsEvent, QueryEvent,
    ViewChangeEvent, XaPrepareEvent, XidEvent,
};
use binlog_format::file::WriterIdentity;
use binlog_format::value::json::{binary, Json, Object};
use binlog_format::{ColumnSpec, ColumnType, Event, GtidSet, RowsEvent, RowsKind, RowsVersion, TableMap, Value};

use crate::older_servers::MYSQL_55_POST_HEADER_LENGTHS;
use crate::{BinlogBuilder, SERVER_ID, TIMESTAMP};

pub const PARTITIONED_TABLE_ID: u64 = 70;
pub const JSON_TABLE_ID: u64 = 71;
pub const XA_TABLE_ID: u64 = 72;
pub const PRE_GA_TABLE_ID: u64 = 20;

/// The prepared XA transaction's XID: gtrid `xid1`, bqual `b1`, format 1.
pub const XA_XID: &str = "X'78696431',X'6231',1";
/// The XID committed in one phase: gtrid `xid2`, no bqual, format 1.
pub const XA_ONE_PHASE_XID: &str = "X'78696432',X'',1";
pub const VIEW_ID: &str = "17331234567890123:7";
pub const INCIDENT_MESSAGE: &str = "error writing to the binary log";
pub const HEARTBEAT_FILE: &str = "binlog.000041";
pub const HEARTBEAT_POSITION: u64 = 5_000_000_000;

fn int_column(name: &str) -> ColumnSpec {
    ColumnSpec { name: name.into(), column_type: ColumnType::Long, nullable: false, unsigned: false, collation: 63 }
}

/// `test.tp`, PARTITION BY RANGE over `id`: an INT and a VARCHAR(20).
pub fn partitioned_columns() -> Vec<ColumnSpec> {
    vec![
        int_column("id"),
        ColumnSpec {
            name: "name".into(),
            column_type: ColumnType::VarChar { max_length_bytes: 80 },
            nullable: true,
            unsigned: false,
            collation: 255,
        },
    ]
}

/// `test.tj`: an INT and two JSON columns.
pub fn json_columns() -> Vec<ColumnSpec> {
    let json = |name: &str| ColumnSpec { name: name.into(), column_type: ColumnType::Json, nullable: true, unsigned: false, collation: 63 };
    vec![int_column("id"), json("doc"), json("note")]
}

fn name(text: &str) -> Value {
    Value::Bytes(text.as_bytes().to_vec())
}

fn document(json: &Json) -> Vec<u8> {
    binary::to_binary(json).expect("a small document")
}

fn object(members: &[(&str, Json)]) -> Json {
    let mut object = Object::new();
    for (key, value) in members {
        object.insert(key.to_string(), value.clone());
    }
    Json::Object(object)
}

/// The extra row info of the partitioned table's three events, in order:
/// Write into partition 2, Update from partition 2 to 0, Delete from
/// partition 0 (with NDB info too).
pub fn partition_infos() -> [ExtraRowInfo; 3] {
    [
        ExtraRowInfo { ndb: None, partition: Some(PartitionInfo { partition_id: 2, source_partition_id: None }) },
        ExtraRowInfo { ndb: None, partition: Some(PartitionInfo { partition_id: 0, source_partition_id: Some(2) }) },
        ExtraRowInfo {
            ndb: Some(NdbInfo { format: 0, data: vec![0xca, 0xfe] }),
            partition: Some(PartitionInfo { partition_id: 0, source_partition_id: None }),
        },
    ]
}

/// The Table_map and the three rows events of the partitioned table.
pub fn partitioned_events() -> (TableMap, [RowsEvent; 3]) {
    let table = TableMap::new(PARTITIONED_TABLE_ID, "test", "tp", &partitioned_columns(), &[0]).expect("a small table");
    let [write_info, update_info, delete_info] = partition_infos();
    let with_info = |mut event: RowsEvent, info: ExtraRowInfo| {
        info.encode(&mut event.extra_data);
        event
    };
    let write = RowsEvent::write(PARTITIONED_TABLE_ID, &table, &[vec![Value::Int(21), name("p2")]]).expect("rows of the table");
    let update = RowsEvent::update(PARTITIONED_TABLE_ID, &table, &[(vec![Value::Int(21), name("p2")], vec![Value::Int(1), name("p0")])])
        .expect("rows of the table");
    let delete = RowsEvent::delete(PARTITIONED_TABLE_ID, &table, &[vec![Value::Int(1), name("p0")]]).expect("rows of the table");
    (table, [with_info(write, write_info), with_info(update, update_info), with_info(delete, delete_info)])
}

/// The diffs of the Partial_update_rows row's `doc`: a REPLACE, two
/// INSERTs (a string, an object), an INSERT into an array, a REMOVE.
pub fn json_diffs() -> Vec<JsonDiff> {
    let diff = |operation, path: &str, value: Option<Json>| JsonDiff {
        operation,
        path: path.as_bytes().to_vec(),
        value: value.map(|v| document(&v)),
    };
    vec![
        diff(JsonDiffOperation::Replace, "$.a", Some(Json::Int(2))),
        diff(JsonDiffOperation::Insert, "$.b", Some(Json::String("x".into()))),
        diff(JsonDiffOperation::Insert, "$.o", Some(object(&[("k", Json::Array(vec![Json::Int(1)]))]))),
        diff(JsonDiffOperation::Insert, "$.arr[1]", Some(Json::Int(5))),
        diff(JsonDiffOperation::Remove, "$.d", None),
    ]
}

/// The JSON table's Table_map and Partial_update_rows event: a row whose
/// `doc` is [`json_diffs`] and `note` a whole document, then a row of
/// whole values (no `PARTIAL_JSON_UPDATES`).
pub fn partial_update_events() -> (TableMap, PartialUpdateRowsEvent) {
    let table = TableMap::new(JSON_TABLE_ID, "test", "tj", &json_columns(), &[0]).expect("a small table");
    let mut event = PartialUpdateRowsEvent::with_columns(JSON_TABLE_ID, 3, &[0b111], &[0b111]);
    event.rows.flags = 1; // STMT_END_F
    let before_doc = document(&object(&[("a", Json::Int(1)), ("arr", Json::Array(vec![Json::Int(4)])), ("d", Json::Bool(true))]));
    let note = document(&Json::String("n".into()));
    event
        .push_update(
            &table,
            &[Value::Int(1), Value::Json(before_doc.clone()), Value::Null],
            PARTIAL_JSON_UPDATES,
            &[AfterValue::Full(Value::Int(1)), AfterValue::Diffs(json_diffs()), AfterValue::Full(Value::Json(note.clone()))],
        )
        .expect("a row of the table");
    event
        .push_update(
            &table,
            &[Value::Int(2), Value::Null, Value::Json(note.clone())],
            0,
            &[AfterValue::Full(Value::Int(2)), AfterValue::Full(Value::Json(before_doc)), AfterValue::Full(Value::Null)],
        )
        .expect("a row of the table");
    (table, event)
}

fn query(text: &str) -> Event {
    Event::Query(QueryEvent::new(9, "test", text))
}

/// An XA transaction's first part: XA START, a row, XA END, XA_prepare.
fn xa_part(table: &TableMap, xid: &str, id: i64, prepare: XaPrepareEvent) -> Vec<Event> {
    let rows = RowsEvent::write(XA_TABLE_ID, table, &[vec![Value::Int(id)]]).expect("a row of the table");
    vec![
        query(&format!("XA START {xid}")),
        Event::TableMap(table.clone()),
        rows.into_event(),
        query(&format!("XA END {xid}")),
        Event::XaPrepare(prepare),
    ]
}

pub fn xa_prepare() -> XaPrepareEvent {
    XaPrepareEvent { one_phase: false, format_id: 1, gtrid: b"xid1".to_vec(), bqual: b"b1".to_vec() }
}

pub fn xa_one_phase() -> XaPrepareEvent {
    XaPrepareEvent { one_phase: true, format_id: 1, gtrid: b"xid2".to_vec(), bqual: Vec::new() }
}

pub fn view_change() -> ViewChangeEvent {
    let mut view_id = [0u8; VIEW_ID_LENGTH];
    view_id[..VIEW_ID.len()].copy_from_slice(VIEW_ID.as_bytes());
    ViewChangeEvent {
        view_id,
        seq_number: 3,
        certification_info: vec![(b"group_gtid_executed".to_vec(), b"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:1-4".to_vec())],
    }
}

pub fn incident() -> IncidentEvent {
    IncidentEvent { incident: INCIDENT_LOST_EVENTS, message: INCIDENT_MESSAGE.as_bytes().to_vec() }
}

pub fn heartbeat_v2() -> HeartbeatV2Event {
    HeartbeatV2Event { log_filename: HEARTBEAT_FILE.as_bytes().to_vec(), log_position: Some(HEARTBEAT_POSITION) }
}

/// The MySQL 8.4 file; see the module's description. Every transaction
/// has a GTID and its `transaction_length`.
pub fn mysql_84_event_kinds_file() -> Vec<u8> {
    mysql_84_event_kinds_file_with(true)
}

/// [`mysql_84_event_kinds_file`] with events that carry a CRC32 or (as
/// with `binlog_checksum = NONE`) none: the fuzzer's seed, whose mutations
/// then reach the decoders instead of failing the checksum.
pub fn mysql_84_event_kinds_file_with(checksum: bool) -> Vec<u8> {
    let mut builder = BinlogBuilder::new(checksum, &GtidSet::new());
    let begin = query("BEGIN");
    let xid = |xid| Event::Xid(XidEvent { xid });

    let (table, [write, update, delete]) = partitioned_events();
    let statement = |event: RowsEvent| vec![Event::TableMap(table.clone()), event.into_event()];
    let mut events = vec![begin.clone()];
    events.extend(statement(write));
    events.extend(statement(update));
    events.extend(statement(delete));
    events.push(xid(31));
    builder.append_transaction(1, &events);

    let (json_table, partial) = partial_update_events();
    builder.append_transaction(2, &[begin, Event::TableMap(json_table), Event::PartialUpdateRows(partial), xid(32)]);

    push_xa_view_change_and_incident(&mut builder, 3);
    builder.push(&Event::HeartbeatV2(heartbeat_v2()), 0);
    builder.bytes
}

/// The events of the MySQL 8.4 file that MariaDB's reader knows too (it
/// stops at Partial_update_rows, type 39): the XA transactions, the
/// View_change and the Incident.
pub fn mysql_84_xa_file() -> Vec<u8> {
    let mut builder = BinlogBuilder::new(true, &GtidSet::new());
    push_xa_view_change_and_incident(&mut builder, 1);
    builder.bytes
}

/// The prepared XA transaction and its commit, the one-phase one, the
/// View_change's transaction (GTIDs from `first_gno`) and the Incident.
fn push_xa_view_change_and_incident(builder: &mut BinlogBuilder, first_gno: u64) {
    let xa_table = TableMap::new(XA_TABLE_ID, "test", "tx", &[int_column("id")], &[0]).expect("a small table");
    builder.append_transaction(first_gno, &xa_part(&xa_table, XA_XID, 1, xa_prepare()));
    builder.append_transaction(first_gno + 1, &[query(&format!("XA COMMIT {XA_XID}"))]);
    builder.append_transaction(first_gno + 2, &xa_part(&xa_table, XA_ONE_PHASE_XID, 2, xa_one_phase()));
    builder.append_transaction(first_gno + 3, &[query("BEGIN"), Event::ViewChange(view_change()), query("COMMIT")]);
    builder.push(&Event::Incident(incident()), 0);
}

/// `test.t51` of the 5.1 file: an INT and a VARCHAR(10) in latin1.
pub fn pre_ga_columns() -> Vec<ColumnSpec> {
    vec![
        int_column("id"),
        ColumnSpec {
            name: "name".into(),
            column_type: ColumnType::VarChar { max_length_bytes: 10 },
            nullable: true,
            unsigned: false,
            collation: 8,
        },
    ]
}

/// The Table_map and the Write, Update and Delete of the 5.1 file, as
/// `version` (V0 or V1).
pub fn pre_ga_events(version: RowsVersion) -> (TableMap, [RowsEvent; 3]) {
    // Table_map's optional metadata came with MySQL 8.0.1.
    let mut table = TableMap::new(PRE_GA_TABLE_ID, "test", "t51", &pre_ga_columns(), &[]).expect("a small table");
    table.optional_metadata.clear();
    let mut write = RowsEvent::write(PRE_GA_TABLE_ID, &table, &[vec![Value::Int(1), name("one")], vec![Value::Int(2), Value::Null]])
        .expect("rows of the table");
    let mut update = RowsEvent::update(PRE_GA_TABLE_ID, &table, &[(vec![Value::Int(2), Value::Null], vec![Value::Int(2), name("two")])])
        .expect("rows of the table");
    let mut delete = RowsEvent::delete(PRE_GA_TABLE_ID, &table, &[vec![Value::Int(1), name("one")]]).expect("rows of the table");
    for event in [&mut write, &mut update, &mut delete] {
        event.version = version;
    }
    debug_assert_eq!(update.kind, RowsKind::Update);
    (table, [write, update, delete])
}

/// A MySQL 5.1 file (no checksums, a Format_description without an
/// algorithm byte that declares the rows events' 8-byte post-header for
/// types 20-22) with one transaction of three statements in rows events
/// of `version`: V0 is what MySQL 5.1 before GA wrote; V1 gives the twin
/// the v1-only readers decode.
pub fn mysql_51_pre_ga_file(version: RowsVersion) -> Vec<u8> {
    let identity = WriterIdentity { server_id: SERVER_ID, checksum: false };
    let mut builder = BinlogBuilder::magic_only(identity);
    let mut post_header_lengths = MYSQL_55_POST_HEADER_LENGTHS.to_vec();
    post_header_lengths[19..22].copy_from_slice(&[8, 8, 8]);
    let format = FormatDescription {
        binlog_version: 4,
        server_version: "5.1.73-log".to_string(),
        create_timestamp: TIMESTAMP,
        common_header_length: COMMON_HEADER_LENGTH as u8,
        post_header_lengths,
        checksum_alg: BINLOG_CHECKSUM_ALG_UNDEF,
    };
    builder.push(&Event::FormatDescription(format), 0);
    builder.push(&query("BEGIN"), 0);
    let (table, events) = pre_ga_events(version);
    for event in events {
        builder.push(&Event::TableMap(table.clone()), 0);
        builder.push(&event.into_event(), 0);
    }
    builder.push(&Event::Xid(XidEvent { xid: 51 }), 0);
    builder.push(&Event::Stop, 0);
    builder.bytes
}
