//! The file relay log (IN_MEMORY_RELAYLOG_ENABLED=0): what MySQL replicas
//! do. The receiver writes every transaction to `relay-bin.NNNNNN`
//! files and the workers read it back with `pread`.
//!
//! - A file starts with the binlog magic and holds whole transactions; a
//!   new file starts once one passes `file_size_max_bytes`
//!   (max_relay_log_size).
//! - The writer flushes at the end of every transaction, so a worker's
//!   read sees it, and fdatasyncs every [`SYNC_EVENTS`] events (MySQL's
//!   `sync_relay_log` default).
//! - Bytes written and not yet applied are bounded by `space_limit_bytes`
//!   (relay_log_space_limit); the receiver waits above it, except for the
//!   open transaction itself when nothing else is pending (MySQL ignores the
//!   limit then too, or one large transaction would wait forever).
//! - A file is deleted when the writer has moved on and the last
//!   transaction in it is applied (relay_log_purge=ON): each location holds
//!   the file, and the file removes itself when the last holder drops it.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use binlog_format::constants::BINLOG_MAGIC;
use parking_lot::{Condvar, Mutex};
use protocol::MysqlError;

use crate::errors;
use crate::relay::stats::RelayStats;
use crate::relay::{AppendError, TransactionLocation};
use crate::stop::{StopFlag, WAIT_SLICE};

/// MySQL's `sync_relay_log` default: fdatasync every this many events.
pub const SYNC_EVENTS: u64 = 10_000;
const WRITE_BUFFER_BYTES: usize = 256 * 1024;

/// One relay-log file, open for reading; deleted when dropped.
#[derive(Debug)]
pub struct RelayFile {
    path: PathBuf,
    reader: File,
}

impl RelayFile {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn read_exact_at(&self, buffer: &mut [u8], offset: u64) -> Result<(), MysqlError> {
        self.reader
            .read_exact_at(buffer, offset)
            .map_err(|error| errors::relay_log_read_failure(&format!("{} at {offset}: {error}", self.path.display())))
    }
}

impl Drop for RelayFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

struct Writer {
    file: Arc<RelayFile>,
    writer: BufWriter<File>,
    position: u64,
    next_number: u64,
    events_since_sync: u64,
}

pub struct FileRelayLog {
    directory: PathBuf,
    file_size_max_bytes: u64,
    space_limit_bytes: u64,
    writer: Mutex<Writer>,
    /// Bytes written and not yet applied.
    pending_bytes: Mutex<u64>,
    space_freed: Condvar,
}

pub struct OpenFileTransaction {
    file: Arc<RelayFile>,
    begin: u64,
    length_bytes: u64,
}

impl OpenFileTransaction {
    pub fn length_bytes(&self) -> u64 {
        self.length_bytes
    }
}

impl FileRelayLog {
    pub fn open(directory: PathBuf, file_size_max_bytes: u64, space_limit_bytes: u64) -> Result<FileRelayLog, MysqlError> {
        std::fs::create_dir_all(&directory)
            .map_err(|error| errors::relay_log_write_failure(&format!("could not create {}: {error}", directory.display())))?;
        let writer = create_file(&directory, 1)?;
        Ok(FileRelayLog {
            directory,
            file_size_max_bytes,
            space_limit_bytes,
            writer: Mutex::new(writer),
            pending_bytes: Mutex::new(0),
            space_freed: Condvar::new(),
        })
    }

    pub fn begin(&self) -> Result<OpenFileTransaction, MysqlError> {
        let mut writer = self.writer.lock();
        if writer.position >= self.file_size_max_bytes {
            let next = create_file(&self.directory, writer.next_number)?;
            *writer = next;
        }
        Ok(OpenFileTransaction { file: writer.file.clone(), begin: writer.position, length_bytes: 0 })
    }

    pub fn append(&self, open: &mut OpenFileTransaction, event: &[u8], stop: &StopFlag, stats: &RelayStats) -> Result<(), AppendError> {
        let length = event.len() as u64;
        self.wait_for_space(open.length_bytes, length, stop, stats)?;
        let mut writer = self.writer.lock();
        writer.writer.write_all(event).map_err(|error| write_error(&writer.file, error))?;
        writer.position += length;
        writer.events_since_sync += 1;
        if writer.events_since_sync >= SYNC_EVENTS {
            writer.writer.flush().map_err(|error| write_error(&writer.file, error))?;
            writer.writer.get_ref().sync_data().map_err(|error| write_error(&writer.file, error))?;
            writer.events_since_sync = 0;
        }
        open.length_bytes += length;
        RelayStats::add(&stats.file_bytes, length);
        Ok(())
    }

    fn wait_for_space(&self, open_bytes: u64, length: u64, stop: &StopFlag, stats: &RelayStats) -> Result<(), AppendError> {
        let mut pending = self.pending_bytes.lock();
        while *pending + length > self.space_limit_bytes && *pending > open_bytes {
            if stop.is_requested() {
                return Err(AppendError::Stopped);
            }
            let waited_since = Instant::now();
            self.space_freed.wait_for(&mut pending, WAIT_SLICE);
            stats.add_blocked(waited_since.elapsed());
        }
        *pending += length;
        Ok(())
    }

    /// Flushes the transaction to the file (workers read it with pread).
    pub fn finish(&self, open: OpenFileTransaction, stats: &RelayStats) -> Result<TransactionLocation, MysqlError> {
        let mut writer = self.writer.lock();
        writer.writer.flush().map_err(|error| write_error(&writer.file, error))?;
        RelayStats::add(&stats.file_transactions, 1);
        Ok(TransactionLocation::File { file: open.file, begin: open.begin, end: open.begin + open.length_bytes })
    }

    /// Drops an incomplete transaction: the file is cut back to where it
    /// began, so the next transaction follows the last complete one.
    pub fn abandon(&self, open: OpenFileTransaction, stats: &RelayStats) -> Result<(), MysqlError> {
        let mut writer = self.writer.lock();
        writer.writer.flush().map_err(|error| write_error(&writer.file, error))?;
        if Arc::ptr_eq(&writer.file, &open.file) {
            writer.writer.get_ref().set_len(open.begin).map_err(|error| write_error(&writer.file, error))?;
            // The file offset is still past the cut: move it back, or the
            // next write would leave a hole.
            writer.writer.get_mut().seek(SeekFrom::Start(open.begin)).map_err(|error| write_error(&writer.file, error))?;
            writer.position = open.begin;
        }
        drop(writer);
        self.free(open.length_bytes);
        RelayStats::sub(&stats.file_bytes, open.length_bytes);
        Ok(())
    }

    pub fn release(&self, begin: u64, end: u64, stats: &RelayStats) {
        self.free(end - begin);
        RelayStats::sub(&stats.file_bytes, end - begin);
        RelayStats::sub(&stats.file_transactions, 1);
    }

    fn free(&self, bytes: u64) {
        *self.pending_bytes.lock() -= bytes;
        self.space_freed.notify_all();
    }
}

fn create_file(directory: &Path, number: u64) -> Result<Writer, MysqlError> {
    let path = directory.join(format!("relay-bin.{number:06}"));
    let failure = |error: std::io::Error| errors::relay_log_write_failure(&format!("could not create {}: {error}", path.display()));
    let mut file = OpenOptions::new().create(true).truncate(true).read(true).write(true).open(&path).map_err(failure)?;
    file.write_all(&BINLOG_MAGIC).map_err(failure)?;
    let reader = file.try_clone().map_err(failure)?;
    Ok(Writer {
        file: Arc::new(RelayFile { path: path.clone(), reader }),
        writer: BufWriter::with_capacity(WRITE_BUFFER_BYTES, file),
        position: BINLOG_MAGIC.len() as u64,
        next_number: number + 1,
        events_since_sync: 0,
    })
}

fn write_error(file: &RelayFile, error: std::io::Error) -> MysqlError {
    errors::relay_log_write_failure(&format!("{}: {error}", file.path.display()))
}
