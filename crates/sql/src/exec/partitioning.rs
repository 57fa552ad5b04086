//! A CREATE TABLE's PARTITION BY clause checked as MySQL checks it and
//! made the engine's [`Partitioning`]: partition names and counts, VALUES
//! fit for the method, bounds increasing, list values unique, values
//! converted to their column's type. The engine checks what depends on
//! the table's keys (1503) and column types (1659).

use std::cmp::Ordering;

use binlog_format::{ColumnType, Value};
use engine::partition::PARTITIONS_MAX;
use engine::{Bound, ColumnDef, PartitionDef, PartitionFunction, PartitionMethod, PartitionValues, Partitioning, TableSpec};
use protocol::MysqlError;

use crate::error::{not_supported, SqlResult};
use crate::eval::columns::coerce_write;
use crate::eval::temporal::WriteRules;
use crate::parse::partition::{PartitionClause, PartitionLiteral, PartitionValuesClause};
use crate::session::Context;

fn error(code: u16, message: impl Into<String>) -> MysqlError {
    MysqlError::new(code, "HY000", message.into())
}

/// "RANGE" or "LIST", as the 1479/1480/1492 messages name the method.
fn method_word(method: PartitionMethod) -> &'static str {
    if method.is_range() {
        "RANGE"
    } else {
        "LIST"
    }
}

pub fn build(clause: &PartitionClause, spec: &TableSpec, context: &Context<'_>) -> SqlResult<Partitioning> {
    if let Some(expression) = &clause.expression {
        return Err(not_supported(format!(
            "partitioning by the expression {expression} (binlogd partitions by a column or YEAR, MONTH, TO_DAYS, TO_SECONDS or UNIX_TIMESTAMP of one)"
        )));
    }
    let function = match &clause.function {
        None => None,
        Some(name) => Some(PartitionFunction::of_name(name).ok_or_else(|| {
            not_supported(format!("partitioning by {name}() (binlogd takes YEAR, MONTH, TO_DAYS, TO_SECONDS and UNIX_TIMESTAMP)"))
        })?),
    };
    let method = clause.method;
    let columns: Vec<&ColumnDef> = clause
        .columns
        .iter()
        .map(|name| {
            spec.columns.iter().find(|c| c.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
                if method.takes_column_list() {
                    error(1488, "Field in list of fields for partition function not found in table")
                } else {
                    MysqlError::new(1054, "42S22", format!("Unknown column '{name}' in 'partition function'"))
                }
            })
        })
        .collect::<SqlResult<_>>()?;
    for (at, name) in clause.columns.iter().enumerate() {
        if clause.columns[..at].iter().any(|other| other.eq_ignore_ascii_case(name)) {
            return Err(error(1652, format!("Duplicate partition field name '{name}'")));
        }
    }
    for column in &columns {
        if matches!(column.column_type, ColumnType::Blob { .. } | ColumnType::Json | ColumnType::Geometry) {
            return Err(error(1502, "A BLOB field is not allowed in partition function"));
        }
    }
    if let (Some(function), Some(column)) = (function, columns.first()) {
        if !function.takes(column) {
            return Err(function_not_allowed(function, column));
        }
    }
    // A function's VALUES are integers, whatever its column holds.
    let integer = ColumnDef::new("", ColumnType::LongLong);
    let columns: Vec<&ColumnDef> = if function.is_some() { vec![&integer] } else { columns };
    if clause.count == Some(0) {
        return Err(error(1504, "Number of partitions = 0 is not an allowed value"));
    }
    if let Some(count) = clause.count {
        if !clause.partitions.is_empty() && clause.partitions.len() as u64 != count {
            return Err(error(1484, "Wrong number of partitions defined, mismatch with previous setting"));
        }
    }
    let count = clause.count.map_or(clause.partitions.len(), |count| count as usize).max(1);
    if count > PARTITIONS_MAX {
        return Err(error(1499, "Too many partitions (including subpartitions) were defined"));
    }
    let by_count = clause.partitions.is_empty();
    if by_count && !method.is_hashed() {
        return Err(error(1492, format!("For {} partitions each partition must be defined", method_word(method))));
    }
    let mut partitions = Vec::with_capacity(count);
    if by_count {
        partitions.extend((0..count).map(|i| PartitionDef { name: format!("p{i}"), values: PartitionValues::Hashed, comment: None }));
    }
    let rules = WriteRules::of(&context.env);
    for (at, item) in clause.partitions.iter().enumerate() {
        if clause.partitions[..at].iter().any(|other| other.name.eq_ignore_ascii_case(&item.name)) {
            return Err(error(1517, format!("Duplicate partition name {}", item.name)));
        }
        let values = match (&item.values, method.is_hashed(), method.is_range()) {
            (PartitionValuesClause::None, true, _) => PartitionValues::Hashed,
            (PartitionValuesClause::None, false, range) => {
                let values = if range { "LESS THAN" } else { "IN" };
                return Err(error(
                    1479,
                    format!("Syntax error: {} PARTITIONING requires definition of VALUES {values} for each partition", method_word(method)),
                ));
            }
            (PartitionValuesClause::LessThan(_), _, false) => {
                return Err(error(1480, "Only RANGE PARTITIONING can use VALUES LESS THAN in partition definition"));
            }
            (PartitionValuesClause::In(_), _, true) | (PartitionValuesClause::In(_), true, _) => {
                return Err(error(1480, "Only LIST PARTITIONING can use VALUES IN in partition definition"));
            }
            (PartitionValuesClause::LessThan(bounds), _, true) => {
                // RANGE (col) VALUES LESS THAN MAXVALUE stands for every column.
                let bounds: Vec<&PartitionLiteral> = if bounds == &[PartitionLiteral::MaxValue] {
                    std::iter::repeat_n(&bounds[0], columns.len()).collect()
                } else {
                    bounds.iter().collect()
                };
                if bounds.len() != columns.len() {
                    return Err(error(1653, "Inconsistency in usage of column lists for partitioning"));
                }
                let bounds = bounds
                    .iter()
                    .zip(&columns)
                    .map(|(literal, column)| match literal {
                        PartitionLiteral::MaxValue => Ok(Bound::MaxValue),
                        PartitionLiteral::Null => Err(error(1566, "Not allowed to use NULL value in VALUES LESS THAN")),
                        literal => value_for(literal, column, &item.name, rules).map(Bound::Value),
                    })
                    .collect::<SqlResult<Vec<Bound>>>()?;
                PartitionValues::LessThan(bounds)
            }
            (PartitionValuesClause::In(items), false, false) => {
                let mut converted = Vec::with_capacity(items.len());
                for values in items {
                    if values.len() != columns.len() {
                        return Err(error(1653, "Inconsistency in usage of column lists for partitioning"));
                    }
                    let values = values
                        .iter()
                        .zip(&columns)
                        .map(|(literal, column)| match literal {
                            PartitionLiteral::MaxValue => Err(error(1656, "Cannot use MAXVALUE as value in VALUES IN")),
                            PartitionLiteral::Null => Ok(Value::Null),
                            literal => value_for(literal, column, &item.name, rules),
                        })
                        .collect::<SqlResult<Vec<Value>>>()?;
                    converted.push(values);
                }
                PartitionValues::In(converted)
            }
        };
        partitions.push(PartitionDef { name: item.name.clone(), values, comment: item.comment.clone() });
    }
    check_values(&partitions)?;
    Ok(Partitioning {
        method,
        linear: clause.linear,
        key_algorithm: clause.key_algorithm,
        columns: clause.columns.iter().map(|name| column_name(spec, name)).collect(),
        function,
        by_count,
        partitions,
    })
}

/// The column named `name`, as the table spells it.
fn column_name(spec: &TableSpec, name: &str) -> String {
    spec.columns.iter().find(|c| c.name.eq_ignore_ascii_case(name)).map_or_else(|| name.to_string(), |c| c.name.clone())
}

/// A date function over a TIMESTAMP (its value depends on the time zone),
/// or UNIX_TIMESTAMP over another type: MySQL's 1486; a date function over
/// a column that holds no date: 1564.
fn function_not_allowed(function: PartitionFunction, column: &ColumnDef) -> MysqlError {
    let timestamp = matches!(column.column_type, ColumnType::Timestamp2 { .. });
    let date = matches!(column.column_type, ColumnType::Date | ColumnType::DateTime2 { .. });
    if timestamp || (function == PartitionFunction::UnixTimestamp && date) {
        error(1486, "Constant, random or timezone-dependent expressions in (sub)partitioning function are not permitted")
    } else {
        error(1564, "This partition function is not allowed")
    }
}

/// A VALUES constant as a value of its column: integers for integer
/// columns (1697 otherwise), text converted as INSERT converts it.
fn value_for(literal: &PartitionLiteral, column: &ColumnDef, partition: &str, rules: WriteRules) -> SqlResult<Value> {
    let integer_column =
        matches!(column.column_type, ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong);
    let value = match literal {
        PartitionLiteral::Integer(value) if integer_column => match (i64::try_from(*value), u64::try_from(*value)) {
            (Ok(value), _) if !column.unsigned || value >= 0 => {
                return Ok(if column.unsigned { Value::UInt(value as u64) } else { Value::Int(value) })
            }
            (_, Ok(value)) if column.unsigned => return Ok(Value::UInt(value)),
            _ => return Err(error(1654, "Partition column values of incorrect type")),
        },
        PartitionLiteral::Text(_) | PartitionLiteral::Integer(_) if integer_column => {
            return Err(error(1697, format!("VALUES value for partition '{partition}' must have type INT")));
        }
        PartitionLiteral::Integer(value) => Value::Bytes(value.to_string().into_bytes()),
        PartitionLiteral::Text(text) => Value::Bytes(text.clone().into_bytes()),
        PartitionLiteral::Null | PartitionLiteral::MaxValue => return Ok(Value::Null),
    };
    let mut warnings = Vec::new();
    let mut strict = rules;
    strict.mode.strict = true;
    coerce_write(column, value, strict, &mut warnings).map_err(|_| error(1654, "Partition column values of incorrect type"))
}

/// RANGE bounds strictly increasing (1493; MAXVALUE only last, 1481);
/// LIST values each in one partition only (1495).
fn check_values(partitions: &[PartitionDef]) -> SqlResult<()> {
    let mut previous: Option<&Vec<Bound>> = None;
    let mut listed: Vec<&Vec<Value>> = Vec::new();
    for partition in partitions {
        match &partition.values {
            PartitionValues::LessThan(bounds) => {
                if let Some(previous) = previous {
                    if previous.as_slice() == [Bound::MaxValue] {
                        return Err(error(1481, "MAXVALUE can only be used in last partition definition"));
                    }
                    if engine::partition::compare_bounds(previous, bounds) != Ordering::Less {
                        return Err(error(1493, "VALUES LESS THAN value must be strictly increasing for each partition"));
                    }
                }
                previous = Some(bounds);
            }
            PartitionValues::In(items) => {
                for item in items {
                    if listed.contains(&item) {
                        return Err(error(1495, "Multiple definition of same constant in list partitioning"));
                    }
                    listed.push(item);
                }
            }
            PartitionValues::Hashed => {}
        }
    }
    Ok(())
}
