//! Checkpoints: the engine's snapshot in `checkpoint.N`, named by
//! `redo.control` together with the LSN replay starts from; redo wholly
//! below that LSN is then deleted. The snapshot's bytes are the engine's;
//! the log only stores them, checksummed.
//!
//! Order of a checkpoint, and what a crash after each step leaves
//! (recovery always uses the checkpoint the control file names):
//!
//! | step | durable effect                                                  | crash point                | after a crash here                          |
//! |------|-----------------------------------------------------------------|----------------------------|---------------------------------------------|
//! | 1    | redo below `start_lsn` fdatasynced (write-ahead rule)           | —                          | old checkpoint, full redo                   |
//! | 2    | snapshot written to `checkpoint.N.tmp`                          | `after_snapshot_write`     | old checkpoint; the temp file is deleted    |
//! | 3    | redo appended meanwhile fdatasynced; snapshot fdatasynced, renamed to `checkpoint.N`, directory fsynced | `after_snapshot_sync` | old checkpoint; `checkpoint.N` (not named) is deleted |
//! | 4    | `redo.control` replaced atomically, naming N and `start_lsn`    | `after_control_update`     | new checkpoint; old segments and files stay until the next checkpoint or open |
//! | 5    | segments wholly below min(`start_lsn`, floor) deleted, directory fsynced | `after_truncate` | new checkpoint; older checkpoint files are deleted at open |
//! | 6    | older checkpoint files deleted, directory fsynced               | —                          | new checkpoint                              |
//!
//! Step 3 syncs redo appended while the snapshot was being written, so a
//! fuzzy snapshot (taken without stopping writers) never holds a change
//! whose record the log could still lose, provided the engine appends a
//! change's record before applying it.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use storage::FileHandle;

use crate::control::{self, Control};
use crate::crash_points;
use crate::error::{RedoError, Result};
use crate::log::RedoLog;
use crate::record::{self, Lsn, LSN_OFFSET, RECORD_HEADER_BYTES};
use crate::segment;

pub const CHECKPOINT_PREFIX: &str = "checkpoint.";
const TEMP_SUFFIX: &str = ".tmp";
/// Bytes the snapshot writer gathers per write call.
const SNAPSHOT_WRITE_BYTES: usize = 1 << 20;

pub fn checkpoint_name(number: u64) -> String {
    format!("{CHECKPOINT_PREFIX}{number:06}")
}

/// The N of `checkpoint.N`, or `None` for other names (temp files included).
pub fn parse_checkpoint_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(CHECKPOINT_PREFIX)?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A checkpoint's temporary name (`checkpoint.N.tmp`).
pub fn is_temp_name(name: &str) -> bool {
    name.strip_suffix(TEMP_SUFFIX).and_then(parse_checkpoint_name).is_some()
}

/// A checkpoint the control file names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    pub number: u64,
    pub file_name: String,
    /// Replay starts at this LSN: the snapshot reflects every record below it.
    pub start_lsn: Lsn,
    pub snapshot_bytes: u64,
    pub snapshot_crc32: u32,
}

impl CheckpointInfo {
    pub(crate) fn from_control(control: &Control) -> CheckpointInfo {
        CheckpointInfo {
            number: control.checkpoint_number,
            file_name: checkpoint_name(control.checkpoint_number),
            start_lsn: control.start_lsn,
            snapshot_bytes: control.snapshot_bytes,
            snapshot_crc32: control.snapshot_crc32,
        }
    }
}

/// Held for a whole checkpoint: checkpoints run one at a time.
pub(crate) struct CheckpointState {
    /// Never reused, even after a failed checkpoint: a failed control
    /// update may have reached the disk and name this number.
    pub next_number: u64,
}

/// Reads a checkpoint's snapshot; checks its length and checksum at the end.
pub struct SnapshotReader {
    file: FileHandle,
    path: PathBuf,
    offset: u64,
    length: u64,
    crc: crc32fast::Hasher,
    expected_crc32: u32,
}

impl SnapshotReader {
    pub(crate) fn new(file: FileHandle, path: PathBuf, length: u64, expected_crc32: u32) -> SnapshotReader {
        SnapshotReader { file, path, offset: 0, length, crc: crc32fast::Hasher::new(), expected_crc32 }
    }

    /// The snapshot's length in bytes.
    pub fn len(&self) -> u64 {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }
}

impl Read for SnapshotReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.offset == self.length {
            let computed = self.crc.clone().finalize();
            if computed != self.expected_crc32 {
                let message = format!(
                    "{}: snapshot checksum mismatch: redo.control says {:#010x}, computed {computed:#010x}",
                    self.path.display(),
                    self.expected_crc32
                );
                return Err(io::Error::new(io::ErrorKind::InvalidData, message));
            }
            return Ok(0);
        }
        let wanted = buffer.len().min((self.length - self.offset) as usize);
        let read = self.file.read_at(self.offset, &mut buffer[..wanted])?;
        if read == 0 {
            let message = format!("{}: snapshot ends at {} of {} bytes", self.path.display(), self.offset, self.length);
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, message));
        }
        self.crc.update(&buffer[..read]);
        self.offset += read as u64;
        Ok(read)
    }
}

/// What the engine's snapshot callback writes into.
struct SnapshotWriter {
    file: FileHandle,
    position: u64,
    buffer: Vec<u8>,
    crc: crc32fast::Hasher,
    /// The file failed (as opposed to the engine's callback).
    file_error: Option<String>,
}

impl SnapshotWriter {
    fn write_buffer(&mut self) -> io::Result<()> {
        if !self.buffer.is_empty() {
            let buffer = std::mem::take(&mut self.buffer);
            let written = self.write_at_position(&buffer);
            self.buffer = buffer;
            written?;
            self.buffer.clear();
        }
        Ok(())
    }

    fn write_at_position(&mut self, data: &[u8]) -> io::Result<()> {
        if let Err(error) = self.file.write_at(self.position, data) {
            self.file_error = Some(error.to_string());
            return Err(error);
        }
        self.position += data.len() as u64;
        Ok(())
    }
}

impl Write for SnapshotWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.crc.update(data);
        if data.len() >= SNAPSHOT_WRITE_BYTES {
            // Written as it is, not copied into the buffer first.
            self.write_buffer()?;
            self.write_at_position(data)?;
            return Ok(data.len());
        }
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= SNAPSHOT_WRITE_BYTES {
            self.write_buffer()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_buffer()
    }
}

impl RedoLog {
    /// Takes a checkpoint: `snapshot` writes the engine's state, which must
    /// reflect every record below `start_lsn` (an LSN [`RedoLog::append`]
    /// returned, or the recovered `end_lsn`); after it, recovery loads the
    /// snapshot and replays from `start_lsn`. Writers keep appending
    /// meanwhile. Checkpoints run one at a time.
    pub fn checkpoint(&self, start_lsn: Lsn, snapshot: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<CheckpointInfo> {
        let inner = &self.inner;
        inner.check_usable()?;
        let mut state = inner.checkpoint.lock();
        let current = inner.current_lsn();
        if start_lsn > current {
            return Err(RedoError::InvalidLsn { lsn: start_lsn, reason: format!("not appended yet (the log ends at {current})") });
        }
        let in_force = *inner.control.lock();
        if start_lsn < in_force.start_lsn {
            let reason = format!("before the checkpoint in force ({})", in_force.start_lsn);
            return Err(RedoError::InvalidLsn { lsn: start_lsn, reason });
        }
        // Step 1, the write-ahead rule: the log reaches start_lsn on disk
        // before anything names it.
        inner.sync_up_to(start_lsn)?;
        self.check_record_boundary(start_lsn)?;

        // Step 2.
        let number = state.next_number;
        state.next_number += 1;
        let file_name = checkpoint_name(number);
        let path = inner.dir.join(&file_name);
        let temp_path = inner.dir.join(format!("{file_name}{TEMP_SUFFIX}"));
        let storage = inner.storage.as_ref();
        let file = storage.create(&temp_path).map_err(|e| RedoError::io("create", &temp_path, e))?;
        let mut writer =
            SnapshotWriter { file: file.clone(), position: 0, buffer: Vec::new(), crc: crc32fast::Hasher::new(), file_error: None };
        if let Err(error) = snapshot(&mut writer).and_then(|()| writer.write_buffer()) {
            let _ = storage.remove(&temp_path);
            return Err(match writer.file_error {
                Some(_) => RedoError::io("write", &temp_path, error),
                None => RedoError::Snapshot(error),
            });
        }
        let crash = |name| inner.crash.hit(name).map_err(|e| RedoError::io("crash point", &path, e));
        crash(crash_points::CHECKPOINT_AFTER_SNAPSHOT_WRITE)?;

        // Step 3.
        inner.sync_up_to(inner.current_lsn())?;
        file.sync_data().map_err(|e| RedoError::io("fdatasync", &temp_path, e))?;
        drop(file);
        storage.rename(&temp_path, &path).map_err(|e| RedoError::io("rename", &temp_path, e))?;
        storage.sync_dir(&inner.dir).map_err(|e| RedoError::io("fsync directory", &inner.dir, e))?;
        crash(crash_points::CHECKPOINT_AFTER_SNAPSHOT_SYNC)?;

        // Step 4: from here on recovery uses the new checkpoint.
        let control =
            Control { checkpoint_number: number, start_lsn, snapshot_bytes: writer.position, snapshot_crc32: writer.crc.finalize() };
        let control_path = inner.dir.join(control::CONTROL_FILE_NAME);
        control::store(storage, &inner.dir, &control).map_err(|e| RedoError::io("replace", &control_path, e))?;
        *inner.control.lock() = control;
        crash(crash_points::CHECKPOINT_AFTER_CONTROL_UPDATE)?;

        // Step 5.
        let floor = self.checkpoint_floor().unwrap_or(Lsn::MAX);
        self.delete_segments_below(start_lsn.min(floor))?;
        crash(crash_points::CHECKPOINT_AFTER_TRUNCATE)?;

        // Step 6.
        let names = storage.list(&inner.dir).map_err(|e| RedoError::io("list", &inner.dir, e))?;
        let older: Vec<String> = names.into_iter().filter(|n| parse_checkpoint_name(n).is_some_and(|n| n < number)).collect();
        for name in &older {
            storage.remove(&inner.dir.join(name)).map_err(|e| RedoError::io("remove", inner.dir.join(name), e))?;
        }
        if !older.is_empty() {
            storage.sync_dir(&inner.dir).map_err(|e| RedoError::io("fsync directory", &inner.dir, e))?;
        }
        inner.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
        tracing::info!("redo checkpoint {file_name}: {} bytes, replay from LSN {start_lsn}", control.snapshot_bytes);
        Ok(CheckpointInfo::from_control(&control))
    }

    /// Asserts, before the control file can name it, that `lsn` is where a
    /// record starts (or the written end): a wrong LSN would make the log
    /// unrecoverable.
    fn check_record_boundary(&self, lsn: Lsn) -> Result<()> {
        let inner = &self.inner;
        // Groups write whole records, so the written end is a boundary.
        if lsn >= inner.stages.lock().written_lsn {
            return Ok(());
        }
        let header = {
            let writer = inner.writer.lock();
            let index = writer.segments.iter().rposition(|s| s.start_lsn <= lsn).expect("lsn is at or above the checkpoint in force");
            writer.segments[index]
        };
        let path = inner.dir.join(segment::segment_name(header.number));
        let file = inner.storage.open(&path).map_err(|e| RedoError::io("open", &path, e))?;
        let mut bytes = [0u8; RECORD_HEADER_BYTES];
        let not_a_boundary = || RedoError::InvalidLsn { lsn, reason: "not a record boundary".into() };
        match file.read_exact_at(header.offset_of(lsn), &mut bytes) {
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Err(not_a_boundary()),
            Err(error) => return Err(RedoError::io("read", &path, error)),
            Ok(()) => {}
        }
        let stored = u64::from_le_bytes(bytes[LSN_OFFSET..LSN_OFFSET + 8].try_into().unwrap());
        if stored != lsn || (record::peek_length(&bytes) as usize) < RECORD_HEADER_BYTES {
            return Err(not_a_boundary());
        }
        Ok(())
    }

    /// Deletes every segment whose records all lie below `lsn`; never the
    /// active one.
    fn delete_segments_below(&self, lsn: Lsn) -> Result<()> {
        let inner = &self.inner;
        let victims: Vec<u64> = {
            let mut writer = inner.writer.lock();
            let count = writer.segments.windows(2).take_while(|pair| pair[1].start_lsn <= lsn).count();
            writer.segments.drain(..count).map(|s| s.number).collect()
        };
        for number in &victims {
            let path = inner.dir.join(segment::segment_name(*number));
            inner.storage.remove(&path).map_err(|e| RedoError::io("remove", &path, e))?;
        }
        if !victims.is_empty() {
            // Oldest first, then one directory fsync: a crash in between
            // leaves at worst older segments behind a gap, which recovery
            // deletes.
            inner.storage.sync_dir(&inner.dir).map_err(|e| RedoError::io("fsync directory", &inner.dir, e))?;
        }
        Ok(())
    }
}
