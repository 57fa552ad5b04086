//! The replica side, over the `replica` crate's pipeline: the source
//! connection settings CHANGE REPLICATION SOURCE TO stores
//! (`source_settings.rs`), the replica statements and SHOW REPLICA STATUS
//! (`statements.rs`), the receiver and applier threads START / STOP
//! REPLICA run (`threads.rs`), and what each applier worker does with a
//! transaction (`applier.rs`), with its crash points (`crash_points.rs`).

pub(crate) mod applied_slot;
pub(crate) mod applier;
pub mod crash_points;
pub mod source_settings;
pub(crate) mod statements;
pub mod threads;
