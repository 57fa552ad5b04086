//! View_change (37): Group Replication's membership change, with the
//! certification information a joining member needs.
//!
//! | bytes | field |
//! |-------|-------|
//! | 40 | view id, NUL-padded |
//! | 8 | sequence number |
//! | 4 | certification info entries |
//! | per entry | key length (2), key, value length (4), value |

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

/// MySQL's `ENCODED_VIEW_ID_MAX_LEN`.
pub const VIEW_ID_LENGTH: usize = 40;
/// The smallest entry: both lengths, empty key and value.
const ENTRY_BYTES_MIN: usize = 6;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewChangeEvent {
    /// As stored: the id, then NUL padding.
    pub view_id: [u8; VIEW_ID_LENGTH],
    pub seq_number: u64,
    pub certification_info: Vec<(Vec<u8>, Vec<u8>)>,
}

impl ViewChangeEvent {
    /// The view id up to its first NUL.
    pub fn view_id_text(&self) -> String {
        let end = self.view_id.iter().position(|&b| b == 0).unwrap_or(VIEW_ID_LENGTH);
        String::from_utf8_lossy(&self.view_id[..end]).into_owned()
    }

    pub fn decode_body(body: &[u8]) -> Result<ViewChangeEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let view_id = reader.take(VIEW_ID_LENGTH, "View_change view id")?.try_into().expect("40 bytes");
        let seq_number = reader.u64("View_change sequence number")?;
        let count = reader.u32("View_change certification info count")? as usize;
        if count.saturating_mul(ENTRY_BYTES_MIN) > reader.remaining() {
            return Err(DecodeError::Truncated {
                what: "View_change certification info",
                needed: count.saturating_mul(ENTRY_BYTES_MIN),
                available: reader.remaining(),
            });
        }
        let mut certification_info = Vec::with_capacity(count);
        for _ in 0..count {
            let key_length = reader.u16("View_change key length")? as usize;
            let key = reader.take(key_length, "View_change key")?.to_vec();
            let value_length = reader.u32("View_change value length")? as usize;
            let value = reader.take(value_length, "View_change value")?.to_vec();
            certification_info.push((key, value));
        }
        reader.finish("View_change")?;
        Ok(ViewChangeEvent { view_id, seq_number, certification_info })
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_slice(&self.view_id);
        out.put_u64(self.seq_number);
        out.put_u32(self.certification_info.len() as u32);
        for (key, value) in &self.certification_info {
            assert!(key.len() <= u16::MAX as usize, "certification info key of {} bytes", key.len());
            out.put_u16(key.len() as u16);
            out.put_slice(key);
            out.put_u32(value.len() as u32);
            out.put_slice(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_round_trip_and_absurd_counts_are_errors() {
        let mut view_id = [0u8; VIEW_ID_LENGTH];
        view_id[..12].copy_from_slice(b"17000000:123");
        let event = ViewChangeEvent { view_id, seq_number: 9, certification_info: vec![(b"k".to_vec(), b"v1".to_vec())] };
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(ViewChangeEvent::decode_body(&body).unwrap(), event);
        assert_eq!(event.view_id_text(), "17000000:123");
        for cut in 0..body.len() {
            assert!(ViewChangeEvent::decode_body(&body[..cut]).is_err(), "cut at {cut}");
        }
        let mut absurd = body.clone();
        absurd[48..52].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(ViewChangeEvent::decode_body(&absurd), Err(DecodeError::Truncated { .. })));
    }
}
