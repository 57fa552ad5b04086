//! Recovery when the log opens: scan → decide → apply.
//!
//! **Scan** reads the index and each listed file's preamble; files flagged
//! in use (`LOG_EVENT_BINLOG_IN_USE_F`) and the last file are scanned to the
//! end, collecting the GTIDs and XIDs of complete transactions and the
//! offset just after the last complete one.
//!
//! **Decide** applies the one decision table below.
//!
//! | listed in index? | in-use flag | scan result                      | decision                                      |
//! |------------------|-------------|----------------------------------|-----------------------------------------------|
//! | no               | —           | —                                | not part of the log: delete (orphan of an interrupted rotation or purge) |
//! | yes              | clear       | clean                            | keep                                          |
//! | yes              | clear       | damaged                          | refuse to start: a closed file must be intact (`Corruption`) |
//! | yes              | set         | ends on a transaction boundary   | clear the flag                                |
//! | yes              | set         | torn tail / incomplete transaction | truncate at the last boundary, clear the flag |
//! | yes              | any         | bad magic, FDE or Previous_gtids | refuse to start (`Corruption`): a listed file's preamble was synced before it was listed |
//! | yes, missing     | —           | —                                | refuse to start (`Corruption`)                |
//!
//! Spill files left in the temp folder are deleted: their transactions
//! never committed.
//!
//! **Apply** truncates, clears flags (each followed by fdatasync) and
//! deletes leftovers. Recovery is idempotent: a crash during it is
//! recovered by running it again.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use binlog_format::constants::{EventType, LOG_EVENT_BINLOG_IN_USE_F};
use binlog_format::events::{Event, GtidEvent, LargeTransactionHeaderEvent, QueryEvent, XidEvent};
use binlog_format::file::FDE_FLAGS_FILE_OFFSET;
use binlog_format::gtid_set::{Gtid, GtidSet};

use crate::crash_points::{self, CrashPoints};
use crate::error::{BinlogError, CorruptionKind, Result};
use crate::file_reader::{FileEventReader, ReadError};
use crate::index;
use crate::options::{Options, REFERENCED_SPILL_PREFIX, SPILL_FILE_PREFIX};
use storage::Storage;

/// What scanning one file found.
#[derive(Debug, Clone)]
pub struct FileScan {
    pub name: String,
    pub length: u64,
    pub in_use: bool,
    pub previous_gtids: GtidSet,
    /// GTIDs of the complete transactions in the file.
    pub gtids: GtidSet,
    pub xids: BTreeSet<u64>,
    /// GTID of each XID's transaction.
    pub xid_gtids: std::collections::BTreeMap<u64, Gtid>,
    pub transaction_count: u64,
    /// Offset just after the last complete transaction or control event.
    pub last_boundary: u64,
    /// First thing wrong after `last_boundary`, if any.
    pub damage: Option<(u64, String)>,
    /// Largest `sequence_number` seen (for the logical clock of a reopened file).
    pub last_sequence_number: i64,
    /// A promoted transaction was validated by seeking to its terminating
    /// event, without reading its body.
    pub promoted_transaction_skipped: bool,
}

/// A promoted transaction found by seeking.
struct SkippedTransaction {
    gtid: Gtid,
    xid: Option<u64>,
    end: u64,
}

/// Reads the Gtid event after a Large_transaction_header at `gtid_offset`,
/// seeks to the terminating event the header names, and checks that it is
/// there, of the named type, and ends the transaction exactly where the
/// Gtid's `transaction_length` says. Constant time in the body's size.
fn skip_promoted_body(
    reader: &mut FileEventReader,
    gtid_offset: u64,
    header: &LargeTransactionHeaderEvent,
) -> std::result::Result<SkippedTransaction, String> {
    let (offset, raw) = reader.next_event().map_err(|e| e.to_string())?.ok_or("file ends after the header")?;
    debug_assert_eq!(offset, gtid_offset);
    if !GtidEvent::is_gtid_type(raw.header.event_type) {
        return Err(format!("event type {} follows the header, not Gtid", raw.header.event_type));
    }
    let gtid = GtidEvent::decode_body_of_type(raw.header.event_type, raw.body).map_err(|e| e.to_string())?;
    let body_start = offset + raw.bytes.len() as u64;
    if header.terminating_event_offset < body_start {
        return Err(format!("terminating offset {} precedes the body at {body_start}", header.terminating_event_offset));
    }
    reader.seek(header.terminating_event_offset);
    let (_, raw) = reader.next_event().map_err(|e| e.to_string())?.ok_or("terminating offset beyond the file")?;
    if raw.header.event_type != header.terminating_event_type {
        return Err(format!(
            "event type {} at the terminating offset, header says {}",
            raw.header.event_type, header.terminating_event_type
        ));
    }
    let end = header.terminating_event_offset + raw.bytes.len() as u64;
    if end - gtid_offset != gtid.transaction_length {
        return Err(format!("transaction spans {} bytes, Gtid says {}", end - gtid_offset, gtid.transaction_length));
    }
    let xid = match Event::decode(&raw, &Default::default()).map_err(|e| e.to_string())? {
        Event::Xid(XidEvent { xid }) => Some(xid),
        Event::Query(q) if q.is_commit() => None,
        other => return Err(format!("terminating event is {}, not Xid or COMMIT", other.type_name())),
    };
    Ok(SkippedTransaction { gtid: gtid.gtid, xid, end })
}

/// What recovery did and found.
#[derive(Debug, Clone, Default)]
pub struct RecoveryReport {
    pub index: Vec<String>,
    /// `gtid_executed` as the log records it.
    pub executed_gtids: GtidSet,
    /// `gtid_purged`: Previous_gtids of the first listed file.
    pub purged_gtids: GtidSet,
    /// XIDs of complete transactions in the scanned files: the engine
    /// commits its prepared transactions with these and rolls back the rest.
    pub xids: BTreeSet<u64>,
    /// The GTID each of those XIDs was logged with (the engine records it
    /// with the transaction it commits at recovery).
    pub xid_gtids: std::collections::BTreeMap<u64, Gtid>,
    /// (file, from length, to length) of each truncation.
    pub truncated: Vec<(String, u64, u64)>,
    pub flags_cleared: Vec<String>,
    pub removed_leftovers: Vec<String>,
    pub scanned_files: Vec<String>,
    /// (target file, "rolled forward" | "rolled back") of a promotion a crash interrupted.
    pub interrupted_promotion: Option<(String, String)>,
    /// Promoted transactions validated by seeking instead of scanning.
    pub promoted_transactions_skipped: u64,
    pub elapsed: Duration,
}

fn corruption(file: &str, offset: u64, reason: impl Into<String>) -> BinlogError {
    BinlogError::Corruption { file: file.to_string(), offset, kind: CorruptionKind::Malformed, reason: reason.into() }
}

/// Transaction boundary tracking while scanning.
enum TrxState {
    Outside,
    /// After a Gtid event: (gtid, start offset, declared length).
    AfterGtid {
        gtid: Gtid,
        start: u64,
        length: u64,
    },
    /// Inside BEGIN … (gtid if any).
    InBody {
        gtid: Option<Gtid>,
        start: u64,
        length: u64,
    },
}

/// Reads one file's preamble: in-use flag and Previous_gtids.
pub(crate) fn read_preamble(storage: &dyn Storage, dir: &Path, name: &str) -> Result<(bool, GtidSet, u64)> {
    let (in_use, previous, length, _) = read_preamble_full(storage, dir, name)?;
    Ok((in_use, previous, length))
}

/// Like [`read_preamble`], also telling whether a Large_transaction_header
/// follows (a promoted file).
pub(crate) fn read_preamble_full(storage: &dyn Storage, dir: &Path, name: &str) -> Result<(bool, GtidSet, u64, bool)> {
    let path = dir.join(name);
    let file = storage.open(&path).map_err(|e| BinlogError::io("open", &path, e))?;
    let length = file.len().map_err(|e| BinlogError::io("stat", &path, e))?;
    let mut reader = FileEventReader::open(file, length).map_err(|e| read_corruption(name, e))?;
    let mut in_use = false;
    let mut previous = None;
    let mut promoted = false;
    for position in 0..3 {
        let next = match reader.next_event() {
            // Damage after the preamble is the scan's business, not ours.
            Err(_) if position == 2 => break,
            other => other.map_err(|e| read_corruption(name, e))?,
        };
        match next {
            Some((offset, raw)) => match raw.header.event_type {
                t if t == EventType::FormatDescription as u8 => in_use = raw.header.flags & LOG_EVENT_BINLOG_IN_USE_F != 0,
                t if t == EventType::PreviousGtids as u8 => {
                    previous = Some(GtidSet::decode_previous_gtids_body(raw.body).map_err(|e| corruption(name, offset, e.to_string()))?)
                }
                t if t == EventType::LargeTransactionHeader as u8 => promoted = true,
                _ => break,
            },
            None => break,
        }
    }
    let previous = previous.ok_or_else(|| corruption(name, 4, "file has no Format_description + Previous_gtids preamble"))?;
    Ok((in_use, previous, length, promoted))
}

fn read_corruption(name: &str, error: ReadError) -> BinlogError {
    match error {
        ReadError::Io(e) => BinlogError::io("read", name, e),
        ReadError::Truncated { offset, .. } | ReadError::Corrupt { offset, .. } => {
            BinlogError::Corruption { file: name.to_string(), offset, kind: CorruptionKind::of_read(&error), reason: error.to_string() }
        }
    }
}

/// Scans a whole file for complete transactions.
pub fn scan_file(storage: &dyn Storage, dir: &Path, name: &str, verify_promoted_bodies: bool) -> Result<FileScan> {
    let path = dir.join(name);
    let file = storage.open(&path).map_err(|e| BinlogError::io("open", &path, e))?;
    let length = file.len().map_err(|e| BinlogError::io("stat", &path, e))?;
    let mut reader = FileEventReader::open(file, length).map_err(|e| read_corruption(name, e))?;
    let mut scan = FileScan {
        name: name.to_string(),
        length,
        in_use: false,
        previous_gtids: GtidSet::new(),
        gtids: GtidSet::new(),
        xids: BTreeSet::new(),
        xid_gtids: Default::default(),
        transaction_count: 0,
        last_boundary: 4,
        damage: None,
        last_sequence_number: 0,
        promoted_transaction_skipped: false,
    };
    let mut state = TrxState::Outside;
    let mut saw_preamble = false;
    loop {
        let (offset, raw) = match reader.next_event() {
            Ok(Some(pair)) => pair,
            Ok(None) => break,
            Err(ReadError::Io(e)) => return Err(BinlogError::io("read", &path, e)),
            Err(error) => {
                let offset = match &error {
                    ReadError::Truncated { offset, .. } | ReadError::Corrupt { offset, .. } => *offset,
                    ReadError::Io(_) => unreachable!(),
                };
                scan.damage = Some((offset, error.to_string()));
                break;
            }
        };
        let end = offset + raw.bytes.len() as u64;
        let event_type = raw.header.event_type;
        if event_type == EventType::LargeTransactionHeader as u8 && matches!(state, TrxState::Outside) && !verify_promoted_bodies {
            let header = LargeTransactionHeaderEvent::decode_body(raw.body);
            match header.map_err(|e| e.to_string()).and_then(|h| skip_promoted_body(&mut reader, end, &h)) {
                Ok(found) => {
                    scan.gtids.add(found.gtid);
                    if let Some(xid) = found.xid {
                        scan.xids.insert(xid);
                        scan.xid_gtids.insert(xid, found.gtid);
                    }
                    scan.transaction_count += 1;
                    scan.last_boundary = found.end;
                    scan.promoted_transaction_skipped = true;
                    continue;
                }
                Err(reason) => {
                    // Not a failed start: fall back to scanning the body.
                    tracing::warn!("{name}: large transaction header unusable ({reason}); scanning the body");
                    reader.seek(end);
                    scan.last_boundary = end;
                    continue;
                }
            }
        }
        let decoded = match EventType::from_code(event_type) {
            Some(
                EventType::FormatDescription
                | EventType::PreviousGtids
                | EventType::Gtid
                | EventType::GtidTagged
                | EventType::Query
                | EventType::Xid
                | EventType::TransactionPayload,
            ) => match Event::decode(&raw, &Default::default()) {
                Ok(event) => Some(event),
                Err(error) => {
                    scan.damage = Some((offset, error.to_string()));
                    break;
                }
            },
            _ => None,
        };
        let mut complete: Option<(Option<Gtid>, Option<u64>, u64, u64)> = None; // (gtid, xid, start, declared length)
        match (&state, decoded) {
            (TrxState::Outside, Some(Event::FormatDescription(_))) => {
                scan.in_use = raw.header.flags & LOG_EVENT_BINLOG_IN_USE_F != 0;
                scan.last_boundary = end;
            }
            (TrxState::Outside, Some(Event::PreviousGtids(set))) => {
                scan.previous_gtids = set;
                saw_preamble = true;
                scan.last_boundary = end;
            }
            (TrxState::Outside, Some(Event::Gtid(GtidEvent { gtid, transaction_length, sequence_number, .. }))) => {
                scan.last_sequence_number = scan.last_sequence_number.max(sequence_number);
                state = TrxState::AfterGtid { gtid, start: offset, length: transaction_length };
            }
            (TrxState::Outside, Some(Event::Query(q))) if q.is_begin() => {
                state = TrxState::InBody { gtid: None, start: offset, length: 0 };
            }
            (TrxState::Outside, Some(Event::Query(_))) => complete = Some((None, None, offset, 0)),
            (TrxState::Outside, _) => scan.last_boundary = end, // Rotate, Stop, LTH, ignorable …
            (TrxState::AfterGtid { gtid, start, length }, Some(Event::Query(q))) if q.is_begin() => {
                state = TrxState::InBody { gtid: Some(*gtid), start: *start, length: *length };
            }
            (TrxState::AfterGtid { gtid, start, length }, Some(Event::Query(q))) if !is_end_query(&q) => {
                complete = Some((Some(*gtid), None, *start, *length)); // DDL
            }
            (TrxState::AfterGtid { .. }, _) if event_type == EventType::LargeTransactionHeader as u8 => {}
            // binlog_transaction_compression: the whole body, Xid included,
            // is in the payload; the engine needs that XID.
            (TrxState::AfterGtid { gtid, start, length }, Some(Event::TransactionPayload(payload))) => {
                match payload.events(&Default::default()) {
                    Ok(inner) => {
                        let xid = inner.iter().find_map(|inner| match inner.event {
                            Event::Xid(XidEvent { xid }) => Some(xid),
                            _ => None,
                        });
                        complete = Some((Some(*gtid), xid, *start, *length));
                    }
                    Err(error) => {
                        scan.damage = Some((offset, error.to_string()));
                        break;
                    }
                }
            }
            (TrxState::AfterGtid { start, .. }, _) => {
                scan.damage = Some((*start, format!("Gtid event followed by event type {event_type} at {offset}")));
                break;
            }
            (TrxState::InBody { gtid, start, length }, Some(Event::Xid(XidEvent { xid }))) => {
                complete = Some((*gtid, Some(xid), *start, *length));
            }
            (TrxState::InBody { gtid, start, length }, Some(Event::Query(q))) if is_end_query(&q) => {
                complete = Some((*gtid, None, *start, *length));
            }
            (TrxState::InBody { start, .. }, Some(Event::Gtid(_) | Event::FormatDescription(_) | Event::PreviousGtids(_))) => {
                scan.damage = Some((*start, format!("transaction interrupted by event type {event_type} at {offset}")));
                break;
            }
            (TrxState::InBody { .. }, _) => {}
        }
        if let Some((gtid, xid, start, declared_length)) = complete {
            if declared_length != 0 && declared_length != end - start {
                scan.damage =
                    Some((start, format!("transaction_length {declared_length} but the transaction spans {} bytes", end - start)));
                break;
            }
            if let Some(gtid) = gtid {
                scan.gtids.add(gtid);
            }
            if let Some(xid) = xid {
                scan.xids.insert(xid);
                if let Some(gtid) = gtid {
                    scan.xid_gtids.insert(xid, gtid);
                }
            }
            scan.transaction_count += 1;
            scan.last_boundary = end;
            state = TrxState::Outside;
        }
    }
    if !saw_preamble {
        let offset = scan.damage.as_ref().map_or(4, |d| d.0);
        return Err(corruption(name, offset, "file has no Format_description + Previous_gtids preamble"));
    }
    if scan.damage.is_none() && scan.last_boundary < length {
        scan.damage = Some((scan.last_boundary, "incomplete transaction at end of file".into()));
    }
    Ok(scan)
}

fn is_end_query(query: &QueryEvent) -> bool {
    query.is_commit() || query.is_rollback()
}

/// Runs recovery on the log directory. Creates the directory layout on
/// first start.
pub fn recover(storage: &dyn Storage, options: &Options, crash: &CrashPoints) -> Result<RecoveryReport> {
    let started = Instant::now();
    let dir = options.dir.as_path();
    storage.create_dir_all(dir).map_err(|e| BinlogError::io("create directory", dir, e))?;
    storage.create_dir_all(&options.spill_dir()).map_err(|e| BinlogError::io("create directory", options.spill_dir(), e))?;
    let mut report = RecoveryReport { index: index::load(storage, options)?, ..RecoveryReport::default() };

    // An interrupted promotion: rolled forward if the index lists its file,
    // else rolled back (the renamed file, if any, is an orphan below).
    let marker = options.promotion_marker_path();
    for stale in [options.promotion_marker_temp_path(), marker.clone()] {
        if storage.exists(&stale) {
            if stale == marker {
                let text =
                    String::from_utf8_lossy(&storage.read_all(&marker).map_err(|e| BinlogError::io("read", &marker, e))?).into_owned();
                let source = text.split_whitespace().next().unwrap_or("").to_string();
                let target = text.split_whitespace().nth(1).unwrap_or("").to_string();
                let outcome = if report.index.contains(&target) { "rolled forward" } else { "rolled back" };
                let renamed = dir.join(&target);
                if outcome == "rolled back" && source.starts_with(REFERENCED_SPILL_PREFIX) && !target.is_empty() && storage.exists(&renamed)
                {
                    // A redo record refers to this body (the engine-integrated
                    // binlog): the transaction is committed there, so the file
                    // goes back to its referenced name, not away.
                    let back = options.spill_dir().join(&source);
                    storage.rename(&renamed, &back).map_err(|e| BinlogError::io("rename back", &back, e))?;
                    storage.sync_dir(&options.spill_dir()).map_err(|e| BinlogError::io("fsync directory", options.spill_dir(), e))?;
                    storage.sync_dir(dir).map_err(|e| BinlogError::io("fsync directory", dir, e))?;
                }
                tracing::info!("binlog recovery: interrupted promotion to {target} {outcome}");
                report.interrupted_promotion = Some((target, outcome.to_string()));
            }
            storage.remove(&stale).map_err(|e| BinlogError::io("remove", &stale, e))?;
        }
    }

    // Leftovers: spill files, and binlog files the index does not list.
    for name in storage.list(&options.spill_dir()).map_err(|e| BinlogError::io("list", options.spill_dir(), e))? {
        if name.starts_with(SPILL_FILE_PREFIX) {
            let path = options.spill_dir().join(&name);
            storage.remove(&path).map_err(|e| BinlogError::io("remove", &path, e))?;
            report.removed_leftovers.push(format!("{}/{name}", crate::options::SPILL_DIR_NAME));
        }
    }
    let listed: BTreeSet<&String> = report.index.iter().collect();
    for name in storage.list(dir).map_err(|e| BinlogError::io("list", dir, e))? {
        if options.file_number(&name).is_some() && !listed.contains(&name) {
            let path = dir.join(&name);
            storage.remove(&path).map_err(|e| BinlogError::io("remove", &path, e))?;
            report.removed_leftovers.push(name);
        }
    }
    if !report.removed_leftovers.is_empty() {
        storage.sync_dir(dir).map_err(|e| BinlogError::io("fsync directory", dir, e))?;
        storage.sync_dir(&options.spill_dir()).map_err(|e| BinlogError::io("fsync directory", options.spill_dir(), e))?;
    }

    // Scan: every listed file's preamble; in-use files, the last file, and
    // the promoted files right before it fully (their engine commit may
    // not have happened: the engine needs their XIDs).
    let mut preambles = Vec::with_capacity(report.index.len());
    for name in &report.index {
        if !storage.exists(&dir.join(name)) {
            return Err(corruption(name, 0, "listed in the index but missing"));
        }
        preambles.push(read_preamble_full(storage, dir, name)?);
    }
    let mut scan_from = report.index.len().saturating_sub(1);
    while scan_from > 0 && preambles[scan_from - 1].3 {
        scan_from -= 1;
    }
    for (position, name) in report.index.clone().iter().enumerate() {
        let (in_use, previous, _, _) = preambles[position].clone();
        if position == 0 {
            report.purged_gtids = previous.clone();
        }
        let is_last = position + 1 == report.index.len();
        if !(in_use || position >= scan_from) {
            continue;
        }
        let scan = scan_file(storage, dir, name, options.verify_checksum_on_recovery)?;
        report.promoted_transactions_skipped += scan.promoted_transaction_skipped as u64;
        report.scanned_files.push(name.clone());
        // Decide (the table above).
        if let Some((offset, reason)) = &scan.damage {
            if !scan.in_use {
                return Err(corruption(name, *offset, format!("{reason} (the file was closed cleanly, so it must be intact)")));
            }
        }
        report.xids.extend(scan.xids.iter().copied());
        report.xid_gtids.extend(scan.xid_gtids.iter().map(|(x, g)| (*x, *g)));
        if is_last {
            report.executed_gtids = scan.previous_gtids.clone();
            report.executed_gtids.union(&scan.gtids);
        }
        // Apply.
        let path = dir.join(name);
        if scan.in_use {
            let file = storage.open(&path).map_err(|e| BinlogError::io("open", &path, e))?;
            if let Some((_, reason)) = &scan.damage {
                tracing::warn!("binlog recovery: truncating {name} from {} to {} bytes ({reason})", scan.length, scan.last_boundary,);
                file.truncate(scan.last_boundary).map_err(|e| BinlogError::io("truncate", &path, e))?;
                file.sync_data().map_err(|e| BinlogError::io("fdatasync", &path, e))?;
                report.truncated.push((name.clone(), scan.length, scan.last_boundary));
                crash.hit(crash_points::RECOVERY_AFTER_TRUNCATE).map_err(|e| BinlogError::io("crash point", &path, e))?;
            }
            clear_in_use_flag(storage, &path)?;
            report.flags_cleared.push(name.clone());
        }
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

/// Clears `LOG_EVENT_BINLOG_IN_USE_F` in the file's FDE, in place. The FDE
/// checksum is computed with the flag clear, so it stays valid.
pub fn clear_in_use_flag(storage: &dyn Storage, path: &Path) -> Result<()> {
    let file = storage.open(path).map_err(|e| BinlogError::io("open", path, e))?;
    let mut flags = [0u8; 2];
    file.read_exact_at(FDE_FLAGS_FILE_OFFSET, &mut flags).map_err(|e| BinlogError::io("read", path, e))?;
    let value = u16::from_le_bytes(flags) & !LOG_EVENT_BINLOG_IN_USE_F;
    file.write_at(FDE_FLAGS_FILE_OFFSET, &value.to_le_bytes()).map_err(|e| BinlogError::io("write", path, e))?;
    file.sync_data().map_err(|e| BinlogError::io("fdatasync", path, e))
}
