//! [`BinaryLog`]: the open log. Opening runs recovery and starts a new
//! active file (as mysqld does at every start); commits go through
//! [`crate::group_commit`]; rotation, clean close and status live here.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use binlog_format::events::{Event, RotateEvent};
use binlog_format::file::{append_event, file_preamble, WriterIdentity};
use binlog_format::gtid_set::GtidSet;
use parking_lot::Mutex;

use crate::cache::{CacheContext, TransactionCache};
use crate::crash_points::{self, CrashPoints};
use crate::dependency::DependencyTracker;
use crate::error::{BinlogError, Result};
use crate::group_commit::{CommitQueue, SyncStage};
use crate::index;
use crate::options::Options;
use crate::recovery::{self, RecoveryReport};
use crate::visible_end::PublishedEnd;
use storage::{FileHandle, Storage};

/// The file commits append to.
pub(crate) struct ActiveFile {
    pub number: u64,
    pub name: String,
    pub path: PathBuf,
    pub file: FileHandle,
    /// Bytes written (the next event's offset).
    pub position: u64,
    /// Whether its events carry a CRC32 footer (its Format_description's
    /// algorithm): `binlog_checksum` when the file was created.
    pub checksum: bool,
}

/// State owned by whoever holds the log lock (MySQL's LOCK_log).
pub(crate) struct Writer {
    pub active: ActiveFile,
    pub index: Vec<String>,
    pub executed: GtidSet,
    pub next_gno: u64,
    pub dependency: DependencyTracker,
    pub closed: bool,
}

impl Writer {
    /// `gtid` is in the log: executed, and automatic numbering continues
    /// after the server's highest own gno.
    pub(crate) fn note_logged(&mut self, gtid: binlog_format::gtid_set::Gtid, server_uuid: binlog_format::gtid_set::Uuid) {
        self.executed.add(gtid);
        // Automatic numbering is of the untagged GTIDs only.
        if gtid.uuid == server_uuid && !gtid.is_tagged() {
            self.next_gno = self.next_gno.max(gtid.gno + 1);
        }
    }
}

pub use crate::visible_end::VisibleEnd;

#[derive(Debug, Default)]
pub struct Counters {
    pub commits: AtomicU64,
    pub groups: AtomicU64,
    pub fsyncs: AtomicU64,
    pub bytes_written: AtomicU64,
    pub rotations: AtomicU64,
    /// `Binlog_cache_use` / `Binlog_cache_disk_use`.
    pub cache_use: AtomicU64,
    pub cache_disk_use: AtomicU64,
    /// `binlog_large_transaction_optimization_count`.
    pub large_transaction_promotions: AtomicU64,
    /// `binlog_large_transaction_optimization_missed_count`.
    pub large_transaction_missed: AtomicU64,
    /// Transactions written as a zstd Transaction_payload, and their bytes
    /// before (the events as they would have been written) and after (the
    /// payload event): MySQL's
    /// performance_schema.binary_log_transaction_compression_stats row
    /// (BINARY, ZSTD), shown as `Binlog_transaction_compression_zstd_*`.
    pub compression_zstd_transactions: AtomicU64,
    pub compression_zstd_uncompressed_bytes: AtomicU64,
    pub compression_zstd_compressed_bytes: AtomicU64,
    /// Microseconds the group commit's stages took, summed over groups
    /// (one count per leader): FLUSH (the writes), SYNC (the fdatasync)
    /// and COMMIT (the engine commits, in binlog order). Where a group's
    /// time goes, for `binlogd_group_commit_*_us_total`.
    pub flush_stage_us: AtomicU64,
    pub sync_stage_us: AtomicU64,
    pub commit_stage_us: AtomicU64,
}

pub(crate) struct Inner {
    pub options: Options,
    pub storage: Arc<dyn Storage>,
    pub crash: CrashPoints,
    pub writer: Mutex<Writer>,
    pub queue: CommitQueue,
    pub sync_stage: Mutex<SyncStage>,
    pub commit_stage: Mutex<()>,
    /// What readers may read; published without a lock readers take.
    pub visible: PublishedEnd,
    /// Set after a failed write or sync: the first error's text.
    pub poisoned: Mutex<Option<String>>,
    pub is_poisoned: AtomicBool,
    /// Global sequence number of the newest transaction whose commit
    /// stage finished (COMMIT_ORDER's `last_committed` source).
    pub max_committed: AtomicU64,
    pub counters: Counters,
    pub cache_context: CacheContext,
    /// Open readers: reader id → number of the file it is reading.
    pub readers: Mutex<std::collections::BTreeMap<u64, u64>>,
    pub next_reader_id: AtomicU64,
    pub purged_gtids: Mutex<GtidSet>,
    pub in_flight: crate::in_flight::InFlight,
    /// Given GTIDs owned by sessions (`gtid_next`).
    pub owners: Arc<crate::gtid_owners::GtidOwners>,
    /// Semi-synchronous replication's wait in the COMMIT stage.
    pub replica_acks: crate::replica_acks::AcksSlot,
    /// `binlog_checksum` now: what the next file is created with. Shared
    /// with the cache context; changed only under the log lock, with a
    /// rotation ([`BinaryLog::set_checksum`]).
    pub checksum: Arc<AtomicBool>,
}

/// An open binary log. Cheap to clone; all clones share one log.
#[derive(Clone)]
pub struct BinaryLog {
    pub(crate) inner: Arc<Inner>,
}

pub fn now_seconds() -> u32 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as u32)
}

pub fn now_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

impl BinaryLog {
    /// Recovers the log in `options.dir` and opens a new active file.
    pub fn open(options: Options, storage: Arc<dyn Storage>, crash: CrashPoints) -> Result<(BinaryLog, RecoveryReport)> {
        let report = recovery::recover(storage.as_ref(), &options, &crash)?;
        let next_number = report.index.last().and_then(|name| options.file_number(name)).map_or(1, |n| n + 1);
        let mut index_names = report.index.clone();
        let active = create_file(storage.as_ref(), &options, next_number, &report.executed_gtids, options.binlog_checksum)?;
        let checksum = Arc::new(AtomicBool::new(options.binlog_checksum));
        index_names.push(active.name.clone());
        index::store(storage.as_ref(), &options, &index_names, &crash)?;
        let purged = report.purged_gtids.clone();
        let next_gno = report.executed_gtids.last_gno(&options.server_uuid) + 1;
        let visible = PublishedEnd::new(active.number, active.position);
        let cache_context = CacheContext {
            storage: storage.clone(),
            spill_dir: options.spill_dir(),
            binlog_cache_size: options.binlog_cache_size,
            max_binlog_cache_size: options.max_binlog_cache_size,
            checksum: checksum.clone(),
            server_id: options.server_id,
            spill_counter: Arc::new(AtomicU64::new(0)),
            crash: crash.clone(),
            spill_count: Arc::new(AtomicU64::new(0)),
            large: Arc::new(crate::cache::LargeTransactionSettings {
                enabled: AtomicBool::new(options.large_transaction_optimization_enabled),
                threshold: AtomicU64::new(options.large_transaction_optimization_threshold),
                header_room: options.large_transaction_header_room,
                sync_chunk_bytes: options.spill_sync_chunk_bytes,
            }),
        };
        let writer = Writer {
            active,
            index: index_names,
            executed: report.executed_gtids.clone(),
            next_gno,
            dependency: DependencyTracker::new(options.dependency_tracking, options.dependency_history_size),
            closed: false,
        };
        let options_uuid = options.server_uuid;
        let log = BinaryLog {
            inner: Arc::new(Inner {
                options,
                storage,
                crash,
                writer: Mutex::new(writer),
                queue: CommitQueue::default(),
                sync_stage: Mutex::new(SyncStage::default()),
                commit_stage: Mutex::new(()),
                visible,
                poisoned: Mutex::new(None),
                is_poisoned: AtomicBool::new(false),
                max_committed: AtomicU64::new(0),
                counters: Counters::default(),
                cache_context,
                readers: Default::default(),
                next_reader_id: AtomicU64::new(1),
                purged_gtids: Mutex::new(purged),
                in_flight: Default::default(),
                owners: Arc::new(crate::gtid_owners::GtidOwners::new(options_uuid)),
                replica_acks: Default::default(),
                checksum,
            }),
        };
        if log.inner.options.binlog_expire_logs_seconds > 0 {
            log.purge_expired()?;
        }
        Ok((log, report))
    }

    /// Installs (or removes) semi-synchronous replication's wait in the
    /// COMMIT stage (`replica_acks.rs`).
    pub fn set_replica_acks(&self, acks: Option<Arc<dyn crate::replica_acks::ReplicaAcks>>) {
        self.inner.replica_acks.set(acks);
    }

    /// Semi-synchronous replication's waiter and wait point, when it
    /// waits at all: for commits that do not pass the COMMIT stage (the
    /// engine-integrated binlog's, decided in redo).
    pub fn replica_acks(&self) -> Option<(Arc<dyn crate::replica_acks::ReplicaAcks>, crate::replica_acks::AckWaitPoint)> {
        self.inner.replica_acks.active()
    }

    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    /// A new, empty transaction cache.
    pub fn new_cache(&self) -> TransactionCache {
        TransactionCache::new(self.inner.cache_context.clone())
    }

    /// `gtid_executed`.
    pub fn executed_gtids(&self) -> GtidSet {
        self.inner.writer.lock().executed.clone()
    }

    /// Given GTIDs owned by sessions, and the automatic numbering's floor.
    pub fn owners(&self) -> &Arc<crate::gtid_owners::GtidOwners> {
        &self.inner.owners
    }

    /// `gtid_purged`: GTIDs in no listed file any more.
    pub fn purged_gtids(&self) -> GtidSet {
        self.inner.purged_gtids.lock().clone()
    }

    /// Names of the files in the index, oldest first.
    pub fn file_names(&self) -> Vec<String> {
        self.inner.writer.lock().index.clone()
    }

    /// (active file name, its length): `SHOW BINARY LOG STATUS`.
    pub fn active_position(&self) -> (String, u64) {
        let writer = self.inner.writer.lock();
        (writer.active.name.clone(), writer.active.position)
    }

    /// A cache rebuilt from encoded events (see
    /// [`TransactionCache::from_encoded_events`]).
    pub fn cache_from_encoded_events(&self, bytes: Vec<u8>, checksum: bool) -> Result<TransactionCache> {
        TransactionCache::from_encoded_events(self.inner.cache_context.clone(), bytes, checksum)
    }

    /// `binlog_checksum`: whether the events of the file it names carry a
    /// CRC32 footer (the file created at open or at the last change).
    pub fn checksum(&self) -> bool {
        self.inner.checksum.load(Ordering::Acquire)
    }

    /// `SET GLOBAL binlog_checksum`: as MySQL does, the log rotates (even
    /// to the same algorithm), so the new file's Format_description
    /// carries the new algorithm and no file mixes the two. The setting
    /// changes under the log lock, before the new file is created: a
    /// group flushed before is in the old file with the old framing, one
    /// flushed after in the new. Transactions already caching keep their
    /// framing and are re-framed when copied (`reframe.rs`); a large one
    /// promoted by rename keeps it in its own file.
    pub fn set_checksum(&self, checksum: bool) -> Result<()> {
        self.check_usable()?;
        let mut writer = self.inner.writer.lock();
        if writer.closed {
            return Err(BinlogError::Closed);
        }
        self.inner.checksum.store(checksum, Ordering::Release);
        let result = self.rotate_locked(&mut writer);
        drop(writer);
        if let Err(error) = &result {
            self.poison(error);
        }
        result?;
        if self.inner.options.binlog_expire_logs_seconds > 0 {
            self.purge_expired()?;
        }
        Ok(())
    }

    /// fdatasyncs the active file (older files were synced when rotated):
    /// every byte written so far survives a power cut.
    pub fn sync_active(&self) -> Result<()> {
        self.check_usable()?;
        let writer = self.inner.writer.lock();
        let _sync = self.inner.sync_stage.lock();
        let active = &writer.active;
        active.file.sync_data().map_err(|e| BinlogError::io("fdatasync", &active.path, e))?;
        self.inner.counters.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The end readers never pass: with classic files the synced end
    /// (`sync_binlog = 1`) or the written end; with the engine-integrated
    /// binlog (opened with `sync_binlog = 0`, written behind redo) the end
    /// of the last transaction written, each of which redo already made
    /// durable under `innodb_flush_log_at_trx_commit`.
    pub fn durable_end(&self) -> VisibleEnd {
        self.visible_end()
    }

    pub fn visible_end(&self) -> VisibleEnd {
        self.inner.visible.load()
    }

    pub fn counters(&self) -> &Counters {
        &self.inner.counters
    }

    /// Spill files currently on disk.
    pub fn spill_files_open(&self) -> u64 {
        self.inner.cache_context.spill_count.load(Ordering::Relaxed)
    }

    /// `SET GLOBAL binlog_large_transaction_optimization_enabled`.
    pub fn set_large_transaction_optimization_enabled(&self, enabled: bool) {
        self.inner.cache_context.large.enabled.store(enabled, Ordering::Relaxed);
    }

    /// `SET GLOBAL binlog_large_transaction_optimization_threshold`
    /// (error when below the 10 MiB minimum).
    pub fn set_large_transaction_optimization_threshold(&self, bytes: u64) -> Result<()> {
        if bytes < crate::options::LARGE_TRANSACTION_THRESHOLD_MIN {
            return Err(BinlogError::Invalid(format!(
                "binlog_large_transaction_optimization_threshold must be at least {} (got {bytes})",
                crate::options::LARGE_TRANSACTION_THRESHOLD_MIN
            )));
        }
        self.inner.cache_context.large.threshold.store(bytes, Ordering::Relaxed);
        Ok(())
    }

    pub fn large_transaction_optimization(&self) -> (bool, u64) {
        let large = &self.inner.cache_context.large;
        (large.enabled.load(Ordering::Relaxed), large.threshold.load(Ordering::Relaxed))
    }

    pub(crate) fn check_usable(&self) -> Result<()> {
        if self.inner.is_poisoned.load(Ordering::Acquire) {
            let first_error = self.inner.poisoned.lock().clone().unwrap_or_default();
            return Err(BinlogError::PreviousIo { first_error });
        }
        Ok(())
    }

    /// Marks the log unusable after a failed write or sync.
    pub(crate) fn poison(&self, error: &BinlogError) {
        let mut poisoned = self.inner.poisoned.lock();
        if poisoned.is_none() {
            tracing::error!("binary log: {error}; refusing further writes until restart");
            *poisoned = Some(error.to_string());
        }
        self.inner.is_poisoned.store(true, Ordering::Release);
        self.inner.visible.wake_all();
    }

    /// Moves the visible end forward and wakes waiting readers; never
    /// waits for a reader.
    pub(crate) fn publish(&self, file_number: u64, position: u64) {
        self.inner.visible.advance(file_number, position);
    }

    /// `FLUSH BINARY LOGS`: closes the active file and starts the next.
    pub fn rotate(&self) -> Result<()> {
        self.check_usable()?;
        let mut writer = self.inner.writer.lock();
        if writer.closed {
            return Err(BinlogError::Closed);
        }
        let result = self.rotate_locked(&mut writer);
        drop(writer);
        if let Err(error) = &result {
            self.poison(error);
        }
        result?;
        if self.inner.options.binlog_expire_logs_seconds > 0 {
            self.purge_expired()?;
        }
        Ok(())
    }

    /// Rotation, under the log lock. Durability order: the Rotate event is
    /// synced into the old file before the new file exists; the new file's
    /// preamble and directory entry are synced before the index names it;
    /// the old file's in-use flag is cleared only after the index names the
    /// new file, so recovery always finds the flag on the newest listed file.
    pub(crate) fn rotate_locked(&self, writer: &mut Writer) -> Result<()> {
        let options = &self.inner.options;
        let crash = &self.inner.crash;
        let next_number = writer.active.number + 1;
        let next_name = options.file_name(next_number);
        // Wait for groups still in their sync stage: a Rotate must follow
        // every byte of the old file.
        let sync = self.inner.sync_stage.lock();
        let mut rotate = Vec::new();
        let end = append_event(
            &mut rotate,
            writer.active.position,
            &Event::Rotate(RotateEvent { position: 4, next_file: next_name.clone() }),
            now_seconds(),
            0,
            WriterIdentity { server_id: options.server_id, checksum: writer.active.checksum },
        );
        let old = &writer.active;
        old.file.write_at(old.position, &rotate).map_err(|e| BinlogError::io("write", &old.path, e))?;
        old.file.sync_data().map_err(|e| BinlogError::io("fdatasync", &old.path, e))?;
        drop(sync);
        self.inner.counters.fsyncs.fetch_add(1, Ordering::Relaxed);
        crash.hit(crash_points::ROTATE_AFTER_ROTATE_EVENT).map_err(|e| BinlogError::io("crash point", &old.path, e))?;
        let old_path = old.path.clone();
        let old_number = old.number;
        writer.active.position = end;
        self.publish(old_number, end);

        let new_file = create_file(self.inner.storage.as_ref(), options, next_number, &writer.executed, self.checksum())?;
        crash.hit(crash_points::ROTATE_AFTER_NEW_FILE).map_err(|e| BinlogError::io("crash point", &new_file.path, e))?;
        let mut names = writer.index.clone();
        names.push(next_name);
        index::store(self.inner.storage.as_ref(), options, &names, crash)?;
        writer.index = names;
        crash.hit(crash_points::ROTATE_AFTER_INDEX).map_err(|e| BinlogError::io("crash point", &new_file.path, e))?;
        // The old file keeps its in-use flag until every transaction in it
        // is committed in the engine (see in_flight.rs).
        self.inner.in_flight.closed(old_number, old_path);
        self.clear_closed_files()?;
        let (number, position) = (new_file.number, new_file.position);
        writer.active = new_file;
        writer.dependency.rotate();
        self.inner.counters.rotations.fetch_add(1, Ordering::Relaxed);
        self.publish(number, position);
        Ok(())
    }

    /// Clean shutdown: a Stop event ends the active file, which is synced
    /// and its in-use flag cleared. Commits after this fail with `Closed`.
    pub fn close(&self) -> Result<()> {
        let mut writer = self.inner.writer.lock();
        if writer.closed {
            return Ok(());
        }
        writer.closed = true;
        self.check_usable()?;
        // Groups still in their SYNC or COMMIT stage finish first.
        self.inner.in_flight.wait_drained();
        self.clear_closed_files()?;
        let options = &self.inner.options;
        let _sync = self.inner.sync_stage.lock();
        let mut stop = Vec::new();
        let end = append_event(
            &mut stop,
            writer.active.position,
            &Event::Stop,
            now_seconds(),
            0,
            WriterIdentity { server_id: options.server_id, checksum: writer.active.checksum },
        );
        let active = &writer.active;
        active.file.write_at(active.position, &stop).map_err(|e| BinlogError::io("write", &active.path, e))?;
        active.file.sync_data().map_err(|e| BinlogError::io("fdatasync", &active.path, e))?;
        self.inner.crash.hit(crash_points::CLOSE_AFTER_STOP_EVENT).map_err(|e| BinlogError::io("crash point", &active.path, e))?;
        recovery::clear_in_use_flag(self.inner.storage.as_ref(), &active.path)?;
        let (number, path) = (active.number, active.path.clone());
        writer.active.position = end;
        drop(path);
        self.publish(number, end);
        self.inner.visible.wake_all();
        Ok(())
    }

    pub fn is_closed(&self) -> bool {
        self.inner.writer.lock().closed
    }
}

/// Creates binlog file `number` with its preamble (FDE flagged in use,
/// Previous_gtids), synced, and its directory entry synced. It is not in
/// the log until the index lists it.
/// `checksum`: the file's algorithm (CRC32 or NONE), in its Format_description.
pub(crate) fn create_file(storage: &dyn Storage, options: &Options, number: u64, executed: &GtidSet, checksum: bool) -> Result<ActiveFile> {
    let name = options.file_name(number);
    let path = options.dir.join(&name);
    let file = storage.create(&path).map_err(|e| BinlogError::io("create", &path, e))?;
    let preamble = file_preamble(now_seconds(), executed, WriterIdentity { server_id: options.server_id, checksum });
    file.write_at(0, &preamble).map_err(|e| BinlogError::io("write", &path, e))?;
    file.sync_data().map_err(|e| BinlogError::io("fdatasync", &path, e))?;
    storage.sync_dir(&options.dir).map_err(|e| BinlogError::io("fsync directory", &options.dir, e))?;
    Ok(ActiveFile { number, name, path, file, position: preamble.len() as u64, checksum })
}
