//! ALTER TABLE's copy and RENAME TABLE in the engine: the rebuild swaps
//! in a new table (new id) with the converted rows, refuses duplicates
//! without changing anything or logging, and redo replay of its one
//! record gives the same table; renames apply all pairs at once.

mod support;

use std::sync::Arc;

use binlog_format::ColumnType;
use engine::{ColumnDef, DdlRecord, Engine, EngineConfig, EngineError, IndexSpec, MemoryRedo, RedoEntry, TableRebuild, TableSpec};
use support::*;

fn engine_with(redo: Arc<MemoryRedo>) -> Engine {
    let engine = Engine::with_redo(EngineConfig::default(), redo);
    engine.create_database("d").unwrap();
    engine
}

fn insert_users(engine: &Engine, table: u64) {
    let mut trx = engine.begin();
    for (id, email, age) in [(1, "a@x", 30), (2, "b@x", 30), (3, "c@x", 40)] {
        trx.insert(table, user(id, email, age)).unwrap();
    }
    trx.commit(None).unwrap();
}

/// `users` with `age` dropped and `city VARCHAR(8) NOT NULL` added after `id`.
fn reshaped(def: &engine::TableDef, rows: Vec<engine::Row>) -> engine::Result<TableRebuild> {
    let spec = TableSpec {
        database: def.database.clone(),
        name: def.name.clone(),
        columns: vec![
            def.columns[0].clone(),
            ColumnDef::new("city", ColumnType::VarChar { max_length_bytes: 32 }).not_null(),
            def.columns[1].clone(),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec { name: "email".into(), columns: vec!["email".into()], unique: true }],
        auto_increment_start: 0,
        partitioning: None,
        comment: String::new(),
        default_collation: None,
    };
    let rows = rows.into_iter().map(|row| vec![row[0].clone(), text("here"), row[1].clone()]).collect();
    Ok(TableRebuild { spec, rows, auto_increment: None })
}

#[test]
fn a_rebuild_swaps_in_the_new_table_and_replay_of_its_record_gives_the_same() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = engine_with(redo.clone());
    let old = users(&engine);
    insert_users(&engine, old.id);
    let new = engine.alter_table("d", "users", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT, reshaped).unwrap();
    assert_ne!(new.id, old.id, "the copy is a new table");
    assert_eq!(new.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["id", "city", "email"]);
    assert_eq!(engine.table("d", "users").unwrap().id, new.id);
    assert!(engine.table_def(old.id).is_none());
    let rows = committed_rows(&engine, new.id);
    assert_eq!(
        rows,
        vec![vec![int(1), text("here"), text("a@x")], vec![int(2), text("here"), text("b@x")], vec![int(3), text("here"), text("c@x")]]
    );
    // The unique index works on the new table.
    let mut trx = engine.begin();
    assert_eq!(trx.insert(new.id, vec![int(9), text("x"), text("a@x")]).unwrap_err().mysql_code(), 1062);
    trx.rollback();

    // Replay every record into an engine that logs nothing.
    let replayed = Engine::new(EngineConfig::default());
    let mut prepared = std::collections::HashMap::new();
    for entry in redo.entries() {
        match entry {
            RedoEntry::Ddl(record, _) => {
                replayed.apply_redo_ddl(&record, None).unwrap();
                // Twice: replay over a checkpoint that already holds it.
                replayed.apply_redo_ddl(&record, None).unwrap();
            }
            RedoEntry::Prepare { trx_id, changes, .. } => {
                prepared.insert(trx_id, changes);
            }
            RedoEntry::Commit { trx_id, gtid } => replayed.apply_redo_transaction(&prepared.remove(&trx_id).unwrap(), gtid, None).unwrap(),
            RedoEntry::Rollback { .. } => {}
        }
    }
    let def = replayed.table("d", "users").unwrap();
    assert_eq!(*def, *new);
    assert_eq!(committed_rows(&replayed, def.id), rows);
}

#[test]
fn duplicates_under_a_new_unique_key_refuse_the_rebuild_and_log_nothing() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = engine_with(redo.clone());
    let old = users(&engine);
    insert_users(&engine, old.id);
    let records_before = redo.entries().len();
    let error = engine
        .alter_table("d", "users", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT, |def, rows| {
            let mut spec = TableSpec {
                database: def.database.clone(),
                name: def.name.clone(),
                columns: def.columns.clone(),
                primary_key: vec!["id".into()],
                indexes: vec![IndexSpec { name: "age".into(), columns: vec!["age".into()], unique: true }],
                auto_increment_start: 0,
                partitioning: None,
                comment: String::new(),
                default_collation: None,
            };
            spec.columns[2].nullable = true;
            Ok(TableRebuild { spec, rows, auto_increment: None })
        })
        .unwrap_err();
    assert_eq!(error, EngineError::DuplicateEntry { entry: "30".into(), key: "users.age".into() });
    assert_eq!(redo.entries().len(), records_before);
    assert_eq!(engine.table("d", "users").unwrap().id, old.id);
    assert_eq!(committed_rows(&engine, old.id).len(), 3);
}

#[test]
fn renames_apply_together_and_replay() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = engine_with(redo.clone());
    let users_id = users(&engine).id;
    let pair = |from: &str, to: &str| (("d".to_string(), from.to_string()), ("d".to_string(), to.to_string()));
    let other = TableSpec {
        database: "d".into(),
        name: "other".into(),
        columns: vec![ColumnDef::new("x", ColumnType::Long)],
        ..TableSpec::default()
    };
    let other_id = engine.create_table(&other).unwrap().id;
    engine
        .rename_tables(&[pair("users", "tmp"), pair("other", "users"), pair("tmp", "other")], engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT)
        .unwrap();
    assert_eq!(engine.table("d", "users").unwrap().id, other_id);
    assert_eq!(engine.table("d", "other").unwrap().id, users_id);
    assert_eq!(engine.table("d", "other").unwrap().name, "other");
    // A missing source refuses every pair.
    let error = engine.rename_tables(&[pair("users", "a"), pair("nope", "b")], engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap_err();
    assert_eq!(error.mysql_code(), 1146);
    assert_eq!(engine.table("d", "users").unwrap().id, other_id);
    assert_eq!(engine.rename_tables(&[pair("users", "other")], engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap_err().mysql_code(), 1050);

    let replayed = Engine::new(EngineConfig::default());
    for entry in redo.entries() {
        if let RedoEntry::Ddl(record, _) = entry {
            replayed.apply_redo_ddl(&record, None).unwrap();
        }
    }
    assert_eq!(replayed.table("d", "users").unwrap().id, other_id);
    assert_eq!(replayed.table("d", "other").unwrap().id, users_id);
}

#[test]
fn rebuild_records_round_trip_through_their_redo_encoding() {
    let redo = Arc::new(MemoryRedo::default());
    let engine = engine_with(redo.clone());
    let old = users(&engine);
    insert_users(&engine, old.id);
    engine.alter_table("d", "users", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT, reshaped).unwrap();
    let rebuilt = redo.entries().into_iter().rev().find_map(|entry| match entry {
        RedoEntry::Ddl(record, _) if matches!(*record, DdlRecord::RebuildTable { .. }) => Some(*record),
        _ => None,
    });
    let record = rebuilt.expect("the rebuild logged its record");
    assert_eq!(engine::codec::decode_ddl(&engine::codec::encode_ddl(&record)).unwrap(), record);
    let encoded = engine::codec::encode_ddl(&record);
    assert!(engine::codec::decode_ddl(&encoded[..encoded.len() - 1]).is_err(), "a cut record is an error");
}
