//! MariaDB's small events: Annotate_rows (160) and Binlog_checkpoint (161).

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

/// Annotate_rows (type 160): the statement behind the row events that
/// follow it in the group (MariaDB's Rows_query). Body: the text, to the
/// end; no length byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotateRowsEvent {
    pub query: Vec<u8>,
}

impl AnnotateRowsEvent {
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_slice(&self.query);
    }

    pub fn decode_body(body: &[u8]) -> Result<AnnotateRowsEvent, DecodeError> {
        Ok(AnnotateRowsEvent { query: body.to_vec() })
    }
}

/// Binlog_checkpoint (type 161): the oldest binlog file crash recovery of
/// the source still needs. Body: name length u32, then the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinlogCheckpointEvent {
    pub file_name: Vec<u8>,
}

impl BinlogCheckpointEvent {
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u32(u32::try_from(self.file_name.len()).expect("a file name under 4 GiB"));
        out.put_slice(&self.file_name);
    }

    pub fn decode_body(body: &[u8]) -> Result<BinlogCheckpointEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let length = reader.u32("Binlog_checkpoint name length")? as usize;
        let file_name = reader.take(length, "Binlog_checkpoint name")?.to_vec();
        reader.finish("Binlog_checkpoint body")?;
        Ok(BinlogCheckpointEvent { file_name })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_from_a_mariadb_10_11_binlog() {
        let mut body = 18u32.to_le_bytes().to_vec();
        body.extend_from_slice(b"mariadb-bin.000001");
        let event = BinlogCheckpointEvent::decode_body(&body).unwrap();
        assert_eq!(event.file_name, b"mariadb-bin.000001");
        let mut again = Vec::new();
        event.encode_body(&mut again);
        assert_eq!(again, body);
        assert!(BinlogCheckpointEvent::decode_body(&body[..body.len() - 1]).is_err());
        let mut longer = body.clone();
        longer.push(0);
        assert!(BinlogCheckpointEvent::decode_body(&longer).is_err());
    }
}
