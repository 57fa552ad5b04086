//! Gtid event (type 33) and Anonymous_gtid (34): opens each transaction and
//! carries the logical clock replicas schedule by. A tagged GTID's event
//! (type 42) holds the same fields in another layout: [`super::gtid_tagged`].

use crate::bytes::{packed_u64_len, ByteReader, ByteWriter};
use crate::constants::EventType;
use crate::error::DecodeError;
use crate::gtid_set::{Gtid, Uuid};

/// `gtid_flags` bit: the transaction may contain statement-based events.
pub const FLAG_MAY_HAVE_SBR: u8 = 1;
const LOGICAL_TIMESTAMP_TYPECODE: u8 = 2;
const ORIGINAL_COMMIT_TIMESTAMP_PRESENT: u64 = 1 << 55;
const ORIGINAL_SERVER_VERSION_PRESENT: u32 = 1 << 31;

/// | bytes | field |
/// |-------|-------|
/// | 1  | gtid_flags (bit 0: may have SBR) |
/// | 16 | source UUID |
/// | 8  | gno (i64) |
/// | 1  | logical timestamp typecode (= 2) |
/// | 8  | last_committed (i64) |
/// | 8  | sequence_number (i64) |
/// | 7  | immediate_commit_timestamp µs; bit 55 set when the original follows |
/// | 7  | original_commit_timestamp µs (only when bit 55 set) |
/// | 1-9| transaction_length, length-encoded integer |
/// | 4  | immediate_server_version; bit 31 set when the original follows |
/// | 4  | original_server_version (only when bit 31 set) |
/// | 8  | commit_group_ticket (optional, MySQL 8.0.27+ group replication) |
///
/// Older servers stop earlier ([`GtidLayout`]); an event keeps the layout
/// it was read with, so re-encoding it (a relay log copy, a dump) gives
/// back its own bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtidEvent {
    pub flags: u8,
    pub gtid: Gtid,
    pub last_committed: i64,
    pub sequence_number: i64,
    pub immediate_commit_timestamp_us: u64,
    /// `None` when equal to the immediate timestamp (not written then).
    pub original_commit_timestamp_us: Option<u64>,
    /// Bytes of the whole transaction, this event included.
    pub transaction_length: u64,
    pub immediate_server_version: u32,
    /// `None` when equal to the immediate version (not written then).
    pub original_server_version: Option<u32>,
    pub commit_group_ticket: Option<u64>,
    /// How far the type-33 body goes; the tagged layout (type 42) ignores it.
    pub layout: GtidLayout,
}

/// Where a type-33 (or Anonymous_gtid) body ends: each MySQL version
/// appended fields, and a reader stops where the body does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum GtidLayout {
    /// MySQL 5.6: flags, UUID and gno (25 bytes).
    Gno,
    /// MySQL 5.7: and the logical clock (42 bytes).
    LogicalClock,
    /// MySQL 8.0.1: and the commit timestamps.
    CommitTimestamps,
    /// MySQL 8.0.2: and transaction_length.
    TransactionLength,
    /// MySQL 8.0.14+: and the server versions (then the optional
    /// commit_group_ticket); what binlogd writes.
    #[default]
    ServerVersions,
}

impl GtidEvent {
    /// Byte length of the encoded body.
    pub fn body_length(&self) -> usize {
        if self.gtid.is_tagged() {
            return self.tagged_body_length();
        }
        let at_least = |layout: GtidLayout| self.layout >= layout;
        let mut length = 25;
        if at_least(GtidLayout::LogicalClock) {
            length += 17;
        }
        if at_least(GtidLayout::CommitTimestamps) {
            length += 7 + if self.original_commit_timestamp_us.is_some() { 7 } else { 0 };
        }
        if at_least(GtidLayout::TransactionLength) {
            length += packed_u64_len(self.transaction_length);
        }
        if at_least(GtidLayout::ServerVersions) {
            length +=
                4 + if self.original_server_version.is_some() { 4 } else { 0 } + if self.commit_group_ticket.is_some() { 8 } else { 0 };
        }
        length
    }

    /// The type-33 layout, or for a tagged GTID the type-42 one.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        if self.gtid.is_tagged() {
            return self.encode_tagged_body(out);
        }
        out.put_u8(self.flags);
        out.put_slice(&self.gtid.uuid.0);
        out.put_u64(self.gtid.gno);
        if self.layout == GtidLayout::Gno {
            return;
        }
        out.put_u8(LOGICAL_TIMESTAMP_TYPECODE);
        out.put_u64(self.last_committed as u64);
        out.put_u64(self.sequence_number as u64);
        if self.layout == GtidLayout::LogicalClock {
            return;
        }
        let immediate = self.immediate_commit_timestamp_us & (ORIGINAL_COMMIT_TIMESTAMP_PRESENT - 1);
        match self.original_commit_timestamp_us {
            Some(original) => {
                out.put_u56(immediate | ORIGINAL_COMMIT_TIMESTAMP_PRESENT);
                // All 56 bits, as MySQL's int7store writes it: only the
                // immediate timestamp's top bit is a flag.
                out.put_u56(original & ((1 << 56) - 1));
            }
            None => out.put_u56(immediate),
        }
        if self.layout == GtidLayout::CommitTimestamps {
            return;
        }
        out.put_packed_u64(self.transaction_length);
        if self.layout == GtidLayout::TransactionLength {
            return;
        }
        let immediate_version = self.immediate_server_version & !ORIGINAL_SERVER_VERSION_PRESENT;
        match self.original_server_version {
            Some(original) => {
                out.put_u32(immediate_version | ORIGINAL_SERVER_VERSION_PRESENT);
                out.put_u32(original);
            }
            None => out.put_u32(immediate_version),
        }
        if let Some(ticket) = self.commit_group_ticket {
            out.put_u64(ticket);
        }
    }

    /// True for the types whose event opens a transaction with a GTID:
    /// Gtid (33) and Gtid_tagged_log_event (42).
    pub fn is_gtid_type(event_type: u8) -> bool {
        event_type == EventType::Gtid as u8 || event_type == EventType::GtidTagged as u8
    }

    /// Decodes the body of a Gtid (33) or Gtid_tagged_log_event (42).
    pub fn decode_body_of_type(event_type: u8, body: &[u8]) -> Result<GtidEvent, DecodeError> {
        if event_type == EventType::GtidTagged as u8 {
            GtidEvent::decode_tagged_body(body)
        } else {
            GtidEvent::decode_body(body)
        }
    }

    /// Decodes a type-33 (or Anonymous_gtid) body.
    pub fn decode_body(body: &[u8]) -> Result<GtidEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let flags = reader.u8("gtid flags")?;
        let uuid = Uuid(reader.take(16, "gtid uuid")?.try_into().unwrap());
        let gno = reader.u64("gtid gno")?;
        let mut event = GtidEvent {
            flags,
            gtid: Gtid::new(uuid, gno),
            last_committed: 0,
            sequence_number: 0,
            immediate_commit_timestamp_us: 0,
            original_commit_timestamp_us: None,
            transaction_length: 0,
            immediate_server_version: 0,
            original_server_version: None,
            commit_group_ticket: None,
            layout: GtidLayout::Gno,
        };
        // Each later part is optional in older servers' events.
        if reader.is_empty() {
            return Ok(event);
        }
        let typecode = reader.u8("gtid logical timestamp typecode")?;
        if typecode != LOGICAL_TIMESTAMP_TYPECODE {
            return Err(DecodeError::invalid("gtid", format!("logical timestamp typecode {typecode}, expected 2")));
        }
        event.last_committed = reader.i64("gtid last_committed")?;
        event.sequence_number = reader.i64("gtid sequence_number")?;
        event.layout = GtidLayout::LogicalClock;
        if reader.is_empty() {
            return Ok(event);
        }
        let immediate = reader.u56("gtid immediate_commit_timestamp")?;
        event.immediate_commit_timestamp_us = immediate & (ORIGINAL_COMMIT_TIMESTAMP_PRESENT - 1);
        if immediate & ORIGINAL_COMMIT_TIMESTAMP_PRESENT != 0 {
            event.original_commit_timestamp_us = Some(reader.u56("gtid original_commit_timestamp")?);
        }
        event.layout = GtidLayout::CommitTimestamps;
        if reader.is_empty() {
            return Ok(event);
        }
        event.transaction_length = reader.packed_u64("gtid transaction_length")?;
        event.layout = GtidLayout::TransactionLength;
        if reader.is_empty() {
            return Ok(event);
        }
        let immediate_version = reader.u32("gtid immediate_server_version")?;
        event.immediate_server_version = immediate_version & !ORIGINAL_SERVER_VERSION_PRESENT;
        if immediate_version & ORIGINAL_SERVER_VERSION_PRESENT != 0 {
            event.original_server_version = Some(reader.u32("gtid original_server_version")?);
        }
        event.layout = GtidLayout::ServerVersions;
        if !reader.is_empty() {
            event.commit_group_ticket = Some(reader.u64("gtid commit_group_ticket")?);
        }
        reader.finish("gtid body")?;
        Ok(event)
    }

    /// Sets `transaction_length` for a transaction whose events after this
    /// Gtid event take `rest_bytes`. The length counts the Gtid event
    /// itself, whose size depends on the length's packed encoding, so the
    /// value is iterated until it settles. Returns the length.
    pub fn settle_transaction_length(&mut self, rest_bytes: u64, checksum: bool) -> u64 {
        let framing = (crate::constants::COMMON_HEADER_LENGTH + if checksum { 4 } else { 0 }) as u64;
        loop {
            let length = rest_bytes + framing + self.body_length() as u64;
            if length == self.transaction_length {
                return length;
            }
            self.transaction_length = length;
        }
    }

    /// Gtid (33), or Gtid_tagged_log_event (42) when the GTID has a tag.
    pub fn event_type(&self) -> u8 {
        if self.gtid.is_tagged() {
            EventType::GtidTagged as u8
        } else {
            EventType::Gtid as u8
        }
    }

    /// The commit timestamp on the originating server.
    pub fn original_commit_timestamp(&self) -> u64 {
        self.original_commit_timestamp_us.unwrap_or(self.immediate_commit_timestamp_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A MySQL 8.0.14+ event with every optional part.
    fn full() -> GtidEvent {
        GtidEvent {
            flags: 1,
            gtid: Gtid::new(Uuid([0x5a; 16]), 77),
            last_committed: 3,
            sequence_number: 4,
            immediate_commit_timestamp_us: 1_700_000_000_000_000,
            original_commit_timestamp_us: Some(1_600_000_000_000_000),
            transaction_length: 900,
            immediate_server_version: 80036,
            original_server_version: Some(50744),
            commit_group_ticket: None,
            layout: GtidLayout::ServerVersions,
        }
    }

    #[test]
    fn every_servers_layout_reencodes_to_its_own_bytes() {
        let mut full_body = Vec::new();
        full().encode_body(&mut full_body);
        // 5.6 stops after gno, 5.7 after the logical clock, 8.0.1 after the
        // timestamps (7 + 7), 8.0.2 after transaction_length (3 packed bytes).
        for (layout, length) in [
            (GtidLayout::Gno, 25),
            (GtidLayout::LogicalClock, 42),
            (GtidLayout::CommitTimestamps, 56),
            (GtidLayout::TransactionLength, 59),
            (GtidLayout::ServerVersions, 67),
        ] {
            let body = &full_body[..length];
            let decoded = GtidEvent::decode_body(body).unwrap();
            assert_eq!(decoded.layout, layout, "a {length}-byte body");
            assert_eq!(decoded.body_length(), length, "{layout:?}");
            let mut again = Vec::new();
            decoded.encode_body(&mut again);
            assert_eq!(again, body, "{layout:?} keeps its own layout");
            assert_eq!(decoded.gtid, full().gtid);
        }
        assert_eq!(GtidEvent::decode_body(&full_body).unwrap(), full());
    }

    #[test]
    fn the_original_commit_timestamp_keeps_all_its_56_bits() {
        let event = GtidEvent { original_commit_timestamp_us: Some((1 << 55) | 12345), ..full() };
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(GtidEvent::decode_body(&body).unwrap(), event);
    }

    #[test]
    fn a_mysql_56_event_has_no_logical_clock_or_timestamps() {
        let mut body = vec![0u8];
        body.extend_from_slice(&[0x11; 16]);
        body.extend_from_slice(&5u64.to_le_bytes());
        let event = GtidEvent::decode_body(&body).unwrap();
        assert_eq!((event.layout, event.last_committed, event.immediate_commit_timestamp_us), (GtidLayout::Gno, 0, 0));
        assert_eq!(event.gtid.gno, 5);
        let mut again = Vec::new();
        event.encode_body(&mut again);
        assert_eq!(again, body);
    }
}
