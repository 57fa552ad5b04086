//! A large transaction writes its row events and redo ahead of COMMIT
//! (`write_ahead.rs`): what it wrote survives a checkpoint taken while it
//! runs and a crash after its commit, and is ignored after a rollback or a
//! crash before its commit.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use binlog_format::Value;
use database::engine::Transaction;
use database::{CommitRequest, Database, WrittenAhead};
use rand::SeedableRng;
use storage::SimStorage;
use storage::Storage;
use support::*;

const DIR: &str = "/data";

fn bulk_rows(trx: &mut Transaction, tables: Tables, ids: std::ops::Range<i64>) {
    for id in ids {
        trx.insert(tables.bulk, vec![Value::Int(id), Value::Bytes(format!("{id:0>190}").into_bytes())]).unwrap();
    }
}

fn write_ahead(db: &Database, trx: &mut Transaction, ahead: &mut Option<WrittenAhead>) {
    let records = db.redo().counters().records;
    db.write_ahead(trx, ahead, &context(1)).unwrap();
    assert!(ahead.is_some(), "the events were written ahead");
    assert!(db.redo().counters().records > records, "the changes went to redo ahead of the commit");
}

/// A fresh database with a transaction that inserted bulk rows 0..40 and
/// wrote them ahead.
fn forty_rows_written_ahead() -> (SimStorage, Database, Tables, Transaction, Option<WrittenAhead>) {
    let storage = SimStorage::new();
    let (db, _) = Database::open(config(Path::new(DIR), Arc::new(storage.clone()))).unwrap();
    let tables = create_schema(&db).unwrap();
    let mut trx = db.begin();
    let mut ahead = None;
    bulk_rows(&mut trx, tables, 0..40);
    write_ahead(&db, &mut trx, &mut ahead);
    (storage, db, tables, trx, ahead)
}

fn spill_files(storage: &SimStorage) -> usize {
    storage.list(&Path::new(DIR).join("binlog").join(binlog::options::SPILL_DIR_NAME)).map(|names| names.len()).unwrap_or(0)
}

fn bulk_ids(db: &Database, tables: Tables) -> Vec<i64> {
    let trx = db.begin();
    let ids = trx
        .scan(tables.bulk, &database::engine::ScanSpec::primary())
        .unwrap()
        .map(|(_, row)| match row[0] {
            Value::Int(id) => id,
            ref other => panic!("{other:?}"),
        })
        .collect();
    trx.rollback();
    ids
}

#[test]
fn written_ahead_survives_a_checkpoint_then_a_crash_after_commit() {
    for kind in ["process kill", "power cut"] {
        let storage = SimStorage::new();
        let (db, _) = Database::open(config(Path::new(DIR), Arc::new(storage.clone()))).unwrap();
        let tables = create_schema(&db).unwrap();
        let mut acknowledged = BTreeSet::new();

        let mut trx = db.begin();
        let mut ahead = None;
        bulk_rows(&mut trx, tables, 0..40);
        write_ahead(&db, &mut trx, &mut ahead);
        // Other commits move redo on by many segments, then a checkpoint
        // drops old ones: the parts written ahead must be kept.
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..200 {
            if let Attempt::Committed(gtid) = random_transaction(&db, &mut rng, tables, 2) {
                acknowledged.extend(gtid);
            }
        }
        db.checkpoint().unwrap();
        bulk_rows(&mut trx, tables, 40..80);
        write_ahead(&db, &mut trx, &mut ahead);
        // The last statement's rows go at COMMIT.
        bulk_rows(&mut trx, tables, 80..90);
        let info = db.commit(CommitRequest { ahead, ..CommitRequest::new(trx, &context(1)) }).unwrap().unwrap();
        acknowledged.insert(info.gtid);

        let image = if kind == "power cut" { storage.crash_image(None) } else { storage.process_kill_image() };
        drop(db);
        let (db, report) = Database::open(config(Path::new(DIR), Arc::new(image.clone()))).unwrap();
        let label = format!("written ahead across a checkpoint, {kind}");
        assert!(report.checkpoint.is_some(), "{label}");
        let ids = bulk_ids(&db, tables);
        assert_eq!(ids.iter().filter(|id| (0..90).contains(*id)).count(), 90, "{label}: the transaction's 90 rows");
        check(&db, &image, &acknowledged, &label);
        db.close().unwrap();
    }
}

#[test]
fn written_ahead_then_rolled_back_or_crashed_leaves_nothing() {
    let (storage, db, tables, trx, ahead) = forty_rows_written_ahead();
    assert_eq!(spill_files(&storage), 1, "the events spilled past binlog_cache_size");
    trx.rollback();
    drop(ahead);
    assert_eq!(spill_files(&storage), 0, "rollback deletes the spill file");

    // Crashed while running, after writing ahead.
    let mut trx = db.begin();
    let mut ahead = None;
    bulk_rows(&mut trx, tables, 100..140);
    write_ahead(&db, &mut trx, &mut ahead);
    let image = storage.process_kill_image();
    drop((trx, ahead));
    drop(db);
    let (db, _) = Database::open(config(Path::new(DIR), Arc::new(image.clone()))).unwrap();
    assert_eq!(bulk_ids(&db, tables), Vec::<i64>::new(), "nothing of either transaction");
    assert_eq!(spill_files(&image), 0, "recovery removed the crashed transaction's spill file");
    check(&db, &image, &BTreeSet::new(), "written ahead, then crashed");
    db.close().unwrap();
}

#[test]
fn a_failed_statement_after_writing_ahead_keeps_the_transaction_usable() {
    let (storage, db, tables, mut trx, ahead) = forty_rows_written_ahead();
    // A savepoint before what redo holds cannot be rolled back to.
    let savepoint = trx.savepoint();
    bulk_rows(&mut trx, tables, 40..45);
    trx.rollback_to_savepoint(savepoint).unwrap();
    bulk_rows(&mut trx, tables, 45..50);
    let info = db.commit(CommitRequest { ahead, ..CommitRequest::new(trx, &context(1)) }).unwrap().unwrap();
    let image = storage.process_kill_image();
    drop(db);
    let (db, _) = Database::open(config(Path::new(DIR), Arc::new(image.clone()))).unwrap();
    let ids = bulk_ids(&db, tables);
    assert_eq!(ids, (0..40).chain(45..50).collect::<Vec<_>>());
    check(&db, &image, &BTreeSet::from([info.gtid]), "statement rolled back after writing ahead");
    db.close().unwrap();
}

/// Every event of the binlog files, in order.
fn binlog_events(storage: &SimStorage) -> Vec<binlog_format::events::Event> {
    let binlog_dir = Path::new(DIR).join("binlog");
    let index = String::from_utf8(storage.read_all(&binlog_dir.join("binlog.index")).unwrap()).unwrap();
    let mut events = Vec::new();
    for name in index.lines().map(str::trim).filter(|line| !line.is_empty()) {
        let name = Path::new(name).file_name().unwrap().to_string_lossy().into_owned();
        let bytes = storage.read_all(&binlog_dir.join(&name)).unwrap();
        let mut stream = binlog_format::file::EventStream::new(&bytes).unwrap();
        while let Some(next) = stream.next_raw() {
            let (_, raw) = next.unwrap();
            events.push(binlog_format::events::Event::decode(&raw, stream.context()).unwrap());
        }
    }
    events
}

#[test]
fn a_statement_logged_its_own_way_keeps_its_settings_when_written_ahead() {
    use binlog_format::events::Event;
    use database::{LoggedStatement, RowImage, RowLogging, RowMetadata};

    let storage = SimStorage::new();
    let (db, _) = Database::open(config(Path::new(DIR), Arc::new(storage.clone()))).unwrap();
    let tables = create_schema(&db).unwrap();
    let mut trx = db.begin();
    bulk_rows(&mut trx, tables, 0..40);
    db.commit(CommitRequest::new(trx, &context(1))).unwrap();

    // UPDATE bulk SET payload = 'x' with MINIMAL images, MINIMAL metadata
    // and its Rows_query, written ahead; then DELETE with the defaults.
    let mut trx = db.begin();
    for id in 0..40 {
        trx.update_by_pk(tables.bulk, &[Value::Int(id)], vec![Value::Int(id), Value::Bytes(b"x".to_vec())]).unwrap();
    }
    let logging = RowLogging { image: RowImage::Minimal, metadata: RowMetadata::Minimal, rows_query: true, partial_json: false };
    let update = LoggedStatement {
        first_change: 0,
        logging,
        assigned_columns: vec![1],
        query: "UPDATE bulk SET payload = 'x'".into(),
        json_diffs: Vec::new(),
    };
    let mut statement = context(1);
    statement.statements = vec![update];
    let mut ahead = None;
    db.write_ahead(&mut trx, &mut ahead, &statement).unwrap();
    assert!(ahead.is_some(), "the update's events were written ahead");
    for id in 0..5 {
        assert!(trx.delete_by_pk(tables.bulk, &[Value::Int(id)]).unwrap());
    }
    statement.statements.push(LoggedStatement { first_change: 40, ..Default::default() });
    db.commit(CommitRequest { ahead, ..CommitRequest::new(trx, &statement) }).unwrap();

    let events = binlog_events(&storage);
    let last_gtid = events.iter().rposition(|event| matches!(event, Event::Gtid(_))).unwrap();
    let transaction = &events[last_gtid + 1..];
    let kinds: Vec<&str> = transaction
        .iter()
        .map(|event| match event {
            Event::Query(_) => "Query",
            Event::RowsQuery(query) => {
                assert_eq!(query.query, b"UPDATE bulk SET payload = 'x'");
                "Rows_query"
            }
            Event::TableMap(map) if map.column_names()[0].is_none() => "Table_map minimal",
            Event::TableMap(_) => "Table_map full",
            Event::UpdateRows(rows) => {
                assert_eq!((rows.before_columns(), rows.after_columns()), (vec![0], vec![1]), "MINIMAL images");
                "Update_rows"
            }
            Event::DeleteRows(rows) => {
                assert_eq!(rows.before_columns(), vec![0, 1], "FULL images");
                "Delete_rows"
            }
            Event::Xid(_) => "Xid",
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["Query", "Rows_query", "Table_map minimal", "Update_rows", "Table_map full", "Delete_rows", "Xid"]);
}
