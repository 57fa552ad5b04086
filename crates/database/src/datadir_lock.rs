//! One server per data directory: an exclusive `flock` on
//! `<datadir>/binlogd.lock`, taken before anything in the directory is read
//! or written and held for the server's life.
//!
//! Two servers on one directory would hand out the same GTIDs and
//! interleave their writes to the binlog, its index and the redo log, and
//! even a second start that fails later (its port taken) would already
//! have run recovery under the live server. The kernel drops the lock when
//! the holder exits, however it exits (kill -9 included), so a lock file
//! left behind never blocks the next start. The file holds the holder's
//! PID for the error message; it is never removed, since removing a lock
//! file while another process opens it would let two holders in.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub const DATADIR_LOCK_FILE: &str = "binlogd.lock";

/// Held while the data directory is in use; dropping it (or the process
/// ending) releases the directory.
#[derive(Debug)]
pub struct DataDirLock {
    // Never read: the open file is the lock.
    _file: File,
    path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum DataDirLockError {
    #[error("the data directory {dir} is in use by another binlogd (PID {pid}, lock file {path})", dir = .dir.display(), path = .path.display())]
    InUse { dir: PathBuf, path: PathBuf, pid: String },
    #[error("cannot lock the data directory through {path}: {source}", path = .path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

impl DataDirLock {
    /// Locks `dir` (which must exist) without waiting: a directory in use
    /// is refused at once, naming the PID that holds it.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, DataDirLockError> {
        let path = dir.join(DATADIR_LOCK_FILE);
        let io = |source| DataDirLockError::Io { path: path.clone(), source };
        // Not truncated on open: the holder's PID must survive a refused
        // second start.
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o600).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = match pid.trim() {
                    "" => "unknown".to_string(),
                    pid => pid.to_string(),
                };
                return Err(DataDirLockError::InUse { dir: dir.to_path_buf(), path, pid });
            }
            Err(TryLockError::Error(error)) => return Err(io(error)),
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(DataDirLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        let error = DataDirLock::acquire(dir.path()).unwrap_err();
        match &error {
            DataDirLockError::InUse { pid, .. } => assert_eq!(pid, &std::process::id().to_string()),
            other => panic!("expected InUse, got {other:?}"),
        }
        assert!(error.to_string().contains("in use by another binlogd"), "{error}");
        drop(first);
        let again = DataDirLock::acquire(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(again.path()).unwrap().trim(), std::process::id().to_string());
    }

    #[test]
    fn the_lock_file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let lock = DataDirLock::acquire(dir.path()).unwrap();
        assert_eq!(std::fs::metadata(lock.path()).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
