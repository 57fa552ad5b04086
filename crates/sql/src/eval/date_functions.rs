//! Date and time functions as MySQL computes them: the parts (YEAR, MONTH,
//! DAY, HOUR, MINUTE, SECOND, MICROSECOND, QUARTER, DAYOFWEEK, WEEKDAY,
//! DAYOFYEAR, DAYNAME, MONTHNAME, EXTRACT), DATE and TIME, LAST_DAY,
//! DATEDIFF, TIMESTAMPDIFF, interval arithmetic (DATE_ADD, DATE_SUB,
//! ADDDATE, SUBDATE, TIMESTAMPADD, `d + INTERVAL n unit`), DATE_FORMAT,
//! STR_TO_DATE, FROM_UNIXTIME, TO_DAYS, FROM_DAYS, MAKEDATE, SEC_TO_TIME
//! and TIME_TO_SEC.
//!
//! A value that is no date on the calendar (`'2024-02-30'`, the zero
//! date, text that is no date) makes the function NULL with MySQL's 1292
//! warning; adding a month to the 31st lands on the month's last day; a
//! result outside years 0-9999 is NULL.

use time::{Date, Duration, Month, PrimitiveDateTime, Time, Weekday};

use crate::error::SqlResult;
use crate::eval::expr::Environment;
use crate::eval::temporal::{datetime_parts, parts_of_datetime, parts_of_epoch_micros, time_micros, time_parts, time_value, TimeZone};
use crate::eval::value::{text, to_number, to_text, NullCheck, Number, Value};

const MICROS_PER_SECOND: i64 = 1_000_000;
/// TO_DAYS counts from year 0 (proleptic Gregorian), the Julian day count
/// from 4714 BC: the two differ by this many days.
const TO_DAYS_JULIAN_OFFSET: i64 = 1_721_060;
const DAY_NAMES: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTH_NAMES: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/// A date and time a function reads, and whether its value had a time.
#[derive(Debug, Clone, Copy)]
struct Moment {
    at: PrimitiveDateTime,
    has_time: bool,
}

/// `value` on the calendar, or `None` (with MySQL's warning) when it is
/// no date there.
fn moment(value: &Value, environment: &dyn Environment) -> Option<Moment> {
    let found = datetime_parts(value, TimeZone::of(environment)).and_then(|(parts, micros)| {
        let date = Date::from_calendar_date(i32::from(parts.year), Month::try_from(parts.month).ok()?, parts.day).ok()?;
        let time = Time::from_hms_micro(parts.hour, parts.minute, parts.second, micros.min(999_999) as u32).ok()?;
        let has_time = match value {
            Value::Date { .. } => false,
            Value::DateTime { .. } | Value::Timestamp { .. } => true,
            Value::Bytes(bytes) => bytes.contains(&b':') || bytes.iter().filter(|b| b.is_ascii_digit()).count() > 8,
            other => to_text(other).iter().take_while(|b| **b != b'.').filter(|b| b.is_ascii_digit()).count() > 8,
        };
        Some(Moment { at: PrimitiveDateTime::new(date, time), has_time })
    });
    if found.is_none() {
        environment.warning(1292, format!("Incorrect datetime value: '{}'", text(value)));
    }
    found
}

/// `at` as a DATE or DATETIME value; NULL outside years 0-9999.
fn value_of(at: PrimitiveDateTime, with_time: bool) -> Value {
    parts_of_datetime(at).map_or(Value::Null, |parts| parts.value(with_time))
}

fn whole(value: &Value) -> Option<i64> {
    match to_number(value)? {
        Number::Int(v) => i64::try_from(v).ok(),
        Number::Float(v) => Some(v.round() as i64),
    }
}

/// An interval: whole months, then microseconds, and whether its unit has
/// a time part (a DATE plus such an interval is a DATETIME, as in MySQL,
/// even when the amount is whole days).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    months: i64,
    micros: i64,
    time_unit: bool,
}

/// True for the interval units binlogd takes: MySQL's single units and
/// its composite ones (`HOUR_MINUTE`, ...).
pub fn is_unit(unit: &str) -> bool {
    let unit = unit.to_ascii_uppercase();
    matches!(unit.as_str(), "MICROSECOND" | "SECOND" | "MINUTE" | "HOUR" | "DAY" | "WEEK" | "MONTH" | "QUARTER" | "YEAR")
        || composite_fields(&unit).is_some()
}

/// The fields a composite unit's text gives, largest first: the months
/// of a year or a month, and the microseconds of the others.
fn composite_fields(unit: &str) -> Option<&'static [i64]> {
    const YEAR: i64 = 12;
    const MONTH: i64 = 1;
    const DAY: i64 = 86_400 * MICROS_PER_SECOND;
    const HOUR: i64 = 3600 * MICROS_PER_SECOND;
    const MINUTE: i64 = 60 * MICROS_PER_SECOND;
    const SECOND: i64 = MICROS_PER_SECOND;
    const MICROSECOND: i64 = 1;
    Some(match unit {
        "YEAR_MONTH" => &[YEAR, MONTH],
        "DAY_HOUR" => &[DAY, HOUR],
        "DAY_MINUTE" => &[DAY, HOUR, MINUTE],
        "DAY_SECOND" => &[DAY, HOUR, MINUTE, SECOND],
        "DAY_MICROSECOND" => &[DAY, HOUR, MINUTE, SECOND, MICROSECOND],
        "HOUR_MINUTE" => &[HOUR, MINUTE],
        "HOUR_SECOND" => &[HOUR, MINUTE, SECOND],
        "HOUR_MICROSECOND" => &[HOUR, MINUTE, SECOND, MICROSECOND],
        "MINUTE_SECOND" => &[MINUTE, SECOND],
        "MINUTE_MICROSECOND" => &[MINUTE, SECOND, MICROSECOND],
        "SECOND_MICROSECOND" => &[SECOND, MICROSECOND],
        _ => return None,
    })
}

/// The numbers of a composite interval's text as MySQL reads them
/// (`get_interval_info`): an optional `-` makes them all negative; any
/// run of non-digits separates them; fewer numbers than fields fill the
/// smallest fields (`'5' HOUR_MINUTE` is 5 minutes); a last field of
/// microseconds is a fraction (`'1.5' SECOND_MICROSECOND` is 1.5 seconds).
/// `None` when text is left after the last field.
fn composite_numbers(text: &str, count: usize, fraction_last: bool) -> Option<(bool, Vec<i64>)> {
    let text = text.trim_start_matches(' ');
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let bytes = text.as_bytes();
    let mut at = bytes.iter().position(u8::is_ascii_digit).unwrap_or(bytes.len());
    let mut numbers = Vec::with_capacity(count);
    let mut last_digits = 0;
    while numbers.len() < count {
        let start = at;
        let mut value: i64 = 0;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            value = value.checked_mul(10)?.checked_add(i64::from(bytes[at] - b'0'))?;
            at += 1;
        }
        last_digits = at - start;
        numbers.push(value);
        while at < bytes.len() && !bytes[at].is_ascii_digit() {
            at += 1;
        }
        if at == bytes.len() {
            break;
        }
    }
    if at != bytes.len() {
        return None;
    }
    let mut values = vec![0; count - numbers.len()];
    values.extend(numbers);
    if fraction_last && last_digits < 6 {
        values[count - 1] *= 10i64.pow(6 - last_digits as u32);
    }
    Some((negative, values))
}

impl Interval {
    /// `amount unit` as MySQL reads it (`INTERVAL 1.5 SECOND`,
    /// `INTERVAL '1:30' HOUR_MINUTE`); `None` for another unit or an
    /// amount that is NULL.
    pub fn parse(amount: &Value, unit: &str) -> Option<Interval> {
        if amount.is_null() {
            return None;
        }
        let unit = unit.to_ascii_uppercase();
        let simple = |micros_per_unit: i64| -> Option<Interval> {
            Some(Interval {
                months: 0,
                micros: whole(amount)?.checked_mul(micros_per_unit)?,
                time_unit: micros_per_unit < 86_400 * MICROS_PER_SECOND,
            })
        };
        let months = |per_unit: i64| Some(Interval { months: whole(amount)?.checked_mul(per_unit)?, micros: 0, time_unit: false });
        match unit.as_str() {
            "MICROSECOND" => simple(1),
            "SECOND" => {
                let seconds = to_number(amount)?.as_f64();
                Some(Interval { months: 0, micros: (seconds * 1e6).round() as i64, time_unit: true })
            }
            "MINUTE" => simple(60 * MICROS_PER_SECOND),
            "HOUR" => simple(3600 * MICROS_PER_SECOND),
            "DAY" => simple(86_400 * MICROS_PER_SECOND),
            "WEEK" => simple(7 * 86_400 * MICROS_PER_SECOND),
            "MONTH" => months(1),
            "QUARTER" => months(3),
            "YEAR" => months(12),
            composite => {
                let fields = composite_fields(composite)?;
                let (negative, numbers) = composite_numbers(&text(amount), fields.len(), composite.ends_with("_MICROSECOND"))?;
                let sign = if negative { -1 } else { 1 };
                let total = fields.iter().zip(&numbers).try_fold(0i64, |total, (unit, n)| total.checked_add(unit.checked_mul(*n)?))?;
                Some(match composite {
                    "YEAR_MONTH" => Interval { months: sign * total, micros: 0, time_unit: false },
                    _ => Interval { months: 0, micros: sign * total, time_unit: true },
                })
            }
        }
    }

    fn negated(self) -> Interval {
        Interval { months: -self.months, micros: -self.micros, ..self }
    }
}

/// `value` plus (or minus, `subtract`) `interval`: a DATE stays a DATE
/// when the interval's unit has no time part (DAY, WEEK, MONTH, QUARTER,
/// YEAR, YEAR_MONTH), else it becomes a DATETIME.
pub fn add_interval(value: &Value, interval: Option<Interval>, subtract: bool, environment: &dyn Environment) -> Value {
    let Some(interval) = interval else { return Value::Null };
    if value.is_null() {
        return Value::Null;
    }
    let interval = if subtract { interval.negated() } else { interval };
    let Some(start) = moment(value, environment) else { return Value::Null };
    let Some(at) = shifted(start.at, interval) else { return Value::Null };
    value_of(at, start.has_time || interval.time_unit)
}

fn shifted(at: PrimitiveDateTime, interval: Interval) -> Option<PrimitiveDateTime> {
    let mut at = at;
    if interval.months != 0 {
        let total = i64::from(at.year()) * 12 + i64::from(u8::from(at.month())) - 1 + interval.months;
        let year = i32::try_from(total.div_euclid(12)).ok()?;
        let month = Month::try_from((total.rem_euclid(12) + 1) as u8).ok()?;
        let day = at.day().min(time::util::days_in_month(month, year));
        at = PrimitiveDateTime::new(Date::from_calendar_date(year, month, day).ok()?, at.time());
    }
    at.checked_add(Duration::microseconds(interval.micros))
}

/// TIMESTAMPDIFF(unit, from, to): whole units from `from` to `to`,
/// toward zero; months count only when the day and time reach.
pub fn timestamp_diff(unit: &str, from: &Value, to: &Value, environment: &dyn Environment) -> Value {
    if from.is_null() || to.is_null() {
        return Value::Null;
    }
    let (Some(from), Some(to)) = (moment(from, environment), moment(to, environment)) else { return Value::Null };
    let (from, to) = (from.at, to.at);
    let micros = (to - from).whole_microseconds() as i64;
    let per = |size: i64| Value::Int(micros / size);
    match unit.to_ascii_uppercase().as_str() {
        "MICROSECOND" => per(1),
        "SECOND" => per(MICROS_PER_SECOND),
        "MINUTE" => per(60 * MICROS_PER_SECOND),
        "HOUR" => per(3600 * MICROS_PER_SECOND),
        "DAY" => per(86_400 * MICROS_PER_SECOND),
        "WEEK" => per(7 * 86_400 * MICROS_PER_SECOND),
        unit @ ("MONTH" | "QUARTER" | "YEAR") => {
            let index = |at: PrimitiveDateTime| i64::from(at.year()) * 12 + i64::from(u8::from(at.month()));
            let rest = |at: PrimitiveDateTime| (at.day(), at.time());
            let mut months = index(to) - index(from);
            if months > 0 && rest(to) < rest(from) {
                months -= 1;
            } else if months < 0 && rest(to) > rest(from) {
                months += 1;
            }
            Value::Int(match unit {
                "MONTH" => months,
                "QUARTER" => months / 3,
                _ => months / 12,
            })
        }
        _ => Value::Null,
    }
}

/// Evaluates `name` if it is one of this module's functions of plain
/// values.
pub fn call(name: &str, values: &[Value], environment: &dyn Environment) -> Option<SqlResult<Value>> {
    let known = matches!(
        name,
        "YEAR"
            | "MONTH"
            | "DAY"
            | "DAYOFMONTH"
            | "HOUR"
            | "MINUTE"
            | "SECOND"
            | "MICROSECOND"
            | "QUARTER"
            | "DAYOFWEEK"
            | "WEEKDAY"
            | "DAYOFYEAR"
            | "DAYNAME"
            | "MONTHNAME"
            | "DATE"
            | "TIME"
            | "LAST_DAY"
            | "DATEDIFF"
            | "DATE_FORMAT"
            | "STR_TO_DATE"
            | "FROM_UNIXTIME"
            | "TO_DAYS"
            | "FROM_DAYS"
            | "MAKEDATE"
            | "SEC_TO_TIME"
            | "TIME_TO_SEC"
            | "ADDDATE"
            | "SUBDATE"
    );
    if !known {
        return None;
    }
    if values.iter().any(NullCheck::is_null) {
        return Some(Ok(Value::Null));
    }
    let on_date = |value: &Value, f: &dyn Fn(PrimitiveDateTime) -> Value| moment(value, environment).map_or(Value::Null, |m| f(m.at));
    let int = |v: i64| Value::Int(v);
    Some(Ok(match (name, values) {
        ("YEAR", [d]) => on_date(d, &|at| int(i64::from(at.year()))),
        ("MONTH", [d]) => on_date(d, &|at| int(i64::from(u8::from(at.month())))),
        ("DAY" | "DAYOFMONTH", [d]) => on_date(d, &|at| int(i64::from(at.day()))),
        ("QUARTER", [d]) => on_date(d, &|at| int(i64::from(u8::from(at.month()).div_ceil(3)))),
        ("DAYOFWEEK", [d]) => on_date(d, &|at| int(i64::from(at.weekday().number_from_sunday()))),
        ("WEEKDAY", [d]) => on_date(d, &|at| int(i64::from(at.weekday().number_days_from_monday()))),
        ("DAYOFYEAR", [d]) => on_date(d, &|at| int(i64::from(at.ordinal()))),
        ("DAYNAME", [d]) => on_date(d, &|at| bytes(day_name(at.weekday()))),
        ("MONTHNAME", [d]) => on_date(d, &|at| bytes(MONTH_NAMES[usize::from(u8::from(at.month())) - 1])),
        ("DATE", [d]) => on_date(d, &|at| value_of(at, false)),
        ("LAST_DAY", [d]) => on_date(d, &|at| {
            let last = time::util::days_in_month(at.month(), at.year());
            Date::from_calendar_date(at.year(), at.month(), last).map_or(Value::Null, |date| value_of(date.midnight(), false))
        }),
        ("TO_DAYS", [d]) => on_date(d, &|at| int(i64::from(at.date().to_julian_day()) - TO_DAYS_JULIAN_OFFSET)),
        ("DATEDIFF", [a, b]) => match (moment(a, environment), moment(b, environment)) {
            (Some(a), Some(b)) => int(i64::from(a.at.date().to_julian_day()) - i64::from(b.at.date().to_julian_day())),
            _ => Value::Null,
        },
        ("HOUR" | "MINUTE" | "SECOND" | "MICROSECOND" | "TIME" | "TIME_TO_SEC", [t]) => time_part(name, t),
        ("DATE_FORMAT", [d, format]) => on_date(d, &|at| bytes(&date_format(at, &text(format)))),
        ("STR_TO_DATE", [input, format]) => str_to_date(&text(input), &text(format), environment),
        ("FROM_UNIXTIME", [seconds]) => from_unixtime(seconds, environment),
        ("FROM_UNIXTIME", [seconds, format]) => match from_unixtime(seconds, environment) {
            Value::Null => Value::Null,
            at => on_date(&at, &|at| bytes(&date_format(at, &text(format)))),
        },
        ("FROM_DAYS", [days]) => match whole(days) {
            Some(days) if days >= 366 => i32::try_from(days + TO_DAYS_JULIAN_OFFSET)
                .ok()
                .and_then(|julian| Date::from_julian_day(julian).ok())
                .map_or(Value::Null, |date| value_of(date.midnight(), false)),
            _ => Value::Date { year: 0, month: 0, day: 0 },
        },
        ("MAKEDATE", [year, day]) => match (whole(year), whole(day)) {
            (Some(year), Some(day)) if day > 0 && (0..=9999).contains(&year) => {
                let year = if year < 70 {
                    year + 2000
                } else if year < 100 {
                    year + 1900
                } else {
                    year
                };
                Date::from_calendar_date(year as i32, Month::January, 1)
                    .ok()
                    .and_then(|first| first.checked_add(Duration::days(day - 1)))
                    .map_or(Value::Null, |date| value_of(date.midnight(), false))
            }
            _ => Value::Null,
        },
        ("SEC_TO_TIME", [seconds]) => {
            let micros = (to_number(seconds).map_or(0.0, Number::as_f64) * 1e6).round() as i64;
            let limit = (838 * 3600 + 59 * 60 + 59) * MICROS_PER_SECOND;
            time_value(micros.clamp(-limit, limit))
        }
        ("ADDDATE" | "SUBDATE", [d, days]) => {
            let interval = whole(days).map(|days| Interval { months: 0, micros: days * 86_400 * MICROS_PER_SECOND, time_unit: false });
            add_interval(d, interval, name == "SUBDATE", environment)
        }
        _ => return Some(Err(crate::error::wrong_argument_count(name))),
    }))
}

fn bytes(text: &str) -> Value {
    Value::Bytes(text.as_bytes().to_vec())
}

fn day_name(weekday: Weekday) -> &'static str {
    DAY_NAMES[usize::from(weekday.number_days_from_monday())]
}

/// HOUR, MINUTE, SECOND, MICROSECOND, TIME and TIME_TO_SEC of a TIME, a
/// DATETIME or their text.
fn time_part(name: &str, value: &Value) -> Value {
    let micros = match value {
        Value::Time { .. } => time_micros(value),
        _ => time_parts(value).map(|(whole, fraction)| whole + fraction as i64),
    };
    let Some(micros) = micros else { return Value::Null };
    let magnitude = micros.unsigned_abs() as i64;
    let seconds = magnitude / MICROS_PER_SECOND;
    match name {
        "HOUR" => Value::Int(seconds / 3600),
        "MINUTE" => Value::Int(seconds / 60 % 60),
        "SECOND" => Value::Int(seconds % 60),
        "MICROSECOND" => Value::Int(magnitude % MICROS_PER_SECOND),
        "TIME_TO_SEC" => Value::Int(if micros < 0 { -seconds } else { seconds }),
        _ => time_value(micros),
    }
}

/// FROM_UNIXTIME: the DATETIME of `seconds` since the epoch in the
/// session's time zone; NULL for a negative count.
fn from_unixtime(seconds: &Value, environment: &dyn Environment) -> Value {
    let Some(number) = to_number(seconds) else { return Value::Null };
    let micros = (number.as_f64() * 1e6).round() as i64;
    if micros < 0 {
        return Value::Null;
    }
    let local = micros + i64::from(TimeZone::of(environment).offset_seconds) * MICROS_PER_SECOND;
    parts_of_epoch_micros(local).map_or(Value::Null, |parts| parts.value(true))
}

/// The week of `date` by MySQL's week modes: `monday_first` picks the
/// first day of a week, `four_days` whether week 1 is the first with four
/// days in the year (else the first that starts in it). 0 for the days
/// before week 1.
fn week(date: Date, monday_first: bool, four_days: bool) -> i64 {
    let first = Date::from_calendar_date(date.year(), Month::January, 1).expect("January 1st");
    let offset =
        i64::from(if monday_first { first.weekday().number_days_from_monday() } else { first.weekday().number_days_from_sunday() });
    let start = if four_days && offset <= 3 {
        -offset
    } else if offset == 0 {
        0
    } else {
        7 - offset
    };
    let day = i64::from(date.ordinal()) - 1;
    if day < start {
        0
    } else {
        (day - start) / 7 + 1
    }
}

/// DATE_FORMAT's text of `at` for `format`.
fn date_format(at: PrimitiveDateTime, format: &str) -> String {
    let mut out = String::new();
    let mut chars = format.chars();
    let hour12 = |hour: u8| if hour.is_multiple_of(12) { 12 } else { hour % 12 };
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else { break };
        let date = at.date();
        let (month, day, hour) = (u8::from(at.month()), at.day(), at.hour());
        let piece = match spec {
            'a' => day_name(at.weekday())[..3].to_string(),
            'b' => MONTH_NAMES[usize::from(month) - 1][..3].to_string(),
            'c' => month.to_string(),
            'D' => {
                let suffix = match (day % 10, day / 10 == 1) {
                    (_, true) => "th",
                    (1, _) => "st",
                    (2, _) => "nd",
                    (3, _) => "rd",
                    _ => "th",
                };
                format!("{day}{suffix}")
            }
            'd' => format!("{day:02}"),
            'e' => day.to_string(),
            'f' => format!("{:06}", at.microsecond()),
            'H' => format!("{hour:02}"),
            'h' | 'I' => format!("{:02}", hour12(hour)),
            'i' => format!("{:02}", at.minute()),
            'j' => format!("{:03}", at.ordinal()),
            'k' => hour.to_string(),
            'l' => hour12(hour).to_string(),
            'M' => MONTH_NAMES[usize::from(month) - 1].to_string(),
            'm' => format!("{month:02}"),
            'p' => if hour < 12 { "AM" } else { "PM" }.to_string(),
            'r' => format!("{:02}:{:02}:{:02} {}", hour12(hour), at.minute(), at.second(), if hour < 12 { "AM" } else { "PM" }),
            'S' | 's' => format!("{:02}", at.second()),
            'T' => format!("{hour:02}:{:02}:{:02}", at.minute(), at.second()),
            'U' => format!("{:02}", week(date, false, false)),
            'u' => format!("{:02}", week(date, true, true)),
            'V' | 'X' => {
                // Mode 2: Sunday first, weeks 1-53, the days before week 1
                // in the previous year's last week.
                let (year, number) = match week(date, false, false) {
                    0 => {
                        let last = Date::from_calendar_date(date.year() - 1, Month::December, 31).expect("December 31st");
                        (date.year() - 1, week(last, false, false))
                    }
                    number => (date.year(), number),
                };
                if spec == 'V' {
                    format!("{number:02}")
                } else {
                    format!("{year:04}")
                }
            }
            'v' => format!("{:02}", date.iso_week()),
            'x' => format!("{:04}", date.to_iso_week_date().0),
            'W' => day_name(at.weekday()).to_string(),
            'w' => at.weekday().number_days_from_sunday().to_string(),
            'Y' => format!("{:04}", at.year()),
            'y' => format!("{:02}", at.year().rem_euclid(100)),
            other => other.to_string(),
        };
        out.push_str(&piece);
    }
    out
}

/// STR_TO_DATE: `input` read by `format`'s specifiers; a DATE, a TIME or
/// a DATETIME by the parts the format names; NULL with warning 1411 when
/// the text does not match.
fn str_to_date(input: &str, format: &str, environment: &dyn Environment) -> Value {
    let parsed = parse_by_format(input, format);
    match parsed {
        Some(value) => value,
        None => {
            environment.warning(1411, format!("Incorrect datetime value: '{input}' for function str_to_date"));
            Value::Null
        }
    }
}

fn parse_by_format(input: &str, format: &str) -> Option<Value> {
    let (mut year, mut month, mut day) = (0i64, 0i64, 0i64);
    let (mut hour, mut minute, mut second, mut micros) = (0i64, 0i64, 0i64, 0i64);
    let (mut has_date, mut has_time, mut pm, mut hour12) = (false, false, None, false);
    let mut rest = input.trim_start();
    let mut format_chars = format.chars().peekable();
    let number = |rest: &mut &str, most: usize| -> Option<i64> {
        *rest = rest.trim_start();
        let digits = rest.bytes().take(most).take_while(u8::is_ascii_digit).count();
        let (taken, left) = rest.split_at(digits);
        *rest = left;
        taken.parse().ok()
    };
    let name = |rest: &mut &str, names: &[&str]| -> Option<i64> {
        for (index, full) in names.iter().enumerate() {
            for candidate in [*full, &full[..3]] {
                if rest.len() >= candidate.len() && rest[..candidate.len()].eq_ignore_ascii_case(candidate) {
                    *rest = &rest[candidate.len()..];
                    return Some(index as i64);
                }
            }
        }
        None
    };
    while let Some(c) = format_chars.next() {
        if c != '%' {
            if c.is_whitespace() {
                rest = rest.trim_start();
            } else {
                rest = rest.strip_prefix(c)?;
            }
            continue;
        }
        match format_chars.next()? {
            'Y' => (year, has_date) = (number(&mut rest, 4)?, true),
            'y' => {
                let two = number(&mut rest, 2)?;
                (year, has_date) = (if two < 70 { 2000 + two } else { 1900 + two }, true);
            }
            'm' | 'c' => (month, has_date) = (number(&mut rest, 2)?, true),
            'd' | 'e' => (day, has_date) = (number(&mut rest, 2)?, true),
            'M' | 'b' => (month, has_date) = (name(&mut rest, &MONTH_NAMES)? + 1, true),
            'W' | 'a' => {
                name(&mut rest, &DAY_NAMES)?;
            }
            'H' | 'k' => (hour, has_time) = (number(&mut rest, 2)?, true),
            'h' | 'I' | 'l' => (hour, has_time, hour12) = (number(&mut rest, 2)?, true, true),
            'i' => (minute, has_time) = (number(&mut rest, 2)?, true),
            'S' | 's' => (second, has_time) = (number(&mut rest, 2)?, true),
            'f' => {
                let digits = rest.bytes().take(6).take_while(u8::is_ascii_digit).count();
                let padded: String = rest[..digits].chars().chain(std::iter::repeat('0')).take(6).collect();
                rest = &rest[digits..];
                (micros, has_time) = (padded.parse().ok()?, true);
            }
            'p' => {
                let upper = rest.get(..2)?.to_ascii_uppercase();
                pm = Some(match upper.as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return None,
                });
                rest = &rest[2..];
            }
            'T' => {
                hour = number(&mut rest, 2)?;
                rest = rest.strip_prefix(':')?;
                minute = number(&mut rest, 2)?;
                rest = rest.strip_prefix(':')?;
                second = number(&mut rest, 2)?;
                has_time = true;
            }
            '%' => rest = rest.strip_prefix('%')?,
            _ => return None,
        }
    }
    if hour12 {
        if !(1..=12).contains(&hour) {
            return None;
        }
        hour = hour % 12 + if pm == Some(true) { 12 } else { 0 };
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    if !has_date {
        return Some(time_value(((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND + micros));
    }
    let date =
        Date::from_calendar_date(i32::try_from(year).ok()?, Month::try_from(u8::try_from(month).ok()?).ok()?, u8::try_from(day).ok()?)
            .ok()?;
    let time = Time::from_hms_micro(hour as u8, minute as u8, second as u8, micros as u32).ok()?;
    Some(value_of(PrimitiveDateTime::new(date, time), has_time))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `YYYY-MM-DD hh:mm:ss`.
    fn at(text: &str) -> PrimitiveDateTime {
        let n = |range: std::ops::Range<usize>| text[range].parse::<u32>().unwrap();
        let date = Date::from_calendar_date(n(0..4) as i32, Month::try_from(n(5..7) as u8).unwrap(), n(8..10) as u8).unwrap();
        PrimitiveDateTime::new(date, Time::from_hms(n(11..13) as u8, n(14..16) as u8, n(17..19) as u8).unwrap())
    }

    #[test]
    fn composite_interval_text_reads_as_mysql_reads_it() {
        assert_eq!(composite_numbers("1 1:1:1", 4, false), Some((false, vec![1, 1, 1, 1])));
        assert_eq!(composite_numbers(" -1 10", 2, false), Some((true, vec![1, 10])));
        // Missing fields are the largest ones.
        assert_eq!(composite_numbers("5", 2, false), Some((false, vec![0, 5])));
        assert_eq!(composite_numbers("2:5", 3, false), Some((false, vec![0, 2, 5])));
        // Microseconds are a fraction.
        assert_eq!(composite_numbers("1.5", 2, true), Some((false, vec![1, 500_000])));
        assert_eq!(composite_numbers("1.000002", 2, true), Some((false, vec![1, 2])));
        // Text after the last field.
        assert_eq!(composite_numbers("1:2:3", 2, false), None);
        assert_eq!(
            Interval::parse(&Value::Bytes(b"1-1".to_vec()), "year_month"),
            Some(Interval { months: 13, micros: 0, time_unit: false })
        );
    }

    #[test]
    fn date_format_matches_mysqls_manual() {
        // MySQL 8.4 reference manual, DATE_FORMAT().
        assert_eq!(date_format(at("2009-10-04 22:23:00"), "%W %M %Y"), "Sunday October 2009");
        assert_eq!(date_format(at("2007-10-04 22:23:00"), "%H:%i:%s"), "22:23:00");
        assert_eq!(date_format(at("1900-10-04 22:23:00"), "%D %y %a %d %m %b %j"), "4th 00 Thu 04 10 Oct 277");
        assert_eq!(date_format(at("1997-10-04 22:23:00"), "%H %k %I %r %T %S %w"), "22 22 10 10:23:00 PM 22:23:00 00 6");
        assert_eq!(date_format(at("1999-01-01 00:00:00"), "%X %V"), "1998 52");
        assert_eq!(date_format(at("2006-06-01 00:00:00"), "%d"), "01");
    }

    #[test]
    fn intervals_read_as_mysql_reads_them() {
        let interval = |amount: Value, unit: &str| Interval::parse(&amount, unit).unwrap();
        assert_eq!(interval(Value::Bytes(b"1.5".to_vec()), "SECOND").micros, 1_500_000);
        assert_eq!(interval(Value::Int(2), "week").micros, 14 * 86_400 * MICROS_PER_SECOND);
        assert_eq!(interval(Value::Int(-1), "QUARTER").months, -3);
        assert_eq!(Interval::parse(&Value::Null, "DAY"), None);
        let jan_31 = at("2024-01-31 00:00:00");
        assert_eq!(shifted(jan_31, Interval { months: 1, micros: 0, time_unit: false }).unwrap(), at("2024-02-29 00:00:00"));
        assert_eq!(shifted(jan_31, Interval { months: -13, micros: 0, time_unit: false }).unwrap(), at("2022-12-31 00:00:00"));
    }

    #[test]
    fn weeks_follow_mysqls_modes() {
        let date = |y, m, d| Date::from_calendar_date(y, Month::try_from(m).unwrap(), d).unwrap();
        // WEEK('2008-02-20', 0) = 7, mode 1 = 8 (MySQL manual).
        assert_eq!(week(date(2008, 2, 20), false, false), 7);
        assert_eq!(week(date(2008, 2, 20), true, true), 8);
        assert_eq!(week(date(2008, 1, 1), false, false), 0);
    }
}
