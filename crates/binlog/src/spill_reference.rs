//! A large transaction's spill file that a redo record refers to, instead
//! of carrying its body (`binlog_storage_engine = engine`).
//!
//! ```text
//! commit:   seal the spill file (body fdatasynced), rename it to
//!           .binlogd-tmp/binlogd-referenced-<name>, fsync the directory
//!           → redo record with a reference (this struct), durable
//! writer:   promotes the file into the log by rename (as BOLT does):
//!           the referenced name is gone
//! recovery: redo holds the reference and the log lacks its GTID
//!           → TransactionCache::from_spill_reference, then promoted;
//!           afterwards every referenced file left is removed
//!           (its transaction never reached redo, or is in the log)
//! ```
//!
//! The binlog's own startup keeps these files (another prefix than
//! ordinary spill files): only the database, after replaying redo, knows
//! which are still needed.

use std::collections::BTreeSet;

use crate::error::{BinlogError, Result};
use crate::log::BinaryLog;
use crate::options::REFERENCED_SPILL_PREFIX;

/// What a redo record keeps of a sealed spill file (redo FORMAT.md,
/// section `BINLOG_FILE_REFERENCE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillReference {
    /// In the log's spill directory.
    pub file_name: String,
    /// The events carry CRC32 footers (`binlog_checksum` when written).
    pub checksum: bool,
    /// Bytes reserved before the body for the promoted file's header.
    pub header_room: u64,
    pub body_length: u64,
    pub event_count: u64,
    /// The terminating event (Xid or COMMIT), checked at recovery.
    pub last_event_size: u64,
    pub terminating_event_type: u8,
    /// The first event's timestamp (the Gtid event's header).
    pub timestamp: u32,
}

impl BinaryLog {
    /// Removes every referenced spill file except `keep` (file names);
    /// returns the names removed.
    pub fn remove_referenced_spills(&self, keep: &BTreeSet<String>) -> Result<Vec<String>> {
        let storage = &self.inner.storage;
        let dir = self.options().spill_dir();
        let mut removed = Vec::new();
        for name in storage.list(&dir).map_err(|e| BinlogError::io("list", &dir, e))? {
            if name.starts_with(REFERENCED_SPILL_PREFIX) && !keep.contains(&name) {
                let path = dir.join(&name);
                storage.remove(&path).map_err(|e| BinlogError::io("remove", &path, e))?;
                removed.push(name);
            }
        }
        if !removed.is_empty() {
            storage.sync_dir(&dir).map_err(|e| BinlogError::io("fsync directory", &dir, e))?;
        }
        Ok(removed)
    }

    /// The cache of a referenced spill file, for recovery to append.
    pub fn cache_from_spill_reference(&self, reference: &SpillReference) -> Result<crate::TransactionCache> {
        crate::TransactionCache::from_spill_reference(self.inner.cache_context.clone(), reference)
    }
}
