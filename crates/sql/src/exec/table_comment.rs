//! A table's COMMENT: read from CREATE TABLE's options and ALTER TABLE,
//! held to MySQL's length, and written where SHOW CREATE TABLE puts it.
//! The engine keeps it with the definition; the statement that sets it
//! reaches the binlog as its own text, so a replica sets it too.

use protocol::MysqlError;
use sqlparser::ast::{CommentDef, CreateTableOptions, SqlOption};

use crate::error::SqlResult;
use crate::eval::quoting::quoted_string;
use crate::eval::temporal::SqlMode;
use crate::session::Warning;

/// MySQL's longest table COMMENT, in characters (TABLE_COMMENT_MAXLEN).
pub const TABLE_COMMENT_CHARS_MAX: usize = 2048;

/// The COMMENT among CREATE TABLE's options; the last one when repeated,
/// as MySQL keeps it.
pub fn from_options(options: &CreateTableOptions) -> Option<&str> {
    let options = match options {
        CreateTableOptions::None => return None,
        CreateTableOptions::With(options)
        | CreateTableOptions::Options(options)
        | CreateTableOptions::Plain(options)
        | CreateTableOptions::TableProperties(options) => options,
    };
    options.iter().rev().find_map(|option| match option {
        SqlOption::Comment(CommentDef::WithEq(comment) | CommentDef::WithoutEq(comment)) => Some(comment.as_str()),
        _ => None,
    })
}

/// `comment` as the table keeps it. Longer than MySQL's limit is 1628 in
/// strict mode; otherwise MySQL cuts it to the limit and warns with the
/// same message.
pub fn checked(comment: &str, table: &str, mode: SqlMode, warnings: &mut Vec<Warning>) -> SqlResult<String> {
    let Some((cut_at, _)) = comment.char_indices().nth(TABLE_COMMENT_CHARS_MAX) else { return Ok(comment.to_string()) };
    let message = format!("Comment for table '{table}' is too long (max = {TABLE_COMMENT_CHARS_MAX})");
    if mode.strict {
        return Err(MysqlError::new(1628, "HY000", message));
    }
    warnings.push(Warning { level: "Warning", code: 1628, message });
    Ok(comment[..cut_at].to_string())
}

/// ` COMMENT='...'` as SHOW CREATE TABLE ends the table options with it
/// (before any PARTITION BY), or nothing for a table without one.
pub fn create_table_option(comment: &str) -> String {
    match comment.is_empty() {
        true => String::new(),
        false => format!(" COMMENT={}", quoted_string(comment)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_over_the_limit_is_an_error_in_strict_mode_and_cut_with_a_warning_otherwise() {
        let longest = "é".repeat(TABLE_COMMENT_CHARS_MAX);
        let strict = SqlMode { strict: true, ..SqlMode::default() };
        let mut warnings = Vec::new();
        assert_eq!(checked(&longest, "t", strict, &mut warnings).unwrap(), longest);
        let error = checked(&format!("{longest}x"), "t", strict, &mut warnings).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (1628, "Comment for table 't' is too long (max = 2048)"));
        assert!(warnings.is_empty());
        assert_eq!(checked(&format!("{longest}x"), "t", SqlMode::default(), &mut warnings).unwrap(), longest);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].code, 1628);
    }

    #[test]
    fn show_create_table_quotes_the_comment_as_mysql_does() {
        assert_eq!(create_table_option(""), "");
        assert_eq!(create_table_option("it's a\\b\nc"), " COMMENT='it''s a\\\\b\\nc'");
    }
}
