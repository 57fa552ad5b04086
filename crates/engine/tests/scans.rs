//! Ordered scans with bounds, unions of ranges, composite keys, reverse
//! order, tables without a primary key, and WHERE-style updates and
//! deletes.

mod support;

use std::ops::Bound::{Excluded, Included, Unbounded};

use binlog_format::{ColumnType, Value};
use engine::{ColumnDef, IndexSpec, ScanSpec, TableSpec};
use support::*;

fn ids(rows: impl Iterator<Item = (engine::RowKey, engine::Row)>) -> Vec<Value> {
    rows.map(|(_, row)| row[0].clone()).collect()
}

#[test]
fn primary_key_bounds_and_reverse_order() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    for id in [-5, 0, 3, 7, 200, 1000] {
        trx.insert(table, user(id, &format!("{id}@x"), id % 4)).unwrap();
    }
    trx.commit(None).unwrap();
    let trx = engine.begin();
    let scan = |spec: ScanSpec| ids(trx.scan(table, &spec).unwrap());
    assert_eq!(scan(ScanSpec::primary()), [-5, 0, 3, 7, 200, 1000].map(int));
    assert_eq!(scan(ScanSpec::primary().lower(Included(vec![int(0)])).upper(Excluded(vec![int(200)]))), [0, 3, 7].map(int));
    assert_eq!(scan(ScanSpec::primary().lower(Excluded(vec![int(0)])).upper(Included(vec![int(200)]))), [3, 7, 200].map(int));
    assert_eq!(scan(ScanSpec::primary().upper(Included(vec![int(3)])).reversed()), [3, 0, -5].map(int));
    assert_eq!(scan(ScanSpec::primary().lower(Included(vec![int(8)])).upper(Excluded(vec![int(8)]))), vec![]);
    assert_eq!(scan(ScanSpec::primary().lower(Included(vec![int(9)])).upper(Included(vec![int(1)]))), vec![]);
    // A non-unique index orders ties by primary key.
    // Ages are id % 4: -1, 0, 3, 3, 0, 0.
    assert_eq!(scan(ScanSpec::index("age").equal(vec![int(0)])), [0, 200, 1000].map(int));
    assert_eq!(scan(ScanSpec::index("age").equal(vec![int(0)]).reversed()), [1000, 200, 0].map(int));
    assert_eq!(scan(ScanSpec::index("AGE").lower(Excluded(vec![int(0)]))), [3, 7].map(int));
    assert_eq!(scan(ScanSpec::index("age").upper(Excluded(vec![int(0)]))), [-5].map(int));
    assert_eq!(trx.scan(table, &ScanSpec::index("nope")).err().unwrap().mysql_code(), 1176);
}

#[test]
fn a_union_of_ranges_reads_each_row_once_in_key_order() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    // More rows than a batch, so ranges end and start inside batches.
    for id in 0..300 {
        trx.insert(table, user(id, &format!("{id}@x"), id % 7)).unwrap();
    }
    trx.commit(None).unwrap();
    let trx = engine.begin();
    let scan = |spec: ScanSpec| ids(trx.scan(table, &spec).unwrap());
    let range = |low: i64, high: i64| (Included(vec![int(low)]), Included(vec![int(high)]));
    let union = |ranges: Vec<engine::KeyRange>| {
        let mut spec = ScanSpec::primary();
        let mut ranges = ranges.into_iter();
        (spec.lower, spec.upper) = ranges.next().unwrap();
        spec.more_ranges = ranges.collect();
        spec
    };
    // Unordered, overlapping, touching, repeated and empty ranges.
    let spec = union(vec![range(250, 260), range(5, 7), range(6, 9), range(10, 10), range(5, 7), range(90, 80), range(100, 170)]);
    let expected: Vec<Value> = (5..=10).chain(100..=170).chain(250..=260).map(int).collect();
    assert_eq!(scan(spec.clone()), expected);
    assert_eq!(scan(spec.reversed()), expected.iter().rev().cloned().collect::<Vec<_>>());
    // Unbounded ends swallow what they reach.
    let spec = union(vec![range(280, 281), (Unbounded, Excluded(vec![int(3)])), (Included(vec![int(295)]), Unbounded), range(2, 4)]);
    assert_eq!(scan(spec), [0, 1, 2, 3, 4, 280, 281, 295, 296, 297, 298, 299].map(int));
    // Only empty ranges: nothing.
    assert_eq!(scan(union(vec![range(9, 1), range(500, 600)])), vec![]);
    // On a non-unique index: every row of each age once, by age then id.
    let mut by_age = ScanSpec::index("age").equal(vec![int(6)]);
    by_age.more_ranges = vec![range(1, 1), range(6, 6)];
    let expected: Vec<Value> = (0..300).filter(|id| id % 7 == 1).chain((0..300).filter(|id| id % 7 == 6)).map(int).collect();
    assert_eq!(scan(by_age), expected);
}

#[test]
fn composite_keys_scan_by_prefix_and_long_scans_cross_batches() {
    let engine = engine();
    let spec = TableSpec {
        database: "d".into(),
        name: "events".into(),
        columns: vec![
            ColumnDef::new("day", ColumnType::Date),
            ColumnDef::new("seq", ColumnType::Long).unsigned(),
            ColumnDef::new("amount", ColumnType::NewDecimal { precision: 10, scale: 3 }),
        ],
        primary_key: vec!["day".into(), "seq".into()],
        indexes: vec![IndexSpec { name: "amount".into(), columns: vec!["amount".into()], unique: false }],
        ..Default::default()
    };
    let table = engine.create_table(&spec).unwrap().id;
    let day = |d: u8| Value::Date { year: 2024, month: 3, day: d };
    let mut trx = engine.begin();
    for d in 1..=3u8 {
        for seq in 0..1500u64 {
            let amount = format!("{}{}.{:03}", if seq % 2 == 0 { "-" } else { "" }, seq, d);
            trx.insert(table, vec![day(d), Value::UInt(seq), Value::Decimal(amount)]).unwrap();
        }
    }
    trx.commit(None).unwrap();
    let trx = engine.begin();
    let day_two: Vec<_> = trx.scan(table, &ScanSpec::primary().equal(vec![day(2)])).unwrap().map(|(_, row)| row).collect();
    assert_eq!(day_two.len(), 1500);
    assert!(day_two.iter().enumerate().all(|(seq, row)| row[0] == day(2) && row[1] == Value::UInt(seq as u64)));
    let after_day_one = trx.scan(table, &ScanSpec::primary().lower(Excluded(vec![day(1)]))).unwrap().count();
    assert_eq!(after_day_one, 3000);
    // Decimal order: the most negative first.
    let amounts: Vec<_> = trx.scan(table, &ScanSpec::index("amount")).unwrap().take(2).map(|(_, row)| row[2].clone()).collect();
    assert_eq!(amounts, vec![Value::Decimal("-1498.003".into()), Value::Decimal("-1498.002".into())]);
    let non_negative = trx.scan(table, &ScanSpec::index("amount").lower(Included(vec![Value::Decimal("0".into())]))).unwrap().count();
    assert_eq!(non_negative, 3 * 750);
}

#[test]
fn tables_without_a_primary_key_keep_equal_rows_apart() {
    let engine = engine();
    let spec = TableSpec {
        database: "d".into(),
        name: "log".into(),
        columns: vec![ColumnDef::new("message", ColumnType::Blob { length_bytes: 2 })],
        ..Default::default()
    };
    let table = engine.create_table(&spec).unwrap().id;
    let mut trx = engine.begin();
    let first = trx.insert(table, vec![text("same")]).unwrap().key;
    trx.insert(table, vec![text("same")]).unwrap();
    trx.insert(table, vec![text("other")]).unwrap();
    assert_eq!(trx.changes()[1].hidden_row_id, Some(2));
    trx.commit(None).unwrap();
    let mut trx = engine.begin();
    assert!(trx.delete(table, &first).unwrap());
    assert_eq!(trx.changes()[0].hidden_row_id, Some(1));
    let updated = trx.update_where(table, &ScanSpec::primary(), |row| row[0] == text("other"), |_| vec![text("changed")]).unwrap();
    assert_eq!((updated.matched, updated.changed), (1, 1));
    trx.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![vec![text("same")], vec![text("changed")]]);
    let trx = engine.begin();
    assert_eq!(trx.scan(table, &ScanSpec::primary().lower(Included(vec![int(1)]))).err().unwrap().mysql_code(), 1176);
}

#[test]
fn update_where_and_delete_where_are_atomic_statements() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    for id in 1..=5 {
        trx.insert(table, user(id, &format!("{id}@x"), id)).unwrap();
    }
    trx.commit(None).unwrap();
    let mut trx = engine.begin();
    // Setting every email to the same value fails on the second row: the
    // first row's change is undone with the statement.
    let error =
        trx.update_where(table, &ScanSpec::primary(), |_| true, |row| vec![row[0].clone(), text("same"), row[2].clone()]).unwrap_err();
    assert_eq!(error.mysql_code(), 1062);
    assert!(trx.changes().is_empty());
    let counts = trx
        .update_where(
            table,
            &ScanSpec::index("age").lower(Included(vec![int(4)])),
            |_| true,
            |row| vec![row[0].clone(), row[1].clone(), int(0)],
        )
        .unwrap();
    assert_eq!((counts.matched, counts.changed), (2, 2));
    let deleted = trx.delete_where(table, &ScanSpec::index("age").equal(vec![int(0)]), |row| row[0] == int(5)).unwrap();
    assert_eq!(deleted, 1);
    trx.commit(None).unwrap();
    let ages: Vec<_> = committed_rows(&engine, table).into_iter().map(|row| (row[0].clone(), row[2].clone())).collect();
    assert_eq!(ages, vec![(int(1), int(1)), (int(2), int(2)), (int(3), int(3)), (int(4), int(0))]);
}

#[test]
fn unknown_tables_columns_and_bad_rows_get_their_codes() {
    let engine = engine();
    let def = users(&engine);
    assert_eq!(engine.table_id("d", "nope").unwrap_err().mysql_code(), 1146);
    assert_eq!(def.column_index("nope").unwrap_err().mysql_code(), 1054);
    let mut trx = engine.begin();
    assert_eq!(trx.insert(def.id, vec![int(1)]).unwrap_err().mysql_code(), 1136);
    assert_eq!(trx.insert(def.id, vec![Value::Null, Value::Null, Value::Null]).unwrap_err().mysql_code(), 1048);
    assert_eq!(trx.insert(def.id, vec![int(1), int(2), int(3)]).unwrap_err().mysql_code(), 1366);
    assert_eq!(trx.insert(def.id + 100, user(1, "a", 1)).unwrap_err().mysql_code(), 1146);
    assert!(trx.changes().is_empty());
    let _ = Unbounded::<()>;
}

#[test]
fn shared_rows_are_the_same_snapshot_as_owned_rows_and_outlive_later_writes() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    for id in 1..=3 {
        trx.insert(table, user(id, &format!("{id}@x"), id)).unwrap();
    }
    trx.commit(None).unwrap();
    // A reader holds shared rows; a writer then changes one and commits.
    let reader = engine.begin();
    let mut scan = reader.scan(table, &ScanSpec::primary()).unwrap().rows_only();
    let mut shared = Vec::new();
    while let Some(row) = scan.next_shared() {
        shared.push(row);
    }
    let mut writer = engine.begin();
    let key = writer.scan(table, &ScanSpec::primary().equal(vec![int(2)])).unwrap().next().unwrap().0;
    writer.update(table, &key, user(2, "changed@x", 20)).unwrap();
    writer.commit(None).unwrap();
    let shared: Vec<engine::Row> = shared.iter().map(|row| row.as_ref().clone()).collect();
    assert_eq!(shared, vec![user(1, "1@x", 1), user(2, "2@x", 2), user(3, "3@x", 3)], "what the reader saw stays as it saw it");
    // The reader's snapshot reads the same rows owned or shared; its own
    // uncommitted insert shows in both.
    let mut reader = reader;
    reader.insert(table, user(4, "4@x", 4)).unwrap();
    let owned: Vec<engine::Row> = reader.scan(table, &ScanSpec::primary()).unwrap().map(|(_, row)| row).collect();
    let mut scan = reader.scan(table, &ScanSpec::index("age").lower(Included(vec![int(0)]))).unwrap().rows_only();
    let mut again = Vec::new();
    while let Some(row) = scan.next_shared() {
        again.push(row.as_ref().clone());
    }
    assert_eq!(owned, vec![user(1, "1@x", 1), user(2, "2@x", 2), user(3, "3@x", 3), user(4, "4@x", 4)]);
    assert_eq!(again, owned);
}
