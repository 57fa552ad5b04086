//! [`OsStorage`]: the seam on the real file system. Files it creates are
//! mode 0600 and directories 0700 (before the umask), MySQL's defaults:
//! the data directory holds password hashes and every committed row.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use crate::seam::{FileHandle, Storage, StorageFile};

/// Mode of every file the seam creates.
pub const FILE_MODE: u32 = 0o600;
/// Mode of every directory the seam creates.
pub const DIRECTORY_MODE: u32 = 0o700;

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsStorage;

struct OsFile(File);

impl StorageFile for OsFile {
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.0.write_all_at(data, offset)
    }
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> io::Result<usize> {
        FileExt::read_at(&self.0, buffer, offset)
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
    fn truncate(&self, length: u64) -> io::Result<()> {
        self.0.set_len(length)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
}

fn with_path(error: io::Error, op: &str, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{op} {}: {error}", path.display()))
}

impl Storage for OsStorage {
    fn create(&self, path: &Path) -> io::Result<FileHandle> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(FILE_MODE)
            .open(path)
            .map_err(|e| with_path(e, "create", path))?;
        Ok(Arc::new(OsFile(file)))
    }
    fn open(&self, path: &Path) -> io::Result<FileHandle> {
        let file = OpenOptions::new().read(true).write(true).open(path).map_err(|e| with_path(e, "open", path))?;
        Ok(Arc::new(OsFile(file)))
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to).map_err(|e| with_path(e, "rename", from))
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path).map_err(|e| with_path(e, "remove", path))
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir).and_then(|d| d.sync_all()).map_err(|e| with_path(e, "fsync directory", dir))
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        DirBuilder::new().recursive(true).mode(DIRECTORY_MODE).create(dir).map_err(|e| with_path(e, "create directory", dir))
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| with_path(e, "list", dir))? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }
    fn modified(&self, path: &Path) -> io::Result<SystemTime> {
        std::fs::metadata(path).and_then(|m| m.modified()).map_err(|e| with_path(e, "stat", path))
    }
}
