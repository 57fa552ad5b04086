//! Commits with a caller-given GTID (MySQL's `gtid_next`), mixed with
//! automatic ones: numbering, the Gtid event's original_* fields, several
//! UUIDs through reopen, crash recovery, Previous_gtids and GTID readers,
//! and duplicate detection (sequential and racing).

mod support;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use binlog::{CommitOutcome, GivenGtid, LogReader, Ownership};
use binlog_format::events::Event;
use binlog_format::gtid_set::{Gtid, GtidSet, Uuid};
use storage::OsStorage;
use support::*;
use testkit::SOURCE_UUID;

fn given(uuid: Uuid, gno: u64) -> GivenGtid {
    GivenGtid::new(Gtid::new(uuid, gno))
}

fn committed<T: std::fmt::Debug>(outcome: CommitOutcome<T>) -> T {
    match outcome {
        CommitOutcome::Committed(info) => info,
        other => panic!("expected a commit, got {other:?}"),
    }
}

/// Every Gtid event of every listed file, in order.
fn logged_gtids(log: &BinaryLog) -> Vec<binlog_format::events::GtidEvent> {
    let mut found = Vec::new();
    for name in log.file_names() {
        let bytes = std::fs::read(log.options().dir.join(&name)).unwrap();
        for item in binlog_format::file::EventStream::new(&bytes).unwrap() {
            if let (_, _, Event::Gtid(gtid)) = item.unwrap() {
                found.push(gtid);
            }
        }
    }
    found
}

use binlog::BinaryLog;

#[test]
fn given_and_automatic_gtids_mix_and_survive_reopen() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    assert_eq!(log.commit(transaction(&log, 1, 2)).unwrap().gtid, Gtid::new(uuid(), 1));
    let mut from_source = given(SOURCE_UUID, 5);
    from_source.original_commit_timestamp_us = Some(1_714_534_357_425_326);
    from_source.original_server_version = Some(80036);
    let info = committed(log.commit_given(transaction(&log, 2, 2), from_source, None).unwrap());
    assert_eq!(info.gtid, from_source.gtid);
    // Automatic numbering goes on with the server's own UUID.
    assert_eq!(log.commit(transaction(&log, 3, 2)).unwrap().gtid, Gtid::new(uuid(), 2));
    // A given GTID with the server's own UUID ahead of the numbering:
    // automatic ones continue after it.
    committed(log.commit_given(transaction(&log, 4, 1), given(uuid(), 10), None).unwrap());
    assert_eq!(log.commit(transaction(&log, 5, 1)).unwrap().gtid, Gtid::new(uuid(), 11));
    // A foreign GTID below one already executed fills a gap.
    committed(log.commit_given(transaction(&log, 6, 1), given(SOURCE_UUID, 2), None).unwrap());

    let expected: GtidSet = format!("{}:2:5,{}:1-2:10-11", SOURCE_UUID, uuid()).parse().unwrap();
    assert_eq!(log.executed_gtids(), expected);
    let events = logged_gtids(&log);
    assert_eq!(events.len(), 6);
    assert_eq!(events[1].gtid, from_source.gtid);
    assert_eq!(events[1].original_commit_timestamp_us, Some(1_714_534_357_425_326));
    assert_eq!(events[1].original_server_version, Some(80036));
    assert_eq!(events[2].original_commit_timestamp_us, None, "automatic commits keep original = immediate");
    log.close().unwrap();

    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    assert_eq!(log.executed_gtids(), expected);
    // The new file's Previous_gtids names both UUIDs.
    let (active, _) = log.active_position();
    let bytes = std::fs::read(dir.path().join(&active)).unwrap();
    let previous = binlog_format::file::EventStream::new(&bytes)
        .unwrap()
        .find_map(|item| match item.unwrap() {
            (_, _, Event::PreviousGtids(set)) => Some(set),
            _ => None,
        })
        .unwrap();
    assert_eq!(previous, expected);
    assert_eq!(log.commit(transaction(&log, 7, 1)).unwrap().gtid, Gtid::new(uuid(), 12));
    assert!(matches!(
        log.commit_given(transaction(&log, 8, 1), given(SOURCE_UUID, 5), None).unwrap(),
        CommitOutcome::SkippedAlreadyExecuted(_)
    ));

    // A GTID reader with a set of both UUIDs skips exactly those.
    let mut seen: GtidSet = format!("{}:1-5,{}:1-2", SOURCE_UUID, uuid()).parse().unwrap();
    let mut reader = LogReader::from_gtid_set(&log, &seen).unwrap();
    let mut streamed = Vec::new();
    while let Some(event) = reader.next(Duration::from_millis(50)).unwrap() {
        if let Event::Gtid(gtid) = LogReader::decode(&event).unwrap() {
            streamed.push(gtid.gtid);
            seen.add(gtid.gtid);
        }
    }
    assert_eq!(streamed, vec![Gtid::new(uuid(), 10), Gtid::new(uuid(), 11), Gtid::new(uuid(), 12)]);
    assert!(log.executed_gtids().is_subset_of(&seen));
    log.close().unwrap();
    for name in std::fs::read_to_string(dir.path().join("binlog.index")).unwrap().lines() {
        // Decodes every file (asserts its exit status).
        let text = mariadb_binlog_verbose(&dir.path().join(name.trim_start_matches("./")));
        assert!(text.contains("DELIMITER"), "{text}");
    }
}

#[test]
fn recovery_after_a_crash_keeps_every_uuid() {
    let dir = temp_dir();
    {
        let log = open(dir.path(), Arc::new(OsStorage), |_| {});
        for n in 1..=3 {
            committed(log.commit_given(transaction(&log, n, 2), given(SOURCE_UUID, n * 2), None).unwrap());
            log.commit(transaction(&log, 100 + n, 2)).unwrap();
        }
        // No close: the active file keeps its in-use flag, as after a kill.
    }
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    let expected: GtidSet = format!("{}:2:4:6,{}:1-3", SOURCE_UUID, uuid()).parse().unwrap();
    assert_eq!(log.executed_gtids(), expected);
    assert_eq!(log.commit(transaction(&log, 200, 1)).unwrap().gtid.gno, 4);
    // Purge the first file: gtid_purged becomes the next file's Previous_gtids.
    log.rotate().unwrap();
    let names = log.file_names();
    log.purge_to(&names[1]).unwrap();
    let purged: GtidSet = format!("{}:2:4:6,{}:1-3", SOURCE_UUID, uuid()).parse().unwrap();
    assert_eq!(log.purged_gtids(), purged);
    log.close().unwrap();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    assert_eq!(log.purged_gtids(), purged);
    let mut all = expected.clone();
    all.add(Gtid::new(uuid(), 4));
    assert_eq!(log.executed_gtids(), all);
    log.close().unwrap();
}

#[test]
fn a_waiting_owner_skips_once_the_first_commits_and_owns_after_a_rollback() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    let gtid = Gtid::new(SOURCE_UUID, 7);
    let Ownership::Owned(owned) = log.acquire_gtid(gtid) else { panic!("not executed yet") };
    assert!(log.owners().is_owned(&gtid));

    // A second session waits for the owner…
    let waiter = {
        let log = log.clone();
        std::thread::spawn(move || log.commit_given(transaction(&log, 2, 1), GivenGtid::new(gtid), None).unwrap())
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(!waiter.is_finished(), "the second owner must wait");
    // …which rolls back: the waiter then owns and commits it.
    drop(owned);
    let info = committed(waiter.join().unwrap());
    assert_eq!(info.gtid, gtid);

    // Again, but the first owner commits: the waiter skips.
    let gtid = Gtid::new(SOURCE_UUID, 8);
    let Ownership::Owned(owned) = log.acquire_gtid(gtid) else { panic!("not executed yet") };
    let waiter = {
        let log = log.clone();
        std::thread::spawn(move || log.commit_given(transaction(&log, 4, 1), GivenGtid::new(gtid), None).unwrap())
    };
    std::thread::sleep(Duration::from_millis(100));
    let before = log.active_position().1;
    log.commit_owned(transaction(&log, 3, 1), &owned, GivenGtid::new(gtid), None).unwrap();
    let after = log.active_position().1;
    drop(owned);
    assert_eq!(waiter.join().unwrap(), CommitOutcome::SkippedAlreadyExecuted(gtid));
    assert_eq!(log.active_position().1, after, "a skipped transaction writes nothing");
    assert!(after > before);
    assert!(matches!(log.acquire_gtid(gtid), Ownership::AlreadyExecuted));
    assert_eq!(logged_gtids(&log).iter().filter(|e| e.gtid == gtid).count(), 1);
    log.close().unwrap();
}

#[test]
fn racing_commits_of_one_gtid_log_it_once() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    const THREADS: usize = 8;
    const ROUNDS: u64 = 20;
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|thread| {
            let (log, barrier) = (log.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut won = 0;
                for round in 1..=ROUNDS {
                    barrier.wait();
                    // Automatic commits run alongside.
                    if thread % 4 == 3 {
                        log.commit(transaction(&log, 1000 * round + thread as u64, 1)).unwrap();
                    }
                    let outcome = log.commit_given(transaction(&log, round, 1), given(SOURCE_UUID, round), None).unwrap();
                    won += u64::from(matches!(outcome, CommitOutcome::Committed(_)));
                }
                won
            })
        })
        .collect();
    let won: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(won, ROUNDS, "each GTID is committed by exactly one thread");
    let events = logged_gtids(&log);
    let foreign: Vec<u64> = events.iter().filter(|e| e.gtid.uuid == SOURCE_UUID).map(|e| e.gtid.gno).collect();
    assert_eq!(foreign.len() as u64, ROUNDS);
    let mut unique = foreign.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len() as u64, ROUNDS);
    let own: Vec<u64> = events.iter().filter(|e| e.gtid.uuid == uuid()).map(|e| e.gtid.gno).collect();
    assert_eq!(own, (1..=own.len() as u64).collect::<Vec<_>>(), "automatic GTIDs stay consecutive");
    log.close().unwrap();
}

#[test]
fn automatic_numbering_never_takes_an_owned_own_gtid() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), |_| {});
    log.commit(transaction(&log, 1, 1)).unwrap();
    // A session owns server_uuid:2 but has not committed yet.
    let own = Gtid::new(uuid(), 2);
    let Ownership::Owned(owned) = log.acquire_gtid(own) else { panic!() };
    assert_eq!(log.commit(transaction(&log, 2, 1)).unwrap().gtid.gno, 3);
    log.commit_owned(transaction(&log, 3, 1), &owned, GivenGtid::new(own), None).unwrap();
    drop(owned);
    assert_eq!(log.commit(transaction(&log, 4, 1)).unwrap().gtid.gno, 4);
    assert_eq!(log.executed_gtids().to_string(), format!("{}:1-4", uuid()));
    log.close().unwrap();
}
