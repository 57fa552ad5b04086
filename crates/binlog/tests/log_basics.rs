//! Commit, reopen, rotation, index, reader and cache behaviour of the log
//! on the real file system.

mod support;

use std::sync::Arc;
use std::time::Duration;

use binlog::{BinlogError, LogReader};
use binlog_format::constants::EventType;
use binlog_format::events::Event;
use storage::OsStorage;
use support::*;

#[test]
fn commits_survive_close_and_reopen_with_gtids_in_order() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    for xid in 1..=50 {
        let info = log.commit(transaction(&log, xid, 3)).unwrap();
        assert_eq!(info.gtid.gno, xid);
        assert_eq!(info.transaction_length, info.end_position - info.start_position);
    }
    assert_eq!(log.executed_gtids().to_string(), format!("{}:1-50", uuid()));
    log.close().unwrap();
    let contents = check_log(&OsStorage, dir.path(), None);
    assert_eq!(contents.transactions.len(), 50);
    assert_eq!(contents.transactions[49].xid, Some(50));

    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    assert_eq!(log.executed_gtids().to_string(), format!("{}:1-50", uuid()));
    assert_eq!(log.file_names().len(), 2, "every start opens a new file");
    assert_eq!(log.commit(transaction(&log, 51, 1)).unwrap().gtid.gno, 51);
    log.close().unwrap();
    let contents = check_log(&OsStorage, dir.path(), None);
    assert_eq!(contents.transactions.len(), 51);
    // The new file starts its logical clock at 1.
    assert_eq!(contents.transactions[50].sequence_number, 1);
    assert_eq!(contents.transactions[50].last_committed, 0);
    for name in &contents.index {
        let text = mariadb_binlog_verbose(&dir.path().join(name));
        assert!(text.contains("### INSERT INTO `test`.`t`"), "{name}: {text}");
        assert!(text.contains("###   @3='row 0 of "), "{name}: {text}");
    }
}

#[test]
fn rotation_keeps_transactions_whole_and_chains_previous_gtids() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |o| o.max_binlog_size = 4096);
    for xid in 1..=200 {
        log.commit(transaction(&log, xid, 2)).unwrap();
    }
    log.close().unwrap();
    let contents = check_log(&OsStorage, dir.path(), None);
    assert!(contents.index.len() > 5, "expected several files, got {:?}", contents.index);
    assert_eq!(contents.transactions.len(), 200);
    // Each file except the last ends with Rotate naming its successor.
    for pair in contents.index.windows(2) {
        let bytes = std::fs::read(dir.path().join(&pair[0])).unwrap();
        let last = binlog_format::file::EventStream::new(&bytes).unwrap().last().unwrap().unwrap();
        match last.2 {
            Event::Rotate(rotate) => assert_eq!(rotate.next_file, pair[1]),
            other => panic!("{} ends with {other:?}", pair[0]),
        }
    }
}

#[test]
fn explicit_rotate_and_purge_respect_readers() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    for xid in 1..=3 {
        log.commit(transaction(&log, xid, 1)).unwrap();
        log.rotate().unwrap();
    }
    let names = log.file_names();
    assert_eq!(names.len(), 4);
    // A reader on the second file stops a purge there.
    let reader = LogReader::from_position(&log, &names[1], 4).unwrap();
    let report = log.purge_to(&names[3]).unwrap();
    assert_eq!(report.removed, vec![names[0].clone()]);
    assert_eq!(report.stopped_by_reader.as_deref(), Some(names[1].as_str()));
    drop(reader);
    let report = log.purge_to(&names[3]).unwrap();
    assert_eq!(report.removed, vec![names[1].clone(), names[2].clone()]);
    assert_eq!(log.file_names(), vec![names[3].clone()]);
    assert_eq!(log.purged_gtids().to_string(), format!("{}:1-3", uuid()));
    assert!(matches!(log.purge_to("binlog.999999"), Err(BinlogError::LogNotFound)));
    // Purge by time: nothing is older than a minute ago.
    let before = std::time::SystemTime::now() - Duration::from_secs(60);
    assert!(log.purge_before(before).unwrap().removed.is_empty());
    log.close().unwrap();
    check_log(&OsStorage, dir.path(), None);
}

#[test]
fn reader_follows_the_tail_across_rotations_and_skips_executed_gtids() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |o| o.max_binlog_size = 2048);
    let first = log.file_names()[0].clone();
    let mut reader = LogReader::from_position(&log, &first, 4).unwrap();
    let writer_log = log.clone();
    let writer = std::thread::spawn(move || {
        for xid in 1..=100 {
            writer_log.commit(transaction(&writer_log, xid, 1)).unwrap();
        }
    });
    let mut xids = Vec::new();
    while xids.len() < 100 {
        let event = reader.next(Duration::from_secs(10)).unwrap().expect("an event within 10 s");
        if let Event::Xid(xid) = LogReader::decode(&event).unwrap() {
            xids.push(xid.xid);
        }
    }
    writer.join().unwrap();
    assert_eq!(xids, (1..=100).collect::<Vec<_>>());
    assert!(reader.next(Duration::from_millis(50)).unwrap().is_none(), "nothing more to read");

    // From a GTID set: only the missing transactions arrive.
    let executed: binlog_format::GtidSet = format!("{}:1-90", uuid()).parse().unwrap();
    let mut reader = LogReader::from_gtid_set(&log, &executed).unwrap();
    let mut gnos = Vec::new();
    while let Some(event) = reader.next(Duration::from_millis(100)).unwrap() {
        if let Event::Gtid(gtid) = LogReader::decode(&event).unwrap() {
            gnos.push(gtid.gtid.gno);
        }
    }
    assert_eq!(gnos, (91..=100).collect::<Vec<_>>());
    log.close().unwrap();
}

#[test]
fn cache_spills_past_binlog_cache_size_and_rollback_deletes_the_spill_file() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |o| o.binlog_cache_size = 4096);
    let spill_dir = dir.path().join(".binlogd-tmp");
    let cache = transaction(&log, 1, 500);
    assert!(cache.is_spilled());
    assert_eq!(std::fs::read_dir(&spill_dir).unwrap().count(), 1);
    drop(cache); // rollback
    assert_eq!(std::fs::read_dir(&spill_dir).unwrap().count(), 0);

    let cache = transaction(&log, 2, 500);
    let info = log.commit(cache).unwrap();
    assert_eq!(std::fs::read_dir(&spill_dir).unwrap().count(), 0, "commit deletes the spill file");
    assert!(info.transaction_length > 4096);
    assert_eq!(log.counters().cache_disk_use.load(std::sync::atomic::Ordering::Relaxed), 1);

    // Savepoints truncate, in memory and in the spill file.
    let mut cache = log.new_cache();
    cache.append(&Event::Query(binlog_format::events::QueryEvent::new(1, "test", "BEGIN")), 1).unwrap();
    let savepoint = cache.savepoint();
    for row in 0..300 {
        let q = binlog_format::events::QueryEvent::new(1, "test", &format!("INSERT INTO t VALUES (3, {row})"));
        cache.append(&Event::Query(q), 1).unwrap();
    }
    assert!(cache.is_spilled());
    cache.rollback_to(savepoint).unwrap();
    assert_eq!(cache.event_count(), 1);
    cache.append(&Event::Xid(binlog_format::events::XidEvent { xid: 3 }), 1).unwrap();
    log.commit(cache).unwrap();
    log.close().unwrap();
    let contents = check_log(&OsStorage, dir.path(), None);
    assert_eq!(contents.transactions.len(), 2);
}

#[test]
fn max_binlog_cache_size_gives_error_1197() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |o| {
        o.binlog_cache_size = 4096;
        o.max_binlog_cache_size = 8192;
    });
    let mut cache = log.new_cache();
    cache.append(&Event::Query(binlog_format::events::QueryEvent::new(1, "test", "BEGIN")), 1).unwrap();
    let error = (0..1000)
        .find_map(|row| {
            let q = binlog_format::events::QueryEvent::new(1, "test", &format!("INSERT INTO t VALUES ({row})"));
            cache.append(&Event::Query(q), 1).err()
        })
        .expect("the cache must refuse past max_binlog_cache_size");
    assert_eq!(error.mysql_code(), 1197);
    assert!(error.to_string().contains("max_binlog_cache_size"));
    assert!(cache.len() <= 8192);
    log.close().unwrap();
}

#[test]
fn incomplete_transactions_are_refused() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    let mut cache = log.new_cache();
    cache.append(&Event::Query(binlog_format::events::QueryEvent::new(1, "test", "BEGIN")), 1).unwrap();
    assert!(log.commit(cache).is_err());
    let mut cache = log.new_cache();
    assert!(cache.append(&Event::Xid(binlog_format::events::XidEvent { xid: 1 }), 1).is_err());
    // DDL is a transaction of its own.
    let mut ddl = log.new_cache();
    ddl.append(&Event::Query(binlog_format::events::QueryEvent::new(1, "test", "CREATE TABLE t (a INT)")), 1).unwrap();
    log.commit(ddl).unwrap();
    log.close().unwrap();
    assert_eq!(check_log(&OsStorage, dir.path(), None).transactions.len(), 1);
}

/// A pre-encoded Table_map body (what the database keeps per table) gives
/// the same bytes as appending the event, and is refused outside BEGIN or
/// for other event types.
#[test]
fn a_pre_encoded_table_map_is_the_same_event_and_only_fits_inside_begin() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    let map = table_map();
    let mut body = Vec::new();
    map.encode_body(&mut body);
    let table_map_type = binlog_format::constants::EventType::TableMap as u8;
    let begin = Event::Query(binlog_format::events::QueryEvent::new(1, "test", "BEGIN"));

    let mut outside = log.new_cache();
    assert!(outside.append_body(table_map_type, &body, 1).unwrap_err().to_string().contains("after BEGIN"));
    outside.append(&begin, 1).unwrap();
    let query_type = binlog_format::constants::EventType::Query as u8;
    assert!(outside.append_body(query_type, &body, 1).is_err(), "only Table_map and rows events");

    let mut by_event = log.new_cache();
    by_event.append(&begin, 1).unwrap();
    by_event.append(&Event::TableMap(map.clone()), 1).unwrap();
    let mut by_body = log.new_cache();
    by_body.append(&begin, 1).unwrap();
    by_body.append_body(table_map_type, &body, 1).unwrap();
    assert_eq!(by_event.encoded_events().unwrap(), by_body.encoded_events().unwrap());
    log.close().unwrap();
}

/// A reader waiting at the end wakes for each commit at once (not at its
/// timeout), and a reader that stops reading does not hold commits up.
#[test]
fn a_waiting_reader_wakes_per_commit_and_a_stalled_one_blocks_nothing() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    let first = log.file_names()[0].clone();
    // Opened and never read again: it must not slow anything below.
    let mut stalled = LogReader::from_position(&log, &first, 4).unwrap();
    assert!(stalled.next(Duration::from_millis(10)).unwrap().is_some());
    let mut reader = LogReader::from_position(&log, &first, 4).unwrap();
    while reader.next(Duration::ZERO).unwrap().is_some() {}
    for xid in 1..=20 {
        let writer_log = log.clone();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            let committed = std::time::Instant::now();
            writer_log.commit(transaction(&writer_log, xid, 1)).unwrap();
            committed
        });
        let mut xid_seen = None;
        while xid_seen.is_none() {
            // A 30 s timeout: only a wake-up ends the wait in time.
            let event = reader.next(Duration::from_secs(30)).unwrap().expect("an event");
            if let Event::Xid(event) = LogReader::decode(&event).unwrap() {
                xid_seen = Some(event.xid);
            }
        }
        let committed = writer.join().unwrap();
        assert_eq!(xid_seen, Some(xid));
        let latency = committed.elapsed();
        assert!(latency < Duration::from_secs(5), "woke {latency:?} after commit {xid}");
    }
    let started = std::time::Instant::now();
    for xid in 21..=200 {
        log.commit(transaction(&log, xid, 1)).unwrap();
    }
    assert!(started.elapsed() < Duration::from_secs(20), "commits with a stalled reader took {:?}", started.elapsed());
    drop(stalled);
    log.close().unwrap();
}

/// Runs (what a dump sends per wake-up) carry exactly the events that
/// `next_ref` lends one by one, byte for byte and in order, across
/// rotations and with executed transactions skipped; Format_description,
/// Rotate and Stop come alone, and a run never spans two files.
#[test]
fn runs_carry_the_same_events_as_single_reads() {
    type Read = (String, u64, Vec<u8>);
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |o| o.max_binlog_size = 4096);
    for xid in 1..=60 {
        log.commit(transaction(&log, xid, 2)).unwrap();
    }
    assert!(log.file_names().len() >= 3, "the test needs rotations");
    let alone = [EventType::FormatDescription as u8, EventType::Rotate as u8, EventType::Stop as u8];
    let singles = |mut reader: LogReader| -> Vec<Read> {
        let mut all = Vec::new();
        while let Some(event) = reader.next_ref(Duration::ZERO).unwrap() {
            all.push((event.file_name.to_string(), event.position, event.bytes.to_vec()));
        }
        all
    };
    let runs = |mut reader: LogReader| -> (Vec<Read>, usize) {
        let (mut all, mut longest) = (Vec::new(), 0);
        while let Some(run) = reader.next_run_ref(Duration::ZERO).unwrap() {
            longest = longest.max(run.events);
            let mut position = run.position;
            let events: Vec<&[u8]> = run.event_bytes().collect();
            assert_eq!(events.len(), run.events);
            for event in events {
                if run.events > 1 {
                    assert!(!alone.contains(&event[4]), "event type {} inside a run of {}", event[4], run.events);
                }
                all.push((run.file_name.to_string(), position, event.to_vec()));
                position += event.len() as u64;
            }
            assert_eq!(position, run.end_position());
        }
        (all, longest)
    };
    let first = log.file_names()[0].clone();
    let from_start = || LogReader::from_position(&log, &first, 4).unwrap();
    let expected = singles(from_start());
    let (got, longest) = runs(from_start());
    assert!(got == expected, "runs and single reads differ from the start ({} vs {} events)", got.len(), expected.len());
    assert!(longest > 5, "whole transactions per run expected, the longest had {longest} events");

    let executed: binlog_format::GtidSet = format!("{}:1-40", uuid()).parse().unwrap();
    let from_gtids = || LogReader::from_gtid_set(&log, &executed).unwrap();
    let expected = singles(from_gtids());
    let (got, _) = runs(from_gtids());
    assert!(got == expected, "runs and single reads differ with skipped transactions");
    let gnos: Vec<u64> = expected
        .iter()
        .filter(|(_, _, bytes)| bytes[4] == EventType::Gtid as u8)
        .map(|(_, _, bytes)| binlog_format::events::GtidEvent::decode_body(&bytes[19..bytes.len() - 4]).unwrap().gtid.gno)
        .collect();
    assert_eq!(gnos, (41..=60).collect::<Vec<_>>());
    log.close().unwrap();
}
