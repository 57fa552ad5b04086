//! The options of CREATE DATABASE and ALTER DATABASE: `[DEFAULT]
//! {CHARACTER SET | CHARSET} [=] name`, `[DEFAULT] COLLATE [=] name`,
//! `[DEFAULT] ENCRYPTION [=] 'N'` and `READ ONLY [=] {DEFAULT | 0 | 1}`
//! (read and ignored: binlogd neither encrypts nor keeps a database read
//! only).

use sqlparser::tokenizer::Token;

use super::Words;
use crate::error::{syntax_error, SqlResult};

/// The character set and collation the options name, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatabaseOptions {
    pub charset: Option<String>,
    pub collation: Option<String>,
}

/// The options up to the statement's end; the last of each counts, as in
/// MySQL.
pub(super) fn parse(words: &mut Words) -> SqlResult<DatabaseOptions> {
    let mut options = DatabaseOptions::default();
    while !words.at_end() {
        words.keyword("DEFAULT");
        if words.keywords(&["CHARACTER", "SET"]) || words.keyword("CHARSET") {
            options.charset = Some(value(words)?);
        } else if words.keyword("COLLATE") {
            options.collation = Some(value(words)?);
        } else if words.keyword("ENCRYPTION") || words.keywords(&["READ", "ONLY"]) {
            value(words)?;
        } else {
            return Err(syntax_error(&words.rest()));
        }
    }
    Ok(options)
}

/// `[=] value`: a name, a quoted string or a number.
fn value(words: &mut Words) -> SqlResult<String> {
    words.token(&Token::Eq);
    if let Some(text) = words.identifier().or_else(|| words.string()) {
        return Ok(text);
    }
    words.number().map(|number| number.to_string()).ok_or_else(|| syntax_error(&words.rest()))
}

#[cfg(test)]
mod tests {
    use crate::parse::{parse, Statement};

    #[test]
    fn character_set_and_collate_are_read_in_every_spelling() {
        let options = |sql: &str| match parse(sql).unwrap().statement {
            Statement::CreateDatabase { options, .. } | Statement::AlterDatabase { options, .. } => (options.charset, options.collation),
            other => panic!("{other:?}"),
        };
        assert_eq!(options("CREATE DATABASE d DEFAULT CHARACTER SET latin1"), (Some("latin1".into()), None));
        assert_eq!(
            options("CREATE SCHEMA d CHARSET = ascii COLLATE ascii_bin ENCRYPTION = 'N'"),
            (Some("ascii".into()), Some("ascii_bin".into()))
        );
        assert_eq!(options("CREATE DATABASE d"), (None, None));
        assert_eq!(options("ALTER DATABASE d DEFAULT COLLATE = latin1_bin"), (None, Some("latin1_bin".into())));
        assert_eq!(options("ALTER DATABASE CHARACTER SET utf8mb3"), (Some("utf8mb3".into()), None));
        assert!(matches!(parse("ALTER SCHEMA CHARSET latin1").unwrap().statement, Statement::AlterDatabase { name: None, .. }));
        assert!(parse("CREATE DATABASE d CHARACTER SET").is_err());
    }
}
