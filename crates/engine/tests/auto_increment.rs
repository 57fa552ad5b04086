//! AUTO_INCREMENT: NULL and 0 generate; explicit values move the counter.

mod support;

use binlog_format::{ColumnType, Value};
use engine::{ColumnDef, Engine, TableSpec};
use support::*;

fn counter_table(engine: &Engine, column_type: ColumnType, unsigned: bool, start: u64) -> engine::TableId {
    let mut id = ColumnDef::new("id", column_type).auto_increment();
    id.unsigned = unsigned;
    let spec = TableSpec {
        database: "d".into(),
        name: "c".into(),
        columns: vec![id, ColumnDef::new("note", ColumnType::VarChar { max_length_bytes: 10 })],
        primary_key: vec!["id".into()],
        auto_increment_start: start,
        ..Default::default()
    };
    engine.create_table(&spec).unwrap().id
}

#[test]
fn null_and_zero_generate_and_explicit_values_move_the_counter_up() {
    let engine = engine();
    let table = counter_table(&engine, ColumnType::Long, false, 0);
    let mut trx = engine.begin();
    let generated = |trx: &mut engine::Transaction, id: Value| trx.insert(table, vec![id, text("n")]).unwrap().auto_increment_value;
    assert_eq!(generated(&mut trx, Value::Null), Some(1));
    assert_eq!(generated(&mut trx, int(0)), Some(2));
    assert_eq!(generated(&mut trx, int(10)), None);
    assert_eq!(generated(&mut trx, Value::Null), Some(11));
    // A lower explicit value does not move the counter back.
    assert_eq!(generated(&mut trx, int(5)), None);
    assert_eq!(generated(&mut trx, Value::Null), Some(12));
    // Negative values are stored and leave the counter alone.
    assert_eq!(generated(&mut trx, int(-3)), None);
    assert_eq!(generated(&mut trx, Value::Null), Some(13));
    // An update to a higher value moves it too (InnoDB 8.0).
    trx.update_by_pk(table, &[int(13)], vec![int(20), text("n")]).unwrap();
    assert_eq!(generated(&mut trx, Value::Null), Some(21));
    trx.commit(None).unwrap();
    let ids: Vec<_> = committed_rows(&engine, table).into_iter().map(|row| row[0].clone()).collect();
    assert_eq!(ids, [-3, 1, 2, 5, 10, 11, 12, 20, 21].map(int));
}

#[test]
fn rolled_back_values_are_not_reused_and_truncate_resets() {
    let engine = engine();
    let table = counter_table(&engine, ColumnType::LongLong, true, 100);
    let mut doomed = engine.begin();
    assert_eq!(doomed.insert(table, vec![Value::Null, Value::Null]).unwrap().auto_increment_value, Some(100));
    doomed.rollback();
    let mut trx = engine.begin();
    let inserted = trx.insert(table, vec![Value::UInt(0), Value::Null]).unwrap();
    assert_eq!(inserted.auto_increment_value, Some(101));
    trx.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![vec![Value::UInt(101), Value::Null]]);
    engine.truncate_table("d", "c", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    let mut trx = engine.begin();
    assert_eq!(trx.insert(table, vec![Value::Null, Value::Null]).unwrap().auto_increment_value, Some(100));
}

#[test]
fn an_exhausted_counter_gives_1467() {
    let engine = engine();
    let table = counter_table(&engine, ColumnType::Tiny, false, 0);
    let mut trx = engine.begin();
    trx.insert(table, vec![int(127), Value::Null]).unwrap();
    let error = trx.insert(table, vec![Value::Null, Value::Null]).unwrap_err();
    assert_eq!(error.mysql_code(), 1467);
}
