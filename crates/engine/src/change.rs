//! Row changes as a transaction captures them, in order: the full before
//! and after images the binlog's row events carry, and what redo replays.

use std::sync::Arc;

use binlog_format::RowsKind;

use crate::catalog::TableId;
use crate::row::Row;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Insert,
    Update,
    Delete,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RowChange {
    pub table: TableId,
    pub kind: ChangeKind,
    /// The row as it was (Update, Delete). Shared with the version the
    /// engine keeps, so capturing a change copies no values.
    pub before: Option<Arc<Row>>,
    /// The row as it becomes (Insert, Update), shared the same way.
    pub after: Option<Arc<Row>>,
    /// The hidden row id (InnoDB's DB_ROW_ID) of a row in a table without a
    /// primary key; the images alone cannot say which of two equal rows
    /// changed. `None` for tables with a primary key.
    pub hidden_row_id: Option<u64>,
}

impl RowChange {
    /// The rows-event kind this change goes into.
    pub fn rows_kind(&self) -> RowsKind {
        match self.kind {
            ChangeKind::Insert => RowsKind::Write,
            ChangeKind::Update => RowsKind::Update,
            ChangeKind::Delete => RowsKind::Delete,
        }
    }

    /// The change as the format crate's row events carry it.
    pub fn to_binlog(&self) -> binlog_format::RowChange {
        match (self.kind, &self.before, &self.after) {
            (ChangeKind::Insert, _, Some(after)) => binlog_format::RowChange::Write(after.to_vec()),
            (ChangeKind::Update, Some(before), Some(after)) => {
                binlog_format::RowChange::Update { before: before.to_vec(), after: after.to_vec() }
            }
            (ChangeKind::Delete, Some(before), _) => binlog_format::RowChange::Delete(before.to_vec()),
            _ => unreachable!("a {:?} change without its images", self.kind),
        }
    }
}
