//! A replica worker's DDL statement commits the worker's applied position
//! (its applier slot) in the DDL's own redo record
//! (`Database::execute_replicated_ddl`), in both binlog modes: a crash
//! right after the DDL's engine part (`database::ddl::after_engine`)
//! recovers the DDL and the slot together; a client's DDL leaves the slot
//! as it was; a statement that logs no engine record commits the slot by
//! itself.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use binlog_format::ColumnType;
use database::{crash_points as database_points, Database, DatabaseConfig, NextGtid};
use engine::{ApplierSlot, ColumnDef, TableSpec};
use storage::{SimStorage, Storage};
use support::*;

const SLOT: u32 = 3;

fn slot(bytes: &str) -> ApplierSlot {
    ApplierSlot { slot: SLOT, bytes: bytes.as_bytes().to_vec() }
}

fn spec(name: &str) -> TableSpec {
    TableSpec {
        database: DB.into(),
        name: name.into(),
        columns: vec![ColumnDef::new("id", ColumnType::LongLong).not_null()],
        primary_key: vec!["id".into()],
        ..Default::default()
    }
}

fn replicated_create(db: &Database, name: &str, position: &str) -> database::Result<()> {
    let query = format!("CREATE TABLE {name} (id BIGINT PRIMARY KEY)");
    let spec = spec(name);
    db.execute_replicated_ddl(&context(7), &query, NextGtid::Automatic, Some(slot(position)), |e| e.create_table(&spec)).map(drop)
}

fn slot_value(db: &Database) -> Option<String> {
    db.applier_slots().get(&SLOT).map(|bytes| String::from_utf8(bytes.clone()).unwrap())
}

/// What a power cut and a process kill of `storage` each recover: the
/// slot's value and whether `table` exists.
fn recovered(storage: &SimStorage, dir: &Path, make_config: MakeConfig, table: &str) -> Vec<(Option<String>, bool)> {
    [storage.crash_image(None), storage.process_kill_image()]
        .into_iter()
        .map(|image| {
            let (db, _) = Database::open(make_config(dir, Arc::new(image) as Arc<dyn Storage>)).unwrap();
            let found = (slot_value(&db), db.catalog().table_id(DB, table).is_ok());
            drop(db);
            found
        })
        .collect()
}

type MakeConfig = fn(&Path, Arc<dyn Storage>) -> DatabaseConfig;

fn modes() -> [(MakeConfig, &'static str); 2] {
    [(config as MakeConfig, "classic"), (engine_config, "engine mode")]
}

#[test]
fn a_crash_right_after_a_replicated_ddls_engine_part_recovers_its_position_with_it() {
    for (make_config, label) in modes() {
        let storage = SimStorage::new();
        let dir = PathBuf::from("/d");
        let config = make_config(&dir, Arc::new(storage.clone()));
        let crash = config.crash_points.clone();
        let (db, _) = Database::open(config).unwrap();
        create_schema(&db).unwrap();
        replicated_create(&db, "first", "after first").unwrap();
        assert_eq!(slot_value(&db).as_deref(), Some("after first"), "{label}: current once the DDL is");

        let frozen = storage.clone();
        crash.arm(database_points::DDL_AFTER_ENGINE, 0, move || frozen.freeze());
        assert!(replicated_create(&db, "second", "after second").is_err(), "{label}: the crash point stops the statement");
        drop(db);
        for (found, table) in recovered(&storage, &dir, make_config, "second") {
            assert!(table, "{label}: the DDL is durable at the point");
            assert_eq!(found.as_deref(), Some("after second"), "{label}: the position with it");
        }
    }
}

#[test]
fn only_the_replicated_ddl_moves_the_slot_and_a_ddl_without_a_record_commits_it_alone() {
    for (make_config, label) in modes() {
        let storage = SimStorage::new();
        let dir = PathBuf::from("/d");
        let (db, _) = Database::open(make_config(&dir, Arc::new(storage.clone()))).unwrap();
        create_schema(&db).unwrap();
        replicated_create(&db, "replicated", "after replicated").unwrap();
        // A client's DDL: no slot, the earlier value stays.
        let client = spec("client");
        db.execute_ddl(&context(1), "CREATE TABLE client (id BIGINT PRIMARY KEY)", |e| e.create_table(&client)).unwrap();
        assert_eq!(slot_value(&db).as_deref(), Some("after replicated"), "{label}");
        for (found, table) in recovered(&storage, &dir, make_config, "client") {
            assert!(table, "{label}");
            assert_eq!(found.as_deref(), Some("after replicated"), "{label}: a DDL without a slot leaves it");
        }

        // A statement whose engine part logs nothing (ALTER TABLE options).
        db.execute_replicated_ddl(&context(7), "ALTER TABLE client COMMENT=''", NextGtid::Automatic, Some(slot("after alter")), |_| Ok(()))
            .unwrap();
        assert_eq!(slot_value(&db).as_deref(), Some("after alter"), "{label}");
        for (found, _) in recovered(&storage, &dir, make_config, "client") {
            assert_eq!(found.as_deref(), Some("after alter"), "{label}: committed by itself, durable with the statement");
        }

        // A failed statement moves nothing.
        assert!(replicated_create(&db, "client", "never").is_err());
        assert_eq!(slot_value(&db).as_deref(), Some("after alter"), "{label}");
        db.close().unwrap();
        let (db, _) = Database::open(make_config(&dir, Arc::new(storage.clone()))).unwrap();
        assert_eq!(slot_value(&db).as_deref(), Some("after alter"), "{label}: after a clean restart");
        db.close().unwrap();
    }
}
