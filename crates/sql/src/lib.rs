//! binlogd's SQL layer: each connection's [`SqlSession`] parses statements
//! (`parse.rs`: sqlparser's MySQL dialect plus a small hand parser) and runs
//! them against the database (engine + binlog through two-phase commit).
//!
//! Where to look: `session.rs` (transactions, autocommit, prepared
//! statements), `execute.rs` (dispatch), `select.rs`, `dml.rs`, `ddl.rs`,
//! `show.rs`, `set.rs`; `expr.rs` (expressions), `plan.rs` (index ranges
//! from WHERE), `columns.rs` (types and value coercion), `variables.rs`
//! (system variables), `error.rs` (MySQL errors).
//!
//! Users and privileges: `accounts.rs` (the account table and users.json),
//! `hosts.rs` (host patterns), `privileges.rs` (privileges, levels,
//! grants), `authorize.rs` (what each statement needs, MySQL's 1142 /
//! 1044 / 1227), `parse_users.rs` and `users.rs` (CREATE / ALTER / DROP
//! USER, GRANT, REVOKE, SHOW GRANTS).
//!
//! What is not supported gets MySQL's 1235 ("This version of MySQL doesn't
//! yet support ..."), never a guess.

pub mod accounts;
mod admin;
pub mod authorize;
mod binlog_events;
mod columns;
mod ddl;
mod dml;
mod dump;
mod dump_pacing;
mod dump_scheduling;
mod dump_thread_name;
pub mod error;
mod execute;
mod expr;
mod gtid_next;
pub mod hosts;
pub mod parse;
mod plan;
pub mod privileges;
mod replica_applier;
pub mod replica_source;
mod replica_statements;
pub mod replica_threads;
pub mod replicas;
mod select;
mod session;
mod set;
mod show;
mod users;
pub mod value;
pub mod variables;

pub use accounts::Accounts;
pub use replica_source::ReplicaSource;
pub use authorize::Principal;
pub use privileges::Privilege;
pub use session::{Shared, SqlService, SqlSession};
pub use variables::{GlobalVariables, SERVER_VERSION};
pub use dump_thread_name::DUMP_THREAD_NAME;
