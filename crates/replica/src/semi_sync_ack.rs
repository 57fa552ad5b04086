//! The replica's side of semi-synchronous replication (MySQL's and
//! MariaDB's protocol; byte tables in `docs/replication.md` and the source
//! crate's `semi_sync/packet.rs`).
//!
//! With `rpl_semi_sync_replica_enabled` ON the receiver asks a source that
//! has semi-sync (`SHOW VARIABLES LIKE 'rpl_semi_sync_%_enabled'` lists its
//! `..._source_enabled` or `..._master_enabled`) for it by setting
//! `@rpl_semi_sync_replica` and `@rpl_semi_sync_slave`; from then on every
//! dump packet carries `0xEF` and a flag byte before the event. When the
//! flag asks for it, the receiver answers once the relay log holds the
//! event (it is in the ring, or written to the relay file) with an ack:
//! `0xEF`, the event's end position (u64 LE), the source's file name.

use crate::errors;
use protocol::MysqlError;

/// The byte after the OK marker of each semi-sync packet, and the first of
/// an ack.
pub const MAGIC: u8 = 0xEF;

/// The header flag asking for an ack.
pub const FLAG_ACK_REQUEST: u8 = 0x01;

/// What tells whether a source has semi-sync.
pub const SUPPORT_QUERY: &str = "SHOW VARIABLES LIKE 'rpl_semi_sync_%_enabled'";

/// What declares this reader semi-synchronous (MySQL 8.4's name, and the
/// one MariaDB and older MySQL read).
pub const DECLARE: &str = "SET @rpl_semi_sync_replica = 1, @rpl_semi_sync_slave = 1";

/// Whether the rows of [`SUPPORT_QUERY`] name a source-side variable.
pub fn source_supports(rows: &[Vec<Option<String>>]) -> bool {
    rows.iter().any(|row| {
        matches!(row.first(), Some(Some(name)) if name.eq_ignore_ascii_case("rpl_semi_sync_source_enabled") || name.eq_ignore_ascii_case("rpl_semi_sync_master_enabled"))
    })
}

/// A dump packet's event after its semi-sync header (the OK marker already
/// taken off), and whether an ack is asked for.
pub fn strip_header(packet: &[u8]) -> Result<(&[u8], bool), MysqlError> {
    match packet {
        [MAGIC, flags, event @ ..] => Ok((event, flags & FLAG_ACK_REQUEST != 0)),
        _ => Err(errors::malformed_packet()),
    }
}

/// The ack packet's payload.
pub fn encode_ack(file_name: &str, end_position: u64) -> Vec<u8> {
    let mut payload = Vec::with_capacity(9 + file_name.len());
    payload.push(MAGIC);
    payload.extend_from_slice(&end_position.to_le_bytes());
    payload.extend_from_slice(file_name.as_bytes());
    payload
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_taken_off_and_its_flag_read() {
        assert_eq!(strip_header(&[0xEF, 0x01, 7, 8]).unwrap(), (&[7u8, 8][..], true));
        assert_eq!(strip_header(&[0xEF, 0x00, 7]).unwrap(), (&[7u8][..], false));
        assert_eq!(strip_header(&[0x10, 0x01, 7]).unwrap_err().code, errors::malformed_packet().code);
    }

    #[test]
    fn an_ack_is_magic_position_and_file_name() {
        let ack = encode_ack("binlog.000003", 0x0102);
        assert_eq!(&ack[..9], &[0xEF, 0x02, 0x01, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&ack[9..], b"binlog.000003");
    }

    #[test]
    fn a_source_supports_it_when_it_lists_its_variable() {
        let row = |name: &str| vec![Some(name.to_string()), Some("OFF".to_string())];
        assert!(source_supports(&[row("rpl_semi_sync_master_enabled"), row("rpl_semi_sync_slave_enabled")]));
        assert!(source_supports(&[row("rpl_semi_sync_source_enabled")]));
        assert!(!source_supports(&[row("rpl_semi_sync_slave_enabled")]));
        assert!(!source_supports(&[]));
    }
}
