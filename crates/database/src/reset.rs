//! `RESET BINARY LOGS AND GTIDS` (`RESET MASTER`): every binlog file is
//! deleted, the log starts again at `binlog.000001`, and `gtid_executed`
//! and `gtid_purged` become empty in the binlog and in the engine, so the
//! next transaction is `server_uuid:1`.
//!
//! No commit, DDL statement or checkpoint runs meanwhile (their locks are
//! held). With `binlog_storage_engine = engine` the write-behind writer
//! first writes every committed transaction to the old files, and after
//! step 4 the engine commit order numbers GTIDs from 1 again. The steps,
//! and what a crash after each leaves:
//!
//! | step | durable when it ends | recovery |
//! |------|----------------------|----------|
//! | 1. redo flushed | every commit record | — |
//! | 2. marker `binlog.reset_pending` written and synced | the intent | finishes the reset (steps 3–5) |
//! | 3. redo GTID reset record, synced; engine set emptied | replay empties the engine's set here | finishes the reset |
//! | 4. binlog reset: index emptied, files removed, `binlog.000001` created and listed | a fresh log | finishes the reset (idempotent) |
//! | 5. marker removed | — | nothing to do |
//!
//! So after any crash the engine's and the binlog's GTID sets agree
//! (recovery's check), and the index never names a missing file: it is
//! emptied before the first file goes.

use std::path::PathBuf;

use engine::Engine;
use redo::{Durability, RedoLog};
use storage::Storage;

use crate::config::DatabaseConfig;
use crate::crash_points;
use crate::database::Database;
use crate::error::{DatabaseError, Result};
use crate::redo_sink;

/// Present while a reset is under way (in the binlog directory).
pub const RESET_MARKER_NAME: &str = "binlog.reset_pending";

fn marker_path(binlog_dir: &std::path::Path) -> PathBuf {
    binlog_dir.join(RESET_MARKER_NAME)
}

impl Database {
    /// `RESET BINARY LOGS AND GTIDS`. Fails with `Binlog(Invalid)` while a
    /// reader (a replica's dump thread) is open.
    pub fn reset_binary_logs_and_gtids(&self) -> Result<()> {
        let inner = &self.inner;
        // Lock order (database.rs): checkpoint, DDL, then no commit between
        // its binlog write and its engine commit.
        let _no_checkpoint = inner.checkpoint_lock.lock();
        let _no_ddl = inner.ddl_lock.lock();
        let _no_commit_in_flight = inner.rotation.write();
        inner.check_writable()?;
        if inner.binlog.open_readers() > 0 {
            return Err(DatabaseError::Binlog(binlog::BinlogError::Invalid("the binary log is being read".into())));
        }
        if let Some(engine_binlog) = inner.binlog_mode.engine() {
            // Engine mode: the writer is behind the commit path. Everything
            // committed goes to the old files first, or it would land in
            // the new log after the reset, under GTIDs the reset discards.
            engine_binlog.wait_written_all()?;
        }
        inner.redo.flush()?;
        let storage = inner.config.storage.as_ref();
        let dir = inner.binlog.options().dir.clone();
        let marker = marker_path(&dir);
        storage
            .write_atomically(&marker, &dir.join("binlog.reset_pending.tmp"), b"reset\n")
            .map_err(|e| DatabaseError::io("write", &marker, e))?;
        let result = (|| -> Result<()> {
            inner.crash.hit(crash_points::RESET_AFTER_MARKER).map_err(|e| DatabaseError::Crash(e.to_string()))?;
            inner.redo.append(&redo_sink::gtid_reset_record(), Durability::Sync)?;
            inner.engine.reset_executed_gtids();
            inner.crash.hit(crash_points::RESET_AFTER_REDO_RECORD).map_err(|e| DatabaseError::Crash(e.to_string()))?;
            inner.binlog.reset()?;
            if let Some(engine_binlog) = inner.binlog_mode.engine() {
                // The commit order numbers GTIDs itself: it starts at 1 too.
                engine_binlog.restart_gtid_numbering();
            }
            inner.crash.hit(crash_points::RESET_AFTER_BINLOG_RESET).map_err(|e| DatabaseError::Crash(e.to_string()))?;
            remove_marker(storage, &dir)
        })();
        if let Err(error) = &result {
            // Half done: the marker makes the next start finish it.
            inner.fail(&format!("RESET BINARY LOGS AND GTIDS failed: {error}"));
        }
        result
    }
}

fn remove_marker(storage: &dyn Storage, dir: &std::path::Path) -> Result<()> {
    let marker = marker_path(dir);
    storage.remove(&marker).map_err(|e| DatabaseError::io("remove", &marker, e))?;
    storage.sync_dir(dir).map_err(|e| DatabaseError::io("fsync directory", dir, e))
}

/// At open, after redo replay and before the binlog opens: when the marker
/// is there, a reset was interrupted; do it again (every step is idempotent).
pub(crate) fn finish_interrupted(engine: &Engine, redo: &RedoLog, binlog_options: &binlog::Options, config: &DatabaseConfig) -> Result<()> {
    let storage = config.storage.as_ref();
    let dir = &binlog_options.dir;
    if !storage.exists(&marker_path(dir)) {
        return Ok(());
    }
    tracing::warn!("recovery: finishing an interrupted RESET BINARY LOGS AND GTIDS");
    redo.append(&redo_sink::gtid_reset_record(), Durability::Sync)?;
    engine.reset_executed_gtids();
    binlog::reset::remove_all_files(storage, binlog_options, &config.binlog_crash_points)?;
    remove_marker(storage, dir)
}
