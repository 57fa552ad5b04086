//! Command dispatch: one handler per command of the command phase, each
//! answering with OK, ERR, EOF or a result set as MySQL does. Handlers
//! return a [`ProtocolError`] only for what ends the connection (a
//! malformed packet, an I/O failure).

use std::borrow::Cow;

use mysql_common::constants::{CapabilityFlags, ColumnType, Command, StatusFlags};
use mysql_common::io::ParseBuf;

use crate::auth::Authenticator;
use crate::charset::{convert_results, ClientCharset};
use crate::connection::{Connection, Flow};
use crate::errors::{MysqlError, ProtocolError};
use crate::replication::{parse_binlog_dump, parse_binlog_dump_gtid, parse_register_replica, BinlogStream};
use crate::response::{write_err, write_ok, write_terminator, OkResponse};
use crate::resultset::{
    write_column_definitions, write_response_body, ColumnDefinition, Pending, QueryResponse, RowEncoding, BINARY_CHARSET,
};
use crate::session::{PreparedStatement, Session};
use crate::splitter::split_statements;

/// MySQL's option numbers for COM_SET_OPTION.
const MYSQL_OPTION_MULTI_STATEMENTS_ON: u16 = 0;
const MYSQL_OPTION_MULTI_STATEMENTS_OFF: u16 = 1;

impl Connection {
    pub(crate) fn dispatch<S: Session>(
        &mut self,
        session: &mut S,
        packet: &[u8],
        authenticator: &dyn Authenticator,
    ) -> Result<Flow, ProtocolError> {
        let Some(&command) = packet.first() else {
            self.error(&MysqlError::unknown_command())?;
            return Ok(Flow::Continue);
        };
        let payload = &packet[1..];
        match command {
            c if c == Command::COM_QUIT as u8 => return Ok(Flow::Quit),
            c if c == Command::COM_QUERY as u8 => self.com_query(session, payload)?,
            c if c == Command::COM_INIT_DB as u8 => self.com_init_db(session, payload)?,
            c if c == Command::COM_FIELD_LIST as u8 => self.com_field_list(session, payload)?,
            c if c == Command::COM_PING as u8 => {
                self.handle.begin_command("Ping", None);
                let result = session.ping();
                self.ok_or_error(session, result)?;
            }
            c if c == Command::COM_STATISTICS as u8 => self.com_statistics(session)?,
            c if c == Command::COM_REFRESH as u8 => match refresh_statement(payload) {
                // Run as the statement it stands for: the same privileges,
                // the same effects, one OK or ERR.
                Ok(statement) => self.com_query(session, statement.as_bytes())?,
                Err(error) => self.error(&error)?,
            },
            c if c == Command::COM_PROCESS_KILL as u8 => {
                let id = u32_argument(payload, "COM_PROCESS_KILL")?;
                self.handle.begin_command("Kill", None);
                let result = session.process_kill(id, self.handle.registry());
                self.ok_or_error(session, result)?;
            }
            c if c == Command::COM_SET_OPTION as u8 => self.com_set_option(session, payload)?,
            c if c == Command::COM_CHANGE_USER as u8 => return self.com_change_user(session, payload, authenticator),
            c if c == Command::COM_RESET_CONNECTION as u8 => {
                self.handle.begin_command("Reset Connection", None);
                for id in self.statements.drain_ids() {
                    session.close_statement(id);
                }
                self.multi_statements = self.capabilities.contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS);
                let result = session.reset_connection();
                self.ok_or_error(session, result)?;
            }
            c if c == Command::COM_STMT_PREPARE as u8 => self.com_stmt_prepare(session, payload)?,
            c if c == Command::COM_STMT_EXECUTE as u8 => self.com_stmt_execute(session, packet)?,
            c if c == Command::COM_STMT_SEND_LONG_DATA as u8 => self.statements.append_long_data(packet)?,
            c if c == Command::COM_STMT_CLOSE as u8 => {
                // No response, whatever happens.
                let id = u32_argument(payload, "COM_STMT_CLOSE")?;
                if self.statements.remove(id) {
                    session.close_statement(id);
                }
            }
            c if c == Command::COM_STMT_RESET as u8 => {
                let id = u32_argument(payload, "COM_STMT_RESET")?;
                let result = self.statements.reset(id);
                self.ok_or_error(session, result)?;
            }
            c if c == Command::COM_STMT_FETCH as u8 => {
                let id = u32_argument(payload, "COM_STMT_FETCH")?;
                self.error(&MysqlError::no_open_cursor(id))?;
            }
            c if c == Command::COM_REGISTER_SLAVE as u8 => {
                let request = parse_register_replica(packet)?;
                self.handle.begin_command("Register Replica", None);
                let result = session.register_replica(&request);
                self.ok_or_error(session, result)?;
            }
            c if c == Command::COM_BINLOG_DUMP as u8 => {
                let request = parse_binlog_dump(packet)?;
                return self.dump(session, "Binlog Dump", |session, stream| session.binlog_dump(&request, stream));
            }
            c if c == Command::COM_BINLOG_DUMP_GTID as u8 => {
                let request = parse_binlog_dump_gtid(packet)?;
                return self.dump(session, "Binlog Dump GTID", |session, stream| session.binlog_dump_gtid(&request, stream));
            }
            _ => self.error(&MysqlError::unknown_command())?,
        }
        Ok(Flow::Continue)
    }

    fn error(&mut self, error: &MysqlError) -> Result<(), ProtocolError> {
        write_err(&mut self.stream, error, self.capabilities)
    }

    fn ok_or_error<S: Session>(&mut self, session: &S, result: Result<(), MysqlError>) -> Result<(), ProtocolError> {
        match result {
            Ok(()) => {
                self.last_status = session.server_status();
                write_ok(&mut self.stream, &OkResponse::default(), self.last_status)
            }
            Err(error) => self.error(&error),
        }
    }

    /// Runs either dump command: the process list shows `command`, the
    /// session streams through the connection's writer, a dump's error goes
    /// to the reader if the connection still works, and the connection
    /// ends after the dump either way (as MySQL's does).
    fn dump<S: Session>(
        &mut self,
        session: &mut S,
        command: &'static str,
        dump: impl FnOnce(&mut S, &mut BinlogStream<'_>) -> Result<(), MysqlError>,
    ) -> Result<Flow, ProtocolError> {
        self.handle.begin_command(command, None);
        let mut stream = BinlogStream::new(&mut self.stream, &self.handle, self.capabilities);
        if let Err(error) = dump(session, &mut stream) {
            self.error(&error)?;
        }
        self.stream.flush()?;
        Ok(Flow::Quit)
    }

    /// Decodes command text from the session's `character_set_client`; on
    /// bytes that are not text in it, sends 1300 and answers `None`.
    fn text<'p>(&mut self, bytes: &'p [u8], charset: ClientCharset) -> Result<Option<Cow<'p, str>>, ProtocolError> {
        match charset.decode(bytes) {
            Ok(text) => Ok(Some(text)),
            Err(error) => {
                self.error(&error)?;
                Ok(None)
            }
        }
    }

    fn com_query<S: Session>(&mut self, session: &mut S, payload: &[u8]) -> Result<(), ProtocolError> {
        let Some(sql) = self.text(payload, session.character_sets().client)? else {
            return Ok(());
        };
        let sql: &str = &sql;
        self.handle.begin_command("Query", Some(sql));
        let statements = split_statements(sql);
        if statements.is_empty() {
            return self.error(&MysqlError::empty_query());
        }
        if !self.multi_statements && statements.len() > 1 {
            // As MySQL's parser does: the second statement is a syntax error.
            self.handle.registry().count_question();
            let offset = statements[1].as_ptr() as usize - sql.as_ptr() as usize;
            return self.error(&syntax_error_near(&sql[offset..]));
        }
        let count = statements.len();
        for (index, statement) in statements.into_iter().enumerate() {
            let more_results = index + 1 < count;
            if count > 1 {
                self.handle.set_info(statement);
            }
            self.handle.registry().count_question();
            // Read before the statement runs: what it changes applies to the
            // statements after it.
            let results = session.character_sets().results;
            let pending = match session.query(statement) {
                Ok(response) => self.write_body(convert_results(response, results), RowEncoding::Text)?,
                Err(error) => {
                    self.error(&error)?;
                    Pending::Failed
                }
            };
            // An error ends a multi-statement batch, as in MySQL.
            if !self.finish_response(session, pending, more_results)? {
                break;
            }
        }
        Ok(())
    }

    fn write_body(&mut self, response: QueryResponse<'_>, encoding: RowEncoding) -> Result<Pending, ProtocolError> {
        write_response_body(&mut self.stream, self.capabilities, response, encoding, self.last_status, self.handle.memory())
    }

    /// Sends the packet that carries the final status. Returns false when the
    /// response was an error.
    fn finish_response<S: Session>(&mut self, session: &mut S, pending: Pending, more_results: bool) -> Result<bool, ProtocolError> {
        self.last_status = session.server_status();
        let mut status = self.last_status;
        if more_results {
            status |= StatusFlags::SERVER_MORE_RESULTS_EXISTS;
        }
        match pending {
            Pending::Ok(ok) => write_ok(&mut self.stream, &ok, status)?,
            Pending::EndOfRows { warnings } => {
                let warnings = session.result_sent(warnings);
                write_terminator(&mut self.stream, self.capabilities, warnings, status, true)?
            }
            Pending::Failed => return Ok(false),
        }
        Ok(true)
    }

    fn com_init_db<S: Session>(&mut self, session: &mut S, payload: &[u8]) -> Result<(), ProtocolError> {
        let Some(database) = self.text(payload, session.character_sets().client)? else {
            return Ok(());
        };
        let database: &str = &database;
        self.handle.begin_command("Init DB", Some(database));
        let result = session.init_db(database);
        if result.is_ok() {
            self.handle.set_db(Some(database));
        }
        self.ok_or_error(session, result)
    }

    /// COM_FIELD_LIST: table name (NUL-terminated), then a wildcard.
    fn com_field_list<S: Session>(&mut self, session: &mut S, payload: &[u8]) -> Result<(), ProtocolError> {
        let (table, wildcard) = match payload.iter().position(|&b| b == 0) {
            Some(end) => (&payload[..end], &payload[end + 1..]),
            None => (payload, &[][..]),
        };
        let client = session.character_sets().client;
        // Both are text in the client's character set; either one that is
        // not gets 1300, as a statement would.
        let Some(table) = self.text(table, client)? else {
            return Ok(());
        };
        let Some(wildcard) = self.text(wildcard, client)? else {
            return Ok(());
        };
        let (table, wildcard): (&str, &str) = (&table, &wildcard);
        self.handle.begin_command("Field List", Some(table));
        match session.field_list(table, wildcard) {
            Ok(columns) => {
                // Each definition carries a default value; NULL (0xFB) here.
                write_column_definitions(&mut self.stream, &columns, Some(&[0xFB]))?;
                self.last_status = session.server_status();
                write_terminator(&mut self.stream, self.capabilities, 0, self.last_status, true)
            }
            Err(error) => self.error(&error),
        }
    }

    /// COM_STATISTICS answers with a bare string packet.
    fn com_statistics<S: Session>(&mut self, session: &mut S) -> Result<(), ProtocolError> {
        self.handle.begin_command("Statistics", None);
        let text = session.statistics().unwrap_or_else(|| {
            let registry = self.handle.registry();
            let uptime_secs = registry.uptime_secs().max(1);
            format!(
                "Uptime: {}  Threads: {}  Questions: {}  Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: {:.3}",
                uptime_secs,
                registry.len(),
                registry.questions(),
                registry.questions() as f64 / uptime_secs as f64
            )
        });
        self.stream.write_packet(text.as_bytes())
    }

    /// COM_SET_OPTION answers with an EOF packet (OK-0xFE under
    /// DEPRECATE_EOF), as MySQL does.
    fn com_set_option<S: Session>(&mut self, session: &mut S, payload: &[u8]) -> Result<(), ProtocolError> {
        let option = payload
            .get(..2)
            .map(|bytes| u16::from_le_bytes([bytes[0], bytes[1]]))
            .ok_or_else(|| ProtocolError::malformed("COM_SET_OPTION", "packet truncated"))?;
        self.handle.begin_command("Set option", None);
        self.multi_statements = match option {
            MYSQL_OPTION_MULTI_STATEMENTS_ON => true,
            MYSQL_OPTION_MULTI_STATEMENTS_OFF => false,
            _ => return self.error(&MysqlError::unknown_command()),
        };
        self.last_status = session.server_status();
        write_terminator(&mut self.stream, self.capabilities, 0, self.last_status, true)
    }

    fn com_stmt_prepare<S: Session>(&mut self, session: &mut S, payload: &[u8]) -> Result<(), ProtocolError> {
        let Some(sql) = self.text(payload, session.character_sets().client)? else {
            return Ok(());
        };
        let sql: &str = &sql;
        self.handle.begin_command("Prepare", Some(sql));
        let id = match self.statements.next_id() {
            Ok(id) => id,
            Err(error) => return self.error(&error),
        };
        match session.prepare(id, sql) {
            Ok(prepared) => match self.statements.insert(id, prepared.param_count, sql.len()) {
                Ok(()) => self.write_prepare_ok(id, &prepared),
                Err(error) => {
                    session.close_statement(id);
                    self.error(&error)
                }
            },
            Err(error) => self.error(&error),
        }
    }

    /// COM_STMT_PREPARE_OK, then parameter and column definitions, each list
    /// followed by an EOF unless DEPRECATE_EOF.
    fn write_prepare_ok(&mut self, id: u32, prepared: &PreparedStatement) -> Result<(), ProtocolError> {
        let mut header = Vec::with_capacity(12);
        header.push(0x00);
        header.extend_from_slice(&id.to_le_bytes());
        header.extend_from_slice(&(prepared.columns.len() as u16).to_le_bytes());
        header.extend_from_slice(&prepared.param_count.to_le_bytes());
        header.push(0x00);
        header.extend_from_slice(&prepared.warnings.to_le_bytes());
        self.stream.write_packet(&header)?;
        if prepared.param_count > 0 {
            let generic;
            let params = match &prepared.params {
                Some(params) => params.as_slice(),
                None => {
                    generic = vec![
                        ColumnDefinition::new("?", ColumnType::MYSQL_TYPE_VAR_STRING).with_character_set(BINARY_CHARSET);
                        usize::from(prepared.param_count)
                    ];
                    generic.as_slice()
                }
            };
            write_column_definitions(&mut self.stream, params, None)?;
            write_terminator(&mut self.stream, self.capabilities, 0, self.last_status, false)?;
        }
        if !prepared.columns.is_empty() {
            write_column_definitions(&mut self.stream, &prepared.columns, None)?;
            write_terminator(&mut self.stream, self.capabilities, 0, self.last_status, false)?;
        }
        Ok(())
    }

    fn com_stmt_execute<S: Session>(&mut self, session: &mut S, packet: &[u8]) -> Result<(), ProtocolError> {
        self.handle.begin_command("Execute", None);
        let charsets = session.character_sets();
        let execution = match self.statements.parse_execute(packet, charsets.client)? {
            Ok(execution) => execution,
            Err(error) => return self.error(&error),
        };
        self.handle.registry().count_question();
        let pending = match session.execute(execution.statement_id, &execution.params) {
            Ok(response) => self.write_body(convert_results(response, charsets.results), RowEncoding::Binary)?,
            Err(error) => {
                self.error(&error)?;
                Pending::Failed
            }
        };
        self.finish_response(session, pending, false)?;
        Ok(())
    }
}

fn u32_argument(payload: &[u8], context: &'static str) -> Result<u32, ProtocolError> {
    let mut buf = ParseBuf(payload);
    buf.checked_eat_u32_le().ok_or_else(|| ProtocolError::malformed(context, "packet truncated"))
}

/// MySQL's 1064 text, quoting (at most 80 characters of) the text where
/// parsing failed.
pub fn syntax_error_near(rest: &str) -> MysqlError {
    let near: String = rest.chars().take(80).collect();
    MysqlError::new(
        1064,
        "42000",
        format!(
            "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line 1"
        ),
    )
}

/// COM_REFRESH's option bits (mysql_com.h), and the FLUSH options they are.
const REFRESH_OPTIONS: [(u32, &str); 10] = [
    (0x0001, "PRIVILEGES"),
    (0x0002, "LOGS"),
    (0x0008, "HOSTS"),
    (0x0010, "STATUS"),
    (0x0100, "ERROR LOGS"),
    (0x0200, "ENGINE LOGS"),
    (0x0400, "BINARY LOGS"),
    (0x0800, "RELAY LOGS"),
    (0x1000, "GENERAL LOGS"),
    (0x2000, "SLOW LOGS"),
];
const REFRESH_TABLES: u32 = 0x0004;
/// REFRESH_THREADS: no thread cache to empty.
const REFRESH_THREADS: u32 = 0x0020;

/// The FLUSH statement a COM_REFRESH (`mysql_refresh()`, what
/// `mariadb-dump --flush-logs` sends) asks for. Its argument is one byte
/// (MySQL's protocol), or four from clients that send the whole mask.
/// RESET MASTER and RESET REPLICA by refresh bits are refused: they
/// destroy logs, and their statements say so.
fn refresh_statement(payload: &[u8]) -> Result<String, MysqlError> {
    let options = match payload {
        [byte] => u32::from(*byte),
        [a, b, c, d] => u32::from_le_bytes([*a, *b, *c, *d]),
        _ => return Err(MysqlError::malformed_packet()),
    };
    let known = REFRESH_OPTIONS.iter().fold(REFRESH_TABLES | REFRESH_THREADS, |known, (bit, _)| known | bit);
    if options & !known != 0 {
        return Err(MysqlError::new(
            1235,
            "42000",
            format!("This version of MySQL doesn't yet support 'COM_REFRESH with options {:#x}'", options & !known),
        ));
    }
    let logs: Vec<&str> = REFRESH_OPTIONS.iter().filter(|(bit, _)| options & bit != 0).map(|(_, name)| *name).collect();
    match (options & REFRESH_TABLES != 0, logs.is_empty()) {
        (true, true) => Ok("FLUSH TABLES".to_string()),
        (false, false) => Ok(format!("FLUSH {}", logs.join(", "))),
        // REFRESH_THREADS alone, or nothing: a FLUSH that does nothing.
        (false, true) => Ok("FLUSH STATUS".to_string()),
        (true, false) => {
            Err(MysqlError::new(1235, "42000", "This version of MySQL doesn't yet support 'COM_REFRESH of tables and logs together'"))
        }
    }
}

#[cfg(test)]
mod refresh_tests {
    use super::refresh_statement;

    #[test]
    fn refresh_bits_become_the_flush_statement() {
        assert_eq!(refresh_statement(&[0x02]).unwrap(), "FLUSH LOGS");
        assert_eq!(refresh_statement(&[0x00, 0x06, 0, 0]).unwrap(), "FLUSH ENGINE LOGS, BINARY LOGS");
        assert_eq!(refresh_statement(&[0x04]).unwrap(), "FLUSH TABLES");
        assert_eq!(refresh_statement(&[0x20]).unwrap(), "FLUSH STATUS");
        assert_eq!(refresh_statement(&[0x80]).unwrap_err().code, 1235);
        assert_eq!(refresh_statement(&[0x06]).unwrap_err().code, 1235);
        assert_eq!(refresh_statement(&[]).unwrap_err().code, crate::errors::MysqlError::malformed_packet().code);
    }
}
