//! The coordinator (MySQL's SQL thread) and its workers.
//!
//! The coordinator pops boundary queue entries, waits until each may run
//! (logical clock, [`Scheduler`]), and hands it to the next free worker
//! through a queue of one slot per worker. In [`CoordinatorMode::BoundaryQueue`]
//! it never reads or decodes an event; [`CoordinatorMode::EventScan`] first
//! rescans the transaction's events (as MySQL's coordinator does, for
//! comparison).
//!
//! An apply error stops everything: the first error is kept for SHOW
//! REPLICA STATUS (Last_SQL_Errno/Last_SQL_Error, the worker's code), the
//! coordinator stops dispatching and the workers roll back what waits to
//! commit. [`Coordinator::stop`] returns the entries popped but not
//! committed, in queue order, so a restart applies them first; their relay
//! space is still held.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::SystemTime;

use parking_lot::Mutex;
use protocol::MysqlError;

use crate::applied_positions::{AppliedCheckpoint, AppliedPositions};
use crate::applier::Applier;
use crate::boundary_queue::{BoundaryEntry, BoundaryQueue};
use crate::event_scan;
use crate::job_queue::JobQueue;
use crate::relay::spill::SpillEnd;
use crate::relay::RelayLog;
use crate::scheduler::{Interrupted, Scheduler, Ticket};
use crate::stop::StopFlag;
use crate::worker::{self, Job};

/// replica_parallel_workers default.
pub const WORKERS_DEFAULT: usize = 4;
/// MySQL's replica_parallel_workers maximum.
pub const WORKERS_MAX: usize = 1024;

/// Jobs the coordinator may hand over ahead per worker: enough that a
/// worker finds its next transaction queued and the coordinator is woken
/// once per few jobs (see `job_queue.rs`), few enough that a STOP REPLICA
/// waits for little work already handed over.
const JOB_SLOTS_PER_WORKER: usize = 8;
/// The threads' names, which benchmarks read their CPU time by (Linux
/// keeps the first 15 bytes: `replica-coordin`, `replica-worker-`).
pub const COORDINATOR_THREAD_NAME: &str = "replica-coordinator";
/// Followed by the worker's number, from 1.
pub const WORKER_THREAD_NAME_PREFIX: &str = "replica-worker-";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoordinatorMode {
    /// Schedule from the boundary queue's metadata alone.
    BoundaryQueue,
    /// Read and decode every event to find boundaries and clocks.
    EventScan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoordinatorConfig {
    /// replica_parallel_workers (at least 1).
    pub workers: usize,
    /// replica_preserve_commit_order.
    pub preserve_commit_order: bool,
    pub mode: CoordinatorMode,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        CoordinatorConfig { workers: WORKERS_DEFAULT, preserve_commit_order: true, mode: CoordinatorMode::BoundaryQueue }
    }
}

/// SHOW REPLICA STATUS's SQL-thread side.
#[derive(Debug, Clone, Default)]
pub struct CoordinatorStatus {
    pub transactions_applied: u64,
    pub bytes_applied: u64,
    /// Source position of the last transaction committed
    /// (Relay_Source_Log_File / Exec_Source_Log_Pos).
    pub source_log_file: Arc<str>,
    pub exec_source_log_pos: u64,
    /// Last_SQL_Errno / Last_SQL_Error / Last_SQL_Error_Timestamp.
    pub last_error: Option<(MysqlError, SystemTime)>,
    /// The dispatch ticket whose position the two fields above hold.
    pub position_ticket: Option<u64>,
}

/// What the coordinator and workers share.
pub struct Shared {
    pub relay: Arc<RelayLog>,
    pub scheduler: Scheduler,
    pub stop: StopFlag,
    /// Ends the coordinator's wait for the next queue entry: requested by
    /// `stop` and by a worker that failed (the coordinator may be waiting
    /// for a transaction that never comes).
    pub dispatch_stop: StopFlag,
    /// The applied position as a crash must find it.
    pub positions: Arc<AppliedPositions>,
    status: Mutex<CoordinatorStatus>,
    /// Dispatched and not committed, by queue index; the coordinator adds
    /// the entry it held (popped, not dispatched) when it ends.
    in_flight: Mutex<BTreeMap<u64, BoundaryEntry>>,
}

impl Shared {
    /// A streamed transaction that was cut off is no longer in flight (it
    /// comes again as a new entry); nothing of it is counted.
    pub fn record_withdrawn(&self, entry: &BoundaryEntry) {
        self.in_flight.lock().remove(&entry.index);
    }

    pub fn record_applied(&self, entry: &BoundaryEntry, ticket: &Ticket) {
        self.in_flight.lock().remove(&entry.index);
        let mut status = self.status.lock();
        status.transactions_applied += 1;
        status.bytes_applied += entry.size_bytes;
        // Workers may finish in any order (commit order preserved: in
        // order of their place, not of their return): the position only
        // moves forward, to the latest ticket's.
        if status.position_ticket.is_none_or(|recorded| recorded < ticket.number) {
            status.position_ticket = Some(ticket.number);
            status.source_log_file = entry.source_log_file.clone();
            status.exec_source_log_pos = entry.source_end_log_pos;
        }
    }
}

/// What a stopped coordinator leaves.
#[derive(Debug)]
pub struct CoordinatorOutcome {
    pub error: Option<MysqlError>,
    /// The status once every worker ended (SHOW REPLICA STATUS after STOP).
    pub status: CoordinatorStatus,
    /// Popped from the queue and not committed, in queue order.
    pub unapplied: Vec<BoundaryEntry>,
}

pub struct Coordinator {
    thread: Option<JoinHandle<()>>,
    workers: Vec<JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl Coordinator {
    pub fn start(config: CoordinatorConfig, relay: Arc<RelayLog>, queue: Arc<BoundaryQueue>, applier: Arc<dyn Applier>) -> Coordinator {
        let positions = Arc::new(AppliedPositions::new(AppliedCheckpoint::default()));
        Coordinator::start_with_positions(config, relay, queue, applier, positions)
    }

    /// [`Coordinator::start`] continuing `positions` (kept across runs and
    /// recovered after a crash by the caller).
    pub fn start_with_positions(
        config: CoordinatorConfig,
        relay: Arc<RelayLog>,
        queue: Arc<BoundaryQueue>,
        applier: Arc<dyn Applier>,
        positions: Arc<AppliedPositions>,
    ) -> Coordinator {
        positions.start_run();
        let worker_count = config.workers.clamp(1, WORKERS_MAX);
        let shared = Arc::new(Shared {
            relay,
            scheduler: Scheduler::new(config.preserve_commit_order),
            stop: StopFlag::new(),
            dispatch_stop: StopFlag::new(),
            positions,
            status: Mutex::new(CoordinatorStatus::default()),
            in_flight: Mutex::new(BTreeMap::new()),
        });
        let jobs = Arc::new(JobQueue::<Job>::new(worker_count * JOB_SLOTS_PER_WORKER));
        let workers = (0..worker_count)
            .map(|index| {
                let (shared, jobs, session) = (shared.clone(), jobs.clone(), applier.worker(index));
                std::thread::Builder::new()
                    .name(format!("{WORKER_THREAD_NAME_PREFIX}{}", index + 1))
                    // Workers run the source's DDL through the SQL layer.
                    .stack_size(protocol::STATEMENT_STACK_BYTES)
                    .spawn(move || worker::run(index, shared, jobs, session))
                    .expect("spawn a replica worker")
            })
            .collect();
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(COORDINATOR_THREAD_NAME.into())
                .spawn(move || {
                    let mut held = None;
                    let result = dispatch_loop(config.mode, &shared, &queue, &jobs, &mut held);
                    if let Some(entry) = held {
                        shared.in_flight.lock().insert(entry.index, entry);
                    }
                    if let Err(Interrupted::Failed(error)) = result {
                        shared.status.lock().last_error = Some((error, SystemTime::now()));
                    }
                    // Workers finish what they hold, then see the flag.
                    shared.stop.request();
                })
                .expect("spawn the replica coordinator")
        };
        Coordinator { thread: Some(thread), workers, shared }
    }

    pub fn status(&self) -> CoordinatorStatus {
        self.shared.status.lock().clone()
    }

    /// True once the coordinator ended by itself (an apply error).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// STOP REPLICA SQL_THREAD: stops dispatching, lets workers finish or
    /// roll back what they hold, and returns what was not applied.
    pub fn stop(mut self) -> CoordinatorOutcome {
        self.shut_down();
        let unapplied: Vec<BoundaryEntry> = std::mem::take(&mut *self.shared.in_flight.lock()).into_values().collect();
        CoordinatorOutcome { error: self.shared.scheduler.error(), status: self.status(), unapplied }
    }

    fn shut_down(&mut self) {
        self.shared.stop.request();
        self.shared.dispatch_stop.request();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
        if let Some(error) = self.shared.scheduler.error() {
            let mut status = self.shared.status.lock();
            if status.last_error.is_none() {
                status.last_error = Some((error, SystemTime::now()));
            }
        }
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// `entry` once complete; `None` if it was cut off (its space is given
/// back: it comes again as a new entry).
fn wait_until_complete(shared: &Shared, entry: BoundaryEntry) -> Result<Option<BoundaryEntry>, Interrupted> {
    let Some(file) = entry.location.spill_file().filter(|_| entry.is_streamed()) else {
        return Ok(Some(entry));
    };
    match file.wait_for_end(&shared.dispatch_stop) {
        SpillEnd::Complete => Ok(Some(entry.completed().expect("the end is set before the file is complete"))),
        SpillEnd::Abandoned => {
            shared.relay.release(&entry.location);
            Ok(None)
        }
        SpillEnd::Writing => Err(shared.scheduler.error().map_or(Interrupted::Stopped, Interrupted::Failed)),
    }
}

fn dispatch_loop(
    mode: CoordinatorMode,
    shared: &Shared,
    queue: &BoundaryQueue,
    jobs: &JobQueue<Job>,
    held: &mut Option<BoundaryEntry>,
) -> Result<(), Interrupted> {
    let mut scan_buffer = Vec::new();
    let mut mariadb_clock = crate::mariadb_clock::MariadbClock::new();
    loop {
        let popped =
            queue.pop(&shared.dispatch_stop).map_err(|_| shared.scheduler.error().map_or(Interrupted::Stopped, Interrupted::Failed))?;
        let entry = match mode {
            CoordinatorMode::BoundaryQueue => popped,
            CoordinatorMode::EventScan => {
                *held = Some(popped.clone());
                // MySQL's coordinator reads a transaction once it is in the
                // relay log whole: a streamed one is waited for.
                let Some(popped) = wait_until_complete(shared, popped)? else {
                    *held = None;
                    continue;
                };
                let entry = event_scan::rescan(&shared.relay, popped, &mut scan_buffer, &mut mariadb_clock, &shared.stop);
                let entry = entry.inspect_err(|error| shared.scheduler.fail(error.clone(), None)).map_err(Interrupted::Failed)?;
                if scan_buffer.capacity() > 1 << 20 {
                    scan_buffer = Vec::new();
                }
                entry
            }
        };
        *held = Some(entry.clone());
        let ticket = shared.scheduler.wait_to_dispatch(&entry.clock(), entry.connection_epoch, &shared.stop)?;
        shared.in_flight.lock().insert(entry.index, entry.clone());
        shared.positions.dispatched(ticket.number, entry.source_position());
        *held = None;
        let job = Job { entry, ticket };
        if jobs.push(job, || shared.stop.is_requested() || shared.scheduler.error().is_some()).is_err() {
            return Err(shared.scheduler.error().map_or(Interrupted::Stopped, Interrupted::Failed));
        }
    }
}
