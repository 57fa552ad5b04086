//! SELECT: one table or none; WHERE through an index range (`plan.rs`);
//! aggregates (COUNT/SUM/AVG/MIN/MAX) with a simple GROUP BY; DISTINCT;
//! ORDER BY (expressions, aliases, positions); LIMIT / OFFSET.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use database::Catalog;
use engine::{TableDef, Transaction};
use protocol::{ColumnDefinition, ColumnType as WireType, QueryResponse, ResultSet};
use sqlparser::ast::{
    visit_expressions, Distinct, Expr, Function, GroupByExpr, LimitClause, OrderByKind, Query, Select, SelectItem, SetExpr, TableFactor,
    Value as Literal,
};

use super::select_output::{Cell, OutputRows, SortKey};
use super::select_stream;
use crate::error::{not_supported, syntax_error, SqlResult};
use crate::eval::columns::column_definition;
use crate::eval::expr::Environment as _;
use crate::eval::expr::{function_args, function_name, int_value, is_aggregate, Columns, Scope};
use crate::eval::group_concat;
use crate::eval::value::{append_group_key, sort_order_in, to_number, to_text, NullCheck, Number, Value};
use crate::session::Context;
use crate::variables::{definition, Type};
use engine::collation::Collation;

/// One output column: how to compute it and how to describe it.
#[derive(Clone)]
pub(super) struct Output {
    pub(super) expr: Expr,
    /// The source column `expr` names plainly (`c`, `t.c`, a `*`'s
    /// columns), found once per statement instead of by name per row.
    column: Option<usize>,
    name: String,
    pub(super) definition: ColumnDefinition,
}

impl Output {
    /// This output's value for the row `scope` reads.
    pub(super) fn value(&self, scope: &Scope<'_>) -> SqlResult<Value> {
        match (self.column, scope.row) {
            (Some(position), Some(row)) => Ok(scope.column(position, row)),
            _ => scope.eval(&self.expr),
        }
    }
    /// This output's value for the row `scope` reads, as a cell: the
    /// row's column where it is read as stored, else computed.
    fn cell(&self, scope: &Scope<'_>) -> SqlResult<Cell> {
        match (self.column, scope.row) {
            (Some(position), Some(row)) if scope.reads_as_stored(position, row) => Ok(Cell::Column(position)),
            _ => self.value(scope).map(Cell::Computed),
        }
    }
}

/// Whether an output calls GROUP_CONCAT.
fn has_group_concat(outputs: &[Output]) -> bool {
    outputs.iter().any(|output| matches!(&output.expr, Expr::Function(function) if function_name(function) == "GROUP_CONCAT"))
}

/// The column a plain reference (`c`, `t.c`) names, found as
/// [`Scope`] finds it; `None` for anything else (`@x`, `@@x`, `other.c`).
fn plain_column(expr: &Expr, columns: &Columns) -> Option<usize> {
    match expr {
        Expr::Identifier(ident) if !ident.value.starts_with('@') => columns.position(&ident.value),
        Expr::CompoundIdentifier(parts)
            if parts.len() == 2 && columns.table_names.iter().any(|name| name.eq_ignore_ascii_case(&parts[0].value)) =>
        {
            columns.position(&parts[1].value)
        }
        _ => None,
    }
}

/// The single table a SELECT reads, if any.
pub(super) struct Source {
    /// The table's database, as named or the current one.
    pub(super) database: String,
    pub(super) def: Arc<TableDef>,
    pub(super) columns: Columns,
    /// An INFORMATION_SCHEMA table's rows, built when the statement
    /// started; `None` for a stored table, scanned through the engine.
    pub(super) rows: Option<Vec<Vec<Value>>>,
}

/// The SELECT of `query`; its FOR UPDATE / FOR SHARE clauses are
/// `select_locking.rs`'s to check.
pub(super) fn the_select(query: &Query) -> SqlResult<&Select> {
    if query.with.is_some() || query.fetch.is_some() {
        return Err(not_supported("WITH or FETCH in SELECT"));
    }
    match query.body.as_ref() {
        SetExpr::Select(select) => Ok(select),
        SetExpr::Query(_) => Err(not_supported("parenthesized SELECT")),
        _ => Err(not_supported("UNION and set operations")),
    }
}

pub(super) fn source(
    select: &Select,
    catalog: Catalog<'_>,
    database: Option<&str>,
    viewer: Option<&Context<'_>>,
) -> SqlResult<Option<Source>> {
    match select.from.as_slice() {
        [] => Ok(None),
        [table] if table.joins.is_empty() => {
            let TableFactor::Table { name, alias, args: None, .. } = &table.relation else {
                return Err(not_supported("subqueries and table functions in FROM"));
            };
            let parts: Vec<String> = name.0.iter().map(|part| part.as_ident().map(|i| i.value.clone()).unwrap_or_default()).collect();
            let (database, table_name) = match parts.as_slice() {
                [table] => (database.ok_or_else(crate::error::no_database)?.to_string(), table.clone()),
                [database, table] => (database.clone(), table.clone()),
                _ => return Err(syntax_error(&name.to_string())),
            };
            let (def, rows) = match crate::information_schema::is_information_schema(&database) {
                true => {
                    let table = crate::information_schema::table(&table_name, catalog, viewer)?;
                    (table.def, Some(table.rows))
                }
                false => (catalog.table(&database, &table_name).map_err(crate::error::engine_error)?, None),
            };
            let columns = Columns::of_table(&def, alias.as_ref().map(|alias| alias.name.value.as_str()));
            Ok(Some(Source { database, def, columns, rows }))
        }
        _ => Err(not_supported("joins")),
    }
}

/// The column name MySQL shows for an unaliased expression.
fn display_name(expr: &Expr) -> String {
    match expr {
        Expr::Identifier(ident) => ident.value.clone(),
        Expr::CompoundIdentifier(parts) if !parts[0].value.starts_with("@@") => parts.last().map(|p| p.value.clone()).unwrap_or_default(),
        Expr::Value(value) => match &value.value {
            Literal::SingleQuotedString(s) | Literal::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

fn static_type(expr: &Expr, source: Option<&Source>) -> WireType {
    use WireType::*;
    match expr {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            let parts: Vec<sqlparser::ast::Ident> = match expr {
                Expr::Identifier(ident) => vec![ident.clone()],
                Expr::CompoundIdentifier(parts) => parts.clone(),
                _ => unreachable!(),
            };
            if let Some((name, _)) = crate::eval::expr::system_variable_reference(&parts) {
                return match definition(&name).map(|d| d.value_type) {
                    Some(Type::Integer | Type::Boolean) => MYSQL_TYPE_LONGLONG,
                    _ => MYSQL_TYPE_VAR_STRING,
                };
            }
            let name = &parts[parts.len() - 1].value;
            match source.and_then(|s| s.def.column_index(name).ok().map(|p| (s, p))) {
                Some((source, position)) => crate::eval::columns::wire_type(&source.def.columns[position].column_type),
                None => MYSQL_TYPE_VAR_STRING,
            }
        }
        Expr::Value(value) => match &value.value {
            Literal::Number(text, _) if text.contains(['.', 'e', 'E']) => MYSQL_TYPE_NEWDECIMAL,
            Literal::Number(..) | Literal::Boolean(_) => MYSQL_TYPE_LONGLONG,
            Literal::Null => MYSQL_TYPE_NULL,
            _ => MYSQL_TYPE_VAR_STRING,
        },
        Expr::Nested(inner) => static_type(inner, source),
        Expr::BinaryOp { left, op, right } => {
            use sqlparser::ast::BinaryOperator::*;
            // Date arithmetic: a date or a datetime, as text.
            if matches!(op, Plus | Minus) && (matches!(**left, Expr::Interval(_)) || matches!(**right, Expr::Interval(_))) {
                return MYSQL_TYPE_VAR_STRING;
            }
            // `j->'$.n' + 1` parses as `j -> ('$.n' + 1)`; typed as the
            // evaluator reads it, `(j->'$.n') + 1`.
            if let (Arrow | LongArrow, Expr::BinaryOp { left: path, op: outer, right: rest }) = (op, right.as_ref()) {
                let operand = Expr::BinaryOp { left: left.clone(), op: op.clone(), right: path.clone() };
                return static_type(&Expr::BinaryOp { left: Box::new(operand), op: outer.clone(), right: rest.clone() }, source);
            }
            match op {
                Plus | Minus | Multiply | Modulo | MyIntegerDivide => {
                    let integer = |t: WireType| {
                        matches!(t, MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_INT24 | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG)
                    };
                    if integer(static_type(left, source)) && integer(static_type(right, source)) {
                        MYSQL_TYPE_LONGLONG
                    } else {
                        MYSQL_TYPE_DOUBLE
                    }
                }
                Divide => MYSQL_TYPE_DOUBLE,
                Arrow => MYSQL_TYPE_JSON,
                LongArrow => MYSQL_TYPE_VAR_STRING,
                _ => MYSQL_TYPE_LONGLONG,
            }
        }
        Expr::UnaryOp { expr, .. } => static_type(expr, source),
        Expr::Cast { data_type, .. } | Expr::Convert { data_type: Some(data_type), .. } => cast_type(data_type),
        Expr::Floor { expr, .. } | Expr::Ceil { expr, .. } => match static_type(expr, source) {
            t if is_integer(t) => MYSQL_TYPE_LONGLONG,
            MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => MYSQL_TYPE_DOUBLE,
            _ => MYSQL_TYPE_LONGLONG,
        },
        Expr::Case { conditions, else_result, .. } => {
            shared_type(conditions.iter().map(|when| &when.result).chain(else_result.as_deref()), source)
        }
        Expr::Collate { expr, .. } => static_type(expr, source),
        Expr::IsNull(_) | Expr::IsNotNull(_) | Expr::Between { .. } | Expr::In { .. } | Expr::Like { .. } => MYSQL_TYPE_LONGLONG,
        Expr::Function(function) => match function_name(function).as_str() {
            "COUNT" | "LENGTH" | "OCTET_LENGTH" | "CHAR_LENGTH" | "CHARACTER_LENGTH" | "CONNECTION_ID" | "LAST_INSERT_ID" => {
                MYSQL_TYPE_LONGLONG
            }
            "SUM" | "AVG" => match first_arg(function).map(|arg| static_type(arg, source)) {
                Some(MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE) => MYSQL_TYPE_DOUBLE,
                _ => MYSQL_TYPE_NEWDECIMAL,
            },
            "LOCATE" | "INSTR" | "CRC32" | "STRCMP" | "SIGN" => MYSQL_TYPE_LONGLONG,
            "POW" | "POWER" | "SQRT" | "EXP" | "LN" | "LOG" | "LOG2" | "LOG10" | "PI" | "DEGREES" | "RADIANS" | "RAND" => MYSQL_TYPE_DOUBLE,
            "ROUND" | "TRUNCATE" | "FLOOR" | "CEIL" | "CEILING" => match first_arg(function).map(|arg| static_type(arg, source)) {
                Some(t) if is_integer(t) => MYSQL_TYPE_LONGLONG,
                Some(MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE) => MYSQL_TYPE_DOUBLE,
                _ => MYSQL_TYPE_NEWDECIMAL,
            },
            "GREATEST" | "LEAST" => match function_args(function) {
                Ok(args) => shared_type(args.into_iter().flatten(), source),
                Err(_) => MYSQL_TYPE_VAR_STRING,
            },
            "NULLIF" => first_arg(function).map_or(MYSQL_TYPE_VAR_STRING, |arg| static_type(arg, source)),
            "IF" => match function_args(function).as_deref() {
                Ok([_, Some(then), Some(otherwise)]) => shared_type([*then, *otherwise].into_iter(), source),
                _ => MYSQL_TYPE_VAR_STRING,
            },
            "MIN" | "MAX" | "ABS" => first_arg(function).map_or(MYSQL_TYPE_VAR_STRING, |arg| static_type(arg, source)),
            "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" | "SYSDATE" | "UTC_TIMESTAMP" => MYSQL_TYPE_DATETIME,
            "CURDATE" | "CURRENT_DATE" | "DATE" | "LAST_DAY" | "FROM_DAYS" | "MAKEDATE" => MYSQL_TYPE_DATE,
            "YEAR" | "MONTH" | "DAY" | "DAYOFMONTH" | "HOUR" | "MINUTE" | "SECOND" | "MICROSECOND" | "QUARTER" | "DAYOFWEEK"
            | "WEEKDAY" | "DAYOFYEAR" | "DATEDIFF" | "TIMESTAMPDIFF" | "TO_DAYS" | "TIME_TO_SEC" => MYSQL_TYPE_LONGLONG,
            "FROM_UNIXTIME" if function_args(function).is_ok_and(|args| args.len() == 1) => MYSQL_TYPE_DATETIME,
            "SEC_TO_TIME" => MYSQL_TYPE_TIME,
            "CURTIME" | "CURRENT_TIME" => MYSQL_TYPE_TIME,
            "UNIX_TIMESTAMP" if first_arg(function).is_none() => MYSQL_TYPE_LONGLONG,
            name if crate::eval::json_functions::RETURNING_JSON.contains(&name) => MYSQL_TYPE_JSON,
            name if crate::eval::json_functions::RETURNING_INTEGER.contains(&name) => MYSQL_TYPE_LONGLONG,
            name if crate::eval::spatial::RETURNING_GEOMETRY.contains(&name) => MYSQL_TYPE_GEOMETRY,
            name if crate::eval::spatial::RETURNING_DOUBLE.contains(&name) => MYSQL_TYPE_DOUBLE,
            _ => MYSQL_TYPE_VAR_STRING,
        },
        _ => MYSQL_TYPE_VAR_STRING,
    }
}

/// The type of a CAST's result.
fn cast_type(data_type: &sqlparser::ast::DataType) -> WireType {
    use sqlparser::ast::DataType as D;
    use WireType::*;
    match data_type {
        D::JSON => MYSQL_TYPE_JSON,
        D::Signed | D::SignedInteger | D::Unsigned | D::UnsignedInteger => MYSQL_TYPE_LONGLONG,
        D::Date => MYSQL_TYPE_DATE,
        D::Datetime(_) => MYSQL_TYPE_DATETIME,
        D::Time(..) => MYSQL_TYPE_TIME,
        D::Decimal(_) | D::Numeric(_) | D::Dec(_) => MYSQL_TYPE_NEWDECIMAL,
        D::Double(_) | D::DoublePrecision | D::Real => MYSQL_TYPE_DOUBLE,
        D::Float(_) => MYSQL_TYPE_FLOAT,
        _ => MYSQL_TYPE_VAR_STRING,
    }
}

/// The type CASE's or IF()'s branches share (NULL fits any), else a string.
fn shared_type<'e>(branches: impl Iterator<Item = &'e Expr>, source: Option<&Source>) -> WireType {
    use WireType::*;
    let mut shared = MYSQL_TYPE_NULL;
    for branch in branches {
        shared = match (shared, static_type(branch, source)) {
            (MYSQL_TYPE_NULL, t) | (t, MYSQL_TYPE_NULL) => t,
            (a, b) if a == b => a,
            (a, b) if is_integer(a) && is_integer(b) => MYSQL_TYPE_LONGLONG,
            _ => MYSQL_TYPE_VAR_STRING,
        };
    }
    if shared == MYSQL_TYPE_NULL {
        MYSQL_TYPE_VAR_STRING
    } else {
        shared
    }
}

fn is_integer(column_type: WireType) -> bool {
    use WireType::*;
    matches!(column_type, MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_INT24 | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG)
}

fn first_arg(function: &Function) -> Option<&Expr> {
    function_args(function).ok()?.into_iter().next().flatten()
}

pub(super) fn outputs(select: &Select, source: Option<&Source>) -> SqlResult<Vec<Output>> {
    let mut outputs = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                let source = source.ok_or_else(|| protocol::MysqlError::new(1096, "HY000", "No tables used"))?;
                // `*` leaves INVISIBLE columns out, as MySQL's.
                for (position, column) in source.def.columns.iter().enumerate().filter(|(_, column)| !column.attributes.invisible) {
                    outputs.push(Output {
                        expr: Expr::Identifier(sqlparser::ast::Ident::new(column.name.clone())),
                        column: Some(position),
                        name: column.name.clone(),
                        definition: column_definition(&source.def, position, None),
                    });
                }
            }
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => {
                let alias = match item {
                    SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
                    _ => None,
                };
                let name = alias.clone().unwrap_or_else(|| display_name(expr));
                // A plain column (`c`, `t.c`): found once, for its
                // definition and for where each row holds its value.
                let column = source.and_then(|source| plain_column(expr, &source.columns));
                let definition = match (column, source) {
                    (Some(position), Some(source)) => column_definition(&source.def, position, Some(&name)),
                    _ => {
                        let column_type = static_type(expr, source);
                        let mut definition = ColumnDefinition::new(name.clone(), column_type);
                        if column_type == WireType::MYSQL_TYPE_VAR_STRING {
                            definition = ColumnDefinition::varchar(name.clone());
                        }
                        if is_integer(column_type) && super::result_unsigned::is_unsigned(expr, source) {
                            definition = definition.with_flags(protocol::ColumnFlags::UNSIGNED_FLAG);
                        }
                        if column_type == WireType::MYSQL_TYPE_NEWDECIMAL {
                            definition = definition.with_decimals(4).with_length(66);
                        }
                        if let (WireType::MYSQL_TYPE_DATETIME | WireType::MYSQL_TYPE_TIME, Expr::Function(function)) = (column_type, expr) {
                            // NOW(fsp), CURTIME(fsp): that many digits.
                            let fsp = match first_arg(function) {
                                Some(Expr::Value(value)) => match &value.value {
                                    Literal::Number(digits, _) => digits.parse().unwrap_or(0),
                                    _ => 0,
                                },
                                _ => 0,
                            };
                            definition = crate::eval::temporal_columns::with_precision(definition, fsp.min(6));
                        }
                        definition
                    }
                };
                outputs.push(Output { expr: expr.clone(), column, name, definition });
            }
            other => return Err(not_supported(other.to_string())),
        }
    }
    Ok(outputs)
}

/// The columns a SELECT will return, without running it (COM_STMT_PREPARE).
pub fn describe(query: &Query, catalog: Catalog<'_>, database: Option<&str>) -> SqlResult<Vec<ColumnDefinition>> {
    let select = the_select(query)?;
    let source = source(select, catalog, database, None)?;
    let mut outputs = outputs(select, source.as_ref())?;
    // Described before any session value applies: the default length.
    type_group_concats(&mut outputs, source.as_ref().map(|source| source.def.as_ref()), group_concat::MAX_LENGTH_BYTES_DEFAULT);
    Ok(outputs.into_iter().map(|output| output.definition).collect())
}

/// GROUP_CONCAT outputs get their column type from `group_concat_max_len`
/// (`max_length_bytes`) and whether an argument is a binary string column.
fn type_group_concats(outputs: &mut [Output], def: Option<&TableDef>, max_length_bytes: u64) {
    for output in outputs {
        let Expr::Function(function) = &output.expr else { continue };
        if function_name(function) != "GROUP_CONCAT" {
            continue;
        }
        let binary = function_args(function).unwrap_or_default().into_iter().flatten().any(|arg| {
            let name = match arg {
                Expr::Identifier(ident) => &ident.value,
                Expr::CompoundIdentifier(parts) => &parts[parts.len() - 1].value,
                _ => return false,
            };
            def.and_then(|def| def.column_index(name).ok().map(|position| column_definition(def, position, None))).is_some_and(|column| {
                column.character_set == protocol::resultset::BINARY_CHARSET
                    && matches!(
                        column.column_type,
                        WireType::MYSQL_TYPE_VAR_STRING
                            | WireType::MYSQL_TYPE_STRING
                            | WireType::MYSQL_TYPE_VARCHAR
                            | WireType::MYSQL_TYPE_BLOB
                    )
            })
        });
        output.definition = group_concat::definition(&output.name, max_length_bytes, binary);
    }
}

/// `value` in the form the column's declared type promises the protocol.
pub(super) fn conform(value: Value, definition: &ColumnDefinition) -> Value {
    use WireType::*;
    match (definition.column_type, &value) {
        (_, Value::Null) => value,
        (MYSQL_TYPE_BIT, Value::UInt(bits)) => {
            Value::Bytes(crate::eval::bit::bit_bytes(definition.column_length.clamp(1, 64) as u8, *bits))
        }
        (MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_INT24 | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG, Value::Int(_) | Value::UInt(_)) => {
            value
        }
        (MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_INT24 | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG, _) => match to_number(&value) {
            Some(Number::Int(v)) => int_value(v),
            _ => Value::Bytes(to_text(&value)),
        },
        (MYSQL_TYPE_DOUBLE | MYSQL_TYPE_FLOAT, Value::Double(_) | Value::Float(_)) => value,
        (MYSQL_TYPE_DOUBLE | MYSQL_TYPE_FLOAT, _) => Value::Double(to_number(&value).map_or(0.0, Number::as_f64)),
        (MYSQL_TYPE_DATE | MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP, Value::Date { .. } | Value::DateTime { .. }) => value,
        (MYSQL_TYPE_TIME, Value::Time { .. }) => value,
        // YEAR's text is four digits (`0000`); its binary form a SHORT.
        (MYSQL_TYPE_YEAR, Value::Int(year)) => Value::Bytes(format!("{year:04}").into_bytes()),
        // Already its text: moved, not copied (every text column of every row).
        (_, Value::Bytes(_)) => value,
        _ => Value::Bytes(to_text(&value)),
    }
}

/// True when no output of `select` calls an aggregate (COUNT, SUM, ...).
pub(super) fn is_aggregate_free(select: &Select) -> bool {
    let mut found = false;
    for item in &select.projection {
        if let SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } = item {
            let _ = visit_expressions(expr, |e| {
                if let Expr::Function(function) = e {
                    found |= is_aggregate(function);
                }
                ControlFlow::<()>::Continue(())
            });
        }
    }
    !found
}

/// Whether the select list, ORDER BY or HAVING holds an aggregate.
pub(super) fn has_aggregates(select: &Select, query: &Query) -> bool {
    let mut exprs: Vec<&Expr> = select
        .projection
        .iter()
        .filter_map(|item| match item {
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => Some(expr),
            _ => None,
        })
        .collect();
    if let Some(OrderByKind::Expressions(order_by)) = query.order_by.as_ref().map(|o| &o.kind) {
        exprs.extend(order_by.iter().map(|o| &o.expr));
    }
    exprs.extend(select.having.iter());
    !collect_aggregates(&exprs).is_empty()
}

fn collect_aggregates(exprs: &[&Expr]) -> Vec<Function> {
    let mut found: Vec<Function> = Vec::new();
    for expr in exprs {
        let _ = visit_expressions(*expr, |e| {
            if let Expr::Function(function) = e {
                if is_aggregate(function) && !found.iter().any(|f: &Function| f.to_string() == function.to_string()) {
                    found.push(function.clone());
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
    found
}

fn aggregate(function: &Function, rows: &[Arc<Vec<Value>>], columns: &Columns, context: &Context<'_>) -> SqlResult<Value> {
    let name = function_name(function);
    let distinct = matches!(&function.args, sqlparser::ast::FunctionArguments::List(list) if list.duplicate_treatment == Some(sqlparser::ast::DuplicateTreatment::Distinct));
    if name == "GROUP_CONCAT" {
        return group_concat::evaluate(function, distinct, rows, columns, context.params, &context.env);
    }
    let args = function_args(function)?;
    let arg = match args.as_slice() {
        [None] if name == "COUNT" => None,
        [Some(expr)] => Some(*expr),
        _ => return Err(syntax_error(&function.to_string())),
    };
    let collation =
        arg.map_or(Collation::Binary, |expr| Scope::for_statement(columns, context.params, &context.env).expression_collation(expr));
    let mut values = Vec::with_capacity(rows.len());
    for row in rows {
        match arg {
            None => values.push(Value::Int(1)),
            Some(expr) => {
                let value = Scope::for_row(columns, row, context.params, &context.env).eval(expr)?;
                if !value.is_null() {
                    values.push(value);
                }
            }
        }
    }
    if distinct {
        let mut seen = HashSet::new();
        values.retain(|value| {
            let mut key = Vec::new();
            append_group_key(value, collation, &mut key);
            seen.insert(key)
        });
    }
    let order = |a: &Value, b: &Value| sort_order_in(a, b, collation);
    Ok(match name.as_str() {
        "COUNT" => Value::Int(values.len() as i64),
        "MIN" => values.into_iter().min_by(order).unwrap_or(Value::Null),
        "MAX" => values.into_iter().max_by(order).unwrap_or(Value::Null),
        _ if values.is_empty() => Value::Null,
        _ => {
            let numbers: Vec<Number> = values.iter().filter_map(to_number).collect();
            let all_integers = numbers.iter().all(|n| matches!(n, Number::Int(_)));
            let count = numbers.len() as f64;
            match (name.as_str(), all_integers) {
                ("SUM", true) => {
                    Value::Decimal(numbers.iter().map(|n| if let Number::Int(v) = n { *v } else { 0 }).sum::<i128>().to_string())
                }
                ("SUM", false) => Value::Double(numbers.iter().map(|n| n.as_f64()).sum()),
                (_, true) => {
                    let sum: i128 = numbers.iter().map(|n| if let Number::Int(v) = n { *v } else { 0 }).sum();
                    Value::Decimal(format!("{:.4}", sum as f64 / count))
                }
                _ => Value::Double(numbers.iter().map(|n| n.as_f64()).sum::<f64>() / count),
            }
        }
    })
}

pub(super) fn limit_and_offset(query: &Query, constants: &Scope<'_>) -> SqlResult<(Option<u64>, u64)> {
    let number = |expr: &Expr| -> SqlResult<u64> {
        match to_number(&constants.eval(expr)?) {
            Some(Number::Int(v)) if v >= 0 => Ok(v as u64),
            _ => Err(syntax_error(&expr.to_string())),
        }
    };
    match &query.limit_clause {
        None => Ok((None, 0)),
        Some(LimitClause::LimitOffset { limit, offset, limit_by }) if limit_by.is_empty() => {
            let limit = limit.as_ref().map(number).transpose()?;
            let offset = offset.as_ref().map(|offset| number(&offset.value)).transpose()?.unwrap_or(0);
            Ok((limit, offset))
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => Ok((Some(number(limit)?), number(offset)?)),
        Some(other) => Err(not_supported(other.to_string())),
    }
}

/// One group of a SELECT: its representative row and, with aggregates,
/// their values by expression text.
type Group = (Arc<Vec<Value>>, Option<HashMap<String, Value>>);

/// A SELECT as the client gets it: rows streamed as they are found where
/// nothing needs them all first (`select_stream.rs`), else the whole
/// result.
pub fn respond(query: &Query, context: &Context<'_>, trx: &Transaction) -> SqlResult<QueryResponse<'static>> {
    if select_stream::is_streamable(query) {
        let select = the_select(query)?;
        if select.into.is_none() && select.lateral_views.is_empty() {
            if let Some(rows) = select_stream::SelectRows::open(query, select, context, trx)? {
                return select_stream::respond(rows, context);
            }
        }
    }
    run(query, context, Some(trx)).map(QueryResponse::from)
}

/// The whole result of a SELECT, in memory: what INSERT ... SELECT reads,
/// and what sorting, grouping and DISTINCT need.
pub fn run(query: &Query, context: &Context<'_>, trx: Option<&Transaction>) -> SqlResult<ResultSet> {
    if !query.locks.is_empty() {
        // A locking read is a statement of its own (`select_locking.rs`).
        return Err(not_supported("FOR UPDATE or FOR SHARE in a subquery or INSERT ... SELECT"));
    }
    run_over(query, context, trx, None)
}

/// [`run`] over the rows a locking read locked (`locked`: the table's rows
/// that pass WHERE, at their latest versions) instead of a scan.
pub(super) fn run_over(
    query: &Query,
    context: &Context<'_>,
    trx: Option<&Transaction>,
    locked: Option<Vec<Arc<Vec<Value>>>>,
) -> SqlResult<ResultSet> {
    let select = the_select(query)?;
    if select.into.is_some() || !select.lateral_views.is_empty() {
        return Err(not_supported("SELECT INTO"));
    }
    // The table and outputs: a prepared statement's kept plan, or resolved
    // now (`select_plan.rs`).
    let (shape, virtual_rows) = match super::select_plan::shape(select, context)? {
        Some((shape, rows)) => (Some(shape), rows),
        None => (None, None),
    };
    let def = shape.as_ref().map(|shape| shape.def.as_ref());
    let no_columns = Columns::default();
    let columns = shape.as_ref().map_or(&no_columns, |shape| &shape.columns);
    let mut owned_outputs = None;
    let outputs: &[Output] = match &shape {
        // GROUP_CONCAT's type follows the session's group_concat_max_len.
        Some(shape) if !has_group_concat(&shape.outputs) => &shape.outputs,
        _ => {
            let mut outputs = match &shape {
                Some(shape) => shape.outputs.clone(),
                None => outputs(select, None)?,
            };
            type_group_concats(&mut outputs, def, group_concat::max_length_bytes(&context.env));
            owned_outputs.insert(outputs)
        }
    };
    let constants = context.constants(&no_columns);
    let (limit, offset) = limit_and_offset(query, &constants)?;

    // Rows of the source that pass WHERE, shared with the engine's
    // versions: sorting and grouping move handles, not values.
    let mut rows: Vec<Arc<Vec<Value>>> = Vec::new();
    match (def, trx, locked) {
        (Some(_), _, Some(locked)) => rows = locked,
        (None, _, _) => {
            let empty: Vec<Value> = Vec::new();
            if select.selection.as_ref().map_or(Ok(true), |w| Scope::for_row(columns, &empty, context.params, &context.env).is_true(w))? {
                rows.push(Arc::new(empty));
            }
        }
        (Some(_), _, None) if virtual_rows.is_some() => {
            for row in virtual_rows.into_iter().flatten() {
                let keep = match &select.selection {
                    None => true,
                    Some(selection) => Scope::for_row(columns, &row, context.params, &context.env).is_true(selection)?,
                };
                if keep {
                    rows.push(Arc::new(row));
                }
            }
        }
        (Some(def), Some(trx), None) => {
            let plan = crate::exec::plan::plan(def, select.selection.as_ref(), &constants);
            let mut scan = trx.scan(def.id, &plan.spec).map_err(crate::error::engine_error)?.rows_only();
            while let Some(row) = scan.next_shared() {
                if context.env.is_query_killed() {
                    return Err(protocol::MysqlError::query_interrupted());
                }
                let keep = match &plan.residual {
                    None => true,
                    Some(selection) => Scope::for_row(columns, &row, context.params, &context.env).is_true(selection)?,
                };
                if keep {
                    rows.push(row);
                }
            }
        }
        (Some(_), None, None) => return Err(protocol::MysqlError::internal("SELECT from a table without a transaction")),
    }

    let order_by: Vec<&sqlparser::ast::OrderByExpr> = match query.order_by.as_ref().map(|o| &o.kind) {
        None => Vec::new(),
        Some(OrderByKind::Expressions(exprs)) => exprs.iter().collect(),
        Some(OrderByKind::All(_)) => return Err(not_supported("ORDER BY ALL")),
    };
    let group_by: Vec<&Expr> = match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => exprs.iter().collect(),
        _ => return Err(not_supported("GROUP BY ALL or WITH ROLLUP")),
    };
    let mut all_exprs: Vec<&Expr> = outputs.iter().map(|o| &o.expr).collect();
    all_exprs.extend(order_by.iter().map(|o| &o.expr));
    all_exprs.extend(select.having.iter());
    let aggregates = collect_aggregates(&all_exprs);
    // HAVING names the select list's aliases first, then the source's
    // columns, as MySQL resolves them (Connector/J's DatabaseMetaData
    // filters on the alias TABLE_TYPE that shadows the column).
    let having_columns = select.having.as_ref().map(|_| Columns {
        table_names: columns.table_names.clone(),
        names: outputs.iter().map(|o| o.name.clone()).chain(columns.names.iter().cloned()).collect(),
        members: outputs.iter().map(|_| None).chain(columns.members.iter().cloned()).collect(),
        collations: outputs.iter().map(|_| None).chain(columns.collations.iter().cloned()).collect(),
    });

    // Groups: each is (representative row, aggregate values).
    let width = def.map_or(0, |def| def.columns.len());
    let groups: Vec<Group> = if aggregates.is_empty() && group_by.is_empty() {
        rows.into_iter().map(|row| (row, None)).collect()
    } else if group_by.is_empty() {
        // Aggregates without GROUP BY: one group of every row, even none.
        let mut values = HashMap::new();
        for function in &aggregates {
            values.insert(function.to_string(), aggregate(function, &rows, columns, context)?);
        }
        let representative = rows.into_iter().next().unwrap_or_else(|| Arc::new(vec![Value::Null; width]));
        vec![(representative, Some(values))]
    } else {
        let mut order: Vec<Vec<u8>> = Vec::new();
        let mut members: HashMap<Vec<u8>, Vec<Arc<Vec<Value>>>> = HashMap::new();
        let statement = Scope::for_statement(columns, context.params, &context.env);
        let collations: Vec<Collation> = group_by.iter().map(|expr| statement.expression_collation(expr)).collect();
        for row in rows {
            let mut key = Vec::new();
            for (expr, &collation) in group_by.iter().zip(&collations) {
                let value = Scope::for_row(columns, &row, context.params, &context.env).eval(expr)?;
                append_group_key(&value, collation, &mut key);
            }
            if !members.contains_key(&key) {
                order.push(key.clone());
            }
            members.entry(key).or_default().push(row);
        }
        let mut groups = Vec::with_capacity(order.len());
        for key in order {
            let group = members.remove(&key).unwrap_or_default();
            let mut values = HashMap::new();
            for function in &aggregates {
                values.insert(function.to_string(), aggregate(function, &group, columns, context)?);
            }
            let representative = group.into_iter().next().unwrap_or_else(|| Arc::new(vec![Value::Null; width]));
            groups.push((representative, Some(values)));
        }
        groups
    };

    // Output rows with their sort keys, reading plain columns where the
    // rows hold them.
    let mut produced = OutputRows::new(outputs.len(), order_by.len(), groups.len());
    let mut cells = Vec::with_capacity(outputs.len());
    let mut keys = Vec::with_capacity(order_by.len());
    for (row, aggregate_values) in groups {
        let scope =
            Scope { columns, row: Some(&row), params: context.params, environment: &context.env, aggregates: aggregate_values.as_ref() };
        for output in outputs {
            cells.push(output.cell(&scope)?);
        }
        if let (Some(having), Some(having_columns)) = (&select.having, &having_columns) {
            let output = cells.iter().map(|cell| match cell {
                Cell::Column(position) => &row[*position],
                Cell::Computed(value) => value,
            });
            let combined: Vec<Value> = output.chain(row.iter()).cloned().collect();
            let having_scope = Scope {
                columns: having_columns,
                row: Some(&combined),
                params: context.params,
                environment: &context.env,
                aggregates: aggregate_values.as_ref(),
            };
            if !having_scope.is_true(having)? {
                cells.clear();
                continue;
            }
        }
        // A SLEEP() that KILL QUERY cut short returns 1; a query over rows
        // then fails, as in mysqld (a lone `SELECT SLEEP(n)` does not).
        if def.is_some() && context.env.is_query_killed() {
            return Err(protocol::MysqlError::query_interrupted());
        }
        for order in &order_by {
            keys.push(sort_key(&order.expr, outputs, &scope)?);
        }
        produced.push(row, &mut cells, &mut keys);
    }
    let statement = Scope::for_statement(columns, context.params, &context.env);
    if !order_by.is_empty() {
        let sort: Vec<(Collation, bool)> = order_by
            .iter()
            .map(|order| {
                let collation = statement.expression_collation(order_expr(&order.expr, outputs));
                (collation, matches!(order.options.sort, Some(sqlparser::ast::OrderBySort::Desc)))
            })
            .collect();
        produced.sort(&sort);
    }
    if matches!(select.distinct, Some(Distinct::Distinct)) {
        let collations: Vec<Collation> = outputs.iter().map(|output| statement.expression_collation(&output.expr)).collect();
        produced.distinct(&collations);
    } else if matches!(select.distinct, Some(Distinct::On(_))) {
        return Err(not_supported("DISTINCT ON"));
    }
    let mut result = ResultSet::new(outputs.iter().map(|o| o.definition.clone()).collect());
    produced.into_result(outputs, offset, limit.unwrap_or(u64::MAX), &mut result);
    Ok(result)
}

/// The expression ORDER BY's `expr` sorts by: an output's for its alias
/// or position, else itself.
fn order_expr<'e>(expr: &'e Expr, outputs: &'e [Output]) -> &'e Expr {
    if let Expr::Value(value) = expr {
        if let Literal::Number(text, _) = &value.value {
            if let Some(output) = text.parse::<usize>().ok().and_then(|position| outputs.get(position.wrapping_sub(1))) {
                return &output.expr;
            }
        }
    }
    if let Expr::Identifier(ident) = expr {
        if let Some(output) = outputs.iter().find(|o| o.name.eq_ignore_ascii_case(&ident.value)) {
            return &output.expr;
        }
    }
    expr
}

/// ORDER BY's value: an output alias, a position (`ORDER BY 1`), or an
/// expression over the row.
fn sort_key(expr: &Expr, outputs: &[Output], scope: &Scope<'_>) -> SqlResult<SortKey> {
    if let Expr::Value(value) = expr {
        if let Literal::Number(text, _) = &value.value {
            let position: usize = text.parse().map_err(|_| syntax_error(text))?;
            let index = position.wrapping_sub(1);
            return match index < outputs.len() {
                true => Ok(SortKey::Output(index)),
                false => Err(protocol::MysqlError::new(1054, "42S22", format!("Unknown column '{position}' in 'order clause'"))),
            };
        }
    }
    if let (Expr::Identifier(ident), Some(row)) = (expr, scope.row) {
        // ENUM and SET order by their stored number, not their text.
        if let Some(position) = scope.columns.position(&ident.value).filter(|&p| matches!(scope.columns.members.get(p), Some(Some(_)))) {
            return Ok(SortKey::Computed(row[position].clone()));
        }
    }
    if let Expr::Identifier(ident) = expr {
        if let Some(index) = outputs.iter().position(|o| o.name.eq_ignore_ascii_case(&ident.value)) {
            return Ok(SortKey::Output(index));
        }
    }
    scope.eval(expr).map(SortKey::Computed)
}
