//! `BinaryLog::append_behind` (the engine-integrated binlog's writer):
//! transactions numbered elsewhere are written in order with their GTIDs,
//! a GTID out of sequence is refused, and a cache rebuilt from encoded
//! events writes the same bytes as the original.

mod support;

use std::sync::Arc;

use binlog::{BehindTransaction, BinlogError};
use binlog_format::Gtid;
use support::*;

#[test]
fn numbered_transactions_are_written_in_order_and_gaps_refused() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(storage::OsStorage), |options| options.sync_binlog = 0);
    let batch: Vec<BehindTransaction> = (1..=5u64)
        .map(|gno| BehindTransaction {
            gtid: Gtid::new(uuid(), gno),
            given: None,
            cache: transaction(&log, gno, 2),
            global_sequence: gno,
            // 1 and 2 were in flight together, the others one after another.
            committed_when_queued: if gno == 2 { 0 } else { gno - 1 },
        })
        .collect();
    let infos = log.append_behind(batch).unwrap();
    assert_eq!(infos.iter().map(|i| i.gtid.gno).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    assert_eq!((infos[1].last_committed, infos[1].sequence_number), (0, 2));
    assert_eq!(log.durable_end().position, infos[4].end_position, "readers may see what was written behind");

    // A copy of transaction 6 rebuilt from its encoded events.
    let original = transaction(&log, 6, 3);
    let rebuilt = log.cache_from_encoded_events(original.encoded_events().unwrap(), original.checksum()).unwrap();
    assert_eq!(rebuilt.len(), original.len());
    let gap = BehindTransaction { gtid: Gtid::new(uuid(), 7), given: None, cache: rebuilt, global_sequence: 6, committed_when_queued: 5 };
    assert!(matches!(log.append_behind(vec![gap]), Err(BinlogError::Invalid(_)) | Err(BinlogError::PreviousIo { .. })));
    // The refusal poisons the log (numbering went wrong): close fails and
    // the file stays in use, holding the five transactions.
    assert!(log.close().is_err());
    let contents = check_log(&storage::OsStorage, dir.path(), Some("binlog.000001"));
    assert_eq!(contents.transactions.len(), 5, "the refused transaction reached the file");
}

#[test]
fn a_cache_rebuilt_from_events_writes_the_same_transaction() {
    let dir = temp_dir();
    let log = open(dir.path(), Arc::new(storage::OsStorage), |options| options.sync_binlog = 0);
    let original = transaction(&log, 1, 4);
    let bytes = original.encoded_events().unwrap();
    let rebuilt = log.cache_from_encoded_events(bytes.clone(), true).unwrap();
    assert_eq!(rebuilt.encoded_events().unwrap(), bytes);
    assert!(log.cache_from_encoded_events(bytes[..bytes.len() - 3].to_vec(), true).is_err(), "a cut event is refused");
    let info = log
        .append_behind(vec![BehindTransaction {
            gtid: Gtid::new(uuid(), 1),
            given: None,
            cache: rebuilt,
            global_sequence: 1,
            committed_when_queued: 0,
        }])
        .unwrap();
    assert_eq!(info[0].gtid.gno, 1);
    log.close().unwrap();
    let contents = check_log(&storage::OsStorage, dir.path(), None);
    assert_eq!(contents.transactions.len(), 1);
    assert_eq!(contents.transactions[0].xid, Some(1));
}
