//! The replica's threads, as START / STOP REPLICA see them: the receiver
//! (MySQL's I/O thread) and the coordinator with its workers (the SQL
//! thread), sharing one relay log and boundary queue (`replica` crate).
//!
//! | statement | receiver | coordinator | relay log and queue |
//! |-----------|----------|-------------|---------------------|
//! | START REPLICA, both stopped | starts from the executed GTID set (auto-position) or the stored applied position | starts | new, empty |
//! | START REPLICA IO_THREAD, applier running | starts from executed ∪ retrieved GTIDs, or the end of the last queued transaction | — | kept |
//! | START REPLICA SQL_THREAD, receiver running | — | starts; what the last one popped and did not commit runs first | kept |
//! | STOP REPLICA [IO_THREAD \| SQL_THREAD] | ends the connection | lets workers finish or roll back, keeps what was not applied | kept until both are stopped and one starts |
//!
//! Nothing of the relay log is persisted: a restart, a crash or a full
//! stop starts again from what the database has durably executed, so
//! nothing is lost or applied twice. With auto-position that is its GTID
//! set. Without, it is the applied source position every transaction
//! commits with its rows (`applied_slot.rs`, MySQL's
//! `relay_log_info_repository=TABLE`): the receiver re-fetches from its
//! low-water mark and the workers skip what committed beyond it
//! (`replica::applied_positions`). STOP also copies the low-water mark
//! into `replica_source.json` (the start position when no slot of the
//! current source holds one).
//!
//! A thread that ended by itself (an error) is reaped at the next
//! statement: its status (Last_IO_Error, Last_SQL_Error) stays visible
//! until the next START.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use binlog_format::GtidSet;
use parking_lot::Mutex;
use protocol::MysqlError;
use replica::relay::stats::RelayStatsSnapshot;
use replica::relay::RelayLogConfig;
use replica::{
    AppliedPositions, BoundaryEntry, BoundaryQueue, Coordinator, CoordinatorConfig, CoordinatorMode, CoordinatorStatus, Receiver,
    ReceiverConfig, ReceiverStatus, RelayLog, SourceAddress, SourcePosition, StartPosition, QUEUE_ENTRIES_MAX_DEFAULT,
};

use crate::eval::value::{to_number, Value};
use crate::parse::ReplicaThreads as Which;
use crate::replica::applied_slot;
use crate::replica::applier::{ApplierProgress, SqlApplier};
use crate::replica::source_settings::SourceSettings;
use crate::session::{Shared, Warning};

/// Relay-log files (IN_MEMORY_RELAYLOG_ENABLED=0) and spill files live here,
/// under the data directory.
const RELAY_DIRECTORY: &str = "relay-log";
/// relay_log_space_limit for the file relay log: MySQL's default is 0
/// (unlimited); binlogd bounds it like the memory ring's default.
pub const RELAY_FILE_SPACE_LIMIT_BYTES: u64 = 1 << 30;

#[derive(Default)]
pub struct ReplicaThreads {
    pipeline: Mutex<Option<Pipeline>>,
    progress: Arc<ApplierProgress>,
}

struct Pipeline {
    relay: Arc<RelayLog>,
    queue: Arc<BoundaryQueue>,
    receiver: Option<Receiver>,
    coordinator: Option<Coordinator>,
    /// The receiver's status when it last stopped (its errors and
    /// Retrieved_Gtid_Set stay visible).
    receiver_stopped: ReceiverStatus,
    coordinator_stopped: CoordinatorStatus,
    /// The applied position, continued by every applier run of this
    /// relay log; recovered from the slots when it is made.
    positions: Arc<AppliedPositions>,
    position_epoch: u64,
    /// Popped by the last coordinator and not committed: first next time.
    unapplied: Vec<BoundaryEntry>,
}

/// What SHOW REPLICA STATUS shows of the threads.
#[derive(Debug, Clone, Default)]
pub struct ThreadsStatus {
    pub receiver: ReceiverStatus,
    pub receiver_running: bool,
    pub coordinator: CoordinatorStatus,
    pub coordinator_running: bool,
    /// Seconds_Behind_Source: `None` (NULL) unless the applier runs.
    pub seconds_behind_source: Option<u64>,
    pub queue_length: usize,
    /// The relay log's counters now (a stopped receiver's own copy is
    /// from when it stopped).
    pub relay: RelayStatsSnapshot,
}

impl ReplicaThreads {
    /// START REPLICA [IO_THREAD | SQL_THREAD]. Notes for threads already
    /// running (3083), as MySQL gives.
    pub fn start(&self, shared: &Shared, which: Which) -> Result<Vec<Warning>, MysqlError> {
        let settings = match shared.replica_source.settings() {
            Some(settings) if !settings.host.is_empty() => settings,
            _ => return Err(not_configured()),
        };
        let shared = shared.this.upgrade().expect("the service outlives its statements");
        let mut guard = self.pipeline.lock();
        reap(&mut guard, &shared);
        let (start_io, start_sql) = which.threads();
        let idle = guard.as_ref().is_none_or(|pipeline| pipeline.receiver.is_none() && pipeline.coordinator.is_none());
        if idle {
            *guard = Some(Pipeline::new(&shared, &settings)?);
        }
        let pipeline = guard.as_mut().expect("made above");
        let mut started = false;
        if start_io && pipeline.receiver.is_none() {
            let start = pipeline.receiver_start(&shared, &settings);
            let config = receiver_config(&shared, &settings, start);
            pipeline.receiver_stopped.last_error = None;
            pipeline.receiver = Some(Receiver::start(config, pipeline.relay.clone(), pipeline.queue.clone()));
            started = true;
        }
        if start_sql && pipeline.coordinator.is_none() {
            pipeline.queue.push_front_all(std::mem::take(&mut pipeline.unapplied));
            let applier = Arc::new(SqlApplier::new(shared.clone(), self.progress.clone(), pipeline.position_epoch));
            pipeline.coordinator_stopped.last_error = None;
            pipeline.coordinator = Some(Coordinator::start_with_positions(
                coordinator_config(&shared),
                pipeline.relay.clone(),
                pipeline.queue.clone(),
                applier,
                pipeline.positions.clone(),
            ));
            started = true;
        }
        if started {
            return Ok(Vec::new());
        }
        Ok(vec![Warning { level: "Note", code: 3083, message: "Replication thread(s) for channel '' are already runnning.".into() }])
    }

    /// STOP REPLICA [IO_THREAD | SQL_THREAD]; note 3084 when none of the
    /// named threads was running.
    pub fn stop(&self, shared: &Shared, which: Which) -> Result<Vec<Warning>, MysqlError> {
        let mut guard = self.pipeline.lock();
        reap(&mut guard, shared);
        let (stop_io, stop_sql) = which.threads();
        let mut stopped = false;
        if let Some(pipeline) = guard.as_mut() {
            if stop_io {
                if let Some(receiver) = pipeline.receiver.take() {
                    pipeline.receiver_ended(receiver);
                    stopped = true;
                }
            }
            if stop_sql {
                if let Some(coordinator) = pipeline.coordinator.take() {
                    pipeline.stop_coordinator(coordinator, shared)?;
                    stopped = true;
                }
            }
        }
        if stopped {
            return Ok(Vec::new());
        }
        let named = match which {
            Which::Both => "",
            Which::Io => " IO",
            Which::Sql => " SQL",
        };
        Ok(vec![Warning {
            level: "Note",
            code: 3084,
            message: format!("Replication thread(s){named} for channel '' are already stopped."),
        }])
    }

    /// Stops both threads (server shutdown); the applier's position is
    /// stored as STOP REPLICA stores it.
    pub fn shut_down(&self, shared: &Shared) {
        if let Err(error) = self.stop(shared, Which::Both) {
            tracing::warn!(code = error.code, message = %error.message, "stopping the replica at shutdown");
        }
    }

    /// CHANGE REPLICATION SOURCE TO and RESET REPLICA need both threads
    /// stopped (MySQL's 1198 ER_REPLICA_MUST_STOP); RESET also forgets the
    /// relay log.
    pub fn require_stopped(&self, shared: &Shared, forget_relay_log: bool) -> Result<(), MysqlError> {
        let mut guard = self.pipeline.lock();
        reap(&mut guard, shared);
        if guard.as_ref().is_some_and(|pipeline| pipeline.receiver.is_some() || pipeline.coordinator.is_some()) {
            return Err(MysqlError::new(
                1198,
                "HY000",
                "This operation cannot be performed with a running replica; run STOP REPLICA first",
            ));
        }
        if forget_relay_log {
            *guard = None;
        }
        Ok(())
    }

    pub fn status(&self, shared: &Shared) -> ThreadsStatus {
        let mut guard = self.pipeline.lock();
        reap(&mut guard, shared);
        let Some(pipeline) = guard.as_ref() else {
            // Before the first START: where the slots say the applier is.
            let mut status = ThreadsStatus::default();
            if let Some(settings) = shared.replica_source.settings() {
                show_position(&mut status.coordinator, applied_slot::recover(&shared.db, settings.position_epoch).low_water);
            }
            return status;
        };
        let receiver = pipeline
            .receiver
            .as_ref()
            .map_or_else(|| pipeline.receiver_stopped.clone(), |receiver| pipeline.with_earlier_retrieved(receiver.status()));
        let mut coordinator = pipeline.coordinator.as_ref().map_or_else(|| pipeline.coordinator_stopped.clone(), Coordinator::status);
        show_position(&mut coordinator, pipeline.positions.low_water());
        let queue_length = pipeline.queue.len();
        let relay = pipeline.relay.stats();
        let seconds_behind_source = pipeline.coordinator.as_ref().map(|_| {
            let caught_up = queue_length == 0 && relay.memory_transactions + relay.spilled_transactions + relay.file_transactions == 0;
            if caught_up {
                return 0;
            }
            let last_us = self.progress.last_original_commit_us.load(std::sync::atomic::Ordering::Relaxed);
            let now_us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_micros() as i64);
            let source_now_us = now_us + receiver.source_clock_offset_seconds * 1_000_000;
            u64::try_from((source_now_us - last_us as i64) / 1_000_000).unwrap_or(0)
        });
        ThreadsStatus {
            relay,
            receiver_running: pipeline.receiver.is_some(),
            coordinator_running: pipeline.coordinator.is_some(),
            receiver,
            coordinator,
            seconds_behind_source,
            queue_length,
        }
    }
}

impl ReplicaThreads {
    /// SHOW STATUS's relay log counters (zero without a relay log).
    pub fn counters(&self) -> Vec<(&'static str, String)> {
        let guard = self.pipeline.lock();
        let semi_sync = guard.as_ref().and_then(|pipeline| pipeline.receiver.as_ref()).is_some_and(|receiver| receiver.status().semi_sync);
        let (relay, queue_length, received, applied) = match guard.as_ref() {
            Some(pipeline) => {
                let received = pipeline
                    .receiver
                    .as_ref()
                    .map_or(pipeline.receiver_stopped.transactions_received, |receiver| receiver.status().transactions_received);
                let applied = pipeline
                    .coordinator
                    .as_ref()
                    .map_or(pipeline.coordinator_stopped.transactions_applied, |coordinator| coordinator.status().transactions_applied);
                (pipeline.relay.stats(), pipeline.queue.len(), received, applied)
            }
            None => Default::default(),
        };
        vec![
            ("Replica_queue_length", queue_length.to_string()),
            ("Replica_receiver_blocked_ms", relay.receiver_blocked.as_millis().to_string()),
            ("Replica_relay_log_file_bytes", relay.file_bytes.to_string()),
            ("Replica_relay_log_file_transactions", relay.file_transactions.to_string()),
            ("Replica_relay_log_memory_bytes", relay.memory_bytes.to_string()),
            ("Replica_relay_log_memory_bytes_peak", relay.memory_bytes_peak.to_string()),
            ("Replica_relay_log_memory_transactions", relay.memory_transactions.to_string()),
            ("Replica_relay_log_spilled_bytes", relay.spilled_bytes.to_string()),
            ("Replica_relay_log_spilled_bytes_total", relay.spilled_bytes_total.to_string()),
            ("Replica_relay_log_spilled_transactions", relay.spilled_transactions.to_string()),
            ("Replica_relay_log_spilled_transactions_total", relay.spilled_transactions_total.to_string()),
            ("Replica_relay_log_streamed_transactions_total", relay.streamed_transactions_total.to_string()),
            ("Replica_transactions_applied", applied.to_string()),
            ("Replica_transactions_received", received.to_string()),
            (
                "Replica_transactions_skipped_executed",
                self.progress.transactions_skipped_executed.load(std::sync::atomic::Ordering::Relaxed).to_string(),
            ),
            // The receiver replicates semi-synchronously (MySQL 8.4's
            // name and MariaDB's).
            ("Rpl_semi_sync_replica_status", if semi_sync { "ON" } else { "OFF" }.to_string()),
            ("Rpl_semi_sync_slave_status", if semi_sync { "ON" } else { "OFF" }.to_string()),
        ]
    }
}

impl Which {
    /// (receiver, applier) named by the statement.
    fn threads(self) -> (bool, bool) {
        match self {
            Which::Both => (true, true),
            Which::Io => (true, false),
            Which::Sql => (false, true),
        }
    }
}

impl Pipeline {
    fn new(shared: &Shared, settings: &SourceSettings) -> Result<Pipeline, MysqlError> {
        let directory = shared.db.config().dir.join(RELAY_DIRECTORY);
        std::fs::create_dir_all(&directory).map_err(|error| {
            MysqlError::new(1595, "HY000", format!("Relay log write failure: could not create {}: {error}", directory.display()))
        })?;
        let config = if settings.in_memory_relaylog_enabled {
            RelayLogConfig::memory(settings.in_memory_relaylog_limit_bytes, settings.in_memory_relaylog_spill_threshold_bytes, directory)?
        } else {
            RelayLogConfig::Files {
                directory,
                file_size_max_bytes: replica::relay::RELAY_FILE_SIZE_MAX_BYTES_DEFAULT,
                space_limit_bytes: RELAY_FILE_SPACE_LIMIT_BYTES,
            }
        };
        Ok(Pipeline {
            relay: Arc::new(RelayLog::open(&config)?),
            queue: Arc::new(BoundaryQueue::new(QUEUE_ENTRIES_MAX_DEFAULT)),
            receiver: None,
            coordinator: None,
            receiver_stopped: ReceiverStatus::default(),
            coordinator_stopped: CoordinatorStatus::default(),
            unapplied: Vec::new(),
            positions: Arc::new(AppliedPositions::new(applied_slot::recover(&shared.db, settings.position_epoch))),
            position_epoch: settings.position_epoch,
        })
    }

    /// Where a new receiver starts: after everything executed, and, while
    /// the applier still has transactions queued, after those too.
    fn receiver_start(&self, shared: &Shared, settings: &SourceSettings) -> StartPosition {
        if settings.auto_position {
            let mut start: GtidSet = shared.db.executed_gtids();
            start.union(&self.receiver_stopped.retrieved_gtid_set);
            return StartPosition::Gtids(start);
        }
        match self.queue.last_pushed_position() {
            Some((file_name, position)) if self.coordinator.is_some() || !self.unapplied.is_empty() || !self.queue.is_empty() => {
                StartPosition::FilePosition { file_name: file_name.to_string(), position }
            }
            _ => match self.positions.low_water() {
                Some(applied) => StartPosition::FilePosition { file_name: applied.file.to_string(), position: applied.pos },
                None => StartPosition::FilePosition { file_name: settings.log_file.clone(), position: settings.log_pos },
            },
        }
    }

    /// Retrieved_Gtid_Set covers every receiver since the relay log was
    /// made, as MySQL's does since RESET REPLICA.
    fn with_earlier_retrieved(&self, mut status: ReceiverStatus) -> ReceiverStatus {
        status.retrieved_gtid_set.union(&self.receiver_stopped.retrieved_gtid_set);
        status
    }

    fn receiver_ended(&mut self, receiver: Receiver) {
        self.receiver_stopped = self.with_earlier_retrieved(receiver.stop());
    }

    fn stop_coordinator(&mut self, coordinator: Coordinator, shared: &Shared) -> Result<(), MysqlError> {
        let outcome = coordinator.stop();
        self.coordinator_stopped = outcome.status;
        self.unapplied = outcome.unapplied;
        store_applied_position(shared, self.positions.low_water())
    }
}

/// Relay_Source_Log_File / Exec_Source_Log_Pos: the low-water mark of
/// consecutively committed transactions, the position a restart resumes
/// from.
fn show_position(status: &mut CoordinatorStatus, low_water: Option<SourcePosition>) {
    if let Some(applied) = low_water {
        status.source_log_file = applied.file;
        status.exec_source_log_pos = applied.pos;
    }
}

/// A file-and-position replica's start when no slot of its source holds
/// a position: the low-water mark of the applier that stopped.
fn store_applied_position(shared: &Shared, low_water: Option<SourcePosition>) -> Result<(), MysqlError> {
    let (Some(settings), Some(applied)) = (shared.replica_source.settings(), low_water) else {
        return Ok(());
    };
    if settings.auto_position {
        return Ok(());
    }
    shared.replica_source.set_position(&applied.file, applied.pos)
}

/// Collects the threads that ended by themselves (an error), keeping
/// their status.
fn reap(guard: &mut Option<Pipeline>, shared: &Shared) {
    let Some(pipeline) = guard.as_mut() else {
        return;
    };
    if pipeline.receiver.as_ref().is_some_and(Receiver::is_finished) {
        let receiver = pipeline.receiver.take().expect("checked");
        pipeline.receiver_ended(receiver);
    }
    if pipeline.coordinator.as_ref().is_some_and(Coordinator::is_finished) {
        let coordinator = pipeline.coordinator.take().expect("checked");
        if let Err(error) = pipeline.stop_coordinator(coordinator, shared) {
            tracing::warn!(code = error.code, message = %error.message, "storing the replica's applied position");
        }
    }
}

fn not_configured() -> MysqlError {
    MysqlError::new(1200, "HY000", "The server is not configured as replica; fix in config file or with CHANGE REPLICATION SOURCE TO")
}

fn global_number(shared: &Shared, name: &str) -> Option<f64> {
    shared.globals.get(name).as_ref().and_then(to_number).map(|number| number.as_f64())
}

fn receiver_config(shared: &Shared, settings: &SourceSettings, start: StartPosition) -> ReceiverConfig {
    let source = SourceAddress {
        host: settings.host.clone(),
        port: settings.port,
        user: settings.user.clone(),
        password: settings.password.clone(),
    };
    let server_id = global_number(shared, "server_id").map_or(1, |id| id as u32);
    let mut config = ReceiverConfig::new(source, server_id, start);
    config.replica_uuid = shared.db.server_uuid().to_string();
    config.heartbeat_period = Duration::from_secs_f64(settings.heartbeat_period_seconds.max(0.0));
    if let Some(timeout) = global_number(shared, "replica_net_timeout") {
        config.net_timeout = Duration::from_secs(timeout.max(1.0) as u64);
    }
    config.connect_retry = Duration::from_secs(settings.connect_retry_seconds);
    config.retry_count = settings.retry_count;
    config.semi_sync = crate::variables::semi_sync::replica_enabled(&shared.globals);
    config.stream_spilled = !matches!(shared.globals.get("binlogd_replica_stream_spilled"), Some(Value::Int(0)));
    config
}

fn coordinator_config(shared: &Shared) -> CoordinatorConfig {
    let workers = global_number(shared, "replica_parallel_workers")
        .map_or(replica::coordinator::WORKERS_DEFAULT, |workers| workers.max(1.0) as usize);
    let preserve_commit_order = !matches!(shared.globals.get("replica_preserve_commit_order"), Some(Value::Int(0)));
    // The variable only ever holds one of its words (variables.rs checks).
    let mode = match shared.globals.get("binlogd_replica_coordinator_mode") {
        Some(Value::Bytes(word)) if word == b"EVENT_SCAN" => CoordinatorMode::EventScan,
        _ => CoordinatorMode::BoundaryQueue,
    };
    CoordinatorConfig { workers, preserve_commit_order, mode }
}
