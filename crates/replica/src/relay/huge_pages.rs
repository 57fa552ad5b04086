//! Transparent huge pages for the memory ring.
//!
//! A fresh ring is mapped but not yet backed: the receiver's first write
//! to each 4 KiB page faults, and the kernel allocates, zeroes and charges
//! one page per fault. On a first pass through the ring that was 40% of
//! the receiver's CPU (perf, `tests/receiver_throughput.rs`). With
//! `MADV_HUGEPAGE` each fault backs 2 MiB at once: the zeroing stays, the
//! per-page bookkeeping goes. Where the kernel has transparent huge pages
//! off, or cannot find a huge page, it falls back to 4 KiB pages: only the
//! speed differs. The ring's bound is unchanged (the same bytes, mapped in
//! larger pieces).

/// Transparent huge page size on x86-64 and most aarch64 kernels; the
/// advice only covers the 2 MiB-aligned part of the buffer.
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Asks the kernel to back `buffer` with huge pages; a refusal is ignored
/// (it is advice, and the ring works the same without).
pub fn advise_huge_pages(buffer: &mut [u8]) {
    let start = buffer.as_mut_ptr() as usize;
    let aligned_start = start.next_multiple_of(HUGE_PAGE_BYTES);
    let aligned_end = (start + buffer.len()) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if aligned_end <= aligned_start {
        return;
    }
    // SAFETY: the range lies inside `buffer`, which this call borrows
    // mutably; MADV_HUGEPAGE changes how the pages are backed, never their
    // contents or the mapping's validity.
    let _ = unsafe { libc::madvise(aligned_start as *mut libc::c_void, aligned_end - aligned_start, libc::MADV_HUGEPAGE) };
}
