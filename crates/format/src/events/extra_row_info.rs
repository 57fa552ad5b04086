//! The extra data of a rows event v2 (MySQL 5.6+): items that each start
//! with a type byte. MySQL 8.0.16+ writes the partition a row went to
//! (type 1); NDB Cluster writes its own information (type 0).
//!
//! | type | layout after the type byte |
//! |------|----------------------------|
//! | 0 NDB | length (1 byte, counting itself and the format byte), format (1), length - 2 bytes of data |
//! | 1 partition | partition id (2); Update and Partial_update_rows: then the source partition id (2) |
//!
//! As in MySQL's reader, only the first NDB item counts, and an item of an
//! unknown type ends the reading (the rest is not understood); an item
//! that runs past the extra data is an error.

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

pub const EXTRA_ROW_INFO_NDB: u8 = 0;
pub const EXTRA_ROW_INFO_PARTITION: u8 = 1;
/// The NDB item's length byte and format byte.
const NDB_HEADER_LENGTH: usize = 2;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraRowInfo {
    pub ndb: Option<NdbInfo>,
    pub partition: Option<PartitionInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NdbInfo {
    pub format: u8,
    pub data: Vec<u8>,
}

/// The partition the event's rows are in. An Update also names the
/// partition its rows came from, which differs when the update moved
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionInfo {
    /// The partition written to (an Update's target partition).
    pub partition_id: u16,
    /// Update only: the partition the rows were read from.
    pub source_partition_id: Option<u16>,
}

impl ExtraRowInfo {
    /// Reads the items of `extra_data` (the part after its length field);
    /// `update` for Update_rows and Partial_update_rows, whose partition
    /// item has the source partition too.
    pub fn decode(extra_data: &[u8], update: bool) -> Result<ExtraRowInfo, DecodeError> {
        let mut reader = ByteReader::new(extra_data);
        let mut info = ExtraRowInfo::default();
        while !reader.is_empty() {
            match reader.u8("extra row info type")? {
                EXTRA_ROW_INFO_NDB => {
                    let length = reader.u8("extra row NDB info length")? as usize;
                    let Some(data_length) = length.checked_sub(NDB_HEADER_LENGTH) else {
                        return Err(DecodeError::invalid("extra row NDB info length", format!("{length} is below its 2-byte header")));
                    };
                    let format = reader.u8("extra row NDB info format")?;
                    let data = reader.take(data_length, "extra row NDB info")?;
                    if info.ndb.is_none() {
                        info.ndb = Some(NdbInfo { format, data: data.to_vec() });
                    }
                }
                EXTRA_ROW_INFO_PARTITION => {
                    let partition_id = reader.u16("extra row partition id")?;
                    let source_partition_id = if update { Some(reader.u16("extra row source partition id")?) } else { None };
                    info.partition = Some(PartitionInfo { partition_id, source_partition_id });
                }
                _ => break,
            }
        }
        Ok(info)
    }

    /// The extra data MySQL writes for this information: NDB first, then
    /// the partition.
    pub fn encode(&self, out: &mut Vec<u8>) {
        if let Some(ndb) = &self.ndb {
            assert!(ndb.data.len() + NDB_HEADER_LENGTH <= u8::MAX as usize, "NDB info of {} bytes", ndb.data.len());
            out.put_u8(EXTRA_ROW_INFO_NDB);
            out.put_u8((ndb.data.len() + NDB_HEADER_LENGTH) as u8);
            out.put_u8(ndb.format);
            out.put_slice(&ndb.data);
        }
        if let Some(partition) = &self.partition {
            out.put_u8(EXTRA_ROW_INFO_PARTITION);
            out.put_u16(partition.partition_id);
            if let Some(source) = partition.source_partition_id {
                out.put_u16(source);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ndb.is_none() && self.partition.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndb_and_partition_items_round_trip() {
        let info = ExtraRowInfo {
            ndb: Some(NdbInfo { format: 0, data: vec![1, 2, 3] }),
            partition: Some(PartitionInfo { partition_id: 3, source_partition_id: Some(1) }),
        };
        let mut bytes = Vec::new();
        info.encode(&mut bytes);
        assert_eq!(bytes, [0, 5, 0, 1, 2, 3, 1, 3, 0, 1, 0]);
        assert_eq!(ExtraRowInfo::decode(&bytes, true).unwrap(), info);
        // A Write's partition item has one id.
        let write = ExtraRowInfo { ndb: None, partition: Some(PartitionInfo { partition_id: 2, source_partition_id: None }) };
        let mut bytes = Vec::new();
        write.encode(&mut bytes);
        assert_eq!(bytes, [1, 2, 0]);
        assert_eq!(ExtraRowInfo::decode(&bytes, false).unwrap(), write);
        assert!(ExtraRowInfo::decode(&bytes, true).is_err(), "an Update's item has two ids");
    }

    #[test]
    fn items_running_past_the_extra_data_are_errors() {
        for bad in [&[1u8, 3][..], &[1, 3, 0, 1], &[0, 1, 0], &[0, 9, 0, 1]] {
            assert!(ExtraRowInfo::decode(bad, true).is_err(), "{bad:?}");
        }
        assert_eq!(ExtraRowInfo::decode(&[7, 1, 2, 3], false).unwrap(), ExtraRowInfo::default(), "unknown type ends the reading");
    }
}
