//! Errors: what a client sees ([`MysqlError`]: code, SQLSTATE, message, with
//! MySQL's own codes and texts) and what goes wrong on the wire
//! ([`ProtocolError`]), which ends the connection it happened on.

use std::io;

/// An error as a MySQL client sees it: the error code, the SQLSTATE and the
/// message of an ERR packet. Codes and texts are MySQL's own, so a DBA's
/// scripts that match on them keep working.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ERROR {code} ({}): {message}", self.sql_state_str())]
pub struct MysqlError {
    pub code: u16,
    pub sql_state: [u8; 5],
    pub message: String,
}

impl MysqlError {
    /// `sql_state` must be five ASCII characters; anything else becomes
    /// `HY000` (MySQL's "general error"), so a typo cannot corrupt a packet.
    pub fn new(code: u16, sql_state: &str, message: impl Into<String>) -> Self {
        let sql_state = match <[u8; 5]>::try_from(sql_state.as_bytes()) {
            Ok(state) if state.iter().all(u8::is_ascii_alphanumeric) => state,
            _ => *b"HY000",
        };
        MysqlError { code, sql_state, message: message.into() }
    }

    pub fn sql_state_str(&self) -> &str {
        std::str::from_utf8(&self.sql_state).unwrap_or("HY000")
    }

    /// 1040 ER_CON_COUNT_ERROR.
    pub fn too_many_connections() -> Self {
        Self::new(1040, "08004", "Too many connections")
    }

    /// 1043 ER_HANDSHAKE_ERROR.
    pub fn bad_handshake() -> Self {
        Self::new(1043, "08S01", "Bad handshake")
    }

    /// 1045 ER_ACCESS_DENIED_ERROR.
    pub fn access_denied(user: &str, host: &str, using_password: bool) -> Self {
        let using = if using_password { "YES" } else { "NO" };
        Self::new(1045, "28000", format!("Access denied for user '{user}'@'{host}' (using password: {using})"))
    }

    /// 1047 ER_UNKNOWN_COM_ERROR.
    pub fn unknown_command() -> Self {
        Self::new(1047, "08S01", "Unknown command")
    }

    /// 1053 ER_SERVER_SHUTDOWN.
    pub fn server_shutdown() -> Self {
        Self::new(1053, "08S01", "Server shutdown in progress")
    }

    /// 1065 ER_EMPTY_QUERY.
    pub fn empty_query() -> Self {
        Self::new(1065, "42000", "Query was empty")
    }

    /// 1094 ER_NO_SUCH_THREAD.
    pub fn no_such_thread(connection_id: u64) -> Self {
        Self::new(1094, "HY000", format!("Unknown thread id: {connection_id}"))
    }

    /// 1105 ER_UNKNOWN_ERROR, for faults inside binlogd that have no MySQL code.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(1105, "HY000", message)
    }

    /// 1153 ER_NET_PACKET_TOO_LARGE.
    pub fn packet_too_large() -> Self {
        Self::new(1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes")
    }

    /// 1156 ER_NET_PACKETS_OUT_OF_ORDER.
    pub fn packets_out_of_order() -> Self {
        Self::new(1156, "08S01", "Got packets out of order")
    }

    /// 1210 ER_WRONG_ARGUMENTS; `function` is MySQL's internal name, e.g.
    /// `mysqld_stmt_execute`.
    pub fn wrong_arguments(function: &str) -> Self {
        Self::new(1210, "HY000", format!("Incorrect arguments to {function}"))
    }

    /// 1243 ER_UNKNOWN_STMT_HANDLER.
    pub fn unknown_statement(statement_id: u32, function: &str) -> Self {
        Self::new(1243, "HY000", format!("Unknown prepared statement handler ({statement_id}) given to {function}"))
    }

    /// 1251 ER_NOT_SUPPORTED_AUTH_MODE.
    pub fn auth_mode_not_supported() -> Self {
        Self::new(1251, "08004", "Client does not support authentication protocol requested by server; consider upgrading MySQL client")
    }

    /// 1300 ER_INVALID_CHARACTER_STRING.
    pub fn invalid_character_string(charset: &str, bytes: &[u8]) -> Self {
        // MySQL prints the offending bytes in hex, at most 64 characters.
        let hex: String = bytes.iter().take(32).map(|b| format!("{b:02X}")).collect();
        Self::new(1300, "HY000", format!("Invalid {charset} character string: '{hex}'"))
    }

    /// 1317 ER_QUERY_INTERRUPTED: what a statement returns after KILL QUERY.
    pub fn query_interrupted() -> Self {
        Self::new(1317, "70100", "Query execution was interrupted")
    }

    /// 1421 ER_STMT_HAS_NO_OPEN_CURSOR.
    pub fn no_open_cursor(statement_id: u32) -> Self {
        Self::new(1421, "HY000", format!("The statement ({statement_id}) has no open cursor."))
    }

    /// 1461 ER_MAX_PREPARED_STMT_COUNT_REACHED.
    pub fn too_many_prepared_statements(limit: usize) -> Self {
        Self::new(1461, "42000", format!("Can't create more than max_prepared_stmt_count statements (current value: {limit})"))
    }

    /// 1835 ER_MALFORMED_PACKET.
    pub fn malformed_packet() -> Self {
        Self::new(1835, "HY000", "Malformed communication packet.")
    }

    /// 3118 ER_ACCOUNT_HAS_BEEN_LOCKED.
    pub fn account_locked(user: &str, host: &str) -> Self {
        Self::new(3118, "HY000", format!("Access denied for user '{user}'@'{host}'. Account is locked."))
    }
}

/// What can go wrong on the wire. Every variant ends the connection it
/// happened on (and only that one); [`ProtocolError::client_error`] tells
/// which ERR packet to try to send first.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The peer closed the connection at a packet boundary.
    #[error("connection closed by the peer")]
    Closed,
    #[error("packet of {length_bytes} bytes is bigger than max_allowed_packet ({max_bytes} bytes)")]
    PacketTooLarge { length_bytes: u64, max_bytes: usize },
    #[error("packet sequence id {got}, expected {expected}")]
    OutOfOrder { expected: u8, got: u8 },
    #[error("malformed {context}: {detail}")]
    Malformed { context: &'static str, detail: String },
}

impl ProtocolError {
    pub fn malformed(context: &'static str, detail: impl Into<String>) -> Self {
        ProtocolError::Malformed { context, detail: detail.into() }
    }

    /// The error to send before closing, when the peer can still read one.
    pub fn client_error(&self) -> Option<MysqlError> {
        match self {
            ProtocolError::Io(_) | ProtocolError::Closed => None,
            ProtocolError::PacketTooLarge { .. } => Some(MysqlError::packet_too_large()),
            ProtocolError::OutOfOrder { .. } => Some(MysqlError::packets_out_of_order()),
            ProtocolError::Malformed { .. } => Some(MysqlError::malformed_packet()),
        }
    }

    /// True when the peer simply went away or timed out: worth a debug line,
    /// not a warning.
    pub fn is_disconnect(&self) -> bool {
        match self {
            ProtocolError::Closed => true,
            ProtocolError::Io(error) => matches!(
                error.kind(),
                io::ErrorKind::UnexpectedEof
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::WouldBlock
                    | io::ErrorKind::TimedOut
            ),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_mysqls() {
        assert_eq!(
            MysqlError::access_denied("u", "localhost", true).message,
            "Access denied for user 'u'@'localhost' (using password: YES)"
        );
        assert_eq!(MysqlError::packet_too_large().sql_state_str(), "08S01");
        assert_eq!(MysqlError::new(1, "bad", "x").sql_state_str(), "HY000");
    }
}
