//! The one storage seam. Every create, write, read, fdatasync, directory
//! fsync, truncate, rename and removal of the binary log, the redo log and
//! the server's small files goes through [`Storage`], so tests can
//! substitute the simulated storage (`SimStorage`, feature
//! `fault-injection`) and cut durability at any sync, tear writes, or fail
//! an fsync.

use std::io;
use std::path::Path;
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
    /// Creates (or truncates) a file for reading and writing; a new file is
    /// readable by its owner only (mode 0600, as MySQL creates its files).
    /// Its name is durable only after [`Storage::sync_dir`] of its directory.
    fn create(&self, path: &Path) -> io::Result<FileHandle>;
    /// Opens an existing file for reading and writing.
    fn open(&self, path: &Path) -> io::Result<FileHandle>;
    fn exists(&self, path: &Path) -> bool;
    /// Atomically replaces `to` with `from`; durable after `sync_dir`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// fsync of a directory: makes creations, renames and removals in it durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Creates `dir` and any missing parents, each open to its owner only
    /// (mode 0700, as MySQL creates its data directory).
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
