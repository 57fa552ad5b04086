//! The background purge thread: one per engine. It does two things a
//! large commit would otherwise do before answering, and which, done in
//! one go, hold up every other session:
//!
//! - purge past a commit's inline share (`purge.rs`): woken by the
//!   commit, it purges every ready key, one batch at a time;
//! - freeing what a large committed transaction leaves behind (its change
//!   list, undo list and row lock set: InnoDB's purge likewise frees a
//!   committed transaction's undo log). Freeing 167,000 changes of 4 KB
//!   rows in the committing thread kept the allocator's arena lock busy
//!   for ~300 ms, and other sessions' frees waited for it.
//!
//! It works in small steps with a pause after each as long as the step
//! took, so it uses at most about half a core. It holds the engine only
//! for the length of a purge batch (a weak reference otherwise), and ends
//! once the engine is dropped. At most [`LEFTOVERS_QUEUED_MAX`]
//! transactions wait to be freed; past that a commit frees its own.

use std::collections::{hash_set, HashSet, VecDeque};
use std::sync::{Arc, Weak};
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::change::RowChange;
use crate::engine::Shared;
use crate::locks::LockKey;
use crate::purge::PURGE_BATCH_KEYS;
use crate::transaction::Undo;

/// Longest pause between two steps.
const PAUSE_MAX: Duration = Duration::from_millis(10);
/// Transactions whose leftovers may wait for the thread at once.
pub(crate) const LEFTOVERS_QUEUED_MAX: usize = 4;
/// Changes (or undo entries, or lock keys) freed per step.
const FREE_STEP_ITEMS: usize = 512;

/// What a committed transaction leaves to free.
pub(crate) struct Leftovers {
    pub(crate) changes: Vec<RowChange>,
    pub(crate) undo: Vec<Undo>,
    pub(crate) locks: hash_set::IntoIter<LockKey>,
}

impl Leftovers {
    pub(crate) fn new(changes: Vec<RowChange>, undo: Vec<Undo>, locks: HashSet<LockKey>) -> Leftovers {
        Leftovers { changes, undo, locks: locks.into_iter() }
    }

    /// Frees up to `count` items from the end; false once nothing is left.
    fn free_some(&mut self, count: usize) -> bool {
        if !self.changes.is_empty() {
            self.changes.truncate(self.changes.len().saturating_sub(count));
            return true;
        }
        if !self.undo.is_empty() {
            self.undo.truncate(self.undo.len().saturating_sub(count));
            return true;
        }
        self.locks.by_ref().take(count).count() > 0
    }
}

/// The handle the engine keeps; dropping it (with the engine) stops the
/// thread.
pub(crate) struct PurgeWorker {
    /// `None` when the thread could not be started.
    signal: Option<Arc<Signal>>,
}

#[derive(Default)]
struct Signal {
    state: Mutex<State>,
    changed: Condvar,
    /// Held by the thread while it purges a batch it took from the queue.
    batch: Mutex<()>,
}

#[derive(Default)]
struct State {
    purge_requested: bool,
    leftovers: VecDeque<Leftovers>,
    stopped: bool,
}

impl PurgeWorker {
    /// Starts the thread for the engine `shared` will point to.
    pub(crate) fn start(shared: Weak<Shared>) -> PurgeWorker {
        let signal = Arc::new(Signal::default());
        let thread_signal = Arc::clone(&signal);
        match thread::Builder::new().name("engine-purge".to_string()).spawn(move || run(&thread_signal, &shared)) {
            Ok(_) => PurgeWorker { signal: Some(signal) },
            Err(error) => {
                tracing::warn!(%error, "could not start the background purge thread: commits purge and free everything themselves");
                PurgeWorker { signal: None }
            }
        }
    }

    /// Asks the thread to purge what is ready; false when there is no thread.
    pub(crate) fn request(&self) -> bool {
        let Some(signal) = &self.signal else { return false };
        signal.state.lock().purge_requested = true;
        signal.changed.notify_one();
        true
    }

    /// Waits until the thread is done with a batch it took, if any: after
    /// the queue is drained, every purge is then finished.
    pub(crate) fn wait_for_batch(&self) {
        if let Some(signal) = &self.signal {
            drop(signal.batch.lock());
        }
    }

    /// Hands `leftovers` to the thread to free; gives them back when there
    /// is no thread or [`LEFTOVERS_QUEUED_MAX`] wait already.
    pub(crate) fn free_later(&self, leftovers: Leftovers) -> Result<(), Leftovers> {
        let Some(signal) = &self.signal else { return Err(leftovers) };
        let mut state = signal.state.lock();
        if state.leftovers.len() >= LEFTOVERS_QUEUED_MAX {
            return Err(leftovers);
        }
        state.leftovers.push_back(leftovers);
        drop(state);
        signal.changed.notify_one();
        Ok(())
    }
}

impl Drop for PurgeWorker {
    fn drop(&mut self) {
        if let Some(signal) = &self.signal {
            signal.state.lock().stopped = true;
            signal.changed.notify_one();
        }
    }
}

/// Sleeps as long as the step that began at `started` took (bounded).
fn pause_after(started: Instant) {
    thread::sleep(started.elapsed().min(PAUSE_MAX));
}

fn run(signal: &Signal, shared: &Weak<Shared>) {
    loop {
        let (purge, leftovers) = {
            let mut state = signal.state.lock();
            while !state.purge_requested && state.leftovers.is_empty() && !state.stopped {
                signal.changed.wait(&mut state);
            }
            if state.stopped {
                return;
            }
            (std::mem::take(&mut state.purge_requested), state.leftovers.pop_front())
        };
        if let Some(mut leftovers) = leftovers {
            loop {
                let started = Instant::now();
                if !leftovers.free_some(FREE_STEP_ITEMS) {
                    break;
                }
                pause_after(started);
            }
        }
        // A request that comes during the loop finds the thread still
        // purging, or wakes it for one more round.
        if !purge {
            continue;
        }
        loop {
            let Some(engine) = shared.upgrade() else { return };
            let started = Instant::now();
            let batch = signal.batch.lock();
            let taken = engine.purge_batch(PURGE_BATCH_KEYS);
            drop(batch);
            drop(engine);
            if taken == 0 {
                break;
            }
            pause_after(started);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use binlog_format::{ColumnType, Value};

    use super::*;
    use crate::catalog::{ColumnDef, TableSpec};
    use crate::{Engine, EngineConfig};

    /// Polls `done` for up to ten seconds.
    fn eventually(mut done: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if done() {
                return true;
            }
            thread::sleep(Duration::from_millis(5));
        }
        done()
    }

    #[test]
    fn a_large_commit_leaves_its_lists_to_the_thread_which_frees_them() {
        let engine = Engine::new(EngineConfig::default());
        engine.create_database("d").unwrap();
        let spec = TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("id", ColumnType::LongLong)],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        let id = engine.create_table(&spec).unwrap().id;
        let table = engine.shared.table(id).unwrap();
        let references_before = Arc::strong_count(&table);
        let mut trx = engine.begin();
        for n in 0..4096 {
            trx.insert(id, vec![Value::Int(n)]).unwrap();
        }
        // Every undo entry holds the table.
        assert_eq!(Arc::strong_count(&table), references_before + 4096 + 1);
        trx.commit(None).unwrap();
        assert!(eventually(|| Arc::strong_count(&table) == references_before), "the undo list was never freed");
        assert_eq!(engine.shared.locks.waiting_count(), 0);
    }

    #[test]
    fn without_a_thread_leftovers_and_purge_come_back_to_the_caller() {
        let worker = PurgeWorker { signal: None };
        assert!(!worker.request());
        let leftovers = Leftovers::new(Vec::new(), Vec::new(), HashSet::new());
        assert!(worker.free_later(leftovers).is_err());
    }

    #[test]
    fn at_most_the_bound_of_leftovers_wait() {
        // A signal with no thread behind it: nothing is ever taken off.
        let worker = PurgeWorker { signal: Some(Arc::new(Signal::default())) };
        for _ in 0..LEFTOVERS_QUEUED_MAX {
            assert!(worker.free_later(Leftovers::new(Vec::new(), Vec::new(), HashSet::new())).is_ok());
        }
        assert!(worker.free_later(Leftovers::new(Vec::new(), Vec::new(), HashSet::new())).is_err());
    }
}
