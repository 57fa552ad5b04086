//! Access paths: which index range a WHERE clause lets a statement scan.
//!
//! The plan only narrows the rows examined; every row it yields is still
//! checked against the whole WHERE clause, so a plan that is too wide costs
//! time but never gives a wrong answer. Bounds are always inclusive on the
//! first key column.

use std::ops::Bound;

use binlog_format::ColumnType;
use engine::{ColumnDef, ScanSpec, TableDef};
use sqlparser::ast::{BinaryOperator, Expr};

use crate::eval::expr::Scope;
use crate::eval::value::{is_whole_number_text, to_number, Number, Value};

/// The scan for `def` under `selection`. Equality on the primary key beats
/// a primary-key range, which beats a secondary index, which beats a full
/// scan.
pub fn scan_spec(def: &TableDef, selection: Option<&Expr>, constants: &Scope<'_>) -> ScanSpec {
    let Some(selection) = selection else { return ScanSpec::primary() };
    let mut conjuncts = Vec::new();
    split_and(selection, &mut conjuncts);
    let mut candidates: Vec<(Option<String>, usize)> = Vec::new();
    if let Some(&first) = def.primary_key.first() {
        candidates.push((None, first));
    }
    for index in &def.indexes {
        candidates.push((Some(index.name.clone()), index.columns[0]));
    }
    let mut best: Option<(u8, ScanSpec)> = None;
    for (index, position) in candidates {
        let column = &def.columns[position];
        let (lower, upper) = bounds(column, &conjuncts, constants);
        let rank = match (&lower, &upper) {
            (Some(a), Some(b)) if a == b => 3,
            (Some(_), Some(_)) => 2,
            (Some(_), None) | (None, Some(_)) => 1,
            (None, None) => continue,
        } * 2
            + u8::from(index.is_none());
        if best.as_ref().is_some_and(|(best_rank, _)| *best_rank >= rank) {
            continue;
        }
        let mut spec = match index {
            None => ScanSpec::primary(),
            Some(name) => ScanSpec::index(name),
        };
        spec.lower = lower.map_or(Bound::Unbounded, |value| Bound::Included(vec![value]));
        spec.upper = upper.map_or(Bound::Unbounded, |value| Bound::Included(vec![value]));
        best = Some((rank, spec));
    }
    best.map_or_else(ScanSpec::primary, |(_, spec)| spec)
}

fn split_and<'e>(expr: &'e Expr, out: &mut Vec<&'e Expr>) {
    match expr {
        Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            split_and(left, out);
            split_and(right, out);
        }
        Expr::Nested(inner) => split_and(inner, out),
        other => out.push(other),
    }
}

fn is_column(expr: &Expr, column: &ColumnDef) -> bool {
    match expr {
        Expr::Identifier(ident) => ident.value.eq_ignore_ascii_case(&column.name),
        Expr::CompoundIdentifier(parts) => parts.last().is_some_and(|ident| ident.value.eq_ignore_ascii_case(&column.name)),
        Expr::Nested(inner) => is_column(inner, column),
        _ => false,
    }
}

/// Inclusive lower and upper key values for `column` implied by the
/// conjuncts.
fn bounds(column: &ColumnDef, conjuncts: &[&Expr], constants: &Scope<'_>) -> (Option<Value>, Option<Value>) {
    let mut lower = None;
    let mut upper = None;
    let constant = |expr: &Expr| constants.eval(expr).ok().and_then(|value| key_value(column, &value));
    for conjunct in conjuncts {
        match conjunct {
            Expr::BinaryOp { left, op, right } => {
                let (op, other) = if is_column(left, column) {
                    (op.clone(), right)
                } else if is_column(right, column) {
                    let flipped = match op {
                        BinaryOperator::Lt => BinaryOperator::Gt,
                        BinaryOperator::LtEq => BinaryOperator::GtEq,
                        BinaryOperator::Gt => BinaryOperator::Lt,
                        BinaryOperator::GtEq => BinaryOperator::LtEq,
                        other => other.clone(),
                    };
                    (flipped, left)
                } else {
                    continue;
                };
                let Some(value) = constant(other) else { continue };
                match op {
                    BinaryOperator::Eq => {
                        lower = Some(value.clone());
                        upper = Some(value);
                        return (lower, upper);
                    }
                    BinaryOperator::Gt | BinaryOperator::GtEq if lower.is_none() => lower = Some(value),
                    BinaryOperator::Lt | BinaryOperator::LtEq if upper.is_none() => upper = Some(value),
                    _ => {}
                }
            }
            Expr::Between { expr, negated: false, low, high } if is_column(expr, column) => {
                if let (Some(low), Some(high)) = (constant(low), constant(high)) {
                    lower = Some(low);
                    upper = Some(high);
                }
            }
            _ => {}
        }
    }
    (lower, upper)
}

/// The key value `value` stands for in `column`, when a key lookup finds
/// exactly the rows the comparison would: integers for integer columns,
/// strings for string columns; `None` otherwise (then the plan scans).
fn key_value(column: &ColumnDef, value: &Value) -> Option<Value> {
    match column.column_type {
        ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong => {
            let exact = match value {
                Value::Int(_) | Value::UInt(_) => true,
                Value::Bytes(bytes) => is_whole_number_text(bytes),
                Value::Double(v) => v.fract() == 0.0,
                Value::Decimal(text) => !text.contains('.') || text.trim_end_matches('0').ends_with('.'),
                _ => false,
            };
            if !exact {
                return None;
            }
            match to_number(value)? {
                Number::Int(v) => Some(crate::eval::expr::int_value(v)),
                Number::Float(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(Value::Int(v as i64)),
                Number::Float(_) => None,
            }
            .filter(|v| !matches!(v, Value::Double(_)))
        }
        ColumnType::String { .. } | ColumnType::VarChar { .. } => match value {
            Value::Bytes(bytes) => Some(Value::Bytes(bytes.clone())),
            _ => None,
        },
        _ => None,
    }
}
