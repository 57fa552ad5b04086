//! The engine's [`RedoSink`] over the redo log, and the records it writes.
//!
//! ## Records
//!
//! One redo record per engine call; its `kind` byte says which, its
//! sections carry the rest (`redo/FORMAT.md` has the record framing):
//!
//! | kind | name | sections |
//! |------|------|----------|
//! | 1 | prepare | `TRANSACTION` (with the XID, if any), `PAYLOAD` = `engine::codec::encode_changes` |
//! | 2 | commit | `TRANSACTION`, `PAYLOAD` = `engine::codec::encode_gtid` |
//! | 3 | rollback | `TRANSACTION` |
//! | 4 | DDL | `PAYLOAD` = `engine::codec::encode_ddl` |
//! | 5 | DDL intent | `TRANSACTION`: a DDL statement is about to be written to the binlog; its commit record (kind 2, same key) carries the GTID it got |
//! | 6 | GTID reset | none: `RESET BINARY LOGS AND GTIDS` emptied the executed GTID set here (`reset.rs`) |
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
//! `TRANSACTION` (tag 0x80, the first engine tag): boot u64, engine
//! transaction id u64, XID presence u8, XID u64 (all LE; 25 bytes). The
//! engine numbers transactions from 1 at every start, so records are keyed
//! by (boot, id): the boot is the redo's end LSN when the database opened,
//! which no earlier boot that appended anything can share.
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

use std::collections::HashSet;

use binlog_format::Gtid;
use engine::{codec, DdlRecord, EngineError, Lsn, RedoSink, RowChange, TrxId, Xid};
use parking_lot::Mutex;
use redo::{section, Durability, Record, RedoError, RedoLog};

use crate::error::{DatabaseError, Result};

pub const KIND_PREPARE: u8 = 1;
pub const KIND_COMMIT: u8 = 2;
pub const KIND_ROLLBACK: u8 = 3;
pub const KIND_DDL: u8 = 4;
pub const KIND_DDL_INTENT: u8 = 5;
pub const KIND_GTID_RESET: u8 = 6;
pub const KIND_PREPARE_PART: u8 = 9;

/// With flush = 1, prepare parts are synced every this many parts.
pub const PREPARE_PARTS_PER_SYNC: usize = 4;
/// The (boot, transaction id, XID) section.
pub const SECTION_TRANSACTION: u8 = section::ENGINE_FIRST;
const TRANSACTION_SECTION_BYTES: usize = 8 + 8 + 1 + 8;

/// A transaction as redo names it: (boot, engine transaction id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RedoTrxKey {
    pub boot: u64,
    pub trx: TrxId,
}

/// One decoded record.
#[derive(Debug, Clone, PartialEq)]
pub enum RedoEntry {
    Prepare { key: RedoTrxKey, xid: Option<Xid>, changes: Vec<RowChange> },
    /// The first changes of a large transaction; its `Prepare` has the rest.
    PreparePart { key: RedoTrxKey, changes: Vec<RowChange> },
    Commit { key: RedoTrxKey, gtid: Option<Gtid> },
    Rollback { key: RedoTrxKey },
    Ddl(DdlRecord),
    DdlIntent { key: RedoTrxKey },
    GtidReset,
}

fn transaction_section(key: RedoTrxKey, xid: Option<Xid>) -> Vec<u8> {
    let mut out = Vec::with_capacity(TRANSACTION_SECTION_BYTES);
    out.extend_from_slice(&key.boot.to_le_bytes());
    out.extend_from_slice(&key.trx.to_le_bytes());
    out.push(xid.is_some() as u8);
    out.extend_from_slice(&xid.unwrap_or(0).to_le_bytes());
    out
}

pub fn prepare_record(key: RedoTrxKey, xid: Option<Xid>, changes: &[RowChange]) -> Record {
    Record::new(KIND_PREPARE)
        .with_section(SECTION_TRANSACTION, transaction_section(key, xid))
        .with_section(section::PAYLOAD, codec::encode_changes(changes))
}

/// A prepare record (kind 1) or prepare part (kind 9) around changes
/// already encoded by `engine::codec`.
fn prepare_record_encoded(kind: u8, key: RedoTrxKey, xid: Option<Xid>, changes: Vec<u8>) -> Record {
    Record::new(kind).with_section(SECTION_TRANSACTION, transaction_section(key, xid)).with_section(section::PAYLOAD, changes)
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

pub fn ddl_record(ddl: &DdlRecord) -> Record {
    Record::opaque(KIND_DDL, codec::encode_ddl(ddl))
}

/// Decodes a record this module wrote. `where_` names it in errors.
pub fn decode(record: &Record, where_: &str) -> Result<RedoEntry> {
    let bad = |reason: String| DatabaseError::corruption(where_.to_string(), reason);
    let sections_expected = match record.kind {
        KIND_PREPARE | KIND_PREPARE_PART | KIND_COMMIT => 2,
        KIND_ROLLBACK | KIND_DDL | KIND_DDL_INTENT => 1,
        KIND_GTID_RESET => 0,
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
    let engine_error = |error: EngineError| bad(error.to_string());
    Ok(match record.kind {
        KIND_PREPARE => {
            let (key, xid) = transaction()?;
            RedoEntry::Prepare { key, xid, changes: codec::decode_changes(payload()?).map_err(engine_error)? }
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
        _ => RedoEntry::Ddl(codec::decode_ddl(payload()?).map_err(engine_error)?),
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
}

impl RedoAdapter {
    /// `prepare_durability`: what a prepare with an XID waits for
    /// (`Buffered` when the caller makes it durable itself).
    pub fn new(redo: RedoLog, boot: u64, prepare_durability: Durability, prepare_part_bytes: usize) -> RedoAdapter {
        RedoAdapter { redo, boot, prepare_durability, prepare_part_bytes: prepare_part_bytes.max(1), in_doubt: Mutex::new(HashSet::new()) }
    }

    pub fn key(&self, trx: TrxId) -> RedoTrxKey {
        RedoTrxKey { boot: self.boot, trx }
    }

    pub fn boot(&self) -> u64 {
        self.boot
    }

    /// The next rollback of `trx` is not logged (see `in_doubt`).
    pub fn mark_in_doubt(&self, trx: TrxId) {
        self.in_doubt.lock().insert(trx);
    }
}

impl RedoSink for RedoAdapter {
    fn log_prepare(&self, trx_id: TrxId, xid: Option<Xid>, changes: &[RowChange]) -> engine::Result<Lsn> {
        let durability = if xid.is_some() { self.prepare_durability } else { Durability::Buffered };
        let key = self.key(trx_id);
        let sync_parts = self.redo.options().innodb_flush_log_at_trx_commit == redo::FlushLogAtTrxCommit::WriteAndSyncAtCommit;
        // Each part is appended once the next one exists, so the last
        // encoded part becomes the prepare record itself.
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
            self.redo.append(&prepare_record_encoded(KIND_PREPARE_PART, key, None, full), part_durability).map(|_| ())
        })
        .map_err(storage_error)?;
        let last = previous.expect("encode_changes_in_parts emits at least one part");
        self.redo.append(&prepare_record_encoded(KIND_PREPARE, key, xid, last), durability).map_err(storage_error)
    }

    fn log_commit(&self, trx_id: TrxId, gtid: Option<Gtid>) -> engine::Result<Lsn> {
        self.redo.append(&commit_record(self.key(trx_id), gtid), Durability::Buffered).map_err(storage_error)
    }

    fn log_rollback(&self, trx_id: TrxId) {
        if self.in_doubt.lock().remove(&trx_id) {
            return;
        }
        if let Err(error) = self.redo.append(&rollback_record(self.key(trx_id)), Durability::Buffered) {
            // Recovery rolls back a prepared transaction without a
            // commit record whose XID the binlog lacks: nothing is lost.
            tracing::warn!(trx = trx_id, "redo rollback record not logged: {error}");
        }
    }

    fn log_ddl(&self, ddl: &DdlRecord) -> engine::Result<Lsn> {
        self.redo.append(&ddl_record(ddl), Durability::Sync).map_err(storage_error)
    }

    fn current_lsn(&self) -> Lsn {
        self.redo.current_lsn()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog_format::{Uuid, Value};
    use engine::ChangeKind;

    #[test]
    fn records_round_trip() {
        let key = RedoTrxKey { boot: 77, trx: 5 };
        let change = RowChange {
            table: 3,
            kind: ChangeKind::Update,
            before: Some(vec![Value::Int(1), Value::Bytes(b"a".to_vec())]),
            after: Some(vec![Value::Int(1), Value::Bytes(b"b".to_vec())]),
            hidden_row_id: None,
        };
        let gtid = Gtid { uuid: Uuid([9; 16]), gno: 42 };
        let cases = [
            (prepare_record(key, Some(900), std::slice::from_ref(&change)), RedoEntry::Prepare { key, xid: Some(900), changes: vec![change.clone()] }),
            (prepare_record(key, None, &[]), RedoEntry::Prepare { key, xid: None, changes: vec![] }),
            (commit_record(key, Some(gtid)), RedoEntry::Commit { key, gtid: Some(gtid) }),
            (rollback_record(key), RedoEntry::Rollback { key }),
            (ddl_intent_record(key), RedoEntry::DdlIntent { key }),
            (ddl_record(&DdlRecord::CreateDatabase { name: "d".into() }), RedoEntry::Ddl(DdlRecord::CreateDatabase { name: "d".into() })),
        ];
        for (record, expected) in cases {
            assert_eq!(decode(&record, "test").unwrap(), expected);
        }
        assert!(decode(&Record::new(99), "test").is_err());
        assert!(decode(&Record::new(KIND_ROLLBACK).with_section(SECTION_TRANSACTION, vec![1, 2]), "test").is_err());
    }
}
