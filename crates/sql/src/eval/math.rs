//! Numeric functions as MySQL computes them: ROUND(x[, d]) and
//! TRUNCATE(x, d) (exact on integers and DECIMAL, half away from zero;
//! a double rounds half to even, as the C library does for MySQL),
//! FLOOR, CEIL/CEILING, SIGN, MOD, POW/POWER, SQRT, EXP, LN, LOG, LOG2,
//! LOG10, PI, DEGREES, RADIANS and RAND. NULL in, NULL out; a logarithm
//! or square root outside its domain is NULL, as in MySQL.

use crate::error::SqlResult;
use crate::eval::decimal;
use crate::eval::value::{to_number, NullCheck, Number, Value};

/// Evaluates `name` if it is one of this module's functions; 1582 for
/// one called with the wrong number of arguments.
pub fn call(name: &str, values: &[Value]) -> Option<SqlResult<Value>> {
    let known = matches!(
        name,
        "ROUND"
            | "TRUNCATE"
            | "FLOOR"
            | "CEIL"
            | "CEILING"
            | "SIGN"
            | "MOD"
            | "POW"
            | "POWER"
            | "SQRT"
            | "EXP"
            | "LN"
            | "LOG"
            | "LOG2"
            | "LOG10"
            | "PI"
            | "DEGREES"
            | "RADIANS"
            | "RAND"
    );
    if !known {
        return None;
    }
    if values.iter().any(NullCheck::is_null) && name != "RAND" {
        return Some(Ok(Value::Null));
    }
    let real = |value: &Value| to_number(value).map_or(0.0, Number::as_f64);
    let double = |result: f64| if result.is_finite() { Value::Double(result) } else { Value::Null };
    Some(Ok(match (name, values) {
        ("ROUND", [x]) => round(x, 0, false),
        ("ROUND", [x, digits]) => round(x, whole(digits), false),
        ("TRUNCATE", [x, digits]) => round(x, whole(digits), true),
        ("FLOOR", [x]) => whole_part(x, f64::floor),
        ("CEIL" | "CEILING", [x]) => whole_part(x, f64::ceil),
        ("SIGN", [x]) => Value::Int(match to_number(x) {
            Some(Number::Int(v)) => v.signum() as i64,
            Some(Number::Float(v)) if v > 0.0 => 1,
            Some(Number::Float(v)) if v < 0.0 => -1,
            _ => 0,
        }),
        ("MOD", [a, b]) => match (to_number(a), to_number(b)) {
            (_, Some(Number::Int(0))) => Value::Null,
            (Some(Number::Int(a)), Some(Number::Int(b))) => Value::Int((a % b) as i64),
            (Some(a), Some(b)) if b.as_f64() != 0.0 => Value::Double(a.as_f64() % b.as_f64()),
            _ => Value::Null,
        },
        ("POW" | "POWER", [a, b]) => double(real(a).powf(real(b))),
        ("SQRT", [x]) => double(real(x).sqrt()),
        ("EXP", [x]) => double(real(x).exp()),
        ("LN", [x]) | ("LOG", [x]) => positive(real(x)).map_or(Value::Null, |x| double(x.ln())),
        ("LOG", [base, x]) => match (positive(real(base)), positive(real(x))) {
            (Some(base), Some(x)) if base != 1.0 => double(x.ln() / base.ln()),
            _ => Value::Null,
        },
        ("LOG2", [x]) => positive(real(x)).map_or(Value::Null, |x| double(x.log2())),
        ("LOG10", [x]) => positive(real(x)).map_or(Value::Null, |x| double(x.log10())),
        ("PI", []) => Value::Double(std::f64::consts::PI),
        ("DEGREES", [x]) => double(real(x).to_degrees()),
        ("RADIANS", [x]) => double(real(x).to_radians()),
        ("RAND", []) => Value::Double(random_fraction()),
        ("RAND", [_]) => return Some(Err(crate::error::not_supported("RAND(seed)"))),
        _ => return Some(Err(crate::error::wrong_argument_count(name))),
    }))
}

fn positive(x: f64) -> Option<f64> {
    (x > 0.0).then_some(x)
}

/// An integer argument (ROUND's digits), clamped as MySQL clamps it.
fn whole(value: &Value) -> i64 {
    match to_number(value) {
        Some(Number::Int(v)) => v.clamp(-100, 100) as i64,
        Some(Number::Float(v)) => v.round().clamp(-100.0, 100.0) as i64,
        None => 0,
    }
}

/// ROUND or TRUNCATE (`toward_zero`) of `x` to `digits` after the point
/// (before it when negative): exact on integers and decimal text, in
/// binary floating point on doubles.
fn round(x: &Value, digits: i64, toward_zero: bool) -> Value {
    if let Value::Double(_) | Value::Float(_) = x {
        let v = to_number(x).map_or(0.0, Number::as_f64);
        let scale = 10f64.powi(digits as i32);
        let scaled = v * scale;
        let whole = if toward_zero { scaled.trunc() } else { scaled.round_ties_even() };
        return Value::Double(whole / scale);
    }
    let Some(text) = decimal::exact_text(x) else {
        let v = to_number(x).map_or(0.0, Number::as_f64);
        return round(&Value::Double(v), digits, toward_zero);
    };
    let integer_input = !text.contains('.') && matches!(x, Value::Int(_) | Value::UInt(_));
    let rounded = decimal::round_at(&text, digits, toward_zero);
    match (integer_input || digits <= 0, rounded.parse::<i64>()) {
        (true, Ok(whole)) if integer_input => Value::Int(whole),
        _ => Value::Decimal(rounded),
    }
}

/// FLOOR or CEIL: an integer for exact values, a double for doubles.
fn whole_part(x: &Value, f: fn(f64) -> f64) -> Value {
    match x {
        Value::Double(_) | Value::Float(_) => Value::Double(f(to_number(x).map_or(0.0, Number::as_f64))),
        _ => match decimal::exact_text(x) {
            Some(text) => {
                let truncated = decimal::round_at(&text, 0, true);
                let whole: i128 = truncated.parse().unwrap_or(0);
                let has_fraction = text.split_once('.').is_some_and(|(_, fraction)| fraction.bytes().any(|b| b != b'0'));
                let negative = text.starts_with('-');
                let adjusted = match (has_fraction, negative, f(0.5) > 0.5) {
                    (true, false, true) => whole + 1,
                    (true, true, false) => whole - 1,
                    _ => whole,
                };
                i64::try_from(adjusted).map_or_else(|_| Value::Decimal(adjusted.to_string()), Value::Int)
            }
            None => Value::Double(f(to_number(x).map_or(0.0, Number::as_f64))),
        },
    }
}

/// RAND() without a seed: uniform in [0, 1).
fn random_fraction() -> f64 {
    let bits = u64::from_le_bytes(uuid::Uuid::new_v4().as_bytes()[..8].try_into().expect("16 bytes"));
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: Value) -> String {
        match value {
            Value::Int(v) => v.to_string(),
            Value::Decimal(text) => text,
            Value::Double(v) => format!("{v}"),
            other => format!("{other:?}"),
        }
    }

    fn call_ok(name: &str, values: &[Value]) -> Option<Value> {
        call(name, values).map(|result| result.unwrap())
    }

    fn decimal(text: &str) -> Value {
        Value::Decimal(text.to_string())
    }

    #[test]
    fn rounding_matches_mysqls_manual() {
        // MySQL 8.4 reference manual, "Mathematical Functions".
        assert_eq!(text(call_ok("ROUND", &[decimal("-1.23")]).unwrap()), "-1");
        assert_eq!(text(call_ok("ROUND", &[decimal("-1.58")]).unwrap()), "-2");
        assert_eq!(text(call_ok("ROUND", &[decimal("1.58")]).unwrap()), "2");
        assert_eq!(text(call_ok("ROUND", &[decimal("1.298"), Value::Int(1)]).unwrap()), "1.3");
        assert_eq!(text(call_ok("ROUND", &[decimal("1.298"), Value::Int(0)]).unwrap()), "1");
        assert_eq!(text(call_ok("ROUND", &[decimal("23.298"), Value::Int(-1)]).unwrap()), "20");
        assert_eq!(text(call_ok("ROUND", &[decimal("2.5")]).unwrap()), "3");
        assert_eq!(text(call_ok("ROUND", &[Value::Double(2.5)]).unwrap()), "2");
        assert_eq!(text(call_ok("ROUND", &[Value::Int(1234), Value::Int(-2)]).unwrap()), "1200");
        assert_eq!(text(call_ok("TRUNCATE", &[decimal("1.223"), Value::Int(1)]).unwrap()), "1.2");
        assert_eq!(text(call_ok("TRUNCATE", &[decimal("1.999"), Value::Int(0)]).unwrap()), "1");
        assert_eq!(text(call_ok("TRUNCATE", &[decimal("-1.999"), Value::Int(1)]).unwrap()), "-1.9");
        assert_eq!(text(call_ok("TRUNCATE", &[Value::Int(122), Value::Int(-2)]).unwrap()), "100");
        assert_eq!(text(call_ok("FLOOR", &[decimal("1.23")]).unwrap()), "1");
        assert_eq!(text(call_ok("FLOOR", &[decimal("-1.23")]).unwrap()), "-2");
        assert_eq!(text(call_ok("CEILING", &[decimal("1.23")]).unwrap()), "2");
        assert_eq!(text(call_ok("CEIL", &[decimal("-1.23")]).unwrap()), "-1");
        assert_eq!(text(call_ok("CEIL", &[Value::Int(5)]).unwrap()), "5");
    }

    #[test]
    fn other_functions_match_mysqls_manual() {
        assert_eq!(call_ok("SIGN", &[decimal("-32")]).unwrap(), Value::Int(-1));
        assert_eq!(call_ok("MOD", &[Value::Int(234), Value::Int(10)]).unwrap(), Value::Int(4));
        assert_eq!(call_ok("MOD", &[Value::Int(29), Value::Int(0)]).unwrap(), Value::Null);
        assert_eq!(call_ok("POW", &[Value::Int(2), Value::Int(-2)]).unwrap(), Value::Double(0.25));
        assert_eq!(call_ok("SQRT", &[Value::Int(-16)]).unwrap(), Value::Null);
        assert_eq!(call_ok("LOG", &[Value::Int(2), Value::Int(65536)]).unwrap(), Value::Double(16.0));
        assert_eq!(call_ok("LN", &[Value::Int(0)]).unwrap(), Value::Null);
        assert_eq!(call_ok("LOG10", &[Value::Int(100)]).unwrap(), Value::Double(2.0));
        assert_eq!(call_ok("ROUND", &[Value::Null]).unwrap(), Value::Null);
        let Value::Double(random) = call_ok("RAND", &[]).unwrap() else { panic!() };
        assert_eq!(call("ROUND", &[]).unwrap().unwrap_err().code, 1582);
        assert!((0.0..1.0).contains(&random));
    }
}
