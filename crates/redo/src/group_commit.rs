//! Group commit of redo writes, in two stages with explicit queues.
//!
//! 0. **Enqueue** (under the log buffer's lock): an append gets its LSN
//!    (the buffer's end), is sealed with it and copied into the log
//!    buffer, the FLUSH queue. LSN order is buffer order is file order.
//!    If the record would push the buffer past `innodb_log_buffer_size`,
//!    the appender first writes the buffer itself (back-pressure: the
//!    buffer never grows past its bound plus one oversized record).
//! 1. **FLUSH**: an append that must be written (`Durability::Written` or
//!    `Sync`) and finds its LSN unwritten becomes the write leader unless
//!    one is already writing; followers wait. The leader takes the whole
//!    buffer, every waiting writer's record in LSN order, and writes it
//!    with one call per segment it touches. Appends that arrive meanwhile
//!    queue in the buffer for the next leader, which is elected among the
//!    followers the moment this one finishes.
//! 2. **SYNC**: the written range above the durable LSN is the SYNC
//!    queue. An append that must be durable becomes the sync leader unless
//!    one is syncing; it issues one fdatasync for everything written so
//!    far (its own group and every group written before it) and releases
//!    them all. The next write leader may write while it syncs.
//!
//! Rotation happens inside FLUSH: the old segment is fdatasynced whole
//! before the next one is created, so only the active segment ever needs
//! syncing and a damaged non-last segment is always corruption.
//!
//! A failed write or fdatasync poisons the log: every later append fails
//! with `PreviousIo` until the log is reopened and recovered, because
//! after a failed fdatasync the kernel may have dropped the dirty pages
//! and a retry would report success for bytes that are gone.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use storage::FileHandle;

use crate::crash_points;
use crate::error::{RedoError, Result};
use crate::log::{Inner, RedoLog};
use crate::options::Durability;
use crate::record::{self, Encoded, Lsn, Record};
use crate::segment::{self, SegmentHeader, SEGMENT_HEADER_BYTES};

/// The FLUSH queue: sealed records waiting to be written, in LSN order.
#[derive(Default)]
pub(crate) struct LogBuffer {
    pub bytes: Vec<u8>,
    /// LSN of `bytes[0]`: everything below it has been taken by a leader.
    pub start_lsn: Lsn,
    /// LSN the next append gets.
    pub end_lsn: Lsn,
    pub records: u64,
}

/// The active segment, owned by the write leader (and briefly by a
/// checkpoint deleting old segments).
pub(crate) struct Writer {
    /// The segment chain on disk, oldest first; the last is active.
    pub segments: Vec<SegmentHeader>,
    pub file: FileHandle,
    pub path: PathBuf,
    /// File offset of the next record.
    pub position: u64,
    /// The previous group's buffer, handed back to the log buffer so the
    /// steady state allocates nothing.
    pub spare: Vec<u8>,
}

impl Writer {
    pub fn active(&self) -> SegmentHeader {
        *self.segments.last().expect("the log always has an active segment")
    }

    /// LSN of the next record written.
    pub fn lsn(&self) -> Lsn {
        self.active().start_lsn + (self.position - SEGMENT_HEADER_BYTES as u64)
    }
}

/// Progress of the two stages and who leads them.
pub(crate) struct Stages {
    /// Everything below is written to the OS.
    pub written_lsn: Lsn,
    /// Everything below is fdatasynced.
    pub durable_lsn: Lsn,
    pub writing: bool,
    pub syncing: bool,
    /// What a sync leader fdatasyncs to make `written_lsn` durable: the
    /// segment holding the last written bytes (earlier segments were
    /// synced when they were closed).
    pub sync_file: FileHandle,
    pub sync_path: PathBuf,
    pub first_error: Option<String>,
    pub closed: bool,
}

impl Stages {
    fn check(&self) -> Result<()> {
        if let Some(first_error) = &self.first_error {
            return Err(RedoError::PreviousIo { first_error: first_error.clone() });
        }
        Ok(())
    }
}

/// Capacity above which the spare buffer is dropped rather than kept.
fn spare_capacity_max(log_buffer_bytes: u64) -> usize {
    (log_buffer_bytes as usize).saturating_mul(2)
}

impl RedoLog {
    /// Appends `record` and waits as `durability` asks. Returns the LSN
    /// just past the record: it is durable once `durable_lsn()` reaches it.
    pub fn append(&self, record: &Record, durability: Durability) -> Result<Lsn> {
        self.inner.append(record, durability)
    }
}

impl Inner {
    pub(crate) fn check_usable(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Acquire) || self.closed.load(Ordering::Acquire) {
            let stages = self.stages.lock();
            stages.check()?;
            if stages.closed {
                return Err(RedoError::Closed);
            }
        }
        Ok(())
    }

    fn append(&self, record: &Record, durability: Durability) -> Result<Lsn> {
        self.check_usable()?;
        // Checked before encoding: the length field is 32 bits, and an
        // oversized record should not cost its allocation to be refused.
        let (record_bytes, limit_bytes) = (record.encoded_len(), self.options.binlogd_redo_record_bytes_max);
        if record_bytes > limit_bytes {
            return Err(RedoError::RecordTooLarge { record_bytes, limit_bytes });
        }
        let end_lsn = self.enqueue(record.encode())?;
        match durability {
            Durability::Buffered => {}
            Durability::Written => self.write_up_to(end_lsn)?,
            Durability::Sync => self.sync_up_to(end_lsn)?,
        }
        Ok(end_lsn)
    }

    /// Stage 0: puts the record in the log buffer; returns its end LSN.
    fn enqueue(&self, mut encoded: Encoded) -> Result<Lsn> {
        loop {
            let mut buffer = self.buffer.lock();
            let fits = buffer.bytes.is_empty() || buffer.bytes.len() as u64 + encoded.len() <= self.options.innodb_log_buffer_size;
            if fits {
                let lsn = buffer.end_lsn;
                encoded.seal(lsn);
                buffer.bytes.extend_from_slice(&encoded.bytes);
                buffer.end_lsn += encoded.len();
                buffer.records += 1;
                return Ok(buffer.end_lsn);
            }
            // Back-pressure: write what is buffered before adding more.
            let target = buffer.end_lsn;
            drop(buffer);
            self.counters.buffer_full_writes.fetch_add(1, Ordering::Relaxed);
            self.write_up_to(target)?;
        }
    }

    /// The LSN the next append gets.
    pub(crate) fn current_lsn(&self) -> Lsn {
        self.buffer.lock().end_lsn
    }

    /// Stage 1: returns once everything below `target` is written, leading
    /// the write if no one else is.
    pub(crate) fn write_up_to(&self, target: Lsn) -> Result<()> {
        let mut stages = self.stages.lock();
        loop {
            // What was written before a failure stays written.
            if stages.written_lsn >= target {
                return Ok(());
            }
            stages.check()?;
            if stages.writing {
                self.stage_changed.wait(&mut stages);
                continue;
            }
            stages.writing = true;
            drop(stages);
            let result = self.lead_write();
            stages = self.stages.lock();
            stages.writing = false;
            self.stage_changed.notify_all();
            if let Err(error) = result {
                self.poison(&mut stages, &error);
                return Err(error);
            }
        }
    }

    /// The write leader: takes the whole buffer and writes it.
    fn lead_write(&self) -> Result<()> {
        let mut writer = self.writer.lock();
        let (mut bytes, start_lsn, end_lsn, records) = {
            let mut buffer = self.buffer.lock();
            let spare = std::mem::take(&mut writer.spare);
            let bytes = std::mem::replace(&mut buffer.bytes, spare);
            let end_lsn = buffer.end_lsn;
            let start_lsn = std::mem::replace(&mut buffer.start_lsn, end_lsn);
            (bytes, start_lsn, buffer.end_lsn, std::mem::take(&mut buffer.records))
        };
        // Checked before anything reaches the disk: the buffer continues
        // exactly where the file ends.
        assert_eq!(writer.lsn(), start_lsn, "log buffer does not continue the active segment");
        assert_eq!(start_lsn + bytes.len() as u64, end_lsn);
        let written = self.write_records(&mut writer, &bytes, start_lsn);
        bytes.clear();
        if bytes.capacity() <= spare_capacity_max(self.options.innodb_log_buffer_size) {
            writer.spare = bytes;
        }
        written?;
        self.crash.hit(crash_points::WRITE_AFTER_WRITE).map_err(|e| RedoError::io("crash point", &writer.path, e))?;
        if records > 0 {
            self.counters.groups.fetch_add(1, Ordering::Relaxed);
            self.counters.records.fetch_add(records, Ordering::Relaxed);
        }
        let (file, path) = (writer.file.clone(), writer.path.clone());
        drop(writer);
        self.publish(end_lsn, None, Some((file, path)));
        Ok(())
    }

    /// Writes whole records to the active segment, rotating when the next
    /// record would take it past `binlogd_redo_segment_bytes`.
    fn write_records(&self, writer: &mut Writer, bytes: &[u8], start_lsn: Lsn) -> Result<()> {
        let segment_bytes = self.options.binlogd_redo_segment_bytes;
        let mut at = 0;
        while at < bytes.len() {
            let room = segment_bytes.saturating_sub(writer.position);
            let segment_is_empty = writer.position == SEGMENT_HEADER_BYTES as u64;
            let mut end = at;
            while end < bytes.len() {
                let length = record::peek_length(&bytes[end..]) as usize;
                let fits = (end - at + length) as u64 <= room;
                // An oversized record gets an empty segment to itself.
                let oversized_alone = segment_is_empty && end == at;
                if !(fits || oversized_alone) {
                    break;
                }
                end += length;
            }
            if end == at {
                self.rotate(writer)?;
                continue;
            }
            debug_assert_eq!(writer.lsn(), start_lsn + at as u64);
            writer.file.write_at(writer.position, &bytes[at..end]).map_err(|e| RedoError::io("write", &writer.path, e))?;
            writer.position += (end - at) as u64;
            self.counters.bytes.fetch_add((end - at) as u64, Ordering::Relaxed);
            at = end;
        }
        Ok(())
    }

    /// Closes the active segment and opens the next.
    fn rotate(&self, writer: &mut Writer) -> Result<()> {
        let boundary = writer.lsn();
        // The old segment is made durable whole before a newer one exists:
        // recovery may then treat any damage in a non-last segment as
        // corruption, and only the active segment ever needs a group sync.
        writer.file.sync_data().map_err(|e| RedoError::io("fdatasync", &writer.path, e))?;
        let header = SegmentHeader { number: writer.active().number + 1, start_lsn: boundary };
        let path = self.dir.join(segment::segment_name(header.number));
        let file = segment::create_segment(self.storage.as_ref(), &self.dir, header).map_err(|e| RedoError::io("create", &path, e))?;
        // fdatasync of the old segment, of the new header, of the directory.
        self.counters.fsyncs.fetch_add(3, Ordering::Relaxed);
        self.counters.rotations.fetch_add(1, Ordering::Relaxed);
        writer.segments.push(header);
        writer.file = file.clone();
        writer.path = path.clone();
        writer.position = SEGMENT_HEADER_BYTES as u64;
        self.publish(boundary, Some(boundary), Some((file, path)));
        self.crash.hit(crash_points::ROTATE_AFTER_NEW_SEGMENT).map_err(|e| RedoError::io("crash point", &writer.path, e))
    }

    /// Advances the stages' progress and wakes waiters.
    fn publish(&self, written_lsn: Lsn, durable_lsn: Option<Lsn>, sync_file: Option<(FileHandle, PathBuf)>) {
        let mut stages = self.stages.lock();
        if written_lsn >= stages.written_lsn {
            stages.written_lsn = written_lsn;
            if let Some((file, path)) = sync_file {
                stages.sync_file = file;
                stages.sync_path = path;
            }
        }
        if let Some(durable_lsn) = durable_lsn {
            stages.durable_lsn = stages.durable_lsn.max(durable_lsn);
        }
        self.stage_changed.notify_all();
    }

    /// Stage 2: returns once everything below `target` is durable, leading
    /// the fdatasync if no one else is.
    pub(crate) fn sync_up_to(&self, target: Lsn) -> Result<()> {
        let mut stages = self.stages.lock();
        loop {
            if stages.durable_lsn >= target {
                return Ok(());
            }
            stages.check()?;
            if stages.written_lsn < target {
                drop(stages);
                self.write_up_to(target)?;
                stages = self.stages.lock();
                continue;
            }
            if stages.syncing {
                self.stage_changed.wait(&mut stages);
                continue;
            }
            // One fdatasync for every group written so far.
            stages.syncing = true;
            let (file, path, lsn) = (stages.sync_file.clone(), stages.sync_path.clone(), stages.written_lsn);
            drop(stages);
            let result = file
                .sync_data()
                .map_err(|e| RedoError::io("fdatasync", &path, e))
                .map(|()| self.counters.fsyncs.fetch_add(1, Ordering::Relaxed))
                .and_then(|_| self.crash.hit(crash_points::SYNC_AFTER_SYNC).map_err(|e| RedoError::io("crash point", &path, e)));
            stages = self.stages.lock();
            stages.syncing = false;
            self.stage_changed.notify_all();
            match result {
                Ok(()) => stages.durable_lsn = stages.durable_lsn.max(lsn),
                Err(error) => {
                    self.poison(&mut stages, &error);
                    return Err(error);
                }
            }
        }
    }

    fn poison(&self, stages: &mut Stages, error: &RedoError) {
        if stages.first_error.is_none() {
            tracing::error!("redo log: {error}; refusing appends until reopened");
            stages.first_error = Some(error.to_string());
            self.poisoned.store(true, Ordering::Release);
        }
        self.stage_changed.notify_all();
    }
}
