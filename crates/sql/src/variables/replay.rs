//! The session variables `mysqlbinlog` and `mariadb-binlog` print before
//! the statements they replay, in the forms they print them: `sql_mode`
//! as MySQL's bit mask, collations and character sets by id,
//! `lc_time_names` and `completion_type` by number. Also which of them
//! only an administrator may set (MySQL's restricted session variables),
//! the values binlogd refuses because it does not do what they ask, and
//! the session clock `SET TIMESTAMP` sets.

use std::collections::HashMap;

use binlog::GivenGtid;
use binlog_format::Gtid;
use protocol::MysqlError;

use crate::error::{not_supported, wrong_value_for_variable, SqlResult};
use crate::eval::value::{text, to_number, Number, Value};

/// MySQL 8.4's `sql_mode` bits and their names (`sql_mode_names`); the
/// bits it no longer uses (8–17, 28: modes of older servers) mean nothing
/// and are dropped, as MySQL drops them.
const SQL_MODE_BITS: &[(u32, &str)] = &[
    (0, "REAL_AS_FLOAT"),
    (1, "PIPES_AS_CONCAT"),
    (2, "ANSI_QUOTES"),
    (3, "IGNORE_SPACE"),
    (5, "ONLY_FULL_GROUP_BY"),
    (6, "NO_UNSIGNED_SUBTRACTION"),
    (7, "NO_DIR_IN_CREATE"),
    (18, "ANSI"),
    (19, "NO_AUTO_VALUE_ON_ZERO"),
    (20, "NO_BACKSLASH_ESCAPES"),
    (21, "STRICT_TRANS_TABLES"),
    (22, "STRICT_ALL_TABLES"),
    (23, "NO_ZERO_IN_DATE"),
    (24, "NO_ZERO_DATE"),
    (25, "ALLOW_INVALID_DATES"),
    (26, "ERROR_FOR_DIVISION_BY_ZERO"),
    (27, "TRADITIONAL"),
    (29, "HIGH_NOT_PRECEDENCE"),
    (30, "NO_ENGINE_SUBSTITUTION"),
    (31, "PAD_CHAR_TO_FULL_LENGTH"),
    (32, "TIME_TRUNCATE_FRACTIONAL"),
];

/// The highest bit MySQL 8.4's `sql_mode` has; a number with a higher one is 1231.
const SQL_MODE_BIT_MAX: u32 = 32;

/// `completion_type` by number, as `SET COMPLETION_TYPE=0` gives it.
const COMPLETION_TYPES: &[&str] = &["NO_CHAIN", "CHAIN", "RELEASE"];

/// MySQL's UNDEFINED_COMMIT_TIMESTAMP and UNDEFINED_SERVER_VERSION: the
/// session did not set `original_commit_timestamp` / `original_server_version`.
const UNDEFINED_COMMIT_TIMESTAMP: u64 = 1 << 55;
const UNDEFINED_SERVER_VERSION: u64 = 999_999;

/// The latest session clock MySQL 8.4 accepts (`SET TIMESTAMP`): 3001-01-18 23:59:59.999999 UTC.
const TIMESTAMP_MICROS_MAX: i64 = 32_536_771_199_999_999;

/// Restricted session variables: setting them even for the session takes
/// SYSTEM_VARIABLES_ADMIN (or SUPER), as in MySQL, because they change
/// what the binlog records.
pub fn needs_administrator(name: &str) -> bool {
    matches!(
        name,
        "pseudo_slave_mode"
            | "pseudo_replica_mode"
            | "pseudo_thread_id"
            | "original_commit_timestamp"
            | "original_server_version"
            | "immediate_server_version"
            | "default_collation_for_utf8mb4"
            | "default_table_encryption"
            | "explicit_defaults_for_timestamp"
            | "sql_require_primary_key"
    )
}

/// `value` in the form the variable stores, when a binlog client printed
/// it by number; anything else unchanged.
pub fn from_printed_form(name: &str, value: Value) -> SqlResult<Value> {
    let Some(Number::Int(number)) = number_of(&value) else { return Ok(value) };
    let shown = text(&value);
    let words = |word: &str| Value::Bytes(word.as_bytes().to_vec());
    match name {
        "sql_mode" => sql_mode_names(number).map(|names| words(&names)).ok_or_else(|| wrong_value_for_variable(name, &shown)),
        "collation_connection" | "collation_database" | "collation_server" | "default_collation_for_utf8mb4" => {
            collation(number).map(|(collation, _)| words(collation)).ok_or_else(|| crate::charsets::unknown_collation(&shown))
        }
        "character_set_client"
        | "character_set_connection"
        | "character_set_database"
        | "character_set_results"
        | "character_set_server" => {
            collation(number).map(|(_, charset)| words(charset)).ok_or_else(|| crate::charsets::unknown_character_set(&shown))
        }
        "lc_time_names" if number == 0 => Ok(words("en_US")),
        "lc_time_names" => Err(unknown_locale(&shown)),
        "completion_type" => usize::try_from(number)
            .ok()
            .and_then(|index| COMPLETION_TYPES.get(index))
            .map(|word| words(word))
            .ok_or_else(|| wrong_value_for_variable(name, &shown)),
        _ => Ok(value),
    }
}

/// 1235 for a value binlogd accepts the name of but does not implement,
/// so a replay that depends on it stops instead of silently differing.
pub fn refuse_unimplemented(name: &str, value: &Value) -> SqlResult<()> {
    let shown = text(value);
    let on = *value == Value::Int(1);
    let refused = match name {
        "completion_type" => shown != "NO_CHAIN",
        "rbr_exec_mode" => shown != "STRICT",
        "lc_time_names" => !shown.eq_ignore_ascii_case("en_US"),
        "default_table_encryption" | "sql_auto_is_null" | "sql_require_primary_key" | "system_versioning_insert_history" => on,
        "explicit_defaults_for_timestamp" => !on,
        _ => false,
    };
    if refused {
        return Err(not_supported(format!("{name} = {}", crate::variables::shown(crate::variables::definition(name).unwrap(), value))));
    }
    Ok(())
}

/// The canonical spelling a stored value takes (`en_us` is `en_US`).
pub fn canonical(name: &str, value: Value) -> Value {
    match name {
        "lc_time_names" if text(&value).eq_ignore_ascii_case("en_US") => Value::Bytes(b"en_US".to_vec()),
        "sql_mode" => Value::Bytes(text(&value).to_ascii_uppercase().into_bytes()),
        _ => value,
    }
}

/// `SET TIMESTAMP = value`: the session clock as MySQL shows it
/// (`@@timestamp`, seconds with six decimals), or `None` for 0, which
/// gives the real clock back.
pub fn session_timestamp(value: &Value) -> SqlResult<Option<Value>> {
    let micros = match number_of(value) {
        Some(Number::Int(seconds)) => seconds.checked_mul(1_000_000),
        Some(Number::Float(seconds)) if seconds.is_finite() => Some((seconds * 1e6).round() as i128),
        _ => None,
    };
    let micros = micros.and_then(|micros| i64::try_from(micros).ok());
    match micros {
        Some(0) => Ok(None),
        Some(micros) if (1..=TIMESTAMP_MICROS_MAX).contains(&micros) => {
            Ok(Some(Value::Decimal(format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000))))
        }
        _ => Err(wrong_value_for_variable("timestamp", &text(value))),
    }
}

/// The session clock in microseconds since the epoch: `SET TIMESTAMP`'s
/// value, else the real clock.
pub fn session_clock_micros(variables: &HashMap<&'static str, Value>) -> i64 {
    match variables.get("timestamp").and_then(to_number) {
        Some(Number::Float(seconds)) => (seconds * 1e6).round() as i64,
        Some(Number::Int(seconds)) if seconds > 0 => (seconds * 1_000_000) as i64,
        _ => crate::eval::temporal::clock_micros(),
    }
}

/// `pseudo_thread_id` when the session set one: the connection id its
/// statements are logged with and CONNECTION_ID() returns.
pub fn pseudo_thread_id(variables: &HashMap<&'static str, Value>) -> Option<u32> {
    match variables.get("pseudo_thread_id") {
        Some(Value::Int(id)) => u32::try_from(*id).ok().filter(|id| *id != 0),
        Some(Value::UInt(id)) => u32::try_from(*id).ok().filter(|id| *id != 0),
        _ => None,
    }
}

/// The GTID a session commits with under `SET gtid_next = 'uuid:n'`,
/// with the original commit timestamp and server version the session set
/// (mysqlbinlog prints them before each GTID), as MySQL logs them.
pub fn given_gtid(gtid: Gtid, variables: &HashMap<&'static str, Value>) -> GivenGtid {
    let number = |name: &str| match variables.get(name) {
        Some(Value::Int(value)) => u64::try_from(*value).ok(),
        Some(Value::UInt(value)) => Some(*value),
        _ => None,
    };
    let original_commit_timestamp_us = number("original_commit_timestamp").filter(|us| *us != UNDEFINED_COMMIT_TIMESTAMP);
    let original_server_version =
        number("original_server_version").filter(|version| *version != UNDEFINED_SERVER_VERSION).and_then(|v| u32::try_from(v).ok());
    GivenGtid { gtid, original_commit_timestamp_us, original_server_version }
}

/// A number given as a number, or as its digits in text.
fn number_of(value: &Value) -> Option<Number> {
    match value {
        Value::Bytes(bytes) if !bytes.is_empty() && bytes.iter().all(u8::is_ascii_digit) => to_number(value),
        Value::Bytes(_) | Value::Null => None,
        other => to_number(other),
    }
}

/// The names of `bits` in MySQL's order, or `None` past its highest mode.
fn sql_mode_names(bits: i128) -> Option<String> {
    if bits < 0 || bits >> (SQL_MODE_BIT_MAX + 1) != 0 {
        return None;
    }
    let names: Vec<&str> = SQL_MODE_BITS.iter().filter(|(bit, _)| bits >> bit & 1 == 1).map(|(_, name)| *name).collect();
    Some(names.join(","))
}

fn collation(id: i128) -> Option<(&'static str, &'static str)> {
    let collation = crate::charsets::collation_by_id(u16::try_from(id).ok()?)?;
    Some((collation.name, collation.charset))
}

/// 1649 ER_UNKNOWN_LOCALE.
fn unknown_locale(name: &str) -> MysqlError {
    MysqlError::new(1649, "HY000", format!("Unknown locale: '{name}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    #[test]
    fn sql_mode_bits_are_mysqls() {
        // MySQL 8.4's default, as mysqlbinlog prints it.
        assert_eq!(
            from_printed_form("sql_mode", Value::Int(1_168_113_696)).unwrap(),
            bytes("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION")
        );
        // MySQL 5.7's default: NO_AUTO_CREATE_USER (bit 28) is gone.
        assert_eq!(
            from_printed_form("sql_mode", Value::Int(1_436_549_152)).unwrap(),
            from_printed_form("sql_mode", Value::Int(1_168_113_696)).unwrap()
        );
        // What binlogd's own Query events carry is its default sql_mode.
        let logged = i64::try_from(binlog_format::events::query::DEFAULT_SQL_MODE).unwrap();
        let default = crate::variables::definition("sql_mode").unwrap().default_text();
        assert_eq!(from_printed_form("sql_mode", Value::Int(logged)).unwrap(), bytes(&default));
        assert_eq!(from_printed_form("sql_mode", Value::Int(0)).unwrap(), bytes(""));
        assert_eq!(from_printed_form("sql_mode", Value::Int(1 << 33)).unwrap_err().code, 1231);
        assert_eq!(from_printed_form("sql_mode", bytes("ANSI_QUOTES")).unwrap(), bytes("ANSI_QUOTES"));
    }

    #[test]
    fn collations_and_charsets_by_id() {
        assert_eq!(from_printed_form("collation_connection", Value::Int(45)).unwrap(), bytes("utf8mb4_general_ci"));
        assert_eq!(from_printed_form("collation_server", Value::Int(255)).unwrap(), bytes("utf8mb4_0900_ai_ci"));
        assert_eq!(from_printed_form("character_set_client", Value::Int(255)).unwrap(), bytes("utf8mb4"));
        assert_eq!(from_printed_form("character_set_client", bytes("utf8mb4")).unwrap(), bytes("utf8mb4"));
        let unknown = from_printed_form("collation_connection", Value::Int(9999)).unwrap_err();
        assert_eq!((unknown.code, unknown.message.as_str()), (1273, "Unknown collation: '9999'"));
        assert_eq!(from_printed_form("character_set_client", Value::Int(9999)).unwrap_err().code, 1115);
        assert_eq!(from_printed_form("lc_time_names", Value::Int(0)).unwrap(), bytes("en_US"));
        assert_eq!(from_printed_form("lc_time_names", Value::Int(500)).unwrap_err().code, 1649);
        assert_eq!(from_printed_form("completion_type", Value::Int(0)).unwrap(), bytes("NO_CHAIN"));
    }

    #[test]
    fn the_session_clock_takes_seconds_with_microseconds() {
        assert_eq!(session_timestamp(&Value::Int(1_796_159_474)).unwrap(), Some(Value::Decimal("1796159474.000000".into())));
        assert_eq!(
            session_timestamp(&Value::Decimal("1700000000.123456".into())).unwrap(),
            Some(Value::Decimal("1700000000.123456".into()))
        );
        assert_eq!(session_timestamp(&Value::Int(0)).unwrap(), None);
        assert_eq!(session_timestamp(&Value::Int(-1)).unwrap_err().code, 1231);
        let mut variables = HashMap::new();
        variables.insert("timestamp", Value::Decimal("1700000000.123456".into()));
        assert_eq!(session_clock_micros(&variables), 1_700_000_000_123_456);
    }

    #[test]
    fn unimplemented_values_are_refused() {
        assert_eq!(refuse_unimplemented("sql_auto_is_null", &Value::Int(1)).unwrap_err().code, 1235);
        assert!(refuse_unimplemented("sql_auto_is_null", &Value::Int(0)).is_ok());
        assert_eq!(refuse_unimplemented("rbr_exec_mode", &bytes("IDEMPOTENT")).unwrap_err().code, 1235);
        assert!(refuse_unimplemented("lc_time_names", &bytes("en_US")).is_ok());
    }
}
