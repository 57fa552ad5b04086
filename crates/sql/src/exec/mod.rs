//! Running a parsed statement: `dispatch.rs` checks its privileges and
//! `gtid_next` and hands it to the module that runs it: `select.rs` (with
//! the index range `plan.rs` finds in WHERE, its rows streamed by
//! `select_stream.rs`, a prepared statement's plan kept by `select_plan.rs`), `dml.rs` (with `insert_conflicts.rs` for a taken key and `row_limit.rs` for UPDATE and DELETE ... LIMIT), `ddl.rs`, `alter.rs` (ALTER TABLE, RENAME TABLE), `show.rs`, `set.rs` (and
//! `set_names.rs`), `admin.rs` (FLUSH / PURGE / RESET BINARY LOGS,
//! KILL), `binlog_events.rs` (SHOW BINLOG EVENTS), `binlog_statement.rs`
//! (BINLOG '<base64>', the statement binlog replays send), `gtid_next.rs`,
//! `transaction_statements.rs` (START / SET TRANSACTION) and
//! `lock_statements.rs` (FLUSH TABLES WITH READ LOCK, LOCK / UNLOCK TABLES).
//! The account statements run in `access/users.rs`, the replica
//! statements in `replica/statements.rs`.

pub(crate) mod admin;
pub(crate) mod alter;
pub(crate) mod binlog_events;
pub(crate) mod binlog_statement;
pub(crate) mod ddl;
pub(crate) mod dispatch;
pub(crate) mod dml;
pub(crate) mod gtid_next;
pub(crate) mod insert_conflicts;
pub(crate) mod lock_statements;
pub(crate) mod partial_json;
pub(crate) mod partitioning;
pub(crate) mod plan;
mod result_unsigned;
pub(crate) mod row_limit;
pub(crate) mod select;
pub(crate) mod select_locking;
pub(crate) mod select_output;
pub(crate) mod select_plan;
pub(crate) mod select_stream;
pub(crate) mod set;
pub(crate) mod set_names;
pub(crate) mod show;
pub(crate) mod show_objects;
pub(crate) mod show_partitions;
pub(crate) mod table_comment;
pub(crate) mod transaction_statements;
