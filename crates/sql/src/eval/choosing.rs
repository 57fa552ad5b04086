//! Functions that choose or compare whole values: NULLIF, GREATEST,
//! LEAST, STRCMP, and the string pieces SUBSTRING_INDEX and REVERSE.
//! Values compare by MySQL's rules (`value::compare`: numbers as numbers,
//! dates as dates, strings as bytes); STRCMP compares text without
//! regard to letter case, as MySQL's default collation does.

use std::cmp::Ordering;

use crate::eval::strings::integer;
use crate::eval::value::{compare, text, to_text, NullCheck, Value};

/// Evaluates `name` if it is one of this module's functions.
pub fn call(name: &str, values: &[Value]) -> Option<Value> {
    Some(match (name, values) {
        // NULLIF(a, b): NULL when a = b, else a (NULL = anything is not true).
        ("NULLIF", [value, other]) => {
            if compare(value, other) == Some(Ordering::Equal) {
                Value::Null
            } else {
                value.clone()
            }
        }
        ("GREATEST", values) if values.len() >= 2 => extreme(values, Ordering::Greater),
        ("LEAST", values) if values.len() >= 2 => extreme(values, Ordering::Less),
        ("STRCMP", [left, right]) => {
            if left.is_null() || right.is_null() {
                Value::Null
            } else {
                Value::Int(match text(left).to_lowercase().cmp(&text(right).to_lowercase()) {
                    Ordering::Less => -1,
                    Ordering::Equal => 0,
                    Ordering::Greater => 1,
                })
            }
        }
        ("SUBSTRING_INDEX", [value, delimiter, count]) => substring_index(value, delimiter, count),
        ("REVERSE", [value]) => {
            if value.is_null() {
                Value::Null
            } else {
                Value::Bytes(text(value).chars().rev().collect::<String>().into_bytes())
            }
        }
        _ => return None,
    })
}

/// GREATEST / LEAST: NULL if any argument is NULL, else the one every
/// other compares `wanted` to (or equal); the first of equals.
fn extreme(values: &[Value], wanted: Ordering) -> Value {
    if values.iter().any(|value| value.is_null()) {
        return Value::Null;
    }
    let mut best = &values[0];
    for value in &values[1..] {
        if compare(value, best) == Some(wanted) {
            best = value;
        }
    }
    best.clone()
}

/// SUBSTRING_INDEX(str, delim, count): the text before the count-th
/// delimiter from the left (count > 0), or after the count-th from the
/// right (count < 0); the delimiter matches case-sensitively, as in MySQL.
fn substring_index(value: &Value, delimiter: &Value, count: &Value) -> Value {
    let Some(count) = integer(count) else { return Value::Null };
    if value.is_null() || delimiter.is_null() {
        return Value::Null;
    }
    let (bytes, delimiter) = (to_text(value), to_text(delimiter));
    if count == 0 || delimiter.is_empty() {
        return Value::Bytes(Vec::new());
    }
    let starts: Vec<usize> = (0..=bytes.len().saturating_sub(delimiter.len()))
        .filter(|&at| bytes.len() >= delimiter.len() && bytes[at..at + delimiter.len()] == delimiter[..])
        .fold(Vec::new(), |mut starts, at| {
            // Occurrences do not overlap.
            if starts.last().is_none_or(|&last| at >= last + delimiter.len()) {
                starts.push(at);
            }
            starts
        });
    let wanted = count.unsigned_abs();
    if wanted > starts.len() as u128 {
        return Value::Bytes(bytes);
    }
    let wanted = wanted as usize;
    Value::Bytes(if count > 0 {
        bytes[..starts[wanted - 1]].to_vec()
    } else {
        bytes[starts[starts.len() - wanted] + delimiter.len()..].to_vec()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    #[test]
    fn choosing_and_pieces_follow_mysql() {
        assert_eq!(call("NULLIF", &[Value::Int(1), Value::Int(1)]), Some(Value::Null));
        assert_eq!(call("NULLIF", &[Value::Int(1), Value::Int(2)]), Some(Value::Int(1)));
        assert_eq!(call("NULLIF", &[Value::Int(1), Value::Null]), Some(Value::Int(1)));
        assert_eq!(call("GREATEST", &[Value::Int(2), Value::Int(0), Value::Int(34)]), Some(Value::Int(34)));
        assert_eq!(call("LEAST", &[Value::Int(2), Value::Double(0.5), Value::Int(34)]), Some(Value::Double(0.5)));
        assert_eq!(call("GREATEST", &[s("B"), s("A"), s("C")]), Some(s("C")));
        assert_eq!(call("LEAST", &[Value::Int(1), Value::Null]), Some(Value::Null));
        assert_eq!(call("STRCMP", &[s("text"), s("text2")]), Some(Value::Int(-1)));
        assert_eq!(call("STRCMP", &[s("text2"), s("text")]), Some(Value::Int(1)));
        assert_eq!(call("STRCMP", &[s("Text"), s("text")]), Some(Value::Int(0)));
        assert_eq!(call("SUBSTRING_INDEX", &[s("www.mysql.com"), s("."), Value::Int(2)]), Some(s("www.mysql")));
        assert_eq!(call("SUBSTRING_INDEX", &[s("www.mysql.com"), s("."), Value::Int(-2)]), Some(s("mysql.com")));
        assert_eq!(call("SUBSTRING_INDEX", &[s("www.mysql.com"), s("."), Value::Int(9)]), Some(s("www.mysql.com")));
        assert_eq!(call("SUBSTRING_INDEX", &[s("a..b"), s(".."), Value::Int(1)]), Some(s("a")));
        assert_eq!(call("SUBSTRING_INDEX", &[s("aXb"), s("x"), Value::Int(1)]), Some(s("aXb")));
        assert_eq!(call("SUBSTRING_INDEX", &[s("abc"), s("b"), Value::Int(0)]), Some(s("")));
        assert_eq!(call("REVERSE", &[s("abcé")]), Some(s("écba")));
    }
}
