//! Format_description event (type 15): first event of every file.

use crate::bytes::{ByteReader, ByteWriter};
use crate::checksum::CHECKSUM_LENGTH;
use crate::constants::{
    BINLOG_CHECKSUM_ALG_CRC32, BINLOG_CHECKSUM_ALG_OFF, BINLOG_CHECKSUM_ALG_UNDEF, COMMON_HEADER_LENGTH, POST_HEADER_LENGTHS,
    SERVER_VERSION,
};
use crate::error::DecodeError;

pub const SERVER_VERSION_FIELD_LENGTH: usize = 50;

/// | bytes | field                 |
/// |-------|-----------------------|
/// | 2     | binlog_version (= 4)  |
/// | 50    | server_version, NUL-padded |
/// | 4     | create_timestamp      |
/// | 1     | common header length (= 19) |
/// | N     | post-header length of event types 1..=N |
/// | 1     | checksum algorithm (0 off, 1 CRC32), absent before MySQL 5.6.1 / MariaDB 5.3 |
///
/// Whether the algorithm byte is there is told by `server_version`, as
/// MySQL's `Log_event_footer::get_checksum_alg` tells it: a server older
/// than the checksum wrote neither the byte nor a checksum after the
/// body, and its post-header lengths run to the end of the event
/// ([`BINLOG_CHECKSUM_ALG_UNDEF`] here).
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

    /// The algorithm's name as MySQL prints `binlog_checksum`, and `UNDEF`
    /// for a server older than checksums.
    pub fn checksum_name(&self) -> &'static str {
        match self.checksum_alg {
            BINLOG_CHECKSUM_ALG_CRC32 => "CRC32",
            BINLOG_CHECKSUM_ALG_OFF => "NONE",
            _ => "UNDEF",
        }
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
        if self.checksum_alg != BINLOG_CHECKSUM_ALG_UNDEF {
            out.put_u8(self.checksum_alg);
        }
    }

    pub fn decode_body(body: &[u8]) -> Result<FormatDescription, DecodeError> {
        let mut reader = ByteReader::new(body);
        let binlog_version = reader.u16("FDE binlog_version")?;
        if binlog_version != 4 {
            return Err(DecodeError::UnsupportedBinlogVersion { version: binlog_version });
        }
        let version = reader.take(SERVER_VERSION_FIELD_LENGTH, "FDE server_version")?;
        let end = version.iter().position(|&b| b == 0).unwrap_or(version.len());
        let server_version = String::from_utf8_lossy(&version[..end]).into_owned();
        let create_timestamp = reader.u32("FDE create_timestamp")?;
        let common_header_length = reader.u8("FDE header length")?;
        if common_header_length as usize != COMMON_HEADER_LENGTH {
            return Err(DecodeError::invalid("FDE", format!("common header length {common_header_length}, expected 19")));
        }
        let rest = reader.rest();
        let (checksum_alg, post_header_lengths) = if version_has_checksum_alg(&server_version) {
            match rest.split_last() {
                Some((&alg, lengths)) => (alg, lengths),
                None => return Err(DecodeError::Truncated { what: "FDE post-header lengths", needed: 1, available: 0 }),
            }
        } else {
            (BINLOG_CHECKSUM_ALG_UNDEF, rest)
        };
        if checksum_alg != BINLOG_CHECKSUM_ALG_OFF && checksum_alg != BINLOG_CHECKSUM_ALG_CRC32 && checksum_alg != BINLOG_CHECKSUM_ALG_UNDEF
        {
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

/// Bytes of the checksum after a whole Format_description event's body
/// (`event`: header, body and footer): 4 from servers that know checksums
/// (whatever their algorithm, NONE included), 0 from older ones.
pub fn footer_length_of_event(event: &[u8]) -> usize {
    let version = event.get(VERSION_OFFSET..VERSION_OFFSET + SERVER_VERSION_FIELD_LENGTH).unwrap_or(&[]);
    let end = version.iter().position(|&b| b == 0).unwrap_or(version.len());
    if version_has_checksum_alg(&String::from_utf8_lossy(&version[..end])) {
        CHECKSUM_LENGTH
    } else {
        0
    }
}

/// Where `server_version` starts in a Format_description event.
const VERSION_OFFSET: usize = COMMON_HEADER_LENGTH + 2;

/// The first versions whose Format_description carries the algorithm
/// byte: MySQL's `checksum_version_split` and MariaDB's.
const CHECKSUM_VERSION_MYSQL: [u8; 3] = [5, 6, 1];
const CHECKSUM_VERSION_MARIADB: [u8; 3] = [5, 3, 0];

/// True when a server of `version` wrote the checksum algorithm byte.
pub fn version_has_checksum_alg(version: &str) -> bool {
    let first = if version.to_ascii_lowercase().contains("mariadb") { CHECKSUM_VERSION_MARIADB } else { CHECKSUM_VERSION_MYSQL };
    split_version(version) >= first
}

/// MySQL's `do_server_version_split`: three numbers below 256 separated
/// by dots ("5.5.62-log" is 5.5.62); anything else is 0.0.0, which MySQL
/// also takes for a server older than checksums.
fn split_version(version: &str) -> [u8; 3] {
    let mut split = [0u8; 3];
    let mut rest = version.as_bytes();
    for (i, part) in split.iter_mut().enumerate() {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let number = std::str::from_utf8(&rest[..digits]).ok().and_then(|text| text.parse::<u32>().ok()).unwrap_or(0);
        let dot_follows = rest.get(digits) == Some(&b'.');
        if number >= 256 || (i == 0 && !dot_follows) {
            return [0; 3];
        }
        *part = number as u8;
        rest = &rest[digits + usize::from(dot_follows)..];
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_split_as_mysql_splits_them() {
        assert_eq!(split_version("5.5.62-log"), [5, 5, 62]);
        assert_eq!(split_version("8.4.3"), [8, 4, 3]);
        assert_eq!(split_version("10.11.6-MariaDB-log"), [10, 11, 6]);
        assert_eq!(split_version("5"), [0, 0, 0]);
        assert_eq!(split_version("300.1.1"), [0, 0, 0]);
        assert!(!version_has_checksum_alg("5.1.73-log"));
        assert!(!version_has_checksum_alg("5.6.0-m4"));
        assert!(version_has_checksum_alg("5.6.1"));
        assert!(version_has_checksum_alg("5.5.30-MariaDB-log"));
        assert!(!version_has_checksum_alg("5.2.14-MariaDB"));
    }

    #[test]
    fn a_format_description_from_before_checksums_round_trips_without_the_algorithm_byte() {
        let format = FormatDescription {
            binlog_version: 4,
            server_version: "5.5.62-log".to_string(),
            create_timestamp: 7,
            common_header_length: COMMON_HEADER_LENGTH as u8,
            post_header_lengths: vec![56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0, 84, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0],
            checksum_alg: BINLOG_CHECKSUM_ALG_UNDEF,
        };
        let mut body = Vec::new();
        format.encode_body(&mut body);
        assert_eq!(body.len(), 2 + 50 + 4 + 1 + 27);
        assert_eq!(FormatDescription::decode_body(&body), Ok(format.clone()));
        assert!(!format.has_checksum());
        assert_eq!(format.checksum_name(), "UNDEF");
    }
}
