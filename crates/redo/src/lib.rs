//! binlogd's redo log: records with typed sections in numbered segment
//! files, group commit with `innodb_flush_log_at_trx_commit` 0/1/2,
//! checkpoints of the engine's snapshot, and recovery that replays from
//! the last checkpoint. All file I/O goes through the `storage` crate's
//! seam, so its `SimStorage` can cut durability at any sync in tests.
//!
//! Where to look: the record and its bytes in [`record`] (and
//! `FORMAT.md`), the append path in [`group_commit`], checkpoints and their
//! crash table in [`checkpoint`], recovery's decision table at the top of
//! [`recovery`], crash points in [`crash_points`].

#![forbid(unsafe_code)]

pub mod checkpoint;
pub mod control;
pub mod crash_points;
pub mod error;
pub mod group_commit;
pub mod log;
pub mod options;
pub mod record;
pub mod recovery;
pub mod segment;

pub use checkpoint::{CheckpointInfo, SnapshotReader};
pub use crash_points::CrashPoints;
pub use error::{RedoError, Result};
pub use log::{Counters, RedoLog};
pub use options::{Durability, FlushLogAtTrxCommit, Options};
pub use record::{section, Lsn, Record, Section};
pub use recovery::{LoggedRecord, RecordIter, Recovered, Truncation};
