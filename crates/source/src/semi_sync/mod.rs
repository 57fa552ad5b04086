//! Semi-synchronous replication, MySQL's protocol (MariaDB speaks the
//! same): a reader that sets `@rpl_semi_sync_replica = 1` (or MariaDB's
//! `@rpl_semi_sync_slave`) before its dump gets every event behind a
//! two-byte header whose flag asks for an acknowledgement at each
//! transaction's end (`packet.rs`); its acknowledgements are read by a
//! thread of their own (`ack_reader.rs`) into the server's
//! [`SemiSyncSource`] (`source.rs`), where the binlog's COMMIT stage waits
//! for them (binlog's `replica_acks.rs`).

mod ack_reader;
pub mod packet;
mod position;
mod source;

pub use ack_reader::{AckReader, LastRequest};
pub use position::LogPosition;
pub use source::{SemiSyncSource, TIMEOUT_DEFAULT_MS};
