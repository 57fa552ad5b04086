//! Query event (type 2): `BEGIN`, DDL, `COMMIT` for non-transactional work.

use crate::bytes::{ByteReader, ByteWriter};
use crate::error::DecodeError;

/// Status variable codes (`Q_*_CODE`).
pub mod status_code {
    pub const FLAGS2: u8 = 0;
    pub const SQL_MODE: u8 = 1;
    pub const CATALOG: u8 = 2;
    pub const AUTO_INCREMENT: u8 = 3;
    pub const CHARSET: u8 = 4;
    pub const TIME_ZONE: u8 = 5;
    pub const CATALOG_NZ: u8 = 6;
    pub const LC_TIME_NAMES: u8 = 7;
    pub const CHARSET_DATABASE: u8 = 8;
    pub const TABLE_MAP_FOR_UPDATE: u8 = 9;
    pub const MASTER_DATA_WRITTEN: u8 = 10;
    pub const INVOKER: u8 = 11;
    pub const UPDATED_DB_NAMES: u8 = 12;
    pub const MICROSECONDS: u8 = 13;
    /// MariaDB: microseconds of the statement's start (`Q_HRNOW`).
    pub const HRNOW: u8 = 128;
    /// MariaDB: the XID of a DDL that is its own transaction (`Q_XID`).
    pub const XID: u8 = 129;
    /// MariaDB 10.8+: the GTID's flags_extra for ALTER TABLE replicated in
    /// two phases (`Q_GTID_FLAGS3`).
    pub const GTID_FLAGS3: u8 = 130;
}

/// `Q_GTID_FLAGS3` bits that put the START ALTER's seq_no after the flags.
const GTID_FLAGS3_WITH_SEQ_NO: u8 = 4 | 8;

/// `OVER_MAX_DBS_IN_EVENT_MTS`: the UPDATED_DB_NAMES count meaning "too many".
const OVER_MAX_DBS_IN_EVENT_MTS: u8 = 254;

/// One status variable. binlogd writes them in ascending code order, since
/// a MariaDB reader stops parsing at the first code it does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusVar {
    Flags2(u32),
    SqlMode(u64),
    AutoIncrement {
        increment: u16,
        offset: u16,
    },
    Charset {
        client: u16,
        connection: u16,
        server: u16,
    },
    TimeZone(Vec<u8>),
    CatalogNz(Vec<u8>),
    LcTimeNames(u16),
    CharsetDatabase(u16),
    TableMapForUpdate(u64),
    /// Size of the event on an old (binlog v3) source, relay-logged.
    MasterDataWritten(u32),
    /// The definer a stored routine's statement runs as.
    Invoker {
        user: Vec<u8>,
        host: Vec<u8>,
    },
    /// Databases the statement changed; `None` = over the MTS limit.
    UpdatedDbNames(Option<Vec<Vec<u8>>>),
    Microseconds(u32),
    /// MariaDB's `Q_HRNOW`: microseconds (3 bytes).
    HrNow(u32),
    /// MariaDB's `Q_XID`.
    Xid(u64),
    /// MariaDB's `Q_GTID_FLAGS3`: flags, then the START ALTER's seq_no
    /// when the flags say COMMIT or ROLLBACK ALTER.
    GtidFlags3 {
        flags: u8,
        start_alter_seq_no: Option<u64>,
    },
    /// A code this decoder does not know, and everything after it: the
    /// length of an unknown variable cannot be known, so the rest stays raw.
    Unparsed {
        code: u8,
        rest: Vec<u8>,
    },
}

/// | bytes | field |
/// |-------|-------|
/// | 4 | thread_id |
/// | 4 | exec_time (seconds) |
/// | 1 | db name length |
/// | 2 | error_code |
/// | 2 | status variables length |
/// | n | status variables (code u8, value) |
/// | db length + 1 | default database, NUL-terminated |
/// | rest | statement text |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryEvent {
    pub thread_id: u32,
    pub exec_time_s: u32,
    pub error_code: u16,
    pub status_vars: Vec<StatusVar>,
    pub database: Vec<u8>,
    pub query: Vec<u8>,
}

/// utf8mb4_general_ci: MariaDB replicas do not know 255 (utf8mb4_0900_ai_ci).
pub const DEFAULT_COLLATION_ID: u16 = 45;
/// MySQL 8.4's default sql_mode bits: ONLY_FULL_GROUP_BY (1 << 5),
/// STRICT_TRANS_TABLES (1 << 21), NO_ZERO_IN_DATE (1 << 23), NO_ZERO_DATE
/// (1 << 24), ERROR_FOR_DIVISION_BY_ZERO (1 << 26), NO_ENGINE_SUBSTITUTION
/// (1 << 30): 1168113696, the number mysqlbinlog prints for it.
pub const DEFAULT_SQL_MODE: u64 = 0x20 | 0x200000 | 0x800000 | 0x1000000 | 0x4000000 | 0x40000000;

impl QueryEvent {
    /// A statement as binlogd logs it, with the status variables every
    /// reader needs to replay it.
    pub fn new(thread_id: u32, database: &str, query: &str) -> QueryEvent {
        QueryEvent {
            thread_id,
            exec_time_s: 0,
            error_code: 0,
            status_vars: vec![
                StatusVar::Flags2(0),
                StatusVar::SqlMode(DEFAULT_SQL_MODE),
                StatusVar::Charset { client: DEFAULT_COLLATION_ID, connection: DEFAULT_COLLATION_ID, server: DEFAULT_COLLATION_ID },
                StatusVar::CatalogNz(b"std".to_vec()),
            ],
            database: database.as_bytes().to_vec(),
            query: query.as_bytes().to_vec(),
        }
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        let mut status = Vec::new();
        for var in &self.status_vars {
            encode_status_var(var, &mut status);
        }
        assert!(status.len() <= u16::MAX as usize, "status variables exceed 64 KiB");
        assert!(self.database.len() <= u8::MAX as usize, "database name exceeds 255 bytes");
        out.put_u32(self.thread_id);
        out.put_u32(self.exec_time_s);
        out.put_u8(self.database.len() as u8);
        out.put_u16(self.error_code);
        out.put_u16(status.len() as u16);
        out.put_slice(&status);
        out.put_slice(&self.database);
        out.put_u8(0);
        out.put_slice(&self.query);
    }

    pub fn decode_body(body: &[u8]) -> Result<QueryEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let thread_id = reader.u32("query thread_id")?;
        let exec_time_s = reader.u32("query exec_time")?;
        let database_length = reader.u8("query db length")? as usize;
        let error_code = reader.u16("query error_code")?;
        let status_length = reader.u16("query status length")? as usize;
        let status = reader.take(status_length, "query status variables")?;
        let status_vars = decode_status_vars(status)?;
        let database = reader.take(database_length, "query database")?.to_vec();
        if reader.u8("query database terminator")? != 0 {
            return Err(DecodeError::invalid("query", "database name is not NUL-terminated"));
        }
        let query = reader.rest().to_vec();
        Ok(QueryEvent { thread_id, exec_time_s, error_code, status_vars, database, query })
    }

    /// The statement text of an encoded body, found without decoding the
    /// status variables or copying anything: what a reader that only
    /// classifies statements (BEGIN, COMMIT, DDL) needs. The same layout
    /// checks as [`QueryEvent::decode_body`] up to the text.
    pub fn statement_of(body: &[u8]) -> Result<&[u8], DecodeError> {
        let mut reader = ByteReader::new(body);
        reader.take(8, "query thread_id and exec_time")?;
        let database_length = reader.u8("query db length")? as usize;
        reader.u16("query error_code")?;
        let status_length = reader.u16("query status length")? as usize;
        reader.take(status_length, "query status variables")?;
        reader.take(database_length, "query database")?;
        if reader.u8("query database terminator")? != 0 {
            return Err(DecodeError::invalid("query", "database name is not NUL-terminated"));
        }
        Ok(reader.rest())
    }

    pub fn query_text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.query)
    }

    pub fn is_begin(&self) -> bool {
        self.query == b"BEGIN"
    }

    pub fn is_commit(&self) -> bool {
        self.query == b"COMMIT"
    }

    pub fn is_rollback(&self) -> bool {
        self.query == b"ROLLBACK"
    }
}

fn encode_status_var(var: &StatusVar, out: &mut Vec<u8>) {
    use status_code::*;
    match var {
        StatusVar::Flags2(v) => {
            out.put_u8(FLAGS2);
            out.put_u32(*v);
        }
        StatusVar::SqlMode(v) => {
            out.put_u8(SQL_MODE);
            out.put_u64(*v);
        }
        StatusVar::AutoIncrement { increment, offset } => {
            out.put_u8(AUTO_INCREMENT);
            out.put_u16(*increment);
            out.put_u16(*offset);
        }
        StatusVar::Charset { client, connection, server } => {
            out.put_u8(CHARSET);
            out.put_u16(*client);
            out.put_u16(*connection);
            out.put_u16(*server);
        }
        StatusVar::TimeZone(name) => {
            out.put_u8(TIME_ZONE);
            out.put_u8(name.len() as u8);
            out.put_slice(name);
        }
        StatusVar::CatalogNz(name) => {
            out.put_u8(CATALOG_NZ);
            out.put_u8(name.len() as u8);
            out.put_slice(name);
        }
        StatusVar::LcTimeNames(v) => {
            out.put_u8(LC_TIME_NAMES);
            out.put_u16(*v);
        }
        StatusVar::CharsetDatabase(v) => {
            out.put_u8(CHARSET_DATABASE);
            out.put_u16(*v);
        }
        StatusVar::TableMapForUpdate(v) => {
            out.put_u8(TABLE_MAP_FOR_UPDATE);
            out.put_u64(*v);
        }
        StatusVar::UpdatedDbNames(names) => {
            out.put_u8(UPDATED_DB_NAMES);
            match names {
                None => out.put_u8(OVER_MAX_DBS_IN_EVENT_MTS),
                Some(names) => {
                    out.put_u8(names.len() as u8);
                    for name in names {
                        out.put_slice(name);
                        out.put_u8(0);
                    }
                }
            }
        }
        StatusVar::MasterDataWritten(v) => {
            out.put_u8(MASTER_DATA_WRITTEN);
            out.put_u32(*v);
        }
        StatusVar::Invoker { user, host } => {
            out.put_u8(INVOKER);
            for name in [user, host] {
                out.put_u8(name.len() as u8);
                out.put_slice(name);
            }
        }
        StatusVar::Microseconds(v) => {
            out.put_u8(MICROSECONDS);
            out.put_u24(*v);
        }
        StatusVar::HrNow(v) => {
            out.put_u8(HRNOW);
            out.put_u24(*v);
        }
        StatusVar::Xid(v) => {
            out.put_u8(XID);
            out.put_u64(*v);
        }
        StatusVar::GtidFlags3 { flags, start_alter_seq_no } => {
            out.put_u8(GTID_FLAGS3);
            out.put_u8(*flags);
            if let Some(seq_no) = start_alter_seq_no {
                out.put_u64(*seq_no);
            }
        }
        StatusVar::Unparsed { code, rest } => {
            out.put_u8(*code);
            out.put_slice(rest);
        }
    }
}

fn decode_status_vars(bytes: &[u8]) -> Result<Vec<StatusVar>, DecodeError> {
    use status_code::*;
    let mut reader = ByteReader::new(bytes);
    let mut vars = Vec::new();
    while !reader.is_empty() {
        let code = reader.u8("status variable code")?;
        let var = match code {
            FLAGS2 => StatusVar::Flags2(reader.u32("Q_FLAGS2")?),
            SQL_MODE => StatusVar::SqlMode(reader.u64("Q_SQL_MODE")?),
            AUTO_INCREMENT => {
                StatusVar::AutoIncrement { increment: reader.u16("Q_AUTO_INCREMENT")?, offset: reader.u16("Q_AUTO_INCREMENT")? }
            }
            CHARSET => StatusVar::Charset {
                client: reader.u16("Q_CHARSET")?,
                connection: reader.u16("Q_CHARSET")?,
                server: reader.u16("Q_CHARSET")?,
            },
            TIME_ZONE => {
                let length = reader.u8("Q_TIME_ZONE length")? as usize;
                StatusVar::TimeZone(reader.take(length, "Q_TIME_ZONE")?.to_vec())
            }
            CATALOG_NZ => {
                let length = reader.u8("Q_CATALOG_NZ length")? as usize;
                StatusVar::CatalogNz(reader.take(length, "Q_CATALOG_NZ")?.to_vec())
            }
            LC_TIME_NAMES => StatusVar::LcTimeNames(reader.u16("Q_LC_TIME_NAMES")?),
            CHARSET_DATABASE => StatusVar::CharsetDatabase(reader.u16("Q_CHARSET_DATABASE")?),
            TABLE_MAP_FOR_UPDATE => StatusVar::TableMapForUpdate(reader.u64("Q_TABLE_MAP_FOR_UPDATE")?),
            UPDATED_DB_NAMES => {
                let count = reader.u8("Q_UPDATED_DB_NAMES count")?;
                if count == OVER_MAX_DBS_IN_EVENT_MTS {
                    StatusVar::UpdatedDbNames(None)
                } else {
                    let mut names = Vec::with_capacity(count as usize);
                    for _ in 0..count {
                        let rest = &bytes[reader.position()..];
                        let Some(end) = rest.iter().position(|&b| b == 0) else {
                            return Err(DecodeError::invalid("Q_UPDATED_DB_NAMES", "name is not NUL-terminated"));
                        };
                        names.push(reader.take(end, "Q_UPDATED_DB_NAMES name")?.to_vec());
                        reader.u8("Q_UPDATED_DB_NAMES terminator")?;
                    }
                    StatusVar::UpdatedDbNames(Some(names))
                }
            }
            MICROSECONDS => StatusVar::Microseconds(reader.u24("Q_MICROSECONDS")?),
            MASTER_DATA_WRITTEN => StatusVar::MasterDataWritten(reader.u32("Q_MASTER_DATA_WRITTEN")?),
            INVOKER => {
                let user_length = reader.u8("Q_INVOKER user length")? as usize;
                let user = reader.take(user_length, "Q_INVOKER user")?.to_vec();
                let host_length = reader.u8("Q_INVOKER host length")? as usize;
                let host = reader.take(host_length, "Q_INVOKER host")?.to_vec();
                StatusVar::Invoker { user, host }
            }
            HRNOW => StatusVar::HrNow(reader.u24("Q_HRNOW")?),
            XID => StatusVar::Xid(reader.u64("Q_XID")?),
            GTID_FLAGS3 => {
                let flags = reader.u8("Q_GTID_FLAGS3")?;
                let start_alter_seq_no =
                    if flags & GTID_FLAGS3_WITH_SEQ_NO != 0 { Some(reader.u64("Q_GTID_FLAGS3 seq_no")?) } else { None };
                StatusVar::GtidFlags3 { flags, start_alter_seq_no }
            }
            _ => StatusVar::Unparsed { code, rest: reader.rest().to_vec() },
        };
        vars.push(var);
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_status_variables_decode_and_round_trip() {
        let mut event = QueryEvent::new(5, "shop", "ALTER TABLE t ADD COLUMN c INT");
        event.status_vars.extend([
            StatusVar::MasterDataWritten(77),
            StatusVar::Invoker { user: b"root".to_vec(), host: b"localhost".to_vec() },
            StatusVar::HrNow(123_456),
            StatusVar::Xid(42),
            StatusVar::GtidFlags3 { flags: 2, start_alter_seq_no: None },
            StatusVar::GtidFlags3 { flags: 4, start_alter_seq_no: Some(9) },
        ]);
        let mut body = Vec::new();
        event.encode_body(&mut body);
        let decoded = QueryEvent::decode_body(&body).unwrap();
        assert_eq!(decoded, event);
        // A code nobody knows keeps the rest raw, and the text is still found.
        let mut unknown = QueryEvent::new(5, "shop", "DROP TABLE t");
        unknown.status_vars.push(StatusVar::Unparsed { code: 200, rest: vec![1, 2, 3] });
        let mut body = Vec::new();
        unknown.encode_body(&mut body);
        assert_eq!(QueryEvent::decode_body(&body).unwrap().query, b"DROP TABLE t");
    }

    #[test]
    fn statement_of_finds_the_text_decode_body_finds() {
        let mut event = QueryEvent::new(5, "shop", "BEGIN");
        event.status_vars.extend([StatusVar::MasterDataWritten(77), StatusVar::Xid(42)]);
        let mut body = Vec::new();
        event.encode_body(&mut body);
        assert_eq!(QueryEvent::statement_of(&body).unwrap(), b"BEGIN");
        assert_eq!(QueryEvent::statement_of(&body).unwrap(), &QueryEvent::decode_body(&body).unwrap().query[..]);
        let mut empty_database = Vec::new();
        QueryEvent::new(1, "", "COMMIT").encode_body(&mut empty_database);
        assert_eq!(QueryEvent::statement_of(&empty_database).unwrap(), b"COMMIT");
        for cut in [0, 7, 12, body.len() - 6] {
            assert!(QueryEvent::statement_of(&body[..cut]).is_err(), "a body cut at {cut}");
        }
        let database_end = body.len() - "BEGIN".len() - 1;
        body[database_end] = b'x';
        assert!(QueryEvent::statement_of(&body).is_err(), "database name not NUL-terminated");
    }
}
