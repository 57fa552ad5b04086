//! INSERT (VALUES rows or a SELECT), UPDATE and DELETE on one table. Each
//! is statement-atomic (the session undoes a failed statement) and its
//! changes become row events when the transaction commits.

use std::cell::RefCell;

use protocol::OkResponse;
use sqlparser::ast::{AssignmentTarget, Delete, FromTable, Insert, SetExpr, TableFactor, TableObject, Update};

use crate::error::{engine_error, no_default, not_supported, syntax_error, unknown_column, value_count, SqlResult};
use crate::eval::columns::{coerce_in_table, implicit_default};
use crate::eval::expr::Environment as _;
use crate::eval::expr::{Columns, Scope};
use crate::eval::temporal::{current_timestamp_for, WriteRules};
use crate::eval::value::Value;
use crate::exec::dispatch::{table_def, table_name};
use crate::exec::insert_conflicts::{write_row, OnDuplicate, RowWrite, Written};
use crate::exec::partial_json::PartialJson;
use crate::session::{Context, Outcome, Transactions, Warning, WARNINGS_MAX};

pub fn insert(insert: &Insert, context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    if insert.returning.is_some() {
        return Err(not_supported("INSERT ... RETURNING"));
    }
    let TableObject::TableName(name) = &insert.table else {
        return Err(not_supported("INSERT INTO TABLE FUNCTION"));
    };
    let (database, table) = table_name(name, context)?;
    let def = table_def(context, &database, &table)?;
    // `INSERT ... SET c = v, ...` is one row of values for those columns.
    let set_columns: Vec<&sqlparser::ast::ObjectName> = insert
        .assignments
        .iter()
        .map(|assignment| match &assignment.target {
            AssignmentTarget::ColumnName(name) => Ok(name),
            _ => Err(not_supported("tuple assignment")),
        })
        .collect::<SqlResult<_>>()?;
    let named: Vec<&sqlparser::ast::ObjectName> = if set_columns.is_empty() { insert.columns.iter().collect() } else { set_columns };
    let mut targets = Vec::with_capacity(named.len());
    for column in &named {
        let column_name = column.0.last().and_then(|part| part.as_ident()).map(|ident| ident.value.clone()).unwrap_or_default();
        let position = def.column_index(&column_name).map_err(|_| unknown_column(&column_name, "field list"))?;
        targets.push(position);
    }
    if named.is_empty() {
        // Without a column list, the values are the visible columns'.
        targets = (0..def.columns.len()).filter(|&position| !def.columns[position].attributes.invisible).collect();
    }
    let on_duplicate = OnDuplicate::of(insert, &def, &targets)?;
    let set_values: Vec<Vec<sqlparser::ast::Expr>> = vec![insert.assignments.iter().map(|assignment| assignment.value.clone()).collect()];
    let source = match &insert.source {
        Some(source) => Some(source.as_ref()),
        None if !insert.assignments.is_empty() => None,
        None => return Err(syntax_error(&insert.to_string())),
    };
    let no_columns = Columns::default();
    let constants = context.constants(&no_columns);
    let mut rules = WriteRules::for_columns(&context.env, &def.columns);
    // IGNORE turns the errors a value gets into warnings, as outside
    // strict mode.
    if insert.ignore {
        rules.mode.strict = false;
    }
    let mut warnings = Vec::new();

    let generation = crate::eval::generated::expressions(&def)?;
    let default_expressions = crate::eval::default_expressions::expressions(&def)?;
    let row_columns = Columns::of_table(&def, None);
    let is_generated = |position: usize| def.columns[position].attributes.generated.is_some();

    let write = RowWrite { def: &def, context, rules, generation: &generation, row_columns: &row_columns };
    let (written, first_id) = transaction.write_assigning(context, &on_duplicate.assigned(), |trx| {
        // Rows of values in target order; a generated column takes only
        // DEFAULT (its value is computed below).
        let body = source.map(|source| source.body.as_ref());
        let value_rows: Vec<Vec<Value>> = match body {
            None | Some(SetExpr::Values(_)) => {
                let expr_rows: Vec<&[sqlparser::ast::Expr]> = match body {
                    Some(SetExpr::Values(values)) => values.rows.iter().map(|row| row.content.as_slice()).collect(),
                    _ => set_values.iter().map(Vec::as_slice).collect(),
                };
                let mut rows = Vec::with_capacity(expr_rows.len());
                for exprs in expr_rows {
                    let mut row = Vec::with_capacity(exprs.len());
                    for (index, expr) in exprs.iter().enumerate() {
                        match targets.get(index) {
                            Some(&position) if is_generated(position) => {
                                if !crate::eval::generated::is_default(expr) {
                                    return Err(crate::eval::generated::value_not_allowed(&def.columns[position].name, &def.name));
                                }
                                row.push(Value::Null);
                            }
                            _ => row.push(constants.eval(expr)?),
                        }
                    }
                    rows.push(row);
                }
                rows
            }
            Some(SetExpr::Select(_)) if targets.iter().any(|&position| is_generated(position)) => {
                let position = targets.iter().copied().find(|&position| is_generated(position)).expect("checked by the guard");
                return Err(crate::eval::generated::value_not_allowed(&def.columns[position].name, &def.name));
            }
            Some(SetExpr::Select(_)) => {
                let source = source.expect("a SELECT body has its query");
                let result = crate::exec::select::run(source, context, Some(trx))?;
                result.rows.iter().map(|row| row.iter().map(crate::eval::value::from_wire).collect()).collect()
            }
            _ => return Err(not_supported("INSERT from this kind of query")),
        };
        let mut first_id = None;
        let count = value_rows.len() as u64;
        let mut written = Written::default();
        let mut duplicates = 0u64;
        for (number, values) in value_rows.into_iter().enumerate() {
            // `VALUES ()` without a column list: every column its default.
            let targets: &[usize] = if values.is_empty() && insert.columns.is_empty() { &[] } else { &targets };
            if values.len() != targets.len() {
                return Err(value_count(number + 1));
            }
            let mut row: Vec<Option<Value>> = vec![None; def.columns.len()];
            let rules = rules.at_row(number as u64 + 1);
            for (position, value) in targets.iter().zip(values) {
                if !is_generated(*position) {
                    row[*position] = Some(coerce_in_table(&def, *position, value, rules, &mut warnings)?);
                }
            }
            let given: Vec<bool> = row.iter().map(Option::is_some).collect();
            let mut full = Vec::with_capacity(row.len());
            for (position, value) in row.into_iter().enumerate() {
                let column = &def.columns[position];
                let value = match value {
                    Some(value) => value,
                    None if column.attributes.generated.is_some() || column.attributes.default_expression.is_some() => Value::Null,
                    None if column.current_timestamp.on_insert => current_timestamp_for(column, rules),
                    None => match column.default.clone().or_else(|| implicit_default(column)) {
                        Some(value) => value,
                        None => return Err(no_default(&column.name)),
                    },
                };
                full.push(value);
            }
            for (position, expr) in default_expressions.iter().filter(|(position, _)| !given[*position]) {
                let value = Scope::for_row(&row_columns, &full, context.params, &context.env).eval(expr)?;
                full[*position] = coerce_in_table(&def, *position, value, rules, &mut warnings)?;
            }
            for (position, expr) in &generation {
                let value = Scope::for_row(&row_columns, &full, context.params, &context.env).eval(expr)?;
                full[*position] = coerce_in_table(&def, *position, value, rules, &mut warnings)?;
            }
            let row_written = write_row(trx, &on_duplicate, &write, full, &mut warnings)?;
            if first_id.is_none() {
                first_id = row_written.auto_increment_value;
            }
            written.affected += row_written.affected;
            duplicates += u64::from(row_written.duplicate);
        }
        written.duplicate = duplicates > 0;
        Ok(((written.affected, count, duplicates), first_id))
    })?;
    let (affected, records, duplicates) = written;
    let mut ok = OkResponse::affected(affected);
    if records > 1 {
        ok.info = format!("Records: {records}  Duplicates: {duplicates}  Warnings: {}", warnings.len());
    }
    ok.last_insert_id = first_id.unwrap_or(0);
    let mut outcome = Outcome::new(ok);
    outcome.last_insert_id = first_id;
    warnings.truncate(WARNINGS_MAX);
    outcome.warnings = warnings;
    Ok(outcome)
}

fn single_table(relation: &TableFactor) -> SqlResult<(&sqlparser::ast::ObjectName, Option<String>)> {
    match relation {
        TableFactor::Table { name, alias, args: None, .. } => Ok((name, alias.as_ref().map(|a| a.name.value.clone()))),
        _ => Err(not_supported("this kind of table reference")),
    }
}

pub fn update(update: &Update, context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    if !update.table.joins.is_empty() || update.from.is_some() || update.returning.is_some() {
        return Err(not_supported("multi-table UPDATE or UPDATE ... RETURNING"));
    }
    let (name, alias) = single_table(&update.table.relation)?;
    let (database, table) = table_name(name, context)?;
    let def = table_def(context, &database, &table)?;
    let columns = Columns::of_table(&def, alias.as_deref());
    let mut assignments = Vec::with_capacity(update.assignments.len());
    for assignment in &update.assignments {
        let AssignmentTarget::ColumnName(target) = &assignment.target else {
            return Err(not_supported("tuple assignment"));
        };
        let column_name = target.0.last().and_then(|part| part.as_ident()).map(|ident| ident.value.clone()).unwrap_or_default();
        let position = def.column_index(&column_name).map_err(|_| unknown_column(&column_name, "field list"))?;
        if def.columns[position].attributes.generated.is_some() {
            // DEFAULT leaves a generated column to its expression.
            if !crate::eval::generated::is_default(&assignment.value) {
                return Err(crate::eval::generated::value_not_allowed(&def.columns[position].name, &def.name));
            }
            continue;
        }
        assignments.push((position, &assignment.value));
    }
    let generation = crate::eval::generated::expressions(&def)?;
    let no_columns = Columns::default();
    let spec = crate::exec::plan::scan_spec(&def, update.selection.as_ref(), &context.constants(&no_columns));
    let failure = RefCell::new(None);
    let rules = WriteRules::for_columns(&context.env, &def.columns);
    let warnings: RefCell<Vec<Warning>> = RefCell::new(Vec::new());
    let row_number = std::cell::Cell::new(0u64);
    let mut assigned: Vec<usize> = assignments.iter().map(|(position, _)| *position).collect();
    // The generated columns that read an assigned one are written too.
    let regenerated = crate::eval::generated::written_by_update(&def.columns, &generation, &assigned);
    assigned.extend(regenerated);
    let limited = crate::exec::row_limit::plan(&def, spec.clone(), &update.order_by, update.limit.as_ref(), context)?;
    let logs_partial_json = crate::variables::row_logging::statement_row_logging(context.db(), context.env.variables).partial_json;
    let partial_json = PartialJson::plan(&def, &columns, &assignments, logs_partial_json);
    let json_diffs = RefCell::new(Vec::new());
    let counts = transaction.write_updating(context, &assigned, &json_diffs, |trx| {
        // A LIMIT: the first rows in key order, locked as they are found,
        // are the rows the update may change.
        let chosen: Option<std::collections::HashSet<engine::RowKey>> = match &limited {
            None => None,
            Some((spec, count)) => {
                let read = engine::LockingRead { skip_locked: false, limit: Some(*count) };
                let rows = trx.lock_rows_where(def.id, spec, read, |row| match &update.selection {
                    None => true,
                    Some(selection) => {
                        Scope::for_row(&columns, row, context.params, &context.env).is_true(selection).unwrap_or_else(|error| {
                            failure.borrow_mut().get_or_insert(error);
                            false
                        })
                    }
                });
                Some(rows.map_err(engine_error)?.iter().map(|row| engine::RowKey::of_row(&def, row)).collect())
            }
        };
        let spec = limited.as_ref().map_or(&spec, |(spec, _)| spec);
        let result = trx.update_where(
            def.id,
            spec,
            |row| match &update.selection {
                _ if chosen.as_ref().is_some_and(|chosen| !chosen.contains(&engine::RowKey::of_row(&def, row))) => false,
                _ if context.env.is_query_killed() => {
                    failure.borrow_mut().get_or_insert(protocol::MysqlError::query_interrupted());
                    false
                }
                None => true,
                Some(selection) => Scope::for_row(&columns, row, context.params, &context.env).is_true(selection).unwrap_or_else(|error| {
                    failure.borrow_mut().get_or_insert(error);
                    false
                }),
            },
            |row| {
                // MySQL assigns left to right, later assignments seeing earlier ones.
                row_number.set(row_number.get() + 1);
                let rules = rules.at_row(row_number.get());
                let mut new_row = row.clone();
                let mut row_diffs = partial_json.as_ref().map(PartialJson::row);
                for (position, expr) in &assignments {
                    let scope = Scope::for_row(&columns, &new_row, context.params, &context.env);
                    let value = match &mut row_diffs {
                        Some(row_diffs) => row_diffs.eval(*position, expr, &scope),
                        None => scope.eval(expr),
                    };
                    let coerce = |value| coerce_in_table(&def, *position, value, rules, &mut warnings.borrow_mut());
                    let stored = value.and_then(|value| match row_diffs.as_mut() {
                        // Diffs tell what the functions made, not what was stored instead.
                        Some(row_diffs) => coerce(value.clone()).inspect(|stored| {
                            if *stored != value {
                                row_diffs.disable(*position);
                            }
                        }),
                        None => coerce(value),
                    });
                    match stored {
                        Ok(value) => new_row[*position] = value,
                        Err(error) => {
                            failure.borrow_mut().get_or_insert(error);
                            return row.clone();
                        }
                    }
                }
                // Generated columns follow the assigned values, and again
                // any ON UPDATE CURRENT_TIMESTAMP value, as MySQL computes
                // them both after fill_record and after the default functions.
                let generate = |new_row: &mut engine::Row| -> SqlResult<()> {
                    for (position, expr) in &generation {
                        let value = Scope::for_row(&columns, new_row, context.params, &context.env).eval(expr)?;
                        new_row[*position] = coerce_in_table(&def, *position, value, rules, &mut warnings.borrow_mut())?;
                    }
                    Ok(())
                };
                if let Err(error) = generate(&mut new_row) {
                    failure.borrow_mut().get_or_insert(error);
                    return row.clone();
                }
                // ON UPDATE CURRENT_TIMESTAMP: when the row changes and the
                // statement did not set the column itself.
                if new_row != *row && def.columns.iter().any(|column| column.current_timestamp.on_update) {
                    for (position, column) in def.columns.iter().enumerate() {
                        if column.current_timestamp.on_update && !assignments.iter().any(|(p, _)| *p == position) {
                            new_row[position] = current_timestamp_for(column, rules);
                        }
                    }
                    if let Err(error) = generate(&mut new_row) {
                        failure.borrow_mut().get_or_insert(error);
                        return row.clone();
                    }
                }
                // A row the engine changes gets a change, and with it its diffs.
                if let Some(row_diffs) = row_diffs.filter(|_| new_row != *row) {
                    json_diffs.borrow_mut().push(row_diffs.finish());
                }
                new_row
            },
        );
        if let Some(error) = failure.borrow_mut().take() {
            return Err(error);
        }
        result.map_err(engine_error)
    })?;
    let affected = if context.env.info.found_rows() { counts.matched } else { counts.changed };
    let mut warnings = warnings.into_inner();
    let mut ok = OkResponse::affected(affected as u64);
    ok.info = format!("Rows matched: {}  Changed: {}  Warnings: {}", counts.matched, counts.changed, warnings.len());
    let mut outcome = Outcome::new(ok);
    warnings.truncate(WARNINGS_MAX);
    outcome.warnings = warnings;
    Ok(outcome)
}

pub fn delete(delete: &Delete, context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let tables = match &delete.from {
        FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables) => tables,
    };
    if !delete.tables.is_empty() || delete.using.is_some() || delete.returning.is_some() {
        return Err(not_supported("multi-table DELETE or DELETE ... RETURNING"));
    }
    let [table] = tables.as_slice() else { return Err(not_supported("multi-table DELETE")) };
    if !table.joins.is_empty() {
        return Err(not_supported("multi-table DELETE"));
    }
    let (name, alias) = single_table(&table.relation)?;
    let (database, table) = table_name(name, context)?;
    let def = table_def(context, &database, &table)?;
    let columns = Columns::of_table(&def, alias.as_deref());
    let no_columns = Columns::default();
    let spec = crate::exec::plan::scan_spec(&def, delete.selection.as_ref(), &context.constants(&no_columns));
    let limited = crate::exec::row_limit::plan(&def, spec.clone(), &delete.order_by, delete.limit.as_ref(), context)?;
    let failure = RefCell::new(None);
    let matches = |row: &engine::Row| match &delete.selection {
        _ if context.env.is_query_killed() => {
            failure.borrow_mut().get_or_insert(protocol::MysqlError::query_interrupted());
            false
        }
        None => true,
        Some(selection) => {
            let scope = Scope::for_row(&columns, row, context.params, &context.env);
            scope.is_true(selection).unwrap_or_else(|error| {
                failure.borrow_mut().get_or_insert(error);
                false
            })
        }
    };
    let deleted = transaction.write(context, |trx| {
        let result = match &limited {
            None => trx.delete_where(def.id, &spec, matches),
            // The first rows in key order, locked as they are found.
            Some((spec, count)) => {
                let read = engine::LockingRead { skip_locked: false, limit: Some(*count) };
                trx.lock_rows_where(def.id, spec, read, matches).and_then(|rows| {
                    let mut deleted = 0;
                    for row in rows {
                        deleted += usize::from(trx.delete(def.id, &engine::RowKey::of_row(&def, &row))?);
                    }
                    Ok(deleted)
                })
            }
        };
        if let Some(error) = failure.borrow_mut().take() {
            return Err(error);
        }
        result.map_err(engine_error)
    })?;
    Ok(Outcome::new(OkResponse::affected(deleted as u64)))
}
