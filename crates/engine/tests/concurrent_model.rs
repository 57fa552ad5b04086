//! Property test: random concurrent transactions (inserts, updates,
//! deletes, WHERE-style statements, savepoints, rollbacks) on several
//! threads, retried on 1205 and 1213, checked against a reference model.
//!
//! The model is a BTreeMap of committed rows built by applying each
//! committed transaction's change list in commit order. While applying,
//! every before image must equal the model's row (so the change lists are
//! exactly what happened, in an order that serializes the writes), and
//! the unique index must hold after every transaction. At the end the
//! engine's rows, its secondary-index order and its memory after purge
//! must match.
//!
//! The same runs go once with `u` UNIQUE and once with `u` a plain index:
//! without a unique index a new row is inserted with no row lock (an
//! implicit lock the others make explicit when they want the row).

use std::collections::BTreeMap;
use std::ops::Bound::Included;
use std::sync::Arc;
use std::time::Duration;

use binlog_format::{ColumnType, Value};
use engine::{
    ChangeKind, ColumnDef, Engine, EngineConfig, IndexSpec, IsolationLevel, NoRedo, Row, RowChange, ScanSpec, TableId, TableSpec,
    Transaction,
};
use proptest::prelude::*;

const KEYS: i64 = 8;
const UNIQUE_VALUES: i64 = 5;

#[derive(Debug, Clone)]
enum Op {
    Insert {
        id: i64,
        u: Option<i64>,
        v: i64,
    },
    Update {
        id: i64,
        new_id: i64,
        u: Option<i64>,
        v: i64,
    },
    Delete {
        id: i64,
    },
    /// UPDATE t SET v = v + add WHERE id BETWEEN low AND low + 3 AND v is even.
    UpdateWhere {
        low: i64,
        add: i64,
    },
    /// DELETE FROM t WHERE u = u (through the unique index).
    DeleteByUnique {
        u: i64,
    },
    Savepoint,
    RollbackToSavepoint,
}

#[derive(Debug, Clone)]
struct Script {
    ops: Vec<Op>,
    commit: bool,
    read_committed: bool,
}

fn op() -> impl Strategy<Value = Op> {
    let id = 0..KEYS;
    let u = proptest::option::weighted(0.8, 0..UNIQUE_VALUES);
    prop_oneof![
        4 => (id.clone(), u.clone(), 0..10i64).prop_map(|(id, u, v)| Op::Insert { id, u, v }),
        3 => (id.clone(), prop_oneof![3 => Just(None), 1 => (0..KEYS).prop_map(Some)], u, 0..10i64)
            .prop_map(|(id, new_id, u, v)| Op::Update { id, new_id: new_id.unwrap_or(id), u, v }),
        2 => id.clone().prop_map(|id| Op::Delete { id }),
        1 => (id, 1..3i64).prop_map(|(low, add)| Op::UpdateWhere { low, add }),
        1 => (0..UNIQUE_VALUES).prop_map(|u| Op::DeleteByUnique { u }),
        1 => Just(Op::Savepoint),
        1 => Just(Op::RollbackToSavepoint),
    ]
}

fn script() -> impl Strategy<Value = Script> {
    (proptest::collection::vec(op(), 1..7), proptest::bool::weighted(0.75), proptest::bool::ANY)
        .prop_map(|(ops, commit, read_committed)| Script { ops, commit, read_committed })
}

fn row(id: i64, u: Option<i64>, v: i64) -> Row {
    vec![Value::Int(id), u.map_or(Value::Null, Value::Int), Value::Int(v)]
}

fn int(value: &Value) -> i64 {
    match value {
        Value::Int(v) => *v,
        other => panic!("not an int: {other:?}"),
    }
}

fn setup(unique: bool) -> (Engine, TableId) {
    let engine = Engine::new(EngineConfig { lock_wait_timeout: Duration::from_secs(2), ..EngineConfig::default() });
    engine.create_database("d").unwrap();
    let spec = TableSpec {
        database: "d".into(),
        name: "t".into(),
        columns: vec![ColumnDef::new("id", ColumnType::Long), ColumnDef::new("u", ColumnType::Long), ColumnDef::new("v", ColumnType::Long)],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec { name: "u".into(), columns: vec!["u".into()], unique }],
        ..Default::default()
    };
    let table = engine.create_table(&spec).unwrap().id;
    (engine, table)
}

/// Runs one script; `Err(())` means "retry it" (a deadlock or timeout).
fn run_script(trx: &mut Transaction, table: TableId, script: &Script, unique: bool) -> Result<(), ()> {
    let mut savepoints = Vec::new();
    for op in &script.ops {
        let result = match op {
            Op::Insert { id, u, v } => trx.insert(table, row(*id, *u, *v)).map(drop),
            Op::Update { id, new_id, u, v } => trx.update_by_pk(table, &[Value::Int(*id)], row(*new_id, *u, *v)).map(drop),
            Op::Delete { id } => trx.delete_by_pk(table, &[Value::Int(*id)]).map(drop),
            Op::UpdateWhere { low, add } => {
                let spec = ScanSpec::primary().lower(Included(vec![Value::Int(*low)])).upper(Included(vec![Value::Int(low + 3)]));
                trx.update_where(table, &spec, |r| int(&r[2]) % 2 == 0, |r| vec![r[0].clone(), r[1].clone(), Value::Int(int(&r[2]) + add)])
                    .map(drop)
            }
            Op::DeleteByUnique { u } => trx.delete_where(table, &ScanSpec::index("u").equal(vec![Value::Int(*u)]), |_| true).map(drop),
            Op::Savepoint => {
                savepoints.push(trx.savepoint());
                Ok(())
            }
            Op::RollbackToSavepoint => match savepoints.last() {
                Some(savepoint) => trx.rollback_to_savepoint(*savepoint),
                None => Ok(()),
            },
        };
        // Give other threads a chance to interleave with this transaction.
        std::thread::sleep(Duration::from_micros(100));
        match result {
            Ok(()) => check_view(trx, table, script.read_committed, unique),
            Err(error) if error.mysql_code() == 1062 => {}
            Err(error) if error.is_retryable() => return Err(()),
            Err(error) => panic!("unexpected error {error} for {op:?}"),
        }
    }
    Ok(())
}

/// Under REPEATABLE READ both scans read one view, so the primary key and
/// the unique index must show the same rows. Under READ COMMITTED each scan
/// is its own view, in which the unique values must be distinct (not so
/// for a REPEATABLE READ snapshot plus the transaction's own writes, in
/// InnoDB too).
fn check_view(trx: &Transaction, table: TableId, read_committed: bool, unique: bool) {
    let by_key: Vec<Row> = trx.scan(table, &ScanSpec::primary()).unwrap().map(|(_, row)| row).collect();
    let by_index: Vec<Row> = trx.scan(table, &ScanSpec::index("u")).unwrap().map(|(_, row)| row).collect();
    let by_key_ids: Vec<i64> = by_key.iter().map(|row| int(&row[0])).collect();
    assert!(by_key_ids.windows(2).all(|pair| pair[0] < pair[1]), "primary key order {by_key_ids:?}");
    if read_committed && unique {
        for rows in [by_key, by_index] {
            check_unique(&rows.into_iter().map(|row| (int(&row[0]), row)).collect());
        }
    } else if !read_committed {
        let mut by_index = by_index;
        by_index.sort_by_key(|row| int(&row[0]));
        assert_eq!(by_key, by_index, "primary key and unique index disagree");
    }
}

/// Runs `scripts` on one thread; returns (commit sequence, changes) of
/// each committed transaction.
fn run_thread(engine: &Engine, table: TableId, scripts: &[Script], start: &std::sync::Barrier, unique: bool) -> Vec<(u64, Vec<RowChange>)> {
    let mut committed = Vec::new();
    start.wait();
    for script in scripts {
        let mut attempts = 0;
        loop {
            attempts += 1;
            assert!(attempts < 200, "a transaction kept failing");
            let isolation = if script.read_committed { IsolationLevel::ReadCommitted } else { IsolationLevel::RepeatableRead };
            let mut trx = engine.begin_with(isolation);
            if run_script(&mut trx, table, script, unique).is_err() {
                trx.rollback();
                // Random, growing backoff, as clients do: two transactions
                // that retry at once can keep making each other victims.
                let backoff_micros = rand::random::<u64>() % (200 * attempts as u64);
                std::thread::sleep(Duration::from_micros(backoff_micros));
                continue;
            }
            if script.commit {
                let changes = trx.changes().to_vec();
                let outcome = trx.prepare(Some(1)).unwrap().commit(None).unwrap();
                committed.push((outcome.commit_seq.unwrap(), changes));
            } else {
                trx.rollback();
            }
            break;
        }
    }
    committed
}

fn apply_to_model(model: &mut BTreeMap<i64, Row>, change: &RowChange) {
    if let Some(before) = &change.before {
        let id = int(&before[0]);
        assert_eq!(model.remove(&id).as_ref(), Some(&**before), "before image of {change:?}");
    }
    if let Some(after) = &change.after {
        let id = int(&after[0]);
        assert!(model.insert(id, after.to_vec()).is_none(), "{change:?} overwrote a row");
    }
    assert_eq!(change.kind == ChangeKind::Insert, change.before.is_none());
}

fn check_unique(model: &BTreeMap<i64, Row>) {
    let mut seen = std::collections::HashSet::new();
    for row in model.values() {
        if row[1] != Value::Null {
            assert!(seen.insert(int(&row[1])), "unique value {:?} twice", row[1]);
        }
    }
}

proptest! {
    // PROPTEST_CASES raises the count for a longer soak.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(32),
        ..ProptestConfig::default()
    })]

    #[test]
    fn concurrent_transactions_match_the_reference_model(
        threads in proptest::collection::vec(proptest::collection::vec(script(), 1..6), 2..5)
    ) {
        check_against_model(&threads, true);
    }

    #[test]
    fn concurrent_transactions_without_a_unique_index_match_the_reference_model(
        threads in proptest::collection::vec(proptest::collection::vec(script(), 1..6), 2..5)
    ) {
        check_against_model(&threads, false);
    }
}

/// Runs `threads` (scripts per thread) concurrently on a table whose index
/// `u` is `unique` or not, and checks the result against the model.
fn check_against_model(threads: &[Vec<Script>], unique: bool) {
    let (engine, table) = setup(unique);
    let start = std::sync::Barrier::new(threads.len());
    let mut committed: Vec<(u64, Vec<RowChange>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = threads
            .iter()
            .map(|scripts| {
                let (engine, start) = (&engine, &start);
                scope.spawn(move || run_thread(engine, table, scripts, start, unique))
            })
            .collect();
        handles.into_iter().flat_map(|handle| handle.join().unwrap()).collect()
    });
    committed.sort_by_key(|(seq, _)| *seq);
    let mut model = BTreeMap::new();
    for (_, changes) in &committed {
        for change in changes {
            assert_eq!(change.table, table);
            apply_to_model(&mut model, change);
        }
        if unique {
            check_unique(&model);
        }
    }

    let reader = engine.begin();
    let rows: Vec<Row> = reader.scan(table, &ScanSpec::primary()).unwrap().map(|(_, row)| row).collect();
    assert_eq!(&rows, &model.values().cloned().collect::<Vec<_>>());
    // The index holds every row once, NULLs first, then by value.
    let by_index: Vec<Row> = reader.scan(table, &ScanSpec::index("u")).unwrap().map(|(_, row)| row).collect();
    let mut expected = rows.clone();
    expected.sort_by_key(|row| (row[1] != Value::Null, if row[1] == Value::Null { 0 } else { int(&row[1]) }, int(&row[0])));
    assert_eq!(by_index, expected);
    drop(reader);

    // After purge only one version per row is left: the same memory as
    // an engine loaded from a snapshot of these rows.
    engine.purge();
    let (fresh, _) = Engine::from_snapshot(EngineConfig::default(), Arc::new(NoRedo), &engine.snapshot()).unwrap();
    assert_eq!(engine.memory_used_bytes(), fresh.memory_used_bytes());
}
