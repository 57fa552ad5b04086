//! XA_prepare (38): ends the first part of an XA transaction (`XA
//! PREPARE`, or `XA COMMIT ... ONE PHASE`), in place of an Xid.
//!
//! | bytes | field |
//! |-------|-------|
//! | 1 | one phase: 1 for `XA COMMIT ... ONE PHASE` |
//! | 4 | format id (signed) |
//! | 4 | gtrid length (at most 64) |
//! | 4 | bqual length (at most 64) |
//! | gtrid + bqual | gtrid, then bqual |

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

/// MySQL's `MAXGTRIDSIZE` and `MAXBQUALSIZE`.
pub const XID_PART_LENGTH_MAX: u32 = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XaPrepareEvent {
    pub one_phase: bool,
    pub format_id: i32,
    pub gtrid: Vec<u8>,
    pub bqual: Vec<u8>,
}

impl XaPrepareEvent {
    /// The XID as MySQL prints it: `X'<gtrid hex>',X'<bqual hex>',<format id>`.
    pub fn xid_text(&self) -> String {
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        format!("X'{}',X'{}',{}", hex(&self.gtrid), hex(&self.bqual), self.format_id)
    }

    pub fn decode_body(body: &[u8]) -> Result<XaPrepareEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let one_phase = match reader.u8("XA_prepare one_phase")? {
            0 => false,
            1 => true,
            other => return Err(DecodeError::invalid("XA_prepare one_phase", format!("{other} is not 0 or 1"))),
        };
        let format_id = reader.u32("XA_prepare format id")? as i32;
        let gtrid_length = reader.u32("XA_prepare gtrid length")?;
        let bqual_length = reader.u32("XA_prepare bqual length")?;
        for (what, length) in [("XA_prepare gtrid length", gtrid_length), ("XA_prepare bqual length", bqual_length)] {
            if length > XID_PART_LENGTH_MAX {
                return Err(DecodeError::invalid(what, format!("{length} is above {XID_PART_LENGTH_MAX}")));
            }
        }
        let gtrid = reader.take(gtrid_length as usize, "XA_prepare gtrid")?.to_vec();
        let bqual = reader.take(bqual_length as usize, "XA_prepare bqual")?.to_vec();
        reader.finish("XA_prepare")?;
        Ok(XaPrepareEvent { one_phase, format_id, gtrid, bqual })
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        assert!(
            self.gtrid.len() <= XID_PART_LENGTH_MAX as usize && self.bqual.len() <= XID_PART_LENGTH_MAX as usize,
            "XID parts above 64 bytes"
        );
        out.put_u8(self.one_phase as u8);
        out.put_u32(self.format_id as u32);
        out.put_u32(self.gtrid.len() as u32);
        out.put_u32(self.bqual.len() as u32);
        out.put_slice(&self.gtrid);
        out.put_slice(&self.bqual);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xids_round_trip_print_as_mysql_does_and_bound_their_lengths() {
        let event = XaPrepareEvent { one_phase: false, format_id: 1, gtrid: b"xid1".to_vec(), bqual: b"b".to_vec() };
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(XaPrepareEvent::decode_body(&body).unwrap(), event);
        assert_eq!(event.xid_text(), "X'78696431',X'62',1");
        for cut in 0..body.len() {
            assert!(XaPrepareEvent::decode_body(&body[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = body.clone();
        long[5..9].copy_from_slice(&65u32.to_le_bytes());
        assert!(XaPrepareEvent::decode_body(&long).is_err());
    }
}
