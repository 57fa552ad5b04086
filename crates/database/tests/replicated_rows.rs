//! A replica's row applier: a source's Table_map and rows events applied
//! to the engine, with MySQL's errors when the replica's data disagrees.

use binlog_format::{ColumnType, RowsEvent, TableMap, Value};
use database::engine::{ColumnDef, Engine, EngineConfig, ScanSpec, TableDef, TableSpec, Transaction};
use database::replicated_rows::{ReplicatedRows, SourcePosition};
use database::Catalog;

fn engine_with(primary_key: bool, unsigned: bool) -> (Engine, std::sync::Arc<TableDef>) {
    let engine = Engine::new(EngineConfig::default());
    engine.create_database("d").unwrap();
    let mut id = ColumnDef::new("id", ColumnType::Long).not_null();
    if unsigned {
        id = id.unsigned();
    }
    let spec = TableSpec {
        database: "d".into(),
        name: "t".into(),
        columns: vec![id, ColumnDef::new("v", ColumnType::VarChar { max_length_bytes: 80 })],
        primary_key: if primary_key { vec!["id".into()] } else { Vec::new() },
        ..Default::default()
    };
    let def = engine.create_table(&spec).unwrap();
    (engine, def)
}

fn source_map(def: &TableDef) -> TableMap {
    TableMap::new(77, &def.database, &def.name, &def.column_specs(), &def.primary_key).unwrap()
}

fn row(id: i64, v: &str) -> Vec<Value> {
    vec![Value::Int(id), Value::Bytes(v.as_bytes().to_vec())]
}

fn at() -> SourcePosition<'static> {
    SourcePosition { log_file: "binlog.000003", end_log_pos: 4242 }
}

fn rows_of(engine: &Engine, def: &TableDef) -> Vec<Vec<Value>> {
    let trx = engine.begin();
    let rows = trx.scan(def.id, &ScanSpec::primary()).unwrap().map(|(_, row)| row).collect();
    trx.rollback();
    rows
}

fn apply(engine: &Engine, map: &TableMap, events: &[RowsEvent]) -> Result<(), database::replicated_rows::ApplyError> {
    let mut trx: Transaction = engine.begin();
    let mut applier = ReplicatedRows::new();
    applier.table_map(Catalog::new(engine), map)?;
    for event in events {
        if let Err(error) = applier.rows(&mut trx, event, &at()) {
            trx.rollback();
            return Err(error);
        }
    }
    trx.commit(None).unwrap();
    Ok(())
}

#[test]
fn writes_updates_and_deletes_apply_by_primary_key() {
    let (engine, def) = engine_with(true, false);
    let map = source_map(&def);
    apply(&engine, &map, &[RowsEvent::write(77, &map, &[row(1, "a"), row(2, "b"), row(3, "c")]).unwrap()]).unwrap();
    apply(
        &engine,
        &map,
        &[RowsEvent::update(77, &map, &[(row(2, "b"), row(20, "bb"))]).unwrap(), RowsEvent::delete(77, &map, &[row(1, "a")]).unwrap()],
    )
    .unwrap();
    assert_eq!(rows_of(&engine, &def), vec![row(3, "c"), row(20, "bb")]);
}

#[test]
fn a_missing_row_is_1032_and_a_duplicate_is_1062_with_mysqls_message() {
    let (engine, def) = engine_with(true, false);
    let map = source_map(&def);
    apply(&engine, &map, &[RowsEvent::write(77, &map, &[row(1, "a")]).unwrap()]).unwrap();

    let error = apply(&engine, &map, &[RowsEvent::update(77, &map, &[(row(9, "x"), row(9, "y"))]).unwrap()]).unwrap_err();
    assert_eq!(error.code, 1032);
    assert_eq!(
        error.message,
        "Could not execute Update_rows event on table d.t; Can't find record in 't', Error_code: 1032; \
         handler error HA_ERR_KEY_NOT_FOUND; the event's source log binlog.000003, end_log_pos 4242"
    );
    let error = apply(&engine, &map, &[RowsEvent::delete(77, &map, &[row(9, "x")]).unwrap()]).unwrap_err();
    assert_eq!(error.code, 1032);
    assert!(error.message.starts_with("Could not execute Delete_rows event on table d.t;"), "{}", error.message);

    // The whole transaction is rolled back: row 2 is not left behind.
    let error = apply(&engine, &map, &[RowsEvent::write(77, &map, &[row(2, "b"), row(1, "dup")]).unwrap()]).unwrap_err();
    assert_eq!(error.code, 1062);
    assert!(
        error.message.contains("Duplicate entry '1' for key 't.PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY"),
        "{}",
        error.message
    );
    assert_eq!(rows_of(&engine, &def), vec![row(1, "a")]);
}

#[test]
fn a_table_the_replica_lacks_is_1146() {
    let (engine, def) = engine_with(true, false);
    let mut map = source_map(&def);
    map.table = b"gone".to_vec();
    let error = apply(&engine, &map, &[]).unwrap_err();
    assert_eq!(error.code, 1146);
    assert_eq!(error.message, "Error executing row event: 'Table 'd.gone' doesn't exist'");
}

#[test]
fn without_a_primary_key_one_equal_row_changes() {
    let (engine, def) = engine_with(false, false);
    let map = source_map(&def);
    apply(&engine, &map, &[RowsEvent::write(77, &map, &[row(1, "same"), row(1, "same"), row(2, "other")]).unwrap()]).unwrap();
    apply(&engine, &map, &[RowsEvent::update(77, &map, &[(row(1, "same"), row(5, "changed"))]).unwrap()]).unwrap();
    apply(&engine, &map, &[RowsEvent::delete(77, &map, &[row(2, "other")]).unwrap()]).unwrap();
    let mut rows = rows_of(&engine, &def);
    rows.sort_by_key(|row| format!("{row:?}"));
    assert_eq!(rows, vec![row(1, "same"), row(5, "changed")]);
    let error = apply(&engine, &map, &[RowsEvent::delete(77, &map, &[row(2, "other")]).unwrap()]).unwrap_err();
    assert_eq!(error.code, 1032);
}

#[test]
fn unsigned_columns_decode_with_the_replicas_signedness() {
    let (engine, def) = engine_with(true, true);
    // A source map without SIGNEDNESS metadata: the bytes of 4294967295
    // would decode as -1 and fail the UNSIGNED column's range check.
    let mut map = source_map(&def);
    let event = RowsEvent::write(77, &map, &[vec![Value::UInt(4_294_967_295), Value::Bytes(b"max".to_vec())]]).unwrap();
    map.optional_metadata.retain(|field| !matches!(field, binlog_format::events::OptionalMetadata::Signedness(_)));
    apply(&engine, &map, &[event]).unwrap();
    assert_eq!(rows_of(&engine, &def), vec![vec![Value::UInt(4_294_967_295), Value::Bytes(b"max".to_vec())]]);
}

fn body_of(map: &TableMap) -> Vec<u8> {
    let mut body = Vec::new();
    map.encode_body(&mut body);
    body
}

#[test]
fn a_table_map_seen_again_byte_for_byte_maps_its_table_without_decoding() {
    let (engine, def) = engine_with(true, false);
    let map = source_map(&def);
    let body = body_of(&map);
    let catalog = Catalog::new(&engine);
    let mut applier = ReplicatedRows::new();
    let mut trx = engine.begin();
    applier.table_map_event(catalog, &map, &body).unwrap();
    applier.rows(&mut trx, &RowsEvent::write(77, &map, &[row(1, "a")]).unwrap(), &at()).unwrap();

    // The next transaction must map the table again before its rows.
    applier.begin_transaction();
    let error = applier.rows(&mut trx, &RowsEvent::write(77, &map, &[row(2, "b")]).unwrap(), &at()).unwrap_err();
    assert_eq!(error.code, 1032);
    assert!(error.message.contains("no Table_map for table id 77"), "{}", error.message);

    assert!(applier.table_map_again(catalog, &body).unwrap());
    applier.rows(&mut trx, &RowsEvent::write(77, &map, &[row(2, "b")]).unwrap(), &at()).unwrap();
    // Another id, or other bytes under the same id, must be decoded.
    let mut other = map.clone();
    other.table_id = 78;
    assert!(!applier.table_map_again(catalog, &body_of(&other)).unwrap());
    let mut renamed = map.clone();
    renamed.table = b"u".to_vec();
    assert!(!applier.table_map_again(catalog, &body_of(&renamed)).unwrap());
    trx.commit(None).unwrap();
    assert_eq!(rows_of(&engine, &def), vec![row(1, "a"), row(2, "b")]);
}

#[test]
fn a_table_map_seen_again_after_ddl_takes_the_new_definition() {
    let (engine, def) = engine_with(true, false);
    // A source map without SIGNEDNESS: the replica's columns decide.
    let mut map = source_map(&def);
    map.optional_metadata.retain(|field| !matches!(field, binlog_format::events::OptionalMetadata::Signedness(_)));
    let body = body_of(&map);
    let catalog = Catalog::new(&engine);
    let mut applier = ReplicatedRows::new();
    applier.table_map_event(catalog, &map, &body).unwrap();

    // The table is made again with an UNSIGNED id (a new table id here).
    engine.drop_table("d", "t", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    let unsigned_def = {
        let spec = TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef::new("id", ColumnType::Long).not_null().unsigned(),
                ColumnDef::new("v", ColumnType::VarChar { max_length_bytes: 80 }),
            ],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        engine.create_table(&spec).unwrap()
    };
    applier.begin_transaction();
    assert!(applier.table_map_again(catalog, &body).unwrap());
    let unsigned_map = source_map(&unsigned_def);
    let event = RowsEvent::write(77, &unsigned_map, &[vec![Value::UInt(4_294_967_295), Value::Bytes(b"max".to_vec())]]).unwrap();
    let mut trx = engine.begin();
    applier.rows(&mut trx, &event, &at()).unwrap();
    trx.commit(None).unwrap();
    assert_eq!(rows_of(&engine, &unsigned_def), vec![vec![Value::UInt(4_294_967_295), Value::Bytes(b"max".to_vec())]]);

    // Dropped: 1146, as a decoded map gets.
    engine.drop_table("d", "t", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    applier.begin_transaction();
    assert_eq!(applier.table_map_again(catalog, &body).unwrap_err().code, 1146);
}
