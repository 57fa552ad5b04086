//! Row lock waits, innodb_lock_wait_timeout (1205) and deadlocks (1213).

mod support;

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use engine::EngineError;
use support::*;

#[test]
fn a_lock_wait_times_out_with_1205_and_the_transaction_stays_usable() {
    let engine = engine();
    let table = users(&engine).id;
    let mut setup = engine.begin();
    setup.insert(table, user(1, "a@x", 1)).unwrap();
    setup.commit(None).unwrap();

    let mut holder = engine.begin();
    holder.update_by_pk(table, &[int(1)], user(1, "a@x", 2)).unwrap();
    engine.set_lock_wait_timeout(Duration::from_millis(200));
    let mut waiter = engine.begin();
    waiter.insert(table, user(2, "b@x", 1)).unwrap();
    let started = Instant::now();
    let error = waiter.update_by_pk(table, &[int(1)], user(1, "a@x", 3)).unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!((error.mysql_code(), error.sqlstate()), (1205, "HY000"));
    assert_eq!(error.to_string(), "Lock wait timeout exceeded; try restarting transaction");
    // Only the statement failed: the earlier insert is still there.
    assert!(waiter.is_active());
    assert_eq!(waiter.changes().len(), 1);
    holder.commit(None).unwrap();
    waiter.update_by_pk(table, &[int(1)], user(1, "a@x", 3)).unwrap();
    waiter.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 3), user(2, "b@x", 1)]);
}

#[test]
fn a_waiter_proceeds_when_the_holder_commits_and_sees_its_row() {
    let engine = engine();
    let table = users(&engine).id;
    let mut setup = engine.begin();
    setup.insert(table, user(1, "a@x", 10)).unwrap();
    setup.commit(None).unwrap();

    let mut holder = engine.begin();
    holder.update_by_pk(table, &[int(1)], user(1, "a@x", 11)).unwrap();
    let waiter = {
        let engine = engine.clone();
        thread::spawn(move || {
            let mut trx = engine.begin();
            // Acts on the latest committed row once the lock is free.
            let counts = trx
                .update_where(
                    table,
                    &engine::ScanSpec::primary(),
                    |_| true,
                    |row| {
                        let engine_age = match row[2] {
                            binlog_format::Value::Int(age) => age,
                            _ => unreachable!(),
                        };
                        user(1, "a@x", engine_age + 1)
                    },
                )
                .unwrap();
            trx.commit(None).unwrap();
            counts.changed
        })
    };
    wait_for_lock_waiters(&engine, 1);
    holder.commit(None).unwrap();
    assert_eq!(waiter.join().unwrap(), 1);
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 12)]);
}

#[test]
fn a_two_transaction_deadlock_rolls_back_the_victim_and_the_other_proceeds() {
    let engine = engine();
    let table = users(&engine).id;
    let mut setup = engine.begin();
    setup.insert(table, user(1, "a@x", 1)).unwrap();
    setup.insert(table, user(2, "b@x", 1)).unwrap();
    setup.commit(None).unwrap();

    let mut first = engine.begin();
    first.update_by_pk(table, &[int(1)], user(1, "a@x", 100)).unwrap();
    let (locked_two, second_locked) = mpsc::channel();
    let second = {
        let engine = engine.clone();
        thread::spawn(move || {
            let mut trx = engine.begin();
            trx.update_by_pk(table, &[int(2)], user(2, "b@x", 200)).unwrap();
            locked_two.send(()).unwrap();
            // Waits for `first`, which will then wait for us: one of the two
            // requests closes the cycle.
            let result = trx.update_by_pk(table, &[int(1)], user(1, "a@x", 200));
            (result, trx)
        })
    };
    second_locked.recv().unwrap();
    wait_for_lock_waiters(&engine, 1);
    let error = first.update_by_pk(table, &[int(2)], user(2, "b@x", 100)).unwrap_err();
    assert_eq!(error, EngineError::Deadlock);
    assert_eq!((error.mysql_code(), error.sqlstate()), (1213, "40001"));
    assert_eq!(error.to_string(), "Deadlock found when trying to get lock; try restarting transaction");
    // The victim was rolled back whole: its locks are gone and its changes undone.
    assert!(!first.is_active());
    assert!(first.changes().is_empty());
    let (result, trx) = second.join().unwrap();
    result.unwrap();
    trx.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 200), user(2, "b@x", 200)]);
    // A rolled-back transaction refuses further work.
    assert!(first.insert(table, user(3, "c@x", 1)).is_err());
}

#[test]
fn ddl_waits_for_writers_and_times_out_with_1205() {
    let engine = engine();
    let table = users(&engine).id;
    let mut writer = engine.begin();
    writer.insert(table, user(1, "a@x", 1)).unwrap();
    // The wait is the caller's `lock_wait_timeout`, not the engine's row lock wait.
    engine.set_lock_wait_timeout(Duration::from_secs(3600));
    assert_eq!(engine.truncate_table("d", "users", Duration::from_millis(100)).unwrap_err().mysql_code(), 1205);
    writer.commit(None).unwrap();
    engine.truncate_table("d", "users", engine::METADATA_LOCK_WAIT_TIMEOUT_DEFAULT).unwrap();
    assert!(committed_rows(&engine, table).is_empty());
}

/// `d.plain (id BIGINT PRIMARY KEY, v INT)`: no unique secondary index, so
/// new rows are inserted without a row lock.
fn plain_table(engine: &engine::Engine) -> engine::TableId {
    let spec = engine::TableSpec {
        database: "d".into(),
        name: "plain".into(),
        columns: vec![
            engine::ColumnDef::new("id", binlog_format::ColumnType::LongLong),
            engine::ColumnDef::new("v", binlog_format::ColumnType::Long),
        ],
        primary_key: vec!["id".into()],
        ..Default::default()
    };
    engine.create_table(&spec).unwrap().id
}

#[test]
fn a_row_inserted_without_a_lock_still_makes_others_wait_for_its_inserter() {
    let engine = engine();
    let table = plain_table(&engine);
    let mut inserter = engine.begin();
    for id in 0..100 {
        inserter.insert(table, vec![int(id), int(0)]).unwrap();
    }
    engine.set_lock_wait_timeout(Duration::from_millis(100));
    // Update, delete, a second insert and SELECT ... FOR UPDATE of one of
    // its rows all wait for the inserter (its implicit lock made explicit).
    let mut other = engine.begin();
    let waits = [
        other.update_by_pk(table, &[int(5)], vec![int(5), int(1)]).map(drop).unwrap_err(),
        other.delete_by_pk(table, &[int(6)]).map(drop).unwrap_err(),
        other.insert(table, vec![int(7), int(1)]).map(drop).unwrap_err(),
        {
            let key = other.primary_key(table, &[int(8)]).unwrap();
            other.get_for_update(table, &key).map(drop).unwrap_err()
        },
    ];
    assert!(waits.iter().all(|error| *error == EngineError::LockWaitTimeout), "{waits:?}");
    // The inserter's own rows are its to change.
    inserter.update_by_pk(table, &[int(9)], vec![int(9), int(9)]).unwrap();

    engine.set_lock_wait_timeout(Duration::from_secs(5));
    let (sender, receiver) = mpsc::channel();
    let waiter = {
        let engine = engine.clone();
        thread::spawn(move || {
            let mut other = engine.begin();
            let updated = other.update_by_pk(table, &[int(5)], vec![int(5), int(1)]);
            sender.send(()).unwrap();
            updated.unwrap();
            // A second insert of a row the inserter committed is a duplicate.
            assert_eq!(other.insert(table, vec![int(7), int(1)]).unwrap_err().mysql_code(), 1062);
            other.commit(None).unwrap();
        })
    };
    wait_for_lock_waiters(&engine, 1);
    assert!(receiver.try_recv().is_err(), "the update did not wait");
    inserter.commit(None).unwrap();
    waiter.join().unwrap();
    // Every lock is gone: others take the inserter's rows at once.
    engine.set_lock_wait_timeout(Duration::ZERO);
    let mut after = engine.begin();
    for id in 0..100 {
        after.update_by_pk(table, &[int(id)], vec![int(id), int(2)]).unwrap();
    }
    after.commit(None).unwrap();
    assert_eq!(engine.row_lock_current_waits(), 0);
}

#[test]
fn a_rolled_back_insert_without_a_lock_lets_the_waiter_insert() {
    let engine = engine();
    let table = plain_table(&engine);
    let mut inserter = engine.begin();
    inserter.insert(table, vec![int(1), int(0)]).unwrap();
    let waiter = {
        let engine = engine.clone();
        thread::spawn(move || {
            let mut other = engine.begin();
            other.insert(table, vec![int(1), int(1)]).unwrap();
            other.commit(None).unwrap();
        })
    };
    wait_for_lock_waiters(&engine, 1);
    inserter.rollback();
    waiter.join().unwrap();
    assert_eq!(committed_rows(&engine, table), vec![vec![int(1), int(1)]]);
}

/// Commits stamp their versions under the table's read lock, so a session
/// converting an inserter's implicit lock can race with the inserter's
/// commit. Whichever way each race goes, no lock may outlive its owner:
/// after every round a third transaction takes the row without waiting.
#[test]
fn an_implicit_lock_converted_during_the_inserters_commit_never_outlives_it() {
    let engine = engine();
    let table = plain_table(&engine);
    const ROUNDS: i64 = 300;
    for id in 0..ROUNDS {
        let mut inserter = engine.begin();
        inserter.insert(table, vec![int(id), int(0)]).unwrap();
        engine.set_lock_wait_timeout(Duration::from_secs(5));
        let locker = {
            let engine = engine.clone();
            thread::spawn(move || {
                let mut other = engine.begin();
                // Waits for the inserter or finds it committed.
                let key = other.primary_key(table, &[int(id)]).unwrap();
                other.get_for_update(table, &key).unwrap();
                other.commit(None).unwrap();
            })
        };
        // Commit while the locker may be converting the implicit lock.
        if id % 2 == 0 {
            thread::yield_now();
        }
        inserter.commit(None).unwrap();
        locker.join().unwrap();
        engine.set_lock_wait_timeout(Duration::ZERO);
        let mut after = engine.begin();
        after.update_by_pk(table, &[int(id)], vec![int(id), int(1)]).expect("no lock left behind on the row");
        after.commit(None).unwrap();
    }
    assert_eq!(engine.row_lock_current_waits(), 0);
}
