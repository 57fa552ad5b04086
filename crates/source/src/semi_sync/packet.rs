//! The semi-synchronous bytes on a dump connection (MySQL's `semisync.h`,
//! MariaDB's `semisync.h`: the same layout).
//!
//! Source → replica, every packet of a dump whose reader set
//! `@rpl_semi_sync_replica` (or MariaDB's `@rpl_semi_sync_slave`):
//!
//! | bytes | field |
//! |---|---|
//! | 1 | `0x00` (OK marker of every dump packet) |
//! | 1 | `0xEF` magic |
//! | 1 | flags: `0x01` = acknowledge this event, `0x00` = do not |
//! | n | the event, as without semi-sync |
//!
//! Replica → source, on the same connection, for each flagged event once
//! the replica's relay log holds it (sequence id 0):
//!
//! | bytes | field |
//! |---|---|
//! | 1 | `0xEF` magic |
//! | 8 | binlog position just after the event, u64 LE |
//! | n | binlog file name, no terminator (the rest of the packet) |

/// The first byte after the OK marker, and of an ack.
pub const MAGIC: u8 = 0xEF;

/// The flag asking the replica to acknowledge the event.
pub const FLAG_ACK_REQUEST: u8 = 0x01;

/// A file name longer than this is not a binlog name (MySQL's FN_REFLEN).
const FILE_NAME_BYTES_MAX: usize = 512;

/// One acknowledgement: the replica holds the source's binlog up to here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub file_name: String,
    pub position: u64,
}

/// Decodes an ack packet's payload; `None` when it is not one.
pub fn parse_ack(payload: &[u8]) -> Option<Ack> {
    let (&magic, rest) = payload.split_first()?;
    if magic != MAGIC || rest.len() < 8 || rest.len() - 8 > FILE_NAME_BYTES_MAX {
        return None;
    }
    let position = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
    let file_name = std::str::from_utf8(&rest[8..]).ok()?.to_string();
    if file_name.is_empty() {
        return None;
    }
    Some(Ack { file_name, position })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_is_magic_position_and_name() {
        let mut payload = vec![0xEF];
        payload.extend_from_slice(&1234u64.to_le_bytes());
        payload.extend_from_slice(b"binlog.000002");
        assert_eq!(parse_ack(&payload), Some(Ack { file_name: "binlog.000002".into(), position: 1234 }));
    }

    #[test]
    fn other_packets_are_not_acks() {
        assert_eq!(parse_ack(&[]), None);
        assert_eq!(parse_ack(&[0xEF, 1, 2, 3]), None);
        let mut no_name = vec![0xEF];
        no_name.extend_from_slice(&4u64.to_le_bytes());
        assert_eq!(parse_ack(&no_name), None);
        let mut wrong_magic = vec![0x00];
        wrong_magic.extend_from_slice(&4u64.to_le_bytes());
        wrong_magic.extend_from_slice(b"binlog.000001");
        assert_eq!(parse_ack(&wrong_magic), None);
    }
}
