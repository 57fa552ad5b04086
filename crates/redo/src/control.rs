//! The control file `redo.control`: which checkpoint is in force.
//!
//! ```text
//! offset  size  field
//! 0       8     magic              "BLDRCTL1"
//! 8       4     version            u32 LE  1
//! 12      8     checkpoint_number  u64 LE  N of checkpoint.N; 0 = none yet
//! 20      8     start_lsn          u64 LE  replay starts here
//! 28      8     snapshot_bytes     u64 LE  length of checkpoint.N
//! 36      4     snapshot_crc32     u32 LE  CRC-32 of checkpoint.N's bytes
//! 40      4     crc32              u32 LE  CRC-32 of bytes 0..40
//! ```
//!
//! It is only ever replaced whole, crash-safely (temporary name,
//! fdatasync, rename, directory fsync), so after a power cut it is the old
//! or the new one, never a mix; the checksum catches anything else.

use std::io;
use std::path::Path;

use storage::Storage;

use crate::error::{RedoError, Result};
use crate::record::Lsn;

pub const CONTROL_FILE_NAME: &str = "redo.control";
pub const CONTROL_TEMP_NAME: &str = "redo.control.tmp";
const MAGIC: &[u8; 8] = b"BLDRCTL1";
const VERSION: u32 = 1;
const MAGIC_OFFSET: usize = 0;
const VERSION_OFFSET: usize = MAGIC_OFFSET + 8;
const NUMBER_OFFSET: usize = VERSION_OFFSET + 4;
const START_LSN_OFFSET: usize = NUMBER_OFFSET + 8;
const SNAPSHOT_BYTES_OFFSET: usize = START_LSN_OFFSET + 8;
const SNAPSHOT_CRC_OFFSET: usize = SNAPSHOT_BYTES_OFFSET + 8;
const CRC_OFFSET: usize = SNAPSHOT_CRC_OFFSET + 4;
pub const CONTROL_BYTES: usize = CRC_OFFSET + 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Control {
    /// 0 before the first checkpoint.
    pub checkpoint_number: u64,
    pub start_lsn: Lsn,
    pub snapshot_bytes: u64,
    pub snapshot_crc32: u32,
}

fn field<const N: usize>(bytes: &[u8], offset: usize) -> [u8; N] {
    bytes[offset..offset + N].try_into().unwrap()
}

impl Control {
    pub fn encode(&self) -> [u8; CONTROL_BYTES] {
        let mut bytes = [0u8; CONTROL_BYTES];
        bytes[MAGIC_OFFSET..VERSION_OFFSET].copy_from_slice(MAGIC);
        bytes[VERSION_OFFSET..NUMBER_OFFSET].copy_from_slice(&VERSION.to_le_bytes());
        bytes[NUMBER_OFFSET..START_LSN_OFFSET].copy_from_slice(&self.checkpoint_number.to_le_bytes());
        bytes[START_LSN_OFFSET..SNAPSHOT_BYTES_OFFSET].copy_from_slice(&self.start_lsn.to_le_bytes());
        bytes[SNAPSHOT_BYTES_OFFSET..SNAPSHOT_CRC_OFFSET].copy_from_slice(&self.snapshot_bytes.to_le_bytes());
        bytes[SNAPSHOT_CRC_OFFSET..CRC_OFFSET].copy_from_slice(&self.snapshot_crc32.to_le_bytes());
        let crc = crc32fast::hash(&bytes[..CRC_OFFSET]);
        bytes[CRC_OFFSET..].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    pub fn decode(bytes: &[u8]) -> std::result::Result<Control, String> {
        if bytes.len() != CONTROL_BYTES {
            return Err(format!("control file is {} bytes, expected {CONTROL_BYTES}", bytes.len()));
        }
        if &bytes[MAGIC_OFFSET..VERSION_OFFSET] != MAGIC {
            return Err("bad control file magic".into());
        }
        let stored = u32::from_le_bytes(field(bytes, CRC_OFFSET));
        let computed = crc32fast::hash(&bytes[..CRC_OFFSET]);
        if stored != computed {
            return Err(format!("control file checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"));
        }
        let version = u32::from_le_bytes(field(bytes, VERSION_OFFSET));
        if version != VERSION {
            return Err(format!("unsupported control file version {version}"));
        }
        Ok(Control {
            checkpoint_number: u64::from_le_bytes(field(bytes, NUMBER_OFFSET)),
            start_lsn: u64::from_le_bytes(field(bytes, START_LSN_OFFSET)),
            snapshot_bytes: u64::from_le_bytes(field(bytes, SNAPSHOT_BYTES_OFFSET)),
            snapshot_crc32: u32::from_le_bytes(field(bytes, SNAPSHOT_CRC_OFFSET)),
        })
    }
}

/// Reads the control file; `None` if there is none.
pub fn load(storage: &dyn Storage, dir: &Path) -> Result<Option<Control>> {
    let path = dir.join(CONTROL_FILE_NAME);
    if !storage.exists(&path) {
        return Ok(None);
    }
    let bytes = storage.read_all(&path).map_err(|e| RedoError::io("read", &path, e))?;
    Control::decode(&bytes).map(Some).map_err(|reason| RedoError::corruption(CONTROL_FILE_NAME, 0, reason))
}

/// Replaces the control file crash-safely.
pub fn store(storage: &dyn Storage, dir: &Path, control: &Control) -> io::Result<()> {
    storage.write_atomically(&dir.join(CONTROL_FILE_NAME), &dir.join(CONTROL_TEMP_NAME), &control.encode())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let control = Control { checkpoint_number: 3, start_lsn: 1 << 40, snapshot_bytes: 99, snapshot_crc32: 0xdead_beef };
        let bytes = control.encode();
        assert_eq!(Control::decode(&bytes).unwrap(), control);
        for index in 0..bytes.len() {
            let mut flipped = bytes;
            flipped[index] ^= 1;
            assert!(Control::decode(&flipped).is_err());
        }
    }
}
