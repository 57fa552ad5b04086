//! Duplicate keys: 1062 for primary and unique secondary keys, including
//! two transactions racing to insert the same value.

mod support;

use std::thread;

use binlog_format::Value;
use engine::EngineError;
use support::*;

fn duplicate(entry: &str, key: &str) -> EngineError {
    EngineError::DuplicateEntry { entry: entry.into(), key: key.into() }
}

#[test]
fn duplicate_primary_and_unique_keys_give_1062_with_mysql_text() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    let error = trx.insert(table, user(1, "b@x", 1)).unwrap_err();
    assert_eq!(error, duplicate("1", "users.PRIMARY"));
    assert_eq!((error.mysql_code(), error.sqlstate()), (1062, "23000"));
    assert_eq!(error.to_string(), "Duplicate entry '1' for key 'users.PRIMARY'");
    assert_eq!(trx.insert(table, user(2, "a@x", 1)).unwrap_err(), duplicate("a@x", "users.email"));
    trx.commit(None).unwrap();

    let mut other = engine.begin();
    assert_eq!(other.insert(table, user(3, "a@x", 1)).unwrap_err(), duplicate("a@x", "users.email"));
    other.insert(table, user(3, "c@x", 1)).unwrap();
    // Updating into another row's unique value fails; to its own is fine.
    assert_eq!(other.update_by_pk(table, &[int(3)], user(3, "a@x", 1)).unwrap_err(), duplicate("a@x", "users.email"));
    other.update_by_pk(table, &[int(3)], user(3, "c@x", 2)).unwrap();
    // Moving a row onto an existing primary key fails.
    assert_eq!(other.update_by_pk(table, &[int(3)], user(1, "c@x", 2)).unwrap_err(), duplicate("1", "users.PRIMARY"));
    // Moving a row to a free primary key keeps its unique value.
    other.update_by_pk(table, &[int(3)], user(4, "c@x", 2)).unwrap();
    other.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 1), user(4, "c@x", 2)]);
}

#[test]
fn nulls_never_collide_in_a_unique_index() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    trx.insert(table, vec![int(1), Value::Null, int(1)]).unwrap();
    trx.insert(table, vec![int(2), Value::Null, int(1)]).unwrap();
    trx.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table).len(), 2);
}

#[test]
fn concurrent_inserters_of_one_unique_value_the_second_waits_then_gets_1062() {
    let engine = engine();
    let table = users(&engine).id;
    let mut first = engine.begin();
    first.insert(table, user(1, "same@x", 1)).unwrap();
    let second = {
        let engine = engine.clone();
        thread::spawn(move || {
            let mut trx = engine.begin();
            let result = trx.insert(table, user(2, "same@x", 1));
            trx.commit(None).unwrap();
            result
        })
    };
    wait_for_lock_waiters(&engine, 1);
    assert!(!second.is_finished(), "the second inserter must wait for the first");
    first.commit(None).unwrap();
    assert_eq!(second.join().unwrap().unwrap_err(), duplicate("same@x", "users.email"));
    assert_eq!(committed_rows(&engine, table), vec![user(1, "same@x", 1)]);
}

#[test]
fn concurrent_inserters_of_one_unique_value_the_second_succeeds_if_the_first_rolls_back() {
    let engine = engine();
    let table = users(&engine).id;
    let mut first = engine.begin();
    first.insert(table, user(1, "same@x", 1)).unwrap();
    let second = {
        let engine = engine.clone();
        thread::spawn(move || {
            let mut trx = engine.begin();
            let result = trx.insert(table, user(2, "same@x", 1));
            trx.commit(None).unwrap();
            result
        })
    };
    wait_for_lock_waiters(&engine, 1);
    first.rollback();
    second.join().unwrap().unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(2, "same@x", 1)]);
}

#[test]
fn a_value_freed_by_an_uncommitted_delete_waits_for_that_delete() {
    let engine = engine();
    let table = users(&engine).id;
    let mut setup = engine.begin();
    setup.insert(table, user(1, "v@x", 1)).unwrap();
    setup.commit(None).unwrap();
    let mut deleter = engine.begin();
    deleter.delete_by_pk(table, &[int(1)]).unwrap();
    let inserter = {
        let engine = engine.clone();
        thread::spawn(move || {
            let mut trx = engine.begin();
            trx.insert(table, user(2, "v@x", 1)).unwrap();
            trx.commit(None).unwrap();
        })
    };
    wait_for_lock_waiters(&engine, 1);
    assert!(!inserter.is_finished());
    deleter.commit(None).unwrap();
    inserter.join().unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(2, "v@x", 1)]);
}

#[test]
fn a_unique_index_over_duplicate_rows_cannot_be_created() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 7)).unwrap();
    trx.insert(table, user(2, "b@x", 7)).unwrap();
    trx.commit(None).unwrap();
    let spec = engine::IndexSpec { name: "age_unique".into(), columns: vec!["age".into()], unique: true };
    assert_eq!(
        engine.create_index("d", "users", &spec, engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap_err(),
        duplicate("7", "users.age_unique")
    );
    let spec = engine::IndexSpec { name: "id_age".into(), columns: vec!["id".into(), "age".into()], unique: true };
    engine.create_index("d", "users", &spec, engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    let mut trx = engine.begin();
    trx.insert(table, user(3, "c@x", 7)).unwrap();
    trx.commit(None).unwrap();
}
