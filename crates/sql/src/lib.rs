//! binlogd's SQL layer: each connection's [`SqlSession`] parses statements
//! and runs them against the database (engine + binlog through two-phase
//! commit).
//!
//! Where to look:
//! - `session.rs`: transactions, autocommit, prepared statements, the
//!   connection's commands (the binlog dump commands hand over to the
//!   `source` crate).
//! - `parse.rs` and `parse/`: statement text to a [`parse::Statement`]
//!   (sqlparser's MySQL dialect plus a small hand parser).
//! - `access/`: users and privileges; what each statement needs (MySQL's
//!   1142 / 1044 / 1227) and the account statements.
//! - `exec/`: running statements (dispatch, SELECT, DML, DDL, SHOW, SET,
//!   the administrative statements, `gtid_next`, index ranges from WHERE).
//! - `locking/`: FLUSH TABLES WITH READ LOCK's global read lock and LOCK
//!   TABLES' table locks, and what statements wait for because of them.
//! - `information_schema/`: the INFORMATION_SCHEMA tables, built from the
//!   catalog for SELECT to scan like any table.
//! - `eval/`: values, expressions, column types and value coercion.
//! - `replica/`: the replica side: CHANGE REPLICATION SOURCE TO and its
//!   stored settings, START / STOP REPLICA and its threads, the applier.
//! - `variables.rs` (system variables), `error.rs` (MySQL errors).
//!
//! What is not supported gets MySQL's 1235 ("This version of MySQL doesn't
//! yet support ..."), never a guess.

pub mod access;
pub mod charsets;
pub mod error;
pub mod eval;
mod exec;
mod information_schema;
mod locking;
pub mod parse;
pub mod replica;
mod session;
pub mod variables;

pub use access::accounts::Accounts;
pub use access::authorize::Principal;
pub use access::privileges::Privilege;
pub use replica::source_settings::ReplicaSource;
pub use session::{Shared, SqlService, SqlSession};
pub use variables::{GlobalVariables, SERVER_VERSION};
