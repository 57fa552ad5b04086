//! The source side of replication: COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID
//! stream the binlog files to a replica or CDC reader, as MySQL's
//! Binlog_sender does.
//!
//! Stream shape, per file: an artificial Rotate (timestamp 0, log_pos 0,
//! `LOG_EVENT_ARTIFICIAL_F`) naming the file and the start position, then
//! the file's Format_description with `LOG_EVENT_BINLOG_IN_USE_F` cleared
//! (the reader would otherwise take the source for crashed), then the
//! file's events as stored, byte for byte. When the dump starts in the
//! middle of a file, that FDE gets `log_pos = 0` (the replica must not
//! advance its position with it) and `created = 0` (the replica must not
//! treat it as a fresh start and drop temporary tables); in GTID mode only
//! when the file's first transaction is skipped. Skipped transactions (GTID
//! mode) are answered by a heartbeat at their end, so the replica's position
//! still moves. While waiting for commits, heartbeats every
//! `@master_heartbeat_period` nanoseconds carry the end of the last event.
//!
//! Cost to the source: a dump reads the files through its own
//! [`LogReader`] (its 1 MiB read-ahead, from which all the events a wake-up
//! finds are lent as one run and framed straight into a 256 KiB socket
//! write buffer) and waits on
//! the log's visible end, which commits publish without a lock readers
//! take (binlog's visible_end.rs); commits never wait for a reader. A reader that stops reading blocks only its own
//! thread, until `net_write_timeout`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog::{BinlogError, CorruptionKind, LogEventRef, LogReader, LogRunRef};
use binlog_format::checksum::{event_crc32, CHECKSUM_LENGTH};
use binlog_format::constants::{
    EventType, BINLOG_CHECKSUM_ALG_CRC32, COMMON_HEADER_LENGTH, EVENT_SIZE_OFFSET, FLAGS_OFFSET, LOG_EVENT_ARTIFICIAL_F,
    LOG_EVENT_BINLOG_IN_USE_F, LOG_POS_OFFSET, SERVER_ID_OFFSET, TYPE_OFFSET,
};
use binlog_format::events::GtidEvent;
use binlog_format::gtid_set::{Gtid, GtidSet, Tag, Tsid, Uuid};
use database::BinlogStatus;
use protocol::{BinlogStream, GtidSetEntry, MysqlError};

use crate::semi_sync::{packet, AckReader, LastRequest, LogPosition, SemiSyncSource};

/// Where a dump starts.
pub enum DumpStart {
    /// COM_BINLOG_DUMP: a file (empty = the first in the index) and offset.
    Position { file_name: String, position: u64 },
    /// COM_BINLOG_DUMP_GTID: everything not in the reader's executed set.
    Gtids(GtidSet),
}

/// What the reading session declared with user variables before the dump.
#[derive(Debug, Clone, Default)]
pub struct DumpSettings {
    /// `@master_binlog_checksum` was set: the reader understands checksums.
    pub checksum_declared: bool,
    /// ... and set to CRC32: the events made up before the first FDE (the
    /// artificial Rotate) carry one. MariaDB's mariadb-binlog declares
    /// 'NONE' and then reads a CRC32 stream fine, as from MySQL.
    pub checksum_declared_crc32: bool,
    /// `@master_heartbeat_period` (nanoseconds); zero or unset = none.
    pub heartbeat_period: Option<Duration>,
    pub non_blocking: bool,
    /// `source_verify_checksum` (MySQL's, default OFF): check each event's
    /// CRC32 before sending it and end the dump at a mismatch. Off, the
    /// replica checks what it receives.
    pub verify_checksums: bool,
    /// `binlogd_dump_send_delay` (µs): a dump that has sent everything
    /// visible rests until the next multiple of it before it reads again
    /// (see [`dump`]).
    pub send_delay: Duration,
    /// The reader set `@rpl_semi_sync_replica` (or `@rpl_semi_sync_slave`):
    /// the server's semi-synchronous replication, whose header every
    /// packet then carries and whose acknowledgements the reader sends.
    pub semi_sync: Option<Arc<SemiSyncSource>>,
}

impl DumpSettings {
    /// The most `binlogd_dump_send_delay` can add to a replica's lag.
    pub const SEND_DELAY_MAX: Duration = Duration::from_secs(1);
}

/// How often a waiting dump looks at its kill flag and its peer: bounds
/// how long KILL or shutdown takes to end a dump that has nothing to send.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// MySQL's `net_write_timeout` default: a reader that reads nothing for this
/// long loses its dump.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// A dump's socket write buffer: the memory bound of a reader besides its
/// current event; large enough that a stream of 8-16 KiB rows events
/// leaves in few large writes (measured with `bench dump`).
const STREAM_BUFFER_BYTES: usize = 256 * 1024;

/// Offset of the `created` timestamp in a Format_description event: after
/// the common header, the binlog version (u16) and the 50-byte server
/// version.
const FDE_CREATED_OFFSET: usize = COMMON_HEADER_LENGTH + 2 + 50;

/// 1236 ER_SOURCE_FATAL_ERROR_READING_BINLOG: what the source sends; the
/// replica wraps it in "Got fatal error 1236 from source when reading data
/// from binary log: '...'".
pub fn fatal(message: impl Into<String>) -> MysqlError {
    MysqlError::new(1236, "HY000", message)
}

/// The reader's SID block as a GTID set, tagged entries included. A tag
/// MySQL would not accept is 1236, as MySQL refuses a malformed encoding.
pub fn gtid_set_from_request(entries: &[GtidSetEntry]) -> Result<GtidSet, MysqlError> {
    let mut set = GtidSet::new();
    for entry in entries {
        let tag = match &entry.tag {
            Some(tag) => Tag::from_stored(tag.as_bytes()).map_err(|_| fatal(format!("Malformed GTID set encoding: tag {tag:?}.")))?,
            None => Tag::NONE,
        };
        for interval in &entry.intervals {
            set.add_tsid_interval(Tsid { uuid: Uuid(entry.uuid), tag }, interval.start, interval.end_exclusive);
        }
    }
    Ok(set)
}

/// Streams the log until the end (non-blocking), a kill, the reader going
/// away, or an error (returned for the caller to send).
///
/// After a dump has sent everything visible it rests until the next
/// multiple of `settings.send_delay` (`binlogd_dump_send_delay`, 5 ms by
/// default) on the monotonic clock, the same instants for all dumps (see
/// pacing.rs), before it reads again, so that under a steady commit stream each dump
/// wakes, reads and writes once per delay instead of once per group
/// commit: per-group wake-ups of 16 dumps and their readers cost a 2-core
/// source a third of its commits (`bench dump --tail-readers`). A replica
/// lags by at most the delay more; an idle dump still wakes at the first
/// commit (it waits on the log's visible end, not on a timer).
pub fn dump(log: BinlogStatus<'_>, start: DumpStart, settings: &DumpSettings, stream: &mut BinlogStream<'_>) -> Result<(), MysqlError> {
    let _ = stream.set_write_timeout(WRITE_TIMEOUT);
    let _ = stream.set_buffer_bytes(STREAM_BUFFER_BYTES);
    let (mut reader, plan) = open(log, start)?;
    // Blocking dumps only: a non-blocking one ends at the log's end.
    let _batch = (!settings.non_blocking).then(crate::scheduling::BatchScheduling::enter);
    let _named = crate::thread_name::DumpThreadName::enter();
    reader.set_verify_checksums(settings.verify_checksums);
    let semi_sync = match &settings.semi_sync {
        Some(source) => Some(SemiSyncDump::start(source.clone(), stream)?),
        None => None,
    };
    let paced;
    let settings = match &semi_sync {
        // A committer waits for this dump: no resting between sends.
        Some(_) => {
            paced = DumpSettings { send_delay: Duration::ZERO, ..settings.clone() };
            &paced
        }
        None => settings,
    };
    let mut sender = Sender {
        log,
        stream,
        settings,
        server_id: log.options().server_id,
        checksum_on: settings.checksum_declared_crc32,
        file_name: plan.file_name.clone(),
        expected_position: 0,
        last_sent: Instant::now(),
        unflushed: false,
        rotated: false,
        first_event: (plan.file_name.clone(), plan.position),
        first_file: Some(plan),
        semi_sync: semi_sync.as_ref(),
    };
    sender.run(reader)
}

/// A semi-synchronous reader's dump: counted as a client while it lasts,
/// its acknowledgements read by their own thread.
struct SemiSyncDump {
    source: Arc<SemiSyncSource>,
    connection_id: u32,
    last_request: Arc<LastRequest>,
    /// Stopped (and joined) before the replica is uncounted.
    reader: Option<AckReader>,
}

impl SemiSyncDump {
    fn start(source: Arc<SemiSyncSource>, stream: &BinlogStream<'_>) -> Result<SemiSyncDump, MysqlError> {
        let connection_id = stream.handle().id();
        let socket = stream.try_clone_socket().map_err(|error| fatal(format!("semi-sync: cannot read acknowledgements: {error}")))?;
        let last_request = Arc::new(LastRequest::default());
        source.add_replica(connection_id);
        let reader = AckReader::start(socket, connection_id, source.clone(), last_request.clone());
        let mut dump = SemiSyncDump { source, connection_id, last_request, reader: None };
        dump.reader = Some(reader.map_err(|error| fatal(format!("semi-sync: cannot start the acknowledgement reader: {error}")))?);
        Ok(dump)
    }
}

impl Drop for SemiSyncDump {
    fn drop(&mut self) {
        drop(self.reader.take());
        self.source.remove_replica(self.connection_id);
    }
}

/// How the first file starts.
struct FirstFile {
    file_name: String,
    /// Where the dump starts in it (4 = its beginning).
    position: u64,
    /// Zero the FDE's log_pos and created fields.
    clear_log_pos: bool,
    clear_created: bool,
}

fn open(log: BinlogStatus<'_>, start: DumpStart) -> Result<(LogReader, FirstFile), MysqlError> {
    match start {
        DumpStart::Position { file_name, position } => {
            let names = log.file_names();
            let file_name = if file_name.is_empty() { names.first().cloned().unwrap_or_default() } else { file_name };
            if !names.contains(&file_name) {
                return Err(fatal("Could not find first log file name in binary log index file"));
            }
            if position < 4 {
                return Err(fatal("Client requested master to start replication from position < 4"));
            }
            let size = std::fs::metadata(log.options().dir.join(&file_name)).map(|m| m.len()).unwrap_or(0);
            if position > size {
                return Err(fatal("Client requested master to start replication from position > file size"));
            }
            let reader = log.reader_from_position(&file_name, position).map_err(reader_error)?;
            let mid_file = position > 4;
            Ok((reader, FirstFile { file_name, position, clear_log_pos: mid_file, clear_created: mid_file }))
        }
        DumpStart::Gtids(executed) => {
            check_gtids(log, &executed)?;
            let reader = log.reader_from_gtid_set(&executed).map_err(reader_error)?;
            let (file_name, _) = reader.position();
            // Like MySQL: clear `created` when the file's first transaction
            // is skipped. Its GTID may have any UUID (a replica logs its
            // source's), so it is read from the file.
            let first = read_first_gtid(&log.options().dir.join(&file_name)).ok().flatten();
            let clear_created = first.is_some_and(|gtid| executed.contains(&gtid));
            Ok((reader, FirstFile { file_name, position: 4, clear_log_pos: clear_created, clear_created }))
        }
    }
}

/// MySQL's two refusals of an auto-positioning reader.
fn check_gtids(log: BinlogStatus<'_>, executed: &GtidSet) -> Result<(), MysqlError> {
    let purged = log.purged_gtids();
    if !purged.is_subset_of(executed) {
        return Err(fatal(format!(
            "The slave is connecting using CHANGE MASTER TO MASTER_AUTO_POSITION = 1, but the master has purged binary logs containing GTIDs that the slave requires. The GTID set sent by the slave is '{executed}', and the missing transactions are '{}'.",
            missing(&purged, executed)
        )));
    }
    let uuid = log.options().server_uuid;
    let ours = log.executed_gtids();
    let mut theirs_from_us = GtidSet::new();
    for (tsid, intervals) in executed.intervals() {
        if tsid.uuid == uuid {
            for &(start, end) in intervals {
                theirs_from_us.add_tsid_interval(*tsid, start, end);
            }
        }
    }
    if !theirs_from_us.is_subset_of(&ours) {
        return Err(fatal(
            "Slave has more GTIDs than the master has, using the master's SERVER_UUID. This may indicate that the end of the binary log was truncated or that the last binary log file was lost, e.g., after a power or disk failure when sync_binlog != 1. The master may or may not have rolled back transactions that were already replicated to the slave. Suggest to replicate any transactions that master has rolled back from slave to master, and/or commit empty transactions on master to account for transactions that have been committed on master but are not included in GTID_EXECUTED.",
        ));
    }
    Ok(())
}

/// `purged` minus `executed`, for the error text.
fn missing(purged: &GtidSet, executed: &GtidSet) -> GtidSet {
    purged.subtract(executed)
}

fn reader_error(error: BinlogError) -> MysqlError {
    match error {
        BinlogError::SourceLogUnavailable(message) => fatal(message),
        other => fatal(other.to_string()),
    }
}

/// An event that cannot be read once the dump runs (a start position
/// inside an event, a damaged file) ends it with 1236 in Binlog_sender's
/// words, followed by where it started and where it stopped, so the
/// replica's Last_IO_Error names the coordinates to fix.
fn read_error(error: BinlogError, first_event: &(String, u64)) -> MysqlError {
    let BinlogError::Corruption { file, offset, kind, .. } = error else { return reader_error(error) };
    let what = match kind {
        CorruptionKind::Checksum => "event read from binlog did not pass crc check",
        CorruptionKind::Truncated => "binlog truncated in the middle of event; consider out of disk space on master",
        CorruptionKind::Malformed => "bogus data in log event",
    };
    let (first_file, first_position) = first_event;
    fatal(format!(
        "{what}; the first event '{first_file}' at {first_position}, the last event read from '{file}' at {offset}, the last byte read from '{file}' at {offset}."
    ))
}

struct Sender<'l, 's, 'a> {
    log: BinlogStatus<'l>,
    stream: &'s mut BinlogStream<'a>,
    settings: &'s DumpSettings,
    server_id: u32,
    /// Whether the events of the file being sent carry a CRC32 footer (the
    /// reader's declaration until the first FDE is read, as in MySQL).
    checksum_on: bool,
    file_name: String,
    /// Where the next event should start if nothing was skipped; 0 before
    /// the first event of a file.
    expected_position: u64,
    /// When the stream last went out (a flush): heartbeats are due a
    /// period after it. Taken per flush, not per event (a clock read per
    /// event was a tenth of a dump thread's CPU under a commit stream).
    last_sent: Instant,
    /// Events were buffered since the last flush.
    unflushed: bool,
    /// The file's Rotate went out: no heartbeat until the next file starts.
    /// MariaDB's replica has already switched to the new file name then and
    /// fails on a heartbeat naming the old one ("heartbeat is not
    /// compatible with local info").
    rotated: bool,
    /// Set until the first file's header has been sent.
    first_file: Option<FirstFile>,
    /// Where the dump started (file, position), named by its read errors.
    first_event: (String, u64),
    /// Set for a semi-synchronous reader.
    semi_sync: Option<&'s SemiSyncDump>,
}

impl Sender<'_, '_, '_> {
    fn run(&mut self, mut reader: LogReader) -> Result<(), MysqlError> {
        if let Some(first) = self.first_file.take() {
            self.start_file(&first.file_name, first.position)?;
            self.send_format_description(&first)?;
        }
        loop {
            if self.stream.is_killed() {
                return Ok(());
            }
            // Events still in the write buffer go out as soon as the reader
            // has caught up, before it waits: a replica must not lag by a
            // wait. Everything visible when a commit wakes the dump leaves
            // in one write.
            let wait = if self.settings.non_blocking || self.unflushed { Duration::ZERO } else { self.wait_time() };
            match reader.next_run_ref(wait).map_err(|error| read_error(error, &self.first_event))? {
                Some(run) => match run.single() {
                    Some(event) => self.send(event)?,
                    None => self.send_run(run)?,
                },
                None => {
                    if self.unflushed {
                        self.last_sent = Instant::now();
                    }
                    let (file_name, position) = reader.position();
                    // Between files (the reader moved on, the new file's
                    // first event not read yet) a heartbeat would name the
                    // wrong file: none then.
                    let in_file = file_name == self.file_name;
                    if in_file && position > self.expected_position && self.expected_position != 0 {
                        // Transactions skipped at the end of what is there.
                        self.heartbeat(position)?;
                    }
                    if self.settings.non_blocking {
                        self.stream.send_eof().map_err(network)?;
                        return Ok(());
                    }
                    if let Some(period) = self.settings.heartbeat_period {
                        if in_file && self.last_sent.elapsed() >= period {
                            self.heartbeat(position)?;
                        }
                    }
                    self.stream.flush().map_err(network)?;
                    if std::mem::take(&mut self.unflushed) {
                        // Caught up and sent (`last_sent` was taken
                        // above). Commits until the next tick go out
                        // together (see `dump`); then wait (the peer
                        // check is for idle dumps).
                        if !self.settings.send_delay.is_zero() {
                            crate::pacing::sleep_to_next_tick(self.settings.send_delay);
                        }
                        continue;
                    }
                    if self.stream.peer_closed() {
                        return Ok(());
                    }
                }
            }
        }
    }

    fn wait_time(&self) -> Duration {
        match self.settings.heartbeat_period {
            Some(period) => period.saturating_sub(self.last_sent.elapsed()).clamp(Duration::from_millis(1), POLL_INTERVAL),
            None => POLL_INTERVAL,
        }
    }

    /// Sends one event as stored, from the reader's buffer into the
    /// socket buffer; only an FDE is copied first, to clear its flag.
    fn send(&mut self, event: LogEventRef<'_>) -> Result<(), MysqlError> {
        self.follow_file(event.file_name)?;
        if event.header.event_type == EventType::FormatDescription as u8 {
            if event.position == 4 && self.expected_position != 0 {
                // The first file's FDE, already sent by
                // send_format_description. Sending it twice would be more
                // than noise: MariaDB's replica advances its position by
                // each event's length and would then be ahead of ours
                // ("heartbeat is not compatible with local info").
                return Ok(());
            }
            let mut bytes = event.bytes.to_vec();
            // A later file may have the other algorithm (`SET GLOBAL
            // binlog_checksum` rotated to it): sent as written, the reader
            // follows its Format_description, and a reader that declared no
            // checksum support is stopped as MySQL's dump thread stops it.
            self.checksum_on = fde_has_checksum(&bytes);
            if self.checksum_on && !self.settings.checksum_declared {
                return Err(fatal(format!(
                    "Slave can not handle replication events with the checksum that master is configured to log; the first event '{}' at 4, the last event read from './{}' at 4, the last byte read from './{}' at {}.",
                    event.file_name,
                    event.file_name,
                    event.file_name,
                    4 + bytes.len()
                )));
            }
            bytes[FLAGS_OFFSET] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
            self.expected_position = event.position + bytes.len() as u64;
            return self.send_bytes(&bytes);
        }
        if self.expected_position != 0 && event.position > self.expected_position {
            // GTID mode skipped transactions: tell the reader their end.
            self.heartbeat(event.position)?;
        }
        self.expected_position = event.position + event.bytes.len() as u64;
        if event.header.event_type == EventType::Rotate as u8 {
            self.rotated = true;
        }
        self.send_bytes(event.bytes)
    }

    /// Sends a run of events as stored, each its own packet, in one pass
    /// over the reader's buffer. A run holds no FDE, Rotate or Stop (they
    /// come alone, to `send`) and has no gap inside, so only its start can
    /// follow skipped transactions.
    fn send_run(&mut self, run: LogRunRef<'_>) -> Result<(), MysqlError> {
        self.follow_file(run.file_name)?;
        if self.expected_position != 0 && run.position > self.expected_position {
            self.heartbeat(run.position)?;
        }
        self.expected_position = run.end_position();
        for event in run.event_bytes() {
            self.emit(event)?;
        }
        self.unflushed = true;
        Ok(())
    }

    /// Opens the stream's next file when the reader has moved on (after a
    /// Rotate, or to a promoted file).
    fn follow_file(&mut self, file_name: &str) -> Result<(), MysqlError> {
        if file_name != self.file_name {
            self.file_name = file_name.to_string();
            self.expected_position = 0;
            self.start_file(file_name, 4)?;
        }
        Ok(())
    }

    fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), MysqlError> {
        self.emit(bytes)?;
        self.unflushed = true;
        Ok(())
    }

    /// One event into the write buffer; for a semi-synchronous reader
    /// behind the header, asking for an acknowledgement at a transaction's
    /// end while semi-synchronous replication is enabled (ON, or OFF and
    /// waiting for a replica to catch up).
    fn emit(&mut self, event: &[u8]) -> Result<(), MysqlError> {
        let Some(semi_sync) = self.semi_sync else {
            return self.stream.send_event(event).map_err(network);
        };
        let ack = semi_sync.source.enabled() && ends_transaction(event, self.checksum_on);
        if ack {
            let end = u32::from_le_bytes(event[LOG_POS_OFFSET..LOG_POS_OFFSET + 4].try_into().expect("4 bytes"));
            semi_sync.last_request.note(LogPosition::new(&self.file_name, u64::from(end)));
        }
        let flags = if ack { packet::FLAG_ACK_REQUEST } else { 0 };
        self.stream.send_semi_sync_event(flags, event).map_err(network)
    }

    /// The artificial Rotate that opens every file of the stream.
    fn start_file(&mut self, file_name: &str, position: u64) -> Result<(), MysqlError> {
        self.rotated = false;
        let mut body = position.to_le_bytes().to_vec();
        body.extend_from_slice(file_name.as_bytes());
        let event = self.build_event(EventType::Rotate, 0, LOG_EVENT_ARTIFICIAL_F, &body);
        self.send_bytes(&event)
    }

    /// The first file's FDE, read from the file (the reader has already
    /// skipped it when it starts mid-file).
    fn send_format_description(&mut self, first: &FirstFile) -> Result<(), MysqlError> {
        let path = self.log.options().dir.join(&first.file_name);
        let mut bytes = read_format_description(&path).map_err(|error| fatal(format!("I/O error reading log event: {error}")))?;
        self.checksum_on = fde_has_checksum(&bytes);
        if self.checksum_on && !self.settings.checksum_declared {
            let end = 4 + bytes.len();
            return Err(fatal(format!(
                "Slave can not handle replication events with the checksum that master is configured to log; the first event '{}' at {}, the last event read from './{}' at 4, the last byte read from './{}' at {end}.",
                first.file_name, first.position, first.file_name, first.file_name
            )));
        }
        bytes[FLAGS_OFFSET] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
        if first.clear_log_pos {
            bytes[LOG_POS_OFFSET..LOG_POS_OFFSET + 4].copy_from_slice(&[0; 4]);
        }
        if first.clear_created {
            bytes[FDE_CREATED_OFFSET..FDE_CREATED_OFFSET + 4].copy_from_slice(&[0; 4]);
        }
        if self.checksum_on && (first.clear_log_pos || first.clear_created) {
            let body_end = bytes.len() - CHECKSUM_LENGTH;
            let crc = event_crc32(&bytes[..body_end]);
            bytes[body_end..].copy_from_slice(&crc.to_le_bytes());
        }
        self.expected_position = if first.position > 4 { first.position } else { 4 + bytes.len() as u64 };
        self.send_bytes(&bytes)
    }

    /// A Heartbeat (type 27, body = file name) at `position`, flushed: the
    /// reader learns the source is alive and where it stands.
    fn heartbeat(&mut self, position: u64) -> Result<(), MysqlError> {
        if self.rotated {
            return Ok(());
        }
        let name = self.file_name.clone();
        // log_pos is 32 bits on the wire; past 4 GiB MySQL truncates too.
        let event = self.build_event(EventType::Heartbeat, position as u32, 0, name.as_bytes());
        self.send_bytes(&event)?;
        self.expected_position = position;
        self.unflushed = false;
        self.stream.flush().map_err(network)?;
        self.last_sent = Instant::now();
        Ok(())
    }

    /// An event made up by the sender (timestamp 0), checksummed when the
    /// current file's events are.
    fn build_event(&self, event_type: EventType, log_pos: u32, flags: u16, body: &[u8]) -> Vec<u8> {
        let checksum = if self.checksum_on { CHECKSUM_LENGTH } else { 0 };
        let size = COMMON_HEADER_LENGTH + body.len() + checksum;
        let mut event = vec![0u8; COMMON_HEADER_LENGTH];
        event[TYPE_OFFSET] = event_type as u8;
        event[SERVER_ID_OFFSET..SERVER_ID_OFFSET + 4].copy_from_slice(&self.server_id.to_le_bytes());
        event[EVENT_SIZE_OFFSET..EVENT_SIZE_OFFSET + 4].copy_from_slice(&(size as u32).to_le_bytes());
        event[LOG_POS_OFFSET..LOG_POS_OFFSET + 4].copy_from_slice(&log_pos.to_le_bytes());
        event[FLAGS_OFFSET..FLAGS_OFFSET + 2].copy_from_slice(&flags.to_le_bytes());
        event.extend_from_slice(body);
        if self.checksum_on {
            let crc = event_crc32(&event);
            event.extend_from_slice(&crc.to_le_bytes());
        }
        event
    }
}

fn network(error: protocol::ProtocolError) -> MysqlError {
    // The reader is gone; nobody will read an error packet.
    MysqlError::new(1158, "08S01", format!("Got an error reading communication packets: {error}"))
}

/// Whether `event` is the last of a transaction: an Xid, an XA PREPARE,
/// or a Query other than `BEGIN` (DDL, and the `COMMIT` of a transaction
/// logged without rows).
fn ends_transaction(event: &[u8], checksum_on: bool) -> bool {
    /// Query's post-header: thread id, exec time, db length, error code,
    /// status variables length.
    const QUERY_POST_HEADER: usize = 13;
    if event.len() < COMMON_HEADER_LENGTH {
        return false;
    }
    match event[TYPE_OFFSET] {
        t if t == EventType::Xid as u8 || t == EventType::XaPrepare as u8 => true,
        t if t == EventType::Query as u8 => {
            let body = &event[COMMON_HEADER_LENGTH..event.len() - if checksum_on { CHECKSUM_LENGTH } else { 0 }];
            if body.len() < QUERY_POST_HEADER {
                return false;
            }
            let database_bytes = body[8] as usize;
            let status_bytes = u16::from_le_bytes([body[11], body[12]]) as usize;
            let query = body.get(QUERY_POST_HEADER + status_bytes + database_bytes + 1..).unwrap_or_default();
            query != b"BEGIN"
        }
        _ => false,
    }
}

/// An FDE ends with the checksum algorithm byte and, when that is CRC32,
/// the 4-byte checksum.
fn fde_has_checksum(fde: &[u8]) -> bool {
    fde.len() > COMMON_HEADER_LENGTH + CHECKSUM_LENGTH && fde[fde.len() - CHECKSUM_LENGTH - 1] == BINLOG_CHECKSUM_ALG_CRC32
}

/// The Format_description event at offset 4 of a binlog file.
fn read_format_description(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let mut header = [0u8; COMMON_HEADER_LENGTH];
    file.read_exact_at(&mut header, 4)?;
    let size = u32::from_le_bytes(header[EVENT_SIZE_OFFSET..EVENT_SIZE_OFFSET + 4].try_into().expect("4 bytes")) as usize;
    if header[TYPE_OFFSET] != EventType::FormatDescription as u8 || !(COMMON_HEADER_LENGTH..=4096).contains(&size) {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "Could not find format_description_event in binlog file"));
    }
    let mut event = vec![0u8; size];
    file.read_exact_at(&mut event, 4)?;
    Ok(event)
}

/// The Previous_gtids event right after the FDE, decoded.
/// The GTID of the first transaction in the file at `path` (after its
/// Previous_gtids and, in a promoted file, its Large_transaction_header);
/// `None` when the file has no transaction yet.
fn read_first_gtid(path: &Path) -> std::io::Result<Option<Gtid>> {
    let fde = read_format_description(path)?;
    let checksum = if fde_has_checksum(&fde) { CHECKSUM_LENGTH } else { 0 };
    let file = File::open(path)?;
    let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let mut offset = 4 + fde.len() as u64;
    // Previous_gtids, then at most a Large_transaction_header before the Gtid.
    for _ in 0..3 {
        let mut header = [0u8; COMMON_HEADER_LENGTH];
        match file.read_exact_at(&mut header, offset) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(error) => return Err(error),
        }
        let size = u32::from_le_bytes(header[EVENT_SIZE_OFFSET..EVENT_SIZE_OFFSET + 4].try_into().expect("4 bytes")) as usize;
        if size < COMMON_HEADER_LENGTH + checksum || size > 1 << 24 {
            return Err(invalid(format!("event of {size} bytes at {offset}")));
        }
        if GtidEvent::is_gtid_type(header[TYPE_OFFSET]) {
            let mut body = vec![0u8; size - COMMON_HEADER_LENGTH - checksum];
            file.read_exact_at(&mut body, offset + COMMON_HEADER_LENGTH as u64)?;
            let event = GtidEvent::decode_body_of_type(header[TYPE_OFFSET], &body).map_err(|error| invalid(error.to_string()))?;
            return Ok(Some(event.gtid));
        }
        offset += size as u64;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::replication::{GnoInterval, GtidSetEntry};

    #[test]
    fn a_requests_tagged_entries_join_the_set_and_a_bad_tag_is_1236() {
        let entry = |tag: Option<&str>| GtidSetEntry {
            uuid: [7; 16],
            tag: tag.map(str::to_owned),
            intervals: vec![GnoInterval { start: 1, end_exclusive: 3 }],
        };
        let set = gtid_set_from_request(&[entry(None), entry(Some("batch"))]).unwrap();
        assert_eq!(set.to_string(), "07070707-0707-0707-0707-070707070707:1-2:batch:1-2");
        let error = gtid_set_from_request(&[entry(Some("Batch"))]).unwrap_err();
        assert_eq!(error.code, 1236);
    }
}
