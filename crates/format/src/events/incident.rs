//! Incident (26): the source lost events a replica would need (a failed
//! GRANT, a binlog write error); a replica stops at it.
//!
//! | bytes | field |
//! |-------|-------|
//! | 2 | incident: 0 NONE, 1 LOST_EVENTS |
//! | 1 | message length |
//! | length | message |

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

pub const INCIDENT_NONE: u16 = 0;
pub const INCIDENT_LOST_EVENTS: u16 = 1;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncidentEvent {
    pub incident: u16,
    pub message: Vec<u8>,
}

impl IncidentEvent {
    /// The incident's name as `mysqlbinlog` prints it.
    pub fn incident_name(&self) -> &'static str {
        match self.incident {
            INCIDENT_NONE => "NONE",
            INCIDENT_LOST_EVENTS => "LOST_EVENTS",
            _ => "<Unknown>",
        }
    }

    pub fn decode_body(body: &[u8]) -> Result<IncidentEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let incident = reader.u16("incident type")?;
        let length = reader.u8("incident message length")? as usize;
        let message = reader.take(length, "incident message")?.to_vec();
        reader.finish("incident message")?;
        Ok(IncidentEvent { incident, message })
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        assert!(self.message.len() <= u8::MAX as usize, "incident message of {} bytes", self.message.len());
        out.put_u16(self.incident);
        out.put_u8(self.message.len() as u8);
        out.put_slice(&self.message);
    }
}
