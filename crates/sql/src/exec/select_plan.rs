//! The plans prepared statements keep: what a streamed SELECT of one
//! table resolves before it reads a row (the table's definition, the
//! names its expressions read, its output columns and their
//! definitions), made at the first execution and used again by the next
//! ones instead of resolved again.
//!
//! A plan is used again only while everything it was made from holds:
//! the table is still the same definition in the catalog (any DDL on it
//! makes a new one, so ALTER, DROP and CREATE, RENAME all invalidate),
//! and the session's `sql_mode` is the one it was made under. (A prepared
//! statement always runs in the database current at its PREPARE, so a
//! later USE cannot change what its names resolve to.) What depends on the parameters (the key range WHERE
//! selects, LIMIT) is never kept: it is planned again at every
//! execution, from that execution's values. Privileges are checked at
//! every execution before the plan is looked at. A kept plan found stale
//! counts in `Com_stmt_reprepare`, as MySQL counts its re-preparations.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use engine::TableDef;
use sqlparser::ast::Select;

use super::select::{outputs, source, Output};
use crate::error::SqlResult;
use crate::eval::expr::{Columns, Environment as _};
use crate::eval::value::Value;
use crate::session::Context;
use crate::variables::VariableScope;

/// One prepared statement's plan, if it has one yet.
#[derive(Default)]
pub struct PlanSlot(parking_lot::Mutex<Option<Arc<SelectShape>>>);

/// What a SELECT of one stored table resolved, and what it was resolved
/// under.
pub(super) struct SelectShape {
    pub(super) def: Arc<TableDef>,
    pub(super) columns: Columns,
    pub(super) outputs: Vec<Output>,
    /// The table as named, its database resolved.
    database_name: String,
    table_name: String,
    sql_mode: Value,
}

/// An INFORMATION_SCHEMA table's rows, built for one statement.
pub(super) type BuiltRows = Vec<Vec<Value>>;

/// `select`'s table and outputs: the statement's kept plan while it
/// holds, else resolved now (and kept, for a prepared statement reading a
/// stored table). `None` for a SELECT without FROM; an INFORMATION_SCHEMA
/// table comes with its rows, built now.
pub(super) fn shape(select: &Select, context: &Context<'_>) -> SqlResult<Option<(Arc<SelectShape>, Option<BuiltRows>)>> {
    let catalog = context.db().catalog();
    if let Some(kept) = context.plan_slot.and_then(|slot| slot.0.lock().clone()) {
        let same_sql_mode = context.env.with_variable("sql_mode", |sql_mode| *sql_mode == kept.sql_mode).unwrap_or(false);
        let same_table = || catalog.table(&kept.database_name, &kept.table_name).is_ok_and(|def| Arc::ptr_eq(&def, &kept.def));
        if same_sql_mode && same_table() {
            return Ok(Some((kept, None)));
        }
        context.shared.stmt_reprepares.fetch_add(1, Ordering::Relaxed);
    }
    let sql_mode = match context.plan_slot {
        Some(_) => context.env.system_variable("sql_mode", VariableScope::Default)?,
        None => Value::Null,
    };
    let Some(mut source) = source(select, catalog, context.env.database, Some(context))? else {
        return Ok(None);
    };
    let outputs = outputs(select, Some(&source))?;
    let rows = source.rows.take();
    let database_name = source.database.clone();
    let shape = Arc::new(SelectShape {
        table_name: source.def.name.clone(),
        def: source.def,
        columns: source.columns,
        outputs,
        database_name,
        sql_mode,
    });
    if let (Some(slot), None) = (context.plan_slot, &rows) {
        *slot.0.lock() = Some(Arc::clone(&shape));
    }
    Ok(Some((shape, rows)))
}
