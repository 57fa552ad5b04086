//! Recovery when the log opens: scan → decide → apply.
//!
//! **Scan** lists the directory, reads `redo.control`, the header of every
//! segment, and the records from the checkpoint's start LSN to the end of
//! the log. Segments wholly before the checkpoint are never read, so
//! recovery time is bounded by the checkpoint interval, not by history.
//!
//! **Decide** applies the one decision table below.
//!
//! | file                         | finding                                          | decision |
//! |------------------------------|--------------------------------------------------|----------|
//! | `redo.control`               | missing, no segment                              | new log: write it, create `redo.000001` at LSN 0 |
//! | `redo.control`               | missing while segments exist, or damaged         | refuse (`Corruption`): it is replaced atomically, so damage is not a crash |
//! | `checkpoint.N` named by it   | missing or of the wrong length                   | refuse (`Corruption`): it was synced and renamed before the control file named it |
//! | `checkpoint.N` not named     | —                                                | delete: left by an interrupted or superseded checkpoint |
//! | `*.tmp`                      | —                                                | delete: an interrupted atomic replace |
//! | last segment                 | header torn, file no longer than a header        | delete: rotation died before the header was durable; the previous segment is last |
//! | any other segment            | header damaged                                   | refuse (`Corruption`) |
//! | segments before a gap in the numbers | wholly below the checkpoint              | delete: a checkpoint's segment removal was interrupted |
//! | segment chain                | does not reach back to the checkpoint's LSN      | refuse (`Corruption`): redo needed for replay is missing |
//! | non-last segment (from the checkpoint on) | invalid record, or its end ≠ the next one's start | refuse (`Corruption` naming file and offset): rotation synced it whole before the next existed |
//! | any segment                  | record checksums but its sections do not parse   | refuse (`Corruption`): a writer bug, not a torn write |
//! | last segment                 | invalid record at offset f                       | truncate at f: a torn tail (records after f were never acknowledged durable) |
//! | last segment                 | —                                                | fdatasync it: a process kill leaves written, unsynced records in the page cache, and recovery hands them to the engine, so they must be durable before anything depends on them |
//!
//! **Apply** deletes leftovers (then fsyncs the directory), truncates the
//! tail and syncs the last segment. Recovery is idempotent: a crash during
//! it is recovered by running it again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use storage::{FileHandle, Storage};

use crate::checkpoint::{self, CheckpointInfo, SnapshotReader};
use crate::control::{self, Control, CONTROL_FILE_NAME, CONTROL_TEMP_NAME};
use crate::error::{RedoError, Result};
use crate::record::{Invalid, Lsn, Record};
use crate::segment::{self, Scanned, SegmentHeader, SegmentScanner, SEGMENT_HEADER_BYTES};

/// A record read back from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedRecord {
    pub lsn: Lsn,
    /// LSN just past the record (the next record's LSN).
    pub end_lsn: Lsn,
    pub record: Record,
}

/// Where recovery cut a torn tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    pub file: String,
    pub offset: u64,
    pub lsn: Lsn,
    pub discarded_bytes: u64,
    pub reason: String,
}

/// One segment of the recovered log, readable up to `end_offset`.
#[derive(Clone)]
pub(crate) struct SegmentRef {
    pub header: SegmentHeader,
    pub name: String,
    pub file: FileHandle,
    pub end_offset: u64,
}

impl SegmentRef {
    fn end_lsn(&self) -> Lsn {
        self.header.start_lsn + (self.end_offset - SEGMENT_HEADER_BYTES as u64)
    }
}

/// What recovery found; hands the checkpoint snapshot and then the
/// records from `start_lsn` to the engine. Holds the files open, so a
/// checkpoint taken meanwhile cannot pull them away.
pub struct Recovered {
    /// The checkpoint in force, if one was ever taken.
    pub checkpoint: Option<CheckpointInfo>,
    /// Replay starts here: the checkpoint's start LSN, or 0.
    pub start_lsn: Lsn,
    /// End of the valid log: the LSN the next append gets.
    pub end_lsn: Lsn,
    /// Oldest LSN still on disk (below `start_lsn` when a checkpoint
    /// floor kept older segments).
    pub oldest_lsn: Lsn,
    /// Records between `start_lsn` and `end_lsn`.
    pub records_scanned: u64,
    pub truncation: Option<Truncation>,
    /// Leftovers recovery deleted.
    pub removed_files: Vec<String>,
    snapshot_file: Option<(PathBuf, FileHandle)>,
    segments: Arc<[SegmentRef]>,
}

impl std::fmt::Debug for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recovered")
            .field("checkpoint", &self.checkpoint)
            .field("start_lsn", &self.start_lsn)
            .field("end_lsn", &self.end_lsn)
            .field("oldest_lsn", &self.oldest_lsn)
            .field("records_scanned", &self.records_scanned)
            .field("truncation", &self.truncation)
            .field("removed_files", &self.removed_files)
            .finish()
    }
}

impl Recovered {
    /// The checkpoint's snapshot, as the engine wrote it. The reader
    /// verifies the checksum when it reaches the end: read it to the end
    /// (an `InvalidData` error there means the snapshot is damaged).
    pub fn snapshot(&self) -> Option<SnapshotReader> {
        let checkpoint = self.checkpoint.as_ref()?;
        let (path, file) = self.snapshot_file.as_ref()?;
        Some(SnapshotReader::new(file.clone(), path.clone(), checkpoint.snapshot_bytes, checkpoint.snapshot_crc32))
    }

    /// Every record from `start_lsn` to `end_lsn`, in order.
    pub fn records(&self) -> RecordIter {
        self.records_from(self.start_lsn).expect("start_lsn is inside the recovered log")
    }

    /// Every record from `lsn` (a record boundary between `oldest_lsn` and
    /// `end_lsn`) to `end_lsn`. Records below `start_lsn` were not checked
    /// at open: damage there surfaces as an error item.
    pub fn records_from(&self, lsn: Lsn) -> Result<RecordIter> {
        if lsn < self.oldest_lsn || lsn > self.end_lsn {
            let reason = format!("the log holds LSNs {}..{}", self.oldest_lsn, self.end_lsn);
            return Err(RedoError::InvalidLsn { lsn, reason });
        }
        let index = self.segments.iter().rposition(|s| s.header.start_lsn <= lsn).expect("oldest_lsn is the first segment's start");
        Ok(RecordIter { segments: self.segments.clone(), index, next_lsn: lsn, scanner: None, end_lsn: self.end_lsn, failed: false })
    }
}

/// Records of the recovered log in LSN order; stops after the first error.
pub struct RecordIter {
    segments: Arc<[SegmentRef]>,
    index: usize,
    next_lsn: Lsn,
    scanner: Option<SegmentScanner>,
    end_lsn: Lsn,
    failed: bool,
}

impl Iterator for RecordIter {
    type Item = Result<LoggedRecord>;

    fn next(&mut self) -> Option<Result<LoggedRecord>> {
        loop {
            if self.failed || self.next_lsn >= self.end_lsn {
                return None;
            }
            let segment = self.segments.get(self.index)?;
            let scanner = self
                .scanner
                .get_or_insert_with(|| SegmentScanner::new(segment.file.clone(), segment.header, self.next_lsn, segment.end_offset));
            let step = match scanner.next_record() {
                Ok(step) => step,
                Err(error) => {
                    self.failed = true;
                    return Some(Err(RedoError::io("read", &segment.name, error)));
                }
            };
            match step {
                Scanned::Record { lsn, record } => {
                    let end_lsn = lsn + record.encoded_len();
                    self.next_lsn = end_lsn;
                    return Some(Ok(LoggedRecord { lsn, end_lsn, record }));
                }
                Scanned::End => {
                    self.index += 1;
                    self.scanner = None;
                    if let Some(next) = self.segments.get(self.index) {
                        if next.header.start_lsn != self.next_lsn {
                            self.failed = true;
                            let reason =
                                format!("segment starts at LSN {}, the previous one ends at {}", next.header.start_lsn, self.next_lsn);
                            return Some(Err(RedoError::corruption(&next.name, 0, reason)));
                        }
                    }
                }
                Scanned::Invalid { offset, reason } => {
                    self.failed = true;
                    return Some(Err(RedoError::corruption(&segment.name, offset, reason.to_string())));
                }
            }
        }
    }
}

/// What the opened log continues from.
pub(crate) struct OpenState {
    /// The segment chain, oldest first; the last is the active one.
    pub segments: Vec<SegmentHeader>,
    pub active_file: FileHandle,
    /// File offset of the next record in the active segment.
    pub active_position: u64,
    pub control: Control,
}

struct FoundSegment {
    name: String,
    header: SegmentHeader,
    file: FileHandle,
    length: u64,
}

pub(crate) fn recover(storage: &dyn Storage, dir: &Path) -> Result<(Recovered, OpenState)> {
    storage.create_dir_all(dir).map_err(|e| RedoError::io("create directory", dir, e))?;
    let names = storage.list(dir).map_err(|e| RedoError::io("list", dir, e))?;
    let mut segment_numbers: Vec<u64> = names.iter().filter_map(|n| segment::parse_segment_name(n)).collect();
    segment_numbers.sort_unstable();
    let mut removals: Vec<String> =
        names.iter().filter(|n| n.as_str() == CONTROL_TEMP_NAME || checkpoint::is_temp_name(n)).cloned().collect();

    // Scan: the control file.
    let control = match control::load(storage, dir)? {
        Some(control) => control,
        None if segment_numbers.is_empty() => return create_new_log(storage, dir, removals),
        None => return Err(RedoError::corruption(CONTROL_FILE_NAME, 0, "missing while redo segments exist")),
    };
    let is_initial = control == Control::default();

    // Scan: the checkpoint it names; decide on the others.
    let mut snapshot_file = None;
    let checkpoint_info = (control.checkpoint_number > 0).then(|| CheckpointInfo::from_control(&control));
    for name in &names {
        if let Some(number) = checkpoint::parse_checkpoint_name(name) {
            if number != control.checkpoint_number {
                removals.push(name.clone());
            }
        }
    }
    if let Some(info) = &checkpoint_info {
        let path = dir.join(&info.file_name);
        let file = storage.open(&path).map_err(|_| RedoError::corruption(&info.file_name, 0, "named by redo.control but missing"))?;
        let length = file.len().map_err(|e| RedoError::io("stat", &path, e))?;
        if length != info.snapshot_bytes {
            let reason = format!("{length} bytes, redo.control says {}", info.snapshot_bytes);
            return Err(RedoError::corruption(&info.file_name, 0, reason));
        }
        snapshot_file = Some((path, file));
    }

    // Scan: segment headers.
    let mut found = Vec::with_capacity(segment_numbers.len());
    for (position, &number) in segment_numbers.iter().enumerate() {
        let name = segment::segment_name(number);
        let path = dir.join(&name);
        let file = storage.open(&path).map_err(|e| RedoError::io("open", &path, e))?;
        let length = file.len().map_err(|e| RedoError::io("stat", &path, e))?;
        let header = segment::read_header(&file).map_err(|e| RedoError::io("read", &path, e))?;
        let is_last = position + 1 == segment_numbers.len();
        match header {
            Ok(header) if header.number == number => found.push(FoundSegment { name, header, file, length }),
            Ok(header) => return Err(RedoError::corruption(&name, 0, format!("header says segment {}", header.number))),
            Err(_) if is_last && length <= SEGMENT_HEADER_BYTES as u64 => removals.push(name),
            Err(reason) => return Err(RedoError::corruption(&name, 0, reason)),
        }
    }

    // Decide: the chain of consecutive segments ending at the last one.
    let mut chain_start = found.len();
    while chain_start > 0 {
        let consecutive = chain_start == found.len() || found[chain_start - 1].header.number + 1 == found[chain_start].header.number;
        if !consecutive {
            break;
        }
        chain_start -= 1;
    }
    let orphans: Vec<FoundSegment> = found.drain(..chain_start).collect();
    let chain = found;
    if chain.is_empty() {
        if is_initial {
            // The first open died while creating redo.000001.
            return create_new_log(storage, dir, removals);
        }
        return Err(RedoError::corruption(CONTROL_FILE_NAME, 0, format!("no redo segment holds checkpoint LSN {}", control.start_lsn)));
    }
    for pair in chain.windows(2) {
        if pair[1].header.start_lsn <= pair[0].header.start_lsn {
            let reason = format!("starts at LSN {}, not after {}'s {}", pair[1].header.start_lsn, pair[0].name, pair[0].header.start_lsn);
            return Err(RedoError::corruption(&pair[1].name, 0, reason));
        }
    }
    let Some(replay_index) = chain.iter().rposition(|s| s.header.start_lsn <= control.start_lsn) else {
        let reason = format!("redo from LSN {} is missing: the oldest segment starts at {}", control.start_lsn, chain[0].header.start_lsn);
        return Err(RedoError::corruption(&chain[0].name, 0, reason));
    };
    for orphan in &orphans {
        removals.push(orphan.name.clone());
    }

    // Scan: records from the checkpoint on.
    let mut records_scanned = 0;
    let mut truncation = None;
    let mut end_offsets: Vec<u64> = chain.iter().map(|s| s.length).collect();
    for index in replay_index..chain.len() {
        let segment = &chain[index];
        let is_last = index + 1 == chain.len();
        let from_lsn = if index == replay_index { control.start_lsn } else { segment.header.start_lsn };
        if segment.header.offset_of(from_lsn) > segment.length {
            let reason = format!("checkpoint LSN {from_lsn} lies beyond the segment's end ({} bytes)", segment.length);
            return Err(RedoError::corruption(&segment.name, segment.length, reason));
        }
        let mut scanner = SegmentScanner::new(segment.file.clone(), segment.header, from_lsn, segment.length);
        loop {
            match scanner.next_record().map_err(|e| RedoError::io("read", dir.join(&segment.name), e))? {
                Scanned::Record { .. } => records_scanned += 1,
                Scanned::End => break,
                Scanned::Invalid { offset, reason } => {
                    if !is_last || matches!(reason, Invalid::Malformed(_)) {
                        return Err(RedoError::corruption(&segment.name, offset, reason.to_string()));
                    }
                    tracing::warn!("redo log: torn tail in {} at offset {offset} ({reason}); truncating", segment.name);
                    truncation = Some(Truncation {
                        file: segment.name.clone(),
                        offset,
                        lsn: scanner.lsn(),
                        discarded_bytes: segment.length - offset,
                        reason: reason.to_string(),
                    });
                    end_offsets[index] = offset;
                    break;
                }
            }
        }
        if !is_last && scanner.lsn() != chain[index + 1].header.start_lsn {
            let next = &chain[index + 1];
            let reason = format!("starts at LSN {}, but {} ends at LSN {}", next.header.start_lsn, segment.name, scanner.lsn());
            return Err(RedoError::corruption(&next.name, 0, reason));
        }
    }

    // Apply.
    let last = chain.last().unwrap();
    let last_path = dir.join(&last.name);
    for name in &removals {
        tracing::info!("redo log recovery: deleting leftover {name}");
        storage.remove(&dir.join(name)).map_err(|e| RedoError::io("remove", dir.join(name), e))?;
    }
    if !removals.is_empty() {
        storage.sync_dir(dir).map_err(|e| RedoError::io("fsync directory", dir, e))?;
    }
    let active_position = *end_offsets.last().unwrap();
    if truncation.is_some() {
        last.file.truncate(active_position).map_err(|e| RedoError::io("truncate", &last_path, e))?;
    }
    last.file.sync_data().map_err(|e| RedoError::io("fdatasync", &last_path, e))?;

    let segments: Arc<[SegmentRef]> = chain
        .iter()
        .zip(&end_offsets)
        .map(|(s, &end_offset)| SegmentRef { header: s.header, name: s.name.clone(), file: s.file.clone(), end_offset })
        .collect();
    let end_lsn = segments.last().unwrap().end_lsn();
    let recovered = Recovered {
        checkpoint: checkpoint_info,
        start_lsn: control.start_lsn,
        end_lsn,
        oldest_lsn: chain[0].header.start_lsn,
        records_scanned,
        truncation,
        removed_files: removals,
        snapshot_file,
        segments,
    };
    let state = OpenState { segments: chain.iter().map(|s| s.header).collect(), active_file: last.file.clone(), active_position, control };
    Ok((recovered, state))
}

/// A new, empty log. The control file is written first: a directory with
/// segments but no control file is then always damage, never a crash.
fn create_new_log(storage: &dyn Storage, dir: &Path, removals: Vec<String>) -> Result<(Recovered, OpenState)> {
    for name in &removals {
        storage.remove(&dir.join(name)).map_err(|e| RedoError::io("remove", dir.join(name), e))?;
    }
    let control = Control::default();
    control::store(storage, dir, &control).map_err(|e| RedoError::io("write", dir.join(CONTROL_FILE_NAME), e))?;
    let header = SegmentHeader { number: 1, start_lsn: 0 };
    let name = segment::segment_name(header.number);
    let file = segment::create_segment(storage, dir, header).map_err(|e| RedoError::io("create", dir.join(&name), e))?;
    let segment = SegmentRef { header, name, file: file.clone(), end_offset: SEGMENT_HEADER_BYTES as u64 };
    let recovered = Recovered {
        checkpoint: None,
        start_lsn: 0,
        end_lsn: 0,
        oldest_lsn: 0,
        records_scanned: 0,
        truncation: None,
        removed_files: removals,
        snapshot_file: None,
        segments: Arc::from(vec![segment]),
    };
    let state = OpenState { segments: vec![header], active_file: file, active_position: SEGMENT_HEADER_BYTES as u64, control };
    Ok((recovered, state))
}
