//! String functions whose result can be longer than their arguments
//! (REPEAT, CONCAT, CONCAT_WS, LPAD, RPAD, SPACE, INSERT, REPLACE, HEX;
//! UNHEX beside it), bounded
//! as MySQL bounds them: a result longer than `max_allowed_packet` is NULL
//! with warning 1301, and the length is known before anything is
//! allocated, so one statement cannot build a gigabyte string.
//!
//! Lengths in LPAD, RPAD and INSERT count characters (utf8mb4), as in
//! MySQL; the bound counts the result's bytes.

use crate::error::SqlResult;
use crate::eval::expr::Environment;
use crate::eval::value::{text, to_number, to_text, NullCheck, Number, Value};

/// Evaluates `name` if it is one of this module's functions.
pub fn call(name: &str, values: &[Value], environment: &dyn Environment) -> Option<SqlResult<Value>> {
    let result = match (name, values) {
        ("REPEAT", [value, count]) => repeat(value, count, environment),
        ("CONCAT", values) => concat(values, environment),
        ("CONCAT_WS", [separator, values @ ..]) => concat_ws(separator, values, environment),
        ("SPACE", [count]) => pad_text("SPACE", &Value::Bytes(Vec::new()), count, &Value::Bytes(b" ".to_vec()), Side::Right, environment),
        ("LPAD", [value, length, pad]) => pad_text("LPAD", value, length, pad, Side::Left, environment),
        ("RPAD", [value, length, pad]) => pad_text("RPAD", value, length, pad, Side::Right, environment),
        ("INSERT", [value, position, length, new]) => insert(value, position, length, new, environment),
        ("REPLACE", [value, from, to]) => replace(value, from, to, environment),
        ("HEX", [value]) => hex(value, environment),
        ("UNHEX", [value]) => Ok(unhex(value)),
        _ => return None,
    };
    Some(result)
}

/// The result, or NULL with warning 1301 when `bytes` is over
/// max_allowed_packet; `build` runs only within the bound.
fn bounded(name: &str, bytes: u128, environment: &dyn Environment, build: impl FnOnce() -> Vec<u8>) -> SqlResult<Value> {
    let max_bytes = environment.max_allowed_packet_bytes();
    if bytes > u128::from(max_bytes) {
        environment.warning(
            1301,
            format!("Result of {}() was larger than max_allowed_packet ({max_bytes}) - truncated", name.to_ascii_lowercase()),
        );
        return Ok(Value::Null);
    }
    Ok(Value::Bytes(build()))
}

/// An integer argument (a fraction rounds, text that is no number is 0);
/// `None` for NULL.
pub(crate) fn integer(value: &Value) -> Option<i128> {
    if value.is_null() {
        return None;
    }
    Some(match to_number(value) {
        Some(Number::Int(v)) => v,
        Some(Number::Float(v)) => v.round() as i128,
        None => 0,
    })
}

/// HEX(str): two uppercase hex digits per byte; HEX(N): N as a BIGINT
/// (two's complement when negative) in hex, as MySQL's CONV(N, 10, 16).
fn hex(value: &Value, environment: &dyn Environment) -> SqlResult<Value> {
    match value {
        Value::Null => Ok(Value::Null),
        Value::Bytes(bytes) => {
            bounded("HEX", bytes.len() as u128 * 2, environment, || bytes.iter().flat_map(|b| format!("{b:02X}").into_bytes()).collect())
        }
        number => {
            let n = integer(number).unwrap_or(0);
            let bits = if n < 0 { n as i64 as u64 } else { n.min(i128::from(u64::MAX)) as u64 };
            Ok(Value::Bytes(format!("{bits:X}").into_bytes()))
        }
    }
}

/// UNHEX(str): the bytes two hex digits each stand for (an odd count
/// takes a leading 0); NULL when a character is not a hex digit.
fn unhex(value: &Value) -> Value {
    if value.is_null() {
        return Value::Null;
    }
    let digits = to_text(value);
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut bytes = Vec::with_capacity(digits.len().div_ceil(2));
    let (head, rest) = digits.split_at(digits.len() % 2);
    if let [c] = head {
        let Some(low) = nibble(*c) else { return Value::Null };
        bytes.push(low);
    }
    for pair in rest.chunks_exact(2) {
        let (Some(high), Some(low)) = (nibble(pair[0]), nibble(pair[1])) else { return Value::Null };
        bytes.push(high << 4 | low);
    }
    Value::Bytes(bytes)
}

fn repeat(value: &Value, count: &Value, environment: &dyn Environment) -> SqlResult<Value> {
    let (Some(count), false) = (integer(count), value.is_null()) else {
        return Ok(Value::Null);
    };
    let piece = to_text(value);
    let count = count.max(0) as u128;
    bounded("REPEAT", piece.len() as u128 * count, environment, || piece.repeat(count as usize))
}

fn concat(values: &[Value], environment: &dyn Environment) -> SqlResult<Value> {
    if values.iter().any(NullCheck::is_null) {
        return Ok(Value::Null);
    }
    let pieces: Vec<Vec<u8>> = values.iter().map(to_text).collect();
    let bytes: u128 = pieces.iter().map(|piece| piece.len() as u128).sum();
    bounded("CONCAT", bytes, environment, || pieces.concat())
}

/// CONCAT_WS skips NULL values; a NULL separator makes the result NULL.
fn concat_ws(separator: &Value, values: &[Value], environment: &dyn Environment) -> SqlResult<Value> {
    if separator.is_null() {
        return Ok(Value::Null);
    }
    let separator = to_text(separator);
    let pieces: Vec<Vec<u8>> = values.iter().filter(|value| !value.is_null()).map(to_text).collect();
    let bytes: u128 =
        pieces.iter().map(|piece| piece.len() as u128).sum::<u128>() + separator.len() as u128 * pieces.len().saturating_sub(1) as u128;
    bounded("CONCAT_WS", bytes, environment, || pieces.join(&separator[..]))
}

#[derive(Clone, Copy)]
enum Side {
    Left,
    Right,
}

/// LPAD and RPAD (and SPACE, a right pad of nothing): `value` cut or
/// padded with `pad` to `length` characters.
fn pad_text(name: &str, value: &Value, length: &Value, pad: &Value, side: Side, environment: &dyn Environment) -> SqlResult<Value> {
    let (Some(length), false, false) = (integer(length), value.is_null(), pad.is_null()) else {
        return Ok(Value::Null);
    };
    if length < 0 {
        return Ok(Value::Null);
    }
    let (value, pad) = (text(value), text(pad));
    let value_chars = value.chars().count() as u128;
    let length = length as u128;
    if length <= value_chars {
        let cut: String = value.chars().take(length as usize).collect();
        return Ok(Value::Bytes(cut.into_bytes()));
    }
    let pad_chars = pad.chars().count() as u128;
    if pad_chars == 0 {
        return Ok(Value::Null);
    }
    let missing = length - value_chars;
    let whole_pads = missing / pad_chars;
    let rest: String = pad.chars().take((missing % pad_chars) as usize).collect();
    let bytes = value.len() as u128 + whole_pads * pad.len() as u128 + rest.len() as u128;
    bounded(name, bytes, environment, || {
        let padding = [pad.repeat(whole_pads as usize), rest].concat();
        match side {
            Side::Left => [padding, value].concat().into_bytes(),
            Side::Right => [value, padding].concat().into_bytes(),
        }
    })
}

/// INSERT(str, pos, len, newstr): `len` characters from `pos` (1-based)
/// replaced by `newstr`; `str` itself when `pos` is outside it.
fn insert(value: &Value, position: &Value, length: &Value, new: &Value, environment: &dyn Environment) -> SqlResult<Value> {
    let (Some(position), Some(length)) = (integer(position), integer(length)) else {
        return Ok(Value::Null);
    };
    if value.is_null() || new.is_null() {
        return Ok(Value::Null);
    }
    let (value, new) = (text(value), text(new));
    let chars: Vec<char> = value.chars().collect();
    if position < 1 || position > chars.len() as i128 {
        return Ok(Value::Bytes(value.into_bytes()));
    }
    let start = (position - 1) as usize;
    let end = if length < 0 { chars.len() } else { (start as i128 + length).min(chars.len() as i128) as usize };
    let head: String = chars[..start].iter().collect();
    let tail: String = chars[end..].iter().collect();
    let bytes = head.len() as u128 + new.len() as u128 + tail.len() as u128;
    bounded("INSERT", bytes, environment, || [head, new, tail].concat().into_bytes())
}

/// REPLACE(str, from, to): every occurrence of `from`, left to right.
fn replace(value: &Value, from: &Value, to: &Value, environment: &dyn Environment) -> SqlResult<Value> {
    if value.is_null() || from.is_null() || to.is_null() {
        return Ok(Value::Null);
    }
    let (value, from, to) = (text(value), text(from), text(to));
    if from.is_empty() {
        return Ok(Value::Bytes(value.into_bytes()));
    }
    let occurrences = value.matches(from.as_str()).count() as u128;
    let bytes = value.len() as u128 - occurrences * from.len() as u128 + occurrences * to.len() as u128;
    bounded("REPLACE", bytes, environment, || value.replace(from.as_str(), &to).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::value::text;
    use crate::variables::VariableScope;
    use std::cell::RefCell;

    /// An environment with a small max_allowed_packet that keeps its
    /// warnings.
    struct Small {
        max_bytes: u64,
        warnings: RefCell<Vec<(u16, String)>>,
    }

    impl Environment for Small {
        fn database(&self) -> Option<String> {
            None
        }
        fn system_variable(&self, _: &str, _: VariableScope) -> SqlResult<Value> {
            Ok(Value::Null)
        }
        fn user_variable(&self, _: &str) -> Value {
            Value::Null
        }
        fn last_insert_id(&self) -> u64 {
            0
        }
        fn connection_id(&self) -> u32 {
            1
        }
        fn user(&self) -> String {
            String::new()
        }
        fn current_user(&self) -> String {
            String::new()
        }
        fn max_allowed_packet_bytes(&self) -> u64 {
            self.max_bytes
        }
        fn warning(&self, code: u16, message: String) {
            self.warnings.borrow_mut().push((code, message));
        }
    }

    fn run(name: &str, args: &[Value], max_bytes: u64) -> (Option<String>, Vec<(u16, String)>) {
        let environment = Small { max_bytes, warnings: RefCell::default() };
        let value = call(name, args, &environment).expect("a string function").unwrap();
        ((!value.is_null()).then(|| text(&value)), environment.warnings.into_inner())
    }

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    #[test]
    fn results_within_the_bound_are_mysqls() {
        let cases: &[(&str, Vec<Value>, &str)] = &[
            ("REPEAT", vec![s("ab"), Value::Int(3)], "ababab"),
            ("REPEAT", vec![s("ab"), Value::Int(-1)], ""),
            ("CONCAT", vec![s("a"), Value::Int(1), s("é")], "a1é"),
            ("CONCAT_WS", vec![s(","), s("a"), Value::Null, s("b")], "a,b"),
            ("LPAD", vec![s("hi"), Value::Int(5), s("ab")], "abahi"),
            ("LPAD", vec![s("hello"), Value::Int(2), s("x")], "he"),
            ("RPAD", vec![s("é"), Value::Int(4), s("xy")], "éxyx"),
            ("SPACE", vec![Value::Int(3)], "   "),
            ("INSERT", vec![s("Quadratic"), Value::Int(3), Value::Int(4), s("What")], "QuWhattic"),
            ("INSERT", vec![s("Quadratic"), Value::Int(-1), Value::Int(4), s("What")], "Quadratic"),
            ("INSERT", vec![s("Quadratic"), Value::Int(3), Value::Int(100), s("What")], "QuWhat"),
            ("REPLACE", vec![s("www.mysql.com"), s("w"), s("Ww")], "WwWwWw.mysql.com"),
            ("HEX", vec![s("abc")], "616263"),
            ("HEX", vec![Value::Bytes(vec![0x00, 0xFF])], "00FF"),
            ("HEX", vec![Value::Int(255)], "FF"),
            ("HEX", vec![Value::Int(-1)], "FFFFFFFFFFFFFFFF"),
            ("HEX", vec![Value::Double(1.5)], "2"),
            ("UNHEX", vec![s("4D7953514C")], "MySQL"),
            ("UNHEX", vec![s("6")], "\u{6}"),
        ];
        for (name, args, expected) in cases {
            assert_eq!(run(name, args, 1 << 20), (Some(expected.to_string()), Vec::new()), "{name}{args:?}");
        }
        assert_eq!(run("LPAD", &[s("hi"), Value::Int(5), s("")], 1 << 20).0, None);
        assert_eq!(run("CONCAT", &[s("a"), Value::Null], 1 << 20).0, None);
        assert_eq!(run("UNHEX", &[s("GG")], 1 << 20).0, None);
        assert_eq!(run("HEX", &[Value::Null], 1 << 20).0, None);
    }

    #[test]
    fn results_over_max_allowed_packet_are_null_with_warning_1301() {
        let over: &[(&str, Vec<Value>)] = &[
            ("REPEAT", vec![s("ab"), Value::Int(1 << 62)]),
            ("CONCAT", vec![s("12345"), s("123456")]),
            ("CONCAT_WS", vec![s("--"), s("12345"), s("1234")]),
            ("LPAD", vec![s("a"), Value::Int(11), s("é")]),
            ("RPAD", vec![s("a"), Value::UInt(u64::MAX), s("b")]),
            ("SPACE", vec![Value::Int(11)]),
            ("INSERT", vec![s("abcdef"), Value::Int(2), Value::Int(1), s("123456")]),
            ("REPLACE", vec![s("aaaaa"), s("a"), s("xyz")]),
            ("HEX", vec![s("abcdef")]),
        ];
        for (name, args) in over {
            let (value, warnings) = run(name, args, 10);
            assert_eq!(value, None, "{name}{args:?}");
            let message = format!("Result of {}() was larger than max_allowed_packet (10) - truncated", name.to_ascii_lowercase());
            assert_eq!(warnings, vec![(1301, message)], "{name}");
        }
        // Exactly the bound is allowed.
        assert_eq!(run("REPEAT", &[s("ab"), Value::Int(5)], 10), (Some("ababababab".into()), Vec::new()));
    }
}
