//! A document as MySQL prints it (`Json_wrapper::to_string`): `{"a": 1,
//! "b": [1, 2]}`, with ", " between elements and ": " after keys.
//!
//! | value | printed |
//! |-------|---------|
//! | string | quoted; `"` `\` and bytes up to 0x1f escaped (`\b \t \n \f \r`, else `\u00xx`) |
//! | double | `my_gcvt`: shortest digits that read back, `1e100`, `0.0001`, `1e-16`; `.0` added when neither `.` nor `e` shows (`3.0`) |
//! | DECIMAL | its text, unquoted (`1.50`) |
//! | DATE, TIME, DATETIME, TIMESTAMP | quoted, 6 fractional digits on times (`"23:59:59.000000"`) |
//! | other opaque | `"base64:type<field type>:<base64>"`, a newline every 76 base64 characters |

use super::{Json, Temporal};
use crate::column_type::type_code;

/// `value` as MySQL prints a JSON value.
pub fn to_text(value: &Json) -> String {
    let mut out = String::new();
    write_text(value, &mut out);
    out
}

/// `value` as `->>` and `JSON_UNQUOTE` print it: a top-level string,
/// date or time, or opaque value without quotes or escapes; anything else
/// as [`to_text`].
pub fn to_unquoted_text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Temporal(t) => t.to_text(),
        Json::Opaque { field_type, bytes } => opaque_text(*field_type, bytes),
        _ => to_text(value),
    }
}

/// Appends `value` as MySQL prints a JSON value.
pub fn write_text(value: &Json, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Int(v) => out.push_str(&v.to_string()),
        Json::UInt(v) => out.push_str(&v.to_string()),
        Json::Double(v) => out.push_str(&format_double(*v)),
        Json::String(s) => write_quoted(s, out),
        Json::Decimal(d) => out.push_str(&d.text),
        Json::Temporal(t) => write_temporal(t, out),
        Json::Opaque { field_type, bytes } => write_quoted(&opaque_text(*field_type, bytes), out),
        Json::Array(elements) => {
            out.push('[');
            for (i, element) in elements.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_text(element, out);
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (i, (key, member)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_quoted(key, out);
                out.push_str(": ");
                write_text(member, out);
            }
            out.push('}');
        }
    }
}

fn write_temporal(t: &Temporal, out: &mut String) {
    out.push('"');
    out.push_str(&t.to_text());
    out.push('"');
}

/// An opaque value's text: a string's bytes for a VAR_STRING (MySQL treats
/// those as strings), else `base64:type<N>:<data>`.
fn opaque_text(field_type: u8, bytes: &[u8]) -> String {
    if field_type == type_code::VAR_STRING {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    format!("base64:type{field_type}:{}", base64_wrapped(bytes))
}

/// `s` in double quotes with MySQL's escapes (`double_quote`).
pub fn write_quoted(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\0'..='\u{1f}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            _ => out.push(c),
        }
    }
    out.push('"');
}

const BASE64_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// MySQL's `base64_encode` starts a new line after this many characters.
const BASE64_LINE_CHARACTERS: usize = 76;

/// Standard base64 with `=` padding and a newline before every group that
/// would start past 76 characters on a line, as MySQL's `base64_encode`.
fn base64_wrapped(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4 + bytes.len() / 57);
    let mut line = 0;
    for chunk in bytes.chunks(3) {
        if line == BASE64_LINE_CHARACTERS {
            out.push('\n');
            line = 0;
        }
        let group = (chunk[0] as u32) << 16 | (*chunk.get(1).unwrap_or(&0) as u32) << 8 | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64_ALPHABET[(group >> (18 - 6 * i) & 0x3f) as usize] as char);
            } else {
                out.push('=');
            }
        }
        line += 4;
    }
    out
}

/// The field width MySQL gives `my_gcvt` for JSON doubles
/// (`MY_GCVT_MAX_FIELD_WIDTH`: DBL_DIG + 4 + max(5, DBL_DIG)).
const GCVT_FIELD_WIDTH: i32 = 34;
/// `MAX_DECPT_FOR_F_FORMAT` (DBL_DIG): past this many integer digits, or
/// this many zeros after the point, `my_gcvt` switches to the e format.
const DECIMAL_EXPONENT_F_FORMAT_MAX: i32 = 15;

/// A double as MySQL prints it in JSON: `my_gcvt` of the shortest digits
/// that read back as the same double, with `.0` added when the result
/// shows neither a point nor an exponent.
pub fn format_double(value: f64) -> String {
    let mut text = gcvt(value);
    if !text.contains(['.', 'e']) {
        text.push_str(".0");
    }
    text
}

/// `my_gcvt(value, MY_GCVT_ARG_DOUBLE, 34)`.
fn gcvt(value: f64) -> String {
    // Shortest round-trip digits and the decimal point's position after
    // the first of them (dtoa's `decpt`).
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = if digits.chars().all(|d| d == '0') { "0".to_owned() } else { digits };
    let length = digits.len() as i32;
    let decimal_point = exponent.parse::<i32>().unwrap_or(0) + 1;
    let negative = value.is_sign_negative();
    let width = GCVT_FIELD_WIDTH - i32::from(value < 0.0);

    let exponent_length =
        1 + i32::from(decimal_point >= 101 || decimal_point <= -99) + i32::from(decimal_point >= 11 || decimal_point <= -9);
    let f_length = if decimal_point <= 0 {
        length - decimal_point + 2
    } else if decimal_point < length {
        length + 1
    } else {
        decimal_point
    };
    let have_space = f_length <= width;
    let force_e_format = decimal_point <= 0 && width <= 2 - decimal_point && width >= 3 + exponent_length;
    // my_gcvt's choice, its test `decpt == -2 && (len > 1 || !force_e_format)`
    // folded into the `!force_e_format` beside it.
    let f_format = (have_space || (decimal_point <= width && decimal_point >= -2 && !force_e_format))
        && (!have_space
            || (decimal_point > -DECIMAL_EXPONENT_F_FORMAT_MAX
                && (decimal_point <= DECIMAL_EXPONENT_F_FORMAT_MAX || length > decimal_point)));

    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if f_format {
        if decimal_point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-decimal_point) as usize));
            out.push_str(&digits);
        } else if decimal_point < length {
            out.push_str(&digits[..decimal_point as usize]);
            out.push('.');
            out.push_str(&digits[decimal_point as usize..]);
        } else {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (decimal_point - length) as usize));
        }
    } else {
        out.push_str(&digits[..1]);
        if length > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        if decimal_point - 1 < 0 {
            out.push('-');
        }
        out.push_str(&(decimal_point - 1).abs().to_string());
    }
    out
}
