//! Per-transaction binlog cache: events in memory up to
//! `binlog_cache_size`, the overflow in a spill file inside the binlog
//! directory's temp folder, as MySQL's IO_CACHE does.
//!
//! Lifecycle (`Stage`): `Memory` → `Spilled` (once past
//! binlog_cache_size) → consumed by commit, copied into the active file,
//! or, when [`TransactionCache::should_promote`], `Sealed` (the whole body
//! durable in the spill file) and promoted into the log by rename
//! (`Promoted`: the file is the log's now). The engine-integrated binlog
//! seals and renames it for a redo record to refer to (`Referenced`)
//! before its writer promotes it. A cache dropped or cleared before that
//! (rollback) deletes its spill file. Events are stored fully encoded; with
//! header room reserved their `log_pos` and checksum are final, otherwise
//! `log_pos` is 0 and the group-commit leader sets it (and the checksum)
//! when it copies the events to their final offset.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use binlog_format::constants::{EventType, COMMON_HEADER_LENGTH};
use binlog_format::events::{Event, QueryEvent};
use binlog_format::frame::peek_event_size;
use binlog_format::header::EventHeader;
use binlog_format::RowsKind;

use crate::crash_points::{self, CrashPoints};
use crate::error::{BinlogError, Result};
use crate::options::{REFERENCED_SPILL_PREFIX, SPILL_FILE_PREFIX};
use crate::spill_reference::SpillReference;
use storage::{FileHandle, Storage};

/// What a cache needs from the log that made it.
#[derive(Clone)]
pub struct CacheContext {
    pub storage: Arc<dyn Storage>,
    pub spill_dir: PathBuf,
    pub binlog_cache_size: u64,
    pub max_binlog_cache_size: u64,
    /// `binlog_checksum` now (dynamic): a cache takes it when its
    /// transaction first writes, and keeps it (see [`TransactionCache::checksum`]).
    pub checksum: Arc<AtomicBool>,
    pub server_id: u32,
    pub spill_counter: Arc<AtomicU64>,
    pub crash: CrashPoints,
    /// Bytes of spill files created and not yet deleted (for status).
    pub spill_count: Arc<AtomicU64>,
    pub large: Arc<LargeTransactionSettings>,
}

/// The large-transaction optimization's settings (dynamic: read once per
/// transaction, when it first writes to its cache).
#[derive(Debug)]
pub struct LargeTransactionSettings {
    /// `binlog_large_transaction_optimization_enabled`.
    pub enabled: std::sync::atomic::AtomicBool,
    /// `binlog_large_transaction_optimization_threshold` (bytes).
    pub threshold: AtomicU64,
    /// `binlogd_large_transaction_header_room` (bytes, a multiple of 64 KiB):
    /// room reserved at the front of every spill file for the promoted
    /// file's header.
    pub header_room: u64,
    /// `binlogd_spill_sync_chunk_bytes`: a spill file is fdatasynced each
    /// time this much more of it is written, outside every lock, so commit
    /// only syncs the last chunk.
    pub sync_chunk_bytes: u64,
}

struct SpillFile {
    path: PathBuf,
    file: FileHandle,
    /// Bytes of the cache held in the file (the rest is in memory). They
    /// start at the cache's `header_room` offset.
    length: u64,
    /// Of those, bytes made durable by fdatasync.
    synced_length: u64,
}

/// Where a cache's bytes are, and whether its spill file is its own to
/// delete.
enum Stage {
    /// Every event is in the memory buffer; no file.
    Memory,
    /// The first bytes are in the spill file, the tail in memory. A
    /// promotable body is fdatasynced chunk by chunk as it grows.
    Spilled(SpillFile),
    /// The whole body is in the spill file and durable, the memory buffer
    /// empty: ready for promotion. No more events may be appended.
    Sealed(SpillFile),
    /// Sealed, and renamed to a name the binlog's startup keeps, so a redo
    /// record can refer to it (the engine-integrated binlog; also how
    /// recovery rebuilds such a cache).
    Referenced(SpillFile),
    /// Renamed into the log by a promotion: the file is no longer the
    /// cache's to delete.
    Promoted,
}

impl Stage {
    /// The spill file the cache owns (deletes when dropped), if any.
    fn file(&self) -> Option<&SpillFile> {
        match self {
            Stage::Spilled(spill) | Stage::Sealed(spill) | Stage::Referenced(spill) => Some(spill),
            Stage::Memory | Stage::Promoted => None,
        }
    }

    fn file_mut(&mut self) -> Option<&mut SpillFile> {
        match self {
            Stage::Spilled(spill) | Stage::Sealed(spill) | Stage::Referenced(spill) => Some(spill),
            Stage::Memory | Stage::Promoted => None,
        }
    }

    /// Gives up the spill file, leaving `next`.
    fn take_file(&mut self, next: Stage) -> Option<SpillFile> {
        match std::mem::replace(self, next) {
            Stage::Spilled(spill) | Stage::Sealed(spill) | Stage::Referenced(spill) => Some(spill),
            Stage::Memory | Stage::Promoted => None,
        }
    }
}

/// A sealed spill file handed to the promotion path: its body is durable
/// and starts at `header_room`.
pub struct SealedSpill {
    pub path: PathBuf,
    pub file: FileHandle,
    pub header_room: u64,
    pub body_length: u64,
    /// Size of the last event (the terminating Xid or COMMIT).
    pub last_event_size: u64,
    pub terminating_event_type: u8,
    /// Whether the body's events carry CRC32 footers: the promoted file's
    /// Format_description says so, whatever `binlog_checksum` is now.
    pub checksum: bool,
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
    stage: Stage,
    length: u64,
    event_count: u64,
    shape: Shape,
    terminating_event_type: u8,
    /// Hashes of the rows this transaction wrote (for WRITESET tracking).
    pub writeset: Vec<u64>,
    /// First statement timestamp, written in the Gtid event header.
    pub timestamp: u32,
    /// Reserved bytes at the spill file's front (0: the transaction cannot
    /// be promoted). Captured with the threshold at the first write.
    header_room: u64,
    /// Effective promotion threshold captured at the first write.
    threshold: u64,
    last_event_size: u64,
    /// `append`'s body buffer, reused from event to event.
    body_scratch: Vec<u8>,
    /// Whether the cached events carry a CRC32 footer: `binlog_checksum`
    /// when the transaction first wrote. The leader re-frames them when
    /// the active file has the other algorithm; a promoted body keeps it
    /// (its file's Format_description says so).
    checksum: bool,
    /// `binlog_transaction_compression_level_zstd` when the session's
    /// `binlog_transaction_compression` was ON at commit (`compression.rs`).
    compression_level_zstd: Option<i32>,
}

impl TransactionCache {
    pub fn new(context: CacheContext) -> TransactionCache {
        let checksum = context.checksum.load(Ordering::Relaxed);
        TransactionCache {
            checksum,
            compression_level_zstd: None,
            context,
            memory: Vec::new(),
            stage: Stage::Memory,
            length: 0,
            event_count: 0,
            shape: Shape::Empty,
            terminating_event_type: 0,
            writeset: Vec::new(),
            timestamp: 0,
            header_room: 0,
            threshold: u64::MAX,
            last_event_size: 0,
            body_scratch: Vec::new(),
        }
    }

    /// A cache holding `bytes`: whole encoded events as a cache holds
    /// them (what [`TransactionCache::encoded_events`] returned, e.g. kept
    /// in a redo record by the engine-integrated binlog). Every event is
    /// checked (checksum, shape); the cache stays in memory and is never
    /// promoted. `checksum`: whether the events carry CRC32 footers.
    pub fn from_encoded_events(context: CacheContext, bytes: Vec<u8>, checksum: bool) -> Result<TransactionCache> {
        let mut cache = TransactionCache::new(context);
        cache.checksum = checksum;
        let mut at = 0usize;
        while at < bytes.len() {
            let invalid = |reason: String| BinlogError::Invalid(format!("cached events at offset {at}: {reason}"));
            let size = peek_event_size(&bytes[at..]).ok_or_else(|| invalid("truncated header".into()))? as usize;
            if size < COMMON_HEADER_LENGTH || bytes.len() - at < size {
                return Err(invalid(format!("event of {size} bytes overruns the {} cached", bytes.len())));
            }
            let raw = binlog_format::frame::RawEvent::parse(&bytes[at..at + size], checksum).map_err(|e| invalid(e.to_string()))?;
            let event = Event::decode(&raw, &Default::default()).map_err(|e| invalid(e.to_string()))?;
            if cache.event_count == 0 {
                cache.timestamp = raw.header.timestamp;
            }
            cache.shape = next_shape(cache.shape, &event)?;
            cache.terminating_event_type = raw.header.event_type;
            cache.last_event_size = size as u64;
            cache.event_count += 1;
            at += size;
        }
        cache.length = bytes.len() as u64;
        cache.memory = bytes;
        Ok(cache)
    }

    /// Every cached event, in order, as one byte string (reads the spill
    /// file, if any: the caller holds the whole transaction in memory).
    pub fn encoded_events(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.length as usize);
        self.for_each_event_chunk(4 << 20, |chunk| {
            out.extend_from_slice(chunk);
            Ok(())
        })?;
        Ok(out)
    }

    /// Whether commit promotes this transaction into the log by rename
    /// rather than copying it: laid out for promotion (header room
    /// reserved), at the promotion threshold captured at its first write,
    /// and in a spill file it owns (a cache that reached the threshold
    /// without passing binlog_cache_size is still in memory: copied).
    pub fn should_promote(&self) -> bool {
        self.header_room > 0 && self.length >= self.threshold && self.stage.file().is_some()
    }

    /// Whether the transaction reached the promotion threshold (promoted or not).
    pub fn reached_threshold(&self) -> bool {
        self.length >= self.threshold
    }

    pub fn header_room(&self) -> u64 {
        self.header_room
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

    /// Whether the cache owns a spill file.
    pub fn is_spilled(&self) -> bool {
        self.stage.file().is_some()
    }

    /// Type of the last event (the terminating one once complete).
    pub fn terminating_event_type(&self) -> u8 {
        self.terminating_event_type
    }

    /// Appends one event. `timestamp` goes in its header.
    pub fn append(&mut self, event: &Event, timestamp: u32) -> Result<()> {
        let shape = next_shape(self.shape, event)?;
        // Encoded into a buffer kept from event to event: a transaction
        // appends several, and a buffer each showed in commit profiles.
        let mut body = std::mem::take(&mut self.body_scratch);
        body.clear();
        event.encode_body(&mut body);
        let appended = self.append_framed(event.event_type(), &body, timestamp);
        self.body_scratch = body;
        appended?;
        self.shape = shape;
        Ok(())
    }

    /// Appends a Table_map or rows event (v2) whose body the caller has
    /// encoded (a Table_map is the same for every transaction that writes
    /// the table: the database encodes it once per table definition).
    /// Only inside a transaction that began with `BEGIN`.
    pub fn append_body(&mut self, event_type: u8, body: &[u8], timestamp: u32) -> Result<()> {
        let row_event = event_type == EventType::TableMap as u8 || RowsKind::from_event_type(event_type).is_some();
        if !row_event || self.shape != Shape::Open {
            return Err(BinlogError::Invalid(format!(
                "transaction cache: a pre-encoded event must be a Table_map or rows event after BEGIN (type {event_type}, {:?})",
                self.shape
            )));
        }
        self.append_framed(event_type, body, timestamp)
    }

    /// Frames `body` (header, checksum) straight into the memory buffer,
    /// spilling that first when the event would pass `binlog_cache_size`.
    fn append_framed(&mut self, event_type: u8, body: &[u8], timestamp: u32) -> Result<()> {
        if self.is_empty() && !self.is_spilled() {
            // Taken once per transaction, with the large-transaction
            // settings below: a spilled body's checksums are final.
            self.checksum = self.context.checksum.load(Ordering::Relaxed);
        }
        let size = COMMON_HEADER_LENGTH + body.len() + if self.checksum { 4 } else { 0 };
        if self.length + size as u64 > self.context.max_binlog_cache_size {
            return Err(BinlogError::CacheFull { max_binlog_cache_size: self.context.max_binlog_cache_size });
        }
        if !matches!(self.stage, Stage::Memory | Stage::Spilled(_)) {
            return Err(BinlogError::Invalid("transaction cache: an event after the cache was sealed".into()));
        }
        if self.is_empty() {
            self.timestamp = timestamp;
            if !self.is_spilled() {
                // Captured once per transaction: later SET GLOBAL changes
                // affect the next transaction, not this one.
                let large = &self.context.large;
                let enabled = large.enabled.load(Ordering::Relaxed);
                self.threshold = large.threshold.load(Ordering::Relaxed).max(self.context.binlog_cache_size);
                self.header_room = if enabled { large.header_room } else { 0 };
            }
        }
        // With reserved header room the body's offsets in a promoted file
        // are known now: log_pos and the checksum are final when written.
        let log_pos = if self.header_room > 0 { self.header_room + self.length + size as u64 } else { 0 };
        let header = EventHeader {
            timestamp,
            event_type,
            server_id: self.context.server_id,
            event_size: 0,
            log_pos: u32::try_from(log_pos).unwrap_or(u32::MAX),
            // MySQL marks Rows_query ignorable: a reader that does not know
            // it may skip it.
            flags: if event_type == EventType::RowsQuery as u8 { binlog_format::constants::LOG_EVENT_IGNORABLE_F } else { 0 },
        };
        if self.memory.len() as u64 + size as u64 > self.context.binlog_cache_size && !self.memory.is_empty() {
            self.spill_memory()?;
        }
        binlog_format::encode_event(header, body, self.checksum, &mut self.memory);
        self.length += size as u64;
        self.terminating_event_type = event_type;
        self.last_event_size = size as u64;
        self.event_count += 1;
        Ok(())
    }

    /// Moves the memory buffer to the end of the spill file.
    fn spill_memory(&mut self) -> Result<()> {
        if let Stage::Memory = self.stage {
            let number = self.context.spill_counter.fetch_add(1, Ordering::Relaxed);
            let path = self.context.spill_dir.join(format!("{SPILL_FILE_PREFIX}{number}"));
            let file = self.context.storage.create(&path).map_err(|e| BinlogError::io("create spill file", &path, e))?;
            self.context.spill_count.fetch_add(1, Ordering::Relaxed);
            self.stage = Stage::Spilled(SpillFile { path, file, length: 0, synced_length: 0 });
            self.context
                .crash
                .hit(crash_points::CACHE_AFTER_SPILL)
                .map_err(|e| BinlogError::io("crash point", &self.context.spill_dir, e))?;
        }
        let Stage::Spilled(spill) = &mut self.stage else { unreachable!("only a cache taking events spills") };
        spill
            .file
            .write_at(self.header_room + spill.length, &self.memory)
            .map_err(|e| BinlogError::io("write spill file", &spill.path, e))?;
        spill.length += self.memory.len() as u64;
        self.memory.clear();
        // Incremental durability, in the session's own thread and outside
        // every lock: a promotable body is synced chunk by chunk as it grows.
        if self.header_room > 0 && spill.length - spill.synced_length >= self.context.large.sync_chunk_bytes {
            spill.file.sync_data().map_err(|e| BinlogError::io("fdatasync spill file", &spill.path, e))?;
            spill.synced_length = spill.length;
        }
        Ok(())
    }

    /// Moves the in-memory tail to the spill file and makes the whole body
    /// durable (in the session's thread, outside every lock): `Spilled` →
    /// `Sealed`; a cache sealed already (or referenced) is returned as it
    /// is. Returns what the promotion path needs; the cache still owns the
    /// file until [`TransactionCache::forget_spill`].
    pub fn seal_for_promotion(&mut self) -> Result<SealedSpill> {
        assert!(self.should_promote(), "only a cache to promote can be sealed");
        if let Stage::Spilled(_) = self.stage {
            if !self.memory.is_empty() {
                self.spill_memory()?;
            }
            let Some(mut spill) = self.stage.take_file(Stage::Memory) else { unreachable!("spilled") };
            if spill.synced_length < spill.length {
                // Back to `Spilled` on a failure: dropping the cache deletes the file.
                let synced = spill.file.sync_data();
                if let Err(error) = synced {
                    let failed = BinlogError::io("fdatasync spill file", &spill.path, error);
                    self.stage = Stage::Spilled(spill);
                    return Err(failed);
                }
                spill.synced_length = spill.length;
            }
            self.stage = Stage::Sealed(spill);
        }
        let spill = self.stage.file().expect("sealed");
        Ok(SealedSpill {
            path: spill.path.clone(),
            file: spill.file.clone(),
            header_room: self.header_room,
            body_length: spill.length,
            last_event_size: self.last_event_size,
            terminating_event_type: self.terminating_event_type,
            checksum: self.checksum,
        })
    }

    /// Seals the spill file (as [`TransactionCache::seal_for_promotion`])
    /// and renames it to a name the binlog's startup keeps, so a redo
    /// record can refer to it instead of carrying the body (the
    /// engine-integrated binlog). The cache keeps owning the file: the
    /// writer promotes it into the log later, or dropping the cache deletes
    /// it.
    pub fn seal_for_reference(&mut self, reference_name: &str) -> Result<SpillReference> {
        let sealed = self.seal_for_promotion()?;
        let Stage::Sealed(spill) = &mut self.stage else { panic!("only a cache sealed here is referenced") };
        let file_name = format!("{REFERENCED_SPILL_PREFIX}{reference_name}");
        let target = self.context.spill_dir.join(&file_name);
        let storage = &self.context.storage;
        storage.rename(&spill.path, &target).map_err(|e| BinlogError::io("rename spill file", &target, e))?;
        storage.sync_dir(&self.context.spill_dir).map_err(|e| BinlogError::io("fsync directory", &self.context.spill_dir, e))?;
        spill.path = target;
        let Some(spill) = self.stage.take_file(Stage::Memory) else { unreachable!("sealed") };
        self.stage = Stage::Referenced(spill);
        Ok(SpillReference {
            file_name,
            checksum: self.checksum,
            header_room: sealed.header_room,
            body_length: sealed.body_length,
            event_count: self.event_count,
            last_event_size: sealed.last_event_size,
            terminating_event_type: sealed.terminating_event_type,
            timestamp: self.timestamp,
        })
    }

    /// The cache a [`SpillReference`] describes, from its file (recovery
    /// of the engine-integrated binlog). Constant time: the file's size
    /// and its last event are checked, not every event (each carries its
    /// checksum, verified when the promoted file is read).
    pub fn from_spill_reference(context: CacheContext, reference: &SpillReference) -> Result<TransactionCache> {
        let path = context.spill_dir.join(&reference.file_name);
        let invalid = |reason: String| BinlogError::Invalid(format!("{}: {reason}", path.display()));
        let file = context.storage.open(&path).map_err(|e| BinlogError::io("open referenced spill file", &path, e))?;
        let end = reference.header_room + reference.body_length;
        let length = file.len().map_err(|e| BinlogError::io("size of", &path, e))?;
        if length < end || reference.last_event_size < COMMON_HEADER_LENGTH as u64 || reference.last_event_size > reference.body_length {
            return Err(invalid(format!("{length} bytes, the reference says {end} with a last event of {}", reference.last_event_size)));
        }
        let mut header = [0u8; COMMON_HEADER_LENGTH];
        file.read_exact_at(end - reference.last_event_size, &mut header)
            .map_err(|e| BinlogError::io("read referenced spill file", &path, e))?;
        let last = EventHeader::decode(&header).map_err(|e| invalid(e.to_string()))?;
        if u64::from(last.event_size) != reference.last_event_size
            || last.event_type != reference.terminating_event_type
            || !is_terminating_type(last.event_type)
        {
            return Err(invalid(format!(
                "the last event is type {} of {} bytes, the reference says type {} of {}",
                last.event_type, last.event_size, reference.terminating_event_type, reference.last_event_size
            )));
        }
        context.spill_count.fetch_add(1, Ordering::Relaxed);
        let mut cache = TransactionCache::new(context);
        cache.checksum = reference.checksum;
        cache.stage = Stage::Referenced(SpillFile { path, file, length: reference.body_length, synced_length: reference.body_length });
        cache.length = reference.body_length;
        cache.event_count = reference.event_count;
        cache.shape = Shape::Complete;
        cache.terminating_event_type = reference.terminating_event_type;
        cache.last_event_size = reference.last_event_size;
        cache.timestamp = reference.timestamp;
        cache.header_room = reference.header_room;
        // A promotion candidate whatever the threshold now is: its room
        // is laid out, and the writer promotes it by rename.
        cache.threshold = 0;
        Ok(cache)
    }

    /// Compress this transaction at `level` when it commits, if it is one
    /// MySQL compresses (`compression.rs`); `None` writes it as it is.
    pub fn set_compression_level_zstd(&mut self, level: Option<i32>) {
        self.compression_level_zstd = level;
    }

    pub fn compression_level_zstd(&self) -> Option<i32> {
        self.compression_level_zstd
    }

    /// `server_id` in the events' headers.
    pub fn server_id(&self) -> u32 {
        self.context.server_id
    }

    /// The complete transaction whose one event is `event` (its
    /// Transaction_payload, framed as this cache's events): in memory,
    /// with this cache's timestamp and write set. This cache, and its
    /// spill file, are dropped by the caller.
    pub fn with_payload(&mut self, event: Vec<u8>) -> TransactionCache {
        let mut compressed = TransactionCache::new(self.context.clone());
        compressed.checksum = self.checksum;
        compressed.length = event.len() as u64;
        compressed.last_event_size = event.len() as u64;
        compressed.memory = event;
        compressed.event_count = 1;
        compressed.shape = Shape::Complete;
        compressed.terminating_event_type = EventType::TransactionPayload as u8;
        compressed.timestamp = self.timestamp;
        compressed.writeset = std::mem::take(&mut self.writeset);
        compressed
    }

    /// After a promotion renamed the spill file into the log: the cache
    /// must not delete it (`Promoted`).
    pub fn forget_spill(&mut self) {
        if self.stage.take_file(Stage::Promoted).is_some() {
            self.context.spill_count.fetch_sub(1, Ordering::Relaxed);
        }
        self.memory.clear();
    }

    /// Current length, to roll back to later (`SAVEPOINT`).
    pub fn savepoint(&self) -> CacheSavepoint {
        CacheSavepoint {
            length: self.length,
            event_count: self.event_count,
            shape: self.shape,
            terminating_event_type: self.terminating_event_type,
            last_event_size: self.last_event_size,
            writeset_length: self.writeset.len(),
        }
    }

    /// `ROLLBACK TO SAVEPOINT`: forgets every event after `savepoint`.
    pub fn rollback_to(&mut self, savepoint: CacheSavepoint) -> Result<()> {
        assert!(savepoint.length <= self.length, "savepoint beyond the cache");
        let spilled = self.stage.file().map_or(0, |s| s.length);
        if savepoint.length >= spilled {
            self.memory.truncate((savepoint.length - spilled) as usize);
        } else {
            let spill = self.stage.file_mut().expect("bytes in a spill file");
            spill.file.truncate(self.header_room + savepoint.length).map_err(|e| BinlogError::io("truncate spill file", &spill.path, e))?;
            spill.length = savepoint.length;
            spill.synced_length = spill.synced_length.min(spill.length);
            self.memory.clear();
        }
        self.length = savepoint.length;
        self.event_count = savepoint.event_count;
        self.shape = savepoint.shape;
        self.terminating_event_type = savepoint.terminating_event_type;
        self.last_event_size = savepoint.last_event_size;
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
        self.last_event_size = 0;
        self.writeset.clear();
    }

    /// Back to `Memory`, deleting the spill file the cache owns.
    fn delete_spill(&mut self) {
        if let Some(spill) = self.stage.take_file(Stage::Memory) {
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
        if let Some(spill) = self.stage.file() {
            let mut offset = 0u64;
            let mut chunk = Vec::with_capacity(chunk_bytes);
            while offset < spill.length {
                // Read whole events until the chunk is full.
                chunk.clear();
                while offset < spill.length && chunk.len() < chunk_bytes {
                    let mut header = [0u8; COMMON_HEADER_LENGTH];
                    spill
                        .file
                        .read_exact_at(self.header_room + offset, &mut header)
                        .map_err(|e| BinlogError::io("read spill file", &spill.path, e))?;
                    let size = peek_event_size(&header).unwrap() as usize;
                    let start = chunk.len();
                    chunk.resize(start + size, 0);
                    spill
                        .file
                        .read_exact_at(self.header_room + offset, &mut chunk[start..])
                        .map_err(|e| BinlogError::io("read spill file", &spill.path, e))?;
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
        self.stage.file().is_none().then_some(self.memory.as_slice())
    }

    /// Whether the cached events carry a CRC32 footer.
    pub fn checksum(&self) -> bool {
        self.checksum
    }

    pub fn spill_path(&self) -> Option<&std::path::Path> {
        self.stage.file().map(|s| s.path.as_path())
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
    last_event_size: u64,
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
