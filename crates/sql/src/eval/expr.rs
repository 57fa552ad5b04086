//! Expression evaluation over one row: columns, literals, `?` parameters,
//! `@@` system variables, operators, BETWEEN / IN / LIKE / IS NULL, CASE,
//! IF(), `x COLLATE c`, and the scalar functions clients and sysbench use. Aggregates are computed by
//! `exec/select.rs` and looked up here by their text.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

use sqlparser::ast::{
    BinaryOperator, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, UnaryOperator, Value as Literal,
};

use crate::error::{arithmetic_out_of_range, not_supported, syntax_error, unknown_column, unsigned_arithmetic_out_of_range, SqlResult};
use crate::eval::value::{compare_in, from_bool, text, to_number, to_text, truth, NullCheck, Number, Value};
use crate::variables::VariableScope;
use engine::collation::Collation;

/// What an expression may ask of the session it runs in.
pub trait Environment {
    fn database(&self) -> Option<String>;
    fn system_variable(&self, name: &str, scope: VariableScope) -> SqlResult<Value>;
    /// VERSION(): `@@version`, except for clients that cannot parse it.
    fn version(&self) -> SqlResult<Value> {
        self.system_variable("version", VariableScope::Default)
    }
    /// `@name`: NULL when never set.
    fn user_variable(&self, name: &str) -> Value;
    fn last_insert_id(&self) -> u64;
    fn connection_id(&self) -> u32;
    /// `user@host` as the client connected (USER()).
    fn user(&self) -> String;
    /// The matched account (CURRENT_USER()).
    fn current_user(&self) -> String;
    /// KILL QUERY (or KILL) reached this connection: the statement stops
    /// with 1317.
    fn is_query_killed(&self) -> bool {
        false
    }
    /// When the statement started, microseconds since the epoch (NOW()).
    fn statement_time_micros(&self) -> i64 {
        crate::eval::temporal::clock_micros()
    }
    /// A division by zero (`/`, DIV, `%`, MOD) gives NULL; the session
    /// decides whether that is silent, a warning or an error.
    fn division_by_zero(&self) -> SqlResult<()> {
        Ok(())
    }
    /// max_allowed_packet: a string function's result longer than this is
    /// NULL with warning 1301 (`strings.rs`).
    fn max_allowed_packet_bytes(&self) -> u64 {
        protocol::ConnectionConfig::default().max_allowed_packet as u64
    }
    /// A warning for the statement's SHOW WARNINGS.
    fn warning(&self, code: u16, message: String) {
        let _ = (code, message);
    }
}

/// SLEEP() polls for KILL this often.
const SLEEP_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// SLEEP(seconds): 0, or 1 when KILL QUERY interrupted it (then a query
/// reading rows fails with 1317 at its next row, as in mysqld).
fn sleep(environment: &dyn Environment, seconds: f64) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds.clamp(0.0, 365.0 * 86400.0));
    loop {
        if environment.is_query_killed() {
            return Value::Int(1);
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return Value::Int(0);
        }
        std::thread::sleep(SLEEP_POLL.min(deadline - now));
    }
}

/// The names an expression can refer to: one table's columns.
#[derive(Debug, Clone, Default)]
pub struct Columns {
    /// The table's name and alias, for `t.c` references.
    pub table_names: Vec<String>,
    pub names: Vec<String>,
    /// Per column, the members of an ENUM or SET column, whose stored
    /// number an expression reads as text; empty when the table has none.
    pub members: Vec<Option<crate::eval::enumeration::Members>>,
    /// Per column, the collation a character or binary string column's
    /// text compares under; `None` for other columns and for a column past
    /// the end (see `collations.rs`).
    pub collations: Vec<Option<Collation>>,
}

impl Columns {
    /// `def`'s columns, named by the table's name and the `alias` given.
    pub fn of_table(def: &engine::TableDef, alias: Option<&str>) -> Columns {
        let mut table_names = vec![def.name.clone()];
        table_names.extend(alias.map(str::to_string));
        let is_text = |column: &engine::ColumnDef| {
            use binlog_format::ColumnType as T;
            matches!(column.column_type, T::String { .. } | T::VarChar { .. } | T::Blob { .. } | T::Enum { .. } | T::Set { .. })
        };
        Columns {
            table_names,
            names: def.columns.iter().map(|c| c.name.clone()).collect(),
            members: crate::eval::enumeration::table_members(def),
            collations: def.columns.iter().enumerate().map(|(i, c)| is_text(c).then(|| def.key_collation(i))).collect(),
        }
    }

    /// Column `position`'s stored value as an expression reads it.
    pub fn read(&self, position: usize, stored: &Value) -> Value {
        match self.members.get(position) {
            Some(Some(members)) => members.text(stored),
            _ => stored.clone(),
        }
    }

    pub fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|column| column.eq_ignore_ascii_case(name))
    }
}

/// Everything one evaluation needs.
pub struct Scope<'a> {
    pub columns: &'a Columns,
    pub row: Option<&'a [Value]>,
    pub params: &'a [Value],
    pub environment: &'a dyn Environment,
    /// Aggregate results of the current group, by the aggregate's text.
    pub aggregates: Option<&'a HashMap<String, Value>>,
}

pub const AGGREGATES: [&str; 6] = ["COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT"];

pub fn function_name(function: &Function) -> String {
    function.name.to_string().to_ascii_uppercase()
}

pub fn is_aggregate(function: &Function) -> bool {
    AGGREGATES.contains(&function_name(function).as_str())
}

/// The plain arguments of a call; `*` comes back as `None`.
pub fn function_args(function: &Function) -> SqlResult<Vec<Option<&Expr>>> {
    match &function.args {
        FunctionArguments::None => Ok(Vec::new()),
        FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|arg| match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(expr)) => Ok(Some(expr)),
                FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => Ok(None),
                other => Err(not_supported(other.to_string())),
            })
            .collect(),
        FunctionArguments::Subquery(_) => Err(not_supported("subqueries")),
    }
}

/// A string value: what a collation applies to.
fn is_text(value: &Value) -> bool {
    matches!(value, Value::Bytes(_))
}

fn is_number(value: &Value) -> bool {
    matches!(value, Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Double(_) | Value::Decimal(_))
}

/// A literal as a value. `?` placeholders are numbered `$1`, `$2`, ... by
/// `parse.rs` and read from the parameters.
pub fn literal(value: &Literal, params: &[Value]) -> SqlResult<Value> {
    Ok(match value {
        Literal::Number(text, _) => number_literal(text),
        Literal::SingleQuotedString(s) | Literal::DoubleQuotedString(s) => Value::Bytes(s.clone().into_bytes()),
        Literal::Boolean(b) => Value::Int(i64::from(*b)),
        Literal::Null => Value::Null,
        Literal::HexStringLiteral(hex) => Value::Bytes(decode_hex(hex).ok_or_else(|| syntax_error(hex))?),
        Literal::SingleQuotedByteStringLiteral(digits) => crate::eval::bit::bit_literal(digits).ok_or_else(|| syntax_error(digits))?,
        Literal::Placeholder(name) => placeholder(name, params)?.clone(),
        other => return Err(not_supported(other.to_string())),
    })
}

/// The parameter a `$N` placeholder stands for.
fn placeholder<'p>(name: &str, params: &'p [Value]) -> SqlResult<&'p Value> {
    let index: usize = name.strip_prefix('$').and_then(|n| n.parse().ok()).ok_or_else(|| syntax_error(name))?;
    index.checked_sub(1).and_then(|index| params.get(index)).ok_or_else(|| syntax_error(name))
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    let hex = if hex.len() % 2 == 1 { format!("0{hex}") } else { hex.to_string() };
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok()).collect()
}

fn number_literal(text: &str) -> Value {
    if let Ok(value) = text.parse::<i64>() {
        return Value::Int(value);
    }
    if let Ok(value) = text.parse::<u64>() {
        return Value::UInt(value);
    }
    if text.contains(['e', 'E']) {
        return Value::Double(text.parse().unwrap_or(0.0));
    }
    Value::Decimal(text.to_string())
}

/// A `@@[scope.]name` reference, if `parts` is one.
pub fn system_variable_reference(parts: &[Ident]) -> Option<(String, VariableScope)> {
    let first = parts.first()?.value.as_str();
    let name = first.strip_prefix("@@")?;
    match (parts.len(), name.to_ascii_lowercase().as_str()) {
        (1, _) => Some((name.to_ascii_lowercase(), VariableScope::Default)),
        (2, "session") | (2, "local") => Some((parts[1].value.to_ascii_lowercase(), VariableScope::Session)),
        (2, "global") => Some((parts[1].value.to_ascii_lowercase(), VariableScope::Global)),
        _ => None,
    }
}

impl<'a> Scope<'a> {
    /// A scope over one row of `columns`.
    pub fn for_row(columns: &'a Columns, row: &'a [Value], params: &'a [Value], environment: &'a dyn Environment) -> Scope<'a> {
        Scope { columns, row: Some(row), params, environment, aggregates: None }
    }

    /// A scope without a row: what holds for every row of a statement
    /// (the collations its comparisons use).
    pub fn for_statement(columns: &'a Columns, params: &'a [Value], environment: &'a dyn Environment) -> Scope<'a> {
        Scope { columns, row: None, params, environment, aggregates: None }
    }

    pub fn eval(&self, expr: &Expr) -> SqlResult<Value> {
        match expr {
            Expr::Identifier(ident) => self.identifier(std::slice::from_ref(ident)),
            Expr::CompoundIdentifier(parts) => self.identifier(parts),
            Expr::Value(value) => literal(&value.value, self.params),
            Expr::Nested(inner) => self.eval(inner),
            // A collation changes how text compares, not its value (see
            // `collations.rs`).
            Expr::Collate { expr: inner, .. } => self.eval(inner),
            Expr::UnaryOp { op, expr: inner } => {
                let value = self.eval(inner)?;
                match op {
                    UnaryOperator::Minus => negate(&value, expr),
                    UnaryOperator::Plus => Ok(value),
                    UnaryOperator::Not => Ok(from_bool(truth(&value).map(|b| !b))),
                    other => Err(not_supported(other.to_string())),
                }
            }
            Expr::BinaryOp { left, op, right } => self.binary(expr, left, op, right),
            Expr::IsNull(inner) => Ok(Value::Int(i64::from(self.eval(inner)?.is_null()))),
            Expr::IsNotNull(inner) => Ok(Value::Int(i64::from(!self.eval(inner)?.is_null()))),
            Expr::Between { expr: inner, negated, low, high } => {
                let value = self.value_ref(inner)?;
                let (low_value, high_value) = (self.value_ref(low)?, self.value_ref(high)?);
                let collation = match is_text(&value) {
                    true => self.list_collation([&**inner, &**low, &**high]),
                    false => Collation::Binary,
                };
                let inside = match (compare_in(&value, &low_value, collation), compare_in(&value, &high_value, collation)) {
                    (Some(a), Some(b)) => Some(a != Ordering::Less && b != Ordering::Greater),
                    _ => None,
                };
                Ok(from_bool(inside.map(|b| b != *negated)))
            }
            Expr::In { expr: inner, target: sqlparser::ast::InTarget::List(list), negated, global: false } => {
                let value = self.value_ref(inner)?;
                let collation = match is_text(&value) {
                    true => self.list_collation(std::iter::once(&**inner).chain(list)),
                    false => Collation::Binary,
                };
                let mut result = Some(false);
                for item in list {
                    let item = self.value_ref(item)?;
                    match compare_in(&value, &item, collation) {
                        Some(Ordering::Equal) => {
                            result = Some(true);
                            break;
                        }
                        None => result = None,
                        Some(_) => {}
                    }
                }
                Ok(from_bool(result.map(|b| b != *negated)))
            }
            Expr::Like { negated, any: false, expr: inner, pattern: pattern_expr, escape_char: None } => {
                let (value, pattern) = (self.eval(inner)?, self.eval(pattern_expr)?);
                if value.is_null() || pattern.is_null() {
                    return Ok(Value::Null);
                }
                let collation = self.comparison_collation(inner, pattern_expr);
                let matched = like_in(&text(&value), &text(&pattern), collation);
                Ok(Value::Int(i64::from(matched != *negated)))
            }
            Expr::Function(function) => self.function(function),
            Expr::Case { operand, conditions, else_result, .. } => self.case(operand.as_deref(), conditions, else_result.as_deref()),
            Expr::TypedString(typed) => {
                let value = literal(&typed.value.value, self.params)?;
                crate::eval::temporal::typed_literal(&typed.data_type, &value)
                    .unwrap_or_else(|| Err(not_supported(first_words(&expr.to_string()))))
            }
            // A character set introducer (`_utf8mb4'…'`, `_binary X'…'`), as
            // mysqldump and mysqlbinlog write literals: the literal keeps the
            // characters the statement text gave it. MySQL's lexer reads a
            // word that names no character set as a column, so that is 1054.
            Expr::Prefixed { prefix, value } if prefix.value.starts_with('_') => {
                if crate::charsets::character_set(&prefix.value[1..]).is_err() {
                    return self.identifier(std::slice::from_ref(prefix));
                }
                self.eval(value)
            }
            // sqlparser reads FLOOR(x) and CEIL(x) as expressions of their own.
            Expr::Floor { expr: inner, field: sqlparser::ast::CeilFloorKind::DateTimeField(sqlparser::ast::DateTimeField::NoDateTime) } => {
                let value = self.eval(inner)?;
                crate::eval::math::call("FLOOR", &[value]).unwrap_or(Ok(Value::Null))
            }
            Expr::Ceil { expr: inner, field: sqlparser::ast::CeilFloorKind::DateTimeField(sqlparser::ast::DateTimeField::NoDateTime) } => {
                let value = self.eval(inner)?;
                crate::eval::math::call("CEIL", &[value]).unwrap_or(Ok(Value::Null))
            }
            Expr::Extract { field, expr: inner, .. } => {
                let value = self.eval(inner)?;
                let name = field.to_string().to_ascii_uppercase();
                crate::eval::date_functions::call(&name, &[value], self.environment)
                    .unwrap_or_else(|| Err(not_supported(format!("EXTRACT({name} FROM ...)"))))
            }
            Expr::Cast { expr: inner, data_type, format: None, .. } => {
                crate::eval::cast::cast(self.eval(inner)?, data_type, self.environment)
            }
            Expr::Convert { is_try: false, expr: inner, data_type: Some(data_type), charset: None, target_before_value: false, styles }
                if styles.is_empty() =>
            {
                crate::eval::cast::cast(self.eval(inner)?, data_type, self.environment)
            }
            // CONVERT(text USING charset): binlogd's text is UTF-8 whatever
            // the character set named, so the value stays.
            Expr::Convert { is_try: false, expr: inner, data_type: None, charset: Some(charset), styles, .. } if styles.is_empty() => {
                crate::charsets::character_set(&charset.to_string())?;
                self.eval(inner)
            }
            other => Err(not_supported(first_words(&other.to_string()))),
        }
    }

    /// `CASE x WHEN v THEN r ... [ELSE e] END` takes the first `v` equal to
    /// `x` (a NULL equals nothing); `CASE WHEN c THEN r ... END` the first
    /// true `c`; without a match, ELSE or NULL. Only the taken branch is
    /// evaluated, as in MySQL.
    fn case(&self, operand: Option<&Expr>, conditions: &[sqlparser::ast::CaseWhen], else_result: Option<&Expr>) -> SqlResult<Value> {
        let operand_value = operand.map(|operand| self.eval(operand)).transpose()?;
        for when in conditions {
            let taken = match (&operand_value, operand) {
                (Some(value), Some(operand)) => {
                    let candidate = self.eval(&when.condition)?;
                    let collation = match is_text(value) && is_text(&candidate) {
                        true => self.comparison_collation(operand, &when.condition),
                        false => Collation::Binary,
                    };
                    compare_in(value, &candidate, collation) == Some(Ordering::Equal)
                }
                _ => self.is_true(&when.condition)?,
            };
            if taken {
                return self.eval(&when.result);
            }
        }
        else_result.map_or(Ok(Value::Null), |result| self.eval(result))
    }

    /// [`Scope::eval`], borrowing a column's stored value or a parameter
    /// where that is what the expression reads: comparisons look at
    /// values without copying a row's text.
    pub fn value_ref(&self, expr: &Expr) -> SqlResult<Cow<'a, Value>> {
        match expr {
            Expr::Identifier(ident) if !ident.value.starts_with('@') => {
                let row_value = self.row.and_then(|row| {
                    let position = self.columns.position(&ident.value)?;
                    let stored = &row[position];
                    // ENUM/SET read as text, TIMESTAMP in the session's zone.
                    let plain = !matches!(self.columns.members.get(position), Some(Some(_))) && !matches!(stored, Value::Timestamp { .. });
                    plain.then_some(stored)
                });
                match row_value {
                    Some(stored) => Ok(Cow::Borrowed(stored)),
                    None => self.eval(expr).map(Cow::Owned),
                }
            }
            Expr::Value(value) => match &value.value {
                Literal::Placeholder(name) => placeholder(name, self.params).map(Cow::Borrowed),
                _ => self.eval(expr).map(Cow::Owned),
            },
            Expr::Nested(inner) => self.value_ref(inner),
            _ => self.eval(expr).map(Cow::Owned),
        }
    }

    pub fn is_true(&self, expr: &Expr) -> SqlResult<bool> {
        Ok(truth(&self.eval(expr)?) == Some(true))
    }

    /// Whether [`Scope::column`] reads column `position` of `row` as it
    /// is stored: neither a TIMESTAMP (shown in the session's time zone)
    /// nor an ENUM or SET (shown as its member's text).
    pub fn reads_as_stored(&self, position: usize, row: &[Value]) -> bool {
        !matches!(row[position], Value::Timestamp { .. }) && !matches!(self.columns.members.get(position), Some(Some(_)))
    }

    /// Column `position` of `row` as an expression reads it: a TIMESTAMP
    /// in the session's time zone, an ENUM or SET as its member's text.
    pub fn column(&self, position: usize, row: &[Value]) -> Value {
        match &row[position] {
            timestamp @ Value::Timestamp { .. } => {
                crate::eval::temporal::timestamp_local(timestamp, crate::eval::temporal::TimeZone::of(self.environment))
            }
            stored => self.columns.read(position, stored),
        }
    }

    fn identifier(&self, parts: &[Ident]) -> SqlResult<Value> {
        if let Some((name, scope)) = system_variable_reference(parts) {
            return self.environment.system_variable(&name, scope);
        }
        if parts.len() == 1 && parts[0].value.starts_with('@') {
            return Ok(self.environment.user_variable(&parts[0].value[1..]));
        }
        let column = &parts[parts.len() - 1].value;
        let qualifier_matches =
            parts.len() < 2 || self.columns.table_names.iter().any(|name| name.eq_ignore_ascii_case(&parts[parts.len() - 2].value));
        let position = self.columns.position(column).filter(|_| qualifier_matches);
        match (position, self.row) {
            (Some(position), Some(row)) => Ok(self.column(position, row)),
            _ => match crate::eval::bit::bit_identifier(column).filter(|_| parts.len() == 1 && parts[0].quote_style.is_none()) {
                Some(literal) => Ok(literal),
                None => {
                    let full_name = parts.iter().map(|part| part.value.as_str()).collect::<Vec<_>>().join(".");
                    Err(unknown_column(&full_name, "field list"))
                }
            },
        }
    }

    fn binary(&self, whole: &Expr, left: &Expr, op: &BinaryOperator, right: &Expr) -> SqlResult<Value> {
        use BinaryOperator::*;
        match op {
            And => {
                let a = truth(&self.eval(left)?);
                if a == Some(false) {
                    return Ok(Value::Int(0));
                }
                let b = truth(&self.eval(right)?);
                Ok(from_bool(match (a, b) {
                    (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                }))
            }
            Or => {
                let a = truth(&self.eval(left)?);
                if a == Some(true) {
                    return Ok(Value::Int(1));
                }
                let b = truth(&self.eval(right)?);
                Ok(from_bool(match (a, b) {
                    (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                }))
            }
            Eq | NotEq | Lt | LtEq | Gt | GtEq | Spaceship => {
                let (a, b) = (self.value_ref(left)?, self.value_ref(right)?);
                // An ENUM or SET compared with a number compares its index or mask.
                let a = if is_number(&b) { self.stored_number(left).map_or(a, Cow::Owned) } else { a };
                let b = if is_number(&a) { self.stored_number(right).map_or(b, Cow::Owned) } else { b };
                let collation = match is_text(&a) && is_text(&b) {
                    true => self.comparison_collation(left, right),
                    false => Collation::Binary,
                };
                if matches!(op, Spaceship) {
                    return Ok(Value::Int(i64::from(match (a.is_null(), b.is_null()) {
                        (true, true) => true,
                        (false, false) => compare_in(&a, &b, collation) == Some(Ordering::Equal),
                        _ => false,
                    })));
                }
                Ok(from_bool(compare_in(&a, &b, collation).map(|ordering| match op {
                    Eq => ordering == Ordering::Equal,
                    NotEq => ordering != Ordering::Equal,
                    Lt => ordering == Ordering::Less,
                    LtEq => ordering != Ordering::Greater,
                    Gt => ordering == Ordering::Greater,
                    _ => ordering != Ordering::Less,
                })))
            }
            // `d + INTERVAL n unit`, `INTERVAL n unit + d`, `d - INTERVAL n unit`.
            Plus | Minus if matches!(right, Expr::Interval(_)) || (matches!(op, Plus) && matches!(left, Expr::Interval(_))) => {
                let (date, interval) = match right {
                    Expr::Interval(interval) => (left, interval),
                    _ => match left {
                        Expr::Interval(interval) => (right, interval),
                        _ => unreachable!("the guard saw an interval"),
                    },
                };
                let interval = self.interval(interval)?;
                Ok(crate::eval::date_functions::add_interval(&self.eval(date)?, interval, matches!(op, Minus), self.environment))
            }
            Plus | Minus | Multiply | Divide | Modulo | MyIntegerDivide => {
                let a = self.stored_number(left).map_or_else(|| self.eval(left), Ok)?;
                let b = self.stored_number(right).map_or_else(|| self.eval(right), Ok)?;
                if matches!(op, Divide | Modulo | MyIntegerDivide) && !a.is_null() && is_zero(&b) {
                    self.environment.division_by_zero()?;
                    return Ok(Value::Null);
                }
                arithmetic(whole, op, &a, &b)
            }
            // sqlparser binds `->` looser than arithmetic, so `j->'$.n' + 1`
            // arrives as `j -> ('$.n' + 1)`; MySQL's `column->path` is one
            // operand.
            Arrow | LongArrow if matches!(right, Expr::BinaryOp { .. }) => {
                let Expr::BinaryOp { left: path, op: outer, right: rest } = right else { unreachable!() };
                let operand = Expr::BinaryOp { left: Box::new(left.clone()), op: op.clone(), right: path.clone() };
                self.binary(whole, &operand, outer, rest)
            }
            Arrow => crate::eval::json_functions::arrow(&self.eval(left)?, &self.eval(right)?),
            LongArrow => crate::eval::json_functions::long_arrow(&self.eval(left)?, &self.eval(right)?),
            other => Err(not_supported(other.to_string())),
        }
    }

    /// The stored number of an ENUM or SET column `expr` names (its index
    /// or mask), which is what it means in a numeric context.
    fn stored_number(&self, expr: &Expr) -> Option<Value> {
        if self.columns.members.is_empty() {
            return None;
        }
        let Expr::Identifier(ident) = expr else { return None };
        let position = self.columns.position(&ident.value)?;
        self.columns.members.get(position)?.as_ref()?;
        self.row.map(|row| row[position].clone())
    }

    /// `INTERVAL n unit` as an interval; `None` when `n` is NULL.
    fn interval(&self, interval: &sqlparser::ast::Interval) -> SqlResult<Option<crate::eval::date_functions::Interval>> {
        use sqlparser::ast::DateTimeField;
        // The parser reads a composite unit as `HOUR TO MINUTE`, and
        // SECOND_MICROSECOND as `SECOND (0, 6)` (`parse::composite_interval_units`).
        let unit = match (&interval.leading_field, &interval.last_field) {
            (Some(DateTimeField::Second), None)
                if (interval.leading_precision, interval.fractional_seconds_precision) == (Some(0), Some(6)) =>
            {
                "SECOND_MICROSECOND".to_string()
            }
            (Some(field), None) => field.to_string(),
            (Some(first), Some(last)) => format!("{first}_{last}"),
            _ => return Err(not_supported(format!("INTERVAL {interval}"))),
        };
        let amount = self.eval(&interval.value)?;
        match crate::eval::date_functions::Interval::parse(&amount, &unit) {
            None if !amount.is_null() && !crate::eval::date_functions::is_unit(&unit) => Err(syntax_error(&unit)),
            parsed => Ok(parsed),
        }
    }

    /// The functions whose arguments include an interval or a unit
    /// keyword: DATE_ADD / DATE_SUB / ADDDATE / SUBDATE with an INTERVAL,
    /// TIMESTAMPDIFF and TIMESTAMPADD, EXTRACT's kin.
    fn unit_function(&self, name: &str, args: &[Option<&Expr>]) -> SqlResult<Option<Value>> {
        use crate::eval::date_functions::{add_interval, timestamp_diff, Interval};
        let unit_of = |expr: &Expr| match expr {
            Expr::Identifier(ident) => Some(ident.value.to_ascii_uppercase()),
            _ => None,
        };
        let environment = self.environment;
        Ok(Some(match (name, args) {
            ("DATE_ADD" | "DATE_SUB" | "ADDDATE" | "SUBDATE", [Some(date), Some(Expr::Interval(interval))]) => {
                let interval = self.interval(interval)?;
                let subtract = matches!(name, "DATE_SUB" | "SUBDATE");
                add_interval(&self.eval(date)?, interval, subtract, environment)
            }
            ("TIMESTAMPDIFF", [Some(unit), Some(from), Some(to)]) => {
                let Some(unit) = unit_of(unit) else { return Ok(None) };
                timestamp_diff(&unit, &self.eval(from)?, &self.eval(to)?, environment)
            }
            ("TIMESTAMPADD", [Some(unit), Some(amount), Some(date)]) => {
                let Some(unit) = unit_of(unit) else { return Ok(None) };
                let interval = Interval::parse(&self.eval(amount)?, &unit);
                add_interval(&self.eval(date)?, interval, false, environment)
            }
            _ => return Ok(None),
        }))
    }

    fn function(&self, function: &Function) -> SqlResult<Value> {
        let name = function_name(function);
        if AGGREGATES.contains(&name.as_str()) {
            let key = function.to_string();
            return self.aggregates.and_then(|aggregates| aggregates.get(&key).cloned()).ok_or_else(MysqlInvalidGroup::error);
        }
        let args = function_args(function)?;
        // IF(condition, then, else) evaluates only the branch it takes.
        if let ("IF", [Some(condition), Some(then), Some(otherwise)]) = (name.as_str(), args.as_slice()) {
            return self.eval(if self.is_true(condition)? { then } else { otherwise });
        }
        if let Some(value) = self.unit_function(&name, &args)? {
            return Ok(value);
        }
        let mut values = Vec::with_capacity(args.len());
        for arg in &args {
            match arg {
                Some(expr) => values.push(self.eval(expr)?),
                None => return Err(syntax_error("*")),
            }
        }
        let environment = self.environment;
        if let Some(result) = crate::eval::temporal::function(&name, &values, environment) {
            return result;
        }
        if let Some(result) = crate::eval::date_functions::call(&name, &values, environment) {
            return result;
        }
        if let Some(result) = crate::eval::strings::call(&name, &values, environment) {
            return result;
        }
        if let Some(result) = crate::eval::string_search::call(&name, &values) {
            return Ok(result);
        }
        if let Some(result) = crate::eval::choosing::call(&name, &values) {
            return Ok(result);
        }
        if let Some(result) = crate::eval::digests::call(&name, &values) {
            return Ok(result);
        }
        if let Some(result) = crate::eval::math::call(&name, &values) {
            return result;
        }
        if let Some(result) = crate::eval::uuids::call(&name, &values) {
            return result;
        }
        if let Some(result) = crate::eval::spatial::call(&name, &values) {
            return result;
        }
        if let Some(result) = crate::eval::gtid_functions::call(&name, &values, environment) {
            return result;
        }
        Ok(match (name.as_str(), values.as_slice()) {
            ("DATABASE" | "SCHEMA", []) => environment.database().map_or(Value::Null, |d| Value::Bytes(d.into_bytes())),
            ("VERSION", []) => environment.version()?,
            ("SLEEP", [seconds]) => sleep(environment, to_number(seconds).map_or(0.0, Number::as_f64)),
            ("CONNECTION_ID", []) => Value::UInt(u64::from(environment.connection_id())),
            ("LAST_INSERT_ID", []) => Value::UInt(environment.last_insert_id()),
            ("USER" | "SESSION_USER" | "SYSTEM_USER", []) => Value::Bytes(environment.user().into_bytes()),
            ("CURRENT_USER", []) => Value::Bytes(environment.current_user().into_bytes()),
            ("LENGTH" | "OCTET_LENGTH", [value]) => {
                if value.is_null() {
                    Value::Null
                } else {
                    Value::Int(to_text(value).len() as i64)
                }
            }
            ("CHAR_LENGTH" | "CHARACTER_LENGTH", [value]) => {
                if value.is_null() {
                    Value::Null
                } else {
                    Value::Int(text(value).chars().count() as i64)
                }
            }
            ("UPPER" | "UCASE", [value]) => map_text(value, |s| s.to_uppercase()),
            ("LOWER" | "LCASE", [value]) => map_text(value, |s| s.to_lowercase()),
            ("COALESCE" | "IFNULL", values) if !values.is_empty() => values.iter().find(|v| !v.is_null()).cloned().unwrap_or(Value::Null),
            ("ABS", [value]) => match to_number(value) {
                None => Value::Null,
                Some(Number::Int(v)) => int_value(v.abs()),
                Some(Number::Float(v)) => Value::Double(v.abs()),
            },
            _ => {
                return crate::eval::json_functions::call(&name, &args, &values)?.ok_or_else(|| MysqlInvalidGroup::unknown_function(&name))
            }
        })
    }
}

fn map_text(value: &Value, f: impl Fn(&str) -> String) -> Value {
    if value.is_null() {
        Value::Null
    } else {
        Value::Bytes(f(&text(value)).into_bytes())
    }
}

/// MySQL's errors for misplaced aggregates and unknown functions.
struct MysqlInvalidGroup;

impl MysqlInvalidGroup {
    /// 1111 ER_INVALID_GROUP_FUNC_USE.
    fn error() -> protocol::MysqlError {
        protocol::MysqlError::new(1111, "HY000", "Invalid use of group function")
    }

    /// 1305 ER_SP_DOES_NOT_EXIST, what MySQL says of an unknown function.
    fn unknown_function(name: &str) -> protocol::MysqlError {
        protocol::MysqlError::new(1305, "42000", format!("FUNCTION {} does not exist", name.to_ascii_lowercase()))
    }
}

/// The first few words of an expression or statement, for 1235 messages.
pub fn first_words(text: &str) -> String {
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

pub fn int_value(value: i128) -> Value {
    if let Ok(v) = i64::try_from(value) {
        Value::Int(v)
    } else if let Ok(v) = u64::try_from(value) {
        Value::UInt(v)
    } else {
        Value::Double(value as f64)
    }
}

fn negate(value: &Value, expr: &Expr) -> SqlResult<Value> {
    // A DECIMAL stays exact: its sign flips on its digits.
    if let Value::Decimal(text) = value {
        if !text.contains(['e', 'E']) {
            let negated = match text.strip_prefix('-') {
                Some(positive) => positive.to_string(),
                None => format!("-{text}"),
            };
            return Ok(Value::Decimal(crate::eval::decimal::round(&negated, text.split_once('.').map_or(0, |(_, f)| f.len() as u8)).0));
        }
    }
    match to_number(value) {
        None => Ok(Value::Null),
        Some(Number::Int(v)) => {
            let negated = -v;
            if negated < i128::from(i64::MIN) {
                return Err(arithmetic_out_of_range(&expr.to_string()));
            }
            Ok(int_value(negated))
        }
        Some(Number::Float(v)) => Ok(Value::Double(-v)),
    }
}

/// A divisor that divides by zero: a number equal to zero (text reads as
/// its leading number, as in arithmetic). NULL is not zero.
fn is_zero(value: &Value) -> bool {
    match to_number(value) {
        Some(Number::Int(v)) => v == 0,
        Some(Number::Float(v)) => v == 0.0,
        None => false,
    }
}

fn arithmetic(expr: &Expr, op: &BinaryOperator, a: &Value, b: &Value) -> SqlResult<Value> {
    use BinaryOperator::*;
    let (Some(x), Some(y)) = (to_number(a), to_number(b)) else {
        return Ok(Value::Null);
    };
    let exact = matches!(a, Value::Decimal(_)) || matches!(b, Value::Decimal(_));
    match (x, y, op) {
        (_, _, Divide) => {
            let divisor = y.as_f64();
            if divisor == 0.0 {
                return Ok(Value::Null);
            }
            finite_double(x.as_f64() / divisor, expr)
        }
        (Number::Int(x), Number::Int(y), _) if !exact => {
            let result = match op {
                Plus => x.checked_add(y),
                Minus => x.checked_sub(y),
                Multiply => x.checked_mul(y),
                Modulo | MyIntegerDivide if y == 0 => return Ok(Value::Null),
                Modulo => x.checked_rem(y),
                _ => x.checked_div(y),
            };
            // MySQL's result type: BIGINT UNSIGNED when an operand is
            // unsigned, BIGINT when both are signed integers; numbers read
            // from text keep the span of both.
            let unsigned = matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_));
            let (low, high) = if unsigned {
                (0, i128::from(u64::MAX))
            } else if matches!((a, b), (Value::Int(_), Value::Int(_))) {
                (i128::from(i64::MIN), i128::from(i64::MAX))
            } else {
                (i128::from(i64::MIN), i128::from(u64::MAX))
            };
            match result {
                Some(value) if (low..=high).contains(&value) => Ok(int_value(value)),
                _ if unsigned => Err(unsigned_arithmetic_out_of_range(&expr.to_string())),
                _ => Err(arithmetic_out_of_range(&expr.to_string())),
            }
        }
        _ => {
            let (x, y) = (x.as_f64(), y.as_f64());
            let result = match op {
                Plus => x + y,
                Minus => x - y,
                Multiply => x * y,
                Modulo if y == 0.0 => return Ok(Value::Null),
                Modulo => x % y,
                _ if y == 0.0 => return Ok(Value::Null),
                _ => (x / y).trunc(),
            };
            finite_double(result, expr)
        }
    }
}

/// A DOUBLE result, or 1690 when it left the finite numbers: MySQL has no
/// infinity or NaN to store or send.
fn finite_double(value: f64, expr: &Expr) -> SqlResult<Value> {
    if !value.is_finite() {
        return Err(protocol::MysqlError::new(1690, "22003", format!("DOUBLE value is out of range in '{expr}'")));
    }
    Ok(Value::Double(value))
}

/// SQL LIKE with `%` and `_` and `\` escapes, case-insensitive as
/// utf8mb4_general_ci compares (SHOW ... LIKE). A loop, not a recursion: the pattern and
/// the value come from the client, and a recursion a character deep would
/// let a long pattern overflow the connection's stack. On a mismatch it
/// goes back to the last `%` and lets it take one more character, which is
/// all the backtracking `%` and `_` patterns need.
pub fn like(value: &str, pattern: &str) -> bool {
    like_in(value, pattern, Collation::GeneralCi)
}

/// [`like`] with characters compared one by one under `collation`.
pub fn like_in(value: &str, pattern: &str, collation: Collation) -> bool {
    let value: Vec<char> = value.chars().collect();
    let pattern = like_pattern(pattern);
    let same = |a: char, b: char| {
        a == b
            || (!collation.is_binary()
                && collation.compare(a.encode_utf8(&mut [0; 4]).as_bytes(), b.encode_utf8(&mut [0; 4]).as_bytes()) == Ordering::Equal)
    };
    let (mut at_value, mut at_pattern) = (0, 0);
    // After the last `%` seen: where the pattern goes on, and the value
    // position the `%` has taken characters up to.
    let mut last_any: Option<(usize, usize)> = None;
    while at_value < value.len() {
        match pattern.get(at_pattern) {
            Some(LikeToken::Any) => {
                at_pattern += 1;
                last_any = Some((at_pattern, at_value));
            }
            Some(LikeToken::One) => (at_value, at_pattern) = (at_value + 1, at_pattern + 1),
            Some(LikeToken::Char(c)) if same(*c, value[at_value]) => (at_value, at_pattern) = (at_value + 1, at_pattern + 1),
            _ => match last_any {
                Some((after_any, taken)) => {
                    last_any = Some((after_any, taken + 1));
                    (at_value, at_pattern) = (taken + 1, after_any);
                }
                None => return false,
            },
        }
    }
    pattern[at_pattern..].iter().all(|token| *token == LikeToken::Any)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LikeToken {
    /// `%`
    Any,
    /// `_`
    One,
    Char(char),
}

/// `\x` is the character x; a `\` at the end is itself.
fn like_pattern(pattern: &str) -> Vec<LikeToken> {
    let mut tokens = Vec::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '%' => LikeToken::Any,
            '_' => LikeToken::One,
            '\\' => LikeToken::Char(chars.next().unwrap_or('\\')),
            c => LikeToken::Char(c),
        });
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_mysql() {
        assert!(like("binlog_format", "binlog%"));
        assert!(like("Binlog_Format", "binlog\\_format"));
        assert!(!like("binlogXformat", "binlog\\_format"));
        assert!(like("abc", "a_c"));
        assert!(!like("abcd", "a_c"));
        assert!(like("mississippi", "%iss%ppi"));
        assert!(like("aXbXc", "%b%c"));
        assert!(!like("aXbXcd", "%b%c"));
        assert!(like("", "%%"));
        assert!(!like("", "_"));
        assert!(like("50%", "50\\%"));
        assert!(!like("500", "50\\%"));
        assert!(like("a\\", "a\\"));
    }

    #[test]
    fn like_walks_long_patterns_without_recursing() {
        let long = "a".repeat(1_000_000);
        assert!(like(&long, &"_".repeat(1_000_000)));
        assert!(like(&long, &"%a".repeat(1_000)));
        assert!(!like(&long, &format!("{}b", "%".repeat(1_000))));
    }
}
