//! Which computed result columns MySQL flags UNSIGNED: a client reads an
//! unsigned BIGINT above 2^63-1 only when the flag says so (Connector/J
//! maps BIGINT UNSIGNED to `BigInteger` and refuses the value as a signed
//! `long`).

use sqlparser::ast::{BinaryOperator, Expr};

use super::select::Source;
use crate::eval::expr::{function_args, function_name};

/// True when MySQL types `expr` as an unsigned integer: an UNSIGNED
/// column, MIN/MAX/ABS of one, CONNECTION_ID() and LAST_INSERT_ID(),
/// integer `+ - * DIV` with an unsigned operand (`%` takes its left one's),
/// and a CASE or IF() whose every branch is unsigned.
pub(super) fn is_unsigned(expr: &Expr, source: Option<&Source>) -> bool {
    match expr {
        Expr::Identifier(ident) if !ident.value.starts_with('@') => column_is_unsigned(&ident.value, source),
        Expr::CompoundIdentifier(parts) if parts.len() == 2 && !parts[0].value.starts_with('@') => {
            column_is_unsigned(&parts[1].value, source)
        }
        Expr::Nested(inner) => is_unsigned(inner, source),
        Expr::Function(function) => match function_name(function).as_str() {
            "CONNECTION_ID" | "LAST_INSERT_ID" => true,
            "IF" => match function_args(function).ok().as_deref() {
                Some([_, Some(then), Some(otherwise)]) => is_unsigned(then, source) && is_unsigned(otherwise, source),
                _ => false,
            },
            "MIN" | "MAX" | "ABS" => match function_args(function).ok().as_deref() {
                Some([Some(arg)]) => is_unsigned(arg, source),
                _ => false,
            },
            _ => false,
        },
        Expr::BinaryOp { left, op, right } => match op {
            BinaryOperator::Plus | BinaryOperator::Minus | BinaryOperator::Multiply | BinaryOperator::MyIntegerDivide => {
                is_unsigned(left, source) || is_unsigned(right, source)
            }
            BinaryOperator::Modulo => is_unsigned(left, source),
            _ => false,
        },
        Expr::Case { conditions, else_result, .. } => {
            conditions.iter().all(|when| is_unsigned(&when.result, source)) && else_result.as_deref().is_none_or(|e| is_unsigned(e, source))
        }
        _ => false,
    }
}

fn column_is_unsigned(name: &str, source: Option<&Source>) -> bool {
    source.and_then(|source| source.def.column_index(name).ok().map(|position| source.def.columns[position].unsigned)).unwrap_or(false)
}
