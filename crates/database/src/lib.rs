//! binlogd's durable database: the engine (`engine`), its redo log
//! (`redo`) and the binary log (`binlog`) joined by two-phase commit, as
//! InnoDB and the MySQL binlog are (`binlog_storage_engine` empty).
//!
//! Where to look:
//! - the commit path and DDL: [`commit`] (`Database::commit`,
//!   `Database::execute_ddl`), the events it logs: [`binlog_events`];
//! - what the engine writes to redo and how durably: [`redo_sink`]; one
//!   group commit for both logs: `group_commit.rs`;
//! - opening a data directory, recovery's decision table: [`recovery`];
//! - background checkpoints and the snapshot layout: [`checkpoint`];
//! - crash points: [`crash_points`] (this crate's), plus the binlog's and
//!   the redo log's, all armed through [`DatabaseConfig`].
//!
//! ```
//! use binlog_format::{ColumnType, Value};
//! use database::{CommitRequest, Database, DatabaseConfig, StatementContext};
//! use engine::{ColumnDef, TableSpec};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let (db, _report) = Database::open(DatabaseConfig::new(dir.path())).unwrap();
//! let session = StatementContext::new(1, "shop");
//! db.execute_ddl(&session, "CREATE DATABASE shop", |e| e.create_database("shop")).unwrap();
//! let items = db
//!     .execute_ddl(&session, "CREATE TABLE items (id BIGINT PRIMARY KEY, name VARCHAR(40))", |e| {
//!         e.create_table(&TableSpec {
//!             database: "shop".into(),
//!             name: "items".into(),
//!             columns: vec![
//!                 ColumnDef::new("id", ColumnType::LongLong).not_null(),
//!                 ColumnDef::new("name", ColumnType::VarChar { max_length_bytes: 160 }),
//!             ],
//!             primary_key: vec!["id".into()],
//!             ..Default::default()
//!         })
//!     })
//!     .unwrap();
//! let mut trx = db.begin();
//! trx.insert(items.id, vec![Value::Int(1), Value::Bytes(b"pen".to_vec())]).unwrap();
//! let logged = db.commit(CommitRequest::new(trx, &session)).unwrap().expect("a write goes through the binlog");
//! assert_eq!(logged.gtid.gno, 3);
//! assert_eq!(db.engine_status().executed_gtids(), db.binlog_status().executed_gtids());
//! db.close().unwrap();
//! ```

#![forbid(unsafe_code)]

pub mod binlog_events;
pub mod checkpoint;
pub mod commit;
pub mod config;
pub mod crash_points;
mod database;
pub mod datadir_lock;
pub mod engine_binlog;
pub mod error;
mod group_commit;
mod group_commit_stages;
pub mod partial_json;
pub mod recovery;
pub mod redo_sink;
pub mod replicated_rows;
pub mod reset;
pub mod row_image;
pub mod server_uuid;
pub mod storage_mode;
pub mod table_maps;
pub mod views;
pub mod write_ahead;
mod writeset;

// The crates the API speaks in, for users that need only this one.
pub use {binlog, engine, redo};

pub use binlog_events::{StatementContext, BINLOG_ROW_EVENT_MAX_SIZE};
pub use commit::{CommitRequest, NextGtid};
pub use config::{BinlogStorageEngine, DatabaseConfig};
pub use crash_points::CrashPoints;
pub use database::{Database, DatabaseCounters, OpenReport};
pub use datadir_lock::{DataDirLock, DataDirLockError};
pub use error::{DatabaseError, Result};
pub use group_commit_stages::GroupCommitStages;
pub use partial_json::RowJsonDiffs;
pub use row_image::{LoggedStatement, RowImage, RowLogging, RowMetadata, StatementLog};
pub use views::{BinlogStatus, Catalog, EngineStatus};
pub use write_ahead::WrittenAhead;
