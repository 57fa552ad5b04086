//! Large-transaction promotion (AWS BOLT): a spilled transaction's file
//! becomes the next binlog file by rename, instead of being copied into
//! the active file under the log lock.
//!
//! The spill file was created with `header_room` bytes reserved at its
//! front, so the body's offsets, `log_pos` values and checksums were final
//! when written, and the body was synced chunk by chunk while the
//! transaction ran (see `cache.rs`). Under the log lock, promotion does a
//! fixed amount of work whatever the transaction's size:
//!
//! | step | durable effect | crash point after it | recovery outcome |
//! |------|----------------|----------------------|------------------|
//! | 1. header (magic, FDE, Previous_gtids, Large_transaction_header, Gtid) written into the room, Rotate appended after the body, file synced | spill file complete | `binlog::promote::after_header_sync` | rolled back (spill file deleted) |
//! | 2. marker `binlog.promotion` names spill file → target name (temp, sync, rename, dir sync) | intent recorded | `binlog::promote::after_register` | rolled back (marker: target not in index) |
//! | 3. rename spill file → `binlog.N+1`, directory synced | file has its binlog name | `binlog::promote::after_rename` | rolled back (orphan `binlog.N+1` deleted) |
//! | 4. Rotate → `binlog.N+1` appended to the active file `binlog.N`, synced | old file closed | `binlog::promote::after_rotate_event` | rolled back |
//! | 5. `binlog.N+2` created with its preamble, synced | next active file exists | `binlog::promote::after_new_file` | rolled back |
//! | 6. index lists `binlog.N+1` and `binlog.N+2` (crash-safe rewrite) | **transaction in the log** | `binlog::promote::after_index` | rolled forward |
//! | 7. in-use flag of `binlog.N` cleared, marker removed, counter incremented | — | `binlog::promote::after_count` | rolled forward |
//!
//! Then the COMMIT stage runs the engine commit hook in binlog order.
//! The promoted transaction is alone in its file, so it starts a new
//! logical clock: replicas apply it alone (a file boundary is a barrier).

use binlog_format::constants::{EventType, BINLOG_MAGIC, COMMON_HEADER_LENGTH};
use binlog_format::events::large_transaction_header::LARGE_TRANSACTION_HEADER_FIXED_LENGTH;
use binlog_format::events::{Event, FormatDescription, GtidEvent, LargeTransactionHeaderEvent, RotateEvent};
use binlog_format::file::{append_event, WriterIdentity};
use binlog_format::gtid_set::GtidSet;

use crate::cache::SealedSpill;
use crate::crash_points;
use crate::error::{BinlogError, Result};
use crate::index;
use crate::log::{create_file, now_seconds, BinaryLog, Writer};

/// Builds the bytes that fill the reserved room exactly: magic, FDE (not
/// in use: a promoted file is complete once listed), Previous_gtids,
/// Large_transaction_header (zero padding), Gtid ending at `header_room`.
/// `None` when they do not fit (the transaction falls back to the copy path).
pub fn build_header(
    header_room: u64,
    previous_gtids: &GtidSet,
    gtid_event: &GtidEvent,
    terminating_event_offset: u64,
    terminating_event_type: u8,
    timestamp: u32,
    identity: WriterIdentity,
) -> Option<Vec<u8>> {
    let footer = if identity.checksum { 4 } else { 0 };
    let fde = Event::FormatDescription(FormatDescription::binlogd(timestamp, identity.checksum));
    let in_use = binlog_format::constants::LOG_EVENT_BINLOG_IN_USE_F;
    let previous = Event::PreviousGtids(previous_gtids.clone());
    let gtid = Event::Gtid(gtid_event.clone());
    let size = |event: &Event| {
        let mut body = Vec::new();
        event.encode_body(&mut body);
        let checksum = if matches!(event, Event::FormatDescription(_)) { 4 } else { footer };
        (COMMON_HEADER_LENGTH + body.len() + checksum) as u64
    };
    let lth_minimum = (COMMON_HEADER_LENGTH + LARGE_TRANSACTION_HEADER_FIXED_LENGTH + footer) as u64;
    let fixed = BINLOG_MAGIC.len() as u64 + size(&fde) + size(&previous) + lth_minimum + size(&gtid);
    let padding = header_room.checked_sub(fixed)?;
    let mut out = BINLOG_MAGIC.to_vec();
    // In use until the transaction's engine commit: recovery then scans it.
    let mut end = append_event(&mut out, 4, &fde, timestamp, in_use, identity);
    end = append_event(&mut out, end, &previous, timestamp, 0, identity);
    let header = Event::LargeTransactionHeader(LargeTransactionHeaderEvent {
        version: binlog_format::events::large_transaction_header::LARGE_TRANSACTION_HEADER_VERSION,
        terminating_event_offset,
        terminating_event_type,
        padding_length: padding as usize,
    });
    end = append_event(&mut out, end, &header, timestamp, binlog_format::constants::LOG_EVENT_IGNORABLE_F, identity);
    end = append_event(&mut out, end, &gtid, timestamp, 0, identity);
    assert_eq!(end, header_room, "header must fill the reserved room exactly");
    assert_eq!(out.len() as u64, header_room);
    Some(out)
}

/// Where a promoted transaction landed.
pub(crate) struct Promoted {
    pub file_name: String,
    pub transaction_length: u64,
}

impl BinaryLog {
    /// Steps 1–7 above, under the log lock. `gtid_event` has everything but
    /// `transaction_length`. On `Ok(None)` nothing happened and the caller
    /// copies the transaction instead (the header did not fit).
    pub(crate) fn promote_locked(
        &self,
        writer: &mut Writer,
        sealed: &SealedSpill,
        cache: &mut crate::cache::TransactionCache,
        gtid_event: &mut GtidEvent,
        timestamp: u32,
    ) -> Result<Option<Promoted>> {
        let inner = &self.inner;
        let options = &inner.options;
        let storage = inner.storage.as_ref();
        let crash = &inner.crash;
        // The promoted file has the body's algorithm (the one current when
        // the transaction began); the active file it closes, and the file
        // after it, may have the other (`BinaryLog::set_checksum`).
        let identity = WriterIdentity { server_id: options.server_id, checksum: sealed.checksum };
        let active_identity = WriterIdentity { server_id: options.server_id, checksum: writer.active.checksum };
        let previous = writer.executed.clone();
        let length = gtid_event.settle_transaction_length(sealed.body_length, identity.checksum);
        let body_end = sealed.header_room + sealed.body_length;
        let terminating_offset = body_end - sealed.last_event_size;
        let Some(header) =
            build_header(sealed.header_room, &previous, gtid_event, terminating_offset, sealed.terminating_event_type, timestamp, identity)
        else {
            return Ok(None);
        };
        let promoted_number = writer.active.number + 1;
        let promoted_name = options.file_name(promoted_number);
        let next_number = promoted_number + 1;
        let next_name = options.file_name(next_number);
        let promoted_path = options.dir.join(&promoted_name);
        let fail = |op: &'static str| move |e: std::io::Error| BinlogError::io(op, &sealed.path, e);

        // 1. Header and closing Rotate, then one sync: the body is already durable.
        let mut rotate = Vec::new();
        append_event(
            &mut rotate,
            body_end,
            &Event::Rotate(RotateEvent { position: 4, next_file: next_name.clone() }),
            now_seconds(),
            0,
            identity,
        );
        sealed.file.write_at(0, &header).map_err(fail("write promoted header"))?;
        sealed.file.write_at(body_end, &rotate).map_err(fail("write promoted rotate"))?;
        sealed.file.sync_data().map_err(fail("fdatasync promoted file"))?;
        inner.counters.fsyncs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crash.hit(crash_points::PROMOTE_AFTER_HEADER_SYNC).map_err(fail("crash point"))?;

        // 2. Register the rename.
        let spill_name = sealed.path.file_name().unwrap().to_string_lossy().into_owned();
        let marker = format!("{spill_name} {promoted_name}\n");
        storage
            .write_atomically(&options.promotion_marker_path(), &options.promotion_marker_temp_path(), marker.as_bytes())
            .map_err(fail("write promotion marker"))?;
        crash.hit(crash_points::PROMOTE_AFTER_REGISTER).map_err(fail("crash point"))?;

        // 3. Rename into the binlog directory (same file system: atomic).
        storage.rename(&sealed.path, &promoted_path).map_err(fail("rename spill file"))?;
        // The file is no longer the cache's to delete.
        cache.forget_spill();
        storage.sync_dir(&options.dir).map_err(fail("fsync directory"))?;
        storage.sync_dir(&options.spill_dir()).map_err(fail("fsync directory"))?;
        crash.hit(crash_points::PROMOTE_AFTER_RENAME).map_err(fail("crash point"))?;

        // 4. Close the active file with a Rotate to the promoted one.
        let sync = inner.sync_stage.lock();
        let mut old_rotate = Vec::new();
        let old_end = append_event(
            &mut old_rotate,
            writer.active.position,
            &Event::Rotate(RotateEvent { position: 4, next_file: promoted_name.clone() }),
            now_seconds(),
            0,
            active_identity,
        );
        let old = &writer.active;
        old.file.write_at(old.position, &old_rotate).map_err(|e| BinlogError::io("write", &old.path, e))?;
        old.file.sync_data().map_err(|e| BinlogError::io("fdatasync", &old.path, e))?;
        drop(sync);
        inner.counters.fsyncs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (old_number, old_path) = (old.number, old.path.clone());
        writer.active.position = old_end;
        crash.hit(crash_points::PROMOTE_AFTER_ROTATE_EVENT).map_err(|e| BinlogError::io("crash point", &old_path, e))?;

        // 5. The next active file.
        let mut executed = previous;
        executed.add(gtid_event.gtid);
        let next = create_file(storage, options, next_number, &executed, self.checksum())?;
        crash.hit(crash_points::PROMOTE_AFTER_NEW_FILE).map_err(|e| BinlogError::io("crash point", &next.path, e))?;

        // 6. The index: from here the transaction is in the log.
        let mut names = writer.index.clone();
        names.push(promoted_name.clone());
        names.push(next_name);
        index::store(storage, options, &names, crash)?;
        writer.index = names;
        crash.hit(crash_points::PROMOTE_AFTER_INDEX).map_err(|e| BinlogError::io("crash point", &next.path, e))?;

        // 7. Tidy up and count.
        // Both keep their in-use flags until their transactions are
        // committed in the engine (see in_flight.rs): the old file's last
        // groups may still be in their COMMIT stage, and this one's is ahead.
        inner.in_flight.closed(old_number, old_path.clone());
        inner.in_flight.closed(promoted_number, promoted_path.clone());
        self.clear_closed_files()?;
        storage.remove(&options.promotion_marker_path()).map_err(|e| BinlogError::io("remove", options.promotion_marker_path(), e))?;
        inner.counters.large_transaction_promotions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crash.hit(crash_points::PROMOTE_AFTER_COUNT).map_err(|e| BinlogError::io("crash point", &next.path, e))?;

        self.publish(old_number, old_end);
        let (number, position) = (next.number, next.position);
        writer.active = next;
        writer.dependency.rotate();
        // The promoted file is one complete, closed file.
        self.publish(promoted_number, body_end + rotate.len() as u64);
        self.publish(number, position);
        inner.counters.rotations.fetch_add(2, std::sync::atomic::Ordering::Relaxed);
        debug_assert!(EventType::from_code(sealed.terminating_event_type).is_some());
        Ok(Some(Promoted { file_name: promoted_name, transaction_length: length }))
    }
}
