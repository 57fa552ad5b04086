//! Streaming event reader: one event in memory at a time, whatever the
//! file's size.
//!
//! It reads the 19-byte common header and has the walk's [`Framing`] check
//! `event_size` against the format's bounds and against the bytes the file
//! still has, then reads the rest into a reused buffer for the framing to
//! check (lengths, the CRC32) and learn from (a Format_description). Memory
//! is bounded by the largest event, itself bounded by `EVENT_SIZE_MAX`
//! (1 GiB); a length field claiming more than the file holds is reported as
//! truncation before anything is allocated.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use binlog_format::constants::{BINLOG_MAGIC, BINLOG_MAGIC_LENGTH, COMMON_HEADER_LENGTH};
use binlog_format::events::DecodeContext;
use binlog_format::walk::{FrameError, Framing};
use binlog_format::{DecodeError, EventHeader, RawEvent};

/// Read-ahead of the buffered reader. Events larger than this are read
/// straight into the event buffer.
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// A problem at a known place in a file. `message` is complete and names
/// the offset itself (truncation reads better as "truncated event at
/// offset N (file ends at M)" than with a prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub offset: u64,
    pub message: String,
}

impl ReadError {
    pub fn at(offset: u64, reason: impl fmt::Display) -> ReadError {
        ReadError { offset, message: format!("at offset {offset}: {reason}") }
    }

    fn io(offset: u64, error: io::Error) -> ReadError {
        ReadError::at(offset, format_args!("read error: {error}"))
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// One event as read: its file offset and the framed, checksum-verified bytes.
pub struct Frame<'a> {
    pub offset: u64,
    pub raw: RawEvent<'a>,
    /// The decode context in force for this event (after it, for a
    /// Format_description event).
    pub context: &'a DecodeContext,
}

pub struct EventReader {
    path: PathBuf,
    input: BufReader<File>,
    /// File length when it was opened. An active binlog may grow while we
    /// read; we stop at the length we saw, which is a consistent prefix.
    file_length: u64,
    /// Offset of the next event.
    offset: u64,
    framing: Framing,
    /// The whole current event; reused, grows to the largest event seen.
    buffer: Vec<u8>,
    /// Second handle for looking at other offsets (Large_transaction_header
    /// targets) without disturbing the stream; opened on first use.
    probe: Option<File>,
}

impl EventReader {
    /// Opens `path` and checks the magic number.
    pub fn open(path: &Path) -> Result<EventReader, OpenError> {
        let file = File::open(path).map_err(OpenError::Io)?;
        let metadata = file.metadata().map_err(OpenError::Io)?;
        if metadata.is_dir() {
            return Err(OpenError::Io(io::Error::other("is a directory")));
        }
        let file_length = metadata.len();
        let mut input = BufReader::with_capacity(READ_BUFFER_BYTES, file);
        let mut magic = [0u8; BINLOG_MAGIC_LENGTH];
        let available = file_length.min(BINLOG_MAGIC_LENGTH as u64) as usize;
        input.read_exact(&mut magic[..available]).map_err(OpenError::Io)?;
        if available < BINLOG_MAGIC_LENGTH || magic != BINLOG_MAGIC {
            let error = DecodeError::BadMagic { found: magic[..available].to_vec() };
            let reason = if available < BINLOG_MAGIC_LENGTH {
                format!("{error} (the file is only {file_length} bytes long)")
            } else {
                format!("{error}: not a binlog file")
            };
            return Err(OpenError::Format(ReadError::at(0, reason)));
        }
        Ok(EventReader {
            path: path.to_path_buf(),
            input,
            file_length,
            offset: BINLOG_MAGIC_LENGTH as u64,
            framing: Framing::new(),
            buffer: Vec::new(),
            probe: None,
        })
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn file_length(&self) -> u64 {
        self.file_length
    }

    /// The next event, `None` at a clean end of file. After an error the
    /// reader's position is unspecified: callers stop.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        let at = self.offset;
        if at >= self.file_length {
            return Ok(None);
        }
        let event_size = self.read_header_and_size()?;
        self.buffer.resize(event_size as usize, 0);
        self.input.read_exact(&mut self.buffer[COMMON_HEADER_LENGTH..]).map_err(|e| ReadError::io(at, e))?;
        let raw = self.framing.event(&self.buffer, true).map_err(|e| ReadError::at(at, e))?;
        self.offset = at + event_size as u64;
        Ok(Some(Frame { offset: at, raw, context: &self.framing.context }))
    }

    /// Skips events, reading only their headers, until the next event
    /// starts at `target`. Used for `--start-position` so that a start deep
    /// in a large file costs one small read per skipped event.
    pub fn skip_to(&mut self, target: u64) -> Result<(), ReadError> {
        if self.offset > target {
            return Err(ReadError::at(
                target,
                format_args!("start position {target} is not at an event boundary (the next event starts at {})", self.offset),
            ));
        }
        while self.offset < target {
            if self.offset >= self.file_length {
                return Err(ReadError::at(
                    self.offset,
                    format_args!("start position {target} is past the end of the file ({} bytes)", self.file_length),
                ));
            }
            let at = self.offset;
            let event_size = self.read_header_and_size()? as u64;
            let rest = event_size - COMMON_HEADER_LENGTH as u64;
            self.input.seek_relative(rest as i64).map_err(|e| ReadError::io(at, e))?;
            self.offset = at + event_size;
            if self.offset > target {
                return Err(ReadError::at(
                    at,
                    format_args!("start position {target} is not at an event boundary (the event at {at} ends at {})", self.offset),
                ));
            }
        }
        Ok(())
    }

    /// Reads the common header of the event at `self.offset` into the
    /// buffer and returns its `event_size`, checked to be possible and to
    /// fit in the file.
    fn read_header_and_size(&mut self) -> Result<u32, ReadError> {
        let at = self.offset;
        let remaining = self.file_length - at;
        self.buffer.clear();
        if remaining >= COMMON_HEADER_LENGTH as u64 {
            self.buffer.resize(COMMON_HEADER_LENGTH, 0);
            self.input.read_exact(&mut self.buffer).map_err(|e| ReadError::io(at, e))?;
        }
        let header = self.framing.header(&self.buffer, remaining).map_err(|error| framing_error(error, at, self.file_length))?;
        Ok(header.event_size)
    }

    /// Reads and frames the event starting at `offset` without moving the
    /// stream. Returns its header, or why there is no valid event there.
    pub fn probe(&mut self, offset: u64) -> Result<EventHeader, ReadError> {
        if offset < BINLOG_MAGIC_LENGTH as u64 || offset >= self.file_length {
            return Err(ReadError::at(offset, format_args!("outside the file's events (file ends at {})", self.file_length)));
        }
        if self.probe.is_none() {
            let file = File::open(&self.path).map_err(|e| ReadError::io(offset, e))?;
            self.probe = Some(file);
        }
        let file = self.probe.as_mut().expect("opened above");
        file.seek(SeekFrom::Start(offset)).map_err(|e| ReadError::io(offset, e))?;
        let mut header_bytes = [0u8; COMMON_HEADER_LENGTH];
        let available = (self.file_length - offset).min(COMMON_HEADER_LENGTH as u64) as usize;
        file.read_exact(&mut header_bytes[..available]).map_err(|e| ReadError::io(offset, e))?;
        let header = match self.framing.header(&header_bytes[..available], self.file_length - offset) {
            Ok(header) => header,
            // The header's own error: which of its fields the file ends in.
            Err(FrameError::ShortHeader { .. }) => {
                let error = EventHeader::decode(&header_bytes[..available]).expect_err("fewer bytes than a common header");
                return Err(ReadError::at(offset, error));
            }
            Err(error) => return Err(framing_error(error, offset, self.file_length)),
        };
        let mut event = header_bytes.to_vec();
        event.resize(header.event_size as usize, 0);
        file.read_exact(&mut event[COMMON_HEADER_LENGTH..]).map_err(|e| ReadError::io(offset, e))?;
        self.framing.check(&event, true).map_err(|e| ReadError::at(offset, e))?;
        Ok(header)
    }
}

/// The message for what the walk's framing refused in the event at `at`:
/// a length past the end of the file reads as truncation.
fn framing_error(error: FrameError, at: u64, file_length: u64) -> ReadError {
    let message = match error {
        FrameError::ShortHeader { available } => format!(
            "truncated event at offset {at} (file ends at {file_length}): only {available} of the {COMMON_HEADER_LENGTH} header bytes"
        ),
        FrameError::ShortEvent { needed, available } => format!(
            "truncated event at offset {at} (file ends at {file_length}): event_size {needed} needs {} more bytes",
            needed - available
        ),
        FrameError::Invalid(error) => return ReadError::at(at, error),
    };
    ReadError { offset: at, message }
}

#[derive(Debug)]
pub enum OpenError {
    Io(io::Error),
    Format(ReadError),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Io(error) => write!(f, "cannot read: {error}"),
            OpenError::Format(error) => error.fmt(f),
        }
    }
}
