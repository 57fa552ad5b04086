//! binlogd_engine_memory_limit: writes past it fail with 1114, and the
//! engine keeps working.

mod support;

use engine::EngineError;
use support::*;

#[test]
fn writes_past_the_memory_limit_fail_with_1114_and_deletes_make_room() {
    let engine = engine();
    let table = users(&engine).id;
    engine.set_memory_limit_bytes(engine.memory_used_bytes() + 64 * 1024);
    let mut trx = engine.begin();
    let mut inserted = 0;
    let error = loop {
        match trx.insert(table, user(inserted, &format!("user{inserted}@example.com"), 1)) {
            Ok(_) => inserted += 1,
            Err(error) => break error,
        }
        assert!(inserted < 100_000, "the limit never applied");
    };
    assert_eq!(error, EngineError::TableFull { table: "users".into() });
    assert_eq!((error.mysql_code(), error.sqlstate()), (1114, "HY000"));
    assert_eq!(error.to_string(), "The table 'users' is full");
    assert!(inserted > 10);
    assert!(engine.memory_used_bytes() <= engine.memory_limit_bytes());
    // The failed insert left nothing behind; the transaction goes on.
    assert_eq!(trx.changes().len(), inserted as usize);
    trx.commit(None).unwrap();

    // Deletes are allowed when full; once purged, their room is reusable.
    let mut cleaner = engine.begin();
    for id in 0..inserted / 2 {
        assert!(cleaner.delete_by_pk(table, &[int(id)]).unwrap());
    }
    cleaner.commit(None).unwrap();
    engine.purge();
    let mut again = engine.begin();
    again.insert(table, user(1_000_000, "new@example.com", 1)).unwrap();
    again.commit(None).unwrap();
}

#[test]
fn memory_comes_back_after_rollback_truncate_and_drop() {
    let engine = engine();
    let baseline = engine.memory_used_bytes();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    for id in 0..100 {
        trx.insert(table, user(id, &format!("{id}@x"), id)).unwrap();
    }
    assert!(engine.memory_used_bytes() > baseline);
    trx.rollback();
    assert_eq!(engine.memory_used_bytes(), baseline);

    let mut trx = engine.begin();
    for id in 0..100 {
        trx.insert(table, user(id, &format!("{id}@x"), id)).unwrap();
    }
    trx.commit(None).unwrap();
    let mut updater = engine.begin();
    for id in 0..100 {
        updater.update_by_pk(table, &[int(id)], user(id, &format!("{id}@y"), id + 1)).unwrap();
    }
    updater.commit(None).unwrap();
    engine.purge();
    let one_version_each = engine.memory_used_bytes();
    engine.truncate_table("d", "users", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    assert_eq!(engine.memory_used_bytes(), baseline);
    assert!(one_version_each > baseline);
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    trx.commit(None).unwrap();
    engine.drop_table("d", "users", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    assert_eq!(engine.memory_used_bytes(), baseline);
}

#[test]
fn a_tables_size_is_its_share_of_the_memory_account_split_into_data_and_index() {
    let engine = engine();
    let baseline = engine.memory_used_bytes();
    let table = users(&engine).id;
    let size = || engine.table_size(table).unwrap();
    let counted = |size: engine::TableSize| size.data_bytes + size.index_bytes;
    assert_eq!(size(), engine::TableSize::default());

    let mut trx = engine.begin();
    for id in 0..100 {
        trx.insert(table, user(id, &format!("{id}@x"), id)).unwrap();
    }
    trx.commit(None).unwrap();
    let inserted = size();
    assert_eq!(inserted.rows, 100);
    assert!(inserted.data_bytes > 0 && inserted.index_bytes > 0, "{inserted:?}");
    assert_eq!(counted(inserted), engine.memory_used_bytes() - baseline);

    // A new email is a new entry of its unique index; purge drops the old one.
    let mut updater = engine.begin();
    for id in 0..50 {
        updater.update_by_pk(table, &[int(id)], user(id, &format!("{id}@y"), id)).unwrap();
    }
    updater.commit(None).unwrap();
    assert_eq!(counted(size()), engine.memory_used_bytes() - baseline);
    engine.purge();
    assert_eq!((size().rows, size().index_bytes), (100, inserted.index_bytes));
    assert_eq!(counted(size()), engine.memory_used_bytes() - baseline);

    let mut deleter = engine.begin();
    for id in 0..10 {
        deleter.delete_by_pk(table, &[int(id)]).unwrap();
    }
    deleter.commit(None).unwrap();
    engine.purge();
    assert_eq!(size().rows, 90);
    assert_eq!(counted(size()), engine.memory_used_bytes() - baseline);
    engine.truncate_table("d", "users", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    assert_eq!(size(), engine::TableSize::default());
}
