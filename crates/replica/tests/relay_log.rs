//! The relay log on its own: back-pressure of the memory ring, spill of an
//! oversized transaction, abandon, and the file relay log's round trip and
//! purge.

mod support;

use std::sync::Arc;
use std::time::Duration;

use replica::relay::RelayLogConfig;
use replica::{BoundaryQueue, RelayLog, StopFlag, TransactionLocation};
use support::*;

const RING_BYTES: u64 = 64 << 10;
const SPILL_THRESHOLD_BYTES: u64 = 16 << 10;

fn memory_relay(spill_directory: &std::path::Path) -> Arc<RelayLog> {
    let config = RelayLogConfig::Memory {
        limit_bytes: RING_BYTES,
        spill_threshold_bytes: SPILL_THRESHOLD_BYTES,
        spill_directory: spill_directory.to_path_buf(),
    };
    Arc::new(RelayLog::open(&config).unwrap())
}

#[test]
fn a_full_ring_blocks_the_writer_until_transactions_are_applied() {
    let directory = tempfile::tempdir().unwrap();
    let relay = memory_relay(directory.path());
    let queue = Arc::new(BoundaryQueue::new(1000));
    let stop = StopFlag::new();
    // 40 transactions of ~4 KiB: 160 KiB through a 64 KiB ring.
    let transactions: Vec<Vec<Vec<u8>>> = (1..=40).map(|gno| transaction(gno, gno as i64 - 1, gno as i64, 4000)).collect();
    let writer = {
        let (relay, queue, stop, transactions) = (relay.clone(), queue.clone(), stop.clone(), transactions.clone());
        std::thread::spawn(move || {
            for (index, events) in transactions.iter().enumerate() {
                let gno = index as u64 + 1;
                write_transaction(&relay, &queue, index as u64, gno, (gno as i64 - 1, gno as i64), events, &stop);
            }
        })
    };
    // Nothing is applied: the writer fills the ring and waits.
    assert!(wait_until(Duration::from_secs(10), || relay.stats().receiver_blocked > Duration::ZERO), "the writer never blocked");
    std::thread::sleep(Duration::from_millis(100));
    let stuck_at = queue.len();
    assert!(stuck_at < 40 && !writer.is_finished(), "the writer went on past a full ring ({stuck_at} queued)");
    let stats = relay.stats();
    assert!(stats.memory_bytes <= RING_BYTES, "{} bytes in a {RING_BYTES}-byte ring", stats.memory_bytes);
    assert!(stats.memory_bytes > RING_BYTES - 5000, "the ring was not full when the writer blocked: {}", stats.memory_bytes);

    // Apply (read back, check, release) in order: the writer resumes.
    let mut buffer = Vec::new();
    for (index, expected) in transactions.iter().enumerate() {
        let entry = queue.pop(&StopFlag::new()).unwrap();
        assert_eq!(entry.index, index as u64);
        assert!(matches!(entry.location, TransactionLocation::Memory { .. }));
        let events = read_back(&mut relay.events(&entry.location, &mut buffer, &stop).unwrap());
        assert_eq!(&events, expected, "transaction {index} read back");
        relay.release(&entry.location);
        assert!(relay.stats().memory_bytes <= RING_BYTES);
    }
    writer.join().unwrap();
    let stats = relay.stats();
    assert_eq!((stats.memory_bytes, stats.memory_transactions), (0, 0));
    assert!(stats.memory_bytes_peak <= RING_BYTES, "peak {} over the limit", stats.memory_bytes_peak);
    assert_eq!(stats.spilled_transactions_total, 0);
}

#[test]
fn out_of_order_release_frees_space_only_when_the_gap_closes() {
    let directory = tempfile::tempdir().unwrap();
    let relay = memory_relay(directory.path());
    let queue = BoundaryQueue::new(100);
    let stop = StopFlag::new();
    for gno in 1..=3 {
        write_transaction(&relay, &queue, gno - 1, gno, (0, gno as i64), &transaction(gno, 0, gno as i64, 1000), &stop);
    }
    let entries: Vec<_> = (0..3).map(|_| queue.try_pop().unwrap()).collect();
    let used = relay.stats().memory_bytes;
    relay.release(&entries[1].location);
    relay.release(&entries[2].location);
    assert_eq!(relay.stats().memory_transactions, 1);
    relay.release(&entries[0].location);
    assert_eq!(relay.stats().memory_bytes, 0, "was {used}");
    // The whole ring is usable again: 5 transactions of ~12.5 KiB fit in
    // 64 KiB only if the 3.6 KiB released above are free.
    let relay_for_writer = relay.clone();
    let writer = std::thread::spawn(move || {
        let queue = BoundaryQueue::new(100);
        for gno in 10..15 {
            write_transaction(
                &relay_for_writer,
                &queue,
                gno,
                gno,
                (0, gno as i64),
                &transaction(gno, 0, gno as i64, 12300),
                &StopFlag::new(),
            );
        }
    });
    assert!(wait_until(Duration::from_secs(10), || writer.is_finished()), "released space was not reused: {:?}", relay.stats());
    assert!(relay.stats().memory_bytes > 60 << 10);
}

#[test]
fn a_transaction_over_the_threshold_spills_with_memory_bounded() {
    let directory = tempfile::tempdir().unwrap();
    let relay = memory_relay(directory.path());
    let queue = BoundaryQueue::new(100);
    let stop = StopFlag::new();
    let small = transaction(1, 0, 1, 2000);
    let large = transaction(2, 1, 2, 1 << 20); // 1 MiB through a 64 KiB ring
    write_transaction(&relay, &queue, 0, 1, (0, 1), &small, &stop);
    write_transaction(&relay, &queue, 1, 2, (1, 2), &large, &stop);
    let stats = relay.stats();
    assert_eq!((stats.spilled_transactions, stats.spilled_transactions_total), (1, 1));
    assert!(stats.spilled_bytes > 1 << 20);
    let small_bytes: u64 = small.iter().map(|event| event.len() as u64).sum();
    assert!(stats.memory_bytes_peak <= SPILL_THRESHOLD_BYTES + small_bytes, "peak {} with a spilled transaction", stats.memory_bytes_peak);
    assert_eq!(stats.memory_transactions, 1, "only the small one is in the ring");

    let mut buffer = Vec::new();
    let first = queue.try_pop().unwrap();
    let second = queue.try_pop().unwrap();
    assert!(matches!(first.location, TransactionLocation::Memory { .. }));
    assert!(matches!(second.location, TransactionLocation::Spilled(_)));
    assert_eq!(second.size_bytes, large.iter().map(|event| event.len() as u64).sum::<u64>());
    assert_eq!(read_back(&mut relay.events(&second.location, &mut buffer, &stop).unwrap()), large);
    assert!(buffer.len() < 1 << 20, "a spilled transaction is read event by event, not into one buffer");
    assert_eq!(read_back(&mut relay.events(&first.location, &mut buffer, &stop).unwrap()), small);
    relay.release(&first.location);
    relay.release(&second.location);
    let stats = relay.stats();
    assert_eq!((stats.memory_bytes, stats.spilled_bytes, stats.spilled_transactions), (0, 0, 0));
}

#[test]
fn an_abandoned_transaction_gives_its_space_back() {
    let directory = tempfile::tempdir().unwrap();
    let relay = memory_relay(directory.path());
    let stop = StopFlag::new();
    let mut open = relay.begin().unwrap();
    for event in transaction(1, 0, 1, 3000).iter().take(3) {
        relay.append(&mut open, event, &stop).unwrap();
    }
    assert!(relay.stats().memory_bytes > 3000);
    relay.abandon(open).unwrap();
    assert_eq!(relay.stats().memory_bytes, 0);
}

#[test]
fn the_memory_options_are_checked_as_change_replication_source_to_does() {
    let directory = std::path::PathBuf::from("/tmp");
    let error = RelayLogConfig::memory(16 << 20, 1 << 20, directory.clone()).unwrap_err();
    assert_eq!(error.code, 1210);
    assert!(RelayLogConfig::memory(32 << 20, 17 << 20, directory.clone()).is_err(), "a threshold over half the ring");
    assert!(RelayLogConfig::memory(5 << 30, 16 << 20, directory.clone()).is_err());
    assert!(RelayLogConfig::memory(128 << 20, 16 << 20, directory).is_ok());
}

#[test]
fn the_file_relay_log_reads_back_what_it_wrote_and_purges_applied_files() {
    let directory = tempfile::tempdir().unwrap();
    let relay_directory = directory.path().join("relay");
    let config = RelayLogConfig::Files { directory: relay_directory.clone(), file_size_max_bytes: 20 << 10, space_limit_bytes: 1 << 30 };
    let relay = RelayLog::open(&config).unwrap();
    let queue = BoundaryQueue::new(100);
    let stop = StopFlag::new();
    let transactions: Vec<_> = (1..=12u64).map(|gno| transaction(gno, 0, gno as i64, if gno == 5 { 40 << 20 } else { 5000 })).collect();
    for (index, events) in transactions.iter().enumerate() {
        write_transaction(&relay, &queue, index as u64, index as u64 + 1, (0, index as i64 + 1), events, &stop);
    }
    let files = || std::fs::read_dir(&relay_directory).unwrap().count();
    assert!(files() > 2, "files rotate past max_relay_log_size: {}", files());
    let mut buffer = Vec::new();
    for expected in &transactions {
        let entry = queue.try_pop().unwrap();
        assert!(matches!(entry.location, TransactionLocation::File { .. }));
        assert_eq!(&read_back(&mut relay.events(&entry.location, &mut buffer, &stop).unwrap()), expected);
        relay.release(&entry.location);
    }
    assert!(buffer.capacity() < 40 << 20, "a large file transaction is read event by event");
    assert_eq!(files(), 1, "only the file being written is left");
    assert_eq!(relay.stats().file_bytes, 0);
}

#[test]
fn the_file_relay_log_blocks_at_its_space_limit() {
    let directory = tempfile::tempdir().unwrap();
    let config =
        RelayLogConfig::Files { directory: directory.path().join("relay"), file_size_max_bytes: 1 << 30, space_limit_bytes: 30 << 10 };
    let relay = Arc::new(RelayLog::open(&config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(100));
    let stop = StopFlag::new();
    let writer = {
        let (relay, queue, stop) = (relay.clone(), queue.clone(), stop.clone());
        std::thread::spawn(move || {
            for gno in 1..=20u64 {
                write_transaction(&relay, &queue, gno - 1, gno, (0, gno as i64), &transaction(gno, 0, gno as i64, 4000), &stop);
            }
        })
    };
    assert!(wait_until(Duration::from_secs(10), || relay.stats().receiver_blocked > Duration::ZERO));
    assert!(relay.stats().file_bytes <= 30 << 10);
    let mut released = 0;
    while released < 20 {
        let entry = queue.pop(&StopFlag::new()).unwrap();
        relay.release(&entry.location);
        released += 1;
    }
    writer.join().unwrap();
}
