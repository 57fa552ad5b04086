//! Errors as a MySQL client sees them: every variant carries MySQL's error
//! code, SQLSTATE and message text (from `mysqld_errmsg.h`), so the
//! protocol layer can send them unchanged and scripts that match on codes
//! keep working.

use binlog_format::DecodeError;
use thiserror::Error;

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EngineError {
    /// ER_DUP_ENTRY. `key` is `table.index` as MySQL 8.0.19+ prints it.
    #[error("Duplicate entry '{entry}' for key '{key}'")]
    DuplicateEntry { entry: String, key: String },
    /// ER_LOCK_WAIT_TIMEOUT. Only the failed operation is undone (MySQL's
    /// default `innodb_rollback_on_timeout = OFF`); the transaction stays open.
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// ER_LOCK_DEADLOCK. The whole transaction has been rolled back.
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// ER_RECORD_FILE_FULL: `binlogd_engine_memory_limit` would be exceeded.
    #[error("The table '{table}' is full")]
    TableFull { table: String },
    /// ER_NO_SUCH_TABLE.
    #[error("Table '{database}.{table}' doesn't exist")]
    NoSuchTable { database: String, table: String },
    /// ER_TABLE_DEF_CHANGED: ALTER TABLE replaced the table while a writer
    /// waited for it; the statement is run again against the new table.
    #[error("Table definition has changed, please retry transaction")]
    TableDefinitionChanged,
    /// ER_BAD_FIELD_ERROR.
    #[error("Unknown column '{column}' in '{context}'")]
    UnknownColumn { column: String, context: String },
    /// ER_BAD_DB_ERROR.
    #[error("Unknown database '{0}'")]
    UnknownDatabase(String),
    /// ER_DB_CREATE_EXISTS.
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    /// ER_DB_DROP_EXISTS.
    #[error("Can't drop database '{0}'; database doesn't exist")]
    DatabaseDoesNotExist(String),
    /// ER_TABLE_EXISTS_ERROR.
    #[error("Table '{0}' already exists")]
    TableExists(String),
    /// ER_BAD_TABLE_ERROR (DROP TABLE of a missing table), `db.table`.
    #[error("Unknown table '{0}'")]
    UnknownTable(String),
    /// ER_DUP_FIELDNAME.
    #[error("Duplicate column name '{0}'")]
    DuplicateColumnName(String),
    /// ER_DUP_KEYNAME.
    #[error("Duplicate key name '{0}'")]
    DuplicateKeyName(String),
    /// ER_CANT_DROP_FIELD_OR_KEY.
    #[error("Can't DROP '{0}'; check that column/key exists")]
    CantDropKey(String),
    /// ER_KEY_DOES_NOT_EXITS (sic, MySQL's name): a scan names a missing index.
    #[error("Key '{key}' doesn't exist in table '{table}'")]
    NoSuchIndex { key: String, table: String },
    /// ER_MULTIPLE_PRI_KEY.
    #[error("Multiple primary key defined")]
    MultiplePrimaryKey,
    /// ER_WRONG_AUTO_KEY.
    #[error("Incorrect table definition; there can be only one auto column and it must be defined as a key")]
    WrongAutoKey,
    /// ER_KEY_COLUMN_DOES_NOT_EXITS.
    #[error("Key column '{0}' doesn't exist in table")]
    KeyColumnDoesNotExist(String),
    /// ER_TABLE_MUST_HAVE_COLUMNS.
    #[error("A table must have at least 1 column")]
    TableMustHaveColumns,
    /// ER_WRONG_FIELD_SPEC.
    #[error("Incorrect column specifier for column '{0}'")]
    WrongColumnSpec(String),
    /// ER_WRONG_TABLE_NAME.
    #[error("Incorrect table name '{0}'")]
    WrongTableName(String),
    /// ER_WRONG_DB_NAME.
    #[error("Incorrect database name '{0}'")]
    WrongDatabaseName(String),
    /// ER_WRONG_NAME_FOR_INDEX.
    #[error("Incorrect index name '{0}'")]
    WrongIndexName(String),
    /// ER_WRONG_VALUE_COUNT_ON_ROW.
    #[error("Column count doesn't match value count at row 1")]
    ColumnCountMismatch,
    /// ER_BAD_NULL_ERROR.
    #[error("Column '{0}' cannot be null")]
    ColumnCannotBeNull(String),
    /// ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: a value the column cannot store.
    #[error("Incorrect {kind} value: '{value}' for column '{column}' at row 1")]
    IncorrectValue { kind: &'static str, value: String, column: String },
    /// ER_AUTOINC_READ_FAILED: the AUTO_INCREMENT column's type has no
    /// value left.
    #[error("Failed to read auto-increment value from storage engine")]
    AutoIncrementExhausted,
    /// ER_GET_ERRNO: the redo sink failed (an I/O error, usually).
    #[error("Got error {errno} - '{reason}' from storage engine")]
    Storage { errno: i32, reason: String },
    /// ER_NO_PARTITION_FOR_GIVEN_VALUE: a RANGE or LIST table has no
    /// partition for the row.
    #[error("Table has no partition for value {0}")]
    NoPartitionForValue(String),
    /// ER_FIELD_NOT_FOUND_PART_ERROR: KEY () on a table without a primary key.
    #[error("Field in list of fields for partition function not found in table")]
    PartitionFieldNotFound,
    /// ER_FIELD_TYPE_NOT_ALLOWED_AS_PARTITION_FIELD.
    #[error("Field '{0}' is of a not allowed type for this type of partitioning")]
    PartitionFieldTypeNotAllowed(String),
    /// ER_UNIQUE_KEY_NEED_ALL_FIELDS_IN_PF: "PRIMARY KEY" or "UNIQUE INDEX".
    #[error("A {0} must include all columns in the table's partitioning function")]
    UniqueKeyNeedsPartitionColumns(&'static str),
    /// ER_INTERNAL_ERROR: misuse of the API (a finished transaction, a
    /// savepoint of another transaction) or a corrupt snapshot.
    #[error("Internal error: {0}")]
    Internal(String),
}

impl EngineError {
    pub fn mysql_code(&self) -> u16 {
        use EngineError::*;
        match self {
            DuplicateEntry { .. } => 1062,
            LockWaitTimeout => 1205,
            Deadlock => 1213,
            TableFull { .. } => 1114,
            NoSuchTable { .. } => 1146,
            TableDefinitionChanged => 1412,
            UnknownColumn { .. } => 1054,
            UnknownDatabase(_) => 1049,
            DatabaseExists(_) => 1007,
            DatabaseDoesNotExist(_) => 1008,
            TableExists(_) => 1050,
            UnknownTable(_) => 1051,
            DuplicateColumnName(_) => 1060,
            DuplicateKeyName(_) => 1061,
            CantDropKey(_) => 1091,
            NoSuchIndex { .. } => 1176,
            MultiplePrimaryKey => 1068,
            WrongAutoKey => 1075,
            KeyColumnDoesNotExist(_) => 1072,
            TableMustHaveColumns => 1113,
            WrongColumnSpec(_) => 1063,
            WrongTableName(_) => 1103,
            WrongDatabaseName(_) => 1102,
            WrongIndexName(_) => 1280,
            ColumnCountMismatch => 1136,
            ColumnCannotBeNull(_) => 1048,
            IncorrectValue { .. } => 1366,
            AutoIncrementExhausted => 1467,
            Storage { .. } => 1030,
            NoPartitionForValue(_) => 1526,
            PartitionFieldNotFound => 1488,
            PartitionFieldTypeNotAllowed(_) => 1659,
            UniqueKeyNeedsPartitionColumns(_) => 1503,
            Internal(_) => 1815,
        }
    }

    pub fn sqlstate(&self) -> &'static str {
        use EngineError::*;
        match self {
            DuplicateEntry { .. } | ColumnCannotBeNull(_) => "23000",
            Deadlock => "40001",
            NoSuchTable { .. } | UnknownTable(_) => "42S02",
            UnknownColumn { .. } => "42S22",
            TableExists(_) => "42S01",
            DuplicateColumnName(_) => "42S21",
            ColumnCountMismatch => "21S01",
            UnknownDatabase(_)
            | DuplicateKeyName(_)
            | CantDropKey(_)
            | NoSuchIndex { .. }
            | MultiplePrimaryKey
            | WrongAutoKey
            | KeyColumnDoesNotExist(_)
            | TableMustHaveColumns
            | WrongColumnSpec(_)
            | WrongTableName(_)
            | WrongDatabaseName(_)
            | WrongIndexName(_) => "42000",
            LockWaitTimeout
            | TableDefinitionChanged
            | TableFull { .. }
            | DatabaseExists(_)
            | DatabaseDoesNotExist(_)
            | IncorrectValue { .. }
            | AutoIncrementExhausted
            | Storage { .. }
            | NoPartitionForValue(_)
            | PartitionFieldNotFound
            | PartitionFieldTypeNotAllowed(_)
            | UniqueKeyNeedsPartitionColumns(_)
            | Internal(_) => "HY000",
        }
    }

    /// 1205 and 1213: the client is expected to retry the transaction.
    pub fn is_retryable(&self) -> bool {
        matches!(self, EngineError::LockWaitTimeout | EngineError::Deadlock)
    }

    /// True when the engine rolled the whole transaction back before
    /// returning this error (only a deadlock does, as in InnoDB).
    pub fn rolled_back_transaction(&self) -> bool {
        matches!(self, EngineError::Deadlock)
    }

    pub(crate) fn corrupt(reason: impl Into<String>) -> EngineError {
        EngineError::Internal(format!("corrupt engine image: {}", reason.into()))
    }
}

/// A short or overlong field in one of the engine's own images (redo
/// payloads, checkpoints), read with the format crate's cursor.
impl From<DecodeError> for EngineError {
    fn from(error: DecodeError) -> EngineError {
        EngineError::corrupt(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_mysql_text() {
        let duplicate = EngineError::DuplicateEntry { entry: "1-a".into(), key: "t.PRIMARY".into() };
        assert_eq!(duplicate.to_string(), "Duplicate entry '1-a' for key 't.PRIMARY'");
        assert_eq!((duplicate.mysql_code(), duplicate.sqlstate()), (1062, "23000"));
        assert_eq!(EngineError::Deadlock.sqlstate(), "40001");
        assert_eq!(EngineError::TableFull { table: "t".into() }.to_string(), "The table 't' is full");
        let missing = EngineError::NoSuchTable { database: "d".into(), table: "t".into() };
        assert_eq!((missing.to_string().as_str(), missing.mysql_code()), ("Table 'd.t' doesn't exist", 1146));
    }
}
