//! An in-memory [`Storage`] that keeps two images of everything: the live
//! one (what the running process sees) and the durable one (what survives
//! a power cut: file bytes as of their last fdatasync, directory entries as
//! of their directory's last fsync). Tests crash the log by taking
//! [`SimStorage::crash_image`], optionally tearing the unsynced tail of
//! each file at a random length, and reopen on that image.
//!
//! Faults: [`SimStorage::freeze`] stops all mutation (the process "died"),
//! [`SimStorage::fail_sync_number`] makes the n-th sync fail with EIO, and
//! [`SimStorage::set_sync_delay`] slows syncs of matching files.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use rand::Rng;

use crate::seam::{FileHandle, Storage, StorageFile};

#[derive(Debug, Clone)]
struct Inode {
    live: Vec<u8>,
    durable: Vec<u8>,
    modified: SystemTime,
}

#[derive(Debug, Default)]
struct SimState {
    inodes: BTreeMap<u64, Inode>,
    live_entries: BTreeMap<PathBuf, u64>,
    durable_entries: BTreeMap<PathBuf, u64>,
    directories: BTreeSet<PathBuf>,
    next_inode: u64,
    sync_count: u64,
    fail_sync_number: Option<u64>,
    sync_delay: Option<(String, Duration)>,
    /// Syncs of files whose path contains this wait until the gate opens.
    sync_gate: Option<String>,
    syncs_waiting_at_gate: u64,
    frozen: bool,
}

#[derive(Clone, Default)]
pub struct SimStorage {
    state: Arc<Mutex<SimState>>,
    gate_opened: Arc<parking_lot::Condvar>,
}

struct SimFile {
    state: Arc<Mutex<SimState>>,
    gate_opened: Arc<parking_lot::Condvar>,
    inode: u64,
    path: PathBuf,
}

fn crashed() -> io::Error {
    io::Error::other("simulated crash: storage is frozen")
}

impl SimState {
    fn check_alive(&self) -> io::Result<()> {
        if self.frozen {
            Err(crashed())
        } else {
            Ok(())
        }
    }

    /// Counts a sync and decides whether it fails.
    fn count_sync(&mut self) -> io::Result<()> {
        self.check_alive()?;
        self.sync_count += 1;
        if self.fail_sync_number == Some(self.sync_count) {
            return Err(io::Error::other(format!("simulated EIO on sync number {}", self.sync_count)));
        }
        Ok(())
    }
}

impl StorageFile for SimFile {
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut state = self.state.lock();
        state.check_alive()?;
        let inode = state.inodes.get_mut(&self.inode).expect("inode of an open file");
        let end = offset as usize + data.len();
        if inode.live.len() < end {
            inode.live.resize(end, 0);
        }
        inode.live[offset as usize..end].copy_from_slice(data);
        inode.modified = SystemTime::now();
        Ok(())
    }
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> io::Result<usize> {
        let state = self.state.lock();
        let live = &state.inodes[&self.inode].live;
        if offset as usize >= live.len() {
            return Ok(0);
        }
        let n = buffer.len().min(live.len() - offset as usize);
        buffer[..n].copy_from_slice(&live[offset as usize..offset as usize + n]);
        Ok(n)
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().inodes[&self.inode].live.len() as u64)
    }
    fn truncate(&self, length: u64) -> io::Result<()> {
        let mut state = self.state.lock();
        state.check_alive()?;
        state.inodes.get_mut(&self.inode).unwrap().live.resize(length as usize, 0);
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        let delay = {
            let state = self.state.lock();
            state.sync_delay.as_ref().and_then(|(pattern, delay)| self.path.to_string_lossy().contains(pattern.as_str()).then_some(*delay))
        };
        if let Some(delay) = delay {
            std::thread::sleep(delay);
        }
        let mut state = self.state.lock();
        let gated =
            |state: &SimState| state.sync_gate.as_ref().is_some_and(|pattern| self.path.to_string_lossy().contains(pattern.as_str()));
        if gated(&state) {
            state.syncs_waiting_at_gate += 1;
            while gated(&state) {
                self.gate_opened.wait(&mut state);
            }
            state.syncs_waiting_at_gate -= 1;
        }
        state.count_sync()?;
        let inode = state.inodes.get_mut(&self.inode).unwrap();
        inode.durable = inode.live.clone();
        Ok(())
    }
}

impl Storage for SimStorage {
    fn create(&self, path: &Path) -> io::Result<FileHandle> {
        let mut state = self.state.lock();
        state.check_alive()?;
        let parent = path.parent().unwrap_or(Path::new("")).to_path_buf();
        if !state.directories.contains(&parent) {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no directory {}", parent.display())));
        }
        let inode = state.next_inode;
        state.next_inode += 1;
        state.inodes.insert(inode, Inode { live: Vec::new(), durable: Vec::new(), modified: SystemTime::now() });
        state.live_entries.insert(path.to_path_buf(), inode);
        Ok(Arc::new(SimFile { state: self.state.clone(), gate_opened: self.gate_opened.clone(), inode, path: path.to_path_buf() }))
    }
    fn open(&self, path: &Path) -> io::Result<FileHandle> {
        let state = self.state.lock();
        let inode = *state
            .live_entries
            .get(path)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("open {}: no such file", path.display())))?;
        Ok(Arc::new(SimFile { state: self.state.clone(), gate_opened: self.gate_opened.clone(), inode, path: path.to_path_buf() }))
    }
    fn exists(&self, path: &Path) -> bool {
        let state = self.state.lock();
        state.live_entries.contains_key(path) || state.directories.contains(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        state.check_alive()?;
        let inode = state
            .live_entries
            .remove(from)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("rename {}: no such file", from.display())))?;
        state.live_entries.insert(to.to_path_buf(), inode);
        Ok(())
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        state.check_alive()?;
        state
            .live_entries
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("remove {}: no such file", path.display())))
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        state.count_sync()?;
        let in_dir = |path: &PathBuf| path.parent() == Some(dir);
        let live: Vec<(PathBuf, u64)> = state.live_entries.iter().filter(|(p, _)| in_dir(p)).map(|(p, i)| (p.clone(), *i)).collect();
        state.durable_entries.retain(|path, _| !in_dir(path));
        state.durable_entries.extend(live);
        Ok(())
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        state.check_alive()?;
        // Directories are taken as durable at once: binlogd creates them at
        // first start only, never on a commit path.
        let mut current = Some(dir);
        while let Some(path) = current {
            state.directories.insert(path.to_path_buf());
            current = path.parent();
        }
        Ok(())
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let state = self.state.lock();
        let mut names: Vec<String> = state
            .live_entries
            .keys()
            .chain(state.directories.iter())
            .filter(|path| path.parent() == Some(dir))
            .filter_map(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }
    fn modified(&self, path: &Path) -> io::Result<SystemTime> {
        let state = self.state.lock();
        let inode =
            state.live_entries.get(path).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("stat {}", path.display())))?;
        Ok(state.inodes[inode].modified)
    }
}

impl SimStorage {
    pub fn new() -> SimStorage {
        SimStorage::default()
    }

    /// Stops all mutation, as if the process died now.
    pub fn freeze(&self) {
        self.state.lock().frozen = true;
    }

    pub fn is_frozen(&self) -> bool {
        self.state.lock().frozen
    }

    /// Makes sync number `n` (1-based, counting file and directory syncs)
    /// fail with an I/O error.
    pub fn fail_sync_number(&self, n: u64) {
        self.state.lock().fail_sync_number = Some(n);
    }

    pub fn sync_count(&self) -> u64 {
        self.state.lock().sync_count
    }

    /// Every fdatasync of a file whose path contains `pattern` sleeps first.
    pub fn set_sync_delay(&self, pattern: &str, delay: Duration) {
        self.state.lock().sync_delay = Some((pattern.to_string(), delay));
    }

    /// Makes every fdatasync of a file whose path contains `pattern` wait
    /// until [`SimStorage::open_sync_gate`].
    pub fn close_sync_gate(&self, pattern: &str) {
        self.state.lock().sync_gate = Some(pattern.to_string());
    }

    pub fn open_sync_gate(&self) {
        self.state.lock().sync_gate = None;
        self.gate_opened.notify_all();
    }

    /// Syncs currently held at the gate.
    pub fn syncs_waiting_at_gate(&self) -> u64 {
        self.state.lock().syncs_waiting_at_gate
    }

    /// What a power cut leaves: the durable directory entries with their
    /// durable bytes. With `rng`, each file whose live bytes extend its
    /// durable bytes keeps a random-length prefix of the unsynced tail too
    /// (a torn write).
    pub fn crash_image(&self, rng: Option<&mut dyn rand::RngCore>) -> SimStorage {
        let state = self.state.lock();
        let mut rng = rng;
        let mut image = SimState { directories: state.directories.clone(), ..SimState::default() };
        for (path, inode_number) in &state.durable_entries {
            let inode = &state.inodes[inode_number];
            let mut bytes = inode.durable.clone();
            if let Some(rng) = rng.as_deref_mut() {
                if inode.live.len() > bytes.len() && inode.live.starts_with(&bytes) {
                    let extra = rng.gen_range(0..=inode.live.len() - bytes.len());
                    bytes.extend_from_slice(&inode.live[inode.durable.len()..inode.durable.len() + extra]);
                }
            }
            let number = image.next_inode;
            image.next_inode += 1;
            image.inodes.insert(number, Inode { live: bytes.clone(), durable: bytes, modified: inode.modified });
            image.live_entries.insert(path.clone(), number);
            image.durable_entries.insert(path.clone(), number);
        }
        SimStorage { state: Arc::new(Mutex::new(image)), gate_opened: Default::default() }
    }

    /// What a process kill (not a power cut) leaves: everything written,
    /// synced or not, since the page cache survives.
    pub fn process_kill_image(&self) -> SimStorage {
        let state = self.state.lock();
        let mut image = SimState { directories: state.directories.clone(), ..SimState::default() };
        for (path, inode_number) in &state.live_entries {
            let inode = &state.inodes[inode_number];
            let number = image.next_inode;
            image.next_inode += 1;
            image.inodes.insert(number, Inode { live: inode.live.clone(), durable: inode.live.clone(), modified: inode.modified });
            image.live_entries.insert(path.clone(), number);
            image.durable_entries.insert(path.clone(), number);
        }
        SimStorage { state: Arc::new(Mutex::new(image)), gate_opened: Default::default() }
    }

    /// Live bytes of a file (for assertions and fault injection).
    pub fn file_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let state = self.state.lock();
        state.live_entries.get(path).map(|inode| state.inodes[inode].live.clone())
    }

    /// Overwrites a file's bytes in both images (to plant corruption).
    pub fn set_file_bytes(&self, path: &Path, bytes: Vec<u8>) {
        let mut state = self.state.lock();
        if let Some(&inode) = state.live_entries.get(path) {
            let inode = state.inodes.get_mut(&inode).unwrap();
            inode.live = bytes.clone();
            inode.durable = bytes;
        }
    }
}
