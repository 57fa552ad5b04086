//! `BinaryLog::set_checksum` (`SET GLOBAL binlog_checksum`): every change
//! rotates; transactions cached before it are written with the framing
//! of the file they land in (re-framed), a promoted one keeps its own in
//! its own file; every file decodes with binlogd's reader, mysql_common
//! and mariadb-binlog; a NONE file left in use is recovered.

mod support;

use std::sync::Arc;

use binlog::{BinaryLog, Options};
use binlog_format::file::EventStream;
use storage::{OsStorage, Storage};
use support::*;

const THRESHOLD: u64 = 256 << 10;

fn large_options(options: &mut Options) {
    options.large_transaction_optimization_threshold = THRESHOLD;
    options.spill_sync_chunk_bytes = 64 << 10;
}

/// (file name, whether its events carry CRC32, xids of its transactions).
fn files_and_algorithms(log_dir: &std::path::Path, contents: &LogContents) -> Vec<(String, bool, Vec<u64>)> {
    contents
        .index
        .iter()
        .map(|name| {
            let bytes = OsStorage.read_all(&log_dir.join(name)).unwrap();
            let mut stream = EventStream::new(&bytes).unwrap();
            stream.next_raw().expect("a Format_description").unwrap();
            let checksum = stream.has_checksum();
            let xids = contents.transactions.iter().filter(|t| &t.file == name).map(|t| t.xid.unwrap()).collect();
            (name.clone(), checksum, xids)
        })
        .collect()
}

#[test]
fn transactions_cached_before_a_change_take_the_framing_of_their_file() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(OsStorage), large_options);
    log.commit(transaction(&log, 1, 2)).unwrap();
    // Begun under CRC32: one in memory, one spilled below the promotion
    // threshold (copied from its spill file), one to promote.
    let small = transaction(&log, 2, 3);
    let spilled = transaction(&log, 3, 2_000);
    let large = transaction(&log, 4, 16_000);
    assert!(small.checksum() && small.memory_bytes().is_some());
    assert!(spilled.is_spilled() && !spilled.should_promote());
    assert!(large.should_promote());
    log.set_checksum(false).unwrap();
    assert!(!log.checksum());
    log.commit(small).unwrap();
    log.commit(spilled).unwrap();
    log.commit(large).unwrap();
    log.commit(transaction(&log, 5, 2)).unwrap();
    // Begun under NONE, committed after the change back.
    let back = transaction(&log, 6, 2);
    log.set_checksum(true).unwrap();
    log.commit(back).unwrap();
    log.close().unwrap();

    let contents = check_log(&OsStorage, dir.path(), None);
    let files = files_and_algorithms(dir.path(), &contents);
    let expected = vec![
        ("binlog.000001".to_string(), true, vec![1]),
        ("binlog.000002".to_string(), false, vec![2, 3]),
        // Promoted with the framing its spill file was written with.
        ("binlog.000003".to_string(), true, vec![4]),
        ("binlog.000004".to_string(), false, vec![5]),
        ("binlog.000005".to_string(), true, vec![6]),
    ];
    assert_eq!(files, expected);
    for (name, _, _) in &files {
        let text = mariadb_binlog_verbose(&dir.path().join(name));
        assert!(!text.contains("ERROR:"), "{name}: {text}");
    }
}

#[test]
fn a_none_file_left_in_use_is_recovered() {
    let dir = temp_dir();
    {
        let log: BinaryLog = open(dir.path(), Arc::new(OsStorage), |_| {});
        log.commit(transaction(&log, 1, 2)).unwrap();
        log.set_checksum(false).unwrap();
        log.commit(transaction(&log, 2, 2)).unwrap();
        log.commit(transaction(&log, 3, 2)).unwrap();
        // Dropped without close: the NONE file keeps its in-use flag and
        // has no Stop event, as after a crash.
    }
    let (log, report) = BinaryLog::open(options(dir.path()), Arc::new(OsStorage), Default::default()).unwrap();
    assert!(report.executed_gtids.contains(&binlog_format::gtid_set::Gtid::new(uuid(), 3)));
    // The engine learns the XIDs to commit from the NONE file it scanned.
    assert!(report.xids.contains(&2) && report.xids.contains(&3), "{:?}", report.xids);
    log.commit(transaction(&log, 4, 2)).unwrap();
    log.close().unwrap();
    let contents = check_log(&OsStorage, dir.path(), None);
    let files = files_and_algorithms(dir.path(), &contents);
    assert_eq!(
        files,
        vec![
            ("binlog.000001".to_string(), true, vec![1]),
            ("binlog.000002".to_string(), false, vec![2, 3]),
            ("binlog.000003".to_string(), true, vec![4]),
        ]
    );
}
