//! Generated columns (`col type [GENERATED ALWAYS] AS (expr) [VIRTUAL |
//! STORED]`): the checks CREATE TABLE makes on the expression, its text as
//! MySQL prints it (SHOW CREATE TABLE, INFORMATION_SCHEMA's
//! GENERATION_EXPRESSION), and the values a written row gets.
//!
//! VIRTUAL and STORED columns are both computed whenever a row is written
//! (INSERT, and UPDATE after its assignments) and kept with the row, so a
//! read returns what the expression gives for the row's current values,
//! and the row images carry every column, as MySQL's do. A replica or a
//! `BINLOG` statement applies the values the images carry, as MySQL's
//! applier does, without computing them again.

use std::ops::ControlFlow;

use engine::{ColumnDef, TableDef};
use protocol::MysqlError;
use sqlparser::ast::{visit_expressions, Expr, Value as Literal};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

use crate::error::SqlResult;
use crate::eval::column_expression_rules::{self, ColumnExpressionRules};

/// Functions whose value depends on more than the row: MySQL refuses them
/// in a generation expression (3102).
const DISALLOWED_FUNCTIONS: [&str; 22] = [
    "NOW",
    "CURRENT_TIMESTAMP",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "SYSDATE",
    "CURDATE",
    "CURRENT_DATE",
    "CURTIME",
    "CURRENT_TIME",
    "UTC_TIMESTAMP",
    "UTC_DATE",
    "UTC_TIME",
    "UNIX_TIMESTAMP",
    "RAND",
    "UUID",
    "CONNECTION_ID",
    "LAST_INSERT_ID",
    "USER",
    "CURRENT_USER",
    "DATABASE",
    "SLEEP",
    "VERSION",
];

/// The expression of a generated column, parsed.
pub fn parse_expression(text: &str) -> SqlResult<Expr> {
    Parser::new(&MySqlDialect {})
        .try_with_sql(text)
        .and_then(|mut parser| parser.parse_expr())
        .map_err(|error| crate::error::not_supported(format!("generation expression {text}: {error}")))
}

/// 3102 ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED.
fn disallowed(column: &str) -> MysqlError {
    MysqlError::new(3102, "HY000", format!("Expression of generated column '{column}' contains a disallowed function."))
}

/// Checks generated column `position`'s expression against the table's
/// columns as MySQL does: known columns only (1054), no later generated
/// column (3107), no AUTO_INCREMENT column (3109), nothing that depends on
/// more than the row: non-deterministic functions, variables, parameters
/// or subqueries (3102).
pub fn check(columns: &[ColumnDef], position: usize, expr: &Expr) -> SqlResult<()> {
    let name = &columns[position].name;
    let reference = |referred: usize| {
        if columns[referred].auto_increment {
            Some(MysqlError::new(3109, "HY000", format!("Generated column '{name}' cannot refer to auto-increment column.")))
        } else if columns[referred].attributes.generated.is_some() && referred >= position {
            Some(MysqlError::new(3107, "HY000", "Generated column can refer only to generated columns defined prior to it."))
        } else {
            None
        }
    };
    let rules = ColumnExpressionRules {
        context: "generated column function",
        disallowed_functions: &DISALLOWED_FUNCTIONS,
        disallowed: disallowed(name),
        reference: &reference,
    };
    column_expression_rules::check(columns, expr, &rules)
}

/// The expression as MySQL prints it: identifiers back-quoted, every
/// operation in parentheses, function names in lower case, strings with
/// their character set introducer.
pub fn mysql_text(expr: &Expr) -> String {
    match expr {
        Expr::Identifier(ident) => format!("`{}`", ident.value),
        Expr::Nested(inner) => mysql_text(inner),
        Expr::Value(value) => match &value.value {
            Literal::SingleQuotedString(text) | Literal::DoubleQuotedString(text) => {
                format!("_utf8mb4'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
            }
            other => other.to_string(),
        },
        Expr::BinaryOp { left, op, right } => format!("({} {} {})", mysql_text(left), op, mysql_text(right)),
        Expr::UnaryOp { op, expr } => format!("{op}({})", mysql_text(expr)),
        Expr::Function(function) => {
            let args = match &function.args {
                sqlparser::ast::FunctionArguments::List(list) => list
                    .args
                    .iter()
                    .map(|arg| match arg {
                        sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(expr)) => mysql_text(expr),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                _ => String::new(),
            };
            format!("{}({args})", function.name.to_string().to_ascii_lowercase())
        }
        other => other.to_string(),
    }
}

/// The generated columns of `def` with their parsed expressions, in
/// column order (each may read the ones before it).
pub fn expressions(def: &TableDef) -> SqlResult<Vec<(usize, Expr)>> {
    def.columns
        .iter()
        .enumerate()
        .filter_map(|(position, column)| column.attributes.generated.as_ref().map(|generated| (position, &generated.expression)))
        .map(|(position, text)| Ok((position, parse_expression(text)?)))
        .collect()
}

/// The generated columns an UPDATE that assigns `assigned` writes again:
/// those whose expression reads an assigned column or one of these, as
/// MySQL's `TABLE::mark_generated_columns` adds them to the write set, so a
/// MINIMAL after image carries them and no others.
pub fn written_by_update(columns: &[ColumnDef], generation: &[(usize, Expr)], assigned: &[usize]) -> Vec<usize> {
    let mut written = assigned.to_vec();
    let mut generated = Vec::new();
    // Column order: an expression reads only generated columns before it.
    for (position, expr) in generation {
        if reads_any(columns, expr, &written) {
            written.push(*position);
            generated.push(*position);
        }
    }
    generated
}

/// Whether `expr` reads one of the columns at `positions`.
fn reads_any(columns: &[ColumnDef], expr: &Expr, positions: &[usize]) -> bool {
    let found = visit_expressions(expr, |node| match node {
        Expr::Identifier(ident)
            if columns.iter().enumerate().any(|(at, c)| positions.contains(&at) && c.name.eq_ignore_ascii_case(&ident.value)) =>
        {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    });
    found.is_break()
}

/// 3105 ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN.
pub fn value_not_allowed(column: &str, table: &str) -> MysqlError {
    MysqlError::new(3105, "HY000", format!("The value specified for generated column '{column}' in table '{table}' is not allowed."))
}

/// `DEFAULT`, the one value a generated column may be given.
pub fn is_default(expr: &Expr) -> bool {
    matches!(expr, Expr::Identifier(ident) if ident.quote_style.is_none() && ident.value.eq_ignore_ascii_case("DEFAULT"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str) -> ColumnDef {
        ColumnDef::new(name, binlog_format::ColumnType::Long)
    }

    #[test]
    fn expressions_print_as_mysql_prints_them() {
        for (text, printed) in
            [("a + 1", "(`a` + 1)"), ("a * (b - 2)", "(`a` * (`b` - 2))"), ("CONCAT(a, 'x')", "concat(`a`,_utf8mb4'x')"), ("-a", "-(`a`)")]
        {
            assert_eq!(mysql_text(&parse_expression(text).unwrap()), printed, "{text}");
        }
    }

    #[test]
    fn expressions_are_checked_as_mysql_checks_them() {
        let mut later = column("g2");
        later.attributes.generated = Some(engine::Generated { expression: "a".into(), stored: false });
        let mut id = column("id");
        id.auto_increment = true;
        let columns = vec![id, column("a"), column("g"), later];
        let code = |text: &str| check(&columns, 2, &parse_expression(text).unwrap()).err().map(|e| e.code);
        assert_eq!(code("a + 1"), None);
        assert_eq!(code("nope + 1"), Some(1054));
        assert_eq!(code("g2 + 1"), Some(3107));
        assert_eq!(code("id + 1"), Some(3109));
        assert_eq!(code("a + RAND()"), Some(3102));
        assert_eq!(code("@v"), Some(3102));
        assert_eq!(code("(SELECT 1)"), Some(3102));
    }

    #[test]
    fn an_update_writes_the_generated_columns_that_read_what_it_assigns() {
        let columns = [column("a"), column("b"), column("g"), column("h"), column("k")];
        let generation: Vec<_> = [(2, "a + 1"), (3, "g * 2"), (4, "b")]
            .into_iter()
            .map(|(position, text)| (position, parse_expression(text).unwrap()))
            .collect();
        assert_eq!(written_by_update(&columns, &generation, &[0]), [2, 3]);
        assert_eq!(written_by_update(&columns, &generation, &[1]), [4]);
        assert_eq!(written_by_update(&columns, &generation, &[]), Vec::<usize>::new());
    }
}
