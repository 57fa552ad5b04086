//! Which closed binlog files still hold transactions whose commit stage
//! (the engine commit) has not finished.
//!
//! A file keeps `LOG_EVENT_BINLOG_IN_USE_F` until every transaction in it
//! has been committed in the engine: recovery scans exactly the files
//! flagged in use for the XIDs of prepared engine transactions, so a file
//! rotated away while a group in it was still between FLUSH and COMMIT
//! must stay flagged (MySQL waits for its prepared XIDs at rotation for
//! the same reason). Clearing late is always safe; clearing early is not.

use std::collections::BTreeMap;
use std::path::PathBuf;

use parking_lot::{Condvar, Mutex};

use crate::error::Result;
use crate::log::BinaryLog;
use crate::recovery;

#[derive(Default)]
pub(crate) struct InFlight {
    state: Mutex<InFlightState>,
    drained: Condvar,
}

#[derive(Default)]
struct InFlightState {
    /// File number → groups with transactions in it not yet committed.
    groups_per_file: BTreeMap<u64, u64>,
    /// Closed files whose in-use flag is still set.
    closed: BTreeMap<u64, PathBuf>,
    /// Closed files whose flag a thread is clearing right now.
    clearing: std::collections::BTreeSet<u64>,
}

impl InFlight {
    /// A group wrote transactions into `file_number`.
    pub fn add(&self, file_number: u64) {
        *self.state.lock().groups_per_file.entry(file_number).or_default() += 1;
    }

    /// A group's commit stage finished for `file_number`.
    pub fn remove(&self, file_number: u64) {
        let mut state = self.state.lock();
        if let Some(count) = state.groups_per_file.get_mut(&file_number) {
            *count -= 1;
            if *count == 0 {
                state.groups_per_file.remove(&file_number);
            }
        }
        if state.groups_per_file.is_empty() {
            self.drained.notify_all();
        }
    }

    /// `file_number` will get no more transactions.
    pub fn closed(&self, file_number: u64, path: PathBuf) {
        self.state.lock().closed.insert(file_number, path);
    }

    /// Whether `file_number` still has uncommitted transactions or a set
    /// in-use flag: purge must not remove it, recovery may need its XIDs.
    pub fn is_pending(&self, file_number: u64) -> bool {
        let state = self.state.lock();
        state.groups_per_file.contains_key(&file_number) || state.closed.contains_key(&file_number) || state.clearing.contains(&file_number)
    }

    /// Takes the closed files with nothing in flight (each is handed out once).
    /// They stay pending (not purgeable) until [`InFlight::cleared`].
    fn take_clearable(&self) -> Vec<(u64, PathBuf)> {
        let mut state = self.state.lock();
        let clearable: Vec<u64> = state.closed.keys().copied().filter(|n| !state.groups_per_file.contains_key(n)).collect();
        let mut taken = Vec::new();
        for number in clearable {
            if let Some(path) = state.closed.remove(&number) {
                state.clearing.insert(number);
                taken.push((number, path));
            }
        }
        taken
    }

    fn cleared(&self, file_number: u64) {
        self.state.lock().clearing.remove(&file_number);
    }

    /// Waits until no group is between FLUSH and the end of COMMIT.
    pub fn wait_drained(&self) {
        let mut state = self.state.lock();
        while !state.groups_per_file.is_empty() {
            self.drained.wait(&mut state);
        }
    }
}

impl BinaryLog {
    /// Clears the in-use flag of every closed file nothing is in flight in.
    pub(crate) fn clear_closed_files(&self) -> Result<()> {
        for (number, path) in self.inner.in_flight.take_clearable() {
            let cleared = recovery::clear_in_use_flag(self.inner.storage.as_ref(), &path);
            self.inner.in_flight.cleared(number);
            cleared?;
            self.inner.counters.fsyncs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }
}
