//! The collation two strings compare under, by MySQL's coercibility rules
//! ("Collation Coercibility in Expressions"): an explicit `COLLATE` beats
//! a column's collation, which beats a literal's or a parameter's (the
//! connection's `collation_connection`); a binary string on either side
//! makes the comparison binary, and JSON text (`->>`, JSON_UNQUOTE) is
//! `utf8mb4_bin`. Other expressions (a function's result, say) take the
//! strongest of their arguments'.

use engine::collation::Collation;
use sqlparser::ast::{BinaryOperator, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments};

use crate::eval::expr::Scope;
use crate::variables::VariableScope;

/// MySQL's COERCIBILITY() levels binlogd's expressions have: lower wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Coercibility {
    Explicit = 0,
    Implicit = 2,
}

#[derive(Debug, Clone, Copy)]
struct Derived {
    collation: Collation,
    coercibility: Coercibility,
}

impl Scope<'_> {
    /// The collation `left` and `right` compare under when both are text.
    pub fn comparison_collation(&self, left: &Expr, right: &Expr) -> Collation {
        self.resolved(stronger(self.derived(left), self.derived(right)))
    }

    /// The collation a list of expressions (`x IN (...)`, BETWEEN)
    /// compares under.
    pub fn list_collation<'e>(&self, exprs: impl IntoIterator<Item = &'e Expr>) -> Collation {
        self.resolved(exprs.into_iter().map(|expr| self.derived(expr)).fold(None, stronger))
    }

    /// The collation one expression's text sorts and groups under (ORDER
    /// BY, GROUP BY, DISTINCT, MIN and MAX).
    pub fn expression_collation(&self, expr: &Expr) -> Collation {
        self.resolved(self.derived(expr))
    }

    fn resolved(&self, derived: Option<Derived>) -> Collation {
        derived.map_or_else(|| self.connection_collation(), |derived| derived.collation)
    }

    /// `collation_connection`: what literals and parameters compare under.
    fn connection_collation(&self) -> Collation {
        let name = self.environment.system_variable("collation_connection", VariableScope::Session).ok();
        let id = name
            .and_then(|name| match name {
                crate::eval::value::Value::Bytes(name) => String::from_utf8(name).ok(),
                _ => None,
            })
            .and_then(|name| crate::charsets::collation_by_name(&name).map(|collation| collation.id));
        id.map_or(Collation::GeneralCi, Collation::from_id)
    }

    fn derived(&self, expr: &Expr) -> Option<Derived> {
        match expr {
            Expr::Identifier(ident) if !ident.value.starts_with('@') => self.column_derived(&ident.value),
            Expr::CompoundIdentifier(parts) if !parts[0].value.starts_with('@') => {
                parts.last().and_then(|column| self.column_derived(&column.value))
            }
            Expr::Nested(inner) => self.derived(inner),
            Expr::Collate { collation, .. } => {
                let name = collation.to_string().trim_matches(|c| c == '`' || c == '\'' || c == '"').to_ascii_lowercase();
                let known = crate::charsets::collation_by_name(&name)?;
                Some(Derived { collation: Collation::from_id(known.id), coercibility: Coercibility::Explicit })
            }
            Expr::Prefixed { prefix, .. } if prefix.value.eq_ignore_ascii_case("_binary") => {
                Some(Derived { collation: Collation::Binary, coercibility: Coercibility::Implicit })
            }
            Expr::Cast { data_type: DataType::Binary(_), .. } => {
                Some(Derived { collation: Collation::Binary, coercibility: Coercibility::Implicit })
            }
            // JSON text (`->>`, JSON_UNQUOTE) is utf8mb4_bin, as in MySQL.
            Expr::BinaryOp { op: BinaryOperator::Arrow | BinaryOperator::LongArrow, .. } => json_text(),
            Expr::Function(function) if function.name.to_string().to_ascii_uppercase().starts_with("JSON_") => json_text(),
            Expr::Function(function) => match &function.args {
                FunctionArguments::List(list) => list
                    .args
                    .iter()
                    .filter_map(|arg| match arg {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)) => self.derived(arg),
                        _ => None,
                    })
                    .fold(None, |strongest, derived| stronger(strongest, Some(derived))),
                _ => None,
            },
            _ => None,
        }
    }

    fn column_derived(&self, name: &str) -> Option<Derived> {
        let position = self.columns.position(name)?;
        let collation = (*self.columns.collations.get(position)?)?;
        Some(Derived { collation, coercibility: Coercibility::Implicit })
    }
}

fn json_text() -> Option<Derived> {
    Some(Derived { collation: Collation::from_id(46), coercibility: Coercibility::Implicit })
}

/// The collation of a pair: binary when either side is, else the lower
/// coercibility's, the left one's on a tie (MySQL's 1267 "Illegal mix of
/// collations" is not raised).
fn stronger(left: Option<Derived>, right: Option<Derived>) -> Option<Derived> {
    match (left, right) {
        (Some(_), Some(right)) if right.collation.is_binary() => Some(right),
        (Some(left), Some(right)) if !left.collation.is_binary() && right.coercibility < left.coercibility => Some(right),
        (Some(left), _) => Some(left),
        (None, right) => right,
    }
}
