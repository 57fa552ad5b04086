//! Shared helpers: a tiny "engine" whose state is the sequence of record
//! ids it applied, snapshots of that state, and opening the log on
//! simulated storage.
#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use redo::{CrashPoints, LoggedRecord, Options, Record, Recovered, RedoLog};
use storage::SimStorage;

pub const DIR: &str = "/data/redo";
/// Record kind the tests use.
pub const KIND_APPLY: u8 = 7;

pub fn dir() -> PathBuf {
    PathBuf::from(DIR)
}

/// Small segments (frequent rotation) and no background flush unless a
/// test asks: what survives depends only on what the test does.
pub fn options() -> Options {
    Options { binlogd_redo_segment_bytes: 4096, innodb_flush_log_at_timeout: Duration::from_secs(3600), ..Options::default() }
}

pub fn open(storage: &SimStorage, options: Options) -> (RedoLog, Recovered) {
    open_with(storage, options, CrashPoints::default())
}

pub fn open_with(storage: &SimStorage, options: Options, crash: CrashPoints) -> (RedoLog, Recovered) {
    RedoLog::open(dir(), options, Arc::new(storage.clone()), crash).expect("open redo log")
}

/// A record for id `id` with `extra` filler bytes; its payload starts with
/// the id so recovery can tell records apart.
pub fn record(id: u64, extra: usize) -> Record {
    let mut payload = id.to_le_bytes().to_vec();
    payload.extend((0..extra).map(|i| (id as usize).wrapping_add(i) as u8));
    Record::opaque(KIND_APPLY, payload)
}

pub fn record_id(record: &Record) -> u64 {
    assert_eq!(record.kind, KIND_APPLY);
    let payload = record.payload().expect("payload section");
    let id = u64::from_le_bytes(payload[..8].try_into().unwrap());
    assert_eq!(record, &self::record(id, payload.len() - 8), "record {id} came back altered");
    id
}

pub fn encode_ids(ids: &[u64]) -> Vec<u8> {
    let mut bytes = (ids.len() as u64).to_le_bytes().to_vec();
    for id in ids {
        bytes.extend_from_slice(&id.to_le_bytes());
    }
    bytes
}

pub fn decode_ids(reader: &mut dyn Read) -> Vec<u64> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).expect("snapshot reads to its end with a valid checksum");
    let count = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!(bytes.len(), 8 + 8 * count, "snapshot length");
    (0..count).map(|i| u64::from_le_bytes(bytes[8 + 8 * i..16 + 8 * i].try_into().unwrap())).collect()
}

pub fn replayed(recovered: &Recovered) -> Vec<LoggedRecord> {
    recovered.records().collect::<redo::Result<Vec<_>>>().expect("replay")
}

/// The engine state after recovery: the snapshot's ids, then the ids of
/// the replayed records.
pub fn recovered_ids(recovered: &Recovered) -> Vec<u64> {
    let mut ids = match recovered.snapshot() {
        Some(mut reader) => decode_ids(&mut reader),
        None => Vec::new(),
    };
    let records = replayed(recovered);
    let mut lsn = recovered.start_lsn;
    for logged in &records {
        assert_eq!(logged.lsn, lsn, "records are contiguous");
        lsn = logged.end_lsn;
        ids.push(record_id(&logged.record));
    }
    assert_eq!(lsn, recovered.end_lsn);
    ids
}
