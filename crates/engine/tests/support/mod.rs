//! Shared test helpers: a small schema and value shorthands.
#![allow(dead_code)]

use std::time::Duration;

use binlog_format::{ColumnType, Value};
use engine::{ColumnDef, Engine, EngineConfig, IndexSpec, Row, ScanSpec, TableDef, TableId, TableSpec, Transaction};

pub fn int(v: i64) -> Value {
    Value::Int(v)
}

pub fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

/// An engine with database `d` and short lock waits.
pub fn engine() -> Engine {
    let engine = Engine::new(EngineConfig { lock_wait_timeout: Duration::from_secs(5), ..EngineConfig::default() });
    engine.create_database("d").unwrap();
    engine
}

/// `d.users (id BIGINT PRIMARY KEY, email VARCHAR(64) UNIQUE, age INT, KEY age (age))`.
pub fn users(engine: &Engine) -> TableDef {
    let spec = TableSpec {
        database: "d".into(),
        name: "users".into(),
        columns: vec![
            ColumnDef::new("id", ColumnType::LongLong),
            ColumnDef::new("email", ColumnType::VarChar { max_length_bytes: 64 }),
            ColumnDef::new("age", ColumnType::Long),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![
            IndexSpec { name: "email".into(), columns: vec!["email".into()], unique: true },
            IndexSpec { name: "age".into(), columns: vec!["age".into()], unique: false },
        ],
        auto_increment_start: 0,
        partitioning: None,
        comment: String::new(),
        default_collation: None,
    };
    (*engine.create_table(&spec).unwrap()).clone()
}

pub fn user(id: i64, email: &str, age: i64) -> Row {
    vec![int(id), text(email), int(age)]
}

pub fn all_rows(trx: &Transaction, table: TableId) -> Vec<Row> {
    trx.scan(table, &ScanSpec::primary()).unwrap().map(|(_, row)| row).collect()
}

/// Rows as a fresh transaction sees them.
pub fn committed_rows(engine: &Engine, table: TableId) -> Vec<Row> {
    let trx = engine.begin();
    all_rows(&trx, table)
}

/// Waits until `count` transactions wait for row locks.
pub fn wait_for_lock_waiters(engine: &Engine, count: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while engine.row_lock_current_waits() < count {
        assert!(std::time::Instant::now() < deadline, "nobody started waiting");
        std::thread::sleep(Duration::from_millis(1));
    }
}
