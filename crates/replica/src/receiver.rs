//! The receiver (MySQL's I/O thread): connects to the source, asks for the
//! transactions it lacks, and feeds every event to [`Intake`] until it is
//! stopped or fails for good.
//!
//! Connect sequence, as MySQL's replica: log in; `SELECT UNIX_TIMESTAMP()`
//! (clock offset); `SELECT @@GLOBAL.SERVER_ID` (equal ids are fatal, 1593);
//! `SELECT @@GLOBAL.SERVER_UUID`; `SET @master_heartbeat_period`;
//! `SET @master_binlog_checksum = @@global.binlog_checksum`;
//! `SET @slave_uuid`; COM_REGISTER_SLAVE; then COM_BINLOG_DUMP_GTID with
//! the start set plus every GTID retrieved so far (auto-position), or
//! COM_BINLOG_DUMP from the end of the last complete transaction.
//!
//! A MariaDB source (version string with "MariaDB") gets MariaDB's replica
//! sequence instead: no `@@SERVER_UUID` (MariaDB has none), `SET
//! @mariadb_slave_capability = 4`, `SET @slave_connect_state` when
//! positioning by MariaDB GTID, COM_REGISTER_SLAVE, COM_BINLOG_DUMP (with
//! Annotate_rows). Auto-position by MySQL GTIDs cannot work there (1593).
//!
//! Retries: a failed connect, or a connection that ends, is retried every
//! `connect_retry` up to `retry_count` attempts in a row (MySQL's
//! SOURCE_CONNECT_RETRY, SOURCE_RETRY_COUNT). What a retry cannot fix ends
//! the receiver: the source's 1236, a checksum failure, equal server ids,
//! a relay log write failure. A transaction cut by a disconnect is dropped
//! from the relay log and asked for again.

use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use binlog_format::gtid_set::GtidSet;
use parking_lot::Mutex;
use protocol::MysqlError;

use crate::boundary_queue::BoundaryQueue;
use crate::errors;
use crate::intake::{Intake, IntakeError, SourcePosition};
use crate::mariadb_gtid_position::MariadbGtidPosition;
use crate::receiver_status::{IoState, ReceiverStatus};
use crate::relay::RelayLog;
use crate::source_client::{DumpPacket, SourceAddress, SourceClient};
use crate::stop::{StopFlag, WAIT_SLICE};

/// Where replication starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartPosition {
    /// SOURCE_AUTO_POSITION=1: everything not in this set (the replica's
    /// executed GTID set).
    Gtids(GtidSet),
    /// SOURCE_LOG_FILE / SOURCE_LOG_POS.
    FilePosition { file_name: String, position: u64 },
    /// A MariaDB source, by MariaDB GTID (`MASTER_USE_GTID=slave_pos`):
    /// everything after this position (one GTID per domain; empty: from
    /// the source's first transaction).
    MariadbGtids(MariadbGtidPosition),
}

#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    pub source: SourceAddress,
    /// This replica's server_id (must differ from the source's).
    pub server_id: u32,
    /// Sent as `@slave_uuid`; the source lists it in SHOW REPLICAS.
    pub replica_uuid: String,
    pub start: StartPosition,
    /// SOURCE_HEARTBEAT_PERIOD (MySQL: half of replica_net_timeout).
    pub heartbeat_period: Duration,
    /// replica_net_timeout: no byte for this long and the connection is
    /// taken for dead.
    pub net_timeout: Duration,
    /// SOURCE_CONNECT_RETRY.
    pub connect_retry: Duration,
    /// SOURCE_RETRY_COUNT (MySQL 8.4's default is 10).
    pub retry_count: u64,
    /// `rpl_semi_sync_replica_enabled`: ask the source for semi-synchronous
    /// replication and acknowledge what it asks for (`semi_sync_ack.rs`).
    pub semi_sync: bool,
    /// Queue a spilled transaction as soon as it spills, so a worker
    /// applies it while it arrives (see [`crate::intake`]).
    pub stream_spilled: bool,
}

/// `binlogd_replica_stream_spilled`'s default.
pub const STREAM_SPILLED_DEFAULT: bool = true;

/// `replica_net_timeout`'s default (MySQL's).
pub const NET_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);

impl ReceiverConfig {
    pub fn new(source: SourceAddress, server_id: u32, start: StartPosition) -> ReceiverConfig {
        ReceiverConfig {
            source,
            server_id,
            replica_uuid: String::new(),
            start,
            heartbeat_period: Duration::from_secs(30),
            net_timeout: NET_TIMEOUT_DEFAULT,
            connect_retry: Duration::from_secs(60),
            retry_count: 10,
            semi_sync: false,
            stream_spilled: STREAM_SPILLED_DEFAULT,
        }
    }
}

pub struct Receiver {
    thread: Option<JoinHandle<()>>,
    relay: Arc<RelayLog>,
    queue: Arc<BoundaryQueue>,
    stop: StopFlag,
    status: Arc<Mutex<ReceiverStatus>>,
    /// The live connection's socket, shut down by `stop` so a blocked read
    /// returns at once.
    socket: Arc<Mutex<Option<TcpStream>>>,
}

impl Receiver {
    pub fn start(config: ReceiverConfig, relay: Arc<RelayLog>, queue: Arc<BoundaryQueue>) -> Receiver {
        let stop = StopFlag::new();
        let status = Arc::new(Mutex::new(ReceiverStatus { state: IoState::Connecting, ..ReceiverStatus::default() }));
        let socket = Arc::new(Mutex::new(None));
        let thread = {
            let (stop, status, socket, relay, queue) = (stop.clone(), status.clone(), socket.clone(), relay.clone(), queue.clone());
            std::thread::Builder::new()
                .name("replica-receiver".into())
                .spawn(move || {
                    let mut run = Run { config, relay, queue, stop, status: status.clone(), socket, next_index: 0, epoch: 0 };
                    run.run();
                    status.lock().state = IoState::No;
                })
                .expect("spawn the receiver thread")
        };
        Receiver { thread: Some(thread), relay, queue, stop, status, socket }
    }

    pub fn status(&self) -> ReceiverStatus {
        let mut status = self.status.lock().clone();
        status.queue_length = self.queue.len();
        status.relay = self.relay.stats();
        status
    }

    /// True once the thread ended by itself (a fatal error).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// STOP REPLICA IO_THREAD: ends the connection and waits for the thread.
    pub fn stop(mut self) -> ReceiverStatus {
        self.shut_down();
        self.status()
    }

    fn shut_down(&mut self) {
        self.stop.request();
        if let Some(socket) = self.socket.lock().as_ref() {
            let _ = socket.shutdown(Shutdown::Both);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.shut_down();
    }
}

struct Run {
    config: ReceiverConfig,
    relay: Arc<RelayLog>,
    queue: Arc<BoundaryQueue>,
    stop: StopFlag,
    status: Arc<Mutex<ReceiverStatus>>,
    socket: Arc<Mutex<Option<TcpStream>>>,
    next_index: u64,
    epoch: u64,
}

/// How one connection ended.
enum Ended {
    Stopped,
    /// Worth another connection (network, timeout, source restart).
    Retry(MysqlError),
    Fatal(MysqlError),
}

impl Run {
    fn run(&mut self) {
        let mut last_complete = match &self.config.start {
            StartPosition::FilePosition { file_name, position } => SourcePosition { file_name: file_name.clone(), position: *position },
            StartPosition::Gtids(_) | StartPosition::MariadbGtids(_) => SourcePosition { file_name: String::new(), position: 4 },
        };
        let mut failed_attempts = 0u64;
        loop {
            if self.stop.is_requested() {
                return;
            }
            self.status.lock().state = IoState::Connecting;
            let ended = match self.connect(&last_complete) {
                Ok(client) => {
                    failed_attempts = 0;
                    self.stream(client, &mut last_complete)
                }
                Err(error) if is_fatal(&error) => Ended::Fatal(error),
                Err(error) => {
                    failed_attempts += 1;
                    let wrapped = errors::error_connecting(
                        &self.config.source.display(),
                        failed_attempts,
                        self.config.retry_count,
                        self.config.connect_retry.as_secs(),
                        &error,
                    );
                    if failed_attempts >= self.config.retry_count {
                        Ended::Fatal(wrapped)
                    } else {
                        Ended::Retry(wrapped)
                    }
                }
            };
            *self.socket.lock() = None;
            match ended {
                Ended::Stopped => return,
                Ended::Fatal(error) => {
                    tracing::error!(code = error.code, message = %error.message, "replica receiver stopped");
                    self.status.lock().set_error(error);
                    return;
                }
                Ended::Retry(error) => {
                    tracing::warn!(code = error.code, message = %error.message, "replica receiver retries");
                    self.status.lock().set_error(error);
                    self.sleep(self.config.connect_retry);
                }
            }
        }
    }

    fn sleep(&self, duration: Duration) {
        let deadline = Instant::now() + duration;
        while !self.stop.is_requested() && Instant::now() < deadline {
            std::thread::sleep(WAIT_SLICE.min(deadline.saturating_duration_since(Instant::now())));
        }
    }

    fn connect(&mut self, last_complete: &SourcePosition) -> Result<SourceClient, MysqlError> {
        let config = &self.config;
        let mut client = SourceClient::connect(&config.source, config.net_timeout)?;
        *self.socket.lock() = Some(client.shutdown_handle()?);
        if self.stop.is_requested() {
            // stop() may have looked for the socket before it was there.
            client.close();
        }
        let source_now = client.query_value("SELECT UNIX_TIMESTAMP()")?.and_then(|text| text.parse::<i64>().ok()).unwrap_or(0);
        let source_server_id = client.query_value("SELECT @@GLOBAL.SERVER_ID")?.and_then(|text| text.parse::<u32>().ok()).unwrap_or(0);
        if source_server_id == config.server_id {
            return Err(errors::replica_fatal("The replica I/O thread stops because source and replica have equal MySQL server ids; these ids must be different for replication to work (or the --replicate-same-server-id option must be used on replica but this does not always make sense; please check the manual before using it)."));
        }
        let mariadb = client.is_mariadb();
        // MariaDB has no server_uuid (the query would fail with 1193).
        let source_uuid = if mariadb { String::new() } else { client.query_value("SELECT @@GLOBAL.SERVER_UUID")?.unwrap_or_default() };
        client.query(&format!("SET @master_heartbeat_period = {}", config.heartbeat_period.as_nanos()))?;
        client.negotiate_checksum()?;
        if mariadb {
            client.declare_mariadb_capability()?;
        }
        let semi_sync = config.semi_sync && client.declare_semi_sync()?;
        if !config.replica_uuid.is_empty() && !mariadb {
            client.query(&format!("SET @slave_uuid = '{}'", config.replica_uuid.replace('\'', "")))?;
        }
        if let StartPosition::MariadbGtids(start) = &config.start {
            if !mariadb {
                return Err(errors::replica_fatal(&format!(
                    "MariaDB GTID positioning needs a MariaDB source; '{}' is not one",
                    client.server_version
                )));
            }
            // From the start position, moved forward by what was received.
            let mut connect_state = start.clone();
            connect_state.merge(&self.status.lock().gtid_io_pos);
            client.set_mariadb_connect_state(&connect_state.to_string())?;
        }
        client.register_replica(config.server_id, "", 0)?;
        let dump_position = || u32::try_from(last_complete.position).map_err(|_| errors::replica_fatal("a source position past 4 GiB"));
        match &config.start {
            StartPosition::Gtids(_) if mariadb => {
                return Err(errors::replica_fatal(&format!(
                    "SOURCE_AUTO_POSITION = 1 needs MySQL GTIDs, and '{}' is MariaDB: position by SOURCE_LOG_FILE / SOURCE_LOG_POS or by MariaDB GTID",
                    client.server_version
                )));
            }
            StartPosition::Gtids(start) => {
                let mut requested = start.clone();
                requested.union(&self.status.lock().retrieved_gtid_set);
                client.request_dump_gtid(config.server_id, &requested, false)?;
            }
            StartPosition::FilePosition { .. } if mariadb => {
                client.request_mariadb_dump(config.server_id, &last_complete.file_name, dump_position()?)?
            }
            StartPosition::FilePosition { .. } => {
                client.request_dump_position(config.server_id, &last_complete.file_name, dump_position()?, false)?
            }
            StartPosition::MariadbGtids(_) => client.request_mariadb_dump(config.server_id, "", 4)?,
        }
        let our_now = SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs() as i64).unwrap_or(0);
        let mut status = self.status.lock();
        status.source_server_id = source_server_id;
        status.source_uuid = source_uuid;
        status.source_version = client.server_version.clone();
        status.source_clock_offset_seconds = source_now - our_now;
        status.connections += 1;
        status.semi_sync = semi_sync;
        status.state = IoState::Yes;
        Ok(client)
    }

    fn stream(&mut self, mut client: SourceClient, last_complete: &mut SourcePosition) -> Ended {
        self.epoch += 1;
        let status = self.status.clone();
        let mut intake = Intake::new(
            &self.relay,
            &self.queue,
            &status,
            &self.stop,
            client.events_have_checksum(),
            self.epoch,
            &mut self.next_index,
            last_complete,
        );
        intake.stream_spilled = self.config.stream_spilled;
        let ended = loop {
            if self.stop.is_requested() {
                break Ended::Stopped;
            }
            let event = match client.read_event() {
                Ok(DumpPacket::Event(event)) => event,
                Ok(DumpPacket::EndOfLog) => break Ended::Retry(errors::lost_connection("the source ended the dump")),
                Err(_) if self.stop.is_requested() => break Ended::Stopped,
                Err(error) if error.code == 1236 => break Ended::Fatal(errors::source_fatal_reading_binlog(&error)),
                Err(error) if is_fatal(&error) => break Ended::Fatal(error),
                Err(error) => break Ended::Retry(error),
            };
            // A semi-sync ack names the event's end in the source's file;
            // read before the event is handed on (it borrows the client).
            let end_position = event.get(13..17).map_or(0, |bytes| u32::from_le_bytes(bytes.try_into().expect("4 bytes")));
            match intake.take(event) {
                Ok(()) => {}
                Err(IntakeError::Stopped) => break Ended::Stopped,
                Err(IntakeError::Failed(error)) => break Ended::Fatal(error),
            }
            // The relay log holds the event now.
            if client.take_ack_request() {
                if let Err(error) = client.send_ack(intake.source_file(), u64::from(end_position)) {
                    break Ended::Retry(error);
                }
            }
        };
        client.close();
        self.status.lock().semi_sync = false;
        if let Err(error) = intake.abandon_open() {
            return Ended::Fatal(error);
        }
        ended
    }
}

/// Errors a reconnect cannot fix.
fn is_fatal(error: &MysqlError) -> bool {
    matches!(error.code, 1236 | 13114 | 1743 | 1593 | 1594 | 1595 | 2020 | 2059)
}
