//! `RESET BINARY LOGS AND GTIDS` (`RESET MASTER`), the binary log's part:
//! every file goes, numbering restarts at 1, `gtid_executed` and
//! `gtid_purged` become empty. The caller (the database) holds off
//! commits, clears the engine's GTIDs and leaves a marker that makes
//! recovery finish an interrupted reset (see `database::reset`).
//!
//! Durability order: the index is first rewritten empty (crash-safe), so
//! from then on no listed file is missing whatever happens next; then the
//! old files are removed; then the new first file is created and synced
//! before the index names it (as at every rotation).

use std::sync::atomic::Ordering;

use binlog_format::gtid_set::GtidSet;

use crate::error::{BinlogError, Result};
use crate::index;
use crate::log::{create_file, BinaryLog};
use crate::options::Options;
use storage::Storage;

impl BinaryLog {
    /// Open readers (dump threads, CDC clients): a reset would pull their
    /// files away, so it is refused while there are any.
    pub fn open_readers(&self) -> usize {
        self.inner.readers.lock().len()
    }

    /// Deletes every binlog file and starts again at file 1 with empty GTID
    /// sets. The caller guarantees no commit is in flight (the database's
    /// rotation lock) and no reader is open.
    pub fn reset(&self) -> Result<()> {
        self.check_usable()?;
        let inner = &self.inner;
        if self.open_readers() > 0 {
            return Err(BinlogError::Invalid("the binary log is being read".into()));
        }
        let mut writer = inner.writer.lock();
        if writer.closed {
            return Err(BinlogError::Closed);
        }
        // Groups between FLUSH and COMMIT finish first (none with the
        // caller's lock, but a reset must not race a sync).
        inner.in_flight.wait_drained();
        // Closed files lose their in-use flag now: nothing may touch a
        // file after it is removed.
        self.clear_closed_files()?;
        let _sync = inner.sync_stage.lock();
        let result = (|| -> Result<()> {
            remove_all_files(inner.storage.as_ref(), &inner.options, &inner.crash)?;
            let executed = GtidSet::new();
            let active = create_file(
                inner.storage.as_ref(),
                &inner.options,
                1,
                &executed,
                inner.checksum.load(std::sync::atomic::Ordering::Acquire),
            )?;
            index::store(inner.storage.as_ref(), &inner.options, std::slice::from_ref(&active.name), &inner.crash)?;
            writer.index = vec![active.name.clone()];
            let (number, position) = (active.number, active.position);
            writer.active = active;
            writer.executed = executed;
            writer.next_gno = 1;
            inner.owners.reset_floor();
            // As at a rotation: sequence numbers restart in the new file,
            // the global sequence (behind `max_committed`) goes on.
            writer.dependency.rotate();
            *inner.purged_gtids.lock() = GtidSet::new();
            // Readers compare positions: the sequence starts over.
            inner.visible.reset(number, position);
            Ok(())
        })();
        drop(writer);
        if let Err(error) = &result {
            self.poison(error);
        }
        inner.counters.rotations.fetch_add(u64::from(result.is_ok()), Ordering::Relaxed);
        result
    }
}

/// Empties the index (crash-safely), then removes every binlog file of
/// the directory, listed or orphaned. Recovery calls this to finish an
/// interrupted reset before the log opens.
pub fn remove_all_files(storage: &dyn Storage, options: &Options, crash: &crate::CrashPoints) -> Result<()> {
    index::store(storage, options, &[], crash)?;
    let names = storage.list(&options.dir).map_err(|e| BinlogError::io("list", &options.dir, e))?;
    for name in names.iter().filter(|name| options.file_number(name).is_some()) {
        let path = options.dir.join(name);
        storage.remove(&path).map_err(|e| BinlogError::io("remove", &path, e))?;
    }
    storage.sync_dir(&options.dir).map_err(|e| BinlogError::io("fsync directory", &options.dir, e))
}
