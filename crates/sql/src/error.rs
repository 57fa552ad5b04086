//! Errors as the client sees them: MySQL's codes, SQLSTATEs and texts.

use protocol::MysqlError;

pub type SqlResult<T> = Result<T, MysqlError>;

pub fn engine_error(error: engine::EngineError) -> MysqlError {
    let message = error.to_string();
    MysqlError::new(error.mysql_code(), error.sqlstate(), message)
}

pub fn database_error(error: database::DatabaseError) -> MysqlError {
    MysqlError::new(error.mysql_code(), error.sqlstate(), error.to_string())
}

/// 1235 ER_NOT_SUPPORTED_YET, for what binlogd recognises but does not do.
pub fn not_supported(what: impl AsRef<str>) -> MysqlError {
    MysqlError::new(1235, "42000", format!("This version of MySQL doesn't yet support '{}'", what.as_ref()))
}

/// 1064 ER_PARSE_ERROR.
pub fn syntax_error(near: &str) -> MysqlError {
    protocol::syntax_error_near(near)
}

/// 1046 ER_NO_DB_ERROR.
pub fn no_database() -> MysqlError {
    MysqlError::new(1046, "3D000", "No database selected")
}

/// 1049 ER_BAD_DB_ERROR.
pub fn unknown_database(name: &str) -> MysqlError {
    MysqlError::new(1049, "42000", format!("Unknown database '{name}'"))
}

/// 1054 ER_BAD_FIELD_ERROR.
pub fn unknown_column(column: &str, context: &str) -> MysqlError {
    MysqlError::new(1054, "42S22", format!("Unknown column '{column}' in '{context}'"))
}

/// 1193 ER_UNKNOWN_SYSTEM_VARIABLE.
pub fn unknown_variable(name: &str) -> MysqlError {
    MysqlError::new(1193, "HY000", format!("Unknown system variable '{name}'"))
}

/// 1582 ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT: a built-in function called
/// with the wrong number of arguments.
pub fn wrong_argument_count(function: &str) -> MysqlError {
    MysqlError::new(1582, "42000", format!("Incorrect parameter count in the call to native function '{function}'"))
}

/// 1231 ER_WRONG_VALUE_FOR_VAR.
pub fn wrong_value_for_variable(name: &str, value: &str) -> MysqlError {
    MysqlError::new(1231, "42000", format!("Variable '{name}' can't be set to the value of '{value}'"))
}

/// 1366 for text its column's character set cannot hold: MySQL prints
/// (`convert_to_printable`) the first 6 bytes from the first such
/// character, printable ASCII as itself and the others as `\xHH`, and
/// `...` when more follow.
pub fn incorrect_string_value(bytes: &[u8], column: &str) -> MysqlError {
    const PRINTED_BYTES_MAX: usize = 6;
    let mut printed = String::new();
    for &byte in bytes.iter().take(PRINTED_BYTES_MAX) {
        match byte {
            0x20..=0x7F => printed.push(byte as char),
            _ => printed.push_str(&format!("\\x{byte:02X}")),
        }
    }
    if bytes.len() > PRINTED_BYTES_MAX {
        printed.push_str("...");
    }
    incorrect_value("string", &printed, column)
}

/// 1366 ER_TRUNCATED_WRONG_VALUE_FOR_FIELD.
pub fn incorrect_value(kind: &str, value: &str, column: &str) -> MysqlError {
    MysqlError::new(1366, "HY000", format!("Incorrect {kind} value: '{value}' for column '{column}' at row 1"))
}

/// 1264 ER_WARN_DATA_OUT_OF_RANGE (an error in strict mode).
pub fn out_of_range(column: &str) -> MysqlError {
    MysqlError::new(1264, "22003", format!("Out of range value for column '{column}' at row 1"))
}

/// 1406 ER_DATA_TOO_LONG (an error in strict mode).
pub fn data_too_long(column: &str) -> MysqlError {
    MysqlError::new(1406, "22001", format!("Data too long for column '{column}' at row 1"))
}

/// 1136 ER_WRONG_VALUE_COUNT_ON_ROW.
pub fn value_count(row: usize) -> MysqlError {
    MysqlError::new(1136, "21S01", format!("Column count doesn't match value count at row {row}"))
}

/// 1364 ER_NO_DEFAULT_FOR_FIELD.
pub fn no_default(column: &str) -> MysqlError {
    MysqlError::new(1364, "HY000", format!("Field '{column}' doesn't have a default value"))
}

/// 1227 ER_SPECIFIC_ACCESS_DENIED_ERROR.
pub fn access_denied(privilege: &str) -> MysqlError {
    MysqlError::new(1227, "42000", format!("Access denied; you need (at least one of) the {privilege} privilege(s) for this operation"))
}

/// 1690 ER_DATA_OUT_OF_RANGE for arithmetic.
pub fn arithmetic_out_of_range(expression: &str) -> MysqlError {
    MysqlError::new(1690, "22003", format!("BIGINT value is out of range in '{expression}'"))
}

/// 1690 for a BIGINT UNSIGNED result (an unsigned operand).
pub fn unsigned_arithmetic_out_of_range(expression: &str) -> MysqlError {
    MysqlError::new(1690, "22003", format!("BIGINT UNSIGNED value is out of range in '{expression}'"))
}
