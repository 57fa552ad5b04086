//! Moving cached events between checksum algorithms. A transaction's
//! cache is framed with `binlog_checksum` as it was when the transaction
//! first wrote; `SET GLOBAL binlog_checksum` may have rotated the log to a
//! file of the other algorithm before it commits. The leader then copies
//! each event with its CRC32 footer dropped or added (and `event_size`
//! changed by 4), so every event in a file has the framing its
//! Format_description declares.

use binlog_format::checksum::CHECKSUM_LENGTH;
use binlog_format::constants::{COMMON_HEADER_LENGTH, EVENT_SIZE_OFFSET};
use binlog_format::frame::peek_event_size;

/// How many bytes `events` take once framed with `to_checksum`, when they
/// are `length` bytes in `event_count` events framed the other way.
pub fn reframed_length(length: u64, event_count: u64, from_checksum: bool, to_checksum: bool) -> u64 {
    let footer = CHECKSUM_LENGTH as u64 * event_count;
    match (from_checksum, to_checksum) {
        (true, false) => length - footer,
        (false, true) => length + footer,
        _ => length,
    }
}

/// Appends `events` (whole events framed with `from_checksum`) to `out`
/// framed with `to_checksum`. `log_pos` and the new footer are left for
/// the caller's `set_log_pos`, which recomputes the CRC32.
pub fn reframe(events: &[u8], from_checksum: bool, to_checksum: bool, out: &mut Vec<u8>) {
    if from_checksum == to_checksum {
        out.extend_from_slice(events);
        return;
    }
    let mut at = 0;
    while at < events.len() {
        let size = peek_event_size(&events[at..]).expect("cached events are whole") as usize;
        let event = &events[at..at + size];
        debug_assert!(size >= COMMON_HEADER_LENGTH + if from_checksum { CHECKSUM_LENGTH } else { 0 });
        let start = out.len();
        let new_size = if to_checksum {
            out.extend_from_slice(event);
            out.extend_from_slice(&[0; CHECKSUM_LENGTH]);
            size + CHECKSUM_LENGTH
        } else {
            out.extend_from_slice(&event[..size - CHECKSUM_LENGTH]);
            size - CHECKSUM_LENGTH
        };
        out[start + EVENT_SIZE_OFFSET..start + EVENT_SIZE_OFFSET + 4].copy_from_slice(&(new_size as u32).to_le_bytes());
        at += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog_format::events::{Event, QueryEvent, XidEvent};
    use binlog_format::file::{append_event, WriterIdentity};
    use binlog_format::frame::{set_log_pos, RawEvent};

    fn events(checksum: bool) -> Vec<u8> {
        let identity = WriterIdentity { server_id: 7, checksum };
        let mut out = Vec::new();
        let end = append_event(&mut out, 0, &Event::Query(QueryEvent::new(1, "shop", "BEGIN")), 100, 0, identity);
        append_event(&mut out, end, &Event::Xid(XidEvent { xid: 9 }), 100, 0, identity);
        out
    }

    /// Sets every event's log_pos as the leader does (from offset 0).
    fn settle(bytes: &mut [u8], checksum: bool) {
        let mut at = 0;
        while at < bytes.len() {
            let size = peek_event_size(&bytes[at..]).unwrap() as usize;
            set_log_pos(&mut bytes[at..at + size], (at + size) as u32, checksum);
            at += size;
        }
    }

    #[test]
    fn dropping_and_adding_the_footer_gives_what_the_other_algorithm_writes() {
        for from in [true, false] {
            let to = !from;
            let mut original = events(from);
            settle(&mut original, from);
            let mut reframed = Vec::new();
            reframe(&original, from, to, &mut reframed);
            settle(&mut reframed, to);
            assert_eq!(reframed, events(to), "from checksum {from}");
            assert_eq!(reframed.len() as u64, reframed_length(original.len() as u64, 2, from, to));
            let first = peek_event_size(&reframed).unwrap() as usize;
            RawEvent::parse(&reframed[..first], to).unwrap();
        }
    }
}
