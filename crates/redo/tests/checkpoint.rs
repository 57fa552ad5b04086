//! Checkpoints: old redo and snapshots are deleted, recovery starts from
//! the checkpoint and never reads what lies before it, the floor keeps
//! redo a later reader still needs, and a damaged snapshot is caught.

mod support;

use std::sync::Arc;

use redo::segment::{parse_segment_name, segment_name};
use redo::{CrashPoints, Durability, Lsn, RedoError, RedoLog};
use storage::SimStorage;
use storage::Storage;
use support::*;

fn files(storage: &SimStorage) -> Vec<String> {
    storage.list(&dir()).unwrap()
}

fn segments(storage: &SimStorage) -> Vec<u64> {
    files(storage).iter().filter_map(|n| parse_segment_name(n)).collect()
}

/// Appends ids `from..to` and returns the end LSN.
fn append_range(log: &RedoLog, from: u64, to: u64) -> Lsn {
    let mut end = log.current_lsn();
    for id in from..to {
        end = log.append(&record(id, 100), Durability::Sync).unwrap();
    }
    end
}

#[test]
fn checkpoint_deletes_old_redo_and_recovery_starts_from_it() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let start = append_range(&log, 0, 200);
    let before = segments(&storage);
    assert!(before.len() > 5);
    let ids: Vec<u64> = (0..200).collect();
    let info = log.checkpoint(start, |out| out.write_all(&encode_ids(&ids))).unwrap();
    assert_eq!((info.number, info.start_lsn, info.file_name.as_str()), (1, start, "checkpoint.000001"));
    let after = segments(&storage);
    assert_eq!(after.len(), 1, "only the active segment holds LSN {start}: {after:?}");
    append_range(&log, 200, 210);
    drop(log);

    let (log, recovered) = open(&storage.crash_image(None), options());
    assert_eq!(recovered.checkpoint.as_ref(), Some(&info));
    assert_eq!(recovered.start_lsn, start);
    assert_eq!(recovered.records_scanned, 10, "only records after the checkpoint are read");
    assert_eq!(recovered_ids(&recovered), (0..210).collect::<Vec<_>>());
    assert_eq!(log.last_checkpoint(), Some(info));
}

#[test]
fn a_second_checkpoint_replaces_the_first() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let first = append_range(&log, 0, 50);
    log.checkpoint(first, |out| out.write_all(&encode_ids(&(0..50).collect::<Vec<_>>()))).unwrap();
    let second = append_range(&log, 50, 120);
    let info = log.checkpoint(second, |out| out.write_all(&encode_ids(&(0..120).collect::<Vec<_>>()))).unwrap();
    assert_eq!(info.number, 2);
    let checkpoints: Vec<String> = files(&storage).into_iter().filter(|n| n.starts_with("checkpoint.")).collect();
    assert_eq!(checkpoints, vec!["checkpoint.000002".to_string()]);
    drop(log);
    let (_, recovered) = open(&storage, options());
    assert_eq!(recovered_ids(&recovered), (0..120).collect::<Vec<_>>());
    assert_eq!(recovered.records_scanned, 0);
}

#[test]
fn the_floor_keeps_redo_and_recovery_still_skips_it() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let floor = append_range(&log, 0, 20);
    let start = append_range(&log, 20, 200);
    log.set_checkpoint_floor(Some(floor));
    assert_eq!(log.checkpoint_floor(), Some(floor));
    log.checkpoint(start, |out| out.write_all(&encode_ids(&(0..200).collect::<Vec<_>>()))).unwrap();
    assert_eq!(segments(&storage)[0], 1, "the segment holding the floor is kept");
    drop(log);

    // Damage redo below the checkpoint: recovery never reads it...
    let path = dir().join(segment_name(2));
    let mut bytes = storage.file_bytes(&path).unwrap();
    bytes[100] ^= 0xff;
    storage.set_file_bytes(&path, bytes);
    let (log, recovered) = open(&storage, options());
    assert_eq!(recovered_ids(&recovered), (0..200).collect::<Vec<_>>());
    assert_eq!(recovered.oldest_lsn, 0);
    // ...but a reader going back to the floor finds it.
    let from_floor: Vec<_> = recovered.records_from(floor).unwrap().collect();
    assert!(from_floor.iter().any(|r| matches!(r, Err(RedoError::Corruption { file, .. }) if file == "redo.000002")));
    assert!(matches!(recovered.records_from(recovered.end_lsn + 1), Err(RedoError::InvalidLsn { .. })));

    // Lifting the floor lets the next checkpoint delete it.
    log.set_checkpoint_floor(None);
    let end = append_range(&log, 200, 201);
    log.checkpoint(end, |out| out.write_all(&encode_ids(&(0..201).collect::<Vec<_>>()))).unwrap();
    assert!(!segments(&storage).contains(&1));
}

#[test]
fn records_from_the_floor_are_in_order() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let floor = append_range(&log, 0, 30);
    let start = append_range(&log, 30, 100);
    log.set_checkpoint_floor(Some(floor));
    log.checkpoint(start, |out| out.write_all(&encode_ids(&(0..100).collect::<Vec<_>>()))).unwrap();
    drop(log);
    let (_, recovered) = open(&storage, options());
    let ids: Vec<u64> = recovered.records_from(floor).unwrap().map(|r| record_id(&r.unwrap().record)).collect();
    assert_eq!(ids, (30..100).collect::<Vec<_>>());
}

#[test]
fn a_damaged_snapshot_is_caught_when_read() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let start = append_range(&log, 0, 10);
    let info = log.checkpoint(start, |out| out.write_all(&encode_ids(&(0..10).collect::<Vec<_>>()))).unwrap();
    drop(log);
    let path = dir().join(&info.file_name);
    let mut bytes = storage.file_bytes(&path).unwrap();
    bytes[9] ^= 1;
    storage.set_file_bytes(&path, bytes.clone());
    let (_, recovered) = open(&storage, options());
    let mut reader = recovered.snapshot().unwrap();
    let error = std::io::Read::read_to_end(&mut reader, &mut Vec::new()).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);

    bytes.pop();
    storage.set_file_bytes(&path, bytes);
    let error = RedoLog::open(dir(), options(), Arc::new(storage.clone()), CrashPoints::default()).err().unwrap();
    assert!(matches!(&error, RedoError::Corruption { file, .. } if file == "checkpoint.000001"), "{error}");
}

#[test]
fn a_failed_snapshot_keeps_the_previous_checkpoint() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let start = append_range(&log, 0, 10);
    let info = log.checkpoint(start, |out| out.write_all(&encode_ids(&(0..10).collect::<Vec<_>>()))).unwrap();
    let later = append_range(&log, 10, 20);
    let error = log.checkpoint(later, |_| Err(std::io::Error::other("engine says no"))).unwrap_err();
    assert!(matches!(error, RedoError::Snapshot(_)), "{error}");
    assert_eq!(log.last_checkpoint(), Some(info));
    assert!(!files(&storage).iter().any(|n| n.ends_with(".tmp")));
    // The log is not poisoned by the engine's failure.
    append_range(&log, 20, 21);
    drop(log);
    let (_, recovered) = open(&storage, options());
    assert_eq!(recovered_ids(&recovered), (0..21).collect::<Vec<_>>());
}

#[test]
fn checkpoint_lsns_are_checked() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let end = append_range(&log, 0, 10);
    assert!(matches!(log.checkpoint(end + 1, |_| Ok(())), Err(RedoError::InvalidLsn { .. })));
    assert!(matches!(log.checkpoint(end - 1, |_| Ok(())), Err(RedoError::InvalidLsn { .. })), "not a record boundary");
    log.checkpoint(end, |out| out.write_all(&encode_ids(&(0..10).collect::<Vec<_>>()))).unwrap();
    assert!(matches!(log.checkpoint(0, |_| Ok(())), Err(RedoError::InvalidLsn { .. })), "before the checkpoint in force");
}

/// A fuzzy checkpoint: appenders keep going while the snapshot is written;
/// the "engine" appends a record before applying it, under its own lock.
#[test]
fn writers_keep_appending_during_a_checkpoint() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let engine = Arc::new(parking_lot::Mutex::new(Vec::<u64>::new()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..4u64)
        .map(|thread| {
            let (log, engine, stop) = (log.clone(), engine.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let id = thread * 1_000_000 + i;
                    let end = {
                        let mut state = engine.lock();
                        let end = log.append(&record(id, 50), Durability::Buffered).unwrap();
                        state.push(id);
                        end
                    };
                    log.wait_durable(end).unwrap();
                    i += 1;
                }
            })
        })
        .collect();
    for _ in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let (start, snapshot) = {
            let state = engine.lock();
            (log.current_lsn(), encode_ids(&state))
        };
        log.checkpoint(start, |out| out.write_all(&snapshot)).unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
    let expected = engine.lock().clone();
    drop(log);
    let (_, recovered) = open(&storage.crash_image(None), options());
    assert_eq!(recovered_ids(&recovered), expected);
    assert_eq!(recovered.checkpoint.unwrap().number, 5);
}

#[test]
fn segments_behind_a_gap_below_the_checkpoint_are_deleted_at_open() {
    let storage = SimStorage::new();
    let (log, _) = open(&storage, options());
    let floor = append_range(&log, 0, 5);
    let start = append_range(&log, 5, 200);
    log.set_checkpoint_floor(Some(floor));
    log.checkpoint(start, |out| out.write_all(&encode_ids(&(0..200).collect::<Vec<_>>()))).unwrap();
    drop(log);
    let kept = segments(&storage);
    assert!(kept.len() > 3 && kept[0] == 1);
    // An interrupted removal that lost segment 2 but not segment 1.
    storage.remove(&dir().join(segment_name(2))).unwrap();
    let (_, recovered) = open(&storage, options());
    assert_eq!(recovered.removed_files, vec![segment_name(1)]);
    assert_eq!(recovered_ids(&recovered), (0..200).collect::<Vec<_>>());
    assert!(!segments(&storage).contains(&1));
}
