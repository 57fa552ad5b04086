//! Writing a large transaction ahead of its commit, as InnoDB and mysqld
//! do: its row events go to its binlog cache (spilling to a file past
//! `binlog_cache_size`) and its changes to redo as prepare parts while its
//! statements run, so COMMIT only adds what the last statements changed,
//! the prepare record and the Xid. Without this, COMMIT of a 640 MiB
//! transaction encoded and wrote 1.3 GB at commit time (measured: 2.6 s of
//! binlog cache and 3.9 s of redo on a loaded machine) while the other
//! sessions' commits competed with it for the disk and the CPU.
//!
//! The session calls [`Database::write_ahead`] after each statement of an
//! open transaction; it writes only once `binlogd_write_ahead_min_changes`
//! (default [`WRITE_AHEAD_MIN_CHANGES_DEFAULT`]) changes have gathered, so small transactions (sysbench's) never pay for
//! it.
//!
//! Crash safety: prepare parts without a prepare record are ignored by
//! recovery (`recovery.rs`), and a checkpoint keeps redo from the first
//! part written ahead (`TrxState::LoggedAhead` in the engine). A binlog
//! cache is never durable before the commit's own steps.
//!
//! | failure | what happens |
//! |---------|--------------|
//! | appending row events (1197, a bad value) | the statement fails; the cache is dropped and rebuilt from all changes at commit |
//! | writing redo parts | the engine rolls the whole transaction back (its parts may be in redo, without a prepare) |

use engine::Transaction;

use crate::binlog_events::{RowEvents, StatementContext};
use crate::database::Database;
use crate::error::Result;

/// A statement end writes ahead once this many changes are not yet
/// written (about 4 MiB of rows of 4 KB; a sysbench transaction has 4).
pub const WRITE_AHEAD_MIN_CHANGES_DEFAULT: usize = 1024;

/// What a running transaction has written ahead; dropping it (rollback)
/// deletes its binlog cache and spill file.
pub struct WrittenAhead {
    pub(crate) events: RowEvents,
}

impl Database {
    /// Whether [`Database::write_ahead`] would write anything now: a check
    /// of two counters, so a session can skip building the statement
    /// context after every statement of a small transaction.
    pub fn wants_write_ahead(&self, trx: &Transaction, ahead: &Option<WrittenAhead>) -> bool {
        let inner = &self.inner;
        let min_changes = inner.config.write_ahead_min_changes;
        // Engine mode logs a transaction as one record at commit.
        if inner.binlog_mode.engine().is_some() || !trx.is_active() || min_changes == 0 {
            return false;
        }
        let encoded = ahead.as_ref().map_or(0, |written| written.events.encoded_changes());
        trx.changes().len() >= encoded + min_changes
    }

    /// Writes `trx`'s changes since the last call ahead of its commit, if
    /// enough have gathered (see the module docs). Call between statements.
    pub fn write_ahead(&self, trx: &mut Transaction, ahead: &mut Option<WrittenAhead>, context: &StatementContext) -> Result<()> {
        if !self.wants_write_ahead(trx, ahead) {
            return Ok(());
        }
        let inner = &self.inner;
        inner.check_writable()?;
        if ahead.is_none() {
            *ahead = Some(WrittenAhead { events: RowEvents::begin(&inner.binlog, context)? });
        }
        let written = ahead.as_mut().expect("just set");
        if let Err(error) = written.events.append(&inner.tables(), trx.changes(), context) {
            // Rebuilt from every change at commit.
            *ahead = None;
            return Err(error);
        }
        trx.log_changes_ahead()?;
        Ok(())
    }
}
