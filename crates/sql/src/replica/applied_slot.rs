//! A replica worker's slot (MySQL's `mysql.slave_worker_info` row): the
//! applied source position its last transaction committed with, in the
//! same engine transaction (one redo record) as the rows
//! ([`engine::ApplierSlot`]). `replica::applied_positions` says what a
//! checkpoint holds and why merging the slots after a crash neither
//! re-applies nor skips a transaction.
//!
//! The bytes are JSON: `{"epoch": E, "low_water": [file, pos] | null,
//! "beyond": [[file, pos], ...]}`. The epoch is the source settings'
//! `position_epoch`: CHANGE REPLICATION SOURCE TO with a new source or
//! position, and RESET REPLICA, start a new one, so older slots are
//! ignored rather than resumed from.

use database::Database;
use replica::{AppliedCheckpoint, SourcePosition};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct SlotContents {
    epoch: u64,
    low_water: Option<(String, u64)>,
    beyond: Vec<(String, u64)>,
}

pub fn encode(epoch: u64, checkpoint: &AppliedCheckpoint) -> Vec<u8> {
    let pair = |position: &SourcePosition| (position.file.to_string(), position.pos);
    let contents =
        SlotContents { epoch, low_water: checkpoint.low_water.as_ref().map(pair), beyond: checkpoint.beyond.iter().map(pair).collect() };
    serde_json::to_vec(&contents).expect("slot contents serialize")
}

fn decode(bytes: &[u8]) -> Option<(u64, AppliedCheckpoint)> {
    let contents: SlotContents = serde_json::from_slice(bytes).ok()?;
    let position = |(file, pos): (String, u64)| SourcePosition { file: file.into(), pos };
    let checkpoint =
        AppliedCheckpoint { low_water: contents.low_water.map(position), beyond: contents.beyond.into_iter().map(position).collect() };
    Some((contents.epoch, checkpoint))
}

/// What the slots of `epoch` say was applied (nothing when none is).
pub fn recover(db: &Database, epoch: u64) -> AppliedCheckpoint {
    let slots = db.applier_slots();
    let checkpoints: Vec<AppliedCheckpoint> = slots
        .values()
        .filter_map(|bytes| decode(bytes))
        .filter(|(slot_epoch, _)| *slot_epoch == epoch)
        .map(|(_, checkpoint)| checkpoint)
        .collect();
    AppliedCheckpoint::merge(&checkpoints)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_bytes_round_trip() {
        let checkpoint = AppliedCheckpoint {
            low_water: Some(SourcePosition { file: "binlog.000003".into(), pos: 1234 }),
            beyond: vec![SourcePosition { file: "binlog.000003".into(), pos: 2000 }],
        };
        assert_eq!(decode(&encode(7, &checkpoint)), Some((7, checkpoint)));
        assert_eq!(decode(b"not json"), None);
    }
}
