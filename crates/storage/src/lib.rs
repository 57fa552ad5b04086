//! binlogd's storage seam, below both logs: [`Storage`] is the one trait
//! every create, write, fdatasync, directory fsync, truncate, rename and
//! removal goes through; [`OsStorage`] is the real file system (files 0600,
//! directories 0700); [`crash_points`] is the registry of named crash
//! points each log lists its own of.
//!
//! The feature `fault-injection` adds what crash tests need: [`SimStorage`]
//! (a live and a durable image, crash images, failing and slow syncs) and
//! crash points a test can arm or `BINLOGD_CRASH_POINT` can abort at. Test
//! builds turn it on through dev-dependencies; without it the crash points
//! compile to nothing (`tests/dependency_graph.rs` checks the release build).

pub mod crash_points;
pub mod os;
pub mod seam;
#[cfg(feature = "fault-injection")]
pub mod sim;

pub use crash_points::{CrashPoints, KnownPoints};
pub use os::OsStorage;
pub use seam::{FileHandle, Storage, StorageFile};
#[cfg(feature = "fault-injection")]
pub use sim::SimStorage;
