//! SELECT results streamed to the client row by row, so a connection's
//! memory is bounded by a batch and the socket's buffers, not by the
//! result's size.
//!
//! A SELECT of one table without aggregates, GROUP BY, ORDER BY or
//! DISTINCT produces its rows as the scan finds them. The first batch
//! ([`FIRST_BATCH_ROWS`] rows or [`FIRST_BATCH_BYTES`] bytes) is read
//! while the statement runs; a result that ends within it is sent whole,
//! as before, so a point select costs nothing more. A longer one goes on
//! as a [`SelectStream`]: the scan, detached from the statement's
//! transaction, keeps that transaction's snapshot (engine
//! `Scan::detach`), and its expressions see a copy of the session taken
//! when the statement ran. The protocol pulls rows while it writes them,
//! so a client that stops reading stops the scan (back-pressure), and an
//! error or KILL QUERY mid-way ends the result with an ERR packet after
//! the rows already sent, as in MySQL.
//!
//! Sorting, grouping, aggregates and DISTINCT need every row first, in
//! MySQL too; they stay in `select.rs` and are bounded by the engine's
//! memory limit on what a transaction reads, not here.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use engine::{Scan, Transaction};
use protocol::{ConnectionInfo, MysqlError, QueryResponse, ResultSet, RowStream};
use sqlparser::ast::{Expr, GroupByExpr, Query, Select, SetExpr};

use super::gtid_next::GtidNext;
use super::select::{conform, is_aggregate_free};
use super::select_plan::SelectShape;
use crate::error::SqlResult;
use crate::eval::expr::{Columns, Environment as _, Scope};
use crate::eval::value::{into_wire, Value};
use crate::session::{Context, Env, LateWarnings, Shared, WARNINGS_MAX};

/// Rows read while the statement runs: a result this short is sent whole.
pub const FIRST_BATCH_ROWS: usize = 256;
/// Bytes of values read while the statement runs, whatever the row count.
pub const FIRST_BATCH_BYTES: usize = 1 << 20;

/// Whether `query`'s rows can be sent as they are found: one table, and
/// nothing that needs every row first.
pub fn is_streamable(query: &Query) -> bool {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return false;
    };
    query.order_by.is_none()
        && query.locks.is_empty()
        && select.from.len() == 1
        && select.from[0].joins.is_empty()
        && select.distinct.is_none()
        && select.having.is_none()
        && matches!(&select.group_by, GroupByExpr::Expressions(exprs, modifiers) if exprs.is_empty() && modifiers.is_empty())
        && is_aggregate_free(select)
}

/// Where the rows come from: the engine, or an INFORMATION_SCHEMA table
/// built when the statement started.
enum RowSource<'t> {
    Scan(Scan<'t>),
    Built(std::vec::IntoIter<Vec<Value>>),
}

impl RowSource<'_> {
    /// The next row, shared with the engine's version of it: a row is
    /// read and projected, never copied whole.
    fn next(&mut self) -> Option<Arc<Vec<Value>>> {
        match self {
            RowSource::Scan(scan) => scan.next_shared(),
            RowSource::Built(rows) => rows.next().map(Arc::new),
        }
    }

    fn detach(self) -> RowSource<'static> {
        match self {
            RowSource::Scan(scan) => RowSource::Scan(scan.detach()),
            RowSource::Built(rows) => RowSource::Built(rows),
        }
    }
}

/// The rows of a streamable SELECT, filtered by WHERE, projected,
/// skipped by OFFSET and cut by LIMIT. Borrows the statement (`'t`) until
/// [`SelectRows::detach`].
pub struct SelectRows<'t> {
    rows: RowSource<'t>,
    selection: Option<Cow<'t, Expr>>,
    /// The table, the names expressions read and the outputs: a prepared
    /// statement's kept plan, or resolved for this statement.
    shape: Arc<SelectShape>,
    offset_rows: u64,
    limit_rows: u64,
}

impl<'t> SelectRows<'t> {
    /// Opens the scan of `select`'s table (or takes the rows built for an
    /// INFORMATION_SCHEMA table); `None` for a SELECT without FROM.
    pub fn open(query: &'t Query, select: &'t Select, context: &Context<'_>, trx: &'t Transaction) -> SqlResult<Option<SelectRows<'t>>> {
        let Some((shape, built_rows)) = super::select_plan::shape(select, context)? else {
            return Ok(None);
        };
        let no_columns = Columns::default();
        let constants = context.constants(&no_columns);
        let (limit, offset) = super::select::limit_and_offset(query, &constants)?;
        let (rows, selection) = match built_rows {
            Some(rows) => (RowSource::Built(rows.into_iter()), select.selection.as_ref().map(Cow::Borrowed)),
            None => {
                let plan = crate::exec::plan::plan(&shape.def, select.selection.as_ref(), &constants);
                (RowSource::Scan(trx.scan(shape.def.id, &plan.spec).map_err(crate::error::engine_error)?.rows_only()), plan.residual)
            }
        };
        Ok(Some(SelectRows { rows, selection, shape, offset_rows: offset, limit_rows: limit.unwrap_or(u64::MAX) }))
    }

    pub fn definitions(&self) -> Vec<protocol::ColumnDefinition> {
        self.shape.outputs.iter().map(|output| output.definition.clone()).collect()
    }

    /// The next output row, or `None` at the end.
    fn next_row(&mut self, env: &Env<'_>, params: &[Value]) -> SqlResult<Option<Vec<protocol::Value>>> {
        while self.limit_rows > 0 {
            let Some(row) = self.rows.next() else {
                return Ok(None);
            };
            if env.is_query_killed() {
                return Err(MysqlError::query_interrupted());
            }
            let scope = Scope::for_row(&self.shape.columns, &row, params, env);
            if let Some(selection) = &self.selection {
                if !scope.is_true(selection)? {
                    continue;
                }
            }
            if self.offset_rows > 0 {
                self.offset_rows -= 1;
                continue;
            }
            let mut output = Vec::with_capacity(self.shape.outputs.len());
            for column in &self.shape.outputs {
                output.push(into_wire(conform(column.value(&scope)?, &column.definition)));
            }
            // A SLEEP() that KILL QUERY cut short returns 1; the query
            // fails, as in mysqld.
            if env.is_query_killed() {
                return Err(MysqlError::query_interrupted());
            }
            self.limit_rows -= 1;
            return Ok(Some(output));
        }
        Ok(None)
    }

    fn detach(self) -> SelectRows<'static> {
        SelectRows {
            rows: self.rows.detach(),
            selection: self.selection.map(|selection| Cow::Owned(selection.into_owned())),
            shape: self.shape,
            offset_rows: self.offset_rows,
            limit_rows: self.limit_rows,
        }
    }
}

/// Reads the first batch; a result that ends within it is answered whole,
/// a longer one as a [`SelectStream`].
pub fn respond(mut rows: SelectRows<'_>, context: &Context<'_>) -> SqlResult<QueryResponse<'static>> {
    let mut result = ResultSet::new(rows.definitions());
    let mut batch_bytes = 0;
    while result.rows.len() < FIRST_BATCH_ROWS && batch_bytes < FIRST_BATCH_BYTES {
        match rows.next_row(&context.env, context.params)? {
            Some(row) => {
                batch_bytes += row.iter().map(wire_bytes).sum::<usize>();
                result.push_row(row);
            }
            None => return Ok(result.into()),
        }
    }
    let stream = SelectStream { session: SessionCopy::of(context)?, first: result.rows.into(), rows: rows.detach() };
    Ok(QueryResponse::Stream(RowStream { columns: result.columns, rows: Box::new(stream), warnings: 0 }))
}

/// About the bytes a value takes in memory and on the wire.
fn wire_bytes(value: &protocol::Value) -> usize {
    match value {
        protocol::Value::Bytes(bytes) => bytes.len(),
        _ => 8,
    }
}

/// What expressions read of the session, copied when a streamed result
/// outlives its statement.
struct SessionCopy {
    shared: Arc<Shared>,
    info: ConnectionInfo,
    database: Option<String>,
    variables: HashMap<&'static str, Value>,
    user_variables: HashMap<String, Value>,
    last_insert_id: u64,
    autocommit: bool,
    /// A twin of the session's gtid_next: the same text for `@@gtid_next`,
    /// owning nothing.
    gtid_next: parking_lot::Mutex<GtidNext>,
    statement_time_micros: i64,
    params: Vec<Value>,
    late_warnings: LateWarnings,
}

impl SessionCopy {
    fn of(context: &Context<'_>) -> SqlResult<SessionCopy> {
        let env = &context.env;
        let shared = env.shared.this.upgrade().ok_or_else(|| MysqlError::internal("the server is shutting down"))?;
        let gtid_next = match &*env.gtid_next.lock() {
            GtidNext::Automatic => GtidNext::Automatic,
            GtidNext::Owned(owned) => GtidNext::Undefined(owned.gtid()),
            GtidNext::Executed(gtid) => GtidNext::Executed(*gtid),
            GtidNext::Undefined(gtid) => GtidNext::Undefined(*gtid),
        };
        Ok(SessionCopy {
            shared,
            info: env.info.clone(),
            database: env.database.map(str::to_string),
            variables: env.variables.clone(),
            user_variables: env.user_variables.clone(),
            last_insert_id: env.last_insert_id,
            autocommit: env.autocommit,
            gtid_next: parking_lot::Mutex::new(gtid_next),
            statement_time_micros: env.statement_time_micros,
            params: context.params.to_vec(),
            late_warnings: Arc::clone(env.late_warnings),
        })
    }

    fn env(&self) -> Env<'_> {
        Env {
            shared: &self.shared,
            info: &self.info,
            database: self.database.as_deref(),
            variables: &self.variables,
            user_variables: &self.user_variables,
            last_insert_id: self.last_insert_id,
            autocommit: self.autocommit,
            gtid_next: &self.gtid_next,
            statement_time_micros: self.statement_time_micros,
            writes_rows: false,
            evaluation_warnings: Default::default(),
            late_warnings: &self.late_warnings,
        }
    }
}

/// The rest of a result, produced as the protocol sends it.
pub struct SelectStream {
    session: SessionCopy,
    /// The first batch, read while the statement ran.
    first: VecDeque<Vec<protocol::Value>>,
    rows: SelectRows<'static>,
}

impl Iterator for SelectStream {
    type Item = Result<Vec<protocol::Value>, MysqlError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(row) = self.first.pop_front() {
            return Some(Ok(row));
        }
        let env = self.session.env();
        let row = self.rows.next_row(&env, &self.session.params).transpose();
        // The statement has returned: its session takes these once the
        // last row is sent (the result's EOF counts them).
        let raised = env.evaluation_warnings.take();
        if !raised.is_empty() {
            let mut late = self.session.late_warnings.lock();
            let room = WARNINGS_MAX.saturating_sub(late.len());
            late.extend(raised.into_iter().take(room));
        }
        row
    }
}
