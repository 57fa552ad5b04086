//! The server's explicit locks, as MySQL's metadata locks behave for them:
//! the global read lock of `FLUSH TABLES WITH READ LOCK` (`server_locks.rs`)
//! and the table locks of `LOCK TABLES`; and what each statement must wait
//! for or is refused because of them (`statement_locks.rs`).
//!
//! Row-level conflicts stay with the engine's row locks; these locks only
//! add what a backup needs: a moment when no transaction commits (so a
//! snapshot and the binlog position agree) and tables other sessions
//! cannot change.

pub(crate) mod server_locks;
pub(crate) mod statement_locks;

pub(crate) use server_locks::ServerLocks;
pub(crate) use statement_locks::{before_statement, SessionLocks};
