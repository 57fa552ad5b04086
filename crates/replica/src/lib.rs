//! binlogd's replica pipeline, independent of the database:
//!
//! ```text
//! source ──► SourceClient ──► Receiver ──► RelayLog (memory ring | files)
//!                               │              ▲ bytes
//!                               ▼              │
//!                         BoundaryQueue ──► Coordinator ──► workers ──► Applier
//! ```
//!
//! The receiver finds transaction boundaries as events arrive, writes each
//! transaction into the relay log and pushes one queue entry per
//! transaction; the coordinator schedules from the entries by logical
//! clock; workers read the bytes back and call the [`Applier`]. See the
//! crate's README.md for the bounds and what the SQL integration adds.

pub mod applied_positions;
pub mod applier;
pub mod boundary;
pub mod boundary_queue;
pub mod coordinator;
pub mod errors;
pub mod event_scan;
pub mod intake;
mod job_queue;
pub mod mariadb_clock;
pub mod mariadb_gtid_position;
pub mod receiver;
pub mod receiver_status;
pub mod relay;
pub mod scheduler;
pub mod semi_sync_ack;
pub mod source_client;
pub mod stop;
mod worker;

pub use applied_positions::{AppliedCheckpoint, AppliedPositions, SourcePosition};
pub use applier::{Applier, WorkerApplier};
pub use boundary::TransactionClock;
pub use boundary_queue::{BoundaryEntry, BoundaryQueue, QUEUE_ENTRIES_MAX_DEFAULT};
pub use coordinator::{Coordinator, CoordinatorConfig, CoordinatorMode, CoordinatorOutcome, CoordinatorStatus};
pub use mariadb_gtid_position::MariadbGtidPosition;
pub use receiver::{Receiver, ReceiverConfig, StartPosition};
pub use receiver_status::{IoState, ReceiverStatus};
pub use relay::events::TransactionEvents;
pub use relay::{RelayLog, RelayLogConfig, TransactionLocation};
pub use source_client::{SourceAddress, SourceClient};
pub use stop::StopFlag;
