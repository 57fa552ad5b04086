//! Log readers: a cursor from (file, position) or from a GTID set that
//! follows the live tail, waking on new commits. Readers never pass
//! [`BinaryLog::durable_end`]: the synced end with classic files and
//! sync_binlog = 1, and with the engine-integrated binlog the end of the
//! last transaction written behind redo (each one durable in redo before
//! it is written). A file an open reader still needs is never purged.

use std::time::Duration;

use binlog_format::constants::{EventType, EVENT_SIZE_OFFSET};
use binlog_format::events::{Event, GtidEvent};
use binlog_format::gtid_set::GtidSet;
use binlog_format::header::EventHeader;
use binlog_format::DecodeError;

use crate::error::{BinlogError, CorruptionKind, Result};
use crate::file_reader::{EventRun, FileEventReader, ReadError};
use crate::log::{BinaryLog, VisibleEnd};
use crate::recovery::read_preamble;

/// One event as stored in the log.
#[derive(Debug, Clone)]
pub struct LogEvent {
    pub file_name: String,
    /// Offset of the event in its file.
    pub position: u64,
    pub header: EventHeader,
    /// The whole event, header and checksum included.
    pub bytes: Vec<u8>,
    /// Whether events of this file carry a CRC32 footer.
    pub has_checksum: bool,
}

impl LogEvent {
    pub fn end_position(&self) -> u64 {
        self.position + self.bytes.len() as u64
    }
}

/// One event lent from the reader's read-ahead buffer, valid until the
/// reader's next call: a dump sends it from there without a copy.
#[derive(Debug, Clone, Copy)]
pub struct LogEventRef<'r> {
    pub file_name: &'r str,
    /// Offset of the event in its file.
    pub position: u64,
    pub header: EventHeader,
    /// The whole event, header and checksum included.
    pub bytes: &'r [u8],
    /// Whether events of this file carry a CRC32 footer.
    pub has_checksum: bool,
}

impl LogEventRef<'_> {
    pub fn end_position(&self) -> u64 {
        self.position + self.bytes.len() as u64
    }

    pub fn to_owned(&self) -> LogEvent {
        LogEvent {
            file_name: self.file_name.to_string(),
            position: self.position,
            header: self.header,
            bytes: self.bytes.to_vec(),
            has_checksum: self.has_checksum,
        }
    }
}

/// Whole events that follow each other in one file, lent from the
/// reader's read-ahead buffer until its next call (see
/// [`LogReader::next_run_ref`]).
#[derive(Debug, Clone, Copy)]
pub struct LogRunRef<'r> {
    pub file_name: &'r str,
    /// Offset of the first event in its file.
    pub position: u64,
    /// The first event's header.
    pub header: EventHeader,
    /// The events, headers and checksums included, back to back.
    pub bytes: &'r [u8],
    pub events: usize,
    /// Whether events of this file carry a CRC32 footer.
    pub has_checksum: bool,
}

impl<'r> LogRunRef<'r> {
    pub fn end_position(&self) -> u64 {
        self.position + self.bytes.len() as u64
    }

    /// The run's only event; `None` when it has several.
    pub fn single(&self) -> Option<LogEventRef<'r>> {
        (self.events == 1).then_some(LogEventRef {
            file_name: self.file_name,
            position: self.position,
            header: self.header,
            bytes: self.bytes,
            has_checksum: self.has_checksum,
        })
    }

    /// The events one by one (each `event_size` bytes, as the reader
    /// checked them).
    pub fn event_bytes(&self) -> impl Iterator<Item = &'r [u8]> {
        let mut rest = self.bytes;
        std::iter::from_fn(move || {
            let size = u32::from_le_bytes(rest.get(EVENT_SIZE_OFFSET..EVENT_SIZE_OFFSET + 4)?.try_into().ok()?) as usize;
            if size == 0 {
                return None;
            }
            let (event, after) = rest.split_at(size.min(rest.len()));
            rest = after;
            Some(event)
        })
    }
}

pub struct LogReader {
    log: BinaryLog,
    id: u64,
    file_name: String,
    file_number: u64,
    reader: FileEventReader,
    /// Transactions whose GTID is in this set are skipped.
    skip: Option<GtidSet>,
    /// Set after a Rotate or Stop event: the next read moves on.
    file_finished: bool,
    /// The visible end last looked up. It only grows, so reading up to a
    /// stale copy is safe; a reader that is behind reads event after event
    /// without looking at the published end (a lock-free load, see
    /// visible_end.rs, but still a shared cache line commits write).
    visible_cached: Option<VisibleEnd>,
    /// Length of the current file once it is closed (no longer the active
    /// one): it never changes, and looking it up per event cost an open,
    /// a stat and a close per event (half a dump thread's time).
    closed_file_length: Option<u64>,
    /// Check each event's CRC32 as it is read (see
    /// [`LogReader::set_verify_checksums`]).
    verify_checksums: bool,
}

impl LogReader {
    /// Starts at `position` of `file_name` (4 = the file's first event).
    pub fn from_position(log: &BinaryLog, file_name: &str, position: u64) -> Result<LogReader> {
        let names = log.file_names();
        if !names.iter().any(|n| n == file_name) {
            return Err(BinlogError::SourceLogUnavailable("Could not find first log file name in binary log index file".into()));
        }
        let mut reader = LogReader::open_at(log, file_name)?;
        if position > 4 {
            // Learn the file's checksum setting from its FDE first.
            let visible = log.visible_end();
            reader.read_run(visible, false)?;
            let length = reader.reader.limit();
            let file_length = log.inner.storage.open(&log.inner.options.dir.join(file_name)).and_then(|f| f.len()).unwrap_or(length);
            if position > file_length {
                return Err(BinlogError::SourceLogUnavailable(format!(
                    "Client requested source to start replication from position > file size; the first event '{file_name}' at {position}"
                )));
            }
            reader.reader.seek(position);
        }
        Ok(reader)
    }

    /// Starts at the newest file whose Previous_gtids is within `executed`
    /// and skips every transaction already in `executed`.
    pub fn from_gtid_set(log: &BinaryLog, executed: &GtidSet) -> Result<LogReader> {
        let purged = log.purged_gtids();
        if !purged.is_subset_of(executed) {
            return Err(BinlogError::SourceLogUnavailable(
                "Cannot replicate because the source purged required binary logs. Replicate the missing transactions from elsewhere, or provision a new replica from backup.".into(),
            ));
        }
        let names = log.file_names();
        let mut start = names[0].clone();
        for name in names.iter().rev() {
            let (_, previous, _) = read_preamble(log.inner.storage.as_ref(), &log.inner.options.dir, name)?;
            if previous.is_subset_of(executed) {
                start = name.clone();
                break;
            }
        }
        let mut reader = LogReader::open_at(log, &start)?;
        reader.skip = Some(executed.clone());
        Ok(reader)
    }

    fn open_at(log: &BinaryLog, file_name: &str) -> Result<LogReader> {
        let file_number = log.options().file_number(file_name).unwrap_or(0);
        let id = log.inner.next_reader_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        log.inner.readers.lock().insert(id, file_number);
        let reader = open_file(log, file_name)?;
        Ok(LogReader {
            log: log.clone(),
            id,
            file_name: file_name.to_string(),
            file_number,
            reader,
            skip: None,
            file_finished: false,
            visible_cached: None,
            closed_file_length: None,
            verify_checksums: true,
        })
    }

    /// Whether events are checked against their CRC32 as they are read
    /// (the default) or only for their framing, in this file and the next
    /// ones. A dump that only passes the bytes on leaves the check to the
    /// replica, as MySQL's does unless `source_verify_checksum` is ON.
    pub fn set_verify_checksums(&mut self, verify: bool) {
        self.verify_checksums = verify;
        self.reader.set_verify_checksums(verify);
    }

    /// The position of the next event.
    pub fn position(&self) -> (String, u64) {
        (self.file_name.clone(), self.reader.offset())
    }

    /// The next event, waiting up to `timeout` for one to be committed;
    /// `Ok(None)` when none came (time for a heartbeat).
    pub fn next(&mut self, timeout: Duration) -> Result<Option<LogEvent>> {
        Ok(self.next_ref(timeout)?.map(|event| event.to_owned()))
    }

    /// [`LogReader::next`] without the copy: the event is lent from the
    /// read-ahead buffer until the next call.
    pub fn next_ref(&mut self, timeout: Duration) -> Result<Option<LogEventRef<'_>>> {
        let Some(run) = self.next_checked_run(timeout, false)? else { return Ok(None) };
        let span = run.first;
        Ok(Some(LogEventRef {
            file_name: &self.file_name,
            position: span.offset,
            header: span.header,
            bytes: self.reader.buffered(&span),
            has_checksum: span.has_checksum,
        }))
    }

    /// Like [`LogReader::next_ref`], but lends every whole event that is
    /// already read ahead and visible, as one run (at least one event):
    /// what a dump woken by commits sends in one pass. Format_description,
    /// Rotate and Stop events come alone, and so do Gtid events when the
    /// reader skips transactions; a run never spans two files.
    pub fn next_run_ref(&mut self, timeout: Duration) -> Result<Option<LogRunRef<'_>>> {
        let Some(run) = self.next_checked_run(timeout, true)? else { return Ok(None) };
        Ok(Some(LogRunRef {
            file_name: &self.file_name,
            position: run.first.offset,
            header: run.first.header,
            bytes: self.reader.buffered_run(&run),
            events: run.events,
            has_checksum: run.first.has_checksum,
        }))
    }

    /// The next event (`runs` false) or run, past skipped transactions.
    fn next_checked_run(&mut self, timeout: Duration, runs: bool) -> Result<Option<EventRun>> {
        loop {
            let Some(run) = self.next_unfiltered(timeout, runs)? else { return Ok(None) };
            let span = run.first;
            if let Some(skip) = &self.skip {
                if GtidEvent::is_gtid_type(span.header.event_type) {
                    let bytes = self.reader.buffered(&span);
                    let corruption =
                        |kind, reason: String| BinlogError::Corruption { file: self.file_name.clone(), offset: span.offset, kind, reason };
                    let decode = |e: DecodeError| corruption(CorruptionKind::of_decode(&e), e.to_string());
                    let raw = binlog_format::frame::RawEvent::parse(bytes, span.has_checksum).map_err(decode)?;
                    let gtid = GtidEvent::decode_body_of_type(raw.header.event_type, raw.body).map_err(decode)?;
                    if skip.contains(&gtid.gtid) {
                        if gtid.transaction_length == 0 {
                            return Err(corruption(
                                CorruptionKind::Malformed,
                                "cannot skip a transaction without transaction_length".into(),
                            ));
                        }
                        self.reader.seek(span.offset + gtid.transaction_length);
                        continue;
                    }
                }
            }
            return Ok(Some(run));
        }
    }

    fn corruption(&self, offset: u64, error: &ReadError) -> BinlogError {
        BinlogError::Corruption { file: self.file_name.clone(), offset, kind: CorruptionKind::of_read(error), reason: error.to_string() }
    }

    /// The next event of the log. Reads everything visible before it
    /// looks up the visible end again, and waits only when at the end: a
    /// reader woken by a commit sends all that is there in one go.
    ///
    /// The clock is read only when it must wait: a dump reads this once
    /// per event, and two clock reads per event (here and the dump's) were
    /// a fifth of a dump thread's CPU with 16 readers following the tail.
    fn next_unfiltered(&mut self, timeout: Duration, runs: bool) -> Result<Option<EventRun>> {
        let mut deadline = None;
        let mut deadline = || *deadline.get_or_insert_with(|| std::time::Instant::now() + timeout);
        loop {
            if self.file_finished && !self.advance_file()? {
                // The file ended with Stop (clean shutdown) and nothing follows yet.
                if !self.wait_for_change(deadline()) {
                    return Ok(None);
                }
                continue;
            }
            if let Some(cached) = self.visible_cached {
                if let Some(run) = self.read_run(cached, runs)? {
                    return Ok(Some(run));
                }
            }
            let visible = self.log.durable_end();
            self.visible_cached = Some(visible);
            if let Some(run) = self.read_run(visible, runs)? {
                return Ok(Some(run));
            }
            // At the readable end of this file.
            if self.file_number < visible.file_number {
                // A closed file without Rotate or Stop (its writer crashed): move on.
                self.file_finished = true;
                continue;
            }
            if timeout.is_zero() && self.log.inner.visible.generation() == visible.generation {
                return Ok(None);
            }
            if !self.log.inner.visible.wait_for_change(visible.generation, deadline()) {
                return Ok(None);
            }
        }
    }

    fn wait_for_change(&self, deadline: std::time::Instant) -> bool {
        let generation = self.log.durable_end().generation;
        self.log.inner.visible.wait_for_change(generation, deadline)
    }

    /// Reads one event (`runs` false) or run within the visible limit of
    /// the current file.
    fn read_run(&mut self, visible: VisibleEnd, runs: bool) -> Result<Option<EventRun>> {
        let limit = if self.file_number == visible.file_number {
            visible.position
        } else if let Some(length) = self.closed_file_length {
            length
        } else {
            let path = self.log.inner.options.dir.join(&self.file_name);
            let length = self.log.inner.storage.open(&path).and_then(|f| f.len()).map_err(|e| BinlogError::io("stat", &path, e))?;
            // Only a file older than the visible end's is closed for good
            // (after RESET BINARY LOGS numbers start over, but the reader's
            // file is gone then and advance_file reports it).
            if self.file_number < visible.file_number {
                self.closed_file_length = Some(length);
            }
            length
        };
        self.reader.set_limit(limit);
        let read = if runs {
            // Rotate and Stop end the file; a Gtid may start a skipped
            // transaction, which next_checked_run looks at alone.
            let filtering = self.skip.is_some();
            self.reader.next_run(|event_type| {
                event_type == EventType::Rotate as u8
                    || event_type == EventType::Stop as u8
                    || (filtering && GtidEvent::is_gtid_type(event_type))
            })
        } else {
            self.reader.next_event_span().map(|span| span.map(|first| EventRun { first, size: first.size, events: 1 }))
        };
        match read {
            Ok(Some(run)) => {
                let event_type = run.first.header.event_type;
                if event_type == EventType::Rotate as u8 || event_type == EventType::Stop as u8 {
                    self.file_finished = true;
                }
                Ok(Some(run))
            }
            Ok(None) => Ok(None),
            Err(ReadError::Io(e)) => Err(BinlogError::io("read", &self.file_name, e)),
            Err(error @ (ReadError::Truncated { offset, .. } | ReadError::Corrupt { offset, .. })) => Err(self.corruption(offset, &error)),
        }
    }

    /// Moves to the file after the current one; false when there is none yet.
    fn advance_file(&mut self) -> Result<bool> {
        let names = self.log.file_names();
        let Some(position) = names.iter().position(|n| *n == self.file_name) else {
            return Err(BinlogError::SourceLogUnavailable(format!("{} was purged while being read", self.file_name)));
        };
        let Some(next) = names.get(position + 1) else { return Ok(false) };
        self.reader = open_file(&self.log, next)?;
        self.reader.set_verify_checksums(self.verify_checksums);
        self.file_name = next.clone();
        self.file_number = self.log.options().file_number(next).unwrap_or(0);
        self.log.inner.readers.lock().insert(self.id, self.file_number);
        self.file_finished = false;
        self.closed_file_length = None;
        Ok(true)
    }

    /// Decodes a read event (convenience for tests and tools).
    pub fn decode(event: &LogEvent) -> Result<Event> {
        let corruption = |e: DecodeError| BinlogError::Corruption {
            file: event.file_name.clone(),
            offset: event.position,
            kind: CorruptionKind::of_decode(&e),
            reason: e.to_string(),
        };
        let raw = binlog_format::frame::RawEvent::parse(&event.bytes, event.has_checksum).map_err(corruption)?;
        Event::decode(&raw, &Default::default()).map_err(corruption)
    }
}

impl Drop for LogReader {
    fn drop(&mut self) {
        self.log.inner.readers.lock().remove(&self.id);
    }
}

fn open_file(log: &BinaryLog, name: &str) -> Result<FileEventReader> {
    let path = log.inner.options.dir.join(name);
    let file = log.inner.storage.open(&path).map_err(|e| BinlogError::io("open", &path, e))?;
    FileEventReader::open(file, 0).map_err(|e| BinlogError::Corruption {
        file: name.to_string(),
        offset: 0,
        kind: CorruptionKind::of_read(&e),
        reason: e.to_string(),
    })
}

impl BinaryLog {
    /// The events of listed file `name` for `SHOW BINLOG EVENTS`: up to
    /// its end, or for the active file up to what readers may see (a group
    /// being written is not shown half). `LogNotFound` when the index does
    /// not list it.
    pub fn file_events(&self, name: &str) -> Result<FileEventReader> {
        if !self.file_names().iter().any(|listed| listed == name) {
            return Err(BinlogError::LogNotFound);
        }
        let mut reader = open_file(self, name)?;
        let path = self.inner.options.dir.join(name);
        let length = self.inner.storage.open(&path).and_then(|f| f.len()).map_err(|e| BinlogError::io("stat", &path, e))?;
        let visible = self.visible_end();
        let number = self.inner.options.file_number(name).unwrap_or(0);
        let limit = if number == visible.file_number { visible.position.min(length) } else { length };
        reader.set_limit(limit);
        Ok(reader)
    }
}
