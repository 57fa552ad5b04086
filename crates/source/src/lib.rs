//! binlogd's replication source: what a replica or CDC reader talks to.
//!
//! `dump.rs` streams the binlog (COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID) as
//! MySQL's Binlog_sender does; while it streams, its thread rests on shared
//! ticks (`pacing.rs`), runs under SCHED_BATCH (`scheduling.rs`) and is named
//! `binlog-dump` (`thread_name.rs`). `replicas.rs` lists the replicas that
//! registered with COM_REGISTER_SLAVE (SHOW REPLICAS). `semi_sync/` is
//! semi-synchronous replication: the dump's packet header, the replicas'
//! acknowledgements and the commit-stage wait for them.
//!
//! The SQL layer (crate `sql`) checks the privilege, reads the reader's user
//! variables into [`DumpSettings`] and hands the connection's stream here.

mod dump;
mod pacing;
mod replicas;
mod scheduling;
pub mod semi_sync;
mod thread_name;

pub use dump::{dump, gtid_set_from_request, DumpSettings, DumpStart};
pub use replicas::{RegisteredReplica, Replicas};
pub use semi_sync::SemiSyncSource;
pub use thread_name::DUMP_THREAD_NAME;
