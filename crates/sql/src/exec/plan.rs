//! Access paths: which index range a WHERE clause lets a statement scan.
//!
//! The plan only narrows the rows examined; every row it yields is still
//! checked against the whole WHERE clause, so a plan that is too wide costs
//! time but never gives a wrong answer. Bounds are always inclusive on the
//! first key column.

use std::ops::Bound;

use binlog_format::ColumnType;
use engine::{ColumnDef, KeyRange, ScanSpec, TableDef};
use sqlparser::ast::{BinaryOperator, Expr, InTarget};

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
    best.map(|(_, spec)| spec).or_else(|| union_of_ranges(def, &conjuncts, constants)).unwrap_or_else(ScanSpec::primary)
}

/// Most ranges one scan reads as a union; a longer IN list or OR scans.
const UNION_RANGES_MAX: usize = 4096;

/// A scan of several ranges of one key's first column, for a conjunct
/// that is `c IN (...)` or an OR whose every branch bounds `c`
/// (`c BETWEEN a AND b OR c = d ...`, sysbench's select_random_ranges):
/// the primary key's first column first, then each index's.
fn union_of_ranges(def: &TableDef, conjuncts: &[&Expr], constants: &Scope<'_>) -> Option<ScanSpec> {
    let mut candidates: Vec<(Option<&str>, usize)> = Vec::new();
    if let Some(&first) = def.primary_key.first() {
        candidates.push((None, first));
    }
    candidates.extend(def.indexes.iter().map(|index| (Some(index.name.as_str()), index.columns[0])));
    for conjunct in conjuncts {
        for (index, position) in &candidates {
            let Some(ranges) = ranges_of(&def.columns[*position], conjunct, constants) else { continue };
            let mut spec = match index {
                None => ScanSpec::primary(),
                Some(name) => ScanSpec::index(*name),
            };
            let mut ranges = ranges.into_iter();
            match ranges.next() {
                Some((lower, upper)) => (spec.lower, spec.upper) = (lower, upper),
                // Nothing can match (`c IN (NULL)`): an empty range.
                None => (spec.lower, spec.upper) = (Bound::Excluded(Vec::new()), Bound::Excluded(Vec::new())),
            }
            spec.more_ranges = ranges.collect();
            return Some(spec);
        }
    }
    None
}

/// The key ranges of `column` that hold every row `conjunct` can be true
/// for, when it is an IN list or an OR of bounded branches on the column.
fn ranges_of(column: &ColumnDef, conjunct: &Expr, constants: &Scope<'_>) -> Option<Vec<KeyRange>> {
    let one = |value: Value| -> KeyRange { (Bound::Included(vec![value.clone()]), Bound::Included(vec![value])) };
    match conjunct {
        Expr::Nested(inner) => ranges_of(column, inner, constants),
        Expr::In { expr, target: InTarget::List(list), negated: false, .. }
            if is_column(expr, column) && list.len() <= UNION_RANGES_MAX =>
        {
            let mut ranges = Vec::with_capacity(list.len());
            for item in list {
                let value = constants.eval(item).ok()?;
                // NULL equals nothing.
                if value == Value::Null {
                    continue;
                }
                ranges.push(one(key_value(column, &value)?));
            }
            Some(ranges)
        }
        Expr::BinaryOp { op: BinaryOperator::Or, .. } => {
            let mut branches = Vec::new();
            split_or(conjunct, &mut branches);
            if branches.len() > UNION_RANGES_MAX {
                return None;
            }
            let mut ranges = Vec::with_capacity(branches.len());
            for branch in branches {
                let mut conjuncts = Vec::new();
                split_and(branch, &mut conjuncts);
                match bounds(column, &conjuncts, constants) {
                    (None, None) => return None,
                    (lower, upper) => ranges.push((
                        lower.map_or(Bound::Unbounded, |value| Bound::Included(vec![value])),
                        upper.map_or(Bound::Unbounded, |value| Bound::Included(vec![value])),
                    )),
                }
            }
            Some(ranges)
        }
        _ => None,
    }
}

fn split_or<'e>(expr: &'e Expr, out: &mut Vec<&'e Expr>) {
    match expr {
        Expr::BinaryOp { left, op: BinaryOperator::Or, right } => {
            split_or(left, out);
            split_or(right, out);
        }
        Expr::Nested(inner) => split_or(inner, out),
        other => out.push(other),
    }
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

#[cfg(test)]
mod tests {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    use super::*;
    use crate::error::SqlResult;
    use crate::eval::expr::{Columns, Environment};
    use crate::variables::VariableScope;

    struct NoSession;

    impl Environment for NoSession {
        fn database(&self) -> Option<String> {
            None
        }
        fn system_variable(&self, _: &str, _: VariableScope) -> SqlResult<Value> {
            Ok(Value::Null)
        }
        fn user_variable(&self, _: &str) -> Value {
            Value::Null
        }
        fn last_insert_id(&self) -> u64 {
            0
        }
        fn connection_id(&self) -> u32 {
            1
        }
        fn user(&self) -> String {
            String::new()
        }
        fn current_user(&self) -> String {
            String::new()
        }
    }

    /// The ranges of integer column `k` that `condition` reads, if a union.
    fn ranges(condition: &str) -> Option<Vec<KeyRange>> {
        let sql = format!("SELECT 1 FROM t WHERE {condition}");
        let statement = Parser::parse_sql(&MySqlDialect {}, &sql).unwrap().remove(0);
        let sqlparser::ast::Statement::Query(query) = statement else { panic!("a query") };
        let sqlparser::ast::SetExpr::Select(select) = *query.body else { panic!("a select") };
        let columns = Columns::default();
        let constants = Scope { columns: &columns, row: None, params: &[], environment: &NoSession, aggregates: None };
        ranges_of(&ColumnDef::new("k", ColumnType::Long), select.selection.as_ref().unwrap(), &constants)
    }

    fn between(low: i64, high: i64) -> KeyRange {
        (Bound::Included(vec![Value::Int(low)]), Bound::Included(vec![Value::Int(high)]))
    }

    #[test]
    fn in_lists_and_ors_on_the_column_become_ranges() {
        assert_eq!(ranges("k IN (3, '1', NULL, 2.0)"), Some(vec![between(3, 3), between(1, 1), between(2, 2)]));
        assert_eq!(
            ranges("k BETWEEN 1 AND 5 OR k = 9 OR (k >= 20 AND k <= 30)"),
            Some(vec![between(1, 5), between(9, 9), between(20, 30)])
        );
        assert_eq!(ranges("(k < 0 OR k > 100)").map(|ranges| ranges.len()), Some(2));
    }

    #[test]
    fn anything_a_key_range_cannot_hold_exactly_scans() {
        // Text that is not a whole number, a fraction: compared as MySQL does, row by row.
        assert_eq!(ranges("k IN (1, '2abc')"), None);
        assert_eq!(ranges("k IN (1, 1.5)"), None);
        // A branch without a bound on k, another column, a negation.
        assert_eq!(ranges("k = 1 OR j = 2"), None);
        assert_eq!(ranges("j IN (1, 2)"), None);
        assert_eq!(ranges("k NOT IN (1, 2)"), None);
    }
}
