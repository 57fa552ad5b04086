//! Event type codes, header layout and flags of binlog v4 (MySQL 8.4).

/// The four bytes every binlog file starts with.
pub const BINLOG_MAGIC: [u8; 4] = [0xfe, b'b', b'i', b'n'];
pub const BINLOG_MAGIC_LENGTH: usize = 4;

/// Common header: timestamp u32, type u8, server_id u32, event_size u32,
/// log_pos u32, flags u16.
pub const COMMON_HEADER_LENGTH: usize = 19;
pub const TIMESTAMP_OFFSET: usize = 0;
pub const TYPE_OFFSET: usize = TIMESTAMP_OFFSET + 4;
pub const SERVER_ID_OFFSET: usize = TYPE_OFFSET + 1;
pub const EVENT_SIZE_OFFSET: usize = SERVER_ID_OFFSET + 4;
pub const LOG_POS_OFFSET: usize = EVENT_SIZE_OFFSET + 4;
pub const FLAGS_OFFSET: usize = LOG_POS_OFFSET + 4;
const _: () = assert!(FLAGS_OFFSET + 2 == COMMON_HEADER_LENGTH);

/// Upper bound on one event's size. MySQL's `max_allowed_packet` maximum is
/// 1 GiB, and no event binlogd writes exceeds it (large transactions are
/// many events, each bounded by `binlog_row_event_max_size`). A length
/// field above this is corruption, not data.
pub const EVENT_SIZE_MAX: u64 = 1 << 30;

/// Header flags.
pub const LOG_EVENT_BINLOG_IN_USE_F: u16 = 0x0001;
pub const LOG_EVENT_THREAD_SPECIFIC_F: u16 = 0x0004;
pub const LOG_EVENT_SUPPRESS_USE_F: u16 = 0x0008;
pub const LOG_EVENT_ARTIFICIAL_F: u16 = 0x0020;
pub const LOG_EVENT_RELAY_LOG_F: u16 = 0x0040;
pub const LOG_EVENT_IGNORABLE_F: u16 = 0x0080;

/// `binlog_checksum` algorithm byte stored at the end of the FDE body.
pub const BINLOG_CHECKSUM_ALG_OFF: u8 = 0;
pub const BINLOG_CHECKSUM_ALG_CRC32: u8 = 1;
/// MySQL's `BINARY_LOG_CHECKSUM_ALG_UNDEF`: a Format_description written
/// before checksums existed (MySQL before 5.6.1, MariaDB before 5.3) has
/// no algorithm byte and no checksum, and neither have the events after it.
pub const BINLOG_CHECKSUM_ALG_UNDEF: u8 = 255;

/// Event type codes binlogd knows by name: MySQL 8.4's, BOLT's 43 and the
/// MariaDB events a MariaDB 10.x source sends (160-164). Anything else is
/// kept as raw bytes (`Event::Unknown`).
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    Unknown = 0,
    StartV3 = 1,
    Query = 2,
    Stop = 3,
    Rotate = 4,
    Intvar = 5,
    Rand = 13,
    UserVar = 14,
    FormatDescription = 15,
    Xid = 16,
    TableMap = 19,
    /// MySQL 5.1 before GA: rows events with one column bitmap.
    WriteRowsV0 = 20,
    UpdateRowsV0 = 21,
    DeleteRowsV0 = 22,
    WriteRowsV1 = 23,
    UpdateRowsV1 = 24,
    DeleteRowsV1 = 25,
    Incident = 26,
    Heartbeat = 27,
    Ignorable = 28,
    RowsQuery = 29,
    WriteRows = 30,
    UpdateRows = 31,
    DeleteRows = 32,
    Gtid = 33,
    AnonymousGtid = 34,
    PreviousGtids = 35,
    TransactionContext = 36,
    ViewChange = 37,
    XaPrepare = 38,
    PartialUpdateRows = 39,
    TransactionPayload = 40,
    HeartbeatV2 = 41,
    GtidTagged = 42,
    /// BOLT's `Large_transaction_header_event`: leads a promoted file and
    /// names the offset of the transaction's terminating event.
    LargeTransactionHeader = 43,
    /// MariaDB: the statement behind the row events that follow.
    AnnotateRows = 160,
    /// MariaDB: the oldest binlog file crash recovery still needs.
    BinlogCheckpoint = 161,
    /// MariaDB's GTID (domain-server-seq): opens every event group.
    MariadbGtid = 162,
    /// MariaDB: the last GTID of every domain and server, at the start of each file.
    GtidList = 163,
    /// MariaDB: the rest of the file is encrypted.
    StartEncryption = 164,
    /// MariaDB (`log_bin_compress`): a Query whose statement is zlib-compressed.
    QueryCompressed = 165,
    /// MariaDB: rows events v1 whose rows are zlib-compressed.
    WriteRowsCompressedV1 = 166,
    UpdateRowsCompressedV1 = 167,
    DeleteRowsCompressedV1 = 168,
    /// MariaDB: rows events v2 whose rows are zlib-compressed.
    WriteRowsCompressed = 169,
    UpdateRowsCompressed = 170,
    DeleteRowsCompressed = 171,
}

impl EventType {
    pub fn from_code(code: u8) -> Option<EventType> {
        use EventType::*;
        Some(match code {
            0 => Unknown,
            1 => StartV3,
            2 => Query,
            3 => Stop,
            4 => Rotate,
            5 => Intvar,
            13 => Rand,
            14 => UserVar,
            15 => FormatDescription,
            16 => Xid,
            19 => TableMap,
            20 => WriteRowsV0,
            21 => UpdateRowsV0,
            22 => DeleteRowsV0,
            23 => WriteRowsV1,
            24 => UpdateRowsV1,
            25 => DeleteRowsV1,
            26 => Incident,
            27 => Heartbeat,
            28 => Ignorable,
            29 => RowsQuery,
            30 => WriteRows,
            31 => UpdateRows,
            32 => DeleteRows,
            33 => Gtid,
            34 => AnonymousGtid,
            35 => PreviousGtids,
            36 => TransactionContext,
            37 => ViewChange,
            38 => XaPrepare,
            39 => PartialUpdateRows,
            40 => TransactionPayload,
            41 => HeartbeatV2,
            42 => GtidTagged,
            43 => LargeTransactionHeader,
            160 => AnnotateRows,
            161 => BinlogCheckpoint,
            162 => MariadbGtid,
            163 => GtidList,
            164 => StartEncryption,
            165 => QueryCompressed,
            166 => WriteRowsCompressedV1,
            167 => UpdateRowsCompressedV1,
            168 => DeleteRowsCompressedV1,
            169 => WriteRowsCompressed,
            170 => UpdateRowsCompressed,
            171 => DeleteRowsCompressed,
            _ => return None,
        })
    }

    /// The name `mysqlbinlog` and `SHOW BINLOG EVENTS` print.
    pub fn name_of(code: u8) -> &'static str {
        use EventType::*;
        match EventType::from_code(code) {
            Some(Query) => "Query",
            Some(Stop) => "Stop",
            Some(Rotate) => "Rotate",
            Some(Intvar) => "Intvar",
            Some(Rand) => "RAND",
            Some(UserVar) => "User var",
            Some(FormatDescription) => "Format_desc",
            Some(Xid) => "Xid",
            Some(TableMap) => "Table_map",
            // MySQL 5.1's names for its pre-GA rows events.
            Some(WriteRowsV0) => "Write_rows_event_old",
            Some(UpdateRowsV0) => "Update_rows_event_old",
            Some(DeleteRowsV0) => "Delete_rows_event_old",
            Some(WriteRowsV1) => "Write_rows_v1",
            Some(UpdateRowsV1) => "Update_rows_v1",
            Some(DeleteRowsV1) => "Delete_rows_v1",
            Some(Incident) => "Incident",
            Some(Heartbeat) => "Heartbeat",
            Some(Ignorable) => "Ignorable",
            Some(RowsQuery) => "Rows_query",
            Some(WriteRows) => "Write_rows",
            Some(UpdateRows) => "Update_rows",
            Some(DeleteRows) => "Delete_rows",
            Some(Gtid) => "Gtid",
            Some(AnonymousGtid) => "Anonymous_Gtid",
            Some(PreviousGtids) => "Previous_gtids",
            Some(TransactionContext) => "Transaction_context",
            Some(ViewChange) => "View_change",
            Some(XaPrepare) => "XA_prepare",
            Some(PartialUpdateRows) => "Update_rows_partial",
            Some(TransactionPayload) => "Transaction_payload",
            Some(HeartbeatV2) => "Heartbeat_v2",
            Some(GtidTagged) => "Gtid_tagged_log_event",
            Some(LargeTransactionHeader) => "Large_transaction_header",
            Some(StartV3) => "Start_v3",
            Some(AnnotateRows) => "Annotate_rows",
            Some(BinlogCheckpoint) => "Binlog_checkpoint",
            Some(MariadbGtid) => "Gtid (MariaDB)",
            Some(GtidList) => "Gtid_list",
            Some(StartEncryption) => "Start_encryption",
            // MariaDB's Log_event::get_type_str.
            Some(QueryCompressed) => "Query_compressed",
            Some(WriteRowsCompressed) => "Write_rows_compressed",
            Some(UpdateRowsCompressed) => "Update_rows_compressed",
            Some(DeleteRowsCompressed) => "Delete_rows_compressed",
            Some(WriteRowsCompressedV1) => "Write_rows_compressed_v1",
            Some(UpdateRowsCompressedV1) => "Update_rows_compressed_v1",
            Some(DeleteRowsCompressedV1) => "Delete_rows_compressed_v1",
            Some(Unknown) | None => "Unknown",
        }
    }
}

/// Number of event types whose post-header length the FDE lists: types
/// 1..=43, i.e. MySQL 8.4's 42 plus BOLT's Large_transaction_header.
pub const EVENT_TYPE_COUNT: usize = 43;

/// Post-header lengths MySQL 8.4 writes in its Format_description event,
/// index `type - 1`, followed by 0 for type 43.
pub const POST_HEADER_LENGTHS: [u8; EVENT_TYPE_COUNT] = {
    let mut lengths = [0u8; EVENT_TYPE_COUNT];
    lengths[EventType::StartV3 as usize - 1] = 56;
    lengths[EventType::Query as usize - 1] = 13;
    lengths[EventType::Rotate as usize - 1] = 8;
    lengths[9 - 1] = 4; // APPEND_BLOCK
    lengths[11 - 1] = 4; // DELETE_FILE
    lengths[EventType::FormatDescription as usize - 1] = (57 + EVENT_TYPE_COUNT) as u8;
    lengths[17 - 1] = 4; // BEGIN_LOAD_QUERY
    lengths[18 - 1] = 26; // EXECUTE_LOAD_QUERY
    lengths[EventType::TableMap as usize - 1] = 8;
    lengths[EventType::WriteRowsV1 as usize - 1] = 8;
    lengths[EventType::UpdateRowsV1 as usize - 1] = 8;
    lengths[EventType::DeleteRowsV1 as usize - 1] = 8;
    lengths[EventType::Incident as usize - 1] = 2;
    lengths[EventType::WriteRows as usize - 1] = 10;
    lengths[EventType::UpdateRows as usize - 1] = 10;
    lengths[EventType::DeleteRows as usize - 1] = 10;
    lengths[EventType::Gtid as usize - 1] = 42;
    lengths[EventType::AnonymousGtid as usize - 1] = 42;
    lengths[EventType::TransactionContext as usize - 1] = 18;
    lengths[EventType::ViewChange as usize - 1] = 52;
    lengths[EventType::PartialUpdateRows as usize - 1] = 10;
    lengths[EventType::TransactionPayload as usize - 1] = 40;
    lengths
};

/// The server version string binlogd writes into every FDE. Readers parse
/// the leading `8.4.0` to decide which features the file may use.
pub const SERVER_VERSION: &str = "8.4.0-binlogd";
/// `immediate_server_version` / `original_server_version` in Gtid events:
/// major*10000 + minor*100 + patch.
pub const SERVER_VERSION_ID: u32 = 80400;
