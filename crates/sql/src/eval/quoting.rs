//! Names and strings written back as SQL text, the way SHOW CREATE TABLE
//! prints them, so that the text read again gives the same name or value.

/// `name` in backticks, a backtick inside doubled.
pub fn quoted_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `text` in single quotes, escaped as MySQL's SHOW CREATE TABLE escapes a
/// default or an ENUM member: a quote doubled, and the characters its
/// reader treats as escapes (backslash, NUL, newline, carriage return,
/// Ctrl-Z) written as backslash sequences.
pub fn quoted_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for character in text.chars() {
        match character {
            '\'' => quoted.push_str("''"),
            '\\' => quoted.push_str("\\\\"),
            '\0' => quoted.push_str("\\0"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\u{1a}' => quoted.push_str("\\Z"),
            other => quoted.push(other),
        }
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_escapes_are_written_as_mysql_writes_them() {
        assert_eq!(quoted_identifier("we`ird"), "`we``ird`");
        assert_eq!(quoted_string("it's a\\b\n\0\r\u{1a}"), "'it''s a\\\\b\\n\\0\\r\\Z'");
    }
}
