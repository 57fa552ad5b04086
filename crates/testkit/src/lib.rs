//! What integration tests across the workspace share, one of each, so a
//! fix to a helper reaches every test that uses it. A dev-dependency only:
//! never a dependency of a library or a binary.

mod binlog_file;
pub mod event_kinds;
mod net;
pub mod older_servers;
mod process;
pub mod raw_client;
mod seeded;
mod uuid;

pub use binlog_file::{framed_event, BinlogBuilder, SERVER_ID, TIMESTAMP};
pub use net::free_port;
pub use process::ChildGuard;
pub use seeded::SeededRandom;
pub use uuid::SOURCE_UUID;
