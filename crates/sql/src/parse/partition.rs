//! CREATE TABLE's `PARTITION BY` clause, which sqlparser does not read:
//! the statement is cut where the clause starts, sqlparser parses the
//! table, and this module the clause.
//!
//! ```text
//! PARTITION BY { [LINEAR] HASH (expr) | [LINEAR] KEY [ALGORITHM = {1 | 2}] (columns)
//!              | RANGE (expr) | RANGE COLUMNS (columns) | LIST (expr) | LIST COLUMNS (columns) }
//!   [PARTITIONS n]
//!   [(PARTITION name [VALUES {LESS THAN {(value, ...) | MAXVALUE} | IN (value, ...)}]
//!     [[STORAGE] ENGINE [=] InnoDB] [COMMENT [=] 'text'], ...)]
//! ```
//!
//! `expr` is a column or a function of one (`YEAR(d)`); another
//! expression is kept as text and refused when the table is created.
//! Subpartitions are refused (1235).

use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::{not_supported, syntax_error, SqlResult};
use engine::PartitionMethod;

/// A constant in VALUES LESS THAN or VALUES IN.
#[derive(Debug, Clone, PartialEq)]
pub enum PartitionLiteral {
    Integer(i128),
    Text(String),
    Null,
    MaxValue,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PartitionValuesClause {
    None,
    LessThan(Vec<PartitionLiteral>),
    /// One list per item: a single value, or a tuple for LIST COLUMNS.
    In(Vec<Vec<PartitionLiteral>>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionClauseItem {
    pub name: String,
    pub values: PartitionValuesClause,
    pub comment: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionClause {
    pub method: PartitionMethod,
    pub linear: bool,
    pub key_algorithm: u8,
    /// KEY and COLUMNS: the column list. HASH, RANGE, LIST: the expression
    /// when it is one column.
    pub columns: Vec<String>,
    /// HASH, RANGE, LIST: the function the expression applies to its one
    /// column (`YEAR(d)`), by name.
    pub function: Option<String>,
    /// HASH, RANGE, LIST: the expression's text when it is neither a
    /// column nor a function of one (refused when the table is created).
    pub expression: Option<String>,
    /// PARTITIONS n.
    pub count: Option<u64>,
    pub partitions: Vec<PartitionClauseItem>,
}

/// Splits a CREATE TABLE statement at a top-level `PARTITION BY` that
/// follows its column list: the text before it and the parsed clause.
/// None when the statement is not one or has no such clause.
pub fn split_create_table(sql: &str) -> SqlResult<Option<(String, PartitionClause)>> {
    let Ok(tokens) = Tokenizer::new(&sqlparser::dialect::MySqlDialect {}, sql).tokenize_with_location() else { return Ok(None) };
    let words: Vec<_> = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
    let keyword = |at: usize| match words.get(at).map(|t| &t.token) {
        Some(Token::Word(word)) if word.quote_style.is_none() => word.value.to_ascii_uppercase(),
        _ => String::new(),
    };
    if keyword(0) != "CREATE" || keyword(1) != "TABLE" {
        return Ok(None);
    }
    let (mut depth, mut closed_group) = (0usize, false);
    for at in 0..words.len() {
        match words[at].token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth = depth.saturating_sub(1);
                closed_group |= depth == 0;
            }
            _ => {}
        }
        if depth == 0 && closed_group && keyword(at) == "PARTITION" && keyword(at + 1) == "BY" {
            let start = byte_offset(sql, words[at].span.start.line, words[at].span.start.column);
            let tail: Vec<Token> = words[at + 2..].iter().map(|t| t.token.clone()).filter(|t| *t != Token::SemiColon).collect();
            let clause = Clause { tokens: &tail, position: 0 }.parse()?;
            return Ok(Some((sql[..start].to_string(), clause)));
        }
    }
    Ok(None)
}

/// The byte offset of 1-based (line, column), columns counted in chars.
fn byte_offset(sql: &str, line: u64, column: u64) -> usize {
    let mut offset = 0;
    for (index, text) in sql.split_inclusive('\n').enumerate() {
        if index as u64 + 1 == line {
            return offset + text.char_indices().nth(column.saturating_sub(1) as usize).map_or(text.len(), |(at, _)| at);
        }
        offset += text.len();
    }
    sql.len()
}

struct Clause<'a> {
    tokens: &'a [Token],
    position: usize,
}

impl Clause<'_> {
    fn peek_keyword(&self) -> Option<String> {
        match self.tokens.get(self.position) {
            Some(Token::Word(word)) if word.quote_style.is_none() => Some(word.value.to_ascii_uppercase()),
            _ => None,
        }
    }

    fn keyword(&mut self, keyword: &str) -> bool {
        if self.peek_keyword().as_deref() == Some(keyword) {
            self.position += 1;
            return true;
        }
        false
    }

    fn token(&mut self, token: &Token) -> bool {
        if self.tokens.get(self.position) == Some(token) {
            self.position += 1;
            return true;
        }
        false
    }

    fn error(&self) -> protocol::MysqlError {
        let rest: Vec<String> = self.tokens[self.position.min(self.tokens.len())..].iter().map(ToString::to_string).collect();
        syntax_error(&rest.join(" "))
    }

    fn expect(&mut self, token: &Token) -> SqlResult<()> {
        if self.token(token) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn identifier(&mut self) -> SqlResult<String> {
        match self.tokens.get(self.position) {
            Some(Token::Word(word)) => {
                self.position += 1;
                Ok(word.value.clone())
            }
            _ => Err(self.error()),
        }
    }

    fn number(&mut self) -> SqlResult<u64> {
        match self.tokens.get(self.position) {
            Some(Token::Number(text, _)) => {
                let value = text.parse().map_err(|_| self.error())?;
                self.position += 1;
                Ok(value)
            }
            _ => Err(self.error()),
        }
    }

    /// `(a, b, ...)`.
    fn column_list(&mut self) -> SqlResult<Vec<String>> {
        self.expect(&Token::LParen)?;
        let mut columns = Vec::new();
        if self.token(&Token::RParen) {
            return Ok(columns);
        }
        loop {
            columns.push(self.identifier()?);
            if self.token(&Token::RParen) {
                return Ok(columns);
            }
            self.expect(&Token::Comma)?;
        }
    }

    /// `(expr)`: a column, or the expression's text.
    /// HASH's, RANGE's or LIST's `(expr)`: its column, the function applied
    /// to it, or the text of another expression.
    fn expression(&mut self) -> SqlResult<(Vec<String>, Option<String>, Option<String>)> {
        self.expect(&Token::LParen)?;
        let start = self.position;
        let mut depth = 1usize;
        while depth > 0 {
            match self.tokens.get(self.position) {
                Some(Token::LParen) => depth += 1,
                Some(Token::RParen) => depth -= 1,
                Some(_) => {}
                None => return Err(self.error()),
            }
            self.position += 1;
        }
        let inner = &self.tokens[start..self.position - 1];
        match inner {
            [Token::Word(word)] => Ok((vec![word.value.clone()], None, None)),
            [Token::Word(function), Token::LParen, Token::Word(column), Token::RParen] if function.quote_style.is_none() => {
                Ok((vec![column.value.clone()], Some(function.value.clone()), None))
            }
            _ => Ok((Vec::new(), None, Some(inner.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ")))),
        }
    }

    fn parse(mut self) -> SqlResult<PartitionClause> {
        let linear = self.keyword("LINEAR");
        let mut key_algorithm = 0;
        let (method, columns, function, expression) = if self.keyword("HASH") {
            let (columns, function, expression) = self.expression()?;
            (PartitionMethod::Hash, columns, function, expression)
        } else if self.keyword("KEY") {
            if self.keyword("ALGORITHM") {
                self.expect(&Token::Eq)?;
                key_algorithm = match self.number()? {
                    algorithm @ (1 | 2) => algorithm as u8,
                    _ => return Err(self.error()),
                };
            }
            (PartitionMethod::Key, self.column_list()?, None, None)
        } else if !linear && (self.peek_keyword().as_deref() == Some("RANGE") || self.peek_keyword().as_deref() == Some("LIST")) {
            let range = self.keyword("RANGE");
            if !range {
                self.keyword("LIST");
            }
            if self.keyword("COLUMNS") {
                let method = if range { PartitionMethod::RangeColumns } else { PartitionMethod::ListColumns };
                (method, self.column_list()?, None, None)
            } else {
                let (columns, function, expression) = self.expression()?;
                (if range { PartitionMethod::Range } else { PartitionMethod::List }, columns, function, expression)
            }
        } else {
            return Err(self.error());
        };
        let count = if self.keyword("PARTITIONS") { Some(self.number()?) } else { None };
        if self.peek_keyword().as_deref() == Some("SUBPARTITION") {
            return Err(not_supported("SUBPARTITION"));
        }
        let mut partitions = Vec::new();
        if self.token(&Token::LParen) {
            loop {
                partitions.push(self.partition()?);
                if self.token(&Token::RParen) {
                    break;
                }
                self.expect(&Token::Comma)?;
            }
        }
        if self.position < self.tokens.len() {
            return Err(self.error());
        }
        Ok(PartitionClause { method, linear, key_algorithm, columns, function, expression, count, partitions })
    }

    fn partition(&mut self) -> SqlResult<PartitionClauseItem> {
        if !self.keyword("PARTITION") {
            return Err(self.error());
        }
        let name = self.identifier()?;
        let values = if self.keyword("VALUES") {
            if self.keyword("LESS") {
                if !self.keyword("THAN") {
                    return Err(self.error());
                }
                if self.keyword("MAXVALUE") {
                    PartitionValuesClause::LessThan(vec![PartitionLiteral::MaxValue])
                } else {
                    PartitionValuesClause::LessThan(self.literal_list()?)
                }
            } else if self.keyword("IN") {
                self.expect(&Token::LParen)?;
                let mut items = Vec::new();
                loop {
                    if self.tokens.get(self.position) == Some(&Token::LParen) {
                        items.push(self.literal_list()?);
                    } else {
                        items.push(vec![self.literal()?]);
                    }
                    if self.token(&Token::RParen) {
                        break;
                    }
                    self.expect(&Token::Comma)?;
                }
                PartitionValuesClause::In(items)
            } else {
                return Err(self.error());
            }
        } else {
            PartitionValuesClause::None
        };
        let mut comment = None;
        loop {
            if self.keyword("STORAGE") || self.peek_keyword().as_deref() == Some("ENGINE") {
                self.keyword("ENGINE");
                self.token(&Token::Eq);
                let engine = self.identifier()?;
                if !engine.eq_ignore_ascii_case("InnoDB") {
                    return Err(not_supported(format!("ENGINE={engine}")));
                }
            } else if self.keyword("COMMENT") {
                self.token(&Token::Eq);
                match self.tokens.get(self.position) {
                    Some(Token::SingleQuotedString(text) | Token::DoubleQuotedString(text)) => {
                        comment = Some(text.clone());
                        self.position += 1;
                    }
                    _ => return Err(self.error()),
                }
            } else if self.peek_keyword().as_deref() == Some("SUBPARTITION") || self.tokens.get(self.position) == Some(&Token::LParen) {
                return Err(not_supported("SUBPARTITION"));
            } else {
                break;
            }
        }
        Ok(PartitionClauseItem { name, values, comment })
    }

    /// `(value, ...)`.
    fn literal_list(&mut self) -> SqlResult<Vec<PartitionLiteral>> {
        self.expect(&Token::LParen)?;
        let mut values = Vec::new();
        loop {
            values.push(self.literal()?);
            if self.token(&Token::RParen) {
                return Ok(values);
            }
            self.expect(&Token::Comma)?;
        }
    }

    fn literal(&mut self) -> SqlResult<PartitionLiteral> {
        let negative = self.token(&Token::Minus);
        let literal = match self.tokens.get(self.position) {
            Some(Token::Number(text, _)) => {
                let value: i128 = text.parse().map_err(|_| not_supported(format!("partition value {text}")))?;
                PartitionLiteral::Integer(if negative { -value } else { value })
            }
            Some(Token::SingleQuotedString(text) | Token::DoubleQuotedString(text)) if !negative => PartitionLiteral::Text(text.clone()),
            Some(Token::Word(word)) if !negative && word.quote_style.is_none() && word.value.eq_ignore_ascii_case("NULL") => {
                PartitionLiteral::Null
            }
            Some(Token::Word(word)) if !negative && word.quote_style.is_none() && word.value.eq_ignore_ascii_case("MAXVALUE") => {
                PartitionLiteral::MaxValue
            }
            Some(other) => return Err(not_supported(format!("partition value {other}"))),
            None => return Err(self.error()),
        };
        self.position += 1;
        Ok(literal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_the_clause_and_reads_each_form() {
        let (head, clause) = split_create_table(
            "CREATE TABLE t (id INT, `d` DATE, PRIMARY KEY (id)) ENGINE=InnoDB\nPARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (-10) ENGINE = InnoDB COMMENT = 'low', PARTITION `p1` VALUES LESS THAN MAXVALUE);",
        )
        .unwrap()
        .unwrap();
        assert_eq!(head, "CREATE TABLE t (id INT, `d` DATE, PRIMARY KEY (id)) ENGINE=InnoDB\n");
        assert_eq!(clause.method, PartitionMethod::Range);
        assert_eq!(clause.columns, ["id"]);
        assert_eq!(clause.partitions[0].values, PartitionValuesClause::LessThan(vec![PartitionLiteral::Integer(-10)]));
        assert_eq!(clause.partitions[0].comment.as_deref(), Some("low"));
        assert_eq!(clause.partitions[1].values, PartitionValuesClause::LessThan(vec![PartitionLiteral::MaxValue]));

        let (_, clause) =
            split_create_table("create table t (a int) partition by linear key algorithm=1 (a) partitions 4").unwrap().unwrap();
        assert_eq!((clause.method, clause.linear, clause.key_algorithm, clause.count), (PartitionMethod::Key, true, 1, Some(4)));
        let (_, clause) = split_create_table(
            "CREATE TABLE t (a INT, b CHAR(2)) PARTITION BY LIST COLUMNS (a, b) (PARTITION p VALUES IN ((1, 'x'), (NULL, 'y')))",
        )
        .unwrap()
        .unwrap();
        assert_eq!(clause.method, PartitionMethod::ListColumns);
        assert_eq!(
            clause.partitions[0].values,
            PartitionValuesClause::In(vec![
                vec![PartitionLiteral::Integer(1), PartitionLiteral::Text("x".into())],
                vec![PartitionLiteral::Null, PartitionLiteral::Text("y".into())]
            ])
        );
        let (_, clause) = split_create_table("CREATE TABLE t (a INT) PARTITION BY HASH (a + 1)").unwrap().unwrap();
        assert!(clause.columns.is_empty() && clause.expression.is_some());
        let (_, clause) = split_create_table("CREATE TABLE t (d DATE) PARTITION BY RANGE (YEAR(`d`)) (PARTITION p VALUES LESS THAN (1))")
            .unwrap()
            .unwrap();
        assert_eq!((clause.columns, clause.function, clause.expression), (vec!["d".to_string()], Some("YEAR".to_string()), None));
        assert!(split_create_table("CREATE TABLE t (a INT)").unwrap().is_none());
        assert!(split_create_table("SELECT 1").unwrap().is_none());
    }

    #[test]
    fn subpartitions_are_refused_and_bad_text_is_a_syntax_error() {
        let error =
            split_create_table("CREATE TABLE t (a INT) PARTITION BY RANGE (a) SUBPARTITION BY HASH (a) (PARTITION p VALUES LESS THAN (1))")
                .unwrap_err();
        assert_eq!(error.code, 1235);
        assert_eq!(split_create_table("CREATE TABLE t (a INT) PARTITION BY SPREAD (a)").unwrap_err().code, 1064);
        assert_eq!(split_create_table("CREATE TABLE t (a INT) PARTITION BY HASH (a) PARTITIONS").unwrap_err().code, 1064);
    }
}
