//! Checkpoints: the engine's fuzzy snapshot stored by the redo log, so
//! recovery replays only the redo written since (bounded by
//! `binlogd_checkpoint_interval_seconds` and `binlogd_checkpoint_redo_bytes`,
//! not by history).
//!
//! A checkpoint is `Engine::begin_checkpoint` (start LSN, catalog and
//! executed GTID set, consistent with each other) then
//! `RedoLog::checkpoint(redo_retain_from_lsn, ...)` writing the snapshot
//! below: redo before `redo_retain_from_lsn` (the start LSN, or the prepare
//! record of a transaction still prepared at the start) is then deleted.
//! The crash cases are the redo log's (`redo/src/checkpoint.rs`): recovery
//! always finds either the old checkpoint with all its redo or the new one.
//!
//! Checkpoints and DDL exclude each other: a DDL's binlog intent record and
//! its fate must not straddle a checkpoint (the engine does not know the
//! intent, so it would not keep it), see `commit.rs`.
//!
//! ## Snapshot layout (`checkpoint.N`, written by the redo log)
//!
//! | bytes | field |
//! |-------|-------|
//! | 8 | magic `BLDDBCP1` |
//! | 8 | next XID (u64 LE): XIDs below it may be in use |
//! | 8 | catalog image length (u64 LE) |
//! | n | catalog image (`Engine::begin_checkpoint`) |
//! | then, per table image: 1 | tag 1 |
//! | 8 | table image length (u64 LE) |
//! | n | table image (`Engine::snapshot_table_parts`: a table's rows come in parts of a few MiB, each an image) |
//! | 1 | tag 0: end |

use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::database::{Database, Inner};
use crate::error::{DatabaseError, Result};

const SNAPSHOT_MAGIC: &[u8; 8] = b"BLDDBCP1";
const TAG_TABLE: u8 = 1;
const TAG_END: u8 = 0;
/// How often the background thread looks at the redo size.
const POLL_INTERVAL_MAX: Duration = Duration::from_millis(200);

/// A snapshot read back.
/// A snapshot read back; its images are slices of the file's bytes.
pub(crate) struct Snapshot<'a> {
    pub next_xid: u64,
    pub catalog_image: &'a [u8],
    pub table_images: Vec<&'a [u8]>,
}

pub(crate) fn decode_snapshot<'a>(bytes: &'a [u8], file: &str) -> Result<Snapshot<'a>> {
    let bad = |reason: &str| DatabaseError::corruption(file.to_string(), format!("checkpoint snapshot: {reason}"));
    let mut at = 0usize;
    let mut take = |length: usize, what: &str| -> Result<&'a [u8]> {
        if bytes.len() - at < length {
            return Err(bad(&format!("{what}: {length} bytes wanted, {} left", bytes.len() - at)));
        }
        at += length;
        Ok(&bytes[at - length..at])
    };
    if take(8, "magic")? != SNAPSHOT_MAGIC {
        return Err(bad("not a binlogd database checkpoint"));
    }
    let u64_of = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap());
    let next_xid = u64_of(take(8, "next xid")?);
    let catalog_length = u64_of(take(8, "catalog length")?) as usize;
    let catalog_image = take(catalog_length, "catalog image")?;
    let mut table_images = Vec::new();
    loop {
        match take(1, "tag")?[0] {
            TAG_END => break,
            TAG_TABLE => {
                let length = u64_of(take(8, "table image length")?) as usize;
                table_images.push(take(length, "table image")?);
            }
            other => return Err(bad(&format!("unknown tag {other}"))),
        }
    }
    if at != bytes.len() {
        return Err(bad(&format!("{} trailing bytes", bytes.len() - at)));
    }
    Ok(Snapshot { next_xid, catalog_image, table_images })
}

impl Database {
    /// Takes a checkpoint now (the background thread calls this too).
    /// Writers keep going meanwhile; checkpoints run one at a time.
    pub fn checkpoint(&self) -> Result<()> {
        checkpoint(&self.inner)
    }
}

pub(crate) fn checkpoint(inner: &Inner) -> Result<()> {
    inner.check_writable()?;
    let _one_at_a_time = inner.checkpoint_lock.lock();
    // See the module docs: no DDL's binlog write in progress.
    let _no_ddl = inner.ddl_lock.lock();
    let begin = inner.engine.begin_checkpoint();
    if let Some(engine_binlog) = inner.binlog_mode.engine() {
        // Redo before the start LSN may go only once the binlog bytes it
        // carries are durable in the files (engine_binlog.rs).
        engine_binlog.make_durable_through(begin.lsns.start_lsn)?;
    }
    // Read after the start: every XID in a record before the start LSN
    // was allocated before this.
    let next_xid = inner.next_xid.load(Ordering::Acquire);
    let engine = &inner.engine;
    let written = inner.redo.checkpoint(begin.lsns.redo_retain_from_lsn, |out: &mut dyn Write| -> io::Result<()> {
        out.write_all(SNAPSHOT_MAGIC)?;
        out.write_all(&next_xid.to_le_bytes())?;
        out.write_all(&(begin.catalog_image.len() as u64).to_le_bytes())?;
        out.write_all(&begin.catalog_image)?;
        for &table in &begin.tables {
            // Nothing for a table dropped since the start: replay drops it again.
            engine.snapshot_table_parts(table, |image| {
                out.write_all(&[TAG_TABLE])?;
                out.write_all(&(image.len() as u64).to_le_bytes())?;
                out.write_all(image)
            })?;
        }
        out.write_all(&[TAG_END])
    })?;
    *inner.last_checkpoint.lock() = (Instant::now(), begin.lsns.start_lsn);
    inner.checkpoints.fetch_add(1, Ordering::Relaxed);
    tracing::debug!(checkpoint = written.number, start_lsn = begin.lsns.start_lsn, "database checkpoint");
    Ok(())
}

/// The background checkpoint thread: a checkpoint once
/// `checkpoint_interval` passed or `checkpoint_redo_bytes` of redo were
/// appended since the last one (and only if anything was appended).
pub(crate) struct Checkpointer {
    control: Arc<(Mutex<bool>, Condvar)>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Checkpointer {
    /// `None` when both triggers are off.
    pub fn start(inner: &Arc<Inner>) -> Result<Option<Checkpointer>> {
        let (interval, redo_bytes) = (inner.config.checkpoint_interval, inner.config.checkpoint_redo_bytes);
        if interval.is_zero() && redo_bytes == 0 {
            return Ok(None);
        }
        let poll = if interval.is_zero() { POLL_INTERVAL_MAX } else { interval.min(POLL_INTERVAL_MAX) };
        let control = Arc::new((Mutex::new(false), Condvar::new()));
        let (weak, thread_control) = (Arc::downgrade(inner), control.clone());
        let thread = std::thread::Builder::new()
            .name("checkpointer".into())
            .spawn(move || run(weak, thread_control, poll))
            .map_err(|e| DatabaseError::io("spawn checkpoint thread", &inner.config.dir, e))?;
        Ok(Some(Checkpointer { control, thread: Mutex::new(Some(thread)) }))
    }

    pub fn stop(&self) {
        *self.control.0.lock() = true;
        self.control.1.notify_all();
        if let Some(thread) = self.thread.lock().take() {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(inner: Weak<Inner>, control: Arc<(Mutex<bool>, Condvar)>, poll: Duration) {
    let mut reported = false;
    loop {
        {
            let mut stop = control.0.lock();
            if !*stop {
                control.1.wait_for(&mut stop, poll);
            }
            if *stop {
                return;
            }
        }
        let Some(inner) = inner.upgrade() else { return };
        let (since, last_lsn) = *inner.last_checkpoint.lock();
        let current_lsn = inner.redo.current_lsn();
        let interval = inner.config.checkpoint_interval;
        let redo_bytes = inner.config.checkpoint_redo_bytes;
        let due_by_time = !interval.is_zero() && since.elapsed() >= interval;
        let due_by_size = redo_bytes > 0 && current_lsn.saturating_sub(last_lsn) >= redo_bytes;
        if current_lsn > last_lsn && (due_by_time || due_by_size) {
            match checkpoint(&inner) {
                Ok(()) => reported = false,
                Err(DatabaseError::Closed) => return,
                Err(error) => {
                    if !reported {
                        tracing::warn!("background checkpoint failed: {error}");
                        reported = true;
                    }
                    // Retry at the next interval, not at the next poll.
                    *inner.last_checkpoint.lock() = (Instant::now(), last_lsn);
                }
            }
        }
    }
}
