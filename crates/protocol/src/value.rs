//! The value a prepared statement parameter decodes to and a result row
//! holds, with its MySQL text form (what the text protocol sends) and the
//! text parsers the binary protocol needs when a row holds text for a typed
//! column.

use std::fmt::Write as _;

/// One value on the wire. Strings, blobs, DECIMAL, JSON, BIT, ENUM and SET
/// travel as `Bytes` in both protocols; the numeric and temporal variants are
/// what binary-protocol parameters of those types decode to.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Float(f32),
    Double(f64),
    Bytes(Vec<u8>),
    /// DATE, DATETIME and TIMESTAMP.
    DateTime(DateTime),
    Time(Time),
}

/// DATE / DATETIME / TIMESTAMP as the protocol carries them (no time zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DateTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub microsecond: u32,
}

/// TIME: a signed duration of days, hours, minutes, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Time {
    pub negative: bool,
    pub days: u32,
    pub hours: u8,
    pub minutes: u8,
    pub seconds: u8,
    pub microseconds: u32,
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The MySQL text form; `None` for NULL. `decimals` is the column's
    /// fractional-second precision for temporal values (0..=6; larger values
    /// mean "as many as needed").
    pub fn to_text(&self, decimals: u8) -> Option<Vec<u8>> {
        Some(match self {
            Value::Null => return None,
            Value::Int(v) => v.to_string().into_bytes(),
            Value::UInt(v) => v.to_string().into_bytes(),
            Value::Float(v) => format_float(f64::from(*v), true).into_bytes(),
            Value::Double(v) => format_float(*v, false).into_bytes(),
            Value::Bytes(bytes) => bytes.clone(),
            Value::DateTime(dt) => dt.to_text(dt.has_time() || dt.microsecond != 0, decimals).into_bytes(),
            Value::Time(time) => time.to_text(decimals).into_bytes(),
        })
    }
}

/// MySQL prints doubles with `%g`-like rules: shortest round-trip digits,
/// switching to an exponent for very large or very small magnitudes.
fn format_float(value: f64, single_precision: bool) -> String {
    if value.is_nan() || value.is_infinite() {
        // MySQL never stores these; print something a client can parse.
        return if value.is_nan() {
            "NaN".into()
        } else if value > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let magnitude = value.abs();
    let exponent_form = magnitude != 0.0 && !(1e-4..1e15).contains(&magnitude);
    match (exponent_form, single_precision) {
        (true, true) => format!("{:e}", value as f32),
        (true, false) => format!("{value:e}"),
        (false, true) => format!("{}", value as f32),
        (false, false) => format!("{value}"),
    }
}

fn push_fraction(text: &mut String, microseconds: u32, decimals: u8) {
    let full = format!("{microseconds:06}");
    // Precision above 6 means "unknown": the digits needed, no trailing zeros.
    let digits = if decimals > 6 { full.trim_end_matches('0').len() } else { usize::from(decimals) };
    if digits > 0 {
        text.push('.');
        text.push_str(&full[..digits]);
    }
}

impl DateTime {
    pub fn date(year: u16, month: u8, day: u8) -> Self {
        DateTime { year, month, day, ..Default::default() }
    }

    pub fn has_time(&self) -> bool {
        self.hour != 0 || self.minute != 0 || self.second != 0
    }

    /// `YYYY-MM-DD` or `YYYY-MM-DD hh:mm:ss[.ffffff]`.
    pub fn to_text(&self, with_time: bool, decimals: u8) -> String {
        let mut text = format!("{:04}-{:02}-{:02}", self.year, self.month, self.day);
        if with_time {
            let _ = write!(text, " {:02}:{:02}:{:02}", self.hour, self.minute, self.second);
            push_fraction(&mut text, self.microsecond, decimals);
        }
        text
    }

    /// Parses `YYYY-MM-DD[ hh:mm:ss[.ffffff]]` (also with `T` between).
    pub fn parse(text: &str) -> Option<DateTime> {
        let text = text.trim();
        let (date, time) = match text.split_once([' ', 'T']) {
            Some((date, time)) => (date, Some(time)),
            None => (text, None),
        };
        let mut fields = date.splitn(3, '-');
        let year = fields.next()?.parse().ok()?;
        let month = fields.next()?.parse().ok()?;
        let day = fields.next()?.parse().ok()?;
        let mut value = DateTime::date(year, month, day);
        if let Some(time) = time {
            let parsed = Time::parse(time)?;
            if parsed.negative || parsed.days != 0 {
                return None;
            }
            value.hour = parsed.hours;
            value.minute = parsed.minutes;
            value.second = parsed.seconds;
            value.microsecond = parsed.microseconds;
        }
        Some(value)
    }
}

impl Time {
    /// Total hours, which is what the text form shows (`838:59:59`).
    pub fn total_hours(&self) -> u64 {
        u64::from(self.days) * 24 + u64::from(self.hours)
    }

    /// `[-]hh:mm:ss[.ffffff]`.
    pub fn to_text(&self, decimals: u8) -> String {
        let sign = if self.negative { "-" } else { "" };
        let mut text = format!("{sign}{:02}:{:02}:{:02}", self.total_hours(), self.minutes, self.seconds);
        push_fraction(&mut text, self.microseconds, decimals);
        text
    }

    /// Parses `[-]h+:mm:ss[.ffffff]`.
    pub fn parse(text: &str) -> Option<Time> {
        let text = text.trim();
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (clock, fraction) = match text.split_once('.') {
            Some((clock, fraction)) => (clock, Some(fraction)),
            None => (text, None),
        };
        let mut fields = clock.splitn(3, ':');
        let hours: u64 = fields.next()?.parse().ok()?;
        let minutes: u8 = fields.next()?.parse().ok()?;
        let seconds: u8 = fields.next().unwrap_or("0").parse().ok()?;
        let microseconds = match fraction {
            None => 0,
            Some(digits) if !digits.is_empty() && digits.len() <= 6 && digits.bytes().all(|b| b.is_ascii_digit()) => {
                format!("{digits:0<6}").parse().ok()?
            }
            Some(_) => return None,
        };
        if minutes > 59 || seconds > 59 {
            return None;
        }
        Some(Time { negative, days: u32::try_from(hours / 24).ok()?, hours: (hours % 24) as u8, minutes, seconds, microseconds })
    }
}

impl From<Option<Vec<u8>>> for Value {
    fn from(value: Option<Vec<u8>>) -> Self {
        value.map_or(Value::Null, Value::Bytes)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Self {
        Value::Bytes(value.as_bytes().to_vec())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Self {
        Value::Bytes(value.into_bytes())
    }
}

impl From<i64> for Value {
    fn from(value: i64) -> Self {
        Value::Int(value)
    }
}

impl From<u64> for Value {
    fn from(value: u64) -> Self {
        Value::UInt(value)
    }
}

impl From<f64> for Value {
    fn from(value: f64) -> Self {
        Value::Double(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms_match_mysql() {
        assert_eq!(Value::Int(-5).to_text(0).unwrap(), b"-5");
        assert_eq!(Value::Double(0.1).to_text(31).unwrap(), b"0.1");
        assert_eq!(Value::Double(1e20).to_text(31).unwrap(), b"1e20");
        assert_eq!(Value::Double(1.5e-5).to_text(31).unwrap(), b"1.5e-5");
        assert_eq!(Value::Float(0.1).to_text(31).unwrap(), b"0.1");
        assert_eq!(Value::Null.to_text(0), None);
        let dt = DateTime { year: 2024, month: 2, day: 29, hour: 13, minute: 4, second: 5, microsecond: 120000 };
        assert_eq!(dt.to_text(true, 0), "2024-02-29 13:04:05");
        assert_eq!(dt.to_text(true, 3), "2024-02-29 13:04:05.120");
        assert_eq!(dt.to_text(true, 31), "2024-02-29 13:04:05.12");
        assert_eq!(DateTime::date(2024, 1, 2).to_text(false, 0), "2024-01-02");
        let t = Time { negative: true, days: 1, hours: 2, minutes: 3, seconds: 4, microseconds: 5 };
        assert_eq!(t.to_text(6), "-26:03:04.000005");
    }

    #[test]
    fn parses_text_forms() {
        assert_eq!(DateTime::parse("2024-02-29 13:04:05.12").unwrap().microsecond, 120000);
        assert_eq!(DateTime::parse("2024-02-29"), Some(DateTime::date(2024, 2, 29)));
        assert_eq!(DateTime::parse("garbage"), None);
        let t = Time::parse("-26:03:04.000005").unwrap();
        assert_eq!((t.negative, t.days, t.hours, t.microseconds), (true, 1, 2, 5));
        assert_eq!(Time::parse("1:70:00"), None);
    }
}
