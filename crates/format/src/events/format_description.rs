//! Format_description event (type 15): first event of every file.

use crate::bytes::{ByteReader, ByteWriter};
use crate::constants::{BINLOG_CHECKSUM_ALG_CRC32, BINLOG_CHECKSUM_ALG_OFF, COMMON_HEADER_LENGTH, POST_HEADER_LENGTHS, SERVER_VERSION};
use crate::error::DecodeError;

pub const SERVER_VERSION_FIELD_LENGTH: usize = 50;

/// | bytes | field                 |
/// |-------|-----------------------|
/// | 2     | binlog_version (= 4)  |
/// | 50    | server_version, NUL-padded |
/// | 4     | create_timestamp      |
/// | 1     | common header length (= 19) |
/// | N     | post-header length of event types 1..=N |
/// | 1     | checksum algorithm (0 off, 1 CRC32) |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatDescription {
    pub binlog_version: u16,
    pub server_version: String,
    pub create_timestamp: u32,
    pub common_header_length: u8,
    pub post_header_lengths: Vec<u8>,
    pub checksum_alg: u8,
}

impl FormatDescription {
    /// The FDE binlogd writes: MySQL 8.4's layout, type 43 included.
    pub fn binlogd(create_timestamp: u32, checksum: bool) -> FormatDescription {
        FormatDescription {
            binlog_version: 4,
            server_version: SERVER_VERSION.to_string(),
            create_timestamp,
            common_header_length: COMMON_HEADER_LENGTH as u8,
            post_header_lengths: POST_HEADER_LENGTHS.to_vec(),
            checksum_alg: if checksum { BINLOG_CHECKSUM_ALG_CRC32 } else { BINLOG_CHECKSUM_ALG_OFF },
        }
    }

    pub fn has_checksum(&self) -> bool {
        self.checksum_alg == BINLOG_CHECKSUM_ALG_CRC32
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u16(self.binlog_version);
        let mut version = [0u8; SERVER_VERSION_FIELD_LENGTH];
        let text = self.server_version.as_bytes();
        let length = text.len().min(SERVER_VERSION_FIELD_LENGTH - 1);
        version[..length].copy_from_slice(&text[..length]);
        out.put_slice(&version);
        out.put_u32(self.create_timestamp);
        out.put_u8(self.common_header_length);
        out.put_slice(&self.post_header_lengths);
        out.put_u8(self.checksum_alg);
    }

    pub fn decode_body(body: &[u8]) -> Result<FormatDescription, DecodeError> {
        let mut reader = ByteReader::new(body);
        let binlog_version = reader.u16("FDE binlog_version")?;
        if binlog_version != 4 {
            return Err(DecodeError::invalid("FDE", format!("binlog version {binlog_version}, only 4 is supported")));
        }
        let version = reader.take(SERVER_VERSION_FIELD_LENGTH, "FDE server_version")?;
        let end = version.iter().position(|&b| b == 0).unwrap_or(version.len());
        let server_version = String::from_utf8_lossy(&version[..end]).into_owned();
        let create_timestamp = reader.u32("FDE create_timestamp")?;
        let common_header_length = reader.u8("FDE header length")?;
        if common_header_length as usize != COMMON_HEADER_LENGTH {
            return Err(DecodeError::invalid("FDE", format!("common header length {common_header_length}, expected 19")));
        }
        // Servers since 5.6.1 end the body with the checksum algorithm byte.
        let rest = reader.rest();
        let Some((&checksum_alg, post_header_lengths)) = rest.split_last() else {
            return Err(DecodeError::Truncated { what: "FDE post-header lengths", needed: 1, available: 0 });
        };
        if checksum_alg != BINLOG_CHECKSUM_ALG_OFF && checksum_alg != BINLOG_CHECKSUM_ALG_CRC32 {
            return Err(DecodeError::invalid("FDE", format!("unknown checksum algorithm {checksum_alg}")));
        }
        Ok(FormatDescription {
            binlog_version,
            server_version,
            create_timestamp,
            common_header_length,
            post_header_lengths: post_header_lengths.to_vec(),
            checksum_alg,
        })
    }

    /// Post-header length the file declares for `event_type`, if listed.
    pub fn post_header_length(&self, event_type: u8) -> Option<u8> {
        (event_type as usize).checked_sub(1).and_then(|i| self.post_header_lengths.get(i).copied())
    }

    /// True when the server that wrote the file is MariaDB.
    pub fn is_mariadb(&self) -> bool {
        self.server_version.to_ascii_lowercase().contains("mariadb")
    }
}
