//! What an INSERT does with a row whose primary or unique key another row
//! holds, as MySQL does it: fail with 1062; skip the row with warning
//! 1062 (INSERT IGNORE); delete the rows in its way, then insert it
//! (REPLACE, which counts each deleted row as affected); or update the
//! row in its way (ON DUPLICATE KEY UPDATE, two affected rows for a
//! change, none when the row stays as it was, one with CLIENT_FOUND_ROWS).
//!
//! The row in the way is found by the key that collided, as the engine
//! compares keys (collations included), and locked and read at its latest
//! version, as InnoDB does. The row images say what happened: a Write_rows
//! for an insert, Update_rows for ON DUPLICATE KEY UPDATE, Delete_rows
//! then Write_rows for REPLACE, so a replica or a CDC reader applies the
//! rows without knowing the statement.

use std::ops::Bound;

use engine::{EngineError, Row, ScanSpec, TableDef, Transaction};
use protocol::MysqlError;
use sqlparser::ast::{visit_expressions_mut, AssignmentTarget, Expr, Ident, Insert, InsertAliases, OnInsert};

use crate::error::{engine_error, not_supported, unknown_column, SqlResult};
use crate::eval::columns::coerce_in_table;
use crate::eval::expr::{function_args, function_name, Columns, Scope};
use crate::eval::temporal::{current_timestamp_for, WriteRules};
use crate::session::{Context, Warning, WARNINGS_MAX};

/// The name `VALUES(c)` reads, among the columns an ON DUPLICATE KEY
/// UPDATE assignment sees (no SQL identifier can hold the control byte).
fn inserted_name(column: &str) -> String {
    format!("\u{1}values.{column}")
}

pub enum OnDuplicate {
    Fail,
    Ignore,
    Replace,
    Update(DuplicateUpdate),
}

/// ON DUPLICATE KEY UPDATE's assignments, with `VALUES(c)` rewritten to
/// read the row the INSERT offered.
pub struct DuplicateUpdate {
    assignments: Vec<(usize, Expr)>,
    /// The table's columns, then each again as `VALUES(c)` reads it.
    columns: Columns,
}

impl OnDuplicate {
    /// What `insert` does on a taken key; `targets` are the columns its
    /// values go to, in order (what a row alias's column names name).
    pub fn of(insert: &Insert, def: &TableDef, targets: &[usize]) -> SqlResult<OnDuplicate> {
        Ok(match (&insert.on, insert.replace_into) {
            (Some(OnInsert::DuplicateKeyUpdate(assignments)), false) => {
                let alias = insert.insert_alias.as_ref().map(|alias| RowAlias::of(alias, targets)).transpose()?;
                OnDuplicate::Update(DuplicateUpdate::new(assignments, def, alias.as_ref())?)
            }
            (Some(_), _) => return Err(not_supported("ON CONFLICT")),
            (None, true) => OnDuplicate::Replace,
            (None, false) if insert.ignore => OnDuplicate::Ignore,
            (None, false) => OnDuplicate::Fail,
        })
    }

    /// The columns an update may assign (a partial row image carries them).
    pub fn assigned(&self) -> Vec<usize> {
        match self {
            OnDuplicate::Update(update) => update.assignments.iter().map(|(position, _)| *position).collect(),
            _ => Vec::new(),
        }
    }
}

/// `INSERT ... VALUES (...) AS new [(m, n, ...)]` (MySQL 8.0.19+): the
/// name the offered row goes by in ON DUPLICATE KEY UPDATE (`new.c`), and
/// the names of its values (`m`, or `new.m`), each the table column the
/// value goes to.
struct RowAlias {
    name: String,
    /// (name, table column) per value, when the alias names them.
    columns: Option<Vec<(String, usize)>>,
}

impl RowAlias {
    fn of(alias: &InsertAliases, targets: &[usize]) -> SqlResult<RowAlias> {
        let name = alias.row_alias.0.last().and_then(|part| part.as_ident()).map(|ident| ident.value.clone()).unwrap_or_default();
        let columns = match &alias.col_aliases {
            None => None,
            Some(names) if names.is_empty() => None,
            Some(names) if names.len() != targets.len() => {
                // 1136 ER_WRONG_VALUE_COUNT_ON_ROW, as MySQL says it here.
                return Err(MysqlError::new(1136, "21S01", "Column count doesn't match value count at row 1"));
            }
            Some(names) => Some(names.iter().zip(targets).map(|(ident, &column)| (ident.value.clone(), column)).collect()),
        };
        Ok(RowAlias { name, columns })
    }

    /// The table column an offered value named `column` (after the alias
    /// when `qualified`) is.
    fn column(&self, def: &TableDef, column: &str, qualified: bool) -> Option<usize> {
        match &self.columns {
            Some(columns) => columns.iter().find(|(name, _)| name.eq_ignore_ascii_case(column)).map(|(_, position)| *position),
            None if qualified => def.column_index(column).ok(),
            None => None,
        }
    }
}

impl DuplicateUpdate {
    fn new(assignments: &[sqlparser::ast::Assignment], def: &TableDef, alias: Option<&RowAlias>) -> SqlResult<DuplicateUpdate> {
        let mut planned = Vec::with_capacity(assignments.len());
        for assignment in assignments {
            let AssignmentTarget::ColumnName(target) = &assignment.target else { return Err(not_supported("tuple assignment")) };
            let name = target.0.last().and_then(|part| part.as_ident()).map(|ident| ident.value.clone()).unwrap_or_default();
            let position = def.column_index(&name).map_err(|_| unknown_column(&name, "field list"))?;
            if def.columns[position].attributes.generated.is_some() {
                if crate::eval::generated::is_default(&assignment.value) {
                    continue;
                }
                return Err(crate::eval::generated::value_not_allowed(&def.columns[position].name, &def.name));
            }
            let mut value = assignment.value.clone();
            let mut failure = None;
            let _ = visit_expressions_mut(&mut value, |expr| {
                if let Some(alias) = alias {
                    let offered = match &*expr {
                        Expr::CompoundIdentifier(parts) if parts.len() == 2 && parts[0].value.eq_ignore_ascii_case(&alias.name) => {
                            match alias.column(def, &parts[1].value, true) {
                                Some(position) => Some(position),
                                None => {
                                    failure = Some(unknown_column(&format!("{}.{}", parts[0].value, parts[1].value), "field list"));
                                    None
                                }
                            }
                        }
                        // A value's own name, unless a column of the table has it.
                        Expr::Identifier(ident) if def.column_index(&ident.value).is_err() => alias.column(def, &ident.value, false),
                        _ => None,
                    };
                    if let Some(position) = offered {
                        *expr = Expr::Identifier(Ident::new(inserted_name(&def.columns[position].name)));
                        return std::ops::ControlFlow::<()>::Continue(());
                    }
                }
                if let Expr::Function(function) = expr {
                    if function_name(function) == "VALUES" {
                        match function_args(function).as_deref() {
                            Ok([Some(Expr::Identifier(column))]) if def.column_index(&column.value).is_ok() => {
                                *expr = Expr::Identifier(Ident::new(inserted_name(&column.value)));
                            }
                            Ok([Some(Expr::Identifier(column))]) => failure = Some(unknown_column(&column.value, "field list")),
                            _ => failure = Some(not_supported("VALUES() of other than a column")),
                        }
                    }
                }
                std::ops::ControlFlow::<()>::Continue(())
            });
            if let Some(failure) = failure {
                return Err(failure);
            }
            planned.push((position, value));
        }
        let table = Columns::of_table(def, None);
        let columns = Columns {
            table_names: table.table_names.clone(),
            names: table.names.iter().cloned().chain(def.columns.iter().map(|c| inserted_name(&c.name))).collect(),
            members: table.members.iter().cloned().chain(table.members.iter().cloned()).collect(),
            collations: table.collations.iter().cloned().chain(table.collations.iter().cloned()).collect(),
        };
        Ok(DuplicateUpdate { assignments: planned, columns })
    }
}

/// What writing one row did.
#[derive(Debug, Default)]
pub struct Written {
    /// Rows affected as MySQL counts them.
    pub affected: u64,
    /// The AUTO_INCREMENT value an insert generated.
    pub auto_increment_value: Option<u64>,
    /// The row collided with another (skipped, replaced or updated).
    pub duplicate: bool,
}

/// What writing a row needs of its statement.
pub struct RowWrite<'a, 'c> {
    pub def: &'a TableDef,
    pub context: &'a Context<'c>,
    pub rules: WriteRules,
    pub generation: &'a [(usize, Expr)],
    pub row_columns: &'a Columns,
}

/// Inserts `row`, doing what `on_duplicate` says when a key collides.
pub fn write_row(
    trx: &mut Transaction,
    on_duplicate: &OnDuplicate,
    write: &RowWrite<'_, '_>,
    row: Row,
    warnings: &mut Vec<Warning>,
) -> SqlResult<Written> {
    let def = write.def;
    // REPLACE may delete a row in the way of each unique key, then inserts.
    let mut deleted = 0u64;
    for _ in 0..=def.indexes.len() + 1 {
        let attempt = match on_duplicate {
            OnDuplicate::Fail => return insert(trx, def, row),
            _ => trx.insert(def.id, row.clone()),
        };
        let key = match attempt {
            Ok(inserted) => {
                return Ok(Written { affected: 1 + deleted, auto_increment_value: inserted.auto_increment_value, duplicate: deleted > 0 })
            }
            Err(EngineError::DuplicateEntry { entry, key }) => match on_duplicate {
                OnDuplicate::Ignore => {
                    if warnings.len() < WARNINGS_MAX {
                        warnings.push(Warning {
                            level: "Warning",
                            code: 1062,
                            message: format!("Duplicate entry '{entry}' for key '{key}'"),
                        });
                    }
                    return Ok(Written { duplicate: true, ..Written::default() });
                }
                _ => key,
            },
            Err(error) => return Err(engine_error(error)),
        };
        let (spec, columns) = conflict(def, &key, &row)?;
        let target = key_of(def, &columns, &row);
        let in_the_way = |candidate: &Row| key_of(def, &columns, candidate) == target;
        match on_duplicate {
            OnDuplicate::Replace => deleted += trx.delete_where(def.id, &spec, in_the_way).map_err(engine_error)? as u64,
            OnDuplicate::Update(update) => {
                let mut failure = None;
                let counts = trx
                    .update_where(def.id, &spec, in_the_way, |current| match updated(update, write, current, &row, warnings) {
                        Ok(new_row) => new_row,
                        Err(error) => {
                            failure.get_or_insert(error);
                            current.clone()
                        }
                    })
                    .map_err(engine_error)?;
                if let Some(error) = failure {
                    return Err(error);
                }
                let affected = match (counts.changed, counts.matched) {
                    (0, 0) => continue,
                    (0, _) => u64::from(write.context.env.info.found_rows()),
                    _ => 2,
                };
                return Ok(Written { affected, auto_increment_value: None, duplicate: true });
            }
            OnDuplicate::Fail | OnDuplicate::Ignore => unreachable!("returned above"),
        }
    }
    // Every retry collided again: the last collision is the answer.
    insert(trx, def, row)
}

fn insert(trx: &mut Transaction, def: &TableDef, row: Row) -> SqlResult<Written> {
    let inserted = trx.insert(def.id, row).map_err(engine_error)?;
    Ok(Written { affected: 1, auto_increment_value: inserted.auto_increment_value, duplicate: false })
}

/// The scan that finds the row holding `key` (`table.PRIMARY` or
/// `table.index`, as 1062 names it) with `row`'s values, and the key's
/// columns.
fn conflict(def: &TableDef, key: &str, row: &Row) -> SqlResult<(ScanSpec, Vec<usize>)> {
    let name = key.strip_prefix(&format!("{}.", def.name)).unwrap_or(key);
    let (mut spec, columns) = if name == "PRIMARY" {
        (ScanSpec::primary(), def.primary_key.clone())
    } else {
        let index = def.index(name).map_err(engine_error)?;
        (ScanSpec::index(&index.name), index.columns.clone())
    };
    let values: Vec<_> = columns.iter().map(|&column| row[column].clone()).collect();
    spec.lower = Bound::Included(values.clone());
    spec.upper = Bound::Included(values);
    Ok((spec, columns))
}

/// The key `columns` of `row` as the engine compares them.
fn key_of(def: &TableDef, columns: &[usize], row: &Row) -> Vec<u8> {
    let values: Vec<_> = columns.iter().map(|&column| row[column].clone()).collect();
    engine::key::encode_columns(def, columns, &values)
}

/// The row in the way after ON DUPLICATE KEY UPDATE's assignments, left
/// to right, each seeing the ones before it; then the generated columns
/// and, when the row changed, ON UPDATE CURRENT_TIMESTAMP.
fn updated(
    update: &DuplicateUpdate,
    write: &RowWrite<'_, '_>,
    current: &Row,
    offered: &Row,
    warnings: &mut Vec<Warning>,
) -> SqlResult<Row> {
    let (def, context, rules) = (write.def, write.context, write.rules);
    let mut seen: Vec<_> = current.iter().chain(offered.iter()).cloned().collect();
    for (position, expr) in &update.assignments {
        let value = Scope::for_row(&update.columns, &seen, context.params, &context.env).eval(expr)?;
        seen[*position] = coerce_in_table(def, *position, value, rules, warnings)?;
    }
    seen.truncate(current.len());
    let mut new_row = seen;
    let generate = |new_row: &mut Row, warnings: &mut Vec<Warning>| -> SqlResult<()> {
        for (position, expr) in write.generation {
            let value = Scope::for_row(write.row_columns, new_row, context.params, &context.env).eval(expr)?;
            new_row[*position] = coerce_in_table(def, *position, value, rules, warnings)?;
        }
        Ok(())
    };
    generate(&mut new_row, warnings)?;
    if new_row != *current && def.columns.iter().any(|column| column.current_timestamp.on_update) {
        for (position, column) in def.columns.iter().enumerate() {
            if column.current_timestamp.on_update && !update.assignments.iter().any(|(p, _)| *p == position) {
                new_row[position] = current_timestamp_for(column, rules);
            }
        }
        generate(&mut new_row, warnings)?;
    }
    Ok(new_row)
}
