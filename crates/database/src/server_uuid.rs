//! `server_uuid`, persisted in `datadir/auto.cnf` exactly as mysqld does:
//!
//! ```text
//! [auto]
//! server-uuid=8a94f357-aab4-11df-86ab-c80aa9429562
//! ```
//!
//! At first start the file is written crash-safely (temporary name,
//! fdatasync, rename, directory fsync) before any GTID uses the UUID, so
//! every later start generates GTIDs under the same source id.

use std::path::Path;

use binlog_format::Uuid;
use rand::RngCore;
use storage::Storage;

use crate::config::AUTO_CNF;
use crate::error::{DatabaseError, Result};

/// The UUID in `dir/auto.cnf`; when there is none, `preferred` (unless it
/// is the all-zero default) or a random one, written there first.
pub fn load_or_create(storage: &dyn Storage, dir: &Path, preferred: Uuid) -> Result<Uuid> {
    let path = dir.join(AUTO_CNF);
    if storage.exists(&path) {
        let bytes = storage.read_all(&path).map_err(|e| DatabaseError::io("read", &path, e))?;
        return parse(&String::from_utf8_lossy(&bytes))
            .ok_or_else(|| DatabaseError::corruption(path.display().to_string(), "no valid server-uuid=... line in the [auto] section"));
    }
    let uuid = if preferred != Uuid::default() {
        preferred
    } else {
        let mut bytes = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut bytes);
        Uuid::from_random_bytes(bytes)
    };
    let temp = dir.join(format!("{AUTO_CNF}.tmp"));
    storage
        .write_atomically(&path, &temp, format!("[auto]\nserver-uuid={uuid}\n").as_bytes())
        .map_err(|e| DatabaseError::io("write", &path, e))?;
    Ok(uuid)
}

/// `server-uuid` of the `[auto]` section.
fn parse(text: &str) -> Option<Uuid> {
    let mut in_auto = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_auto = line.eq_ignore_ascii_case("[auto]");
        } else if in_auto {
            if let Some((name, value)) = line.split_once('=') {
                if name.trim() == "server-uuid" {
                    return value.trim().parse().ok();
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::SimStorage;

    #[test]
    fn written_once_then_read_back() {
        let storage = SimStorage::new();
        let dir = Path::new("/data");
        storage.create_dir_all(dir).unwrap();
        let first = load_or_create(&storage, dir, Uuid::default()).unwrap();
        assert_ne!(first, Uuid::default());
        let text = String::from_utf8(storage.read_all(&dir.join("auto.cnf")).unwrap()).unwrap();
        assert_eq!(text, format!("[auto]\nserver-uuid={first}\n"));
        assert_eq!(load_or_create(&storage, dir, Uuid([3; 16])).unwrap(), first);
        // Durable: a power cut right after keeps it.
        assert_eq!(load_or_create(&storage.crash_image(None), dir, Uuid::default()).unwrap(), first);
    }

    #[test]
    fn parses_mysqlds_file() {
        let uuid = parse("[auto]\nserver-uuid=8a94f357-aab4-11df-86ab-c80aa9429562\n").unwrap();
        assert_eq!(uuid.to_string(), "8a94f357-aab4-11df-86ab-c80aa9429562");
        assert!(parse("[other]\nserver-uuid=8a94f357-aab4-11df-86ab-c80aa9429562\n").is_none());
    }
}
