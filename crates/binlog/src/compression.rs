//! `binlog_transaction_compression`: a committed row-based transaction
//! written as MySQL 8.0.20+ writes it, its Gtid event outside and every
//! other event (`BEGIN`, Table_maps, rows events, Xid) in one
//! Transaction_payload event (type 40), compressed with zstd.
//!
//! As in MySQL, only a transaction of row events compresses: DDL (one
//! Query), a transaction without rows (`BEGIN … COMMIT`) and one ending
//! otherwise are written as they are. The inner events carry no checksum
//! and `log_pos` 0; the payload event has the file's framing. Compression
//! runs in the committer's thread, before the transaction queues for the
//! FLUSH stage, so the log lock is never held for it. A transaction large
//! enough to be promoted by rename is not compressed: promotion renames the
//! spill file its events were written to, whatever their size, and
//! reading the body back to compress it would undo that.

use binlog_format::constants::{EventType, COMMON_HEADER_LENGTH, LOG_POS_OFFSET};
use binlog_format::events::TransactionPayloadEvent;
use binlog_format::frame::peek_event_size;
use binlog_format::header::EventHeader;
use binlog_format::RowsKind;

use crate::cache::{Shape, TransactionCache};
use crate::error::{BinlogError, Result};
use crate::reframe::reframe;

/// `binlog_transaction_compression_level_zstd`'s bounds and default.
pub const LEVEL_ZSTD_MIN: i32 = 1;
pub const LEVEL_ZSTD_MAX: i32 = 22;
pub const LEVEL_ZSTD_DEFAULT: i32 = 3;

/// What compressing one transaction gave: the payload event, framed as
/// the cache's events are, and the sizes the status counters add.
pub struct Compressed {
    pub event: Vec<u8>,
    /// Bytes of the transaction's events as they would have been written.
    pub uncompressed_bytes: u64,
    /// Bytes of the Transaction_payload event written instead.
    pub compressed_bytes: u64,
}

/// Whether `cache` is a transaction MySQL compresses: `BEGIN`, row
/// events, `Xid`, complete, and not one to promote.
fn compressible(cache: &TransactionCache, events: &[u8]) -> bool {
    if cache.shape() != Shape::Complete || cache.should_promote() || cache.terminating_event_type() != EventType::Xid as u8 {
        return false;
    }
    let mut at = 0;
    while at < events.len() {
        let size = peek_event_size(&events[at..]).expect("cached events are whole") as usize;
        if RowsKind::from_event_type(events[at + 4]).is_some() {
            return true;
        }
        at += size;
    }
    false
}

/// The Transaction_payload event holding `cache`'s events compressed at
/// `level`, or `None` when the transaction is not one to compress.
pub fn compress(cache: &TransactionCache, level: i32) -> Result<Option<Compressed>> {
    if cache.shape() != Shape::Complete || cache.should_promote() {
        return Ok(None);
    }
    let events = cache.encoded_events()?;
    if !compressible(cache, &events) {
        return Ok(None);
    }
    // Inside the payload: no checksum, log_pos 0 (the payload's own
    // log_pos places the transaction).
    let mut inner = Vec::with_capacity(events.len());
    reframe(&events, cache.checksum(), false, &mut inner);
    let mut at = 0;
    while at < inner.len() {
        let size = peek_event_size(&inner[at..]).expect("re-framed events are whole") as usize;
        inner[at + LOG_POS_OFFSET..at + LOG_POS_OFFSET + 4].copy_from_slice(&[0; 4]);
        at += size;
    }
    let payload = TransactionPayloadEvent::new(&inner, Some(level.clamp(LEVEL_ZSTD_MIN, LEVEL_ZSTD_MAX)))
        .map_err(|error| BinlogError::Invalid(format!("binlog_transaction_compression: {error}")))?;
    let mut body = Vec::with_capacity(payload.payload.len() + 32);
    payload.encode_body(&mut body);
    let header = EventHeader {
        timestamp: cache.timestamp,
        event_type: EventType::TransactionPayload as u8,
        server_id: cache.server_id(),
        event_size: 0,
        log_pos: 0,
        flags: 0,
    };
    let mut event = Vec::with_capacity(COMMON_HEADER_LENGTH + body.len() + 4);
    binlog_format::encode_event(header, &body, cache.checksum(), &mut event);
    Ok(Some(Compressed { uncompressed_bytes: events.len() as u64, compressed_bytes: event.len() as u64, event }))
}
