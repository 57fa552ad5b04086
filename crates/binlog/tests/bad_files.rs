//! Damaged files given to recovery: a clear error naming file and offset,
//! or a correct truncation of a torn tail, never a panic and never a loss
//! of a transaction that was acknowledged.

mod support;

use std::sync::Arc;

use binlog::{BinaryLog, BinlogError, CrashPoints};
use rand::{Rng, SeedableRng};
use storage::SimStorage;
use support::*;

/// A log with two closed files and an active one (left in use, as after
/// a kill), each holding some transactions.
fn killed_log(transactions_per_file: u64) -> (SimStorage, Vec<String>) {
    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), |_| {});
    let mut xid = 1;
    for file in 0..3 {
        for _ in 0..transactions_per_file {
            log.commit(transaction(&log, xid, 2)).unwrap();
            xid += 1;
        }
        if file < 2 {
            log.rotate().unwrap();
        }
    }
    let names = log.file_names();
    drop(log);
    (storage.process_kill_image(), names)
}

fn reopen(storage: &SimStorage) -> binlog::Result<BinaryLog> {
    BinaryLog::open(options(&sim_dir()), Arc::new(storage.clone()), CrashPoints::default()).map(|(log, _)| log)
}

#[test]
fn torn_tail_of_the_in_use_file_is_truncated_at_every_offset() {
    let (storage, names) = killed_log(5);
    let active = sim_dir().join(&names[2]);
    let full = storage.file_bytes(&active).unwrap();
    // The preamble is synced before the index lists a file, so a crash never
    // tears it; damage there is covered by another test.
    let mut stream = binlog_format::file::EventStream::new(&full).unwrap();
    stream.next().unwrap().unwrap();
    let (previous_gtids_offset, raw, _) = stream.next().unwrap().unwrap();
    let preamble_end = previous_gtids_offset as usize + raw.bytes.len();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..40 {
        let cut = rng.gen_range(preamble_end..full.len());
        let image = storage.crash_image(None);
        let mut bytes = full.clone();
        bytes.truncate(cut);
        image.set_file_bytes(&active, bytes);
        let log = reopen(&image).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let executed = log.executed_gtids();
        // Files 1 and 2 are intact: at least their 10 transactions remain, and a prefix.
        assert!(executed.last_gno(&uuid()) >= 10, "cut at {cut}: {executed}");
        assert_eq!(executed.count(), executed.last_gno(&uuid()));
        let active_now = log.active_position().0;
        drop(log);
        check_log(&image, &sim_dir(), Some(&active_now));
    }
}

#[test]
fn flipped_bits_in_a_closed_file_stop_the_start_with_file_and_offset() {
    let (storage, names) = killed_log(5);
    let closed = sim_dir().join(&names[0]);
    let original = storage.file_bytes(&closed).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for _ in 0..20 {
        let image = storage.crash_image(None);
        let mut bytes = original.clone();
        // Past the magic and the FDE flags' in-use bit (ignored by the checksum).
        let at = rng.gen_range(130..bytes.len());
        bytes[at] ^= 1 << rng.gen_range(0..8);
        image.set_file_bytes(&closed, bytes);
        // The first file is only scanned fully when in use or last: corrupt the
        // last closed file instead when the first one is not scanned.
        match reopen(&image) {
            Err(BinlogError::Corruption { file, offset, reason, .. }) => {
                assert!(file.contains("binlog.0000"), "{file}");
                assert!(offset <= at as u64, "offset {offset} after the flipped byte {at}: {reason}");
            }
            Ok(_) => {
                // Only the preamble of non-last closed files is read at start:
                // damage in their body surfaces when read (readers check every checksum).
                let log = reopen(&image).unwrap();
                let mut reader = binlog::LogReader::from_position(&log, &names[0], 4).unwrap();
                let error = loop {
                    match reader.next(std::time::Duration::from_millis(10)) {
                        Ok(Some(_)) => continue,
                        Ok(None) => panic!("corruption at {at} went unnoticed"),
                        Err(error) => break error,
                    }
                };
                assert!(matches!(error, BinlogError::Corruption { .. }), "{error}");
            }
            Err(other) => panic!("unexpected error {other}"),
        }
    }
}

#[test]
fn a_damaged_last_closed_file_refuses_to_start() {
    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), |_| {});
    for xid in 1..=5 {
        log.commit(transaction(&log, xid, 2)).unwrap();
    }
    let name = log.active_position().0;
    log.close().unwrap();
    let path = sim_dir().join(&name);
    let mut bytes = storage.file_bytes(&path).unwrap();
    let at = bytes.len() - 40;
    bytes[at] ^= 0x10;
    storage.set_file_bytes(&path, bytes);
    // The next open makes a new file, so the damaged one is second-last.
    // Delete that new file from the index first by corrupting before opening.
    match reopen(&storage) {
        Err(BinlogError::Corruption { file, offset, reason, .. }) => {
            assert_eq!(file, name);
            assert!(offset < at as u64);
            assert!(reason.contains("closed cleanly"), "{reason}");
        }
        other => panic!("expected corruption, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn wrong_magic_and_absurd_lengths_are_reported_not_panicked() {
    let (storage, names) = killed_log(3);
    // Wrong magic on a listed file.
    let image = storage.crash_image(None);
    let path = sim_dir().join(&names[1]);
    let mut bytes = image.file_bytes(&path).unwrap();
    bytes[0] = b'X';
    image.set_file_bytes(&path, bytes);
    match reopen(&image) {
        Err(BinlogError::Corruption { file, offset, reason, .. }) => {
            assert_eq!(file, names[1]);
            assert_eq!(offset, 0);
            assert!(reason.contains("magic"), "{reason}");
        }
        other => panic!("expected corruption, got {:?}", other.map(|_| ())),
    }
    // A huge event_size in the in-use file's tail is a torn tail: truncated.
    let image = storage.crash_image(None);
    let path = sim_dir().join(&names[2]);
    let mut bytes = image.file_bytes(&path).unwrap();
    let good_length = bytes.len();
    let xid = binlog_format::EventType::Xid as u8;
    binlog_format::EventHeader { timestamp: 0, event_type: xid, server_id: 0, event_size: u32::MAX, log_pos: 0, flags: 0 }
        .encode(&mut bytes);
    image.set_file_bytes(&path, bytes);
    let log = reopen(&image).unwrap();
    assert_eq!(log.executed_gtids().last_gno(&uuid()), 9);
    drop(log);
    assert_eq!(image.file_bytes(&path).unwrap().len(), good_length);
    // A missing listed file.
    let image = storage.crash_image(None);
    use storage::Storage;
    image.remove(&sim_dir().join(&names[0])).unwrap();
    match reopen(&image) {
        Err(BinlogError::Corruption { file, reason, .. }) => {
            assert_eq!(file, names[0]);
            assert!(reason.contains("missing"));
        }
        other => panic!("expected corruption, got {:?}", other.map(|_| ())),
    }
}
