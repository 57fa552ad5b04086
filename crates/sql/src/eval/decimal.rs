//! Exact DECIMAL(M,D) values: a number's decimal text rounded to D
//! fraction digits half away from zero, as MySQL rounds, digit by digit,
//! so DECIMAL(65,30) keeps all 65 digits (a binary double keeps ~16).

use crate::eval::value::Value;

/// `value`'s exact decimal text (`-ddd.ddd`), or `None` for a value that
/// is not a plain decimal number (text in exponent form, say, which the
/// caller reads as a double).
pub fn exact_text(value: &Value) -> Option<String> {
    let text = match value {
        Value::Int(v) => return Some(v.to_string()),
        Value::UInt(v) => return Some(v.to_string()),
        Value::Decimal(text) => text.clone(),
        Value::Bytes(bytes) => String::from_utf8_lossy(bytes).trim().to_string(),
        // The shortest text that reads back as the same double.
        Value::Double(v) if v.is_finite() => format!("{v}"),
        Value::Float(v) if v.is_finite() => format!("{v}"),
        _ => return None,
    };
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(&text);
    let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    (!(integer.is_empty() && fraction.is_empty()) && digits(integer) && digits(fraction)).then_some(text)
}

/// `text` (from [`exact_text`]) rounded to `scale` fraction digits, half
/// away from zero, without leading zeros and without a negative zero;
/// with the count of its integer digits (0 for `0.5`).
pub fn round(text: &str, scale: u8) -> (String, usize) {
    let negative = text.starts_with('-');
    let unsigned = text.trim_start_matches(['-', '+']);
    let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let scale = usize::from(scale);
    // Digits kept, most significant first, and whether to round up.
    let mut digits: Vec<u8> =
        integer.bytes().chain(fraction.bytes().chain(std::iter::repeat(b'0')).take(scale)).map(|b| b - b'0').collect();
    let round_up = fraction.as_bytes().get(scale).is_some_and(|&b| b >= b'5');
    if round_up {
        let mut at = digits.len();
        loop {
            if at == 0 {
                digits.insert(0, 1);
                break;
            }
            at -= 1;
            if digits[at] == 9 {
                digits[at] = 0;
            } else {
                digits[at] += 1;
                break;
            }
        }
    }
    let split = digits.len() - scale;
    let integer: String = digits[..split].iter().map(|d| char::from(b'0' + d)).collect::<String>().trim_start_matches('0').to_string();
    let fraction: String = digits[split..].iter().map(|d| char::from(b'0' + d)).collect();
    let integer_digits = integer.len();
    let integer = if integer.is_empty() { "0".to_string() } else { integer };
    let is_zero = integer == "0" && fraction.bytes().all(|b| b == b'0');
    let sign = if negative && !is_zero { "-" } else { "" };
    let text = if scale == 0 { format!("{sign}{integer}") } else { format!("{sign}{integer}.{fraction}") };
    (text, integer_digits)
}

/// `text` rounded (or cut, `toward_zero`) to `digits` after the point,
/// before it when negative (`round_at("1234", -2, false)` is `"1200"`):
/// ROUND and TRUNCATE on exact values.
pub fn round_at(text: &str, digits: i64, toward_zero: bool) -> String {
    let negative = text.starts_with('-');
    let unsigned = text.trim_start_matches(['-', '+']);
    let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if digits >= 0 {
        let scale = digits.min(i64::from(u8::MAX)) as u8;
        return match toward_zero {
            false => round(text, scale).0,
            true => {
                let kept: String = fraction.chars().chain(std::iter::repeat('0')).take(usize::from(scale)).collect();
                let cut = if scale == 0 { integer.to_string() } else { format!("{integer}.{kept}") };
                round(&format!("{}{cut}", if negative { "-" } else { "" }), scale).0
            }
        };
    }
    // Move the point `shift` places left, round to a whole number, then
    // move it back with zeros.
    let shift = digits.unsigned_abs().min(100) as usize;
    let padded = format!("{}{integer}", "0".repeat(shift.saturating_sub(integer.len()) + 1));
    let (high, low) = padded.split_at(padded.len() - shift);
    let shifted = format!("{}{high}.{low}", if negative { "-" } else { "" });
    let whole = if toward_zero { round(&format!("{}{high}", if negative { "-" } else { "" }), 0).0 } else { round(&shifted, 0).0 };
    match whole.as_str() {
        "0" => "0".to_string(),
        _ => format!("{whole}{}", "0".repeat(shift)),
    }
}

/// The largest value DECIMAL(precision, scale) holds, negated when
/// `negative`: what MySQL stores for one out of range outside strict mode.
pub fn limit(precision: u8, scale: u8, negative: bool) -> String {
    let nines = |count: u8| "9".repeat(usize::from(count));
    let sign = if negative { "-" } else { "" };
    match scale {
        0 => format!("{sign}{}", nines(precision)),
        _ if precision == scale => format!("{sign}0.{}", nines(scale)),
        _ => format!("{sign}{}.{}", nines(precision - scale), nines(scale)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_exact_and_half_away_from_zero() {
        assert_eq!(round("1.005", 2), ("1.01".to_string(), 1));
        assert_eq!(round("-1.005", 2), ("-1.01".to_string(), 1));
        assert_eq!(round("9.995", 2), ("10.00".to_string(), 2));
        assert_eq!(round("0.004", 2), ("0.00".to_string(), 0));
        assert_eq!(round("-0.004", 2), ("0.00".to_string(), 0), "no negative zero");
        assert_eq!(round("007", 0), ("7".to_string(), 1));
        assert_eq!(round("12.5", 0), ("13".to_string(), 2));
        assert_eq!(round(".5", 1), ("0.5".to_string(), 0));
        let long = "12345678901234567890123456789012345.123456789012345678901234567890";
        assert_eq!(round(long, 30).0, long, "65 digits survive");
        assert_eq!(limit(5, 2, false), "999.99");
        assert_eq!(limit(3, 3, true), "-0.999");
        assert_eq!(limit(4, 0, false), "9999");
        assert_eq!(round_at("1234", -2, false), "1200");
        assert_eq!(round_at("1250", -2, false), "1300");
        assert_eq!(round_at("-1250", -2, false), "-1300");
        assert_eq!(round_at("49", -2, false), "0");
        assert_eq!(round_at("51", -2, false), "100");
        assert_eq!(round_at("199.9", -2, true), "100");
        assert_eq!(round_at("1.259", 2, true), "1.25");
        assert_eq!(round_at("-0.001", 2, true), "0.00");
    }

    #[test]
    fn exact_text_takes_plain_numbers_only() {
        assert_eq!(exact_text(&Value::Bytes(b" 1.50 ".to_vec())).as_deref(), Some("1.50"));
        assert_eq!(exact_text(&Value::Bytes(b"1e3".to_vec())), None);
        assert_eq!(exact_text(&Value::Double(0.1)).as_deref(), Some("0.1"));
        assert_eq!(exact_text(&Value::Int(-3)).as_deref(), Some("-3"));
    }
}
