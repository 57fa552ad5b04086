//! The memory relay log's byte ring: one buffer allocated at creation,
//! never grown. Offsets are logical (they only increase); the byte at
//! offset `o` lives at `o % capacity`.
//!
//! ```text
//!            tail                              head
//!   ... applied | transactions not yet applied | free ... (wraps)
//! ```
//!
//! The receiver appends at `head` and blocks while the free space is too
//! small (back-pressure: the ring never grows). Workers copy a
//! transaction's bytes out and release them once applied. Transactions
//! commit out of order with parallel workers, so a release ahead of `tail`
//! is remembered and `tail` jumps over it when the gap before it closes.
//!
//! One mutex guards the buffer: every holder only copies bytes (an event
//! in, a transaction out), so the lock is held for a memcpy. The copy out
//! also makes a transaction that wraps around the end contiguous for its
//! worker.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

use crate::relay::prefault;
use crate::stop::{StopFlag, Stopped, WAIT_SLICE};

struct Ring {
    buffer: Box<[u8]>,
    /// Offset of the next byte the receiver writes.
    head: u64,
    /// Offset of the oldest byte not yet released.
    tail: u64,
    /// Released ranges ahead of `tail`: begin → end.
    released_ahead: BTreeMap<u64, u64>,
    /// Highest `head - tail` ever: what the memory bound is checked on.
    used_bytes_peak: u64,
    /// Bytes from the buffer's start already backed by memory (see
    /// [`prefault`]); reaches the capacity at the end of the first pass.
    prefaulted_bytes: u64,
}

pub struct ByteRing {
    ring: Mutex<Ring>,
    space_freed: Condvar,
    capacity_bytes: u64,
}

impl ByteRing {
    pub fn new(capacity_bytes: u64) -> ByteRing {
        assert!(capacity_bytes > 0, "a ring of 0 bytes");
        // Zeroed memory comes from calloc/mmap: pages are only touched as
        // the receiver first writes them.
        let buffer = vec![0u8; capacity_bytes as usize].into_boxed_slice();
        ByteRing {
            ring: Mutex::new(Ring { buffer, head: 0, tail: 0, released_ahead: BTreeMap::new(), used_bytes_peak: 0, prefaulted_bytes: 0 }),
            space_freed: Condvar::new(),
            capacity_bytes,
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Bytes between tail and head: appended and not yet released.
    pub fn used_bytes(&self) -> u64 {
        let ring = self.ring.lock();
        ring.head - ring.tail
    }

    /// `(used, highest used ever)`, read together under the lock.
    pub fn used_bytes_and_peak(&self) -> (u64, u64) {
        let ring = self.ring.lock();
        (ring.head - ring.tail, ring.used_bytes_peak)
    }

    pub fn head(&self) -> u64 {
        self.ring.lock().head
    }

    /// Appends `bytes` at the head, waiting while there is no room; the
    /// time waited is added to `blocked_ns` slice by slice, so a status
    /// read during a long wait sees it grow. `bytes` must fit in the ring.
    pub fn append(&self, bytes: &[u8], stop: &StopFlag, blocked_ns: &AtomicU64) -> Result<(), Stopped> {
        let length = bytes.len() as u64;
        assert!(length <= self.capacity_bytes, "an append of {length} bytes into a ring of {}", self.capacity_bytes);
        let mut ring = self.ring.lock();
        while self.capacity_bytes - (ring.head - ring.tail) < length {
            if stop.is_requested() {
                return Err(Stopped);
            }
            let waited_since = Instant::now();
            self.space_freed.wait_for(&mut ring, WAIT_SLICE);
            blocked_ns.fetch_add(waited_since.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        if ring.prefaulted_bytes < self.capacity_bytes && ring.head + length > ring.prefaulted_bytes {
            // First pass: back the pages this append and the next ones
            // write, in one call. Under the lock, as the page faults it
            // replaces were.
            let end = (ring.head + length).next_multiple_of(prefault::PREFAULT_STEP_BYTES).min(self.capacity_bytes);
            let begin = ring.prefaulted_bytes;
            prefault::populate(&mut ring.buffer, begin as usize..end as usize);
            ring.prefaulted_bytes = end;
        }
        let start = (ring.head % self.capacity_bytes) as usize;
        let first = bytes.len().min(self.capacity_bytes as usize - start);
        ring.buffer[start..start + first].copy_from_slice(&bytes[..first]);
        ring.buffer[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        ring.head += length;
        ring.used_bytes_peak = ring.used_bytes_peak.max(ring.head - ring.tail);
        Ok(())
    }

    /// Copies `begin..end` into `out` (replacing its contents).
    pub fn copy_out(&self, begin: u64, end: u64, out: &mut Vec<u8>) {
        let ring = self.ring.lock();
        assert!(ring.tail <= begin && begin <= end && end <= ring.head, "copy of {begin}..{end} outside {}..{}", ring.tail, ring.head);
        out.clear();
        out.reserve((end - begin) as usize);
        let start = (begin % self.capacity_bytes) as usize;
        let length = (end - begin) as usize;
        let first = length.min(self.capacity_bytes as usize - start);
        out.extend_from_slice(&ring.buffer[start..start + first]);
        out.extend_from_slice(&ring.buffer[..length - first]);
    }

    /// Takes back bytes appended after `offset` (an open transaction that
    /// moved to a spill file, or whose connection ended).
    pub fn truncate_head(&self, offset: u64) {
        let mut ring = self.ring.lock();
        assert!(ring.tail <= offset && offset <= ring.head, "truncate to {offset} outside {}..{}", ring.tail, ring.head);
        ring.head = offset;
        drop(ring);
        self.space_freed.notify_all();
    }

    /// `begin..end` was applied: its bytes may be overwritten once every
    /// byte before them is released too.
    pub fn release(&self, begin: u64, end: u64) {
        let mut ring = self.ring.lock();
        if begin != ring.tail {
            ring.released_ahead.insert(begin, end);
            return;
        }
        ring.tail = end;
        let ring = &mut *ring;
        while let Some(next_end) = ring.released_ahead.remove(&ring.tail) {
            ring.tail = next_end;
        }
        self.space_freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_releases_out_of_order() {
        let ring = ByteRing::new(10);
        let stop = StopFlag::new();
        let blocked = AtomicU64::new(0);
        ring.append(b"abcd", &stop, &blocked).unwrap();
        ring.append(b"efg", &stop, &blocked).unwrap();
        ring.release(4, 7); // ahead of the tail: remembered only
        assert_eq!(ring.used_bytes(), 7);
        ring.release(0, 4);
        assert_eq!(ring.used_bytes(), 0);
        ring.append(b"hijklm", &stop, &blocked).unwrap(); // wraps at 10
        let mut out = Vec::new();
        ring.copy_out(7, 13, &mut out);
        assert_eq!(out, b"hijklm");
    }

    #[test]
    fn a_full_ring_blocks_until_stop() {
        let ring = ByteRing::new(4);
        let stop = StopFlag::new();
        let blocked = AtomicU64::new(0);
        ring.append(b"abcd", &stop, &blocked).unwrap();
        stop.request();
        assert_eq!(ring.append(b"e", &stop, &blocked), Err(Stopped));
    }
}
