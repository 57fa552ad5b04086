//! A replica worker's applier slot staged for a DDL statement
//! (`Engine::stage_ddl_applier_slot`) commits in the DDL's own redo
//! record: it is current as soon as the DDL is, replay of the record sets
//! it, and no other thread's DDL takes it.

use std::sync::Arc;

use binlog_format::ColumnType;
use engine::{ApplierSlot, ColumnDef, DdlRecord, Engine, EngineConfig, MemoryRedo, RedoEntry, TableSpec};

fn spec(name: &str) -> TableSpec {
    TableSpec {
        database: "d".into(),
        name: name.into(),
        columns: vec![ColumnDef::new("k", ColumnType::Long)],
        primary_key: vec!["k".into()],
        ..Default::default()
    }
}

fn slot(bytes: &str) -> ApplierSlot {
    ApplierSlot { slot: 2, bytes: bytes.as_bytes().to_vec() }
}

/// Every record replayed into an engine that logs nothing.
fn replayed(redo: &MemoryRedo) -> Engine {
    let engine = Engine::new(EngineConfig::default());
    for entry in redo.entries() {
        match entry {
            RedoEntry::Ddl(record, slot) => engine.apply_redo_ddl(&record, slot.as_ref()).unwrap(),
            RedoEntry::Prepare { .. } | RedoEntry::Commit { .. } | RedoEntry::Rollback { .. } => {}
        }
    }
    engine
}

#[test]
fn a_staged_slot_commits_in_the_next_ddl_record_and_replays_with_it() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = Engine::with_redo(EngineConfig::default(), redo.clone());
    engine.create_database("d").unwrap();
    engine.stage_ddl_applier_slot(slot("after t1"));
    engine.create_table(&spec("t1")).unwrap();
    assert_eq!(engine.unstage_ddl_applier_slot(), None, "the DDL record took it");
    assert_eq!(engine.applier_slots().get(&2).map(Vec::as_slice), Some(&b"after t1"[..]), "current with the DDL");
    // A DDL without a slot leaves the slot's value.
    engine.create_table(&spec("t2")).unwrap();
    let entries = redo.entries();
    let slots: Vec<Option<ApplierSlot>> = entries
        .iter()
        .filter_map(|entry| match entry {
            RedoEntry::Ddl(_, slot) => Some(slot.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(slots, vec![None, Some(slot("after t1")), None]);

    let recovered = replayed(&redo);
    assert_eq!(recovered.applier_slots(), engine.applier_slots());
    assert_eq!(recovered.tables("d").unwrap(), vec!["t1".to_string(), "t2".to_string()]);
}

#[test]
fn another_threads_ddl_never_takes_a_staged_slot() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = Engine::with_redo(EngineConfig::default(), redo.clone());
    engine.create_database("d").unwrap();
    engine.stage_ddl_applier_slot(slot("mine"));
    let other = engine.clone();
    std::thread::spawn(move || other.create_table(&spec("theirs")).unwrap()).join().unwrap();
    assert!(engine.applier_slots().is_empty());
    assert!(redo.entries().iter().all(|entry| matches!(entry, RedoEntry::Ddl(_, None))));
    // Still staged for this thread; taken back unused.
    assert_eq!(engine.unstage_ddl_applier_slot(), Some(slot("mine")));
    engine.create_table(&spec("later")).unwrap();
    assert!(engine.applier_slots().is_empty());
}

#[test]
fn drop_tables_gives_the_slot_to_the_last_tables_record() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = Engine::with_redo(EngineConfig::default(), redo.clone());
    engine.create_database("d").unwrap();
    let ids: Vec<_> = ["a", "b", "c"].iter().map(|name| engine.create_table(&spec(name)).unwrap().id).collect();
    engine.stage_ddl_applier_slot(slot("after the drop"));
    let names: Vec<(String, String)> = ["a", "b", "c"].iter().map(|name| ("d".to_string(), name.to_string())).collect();
    assert_eq!(engine.drop_tables(&names, engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap(), ids);
    let drops: Vec<(DdlRecord, Option<ApplierSlot>)> = redo
        .entries()
        .into_iter()
        .filter_map(|entry| match entry {
            RedoEntry::Ddl(record, slot) if matches!(*record, DdlRecord::DropTable { .. }) => Some((*record, slot)),
            _ => None,
        })
        .collect();
    assert_eq!(drops.iter().map(|(_, slot)| slot.is_some()).collect::<Vec<_>>(), vec![false, false, true]);
    assert_eq!(drops[2].0, DdlRecord::DropTable { table: ids[2] });
    assert_eq!(replayed(&redo).applier_slots(), engine.applier_slots());
}
