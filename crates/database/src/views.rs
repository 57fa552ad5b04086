//! Narrow views of the database's parts, for the SQL layer, the
//! replication source and tests: what they read of the engine (its
//! catalog, its status) and of the binary log (its files, position,
//! counters, settings, readers). They change nothing. Whatever writes,
//! commits, DDL, rotation, purge and reset, goes through [`Database`],
//! which orders it with the commits in flight (see `commit.rs`); no caller
//! reaches around it to the engine or the log.

use std::sync::Arc;

use binlog::file_reader::FileEventReader;
use binlog::log::Counters;
use binlog::{BinaryLog, LogReader, Options};
use binlog_format::GtidSet;
use engine::{Engine, TableDef, TableId};

use crate::database::Database;
use crate::row_image::RowLogging;

/// The engine's catalog: databases, tables and their definitions.
#[derive(Clone, Copy)]
pub struct Catalog<'a> {
    engine: &'a Engine,
}

impl<'a> Catalog<'a> {
    /// The catalog of an engine running on its own (a database's is
    /// [`Database::catalog`]).
    pub fn new(engine: &'a Engine) -> Catalog<'a> {
        Catalog { engine }
    }

    pub fn databases(&self) -> Vec<String> {
        self.engine.databases()
    }

    /// `database`'s default collation; an error when it does not exist.
    pub fn database_collation(&self, database: &str) -> engine::Result<u16> {
        self.engine.database_collation(database)
    }

    /// The tables of `database`; an error when it does not exist.
    pub fn tables(&self, database: &str) -> engine::Result<Vec<String>> {
        self.engine.tables(database)
    }

    pub fn table(&self, database: &str, table: &str) -> engine::Result<Arc<TableDef>> {
        self.engine.table(database, table)
    }

    pub fn table_id(&self, database: &str, table: &str) -> engine::Result<TableId> {
        self.engine.table_id(database, table)
    }

    /// The value AUTO_INCREMENT gives the table next.
    pub fn auto_increment_next(&self, id: TableId) -> Option<u64> {
        self.engine.auto_increment_next(id)
    }

    /// The table's rows and estimated bytes (INFORMATION_SCHEMA.TABLES).
    pub fn table_size(&self, id: TableId) -> Option<engine::TableSize> {
        self.engine.table_size(id)
    }
}

/// What the engine reports: its GTID set and its purge backlog.
#[derive(Clone, Copy)]
pub struct EngineStatus<'a> {
    engine: &'a Engine,
}

impl EngineStatus<'_> {
    /// The GTIDs the engine committed (with the binlog's, after recovery,
    /// the same set; [`Database::executed_gtids`] is `gtid_executed`).
    pub fn executed_gtids(&self) -> GtidSet {
        self.engine.executed_gtids()
    }

    /// Keys of committed transactions waiting for purge
    /// (`Innodb_history_list_length`).
    pub fn purge_queued_keys(&self) -> usize {
        self.engine.purge_queued_keys()
    }
}

/// The binary log as status statements and readers (dump threads, `SHOW
/// BINLOG EVENTS`) see it.
#[derive(Clone, Copy)]
pub struct BinlogStatus<'a> {
    log: &'a BinaryLog,
}

impl<'a> BinlogStatus<'a> {
    /// The log's settings as it runs (`dir`, `server_id`, checksums...).
    /// `binlog_checksum` now (the algorithm of the file the next commit goes to).
    pub fn checksum(&self) -> bool {
        self.log.checksum()
    }

    pub fn options(&self) -> &'a Options {
        self.log.options()
    }

    /// The files the index lists, oldest first.
    pub fn file_names(&self) -> Vec<String> {
        self.log.file_names()
    }

    /// The active file and its end (`SHOW BINARY LOG STATUS`).
    pub fn active_position(&self) -> (String, u64) {
        self.log.active_position()
    }

    pub fn executed_gtids(&self) -> GtidSet {
        self.log.executed_gtids()
    }

    pub fn purged_gtids(&self) -> GtidSet {
        self.log.purged_gtids()
    }

    pub fn counters(&self) -> &'a Counters {
        self.log.counters()
    }

    /// `binlog_large_transaction_optimization_enabled` and `_threshold`.
    pub fn large_transaction_optimization(&self) -> (bool, u64) {
        self.log.large_transaction_optimization()
    }

    /// Readers that still need file `name` (what stopped a purge).
    pub fn readers_needing(&self, name: &str) -> usize {
        self.log.readers_needing(name)
    }

    /// The events of listed file `name` (`SHOW BINLOG EVENTS`).
    pub fn file_events(&self, name: &str) -> binlog::Result<FileEventReader> {
        self.log.file_events(name)
    }

    /// A reader from `position` in `file_name`, following the live tail.
    pub fn reader_from_position(&self, file_name: &str, position: u64) -> binlog::Result<LogReader> {
        LogReader::from_position(self.log, file_name, position)
    }

    /// A reader from the first transaction not in `executed`.
    pub fn reader_from_gtid_set(&self, executed: &GtidSet) -> binlog::Result<LogReader> {
        LogReader::from_gtid_set(self.log, executed)
    }
}

impl Database {
    /// The engine's catalog, to read.
    pub fn catalog(&self) -> Catalog<'_> {
        Catalog { engine: &self.inner.engine }
    }

    /// The engine's GTID set and purge backlog.
    pub fn engine_status(&self) -> EngineStatus<'_> {
        EngineStatus { engine: &self.inner.engine }
    }

    /// The binary log, to read: its files, position, counters, readers.
    pub fn binlog_status(&self) -> BinlogStatus<'_> {
        BinlogStatus { log: &self.inner.binlog }
    }

    /// `SET GLOBAL binlog_large_transaction_optimization_enabled`: read by
    /// each transaction at its first write.
    pub fn set_large_transaction_optimization_enabled(&self, enabled: bool) {
        self.inner.binlog.set_large_transaction_optimization_enabled(enabled);
    }

    /// Semi-synchronous replication's wait in the binlog's COMMIT stage
    /// (binlog's `replica_acks.rs`). Classic binlog files only: with the
    /// engine-integrated binlog a commit is decided in redo and written
    /// to the binlog behind, where no committer waits.
    pub fn set_replica_acks(&self, acks: Option<std::sync::Arc<dyn binlog::ReplicaAcks>>) {
        self.inner.binlog.set_replica_acks(acks);
    }

    /// The global `binlog_row_image`, `binlog_row_metadata` and
    /// `binlog_rows_query_log_events`: what a statement logs its rows
    /// with unless its session set its own.
    pub fn row_logging(&self) -> RowLogging {
        self.inner.row_logging.get()
    }

    /// SET GLOBAL of one of the row logging variables.
    pub fn set_row_logging(&self, logging: RowLogging) {
        self.inner.row_logging.set(logging);
    }

    /// `SET GLOBAL binlog_large_transaction_optimization_threshold`
    /// (bytes; an error below the minimum).
    pub fn set_large_transaction_optimization_threshold(&self, bytes: u64) -> binlog::Result<()> {
        self.inner.binlog.set_large_transaction_optimization_threshold(bytes)
    }

    /// `SET GLOBAL innodb_lock_wait_timeout`.
    pub fn set_lock_wait_timeout(&self, timeout: std::time::Duration) {
        self.inner.engine.set_lock_wait_timeout(timeout);
    }
}
