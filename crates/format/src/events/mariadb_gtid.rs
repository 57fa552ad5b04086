//! MariaDB's GTID event (type 162): opens every event group a MariaDB
//! 10.x source writes, in place of MySQL's Gtid + Query `BEGIN`. The GTID
//! is `domain_id-server_id-seq_no`; the server id is the common header's.
//! MariaDB's group commit id travels here too: groups with the same id
//! committed together on the source and may be applied in parallel.

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

/// `flags2` bits (MariaDB `Gtid_log_event::FL_*`).
pub mod gtid_flags {
    /// The group is one statement without a terminating COMMIT or Xid (DDL).
    pub const FL_STANDALONE: u8 = 1;
    /// A commit id follows the flags.
    pub const FL_GROUP_COMMIT_ID: u8 = 2;
    /// Every change of the group can be rolled back (no MyISAM and the like).
    pub const FL_TRANSACTIONAL: u8 = 4;
    /// The source allows the group to run in parallel with others.
    pub const FL_ALLOW_PARALLEL: u8 = 8;
    /// The group waited for a row lock on the source (a conflict hint).
    pub const FL_WAITED: u8 = 16;
    /// The group is DDL.
    pub const FL_DDL: u8 = 32;
    /// XA PREPARE group; the XID follows.
    pub const FL_PREPARED_XA: u8 = 64;
    /// XA COMMIT or ROLLBACK group; the XID follows.
    pub const FL_COMPLETED_XA: u8 = 128;
}

/// `flags_extra` bits (MariaDB 10.5+; `FL_EXTRA_MULTI_ENGINE_E1` and friends).
pub mod gtid_flags_extra {
    /// An engine count byte follows.
    pub const FL_EXTRA_MULTI_ENGINE: u8 = 1;
    pub const FL_START_ALTER: u8 = 2;
    /// The START ALTER's seq_no follows (8 bytes).
    pub const FL_COMMIT_ALTER: u8 = 4;
    /// The START ALTER's seq_no follows (8 bytes).
    pub const FL_ROLLBACK_ALTER: u8 = 8;
}

use gtid_flags::*;
use gtid_flags_extra::*;

/// The post-header: seq_no, domain_id, flags2 and 6 bytes of commit id
/// room (the commit id takes 8 and then overflows the post-header by 2).
pub const MARIADB_GTID_POST_HEADER_LENGTH: u8 = 19;
const COMMIT_ID_ROOM_BYTES: usize = 6;

/// A MariaDB GTID as MariaDB prints it: `domain-server-seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MariadbGtid {
    pub domain_id: u32,
    pub server_id: u32,
    pub seq_no: u64,
}

impl std::fmt::Display for MariadbGtid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-{}", self.domain_id, self.server_id, self.seq_no)
    }
}

impl std::str::FromStr for MariadbGtid {
    type Err = String;

    /// `domain-server-seq`, as `@@gtid_current_pos` lists them.
    fn from_str(text: &str) -> Result<MariadbGtid, String> {
        let mut parts = text.trim().splitn(3, '-');
        let mut next = |what: &str| parts.next().ok_or_else(|| format!("{text:?} lacks the {what}"));
        let domain = next("domain id")?;
        let server = next("server id")?;
        let seq = next("sequence number")?;
        Ok(MariadbGtid {
            domain_id: domain.parse().map_err(|_| format!("bad domain id in {text:?}"))?,
            server_id: server.parse().map_err(|_| format!("bad server id in {text:?}"))?,
            seq_no: seq.parse().map_err(|_| format!("bad sequence number in {text:?}"))?,
        })
    }
}

/// The XID of an XA group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XaXid {
    pub format_id: u32,
    pub gtrid: Vec<u8>,
    pub bqual: Vec<u8>,
}

/// | bytes | field |
/// |-------|-------|
/// | 8 | seq_no |
/// | 4 | domain_id |
/// | 1 | flags2 ([`gtid_flags`]) |
/// | 8 or 6 | commit_id with `FL_GROUP_COMMIT_ID`, else 6 zero bytes |
/// | 4 + 1 + 1 + n | XA only: formatID, gtrid length, bqual length, gtrid and bqual |
/// | 1 | flags_extra ([`gtid_flags_extra`]; 10.5+, only when not 0) |
/// | 1 | extra engine count (`FL_EXTRA_MULTI_ENGINE`) |
/// | 8 | START ALTER's seq_no (`FL_COMMIT_ALTER` / `FL_ROLLBACK_ALTER`) |
/// | rest | zero padding or fields of later versions, kept as they are |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MariadbGtidEvent {
    pub seq_no: u64,
    pub domain_id: u32,
    pub flags2: u8,
    /// Present exactly when `flags2` has `FL_GROUP_COMMIT_ID`.
    pub commit_id: Option<u64>,
    /// Present exactly when `flags2` has `FL_PREPARED_XA` or `FL_COMPLETED_XA`.
    pub xid: Option<XaXid>,
    pub flags_extra: Option<u8>,
    pub extra_engines: Option<u8>,
    pub start_alter_seq_no: Option<u64>,
    /// Bytes after the known fields (MariaDB's readers skip them).
    pub trailing: Vec<u8>,
}

impl MariadbGtidEvent {
    /// A group as MariaDB 10.11 logs a transaction (`standalone`: a DDL).
    pub fn new(domain_id: u32, seq_no: u64, flags2: u8, commit_id: Option<u64>) -> MariadbGtidEvent {
        let flags2 = if commit_id.is_some() { flags2 | FL_GROUP_COMMIT_ID } else { flags2 & !FL_GROUP_COMMIT_ID };
        MariadbGtidEvent {
            seq_no,
            domain_id,
            flags2: flags2 & !(FL_PREPARED_XA | FL_COMPLETED_XA),
            commit_id,
            xid: None,
            flags_extra: None,
            extra_engines: None,
            start_alter_seq_no: None,
            trailing: Vec::new(),
        }
    }

    /// The GTID, with the server id of the event's header.
    pub fn gtid(&self, server_id: u32) -> MariadbGtid {
        MariadbGtid { domain_id: self.domain_id, server_id, seq_no: self.seq_no }
    }

    /// One statement, no COMMIT or Xid after it.
    pub fn is_standalone(&self) -> bool {
        self.flags2 & FL_STANDALONE != 0
    }

    pub fn is_ddl(&self) -> bool {
        self.flags2 & FL_DDL != 0
    }

    pub fn is_transactional(&self) -> bool {
        self.flags2 & FL_TRANSACTIONAL != 0
    }

    pub fn allows_parallel(&self) -> bool {
        self.flags2 & FL_ALLOW_PARALLEL != 0
    }

    /// An XA PREPARE group: it ends with its `XA PREPARE` Query.
    pub fn is_prepared_xa(&self) -> bool {
        self.flags2 & FL_PREPARED_XA != 0
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        assert_eq!(self.commit_id.is_some(), self.flags2 & FL_GROUP_COMMIT_ID != 0, "commit id and FL_GROUP_COMMIT_ID disagree");
        assert_eq!(self.xid.is_some(), self.flags2 & (FL_PREPARED_XA | FL_COMPLETED_XA) != 0, "XID and the XA flags disagree");
        out.put_u64(self.seq_no);
        out.put_u32(self.domain_id);
        out.put_u8(self.flags2);
        match self.commit_id {
            Some(commit_id) => out.put_u64(commit_id),
            None => out.put_slice(&[0; COMMIT_ID_ROOM_BYTES]),
        }
        if let Some(xid) = &self.xid {
            out.put_u32(xid.format_id);
            out.put_u8(xid.gtrid.len() as u8);
            out.put_u8(xid.bqual.len() as u8);
            out.put_slice(&xid.gtrid);
            out.put_slice(&xid.bqual);
        }
        if let Some(flags_extra) = self.flags_extra {
            out.put_u8(flags_extra);
            if let Some(engines) = self.extra_engines {
                out.put_u8(engines);
            }
            if let Some(seq_no) = self.start_alter_seq_no {
                out.put_u64(seq_no);
            }
        }
        out.put_slice(&self.trailing);
    }

    pub fn decode_body(body: &[u8]) -> Result<MariadbGtidEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let seq_no = reader.u64("MariaDB GTID seq_no")?;
        let domain_id = reader.u32("MariaDB GTID domain_id")?;
        let flags2 = reader.u8("MariaDB GTID flags2")?;
        let commit_id = if flags2 & FL_GROUP_COMMIT_ID != 0 {
            Some(reader.u64("MariaDB GTID commit_id")?)
        } else {
            if reader.take(COMMIT_ID_ROOM_BYTES, "MariaDB GTID padding")?.iter().any(|&b| b != 0) {
                return Err(DecodeError::invalid("MariaDB GTID", "padding after flags2 is not zero"));
            }
            None
        };
        let xid = if flags2 & (FL_PREPARED_XA | FL_COMPLETED_XA) != 0 {
            let format_id = reader.u32("MariaDB GTID XA formatID")?;
            let gtrid_length = reader.u8("MariaDB GTID XA gtrid length")? as usize;
            let bqual_length = reader.u8("MariaDB GTID XA bqual length")? as usize;
            let gtrid = reader.take(gtrid_length, "MariaDB GTID XA gtrid")?.to_vec();
            let bqual = reader.take(bqual_length, "MariaDB GTID XA bqual")?.to_vec();
            Some(XaXid { format_id, gtrid, bqual })
        } else {
            None
        };
        let mut event = MariadbGtidEvent {
            seq_no,
            domain_id,
            flags2,
            commit_id,
            xid,
            flags_extra: None,
            extra_engines: None,
            start_alter_seq_no: None,
            trailing: Vec::new(),
        };
        // Servers before 10.5 end here or pad with zeros; a zero flags_extra
        // is padding too (MariaDB writes the byte only when it is not 0).
        match body.get(reader.position()) {
            Some(&flags_extra) if flags_extra != 0 => {
                reader.u8("MariaDB GTID flags_extra")?;
                event.flags_extra = Some(flags_extra);
                if flags_extra & FL_EXTRA_MULTI_ENGINE != 0 {
                    event.extra_engines = Some(reader.u8("MariaDB GTID extra engines")?);
                }
                if flags_extra & (FL_COMMIT_ALTER | FL_ROLLBACK_ALTER) != 0 {
                    event.start_alter_seq_no = Some(reader.u64("MariaDB GTID start alter seq_no")?);
                }
            }
            _ => {}
        }
        event.trailing = reader.rest().to_vec();
        Ok(event)
    }
}

/// Gtid_list (type 163): the binlog state (last GTID per domain and
/// server) when the file began; also sent by a source at the start of a
/// dump.
///
/// | bytes | field |
/// |-------|-------|
/// | 4 | count (low 28 bits) and flags (top 4 bits) |
/// | 16 × count | domain_id u32, server_id u32, seq_no u64 |
/// | rest | MariaDB 10.11 writes 2 zero bytes after an empty list |
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GtidListEvent {
    /// The top 4 bits of the count field (`FLAG_UNTIL_REACHED`, `FLAG_IGN_GTIDS`).
    pub flags: u8,
    pub gtids: Vec<MariadbGtid>,
    /// Bytes after the entries (readers ignore them), kept as they are.
    pub trailing: Vec<u8>,
}

const GTID_LIST_COUNT_MASK: u32 = (1 << 28) - 1;
const GTID_LIST_ENTRY_BYTES: usize = 16;

impl GtidListEvent {
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        assert!(self.gtids.len() as u64 <= GTID_LIST_COUNT_MASK as u64, "Gtid_list of {} entries", self.gtids.len());
        assert!(self.flags < 16, "Gtid_list flags {} do not fit 4 bits", self.flags);
        out.put_u32(self.gtids.len() as u32 | (self.flags as u32) << 28);
        for gtid in &self.gtids {
            out.put_u32(gtid.domain_id);
            out.put_u32(gtid.server_id);
            out.put_u64(gtid.seq_no);
        }
        out.put_slice(&self.trailing);
    }

    pub fn decode_body(body: &[u8]) -> Result<GtidListEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let field = reader.u32("Gtid_list count")?;
        let count = (field & GTID_LIST_COUNT_MASK) as usize;
        if count > reader.remaining() / GTID_LIST_ENTRY_BYTES {
            return Err(DecodeError::Truncated {
                what: "Gtid_list entries",
                needed: count.saturating_mul(GTID_LIST_ENTRY_BYTES),
                available: reader.remaining(),
            });
        }
        let mut gtids = Vec::with_capacity(count);
        for _ in 0..count {
            let domain_id = reader.u32("Gtid_list domain_id")?;
            let server_id = reader.u32("Gtid_list server_id")?;
            let seq_no = reader.u64("Gtid_list seq_no")?;
            gtids.push(MariadbGtid { domain_id, server_id, seq_no });
        }
        Ok(GtidListEvent { flags: (field >> 28) as u8, gtids, trailing: reader.rest().to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_from_a_mariadb_10_11_binlog_round_trip() {
        // GTID 0-1-1 of a CREATE DATABASE: standalone, allow parallel, DDL.
        let ddl = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x29, 0, 0, 0, 0, 0, 0];
        let event = MariadbGtidEvent::decode_body(&ddl).unwrap();
        assert_eq!(event.gtid(1).to_string(), "0-1-1");
        assert!(event.is_standalone() && event.is_ddl() && event.commit_id.is_none());
        let mut again = Vec::new();
        event.encode_body(&mut again);
        assert_eq!(again, ddl);

        // A transaction of a group commit: commit id 0x1234 (21 bytes).
        let grouped = MariadbGtidEvent::new(7, 42, FL_TRANSACTIONAL | FL_ALLOW_PARALLEL, Some(0x1234));
        let mut body = Vec::new();
        grouped.encode_body(&mut body);
        assert_eq!(body.len(), 21);
        assert_eq!(MariadbGtidEvent::decode_body(&body).unwrap(), grouped);

        // 10.5+ extras and an XA XID survive; non-zero padding does not parse.
        let mut xa = MariadbGtidEvent::new(0, 9, FL_TRANSACTIONAL | FL_COMPLETED_XA, None);
        xa.flags2 |= FL_COMPLETED_XA;
        xa.xid = Some(XaXid { format_id: 1, gtrid: b"g".to_vec(), bqual: b"bq".to_vec() });
        xa.flags_extra = Some(FL_EXTRA_MULTI_ENGINE | FL_COMMIT_ALTER);
        xa.extra_engines = Some(1);
        xa.start_alter_seq_no = Some(8);
        let mut body = Vec::new();
        xa.encode_body(&mut body);
        assert_eq!(MariadbGtidEvent::decode_body(&body).unwrap(), xa);
        let mut padded = ddl.to_vec();
        padded[15] = 1;
        assert!(MariadbGtidEvent::decode_body(&padded).is_err());
        for cut in 0..13 {
            assert!(MariadbGtidEvent::decode_body(&ddl[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn gtid_lists_round_trip_and_refuse_absurd_counts() {
        assert_eq!(GtidListEvent::decode_body(&[0, 0, 0, 0]).unwrap(), GtidListEvent::default());
        let empty = GtidListEvent::decode_body(&[0, 0, 0, 0, 0, 0]).unwrap();
        assert!(empty.gtids.is_empty() && empty.trailing == [0, 0]);
        let list = GtidListEvent {
            flags: 0,
            trailing: Vec::new(),
            gtids: vec![MariadbGtid { domain_id: 0, server_id: 1, seq_no: 5 }, MariadbGtid { domain_id: 3, server_id: 2, seq_no: 9 }],
        };
        let mut body = Vec::new();
        list.encode_body(&mut body);
        assert_eq!(body.len(), 4 + 32);
        assert_eq!(GtidListEvent::decode_body(&body).unwrap(), list);
        assert!(GtidListEvent::decode_body(&[0xff, 0xff, 0xff, 0x0f]).is_err());
        assert!(GtidListEvent::decode_body(&body[..body.len() - 1]).is_err(), "a cut entry");
        assert_eq!("0-1-5".parse::<MariadbGtid>().unwrap(), list.gtids[0]);
        assert!("0-1".parse::<MariadbGtid>().is_err());
    }
}
