//! The engine's [`RedoSink`] over the redo log, and the records it writes.
//!
//! ## Records
//!
//! One redo record per engine call; its `kind` byte says which, its
//! sections carry the rest (`redo/FORMAT.md` has the record framing):
//!
//! | kind | name | sections |
//! |------|------|----------|
//! | 1 | prepare | `TRANSACTION` (with the XID, if any), `PAYLOAD` = `engine::codec::encode_changes`, and `APPLIER_SLOT` when the transaction carries one |
//! | 2 | commit | `TRANSACTION`, `PAYLOAD` = `engine::codec::encode_gtid` |
//! | 3 | rollback | `TRANSACTION` |
//! | 4 | DDL | `PAYLOAD` = `engine::codec::encode_ddl`, and `APPLIER_SLOT` when a replica worker's DDL statement carries its applied position (records written before there were slots have none) |
//! | 5 | DDL intent | `TRANSACTION`: a DDL statement is about to be written to the binlog; its commit record (kind 2, same key) carries the GTID it got |
//! | 6 | GTID reset | none: `RESET BINARY LOGS AND GTIDS` emptied the executed GTID set here (`reset.rs`) |
//! | 7 | engine commit | `binlog_storage_engine = engine`: the whole commit in one record: `TRANSACTION` (with the XID of its Xid event), `PAYLOAD` = changes, `GTID`, and `BINLOG_EVENTS` or, for a large transaction promoted by rename, `BINLOG_FILE_REFERENCE`; `APPLIER_SLOT` as in a prepare |
//! | 8 | engine DDL binlog | `binlog_storage_engine = engine`: a DDL statement's binlog transaction: `GTID`, `BINLOG_EVENTS` (the change itself is the kind 4 record before it) |
//! | 9 | prepare part | `TRANSACTION` (no XID), `PAYLOAD` = `engine::codec::encode_changes` of the first changes of a large transaction; its prepare record (kind 1) carries the rest |
//!
//! A transaction whose changes encode to more than
//! `binlogd_redo_prepare_part_bytes` (1 MiB)
//! logs them as prepare parts, each appended on its own, before its
//! prepare record: other sessions' records go between the parts, so a
//! transaction of gigabytes never holds the redo writer (or a group's
//! fdatasync) for longer than one part. Parts are written to the OS as
//! they go and, with `innodb_flush_log_at_trx_commit = 1`, synced every
//! `PREPARE_PARTS_PER_SYNC` parts, so the next session's group fdatasync never
//! finds much of the large transaction still to flush. Recovery joins the
//! parts to their prepare record; parts without one belong to a
//! transaction that never prepared, and are dropped with it. The
//! engine's prepare LSN bound is taken before the first part, so a
//! checkpoint keeps every part of a transaction still prepared.
//!
//! `GTID` (tag 2): source UUID (16 bytes) then GNO (u64 LE). `BINLOG_EVENTS`
//! (tag 3): flags u8 (bit 0: the events carry CRC32 footers), then the
//! transaction's cached binlog events exactly as its binlog cache held them
//! (BEGIN … Xid, or the DDL's Query), without the Gtid event and with
//! `log_pos` not yet final: the binlog writer adds the Gtid event (its
//! logical clock and commit timestamp are the writer's) and sets `log_pos`
//! and checksums when it appends them to a file, at commit time or when
//! recovery rebuilds the files' tail.
//!
//! `BINLOG_FILE_REFERENCE` (tag 4): flags u8 (bit 0: CRC32 footers), header
//! room u64, body length u64, event count u64, last event size u64,
//! terminating event type u8, first event's timestamp u32, file name length
//! u16, file name (all LE): a sealed spill file in the binlog's spill
//! directory (`binlog::spill_reference`), durable before the record.
//!
//! `TRANSACTION` (tag 0x80, the first engine tag): boot u64, engine
//! transaction id u64, XID presence u8, XID u64 (all LE; 25 bytes). The
//! engine numbers transactions from 1 at every start, so records are keyed
//! by (boot, id): the boot is the redo's end LSN when the database opened,
//! which no earlier boot that appended anything can share.
//!
//! `APPLIER_SLOT` (tag 0x81): slot u32 LE, then the slot's bytes
//! ([`engine::ApplierSlot`]: a replica worker's applied source position,
//! committed with the transaction's rows, or with the DDL statement whose
//! record carries it).
//!
//! ## Durability of each record
//!
//! | record | waits for | why |
//! |--------|-----------|-----|
//! | prepare with XID | `innodb_flush_log_at_trx_commit` (1: fdatasync, by the group's leader in `group_commit.rs`; 2: write; 0: nothing) | with 1 it is durable before the binlog write, so a transaction in the binlog is always recoverable from redo |
//! | prepare without XID (one-phase) | nothing | its commit record decides; the caller waits for that if it must |
//! | prepare part | written; every `PREPARE_PARTS_PER_SYNC` parts fdatasync (flush = 1) | bounds what a later group's fdatasync has to flush |
//! | commit | nothing (buffered) | the binlog holds the XID: recovery commits a prepared transaction the binlog has |
//! | rollback | nothing | recovery rolls back a prepared transaction the binlog lacks anyway |
//! | DDL | fdatasync | DDL is applied right after; the binlog write follows |
//! | DDL intent | fdatasync | before the binlog write: recovery then knows to look in the binlog for the DDL's GTID |
//! | GTID reset | fdatasync | before the old binlog files go: replay must not rebuild the old GTIDs |
//! | engine commit | `innodb_flush_log_at_trx_commit`, waited for by the committer after the append (`engine_binlog.rs`) | it alone makes the transaction and its binlog events durable |
//! | engine DDL binlog | fdatasync | as DDL |

use std::collections::{HashMap, HashSet};

use binlog::SpillReference;
use binlog_format::Gtid;
use engine::{codec, ApplierSlot, DdlRecord, EngineError, Lsn, RedoSink, RowChange, TrxId, Xid};
use parking_lot::Mutex;
use redo::{section, Durability, Record, RedoError, RedoLog};

use crate::error::{DatabaseError, Result};

pub const KIND_PREPARE: u8 = 1;
pub const KIND_COMMIT: u8 = 2;
pub const KIND_ROLLBACK: u8 = 3;
pub const KIND_DDL: u8 = 4;
pub const KIND_DDL_INTENT: u8 = 5;
pub const KIND_GTID_RESET: u8 = 6;
pub const KIND_ENGINE_COMMIT: u8 = 7;
pub const KIND_ENGINE_DDL_BINLOG: u8 = 8;
pub const KIND_PREPARE_PART: u8 = 9;

/// With flush = 1, prepare parts are synced every this many parts: 1, so
/// a later group's fdatasync never finds more than one part (1 MiB) of a
/// large transaction to flush (4 parts let the lowest per-second TPS of
/// sysbench during a 640 MiB commit fall to 0.03 of its median; 1 part,
/// 0.17; one run each on the project's machine).
pub const PREPARE_PARTS_PER_SYNC: usize = 1;
const GTID_SECTION_BYTES: usize = 16 + 8;
/// `BINLOG_EVENTS` flag: the events carry CRC32 footers.
const BINLOG_EVENTS_CHECKSUM: u8 = 1;
/// The (boot, transaction id, XID) section.
pub const SECTION_TRANSACTION: u8 = section::ENGINE_FIRST;
const TRANSACTION_SECTION_BYTES: usize = 8 + 8 + 1 + 8;
/// The transaction's [`ApplierSlot`].
pub const SECTION_APPLIER_SLOT: u8 = section::ENGINE_FIRST + 1;

/// A transaction as redo names it: (boot, engine transaction id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RedoTrxKey {
    pub boot: u64,
    pub trx: TrxId,
}

/// One decoded record.
#[derive(Debug, Clone, PartialEq)]
pub enum RedoEntry {
    Prepare {
        key: RedoTrxKey,
        xid: Option<Xid>,
        changes: Vec<RowChange>,
        slot: Option<ApplierSlot>,
    },
    /// The first changes of a large transaction; its `Prepare` has the rest.
    PreparePart {
        key: RedoTrxKey,
        changes: Vec<RowChange>,
    },
    Commit {
        key: RedoTrxKey,
        gtid: Option<Gtid>,
    },
    Rollback {
        key: RedoTrxKey,
    },
    /// A DDL change and the applier slot that commits with it.
    Ddl {
        record: DdlRecord,
        slot: Option<ApplierSlot>,
    },
    DdlIntent {
        key: RedoTrxKey,
    },
    GtidReset,
    /// A whole commit of the engine-integrated binlog.
    EngineCommit {
        key: RedoTrxKey,
        xid: Option<Xid>,
        changes: Vec<RowChange>,
        gtid: Gtid,
        binlog: BinlogBody,
        slot: Option<ApplierSlot>,
    },
    /// A DDL statement's binlog transaction (engine-integrated binlog).
    EngineDdlBinlog {
        gtid: Gtid,
        binlog: BinlogEvents,
    },
}

/// A transaction's cached binlog events, as a redo record carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinlogEvents {
    /// The events carry CRC32 footers.
    pub checksum: bool,
    pub events: Vec<u8>,
}

impl BinlogEvents {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + self.events.len());
        out.push(if self.checksum { BINLOG_EVENTS_CHECKSUM } else { 0 });
        out.extend_from_slice(&self.events);
        out
    }

    fn decode(bytes: &[u8]) -> Option<BinlogEvents> {
        let (&flags, events) = bytes.split_first()?;
        (flags & !BINLOG_EVENTS_CHECKSUM == 0)
            .then(|| BinlogEvents { checksum: flags & BINLOG_EVENTS_CHECKSUM != 0, events: events.to_vec() })
    }
}

/// The binlog side of an engine-integrated commit: its events, or, for a
/// large transaction promoted by rename, a reference to its sealed spill
/// file (`binlog::spill_reference`), so redo does not carry the body.
#[derive(Debug, Clone, PartialEq)]
pub enum BinlogBody {
    Events(BinlogEvents),
    Reference(SpillReference),
}

/// `BINLOG_FILE_REFERENCE` bytes before the file name: flags u8, header
/// room u64, body length u64, event count u64, last event size u64,
/// terminating event type u8, timestamp u32, name length u16 (all LE).
const REFERENCE_FIXED_BYTES: usize = 1 + 8 + 8 + 8 + 8 + 1 + 4 + 2;

impl BinlogBody {
    /// (section tag, section bytes).
    fn section(&self) -> (u8, Vec<u8>) {
        match self {
            BinlogBody::Events(events) => (section::BINLOG_EVENTS, events.encode()),
            BinlogBody::Reference(reference) => {
                let mut out = Vec::with_capacity(REFERENCE_FIXED_BYTES + reference.file_name.len());
                out.push(if reference.checksum { BINLOG_EVENTS_CHECKSUM } else { 0 });
                for value in [reference.header_room, reference.body_length, reference.event_count, reference.last_event_size] {
                    out.extend_from_slice(&value.to_le_bytes());
                }
                out.push(reference.terminating_event_type);
                out.extend_from_slice(&reference.timestamp.to_le_bytes());
                let name_length = u16::try_from(reference.file_name.len())
                    .expect("spill file names are binlogd's own (binlogd-referenced-N), far under 64 KiB");
                out.extend_from_slice(&name_length.to_le_bytes());
                out.extend_from_slice(reference.file_name.as_bytes());
                (section::BINLOG_FILE_REFERENCE, out)
            }
        }
    }

    fn decode_reference(bytes: &[u8]) -> Option<SpillReference> {
        if bytes.len() < REFERENCE_FIXED_BYTES || bytes[0] & !BINLOG_EVENTS_CHECKSUM != 0 {
            return None;
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let name_length = usize::from(u16::from_le_bytes(bytes[38..40].try_into().unwrap()));
        if bytes.len() != REFERENCE_FIXED_BYTES + name_length {
            return None;
        }
        Some(SpillReference {
            checksum: bytes[0] & BINLOG_EVENTS_CHECKSUM != 0,
            header_room: u64_at(1),
            body_length: u64_at(9),
            event_count: u64_at(17),
            last_event_size: u64_at(25),
            terminating_event_type: bytes[33],
            timestamp: u32::from_le_bytes(bytes[34..38].try_into().unwrap()),
            file_name: String::from_utf8(bytes[REFERENCE_FIXED_BYTES..].to_vec()).ok()?,
        })
    }
}

/// UUID and number, then a tagged GTID's tag (the section's length says
/// how long).
fn gtid_section(gtid: Gtid) -> Vec<u8> {
    let mut out = Vec::with_capacity(GTID_SECTION_BYTES + gtid.tag.as_str().len());
    out.extend_from_slice(&gtid.uuid.0);
    out.extend_from_slice(&gtid.gno.to_le_bytes());
    out.extend_from_slice(gtid.tag.as_str().as_bytes());
    out
}

fn applier_slot_section(slot: &ApplierSlot) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + slot.bytes.len());
    out.extend_from_slice(&slot.slot.to_le_bytes());
    out.extend_from_slice(&slot.bytes);
    out
}

fn decode_applier_slot_section(bytes: &[u8]) -> Option<ApplierSlot> {
    let (slot, rest) = bytes.split_first_chunk::<4>()?;
    Some(ApplierSlot { slot: u32::from_le_bytes(*slot), bytes: rest.to_vec() })
}

fn with_applier_slot(record: Record, slot: Option<&ApplierSlot>) -> Record {
    match slot {
        Some(slot) => record.with_section(SECTION_APPLIER_SLOT, applier_slot_section(slot)),
        None => record,
    }
}

fn decode_gtid_section(bytes: &[u8]) -> Option<Gtid> {
    if bytes.len() < GTID_SECTION_BYTES {
        return None;
    }
    let uuid = binlog_format::Uuid(bytes[..16].try_into().unwrap());
    let mut gtid = Gtid::new(uuid, u64::from_le_bytes(bytes[16..GTID_SECTION_BYTES].try_into().unwrap()));
    if bytes.len() > GTID_SECTION_BYTES {
        gtid.tag = binlog_format::Tag::from_stored(&bytes[GTID_SECTION_BYTES..]).ok()?;
    }
    Some(gtid)
}

/// The one record of an engine-integrated commit.
pub fn engine_commit_record(
    key: RedoTrxKey,
    xid: Option<Xid>,
    changes_payload: Vec<u8>,
    gtid: Gtid,
    binlog_section: (u8, Vec<u8>),
    slot: Option<&ApplierSlot>,
) -> Record {
    let record = Record::new(KIND_ENGINE_COMMIT)
        .with_section(SECTION_TRANSACTION, transaction_section(key, xid))
        .with_section(section::PAYLOAD, changes_payload)
        .with_section(section::GTID, gtid_section(gtid))
        .with_section(binlog_section.0, binlog_section.1);
    with_applier_slot(record, slot)
}

pub fn engine_ddl_binlog_record(gtid: Gtid, binlog: &BinlogEvents) -> Record {
    Record::new(KIND_ENGINE_DDL_BINLOG)
        .with_section(section::GTID, gtid_section(gtid))
        .with_section(section::BINLOG_EVENTS, binlog.encode())
}

/// `BINLOG_EVENTS` section bytes of `binlog`.
pub fn binlog_events_section(binlog: &BinlogEvents) -> Vec<u8> {
    binlog.encode()
}

fn transaction_section(key: RedoTrxKey, xid: Option<Xid>) -> Vec<u8> {
    let mut out = Vec::with_capacity(TRANSACTION_SECTION_BYTES);
    out.extend_from_slice(&key.boot.to_le_bytes());
    out.extend_from_slice(&key.trx.to_le_bytes());
    out.push(xid.is_some() as u8);
    out.extend_from_slice(&xid.unwrap_or(0).to_le_bytes());
    out
}

pub fn prepare_record(key: RedoTrxKey, xid: Option<Xid>, changes: &[RowChange], slot: Option<&ApplierSlot>) -> Record {
    prepare_record_encoded(KIND_PREPARE, key, xid, codec::encode_changes(changes), slot)
}

/// A prepare record (kind 1) or prepare part (kind 9, never with a slot)
/// around changes already encoded by `engine::codec`.
fn prepare_record_encoded(kind: u8, key: RedoTrxKey, xid: Option<Xid>, changes: Vec<u8>, slot: Option<&ApplierSlot>) -> Record {
    let record = Record::new(kind).with_section(SECTION_TRANSACTION, transaction_section(key, xid)).with_section(section::PAYLOAD, changes);
    with_applier_slot(record, slot)
}

pub fn commit_record(key: RedoTrxKey, gtid: Option<Gtid>) -> Record {
    let mut payload = Vec::with_capacity(25);
    codec::encode_gtid(gtid, &mut payload);
    Record::new(KIND_COMMIT).with_section(SECTION_TRANSACTION, transaction_section(key, None)).with_section(section::PAYLOAD, payload)
}

pub fn rollback_record(key: RedoTrxKey) -> Record {
    Record::new(KIND_ROLLBACK).with_section(SECTION_TRANSACTION, transaction_section(key, None))
}

pub fn ddl_intent_record(key: RedoTrxKey) -> Record {
    Record::new(KIND_DDL_INTENT).with_section(SECTION_TRANSACTION, transaction_section(key, None))
}

pub fn gtid_reset_record() -> Record {
    Record::new(KIND_GTID_RESET)
}

pub fn ddl_record(ddl: &DdlRecord, slot: Option<&ApplierSlot>) -> Record {
    with_applier_slot(Record::opaque(KIND_DDL, codec::encode_ddl(ddl)), slot)
}

/// Decodes a record this module wrote. `where_` names it in errors.
pub fn decode(record: &Record, where_: &str) -> Result<RedoEntry> {
    let bad = |reason: String| DatabaseError::corruption(where_.to_string(), reason);
    let has_slot =
        usize::from(record.section(SECTION_APPLIER_SLOT).is_some() && matches!(record.kind, KIND_PREPARE | KIND_ENGINE_COMMIT | KIND_DDL));
    let slot = || match record.section(SECTION_APPLIER_SLOT) {
        Some(bytes) => decode_applier_slot_section(bytes).map(Some).ok_or_else(|| bad("applier slot section too short".into())),
        None => Ok(None),
    };
    let sections_expected = has_slot
        + match record.kind {
            KIND_PREPARE | KIND_PREPARE_PART | KIND_COMMIT => 2,
            KIND_ROLLBACK | KIND_DDL | KIND_DDL_INTENT => 1,
            KIND_GTID_RESET => 0,
            KIND_ENGINE_COMMIT => 4,
            KIND_ENGINE_DDL_BINLOG => 2,
            other => return Err(bad(format!("unknown record kind {other}"))),
        };
    if record.sections.len() != sections_expected {
        return Err(bad(format!("record kind {} with {} sections", record.kind, record.sections.len())));
    }
    let transaction = || -> Result<(RedoTrxKey, Option<Xid>)> {
        let bytes = record.section(SECTION_TRANSACTION).ok_or_else(|| bad("no transaction section".into()))?;
        if bytes.len() != TRANSACTION_SECTION_BYTES || bytes[16] > 1 {
            return Err(bad(format!("transaction section of {} bytes", bytes.len())));
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let key = RedoTrxKey { boot: u64_at(0), trx: u64_at(8) };
        Ok((key, (bytes[16] == 1).then(|| u64_at(17))))
    };
    let payload = || record.payload().ok_or_else(|| bad("no payload section".into()));
    let gtid = || record.section(section::GTID).and_then(decode_gtid_section).ok_or_else(|| bad("no valid GTID section".into()));
    let binlog = || {
        record.section(section::BINLOG_EVENTS).and_then(BinlogEvents::decode).ok_or_else(|| bad("no valid binlog events section".into()))
    };
    let engine_error = |error: EngineError| bad(error.to_string());
    Ok(match record.kind {
        KIND_PREPARE => {
            let (key, xid) = transaction()?;
            RedoEntry::Prepare { key, xid, changes: codec::decode_changes(payload()?).map_err(engine_error)?, slot: slot()? }
        }
        KIND_PREPARE_PART => {
            let (key, _) = transaction()?;
            RedoEntry::PreparePart { key, changes: codec::decode_changes(payload()?).map_err(engine_error)? }
        }
        KIND_COMMIT => {
            let (key, _) = transaction()?;
            RedoEntry::Commit { key, gtid: codec::decode_gtid(payload()?).map_err(engine_error)? }
        }
        KIND_ROLLBACK => RedoEntry::Rollback { key: transaction()?.0 },
        KIND_DDL_INTENT => RedoEntry::DdlIntent { key: transaction()?.0 },
        KIND_GTID_RESET => RedoEntry::GtidReset,
        KIND_ENGINE_COMMIT => {
            let (key, xid) = transaction()?;
            let changes = codec::decode_changes(payload()?).map_err(engine_error)?;
            let body = match record.section(section::BINLOG_FILE_REFERENCE) {
                Some(bytes) => BinlogBody::Reference(
                    BinlogBody::decode_reference(bytes).ok_or_else(|| bad("no valid binlog file reference section".into()))?,
                ),
                None => BinlogBody::Events(binlog()?),
            };
            RedoEntry::EngineCommit { key, xid, changes, gtid: gtid()?, binlog: body, slot: slot()? }
        }
        KIND_ENGINE_DDL_BINLOG => RedoEntry::EngineDdlBinlog { gtid: gtid()?, binlog: binlog()? },
        _ => RedoEntry::Ddl { record: codec::decode_ddl(payload()?).map_err(engine_error)?, slot: slot()? },
    })
}

/// A redo failure as the engine reports it: ER_GET_ERRNO.
pub(crate) fn storage_error(error: RedoError) -> EngineError {
    let errno = match &error {
        RedoError::Io { source, .. } => source.raw_os_error().unwrap_or(5),
        _ => 5,
    };
    EngineError::Storage { errno, reason: error.to_string() }
}

/// The engine's [`RedoSink`], appending to the redo log.
pub struct RedoAdapter {
    redo: RedoLog,
    boot: u64,
    /// What a prepare record with an XID waits for.
    prepare_durability: Durability,
    /// `binlogd_redo_prepare_part_bytes`.
    prepare_part_bytes: usize,
    /// Prepared transactions whose outcome is in doubt (the binlog may
    /// hold them): dropping them in memory must not log a rollback, or
    /// recovery would undo what the binlog says committed.
    in_doubt: Mutex<HashSet<TrxId>>,
    /// Engine-integrated commits between `stage_engine_commit` and
    /// `log_commit`: their prepare writes nothing, their commit writes the
    /// one record (see `engine_binlog.rs`).
    staged: Mutex<HashMap<TrxId, Staged>>,
}

/// What an engine-integrated commit's record needs besides the GTID.
struct Staged {
    xid: Option<Xid>,
    /// (section tag, bytes): `BINLOG_EVENTS` or `BINLOG_FILE_REFERENCE`.
    binlog_section: (u8, Vec<u8>),
    /// Encoded by `log_prepare`, outside the engine's commit lock.
    changes_payload: Option<Vec<u8>>,
    /// The transaction's applier slot, given to `log_prepare`.
    slot: Option<ApplierSlot>,
}

impl RedoAdapter {
    /// `prepare_durability`: what a prepare with an XID waits for
    /// (`Buffered` when the caller makes it durable itself).
    pub fn new(redo: RedoLog, boot: u64, prepare_durability: Durability, prepare_part_bytes: usize) -> RedoAdapter {
        RedoAdapter {
            redo,
            boot,
            prepare_durability,
            prepare_part_bytes: prepare_part_bytes.max(1),
            in_doubt: Mutex::new(HashSet::new()),
            staged: Mutex::new(HashMap::new()),
        }
    }

    /// With flush = 1 each prepare part is synced (see
    /// [`PREPARE_PARTS_PER_SYNC`]); otherwise parts are only written.
    fn syncs_parts(&self) -> bool {
        self.redo.options().innodb_flush_log_at_trx_commit == redo::FlushLogAtTrxCommit::WriteAndSyncAtCommit
    }

    /// Appends `changes` as prepare parts of `prepare_part_bytes`, all but
    /// the last, which it returns encoded: the caller appends it as the
    /// record that ends the series (a prepare, or a last part).
    fn append_parts(&self, key: RedoTrxKey, changes: &[RowChange]) -> engine::Result<Vec<u8>> {
        let sync_parts = self.syncs_parts();
        // Each part is appended once the next one exists.
        let mut previous: Option<Vec<u8>> = None;
        let mut unsynced_parts = 0usize;
        codec::encode_changes_in_parts(changes, self.prepare_part_bytes, |part| {
            let Some(full) = previous.replace(part) else { return Ok(()) };
            unsynced_parts += 1;
            let part_durability = if sync_parts && unsynced_parts >= PREPARE_PARTS_PER_SYNC {
                unsynced_parts = 0;
                Durability::Sync
            } else {
                Durability::Written
            };
            self.redo.append(&prepare_record_encoded(KIND_PREPARE_PART, key, None, full, None), part_durability).map(|_| ())
        })
        .map_err(storage_error)?;
        Ok(previous.expect("encode_changes_in_parts emits at least one part"))
    }

    pub fn key(&self, trx: TrxId) -> RedoTrxKey {
        RedoTrxKey { boot: self.boot, trx }
    }

    pub fn boot(&self) -> u64 {
        self.boot
    }

    /// `trx` commits in one record (engine-integrated binlog): its prepare
    /// logs nothing, its commit logs the changes, the GTID and `binlog`.
    pub fn stage_engine_commit(&self, trx: TrxId, xid: Option<Xid>, binlog: &BinlogBody) {
        let staged = Staged { xid, binlog_section: binlog.section(), changes_payload: None, slot: None };
        self.staged.lock().insert(trx, staged);
    }

    /// Forgets a staged commit that never reached its prepare.
    pub fn unstage(&self, trx: TrxId) {
        self.staged.lock().remove(&trx);
    }

    /// The next rollback of `trx` is not logged (see `in_doubt`).
    pub fn mark_in_doubt(&self, trx: TrxId) {
        self.in_doubt.lock().insert(trx);
    }
}

impl RedoSink for RedoAdapter {
    fn log_prepare(&self, trx_id: TrxId, xid: Option<Xid>, changes: &[RowChange], slot: Option<&ApplierSlot>) -> engine::Result<Lsn> {
        if let Some(staged) = self.staged.lock().get_mut(&trx_id) {
            staged.changes_payload = Some(codec::encode_changes(changes));
            staged.slot = slot.cloned();
            return Ok(self.redo.current_lsn());
        }
        let durability = if xid.is_some() { self.prepare_durability } else { Durability::Buffered };
        let key = self.key(trx_id);
        let last = self.append_parts(key, changes)?;
        self.redo.append(&prepare_record_encoded(KIND_PREPARE, key, xid, last, slot), durability).map_err(storage_error)
    }

    fn log_changes_ahead(&self, trx_id: TrxId, changes: &[RowChange]) -> engine::Result<bool> {
        if self.staged.lock().contains_key(&trx_id) {
            // An engine-integrated commit is one record, written at commit
            // (the database does not write ahead in that mode).
            return Ok(false);
        }
        let key = self.key(trx_id);
        let last = self.append_parts(key, changes)?;
        let durability = if self.syncs_parts() { Durability::Sync } else { Durability::Written };
        self.redo.append(&prepare_record_encoded(KIND_PREPARE_PART, key, None, last, None), durability).map_err(storage_error)?;
        Ok(true)
    }

    fn log_commit(&self, trx_id: TrxId, gtid: Option<Gtid>) -> engine::Result<Lsn> {
        let staged = self.staged.lock().remove(&trx_id);
        if let Some(staged) = staged {
            let (Some(gtid), Some(changes_payload)) = (gtid, staged.changes_payload) else {
                return Err(EngineError::Storage {
                    errno: 5,
                    reason: format!("engine-integrated commit of transaction {trx_id} without GTID or prepare"),
                });
            };
            let record =
                engine_commit_record(self.key(trx_id), staged.xid, changes_payload, gtid, staged.binlog_section, staged.slot.as_ref());
            return self.redo.append(&record, Durability::Buffered).map_err(storage_error);
        }
        self.redo.append(&commit_record(self.key(trx_id), gtid), Durability::Buffered).map_err(storage_error)
    }

    fn log_rollback(&self, trx_id: TrxId) {
        if self.staged.lock().remove(&trx_id).is_some() {
            // An engine-integrated commit logs nothing before its one record.
            return;
        }
        if self.in_doubt.lock().remove(&trx_id) {
            return;
        }
        if let Err(error) = self.redo.append(&rollback_record(self.key(trx_id)), Durability::Buffered) {
            // Recovery rolls back a prepared transaction without a
            // commit record whose XID the binlog lacks: nothing is lost.
            tracing::warn!(trx = trx_id, "redo rollback record not logged: {error}");
        }
    }

    fn log_ddl(&self, ddl: &DdlRecord, slot: Option<&ApplierSlot>) -> engine::Result<Lsn> {
        self.redo.append(&ddl_record(ddl, slot), Durability::Sync).map_err(storage_error)
    }

    fn current_lsn(&self) -> Lsn {
        self.redo.current_lsn()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use binlog_format::{Uuid, Value};
    use engine::ChangeKind;

    #[test]
    fn records_round_trip() {
        let key = RedoTrxKey { boot: 77, trx: 5 };
        let change = RowChange {
            table: 3,
            kind: ChangeKind::Update,
            before: Some(Arc::new(vec![Value::Int(1), Value::Bytes(b"a".to_vec())])),
            after: Some(Arc::new(vec![Value::Int(1), Value::Bytes(b"b".to_vec())])),
            hidden_row_id: None,
        };
        let gtid = Gtid::new(Uuid([9; 16]), 42);
        let tagged = Gtid { tag: "domain_1".parse().unwrap(), ..gtid };
        let slot = ApplierSlot { slot: 3, bytes: b"binlog.000002:1234".to_vec() };
        let reference = SpillReference {
            file_name: "binlogd-referenced-8".into(),
            checksum: true,
            header_room: 65536,
            body_length: 1 << 33,
            event_count: 123_456,
            last_event_size: 31,
            terminating_event_type: 16,
            timestamp: 1_796_000_000,
        };
        let cases = [
            (
                prepare_record(key, Some(900), std::slice::from_ref(&change), None),
                RedoEntry::Prepare { key, xid: Some(900), changes: vec![change.clone()], slot: None },
            ),
            (
                prepare_record(key, Some(901), std::slice::from_ref(&change), Some(&slot)),
                RedoEntry::Prepare { key, xid: Some(901), changes: vec![change.clone()], slot: Some(slot.clone()) },
            ),
            (prepare_record(key, None, &[], None), RedoEntry::Prepare { key, xid: None, changes: vec![], slot: None }),
            (commit_record(key, Some(gtid)), RedoEntry::Commit { key, gtid: Some(gtid) }),
            (commit_record(key, Some(tagged)), RedoEntry::Commit { key, gtid: Some(tagged) }),
            (rollback_record(key), RedoEntry::Rollback { key }),
            (ddl_intent_record(key), RedoEntry::DdlIntent { key }),
            (
                engine_commit_record(
                    key,
                    Some(7),
                    codec::encode_changes(std::slice::from_ref(&change)),
                    gtid,
                    BinlogBody::Events(BinlogEvents { checksum: true, events: vec![1, 2, 3] }).section(),
                    Some(&slot),
                ),
                RedoEntry::EngineCommit {
                    key,
                    xid: Some(7),
                    changes: vec![change.clone()],
                    gtid,
                    binlog: BinlogBody::Events(BinlogEvents { checksum: true, events: vec![1, 2, 3] }),
                    slot: Some(slot.clone()),
                },
            ),
            (
                engine_commit_record(
                    key,
                    Some(8),
                    codec::encode_changes(std::slice::from_ref(&change)),
                    gtid,
                    BinlogBody::Reference(reference.clone()).section(),
                    None,
                ),
                RedoEntry::EngineCommit {
                    key,
                    xid: Some(8),
                    changes: vec![change.clone()],
                    gtid,
                    binlog: BinlogBody::Reference(reference.clone()),
                    slot: None,
                },
            ),
            (
                engine_ddl_binlog_record(gtid, &BinlogEvents { checksum: false, events: vec![4] }),
                RedoEntry::EngineDdlBinlog { gtid, binlog: BinlogEvents { checksum: false, events: vec![4] } },
            ),
            (
                ddl_record(&DdlRecord::CreateDatabase { name: "d".into(), default_collation: engine::SERVER_DEFAULT_COLLATION }, None),
                RedoEntry::Ddl {
                    record: DdlRecord::CreateDatabase { name: "d".into(), default_collation: engine::SERVER_DEFAULT_COLLATION },
                    slot: None,
                },
            ),
            (
                ddl_record(&DdlRecord::DropDatabase { name: "d".into() }, Some(&slot)),
                RedoEntry::Ddl { record: DdlRecord::DropDatabase { name: "d".into() }, slot: Some(slot.clone()) },
            ),
        ];
        for (record, expected) in cases {
            assert_eq!(decode(&record, "test").unwrap(), expected);
        }
        // A DDL record as written before DDL records could carry a slot.
        let old = Record::opaque(
            KIND_DDL,
            codec::encode_ddl(&DdlRecord::CreateDatabase { name: "old".into(), default_collation: engine::SERVER_DEFAULT_COLLATION }),
        );
        assert_eq!(
            decode(&old, "test").unwrap(),
            RedoEntry::Ddl {
                record: DdlRecord::CreateDatabase { name: "old".into(), default_collation: engine::SERVER_DEFAULT_COLLATION },
                slot: None
            }
        );
        assert!(decode(&Record::new(99), "test").is_err());
        assert!(decode(&Record::new(KIND_ROLLBACK).with_section(SECTION_TRANSACTION, vec![1, 2]), "test").is_err());
    }
}
