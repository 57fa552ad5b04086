//! Opening a data directory: recovery as scan → decide → apply, then the
//! check that engine and binlog agree.
//!
//! **Scan.** Redo recovery (torn tail cut, leftovers removed), then the
//! checkpoint snapshot is loaded (`Engine::restore`) and redo replayed
//! from the checkpoint: per transaction (keyed by boot and engine id) its
//! prepare (changes, XID), commit (GTID) or rollback; committed ones are
//! applied in commit-record order (`apply_redo_transaction`), DDL with
//! `apply_redo_ddl`, both only from the engine's start LSN on (what is
//! before is in the snapshot). What is left are the transactions in
//! doubt. The binlog is recovered (its own scan → decide → apply) and
//! reports the XIDs of its complete transactions and their GTIDs.
//!
//! **Decide**, in one place:
//!
//! | redo holds                         | binlog holds                          | decision |
//! |------------------------------------|---------------------------------------|----------|
//! | prepare + commit                   | —                                     | committed (replayed) |
//! | prepare + rollback                 | —                                     | rolled back |
//! | prepare with XID, no outcome       | the XID                               | commit with the binlog's GTID |
//! | prepare with XID, no outcome       | not the XID                           | roll back |
//! | prepare without XID, no outcome    | —                                     | roll back (an unfinished one-phase commit) |
//! | DDL intent, no outcome             | GTIDs the engine lacks                | they are the DDL's: add them to the engine |
//! | DDL intent, no outcome             | nothing the engine lacks              | the DDL missed the binlog: close the intent |
//! | engine commit (kind 7) or engine DDL binlog (kind 8) | its GTID          | replayed; the files are right |
//! | engine commit or engine DDL binlog | not its GTID                          | replayed; its events re-appended to the binlog in redo order (`engine_binlog::rebuild`); a large transaction's referenced spill file promoted |
//! | no record referring to a referenced spill file | —                       | the file is removed (its transaction never reached redo, or its promotion renamed it away) |
//! | a prepare or engine commit carrying an applier slot (a replica worker's applied source position) | as for its transaction | the slot takes the record's value exactly when the transaction commits, in commit-record order; a rolled-back one leaves the slot's earlier value |
//! | a DDL record (kind 4) carrying an applier slot (a replica worker's DDL statement and its position) | —                       | the slot takes the record's value exactly when the DDL is replayed, in redo order (DDL is applied once logged, whatever its binlog write); a DDL record without one leaves the slot's earlier value |
//! | the replica's slots, after the rows above                           | —     | merged by the replica at its start: the highest low-water mark, plus every position beyond it a slot names; it re-fetches from the mark and skips those (`replica::applied_positions`) |
//!
//! The engine commit rows (`binlog_storage_engine = engine`, see
//! `engine_binlog.rs`) apply whatever mode the database opens in, so a
//! switch keeps one continuous binlog. The files never get ahead of
//! durable redo in that mode, so nothing is ever removed from them.
//!
//! **Apply.** Each decision's redo record (commit with GTID, or rollback)
//! is appended and the redo synced *before* the binlog opens its new file:
//! after that the old file is no longer scanned at recovery, so a
//! decision must never have to be taken twice. When nothing is in doubt
//! the binlog is opened directly; otherwise its recovery runs once on its
//! own (to learn the XIDs), the decisions are made durable, and then the
//! log is opened (which scans its last file again).
//!
//! **Check.** The engine's executed GTID set must equal the binlog's. With
//! `innodb_flush_log_at_trx_commit = 1` and `sync_binlog = 1` anything
//! else is a bug or a damaged directory, and open fails with
//! [`DatabaseError::Inconsistent`]; with weaker settings a crash may lose
//! either side's tail (as in MySQL), and the difference is logged.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

use binlog::{BinaryLog, RecoveryReport};
use binlog_format::{Gtid, GtidSet};
use engine::{ApplierSlot, CheckpointLsns, Engine, RowChange};
use parking_lot::{Mutex, RwLock};
use redo::{Durability, RedoLog};

use crate::checkpoint::{self, Checkpointer};
use crate::config::DatabaseConfig;
use crate::database::{BinlogMode, Database, Inner, OpenReport, RedoSync};
use crate::engine_binlog::{EngineBinlog, WriterGuard};
use crate::error::{DatabaseError, Result};
use crate::group_commit::{BinlogGroupCommit, GroupCommit, GroupStartHook};
use crate::redo_sink::{self, RedoAdapter, RedoEntry, RedoTrxKey};
use crate::row_image::RowLoggingGlobals;
use crate::server_uuid;
use crate::storage_mode;
use crate::table_maps::TableMaps;

/// A transaction redo left without an outcome.
struct InDoubt {
    key: RedoTrxKey,
    xid: Option<u64>,
    changes: Vec<RowChange>,
    slot: Option<ApplierSlot>,
    /// A DDL intent rather than a transaction.
    ddl_intent: bool,
}

/// What replaying redo left.
struct Replay {
    in_doubt: Vec<InDoubt>,
    /// Engine-integrated commits (and DDL binlog records) in redo order:
    /// the binlog's tail is rebuilt from these.
    engine_binlog: Vec<(Gtid, redo_sink::BinlogBody)>,
    max_xid: u64,
    records: u64,
    transactions: u64,
}

pub(crate) fn open(config: DatabaseConfig) -> Result<(Database, OpenReport)> {
    let started = Instant::now();
    let storage = config.storage.clone();
    storage.create_dir_all(&config.dir).map_err(|e| DatabaseError::io("create directory", &config.dir, e))?;
    let server_uuid = server_uuid::load_or_create(storage.as_ref(), &config.dir, config.binlog.server_uuid)?;
    let mut config = config;
    config.binlog.dir = config.binlog_dir();
    config.binlog.server_uuid = server_uuid;

    // Scan: redo, checkpoint, replay.
    let (redo, recovered) = RedoLog::open(config.redo_dir(), config.redo.clone(), storage.clone(), config.redo_crash_points.clone())?;
    // Unique per start that appends anything (see redo_sink.rs).
    // With flush = 1 the group's leader syncs the prepares (group_commit.rs).
    let cross_log_groups =
        config.cross_log_group_commit && config.redo.innodb_flush_log_at_trx_commit == redo::FlushLogAtTrxCommit::WriteAndSyncAtCommit;
    let prepare_durability = if cross_log_groups { Durability::Buffered } else { config.redo.commit_durability() };
    let sink = Arc::new(RedoAdapter::new(redo.clone(), recovered.end_lsn, prepare_durability, config.redo_prepare_part_bytes));
    let (engine, lsns, snapshot_next_xid) = match recovered.snapshot() {
        Some(mut reader) => {
            let file = recovered.checkpoint.as_ref().map_or_else(String::new, |c| c.file_name.clone());
            let mut bytes = Vec::new();
            reader.read_to_end(&mut bytes).map_err(|e| DatabaseError::corruption(file.clone(), e.to_string()))?;
            // The images are read in place: the file's bytes are the only copy.
            let snapshot = checkpoint::decode_snapshot(&bytes, &file)?;
            let (engine, lsns) = Engine::restore(config.engine.clone(), sink.clone(), snapshot.catalog_image, &snapshot.table_images)?;
            if lsns.redo_retain_from_lsn != recovered.start_lsn {
                return Err(DatabaseError::corruption(
                    file,
                    format!("snapshot keeps redo from LSN {}, the control file from {}", lsns.redo_retain_from_lsn, recovered.start_lsn),
                ));
            }
            (engine, lsns, snapshot.next_xid)
        }
        None => (Engine::with_redo(config.engine.clone(), sink.clone()), CheckpointLsns { start_lsn: 0, redo_retain_from_lsn: 0 }, 1),
    };
    let redo_sync = if cross_log_groups {
        // Purge runs while each group's members wait for its fsyncs
        // (engine/src/purge.rs).
        engine.defer_purge_to_group_syncs();
        let purging = engine.clone();
        let on_group_start: GroupStartHook = Box::new(move || purging.purge_in_background());
        RedoSync::Grouped(Arc::<BinlogGroupCommit>::new(GroupCommit::new(redo.clone(), config.group_commit_gather_max, on_group_start)))
    } else {
        RedoSync::Alone
    };
    let mut replay = replay(&engine, &recovered, lsns)?;
    let mut report = OpenReport {
        redo_records_replayed: replay.records,
        transactions_replayed: replay.transactions,
        checkpoint: recovered.checkpoint.clone(),
        redo_truncation: recovered.truncation.clone(),
        server_uuid,
        ..OpenReport::default()
    };
    let last_checkpoint_lsn = lsns.start_lsn;
    drop(recovered);

    // Decide and apply, then open the binlog.
    let mut binlog_options = config.binlog.clone();
    // Rotation is the database's (commit.rs).
    binlog_options.max_binlog_size = u64::MAX;
    // An interrupted RESET BINARY LOGS AND GTIDS is finished before the
    // binlog opens (reset.rs).
    crate::reset::finish_interrupted(&engine, &redo, &binlog_options, &config)?;
    if config.is_engine_binlog() {
        // Durability is redo's; the files are written behind it
        // (engine_binlog.rs), so readers may see what is written.
        binlog_options.sync_binlog = 0;
    }
    let engine_binlog_logged = std::mem::take(&mut replay.engine_binlog);
    let first_pass = if replay.in_doubt.is_empty() {
        None
    } else {
        let binlog_report = binlog::recovery::recover(storage.as_ref(), &binlog_options, &config.binlog_crash_points)?;
        settle_in_doubt(&engine, &redo, replay.in_doubt, &binlog_report, &config, &mut report)?;
        Some(binlog_report)
    };
    let (binlog, second_pass) = BinaryLog::open(binlog_options, storage.clone(), config.binlog_crash_points.clone())?;
    let max_binlog_xid =
        [first_pass.as_ref(), Some(&second_pass)].into_iter().flatten().filter_map(|r| r.xids.last().copied()).max().unwrap_or(0);
    report.binlog = first_pass.unwrap_or(second_pass);
    // The binlog's torn tail is cut; append what redo committed beyond it
    // (whatever the mode now: a switch keeps one continuous binlog).
    report.binlog_rebuilt_from_redo = crate::engine_binlog::rebuild(&binlog, engine_binlog_logged, &config.crash_points)?;
    report.binlog_storage_engine_switched_from = storage_mode::record(storage.as_ref(), &config)?;

    // Check.
    let engine_executed = engine.executed_gtids();
    let binlog_executed = binlog.executed_gtids();
    if engine_executed != binlog_executed {
        let reason = format!(
            "the binlog has {} the engine lacks, the engine has {} the binlog lacks",
            display_or_none(&difference(&binlog_executed, &engine_executed)),
            display_or_none(&difference(&engine_executed, &binlog_executed)),
        );
        if config.is_fully_durable() {
            return Err(DatabaseError::Inconsistent { reason });
        }
        tracing::warn!("recovery: {reason} (possible after a crash with innodb_flush_log_at_trx_commit != 1 or sync_binlog != 1)");
    }

    let next_xid = snapshot_next_xid.max(replay.max_xid + 1).max(max_binlog_xid + 1).max(1);
    let crash = config.crash_points.clone();
    let binlog_mode = if config.is_engine_binlog() {
        let rebuilt = crate::engine_binlog::rebuilt_count(&report.binlog_rebuilt_from_redo);
        let engine_binlog = Arc::new(EngineBinlog::new(redo.clone(), binlog.clone(), crash.clone(), &config, rebuilt));
        BinlogMode::Engine { binlog: engine_binlog.clone(), _writer: WriterGuard(engine_binlog) }
    } else {
        BinlogMode::Files
    };
    let inner = Arc::new(Inner {
        config,
        engine,
        binlog,
        redo,
        sink,
        binlog_mode,
        redo_sync,
        crash,
        table_maps: TableMaps::default(),
        row_logging: RowLoggingGlobals::default(),
        next_xid: AtomicU64::new(next_xid),
        rotation: RwLock::new(()),
        ddl_lock: Mutex::new(()),
        checkpoint_lock: Mutex::new(()),
        last_checkpoint: Mutex::new((Instant::now(), last_checkpoint_lsn)),
        next_ddl_intent: AtomicU64::new(0),
        failure: Mutex::new(None),
        failed: AtomicBool::new(false),
        closed: AtomicBool::new(false),
        commits: AtomicU64::new(0),
        read_only_commits: AtomicU64::new(0),
        ddl_statements: AtomicU64::new(0),
        checkpoints: AtomicU64::new(0),
        binlog_rotations: AtomicU64::new(0),
    });
    if let Some(engine_binlog) = inner.binlog_mode.engine() {
        engine_binlog.start(Arc::downgrade(&inner))?;
    }
    let checkpointer = Checkpointer::start(&inner)?.map(Arc::new);
    report.elapsed = started.elapsed();
    tracing::info!(
        "database open in {:?}: {} redo records, {} transactions replayed, {} committed and {} rolled back at recovery",
        report.elapsed,
        report.redo_records_replayed,
        report.transactions_replayed,
        report.committed_at_recovery.len(),
        report.rolled_back_at_recovery.len(),
    );
    Ok((Database { inner, checkpointer }, report))
}

/// Replays redo from the checkpoint; returns the transactions in doubt.
fn replay(engine: &Engine, recovered: &redo::Recovered, lsns: CheckpointLsns) -> Result<Replay> {
    let mut pending: HashMap<RedoTrxKey, (u64, InDoubt)> = HashMap::new();
    // Prepare parts waiting for their prepare record (redo_sink.rs); parts
    // left at the end belong to transactions that never prepared.
    let mut parts: HashMap<RedoTrxKey, Vec<RowChange>> = HashMap::new();
    let mut replay = Replay { in_doubt: Vec::new(), engine_binlog: Vec::new(), max_xid: 0, records: 0, transactions: 0 };
    for item in recovered.records() {
        let logged = item?;
        let where_ = format!("redo record at LSN {}", logged.lsn);
        replay.records += 1;
        // Before the engine's start LSN, a record's effect is in the snapshot.
        let after_start = logged.lsn >= lsns.start_lsn;
        match redo_sink::decode(&logged.record, &where_)? {
            RedoEntry::PreparePart { key, changes } => {
                parts.entry(key).or_default().extend(changes);
            }
            RedoEntry::Prepare { key, xid, changes, slot } => {
                replay.max_xid = replay.max_xid.max(xid.unwrap_or(0));
                let changes = match parts.remove(&key) {
                    Some(mut first) => {
                        first.extend(changes);
                        first
                    }
                    None => changes,
                };
                let entry = InDoubt { key, xid, changes, slot, ddl_intent: false };
                if pending.insert(key, (logged.lsn, entry)).is_some() {
                    return Err(DatabaseError::corruption(where_, format!("second prepare of transaction {key:?}")));
                }
            }
            RedoEntry::DdlIntent { key } => {
                pending.insert(key, (logged.lsn, InDoubt { key, xid: None, changes: Vec::new(), slot: None, ddl_intent: true }));
            }
            RedoEntry::Commit { key, gtid } => {
                let prepared = pending.remove(&key);
                if after_start {
                    let Some((_, prepared)) = prepared else {
                        return Err(DatabaseError::corruption(where_, format!("commit of transaction {key:?} without its prepare record")));
                    };
                    engine.apply_redo_transaction(&prepared.changes, gtid, prepared.slot.as_ref())?;
                    replay.transactions += 1;
                }
            }
            RedoEntry::Rollback { key } => {
                pending.remove(&key);
                parts.remove(&key);
            }
            RedoEntry::EngineCommit { key: _, xid, changes, gtid, binlog, slot } => {
                replay.max_xid = replay.max_xid.max(xid.unwrap_or(0));
                if after_start {
                    engine.apply_redo_transaction(&changes, Some(gtid), slot.as_ref())?;
                    replay.transactions += 1;
                }
                replay.engine_binlog.push((gtid, binlog));
            }
            RedoEntry::EngineDdlBinlog { gtid, binlog } => {
                if after_start {
                    engine.apply_redo_transaction(&[], Some(gtid), None)?;
                }
                replay.engine_binlog.push((gtid, redo_sink::BinlogBody::Events(binlog)));
            }
            RedoEntry::Ddl { record, slot } => {
                if after_start {
                    engine.apply_redo_ddl(&record, slot.as_ref())?;
                }
            }
            RedoEntry::GtidReset => {
                // The binlog started again: nothing before is to be rebuilt.
                replay.engine_binlog.clear();
                if after_start {
                    engine.reset_executed_gtids();
                }
            }
        }
    }
    let mut in_doubt: Vec<(u64, InDoubt)> = pending.into_values().collect();
    in_doubt.sort_by_key(|(lsn, _)| *lsn);
    replay.in_doubt = in_doubt.into_iter().map(|(_, entry)| entry).collect();
    Ok(replay)
}

/// Decides every transaction in doubt with the binlog's verdict and makes
/// each decision durable (the table at the top).
fn settle_in_doubt(
    engine: &Engine,
    redo: &RedoLog,
    in_doubt: Vec<InDoubt>,
    binlog: &RecoveryReport,
    config: &DatabaseConfig,
    report: &mut OpenReport,
) -> Result<()> {
    // Commits in binlog order (they touch disjoint rows: a transaction
    // waiting on another's row prepares after that one's commit record,
    // which is then durable too, so at most one of them is in doubt).
    let mut commits: BTreeMap<(Option<Gtid>, u64), InDoubt> = BTreeMap::new();
    let mut intents = Vec::new();
    for entry in in_doubt {
        match entry.xid {
            _ if entry.ddl_intent => intents.push(entry),
            Some(xid) if binlog.xids.contains(&xid) => {
                commits.insert((binlog.xid_gtids.get(&xid).copied(), xid), entry);
            }
            Some(xid) => {
                redo.append(&redo_sink::rollback_record(entry.key), Durability::Buffered)?;
                report.rolled_back_at_recovery.push(xid);
            }
            None => {
                redo.append(&redo_sink::rollback_record(entry.key), Durability::Buffered)?;
                report.other_rolled_back += 1;
            }
        }
    }
    for ((gtid, xid), entry) in commits {
        engine.apply_redo_transaction(&entry.changes, gtid, entry.slot.as_ref())?;
        redo.append(&redo_sink::commit_record(entry.key, gtid), Durability::Buffered)?;
        report.committed_at_recovery.push(xid);
    }
    if !intents.is_empty() {
        // DDL runs one at a time, so at most one intent is open.
        let missing = difference(&binlog.executed_gtids, &engine.executed_gtids());
        let gtids: Vec<Gtid> = gtids_of(&missing);
        if gtids.len() > 1 && config.is_fully_durable() {
            return Err(DatabaseError::Inconsistent {
                reason: format!("a DDL statement was in flight, but the binlog has {missing} the engine lacks"),
            });
        }
        for (index, intent) in intents.into_iter().enumerate() {
            if index == 0 && !gtids.is_empty() {
                for gtid in &gtids {
                    engine.apply_redo_transaction(&[], Some(*gtid), None)?;
                    redo.append(&redo_sink::commit_record(intent.key, Some(*gtid)), Durability::Buffered)?;
                }
                report.ddl_gtids_recovered = missing.clone();
            } else {
                redo.append(&redo_sink::rollback_record(intent.key), Durability::Buffered)?;
                report.other_rolled_back += 1;
            }
        }
    }
    redo.flush()?;
    Ok(())
}

/// `a` minus `b`.
pub(crate) fn difference(a: &GtidSet, b: &GtidSet) -> GtidSet {
    a.subtract(b)
}

fn gtids_of(set: &GtidSet) -> Vec<Gtid> {
    let mut out = Vec::new();
    for (tsid, list) in set.intervals() {
        for &(start, end) in list {
            out.extend((start..end).map(|gno| Gtid::tagged(*tsid, gno)));
        }
    }
    out
}

fn display_or_none(set: &GtidSet) -> String {
    if set.is_empty() {
        "nothing".to_string()
    } else {
        set.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog_format::Uuid;

    #[test]
    fn difference_of_interval_sets() {
        let (u, v) = (Uuid([1; 16]), Uuid([2; 16]));
        let mut a = GtidSet::new();
        a.add_interval(u, 1, 20);
        a.add_interval(v, 1, 3);
        let mut b = GtidSet::new();
        b.add_interval(u, 3, 5);
        b.add_interval(u, 10, 25);
        let d = difference(&a, &b);
        let mut expected = GtidSet::new();
        expected.add_interval(u, 1, 3);
        expected.add_interval(u, 5, 10);
        expected.add_interval(v, 1, 3);
        assert_eq!(d, expected);
        assert!(difference(&b, &b).is_empty());
        assert_eq!(gtids_of(&expected).len(), 2 + 5 + 2);
    }
}
