//! binlogd's binary log: per-transaction caches with spill files, MySQL's
//! ordered group commit, rotation, a crash-safe index, purge, readers that
//! follow the tail, and recovery. All file I/O goes through the `storage`
//! crate's seam.
//!
//! Where to look: the commit path is [`group_commit`], rotation and close
//! are in [`log`], recovery's decision table is at the top of [`recovery`],
//! crash points are listed in [`crash_points`].

pub mod cache;
pub mod compression;
pub mod crash_points;
pub mod dependency;
pub mod error;
pub mod file_reader;
pub mod group_commit;
pub mod gtid_owners;
pub mod in_flight;
pub mod index;
pub mod log;
pub mod options;
pub mod promotion;
pub mod purge;
pub mod reader;
pub mod recovery;
pub mod reframe;
pub mod replica_acks;
pub mod reset;
pub mod spill_reference;
pub mod visible_end;

pub use cache::TransactionCache;
pub use crash_points::CrashPoints;
pub use error::{BinlogError, CorruptionKind, Result};
pub use group_commit::{BatchCommit, BehindTransaction, CommitHook, CommitInfo};
pub use gtid_owners::{CommitOutcome, GivenGtid, GtidOwners, OwnedGtid, Ownership};
pub use log::BinaryLog;
pub use options::{DependencyTracking, Options};
pub use reader::{LogEvent, LogEventRef, LogReader, LogRunRef};
pub use recovery::RecoveryReport;
pub use replica_acks::{AckWaitPoint, ReplicaAcks};
pub use spill_reference::SpillReference;
// The seam the log is opened on, for callers that name only this crate.
pub use storage::{OsStorage, Storage};
