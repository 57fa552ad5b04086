//! [`RedoLog`]: the open log. Opening runs recovery; appends go through
//! [`crate::group_commit`]; checkpoints through [`crate::checkpoint`]; a
//! background flusher writes and fdatasyncs everything appended once per
//! `innodb_flush_log_at_timeout` (what makes `innodb_flush_log_at_trx_commit`
//! 0 and 2 lose at most about that much).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use storage::Storage;

use crate::checkpoint::{CheckpointInfo, CheckpointState};
use crate::control::Control;
use crate::crash_points::CrashPoints;
use crate::error::{RedoError, Result};
use crate::group_commit::{LogBuffer, Stages, Writer};
use crate::options::Options;
use crate::record::Lsn;
use crate::recovery::{self, Recovered};

/// The log's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// fdatasyncs and directory fsyncs on the append path (group syncs,
    /// background syncs, rotations). Checkpoints are not counted.
    pub fsyncs: u64,
    /// Write groups: each is one leader writing every queued record.
    pub groups: u64,
    pub records: u64,
    /// Record bytes written to segments.
    pub bytes: u64,
    pub rotations: u64,
    pub checkpoints: u64,
    /// Appends that found the log buffer full and wrote it first.
    pub buffer_full_writes: u64,
}

#[derive(Default)]
pub(crate) struct AtomicCounters {
    pub fsyncs: AtomicU64,
    pub groups: AtomicU64,
    pub records: AtomicU64,
    pub bytes: AtomicU64,
    pub rotations: AtomicU64,
    pub checkpoints: AtomicU64,
    pub buffer_full_writes: AtomicU64,
}

impl AtomicCounters {
    fn snapshot(&self) -> Counters {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        Counters {
            fsyncs: load(&self.fsyncs),
            groups: load(&self.groups),
            records: load(&self.records),
            bytes: load(&self.bytes),
            rotations: load(&self.rotations),
            checkpoints: load(&self.checkpoints),
            buffer_full_writes: load(&self.buffer_full_writes),
        }
    }
}

/// No checkpoint floor.
const NO_FLOOR: u64 = u64::MAX;

pub(crate) struct Inner {
    pub dir: PathBuf,
    pub options: Options,
    pub storage: Arc<dyn Storage>,
    pub crash: CrashPoints,
    /// Lock order: `checkpoint` → `writer` → `buffer` → `stages`;
    /// `control` alone.
    pub buffer: Mutex<LogBuffer>,
    pub writer: Mutex<Writer>,
    pub stages: Mutex<Stages>,
    pub stage_changed: Condvar,
    /// Fast-path copies of `stages.first_error.is_some()` and `stages.closed`.
    pub poisoned: AtomicBool,
    pub closed: AtomicBool,
    pub checkpoint: Mutex<CheckpointState>,
    /// What `redo.control` says now; readable while a checkpoint runs.
    pub control: Mutex<Control>,
    /// Checkpoints never delete redo at or above this LSN.
    pub floor_lsn: AtomicU64,
    pub counters: AtomicCounters,
    stop_flusher: Mutex<bool>,
    flusher_stopped: Condvar,
}

/// Stops and joins the background flusher when the last handle goes.
struct Flusher {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Flusher {
    fn stop(&self) {
        *self.inner.stop_flusher.lock() = true;
        self.inner.flusher_stopped.notify_all();
        if let Some(thread) = self.thread.lock().take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An open redo log. Cheap to clone; all clones share one log. Dropping
/// the last clone stops the background flusher without flushing (like a
/// process exit); [`RedoLog::close`] makes everything durable first.
#[derive(Clone)]
pub struct RedoLog {
    pub(crate) inner: Arc<Inner>,
    flusher: Arc<Flusher>,
}

impl RedoLog {
    /// Recovers the log in `dir` (creating it if empty) and opens it for
    /// appends. The [`Recovered`] hands the engine the checkpoint snapshot
    /// and the records to replay.
    pub fn open(dir: impl Into<PathBuf>, options: Options, storage: Arc<dyn Storage>, crash: CrashPoints) -> Result<(RedoLog, Recovered)> {
        options.validate()?;
        let dir = dir.into();
        let (recovered, state) = recovery::recover(storage.as_ref(), &dir)?;
        let active = *state.segments.last().expect("recovery leaves an active segment");
        let path = dir.join(crate::segment::segment_name(active.number));
        let end_lsn = recovered.end_lsn;
        let writer = Writer {
            segments: state.segments,
            file: state.active_file.clone(),
            path: path.clone(),
            position: state.active_position,
            spare: Vec::new(),
        };
        debug_assert_eq!(writer.lsn(), end_lsn);
        let inner = Arc::new(Inner {
            dir,
            options,
            storage,
            crash,
            buffer: Mutex::new(LogBuffer { bytes: Vec::new(), start_lsn: end_lsn, end_lsn, records: 0 }),
            writer: Mutex::new(writer),
            // Recovery synced the last segment: all of it is durable.
            stages: Mutex::new(Stages {
                written_lsn: end_lsn,
                durable_lsn: end_lsn,
                writing: false,
                syncing: false,
                sync_file: state.active_file,
                sync_path: path,
                first_error: None,
                closed: false,
            }),
            stage_changed: Condvar::new(),
            poisoned: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            checkpoint: Mutex::new(CheckpointState { next_number: state.control.checkpoint_number + 1 }),
            control: Mutex::new(state.control),
            floor_lsn: AtomicU64::new(NO_FLOOR),
            counters: AtomicCounters::default(),
            stop_flusher: Mutex::new(false),
            flusher_stopped: Condvar::new(),
        });
        let flusher_inner = inner.clone();
        let thread = std::thread::Builder::new()
            .name("redo-flusher".into())
            .spawn(move || run_flusher(&flusher_inner))
            .map_err(|e| RedoError::io("spawn flusher thread", &inner.dir, e))?;
        let flusher = Arc::new(Flusher { inner: inner.clone(), thread: Mutex::new(Some(thread)) });
        Ok((RedoLog { inner, flusher }, recovered))
    }

    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    /// The LSN the next append gets (end of everything appended).
    pub fn current_lsn(&self) -> Lsn {
        self.inner.current_lsn()
    }

    /// Everything below is written to the OS (survives a process kill).
    pub fn flushed_lsn(&self) -> Lsn {
        self.inner.stages.lock().written_lsn
    }

    /// Everything below is fdatasynced (survives a power cut).
    pub fn durable_lsn(&self) -> Lsn {
        self.inner.stages.lock().durable_lsn
    }

    /// Waits until everything below `lsn` is written to the OS.
    pub fn wait_written(&self, lsn: Lsn) -> Result<()> {
        self.check_appended(lsn)?;
        self.inner.write_up_to(lsn)
    }

    /// Waits until everything below `lsn` is durable, joining (or leading)
    /// a group sync.
    pub fn wait_durable(&self, lsn: Lsn) -> Result<()> {
        self.check_appended(lsn)?;
        self.inner.sync_up_to(lsn)
    }

    /// Waits, without causing any write or sync, until `durable_lsn()`
    /// reaches `lsn` or `timeout` passes; returns whether it did. For
    /// followers of the log (a binlog writer behind the commit path) that
    /// must not expose what a crash could still take back.
    pub fn watch_durable(&self, lsn: Lsn, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut stages = self.inner.stages.lock();
        while stages.durable_lsn < lsn {
            if self.inner.stage_changed.wait_until(&mut stages, deadline).timed_out() {
                return stages.durable_lsn >= lsn;
            }
        }
        true
    }

    /// Makes everything appended so far durable; returns that LSN.
    pub fn flush(&self) -> Result<Lsn> {
        let lsn = self.current_lsn();
        self.inner.sync_up_to(lsn)?;
        Ok(lsn)
    }

    fn check_appended(&self, lsn: Lsn) -> Result<()> {
        let current = self.current_lsn();
        if lsn > current {
            return Err(RedoError::InvalidLsn { lsn, reason: format!("not appended yet (the log ends at {current})") });
        }
        Ok(())
    }

    /// Forbids checkpoints to delete redo at or above `lsn` (None lifts
    /// the floor). The engine-integrated binlog sets it to the first
    /// record whose binlog bytes are not yet durable in the binlog files,
    /// so the files can always be rebuilt from redo after a crash.
    pub fn set_checkpoint_floor(&self, lsn: Option<Lsn>) {
        self.inner.floor_lsn.store(lsn.unwrap_or(NO_FLOOR), Ordering::Release);
    }

    pub fn checkpoint_floor(&self) -> Option<Lsn> {
        let floor = self.inner.floor_lsn.load(Ordering::Acquire);
        (floor != NO_FLOOR).then_some(floor)
    }

    /// The checkpoint in force.
    pub fn last_checkpoint(&self) -> Option<CheckpointInfo> {
        let control = *self.inner.control.lock();
        (control.checkpoint_number > 0).then(|| CheckpointInfo::from_control(&control))
    }

    pub fn counters(&self) -> Counters {
        self.inner.counters.snapshot()
    }

    /// Writes and syncs everything appended, stops the flusher; later
    /// appends fail with `Closed`.
    pub fn close(&self) -> Result<()> {
        self.flusher.stop();
        let result = self.flush().map(|_| ());
        self.inner.stages.lock().closed = true;
        self.inner.closed.store(true, Ordering::Release);
        result
    }
}

/// The background flusher: once per `innodb_flush_log_at_timeout`, write
/// and fdatasync everything appended (it joins the same stages as
/// appends, so it never syncs what a group sync already covered).
fn run_flusher(inner: &Inner) {
    let mut reported = false;
    loop {
        {
            let mut stop = inner.stop_flusher.lock();
            if !*stop {
                inner.flusher_stopped.wait_for(&mut stop, inner.options.innodb_flush_log_at_timeout);
            }
            if *stop {
                return;
            }
        }
        let target = inner.current_lsn();
        if let Err(error) = inner.sync_up_to(target) {
            if !reported {
                tracing::warn!("redo log background flush failed: {error}");
                reported = true;
            }
        }
    }
}
