//! The replication commands a replica or CDC reader sends:
//! COM_REGISTER_SLAVE, COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID, parsed into
//! owned structs, and [`BinlogStream`], the writer a dump streams events
//! through until the reader goes away.
//!
//! COM_BINLOG_DUMP_GTID's SID block is parsed here rather than by
//! mysql_common, whose decoder sizes its vectors from the counts in the
//! packet: a hostile count would be an allocation the server cannot survive.
//! Counts are checked against the bytes actually present.

use std::fmt;
use std::time::Duration;

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::misc::read_varlen_uint;
use mysql_common::packets::{ComBinlogDump, ComRegisterSlave};

use crate::errors::{MysqlError, ProtocolError};
use crate::packet::PacketStream;
use crate::registry::ConnectionHandle;
use crate::response::{encode_eof, encode_err};

/// COM_REGISTER_SLAVE: a replica announcing itself (SHOW REPLICAS lists it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterReplica {
    pub server_id: u32,
    /// `report_host` of the replica; usually empty.
    pub host: String,
    pub user: String,
    pub password: String,
    pub port: u16,
    pub replication_rank: u32,
    /// "Master_id" in SHOW SLAVE HOSTS; usually 0.
    pub source_id: u32,
}

/// Flags of the dump commands (`BINLOG_DUMP_NON_BLOCK` etc.).
pub const BINLOG_DUMP_NON_BLOCK: u16 = 0x01;
pub const BINLOG_THROUGH_POSITION: u16 = 0x02;
pub const BINLOG_THROUGH_GTID: u16 = 0x04;

/// COM_BINLOG_DUMP: stream from a file and position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinlogDumpRequest {
    pub server_id: u32,
    /// Empty means "the first file the server has".
    pub file_name: String,
    pub position: u32,
    pub flags: u16,
}

impl BinlogDumpRequest {
    /// With BINLOG_DUMP_NON_BLOCK the dump ends with an EOF packet at the end
    /// of the log instead of waiting for new events.
    pub fn is_non_blocking(&self) -> bool {
        self.flags & BINLOG_DUMP_NON_BLOCK != 0
    }
}

/// One GNO interval of a GTID set: `start..end`, end exclusive, as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GnoInterval {
    pub start: u64,
    pub end_exclusive: u64,
}

/// The GNO intervals of one source UUID (and tag, MySQL 8.4's tagged GTIDs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtidSetEntry {
    pub uuid: [u8; 16],
    pub tag: Option<String>,
    pub intervals: Vec<GnoInterval>,
}

/// COM_BINLOG_DUMP_GTID: stream every transaction not in `gtid_set`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinlogDumpGtidRequest {
    pub server_id: u32,
    pub flags: u16,
    pub file_name: String,
    pub position: u64,
    /// The replica's executed GTID set (its SID-block encoding, decoded).
    pub gtid_set: Vec<GtidSetEntry>,
}

impl BinlogDumpGtidRequest {
    pub fn is_non_blocking(&self) -> bool {
        self.flags & BINLOG_DUMP_NON_BLOCK != 0
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The binlog file name of either dump command. It ends at the first NUL:
/// python-mysql-replication sends three NUL bytes for "no file" under
/// auto-positioning, which MySQL reads as a C string, i.e. empty.
fn dump_file_name(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&byte| byte == 0).unwrap_or(bytes.len());
    lossy(&bytes[..end])
}

/// Parses a COM_REGISTER_SLAVE packet (command byte included).
pub fn parse_register_replica(packet: &[u8]) -> Result<RegisterReplica, ProtocolError> {
    let parsed: ComRegisterSlave<'_> =
        ParseBuf(packet).parse(()).map_err(|e| ProtocolError::malformed("COM_REGISTER_SLAVE", e.to_string()))?;
    Ok(RegisterReplica {
        server_id: parsed.server_id(),
        host: lossy(parsed.hostname_raw()),
        user: lossy(parsed.user_raw()),
        password: lossy(parsed.password_raw()),
        port: parsed.port(),
        replication_rank: parsed.replication_rank(),
        source_id: parsed.master_id(),
    })
}

/// Parses a COM_BINLOG_DUMP packet (command byte included).
pub fn parse_binlog_dump(packet: &[u8]) -> Result<BinlogDumpRequest, ProtocolError> {
    let parsed: ComBinlogDump<'_> = ParseBuf(packet).parse(()).map_err(|e| ProtocolError::malformed("COM_BINLOG_DUMP", e.to_string()))?;
    Ok(BinlogDumpRequest {
        server_id: parsed.server_id(),
        file_name: dump_file_name(parsed.filename_raw()),
        position: parsed.pos(),
        flags: parsed.flags().bits(),
    })
}

fn gtid_malformed(detail: &str) -> ProtocolError {
    ProtocolError::malformed("COM_BINLOG_DUMP_GTID", detail)
}

/// Parses a COM_BINLOG_DUMP_GTID packet (command byte included):
/// flags u16, server_id u32, name length u32, name, position u64, then
/// SID-block length u32 and the SID block.
pub fn parse_binlog_dump_gtid(packet: &[u8]) -> Result<BinlogDumpGtidRequest, ProtocolError> {
    let mut buf = ParseBuf(packet.get(1..).ok_or_else(|| gtid_malformed("empty"))?);
    let flags = buf.checked_eat_u16_le().ok_or_else(|| gtid_malformed("flags"))?;
    let server_id = buf.checked_eat_u32_le().ok_or_else(|| gtid_malformed("server id"))?;
    let file_name = buf.checked_eat_u32_str().ok_or_else(|| gtid_malformed("file name"))?;
    let position = buf.checked_eat_u64_le().ok_or_else(|| gtid_malformed("position"))?;
    // The SID block is present when BINLOG_THROUGH_GTID is set; tolerate it
    // missing otherwise.
    let gtid_set = match buf.checked_eat_u32_le() {
        Some(length) => {
            let block = buf.checked_eat(length as usize).ok_or_else(|| gtid_malformed("SID block length"))?;
            parse_sid_block(block)?
        }
        None if flags & BINLOG_THROUGH_GTID == 0 => Vec::new(),
        None => return Err(gtid_malformed("SID block missing")),
    };
    Ok(BinlogDumpGtidRequest { server_id, flags, file_name: dump_file_name(file_name), position, gtid_set })
}

/// Smallest encoding of one SID entry (UUID and interval count): bounds the
/// entry count by the bytes present.
const SID_ENTRY_BYTES_MIN: usize = 16 + 8;
const INTERVAL_BYTES: usize = 16;

/// Decodes MySQL's binary GTID-set encoding: n_sids u64 (its top byte is the
/// format: 0 plain, 1 tagged with the count in bits 8..56), then per SID the
/// UUID, [tag length varlen, tag], n_intervals u64 and (start, end) u64
/// pairs.
pub fn parse_sid_block(block: &[u8]) -> Result<Vec<GtidSetEntry>, ProtocolError> {
    let mut buf = ParseBuf(block);
    if buf.is_empty() {
        return Ok(Vec::new());
    }
    let header = buf.checked_eat_u64_le().ok_or_else(|| gtid_malformed("SID count"))?;
    let tagged = match header >> 56 {
        0 => false,
        1 => true,
        format => return Err(gtid_malformed(&format!("GTID set format {format}"))),
    };
    let count = if tagged { (header & 0x00FF_FFFF_FFFF_FF00) >> 8 } else { header & 0x00FF_FFFF_FFFF_FFFF };
    if count > (buf.len() / SID_ENTRY_BYTES_MIN) as u64 {
        return Err(gtid_malformed("SID count exceeds the block"));
    }
    let mut entries = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let uuid: [u8; 16] = buf.checked_eat(16).ok_or_else(|| gtid_malformed("UUID"))?.try_into().expect("16 bytes");
        let tag = if tagged {
            let length = read_varlen_uint(&mut buf).map_err(|_| gtid_malformed("tag length"))?;
            let bytes = buf.checked_eat(length as usize).ok_or_else(|| gtid_malformed("tag"))?;
            let tag = std::str::from_utf8(bytes).map_err(|_| gtid_malformed("tag is not UTF-8"))?;
            (!tag.is_empty()).then(|| tag.to_owned())
        } else {
            None
        };
        let interval_count = buf.checked_eat_u64_le().ok_or_else(|| gtid_malformed("interval count"))?;
        if interval_count > (buf.len() / INTERVAL_BYTES) as u64 {
            return Err(gtid_malformed("interval count exceeds the block"));
        }
        let mut intervals = Vec::with_capacity(interval_count as usize);
        for _ in 0..interval_count {
            let start = buf.eat_u64_le();
            let end_exclusive = buf.eat_u64_le();
            if start == 0 || start >= end_exclusive {
                return Err(gtid_malformed("empty or zero GNO interval"));
            }
            intervals.push(GnoInterval { start, end_exclusive });
        }
        entries.push(GtidSetEntry { uuid, tag, intervals });
    }
    if !buf.is_empty() {
        return Err(gtid_malformed("trailing bytes after the SID block"));
    }
    Ok(entries)
}

impl fmt::Display for GtidSetEntry {
    /// `3e11fa47-71ca-11e1-9e33-c80aa9429562[:tag]:1-5:7`, as MySQL prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, byte) in self.uuid.iter().enumerate() {
            if matches!(index, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        for interval in &self.intervals {
            if interval.end_exclusive == interval.start + 1 {
                write!(f, ":{}", interval.start)?;
            } else {
                write!(f, ":{}-{}", interval.start, interval.end_exclusive - 1)?;
            }
        }
        Ok(())
    }
}

/// The connection's writer, handed to a binlog dump. Each event goes out as
/// one packet `0x00 + event bytes` (split above 16 MiB like any packet);
/// heartbeats are events too. Writes are buffered: call [`BinlogStream::flush`]
/// when caught up with the log (before waiting for new events).
pub struct BinlogStream<'a> {
    stream: &'a mut PacketStream,
    handle: &'a ConnectionHandle,
    capabilities: CapabilityFlags,
    events_sent: u64,
    bytes_sent: u64,
}

impl<'a> BinlogStream<'a> {
    pub(crate) fn new(stream: &'a mut PacketStream, handle: &'a ConnectionHandle, capabilities: CapabilityFlags) -> Self {
        BinlogStream { stream, handle, capabilities, events_sent: 0, bytes_sent: 0 }
    }

    /// Buffers one event (common header included, checksum included when the
    /// reader negotiated one).
    pub fn send_event(&mut self, event: &[u8]) -> Result<(), ProtocolError> {
        self.stream.write_marked_packet(0x00, event)?;
        self.events_sent += 1;
        self.bytes_sent += event.len() as u64 + 1;
        Ok(())
    }

    /// Buffers one event behind the semi-synchronous header: the packet is
    /// `0x00 0xEF flags` + event bytes (see the source crate's
    /// `semi_sync/packet.rs`). After an event that asks for an ack
    /// (`flags` 0x01) the numbering restarts at 1, the ack having taken 0,
    /// as MySQL's and MariaDB's sources do and their replicas expect.
    pub fn send_semi_sync_event(&mut self, flags: u8, event: &[u8]) -> Result<(), ProtocolError> {
        self.stream.write_packet_parts(&[0x00, 0xEF, flags], event)?;
        if flags & 0x01 != 0 {
            self.stream.restart_sequence_at(1);
        }
        self.events_sent += 1;
        self.bytes_sent += event.len() as u64 + 3;
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), ProtocolError> {
        self.stream.flush()
    }

    /// The connection's socket, for a thread reading what the reader sends
    /// during the dump (a semi-synchronous replica's acknowledgements).
    pub fn try_clone_socket(&self) -> std::io::Result<std::net::TcpStream> {
        self.stream.socket().try_clone()
    }

    /// A larger write buffer for this connection (bounded by the caller):
    /// fewer, larger socket writes while streaming the log.
    pub fn set_buffer_bytes(&mut self, bytes: usize) -> Result<(), ProtocolError> {
        self.stream.set_write_buffer_bytes(bytes)
    }

    /// Ends a non-blocking dump at the end of the log. Dumps always use the
    /// classic EOF packet, even under CLIENT_DEPRECATE_EOF (as MySQL does).
    pub fn send_eof(&mut self) -> Result<(), ProtocolError> {
        self.stream.write_packet(&encode_eof(0, StatusFlags::empty()))?;
        self.stream.flush()
    }

    /// Ends the dump with an error (e.g. 1236 for a purged position).
    pub fn send_error(&mut self, error: &MysqlError) -> Result<(), ProtocolError> {
        self.stream.write_packet(&encode_err(error, self.capabilities))?;
        self.stream.flush()
    }

    /// True once the connection was killed or the server is shutting down:
    /// the dump should return.
    pub fn is_killed(&self) -> bool {
        self.handle.is_killed()
    }

    /// True when the reader closed its side; checked without blocking.
    pub fn peer_closed(&mut self) -> bool {
        self.stream.peer_closed()
    }

    /// A reader that stops reading blocks our writes; after this long the
    /// write fails and the dump ends (MySQL's `net_write_timeout`).
    pub fn set_write_timeout(&mut self, timeout: Duration) -> Result<(), ProtocolError> {
        self.stream.set_write_timeout(timeout)?;
        Ok(())
    }

    pub fn handle(&self) -> &ConnectionHandle {
        self.handle
    }

    pub fn events_sent(&self) -> u64 {
        self.events_sent
    }

    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::packets::{ComBinlogDumpGtid, GnoInterval as MGnoInterval, Sid, Tag};
    use mysql_common::proto::MySerialize;

    #[test]
    fn gtid_dump_round_trips_through_mysql_commons_encoder() {
        let uuid = [0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62];
        let sid = Sid::new(uuid).with_interval(MGnoInterval::new(1, 6)).with_interval(MGnoInterval::new(7, 8));
        let request = ComBinlogDumpGtid::new(42).with_filename(&b"binlog.000003"[..]).with_pos(4).with_sid(sid);
        let mut bytes = Vec::new();
        request.serialize(&mut bytes);
        let parsed = parse_binlog_dump_gtid(&bytes).unwrap();
        assert_eq!(parsed.server_id, 42);
        assert_eq!(parsed.file_name, "binlog.000003");
        assert_eq!(parsed.position, 4);
        assert_eq!(parsed.flags & BINLOG_THROUGH_GTID, BINLOG_THROUGH_GTID);
        assert_eq!(parsed.gtid_set.len(), 1);
        assert_eq!(parsed.gtid_set[0].to_string(), "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7");

        let tagged = Sid::new(uuid).with_tag(Tag::new("batch").unwrap()).with_interval(MGnoInterval::new(3, 4));
        let request = ComBinlogDumpGtid::new(1).with_sid(tagged);
        let mut bytes = Vec::new();
        request.serialize(&mut bytes);
        let parsed = parse_binlog_dump_gtid(&bytes).unwrap();
        assert_eq!(parsed.gtid_set[0].tag.as_deref(), Some("batch"));
        assert_eq!(parsed.gtid_set[0].to_string(), "3e11fa47-71ca-11e1-9e33-c80aa9429562:batch:3");
    }

    #[test]
    fn hostile_counts_are_refused_without_allocating() {
        let mut block = (u64::MAX >> 8).to_le_bytes().to_vec();
        block.extend_from_slice(&[0; 24]);
        assert!(parse_sid_block(&block).is_err());
        let mut block = 1u64.to_le_bytes().to_vec();
        block.extend_from_slice(&[0; 16]);
        block.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_sid_block(&block).is_err());
    }

    #[test]
    fn position_dump_and_register_parse() {
        let dump = ComBinlogDump::new(7).with_pos(1234).with_filename(&b"binlog.000001"[..]);
        let mut bytes = Vec::new();
        dump.serialize(&mut bytes);
        let parsed = parse_binlog_dump(&bytes).unwrap();
        assert_eq!((parsed.server_id, parsed.position, parsed.file_name.as_str()), (7, 1234, "binlog.000001"));
        let register = ComRegisterSlave::new(9).with_hostname(&b"replica1"[..]).with_port(3307);
        let mut bytes = Vec::new();
        register.serialize(&mut bytes);
        let parsed = parse_register_replica(&bytes).unwrap();
        assert_eq!((parsed.server_id, parsed.host.as_str(), parsed.port), (9, "replica1", 3307));
        assert!(parse_binlog_dump(&bytes[..5]).is_err());
        // python-mysql-replication's auto-position request: name "\0\0\0".
        let mut gtid = vec![0x1e, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0];
        gtid.extend_from_slice(&4u64.to_le_bytes());
        gtid.extend_from_slice(&0u32.to_le_bytes());
        assert_eq!(parse_binlog_dump_gtid(&gtid).unwrap().file_name, "");
    }
}
