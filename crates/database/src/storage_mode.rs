//! `binlog_storage_engine`, as the data directory last ran with it, in
//! `datadir/binlog_storage_engine.cnf`:
//!
//! ```text
//! [binlogd]
//! binlog_storage_engine=engine
//! ```
//!
//! The variable is read at open, so a change takes effect at restart. The
//! file only records the switch (reported in `OpenReport` and the log):
//! recovery reads both modes' redo records whatever the mode, and rebuilds
//! the binlog's tail from redo before the new mode starts, so the binlog
//! stays one continuous sequence (same files, same GTIDs) across a switch
//! in either direction. Written crash-safely, after recovery.

use std::path::Path;

use storage::Storage;

use crate::config::{BinlogStorageEngine, DatabaseConfig, BINLOG_STORAGE_ENGINE_FILE};
use crate::error::{DatabaseError, Result};

const KEY: &str = "binlog_storage_engine";

/// The mode recorded in `dir`, if any.
pub fn load(storage: &dyn Storage, dir: &Path) -> Result<Option<BinlogStorageEngine>> {
    let path = dir.join(BINLOG_STORAGE_ENGINE_FILE);
    if !storage.exists(&path) {
        return Ok(None);
    }
    let bytes = storage.read_all(&path).map_err(|e| DatabaseError::io("read", &path, e))?;
    let text = String::from_utf8_lossy(&bytes);
    let value = text.lines().filter_map(|line| line.split_once('=')).find(|(name, _)| name.trim() == KEY).map(|(_, value)| value);
    match value.and_then(BinlogStorageEngine::parse) {
        Some(mode) => Ok(Some(mode)),
        None => Err(DatabaseError::corruption(path.display().to_string(), format!("no valid {KEY}=... line"))),
    }
}

/// Records the configured mode; returns the previous one when it differs.
pub fn record(storage: &dyn Storage, config: &DatabaseConfig) -> Result<Option<BinlogStorageEngine>> {
    let previous = load(storage, &config.dir)?;
    let current = config.binlog_storage_engine;
    if previous == Some(current) {
        return Ok(None);
    }
    let path = config.dir.join(BINLOG_STORAGE_ENGINE_FILE);
    let temp = config.dir.join(format!("{BINLOG_STORAGE_ENGINE_FILE}.tmp"));
    let text = format!("[binlogd]\n{KEY}={}\n", current.as_str());
    storage.write_atomically(&path, &temp, text.as_bytes()).map_err(|e| DatabaseError::io("write", &path, e))?;
    // No file: a new directory, or one from before the variable existed.
    if let Some(from) = previous {
        tracing::info!("binlog_storage_engine changed from '{}' to '{}'", from.as_str(), current.as_str());
    }
    Ok(previous)
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::SimStorage;

    #[test]
    fn records_switches_only() {
        let storage = SimStorage::new();
        let mut config = DatabaseConfig::new("/d");
        storage.create_dir_all(Path::new("/d")).unwrap();
        assert_eq!(record(&storage, &config).unwrap(), None);
        assert_eq!(load(&storage, Path::new("/d")).unwrap(), Some(BinlogStorageEngine::File));
        assert_eq!(record(&storage, &config).unwrap(), None);
        config.binlog_storage_engine = BinlogStorageEngine::Engine;
        assert_eq!(record(&storage, &config).unwrap(), Some(BinlogStorageEngine::File));
        assert_eq!(record(&storage, &config).unwrap(), None);
        config.binlog_storage_engine = BinlogStorageEngine::File;
        assert_eq!(record(&storage, &config).unwrap(), Some(BinlogStorageEngine::Engine));
    }
}
