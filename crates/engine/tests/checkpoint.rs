//! Checkpoint images and replay: a fuzzy checkpoint taken while writers
//! run, plus idempotent replay from its start LSN, gives back exactly the
//! engine's committed state.

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use binlog_format::{ColumnType, Gtid, Uuid, Value};
use engine::{
    ApplierSlot, CheckpointLsns, ColumnDef, Engine, EngineConfig, IndexSpec, MemoryRedo, NoRedo, RedoEntry, RowChange, ScanSpec, TableSpec,
};
use rand::{Rng, SeedableRng};
use support::*;

/// Every table's committed rows, by qualified name, plus the GTID set.
fn state(engine: &Engine) -> (Vec<(String, Vec<engine::Row>)>, String) {
    let mut tables = Vec::new();
    for database in engine.databases() {
        for name in engine.tables(&database).unwrap() {
            let def = engine.table(&database, &name).unwrap();
            tables.push((def.qualified_name(), committed_rows(engine, def.id)));
        }
    }
    (tables, engine.executed_gtids().to_string())
}

fn replay(engine: &Engine, redo: &MemoryRedo, lsns: CheckpointLsns) {
    let mut prepared: HashMap<u64, (Vec<RowChange>, Option<ApplierSlot>)> = HashMap::new();
    for (lsn, entry) in redo.entries_from(lsns.redo_retain_from_lsn) {
        match entry {
            RedoEntry::Prepare { trx_id, changes, slot, .. } => {
                prepared.insert(trx_id, (changes, slot));
            }
            RedoEntry::Commit { trx_id, gtid } => {
                // A commit before the start is in the images; its prepare
                // record may be older than what redo kept.
                let changes = prepared.remove(&trx_id);
                if lsn >= lsns.start_lsn {
                    let (changes, slot) = changes.expect("redo kept the prepare record of a commit after the start");
                    engine.apply_redo_transaction(&changes, gtid, slot.as_ref()).unwrap();
                }
            }
            RedoEntry::Rollback { trx_id } => {
                prepared.remove(&trx_id);
            }
            RedoEntry::Ddl(record, slot) => {
                if lsn >= lsns.start_lsn {
                    engine.apply_redo_ddl(&record, slot.as_ref()).unwrap();
                }
            }
        }
    }
}

fn gtid(gno: u64) -> Gtid {
    Gtid::new(Uuid([1; 16]), gno)
}

#[test]
fn a_whole_engine_image_round_trips() {
    let engine = support::engine();
    let users = users(&engine).id;
    let log = engine
        .create_table(&TableSpec {
            database: "d".into(),
            name: "log".into(),
            columns: vec![ColumnDef::new("at", ColumnType::Timestamp2 { fsp: 3 }), ColumnDef::new("n", ColumnType::Double)],
            ..Default::default()
        })
        .unwrap()
        .id;
    let mut trx = engine.begin();
    trx.insert(users, user(1, "a@x", 1)).unwrap();
    trx.insert(log, vec![Value::Timestamp { seconds: 5, micros: 1000 }, Value::Double(0.5)]).unwrap();
    trx.commit(Some(gtid(1))).unwrap();
    let image = engine.snapshot();
    let (restored, _) = Engine::from_snapshot(EngineConfig::default(), Arc::new(NoRedo), &image).unwrap();
    assert_eq!(state(&restored), state(&engine));
    // Definitions (indexes included) and counters come back too.
    let trx = restored.begin();
    assert_eq!(trx.get_by_unique(users, "email", &[text("a@x")]).unwrap().map(|(_, row)| row), Some(user(1, "a@x", 1)));
    let mut trx = restored.begin();
    trx.insert(log, vec![Value::Null, Value::Null]).unwrap();
    assert_eq!(trx.changes()[0].hidden_row_id, Some(2));
    // A damaged image is an error, not a panic.
    for cut in [0, 8, image.len() / 2, image.len() - 1] {
        assert!(Engine::from_snapshot(EngineConfig::default(), Arc::new(NoRedo), &image[..cut]).is_err());
    }
}

#[test]
fn a_fuzzy_checkpoint_plus_replay_from_its_start_equals_the_engine() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = Engine::with_redo(EngineConfig::default(), redo.clone());
    engine.create_database("d").unwrap();
    let table = users(&engine).id;
    let stop = Arc::new(AtomicBool::new(false));
    let next_gno = Arc::new(std::sync::atomic::AtomicU64::new(1));
    let writers: Vec<_> = (0..3u64)
        .map(|seed| {
            let (engine, stop, next_gno) = (engine.clone(), stop.clone(), next_gno.clone());
            thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                let mut commits = 0;
                while !stop.load(Ordering::Relaxed) || commits < 50 {
                    let mut trx = engine.begin();
                    let mut ok = true;
                    for _ in 0..rng.gen_range(1..4) {
                        let id = rng.gen_range(0..60);
                        let result = match rng.gen_range(0..3) {
                            0 => trx.insert(table, user(id, &format!("{id}@{seed}"), rng.gen_range(0..5))).map(|_| ()),
                            1 => trx.update_by_pk(table, &[int(id)], user(id, &format!("{id}@u{seed}"), rng.gen_range(0..5))).map(|_| ()),
                            _ => trx.delete_by_pk(table, &[int(id)]).map(|_| ()),
                        };
                        match result {
                            Ok(()) => {}
                            Err(error) if error.rolled_back_transaction() => {
                                ok = false;
                                break;
                            }
                            Err(_) => {}
                        }
                    }
                    if ok {
                        // Each writer's latest commit is its slot's value.
                        trx.set_applier_slot(ApplierSlot { slot: seed as u32, bytes: format!("{seed}:{commits}").into_bytes() });
                        let gno = next_gno.fetch_add(1, Ordering::Relaxed);
                        if rng.gen_bool(0.8) {
                            trx.prepare(Some(gno)).unwrap().commit(Some(gtid(gno))).unwrap();
                        } else {
                            trx.prepare(Some(gno)).unwrap().rollback();
                        }
                    }
                    commits += 1;
                }
            })
        })
        .collect();
    // Let some history build, then checkpoint while the writers go on.
    thread::sleep(std::time::Duration::from_millis(30));
    // Prepared before the checkpoint starts, committed after: replay needs
    // its prepare record, from before the start LSN.
    let mut straddling = engine.begin();
    straddling.insert(table, user(1000, "straddling@x", 1)).unwrap();
    let straddling = straddling.prepare(Some(1_000_000)).unwrap();
    let begin = engine.begin_checkpoint();
    assert!(begin.lsns.redo_retain_from_lsn <= straddling.prepare_lsn());
    assert!(begin.lsns.redo_retain_from_lsn < begin.lsns.start_lsn);
    straddling.commit(Some(gtid(1_000_000))).unwrap();
    engine
        .create_table(&TableSpec {
            database: "d".into(),
            name: "later".into(),
            columns: vec![ColumnDef::new("k", ColumnType::Long)],
            primary_key: vec!["k".into()],
            ..Default::default()
        })
        .unwrap();
    engine
        .create_index(
            "d",
            "users",
            &IndexSpec { name: "email_age".into(), columns: vec!["email".into(), "age".into()], unique: false },
            engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT,
        )
        .ok();
    let mut images: Vec<Vec<u8>> = Vec::new();
    for &id in &begin.tables {
        engine
            .snapshot_table_parts(id, |part| -> Result<(), ()> {
                images.push(part.to_vec());
                Ok(())
            })
            .unwrap();
    }
    thread::sleep(std::time::Duration::from_millis(30));
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
    let later = engine.table_id("d", "later").unwrap();
    let mut trx = engine.begin();
    trx.insert(later, vec![int(1)]).unwrap();
    trx.commit(None).unwrap();

    let image_refs: Vec<&[u8]> = images.iter().map(Vec::as_slice).collect();
    let (restored, lsns) = Engine::restore(EngineConfig::default(), Arc::new(NoRedo), &begin.catalog_image, &image_refs).unwrap();
    assert_eq!(lsns, begin.lsns);
    replay(&restored, &redo, lsns);
    assert_eq!(state(&restored), state(&engine));
    assert!(!engine.executed_gtids().is_empty());
    // Applier slots come back from the image and the replay, each at its
    // latest commit.
    assert_eq!(engine.applier_slots().len(), 3);
    assert_eq!(restored.applier_slots(), engine.applier_slots());
    // The index created after the checkpoint's start was replayed too.
    let trx = restored.begin();
    let by_index = trx.scan(table, &ScanSpec::index("email_age")).unwrap().count();
    assert_eq!(by_index, committed_rows(&engine, table).len());
    // Replaying again changes nothing (idempotence).
    replay(&restored, &redo, lsns);
    assert_eq!(state(&restored), state(&engine));
}

/// A table of large rows is copied in parts of a few MiB, never whole,
/// and the parts load back to the same table with its counters.
#[test]
fn a_large_table_is_copied_in_bounded_parts() {
    const ROWS: i64 = 24;
    const ROW_BYTES: usize = 1 << 20;
    let engine = support::engine();
    let big = engine
        .create_table(&TableSpec {
            database: "d".into(),
            name: "big".into(),
            columns: vec![
                ColumnDef::new("id", ColumnType::Long).not_null().auto_increment(),
                ColumnDef::new("v", ColumnType::Blob { length_bytes: 4 }),
            ],
            primary_key: vec!["id".into()],
            ..Default::default()
        })
        .unwrap()
        .id;
    let mut trx = engine.begin();
    for id in 1..=ROWS {
        trx.insert(big, vec![int(id), Value::Bytes(vec![b'a' + (id % 26) as u8; ROW_BYTES])]).unwrap();
    }
    trx.commit(None).unwrap();

    let begin = engine.begin_checkpoint();
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let copied = engine
        .snapshot_table_parts(big, |part| -> Result<(), ()> {
            parts.push(part.to_vec());
            Ok(())
        })
        .unwrap();
    assert!(copied);
    assert!(parts.len() >= (ROWS as usize * ROW_BYTES) / engine::SNAPSHOT_PART_BYTES, "{} parts", parts.len());
    for part in &parts {
        assert!(part.len() <= engine::SNAPSHOT_PART_BYTES + ROW_BYTES + 64, "a part of {} bytes", part.len());
    }
    let images: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let (restored, _) = Engine::restore(EngineConfig::default(), Arc::new(NoRedo), &begin.catalog_image, &images).unwrap();
    assert_eq!(state(&restored), state(&engine));
    // The AUTO_INCREMENT counter came back with the parts.
    let mut trx = restored.begin();
    assert_eq!(committed_rows(&restored, big).len(), ROWS as usize);
    assert_eq!(trx.insert(big, vec![Value::Null, Value::Null]).unwrap().auto_increment_value, Some(ROWS as u64 + 1));
}

/// A database's default collation comes back from a checkpoint, and a
/// catalog image written before databases kept one (its database count
/// without the flag, no collation after each name) reads with the
/// server's default.
#[test]
fn database_collations_come_back_from_a_checkpoint_and_older_images_read_as_utf8mb4() {
    let engine = support::engine();
    engine.create_database_in_collation("l", 8).unwrap();
    let begin = engine.begin_checkpoint();
    let (restored, _) = Engine::restore(EngineConfig::default(), Arc::new(NoRedo), &begin.catalog_image, &[]).unwrap();
    let collations = |engine: &Engine| (engine.database_collation("d").unwrap(), engine.database_collation("l").unwrap());
    assert_eq!(collations(&restored), (engine::SERVER_DEFAULT_COLLATION, 8));

    // magic, start LSN, retain LSN, next table id, then the flagged count
    // and each name (u32 length + bytes) with its u16 collation.
    const COUNT_AT: usize = 8 + 3 * 8;
    let image = &begin.catalog_image;
    let flagged = u32::from_le_bytes(image[COUNT_AT..COUNT_AT + 4].try_into().unwrap());
    assert_eq!(flagged, 0x8000_0002, "two databases, with collations");
    let mut older = image[..COUNT_AT].to_vec();
    older.extend_from_slice(&2u32.to_le_bytes());
    let mut at = COUNT_AT + 4;
    for _ in 0..2 {
        let length = u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) as usize;
        older.extend_from_slice(&image[at..at + 4 + length]);
        at += 4 + length + 2;
    }
    older.extend_from_slice(&image[at..]);
    let (older, _) = Engine::restore(EngineConfig::default(), Arc::new(NoRedo), &older, &[]).unwrap();
    assert_eq!(collations(&older), (engine::SERVER_DEFAULT_COLLATION, engine::SERVER_DEFAULT_COLLATION));
}
