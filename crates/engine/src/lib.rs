//! binlogd's storage engine: in-memory tables with MVCC row versions, row
//! locks, savepoints, and the hooks two-phase commit with the binlog and a
//! redo log need.
//!
//! Where to look:
//! - the data model: [`catalog`] (definitions), `table.rs` (rows and
//!   indexes), [`key`] (the memcomparable key encoding);
//! - a transaction's life: [`transaction`] (reads, savepoints, rollback),
//!   [`mod@write`] (insert, update, delete), [`scan`] (ordered range scans),
//!   [`commit`] (prepare, commit, the GTID set);
//! - concurrency: `mvcc.rs` (who sees which version), `locks.rs` (row
//!   locks, 1205, deadlock detection and 1213), `mdl.rs` (DDL against
//!   writers), `purge.rs` (old versions) and `purge_worker.rs` (the
//!   background purge thread), `registry.rs` (commit order and the
//!   executed GTID set);
//! - durability seams: [`redo`] (the [`RedoSink`] the engine calls),
//!   [`codec`] (bytes for redo payloads), [`snapshot`] (checkpoint images
//!   and their consistency rule), `recovery.rs` (replay);
//! - limits: `memory.rs` (`binlogd_engine_memory_limit`, 1114), [`config`].
//!
//! ```
//! use binlog_format::{ColumnType, Value};
//! use engine::{ColumnDef, Engine, EngineConfig, ScanSpec, TableSpec};
//!
//! let engine = Engine::new(EngineConfig::default());
//! engine.create_database("shop").unwrap();
//! let def = engine.create_table(&TableSpec {
//!     database: "shop".into(),
//!     name: "items".into(),
//!     columns: vec![
//!         ColumnDef::new("id", ColumnType::LongLong).not_null().auto_increment(),
//!         ColumnDef::new("name", ColumnType::VarChar { max_length_bytes: 40 }),
//!     ],
//!     primary_key: vec!["id".into()],
//!     ..Default::default()
//! }).unwrap();
//! let mut trx = engine.begin();
//! let inserted = trx.insert(def.id, vec![Value::Null, Value::Bytes(b"pen".to_vec())]).unwrap();
//! assert_eq!(inserted.auto_increment_value, Some(1));
//! trx.commit(None).unwrap();
//! let reader = engine.begin();
//! let rows: Vec<_> = reader.scan(def.id, &ScanSpec::primary()).unwrap().collect();
//! assert_eq!(rows[0].1, vec![Value::Int(1), Value::Bytes(b"pen".to_vec())]);
//! ```

#![forbid(unsafe_code)]

mod alter;
pub mod catalog;
pub mod change;
pub mod codec;
pub mod collation;
pub mod column_attributes;
pub mod commit;
pub mod config;
mod ddl;
pub mod engine;
pub mod error;
pub mod key;
mod locks;
mod mdl;
mod memory;
mod mvcc;
pub mod partition;
mod purge;
mod purge_worker;
mod recovery;
pub mod redo;
mod registry;
pub mod row;
pub mod scan;
pub mod snapshot;
mod table;
pub mod transaction;
mod views;
pub mod write;

pub use alter::{QualifiedName, TableRebuild};
pub use catalog::{ColumnDef, CurrentTimestamp, IndexDef, IndexId, IndexSpec, TableDef, TableId, TableSpec, SERVER_DEFAULT_COLLATION};
pub use change::{ChangeKind, RowChange};
pub use column_attributes::{ColumnAttributes, Generated, GeometryAttributes};
pub use commit::{CommitError, CommitOutcome, PreparedTransaction, VisibleCommit};
pub use config::{EngineConfig, METADATA_LOCK_WAIT_TIMEOUT_DEFAULT};
pub use engine::Engine;
pub use error::{EngineError, Result};
pub use key::RowKey;
pub use partition::{Bound, PartitionDef, PartitionFunction, PartitionMethod, PartitionValues, Partitioning};
pub use purge::PURGE_QUEUED_KEYS_DEFERRED_MAX;
pub use redo::{ApplierSlot, DdlRecord, Lsn, MemoryRedo, NoRedo, RedoEntry, RedoSink, TableRename, Xid};
pub use registry::TrxId;
pub use row::Row;
pub use scan::{KeyRange, Scan, ScanSpec};
pub use snapshot::{CheckpointBegin, CheckpointLsns, SNAPSHOT_PART_BYTES};
pub use table::TableSize;
pub use transaction::{IsolationLevel, Savepoint, Transaction};
pub use write::{Inserted, LockingRead, UpdateCounts, UpdateOutcome};
