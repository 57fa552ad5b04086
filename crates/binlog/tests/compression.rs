//! `binlog_transaction_compression` in the log: a row transaction whose
//! cache asks for it is written as Gtid + one zstd Transaction_payload
//! (with either checksum algorithm), DDL is not, the counters add up, and
//! recovery of a file left in use finds the XIDs inside the payloads.

mod support;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use binlog::BinaryLog;
use binlog_format::events::{Event, QueryEvent};
use binlog_format::file::EventStream;
use storage::{OsStorage, Storage};
use support::*;

/// Per transaction in `name`: Some(inner event types) for a payload,
/// None for one written as it is.
fn shapes(dir: &std::path::Path, name: &str) -> Vec<Option<Vec<&'static str>>> {
    let bytes = OsStorage.read_all(&dir.join(name)).unwrap();
    let mut stream = EventStream::new(&bytes).unwrap();
    let mut found = Vec::new();
    while let Some(item) = stream.next_raw() {
        let (_, raw) = item.unwrap();
        let event = Event::decode(&raw, stream.context()).unwrap();
        match event {
            Event::Gtid(_) => found.push(None),
            Event::TransactionPayload(payload) => {
                let inner = payload.events(stream.context()).unwrap();
                assert!(inner.iter().all(|event| event.header.log_pos == 0), "inner events have log_pos 0");
                *found.last_mut().unwrap() = Some(inner.iter().map(|event| event.event.type_name()).collect());
            }
            _ => {}
        }
    }
    found
}

#[test]
fn row_transactions_are_compressed_ddl_is_not_and_recovery_reads_the_payloads() {
    let dir = temp_dir();
    {
        let log: BinaryLog = open(dir.path(), Arc::new(OsStorage), |_| {});
        let mut compressed = transaction(&log, 1, 300);
        compressed.set_compression_level_zstd(Some(3));
        let uncompressed_length = compressed.len();
        log.commit(compressed).unwrap();
        let mut ddl = log.new_cache();
        ddl.append(&Event::Query(QueryEvent::new(1, "test", "CREATE TABLE t2 (id INT)")), 1_700_000_000).unwrap();
        ddl.set_compression_level_zstd(Some(3));
        log.commit(ddl).unwrap();
        log.commit(transaction(&log, 2, 3)).unwrap();
        // Under NONE too: the payload event then has no footer.
        log.set_checksum(false).unwrap();
        let mut none = transaction(&log, 3, 5);
        none.set_compression_level_zstd(Some(19));
        log.commit(none).unwrap();
        let counters = log.counters();
        assert_eq!(counters.compression_zstd_transactions.load(Ordering::Relaxed), 2);
        assert!(counters.compression_zstd_uncompressed_bytes.load(Ordering::Relaxed) > uncompressed_length);
        let compressed_bytes = counters.compression_zstd_compressed_bytes.load(Ordering::Relaxed);
        assert!(compressed_bytes > 0 && compressed_bytes * 2 < uncompressed_length, "{compressed_bytes} of {uncompressed_length}");
        // Dropped without close: the last file stays in use.
    }
    let rows = ["Query", "Table_map", "Write_rows", "Write_rows", "Write_rows", "Xid"];
    assert_eq!(shapes(dir.path(), "binlog.000001"), vec![Some(rows.to_vec()), None, None]);
    assert_eq!(shapes(dir.path(), "binlog.000002"), vec![Some(vec!["Query", "Table_map", "Write_rows", "Xid"])]);
    let (log, report) = BinaryLog::open(options(dir.path()), Arc::new(OsStorage), Default::default()).unwrap();
    assert!(report.xids.contains(&3), "the XID inside the last file's payload: {:?}", report.xids);
    assert!(report.executed_gtids.contains(&binlog_format::gtid_set::Gtid::new(uuid(), 4)));
    log.close().unwrap();
}
