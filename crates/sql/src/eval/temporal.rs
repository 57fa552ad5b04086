//! DATE, DATETIME, TIMESTAMP, TIME and YEAR in SQL: literals parsed as
//! MySQL parses them, checked against the session's sql_mode, rounded to
//! the column's precision; TIMESTAMP converted between UTC (as stored) and
//! the session's `time_zone`; the statement's clock for NOW() and
//! CURRENT_TIMESTAMP.
//!
//! A value that does not fit is MySQL's error in strict mode (1292
//! "Incorrect datetime value", 1264 for YEAR, 1366 for text that is no
//! YEAR) and otherwise the clipped or zero value with a warning (1264 out
//! of range, 1265 truncated), as `Field_temporal::set_warnings` does.

use std::cmp::Ordering;

use binlog_format::value::temporal::DateTimeParts;
use binlog_format::value::time::{TIME_HOURS_MAX, YEAR_MAX, YEAR_MIN};
use binlog_format::ColumnType;
use engine::ColumnDef;
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime};

use crate::error::SqlResult;
use crate::eval::expr::Environment;
use crate::eval::value::{text, to_text, wire_datetime, Value};
use crate::session::Warning;
use crate::variables::VariableScope;

const MICROS_PER_SECOND: i64 = 1_000_000;
/// TIMESTAMP's range: '1970-01-01 00:00:01' to '2038-01-19 03:14:07' UTC.
const TIMESTAMP_SECONDS_MAX: i64 = i32::MAX as i64;
/// 838:59:59 in seconds.
const TIME_SECONDS_MAX: i64 = TIME_HOURS_MAX as i64 * 3600 + 59 * 60 + 59;

/// A session's `time_zone`: SYSTEM (the server's, UTC: `system_time_zone`)
/// or a fixed offset. binlogd has no time zone tables, so named zones other
/// than UTC are 1298, as in a MySQL without them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeZone {
    pub(crate) offset_seconds: i32,
}

impl TimeZone {
    pub const UTC: TimeZone = TimeZone { offset_seconds: 0 };

    /// `SYSTEM`, `UTC`, or `[+-]H:MM` from -13:59 to +14:00.
    pub fn parse(text: &str) -> SqlResult<TimeZone> {
        let unknown = || protocol::MysqlError::new(1298, "HY000", format!("Unknown or incorrect time zone: '{text}'"));
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("SYSTEM") || trimmed.eq_ignore_ascii_case("UTC") {
            return Ok(TimeZone::UTC);
        }
        let (sign, rest) = match trimmed.as_bytes().first() {
            Some(b'+') => (1, &trimmed[1..]),
            Some(b'-') => (-1, &trimmed[1..]),
            _ => return Err(unknown()),
        };
        let (hours, minutes) = rest.split_once(':').ok_or_else(unknown)?;
        let digits = |s: &str, max_len: usize| (1..=max_len).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(hours, 2) || !digits(minutes, 2) || minutes.len() != 2 {
            return Err(unknown());
        }
        let (hours, minutes): (i32, i32) = (hours.parse().map_err(|_| unknown())?, minutes.parse().map_err(|_| unknown())?);
        let offset_minutes = sign * (hours * 60 + minutes);
        if minutes > 59 || !(-(13 * 60 + 59)..=14 * 60).contains(&offset_minutes) {
            return Err(unknown());
        }
        Ok(TimeZone { offset_seconds: offset_minutes * 60 })
    }

    /// The session's zone (UTC if the variable somehow does not parse).
    pub fn of(environment: &dyn Environment) -> TimeZone {
        environment
            .system_variable("time_zone", VariableScope::Default)
            .ok()
            .and_then(|value| TimeZone::parse(&text(&value)).ok())
            .unwrap_or(TimeZone::UTC)
    }
}

/// The parts of sql_mode that decide how values are stored and what a
/// division by zero does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SqlMode {
    pub strict: bool,
    pub no_zero_date: bool,
    pub no_zero_in_date: bool,
    pub allow_invalid_dates: bool,
    pub error_for_division_by_zero: bool,
}

impl SqlMode {
    pub fn parse(text: &str) -> SqlMode {
        let mut mode = SqlMode::default();
        // Read once per write statement: compared in place, not upper-cased.
        for word in text.split(',').map(str::trim) {
            let is = |name: &str| word.eq_ignore_ascii_case(name);
            if is("STRICT_TRANS_TABLES") || is("STRICT_ALL_TABLES") {
                mode.strict = true;
            } else if is("NO_ZERO_DATE") {
                mode.no_zero_date = true;
            } else if is("NO_ZERO_IN_DATE") {
                mode.no_zero_in_date = true;
            } else if is("ALLOW_INVALID_DATES") {
                mode.allow_invalid_dates = true;
            } else if is("ERROR_FOR_DIVISION_BY_ZERO") {
                mode.error_for_division_by_zero = true;
            } else if is("TRADITIONAL") {
                mode.strict = true;
                mode.no_zero_date = true;
                mode.no_zero_in_date = true;
                mode.error_for_division_by_zero = true;
            }
        }
        mode
    }

    pub fn of(environment: &dyn Environment) -> SqlMode {
        let value = environment.system_variable("sql_mode", VariableScope::Default).unwrap_or(Value::Null);
        SqlMode::parse(&text(&value))
    }
}

/// What a write needs to fit temporal values: the session's rules, the
/// statement's clock and the row number messages name.
#[derive(Debug, Clone, Copy)]
pub struct WriteRules {
    pub mode: SqlMode,
    pub zone: TimeZone,
    /// The statement's start, microseconds since the epoch.
    pub now_micros: i64,
    /// 1-based, as "at row N".
    pub row: u64,
}

impl WriteRules {
    pub fn of(environment: &dyn Environment) -> WriteRules {
        WriteRules {
            mode: SqlMode::of(environment),
            zone: TimeZone::of(environment),
            now_micros: environment.statement_time_micros(),
            row: 1,
        }
    }

    /// The session's rules for a write to `columns`: sql_mode always (it
    /// decides whether a value that does not fit is an error or clipped);
    /// a table without a temporal column needs no time zone or clock, so
    /// its writes skip reading them (sysbench's tables).
    pub fn for_columns(environment: &dyn Environment, columns: &[ColumnDef]) -> WriteRules {
        let temporal = |c: &ColumnDef| {
            matches!(
                c.column_type,
                ColumnType::Date
                    | ColumnType::DateTime2 { .. }
                    | ColumnType::Timestamp2 { .. }
                    | ColumnType::Time2 { .. }
                    | ColumnType::Year
            )
        };
        if columns.iter().any(temporal) {
            WriteRules::of(environment)
        } else {
            WriteRules { mode: SqlMode::of(environment), ..WriteRules::strict_utc() }
        }
    }

    /// Strict mode with MySQL 8.4's default zero-date checks, in UTC: for
    /// conversions outside a session's write.
    pub fn strict_utc() -> WriteRules {
        WriteRules {
            mode: SqlMode { strict: true, no_zero_date: true, no_zero_in_date: true, ..SqlMode::default() },
            zone: TimeZone::UTC,
            now_micros: 0,
            row: 1,
        }
    }

    pub fn at_row(self, row: u64) -> WriteRules {
        WriteRules { row, ..self }
    }
}

/// Why a value does not fit its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Problem {
    /// Not a value of the type at all ('abc' for a DATE): 1265 when not strict.
    Garbage,
    /// A value outside the type's range or calendar: 1264 when not strict.
    OutOfRange,
}

fn two_digit_year(year: u32) -> u32 {
    if year < 70 {
        2000 + year
    } else {
        1900 + year
    }
}

/// The fraction digits as microseconds, rounded at the seventh digit;
/// `None` when they are not digits.
fn fraction_micros(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let padded = format!("{digits:0<7}");
    let seven: u64 = padded[..7].parse().ok()?;
    Some((seven + 5) / 10)
}

/// MySQL's date and datetime literals: `YYYY-MM-DD[ hh:mm:ss[.ffffff]]` with
/// any punctuation between parts (and `T` before the time), two-digit
/// years, and the run-together `YYYYMMDD[hhmmss]` / `YYMMDD[hhmmss]` forms.
/// Returns the parts and the microseconds carried past the sixth digit
/// (rounded later with the column's precision).
fn parse_datetime_text(text: &str) -> Option<(DateTimeParts, u64)> {
    let text = text.trim();
    let (whole, fraction) = match text.rfind('.') {
        // A dot after the time part starts the fraction.
        Some(at) if text[..at].bytes().filter(|b| b.is_ascii_digit()).count() > 8 || text[..at].contains(':') => {
            (&text[..at], Some(&text[at + 1..]))
        }
        _ => (text, None),
    };
    let micros = match fraction {
        None => 0,
        Some(digits) => fraction_micros(digits)?,
    };
    let groups: Vec<&str> = whole.split(|c: char| !c.is_ascii_digit()).filter(|g| !g.is_empty()).collect();
    if whole.chars().any(|c| c.is_alphabetic() && c != 'T') || groups.is_empty() {
        return None;
    }
    let numbers: Vec<u32> = if groups.len() == 1 {
        let run = groups[0];
        let (year_length, rest) = match run.len() {
            14 | 8 => (4, &run[4..]),
            12 | 6 => (2, &run[2..]),
            _ => return None,
        };
        let mut numbers = vec![run[..year_length].parse().ok()?];
        let mut at = 0;
        while at < rest.len() {
            numbers.push(rest[at..at + 2].parse().ok()?);
            at += 2;
        }
        if year_length == 2 {
            numbers[0] = two_digit_year(numbers[0]);
        }
        numbers
    } else {
        if !(3..=6).contains(&groups.len()) || groups.iter().any(|g| g.len() > 4) {
            return None;
        }
        let mut numbers: Vec<u32> = groups.iter().map(|g| g.parse().ok()).collect::<Option<_>>()?;
        if groups[0].len() <= 2 {
            numbers[0] = two_digit_year(numbers[0]);
        }
        numbers
    };
    let part = |index: usize| numbers.get(index).copied().unwrap_or(0);
    if part(1) > 99 || part(2) > 99 || part(3) > 99 || part(4) > 99 || part(5) > 99 {
        return None;
    }
    let parts = DateTimeParts {
        year: part(0) as u16,
        month: part(1) as u8,
        day: part(2) as u8,
        hour: part(3) as u8,
        minute: part(4) as u8,
        second: part(5) as u8,
        micros: 0,
    };
    Some((parts, micros))
}

fn days_in_month(year: u16, month: u8) -> u8 {
    Month::try_from(month).map_or(31, |m| m.length(i32::from(year)))
}

/// The calendar and sql_mode checks of a date: `Err(OutOfRange)` for an
/// impossible date or one the mode forbids.
fn check_date(parts: &DateTimeParts, mode: SqlMode) -> Result<(), Problem> {
    if parts.month > 12 || parts.day > 31 || parts.hour > 23 || parts.minute > 59 || parts.second > 59 || parts.year > 9999 {
        return Err(Problem::OutOfRange);
    }
    if parts.is_zero_date() {
        return if mode.no_zero_date { Err(Problem::OutOfRange) } else { Ok(()) };
    }
    if parts.month == 0 || parts.day == 0 {
        return if mode.no_zero_in_date { Err(Problem::OutOfRange) } else { Ok(()) };
    }
    if !mode.allow_invalid_dates && parts.day > days_in_month(parts.year, parts.month) {
        return Err(Problem::OutOfRange);
    }
    Ok(())
}

/// Microseconds since 0000-00-00 for a real date (the proleptic
/// Gregorian calendar the time crate counts in).
fn epoch_micros(parts: &DateTimeParts) -> Option<i64> {
    let month = Month::try_from(parts.month).ok()?;
    let date = Date::from_calendar_date(i32::from(parts.year), month, parts.day).ok()?;
    let days = i64::from(date.to_julian_day()) - i64::from(UNIX_EPOCH_JULIAN_DAY);
    let seconds = days * 86_400 + i64::from(parts.hour) * 3600 + i64::from(parts.minute) * 60 + i64::from(parts.second);
    Some(seconds * MICROS_PER_SECOND + i64::from(parts.micros))
}

const UNIX_EPOCH_JULIAN_DAY: i32 = 2_440_588;

/// The calendar time `micros` after 1970-01-01 00:00:00; `None` outside
/// years 0-9999.
pub(crate) fn parts_of_epoch_micros(micros: i64) -> Option<DateTimeParts> {
    let nanos = i128::from(micros) * 1000;
    let at = OffsetDateTime::from_unix_timestamp_nanos(nanos).ok()?;
    parts_of_datetime(PrimitiveDateTime::new(at.date(), at.time()))
}

/// A calendar time's parts; `None` outside years 0-9999.
pub(crate) fn parts_of_datetime(at: PrimitiveDateTime) -> Option<DateTimeParts> {
    let year = u16::try_from(at.year()).ok().filter(|y| *y <= 9999)?;
    Some(DateTimeParts {
        year,
        month: u8::from(at.month()),
        day: at.day(),
        hour: at.hour(),
        minute: at.minute(),
        second: at.second(),
        micros: at.microsecond(),
    })
}

/// Rounds `micros` (0..=1_000_000 plus carried rounding) to `fsp` digits;
/// returns the rounded microseconds and whether a whole second carried.
fn round_micros(micros: u64, fsp: u8) -> (u32, bool) {
    let unit = 10u64.pow(6 - u32::from(fsp.min(6)));
    let rounded = (micros + unit / 2) / unit * unit;
    if rounded >= 1_000_000 {
        ((rounded - 1_000_000) as u32, true)
    } else {
        (rounded as u32, false)
    }
}

/// A date and time rounded to `fsp` digits, the carry moving into the
/// seconds (and the calendar, for a real date).
fn rounded(mut parts: DateTimeParts, micros: u64, fsp: u8) -> DateTimeParts {
    let (micros, carry) = round_micros(micros, fsp);
    parts.micros = micros;
    if carry {
        match epoch_micros(&parts).and_then(|at| parts_of_epoch_micros(at + MICROS_PER_SECOND)) {
            Some(next) => parts = next,
            // No calendar for a zero-in-date value: keep the second.
            None => parts.micros = (1_000_000 - 10u64.pow(6 - u32::from(fsp.min(6)))) as u32,
        }
    }
    parts
}

/// The date and time a value stands for (before the calendar checks).
pub(crate) fn datetime_parts(value: &Value, zone: TimeZone) -> Option<(DateTimeParts, u64)> {
    match value {
        Value::Date { year, month, day } => Some((DateTimeParts { year: *year, month: *month, day: *day, ..Default::default() }, 0)),
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            let parts = DateTimeParts { year: *year, month: *month, day: *day, hour: *hour, minute: *minute, second: *second, micros: 0 };
            Some((parts, u64::from(*micros)))
        }
        Value::Timestamp { .. } => match timestamp_local(value, zone) {
            Value::DateTime { year, month, day, hour, minute, second, micros } => {
                Some((DateTimeParts { year, month, day, hour, minute, second, micros: 0 }, u64::from(micros)))
            }
            _ => None,
        },
        Value::Int(0) | Value::UInt(0) => Some((DateTimeParts::default(), 0)),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) | Value::Float(_) => parse_datetime_text(&text(value)),
        Value::Bytes(bytes) => parse_datetime_text(std::str::from_utf8(bytes).ok()?),
        Value::Time { .. } | Value::Json(_) | Value::Null => None,
    }
}

/// A TIMESTAMP as a DATETIME in `zone` (`0000-00-00 00:00:00` for the zero
/// timestamp); other values as they are.
pub fn timestamp_local(value: &Value, zone: TimeZone) -> Value {
    let Value::Timestamp { seconds, micros } = value else { return value.clone() };
    if *seconds == 0 {
        return DateTimeParts { micros: *micros, ..Default::default() }.value(true);
    }
    let local = (i64::from(*seconds) + i64::from(zone.offset_seconds)) * MICROS_PER_SECOND + i64::from(*micros);
    parts_of_epoch_micros(local).map_or(Value::Null, |parts| parts.value(true))
}

/// TIME's parts as a signed count of microseconds.
pub(crate) fn time_micros(value: &Value) -> Option<i64> {
    let Value::Time { negative, hours, minute, second, micros } = value else { return None };
    let magnitude = (i64::from(*hours) * 3600 + i64::from(*minute) * 60 + i64::from(*second)) * MICROS_PER_SECOND + i64::from(*micros);
    Some(if *negative { -magnitude } else { magnitude })
}

pub(crate) fn time_value(micros: i64) -> Value {
    let magnitude = micros.unsigned_abs();
    let seconds = magnitude / 1_000_000;
    Value::Time {
        negative: micros < 0,
        hours: (seconds / 3600) as u16,
        minute: (seconds / 60 % 60) as u8,
        second: (seconds % 60) as u8,
        micros: (magnitude % 1_000_000) as u32,
    }
}

/// MySQL's TIME literals: `[-][D ]hh:mm[:ss[.ffffff]]`, `[-]hhmmss[.ffffff]`
/// (also `mmss` and `ss`), and a datetime's time of day. Returns signed
/// microseconds, unrounded past the sixth digit (`None`: not a time).
fn parse_time_text(text: &str) -> Option<(i64, u64)> {
    let text = text.trim();
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, text),
    };
    let (whole, fraction) = match body.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (body, None),
    };
    let sub_micros = match fraction {
        None => 0,
        Some(digits) => fraction_micros(digits)?,
    };
    let seconds: u64 = if whole.contains(':') {
        let (days, clock) = match whole.split_once(' ') {
            Some((days, clock)) if !days.is_empty() && days.bytes().all(|b| b.is_ascii_digit()) => {
                (days.parse::<u64>().ok()?, clock.trim())
            }
            Some(_) => {
                // A datetime: its time of day.
                let (parts, micros) = parse_datetime_text(text)?;
                let seconds = i64::from(parts.hour) * 3600 + i64::from(parts.minute) * 60 + i64::from(parts.second);
                return Some((seconds * MICROS_PER_SECOND, micros));
            }
            None => (0, whole),
        };
        let fields: Vec<&str> = clock.split(':').collect();
        if fields.len() > 3 || fields.iter().any(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
            return None;
        }
        let number = |index: usize| fields.get(index).map_or(Some(0), |f| f.parse::<u64>().ok());
        let (hours, minutes, seconds) = (number(0)?, number(1)?, number(2)?);
        if minutes > 59 || seconds > 59 {
            return None;
        }
        days.checked_mul(24)?.checked_add(hours)?.checked_mul(3600)? + minutes * 60 + seconds
    } else if let Some((days, hours)) = whole.split_once(' ') {
        let (days, hours): (u64, u64) = (days.trim().parse().ok()?, hours.trim().parse().ok()?);
        (days * 24 + hours) * 3600
    } else {
        if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || whole.len() > 12 {
            return None;
        }
        let number: u64 = whole.parse().ok()?;
        let (hours, minutes, seconds) = (number / 10_000, number / 100 % 100, number % 100);
        if minutes > 59 || seconds > 59 {
            return None;
        }
        hours * 3600 + minutes * 60 + seconds
    };
    let whole_micros = i64::try_from(seconds.checked_mul(1_000_000)?).ok()?;
    Some((if negative { -whole_micros } else { whole_micros }, sub_micros))
}

pub(crate) fn time_parts(value: &Value) -> Option<(i64, u64)> {
    match value {
        Value::Time { .. } => time_micros(value).map(split_sub),
        Value::DateTime { hour, minute, second, micros, .. } => {
            Some(((i64::from(*hour) * 3600 + i64::from(*minute) * 60 + i64::from(*second)) * MICROS_PER_SECOND, u64::from(*micros)))
        }
        Value::Date { .. } => Some((0, 0)),
        Value::Null | Value::Timestamp { .. } => None,
        Value::Bytes(bytes) => parse_time_text(std::str::from_utf8(bytes).ok()?),
        other => parse_time_text(&text(other)),
    }
}

/// A signed microsecond count as (whole seconds in microseconds, the
/// fraction's microseconds) with the fraction carrying the sign's magnitude.
fn split_sub(micros: i64) -> (i64, u64) {
    let whole = micros / MICROS_PER_SECOND * MICROS_PER_SECOND;
    (whole, (micros - whole).unsigned_abs())
}

/// MySQL's message for a value a strict write refuses.
fn incorrect(kind: &str, shown: &str, column: &str, row: u64) -> protocol::MysqlError {
    protocol::MysqlError::new(1292, "22007", format!("Incorrect {kind} value: '{shown}' for column '{column}' at row {row}"))
}

/// The warning (non-strict) for a problem.
fn warning(problem: Problem, column: &str, row: u64) -> Warning {
    match problem {
        Problem::Garbage => Warning { level: "Warning", code: 1265, message: format!("Data truncated for column '{column}' at row {row}") },
        Problem::OutOfRange => {
            Warning { level: "Warning", code: 1264, message: format!("Out of range value for column '{column}' at row {row}") }
        }
    }
}

/// `value` made fit for a DATE, DATETIME, TIMESTAMP, TIME or YEAR
/// `column`; `None` for any other column. Warnings of a non-strict write go
/// to `warnings`.
pub fn coerce_temporal(column: &ColumnDef, value: &Value, rules: WriteRules, warnings: &mut Vec<Warning>) -> Option<SqlResult<Value>> {
    let kind = match column.column_type {
        ColumnType::Date => "date",
        ColumnType::DateTime2 { .. } | ColumnType::Timestamp2 { .. } => "datetime",
        ColumnType::Time2 { .. } => "time",
        ColumnType::Year => return Some(coerce_year(column, value, rules, warnings)),
        _ => return None,
    };
    if matches!(value, Value::Null) {
        return Some(Ok(Value::Null));
    }
    let fitted = match column.column_type {
        ColumnType::Time2 { fsp } => fit_time(value, fsp),
        ColumnType::Date => fit_datetime(value, 0, rules).map(|(parts, _)| parts.value(false)),
        ColumnType::DateTime2 { fsp } => fit_datetime(value, fsp, rules).map(|(parts, _)| parts.value(true)),
        ColumnType::Timestamp2 { fsp } => fit_timestamp(value, fsp, rules),
        _ => return None,
    };
    Some(match fitted {
        Ok(value) => Ok(value),
        Err((problem, fallback)) => {
            let fallback = match (&column.column_type, fallback) {
                (ColumnType::Date, Value::DateTime { year, month, day, .. }) => Value::Date { year, month, day },
                (_, fallback) => fallback,
            };
            if rules.mode.strict {
                Err(incorrect(kind, &shown(value, rules.zone), &column.name, rules.row))
            } else {
                warnings.push(warning(problem, &column.name, rules.row));
                Ok(fallback)
            }
        }
    })
}

fn shown(value: &Value, zone: TimeZone) -> String {
    String::from_utf8_lossy(&to_text(&timestamp_local(value, zone))).into_owned()
}

type Fitted<T> = Result<T, (Problem, Value)>;

fn fit_datetime(value: &Value, fsp: u8, rules: WriteRules) -> Fitted<(DateTimeParts, bool)> {
    let zero = |problem| (problem, DateTimeParts::default().value(fsp > 0 || !matches!(value, Value::Date { .. })));
    let Some((parts, micros)) = datetime_parts(value, rules.zone) else { return Err(zero(Problem::Garbage)) };
    let parts = rounded(parts, micros, fsp);
    match check_date(&parts, rules.mode) {
        Ok(()) => Ok((parts, true)),
        Err(problem) => {
            // A zero date the mode forbids is still stored when not strict.
            let keeps = parts.is_zero_date() || parts.month == 0 || parts.day == 0;
            let fallback = if keeps && parts.month <= 12 && parts.day <= 31 { parts } else { DateTimeParts::default() };
            Err((problem, fallback.value(true)))
        }
    }
}

fn fit_timestamp(value: &Value, fsp: u8, rules: WriteRules) -> Fitted<Value> {
    let zero = Value::Timestamp { seconds: 0, micros: 0 };
    let (parts, _) = fit_datetime(value, fsp, rules).map_err(|(problem, _)| (problem, zero.clone()))?;
    if parts.is_zero_date() && parts == DateTimeParts::default() {
        return Ok(zero);
    }
    let Some(local) = epoch_micros(&parts) else { return Err((Problem::OutOfRange, zero)) };
    let utc = local - i64::from(rules.zone.offset_seconds) * MICROS_PER_SECOND;
    let seconds = utc.div_euclid(MICROS_PER_SECOND);
    if !(1..=TIMESTAMP_SECONDS_MAX).contains(&seconds) {
        return Err((Problem::OutOfRange, zero));
    }
    Ok(Value::Timestamp { seconds: seconds as u32, micros: utc.rem_euclid(MICROS_PER_SECOND) as u32 })
}

fn fit_time(value: &Value, fsp: u8) -> Fitted<Value> {
    let Some((whole, sub)) = time_parts(value) else { return Err((Problem::Garbage, time_value(0))) };
    let (sub, carry) = round_micros(sub, fsp);
    let magnitude = whole.abs() + i64::from(carry) * MICROS_PER_SECOND + i64::from(sub);
    let micros = if whole < 0 || (whole == 0 && text_is_negative(value)) { -magnitude } else { magnitude };
    let limit = TIME_SECONDS_MAX * MICROS_PER_SECOND;
    if micros.abs() > limit {
        return Err((Problem::OutOfRange, time_value(micros.signum() * limit)));
    }
    Ok(time_value(micros))
}

/// A TIME whose whole seconds are zero keeps the sign of its text
/// (`'-00:00:00.5'`).
fn text_is_negative(value: &Value) -> bool {
    match value {
        Value::Time { negative, .. } => *negative,
        Value::Bytes(bytes) => bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'-'),
        Value::Int(v) => *v < 0,
        Value::Decimal(text) => text.starts_with('-'),
        Value::Double(v) => *v < 0.0,
        Value::Float(v) => *v < 0.0,
        _ => false,
    }
}

/// YEAR as `Field_year::store` takes it: numbers 0 (`0000`), 1..=69
/// (20xx), 70..=99 (19xx), 1901..=2155; text the same except that `'0'`
/// and `'00'` are 2000 and only `'0000'` is the zero year.
fn coerce_year(column: &ColumnDef, value: &Value, rules: WriteRules, warnings: &mut Vec<Warning>) -> SqlResult<Value> {
    let out_of_range = |warnings: &mut Vec<Warning>| {
        if rules.mode.strict {
            Err(protocol::MysqlError::new(1264, "22003", format!("Out of range value for column '{}' at row {}", column.name, rules.row)))
        } else {
            warnings.push(warning(Problem::OutOfRange, &column.name, rules.row));
            Ok(Value::Int(0))
        }
    };
    let (number, text_length) = match value {
        Value::Null => return Ok(Value::Null),
        Value::Int(v) => (i128::from(*v), None),
        Value::UInt(v) => (i128::from(*v), None),
        Value::Float(_) | Value::Double(_) | Value::Decimal(_) => {
            let number = crate::eval::value::to_number(value).map_or(0.0, |n| n.as_f64()).round();
            if !number.is_finite() || number.abs() > 1e9 {
                return out_of_range(warnings);
            }
            (number as i128, None)
        }
        Value::Date { year, .. } | Value::DateTime { year, .. } => (i128::from(*year), None),
        other => {
            let shown = text(other);
            let trimmed = shown.trim();
            let digits = trimmed.strip_prefix(['+', '-']).unwrap_or(trimmed);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                let message = format!("Incorrect integer value: '{shown}' for column '{}' at row {}", column.name, rules.row);
                if rules.mode.strict {
                    return Err(protocol::MysqlError::new(1366, "HY000", message));
                }
                warnings.push(Warning { level: "Warning", code: 1366, message });
                return Ok(Value::Int(0));
            }
            (trimmed.parse::<i128>().unwrap_or(i128::MAX), Some(trimmed.len()))
        }
    };
    if number < 0 || (100..=1900).contains(&number) || number > i128::from(YEAR_MAX) {
        return out_of_range(warnings);
    }
    let year = match (number, text_length) {
        (0, None) | (0, Some(4)) => 0,
        (0..=69, _) => 2000 + number,
        (70..=99, _) => 1900 + number,
        _ => number,
    };
    debug_assert!(year == 0 || (i128::from(YEAR_MIN)..=i128::from(YEAR_MAX)).contains(&year));
    Ok(Value::Int(year as i64))
}

/// The value of DEFAULT / ON UPDATE CURRENT_TIMESTAMP for `column` at the
/// statement's start: the column's precision, truncated as MySQL does.
pub fn current_timestamp_for(column: &ColumnDef, rules: WriteRules) -> Value {
    match column.column_type {
        ColumnType::Timestamp2 { fsp } => {
            let micros = truncate_micros(rules.now_micros, fsp);
            Value::Timestamp { seconds: micros.div_euclid(MICROS_PER_SECOND) as u32, micros: micros.rem_euclid(MICROS_PER_SECOND) as u32 }
        }
        ColumnType::DateTime2 { fsp } => local_now(rules.now_micros, rules.zone, fsp),
        _ => Value::Null,
    }
}

fn truncate_micros(micros: i64, fsp: u8) -> i64 {
    let unit = 10i64.pow(6 - u32::from(fsp.min(6)));
    micros - micros.rem_euclid(unit)
}

/// The statement's start in `zone` as a DATETIME of precision `fsp`.
fn local_now(now_micros: i64, zone: TimeZone, fsp: u8) -> Value {
    let local = truncate_micros(now_micros, fsp) + i64::from(zone.offset_seconds) * MICROS_PER_SECOND;
    parts_of_epoch_micros(local).map_or(Value::Null, |parts| parts.value(true))
}

/// How SHOW CREATE TABLE and SHOW COLUMNS print a column's DEFAULT value:
/// temporal values at the column's precision, a TIMESTAMP in `zone`, YEAR
/// with four digits; `None` when the column is not temporal.
pub fn default_text(column: &ColumnDef, value: &Value, zone: TimeZone) -> Option<String> {
    let local = timestamp_local(value, zone);
    Some(match (&column.column_type, &local) {
        (ColumnType::Year, Value::Int(year)) => format!("{year:04}"),
        (ColumnType::DateTime2 { fsp } | ColumnType::Timestamp2 { fsp }, Value::DateTime { .. }) => {
            wire_datetime(&local)?.to_text(true, *fsp)
        }
        (ColumnType::Time2 { fsp }, Value::Time { .. }) => text_at(&local, *fsp),
        (ColumnType::Date, _) => text(&local),
        _ => return None,
    })
}

fn text_at(value: &Value, fsp: u8) -> String {
    String::from_utf8_lossy(&crate::eval::value::to_wire(value).to_text(fsp).unwrap_or_default()).into_owned()
}

/// `CURRENT_TIMESTAMP` or `CURRENT_TIMESTAMP(fsp)` for a column's
/// precision, as SHOW CREATE TABLE prints it.
pub fn current_timestamp_text(column: &ColumnDef) -> String {
    match column.column_type {
        ColumnType::DateTime2 { fsp } | ColumnType::Timestamp2 { fsp } if fsp > 0 => format!("CURRENT_TIMESTAMP({fsp})"),
        _ => "CURRENT_TIMESTAMP".to_string(),
    }
}

/// `DATE 'x'`, `TIME 'x'`, `TIMESTAMP 'x'` (and `DATETIME 'x'`): the value
/// with the digits it was written with, or 1525 for text that is not one;
/// `None` for other typed literals.
pub fn typed_literal(data_type: &sqlparser::ast::DataType, value: &Value) -> Option<SqlResult<Value>> {
    use sqlparser::ast::DataType as D;
    let (column_type, name) = match data_type {
        D::Date => (ColumnType::Date, "DATE"),
        D::Time(..) => (ColumnType::Time2 { fsp: 6 }, "TIME"),
        D::Timestamp(..) | D::Datetime(_) => (ColumnType::DateTime2 { fsp: 6 }, "DATETIME"),
        _ => return None,
    };
    let rules = WriteRules { mode: SqlMode { strict: true, ..SqlMode::default() }, ..WriteRules::strict_utc() };
    let fitted = coerce_temporal(&ColumnDef::new("", column_type), value, rules, &mut Vec::new())?;
    Some(fitted.map_err(|_| protocol::MysqlError::new(1525, "HY000", format!("Incorrect {name} value: '{}'", text(value)))))
}

/// The current time in microseconds since the epoch.
pub fn clock_micros() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)
}

/// The fractional-second precision argument of NOW(fsp) and its kin:
/// 0 without one, 1426 past 6.
fn fsp_argument(name: &str, args: &[Value]) -> SqlResult<u8> {
    match args {
        [] => Ok(0),
        [value] => {
            let fsp = crate::eval::value::to_number(value).map_or(0.0, |n| n.as_f64());
            if !(0.0..=6.0).contains(&fsp) || fsp.fract() != 0.0 {
                return Err(protocol::MysqlError::new(
                    1426,
                    "42000",
                    format!("Too-big precision {} specified for '{}'. Maximum is 6.", text(value), name.to_ascii_lowercase()),
                ));
            }
            Ok(fsp as u8)
        }
        _ => Err(protocol::MysqlError::new(1582, "42000", format!("Incorrect parameter count in the call to native function '{name}'"))),
    }
}

/// NOW, CURRENT_TIMESTAMP, CURDATE, CURTIME, UTC_TIMESTAMP, UNIX_TIMESTAMP
/// and their synonyms, at the statement's start; `None` for other names.
pub fn function(name: &str, args: &[Value], environment: &dyn Environment) -> Option<SqlResult<Value>> {
    let now = environment.statement_time_micros();
    let zone = || TimeZone::of(environment);
    Some(match name {
        "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" | "SYSDATE" => {
            fsp_argument(name, args).map(|fsp| local_now(now, zone(), fsp))
        }
        "UTC_TIMESTAMP" => fsp_argument(name, args).map(|fsp| local_now(now, TimeZone::UTC, fsp)),
        "CURDATE" | "CURRENT_DATE" if args.is_empty() => Ok(match local_now(now, zone(), 0) {
            Value::DateTime { year, month, day, .. } => Value::Date { year, month, day },
            other => other,
        }),
        "CURTIME" | "CURRENT_TIME" => fsp_argument(name, args).map(|fsp| match local_now(now, zone(), fsp) {
            Value::DateTime { hour, minute, second, micros, .. } => {
                time_value((i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second)) * MICROS_PER_SECOND + i64::from(micros))
            }
            other => other,
        }),
        "UNIX_TIMESTAMP" => match args {
            [] => Ok(Value::Int(now.div_euclid(MICROS_PER_SECOND))),
            [Value::Null] => Ok(Value::Null),
            [value] => Ok(unix_timestamp(value, zone())),
            _ => return None,
        },
        _ => return None,
    })
}

/// UNIX_TIMESTAMP(expr): seconds since the epoch of a datetime in the
/// session's zone, with its fraction as a DECIMAL; 0 outside TIMESTAMP's
/// range.
fn unix_timestamp(value: &Value, zone: TimeZone) -> Value {
    if let Value::Timestamp { seconds, micros } = value {
        return seconds_value(i64::from(*seconds), *micros);
    }
    let rules = WriteRules { mode: SqlMode::default(), zone, now_micros: 0, row: 1 };
    match fit_timestamp(value, 6, rules) {
        Ok(Value::Timestamp { seconds, micros }) => seconds_value(i64::from(seconds), micros),
        _ => Value::Int(0),
    }
}

fn seconds_value(seconds: i64, micros: u32) -> Value {
    if micros == 0 {
        Value::Int(seconds)
    } else {
        Value::Decimal(format!("{seconds}.{micros:06}").trim_end_matches('0').to_string())
    }
}

/// MySQL's comparison where a TIME is involved: as signed durations (text
/// read as a TIME), not as text. `None` when neither side is a TIME.
pub fn compare_times(left: &Value, right: &Value) -> Option<Option<Ordering>> {
    if !matches!(left, Value::Time { .. }) && !matches!(right, Value::Time { .. }) {
        return None;
    }
    let micros = |value: &Value| {
        let (whole, sub) = time_parts(value)?;
        let sub = i64::try_from(sub).ok()?;
        Some(if whole < 0 || (whole == 0 && text_is_negative(value)) { whole - sub } else { whole + sub })
    };
    Some(match (micros(left), micros(right)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => None,
    })
}

/// MySQL's comparison where a DATE or DATETIME meets a date in text or a
/// number (`dt = '2024-01-01'` holds for midnight): both read as dates and
/// times. `None` when neither side is one, or the other side is no date
/// (then the caller compares as before).
pub fn compare_datetimes(left: &Value, right: &Value) -> Option<Ordering> {
    let is_datetime = |v: &Value| matches!(v, Value::Date { .. } | Value::DateTime { .. });
    let comparable = |v: &Value| is_datetime(v) || matches!(v, Value::Bytes(_) | Value::Int(_) | Value::UInt(_));
    if !(is_datetime(left) || is_datetime(right)) || !comparable(left) || !comparable(right) {
        return None;
    }
    let key = |value: &Value| {
        let (parts, micros) = datetime_parts(value, TimeZone::UTC)?;
        Some((parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second, micros))
    };
    Some(key(left)?.cmp(&key(right)?))
}

/// The `[(fsp)]` of a CURRENT_TIMESTAMP / NOW() used as a column's DEFAULT
/// or ON UPDATE; `None` when the expression is not one.
pub fn current_timestamp_precision(expr: &sqlparser::ast::Expr) -> Option<u8> {
    let sqlparser::ast::Expr::Function(function) = expr else { return None };
    let name = crate::eval::expr::function_name(function);
    if !matches!(name.as_str(), "CURRENT_TIMESTAMP" | "NOW" | "LOCALTIME" | "LOCALTIMESTAMP") {
        return None;
    }
    match crate::eval::expr::function_args(function).ok()?.as_slice() {
        [] => Some(0),
        [Some(sqlparser::ast::Expr::Value(value))] => match &value.value {
            sqlparser::ast::Value::Number(digits, _) => digits.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(column_type: ColumnType) -> ColumnDef {
        ColumnDef::new("c", column_type)
    }

    fn rules(mode: &str) -> WriteRules {
        WriteRules { mode: SqlMode::parse(mode), zone: TimeZone::UTC, now_micros: 0, row: 1 }
    }

    const STRICT: &str = "STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE";

    fn fit(column_type: ColumnType, input: &str, mode: &str) -> (SqlResult<Value>, Vec<Warning>) {
        let mut warnings = Vec::new();
        let value = coerce_temporal(&column(column_type), &Value::Bytes(input.as_bytes().to_vec()), rules(mode), &mut warnings).unwrap();
        (value, warnings)
    }

    fn time(negative: bool, hours: u16, minute: u8, second: u8, micros: u32) -> Value {
        Value::Time { negative, hours, minute, second, micros }
    }

    #[test]
    fn time_literals_follow_mysql() {
        let t0 = ColumnType::Time2 { fsp: 0 };
        let t3 = ColumnType::Time2 { fsp: 3 };
        assert_eq!(fit(t3.clone(), "12:34:56.789", STRICT).0, Ok(time(false, 12, 34, 56, 789_000)));
        assert_eq!(fit(t0.clone(), "12:34:56.789", STRICT).0, Ok(time(false, 12, 34, 57, 0)), "rounded");
        assert_eq!(fit(t0.clone(), "-838:59:59", STRICT).0, Ok(time(true, 838, 59, 59, 0)));
        assert_eq!(fit(t0.clone(), "1 02:03:04", STRICT).0, Ok(time(false, 26, 3, 4, 0)));
        assert_eq!(fit(t0.clone(), "123456", STRICT).0, Ok(time(false, 12, 34, 56, 0)));
        assert_eq!(fit(t0.clone(), "12:34", STRICT).0, Ok(time(false, 12, 34, 0, 0)));
        assert_eq!(fit(t3.clone(), "-00:00:00.5", STRICT).0, Ok(time(true, 0, 0, 0, 500_000)));
        assert_eq!(fit(t0.clone(), "2024-01-02 03:04:05", STRICT).0, Ok(time(false, 3, 4, 5, 0)));
        let refused = fit(t0.clone(), "839:00:00", STRICT).0.unwrap_err();
        assert_eq!((refused.code, refused.message.as_str()), (1292, "Incorrect time value: '839:00:00' for column 'c' at row 1"));
        let (clipped, warnings) = fit(t0.clone(), "-839:00:00", "");
        assert_eq!(clipped, Ok(time(true, 838, 59, 59, 0)));
        assert_eq!(warnings[0].code, 1264);
        let (zero, warnings) = fit(t0, "12:61:00", "");
        assert_eq!((zero, warnings[0].code), (Ok(time(false, 0, 0, 0, 0)), 1265));
        let mut warnings = Vec::new();
        let number = coerce_temporal(&column(t3), &Value::Int(-1234), rules(STRICT), &mut warnings).unwrap();
        assert_eq!(number, Ok(time(true, 0, 12, 34, 0)));
    }

    #[test]
    fn year_follows_field_year_store() {
        let year = |value: Value, mode: &str| {
            let mut warnings = Vec::new();
            coerce_temporal(&column(ColumnType::Year), &value, rules(mode), &mut warnings).unwrap().map(|v| (v, warnings.len()))
        };
        let text = |s: &str| Value::Bytes(s.as_bytes().to_vec());
        assert_eq!(year(Value::Int(0), STRICT), Ok((Value::Int(0), 0)));
        assert_eq!(year(text("0"), STRICT), Ok((Value::Int(2000), 0)));
        assert_eq!(year(text("00"), STRICT), Ok((Value::Int(2000), 0)));
        assert_eq!(year(text("0000"), STRICT), Ok((Value::Int(0), 0)));
        assert_eq!(year(text("70"), STRICT), Ok((Value::Int(1970), 0)));
        assert_eq!(year(Value::Int(69), STRICT), Ok((Value::Int(2069), 0)));
        assert_eq!(year(Value::Int(2155), STRICT), Ok((Value::Int(2155), 0)));
        assert_eq!(year(Value::Int(1901), STRICT), Ok((Value::Int(1901), 0)));
        assert_eq!(year(Value::Int(1900), STRICT).unwrap_err().code, 1264);
        assert_eq!(year(Value::Int(2156), "").unwrap(), (Value::Int(0), 1));
        assert_eq!(year(text("abc"), STRICT).unwrap_err().code, 1366);
    }

    #[test]
    fn dates_obey_sql_mode() {
        let date = ColumnType::Date;
        assert_eq!(fit(date.clone(), "2024-02-29", STRICT).0, Ok(Value::Date { year: 2024, month: 2, day: 29 }));
        assert_eq!(fit(date.clone(), "20240229", STRICT).0, Ok(Value::Date { year: 2024, month: 2, day: 29 }));
        assert_eq!(fit(date.clone(), "24/2/29", STRICT).0, Ok(Value::Date { year: 2024, month: 2, day: 29 }));
        let refused = fit(date.clone(), "2023-02-29", STRICT).0.unwrap_err();
        assert_eq!((refused.code, refused.message.as_str()), (1292, "Incorrect date value: '2023-02-29' for column 'c' at row 1"));
        assert_eq!(fit(date.clone(), "2023-02-29", "ALLOW_INVALID_DATES").0, Ok(Value::Date { year: 2023, month: 2, day: 29 }));
        assert_eq!(fit(date.clone(), "0000-00-00", STRICT).0.unwrap_err().code, 1292);
        assert_eq!(fit(date.clone(), "0000-00-00", "STRICT_TRANS_TABLES").0, Ok(Value::Date { year: 0, month: 0, day: 0 }));
        assert_eq!(fit(date.clone(), "2024-00-10", STRICT).0.unwrap_err().code, 1292);
        assert_eq!(fit(date.clone(), "2024-00-10", "STRICT_TRANS_TABLES").0, Ok(Value::Date { year: 2024, month: 0, day: 10 }));
        let (zero, warnings) = fit(date.clone(), "0000-00-00", "NO_ZERO_DATE");
        assert_eq!((zero, warnings[0].code), (Ok(Value::Date { year: 0, month: 0, day: 0 }), 1264));
        let (garbage, warnings) = fit(date, "soon", "");
        assert_eq!((garbage, warnings[0].code), (Ok(Value::Date { year: 0, month: 0, day: 0 }), 1265));
        let datetime = ColumnType::DateTime2 { fsp: 0 };
        let carried = fit(datetime, "2024-12-31 23:59:59.6", STRICT).0;
        assert_eq!(carried, Ok(Value::DateTime { year: 2025, month: 1, day: 1, hour: 0, minute: 0, second: 0, micros: 0 }));
    }

    #[test]
    fn timestamps_are_utc_inside_mysqls_range() {
        let ts = ColumnType::Timestamp2 { fsp: 6 };
        assert_eq!(fit(ts.clone(), "1970-01-01 00:00:01", STRICT).0, Ok(Value::Timestamp { seconds: 1, micros: 0 }));
        assert_eq!(
            fit(ts.clone(), "2038-01-19 03:14:07.999999", STRICT).0,
            Ok(Value::Timestamp { seconds: i32::MAX as u32, micros: 999_999 })
        );
        let refused = fit(ts.clone(), "1970-01-01 00:00:00", STRICT).0.unwrap_err();
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (1292, "Incorrect datetime value: '1970-01-01 00:00:00' for column 'c' at row 1")
        );
        assert_eq!(fit(ts.clone(), "2038-01-19 03:14:08", STRICT).0.unwrap_err().code, 1292);
        let mut warnings = Vec::new();
        let plus_two = WriteRules { zone: TimeZone::parse("+02:00").unwrap(), ..rules(STRICT) };
        let value = coerce_temporal(&column(ts), &Value::Bytes(b"1970-01-01 02:00:01".to_vec()), plus_two, &mut warnings).unwrap();
        assert_eq!(value, Ok(Value::Timestamp { seconds: 1, micros: 0 }));
        assert_eq!(
            timestamp_local(&Value::Timestamp { seconds: 1, micros: 0 }, plus_two.zone),
            Value::DateTime { year: 1970, month: 1, day: 1, hour: 2, minute: 0, second: 1, micros: 0 }
        );
    }

    #[test]
    fn time_zones_are_system_utc_or_offsets() {
        assert_eq!(TimeZone::parse("SYSTEM"), Ok(TimeZone::UTC));
        assert_eq!(TimeZone::parse("+00:00"), Ok(TimeZone::UTC));
        assert_eq!(TimeZone::parse("-5:30").unwrap().offset_seconds, -(5 * 3600 + 1800));
        assert_eq!(TimeZone::parse("+14:00").unwrap().offset_seconds, 14 * 3600);
        for bad in ["+14:01", "-14:00", "Europe/Paris", "+1:5", "05:00"] {
            let error = TimeZone::parse(bad).unwrap_err();
            assert_eq!((error.code, error.message), (1298, format!("Unknown or incorrect time zone: '{bad}'")));
        }
    }

    #[test]
    fn datetimes_compare_with_dates_in_text_and_numbers() {
        let midnight = Value::DateTime { year: 2024, month: 1, day: 1, hour: 0, minute: 0, second: 0, micros: 0 };
        let t = |s: &str| Value::Bytes(s.as_bytes().to_vec());
        assert_eq!(compare_datetimes(&midnight, &t("2024-01-01")), Some(Ordering::Equal));
        assert_eq!(compare_datetimes(&midnight, &Value::Int(20240101)), Some(Ordering::Equal));
        assert_eq!(compare_datetimes(&t("2023-12-31 23:59:59.5"), &midnight), Some(Ordering::Less));
        assert_eq!(compare_datetimes(&Value::Date { year: 2024, month: 1, day: 2 }, &midnight), Some(Ordering::Greater));
        assert_eq!(compare_datetimes(&midnight, &t("not a date")), None);
        assert_eq!(compare_datetimes(&t("a"), &t("b")), None);
    }

    #[test]
    fn times_compare_as_durations() {
        let t = |s: &str| Value::Bytes(s.as_bytes().to_vec());
        assert_eq!(compare_times(&time(true, 1, 0, 0, 0), &t("00:00:00")), Some(Some(Ordering::Less)));
        assert_eq!(compare_times(&time(false, 100, 0, 0, 0), &t("99:00:00")), Some(Some(Ordering::Greater)));
        assert_eq!(compare_times(&time(false, 12, 34, 56, 0), &t("12:34:56")), Some(Some(Ordering::Equal)));
        assert_eq!(compare_times(&t("1"), &t("2")), None);
    }
}
