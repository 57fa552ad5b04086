//! Statement text to [`Statement`]: a small hand parser for the
//! administrative statements sqlparser lacks or parses loosely (SHOW, USE,
//! BEGIN/COMMIT/ROLLBACK, CREATE/DROP DATABASE, TRUNCATE, FLUSH/PURGE
//! BINARY LOGS, DESCRIBE; the account statements in `parse/users.rs`),
//! sqlparser's MySQL dialect for the rest.
//!
//! `?` placeholders are numbered `$1`, `$2`, ... in text order, so one
//! prepared statement can be executed many times with different parameters.

use std::ops::ControlFlow;

use sqlparser::ast::{visit_expressions_mut, Expr, Statement as Ast, Value as Literal};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

use crate::error::{not_supported, syntax_error, SqlResult};

mod users;
pub use users::{AccountStatement, Authentication, LevelName, PrivilegeList, SslRequirement, UserName};
pub mod alter;
mod database_options;
pub use database_options::DatabaseOptions;
mod depth;
pub mod partition;
mod replica;
pub use depth::EXPRESSION_DEPTH_MAX;
pub use replica::{OptionValue, ReplicaStatement, ReplicaThreads, SourceOption};

#[derive(Debug, Clone)]
pub enum Statement {
    /// Parsed by sqlparser (SELECT, INSERT, UPDATE, DELETE, CREATE TABLE,
    /// CREATE INDEX, DROP TABLE / INDEX, SET).
    Ast(Box<Ast>),
    /// CREATE TABLE with a PARTITION BY clause: sqlparser's statement for
    /// the text before the clause, and the clause.
    PartitionedCreateTable {
        create: Box<Ast>,
        partitioning: partition::PartitionClause,
    },
    Begin,
    Commit,
    Rollback,
    Use(String),
    CreateDatabase {
        name: String,
        if_not_exists: bool,
        options: DatabaseOptions,
    },
    /// `ALTER {DATABASE | SCHEMA} [name] options`; no name is the current
    /// database.
    AlterDatabase {
        name: Option<String>,
        options: DatabaseOptions,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    Truncate {
        database: Option<String>,
        table: String,
    },
    Show(Show),
    /// `FLUSH [LOCAL | NO_WRITE_TO_BINLOG] option, ...` other than the
    /// TABLES forms: what the options ask of the logs binlogd has.
    Flush(FlushLogs),
    PurgeBinaryLogsTo(String),
    /// CREATE / ALTER / DROP USER, GRANT, REVOKE, SHOW GRANTS.
    Account(AccountStatement),
    /// `PURGE BINARY LOGS BEFORE 'datetime'` (the text as given).
    PurgeBinaryLogsBefore(String),
    /// `RESET MASTER` / `RESET BINARY LOGS AND GTIDS`.
    ResetBinaryLogsAndGtids,
    /// `KILL [CONNECTION | QUERY] id`.
    Kill {
        id: u64,
        query_only: bool,
    },
    /// CHANGE REPLICATION SOURCE TO, START / STOP / RESET REPLICA.
    Replica(ReplicaStatement),
    /// `BINLOG '<base64>'`: events a binlog replay applies (the text as given).
    Binlog(String),
    /// `ALTER TABLE t spec [, spec ...]`.
    AlterTable(alter::AlterTable),
    /// `RENAME TABLE a TO b [, c TO d ...]`.
    RenameTable(Vec<(alter::TableName, alter::TableName)>),
    /// Accepted and ignored (comment-only statements, ALTER TABLE … KEYS).
    Nothing,
    /// `SET NAMES {charset | DEFAULT} [COLLATE collation]` (`None`: DEFAULT).
    SetNames {
        charset: Option<String>,
        collation: Option<String>,
    },
    /// `SET {CHARACTER SET | CHARSET} {charset | DEFAULT}`.
    SetCharacterSet(Option<String>),
    /// `START TRANSACTION [WITH CONSISTENT SNAPSHOT] [, READ ONLY | READ WRITE]`.
    StartTransaction {
        consistent_snapshot: bool,
        read_only: Option<bool>,
    },
    /// `SET [GLOBAL | SESSION] TRANSACTION ISOLATION LEVEL ... | READ ONLY | READ WRITE`.
    SetTransaction {
        scope: TransactionScope,
        isolation: Option<IsolationLevel>,
        read_only: Option<bool>,
    },
    /// `FLUSH TABLES WITH READ LOCK`.
    FlushTablesWithReadLock,
    /// `FLUSH TABLES [t, ...]`: binlogd keeps no table cache to close.
    FlushTables,
    /// `LOCK TABLES t [AS a] READ [LOCAL] | [LOW_PRIORITY] WRITE, ...`.
    LockTables(Vec<TableLockRequest>),
    /// `UNLOCK TABLES`.
    UnlockTables,
    /// `SAVEPOINT name`.
    Savepoint(String),
    /// `ROLLBACK [WORK] TO [SAVEPOINT] name`.
    RollbackToSavepoint(String),
    /// `RELEASE SAVEPOINT name`.
    ReleaseSavepoint(String),
}

/// What a FLUSH statement does. Privileges, status, costs and resources
/// need nothing (grants and counters take effect at once); error, general
/// and slow logs are not files here. The relay log: the in-memory one has
/// no files, and a file relay log rotates at its size limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlushLogs {
    /// BINARY LOGS, LOGS: the binlog rotates to a new file.
    pub binary_logs: bool,
    /// ENGINE LOGS, LOGS: the redo log is made durable.
    pub engine_logs: bool,
}

/// Which transactions `SET TRANSACTION` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionScope {
    /// No keyword: the session's next transaction only.
    Next,
    Session,
    Global,
}

/// MySQL's four isolation levels, as `transaction_isolation` spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl IsolationLevel {
    /// The variable's spelling (`REPEATABLE-READ`).
    pub fn variable_text(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "READ-UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ-COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE-READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
        }
    }

    pub fn from_variable_text(text: &str) -> Option<IsolationLevel> {
        [IsolationLevel::ReadUncommitted, IsolationLevel::ReadCommitted, IsolationLevel::RepeatableRead, IsolationLevel::Serializable]
            .into_iter()
            .find(|level| level.variable_text().eq_ignore_ascii_case(text))
    }
}

/// One table of a LOCK TABLES statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLockRequest {
    pub database: Option<String>,
    pub table: String,
    pub alias: Option<String>,
    pub write: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    None,
    Like(String),
    /// `WHERE expr` over the SHOW's own column names.
    Where(Box<Expr>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Show {
    Variables {
        global: bool,
        filter: Filter,
    },
    Status {
        global: bool,
        filter: Filter,
    },
    Databases {
        filter: Filter,
    },
    Tables {
        database: Option<String>,
        full: bool,
        filter: Filter,
    },
    CreateTable {
        database: Option<String>,
        table: String,
    },
    Columns {
        database: Option<String>,
        table: String,
        full: bool,
        filter: Filter,
    },
    Processlist {
        full: bool,
    },
    BinaryLogs,
    BinaryLogStatus,
    /// `SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] count]`.
    BinlogEvents {
        file: Option<String>,
        from: Option<u64>,
        offset: u64,
        limit: Option<u64>,
    },
    /// SHOW REPLICAS, or SHOW SLAVE HOSTS with its old column names.
    Replicas {
        old_names: bool,
    },
    /// SHOW REPLICA STATUS, or SHOW SLAVE STATUS with its old column names.
    ReplicaStatus {
        old_names: bool,
    },
    Warnings,
    Errors,
    Engines,
    /// `SHOW TABLE STATUS [FROM db] [LIKE ...]`.
    /// `SHOW [EXTENDED] {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN} db] [WHERE ...]`.
    Index {
        database: Option<String>,
        table: String,
        filter: Filter,
    },
    TableStatus {
        database: Option<String>,
        filter: Filter,
    },
    /// `SHOW TRIGGERS [FROM db] [LIKE ...]`: binlogd has no triggers.
    Triggers {
        database: Option<String>,
        filter: Filter,
    },
    /// `SHOW EVENTS [FROM db] [LIKE ...]`: binlogd has no events.
    Events {
        database: Option<String>,
        filter: Filter,
    },
    /// `SHOW FUNCTION STATUS` / `SHOW PROCEDURE STATUS`: binlogd has no
    /// stored routines.
    RoutineStatus {
        filter: Filter,
    },
    /// `SHOW CREATE DATABASE [IF NOT EXISTS] db`.
    CreateDatabase {
        name: String,
        if_not_exists: bool,
    },
}

/// A parsed statement and how many parameters it takes.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub statement: Statement,
    pub param_count: usize,
}

pub fn parse(sql: &str) -> SqlResult<Parsed> {
    let words = Words::new(sql)?;
    let depth = depth::depth_bound(&words.tokens);
    if depth > EXPRESSION_DEPTH_MAX {
        return Err(too_deep(depth));
    }
    // Only CREATE TABLE can carry a PARTITION BY clause: other statements
    // are not tokenized again to look for one.
    let creates_table = words.peek_keyword(0).as_deref() == Some("CREATE") && words.peek_keyword(1).as_deref() == Some("TABLE");
    if let Some(statement) = hand_parse(words, sql)? {
        return Ok(Parsed { statement, param_count: 0 });
    }
    if let Some((table, partitioning)) = creates_table.then(|| partition::split_create_table(sql)).transpose()?.flatten() {
        let table = column_charset_spelled_out(&table).unwrap_or(table);
        let mut statements = Parser::parse_sql(&MySqlDialect {}, &table).map_err(|error| parse_error(&table, &error.to_string()))?;
        if statements.len() != 1 || !matches!(statements[0], Ast::CreateTable(_)) {
            return Err(syntax_error(sql));
        }
        let statement = Statement::PartitionedCreateTable { create: Box::new(statements.remove(0)), partitioning };
        return Ok(Parsed { statement, param_count: 0 });
    }
    let rewritten = share_mode_as_for_share(sql).or_else(|| set_with_assignments(sql)).or_else(|| column_charset_spelled_out(sql));
    let rewritten = composite_interval_units(rewritten.as_deref().unwrap_or(sql)).or(rewritten);
    let parsed_text = rewritten.as_deref().unwrap_or(sql);
    let mut statements = Parser::parse_sql(&MySqlDialect {}, parsed_text).map_err(|error| parse_error(sql, &error.to_string()))?;
    if statements.len() != 1 {
        return Err(syntax_error(sql));
    }
    let mut statement = statements.remove(0);
    let mut param_count = 0usize;
    let _ = visit_expressions_mut(&mut statement, |expr| {
        if let Expr::Value(value) = expr {
            if let Literal::Placeholder(name) = &mut value.value {
                if name == "?" {
                    param_count += 1;
                    *name = format!("${param_count}");
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(Parsed { statement: Statement::Ast(Box::new(statement)), param_count })
}

/// 1436 ER_STACK_OVERRUN_NEED_MORE, MySQL's answer to a statement too
/// deep for its thread's stack.
fn too_deep(depth: usize) -> protocol::MysqlError {
    protocol::MysqlError::new(
        1436,
        "HY000",
        format!(
            "Thread stack overrun: the statement nests up to {depth} levels of expressions, over the limit of {EXPRESSION_DEPTH_MAX}; \
             split long operator chains (OR lists into IN (...), sums into several statements)"
        ),
    )
}

/// 1064 quoting the text from where sqlparser stopped ("... at Line: 1,
/// Column: 8").
fn parse_error(sql: &str, message: &str) -> protocol::MysqlError {
    let location = message.rsplit_once("Line: ").and_then(|(_, rest)| {
        let (line, rest) = rest.split_once(", Column: ")?;
        let column: usize = rest.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok()?;
        Some((line.parse::<usize>().ok()?, column))
    });
    let near = match location {
        Some((line, column)) => {
            let offset: usize = sql.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
            let start = sql[offset..].char_indices().nth(column.saturating_sub(1)).map_or(sql.len(), |(i, _)| offset + i);
            &sql[start..]
        }
        None => sql,
    };
    syntax_error(near)
}

/// `SET NAMES …` and `SET CHARACTER SET …`; `None` for other SETs.
fn parse_set_names(words: &mut Words) -> SqlResult<Option<Statement>> {
    let start = words.position;
    words.keyword("SET");
    // A name is a word or a string; DEFAULT is the keyword, not a name.
    let name = |words: &mut Words| -> SqlResult<Option<String>> {
        if words.keyword("DEFAULT") {
            return Ok(None);
        }
        words.string().or_else(|| words.identifier()).map(Some).ok_or_else(|| syntax_error(&words.rest()))
    };
    if words.keyword("NAMES") {
        let charset = name(words)?;
        let collation = match words.keyword("COLLATE") {
            true => Some(words.string().or_else(|| words.identifier()).ok_or_else(|| syntax_error(&words.rest()))?),
            false => None,
        };
        return words.end(Statement::SetNames { charset, collation });
    }
    if words.keywords(&["CHARACTER", "SET"]) || words.keyword("CHARSET") {
        let charset = name(words)?;
        return words.end(Statement::SetCharacterSet(charset));
    }
    words.position = start;
    Ok(None)
}

/// A statement ending in `LOCK IN SHARE MODE` (MySQL's older spelling of
/// `FOR SHARE`, which sqlparser does not read) with `FOR SHARE` instead;
/// `None` for any other.
fn share_mode_as_for_share(sql: &str) -> Option<String> {
    let mut rest = sql.trim_end().trim_end_matches(';').trim_end();
    for word in ["MODE", "SHARE", "IN", "LOCK"] {
        let start = rest.len().checked_sub(word.len())?;
        if !rest.is_char_boundary(start) || !rest[start..].eq_ignore_ascii_case(word) {
            return None;
        }
        let before = &rest[..start];
        if !before.ends_with(char::is_whitespace) {
            return None;
        }
        rest = before.trim_end();
    }
    Some(format!("{rest} FOR SHARE"))
}

/// A CREATE TABLE whose column definitions say `CHARSET x` (MySQL's
/// synonym of `CHARACTER SET`, which sqlparser reads only as a table
/// option) with `CHARACTER SET x`; `None` for any other statement. A word
/// right after `(` or `,` names a column and stays.
fn column_charset_spelled_out(sql: &str) -> Option<String> {
    if !sql.trim_start().get(..7).is_some_and(|first| first.eq_ignore_ascii_case("CREATE ")) {
        return None;
    }
    let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize().ok()?;
    let (mut depth, mut changed, mut after_separator) = (0usize, false, false);
    let mut out = String::with_capacity(sql.len() + 8);
    for token in tokens {
        match &token {
            Token::Whitespace(_) => {}
            Token::Word(word)
                if depth == 1 && !after_separator && word.quote_style.is_none() && word.value.eq_ignore_ascii_case("CHARSET") =>
            {
                out.push_str("CHARACTER SET");
                changed = true;
                continue;
            }
            other => {
                match other {
                    Token::LParen => depth += 1,
                    Token::RParen => depth = depth.saturating_sub(1),
                    _ => {}
                }
                after_separator = matches!(other, Token::LParen | Token::Comma);
            }
        }
        out.push_str(&token.to_string());
    }
    changed.then_some(out)
}

/// `SET @a := 1, ...` with `=` for each `:=` (MySQL takes both in SET;
/// sqlparser only `=`); `None` for any other statement.
fn set_with_assignments(sql: &str) -> Option<String> {
    if !sql.trim_start().get(..4).is_some_and(|first| first.eq_ignore_ascii_case("SET ")) || !sql.contains(":=") {
        return None;
    }
    let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize().ok()?;
    if !tokens.contains(&Token::Assignment) {
        return None;
    }
    Some(tokens.into_iter().map(|token| if token == Token::Assignment { Token::Eq } else { token }.to_string()).collect())
}

/// MySQL's composite interval units (`INTERVAL '1:30' HOUR_MINUTE`),
/// which sqlparser does not read, as the SQL standard's `HOUR TO MINUTE`
/// it does; SECOND_MICROSECOND, which has no such form (sqlparser reads
/// no `SECOND TO`), as `SECOND (0, 6)`. The evaluator turns both back into
/// the unit (`Scope::interval`). Only a unit after an INTERVAL is
/// rewritten, so `EXTRACT(HOUR_MINUTE FROM ...)` and names stay as they
/// are; `None` when nothing is.
fn composite_interval_units(sql: &str) -> Option<String> {
    let has_interval = sql.as_bytes().windows(8).any(|window| window.eq_ignore_ascii_case(b"INTERVAL"));
    if !has_interval || !sql.contains('_') {
        return None;
    }
    let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize().ok()?;
    let (mut out, mut after_interval, mut rewrote) = (String::with_capacity(sql.len() + 8), false, false);
    for token in tokens {
        match &token {
            Token::Word(word) if word.quote_style.is_none() => {
                let upper = word.value.to_ascii_uppercase();
                let standard = match upper.as_str() {
                    "SECOND_MICROSECOND" => Some("SECOND (0, 6)".to_string()),
                    "YEAR_MONTH" | "DAY_HOUR" | "DAY_MINUTE" | "DAY_SECOND" | "DAY_MICROSECOND" | "HOUR_MINUTE" | "HOUR_SECOND"
                    | "HOUR_MICROSECOND" | "MINUTE_SECOND" | "MINUTE_MICROSECOND" => Some(upper.replacen('_', " TO ", 1)),
                    _ => None,
                };
                match standard {
                    Some(standard) if after_interval => {
                        out.push_str(&standard);
                        after_interval = false;
                        rewrote = true;
                        continue;
                    }
                    _ => after_interval |= upper == "INTERVAL",
                }
            }
            _ => {}
        }
        out.push_str(&token.to_string());
    }
    rewrote.then_some(out)
}

/// The statement's tokens without whitespace and comments.
struct Words {
    tokens: Vec<Token>,
    /// The text held a comment (`/*!*/`, which binlog replays send alone).
    had_comment: bool,
    position: usize,
}

impl Words {
    fn new(sql: &str) -> SqlResult<Words> {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize().map_err(|_| syntax_error(sql))?;
        let had_comment = tokens
            .iter()
            .any(|token| matches!(token, Token::Whitespace(Whitespace::SingleLineComment { .. } | Whitespace::MultiLineComment(_))))
            || sql.contains("/*!");
        let tokens = tokens.into_iter().filter(|token| !matches!(token, Token::Whitespace(_) | Token::SemiColon)).collect();
        Ok(Words { tokens, position: 0, had_comment })
    }

    fn peek_keyword(&self, offset: usize) -> Option<String> {
        match self.tokens.get(self.position + offset) {
            Some(Token::Word(word)) if word.quote_style.is_none() => Some(word.value.to_ascii_uppercase()),
            _ => None,
        }
    }

    /// Consumes `keyword` if it is next.
    fn keyword(&mut self, keyword: &str) -> bool {
        if self.peek_keyword(0).as_deref() == Some(keyword) {
            self.position += 1;
            return true;
        }
        false
    }

    fn keywords(&mut self, keywords: &[&str]) -> bool {
        let start = self.position;
        for keyword in keywords {
            if !self.keyword(keyword) {
                self.position = start;
                return false;
            }
        }
        true
    }

    fn at_end(&self) -> bool {
        self.position >= self.tokens.len()
    }

    fn identifier(&mut self) -> Option<String> {
        match self.tokens.get(self.position) {
            Some(Token::Word(word)) => {
                self.position += 1;
                Some(word.value.clone())
            }
            _ => None,
        }
    }

    fn string(&mut self) -> Option<String> {
        match self.tokens.get(self.position) {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                self.position += 1;
                Some(s.clone())
            }
            _ => None,
        }
    }

    /// An unsigned integer literal.
    fn number(&mut self) -> Option<u64> {
        match self.tokens.get(self.position) {
            Some(Token::Number(text, _)) => {
                let value = text.parse().ok()?;
                self.position += 1;
                Some(value)
            }
            _ => None,
        }
    }

    fn token(&mut self, token: &Token) -> bool {
        if self.tokens.get(self.position) == Some(token) {
            self.position += 1;
            return true;
        }
        false
    }

    /// `name` or `db.name`.
    fn qualified_name(&mut self) -> Option<(Option<String>, String)> {
        let first = self.identifier()?;
        if self.token(&Token::Period) {
            let second = self.identifier()?;
            return Some((Some(first), second));
        }
        Some((None, first))
    }

    fn rest(&self) -> String {
        self.tokens[self.position.min(self.tokens.len())..].iter().map(ToString::to_string).collect::<Vec<_>>().join(" ")
    }

    fn end(&self, statement: Statement) -> SqlResult<Option<Statement>> {
        if self.at_end() {
            Ok(Some(statement))
        } else {
            Err(syntax_error(&self.rest()))
        }
    }
}

fn hand_parse(mut words: Words, sql: &str) -> SqlResult<Option<Statement>> {
    if words.at_end() {
        // Only comments: MySQL's parser answers OK (its `has_comment()`);
        // an empty text is 1065.
        if words.had_comment {
            return Ok(Some(Statement::Nothing));
        }
        return Err(protocol::MysqlError::empty_query());
    }
    if let Some(statement) = users::parse_account_statement(&mut words)? {
        return Ok(Some(statement));
    }
    if let Some(statement) = replica::parse_replica_statement(&mut words)? {
        return Ok(Some(statement));
    }
    let Some(first) = words.peek_keyword(0) else { return Ok(None) };
    match first.as_str() {
        "BEGIN" => {
            words.keyword("BEGIN");
            words.keyword("WORK");
            words.end(Statement::Begin)
        }
        "START" => {
            if !words.keywords(&["START", "TRANSACTION"]) {
                return Err(syntax_error(sql));
            }
            let (mut consistent_snapshot, mut read_only) = (false, None);
            loop {
                if words.keywords(&["WITH", "CONSISTENT", "SNAPSHOT"]) {
                    consistent_snapshot = true;
                } else if read_only.is_none() && words.keywords(&["READ", "WRITE"]) {
                    read_only = Some(false);
                } else if read_only.is_none() && words.keywords(&["READ", "ONLY"]) {
                    read_only = Some(true);
                } else {
                    break;
                }
                if !words.token(&Token::Comma) {
                    break;
                }
            }
            words.end(Statement::StartTransaction { consistent_snapshot, read_only })
        }
        "COMMIT" | "ROLLBACK" => {
            words.keyword(&first);
            words.keyword("WORK");
            if first == "ROLLBACK" && words.keyword("TO") {
                words.keyword("SAVEPOINT");
                let name = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
                return words.end(Statement::RollbackToSavepoint(name));
            }
            if words.keyword("TO") || words.keyword("AND") || words.keyword("RELEASE") {
                return Err(not_supported(format!("{first} {}", words.rest())));
            }
            words.end(if first == "COMMIT" { Statement::Commit } else { Statement::Rollback })
        }
        "USE" => {
            words.keyword("USE");
            let name = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
            words.end(Statement::Use(name))
        }
        "CREATE" | "DROP" if matches!(words.peek_keyword(1).as_deref(), Some("DATABASE" | "SCHEMA")) => {
            words.position += 2;
            if first == "CREATE" {
                let if_not_exists = words.keywords(&["IF", "NOT", "EXISTS"]);
                let name = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
                let options = database_options::parse(&mut words)?;
                words.end(Statement::CreateDatabase { name, if_not_exists, options })
            } else {
                let if_exists = words.keywords(&["IF", "EXISTS"]);
                let name = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
                words.end(Statement::DropDatabase { name, if_exists })
            }
        }
        "TRUNCATE" => {
            words.keyword("TRUNCATE");
            words.keyword("TABLE");
            let (database, table) = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
            words.end(Statement::Truncate { database, table })
        }
        "FLUSH" => {
            words.keyword("FLUSH");
            words.keyword("LOCAL");
            words.keyword("NO_WRITE_TO_BINLOG");
            if words.keyword("TABLES") || words.keyword("TABLE") {
                if words.keywords(&["WITH", "READ", "LOCK"]) {
                    return words.end(Statement::FlushTablesWithReadLock);
                }
                // FLUSH TABLES t1, t2 [WITH READ LOCK | FOR EXPORT]: only the plain forms.
                while words.qualified_name().is_some() {
                    if !words.token(&Token::Comma) {
                        break;
                    }
                }
                if words.keyword("WITH") || words.keyword("FOR") {
                    return Err(not_supported(format!("FLUSH TABLES ... {}", words.rest())));
                }
                return words.end(Statement::FlushTables);
            }
            let mut flush = FlushLogs::default();
            loop {
                if words.keyword("LOGS") {
                    // Every log: binlogd's are the binlog and the redo log
                    // (errors go to stderr; the relay log, see `FlushLogs`).
                    (flush.binary_logs, flush.engine_logs) = (true, true);
                } else if words.keywords(&["BINARY", "LOGS"]) {
                    flush.binary_logs = true;
                } else if words.keywords(&["ENGINE", "LOGS"]) {
                    flush.engine_logs = true;
                } else if words.keywords(&["RELAY", "LOGS"]) {
                    if words.keywords(&["FOR", "CHANNEL"]) && words.identifier().or_else(|| words.string()).is_none() {
                        return Err(syntax_error(&words.rest()));
                    }
                } else if words.keywords(&["ERROR", "LOGS"])
                    || words.keywords(&["GENERAL", "LOGS"])
                    || words.keywords(&["SLOW", "LOGS"])
                    || words.keyword("PRIVILEGES")
                    || words.keyword("STATUS")
                    || words.keyword("OPTIMIZER_COSTS")
                    || words.keyword("USER_RESOURCES")
                    || words.keyword("HOSTS")
                {
                } else {
                    return Err(syntax_error(&words.rest()));
                }
                if !words.token(&Token::Comma) {
                    break;
                }
            }
            words.end(Statement::Flush(flush))
        }
        "PURGE" => {
            words.keyword("PURGE");
            if !(words.keywords(&["BINARY", "LOGS"]) || words.keywords(&["MASTER", "LOGS"])) {
                return Err(syntax_error(&words.rest()));
            }
            if words.keyword("TO") {
                let name = words.string().ok_or_else(|| syntax_error(&words.rest()))?;
                return words.end(Statement::PurgeBinaryLogsTo(name));
            }
            if words.keyword("BEFORE") {
                let time = words.string().ok_or_else(|| syntax_error(&words.rest()))?;
                return words.end(Statement::PurgeBinaryLogsBefore(time));
            }
            Err(syntax_error(&words.rest()))
        }
        "RESET" => {
            words.keyword("RESET");
            if words.keyword("MASTER") || words.keywords(&["BINARY", "LOGS", "AND", "GTIDS"]) {
                if words.keyword("TO") {
                    return Err(not_supported("RESET BINARY LOGS AND GTIDS TO"));
                }
                return words.end(Statement::ResetBinaryLogsAndGtids);
            }
            let what: Vec<String> = (0..2).filter_map(|i| words.peek_keyword(i)).collect();
            Err(not_supported(format!("RESET {}", what.join(" "))))
        }
        "BINLOG" => {
            words.keyword("BINLOG");
            let text = words.string().ok_or_else(|| syntax_error(&words.rest()))?;
            words.end(Statement::Binlog(text))
        }
        "KILL" => {
            words.keyword("KILL");
            let query_only = words.keyword("QUERY");
            if !query_only {
                words.keyword("CONNECTION");
            }
            let id = words.number().ok_or_else(|| syntax_error(&words.rest()))?;
            words.end(Statement::Kill { id, query_only })
        }
        "DESCRIBE" | "DESC" | "EXPLAIN" if words.tokens.len() <= 4 => {
            words.position += 1;
            let (database, table) = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
            words.end(Statement::Show(Show::Columns { database, table, full: false, filter: Filter::None }))
        }
        "SHOW" => {
            words.keyword("SHOW");
            parse_show(words).map(|show| Some(Statement::Show(show)))
        }
        "SET" => {
            let second = words.peek_keyword(1);
            if let Some(statement) = parse_set_names(&mut words)? {
                return Ok(Some(statement));
            }
            if let Some(statement) = parse_set_transaction(&mut words)? {
                return Ok(Some(statement));
            }
            if matches!(second.as_deref(), Some("PASSWORD" | "ROLE" | "DEFAULT")) {
                return Err(not_supported(format!("SET {}", second.unwrap_or_default())));
            }
            Ok(None)
        }
        "LOCK" if matches!(words.peek_keyword(1).as_deref(), Some("TABLES" | "TABLE")) => parse_lock_tables(words),
        "UNLOCK" if matches!(words.peek_keyword(1).as_deref(), Some("TABLES" | "TABLE")) => {
            words.position += 2;
            words.end(Statement::UnlockTables)
        }
        "SAVEPOINT" => {
            words.keyword("SAVEPOINT");
            let name = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
            words.end(Statement::Savepoint(name))
        }
        "RELEASE" if words.peek_keyword(1).as_deref() == Some("SAVEPOINT") => {
            words.position += 2;
            let name = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
            words.end(Statement::ReleaseSavepoint(name))
        }
        // What dumps wrap their INSERTs in; InnoDB, as binlogd's engine,
        // keeps its indexes current and ignores it.
        "ALTER"
            if words.peek_keyword(1).as_deref() == Some("TABLE") && {
                let start = words.position;
                words.position += 2;
                let keys = words.qualified_name().is_some()
                    && (words.keywords(&["DISABLE", "KEYS"]) || words.keywords(&["ENABLE", "KEYS"]))
                    && words.at_end();
                words.position = start;
                keys
            } =>
        {
            Ok(Some(Statement::Nothing))
        }
        "ALTER" if words.peek_keyword(1).as_deref() == Some("TABLE") => alter::parse_alter_table(&mut words),
        "ALTER" if matches!(words.peek_keyword(1).as_deref(), Some("DATABASE" | "SCHEMA")) => {
            words.position += 2;
            let option_word = |word: Option<String>| {
                matches!(word.as_deref(), Some("DEFAULT" | "CHARACTER" | "CHARSET" | "COLLATE" | "ENCRYPTION" | "READ"))
            };
            let name = if option_word(words.peek_keyword(0)) { None } else { words.identifier() };
            let options = database_options::parse(&mut words)?;
            words.end(Statement::AlterDatabase { name, options })
        }
        "RENAME" if words.peek_keyword(1).as_deref() == Some("TABLE") => alter::parse_rename_table(&mut words),
        "LOCK" | "UNLOCK" | "RELEASE" | "ALTER" | "RENAME" | "LOAD" | "HANDLER" | "CALL" | "XA" | "CHANGE" | "ANALYZE" | "OPTIMIZE"
        | "CHECK" | "REPAIR" => {
            let what: Vec<String> = (0..2).filter_map(|i| words.peek_keyword(i)).collect();
            Err(not_supported(what.join(" ")))
        }
        _ => Ok(None),
    }
}

/// `SET [GLOBAL | SESSION | LOCAL] TRANSACTION characteristic [, ...]`, or
/// `None` when the statement is another SET.
fn parse_set_transaction(words: &mut Words) -> SqlResult<Option<Statement>> {
    let start = words.position;
    words.keyword("SET");
    let scope = if words.keyword("GLOBAL") {
        TransactionScope::Global
    } else if words.keyword("SESSION") || words.keyword("LOCAL") {
        TransactionScope::Session
    } else {
        TransactionScope::Next
    };
    if !words.keyword("TRANSACTION") {
        words.position = start;
        return Ok(None);
    }
    let (mut isolation, mut read_only) = (None, None);
    loop {
        if isolation.is_none() && words.keywords(&["ISOLATION", "LEVEL"]) {
            isolation = Some(if words.keywords(&["READ", "UNCOMMITTED"]) {
                IsolationLevel::ReadUncommitted
            } else if words.keywords(&["READ", "COMMITTED"]) {
                IsolationLevel::ReadCommitted
            } else if words.keywords(&["REPEATABLE", "READ"]) {
                IsolationLevel::RepeatableRead
            } else if words.keyword("SERIALIZABLE") {
                IsolationLevel::Serializable
            } else {
                return Err(syntax_error(&words.rest()));
            });
        } else if read_only.is_none() && words.keywords(&["READ", "ONLY"]) {
            read_only = Some(true);
        } else if read_only.is_none() && words.keywords(&["READ", "WRITE"]) {
            read_only = Some(false);
        } else {
            return Err(syntax_error(&words.rest()));
        }
        if !words.token(&Token::Comma) {
            break;
        }
    }
    words.end(Statement::SetTransaction { scope, isolation, read_only })
}

/// `LOCK TABLE[S] name [[AS] alias] lock_type [, ...]`.
fn parse_lock_tables(mut words: Words) -> SqlResult<Option<Statement>> {
    words.position += 2;
    let mut tables = Vec::new();
    loop {
        let (database, table) = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
        words.keyword("AS");
        let alias = match words.peek_keyword(0).as_deref() {
            Some("READ" | "WRITE" | "LOW_PRIORITY") | None => None,
            Some(_) => words.identifier(),
        };
        let write = if words.keyword("READ") {
            words.keyword("LOCAL");
            false
        } else if words.keyword("WRITE") || words.keywords(&["LOW_PRIORITY", "WRITE"]) {
            true
        } else {
            return Err(syntax_error(&words.rest()));
        };
        tables.push(TableLockRequest { database, table, alias, write });
        if !words.token(&Token::Comma) {
            break;
        }
    }
    words.end(Statement::LockTables(tables))
}

fn filter(words: &mut Words) -> SqlResult<Filter> {
    if words.keyword("LIKE") {
        let pattern = words.string().ok_or_else(|| syntax_error(&words.rest()))?;
        return Ok(Filter::Like(pattern));
    }
    if words.keyword("WHERE") {
        let condition = words.rest();
        words.position = words.tokens.len();
        let expr = Parser::new(&MySqlDialect {})
            .try_with_sql(&condition)
            .and_then(|mut parser| parser.parse_expr())
            .map_err(|error| parse_error(&condition, &error.to_string()))?;
        return Ok(Filter::Where(Box::new(expr)));
    }
    Ok(Filter::None)
}

/// A SHOW's filter where binlogd's answer is always empty: any WHERE
/// keeps it empty, so its condition is read and not evaluated.
fn filter_of_empty(words: &mut Words) -> SqlResult<Filter> {
    if words.keyword("WHERE") {
        if words.at_end() {
            return Err(syntax_error(""));
        }
        words.position = words.tokens.len();
        return Ok(Filter::None);
    }
    filter(words)
}

fn from_database(words: &mut Words) -> Option<String> {
    if words.keyword("FROM") || words.keyword("IN") {
        return words.identifier();
    }
    None
}

fn parse_show(mut words: Words) -> SqlResult<Show> {
    let global = words.keyword("GLOBAL");
    let session = !global && (words.keyword("SESSION") || words.keyword("LOCAL"));
    // EXTENDED adds the hidden columns and indexes InnoDB keeps; binlogd's
    // tables have none, so the result is the same.
    let _extended = words.keyword("EXTENDED");
    let full = words.keyword("FULL");
    let show = if words.keyword("VARIABLES") {
        Show::Variables { global, filter: filter(&mut words)? }
    } else if words.keyword("STATUS") {
        Show::Status { global, filter: filter(&mut words)? }
    } else if global || session {
        return Err(syntax_error(&words.rest()));
    } else if words.keyword("DATABASES") || words.keyword("SCHEMAS") {
        Show::Databases { filter: filter(&mut words)? }
    } else if words.keyword("TABLES") {
        let database = from_database(&mut words);
        Show::Tables { database, full, filter: filter(&mut words)? }
    } else if words.keywords(&["CREATE", "TABLE"]) {
        let (database, table) = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
        Show::CreateTable { database, table }
    } else if words.keyword("COLUMNS") || words.keyword("FIELDS") {
        if !(words.keyword("FROM") || words.keyword("IN")) {
            return Err(syntax_error(&words.rest()));
        }
        let (mut database, table) = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
        if let Some(named) = from_database(&mut words) {
            database = Some(named);
        }
        Show::Columns { database, table, full, filter: filter(&mut words)? }
    } else if words.keyword("INDEX") || words.keyword("INDEXES") || words.keyword("KEYS") {
        if !(words.keyword("FROM") || words.keyword("IN")) {
            return Err(syntax_error(&words.rest()));
        }
        let (mut database, table) = words.qualified_name().ok_or_else(|| syntax_error(&words.rest()))?;
        if let Some(named) = from_database(&mut words) {
            database = Some(named);
        }
        Show::Index { database, table, filter: filter(&mut words)? }
    } else if words.keyword("PROCESSLIST") {
        Show::Processlist { full }
    } else if words.keywords(&["BINARY", "LOGS"]) || words.keywords(&["MASTER", "LOGS"]) {
        Show::BinaryLogs
    } else if words.keywords(&["BINARY", "LOG", "STATUS"]) || words.keywords(&["MASTER", "STATUS"]) {
        Show::BinaryLogStatus
    } else if words.keywords(&["BINLOG", "EVENTS"]) {
        let file = if words.keyword("IN") { Some(words.string().ok_or_else(|| syntax_error(&words.rest()))?) } else { None };
        let from = if words.keyword("FROM") { Some(words.number().ok_or_else(|| syntax_error(&words.rest()))?) } else { None };
        let (mut offset, mut limit) = (0, None);
        if words.keyword("LIMIT") {
            let first = words.number().ok_or_else(|| syntax_error(&words.rest()))?;
            if words.token(&Token::Comma) {
                offset = first;
                limit = Some(words.number().ok_or_else(|| syntax_error(&words.rest()))?);
            } else {
                limit = Some(first);
            }
        }
        Show::BinlogEvents { file, from, offset, limit }
    } else if words.keyword("REPLICAS") {
        Show::Replicas { old_names: false }
    } else if words.keywords(&["SLAVE", "HOSTS"]) {
        Show::Replicas { old_names: true }
    } else if words.keywords(&["REPLICA", "STATUS"]) {
        Show::ReplicaStatus { old_names: false }
    } else if words.keywords(&["SLAVE", "STATUS"]) {
        Show::ReplicaStatus { old_names: true }
    } else if words.keyword("WARNINGS") {
        Show::Warnings
    } else if words.keyword("ERRORS") {
        Show::Errors
    } else if words.keyword("ENGINES") || words.keywords(&["STORAGE", "ENGINES"]) {
        Show::Engines
    } else if words.keywords(&["TABLE", "STATUS"]) {
        let database = from_database(&mut words);
        Show::TableStatus { database, filter: filter(&mut words)? }
    } else if words.keyword("TRIGGERS") {
        let database = from_database(&mut words);
        Show::Triggers { database, filter: filter_of_empty(&mut words)? }
    } else if words.keyword("EVENTS") {
        let database = from_database(&mut words);
        Show::Events { database, filter: filter_of_empty(&mut words)? }
    } else if words.keywords(&["FUNCTION", "STATUS"]) || words.keywords(&["PROCEDURE", "STATUS"]) {
        Show::RoutineStatus { filter: filter_of_empty(&mut words)? }
    } else if words.keywords(&["CREATE", "DATABASE"]) || words.keywords(&["CREATE", "SCHEMA"]) {
        let if_not_exists = words.keywords(&["IF", "NOT", "EXISTS"]);
        let name = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
        Show::CreateDatabase { name, if_not_exists }
    } else {
        let what: Vec<String> = (0..2).filter_map(|i| words.peek_keyword(i)).collect();
        return Err(not_supported(format!("SHOW {}", what.join(" "))));
    };
    if words.keyword("LIMIT") {
        // SHOW WARNINGS LIMIT n: nothing to limit, there are never any.
        words.position = words.tokens.len();
    }
    if !words.at_end() {
        return Err(syntax_error(&words.rest()));
    }
    Ok(show)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_placeholders_in_text_order() {
        let parsed = parse("UPDATE sbtest1 SET c=? WHERE id=?").unwrap();
        assert_eq!(parsed.param_count, 2);
        let Statement::Ast(ast) = parsed.statement else { panic!() };
        assert_eq!(ast.to_string(), "UPDATE sbtest1 SET c = $1 WHERE id = $2");
    }

    #[test]
    fn hand_parses_administrative_statements() {
        assert!(matches!(parse("begin").unwrap().statement, Statement::Begin));
        assert!(matches!(
            parse("START TRANSACTION").unwrap().statement,
            Statement::StartTransaction { consistent_snapshot: false, read_only: None }
        ));
        assert!(matches!(parse("use `sb test`").unwrap().statement, Statement::Use(name) if name == "sb test"));
        assert!(matches!(
            parse("SHOW GLOBAL VARIABLES LIKE 'binlog%'").unwrap().statement,
            Statement::Show(Show::Variables { global: true, filter: Filter::Like(_) })
        ));
        assert!(matches!(parse("DROP DATABASE IF EXISTS sbtest").unwrap().statement, Statement::DropDatabase { if_exists: true, .. }));
        assert_eq!(parse("SELEC 1").unwrap_err().code, 1064);
        assert!(matches!(
            parse("LOCK TABLES t READ LOCAL, d.u AS x WRITE").unwrap().statement,
            Statement::LockTables(tables) if tables.len() == 2 && !tables[0].write && tables[1].write && tables[1].alias.as_deref() == Some("x")
        ));
        assert!(matches!(parse("UNLOCK TABLES").unwrap().statement, Statement::UnlockTables));
        assert!(matches!(parse("ALTER TABLE `t` DISABLE KEYS").unwrap().statement, Statement::Nothing));
        assert!(matches!(parse("ALTER TABLE t ADD COLUMN c INT").unwrap().statement, Statement::AlterTable(_)));
        assert!(matches!(parse("FLUSH TABLES WITH READ LOCK").unwrap().statement, Statement::FlushTablesWithReadLock));
        let flush = |sql: &str| match parse(sql).unwrap().statement {
            Statement::Flush(flush) => (flush.binary_logs, flush.engine_logs),
            other => panic!("{sql}: {other:?}"),
        };
        assert_eq!(flush("FLUSH /*!40101 LOCAL */ LOGS"), (true, true));
        assert_eq!(flush("FLUSH NO_WRITE_TO_BINLOG BINARY LOGS"), (true, false));
        assert_eq!(flush("FLUSH ENGINE LOGS, PRIVILEGES"), (false, true));
        assert_eq!(flush("FLUSH RELAY LOGS FOR CHANNEL ''"), (false, false));
        assert_eq!(flush("FLUSH ERROR LOGS, SLOW LOGS, GENERAL LOGS, STATUS, HOSTS, OPTIMIZER_COSTS, USER_RESOURCES"), (false, false));
        assert_eq!(parse("FLUSH LOGS LOGS").unwrap_err().code, 1064);
        assert_eq!(parse("FLUSH NOTHING").unwrap_err().code, 1064);
        assert!(matches!(
            parse("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY").unwrap().statement,
            Statement::StartTransaction { consistent_snapshot: true, read_only: Some(true) }
        ));
        assert!(matches!(
            parse("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ").unwrap().statement,
            Statement::SetTransaction {
                scope: TransactionScope::Session,
                isolation: Some(IsolationLevel::RepeatableRead),
                read_only: None
            }
        ));
        assert_eq!(parse("SET TRANSACTION ISOLATION LEVEL SOMETIMES").unwrap_err().code, 1064);
        assert_eq!(parse("LOCK TABLES t").unwrap_err().code, 1064);
        assert!(matches!(
            parse("SHOW FULL TABLES IN d WHERE Table_type = 'BASE TABLE'").unwrap().statement,
            Statement::Show(Show::Tables { full: true, filter: Filter::Where(_), .. })
        ));
        assert!(matches!(parse("SAVEPOINT sp").unwrap().statement, Statement::Savepoint(name) if name == "sp"));
        assert!(matches!(parse("ROLLBACK TO SAVEPOINT sp").unwrap().statement, Statement::RollbackToSavepoint(name) if name == "sp"));
        assert!(matches!(parse("RELEASE SAVEPOINT sp").unwrap().statement, Statement::ReleaseSavepoint(name) if name == "sp"));
        assert_eq!(parse("").unwrap_err().code, 1065);
        assert!(matches!(parse("/*!*/").unwrap().statement, Statement::Nothing));
        assert!(matches!(
            parse("SET NAMES 'latin1' COLLATE latin1_bin").unwrap().statement,
            Statement::SetNames { charset: Some(c), collation: Some(k) } if c == "latin1" && k == "latin1_bin"
        ));
        assert!(matches!(parse("set names default").unwrap().statement, Statement::SetNames { charset: None, collation: None }));
        assert!(matches!(parse("SET CHARACTER SET utf8mb4").unwrap().statement, Statement::SetCharacterSet(Some(_))));
        assert!(matches!(parse("SET CHARSET DEFAULT").unwrap().statement, Statement::SetCharacterSet(None)));
        assert_eq!(parse("SET NAMES").unwrap_err().code, 1064);
        assert!(matches!(parse("/* nothing */").unwrap().statement, Statement::Nothing));
    }

    #[test]
    fn hand_parses_binlog_and_kill_statements() {
        let statement = |sql: &str| parse(sql).unwrap().statement;
        assert!(matches!(
            statement("SHOW BINLOG EVENTS IN 'binlog.000002' FROM 199 LIMIT 2, 3"),
            Statement::Show(Show::BinlogEvents { file: Some(f), from: Some(199), offset: 2, limit: Some(3) }) if f == "binlog.000002"
        ));
        assert!(matches!(
            statement("show binlog events limit 5"),
            Statement::Show(Show::BinlogEvents { file: None, from: None, offset: 0, limit: Some(5) })
        ));
        assert!(matches!(statement("RESET MASTER"), Statement::ResetBinaryLogsAndGtids));
        assert!(matches!(statement("reset binary logs and gtids"), Statement::ResetBinaryLogsAndGtids));
        assert!(
            matches!(statement("PURGE BINARY LOGS BEFORE '2026-01-01 00:00:00'"), Statement::PurgeBinaryLogsBefore(t) if t == "2026-01-01 00:00:00")
        );
        assert!(matches!(statement("KILL 7"), Statement::Kill { id: 7, query_only: false }));
        assert!(matches!(statement("KILL CONNECTION 7"), Statement::Kill { id: 7, query_only: false }));
        assert!(matches!(statement("KILL QUERY 8"), Statement::Kill { id: 8, query_only: true }));
        assert_eq!(parse("KILL 'x'").unwrap_err().code, 1064);
        assert_eq!(parse("RESET MASTER TO 5").unwrap_err().code, 1235);
        assert_eq!(
            share_mode_as_for_share("SELECT * FROM t WHERE id = 1 lock  in share\nMODE ;").as_deref(),
            Some("SELECT * FROM t WHERE id = 1 FOR SHARE")
        );
        assert_eq!(share_mode_as_for_share("SELECT 'LOCK IN SHARE MODE'"), None);
        assert_eq!(
            composite_interval_units("SELECT d + INTERVAL '1:30' hour_minute, DATE_SUB(d, INTERVAL '1.5' SECOND_MICROSECOND)").as_deref(),
            Some("SELECT d + INTERVAL '1:30' HOUR TO MINUTE, DATE_SUB(d, INTERVAL '1.5' SECOND (0, 6))")
        );
        assert_eq!(
            composite_interval_units("SELECT EXTRACT(HOUR_MINUTE FROM d), `DAY_HOUR` FROM t WHERE d > NOW() - INTERVAL 1 DAY"),
            None
        );
        assert_eq!(composite_interval_units("SELECT 'INTERVAL 1 DAY_HOUR'"), None);
        assert_eq!(
            column_charset_spelled_out("CREATE TABLE t (charset INT, c CHAR(3) charset latin1) CHARSET=ascii").as_deref(),
            Some("CREATE TABLE t (charset INT, c CHAR(3) CHARACTER SET latin1) CHARSET=ascii")
        );
        assert_eq!(column_charset_spelled_out("CREATE TABLE t (c CHAR(3)) CHARSET=ascii"), None);
        assert_eq!(column_charset_spelled_out("SELECT 'a' CHARSET"), None);
        assert_eq!(set_with_assignments("SET @a := 1, @b := 'x:=y'").as_deref(), Some("SET @a = 1, @b = 'x:=y'"));
        assert_eq!(set_with_assignments("SELECT 1"), None);
        assert_eq!(share_mode_as_for_share("SELECT xLOCK IN SHARE MODE"), None);
        assert_eq!(parse("SHOW RELAYLOG EVENTS").unwrap_err().code, 1235);
        assert_eq!(parse("PURGE BINARY LOGS").unwrap_err().code, 1064);
        assert_eq!(parse("SHOW BINLOG EVENTS LIMIT x").unwrap_err().code, 1064);
        assert!(matches!(statement("BINLOG '\nAAAA\nBBBB=\n'"), Statement::Binlog(t) if t == "\nAAAA\nBBBB=\n"));
        assert_eq!(parse("BINLOG").unwrap_err().code, 1064);
        assert_eq!(parse("BINLOG 'AAAA' x").unwrap_err().code, 1064);
    }
}
