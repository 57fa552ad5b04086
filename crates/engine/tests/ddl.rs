//! DDL: databases, tables, indexes, and their MySQL error codes.

mod support;

use binlog_format::ColumnType;
use engine::{ColumnDef, IndexSpec, ScanSpec, TableSpec};
use support::*;

fn spec(database: &str, name: &str) -> TableSpec {
    TableSpec {
        database: database.into(),
        name: name.into(),
        columns: vec![ColumnDef::new("k", ColumnType::Long), ColumnDef::new("v", ColumnType::Long)],
        primary_key: vec!["k".into()],
        ..Default::default()
    }
}

#[test]
fn databases_and_tables_report_mysql_errors() {
    let engine = engine();
    assert_eq!(engine.create_database("d").unwrap_err().mysql_code(), 1007);
    assert_eq!(engine.drop_database("nope", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap_err().mysql_code(), 1008);
    assert_eq!(engine.create_table(&spec("nope", "t")).unwrap_err().mysql_code(), 1049);
    let first = engine.create_table(&spec("d", "t")).unwrap();
    assert_eq!(engine.create_table(&spec("d", "t")).unwrap_err().mysql_code(), 1050);
    assert_eq!(
        engine.drop_table("d", "nope", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap_err().to_string(),
        "Unknown table 'd.nope'"
    );
    assert_eq!(engine.tables("d").unwrap(), vec!["t".to_string()]);
    assert_eq!(engine.drop_table("d", "t", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap(), first.id);
    // A re-created table is a new table.
    let second = engine.create_table(&spec("d", "t")).unwrap();
    assert_ne!(second.id, first.id);
    assert!(engine.table_def(first.id).is_none());
    engine.create_table(&spec("d", "u")).unwrap();
    let mut dropped = engine.drop_database("d", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    dropped.sort_unstable();
    assert_eq!(dropped.len(), 2);
    assert!(engine.databases().is_empty());
    assert_eq!(engine.table_id("d", "t").unwrap_err().mysql_code(), 1146);
}

#[test]
fn indexes_are_created_over_existing_rows_and_dropped() {
    let engine = engine();
    let table = engine.create_table(&spec("d", "t")).unwrap().id;
    let mut trx = engine.begin();
    for k in 0..10 {
        trx.insert(table, vec![int(k), int(9 - k)]).unwrap();
    }
    trx.commit(None).unwrap();
    let index = IndexSpec { name: "v".into(), columns: vec!["v".into()], unique: false };
    let def = engine.create_index("d", "t", &index, engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    assert_eq!(def.indexes.len(), 1);
    assert_eq!(engine.create_index("d", "t", &index, engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap_err().mysql_code(), 1061);
    let trx = engine.begin();
    let keys: Vec<_> = trx.scan(table, &ScanSpec::index("v")).unwrap().map(|(_, row)| row[0].clone()).collect();
    assert_eq!(keys, (0..10).rev().map(int).collect::<Vec<_>>());
    drop(trx);
    let first_id = def.indexes[0].id;
    engine.drop_index("d", "t", "V", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    // A re-created index is a new index.
    let again = engine.create_index("d", "t", &index, engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    assert_ne!(again.indexes[0].id, first_id);
    engine.drop_index("d", "t", "V", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    assert_eq!(engine.drop_index("d", "t", "v", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap_err().mysql_code(), 1091);
    assert_eq!(engine.drop_index("d", "t", "PRIMARY", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap_err().mysql_code(), 1091);
    let trx = engine.begin();
    assert_eq!(trx.scan(table, &ScanSpec::index("v")).err().unwrap().mysql_code(), 1176);
}

#[test]
fn table_definitions_give_the_binlog_its_column_specs() {
    let engine = engine();
    let def = users(&engine);
    let specs = def.column_specs();
    assert_eq!(specs.len(), 3);
    assert_eq!(specs[0].name, "id");
    assert!(!specs[0].nullable, "primary key columns are NOT NULL");
    assert_eq!(def.qualified_name(), "d.users");
}
