//! Shared helpers for the database's tests: a schema of two tables with a
//! primary key and a unique secondary index, a random workload of small
//! transactions, and the checker of what recovery promises:
//!
//! 1. the engine's executed GTID set equals the binlog's;
//! 2. replaying every row event of the binlog files onto empty tables
//!    gives exactly the engine's tables (every row change in the binlog is
//!    in the engine, and nothing else is);
//! 3. every transaction whose commit returned Ok is there.

#![allow(dead_code)]

pub mod crash_workload;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use binlog_format::events::{Event, TableMap};
use binlog_format::file::EventStream;
use binlog_format::{ColumnType, Gtid, Value};
use database::{CommitRequest, Database, DatabaseConfig, DatabaseError, StatementContext};
use engine::{ColumnDef, EngineError, IndexSpec, ScanSpec, TableId, TableSpec, Transaction};
use rand::Rng;
use storage::Storage;
use testkit::SOURCE_UUID;

pub const DB: &str = "test";
/// Primary keys are drawn from 0..KEYS, so transactions collide often.
pub const KEYS: i64 = 40;

pub fn context(thread_id: u32) -> StatementContext {
    StatementContext::new(thread_id, DB)
}

/// Flush 1, sync_binlog 1, small files so rotations happen, no
/// background checkpoints (tests take them), short lock waits.
pub fn config(dir: &Path, storage: Arc<dyn Storage>) -> DatabaseConfig {
    let mut config = DatabaseConfig::new(dir);
    config.storage = storage;
    config.crash_points = Default::default();
    config.binlog_crash_points = Default::default();
    config.redo_crash_points = Default::default();
    config.binlog.max_binlog_size = 24 * 1024;
    config.binlog.binlog_expire_logs_seconds = 0;
    // Bulk transactions (~20 KiB) spill and are promoted by rename.
    config.binlog.binlog_cache_size = 4 * 1024;
    config.binlog.large_transaction_optimization_threshold = 16 * 1024;
    config.binlog.spill_sync_chunk_bytes = 8 * 1024;
    config.redo.binlogd_redo_segment_bytes = 16 * 1024;
    // Bulk transactions also go to redo as several prepare parts.
    config.redo_prepare_part_bytes = 4 * 1024;
    // Bulk transactions write their events and redo ahead of COMMIT.
    config.write_ahead_min_changes = 30;
    config.checkpoint_interval = Duration::ZERO;
    config.checkpoint_redo_bytes = 0;
    config.engine.lock_wait_timeout = Duration::from_millis(100);
    config
}

#[derive(Debug, Clone, Copy)]
pub struct Tables {
    pub accounts: TableId,
    pub orders: TableId,
    /// Large inserts (promoted into the binlog when the config's threshold is low).
    pub bulk: TableId,
}

fn bulk_spec() -> TableSpec {
    TableSpec {
        database: DB.into(),
        name: "bulk".into(),
        columns: vec![
            ColumnDef::new("id", ColumnType::LongLong).not_null(),
            ColumnDef::new("payload", ColumnType::VarChar { max_length_bytes: 1020 }).not_null(),
        ],
        primary_key: vec!["id".into()],
        ..Default::default()
    }
}

fn accounts_spec() -> TableSpec {
    TableSpec {
        database: DB.into(),
        name: "accounts".into(),
        columns: vec![
            ColumnDef::new("id", ColumnType::LongLong).not_null(),
            ColumnDef::new("email", ColumnType::VarChar { max_length_bytes: 256 }).not_null(),
            ColumnDef::new("balance", ColumnType::LongLong).not_null(),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec { name: "email".into(), columns: vec!["email".into()], unique: true }],
        ..Default::default()
    }
}

fn orders_spec() -> TableSpec {
    TableSpec {
        database: DB.into(),
        name: "orders".into(),
        columns: vec![
            ColumnDef::new("id", ColumnType::LongLong).not_null(),
            ColumnDef::new("code", ColumnType::Long),
            ColumnDef::new("note", ColumnType::VarChar { max_length_bytes: 160 }),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec { name: "code".into(), columns: vec!["code".into()], unique: true }],
        ..Default::default()
    }
}

/// Creates what of the schema is missing (a killed child may have made part of it).
pub fn create_schema(db: &Database) -> Result<Tables, DatabaseError> {
    let session = context(0);
    if !db.catalog().databases().iter().any(|d| d == DB) {
        db.execute_ddl(&session, "CREATE DATABASE test", |e| e.create_database(DB))?;
    }
    for spec in [accounts_spec(), orders_spec(), bulk_spec()] {
        if db.catalog().table_id(DB, &spec.name).is_err() {
            let query = format!("CREATE TABLE {} (...)", spec.name);
            db.execute_ddl(&session, &query, |e| e.create_table(&spec))?;
        }
    }
    tables(db)
}

pub fn tables(db: &Database) -> Result<Tables, DatabaseError> {
    Ok(Tables {
        accounts: db.catalog().table_id(DB, "accounts")?,
        orders: db.catalog().table_id(DB, "orders")?,
        bulk: db.catalog().table_id(DB, "bulk")?,
    })
}

fn account(rng: &mut impl Rng, id: i64) -> Vec<Value> {
    let email = format!("user{}@example.com", rng.gen_range(0..KEYS));
    vec![Value::Int(id), Value::Bytes(email.into_bytes()), Value::Int(rng.gen_range(-1000..1000))]
}

fn order(rng: &mut impl Rng, id: i64) -> Vec<Value> {
    let code = if rng.gen_ratio(1, 5) { Value::Null } else { Value::Int(rng.gen_range(0..KEYS)) };
    let note = if rng.gen_ratio(1, 3) { Value::Null } else { Value::Bytes(format!("note {}", rng.gen::<u16>()).into_bytes()) };
    vec![Value::Int(id), code, note]
}

/// One random statement: insert, update or delete by primary key.
/// Duplicate keys and missing rows are fine (the statement changes nothing).
fn random_statement(trx: &mut Transaction, rng: &mut impl Rng, tables: Tables) -> Result<(), EngineError> {
    let (table, is_accounts) = if rng.gen_bool(0.5) { (tables.accounts, true) } else { (tables.orders, false) };
    let id = rng.gen_range(0..KEYS);
    let row = if is_accounts { account(rng, id) } else { order(rng, id) };
    let result = match rng.gen_range(0..3) {
        0 => trx.insert(table, row).map(|_| ()),
        1 => trx.update_by_pk(table, &[Value::Int(id)], row).map(|_| ()),
        _ => trx.delete_by_pk(table, &[Value::Int(id)]).map(|_| ()),
    };
    match result {
        Err(EngineError::DuplicateEntry { .. }) => Ok(()),
        other => other,
    }
}

/// What one attempt at a random transaction did.
pub enum Attempt {
    Committed(Option<Gtid>),
    /// Lock wait timeout or deadlock: try again.
    Retry,
    /// The database failed (a crash point fired, storage froze, ...).
    Failed(DatabaseError),
    /// Committed with a given GTID that was executed already: skipped.
    Skipped(Gtid),
}

/// Rows of a bulk transaction, 200 bytes each: about 20 KiB of events.
pub const BULK_ROWS: usize = 100;

/// A random transaction of 1 to 4 statements, committed (one in ten is
/// rolled back instead); one in twenty is a bulk insert of new rows.
pub fn random_transaction(db: &Database, rng: &mut impl Rng, tables: Tables, thread_id: u32) -> Attempt {
    let mut trx = db.begin();
    if rng.gen_ratio(1, 20) {
        // Four statements of 25 rows; each statement end may write the
        // events and redo ahead of COMMIT (`write_ahead_min_changes`).
        let base: i64 = rng.gen_range(0..i64::MAX / 2);
        let mut ahead = None;
        for n in 0..BULK_ROWS as i64 {
            let payload = format!("{base:020}-{n:0>178}").into_bytes();
            if let Err(error) = trx.insert(tables.bulk, vec![Value::Int(base + n), Value::Bytes(payload)]) {
                return if error.is_retryable() { Attempt::Retry } else { Attempt::Failed(error.into()) };
            }
            if n % 25 == 24 && n + 1 < BULK_ROWS as i64 {
                if let Err(error) = db.write_ahead(&mut trx, &mut ahead, &context(thread_id)) {
                    return if error.is_retryable() { Attempt::Retry } else { Attempt::Failed(error) };
                }
            }
        }
        if rng.gen_ratio(1, 10) {
            // Written ahead, then rolled back: recovery must ignore its parts.
            trx.rollback();
            return Attempt::Committed(None);
        }
        return match db.commit(CommitRequest { ahead, ..CommitRequest::new(trx, &context(thread_id)) }) {
            Ok(info) => Attempt::Committed(info.map(|i| i.gtid)),
            Err(error) if error.is_retryable() => Attempt::Retry,
            Err(error) => Attempt::Failed(error),
        };
    }
    for _ in 0..rng.gen_range(1..=4) {
        match random_statement(&mut trx, rng, tables) {
            Ok(()) => {}
            Err(error) if error.is_retryable() => return Attempt::Retry,
            Err(error) => return Attempt::Failed(error.into()),
        }
    }
    if rng.gen_ratio(1, 10) {
        trx.rollback();
        return Attempt::Committed(None);
    }
    match db.commit(CommitRequest::new(trx, &context(thread_id))) {
        Ok(info) => Attempt::Committed(info.map(|i| i.gtid)),
        Err(error) if error.is_retryable() => Attempt::Retry,
        Err(error) => Attempt::Failed(error),
    }
}

/// A random transaction committed with the given GTID `SOURCE_UUID:gno`
/// (as a replica's applier does): one in eight changes nothing (an empty
/// transaction is logged), one in ten is a bulk insert (promoted). A
/// GTID already executed must be skipped, which the caller can check by
/// giving one twice.
pub fn given_transaction(db: &Database, rng: &mut impl Rng, tables: Tables, thread_id: u32, gno: u64) -> Attempt {
    let given = binlog::GivenGtid {
        gtid: Gtid::new(SOURCE_UUID, gno),
        original_commit_timestamp_us: Some(1_700_000_000_000_000 + gno),
        original_server_version: Some(80036),
    };
    let mut trx = db.begin();
    if rng.gen_ratio(1, 10) {
        let base: i64 = rng.gen_range(0..i64::MAX / 2);
        for n in 0..BULK_ROWS as i64 {
            let payload = format!("{base:020}-{n:0>178}").into_bytes();
            if let Err(error) = trx.insert(tables.bulk, vec![Value::Int(base + n), Value::Bytes(payload)]) {
                return if error.is_retryable() { Attempt::Retry } else { Attempt::Failed(error.into()) };
            }
        }
    } else if !rng.gen_ratio(1, 8) {
        for _ in 0..rng.gen_range(1..=3) {
            match random_statement(&mut trx, rng, tables) {
                Ok(()) => {}
                Err(error) if error.is_retryable() => return Attempt::Retry,
                Err(error) => return Attempt::Failed(error.into()),
            }
        }
    }
    match db.commit_given(trx, &context(thread_id), given) {
        Ok(binlog::CommitOutcome::Committed(info)) => {
            let info = info.expect("a given GTID is always logged");
            assert_eq!(info.gtid, given.gtid);
            Attempt::Committed(Some(info.gtid))
        }
        Ok(binlog::CommitOutcome::SkippedAlreadyExecuted(gtid)) => Attempt::Skipped(gtid),
        Err(error) if error.is_retryable() => Attempt::Retry,
        Err(error) => Attempt::Failed(error),
    }
}

/// A value's key text (for maps of rows by primary key).
fn key_text(values: &[Value]) -> String {
    format!("{values:?}")
}

type Rows = BTreeMap<String, Vec<Value>>;

/// Every table's rows in the engine, by `db.table`.
pub fn engine_tables(db: &Database) -> BTreeMap<String, Rows> {
    let catalog = db.catalog();
    let reader = db.begin_with(engine::IsolationLevel::ReadCommitted);
    let mut out = BTreeMap::new();
    for database in catalog.databases() {
        for name in catalog.tables(&database).unwrap() {
            let def = catalog.table(&database, &name).unwrap();
            let mut rows = Rows::new();
            for (_, row) in reader.scan(def.id, &ScanSpec::primary()).unwrap() {
                let key: Vec<Value> = def.primary_key.iter().map(|&c| row[c].clone()).collect();
                rows.insert(key_text(&key), row);
            }
            out.insert(format!("{database}.{name}"), rows);
        }
    }
    out
}

/// The tables the binlog's row events build from empty tables, and every
/// XID in the files (each must be unique).
pub fn binlog_tables(storage: &dyn Storage, binlog_dir: &Path) -> (BTreeMap<String, Rows>, Vec<u64>) {
    let index = String::from_utf8(storage.read_all(&binlog_dir.join("binlog.index")).unwrap()).unwrap();
    let mut tables: BTreeMap<String, Rows> = BTreeMap::new();
    let mut xids = Vec::new();
    for name in index.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let name = Path::new(name).file_name().unwrap().to_string_lossy().into_owned();
        let bytes = storage.read_all(&binlog_dir.join(&name)).unwrap();
        let mut stream = EventStream::new(&bytes).unwrap();
        let mut maps: BTreeMap<u64, TableMap> = BTreeMap::new();
        while let Some(next) = stream.next_raw() {
            let (offset, raw) = next.unwrap_or_else(|e| panic!("{name}: {e:?}"));
            let event = Event::decode(&raw, stream.context()).unwrap_or_else(|e| panic!("{name} at {offset}: {e}"));
            let (rows_event, table_id) = match &event {
                Event::TableMap(map) => {
                    maps.insert(map.table_id, map.clone());
                    continue;
                }
                Event::Xid(xid) => {
                    xids.push(xid.xid);
                    continue;
                }
                Event::WriteRows(e) | Event::UpdateRows(e) | Event::DeleteRows(e) => (e, e.table_id),
                _ => continue,
            };
            let map = &maps[&table_id];
            let qualified = format!("{}.{}", String::from_utf8_lossy(&map.database), String::from_utf8_lossy(&map.table));
            let primary: Vec<usize> = map.primary_key().expect("binlogd writes the primary key").iter().map(|&c| c as usize).collect();
            let key_of = |row: &Vec<Value>| key_text(&primary.iter().map(|&c| row[c].clone()).collect::<Vec<_>>());
            let rows = tables.entry(qualified.clone()).or_default();
            for change in rows_event.decode_rows(map).unwrap() {
                match change {
                    binlog_format::RowChange::Write(row) => {
                        let previous = rows.insert(key_of(&row), row);
                        assert!(previous.is_none(), "{name} at {offset}: insert over an existing row in {qualified}");
                    }
                    binlog_format::RowChange::Update { before, after } => {
                        let previous = rows.remove(&key_of(&before));
                        assert_eq!(previous.as_ref(), Some(&before), "{name} at {offset}: update's before image in {qualified}");
                        let replaced = rows.insert(key_of(&after), after);
                        assert!(replaced.is_none(), "{name} at {offset}: update onto an existing row in {qualified}");
                    }
                    binlog_format::RowChange::Delete(before) => {
                        let previous = rows.remove(&key_of(&before));
                        assert_eq!(previous.as_ref(), Some(&before), "{name} at {offset}: delete's before image in {qualified}");
                    }
                }
            }
        }
    }
    (tables, xids)
}

/// The three promises (see the module docs). `label` names the case in
/// failure messages.
pub fn check(db: &Database, storage: &dyn Storage, acknowledged: &BTreeSet<Gtid>, label: &str) {
    // In engine mode the files are written behind the commits: compare
    // once the writer has caught up with every commit that returned.
    db.wait_binlog_written().unwrap_or_else(|error| panic!("{label}: waiting for the binlog writer: {error}"));
    let engine_executed = db.engine_status().executed_gtids();
    assert_eq!(engine_executed, db.binlog_status().executed_gtids(), "{label}: engine and binlog GTID sets differ");
    for gtid in acknowledged {
        assert!(engine_executed.contains(gtid), "{label}: acknowledged {gtid} lost");
    }
    let (from_binlog, xids) = binlog_tables(storage, &db.config().binlog_dir());
    let mut engine = engine_tables(db);
    // Tables the binlog never wrote to are empty in the engine.
    for (name, rows) in engine.iter() {
        if !from_binlog.contains_key(name) {
            assert!(rows.is_empty(), "{label}: {name} has {} rows the binlog never wrote", rows.len());
        }
    }
    engine.retain(|name, _| from_binlog.contains_key(name));
    for (name, rows) in &from_binlog {
        let in_engine = engine.get(name).unwrap_or_else(|| panic!("{label}: binlog writes {name}, the engine lacks it"));
        if rows != in_engine {
            let only_binlog: Vec<_> = rows.iter().filter(|(k, v)| in_engine.get(*k) != Some(v)).take(5).collect();
            let only_engine: Vec<_> = in_engine.iter().filter(|(k, v)| rows.get(*k) != Some(v)).take(5).collect();
            panic!("{label}: {name} differs; binlog replay has {only_binlog:?}, the engine {only_engine:?}");
        }
    }
    let unique: BTreeSet<u64> = xids.iter().copied().collect();
    assert_eq!(unique.len(), xids.len(), "{label}: an XID is used twice in the binlog");
}

/// [`config`] with `binlog_storage_engine = engine`.
pub fn engine_config(dir: &Path, storage: Arc<dyn Storage>) -> DatabaseConfig {
    let mut config = config(dir, storage);
    config.binlog_storage_engine = database::BinlogStorageEngine::Engine;
    config
}

/// Every Gtid event's GTID in the binlog files, in index and file order
/// (each file decoded whole by the format crate).
pub fn binlog_gtids_in_order(storage: &dyn Storage, binlog_dir: &Path) -> Vec<Gtid> {
    let index = String::from_utf8(storage.read_all(&binlog_dir.join("binlog.index")).unwrap()).unwrap();
    let mut gtids = Vec::new();
    for name in index.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let name = Path::new(name).file_name().unwrap().to_string_lossy().into_owned();
        let bytes = storage.read_all(&binlog_dir.join(&name)).unwrap();
        let mut stream = EventStream::new(&bytes).unwrap();
        while let Some(next) = stream.next_raw() {
            let (offset, raw) = next.unwrap_or_else(|e| panic!("{name}: {e:?}"));
            if let Event::Gtid(gtid) = Event::decode(&raw, stream.context()).unwrap_or_else(|e| panic!("{name} at {offset}: {e}")) {
                gtids.push(gtid.gtid);
            }
        }
    }
    gtids
}

/// Per UUID, the binlog holds GTIDs 1..=N, each once, in order (the
/// workloads give foreign GTIDs from one session, in order).
pub fn assert_contiguous(gtids: &[Gtid], label: &str) {
    let mut next_per_uuid: BTreeMap<binlog_format::Uuid, u64> = BTreeMap::new();
    for (index, gtid) in gtids.iter().enumerate() {
        let next = next_per_uuid.entry(gtid.uuid).or_insert(1);
        assert_eq!(gtid.gno, *next, "{label}: GTID #{index} is {gtid}; the binlog is not one contiguous sequence per source");
        *next += 1;
    }
}
