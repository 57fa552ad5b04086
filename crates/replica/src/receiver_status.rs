//! What the receiver reports: SHOW REPLICA STATUS's I/O-thread columns
//! (Replica_IO_Running, Source_Log_File, Read_Source_Log_Pos,
//! Retrieved_Gtid_Set, Last_IO_Errno/Error/Timestamp) and the relay log
//! counters it drives.

use std::time::{Duration, SystemTime};

use binlog_format::gtid_set::GtidSet;
use protocol::MysqlError;

use crate::mariadb_gtid_position::MariadbGtidPosition;
use crate::relay::stats::RelayStatsSnapshot;

/// Replica_IO_Running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoState {
    #[default]
    No,
    Connecting,
    Yes,
}

impl IoState {
    pub fn as_str(self) -> &'static str {
        match self {
            IoState::No => "No",
            IoState::Connecting => "Connecting",
            IoState::Yes => "Yes",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ReceiverStatus {
    pub state: IoState,
    /// Every GTID of a transaction received complete (and queued).
    pub retrieved_gtid_set: GtidSet,
    /// From a MariaDB source: the last GTID per domain received complete
    /// (MariaDB's Gtid_IO_Pos).
    pub gtid_io_pos: MariadbGtidPosition,
    /// The source's version string (from its greeting); "MariaDB" in it
    /// marks a MariaDB source.
    pub source_version: String,
    pub source_log_file: String,
    /// `log_pos` of the last event read from the source.
    pub read_source_log_pos: u64,
    pub source_server_id: u32,
    pub source_uuid: String,
    /// Source clock minus ours (seconds), from `SELECT UNIX_TIMESTAMP()`
    /// at connect: Seconds_Behind_Source corrects by it.
    pub source_clock_offset_seconds: i64,
    pub transactions_received: u64,
    pub bytes_received: u64,
    /// Connections made (the first and every reconnect).
    pub connections: u64,
    /// The live connection replicates semi-synchronously
    /// (`Rpl_semi_sync_replica_status`).
    pub semi_sync: bool,
    /// Time spent waiting for the boundary queue (the ring's wait is in
    /// the relay log counters).
    pub queue_blocked: Duration,
    /// Last_IO_Errno / Last_IO_Error / Last_IO_Error_Timestamp.
    pub last_error: Option<(MysqlError, SystemTime)>,
    /// Filled when the status is read: the boundary queue's length
    /// (In_Memory_Queue_Length) and the relay log counters (bytes and
    /// transactions in memory, spilled, in files; receiver blocked time).
    pub queue_length: usize,
    pub relay: RelayStatsSnapshot,
}

impl ReceiverStatus {
    pub fn set_error(&mut self, error: MysqlError) {
        self.last_error = Some((error, SystemTime::now()));
    }
}
