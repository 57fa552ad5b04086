//! Display-only decoding of the MariaDB events a MariaDB 10.x binlog has in
//! every file (the format crate keeps them as `Event::Unknown`): GTID,
//! Gtid_list, Binlog_checkpoint and Annotate_rows. Anything that does not
//! parse is shown as undecoded bytes instead.

use binlog_format::bytes::ByteReader;
use binlog_format::DecodeError;

pub const ANNOTATE_ROWS_EVENT: u8 = 160;
pub const BINLOG_CHECKPOINT_EVENT: u8 = 161;
pub const GTID_EVENT: u8 = 162;
pub const GTID_LIST_EVENT: u8 = 163;

/// GTID event `flags2` bits.
pub const FL_STANDALONE: u8 = 1;
const FL_GROUP_COMMIT_ID: u8 = 2;
/// Gtid_list's count field keeps flags in its top 4 bits.
const GTID_LIST_COUNT_MASK: u32 = (1 << 28) - 1;
/// An entry is domain_id u32 + server_id u32 + seq_no u64.
const GTID_LIST_ENTRY_BYTES: usize = 16;

/// MariaDB GTID: `domain-server-seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MariadbEvent {
    /// Opens a transaction (or a standalone DDL statement).
    Gtid {
        gtid: MariadbGtid,
        flags: u8,
        commit_id: Option<u64>,
    },
    /// The binlog state at the start of the file.
    GtidList(Vec<MariadbGtid>),
    BinlogCheckpoint(String),
    /// The statement behind the row events that follow.
    AnnotateRows(String),
}

impl MariadbEvent {
    pub fn is_standalone(&self) -> bool {
        matches!(self, MariadbEvent::Gtid { flags, .. } if flags & FL_STANDALONE != 0)
    }
}

/// Decodes a MariaDB event; `server_id` comes from the event header.
/// `None` for other types, an error when the body does not parse.
pub fn decode(event_type: u8, server_id: u32, body: &[u8]) -> Option<Result<MariadbEvent, DecodeError>> {
    let mut reader = ByteReader::new(body);
    let result = match event_type {
        GTID_EVENT => (|| {
            let seq_no = reader.u64("MariaDB GTID seq_no")?;
            let domain_id = reader.u32("MariaDB GTID domain_id")?;
            let flags = reader.u8("MariaDB GTID flags2")?;
            let commit_id =
                if flags & FL_GROUP_COMMIT_ID != 0 { Some(reader.u64("MariaDB GTID commit_id")?) } else { None };
            Ok(MariadbEvent::Gtid { gtid: MariadbGtid { domain_id, server_id, seq_no }, flags, commit_id })
        })(),
        GTID_LIST_EVENT => (|| {
            let count = (reader.u32("Gtid_list count")? & GTID_LIST_COUNT_MASK) as usize;
            if count > reader.remaining() / GTID_LIST_ENTRY_BYTES {
                return Err(DecodeError::BadLength { length: count as u64, reason: "Gtid_list count exceeds body" });
            }
            let mut list = Vec::with_capacity(count);
            for _ in 0..count {
                let domain_id = reader.u32("Gtid_list domain_id")?;
                let server_id = reader.u32("Gtid_list server_id")?;
                let seq_no = reader.u64("Gtid_list seq_no")?;
                list.push(MariadbGtid { domain_id, server_id, seq_no });
            }
            Ok(MariadbEvent::GtidList(list))
        })(),
        BINLOG_CHECKPOINT_EVENT => (|| {
            let length = reader.u32("Binlog_checkpoint name length")? as usize;
            let name = reader.take(length, "Binlog_checkpoint name")?;
            Ok(MariadbEvent::BinlogCheckpoint(String::from_utf8_lossy(name).into_owned()))
        })(),
        ANNOTATE_ROWS_EVENT => Ok(MariadbEvent::AnnotateRows(String::from_utf8_lossy(body).into_owned())),
        _ => return None,
    };
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_events_of_a_mariadb_10_5_file() {
        // Bodies from a MariaDB 10.5 binlog.
        let gtid = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0];
        let Some(Ok(MariadbEvent::Gtid { gtid, flags, commit_id })) = decode(GTID_EVENT, 1, &gtid) else { panic!() };
        assert_eq!((gtid.to_string(), flags, commit_id), ("0-1-1".to_string(), 0x0c, None));
        assert_eq!(decode(GTID_LIST_EVENT, 1, &[0, 0, 0, 0, 0, 0]), Some(Ok(MariadbEvent::GtidList(vec![]))));
        let mut checkpoint = 18u32.to_le_bytes().to_vec();
        checkpoint.extend_from_slice(b"mariadb-bin.000001");
        assert_eq!(
            decode(BINLOG_CHECKPOINT_EVENT, 1, &checkpoint),
            Some(Ok(MariadbEvent::BinlogCheckpoint("mariadb-bin.000001".to_string())))
        );
        assert!(matches!(decode(GTID_LIST_EVENT, 1, &[0xff, 0xff, 0xff, 0x0f]), Some(Err(_))));
        assert_eq!(decode(200, 1, &[]), None);
    }
}
