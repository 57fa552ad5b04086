//! A spill file: one transaction larger than the spill threshold, written
//! by the receiver as it arrives and read back event by event by a worker,
//! so memory stays bounded whatever the transaction's size.
//!
//! The file is anonymous (`O_TMPFILE` or unlinked at once): it disappears
//! when the last handle drops, after apply or at a crash. Nothing in it
//! needs to survive a restart: the replica asks the source again for every
//! transaction not in its executed GTID set.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use protocol::MysqlError;

use crate::errors;

/// Write buffer of a spill file being filled: the receiver's only memory
/// for an oversized transaction besides the event in hand.
const SPILL_WRITE_BUFFER_BYTES: usize = 1 << 20;

/// A spill file being written.
pub struct SpillWriter {
    writer: BufWriter<File>,
    length_bytes: u64,
}

impl SpillWriter {
    pub fn create(directory: &Path) -> Result<SpillWriter, MysqlError> {
        let file = tempfile::tempfile_in(directory).map_err(|error| {
            errors::relay_log_write_failure(&format!("could not create a spill file in {}: {error}", directory.display()))
        })?;
        Ok(SpillWriter { writer: BufWriter::with_capacity(SPILL_WRITE_BUFFER_BYTES, file), length_bytes: 0 })
    }

    pub fn append(&mut self, bytes: &[u8]) -> Result<(), MysqlError> {
        self.writer.write_all(bytes).map_err(|error| errors::relay_log_write_failure(&format!("spill file write: {error}")))?;
        self.length_bytes += bytes.len() as u64;
        Ok(())
    }

    pub fn length_bytes(&self) -> u64 {
        self.length_bytes
    }

    /// Flushes and hands the file over for reading.
    pub fn finish(self) -> Result<SpillFile, MysqlError> {
        let length_bytes = self.length_bytes;
        let file =
            self.writer.into_inner().map_err(|error| errors::relay_log_write_failure(&format!("spill file write: {}", error.error())))?;
        Ok(SpillFile { file, length_bytes })
    }
}

/// A complete spilled transaction.
#[derive(Debug)]
pub struct SpillFile {
    file: File,
    length_bytes: u64,
}

impl SpillFile {
    pub fn length_bytes(&self) -> u64 {
        self.length_bytes
    }

    pub fn read_exact_at(&self, buffer: &mut [u8], offset: u64) -> Result<(), MysqlError> {
        self.file
            .read_exact_at(buffer, offset)
            .map_err(|error| errors::relay_log_read_failure(&format!("spill file read at {offset}: {error}")))
    }
}
