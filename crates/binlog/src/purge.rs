//! `PURGE BINARY LOGS TO 'file'`, `PURGE BINARY LOGS BEFORE 'time'` and
//! `binlog_expire_logs_seconds`. The index is rewritten first (crash-safe),
//! then the files are removed: a crash in between leaves orphans that the
//! next start deletes, never an index naming a missing file. The active
//! file and any file an open reader still needs are never purged.

use std::time::{Duration, SystemTime};

use binlog_format::gtid_set::GtidSet;

use crate::crash_points;
use crate::error::{BinlogError, Result};
use crate::index;
use crate::log::BinaryLog;

/// What a purge did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PurgeReport {
    pub removed: Vec<String>,
    /// Set when a reader's position stopped the purge early (MySQL warns
    /// "file ... was not purged because it is being read").
    pub stopped_by_reader: Option<String>,
    /// Set when a file whose transactions are not all committed in the
    /// engine yet stopped the purge.
    pub stopped_by_in_flight: Option<String>,
}

impl BinaryLog {
    /// Purges every file before `name` (which stays). Error 1373 when
    /// `name` is not in the index.
    pub fn purge_to(&self, name: &str) -> Result<PurgeReport> {
        let names = self.file_names();
        let position = names.iter().position(|n| n == name).ok_or(BinlogError::LogNotFound)?;
        self.purge_first(position)
    }

    /// Purges the files last modified before `time` (oldest first,
    /// stopping at the first newer one).
    pub fn purge_before(&self, time: SystemTime) -> Result<PurgeReport> {
        let names = self.file_names();
        let mut count = 0;
        for name in &names[..names.len().saturating_sub(1)] {
            let path = self.inner.options.dir.join(name);
            let modified = self.inner.storage.modified(&path).map_err(|e| BinlogError::io("stat", &path, e))?;
            if modified >= time {
                break;
            }
            count += 1;
        }
        self.purge_first(count)
    }

    /// Open readers that still need file `name` (reading it or an older
    /// one): the count in MySQL's "being read by N thread(s)" warning.
    pub fn readers_needing(&self, name: &str) -> usize {
        let number = self.inner.options.file_number(name).unwrap_or(0);
        self.inner.readers.lock().values().filter(|reading| **reading <= number).count()
    }

    /// `binlog_expire_logs_seconds`.
    pub fn purge_expired(&self) -> Result<PurgeReport> {
        let seconds = self.inner.options.binlog_expire_logs_seconds;
        match SystemTime::now().checked_sub(Duration::from_secs(seconds)) {
            Some(time) if seconds > 0 => self.purge_before(time),
            _ => Ok(PurgeReport::default()),
        }
    }

    /// Purges the first `count` files of the index (never the active one).
    fn purge_first(&self, count: usize) -> Result<PurgeReport> {
        self.check_usable()?;
        // Closed files whose transactions all committed lose their in-use
        // flag now rather than at the next commit, so they can go.
        self.clear_closed_files()?;
        let inner = &self.inner;
        let options = &inner.options;
        let mut writer = inner.writer.lock();
        let count = count.min(writer.index.len().saturating_sub(1));
        let mut report = PurgeReport::default();
        let oldest_read = inner.readers.lock().values().copied().min();
        let mut purge: Vec<String> = Vec::new();
        for name in &writer.index[..count] {
            let number = options.file_number(name).unwrap_or(0);
            if oldest_read.is_some_and(|reading| number >= reading) {
                report.stopped_by_reader = Some(name.clone());
                break;
            }
            // Transactions in it may still be uncommitted in the engine.
            if inner.in_flight.is_pending(number) {
                report.stopped_by_in_flight = Some(name.clone());
                break;
            }
            purge.push(name.clone());
        }
        if purge.is_empty() {
            return Ok(report);
        }
        let remaining: Vec<String> = writer.index[purge.len()..].to_vec();
        // gtid_purged becomes the new first file's Previous_gtids.
        let first_path = options.dir.join(&remaining[0]);
        let new_purged = read_previous_gtids(self, &first_path)?;
        let result = (|| -> Result<()> {
            index::store(inner.storage.as_ref(), options, &remaining, &inner.crash)?;
            writer.index = remaining.clone();
            inner.crash.hit(crash_points::PURGE_AFTER_INDEX).map_err(|e| BinlogError::io("crash point", &first_path, e))?;
            for (position, name) in purge.iter().enumerate() {
                let path = options.dir.join(name);
                inner.storage.remove(&path).map_err(|e| BinlogError::io("remove", &path, e))?;
                report.removed.push(name.clone());
                if position == 0 {
                    inner.crash.hit(crash_points::PURGE_AFTER_FIRST_REMOVE).map_err(|e| BinlogError::io("crash point", &path, e))?;
                }
            }
            inner.storage.sync_dir(&options.dir).map_err(|e| BinlogError::io("fsync directory", &options.dir, e))
        })();
        drop(writer);
        if let Err(error) = result {
            self.poison(&error);
            return Err(error);
        }
        *inner.purged_gtids.lock() = new_purged;
        Ok(report)
    }
}

fn read_previous_gtids(log: &BinaryLog, path: &std::path::Path) -> Result<GtidSet> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (_, previous, _) = crate::recovery::read_preamble(log.inner.storage.as_ref(), &log.inner.options.dir, &name)?;
    Ok(previous)
}
