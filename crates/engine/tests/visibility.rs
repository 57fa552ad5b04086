//! Who sees what: READ COMMITTED, REPEATABLE READ, own writes, savepoints.

mod support;

use engine::{IsolationLevel, ScanSpec};
use support::*;

#[test]
fn read_committed_never_sees_uncommitted_rows_and_sees_commits_at_once() {
    let engine = engine();
    let table = users(&engine).id;
    let mut writer = engine.begin();
    writer.insert(table, user(1, "a@x", 30)).unwrap();
    let reader = engine.begin_with(IsolationLevel::ReadCommitted);
    assert_eq!(reader.get(table, &[int(1)]).unwrap(), None);
    assert!(all_rows(&reader, table).is_empty());
    assert_eq!(reader.get_by_unique(table, "email", &[text("a@x")]).unwrap(), None);
    // The writer sees its own row, through every access path.
    assert_eq!(writer.get(table, &[int(1)]).unwrap(), Some(user(1, "a@x", 30)));
    assert_eq!(writer.get_by_unique(table, "email", &[text("a@x")]).unwrap().map(|(_, row)| row), Some(user(1, "a@x", 30)));
    let by_age: Vec<_> = writer.scan(table, &ScanSpec::index("age").equal(vec![int(30)])).unwrap().collect();
    assert_eq!(by_age.len(), 1);
    writer.commit(None).unwrap();
    assert_eq!(reader.get(table, &[int(1)]).unwrap(), Some(user(1, "a@x", 30)));
}

#[test]
fn repeatable_read_keeps_its_snapshot_while_read_committed_moves_on() {
    let engine = engine();
    let table = users(&engine).id;
    let mut setup = engine.begin();
    setup.insert(table, user(1, "a@x", 30)).unwrap();
    setup.commit(None).unwrap();

    let repeatable = engine.begin_with(IsolationLevel::RepeatableRead);
    let committed = engine.begin_with(IsolationLevel::ReadCommitted);
    assert_eq!(repeatable.get(table, &[int(1)]).unwrap(), Some(user(1, "a@x", 30)));

    let mut writer = engine.begin();
    writer.update_by_pk(table, &[int(1)], user(1, "a@x", 31)).unwrap();
    writer.insert(table, user(2, "b@x", 40)).unwrap();
    writer.commit(None).unwrap();
    engine.purge();

    assert_eq!(repeatable.get(table, &[int(1)]).unwrap(), Some(user(1, "a@x", 30)));
    assert_eq!(all_rows(&repeatable, table), vec![user(1, "a@x", 30)]);
    let old_age: Vec<_> = repeatable.scan(table, &ScanSpec::index("age")).unwrap().map(|(_, row)| row).collect();
    assert_eq!(old_age, vec![user(1, "a@x", 30)]);
    assert_eq!(all_rows(&committed, table), vec![user(1, "a@x", 31), user(2, "b@x", 40)]);
}

#[test]
fn an_index_scan_places_an_updated_row_by_its_visible_version() {
    let engine = engine();
    let table = users(&engine).id;
    let mut setup = engine.begin();
    for id in 1..=3 {
        setup.insert(table, user(id, &format!("{id}@x"), id * 10)).unwrap();
    }
    setup.commit(None).unwrap();
    let mut writer = engine.begin_with(IsolationLevel::ReadCommitted);
    writer.update_by_pk(table, &[int(1)], user(1, "1@x", 25)).unwrap();
    let ids = |trx: &engine::Transaction| -> Vec<_> {
        trx.scan(table, &ScanSpec::index("age")).unwrap().map(|(_, row)| row[0].clone()).collect()
    };
    assert_eq!(ids(&writer), vec![int(2), int(1), int(3)]);
    let reader = engine.begin_with(IsolationLevel::ReadCommitted);
    assert_eq!(ids(&reader), vec![int(1), int(2), int(3)]);
}

#[test]
fn rollback_and_savepoints_undo_changes_and_their_images() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    let savepoint = trx.savepoint();
    trx.update_by_pk(table, &[int(1)], user(1, "a@x", 2)).unwrap();
    trx.insert(table, user(2, "b@x", 3)).unwrap();
    trx.delete_by_pk(table, &[int(1)]).unwrap();
    assert_eq!(trx.changes().len(), 4);
    trx.rollback_to_savepoint(savepoint).unwrap();
    assert_eq!(trx.changes().len(), 1);
    assert_eq!(all_rows(&trx, table), vec![user(1, "a@x", 1)]);
    // The unique value freed by the undone insert can be used again.
    trx.insert(table, user(3, "b@x", 4)).unwrap();
    trx.commit(None).unwrap();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 1), user(3, "b@x", 4)]);

    let mut doomed = engine.begin();
    doomed.delete_by_pk(table, &[int(1)]).unwrap();
    doomed.insert(table, user(9, "z@x", 9)).unwrap();
    doomed.rollback();
    assert_eq!(committed_rows(&engine, table), vec![user(1, "a@x", 1), user(3, "b@x", 4)]);
    engine.purge();
}

#[test]
fn change_lists_carry_full_images_in_order() {
    let engine = engine();
    let table = users(&engine).id;
    let mut trx = engine.begin();
    trx.insert(table, user(1, "a@x", 1)).unwrap();
    trx.update_by_pk(table, &[int(1)], user(5, "a@x", 2)).unwrap();
    trx.delete_by_pk(table, &[int(5)]).unwrap();
    let kinds: Vec<_> = trx.changes().iter().map(|c| (c.kind, c.before.as_deref().cloned(), c.after.as_deref().cloned())).collect();
    use engine::ChangeKind::*;
    assert_eq!(
        kinds,
        vec![
            (Insert, None, Some(user(1, "a@x", 1))),
            (Update, Some(user(1, "a@x", 1)), Some(user(5, "a@x", 2))),
            (Delete, Some(user(5, "a@x", 2)), None),
        ]
    );
    // An update to the same values writes and logs nothing.
    let mut same = engine.begin();
    same.insert(table, user(7, "q@x", 1)).unwrap();
    assert_eq!(same.update_by_pk(table, &[int(7)], user(7, "q@x", 1)).unwrap(), engine::UpdateOutcome::Unchanged);
    assert_eq!(same.changes().len(), 1);
}

/// A scan detached from its transaction (a result streamed after an
/// autocommit SELECT's transaction ended) goes on reading the snapshot it
/// started in, under both isolation levels, while commits and purge run.
#[test]
fn a_detached_scan_keeps_its_snapshot_after_its_transaction_ends() {
    for isolation in [IsolationLevel::RepeatableRead, IsolationLevel::ReadCommitted] {
        let engine = engine();
        let table = users(&engine).id;
        let mut setup = engine.begin();
        for id in 0..300 {
            setup.insert(table, user(id, &format!("{id}@x"), 30)).unwrap();
        }
        setup.commit(None).unwrap();

        let reader = engine.begin_with(isolation);
        let mut scan = reader.scan(table, &ScanSpec::primary()).unwrap();
        let first: Vec<_> = scan.by_ref().take(100).map(|(_, row)| row).collect();
        let scan = scan.detach();
        reader.rollback();

        let mut writer = engine.begin();
        for id in 0..300 {
            writer.update_by_pk(table, &[int(id)], user(id, &format!("{id}@x"), 31)).unwrap();
        }
        writer.insert(table, user(1000, "b@x", 40)).unwrap();
        writer.commit(None).unwrap();
        engine.purge();

        let rest: Vec<_> = scan.map(|(_, row)| row).collect();
        assert_eq!(first, (0..100).map(|id| user(id, &format!("{id}@x"), 30)).collect::<Vec<_>>(), "{isolation:?}");
        assert_eq!(rest, (100..300).map(|id| user(id, &format!("{id}@x"), 30)).collect::<Vec<_>>(), "{isolation:?}");
    }
}
