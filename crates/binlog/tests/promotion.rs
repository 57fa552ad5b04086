//! Large-transaction promotion: the promoted file's layout, ON/OFF
//! equivalence, every promotion crash point, the log lock not held for the
//! body, fallback to the copy path, and constant-time recovery.

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use binlog::crash_points::{self, CrashPoints};
use binlog::{BinaryLog, Options};
use binlog_format::events::{Event, QueryEvent, XidEvent};
use binlog_format::file::EventStream;
#[allow(unused_imports)]
use binlog_format::Value;
use storage::{OsStorage, SimStorage, Storage};
use support::*;

const THRESHOLD: u64 = 256 << 10;

fn large_options(options: &mut Options) {
    options.large_transaction_optimization_threshold = THRESHOLD;
    options.spill_sync_chunk_bytes = 64 << 10;
}

/// About 400 KiB of rows: past the 256 KiB threshold.
fn large_transaction(log: &BinaryLog, xid: u64) -> binlog::TransactionCache {
    let cache = transaction(log, xid, 16_000);
    assert!(cache.len() > THRESHOLD, "{} bytes", cache.len());
    cache
}

/// (gno, xid, rows) of every transaction, in log order.
fn logical_contents(storage: &dyn Storage, dir: &std::path::Path) -> Vec<(u64, u64, Vec<Vec<binlog_format::Value>>)> {
    check_log(storage, dir, None).transactions.into_iter().map(|t| (t.gno, t.xid.unwrap(), t.rows)).collect()
}

fn workload(log: &BinaryLog) {
    for xid in 1..=3 {
        log.commit(transaction(log, xid, 2)).unwrap();
    }
    log.commit(large_transaction(log, 4)).unwrap();
    for xid in 5..=7 {
        log.commit(transaction(log, xid, 2)).unwrap();
    }
}

#[test]
fn a_large_transaction_is_promoted_into_its_own_file() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), large_options);
    workload(&log);
    assert_eq!(log.counters().large_transaction_promotions.load(Ordering::Relaxed), 1);
    assert_eq!(log.counters().large_transaction_missed.load(Ordering::Relaxed), 0);
    let names = log.file_names();
    log.close().unwrap();
    assert_eq!(names.len(), 3, "active, promoted, next active: {names:?}");
    // The promoted file: magic, FDE, Previous_gtids, header (ignorable), Gtid at the
    // reserved room's end, the body, Rotate.
    let bytes = std::fs::read(dir.path().join(&names[1])).unwrap();
    let events: Vec<_> = EventStream::new(&bytes).unwrap().map(|e| e.unwrap()).collect();
    let kinds: Vec<&str> = events.iter().take(4).map(|(_, _, e)| e.type_name()).collect();
    assert_eq!(kinds, ["Format_desc", "Previous_gtids", "Large_transaction_header", "Gtid"]);
    let (header_offset, header_raw, header) = &events[2];
    assert_ne!(header_raw.header.flags & binlog_format::constants::LOG_EVENT_IGNORABLE_F, 0);
    let Event::LargeTransactionHeader(header) = header else { unreachable!() };
    let gtid_end = events[3].0 + events[3].1.bytes.len() as u64;
    assert_eq!(gtid_end, 64 << 10, "the Gtid ends where the reserved room ends");
    let terminating =
        events.iter().find(|(offset, _, _)| *offset == header.terminating_event_offset).expect("event at the header's offset");
    assert!(matches!(terminating.2, Event::Xid(XidEvent { xid: 4 })));
    assert!(*header_offset < gtid_end);
    assert!(matches!(events.last().unwrap().2, Event::Rotate(_)));
    // Readers that do not know type 43 skip it.
    let text = mariadb_binlog_verbose(&dir.path().join(&names[1]));
    assert!(text.contains("###   @3='row 15999 of 4'"), "mariadb-binlog lost rows");
    assert_eq!(logical_contents(&OsStorage, dir.path()).len(), 7);
}

#[test]
fn optimization_on_and_off_give_logically_identical_logs() {
    let on = temp_dir();
    let off = temp_dir();
    let log_on = open(on.path(), Arc::new(OsStorage), large_options);
    let log_off = open(off.path(), Arc::new(OsStorage), |o| {
        large_options(o);
        o.large_transaction_optimization_enabled = false;
    });
    workload(&log_on);
    workload(&log_off);
    assert_eq!(log_off.counters().large_transaction_promotions.load(Ordering::Relaxed), 0);
    log_on.close().unwrap();
    log_off.close().unwrap();
    let a = logical_contents(&OsStorage, on.path());
    let b = logical_contents(&OsStorage, off.path());
    assert_eq!(a.len(), 7);
    assert_eq!(a, b);
}

#[test]
fn small_commits_go_on_while_the_large_body_syncs() {
    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), large_options);
    log.commit(transaction(&log, 1, 1)).unwrap();
    let cache = large_transaction(&log, 2);
    // The large commit's body sync blocks until the gate opens.
    storage.close_sync_gate("binlogd-spill");
    let large_log = log.clone();
    let large = std::thread::spawn(move || large_log.commit(cache).unwrap());
    while storage.syncs_waiting_at_gate() == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    // With the large body still syncing, small commits complete.
    let (sender, receiver) = std::sync::mpsc::channel();
    let small_log = log.clone();
    std::thread::spawn(move || {
        for xid in 3..=5 {
            sender.send(small_log.commit(transaction(&small_log, xid, 1)).unwrap().gtid.gno).unwrap();
        }
    });
    let mut small = Vec::new();
    for _ in 0..3 {
        small.push(receiver.recv_timeout(Duration::from_secs(10)).expect("a small commit waited for the large body"));
    }
    assert_eq!(storage.syncs_waiting_at_gate(), 1, "the large body sync was still held");
    storage.open_sync_gate();
    let large_info = large.join().unwrap();
    assert_eq!(small, vec![2, 3, 4]);
    assert_eq!(large_info.gtid.gno, 5);
    assert_eq!(log.counters().large_transaction_promotions.load(Ordering::Relaxed), 1);
}

#[test]
fn a_header_that_does_not_fit_falls_back_to_the_copy_path_and_counts_as_missed() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |o| {
        large_options(o);
        o.large_transaction_header_room = 256;
    });
    workload(&log);
    assert_eq!(log.counters().large_transaction_promotions.load(Ordering::Relaxed), 0);
    assert_eq!(log.counters().large_transaction_missed.load(Ordering::Relaxed), 1);
    assert_eq!(log.file_names().len(), 1);
    log.close().unwrap();
    assert_eq!(logical_contents(&OsStorage, dir.path()).len(), 7);
    assert_eq!(std::fs::read_dir(dir.path().join(".binlogd-tmp")).unwrap().count(), 0);
}

#[test]
fn rollback_of_a_large_transaction_deletes_its_spill_file() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), large_options);
    let cache = large_transaction(&log, 1);
    assert_eq!(std::fs::read_dir(dir.path().join(".binlogd-tmp")).unwrap().count(), 1);
    drop(cache);
    assert_eq!(std::fs::read_dir(dir.path().join(".binlogd-tmp")).unwrap().count(), 0);
    assert_eq!(log.spill_files_open(), 0);
}

#[test]
fn threshold_is_dynamic_with_a_10_mib_minimum_and_captured_per_transaction() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), large_options);
    assert!(log.set_large_transaction_optimization_threshold(1 << 20).is_err());
    let cache = large_transaction(&log, 1); // captured 256 KiB at its first write
    log.set_large_transaction_optimization_threshold(10 << 20).unwrap();
    log.commit(cache).unwrap();
    assert_eq!(log.counters().large_transaction_promotions.load(Ordering::Relaxed), 1);
    let mut later = log.new_cache();
    later.append(&Event::Query(QueryEvent::new(1, "test", "BEGIN")), 1).unwrap();
    assert!(!later.reached_threshold());
    log.set_large_transaction_optimization_enabled(false);
    assert_eq!(log.large_transaction_optimization(), (false, 10 << 20));
}

fn promotion_crash_case(point: &'static str, image_kind: u8) {
    let dir = sim_dir();
    let storage = SimStorage::new();
    let crash = CrashPoints::default();
    let frozen = storage.clone();
    crash.arm(point, 0, move || frozen.freeze());
    let mut options = options(&dir);
    large_options(&mut options);
    let (log, _) = BinaryLog::open(options, Arc::new(storage.clone()), crash.clone()).unwrap();
    let mut acknowledged = BTreeSet::new();
    for xid in 1..=3 {
        acknowledged.insert(log.commit(transaction(&log, xid, 2)).unwrap().gtid.gno);
    }
    let result = log.commit(large_transaction(&log, 4));
    assert!(crash.fired(point), "{point} not reached");
    assert!(result.is_err(), "{point}: the crash must fail the commit");
    drop(log);
    let image = match image_kind {
        0 => storage.crash_image(None),
        _ => storage.process_kill_image(),
    };
    let (log, report) = BinaryLog::open(crate::options(&dir), Arc::new(image.clone()), CrashPoints::default())
        .unwrap_or_else(|e| panic!("{point}: reopen: {e}"));
    let executed = log.executed_gtids();
    for gno in &acknowledged {
        assert!(executed.contains(&binlog_format::Gtid::new(uuid(), *gno)), "{point}: lost {gno}");
    }
    let large = binlog_format::Gtid::new(uuid(), 4);
    if crash_points::PROMOTE_ROLL_FORWARD.contains(&point) {
        assert!(executed.contains(&large), "{point}: the promoted transaction must roll forward");
        assert!(report.xids.contains(&4), "{point}: recovery must report the promoted XID for the engine");
        assert_eq!(report.promoted_transactions_skipped, 1, "{point}: recovery seeks past the body");
    } else {
        assert!(!executed.contains(&large), "{point}: the transaction must roll back");
        assert!(!report.xids.contains(&4));
    }
    assert!(!image.exists(&crate::options(&dir).promotion_marker_path()), "{point}: marker left behind");
    let active = log.active_position().0;
    drop(log);
    let contents = check_log(&image, &dir, Some(&active));
    let expected = if crash_points::PROMOTE_ROLL_FORWARD.contains(&point) { 4 } else { 3 };
    assert_eq!(contents.transactions.len(), expected, "{point}");
}

#[test]
fn every_promotion_crash_point_rolls_back_or_forward_as_documented() {
    for point in crash_points::PROMOTE_ROLL_BACK.iter().chain(crash_points::PROMOTE_ROLL_FORWARD) {
        for image in [0, 1] {
            promotion_crash_case(point, image);
        }
    }
}

#[test]
fn recovery_falls_back_to_a_scan_when_the_header_offset_is_wrong() {
    let storage = SimStorage::new();
    let log = open(&sim_dir(), Arc::new(storage.clone()), large_options);
    workload(&log);
    let promoted = sim_dir().join(&log.file_names()[1]);
    drop(log);
    let image = storage.process_kill_image();
    // Rewrite the header with a wrong terminating offset (valid checksum).
    let mut bytes = image.file_bytes(&promoted).unwrap();
    let (offset, raw, event) = EventStream::new(&bytes).unwrap().nth(2).unwrap().unwrap();
    let Event::LargeTransactionHeader(mut header) = event else { panic!("no header") };
    let (log_pos, size) = (raw.header.log_pos, raw.bytes.len());
    header.terminating_event_offset -= 7;
    let mut encoded = Vec::new();
    binlog_format::file::append_event(
        &mut encoded,
        offset,
        &Event::LargeTransactionHeader(header),
        raw.header.timestamp,
        raw.header.flags,
        binlog_format::file::WriterIdentity { server_id: 1, checksum: true },
    );
    assert_eq!((encoded.len(), u32::from_le_bytes(encoded[13..17].try_into().unwrap())), (size, log_pos));
    bytes[offset as usize..offset as usize + size].copy_from_slice(&encoded);
    image.set_file_bytes(&promoted, bytes);
    let mut options = options(&sim_dir());
    options.binlog_expire_logs_seconds = 0;
    // Make the promoted file the one recovery must read: drop the files after it.
    let (log, report) = BinaryLog::open(options.clone(), Arc::new(image.clone()), CrashPoints::default()).unwrap();
    assert_eq!(log.executed_gtids().last_gno(&uuid()), 7);
    assert!(report.scanned_files.contains(&log.file_names()[1]), "the promoted file is scanned: {:?}", report.scanned_files);
    assert_eq!(report.promoted_transactions_skipped, 0, "a wrong offset falls back to scanning");
    assert!(report.xids.contains(&4));
    drop(log);
    // And with binlogd_verify_checksum_on_recovery the body is read in full.
    options.verify_checksum_on_recovery = true;
    let (log, report) = BinaryLog::open(options, Arc::new(image.clone()), CrashPoints::default()).unwrap();
    assert_eq!(report.promoted_transactions_skipped, 0);
    assert_eq!(log.executed_gtids().last_gno(&uuid()), 7);
}
