//! Per-transaction binlog cache: events in memory up to
//! `binlog_cache_size`, the overflow in a spill file inside the binlog
//! directory's temp folder, as MySQL's IO_CACHE does.
//!
//! Lifecycle: `InMemory` → `Spilled` (once past binlog_cache_size) →
//! consumed by commit (copied into the active file) or dropped (rollback:
//! the spill file is deleted). Events are stored fully encoded, with
//! `log_pos` 0; the group-commit leader sets each `log_pos` (and its
//! checksum) when it copies the events to their final offset.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use binlog_format::constants::{EventType, COMMON_HEADER_LENGTH};
use binlog_format::events::{Event, QueryEvent};
use binlog_format::frame::peek_event_size;
use binlog_format::header::EventHeader;

use crate::crash_points::{self, CrashPoints};
use crate::error::{BinlogError, Result};
use crate::options::SPILL_FILE_PREFIX;
use crate::storage::{FileHandle, Storage};

/// What a cache needs from the log that made it.
#[derive(Clone)]
pub struct CacheContext {
    pub storage: Arc<dyn Storage>,
    pub spill_dir: PathBuf,
    pub binlog_cache_size: u64,
    pub max_binlog_cache_size: u64,
    pub checksum: bool,
    pub server_id: u32,
    pub spill_counter: Arc<AtomicU64>,
    pub crash: CrashPoints,
    /// Bytes of spill files created and not yet deleted (for status).
    pub spill_count: Arc<AtomicU64>,
}

struct SpillFile {
    path: PathBuf,
    file: FileHandle,
    /// Bytes of the cache held in the file (the rest is in memory).
    length: u64,
}

/// Shape of the cached events, checked before commit: a transaction is
/// `BEGIN … Xid|COMMIT`, or a lone DDL statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Empty,
    /// Began with `BEGIN`, not yet terminated.
    Open,
    /// Ends with Xid or `COMMIT`/`ROLLBACK`, or is one DDL statement.
    Complete,
}

pub struct TransactionCache {
    context: CacheContext,
    memory: Vec<u8>,
    spill: Option<SpillFile>,
    length: u64,
    event_count: u64,
    shape: Shape,
    terminating_event_type: u8,
    /// Hashes of the rows this transaction wrote (for WRITESET tracking).
    pub writeset: Vec<u64>,
    /// First statement timestamp, written in the Gtid event header.
    pub timestamp: u32,
}

impl TransactionCache {
    pub fn new(context: CacheContext) -> TransactionCache {
        TransactionCache {
            context,
            memory: Vec::new(),
            spill: None,
            length: 0,
            event_count: 0,
            shape: Shape::Empty,
            terminating_event_type: 0,
            writeset: Vec::new(),
            timestamp: 0,
        }
    }

    /// Bytes of events cached.
    pub fn len(&self) -> u64 {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    pub fn event_count(&self) -> u64 {
        self.event_count
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    pub fn is_spilled(&self) -> bool {
        self.spill.is_some()
    }

    /// Type of the last event (the terminating one once complete).
    pub fn terminating_event_type(&self) -> u8 {
        self.terminating_event_type
    }

    /// Appends one event. `timestamp` goes in its header.
    pub fn append(&mut self, event: &Event, timestamp: u32) -> Result<()> {
        let mut body = Vec::new();
        event.encode_body(&mut body);
        let size = COMMON_HEADER_LENGTH + body.len() + if self.context.checksum { 4 } else { 0 };
        if self.length + size as u64 > self.context.max_binlog_cache_size {
            return Err(BinlogError::CacheFull { max_binlog_cache_size: self.context.max_binlog_cache_size });
        }
        if self.is_empty() {
            self.timestamp = timestamp;
        }
        let mut encoded = Vec::with_capacity(size);
        let header = EventHeader {
            timestamp,
            event_type: event.event_type(),
            server_id: self.context.server_id,
            event_size: 0,
            log_pos: 0,
            flags: 0,
        };
        binlog_format::encode_event(header, &body, self.context.checksum, &mut encoded);
        self.shape = next_shape(self.shape, event)?;
        self.append_encoded(&encoded)?;
        self.terminating_event_type = event.event_type();
        self.event_count += 1;
        Ok(())
    }

    fn append_encoded(&mut self, encoded: &[u8]) -> Result<()> {
        if self.memory.len() as u64 + encoded.len() as u64 > self.context.binlog_cache_size && !self.memory.is_empty() {
            self.spill_memory()?;
        }
        self.memory.extend_from_slice(encoded);
        self.length += encoded.len() as u64;
        Ok(())
    }

    /// Moves the memory buffer to the end of the spill file.
    fn spill_memory(&mut self) -> Result<()> {
        if self.spill.is_none() {
            let number = self.context.spill_counter.fetch_add(1, Ordering::Relaxed);
            let path = self.context.spill_dir.join(format!("{SPILL_FILE_PREFIX}{number}"));
            let file = self.context.storage.create(&path).map_err(|e| BinlogError::io("create spill file", &path, e))?;
            self.context.spill_count.fetch_add(1, Ordering::Relaxed);
            self.spill = Some(SpillFile { path, file, length: 0 });
            self.context.crash.hit(crash_points::CACHE_AFTER_SPILL).map_err(|e| BinlogError::io("crash point", &self.context.spill_dir, e))?;
        }
        let spill = self.spill.as_mut().unwrap();
        spill.file.write_at(spill.length, &self.memory).map_err(|e| BinlogError::io("write spill file", &spill.path, e))?;
        spill.length += self.memory.len() as u64;
        self.memory.clear();
        Ok(())
    }

    /// Current length, to roll back to later (`SAVEPOINT`).
    pub fn savepoint(&self) -> CacheSavepoint {
        CacheSavepoint {
            length: self.length,
            event_count: self.event_count,
            shape: self.shape,
            terminating_event_type: self.terminating_event_type,
            writeset_length: self.writeset.len(),
        }
    }

    /// `ROLLBACK TO SAVEPOINT`: forgets every event after `savepoint`.
    pub fn rollback_to(&mut self, savepoint: CacheSavepoint) -> Result<()> {
        assert!(savepoint.length <= self.length, "savepoint beyond the cache");
        let spilled = self.spill.as_ref().map_or(0, |s| s.length);
        if savepoint.length >= spilled {
            self.memory.truncate((savepoint.length - spilled) as usize);
        } else {
            let spill = self.spill.as_mut().unwrap();
            spill.file.truncate(savepoint.length).map_err(|e| BinlogError::io("truncate spill file", &spill.path, e))?;
            spill.length = savepoint.length;
            self.memory.clear();
        }
        self.length = savepoint.length;
        self.event_count = savepoint.event_count;
        self.shape = savepoint.shape;
        self.terminating_event_type = savepoint.terminating_event_type;
        self.writeset.truncate(savepoint.writeset_length);
        Ok(())
    }

    /// Empties the cache (after commit or full rollback); deletes its spill file.
    pub fn clear(&mut self) {
        self.delete_spill();
        self.memory.clear();
        self.length = 0;
        self.event_count = 0;
        self.shape = Shape::Empty;
        self.terminating_event_type = 0;
        self.writeset.clear();
    }

    fn delete_spill(&mut self) {
        if let Some(spill) = self.spill.take() {
            drop(spill.file);
            if let Err(error) = self.context.storage.remove(&spill.path) {
                // A leftover spill file is deleted at the next start.
                tracing::warn!("could not delete spill file {}: {error}", spill.path.display());
            }
            self.context.spill_count.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Visits the cached bytes in order, in chunks of at most `chunk_bytes`
    /// that always end on an event boundary.
    pub fn for_each_event_chunk(&self, chunk_bytes: usize, mut visit: impl FnMut(&mut [u8]) -> Result<()>) -> Result<()> {
        if let Some(spill) = &self.spill {
            let mut offset = 0u64;
            let mut chunk = Vec::with_capacity(chunk_bytes);
            while offset < spill.length {
                // Read whole events until the chunk is full.
                chunk.clear();
                while offset < spill.length && chunk.len() < chunk_bytes {
                    let mut header = [0u8; COMMON_HEADER_LENGTH];
                    spill.file.read_exact_at(offset, &mut header).map_err(|e| BinlogError::io("read spill file", &spill.path, e))?;
                    let size = peek_event_size(&header).unwrap() as usize;
                    let start = chunk.len();
                    chunk.resize(start + size, 0);
                    spill.file.read_exact_at(offset, &mut chunk[start..]).map_err(|e| BinlogError::io("read spill file", &spill.path, e))?;
                    offset += size as u64;
                }
                visit(&mut chunk)?;
            }
        }
        if !self.memory.is_empty() {
            let mut memory = self.memory.clone();
            visit(&mut memory)?;
        }
        Ok(())
    }

    /// The in-memory bytes, when the cache never spilled (the common case:
    /// the leader copies them without reading a file).
    pub fn memory_bytes(&self) -> Option<&[u8]> {
        self.spill.is_none().then_some(self.memory.as_slice())
    }

    pub fn checksum(&self) -> bool {
        self.context.checksum
    }

    pub fn spill_path(&self) -> Option<&std::path::Path> {
        self.spill.as_ref().map(|s| s.path.as_path())
    }
}

impl Drop for TransactionCache {
    fn drop(&mut self) {
        self.delete_spill();
    }
}

#[derive(Debug, Clone, Copy)]
pub struct CacheSavepoint {
    length: u64,
    event_count: u64,
    shape: Shape,
    terminating_event_type: u8,
    writeset_length: usize,
}

fn is_terminating_query(query: &QueryEvent) -> bool {
    query.is_commit() || query.is_rollback()
}

/// The transaction-shape state machine: BEGIN opens, Xid/COMMIT close, a
/// lone non-BEGIN statement is a complete DDL transaction.
fn next_shape(shape: Shape, event: &Event) -> Result<Shape> {
    let invalid = |what: &str| Err(BinlogError::Invalid(format!("transaction cache: {what}")));
    match (shape, event) {
        (Shape::Empty, Event::Query(q)) if q.is_begin() => Ok(Shape::Open),
        (Shape::Empty, Event::Query(q)) if !is_terminating_query(q) => Ok(Shape::Complete),
        (Shape::Empty, _) => invalid("a transaction must start with BEGIN or be one DDL statement"),
        (Shape::Open, Event::Xid(_)) => Ok(Shape::Complete),
        (Shape::Open, Event::Query(q)) if is_terminating_query(q) => Ok(Shape::Complete),
        (Shape::Open, Event::Query(q)) if q.is_begin() => invalid("BEGIN inside a transaction"),
        (Shape::Open, Event::Gtid(_) | Event::FormatDescription(_) | Event::Rotate(_) | Event::Stop) => {
            invalid("control events cannot be cached")
        }
        (Shape::Open, _) => Ok(Shape::Open),
        (Shape::Complete, _) => invalid("event after the transaction's terminating event"),
    }
}

/// Whether `event_type` can terminate a transaction.
pub fn is_terminating_type(event_type: u8) -> bool {
    event_type == EventType::Xid as u8 || event_type == EventType::Query as u8
}
