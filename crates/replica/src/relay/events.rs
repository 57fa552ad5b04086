//! A transaction's events, one at a time, for the applier: from a buffer
//! (a memory-ring transaction copied out, or a small one read from a
//! relay-log file in one read) or straight from a file (a spilled or large
//! transaction: one event in memory at a time). A spilled transaction may
//! still be arriving: reading it waits for each event's bytes
//! ([`SpillFile::wait_for_bytes`]), and it ends where the complete
//! transaction ends.

use binlog_format::constants::COMMON_HEADER_LENGTH;
use binlog_format::frame::peek_event_size;
use protocol::MysqlError;

use crate::errors;
use crate::relay::file::RelayFile;
use crate::relay::spill::SpillFile;
use crate::stop::StopFlag;

pub(crate) enum EventSource<'a> {
    Buffer(&'a [u8]),
    /// Read while the receiver may still write it; `StopFlag` ends a wait.
    Spill(&'a SpillFile, &'a StopFlag),
    File(&'a RelayFile),
}

pub struct TransactionEvents<'a> {
    source: EventSource<'a>,
    position: u64,
    end: u64,
    /// The current event when reading from a file; reused.
    event: Vec<u8>,
}

impl<'a> TransactionEvents<'a> {
    pub(crate) fn new(source: EventSource<'a>, begin: u64, end: u64) -> TransactionEvents<'a> {
        TransactionEvents { source, position: begin, end, event: Vec::new() }
    }

    /// The next event (header to checksum), or `None` after the last.
    pub fn next_event(&mut self) -> Result<Option<&[u8]>, MysqlError> {
        if let EventSource::Spill(file, stop) = self.source {
            return self.next_spilled_event(file, stop);
        }
        if self.position >= self.end {
            return Ok(None);
        }
        let remaining = self.end - self.position;
        match self.source {
            EventSource::Buffer(buffer) => {
                let rest = &buffer[self.position as usize..self.end as usize];
                let size = event_size(rest, remaining)?;
                self.position += size;
                Ok(Some(&rest[..size as usize]))
            }
            EventSource::Spill(..) | EventSource::File(_) => {
                let mut header = [0u8; COMMON_HEADER_LENGTH];
                self.read_at(&mut header, self.position)?;
                let size = event_size(&header, remaining)?;
                self.read_event(size)
            }
        }
    }

    /// The next event of a spill file whose end may not be known yet:
    /// waits for its header, then for the rest of it.
    fn next_spilled_event(&mut self, file: &SpillFile, stop: &StopFlag) -> Result<Option<&[u8]>, MysqlError> {
        let header_end = self.position + COMMON_HEADER_LENGTH as u64;
        let visible = file.wait_for_bytes(header_end, stop)?;
        if visible <= self.position {
            return Ok(None);
        }
        if visible < header_end {
            return Err(errors::relay_log_read_failure("an event header is cut"));
        }
        let mut header = [0u8; COMMON_HEADER_LENGTH];
        self.read_at(&mut header, self.position)?;
        let size = u64::from(peek_event_size(&header).ok_or_else(|| errors::relay_log_read_failure("an event header is cut"))?);
        let visible = file.wait_for_bytes(self.position + size, stop)?;
        event_size(&header, visible - self.position)?;
        self.read_event(size)
    }

    /// Reads the `size` bytes at the position into the event buffer.
    fn read_event(&mut self, size: u64) -> Result<Option<&[u8]>, MysqlError> {
        self.event.clear();
        self.event.resize(size as usize, 0);
        let position = self.position;
        let mut event = std::mem::take(&mut self.event);
        let read = self.read_at(&mut event, position);
        self.event = event;
        read?;
        self.position += size;
        Ok(Some(&self.event))
    }

    fn read_at(&self, buffer: &mut [u8], offset: u64) -> Result<(), MysqlError> {
        match self.source {
            EventSource::Buffer(_) => unreachable!("buffers are sliced, not read"),
            EventSource::Spill(file, _) => file.read_exact_at(buffer, offset),
            EventSource::File(file) => file.read_exact_at(buffer, offset),
        }
    }
}

/// The size of the event starting `bytes`, checked against what is left of
/// the transaction: a relay log is read back only after it was checked on
/// the way in, so a mismatch is corruption.
fn event_size(bytes: &[u8], remaining: u64) -> Result<u64, MysqlError> {
    let size = u64::from(peek_event_size(bytes).ok_or_else(|| errors::relay_log_read_failure("an event header is cut"))?);
    if size < COMMON_HEADER_LENGTH as u64 || size > remaining {
        return Err(errors::relay_log_read_failure(&format!("an event of {size} bytes where {remaining} bytes remain")));
    }
    Ok(size)
}
