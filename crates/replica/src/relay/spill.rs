//! A spill file: one transaction larger than the spill threshold, written
//! by the receiver as it arrives and read back event by event by a worker,
//! so memory stays bounded whatever the transaction's size.
//!
//! The worker may read while the receiver still writes (streaming: a
//! large transaction starts applying before its last byte arrived). The
//! writer fills a buffer of [`SPILL_WRITE_BUFFER_BYTES`] and writes it to
//! the file when full. A reader asks for the bytes up to an offset: when
//! they are only in the buffer it writes the buffer out itself (so it never
//! waits for bytes that arrived, even if the receiver waits for the
//! network), and when they have not arrived it waits, in slices that look
//! at its stop flag, until they do, the transaction is complete (it then
//! learns the length), or it was abandoned (its connection ended: the
//! receiver asks for the transaction again, and the reader gets an error).
//! The buffer and the file's length share one mutex, taken once per event
//! by the writer and once per wait by a reader.
//!
//! The file is anonymous (`O_TMPFILE` or unlinked at once): it disappears
//! when the last handle drops, after apply or at a crash. Nothing in it
//! needs to survive a restart: the replica asks the source again for every
//! transaction not in its executed GTID set.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use protocol::MysqlError;

use crate::errors;
use crate::stop::{StopFlag, WAIT_SLICE};

/// Write buffer of a spill file being filled: the receiver's only memory
/// for an oversized transaction besides the event in hand.
const SPILL_WRITE_BUFFER_BYTES: usize = 1 << 20;

/// A spill file being written.
pub struct SpillWriter {
    file: Arc<SpillFile>,
    length_bytes: u64,
}

impl SpillWriter {
    pub fn create(directory: &Path) -> Result<SpillWriter, MysqlError> {
        let file = tempfile::tempfile_in(directory).map_err(|error| {
            errors::relay_log_write_failure(&format!("could not create a spill file in {}: {error}", directory.display()))
        })?;
        let state = SpillState {
            written_bytes: 0,
            buffer: Vec::with_capacity(SPILL_WRITE_BUFFER_BYTES),
            end: SpillEnd::Writing,
            readers_waiting: 0,
        };
        let file = Arc::new(SpillFile { file, state: Mutex::new(state), grown: Condvar::new() });
        Ok(SpillWriter { file, length_bytes: 0 })
    }

    /// The file, for a reader that starts before the transaction is
    /// complete.
    pub fn file(&self) -> &Arc<SpillFile> {
        &self.file
    }

    pub fn append(&mut self, bytes: &[u8]) -> Result<(), MysqlError> {
        let mut state = self.file.state.lock();
        if state.buffer.len() + bytes.len() > SPILL_WRITE_BUFFER_BYTES {
            state.write_out(&self.file.file).map_err(write_failure)?;
        }
        if bytes.len() >= SPILL_WRITE_BUFFER_BYTES {
            self.file.file.write_all_at(bytes, state.written_bytes).map_err(write_failure)?;
            state.written_bytes += bytes.len() as u64;
        } else {
            state.buffer.extend_from_slice(bytes);
        }
        let notify = state.readers_waiting > 0;
        drop(state);
        if notify {
            self.file.grown.notify_all();
        }
        self.length_bytes += bytes.len() as u64;
        Ok(())
    }

    pub fn length_bytes(&self) -> u64 {
        self.length_bytes
    }

    /// Writes the rest out and marks the transaction complete.
    pub fn finish(self) -> Result<Arc<SpillFile>, MysqlError> {
        let mut state = self.file.state.lock();
        state.write_out(&self.file.file).map_err(write_failure)?;
        state.buffer = Vec::new();
        state.end = SpillEnd::Complete;
        drop(state);
        self.file.grown.notify_all();
        Ok(self.file)
    }

    /// The transaction will never be complete: readers get an error.
    pub fn abandon(self) -> Arc<SpillFile> {
        let mut state = self.file.state.lock();
        state.buffer = Vec::new();
        state.end = SpillEnd::Abandoned;
        drop(state);
        self.file.grown.notify_all();
        self.file
    }
}

/// How far a spilled transaction got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpillEnd {
    /// The receiver is still writing it.
    Writing,
    Complete,
    /// Its connection ended before its last event.
    Abandoned,
}

#[derive(Debug)]
struct SpillState {
    /// Bytes in the file, readable with pread.
    written_bytes: u64,
    /// Bytes after those, not written yet.
    buffer: Vec<u8>,
    end: SpillEnd,
    readers_waiting: usize,
}

impl SpillState {
    fn write_out(&mut self, file: &File) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        file.write_all_at(&self.buffer, self.written_bytes)?;
        self.written_bytes += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }
}

/// A spilled transaction, complete or still being written.
#[derive(Debug)]
pub struct SpillFile {
    file: File,
    state: Mutex<SpillState>,
    /// Notified when bytes arrive or the end is known.
    grown: Condvar,
}

impl SpillFile {
    /// Bytes received so far: the whole transaction once complete.
    pub fn length_bytes(&self) -> u64 {
        let state = self.state.lock();
        state.written_bytes + state.buffer.len() as u64
    }

    pub fn end(&self) -> SpillEnd {
        self.state.lock().end
    }

    /// Waits until the bytes up to `wanted_end` arrived, or the
    /// transaction is complete, and makes them readable; returns how many
    /// bytes are (below `wanted_end` only when complete). An abandoned
    /// transaction, or a stop request while waiting, is an error.
    pub fn wait_for_bytes(&self, wanted_end: u64, stop: &StopFlag) -> Result<u64, MysqlError> {
        let mut state = self.state.lock();
        loop {
            let arrived = state.written_bytes + state.buffer.len() as u64;
            match state.end {
                SpillEnd::Abandoned => return Err(abandoned()),
                SpillEnd::Writing if arrived < wanted_end => {
                    if stop.is_requested() {
                        return Err(errors::relay_log_read_failure("stopped while waiting for the rest of a streamed transaction"));
                    }
                    state.readers_waiting += 1;
                    self.grown.wait_for(&mut state, WAIT_SLICE);
                    state.readers_waiting -= 1;
                }
                SpillEnd::Writing | SpillEnd::Complete => {
                    if state.written_bytes < wanted_end {
                        // The receiver writes it out when its buffer is
                        // full, which may be long: the reader does now.
                        state.write_out(&self.file).map_err(write_failure)?;
                    }
                    return Ok(state.written_bytes);
                }
            }
        }
    }

    /// Waits until the transaction is complete or abandoned (`Writing`
    /// only when `stop` was requested first).
    pub fn wait_for_end(&self, stop: &StopFlag) -> SpillEnd {
        let mut state = self.state.lock();
        while state.end == SpillEnd::Writing && !stop.is_requested() {
            state.readers_waiting += 1;
            self.grown.wait_for(&mut state, WAIT_SLICE);
            state.readers_waiting -= 1;
        }
        state.end
    }

    pub fn read_exact_at(&self, buffer: &mut [u8], offset: u64) -> Result<(), MysqlError> {
        self.file
            .read_exact_at(buffer, offset)
            .map_err(|error| errors::relay_log_read_failure(&format!("spill file read at {offset}: {error}")))
    }
}

fn write_failure(error: std::io::Error) -> MysqlError {
    errors::relay_log_write_failure(&format!("spill file write: {error}"))
}

fn abandoned() -> MysqlError {
    errors::relay_log_read_failure("the transaction was cut off: its connection to the source ended before its last event")
}
