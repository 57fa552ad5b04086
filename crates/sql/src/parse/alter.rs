//! `ALTER TABLE t spec [, spec ...]` and `RENAME TABLE a TO b [, ...]`.
//!
//! sqlparser knows part of MySQL's ALTER TABLE grammar (not `RENAME
//! INDEX`, `DROP KEY`, `ADD (c1 ..., c2 ...)` or the table options), so the
//! statement is split here at its top-level commas and each spec read by
//! its leading keywords; column definitions and key definitions go through
//! sqlparser's CREATE TABLE grammar, so they mean what they mean there.

use sqlparser::ast::{ColumnDef, CreateTable, Expr, Statement as Ast, TableConstraint};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::{Statement, Words};
use crate::error::{not_supported, syntax_error, SqlResult};

/// A table named with or without its database.
pub type TableName = (Option<String>, String);

#[derive(Debug, Clone, PartialEq)]
pub struct AlterTable {
    pub table: TableName,
    pub specs: Vec<AlterSpec>,
}

/// Where MODIFY, CHANGE or ADD puts a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnPosition {
    First,
    After(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlterSpec {
    AddColumns {
        columns: Vec<ColumnDef>,
        position: Option<ColumnPosition>,
    },
    AddKey(TableConstraint),
    DropColumn(String),
    /// CHANGE old new def, or MODIFY (old = the definition's name).
    ChangeColumn {
        old: String,
        column: ColumnDef,
        position: Option<ColumnPosition>,
    },
    RenameColumn {
        from: String,
        to: String,
    },
    SetDefault {
        column: String,
        default: Expr,
    },
    DropDefault {
        column: String,
    },
    DropIndex(String),
    DropPrimaryKey,
    RenameTable(TableName),
    RenameIndex {
        from: String,
        to: String,
    },
    AutoIncrement(u64),
    /// `COMMENT [=] 'text'`; empty removes the table's comment.
    Comment(String),
    /// `[DEFAULT] {CHARACTER SET | CHARSET} [=] name`: the table's default.
    TableCharset(String),
    /// `[DEFAULT] COLLATE [=] name`: the table's default.
    TableCollation(String),
    /// `CONVERT TO {CHARACTER SET | CHARSET} name [COLLATE name]`: every
    /// text column and the table's default.
    ConvertTo {
        charset: String,
        collation: Option<String>,
    },
    /// A table option that changes nothing binlogd keeps (ENGINE=InnoDB,
    /// FORCE, those in `IGNORED_TABLE_OPTIONS`).
    Harmless,
}

pub(super) fn parse_alter_table(words: &mut Words) -> SqlResult<Option<Statement>> {
    words.position += 2;
    let (database, table) = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
    let mut specs = Vec::new();
    for part in split_top_level(&words.tokens[words.position..]) {
        match is_table_option(part) {
            true => specs.extend(parse_table_options(part)?),
            false => specs.push(parse_spec(part)?),
        }
    }
    // A bare `ALTER TABLE t` is valid and changes nothing.
    if specs.is_empty() {
        specs.push(AlterSpec::Harmless);
    }
    Ok(Some(Statement::AlterTable(AlterTable { table: (database, table), specs })))
}

pub(super) fn parse_rename_table(words: &mut Words) -> SqlResult<Option<Statement>> {
    words.position += 2;
    let mut pairs = Vec::new();
    loop {
        let from = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
        if !words.keyword("TO") {
            return Err(syntax_error(&words.rest()));
        }
        let to = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
        pairs.push((from, to));
        if !words.token(&Token::Comma) {
            break;
        }
    }
    words.end(Statement::RenameTable(pairs))
}

/// The token runs between commas outside parentheses.
fn split_top_level(tokens: &[Token]) -> Vec<&[Token]> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (at, token) in tokens.iter().enumerate() {
        match token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Comma if depth == 0 => {
                parts.push(&tokens[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if start < tokens.len() || !parts.is_empty() {
        parts.push(&tokens[start..]);
    }
    parts
}

/// The tokens as SQL text again, for sqlparser to read a second time.
fn text(tokens: &[Token]) -> String {
    tokens.iter().map(token_text).collect::<Vec<_>>().join(" ")
}

/// One token as SQL text. The tokenizer has already unescaped quoted
/// strings and identifiers, and sqlparser's `Display` writes them back
/// bare, so `'a''b'` would come back as `'a'b'`: the quotes and
/// backslashes inside are escaped again here.
fn token_text(token: &Token) -> String {
    match token {
        Token::SingleQuotedString(value) => format!("'{}'", escape_string(value, '\'')),
        Token::DoubleQuotedString(value) => format!("\"{}\"", escape_string(value, '"')),
        Token::NationalStringLiteral(value) => format!("N'{}'", escape_string(value, '\'')),
        Token::Word(word) if word.quote_style == Some('`') => format!("`{}`", word.value.replace('`', "``")),
        other => other.to_string(),
    }
}

/// `value` written to sit inside `quote`s under MySQL's rules: the quote
/// doubled, a backslash doubled (MySQL reads `\` as an escape).
fn escape_string(value: &str, quote: char) -> String {
    let mut escaped = String::with_capacity(value.len() + 2);
    for character in value.chars() {
        if character == quote || character == '\\' {
            escaped.push(character);
        }
        escaped.push(character);
    }
    escaped
}

fn keyword_at(tokens: &[Token], at: usize) -> Option<String> {
    match tokens.get(at) {
        Some(Token::Word(word)) if word.quote_style.is_none() => Some(word.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn identifier_at(tokens: &[Token], at: usize) -> SqlResult<String> {
    match tokens.get(at) {
        Some(Token::Word(word)) => Ok(word.value.clone()),
        _ => Err(syntax_error(&text(&tokens[at.min(tokens.len())..]))),
    }
}

/// Exactly `count` tokens: the spec must end there.
fn ends_at(tokens: &[Token], count: usize) -> SqlResult<()> {
    if tokens.len() != count {
        return Err(syntax_error(&text(&tokens[count.min(tokens.len())..])));
    }
    Ok(())
}

fn parse_spec(tokens: &[Token]) -> SqlResult<AlterSpec> {
    let first = keyword_at(tokens, 0).ok_or_else(|| syntax_error(&text(tokens)))?;
    let second = keyword_at(tokens, 1);
    let rest = &tokens[1..];
    match first.as_str() {
        "ADD" if second.as_deref() == Some("PARTITION") => Err(not_supported(format!("ALTER TABLE ... {}", text(tokens)))),
        "ADD" => parse_add(rest),
        "DROP" => match second.as_deref() {
            Some("PRIMARY") if keyword_at(tokens, 2).as_deref() == Some("KEY") => ends_at(tokens, 3).map(|_| AlterSpec::DropPrimaryKey),
            Some("INDEX" | "KEY") => {
                ends_at(tokens, 3)?;
                identifier_at(tokens, 2).map(AlterSpec::DropIndex)
            }
            Some("FOREIGN" | "CHECK" | "CONSTRAINT" | "PARTITION") => Err(not_supported(format!("ALTER TABLE ... DROP {}", text(rest)))),
            Some("COLUMN") => {
                ends_at(tokens, 3)?;
                identifier_at(tokens, 2).map(AlterSpec::DropColumn)
            }
            _ => {
                ends_at(tokens, 2)?;
                identifier_at(tokens, 1).map(AlterSpec::DropColumn)
            }
        },
        "MODIFY" => {
            let rest = if second.as_deref() == Some("COLUMN") { &tokens[2..] } else { rest };
            let (definition, position) = split_position(rest)?;
            let column = one_column(definition)?;
            Ok(AlterSpec::ChangeColumn { old: column.name.value.clone(), column, position })
        }
        "CHANGE" => {
            let rest = if second.as_deref() == Some("COLUMN") { &tokens[2..] } else { rest };
            let old = identifier_at(rest, 0)?;
            let (definition, position) = split_position(&rest[1..])?;
            Ok(AlterSpec::ChangeColumn { old, column: one_column(definition)?, position })
        }
        "RENAME" => parse_rename(rest),
        "ALTER" => {
            let rest = if second.as_deref() == Some("COLUMN") { &tokens[2..] } else { rest };
            let column = identifier_at(rest, 0)?;
            match (keyword_at(rest, 1).as_deref(), keyword_at(rest, 2).as_deref()) {
                (Some("SET"), Some("DEFAULT")) => {
                    let default = Parser::new(&MySqlDialect {})
                        .try_with_sql(&text(&rest[3..]))
                        .and_then(|mut parser| parser.parse_expr())
                        .map_err(|_| syntax_error(&text(&rest[3..])))?;
                    Ok(AlterSpec::SetDefault { column, default })
                }
                (Some("DROP"), Some("DEFAULT")) => ends_at(rest, 3).map(|_| AlterSpec::DropDefault { column }),
                _ => Err(not_supported(format!("ALTER TABLE ... ALTER {}", text(rest)))),
            }
        }
        "CONVERT" if second.as_deref() == Some("TO") => parse_convert_to(&tokens[2..]),
        "CONVERT" | "ORDER" | "PARTITION" | "DISCARD" | "IMPORT" | "ENABLE" | "DISABLE" | "TRUNCATE" | "COALESCE" | "REORGANIZE"
        | "EXCHANGE" | "REMOVE" | "ANALYZE" | "CHECK" | "OPTIMIZE" | "REBUILD" | "REPAIR" => {
            Err(not_supported(format!("ALTER TABLE ... {}", text(tokens))))
        }
        _ => Err(syntax_error(&text(tokens))),
    }
}

/// Table options besides AUTO_INCREMENT, ENGINE and COMMENT: the table's
/// default character set and collation (kept), how MySQL would run the
/// ALTER and InnoDB's storage tuning (taken and ignored).
const IGNORED_TABLE_OPTIONS: &[&str] = &[
    "CHARSET",
    "CHARACTER",
    "COLLATE",
    "ALGORITHM",
    "LOCK",
    "ROW_FORMAT",
    "KEY_BLOCK_SIZE",
    "STATS_PERSISTENT",
    "STATS_AUTO_RECALC",
    "STATS_SAMPLE_PAGES",
];

/// Whether a spec is a run of table options, which MySQL lets follow one
/// another without commas (`ENGINE=InnoDB COMMENT='x'`).
fn is_table_option(tokens: &[Token]) -> bool {
    keyword_at(tokens, 0).is_some_and(|word| {
        matches!(word.as_str(), "AUTO_INCREMENT" | "ENGINE" | "COMMENT" | "DEFAULT" | "FORCE")
            || IGNORED_TABLE_OPTIONS.contains(&word.as_str())
    })
}

/// Each table option of a run, in order.
fn parse_table_options(tokens: &[Token]) -> SqlResult<Vec<AlterSpec>> {
    let mut specs = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let (spec, next) = parse_table_option(tokens, at)?;
        specs.push(spec);
        at = next;
    }
    Ok(specs)
}

/// The table option at `at` (`NAME [=] value`, FORCE, or a character set
/// or collation with its optional DEFAULT) and where the next one starts.
fn parse_table_option(tokens: &[Token], at: usize) -> SqlResult<(AlterSpec, usize)> {
    let syntax = || syntax_error(&text(&tokens[at..]));
    let at = if keyword_at(tokens, at).as_deref() == Some("DEFAULT") { at + 1 } else { at };
    let name = keyword_at(tokens, at).ok_or_else(syntax)?;
    if name == "FORCE" {
        return Ok((AlterSpec::Harmless, at + 1));
    }
    let name_end = if name == "CHARACTER" && keyword_at(tokens, at + 1).as_deref() == Some("SET") { at + 2 } else { at + 1 };
    let value_at = if tokens.get(name_end) == Some(&Token::Eq) { name_end + 1 } else { name_end };
    let value = tokens.get(value_at).ok_or_else(syntax)?;
    let spec = match (name.as_str(), value) {
        ("AUTO_INCREMENT", Token::Number(number, _)) => number.parse().map(AlterSpec::AutoIncrement).map_err(|_| syntax_error(number))?,
        ("COMMENT", Token::SingleQuotedString(comment) | Token::DoubleQuotedString(comment)) => AlterSpec::Comment(comment.clone()),
        ("ENGINE", _) => {
            let engine = identifier_at(tokens, value_at)?;
            if !engine.eq_ignore_ascii_case("InnoDB") {
                return Err(not_supported(format!("ENGINE={engine}")));
            }
            AlterSpec::Harmless
        }
        ("CHARSET" | "CHARACTER", Token::Word(word)) => AlterSpec::TableCharset(word.value.clone()),
        ("CHARSET" | "CHARACTER", Token::SingleQuotedString(name)) => AlterSpec::TableCharset(name.clone()),
        ("COLLATE", Token::Word(word)) => AlterSpec::TableCollation(word.value.clone()),
        ("COLLATE", Token::SingleQuotedString(name)) => AlterSpec::TableCollation(name.clone()),
        (ignored, Token::Word(_) | Token::Number(..) | Token::SingleQuotedString(_)) if IGNORED_TABLE_OPTIONS.contains(&ignored) => {
            AlterSpec::Harmless
        }
        _ => return Err(syntax()),
    };
    Ok((spec, value_at + 1))
}

/// `{CHARACTER SET | CHARSET} [=] name [COLLATE [=] name]`, after
/// CONVERT TO.
fn parse_convert_to(tokens: &[Token]) -> SqlResult<AlterSpec> {
    let syntax = || syntax_error(&text(tokens));
    let mut at = match (keyword_at(tokens, 0).as_deref(), keyword_at(tokens, 1).as_deref()) {
        (Some("CHARACTER"), Some("SET")) => 2,
        (Some("CHARSET"), _) => 1,
        _ => return Err(syntax()),
    };
    at += usize::from(tokens.get(at) == Some(&Token::Eq));
    let charset = identifier_at(tokens, at).map_err(|_| syntax())?;
    at += 1;
    let collation = match keyword_at(tokens, at).as_deref() {
        Some("COLLATE") => {
            at += 1;
            at += usize::from(tokens.get(at) == Some(&Token::Eq));
            at += 1;
            Some(identifier_at(tokens, at - 1).map_err(|_| syntax())?)
        }
        _ => None,
    };
    ends_at(tokens, at)?;
    Ok(AlterSpec::ConvertTo { charset, collation })
}

fn parse_add(tokens: &[Token]) -> SqlResult<AlterSpec> {
    // ADD (c1 def, c2 def, ...): a parenthesised list of columns.
    if tokens.first() == Some(&Token::LParen) && tokens.last() == Some(&Token::RParen) {
        let (columns, constraints) = create_table_body(&tokens[1..tokens.len() - 1])?;
        if !constraints.is_empty() {
            return Err(not_supported("keys inside ALTER TABLE ... ADD (...)"));
        }
        return Ok(AlterSpec::AddColumns { columns, position: None });
    }
    let is_key = matches!(
        keyword_at(tokens, 0).as_deref(),
        Some("INDEX" | "KEY" | "UNIQUE" | "PRIMARY" | "CONSTRAINT" | "FULLTEXT" | "SPATIAL" | "FOREIGN" | "CHECK")
    );
    if is_key {
        let (columns, mut constraints) = create_table_body(tokens)?;
        return match (columns.is_empty(), constraints.len()) {
            (true, 1) => Ok(AlterSpec::AddKey(constraints.remove(0))),
            _ => Err(syntax_error(&text(tokens))),
        };
    }
    let tokens = if keyword_at(tokens, 0).as_deref() == Some("COLUMN") { &tokens[1..] } else { tokens };
    let (definition, position) = split_position(tokens)?;
    Ok(AlterSpec::AddColumns { columns: vec![one_column(definition)?], position })
}

fn parse_rename(tokens: &[Token]) -> SqlResult<AlterSpec> {
    match keyword_at(tokens, 0).as_deref() {
        Some("INDEX" | "KEY") => {
            ends_at(tokens, 4)?;
            if keyword_at(tokens, 2).as_deref() != Some("TO") {
                return Err(syntax_error(&text(&tokens[2..])));
            }
            Ok(AlterSpec::RenameIndex { from: identifier_at(tokens, 1)?, to: identifier_at(tokens, 3)? })
        }
        Some("COLUMN") => {
            ends_at(tokens, 4)?;
            if keyword_at(tokens, 2).as_deref() != Some("TO") {
                return Err(syntax_error(&text(&tokens[2..])));
            }
            Ok(AlterSpec::RenameColumn { from: identifier_at(tokens, 1)?, to: identifier_at(tokens, 3)? })
        }
        _ => {
            let tokens = if matches!(keyword_at(tokens, 0).as_deref(), Some("TO" | "AS")) { &tokens[1..] } else { tokens };
            let first = identifier_at(tokens, 0)?;
            if tokens.get(1) == Some(&Token::Period) {
                ends_at(tokens, 3)?;
                return Ok(AlterSpec::RenameTable((Some(first), identifier_at(tokens, 2)?)));
            }
            ends_at(tokens, 1)?;
            Ok(AlterSpec::RenameTable((None, first)))
        }
    }
}

/// A column definition and its trailing `FIRST` or `AFTER c`.
fn split_position(tokens: &[Token]) -> SqlResult<(&[Token], Option<ColumnPosition>)> {
    let length = tokens.len();
    if length >= 2 && keyword_at(tokens, length - 1).as_deref() == Some("FIRST") {
        return Ok((&tokens[..length - 1], Some(ColumnPosition::First)));
    }
    if length >= 3 && keyword_at(tokens, length - 2).as_deref() == Some("AFTER") {
        return Ok((&tokens[..length - 2], Some(ColumnPosition::After(identifier_at(tokens, length - 1)?))));
    }
    Ok((tokens, None))
}

fn one_column(tokens: &[Token]) -> SqlResult<ColumnDef> {
    let (mut columns, constraints) = create_table_body(tokens)?;
    if columns.len() != 1 || !constraints.is_empty() {
        return Err(syntax_error(&text(tokens)));
    }
    Ok(columns.remove(0))
}

/// What `CREATE TABLE t (<tokens>)` defines.
fn create_table_body(tokens: &[Token]) -> SqlResult<(Vec<ColumnDef>, Vec<TableConstraint>)> {
    let body = text(tokens);
    let sql = format!("CREATE TABLE alter_spec ({body})");
    let mut parsed = Parser::parse_sql(&MySqlDialect {}, &sql).map_err(|_| syntax_error(&body))?;
    match parsed.pop() {
        Some(Ast::CreateTable(CreateTable { columns, constraints, .. })) if parsed.is_empty() => Ok((columns, constraints)),
        _ => Err(syntax_error(&body)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn specs(sql: &str) -> Vec<AlterSpec> {
        match parse(sql).unwrap().statement {
            Statement::AlterTable(alter) => alter.specs,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn specs_split_at_top_level_commas_and_read_mysqls_forms() {
        let read = specs(
            "ALTER TABLE d.t ADD COLUMN e ENUM('a,b','c') NOT NULL FIRST, ADD (x INT, y INT), DROP KEY k, DROP c, \
             RENAME INDEX a TO b, RENAME AS d2.t2, CHANGE COLUMN o n INT AFTER x, ENGINE = InnoDB, AUTO_INCREMENT 5",
        );
        assert_eq!(read.len(), 9);
        assert!(
            matches!(&read[0], AlterSpec::AddColumns { columns, position: Some(ColumnPosition::First) } if columns[0].name.value == "e")
        );
        assert!(matches!(&read[1], AlterSpec::AddColumns { columns, position: None } if columns.len() == 2));
        assert_eq!(read[2], AlterSpec::DropIndex("k".into()));
        assert_eq!(read[3], AlterSpec::DropColumn("c".into()));
        assert_eq!(read[4], AlterSpec::RenameIndex { from: "a".into(), to: "b".into() });
        assert_eq!(read[5], AlterSpec::RenameTable((Some("d2".into()), "t2".into())));
        assert!(
            matches!(&read[6], AlterSpec::ChangeColumn { old, column, position: Some(ColumnPosition::After(after)) } if old == "o" && column.name.value == "n" && after == "x")
        );
        assert_eq!(read[7..], [AlterSpec::Harmless, AlterSpec::AutoIncrement(5)]);
    }

    #[test]
    fn table_options_follow_one_another_without_commas() {
        let read = specs(
            "ALTER TABLE t ENGINE=InnoDB COMMENT 'it''s new' DEFAULT CHARSET = utf8mb4, CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, FORCE KEY_BLOCK_SIZE=8",
        );
        let harmless = AlterSpec::Harmless;
        assert_eq!(
            read,
            [
                harmless.clone(),
                AlterSpec::Comment("it's new".into()),
                AlterSpec::TableCharset("utf8mb4".into()),
                AlterSpec::TableCharset("utf8mb4".into()),
                AlterSpec::TableCollation("utf8mb4_bin".into()),
                harmless.clone(),
                harmless
            ]
        );
        assert_eq!(
            specs("ALTER TABLE t CONVERT TO CHARACTER SET latin1 COLLATE = latin1_bin"),
            [AlterSpec::ConvertTo { charset: "latin1".into(), collation: Some("latin1_bin".into()) }]
        );
        assert_eq!(specs("ALTER TABLE t CONVERT TO CHARSET ascii"), [AlterSpec::ConvertTo { charset: "ascii".into(), collation: None }]);
        assert_eq!(parse("ALTER TABLE t CONVERT TO latin1").unwrap_err().code, 1064);
        assert_eq!(specs("ALTER TABLE t COMMENT = ''"), [AlterSpec::Comment(String::new())]);
        assert_eq!(parse("ALTER TABLE t COMMENT").unwrap_err().code, 1064);
        assert_eq!(parse("ALTER TABLE t COMMENT = 5").unwrap_err().code, 1064);
    }

    #[test]
    fn rename_table_reads_every_pair_and_bad_specs_are_syntax_errors() {
        let Statement::RenameTable(pairs) = parse("RENAME TABLE a TO b, d.c TO e.f").unwrap().statement else { panic!("not a rename") };
        assert_eq!(pairs, [((None, "a".into()), (None, "b".into())), ((Some("d".into()), "c".into()), (Some("e".into()), "f".into()))]);
        assert_eq!(parse("ALTER TABLE t DROP INDEX").unwrap_err().code, 1064);
        assert!(matches!(parse("ALTER TABLE t").unwrap().statement, Statement::AlterTable(alter) if alter.specs == [AlterSpec::Harmless]));
        assert_eq!(parse("ALTER TABLE t ENGINE=MyISAM").unwrap_err().code, 1235);
    }
}
