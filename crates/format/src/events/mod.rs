//! Typed events. [`Event::decode`] turns a framed [`RawEvent`] into a
//! typed event; [`Event::encode_body`] writes the body back byte for byte.
//! MariaDB's events (Annotate_rows, Binlog_checkpoint, GTID, Gtid_list and
//! rows events v1) decode too; unknown types survive as [`Event::Unknown`].

pub mod enum_set_metadata;
pub mod extra_row_info;
pub mod format_description;
pub mod gtid;
pub mod gtid_tagged;
pub mod heartbeat_v2;
pub mod incident;
pub mod json_diff;
pub mod large_transaction_header;
pub mod mariadb_compressed;
pub mod mariadb_gtid;
pub mod mariadb_simple;
pub mod partial_update_rows;
pub mod query;
pub mod rows;
pub mod simple;
pub mod table_map;
pub mod table_map_metadata;
pub mod transaction_payload;
pub mod view_change;
pub mod xa_prepare;

pub use extra_row_info::{ExtraRowInfo, NdbInfo, PartitionInfo};
pub use format_description::FormatDescription;
pub use gtid::GtidEvent;
pub use heartbeat_v2::HeartbeatV2Event;
pub use incident::IncidentEvent;
pub use json_diff::{JsonDiff, JsonDiffOperation};
pub use large_transaction_header::LargeTransactionHeaderEvent;
pub use mariadb_compressed::CompressedEvent;
pub use mariadb_gtid::{GtidListEvent, MariadbGtid, MariadbGtidEvent};
pub use mariadb_simple::{AnnotateRowsEvent, BinlogCheckpointEvent};
pub use partial_update_rows::{AfterValue, PartialUpdate, PartialUpdateRowsEvent};
pub use query::{QueryEvent, StatusVar};
pub use rows::{Row, RowChange, RowsEvent, RowsKind, RowsVersion};
pub use simple::{HeartbeatEvent, RotateEvent, RowsQueryEvent, XidEvent};
pub use table_map::{Column, ColumnSpec, TableMap};
pub use table_map_metadata::OptionalMetadata;
pub use transaction_payload::TransactionPayloadEvent;
pub use view_change::ViewChangeEvent;
pub use xa_prepare::XaPrepareEvent;

use crate::constants::EventType;
use crate::error::DecodeError;
use crate::frame::RawEvent;
use crate::gtid_set::GtidSet;

/// What decoding needs to know about the file an event came from.
#[derive(Debug, Clone)]
pub struct DecodeContext {
    pub format: FormatDescription,
}

/// Post-header lengths of the layouts binlogd decodes: a Table_map with a
/// 6-byte table id, rows events v2 with extra data. Servers before MySQL
/// 5.1.4 used 4-byte table ids (post-header 6) and never wrote v2 rows
/// events; their Table_maps stay [`Event::Unknown`].
pub const TABLE_MAP_POST_HEADER_LENGTH: u8 = 8;
pub const ROWS_V2_POST_HEADER_LENGTH: u8 = 10;
/// Rows events v1 (MariaDB, MySQL 5.1-5.5) and v0 (MySQL 5.1 before GA):
/// table id and flags only.
pub const ROWS_V1_POST_HEADER_LENGTH: u8 = 8;

impl DecodeContext {
    /// True when the file declares the post-header length binlogd's
    /// decoder for `event_type` expects.
    pub fn has_post_header_length(&self, event_type: u8, expected: u8) -> bool {
        self.format.post_header_length(event_type) == Some(expected)
    }
}

impl Default for DecodeContext {
    fn default() -> Self {
        DecodeContext { format: FormatDescription::binlogd(0, true) }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    FormatDescription(FormatDescription),
    PreviousGtids(GtidSet),
    /// Gtid (33), or Gtid_tagged_log_event (42) for a tagged GTID.
    Gtid(GtidEvent),
    AnonymousGtid(GtidEvent),
    Query(QueryEvent),
    Xid(XidEvent),
    Rotate(RotateEvent),
    Stop,
    Heartbeat(HeartbeatEvent),
    RowsQuery(RowsQueryEvent),
    LargeTransactionHeader(LargeTransactionHeaderEvent),
    /// A transaction's events, compressed together (type 40).
    TransactionPayload(TransactionPayloadEvent),
    TableMap(TableMap),
    /// Write_rows v2 (30), v1 (23) or v0 (20): the event's `version` says
    /// which; the same for Update and Delete.
    WriteRows(RowsEvent),
    UpdateRows(RowsEvent),
    DeleteRows(RowsEvent),
    /// MariaDB (160).
    AnnotateRows(AnnotateRowsEvent),
    /// MariaDB (161).
    BinlogCheckpoint(BinlogCheckpointEvent),
    /// MariaDB (162).
    MariadbGtid(MariadbGtidEvent),
    /// MariaDB (163).
    GtidList(GtidListEvent),
    /// MariaDB's compressed Query and rows events (165-171): the plain
    /// event inside, the stored body kept.
    MariadbCompressed(CompressedEvent),
    /// Update_rows whose JSON columns may be diffs (type 39).
    PartialUpdateRows(PartialUpdateRowsEvent),
    /// Type 26.
    Incident(IncidentEvent),
    /// Group Replication's view change (type 37).
    ViewChange(ViewChangeEvent),
    /// The end of an XA transaction's first part (type 38).
    XaPrepare(XaPrepareEvent),
    /// Type 41.
    HeartbeatV2(HeartbeatV2Event),
    /// Ignorable_log_event (type 28): the body as stored.
    Ignorable {
        body: Vec<u8>,
    },
    /// Any other type: the body as stored, without header and checksum.
    Unknown {
        event_type: u8,
        body: Vec<u8>,
    },
}

impl Event {
    pub fn event_type(&self) -> u8 {
        match self {
            Event::FormatDescription(_) => EventType::FormatDescription as u8,
            Event::PreviousGtids(_) => EventType::PreviousGtids as u8,
            Event::Gtid(e) => e.event_type(),
            Event::AnonymousGtid(_) => EventType::AnonymousGtid as u8,
            Event::Query(_) => EventType::Query as u8,
            Event::Xid(_) => EventType::Xid as u8,
            Event::Rotate(_) => EventType::Rotate as u8,
            Event::Stop => EventType::Stop as u8,
            Event::Heartbeat(_) => EventType::Heartbeat as u8,
            Event::RowsQuery(_) => EventType::RowsQuery as u8,
            Event::LargeTransactionHeader(_) => EventType::LargeTransactionHeader as u8,
            Event::TransactionPayload(_) => EventType::TransactionPayload as u8,
            Event::TableMap(_) => EventType::TableMap as u8,
            Event::WriteRows(e) | Event::UpdateRows(e) | Event::DeleteRows(e) => e.event_type(),
            Event::AnnotateRows(_) => EventType::AnnotateRows as u8,
            Event::BinlogCheckpoint(_) => EventType::BinlogCheckpoint as u8,
            Event::MariadbGtid(_) => EventType::MariadbGtid as u8,
            Event::GtidList(_) => EventType::GtidList as u8,
            Event::MariadbCompressed(e) => e.event_type,
            Event::PartialUpdateRows(_) => EventType::PartialUpdateRows as u8,
            Event::Incident(_) => EventType::Incident as u8,
            Event::ViewChange(_) => EventType::ViewChange as u8,
            Event::XaPrepare(_) => EventType::XaPrepare as u8,
            Event::HeartbeatV2(_) => EventType::HeartbeatV2 as u8,
            Event::Ignorable { .. } => EventType::Ignorable as u8,
            Event::Unknown { event_type, .. } => *event_type,
        }
    }

    /// Decodes a framed event's body by its type.
    pub fn decode(raw: &RawEvent<'_>, context: &DecodeContext) -> Result<Event, DecodeError> {
        let body = raw.body;
        let event_type = raw.header.event_type;
        Ok(match EventType::from_code(event_type) {
            Some(EventType::FormatDescription) => Event::FormatDescription(FormatDescription::decode_body(body)?),
            Some(EventType::PreviousGtids) => Event::PreviousGtids(GtidSet::decode_previous_gtids_body(body)?),
            Some(EventType::Gtid) => Event::Gtid(GtidEvent::decode_body(body)?),
            Some(EventType::GtidTagged) => Event::Gtid(GtidEvent::decode_tagged_body(body)?),
            Some(EventType::AnonymousGtid) => Event::AnonymousGtid(GtidEvent::decode_body(body)?),
            Some(EventType::Query) => Event::Query(QueryEvent::decode_body(body)?),
            Some(EventType::Xid) => Event::Xid(XidEvent::decode_body(body)?),
            Some(EventType::Rotate) => Event::Rotate(RotateEvent::decode_body(body)?),
            Some(EventType::Stop) => {
                if !body.is_empty() {
                    return Err(DecodeError::TrailingBytes { what: "stop body", count: body.len() });
                }
                Event::Stop
            }
            Some(EventType::Heartbeat) => Event::Heartbeat(HeartbeatEvent::decode_body(body)?),
            Some(EventType::RowsQuery) => Event::RowsQuery(RowsQueryEvent::decode_body(body)?),
            Some(EventType::LargeTransactionHeader) => Event::LargeTransactionHeader(LargeTransactionHeaderEvent::decode_body(body)?),
            Some(EventType::TransactionPayload) => Event::TransactionPayload(TransactionPayloadEvent::decode_body(body)?),
            Some(EventType::TableMap) if context.has_post_header_length(event_type, TABLE_MAP_POST_HEADER_LENGTH) => {
                Event::TableMap(TableMap::decode_body(body)?)
            }
            Some(EventType::WriteRows | EventType::UpdateRows | EventType::DeleteRows)
                if context.has_post_header_length(event_type, ROWS_V2_POST_HEADER_LENGTH) =>
            {
                match RowsKind::from_event_type(event_type) {
                    Some(kind) => RowsEvent::decode_body(kind, body)?.into_event(),
                    None => Event::Unknown { event_type, body: body.to_vec() },
                }
            }
            Some(
                EventType::WriteRowsV0
                | EventType::UpdateRowsV0
                | EventType::DeleteRowsV0
                | EventType::WriteRowsV1
                | EventType::UpdateRowsV1
                | EventType::DeleteRowsV1,
            ) if context.has_post_header_length(event_type, ROWS_V1_POST_HEADER_LENGTH) => match RowsKind::with_version(event_type) {
                Some((kind, version)) => RowsEvent::decode_body_version(kind, version, body)?.into_event(),
                None => Event::Unknown { event_type, body: body.to_vec() },
            },
            Some(EventType::PartialUpdateRows) if context.has_post_header_length(event_type, ROWS_V2_POST_HEADER_LENGTH) => {
                Event::PartialUpdateRows(PartialUpdateRowsEvent::decode_body(body)?)
            }
            // MySQL's control events: their layouts have not changed since
            // the types were introduced, so the code alone decides.
            Some(EventType::Incident) => Event::Incident(IncidentEvent::decode_body(body)?),
            Some(EventType::ViewChange) => Event::ViewChange(ViewChangeEvent::decode_body(body)?),
            Some(EventType::XaPrepare) => Event::XaPrepare(XaPrepareEvent::decode_body(body)?),
            Some(EventType::HeartbeatV2) => Event::HeartbeatV2(HeartbeatV2Event::decode_body(body)?),
            // MariaDB's own types: no other server uses these codes, and
            // their layouts have not changed since MariaDB 10.0 (later
            // fields are optional), so the code alone decides.
            Some(EventType::AnnotateRows) => Event::AnnotateRows(AnnotateRowsEvent::decode_body(body)?),
            Some(EventType::BinlogCheckpoint) => Event::BinlogCheckpoint(BinlogCheckpointEvent::decode_body(body)?),
            Some(EventType::MariadbGtid) => Event::MariadbGtid(MariadbGtidEvent::decode_body(body)?),
            Some(EventType::GtidList) => Event::GtidList(GtidListEvent::decode_body(body)?),
            _ if CompressedEvent::is_compressed_type(event_type) => {
                Event::MariadbCompressed(CompressedEvent::decode_body(event_type, body)?)
            }
            Some(EventType::Ignorable) => Event::Ignorable { body: body.to_vec() },
            _ => Event::Unknown { event_type: raw.header.event_type, body: body.to_vec() },
        })
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        match self {
            Event::FormatDescription(e) => e.encode_body(out),
            Event::PreviousGtids(set) => set.encode_previous_gtids_body(out),
            Event::Gtid(e) | Event::AnonymousGtid(e) => e.encode_body(out),
            Event::Query(e) => e.encode_body(out),
            Event::Xid(e) => e.encode_body(out),
            Event::Rotate(e) => e.encode_body(out),
            Event::Stop => {}
            Event::Heartbeat(e) => e.encode_body(out),
            Event::RowsQuery(e) => e.encode_body(out),
            Event::LargeTransactionHeader(e) => e.encode_body(out),
            Event::TransactionPayload(e) => e.encode_body(out),
            Event::TableMap(e) => e.encode_body(out),
            Event::WriteRows(e) | Event::UpdateRows(e) | Event::DeleteRows(e) => {
                debug_assert_eq!(e.event_type(), self.event_type(), "rows event in the wrong Event variant");
                e.encode_body(out)
            }
            Event::AnnotateRows(e) => e.encode_body(out),
            Event::BinlogCheckpoint(e) => e.encode_body(out),
            Event::MariadbGtid(e) => e.encode_body(out),
            Event::GtidList(e) => e.encode_body(out),
            Event::MariadbCompressed(e) => e.encode_body(out),
            Event::PartialUpdateRows(e) => e.encode_body(out),
            Event::Incident(e) => e.encode_body(out),
            Event::ViewChange(e) => e.encode_body(out),
            Event::XaPrepare(e) => e.encode_body(out),
            Event::HeartbeatV2(e) => e.encode_body(out),
            Event::Ignorable { body } | Event::Unknown { body, .. } => out.extend_from_slice(body),
        }
    }

    /// The plain event a compressed one holds; any other event itself.
    pub fn into_uncompressed(self) -> Event {
        match self {
            Event::MariadbCompressed(compressed) => *compressed.inner,
            other => other,
        }
    }

    /// The type's name as `mysqlbinlog` prints it.
    pub fn type_name(&self) -> &'static str {
        EventType::name_of(self.event_type())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::encode_event;
    use crate::header::EventHeader;

    #[test]
    fn table_maps_of_files_with_4_byte_table_ids_stay_raw() {
        let map = TableMap::new(1, "d", "t", &[], &[]).unwrap();
        let mut body = Vec::new();
        map.encode_body(&mut body);
        let mut framed = Vec::new();
        let header = EventHeader { event_type: EventType::TableMap as u8, ..EventHeader::default() };
        encode_event(header, &body, true, &mut framed);
        let raw = RawEvent::parse(&framed, true).unwrap();

        let mut context = DecodeContext::default();
        assert_eq!(Event::decode(&raw, &context).unwrap(), Event::TableMap(map));
        context.format.post_header_lengths[EventType::TableMap as usize - 1] = 6;
        assert_eq!(Event::decode(&raw, &context).unwrap(), Event::Unknown { event_type: EventType::TableMap as u8, body });
    }
}
