//! A connection's memory figure, as MariaDB shows it (`MEMORY_USED` and
//! `MAX_MEMORY_USED` in INFORMATION_SCHEMA.PROCESSLIST, the `Memory_used`
//! status): the bytes the connection holds that grow with what its client
//! sends or asks for.
//!
//! The connection thread sets each part as it changes; other threads (the
//! process list, `SHOW GLOBAL STATUS`) read the sum. The figure counts
//! buffers by their size, not the allocator's overhead, and leaves out
//! what every connection holds whatever its client does (its thread's
//! stack, the session's variables).

use std::sync::atomic::{AtomicUsize, Ordering};

/// What a connection holds memory for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryPart {
    /// The socket's read and write buffers and the command packet being
    /// handled (up to max_allowed_packet).
    Packets,
    /// The part of a result held before it is written: the rows of a
    /// result built whole that are not sent yet, and the buffer a row is
    /// encoded in (as wide as the widest row).
    Result,
    /// Prepared statements: their text and the long data sent for them.
    Statements,
}

const PARTS: usize = 3;

impl MemoryPart {
    fn index(self) -> usize {
        match self {
            MemoryPart::Packets => 0,
            MemoryPart::Result => 1,
            MemoryPart::Statements => 2,
        }
    }
}

/// One connection's bytes, by part, and the most it has held at once.
#[derive(Debug, Default)]
pub struct MemoryAccount {
    parts_bytes: [AtomicUsize; PARTS],
    used_bytes_max: AtomicUsize,
}

impl MemoryAccount {
    /// The connection now holds `bytes` for `part`. Only the connection's
    /// own thread sets parts, so the sum it computes is the figure as of
    /// this change.
    pub fn set(&self, part: MemoryPart, bytes: usize) {
        self.parts_bytes[part.index()].store(bytes, Ordering::Relaxed);
        self.used_bytes_max.fetch_max(self.used_bytes(), Ordering::Relaxed);
    }

    /// `MEMORY_USED`: every part's bytes now.
    pub fn used_bytes(&self) -> usize {
        self.parts_bytes.iter().map(|part| part.load(Ordering::Relaxed)).sum()
    }

    /// `MAX_MEMORY_USED`: the most held at once since the connection began.
    pub fn used_bytes_max(&self) -> usize {
        self.used_bytes_max.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figure_is_the_sum_of_the_parts_and_keeps_its_peak() {
        let account = MemoryAccount::default();
        account.set(MemoryPart::Packets, 1_000);
        account.set(MemoryPart::Statements, 500);
        account.set(MemoryPart::Result, 10_000);
        assert_eq!((account.used_bytes(), account.used_bytes_max()), (11_500, 11_500));
        account.set(MemoryPart::Result, 0);
        account.set(MemoryPart::Statements, 0);
        assert_eq!((account.used_bytes(), account.used_bytes_max()), (1_000, 11_500));
    }
}
