//! Round trips, rotation, torn tails, corruption, and poisoning after a
//! failed fsync.

mod support;

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use redo::segment::{segment_name, SEGMENT_HEADER_BYTES};
use redo::{section, CrashPoints, Durability, Record, RedoError, RedoLog};
use storage::OsStorage;
use storage::SimStorage;
use support::*;

#[test]
fn round_trip_on_the_real_file_system() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("redo");
    let storage = Arc::new(OsStorage);
    let (log, recovered) = RedoLog::open(&dir, options(), storage.clone(), CrashPoints::default()).unwrap();
    assert_eq!((recovered.start_lsn, recovered.end_lsn, recovered.records_scanned), (0, 0, 0));
    let commit = Record::new(2)
        .with_section(section::PAYLOAD, b"row changes".to_vec())
        .with_section(section::GTID, b"3E11FA47-71CA-11E1-9E33-C80AA9429562:23".to_vec())
        .with_section(section::BINLOG_EVENTS, vec![0xfe; 300])
        .with_section(0x81, Vec::new());
    let mut ends = Vec::new();
    for id in 0..200 {
        ends.push(log.append(&record(id, id as usize % 50), Durability::Sync).unwrap());
    }
    let commit_end = log.append(&commit, Durability::Written).unwrap();
    log.close().unwrap();
    assert!(matches!(log.append(&record(999, 0), Durability::Sync), Err(RedoError::Closed)));
    assert!(log.counters().rotations > 0, "4 KiB segments rotate");
    drop(log);

    let (log, recovered) = RedoLog::open(&dir, options(), storage, CrashPoints::default()).unwrap();
    let records = replayed(&recovered);
    assert_eq!(records.len(), 201);
    for (id, logged) in records[..200].iter().enumerate() {
        assert_eq!(record_id(&logged.record), id as u64);
        assert_eq!(logged.end_lsn, ends[id]);
    }
    assert_eq!(records[200].record, commit);
    assert_eq!(recovered.end_lsn, commit_end);
    assert_eq!(log.current_lsn(), commit_end);
    assert_eq!(log.durable_lsn(), commit_end);
    assert!(recovered.truncation.is_none());
}

#[test]
fn lsn_is_the_byte_offset_in_the_stream_across_segments() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let mut lsn = 0;
    for id in 0..100 {
        let record = record(id, 90);
        let end = log.append(&record, Durability::Written).unwrap();
        assert_eq!(end, lsn + record.encoded_len());
        lsn = end;
    }
    let segments: Vec<String> = storage::Storage::list(&storage, &dir()).unwrap();
    let segment_bytes: u64 = segments
        .iter()
        .filter(|n| redo::segment::parse_segment_name(n).is_some())
        .map(|n| storage.file_bytes(&dir().join(n)).unwrap().len() as u64 - SEGMENT_HEADER_BYTES as u64)
        .sum();
    assert_eq!(segment_bytes, lsn, "the stream is the segments' records, headers excluded");
    for name in &segments {
        if redo::segment::parse_segment_name(name).is_some() {
            assert!(storage.file_bytes(&dir().join(name)).unwrap().len() <= 4096, "{name} exceeds binlogd_redo_segment_bytes");
        }
    }
}

#[test]
fn a_record_larger_than_a_segment_gets_one_to_itself() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    log.append(&record(1, 10), Durability::Written).unwrap();
    log.append(&record(2, 10_000), Durability::Written).unwrap();
    log.append(&record(3, 10), Durability::Sync).unwrap();
    let (_, recovered) = open(&storage.crash_image(None), options());
    assert_eq!(recovered_ids(&recovered), vec![1, 2, 3]);
    let big = storage.file_bytes(&dir().join(segment_name(2))).unwrap();
    assert_eq!(big.len() as u64, SEGMENT_HEADER_BYTES as u64 + record(2, 10_000).encoded_len());
}

#[test]
fn records_over_the_limit_are_refused() {
    let storage = SimStorage::new();
    let mut options = options();
    options.binlogd_redo_record_bytes_max = 1000;
    let (log, _) = open(&storage, options);
    assert!(matches!(log.append(&record(1, 2000), Durability::Sync), Err(RedoError::RecordTooLarge { .. })));
    log.append(&record(2, 10), Durability::Sync).unwrap();
}

/// Cuts the last segment at every length between its header and its end:
/// recovery keeps exactly the whole records, truncates the rest, and the
/// log appends after them.
#[test]
fn torn_tail_at_every_offset_truncates_cleanly() {
    let storage = SimStorage::new();
    let mut options = options();
    options.binlogd_redo_segment_bytes = 1 << 20;
    let (log, _) = open(&storage, options.clone());
    let mut ends = vec![0];
    for id in 0..12 {
        ends.push(log.append(&record(id, id as usize * 7), Durability::Written).unwrap());
    }
    drop(log);
    let path = dir().join(segment_name(1));
    let full = storage.file_bytes(&path).unwrap();
    for length in SEGMENT_HEADER_BYTES..=full.len() {
        let image = storage.process_kill_image();
        image.set_file_bytes(&path, full[..length].to_vec());
        let lsn_at_cut = (length - SEGMENT_HEADER_BYTES) as u64;
        let whole = ends.iter().rposition(|&end| end <= lsn_at_cut).unwrap();
        let (log, recovered) = open(&image, options.clone());
        assert_eq!(recovered_ids(&recovered), (0..whole as u64).collect::<Vec<_>>(), "cut at {length}");
        assert_eq!(recovered.end_lsn, ends[whole]);
        assert_eq!(recovered.truncation.is_some(), ends[whole] != lsn_at_cut, "cut at {length}");
        log.append(&record(100, 3), Durability::Sync).unwrap();
        drop(log);
        let (_, again) = open(&image, options.clone());
        let mut expected: Vec<u64> = (0..whole as u64).collect();
        expected.push(100);
        assert_eq!(recovered_ids(&again), expected, "append after the cut at {length}");
    }
}

/// Power cuts that tear the unsynced tail at random lengths, with garbage
/// sometimes following: every synced record survives, the rest is a prefix.
#[test]
fn torn_tails_at_random_offsets() {
    for seed in 0..60u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let storage = SimStorage::new();
        let (log, _) = open(&storage, options());
        let mut synced = 0;
        let count = rng.gen_range(1..80);
        for id in 0..count {
            let durability = if rng.gen_ratio(1, 5) { Durability::Sync } else { Durability::Written };
            log.append(&record(id, rng.gen_range(0..200)), durability).unwrap();
            if durability == Durability::Sync {
                synced = id + 1;
            }
        }
        let image = storage.crash_image(Some(&mut rng));
        if rng.gen_bool(0.5) {
            // Garbage after whatever survived (a reused disk block).
            let names = storage::Storage::list(&image, &dir()).unwrap();
            let last = names.iter().filter(|n| redo::segment::parse_segment_name(n).is_some()).max().unwrap();
            let path = dir().join(last);
            let mut bytes = image.file_bytes(&path).unwrap();
            bytes.extend((0..rng.gen_range(1..300)).map(|_| rng.gen::<u8>()));
            image.set_file_bytes(&path, bytes);
        }
        let (_, recovered) = open(&image, options());
        let ids = recovered_ids(&recovered);
        assert!(ids.len() as u64 >= synced, "seed {seed}: lost a synced record");
        assert_eq!(ids, (0..ids.len() as u64).collect::<Vec<_>>(), "seed {seed}");
        let (_, again) = open(&image, options());
        assert_eq!(recovered_ids(&again), ids, "seed {seed}: recovery is idempotent");
    }
}

#[test]
fn corruption_in_a_closed_segment_names_file_and_offset() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let mut ends = vec![0];
    for id in 0..100 {
        ends.push(log.append(&record(id, 100), Durability::Sync).unwrap());
    }
    drop(log);
    // Damage the 5th record of redo.000001 (a closed segment).
    let path = dir().join(segment_name(1));
    let mut bytes = storage.file_bytes(&path).unwrap();
    let offset = SEGMENT_HEADER_BYTES as u64 + ends[4];
    bytes[offset as usize + 20] ^= 0xff;
    storage.set_file_bytes(&path, bytes);
    match RedoLog::open(dir(), options(), Arc::new(storage.clone()), CrashPoints::default()) {
        Err(RedoError::Corruption { file, offset: at, reason }) => {
            assert_eq!(file, "redo.000001");
            assert_eq!(at, offset);
            assert!(reason.contains("checksum"), "{reason}");
        }
        Err(other) => panic!("expected corruption, got {other}"),
        Ok(_) => panic!("expected corruption, opened"),
    }
}

#[test]
fn damaged_control_file_or_missing_segment_refuses_to_open() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    for id in 0..100 {
        log.append(&record(id, 100), Durability::Sync).unwrap();
    }
    drop(log);
    let control = dir().join(redo::control::CONTROL_FILE_NAME);
    let image = storage.process_kill_image();
    let mut bytes = image.file_bytes(&control).unwrap();
    bytes[14] ^= 1;
    image.set_file_bytes(&control, bytes);
    let error = RedoLog::open(dir(), options(), Arc::new(image), CrashPoints::default()).err().unwrap();
    assert!(matches!(&error, RedoError::Corruption { file, .. } if file == "redo.control"), "{error}");

    // A hole in the middle of the chain.
    let image = storage.process_kill_image();
    storage::Storage::remove(&image, &dir().join(segment_name(2))).unwrap();
    let error = RedoLog::open(dir(), options(), Arc::new(image), CrashPoints::default()).err().unwrap();
    assert!(matches!(error, RedoError::Corruption { .. }), "{error}");
}

#[test]
fn an_empty_segment_left_by_an_interrupted_rotation_is_removed() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    for id in 0..10 {
        log.append(&record(id, 10), Durability::Sync).unwrap();
    }
    drop(log);
    let image = storage.process_kill_image();
    // As if the process died between create() and the header write.
    storage::Storage::create(&image, &dir().join(segment_name(2))).unwrap();
    let (log, recovered) = open(&image, options());
    assert_eq!(recovered.removed_files, vec![segment_name(2)]);
    assert_eq!(recovered_ids(&recovered), (0..10).collect::<Vec<_>>());
    log.append(&record(10, 10), Durability::Sync).unwrap();
}

#[test]
fn a_failed_fsync_poisons_the_log_until_reopen() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    log.append(&record(0, 10), Durability::Sync).unwrap();
    storage.fail_sync_number(storage.sync_count() + 1);
    let error = log.append(&record(1, 10), Durability::Sync).unwrap_err();
    assert!(matches!(error, RedoError::Io { operation: "fdatasync", .. }), "{error}");
    for durability in [Durability::Sync, Durability::Written, Durability::Buffered] {
        let error = log.append(&record(2, 10), durability).unwrap_err();
        assert!(matches!(error, RedoError::PreviousIo { .. }), "{error}");
    }
    assert!(matches!(log.flush(), Err(RedoError::PreviousIo { .. })));
    assert!(matches!(log.checkpoint(0, |_| Ok(())), Err(RedoError::PreviousIo { .. })));
    drop(log);

    let (log, recovered) = open(&storage, options());
    // Record 1 reached the page cache; whether it is in the log is
    // recovery's call. Record 0 was acknowledged and must be.
    let ids = recovered_ids(&recovered);
    assert_eq!(ids[0], 0);
    assert!(ids.len() <= 2);
    log.append(&record(3, 10), Durability::Sync).unwrap();
}

#[test]
fn a_failed_write_fails_every_waiter_of_the_group() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    log.append(&record(0, 10), Durability::Buffered).unwrap();
    storage.freeze();
    assert!(matches!(log.append(&record(1, 10), Durability::Written), Err(RedoError::Io { operation: "write", .. })));
    assert!(matches!(log.wait_durable(0), Ok(())));
    assert!(matches!(log.append(&record(2, 10), Durability::Buffered), Err(RedoError::PreviousIo { .. })));
}
