//! The replica statements, parsed by hand (sqlparser has none of them). A
//! child module of `parse`, sharing its token reader.
//!
//! Accepted forms (MySQL 8.4's names, and the older MASTER/SLAVE names
//! MariaDB and older tools still send):
//! - `CHANGE REPLICATION SOURCE TO option = value [, option = value]...`
//!   and `CHANGE MASTER TO MASTER_option = value, ...`
//! - `START REPLICA | SLAVE [IO_THREAD | SQL_THREAD]`
//! - `STOP REPLICA | SLAVE [IO_THREAD | SQL_THREAD]`
//! - `RESET REPLICA | SLAVE [ALL]`
//!
//! (`SHOW REPLICA | SLAVE STATUS` is parsed with the other SHOW statements.)

use sqlparser::tokenizer::Token;

use super::{Statement, Words};
use crate::error::{not_supported, syntax_error, SqlResult};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicaStatement {
    ChangeSource(Vec<(SourceOption, OptionValue)>),
    Start(ReplicaThreads),
    Stop(ReplicaThreads),
    Reset { all: bool },
}

/// Which of the replica's threads a START / STOP names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaThreads {
    Both,
    /// The receiver (MySQL's I/O thread).
    Io,
    /// The applier (MySQL's SQL thread).
    Sql,
}

/// The options of CHANGE REPLICATION SOURCE TO that binlogd knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceOption {
    Host,
    Port,
    User,
    Password,
    AutoPosition,
    LogFile,
    LogPos,
    HeartbeatPeriod,
    ConnectRetry,
    RetryCount,
    InMemoryRelaylogEnabled,
    InMemoryRelaylogLimit,
    InMemoryRelaylogSpillThreshold,
}

impl SourceOption {
    /// The option named `name` (`SOURCE_` or `MASTER_` prefix), if known.
    fn from_name(name: &str) -> Option<SourceOption> {
        let upper = name.to_ascii_uppercase();
        let base = upper.strip_prefix("SOURCE_").or_else(|| upper.strip_prefix("MASTER_"));
        Some(match (base, upper.as_str()) {
            (Some("HOST"), _) => SourceOption::Host,
            (Some("PORT"), _) => SourceOption::Port,
            (Some("USER"), _) => SourceOption::User,
            (Some("PASSWORD"), _) => SourceOption::Password,
            (Some("AUTO_POSITION"), _) => SourceOption::AutoPosition,
            (Some("LOG_FILE"), _) => SourceOption::LogFile,
            (Some("LOG_POS"), _) => SourceOption::LogPos,
            (Some("HEARTBEAT_PERIOD"), _) => SourceOption::HeartbeatPeriod,
            (Some("CONNECT_RETRY"), _) => SourceOption::ConnectRetry,
            (Some("RETRY_COUNT"), _) => SourceOption::RetryCount,
            (_, "IN_MEMORY_RELAYLOG_ENABLED") => SourceOption::InMemoryRelaylogEnabled,
            (_, "IN_MEMORY_RELAYLOG_LIMIT") => SourceOption::InMemoryRelaylogLimit,
            (_, "IN_MEMORY_RELAYLOG_SPILL_THRESHOLD") => SourceOption::InMemoryRelaylogSpillThreshold,
            _ => return None,
        })
    }

    /// MySQL 8.4's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            SourceOption::Host => "SOURCE_HOST",
            SourceOption::Port => "SOURCE_PORT",
            SourceOption::User => "SOURCE_USER",
            SourceOption::Password => "SOURCE_PASSWORD",
            SourceOption::AutoPosition => "SOURCE_AUTO_POSITION",
            SourceOption::LogFile => "SOURCE_LOG_FILE",
            SourceOption::LogPos => "SOURCE_LOG_POS",
            SourceOption::HeartbeatPeriod => "SOURCE_HEARTBEAT_PERIOD",
            SourceOption::ConnectRetry => "SOURCE_CONNECT_RETRY",
            SourceOption::RetryCount => "SOURCE_RETRY_COUNT",
            SourceOption::InMemoryRelaylogEnabled => "IN_MEMORY_RELAYLOG_ENABLED",
            SourceOption::InMemoryRelaylogLimit => "IN_MEMORY_RELAYLOG_LIMIT",
            SourceOption::InMemoryRelaylogSpillThreshold => "IN_MEMORY_RELAYLOG_SPILL_THRESHOLD",
        }
    }

    fn takes_string(self) -> bool {
        matches!(self, SourceOption::Host | SourceOption::User | SourceOption::Password | SourceOption::LogFile)
    }
}

/// An option's value as written: a string literal or a number (decimal
/// text, for the heartbeat period's fractions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionValue {
    Text(String),
    Number(String),
}

pub(super) fn parse_replica_statement(words: &mut Words) -> SqlResult<Option<Statement>> {
    let replica = |words: &Words, offset| matches!(words.peek_keyword(offset).as_deref(), Some("REPLICA" | "SLAVE"));
    match words.peek_keyword(0).as_deref() {
        Some("CHANGE") if words.peek_keyword(1).as_deref() == Some("MASTER") || words.peek_keyword(1).as_deref() == Some("REPLICATION") => {
            if !(words.keywords(&["CHANGE", "MASTER", "TO"]) || words.keywords(&["CHANGE", "REPLICATION", "SOURCE", "TO"])) {
                return Err(syntax_error(&words.rest()));
            }
            change_options(words).map(Some)
        }
        Some("START") if replica(words, 1) => {
            words.position += 2;
            let threads = threads(words)?;
            words.end(Statement::Replica(ReplicaStatement::Start(threads)))
        }
        Some("STOP") if replica(words, 1) => {
            words.position += 2;
            let threads = threads(words)?;
            words.end(Statement::Replica(ReplicaStatement::Stop(threads)))
        }
        Some("RESET") if replica(words, 1) => {
            words.position += 2;
            let all = words.keyword("ALL");
            words.end(Statement::Replica(ReplicaStatement::Reset { all }))
        }
        _ => Ok(None),
    }
}

fn threads(words: &mut Words) -> SqlResult<ReplicaThreads> {
    let io = words.keyword("IO_THREAD");
    if words.token(&Token::Comma) || (io && words.keyword("SQL_THREAD")) {
        words.keyword("SQL_THREAD");
        return Ok(ReplicaThreads::Both);
    }
    if io {
        return Ok(ReplicaThreads::Io);
    }
    if words.keyword("SQL_THREAD") {
        if words.token(&Token::Comma) {
            words.keyword("IO_THREAD");
            return Ok(ReplicaThreads::Both);
        }
        return Ok(ReplicaThreads::Sql);
    }
    if words.keyword("UNTIL") || words.keyword("USER") || words.keyword("FOR") {
        return Err(not_supported(format!("START REPLICA {}", words.rest())));
    }
    Ok(ReplicaThreads::Both)
}

fn change_options(words: &mut Words) -> SqlResult<Statement> {
    let mut options = Vec::new();
    loop {
        let name = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
        let option = SourceOption::from_name(&name).ok_or_else(|| {
            // MySQL's other options (SSL, compression, filters...) are not
            // supported; a misspelt one is a syntax error, as in MySQL.
            if known_elsewhere(&name) {
                not_supported(format!("CHANGE REPLICATION SOURCE TO {}", name.to_ascii_uppercase()))
            } else {
                syntax_error(&format!("{name} {}", words.rest()))
            }
        })?;
        if !words.token(&Token::Eq) {
            return Err(syntax_error(&words.rest()));
        }
        let value = match words.tokens.get(words.position).cloned() {
            Some(Token::SingleQuotedString(text)) | Some(Token::DoubleQuotedString(text)) if option.takes_string() => {
                words.position += 1;
                OptionValue::Text(text)
            }
            Some(Token::Number(text, _)) if !option.takes_string() => {
                words.position += 1;
                OptionValue::Number(text)
            }
            _ => return Err(syntax_error(&words.rest())),
        };
        if options.iter().any(|(seen, _)| *seen == option) {
            return Err(syntax_error(&format!("{} = {}", option.name(), words.rest())));
        }
        options.push((option, value));
        if !words.token(&Token::Comma) {
            break;
        }
    }
    words.end(Statement::Replica(ReplicaStatement::ChangeSource(options))).map(|statement| statement.expect("a statement"))
}

/// Options MySQL's CHANGE REPLICATION SOURCE TO has and binlogd does not.
fn known_elsewhere(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let base = upper.strip_prefix("SOURCE_").or_else(|| upper.strip_prefix("MASTER_")).unwrap_or(&upper);
    base.starts_with("SSL")
        || base.starts_with("TLS")
        || base.starts_with("COMPRESSION")
        || base.starts_with("ZSTD")
        || matches!(
            base,
            "BIND"
                | "DELAY"
                | "PUBLIC_KEY_PATH"
                | "USE_GTID"
                | "RELAY_LOG_FILE"
                | "RELAY_LOG_POS"
                | "IGNORE_SERVER_IDS"
                | "CONNECTION_AUTO_FAILOVER"
        )
        || matches!(
            upper.as_str(),
            "RELAY_LOG_FILE"
                | "RELAY_LOG_POS"
                | "PRIVILEGE_CHECKS_USER"
                | "REQUIRE_ROW_FORMAT"
                | "GET_SOURCE_PUBLIC_KEY"
                | "NETWORK_NAMESPACE"
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn replica(sql: &str) -> ReplicaStatement {
        match parse(sql).unwrap().statement {
            Statement::Replica(statement) => statement,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn change_source_in_both_spellings() {
        let expected = vec![
            (SourceOption::Host, OptionValue::Text("127.0.0.1".into())),
            (SourceOption::Port, OptionValue::Number("3307".into())),
            (SourceOption::User, OptionValue::Text("repl".into())),
            (SourceOption::AutoPosition, OptionValue::Number("1".into())),
        ];
        assert_eq!(
            replica("CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=3307, SOURCE_USER='repl', SOURCE_AUTO_POSITION=1"),
            ReplicaStatement::ChangeSource(expected.clone())
        );
        assert_eq!(
            replica("change master to master_host = '127.0.0.1', master_port = 3307, master_user = 'repl', master_auto_position = 1;"),
            ReplicaStatement::ChangeSource(expected)
        );
        assert_eq!(
            replica("CHANGE REPLICATION SOURCE TO SOURCE_HEARTBEAT_PERIOD = 0.5, IN_MEMORY_RELAYLOG_LIMIT = 33554432"),
            ReplicaStatement::ChangeSource(vec![
                (SourceOption::HeartbeatPeriod, OptionValue::Number("0.5".into())),
                (SourceOption::InMemoryRelaylogLimit, OptionValue::Number("33554432".into())),
            ])
        );
    }

    #[test]
    fn bad_change_options_are_syntax_errors_or_not_supported() {
        assert_eq!(parse("CHANGE REPLICATION SOURCE TO SOURCE_HOSTT='x'").unwrap_err().code, 1064);
        assert_eq!(parse("CHANGE REPLICATION SOURCE TO SOURCE_PORT='x'").unwrap_err().code, 1064);
        assert_eq!(parse("CHANGE REPLICATION SOURCE TO SOURCE_HOST=1").unwrap_err().code, 1064);
        assert_eq!(parse("CHANGE REPLICATION SOURCE TO SOURCE_HOST='a', SOURCE_HOST='b'").unwrap_err().code, 1064);
        assert_eq!(parse("CHANGE REPLICATION SOURCE TO").unwrap_err().code, 1064);
        assert_eq!(parse("CHANGE REPLICATION SOURCE TO SOURCE_SSL=1").unwrap_err().code, 1235);
        assert_eq!(parse("CHANGE MASTER TO MASTER_USE_GTID=slave_pos").unwrap_err().code, 1235);
    }

    #[test]
    fn start_stop_reset() {
        assert_eq!(replica("START REPLICA"), ReplicaStatement::Start(ReplicaThreads::Both));
        assert_eq!(replica("START SLAVE IO_THREAD"), ReplicaStatement::Start(ReplicaThreads::Io));
        assert_eq!(replica("STOP REPLICA SQL_THREAD"), ReplicaStatement::Stop(ReplicaThreads::Sql));
        assert_eq!(replica("STOP REPLICA IO_THREAD, SQL_THREAD"), ReplicaStatement::Stop(ReplicaThreads::Both));
        assert_eq!(replica("RESET REPLICA"), ReplicaStatement::Reset { all: false });
        assert_eq!(replica("RESET SLAVE ALL"), ReplicaStatement::Reset { all: true });
        assert_eq!(parse("START REPLICA UNTIL SQL_AFTER_MTS_GAPS").unwrap_err().code, 1235);
        assert_eq!(parse("START REPLICA NOW").unwrap_err().code, 1064);
    }
}
