//! The replica's errors, each a MySQL error code, SQLSTATE and MySQL's
//! message text (`mysqld_error.h`, `errmsg.h` for the client library's
//! 2000-range codes), so SHOW REPLICA STATUS reads as on MySQL.

use protocol::MysqlError;

/// 2003 CR_CONN_HOST_ERROR.
pub fn cannot_connect(host: &str, port: u16, os_error: i32) -> MysqlError {
    MysqlError::new(2003, "HY000", format!("Can't connect to MySQL server on '{host}:{port}' ({os_error})"))
}

/// 2005 CR_UNKNOWN_HOST.
pub fn unknown_host(host: &str) -> MysqlError {
    MysqlError::new(2005, "HY000", format!("Unknown MySQL server host '{host}' (-2)"))
}

/// 2013 CR_SERVER_LOST.
pub fn lost_connection(detail: &str) -> MysqlError {
    MysqlError::new(2013, "HY000", format!("Lost connection to MySQL server during query ({detail})"))
}

/// 2020 CR_NET_PACKET_TOO_LARGE.
pub fn packet_too_large() -> MysqlError {
    MysqlError::new(2020, "HY000", "Got packet bigger than 'max_allowed_packet' bytes")
}

/// 2027 CR_MALFORMED_PACKET.
pub fn malformed_packet() -> MysqlError {
    MysqlError::new(2027, "HY000", "Malformed packet")
}

/// 2059 CR_AUTH_PLUGIN_CANNOT_LOAD.
pub fn auth_plugin_not_supported(plugin: &str) -> MysqlError {
    MysqlError::new(2059, "HY000", format!("Authentication plugin '{plugin}' cannot be loaded: not supported by this replica"))
}

/// 1743 ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE.
pub fn network_read_event_checksum_failure() -> MysqlError {
    MysqlError::new(1743, "HY000", "Replication event checksum verification failed while reading from network.")
}

/// 1595 ER_REPLICA_RELAY_LOG_WRITE_FAILURE.
pub fn relay_log_write_failure(detail: &str) -> MysqlError {
    MysqlError::new(1595, "HY000", format!("Relay log write failure: {detail}"))
}

/// 1594 ER_REPLICA_RELAY_LOG_READ_FAILURE.
pub fn relay_log_read_failure(detail: &str) -> MysqlError {
    MysqlError::new(1594, "HY000", format!("Relay log read failure: {detail}"))
}

/// 1593 ER_REPLICA_FATAL_ERROR.
pub fn replica_fatal(detail: &str) -> MysqlError {
    MysqlError::new(1593, "HY000", format!("Fatal error: {detail}"))
}

/// 13114 ER_SERVER_SOURCE_FATAL_ERROR_READING_BINLOG: how a replica
/// reports the source's 1236.
pub fn source_fatal_reading_binlog(source_error: &MysqlError) -> MysqlError {
    MysqlError::new(
        13114,
        "HY000",
        format!("Got fatal error {} from source when reading data from binary log: '{}'", source_error.code, source_error.message),
    )
}

/// A connect failure as the I/O thread reports it (MySQL 8.0.23+ text):
/// the code stays the underlying error's (1045 for a wrong password).
pub fn error_connecting(source: &str, attempt: u64, attempts_max: u64, delay_seconds: u64, cause: &MysqlError) -> MysqlError {
    MysqlError {
        message: format!(
            "Error connecting to source '{source}'. This was attempt {attempt}/{attempts_max}, with a delay of {delay_seconds} seconds between attempts. Message: {}",
            cause.message
        ),
        ..cause.clone()
    }
}

/// 1210 ER_WRONG_ARGUMENTS: an option value out of range (the relay log
/// limits of CHANGE REPLICATION SOURCE TO).
pub fn wrong_argument(option: &str, detail: &str) -> MysqlError {
    MysqlError::new(1210, "HY000", format!("Incorrect arguments to {option}: {detail}"))
}

/// A worker's apply error as the coordinator reports it (MySQL's
/// ER_MTA_... text around the worker's error); the code stays the worker's.
pub fn worker_failed(worker: usize, gtid: &str, source_log: &str, end_log_pos: u64, cause: &MysqlError) -> MysqlError {
    MysqlError {
        message: format!(
            "Coordinator stopped because there were error(s) in the worker(s). The most recent failure being: Worker {worker} failed executing transaction '{gtid}' at source log {source_log}, end_log_pos {end_log_pos}. See error log and/or performance_schema.replication_applier_status_by_worker table for more details about this failure or others, if any. Message: {}",
            cause.message
        ),
        ..cause.clone()
    }
}
