//! Finding a string in another: LOCATE(substr, str[, pos]) and
//! INSTR(str, substr), as MySQL answers them under its default
//! case-insensitive collation: a 1-based character position, 0 when not
//! found, NULL when an argument is NULL.

use crate::eval::strings::integer;
use crate::eval::value::{text, NullCheck, Value};

/// Evaluates `name` if it is one of this module's functions.
pub fn call(name: &str, values: &[Value]) -> Option<Value> {
    Some(match (name, values) {
        ("LOCATE", [needle, haystack]) => locate(needle, haystack, &Value::Int(1)),
        ("LOCATE", [needle, haystack, start]) => locate(needle, haystack, start),
        ("INSTR", [haystack, needle]) => locate(needle, haystack, &Value::Int(1)),
        _ => return None,
    })
}

fn locate(needle: &Value, haystack: &Value, start: &Value) -> Value {
    let Some(start) = integer(start) else { return Value::Null };
    if needle.is_null() || haystack.is_null() {
        return Value::Null;
    }
    let haystack: Vec<char> = text(haystack).to_lowercase().chars().collect();
    let needle: Vec<char> = text(needle).to_lowercase().chars().collect();
    // A start past the end finds nothing, not even the empty string
    // (MySQL: LOCATE('', 'ab', 4) is 0, LOCATE('', 'ab', 3) is 3).
    if start < 1 || start > haystack.len() as i128 + 1 {
        return Value::Int(0);
    }
    let from = start as usize - 1;
    let found = (from..=haystack.len().saturating_sub(needle.len()))
        .find(|&at| at + needle.len() <= haystack.len() && haystack[at..at + needle.len()] == needle[..]);
    Value::Int(found.map_or(0, |at| at as i64 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    #[test]
    fn locate_and_instr_answer_as_mysql() {
        let cases: Vec<(&str, Vec<Value>, Value)> = vec![
            ("LOCATE", vec![s("bar"), s("foobarbar")], Value::Int(4)),
            ("LOCATE", vec![s("xbar"), s("foobar")], Value::Int(0)),
            ("LOCATE", vec![s("bar"), s("foobarbar"), Value::Int(5)], Value::Int(7)),
            ("LOCATE", vec![s("UNSIGNED"), s("bigint unsigned")], Value::Int(8)),
            ("LOCATE", vec![s("é"), s("aéb")], Value::Int(2)),
            ("LOCATE", vec![s(""), s("ab"), Value::Int(3)], Value::Int(3)),
            ("LOCATE", vec![s(""), s("ab"), Value::Int(4)], Value::Int(0)),
            ("LOCATE", vec![s("a"), s("ab"), Value::Int(0)], Value::Int(0)),
            ("LOCATE", vec![s("a"), Value::Null], Value::Null),
            ("INSTR", vec![s("foobarbar"), s("bar")], Value::Int(4)),
            ("INSTR", vec![s("xbar"), s("foobar")], Value::Int(0)),
        ];
        for (name, args, expected) in cases {
            assert_eq!(call(name, &args), Some(expected), "{name}({args:?})");
        }
    }
}
