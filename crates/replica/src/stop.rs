//! One stop request shared by a thread and everything it may block on.
//! Blocking waits (a full ring, a full queue, a worker waiting for its
//! commit turn) wait in slices of [`WAIT_SLICE`] and look at the flag
//! between slices, so STOP takes at most one slice to be seen without
//! every structure knowing every other's condition variable.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Longest a blocked thread takes to notice a stop request.
pub const WAIT_SLICE: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// A blocking call ended because a stop was requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;
