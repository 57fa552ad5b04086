//! BOLT's Large_transaction_header event (type 43, `LOG_EVENT_IGNORABLE_F`).
//!
//! It leads a promoted file, right after Previous_gtids, and names the
//! offset of the transaction's terminating event (Xid or COMMIT), so that
//! recovery can seek past a body of any size. Readers that do not know
//! type 43 skip it because of the ignorable flag. Its padding fills the
//! spill file's reserved header room exactly, so the Gtid event that
//! follows ends where the body begins.

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

pub const LARGE_TRANSACTION_HEADER_VERSION: u8 = 1;
/// version u8 + terminating_event_offset u64 + terminating_event_type u8.
pub const LARGE_TRANSACTION_HEADER_FIXED_LENGTH: usize = 10;

/// | bytes | field |
/// |-------|-------|
/// | 1 | version (= 1) |
/// | 8 | terminating event offset in this file (u64 LE) |
/// | 1 | terminating event type (16 Xid, 2 Query COMMIT) |
/// | n | zero padding up to the reserved header room |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeTransactionHeaderEvent {
    pub version: u8,
    pub terminating_event_offset: u64,
    pub terminating_event_type: u8,
    pub padding_length: usize,
}

impl LargeTransactionHeaderEvent {
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u8(self.version);
        out.put_u64(self.terminating_event_offset);
        out.put_u8(self.terminating_event_type);
        out.resize(out.len() + self.padding_length, 0);
    }

    pub fn decode_body(body: &[u8]) -> Result<LargeTransactionHeaderEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let version = reader.u8("large transaction header version")?;
        if version != LARGE_TRANSACTION_HEADER_VERSION {
            return Err(DecodeError::invalid("large transaction header", format!("version {version}, expected 1")));
        }
        let terminating_event_offset = reader.u64("large transaction header terminating offset")?;
        let terminating_event_type = reader.u8("large transaction header terminating type")?;
        let padding = reader.rest();
        if padding.iter().any(|&b| b != 0) {
            return Err(DecodeError::invalid("large transaction header", "padding is not zero"));
        }
        Ok(LargeTransactionHeaderEvent { version, terminating_event_offset, terminating_event_type, padding_length: padding.len() })
    }
}
