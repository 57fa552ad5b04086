//! Sequential event reading from a binlog file through [`Storage`], with a
//! bounded buffer: recovery and log readers never hold a whole file. The
//! checks are the walk's [`Framing`]; this reader brings the bytes.

use binlog_format::constants::{BINLOG_MAGIC, BINLOG_MAGIC_LENGTH, COMMON_HEADER_LENGTH};
use binlog_format::error::DecodeError;
use binlog_format::events::FormatDescription;
use binlog_format::frame::{self, RawEvent};
use binlog_format::header::EventHeader;
use binlog_format::walk::{FrameError, Framing};
use binlog_format::EventType;

use storage::FileHandle;

/// Read-ahead buffer size: one read serves many small events.
const READ_AHEAD_BYTES: usize = 1 << 20;

/// Why the next event could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The file ends inside an event (a torn tail, or a writer still busy).
    Truncated {
        offset: u64,
        needed: u64,
        file_length: u64,
    },
    /// The bytes at `offset` are not a valid event.
    Corrupt {
        offset: u64,
        error: DecodeError,
    },
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Truncated { offset, needed, file_length } => {
                write!(f, "truncated event at offset {offset}: needs {needed} bytes, file ends at {file_length}")
            }
            ReadError::Corrupt { offset, error } => write!(f, "at offset {offset}: {error}"),
            ReadError::Io(error) => write!(f, "{error}"),
        }
    }
}

/// Where the last event read sits: its bytes stay in the reader's buffer
/// until the next read.
#[derive(Debug, Clone, Copy)]
pub struct EventSpan {
    /// Offset of the event in its file.
    pub offset: u64,
    pub header: EventHeader,
    /// The whole event's length, header and checksum included.
    pub size: usize,
    /// Whether the event was read as carrying a CRC32 footer.
    pub has_checksum: bool,
}

/// Whole events that follow each other in the file and in the reader's
/// buffer (see [`FileEventReader::next_run`]).
#[derive(Debug, Clone, Copy)]
pub struct EventRun {
    /// The first event, checked as [`FileEventReader::next_event_span`]
    /// checks every event.
    pub first: EventSpan,
    /// Bytes of all the run's events, from `first.offset`.
    pub size: usize,
    pub events: usize,
}

pub struct FileEventReader {
    file: FileHandle,
    /// Offset of the next event.
    offset: u64,
    /// Events are read only below this offset.
    limit: u64,
    buffer: Vec<u8>,
    /// File offset of `buffer[0]`.
    buffer_offset: u64,
    framing: Framing,
    /// Whether each event's CRC32 is checked as it is read. A binlog dump
    /// turns it off, as MySQL's dump does unless `source_verify_checksum`
    /// is ON: the replica checks every event it receives, and computing
    /// the CRC of every event once per reader was a tenth of a dump
    /// thread's CPU with 16 readers following the tail.
    verify_checksums: bool,
}

impl FileEventReader {
    /// Checks the magic and positions at the first event.
    pub fn open(file: FileHandle, limit: u64) -> Result<FileEventReader, ReadError> {
        let mut magic = [0u8; BINLOG_MAGIC_LENGTH];
        let length = file.len().map_err(ReadError::Io)?;
        if length < BINLOG_MAGIC_LENGTH as u64 {
            return Err(ReadError::Truncated { offset: 0, needed: 4, file_length: length });
        }
        file.read_exact_at(0, &mut magic).map_err(ReadError::Io)?;
        if magic != BINLOG_MAGIC {
            return Err(ReadError::Corrupt { offset: 0, error: DecodeError::BadMagic { found: magic.to_vec() } });
        }
        Ok(FileEventReader {
            file,
            offset: BINLOG_MAGIC_LENGTH as u64,
            limit,
            buffer: Vec::new(),
            buffer_offset: BINLOG_MAGIC_LENGTH as u64,
            framing: Framing::new(),
            verify_checksums: true,
        })
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Check each event's CRC32 (the default) or only its framing; a
    /// Format_description is always checked.
    pub fn set_verify_checksums(&mut self, verify: bool) {
        self.verify_checksums = verify;
    }

    pub fn has_checksum(&self) -> bool {
        self.framing.has_checksum()
    }

    /// The file's Format_description, once read.
    pub fn format(&self) -> Option<&FormatDescription> {
        self.framing.format()
    }

    /// Moves to `offset` (an event boundary the caller knows, e.g. from a
    /// Large_transaction_header or a dump request).
    pub fn seek(&mut self, offset: u64) {
        self.offset = offset;
    }

    /// Makes `[offset, offset + length)` available in the buffer.
    fn fill(&mut self, offset: u64, length: usize) -> Result<&[u8], ReadError> {
        let buffered_end = self.buffer_offset + self.buffer.len() as u64;
        if offset < self.buffer_offset || offset + length as u64 > buffered_end {
            let read_length = length.max(READ_AHEAD_BYTES).min((self.limit - offset) as usize).max(length);
            self.buffer.resize(read_length, 0);
            let mut filled = 0;
            while filled < read_length {
                let n = self.file.read_at(offset + filled as u64, &mut self.buffer[filled..]).map_err(ReadError::Io)?;
                if n == 0 {
                    break;
                }
                filled += n;
            }
            self.buffer.truncate(filled);
            self.buffer_offset = offset;
            if filled < length {
                return Err(ReadError::Truncated { offset, needed: length as u64, file_length: offset + filled as u64 });
            }
        }
        let start = (offset - self.buffer_offset) as usize;
        Ok(&self.buffer[start..start + length])
    }

    /// The next event's bytes and offset; `Ok(None)` when `limit` is reached.
    pub fn next_event(&mut self) -> Result<Option<(u64, RawEvent<'_>)>, ReadError> {
        let Some(span) = self.next_event_span()? else { return Ok(None) };
        let bytes = self.buffered(&span);
        let footer = frame::footer_length(bytes, span.has_checksum);
        let raw = RawEvent {
            header: span.header,
            body: &bytes[COMMON_HEADER_LENGTH..bytes.len() - footer],
            bytes,
            has_checksum: span.has_checksum,
        };
        Ok(Some((span.offset, raw)))
    }

    /// Like [`FileEventReader::next_event`] (lengths and checksum checked),
    /// but leaves the event in the read-ahead buffer for
    /// [`FileEventReader::buffered`] to lend out: a log reader that sends
    /// events on copies none of them.
    pub fn next_event_span(&mut self) -> Result<Option<EventSpan>, ReadError> {
        if self.offset >= self.limit {
            return Ok(None);
        }
        let offset = self.offset;
        let available = self.limit - offset;
        let header_bytes = if available >= COMMON_HEADER_LENGTH as u64 {
            self.fill(offset, COMMON_HEADER_LENGTH)?;
            let start = (offset - self.buffer_offset) as usize;
            &self.buffer[start..start + COMMON_HEADER_LENGTH]
        } else {
            &[]
        };
        let header = self.framing.header(header_bytes, available).map_err(|error| framing_error(offset, self.limit, error))?;
        let size = u64::from(header.event_size);
        self.fill(offset, size as usize)?;
        let start = (offset - self.buffer_offset) as usize;
        let has_checksum = self.framing.has_checksum();
        let bytes = &self.buffer[start..start + size as usize];
        let header = self.framing.event(bytes, self.verify_checksums).map_err(|error| ReadError::Corrupt { offset, error })?.header;
        self.offset = offset + size;
        Ok(Some(EventSpan { offset, header, size: size as usize, has_checksum }))
    }

    /// The next event as [`FileEventReader::next_event_span`] reads it,
    /// followed by the events after it that are already buffered below the
    /// limit, as one run: a binlog dump frames all that a wake-up found in
    /// one pass over the buffer instead of one trip through the readers per
    /// event (with 16 dumps following the tail, that per-event path was
    /// most of a dump thread's user time). The later events get the same
    /// framing checks (and CRC32, when verifying) as single events. The run
    /// ends before an event that `goes_alone` names by type, and before a
    /// Format_description (it changes how the next events are read): the
    /// next call returns those as a run of one. It also ends before
    /// anything `next_event_span` would refuse, which the next call then
    /// reports.
    pub fn next_run(&mut self, goes_alone: impl Fn(u8) -> bool) -> Result<Option<EventRun>, ReadError> {
        let Some(first) = self.next_event_span()? else { return Ok(None) };
        let mut run = EventRun { first, size: first.size, events: 1 };
        if goes_alone(first.header.event_type) || first.header.event_type == EventType::FormatDescription as u8 {
            return Ok(Some(run));
        }
        let end = self.limit.min(self.buffer_offset + self.buffer.len() as u64);
        loop {
            let offset = self.offset;
            let start = (offset - self.buffer_offset) as usize;
            let Ok(header) = self.framing.header(&self.buffer[start..], end.saturating_sub(offset)) else { return Ok(Some(run)) };
            let size = header.event_size as usize;
            if goes_alone(header.event_type) || header.event_type == EventType::FormatDescription as u8 {
                return Ok(Some(run));
            }
            if self.verify_checksums && self.framing.check(&self.buffer[start..start + size], true).is_err() {
                return Ok(Some(run));
            }
            self.offset = offset + size as u64;
            run.size += size;
            run.events += 1;
        }
    }

    /// The bytes of `run`, valid until the next read.
    pub fn buffered_run(&self, run: &EventRun) -> &[u8] {
        let start = (run.first.offset - self.buffer_offset) as usize;
        &self.buffer[start..start + run.size]
    }

    /// The bytes of the event `span` names, valid until the next read.
    pub fn buffered(&self, span: &EventSpan) -> &[u8] {
        let start = (span.offset - self.buffer_offset) as usize;
        &self.buffer[start..start + span.size]
    }
}

/// The reader's error for what the walk's framing refused at `offset`.
fn framing_error(offset: u64, limit: u64, error: FrameError) -> ReadError {
    match error {
        FrameError::ShortHeader { .. } => ReadError::Truncated { offset, needed: COMMON_HEADER_LENGTH as u64, file_length: limit },
        FrameError::ShortEvent { needed, .. } => ReadError::Truncated { offset, needed, file_length: limit },
        FrameError::Invalid(error) => ReadError::Corrupt { offset, error },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog_format::checksum::{event_crc32, CHECKSUM_LENGTH};
    use binlog_format::constants::{EVENT_SIZE_OFFSET, TYPE_OFFSET};
    use storage::{OsStorage, Storage};

    /// A file of magic + one event of type 2 (a Query) with a CRC32 footer.
    fn event_bytes(body: &[u8]) -> Vec<u8> {
        let size = COMMON_HEADER_LENGTH + body.len() + CHECKSUM_LENGTH;
        let mut event = vec![0u8; COMMON_HEADER_LENGTH];
        event[TYPE_OFFSET] = 2;
        event[EVENT_SIZE_OFFSET..EVENT_SIZE_OFFSET + 4].copy_from_slice(&(size as u32).to_le_bytes());
        event.extend_from_slice(body);
        let crc = event_crc32(&event);
        event.extend_from_slice(&crc.to_le_bytes());
        event
    }

    fn reader_over(dir: &std::path::Path, bytes: &[u8]) -> FileEventReader {
        let path = dir.join("f");
        std::fs::write(&path, bytes).unwrap();
        let file = OsStorage.open(&path).unwrap();
        FileEventReader::open(file, bytes.len() as u64).unwrap()
    }

    /// A run takes the buffered whole events up to the limit and stops
    /// before one that goes alone and before a bad one, which the next
    /// call returns alone or reports.
    #[test]
    fn a_run_stops_at_lone_events_bad_events_and_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let events: Vec<Vec<u8>> = (0..7).map(|n| event_bytes(&vec![n as u8; 10 + n])).collect();
        let mut bytes = BINLOG_MAGIC.to_vec();
        for event in &events {
            bytes.extend_from_slice(event);
        }
        let offsets: Vec<u64> = events.iter().scan(4u64, |at, event| Some(std::mem::replace(at, *at + event.len() as u64))).collect();
        // Event 3 goes alone (type 4, as a Rotate); event 5's CRC is wrong.
        bytes[offsets[3] as usize + TYPE_OFFSET] = 4;
        let crc_at = offsets[3] as usize + events[3].len() - CHECKSUM_LENGTH;
        let crc = event_crc32(&bytes[offsets[3] as usize..crc_at]);
        bytes[crc_at..crc_at + CHECKSUM_LENGTH].copy_from_slice(&crc.to_le_bytes());
        bytes[offsets[5] as usize + COMMON_HEADER_LENGTH] ^= 1;
        let lone = |event_type: u8| event_type == 4;

        let mut reader = reader_over(dir.path(), &bytes);
        let run = reader.next_run(lone).unwrap().expect("events 0-2");
        assert_eq!((run.first.offset, run.events, run.size), (4, 3, events[..3].iter().map(Vec::len).sum()));
        assert_eq!(reader.buffered_run(&run), &bytes[4..offsets[3] as usize]);
        let run = reader.next_run(lone).unwrap().expect("event 3");
        assert_eq!((run.first.offset, run.events), (offsets[3], 1));
        let run = reader.next_run(lone).unwrap().expect("event 4");
        assert_eq!((run.first.offset, run.events), (offsets[4], 1), "the run ends before the bad event");
        assert!(matches!(reader.next_run(lone), Err(ReadError::Corrupt { error: DecodeError::BadChecksum { .. }, .. })));

        // Unverified, the bad CRC passes; a limit inside event 6 ends the run before it.
        let mut reader = reader_over(dir.path(), &bytes);
        reader.set_verify_checksums(false);
        reader.set_limit(offsets[6] + 5);
        reader.next_run(lone).unwrap().expect("events 0-2");
        reader.next_run(lone).unwrap().expect("event 3");
        let run = reader.next_run(lone).unwrap().expect("events 4-5");
        assert_eq!((run.first.offset, run.events), (offsets[4], 2));
        assert!(matches!(reader.next_run(lone), Err(ReadError::Truncated { .. })));
    }

    #[test]
    fn without_verification_a_bad_crc_passes_but_bad_framing_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = BINLOG_MAGIC.to_vec();
        bytes.extend_from_slice(&event_bytes(b"0123456789"));
        // One body byte flipped: framing intact, CRC32 wrong.
        bytes[BINLOG_MAGIC_LENGTH + COMMON_HEADER_LENGTH + 3] ^= 1;

        let mut verifying = reader_over(dir.path(), &bytes);
        assert!(matches!(verifying.next_event_span(), Err(ReadError::Corrupt { error: DecodeError::BadChecksum { .. }, .. })));

        let mut passing = reader_over(dir.path(), &bytes);
        passing.set_verify_checksums(false);
        let span = passing.next_event_span().unwrap().expect("the event");
        assert_eq!((span.offset, span.size), (4, bytes.len() - 4));
        assert_eq!(passing.buffered(&span), &bytes[4..]);
        assert!(passing.next_event_span().unwrap().is_none());

        // An event shorter than its header and footer is refused either way.
        let mut short = BINLOG_MAGIC.to_vec();
        let mut event = event_bytes(b"");
        event[EVENT_SIZE_OFFSET..EVENT_SIZE_OFFSET + 4].copy_from_slice(&(COMMON_HEADER_LENGTH as u32 + 2).to_le_bytes());
        event.truncate(COMMON_HEADER_LENGTH + 2);
        short.extend_from_slice(&event);
        let mut passing = reader_over(dir.path(), &short);
        passing.set_verify_checksums(false);
        assert!(matches!(passing.next_event_span(), Err(ReadError::Corrupt { error: DecodeError::BadLength { .. }, .. })));
    }
}
