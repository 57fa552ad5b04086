//! [`DatabaseError`]: every failure of the database layer, wrapping the
//! engine's, the binlog's and the redo log's, each with the MySQL error
//! code, SQLSTATE and message a client would see.

use std::fmt;
use std::io;
use std::path::PathBuf;

use binlog::BinlogError;
use engine::EngineError;
use redo::RedoError;

/// ER_GET_ERRNO: a storage engine failure.
const ER_GET_ERRNO: u16 = 1030;
/// ER_SERVER_SHUTDOWN.
const ER_SERVER_SHUTDOWN: u16 = 1053;
/// ER_UNKNOWN_ERROR.
const ER_UNKNOWN_ERROR: u16 = 1105;
/// ER_BINLOG_LOGGING_IMPOSSIBLE.
const ER_BINLOG_LOGGING_IMPOSSIBLE: u16 = 1598;
/// EIO, reported in ER_GET_ERRNO when the redo error has no OS error number.
const EIO: i32 = 5;

#[derive(Debug)]
pub enum DatabaseError {
    Engine(EngineError),
    Binlog(BinlogError),
    Redo(RedoError),
    /// A commit failed after its prepare record was logged, so its outcome
    /// is known only to recovery (the binlog may or may not hold it). The
    /// database refuses writes until it is reopened, as mysqld with
    /// `binlog_error_action = ABORT_SERVER` would stop.
    Unusable {
        first_error: String,
    },
    /// After recovery the engine and the binlog disagree on what was
    /// executed: opening would serve data the binlog does not describe.
    Inconsistent {
        reason: String,
    },
    /// A checkpoint or record the database wrote does not read back.
    Corruption {
        file: String,
        reason: String,
    },
    /// `auto.cnf` or the data directory.
    Io {
        operation: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// A row the engine accepted does not make a binlog row event (a bug
    /// in one of the two, never a user error).
    RowEvent(String),
    /// A named crash point fired (tests).
    Crash(String),
    Closed,
}

impl DatabaseError {
    pub fn mysql_code(&self) -> u16 {
        match self {
            DatabaseError::Engine(error) => error.mysql_code(),
            DatabaseError::Binlog(error) => error.mysql_code(),
            DatabaseError::Redo(_) => ER_GET_ERRNO,
            DatabaseError::Unusable { .. } | DatabaseError::Crash(_) => ER_BINLOG_LOGGING_IMPOSSIBLE,
            DatabaseError::Closed => ER_SERVER_SHUTDOWN,
            DatabaseError::Inconsistent { .. }
            | DatabaseError::Corruption { .. }
            | DatabaseError::Io { .. }
            | DatabaseError::RowEvent(_) => ER_UNKNOWN_ERROR,
        }
    }

    pub fn sqlstate(&self) -> &'static str {
        match self {
            DatabaseError::Engine(error) => error.sqlstate(),
            DatabaseError::Binlog(error) => error.sqlstate(),
            DatabaseError::Closed => "08S01",
            _ => "HY000",
        }
    }

    /// 1205 and 1213: the client should retry the transaction.
    pub fn is_retryable(&self) -> bool {
        matches!(self, DatabaseError::Engine(error) if error.is_retryable())
    }

    pub(crate) fn io(operation: &'static str, path: impl Into<PathBuf>, source: io::Error) -> DatabaseError {
        DatabaseError::Io { operation, path: path.into(), source }
    }

    pub(crate) fn corruption(file: impl Into<String>, reason: impl Into<String>) -> DatabaseError {
        DatabaseError::Corruption { file: file.into(), reason: reason.into() }
    }
}

fn redo_errno(error: &RedoError) -> i32 {
    match error {
        RedoError::Io { source, .. } => source.raw_os_error().unwrap_or(EIO),
        _ => EIO,
    }
}

impl fmt::Display for DatabaseError {
    /// MySQL's message for the code [`DatabaseError::mysql_code`] gives.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseError::Engine(error) => error.fmt(f),
            DatabaseError::Binlog(error) if error.mysql_code() == ER_BINLOG_LOGGING_IMPOSSIBLE => {
                write!(f, "Binary logging not possible. Message: {error}")
            }
            DatabaseError::Binlog(error) => error.fmt(f),
            DatabaseError::Redo(error) => write!(f, "Got error {} - '{error}' from storage engine", redo_errno(error)),
            DatabaseError::Unusable { first_error } => write!(
                f,
                "Binary logging not possible. Message: a commit failed after prepare ({first_error}); restart the server so recovery can settle it"
            ),
            DatabaseError::Crash(point) => write!(f, "Binary logging not possible. Message: {point}"),
            DatabaseError::Closed => f.write_str("Server shutdown in progress"),
            DatabaseError::Inconsistent { reason } => write!(f, "Unknown error: engine and binary log disagree after recovery: {reason}"),
            DatabaseError::Corruption { file, reason } => write!(f, "Unknown error: corruption in {file}: {reason}"),
            DatabaseError::Io { operation, path, source } => {
                write!(f, "Unknown error: I/O error during {operation} on {}: {source}", path.display())
            }
            DatabaseError::RowEvent(reason) => write!(f, "Unknown error: cannot make a binlog row event: {reason}"),
        }
    }
}

impl std::error::Error for DatabaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DatabaseError::Engine(error) => Some(error),
            DatabaseError::Binlog(error) => Some(error),
            DatabaseError::Redo(error) => Some(error),
            DatabaseError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<EngineError> for DatabaseError {
    fn from(error: EngineError) -> DatabaseError {
        DatabaseError::Engine(error)
    }
}

impl From<BinlogError> for DatabaseError {
    fn from(error: BinlogError) -> DatabaseError {
        DatabaseError::Binlog(error)
    }
}

impl From<RedoError> for DatabaseError {
    fn from(error: RedoError) -> DatabaseError {
        DatabaseError::Redo(error)
    }
}

pub type Result<T, E = DatabaseError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_messages_are_mysqls() {
        let duplicate = DatabaseError::from(EngineError::DuplicateEntry { entry: "1".into(), key: "t.PRIMARY".into() });
        assert_eq!((duplicate.mysql_code(), duplicate.sqlstate()), (1062, "23000"));
        assert_eq!(duplicate.to_string(), "Duplicate entry '1' for key 't.PRIMARY'");
        let closed = DatabaseError::from(BinlogError::Closed);
        assert_eq!(closed.mysql_code(), 1598);
        assert!(closed.to_string().starts_with("Binary logging not possible. Message: "));
        let redo = DatabaseError::from(RedoError::Closed);
        assert_eq!(redo.to_string(), "Got error 5 - 'redo log is closed' from storage engine");
        assert_eq!((DatabaseError::Closed.mysql_code(), DatabaseError::Closed.sqlstate()), (1053, "08S01"));
        assert!(DatabaseError::from(EngineError::Deadlock).is_retryable());
    }
}
