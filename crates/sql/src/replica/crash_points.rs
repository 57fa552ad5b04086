//! The replica applier's named crash points, `replica::<stage>::<step>`,
//! armed through `storage::CrashPoints` (see the `storage` crate): a test
//! that kills a real replica sets `BINLOGD_CRASH_POINT=<name>` and the
//! process aborts there (test builds only; release builds compile them
//! out).
//!
//! | point | what is durable when it is reached | recovery gives |
//! |-------|------------------------------------|----------------|
//! | `replica::commit::after_engine_commit` | the transaction's rows, its GTID and the worker's applied checkpoint (one commit); the pipeline has not counted it (no later checkpoint names it, SHOW REPLICA STATUS does not show it) | it stays applied: by GTID it is not fetched again, by file and position it is fetched from the low-water mark and skipped, being named beyond it |
//! | `replica::ddl::after_statement` | a DDL statement, its binlog transaction and the worker's applied checkpoint (in the DDL's redo record; a statement that changed nothing in the engine has not committed it yet) | as above: the DDL is not run again, by GTID or by position (one that changed nothing runs again, harmlessly) |

/// A replicated rows transaction (or a DDL statement with its position)
/// committed; the worker has not reported it to the pipeline.
pub const COMMIT_AFTER_ENGINE_COMMIT: &str = "replica::commit::after_engine_commit";

/// A replicated DDL statement returned (engine, binlog); nothing else of
/// the worker's commit has run.
pub const DDL_AFTER_STATEMENT: &str = "replica::ddl::after_statement";

pub const ALL: &[&str] = &[COMMIT_AFTER_ENGINE_COMMIT, DDL_AFTER_STATEMENT];

/// The replica applier's points.
pub struct ReplicaPoints;

impl storage::KnownPoints for ReplicaPoints {
    const ALL: &'static [&'static str] = ALL;
}

pub type CrashPoints = storage::CrashPoints<ReplicaPoints>;
