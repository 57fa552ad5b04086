//! The one storage seam. Every create, write, read, fdatasync, directory
//! fsync, truncate, rename and removal of the binary log goes through
//! [`Storage`], so tests can substitute [`crate::sim_storage::SimStorage`]
//! and cut durability at any sync, tear writes, or fail an fsync.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// A file opened through [`Storage`]. Positional I/O only, so one handle
/// serves a writer and any number of readers at once.
pub trait StorageFile: Send + Sync {
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Reads up to `buffer.len()` bytes; returns how many (0 at end).
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> io::Result<usize>;
    fn len(&self) -> io::Result<u64>;
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    fn truncate(&self, length: u64) -> io::Result<()>;
    /// fdatasync: the file's bytes (not its directory entry) are durable.
    fn sync_data(&self) -> io::Result<()>;

    /// Reads exactly `buffer.len()` bytes or fails with `UnexpectedEof`.
    fn read_exact_at(&self, mut offset: u64, mut buffer: &mut [u8]) -> io::Result<()> {
        while !buffer.is_empty() {
            match self.read_at(offset, buffer)? {
                0 => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "short read")),
                n => {
                    offset += n as u64;
                    buffer = &mut buffer[n..];
                }
            }
        }
        Ok(())
    }
}

pub type FileHandle = Arc<dyn StorageFile>;

pub trait Storage: Send + Sync {
    /// Creates (or truncates) a file for reading and writing. Its name is
    /// durable only after [`Storage::sync_dir`] of its directory.
    fn create(&self, path: &Path) -> io::Result<FileHandle>;
    /// Opens an existing file for reading and writing.
    fn open(&self, path: &Path) -> io::Result<FileHandle>;
    fn exists(&self, path: &Path) -> bool;
    /// Atomically replaces `to` with `from`; durable after `sync_dir`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// fsync of a directory: makes creations, renames and removals in it durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Names (not paths) of the entries of `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    fn modified(&self, path: &Path) -> io::Result<SystemTime>;

    /// Reads a whole (small) file.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let file = self.open(path)?;
        let mut bytes = vec![0u8; file.len()? as usize];
        file.read_exact_at(0, &mut bytes)?;
        Ok(bytes)
    }

    /// Writes a small file crash-safely: a temporary name, fdatasync,
    /// rename over `path`, fsync of the directory. After a crash `path`
    /// holds either the old or the new content, never a mix.
    fn write_atomically(&self, path: &Path, temp: &Path, bytes: &[u8]) -> io::Result<()> {
        let file = self.create(temp)?;
        file.write_at(0, bytes)?;
        file.sync_data()?;
        drop(file);
        self.rename(temp, path)?;
        self.sync_dir(path.parent().unwrap_or(Path::new(".")))
    }
}

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
            .open(path)
            .map_err(|e| with_path(e, "create", path))?;
        Ok(Arc::new(OsFile(file)))
    }
    fn open(&self, path: &Path) -> io::Result<FileHandle> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| with_path(e, "open", path))?;
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
        std::fs::create_dir_all(dir).map_err(|e| with_path(e, "create directory", dir))
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

/// `dir/name`.
pub fn join(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}
