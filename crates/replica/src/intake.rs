//! The receiver's per-event work: the event goes into the relay log if it
//! belongs to a transaction, and when it ends one, one boundary queue entry
//! goes out. Rotate and Format_description update where we are and how to
//! decode; heartbeats only move the position.
//!
//! A transaction that moves to a spill file is queued then, before it is
//! complete (streamed, when `stream_spilled`): its Gtid event gave its
//! clock, so it can be scheduled, and the worker reads it as it arrives.
//! Its end (source position, size) follows in the entry's `streamed_end`
//! when it is complete. A MariaDB group is not streamed: it gets its clock
//! only when complete (see [`Intake::finish`]).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use binlog_format::constants::{EventType, COMMON_HEADER_LENGTH, LOG_EVENT_ARTIFICIAL_F};
use binlog_format::events::format_description::FormatDescription;
use binlog_format::events::simple::RotateEvent;
use binlog_format::events::DecodeContext;
use binlog_format::header::EventHeader;
use parking_lot::Mutex;
use protocol::MysqlError;

use crate::boundary::{BoundaryTracker, MariadbGroup, Step, TransactionClock};
use crate::boundary_queue::{BoundaryEntry, BoundaryQueue, StreamedEnd};
use crate::errors;
use crate::mariadb_clock::MariadbClock;
use crate::receiver_status::ReceiverStatus;
use crate::relay::{AppendError, OpenTransaction, RelayLog};
use crate::stop::StopFlag;

/// Why intake stopped.
#[derive(Debug)]
pub enum IntakeError {
    Stopped,
    Failed(MysqlError),
}

impl From<MysqlError> for IntakeError {
    fn from(error: MysqlError) -> Self {
        IntakeError::Failed(error)
    }
}

impl From<AppendError> for IntakeError {
    fn from(error: AppendError) -> Self {
        match error {
            AppendError::Stopped => IntakeError::Stopped,
            AppendError::Failed(error) => IntakeError::Failed(error),
        }
    }
}

/// Where the last complete transaction ended in the source's log: a
/// file/position reconnect asks from there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePosition {
    pub file_name: String,
    pub position: u64,
}

/// One connection's intake state.
pub struct Intake<'a> {
    pub relay: &'a RelayLog,
    pub queue: &'a BoundaryQueue,
    pub status: &'a Mutex<ReceiverStatus>,
    pub stop: &'a StopFlag,
    pub events_have_checksum: bool,
    pub connection_epoch: u64,
    /// Index of the next queue entry; kept across connections.
    pub next_index: &'a mut u64,
    pub last_complete: &'a mut SourcePosition,
    /// Queue spilled transactions before they are complete.
    pub stream_spilled: bool,
    tracker: BoundaryTracker,
    open: Option<Open>,
    mariadb_clock: MariadbClock,
    format: Arc<DecodeContext>,
    source_file: Arc<str>,
    /// Read_Source_Log_Pos not yet in `status`: an event inside a
    /// transaction only records it here, and it is published with the
    /// transaction's end (under the status lock taken then anyway), by the
    /// next event outside a transaction, or after
    /// [`POSITION_PUBLISH_BYTES`] (a long transaction still shows progress).
    /// Taking the status lock for every event was a tenth of the
    /// receiver's time per sysbench transaction.
    unpublished_position: Option<u64>,
    bytes_since_published: u64,
}

/// The transaction being received.
struct Open {
    relay: OpenTransaction,
    clock: TransactionClock,
    mariadb: Option<MariadbGroup>,
    /// Set once queued before complete.
    streamed_end: Option<Arc<OnceLock<StreamedEnd>>>,
}

/// Most event bytes read before Read_Source_Log_Pos is published in the
/// middle of a transaction.
const POSITION_PUBLISH_BYTES: u64 = 1 << 20;

impl<'a> Intake<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        relay: &'a RelayLog,
        queue: &'a BoundaryQueue,
        status: &'a Mutex<ReceiverStatus>,
        stop: &'a StopFlag,
        events_have_checksum: bool,
        connection_epoch: u64,
        next_index: &'a mut u64,
        last_complete: &'a mut SourcePosition,
    ) -> Intake<'a> {
        let source_file: Arc<str> = Arc::from(last_complete.file_name.as_str());
        Intake {
            relay,
            queue,
            status,
            stop,
            events_have_checksum,
            connection_epoch,
            next_index,
            last_complete,
            stream_spilled: true,
            tracker: BoundaryTracker::new(),
            open: None,
            mariadb_clock: MariadbClock::new(),
            format: Arc::new(DecodeContext::default()),
            source_file,
            unpublished_position: None,
            bytes_since_published: 0,
        }
    }

    /// The source's binlog file the events come from now.
    pub fn source_file(&self) -> &str {
        &self.source_file
    }

    /// Takes one event (checksum already verified).
    pub fn take(&mut self, event: &[u8]) -> Result<(), IntakeError> {
        let header = EventHeader::decode(event).map_err(|error| errors::relay_log_write_failure(&error.to_string()))?;
        let body = self.body(event)?;
        self.track_position(&header, body, event.len() as u64)?;
        match self.tracker.step(&header, body)? {
            Step::Outside => self.publish_position(),
            Step::Begin { clock, mariadb, ends } => {
                self.abandon_open()?;
                let mut relay = self.relay.begin()?;
                self.relay.append(&mut relay, event, self.stop)?;
                self.open = Some(Open { relay, clock, mariadb, streamed_end: None });
                if ends {
                    self.finish(&header)?;
                } else {
                    self.stream_if_spilled(&header)?;
                }
            }
            Step::Continue => {
                let open = self.open.as_mut().ok_or_else(|| errors::relay_log_write_failure("an event outside any transaction"))?;
                self.relay.append(&mut open.relay, event, self.stop)?;
                self.stream_if_spilled(&header)?;
            }
            Step::End => {
                let open = self.open.as_mut().ok_or_else(|| errors::relay_log_write_failure("a commit outside any transaction"))?;
                self.relay.append(&mut open.relay, event, self.stop)?;
                self.finish(&header)?;
            }
        }
        Ok(())
    }

    /// Queues the open transaction if it just moved to a spill file.
    fn stream_if_spilled(&mut self, last_header: &EventHeader) -> Result<(), IntakeError> {
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        if !self.stream_spilled || open.streamed_end.is_some() || open.mariadb.is_some() {
            return Ok(());
        }
        let Some(location) = self.relay.streamed(&open.relay) else {
            return Ok(());
        };
        let streamed_end = Arc::new(OnceLock::new());
        open.streamed_end = Some(streamed_end.clone());
        let entry = BoundaryEntry {
            index: *self.next_index,
            gtid: open.clock.gtid,
            mariadb_gtid: None,
            last_committed: open.clock.last_committed,
            sequence_number: open.clock.sequence_number,
            connection_epoch: self.connection_epoch,
            size_bytes: location.length_bytes(),
            location,
            source_log_file: self.source_file.clone(),
            source_end_log_pos: u64::from(last_header.log_pos),
            format: self.format.clone(),
            streamed_end: Some(streamed_end),
        };
        *self.next_index += 1;
        let queue_blocked = self.queue.push(entry, self.stop).map_err(|_| IntakeError::Stopped)?;
        self.status.lock().queue_blocked += queue_blocked;
        Ok(())
    }

    fn finish(&mut self, end_header: &EventHeader) -> Result<(), IntakeError> {
        let Open { relay: open, mut clock, mariadb, streamed_end } = self.open.take().expect("an open transaction");
        // A MariaDB group gets its clock when complete: a group abandoned
        // half-way must not take a sequence number that would never commit
        // (what came after it would wait for it forever).
        if let Some(group) = &mariadb {
            (clock.last_committed, clock.sequence_number) = self.mariadb_clock.assign(group, self.connection_epoch);
        }
        let mariadb_gtid = mariadb.map(|group| group.gtid);
        let source_end_log_pos = u64::from(end_header.log_pos);
        let mut queue_blocked = Duration::ZERO;
        let size_bytes = match streamed_end {
            Some(streamed_end) => {
                // The end first: a worker that sees the file complete
                // reads it.
                let end = StreamedEnd { source_log_file: self.source_file.clone(), source_end_log_pos, size_bytes: open.length_bytes() };
                streamed_end.set(end.clone()).expect("a streamed transaction ends once");
                self.relay.finish(open)?;
                self.queue.streamed_complete(&end);
                end.size_bytes
            }
            None => {
                let location = self.relay.finish(open)?;
                let size_bytes = location.length_bytes();
                let entry = BoundaryEntry {
                    index: *self.next_index,
                    gtid: clock.gtid,
                    mariadb_gtid,
                    last_committed: clock.last_committed,
                    sequence_number: clock.sequence_number,
                    connection_epoch: self.connection_epoch,
                    location,
                    size_bytes,
                    source_log_file: self.source_file.clone(),
                    source_end_log_pos,
                    format: self.format.clone(),
                    streamed_end: None,
                };
                *self.next_index += 1;
                queue_blocked = self.queue.push(entry, self.stop).map_err(|_| IntakeError::Stopped)?;
                size_bytes
            }
        };
        if end_header.log_pos != 0 {
            self.last_complete.file_name = self.source_file.to_string();
            self.last_complete.position = source_end_log_pos;
        }
        let mut status = self.status.lock();
        if let Some(position) = self.unpublished_position.take() {
            status.read_source_log_pos = position;
            self.bytes_since_published = 0;
        }
        if let Some(gtid) = clock.gtid {
            status.retrieved_gtid_set.add(gtid);
        }
        if let Some(gtid) = mariadb_gtid {
            status.gtid_io_pos.update(gtid);
        }
        status.transactions_received += 1;
        status.bytes_received += size_bytes;
        status.queue_blocked += queue_blocked;
        Ok(())
    }

    /// Drops the open transaction, if any: its end never came (a new
    /// transaction began, or the connection ended).
    pub fn abandon_open(&mut self) -> Result<(), MysqlError> {
        self.publish_position();
        if let Some(open) = self.open.take() {
            self.relay.abandon(open.relay)?;
        }
        Ok(())
    }

    fn track_position(&mut self, header: &EventHeader, body: &[u8], event_bytes: u64) -> Result<(), MysqlError> {
        match EventType::from_code(header.event_type) {
            Some(EventType::Rotate) => {
                let rotate =
                    RotateEvent::decode_body(body).map_err(|error| errors::relay_log_write_failure(&format!("a Rotate event: {error}")))?;
                let name = rotate.next_file;
                self.source_file = Arc::from(name.as_str());
                // A position in the file before is worth nothing now.
                self.unpublished_position = None;
                let mut status = self.status.lock();
                status.source_log_file = name;
                status.read_source_log_pos = rotate.position;
                return Ok(());
            }
            Some(EventType::FormatDescription) => {
                let format = FormatDescription::decode_body(body)
                    .map_err(|error| errors::relay_log_write_failure(&format!("a Format_description event: {error}")))?;
                // The events after it follow its algorithm (a source's
                // `SET GLOBAL binlog_checksum` starts a file of the other).
                self.events_have_checksum = format.has_checksum();
                self.format = Arc::new(DecodeContext { format });
            }
            _ => {}
        }
        // Artificial events and an FDE sent mid-file carry log_pos 0: they
        // do not move the position.
        if header.log_pos != 0 && header.flags & LOG_EVENT_ARTIFICIAL_F == 0 {
            self.unpublished_position = Some(u64::from(header.log_pos));
        }
        self.bytes_since_published += event_bytes;
        if self.bytes_since_published >= POSITION_PUBLISH_BYTES {
            self.publish_position();
        }
        Ok(())
    }

    /// Moves the unpublished Read_Source_Log_Pos into the status.
    fn publish_position(&mut self) {
        self.bytes_since_published = 0;
        if let Some(position) = self.unpublished_position.take() {
            self.status.lock().read_source_log_pos = position;
        }
    }

    /// The bytes between the common header and the checksum.
    fn body<'e>(&self, event: &'e [u8]) -> Result<&'e [u8], MysqlError> {
        let footer = binlog_format::frame::footer_length(event, self.events_have_checksum);
        event
            .get(COMMON_HEADER_LENGTH..event.len().saturating_sub(footer))
            .ok_or_else(|| errors::relay_log_write_failure("an event shorter than its header"))
    }
}
