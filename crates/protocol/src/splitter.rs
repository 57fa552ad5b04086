//! Splits a COM_QUERY text into statements at top-level semicolons, the way
//! the server does with CLIENT_MULTI_STATEMENTS: semicolons inside quoted
//! strings ('...', "...", `...`, with backslash escapes and doubled quotes)
//! and comments (`-- `, `#`, `/* */`) do not split.

/// The statements of `sql`, trimmed, without the separating semicolons.
/// Pieces that hold only whitespace and comments are dropped (a trailing
/// `;` or `; -- done` is not an empty statement). An unterminated quote or
/// comment runs to the end of the text, and the statement parser reports it.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let bytes = sql.as_bytes();
    let mut statements = Vec::new();
    let mut start = 0;
    let mut has_code = false;
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        match byte {
            b'\'' | b'"' | b'`' => {
                has_code = true;
                index = skip_quoted(bytes, index);
                continue;
            }
            b'#' => {
                index = skip_line(bytes, index);
                continue;
            }
            b'-' if is_dash_comment(bytes, index) => {
                index = skip_line(bytes, index);
                continue;
            }
            b'/' if bytes.get(index + 1) == Some(&b'*') => {
                // `/*! ... */` and `/*+ ... */` are code to MySQL.
                if matches!(bytes.get(index + 2), Some(b'!') | Some(b'+')) {
                    has_code = true;
                }
                index = skip_block_comment(bytes, index);
                continue;
            }
            b';' => {
                if has_code {
                    statements.push(sql[start..index].trim());
                }
                start = index + 1;
                has_code = false;
            }
            byte if !byte.is_ascii_whitespace() => has_code = true,
            _ => {}
        }
        index += 1;
    }
    if has_code {
        statements.push(sql[start..].trim());
    }
    statements
}

/// Index just past the closing quote (or the end of the text).
fn skip_quoted(bytes: &[u8], open: usize) -> usize {
    let quote = bytes[open];
    let mut index = open + 1;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte == b'\\' && quote != b'`' {
            index += 2;
            continue;
        }
        if byte == quote {
            // A doubled quote is an escaped quote, not the end.
            if bytes.get(index + 1) == Some(&quote) {
                index += 2;
                continue;
            }
            return index + 1;
        }
        index += 1;
    }
    bytes.len()
}

/// `--` starts a comment only when followed by whitespace, a control
/// character or the end of the text (`1--1` is arithmetic).
fn is_dash_comment(bytes: &[u8], index: usize) -> bool {
    bytes.get(index + 1) == Some(&b'-') && bytes.get(index + 2).is_none_or(|&b| b <= b' ')
}

fn skip_line(bytes: &[u8], index: usize) -> usize {
    bytes[index..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |offset| index + offset + 1)
}

fn skip_block_comment(bytes: &[u8], open: usize) -> usize {
    let body = open + 2;
    bytes[body.min(bytes.len())..].windows(2).position(|pair| pair == b"*/").map_or(bytes.len(), |offset| body + offset + 2)
}

#[cfg(test)]
mod tests {
    use super::split_statements;

    #[test]
    fn splits_at_top_level_semicolons_only() {
        assert_eq!(split_statements("SELECT 1; SELECT 2;"), vec!["SELECT 1", "SELECT 2"]);
        assert_eq!(split_statements("SELECT ';', \";\", `a;b`"), vec!["SELECT ';', \";\", `a;b`"]);
        assert_eq!(split_statements(r"SELECT 'it\'s;'; SELECT 'a''b;'"), vec![r"SELECT 'it\'s;'", "SELECT 'a''b;'"]);
        assert_eq!(split_statements("SELECT 1 -- a; b\n; SELECT 2 # c;d\n"), vec!["SELECT 1 -- a; b", "SELECT 2 # c;d"]);
        assert_eq!(split_statements("SELECT 1 /* ; */ ; SELECT 1--1"), vec!["SELECT 1 /* ; */", "SELECT 1--1"]);
        assert_eq!(split_statements("SELECT 1; -- done"), vec!["SELECT 1"]);
        assert_eq!(split_statements("  ;; /* x */ ; "), Vec::<&str>::new());
        assert_eq!(split_statements("/*!40101 SET NAMES utf8 */;"), vec!["/*!40101 SET NAMES utf8 */"]);
        assert_eq!(split_statements("SELECT 'unterminated; x"), vec!["SELECT 'unterminated; x"]);
    }
}
