//! Backing a fresh memory ring with pages ahead of the receiver.
//!
//! The ring is mapped at creation but backed only as it is first written:
//! on the receiver's first pass each 4 KiB page faulted on its first byte,
//! which was 40% of the memory receiver's CPU (perf, `tests/receiver_throughput.rs`).
//! `MADV_POPULATE_WRITE` (Linux 5.14) backs a whole range in one call: the
//! kernel still allocates and zeroes every page, but without a trap per
//! page (1.5-2.1 GB/s against 1.0-1.2 GB/s on the project's VM).
//! Transparent huge pages were tried and were slower there (cold guest
//! memory). After the first pass the ring's pages stay backed and this
//! does nothing.

/// How far ahead of the write position the ring is backed: large enough
/// that the call's cost is spread over many events, small enough that a
/// worker waiting for the ring's lock waits little.
pub const PREFAULT_STEP_BYTES: u64 = 256 << 10;

/// Backs the whole pages inside `range` of the buffer with writable memory;
/// the pages at its edges, and any range on a kernel without
/// MADV_POPULATE_WRITE, are backed by the writes themselves as before.
pub fn populate(buffer: &mut [u8], range: std::ops::Range<usize>) {
    let Some(bytes) = buffer.get_mut(range) else { return };
    // SAFETY: sysconf has no preconditions.
    let page_bytes = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096).max(1);
    let start = (bytes.as_mut_ptr() as usize).next_multiple_of(page_bytes);
    let end = (bytes.as_mut_ptr() as usize + bytes.len()) / page_bytes * page_bytes;
    if end <= start {
        return;
    }
    // SAFETY: `start..end` lies inside `bytes`, borrowed mutably here; the
    // advice backs pages with memory and never changes their contents (a
    // page already backed is left as it is).
    let _ = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_POPULATE_WRITE) };
}
