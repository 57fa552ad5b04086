//! `binlog.index`: the list of binlog files, one `./name` per line, oldest
//! first. A binlog file is part of the log if and only if the index lists
//! it. The index is replaced crash-safely: `binlog.index_crash_safe` is
//! written and synced, renamed over `binlog.index`, then the directory is
//! synced, so after a crash the index is either the old or the new list.

use crate::crash_points::{self, CrashPoints};
use crate::error::{BinlogError, CorruptionKind, Result};
use crate::options::Options;
use storage::Storage;

/// Reads the index, finishing or discarding an interrupted rewrite.
pub fn load(storage: &dyn Storage, options: &Options) -> Result<Vec<String>> {
    let index = options.index_path();
    let temp = options.index_temp_path();
    if storage.exists(&temp) {
        if storage.exists(&index) {
            // The rename never happened: the old index is the truth.
            storage.remove(&temp).map_err(|e| BinlogError::io("remove", &temp, e))?;
        } else {
            // A rewrite lost the old name but its new content is complete
            // (it was synced before the rename): adopt it.
            storage.rename(&temp, &index).map_err(|e| BinlogError::io("rename", &temp, e))?;
        }
        storage.sync_dir(&options.dir).map_err(|e| BinlogError::io("fsync directory", &options.dir, e))?;
    }
    if !storage.exists(&index) {
        return Ok(Vec::new());
    }
    let bytes = storage.read_all(&index).map_err(|e| BinlogError::io("read", &index, e))?;
    let text = String::from_utf8(bytes).map_err(|_| BinlogError::Corruption {
        file: index.display().to_string(),
        offset: 0,
        kind: CorruptionKind::Malformed,
        reason: "index is not UTF-8 text".into(),
    })?;
    let mut names = Vec::new();
    for (line_number, line) in text.lines().enumerate() {
        let name = line.trim().trim_start_matches("./");
        if name.is_empty() {
            continue;
        }
        if options.file_number(name).is_none() {
            return Err(BinlogError::Corruption {
                file: index.display().to_string(),
                offset: line_number as u64,
                kind: CorruptionKind::Malformed,
                reason: format!("line {} names {name:?}, not a {}.NNNNNN file", line_number + 1, options.basename),
            });
        }
        names.push(name.to_string());
    }
    Ok(names)
}

/// Replaces the index with `names`, crash-safely.
pub fn store(storage: &dyn Storage, options: &Options, names: &[String], crash: &CrashPoints) -> Result<()> {
    let index = options.index_path();
    let temp = options.index_temp_path();
    let mut text = String::new();
    for name in names {
        text.push_str("./");
        text.push_str(name);
        text.push('\n');
    }
    let file = storage.create(&temp).map_err(|e| BinlogError::io("create", &temp, e))?;
    file.write_at(0, text.as_bytes()).map_err(|e| BinlogError::io("write", &temp, e))?;
    file.sync_data().map_err(|e| BinlogError::io("fdatasync", &temp, e))?;
    drop(file);
    crash.hit(crash_points::INDEX_AFTER_TEMP_SYNC).map_err(|e| BinlogError::io("crash point", &temp, e))?;
    storage.rename(&temp, &index).map_err(|e| BinlogError::io("rename", &temp, e))?;
    crash.hit(crash_points::INDEX_AFTER_RENAME).map_err(|e| BinlogError::io("crash point", &index, e))?;
    storage.sync_dir(&options.dir).map_err(|e| BinlogError::io("fsync directory", &options.dir, e))
}
