//! Access paths: which index range a WHERE clause lets a statement scan.
//!
//! The plan narrows the rows examined; every row it yields is still
//! checked against the residual WHERE clause: the whole clause but the
//! conjuncts the range makes true for exactly the rows it yields (an
//! integer column against an integer constant, `=`, `>=`, `<=`, BETWEEN).
//! A plan too wide costs time but never gives a wrong answer. Bounds are
//! always inclusive on the first key column.

use std::borrow::Cow;
use std::ops::Bound;

use binlog_format::ColumnType;
use engine::{ColumnDef, KeyRange, ScanSpec, TableDef};
use sqlparser::ast::{BinaryOperator, Expr, InTarget, UnaryOperator, Value as Literal};

use crate::eval::expr::Scope;
use crate::eval::value::{is_whole_number_text, to_number, Number, Value};

/// An access path and what of the WHERE clause is left to check per row.
pub struct Plan<'e> {
    pub spec: ScanSpec,
    /// The WHERE clause without the conjuncts the scan's range makes true
    /// for every row it yields; `None` when nothing is left.
    pub residual: Option<Cow<'e, Expr>>,
}

/// The scan for `def` under `selection`. Equality on the primary key beats
/// a primary-key range, which beats a secondary index, which beats a full
/// scan.
pub fn scan_spec(def: &TableDef, selection: Option<&Expr>, constants: &Scope<'_>) -> ScanSpec {
    plan(def, selection, constants).spec
}

/// [`scan_spec`] and the residual WHERE: a conjunct is dropped only when
/// the range alone gives exactly its rows (see [`Bounds::exact`]).
pub fn plan<'e>(def: &TableDef, selection: Option<&'e Expr>, constants: &Scope<'_>) -> Plan<'e> {
    let Some(selection) = selection else { return Plan { spec: ScanSpec::primary(), residual: None } };
    let mut conjuncts = Vec::new();
    split_and(selection, &mut conjuncts);
    let mut best: Option<(u8, ScanSpec, Vec<usize>)> = None;
    for (index, position) in key_candidates(def) {
        let column = &def.columns[position];
        let found = bounds(column, &conjuncts, constants);
        let rank = match (&found.lower, &found.upper) {
            (Some(a), Some(b)) if a.value == b.value => 3,
            (Some(_), Some(_)) => 2,
            (Some(_), None) | (None, Some(_)) => 1,
            (None, None) => continue,
        } * 2
            + u8::from(index.is_none());
        if best.as_ref().is_some_and(|(best_rank, _, _)| *best_rank >= rank) {
            continue;
        }
        let mut spec = scan_of(index);
        let exact = found.exact(column, &conjuncts);
        spec.lower = included(found.lower);
        spec.upper = included(found.upper);
        best = Some((rank, spec, exact));
    }
    let Some((_, spec, exact)) = best else {
        let spec = union_of_ranges(def, &conjuncts, constants).unwrap_or_else(ScanSpec::primary);
        return Plan { spec, residual: Some(Cow::Borrowed(selection)) };
    };
    let residual = match exact.len() {
        0 => Some(Cow::Borrowed(selection)),
        _ => conjuncts
            .iter()
            .enumerate()
            .filter(|(i, _)| !exact.contains(i))
            .map(|(_, conjunct)| (*conjunct).clone())
            .reduce(|left, right| Expr::BinaryOp { left: Box::new(left), op: BinaryOperator::And, right: Box::new(right) })
            .map(Cow::Owned),
    };
    Plan { spec, residual }
}

/// The keys a scan can follow, as (index name, `None` for the primary
/// key; the position of its first column): the primary key first.
fn key_candidates(def: &TableDef) -> Vec<(Option<&str>, usize)> {
    let primary = def.primary_key.first().map(|&first| (None, first));
    primary.into_iter().chain(def.indexes.iter().map(|index| (Some(index.name.as_str()), index.columns[0]))).collect()
}

/// A scan of the primary key (`None`) or of the named index.
fn scan_of(index: Option<&str>) -> ScanSpec {
    index.map_or_else(ScanSpec::primary, ScanSpec::index)
}

/// A range's end at `end`'s key value, inclusive; unbounded without one.
fn included(end: Option<End>) -> Bound<Vec<Value>> {
    end.map_or(Bound::Unbounded, |end| Bound::Included(vec![end.value]))
}

/// Most ranges one scan reads as a union; a longer IN list or OR scans.
const UNION_RANGES_MAX: usize = 4096;

/// A scan of several ranges of one key's first column, for a conjunct
/// that is `c IN (...)` or an OR whose every branch bounds `c`
/// (`c BETWEEN a AND b OR c = d ...`, sysbench's select_random_ranges):
/// the primary key's first column first, then each index's.
fn union_of_ranges(def: &TableDef, conjuncts: &[&Expr], constants: &Scope<'_>) -> Option<ScanSpec> {
    let candidates = key_candidates(def);
    for conjunct in conjuncts {
        for &(index, position) in &candidates {
            let Some(ranges) = ranges_of(&def.columns[position], conjunct, constants) else { continue };
            let mut spec = scan_of(index);
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
                let found = bounds(column, &conjuncts, constants);
                if found.lower.is_none() && found.upper.is_none() {
                    return None;
                }
                ranges.push((included(found.lower), included(found.upper)));
            }
            Some(ranges)
        }
        _ => None,
    }
}

fn split_and<'e>(expr: &'e Expr, out: &mut Vec<&'e Expr>) {
    split(expr, &BinaryOperator::And, out);
}

fn split_or<'e>(expr: &'e Expr, out: &mut Vec<&'e Expr>) {
    split(expr, &BinaryOperator::Or, out);
}

/// The operands of a chain of `op` (AND or OR), parentheses removed.
fn split<'e>(expr: &'e Expr, op: &BinaryOperator, out: &mut Vec<&'e Expr>) {
    match expr {
        Expr::BinaryOp { left, op: this, right } if this == op => {
            split(left, op, out);
            split(right, op, out);
        }
        Expr::Nested(inner) => split(inner, op, out),
        other => out.push(other),
    }
}

/// `column` named without a qualifier.
fn is_direct_column(expr: &Expr, column: &ColumnDef) -> bool {
    match expr {
        Expr::Identifier(ident) => ident.value.eq_ignore_ascii_case(&column.name),
        Expr::Nested(inner) => is_direct_column(inner, column),
        _ => false,
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

/// One end of a range: its key value, and the conjunct that set it when
/// that conjunct states exactly this bound (`>=`, `<=`, `=`, BETWEEN with
/// an integer literal or parameter).
struct End {
    value: Value,
    exact_source: Option<usize>,
}

/// Inclusive lower and upper key values for one column.
struct Bounds {
    lower: Option<End>,
    upper: Option<End>,
}

impl Bounds {
    /// The conjuncts (by position) that every row in the range satisfies
    /// and every row outside it fails: those that set each end they imply
    /// exactly, on an integer column (keys order as the comparison does),
    /// where NULL is kept out by NOT NULL or by a lower bound (NULL keys
    /// sort first).
    fn exact(&self, column: &ColumnDef, conjuncts: &[&Expr]) -> Vec<usize> {
        if !is_integer(column) || (column.nullable && self.lower.is_none()) {
            return Vec::new();
        }
        let source = |end: &Option<End>| end.as_ref().and_then(|end| end.exact_source);
        let (lower, upper) = (source(&self.lower), source(&self.upper));
        let mut exact = Vec::new();
        for (i, conjunct) in conjuncts.iter().enumerate() {
            let (sets_lower, sets_upper) = match conjunct {
                Expr::BinaryOp { left, op, .. } => match (op, is_column(left, column)) {
                    (BinaryOperator::Eq, _) => (true, true),
                    (BinaryOperator::GtEq, true) | (BinaryOperator::LtEq, false) => (true, false),
                    (BinaryOperator::LtEq, true) | (BinaryOperator::GtEq, false) => (false, true),
                    _ => continue,
                },
                Expr::Between { .. } => (true, true),
                _ => continue,
            };
            if (sets_lower || sets_upper) && (!sets_lower || lower == Some(i)) && (!sets_upper || upper == Some(i)) {
                exact.push(i);
            }
        }
        exact
    }
}

fn is_integer(column: &ColumnDef) -> bool {
    matches!(column.column_type, ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong)
}

/// A bound written as a constant the comparison reads as that very
/// integer: an integer literal (maybe negated) or a `?` parameter that
/// came as an integer. Anything else (text, decimals, expressions, NULL)
/// keeps its conjunct in the residual WHERE.
fn is_exact_integer(expr: &Expr, value: &Value) -> bool {
    let literal = match expr {
        Expr::Value(literal) => matches!(literal.value, Literal::Number(..) | Literal::Placeholder(_)),
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => {
            matches!(expr.as_ref(), Expr::Value(v) if matches!(v.value, Literal::Number(..)))
        }
        Expr::Nested(inner) => return is_exact_integer(inner, value),
        _ => false,
    };
    literal && matches!(value, Value::Int(_) | Value::UInt(_))
}

/// Inclusive lower and upper key values for `column` implied by the
/// conjuncts.
fn bounds(column: &ColumnDef, conjuncts: &[&Expr], constants: &Scope<'_>) -> Bounds {
    let mut lower: Option<End> = None;
    let mut upper: Option<End> = None;
    let end = |expr: &Expr, source: usize, inclusive: bool| {
        let value = constants.eval(expr).ok()?;
        let exact = inclusive && is_exact_integer(expr, &value);
        let value = key_value(column, &value)?;
        Some(End { value, exact_source: exact.then_some(source) })
    };
    for (i, conjunct) in conjuncts.iter().enumerate() {
        match conjunct {
            Expr::BinaryOp { left, op, right } => {
                let (op, other, direct) = if is_column(left, column) {
                    (op.clone(), right, is_direct_column(left, column))
                } else if is_column(right, column) {
                    let flipped = match op {
                        BinaryOperator::Lt => BinaryOperator::Gt,
                        BinaryOperator::LtEq => BinaryOperator::GtEq,
                        BinaryOperator::Gt => BinaryOperator::Lt,
                        BinaryOperator::GtEq => BinaryOperator::LtEq,
                        other => other.clone(),
                    };
                    (flipped, left, is_direct_column(right, column))
                } else {
                    continue;
                };
                // `>` and `<` scan from the bound itself: never exact. A
                // qualified name keeps its conjunct, whose qualifier is
                // checked per row.
                let inclusive = direct && matches!(op, BinaryOperator::Eq | BinaryOperator::GtEq | BinaryOperator::LtEq);
                let Some(found) = end(other, i, inclusive) else { continue };
                match op {
                    BinaryOperator::Eq => {
                        let copy = End { value: found.value.clone(), exact_source: found.exact_source };
                        return Bounds { lower: Some(copy), upper: Some(found) };
                    }
                    BinaryOperator::Gt | BinaryOperator::GtEq if lower.is_none() => lower = Some(found),
                    BinaryOperator::Lt | BinaryOperator::LtEq if upper.is_none() => upper = Some(found),
                    _ => {}
                }
            }
            Expr::Between { expr, negated: false, low, high } if is_column(expr, column) => {
                let direct = is_direct_column(expr, column);
                if let (Some(mut low), Some(mut high)) = (end(low, i, direct), end(high, i, direct)) {
                    // Exact only when both ends are.
                    if low.exact_source.is_none() || high.exact_source.is_none() {
                        low.exact_source = None;
                        high.exact_source = None;
                    }
                    lower = Some(low);
                    upper = Some(high);
                }
            }
            _ => {}
        }
    }
    Bounds { lower, upper }
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
    use super::*;
    use crate::error::SqlResult;
    use crate::eval::expr::{Columns, Environment};
    use crate::variables::VariableScope;
    use engine::IndexDef;
    use sqlparser::ast::visit_expressions_mut;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

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

    /// sysbench's table: id INT primary key, k INT NOT NULL indexed, c
    /// CHAR indexed, n INT nullable indexed, d DOUBLE indexed.
    fn table() -> TableDef {
        let column = |name: &str, column_type: ColumnType, nullable: bool| ColumnDef { nullable, ..ColumnDef::new(name, column_type) };
        let index = |id: u32, name: &str, position: usize| IndexDef { id, name: name.to_string(), columns: vec![position], unique: false };
        TableDef {
            id: 1,
            database: "test".to_string(),
            name: "t".to_string(),
            columns: vec![
                column("id", ColumnType::Long, false),
                column("k", ColumnType::Long, false),
                column("c", ColumnType::String { max_length_bytes: 120 }, false),
                column("n", ColumnType::Long, true),
                column("d", ColumnType::Double, false),
            ],
            primary_key: vec![0],
            indexes: vec![index(1, "k", 1), index(2, "c", 2), index(3, "n", 3), index(4, "d", 4)],
            auto_increment_start: 1,
            next_index_id: 5,
            partitioning: None,
            comment: String::new(),
            keys_by_collation: true,
            default_collation: engine::SERVER_DEFAULT_COLLATION,
        }
    }

    /// The residual WHERE of `selection` with `params` for its `?`s, as text.
    fn residual(selection: &str, params: &[Value]) -> Option<String> {
        let mut expr =
            Parser::new(&MySqlDialect {}).try_with_sql(selection).and_then(|mut parser| parser.parse_expr()).expect("an expression");
        let mut count = 0;
        let _ = visit_expressions_mut(&mut expr, |expr| {
            if let Expr::Value(value) = expr {
                if let Literal::Placeholder(name) = &mut value.value {
                    count += 1;
                    *name = format!("${count}");
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        let columns = Columns::default();
        let constants = Scope { columns: &columns, row: None, params, environment: &NoSession, aggregates: None };
        plan(&table(), Some(&expr), &constants).residual.map(|residual| residual.to_string())
    }

    #[test]
    fn integer_ranges_on_integer_keys_leave_nothing() {
        assert_eq!(residual("id = ?", &[Value::Int(5)]), None);
        assert_eq!(residual("id = 5", &[]), None);
        assert_eq!(residual("5 = id", &[]), None);
        assert_eq!(residual("id BETWEEN ? AND ?", &[Value::Int(1), Value::Int(100)]), None);
        assert_eq!(residual("id >= ? AND id <= ?", &[Value::Int(1), Value::UInt(100)]), None);
        assert_eq!(residual("? <= id AND id <= -1", &[Value::Int(-9)]), None);
        assert_eq!(residual("k BETWEEN 1 AND 10", &[]), None);
    }

    #[test]
    fn other_conjuncts_stay() {
        assert_eq!(residual("id = 5 AND c = 'x'", &[]).as_deref(), Some("c = 'x'"));
        assert_eq!(residual("id BETWEEN 1 AND 9 AND k > 3 AND c <> 'a'", &[]).as_deref(), Some("k > 3 AND c <> 'a'"));
        // The range comes from BETWEEN, so the earlier `>=` is not what bounds it.
        assert_eq!(residual("id >= 10 AND id BETWEEN 1 AND 5", &[]).as_deref(), Some("id >= 10"));
        // Only the first of two lower bounds sets the range.
        assert_eq!(residual("id >= 5 AND id >= 3", &[]).as_deref(), Some("id >= 3"));
    }

    #[test]
    fn inexact_conjuncts_are_kept() {
        // Placeholders print as the `$N` they are numbered.
        let kept =
            |selection: &str, params: &[Value]| assert_eq!(residual(selection, params), Some(selection.replace('?', "$1")), "{selection}");
        // Text reads as its numeric prefix: '1abc' is 1 but not a key.
        kept("id = '1abc'", &[]);
        kept("id = ?", &[Value::Bytes(b"1abc".to_vec())]);
        kept("id = ?", &[Value::Bytes(b"1".to_vec())]);
        // Decimals: 1.5 matches no integer; 1.0 is left to the comparison.
        kept("id = 1.5", &[]);
        kept("id = 1.0", &[]);
        kept("id = ?", &[Value::Decimal("1.5".to_string())]);
        kept("id = ?", &[Value::Double(2.0)]);
        // NULL: no range, the comparison is unknown for every row.
        kept("id = NULL", &[]);
        kept("id = ?", &[Value::Null]);
        kept("id BETWEEN 1 AND ?", &[Value::Null]);
        // Not an integer column.
        kept("c = 'x'", &[]);
        kept("d = 1", &[]);
        kept("d BETWEEN 1 AND 2", &[]);
        // OR, NOT BETWEEN, strict bounds, expressions and qualified names.
        kept("id = 1 OR id = 2", &[]);
        kept("id NOT BETWEEN 1 AND 2", &[]);
        kept("id > 1 AND id < 9", &[]);
        kept("id = 1 + 1", &[]);
        kept("t.id = 1", &[]);
        kept("id BETWEEN 1 AND 1.5", &[]);
    }

    #[test]
    fn nullable_columns_need_a_lower_bound() {
        // NULL keys sort first: `n <= 5` scans them, and the WHERE drops them.
        assert_eq!(residual("n <= 5", &[]).as_deref(), Some("n <= 5"));
        assert_eq!(residual("n >= 5", &[]), None);
        assert_eq!(residual("n = 5", &[]), None);
    }
}
