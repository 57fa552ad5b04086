//! A blocking MySQL client for a replication source: what a MySQL replica's
//! I/O thread sends, in the order it sends it.
//!
//! Handshake v10, `mysql_native_password` and `caching_sha2_password` (auth
//! switch; full authentication with the source's RSA key) come from
//! `mysql_common` and the protocol crate's framing ([`PacketStream`]: split
//! and joined packets, sequence ids, a `max_allowed_packet` bound checked
//! before the buffer grows). COM_QUERY reads text result sets; then
//! COM_REGISTER_SLAVE and COM_BINLOG_DUMP_GTID (or COM_BINLOG_DUMP) start
//! the event stream, read one event per packet with its CRC32 verified.
//! The stream is read by a [`PacketReader`] that lends each event from its
//! read buffer (no copy into a packet buffer; the receiver copies it once,
//! into the relay log).
//!
//! A MariaDB source (its version string says "MariaDB") gets what a
//! MariaDB replica sends on top: `SET @mariadb_slave_capability = 4` (send
//! MariaDB's GTID, Gtid_list, Binlog_checkpoint and Annotate_rows events as
//! they are), optionally `SET @slave_connect_state` (MariaDB GTID
//! positioning), and COM_BINLOG_DUMP with `BINLOG_SEND_ANNOTATE_ROWS_EVENT`.
//!
//! Every failure is a [`MysqlError`]: the source's own ERR packet (code,
//! SQLSTATE, message: 1045 for a wrong password, 1236 from a dump), or the
//! MySQL client library's error for what has no ERR packet (2003 can't
//! connect, 2013 lost connection, 2027 malformed packet), or 1743 for an
//! event whose checksum does not match.

use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::time::Duration;

use binlog_format::frame::RawEvent;
use binlog_format::gtid_set::GtidSet;
use binlog_format::DecodeError;
use mysql_common::constants::CapabilityFlags;
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;
use protocol::errors::ProtocolError;
use protocol::packet::PacketStream;
use protocol::packet_reader::PacketReader;
use protocol::resultset::UTF8MB4_GENERAL_CI;
use protocol::MysqlError;

use crate::errors;

const COM_QUERY: u8 = 0x03;
const COM_REGISTER_SLAVE: u8 = 0x15;
const COM_BINLOG_DUMP: u8 = 0x12;
const COM_BINLOG_DUMP_GTID: u8 = 0x1e;
/// COM_BINLOG_DUMP_GTID flag: the request carries a GTID set.
const BINLOG_THROUGH_GTID: u16 = 0x04;
/// Dump flag: end with an EOF packet at the end of the log instead of
/// waiting for new events.
const BINLOG_DUMP_NON_BLOCK: u16 = 0x01;
/// MariaDB's dump flag: send Annotate_rows events (else the source drops them).
const BINLOG_SEND_ANNOTATE_ROWS_EVENT: u16 = 0x02;
/// `@mariadb_slave_capability`: MARIA_SLAVE_CAPABILITY_GTID, what MariaDB
/// 10.x replicas send; the source then sends its events unchanged.
pub const MARIADB_SLAVE_CAPABILITY_GTID: u8 = 4;
const NATIVE_PASSWORD_PLUGIN: &[u8] = b"mysql_native_password";
const CACHING_SHA2_PLUGIN: &[u8] = b"caching_sha2_password";

/// caching_sha2_password's first answer: a 32-byte scramble (empty for an
/// empty password, as clients send).
fn caching_sha2_scramble(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    let Ok(nonce) = <[u8; protocol::auth::SCRAMBLE_BYTES]>::try_from(nonce) else {
        return Vec::new();
    };
    mysql_common::auth::plugins::caching_sha2_password::scramble_sha256(&nonce, password)
        .map(|scramble| scramble.to_vec())
        .unwrap_or_default()
}

/// Largest packet accepted from the source: a 1 GiB event (MySQL's
/// `replica_max_allowed_packet` maximum) plus its 0x00 marker.
pub const PACKET_BYTES_MAX: usize = (1 << 30) + 1;

/// The dump stream's read buffer: a dump streams megabytes; large reads
/// keep the receiver's system calls few, and events up to this size are
/// lent from it.
const DUMP_READ_BUFFER_BYTES: usize = 256 * 1024;

/// Where the source is and who we are to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceAddress {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
}

impl SourceAddress {
    /// `user@host:port`, as MySQL names a source in its messages.
    pub fn display(&self) -> String {
        format!("{}@{}:{}", self.user, self.host, self.port)
    }
}

/// What the dump sends next.
pub enum DumpPacket<'a> {
    /// One event, header to checksum, its CRC32 verified.
    Event(&'a [u8]),
    /// The source's EOF: a non-blocking dump reached the end of the log.
    EndOfLog,
}

/// A result set as text: its column names, then its rows (`None` for NULL).
pub type TextResult = (Vec<String>, Vec<Vec<Option<String>>>);

pub struct SourceClient {
    stream: PacketStream,
    /// Whether the source's events carry a CRC32 footer: what
    /// `@master_binlog_checksum` said ([`SourceClient::negotiate_checksum`]).
    events_have_checksum: bool,
    /// Off only for readers that count bytes and measure the source (the
    /// dump benchmark): a replica always verifies.
    verify_checksums: bool,
    /// The dump's packets, from the first [`SourceClient::read_event`] on
    /// (commands and their answers go through `stream` before that).
    dump: Option<PacketReader<TcpStream>>,
    pub server_version: String,
    /// The dump's packets carry the semi-sync header (`semi_sync_ack.rs`).
    semi_sync: bool,
    /// The last event read asked for an ack.
    ack_requested: bool,
    /// The last event read asked for an ack: the source may restart its
    /// packet numbering at 1 after it.
    sequence_may_restart: bool,
}

impl SourceClient {
    /// Connects and logs in. `timeout` bounds the connect and every later
    /// read and write (MySQL's `replica_net_timeout`): a source that sends
    /// nothing, not even a heartbeat, for that long is taken for gone.
    pub fn connect(address: &SourceAddress, timeout: Duration) -> Result<SourceClient, MysqlError> {
        let socket = connect_socket(address, timeout)?;
        let stream = PacketStream::new(socket, PACKET_BYTES_MAX).map_err(|error| errors::lost_connection(&error.to_string()))?;
        stream.set_read_timeout(timeout).map_err(|error| errors::lost_connection(&error.to_string()))?;
        stream.set_write_timeout(timeout).map_err(|error| errors::lost_connection(&error.to_string()))?;
        let mut client = SourceClient {
            stream,
            events_have_checksum: false,
            verify_checksums: true,
            dump: None,
            server_version: String::new(),
            semi_sync: false,
            ack_requested: false,
            sequence_may_restart: false,
        };
        client.log_in(address)?;
        Ok(client)
    }

    fn log_in(&mut self, address: &SourceAddress) -> Result<(), MysqlError> {
        let greeting = self.read_packet()?;
        if greeting.first() == Some(&0xFF) {
            return Err(parse_err_packet(&greeting));
        }
        let handshake: HandshakePacket<'_> = ParseBuf(&greeting).parse(()).map_err(|_| errors::malformed_packet())?;
        self.server_version = handshake.server_version_str().into_owned();
        let scramble = handshake.nonce();
        let response = protocol::native_password_response(&scramble, address.password.as_bytes());
        let flags = CapabilityFlags::CLIENT_PROTOCOL_41
            | CapabilityFlags::CLIENT_SECURE_CONNECTION
            | CapabilityFlags::CLIENT_PLUGIN_AUTH
            | CapabilityFlags::CLIENT_LONG_PASSWORD
            | CapabilityFlags::CLIENT_TRANSACTIONS;
        let hello = HandshakeResponse::new(
            Some(&response[..]),
            (8, 4, 0),
            Some(address.user.as_bytes()),
            None::<&[u8]>,
            Some(AuthPlugin::MysqlNativePassword),
            flags,
            None,
            16 << 20,
        );
        let mut bytes = Vec::new();
        hello.serialize(&mut bytes);
        // mysql_common writes utf8mb4_general_ci's id as the collation
        // byte already; checked so a change there cannot go unnoticed.
        debug_assert_eq!(bytes.get(8), Some(&(UTF8MB4_GENERAL_CI as u8)));
        self.write_packet(&bytes)?;
        // caching_sha2_password's nonce, once the source switched to it.
        let mut sha2_nonce: Option<Vec<u8>> = None;
        loop {
            let answer = self.read_packet()?;
            match answer.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(parse_err_packet(&answer)),
                // Auth switch request: plugin name NUL, then its scramble.
                Some(0xFE) => {
                    let rest = &answer[1..];
                    let name_end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                    let data = rest.get(name_end + 1..).unwrap_or_default();
                    let scramble = &data[..data.len().min(protocol::auth::SCRAMBLE_BYTES)];
                    let response = match &rest[..name_end] {
                        NATIVE_PASSWORD_PLUGIN => protocol::native_password_response(scramble, address.password.as_bytes()),
                        CACHING_SHA2_PLUGIN => {
                            sha2_nonce = Some(scramble.to_vec());
                            caching_sha2_scramble(scramble, address.password.as_bytes())
                        }
                        other => return Err(errors::auth_plugin_not_supported(&String::from_utf8_lossy(other))),
                    };
                    self.write_packet(&response)?;
                }
                // caching_sha2_password's more-data packets.
                Some(0x01) if sha2_nonce.is_some() => match answer.get(1) {
                    // Fast path: the OK follows.
                    Some(0x03) if answer.len() == 2 => {}
                    // Full authentication: ask for the source's RSA key.
                    Some(0x04) if answer.len() == 2 => self.write_packet(&[0x02])?,
                    // The RSA public key: the password goes encrypted with it.
                    _ => {
                        let nonce = sha2_nonce.as_deref().unwrap_or_default();
                        let mut masked = address.password.as_bytes().to_vec();
                        masked.push(0);
                        for (index, byte) in masked.iter_mut().enumerate() {
                            *byte ^= nonce[index % nonce.len().max(1)];
                        }
                        let encrypted = mysql_common::crypto::encrypt(&masked, &answer[1..])
                            .map_err(|_| errors::auth_plugin_not_supported("caching_sha2_password"))?;
                        self.write_packet(&encrypted)?;
                    }
                },
                _ => return Err(errors::malformed_packet()),
            }
        }
    }

    /// Runs a statement and returns its rows as text (`None` for NULL);
    /// a statement answering OK has no rows.
    pub fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, MysqlError> {
        Ok(self.query_with_columns(sql)?.1)
    }

    /// As [`SourceClient::query`], with the result's column names (none
    /// for OK), for reading a row by name (SHOW REPLICA STATUS has dozens).
    pub fn query_with_columns(&mut self, sql: &str) -> Result<TextResult, MysqlError> {
        self.stream.reset_sequence();
        let mut payload = Vec::with_capacity(1 + sql.len());
        payload.push(COM_QUERY);
        payload.extend_from_slice(sql.as_bytes());
        self.write_packet(&payload)?;
        let first = self.read_packet()?;
        match first.first() {
            Some(0x00) => return Ok((Vec::new(), Vec::new())),
            Some(0xFF) => return Err(parse_err_packet(&first)),
            _ => {}
        }
        let (column_count, _) = read_lenenc(&first).ok_or_else(errors::malformed_packet)?;
        let mut columns = Vec::new();
        for _ in 0..column_count {
            columns.push(column_name(&self.read_packet()?)?);
        }
        let end_of_columns = self.read_packet()?;
        if !is_eof(&end_of_columns) {
            return Err(errors::malformed_packet());
        }
        let mut rows = Vec::new();
        loop {
            let packet = self.read_packet()?;
            if is_eof(&packet) {
                return Ok((columns, rows));
            }
            if packet.first() == Some(&0xFF) {
                return Err(parse_err_packet(&packet));
            }
            rows.push(parse_text_row(&packet, column_count as usize)?);
        }
    }

    /// The first column of the first row, if any.
    pub fn query_value(&mut self, sql: &str) -> Result<Option<String>, MysqlError> {
        Ok(self.query(sql)?.into_iter().next().and_then(|row| row.into_iter().next().flatten()))
    }

    /// `SET @master_binlog_checksum = @@global.binlog_checksum` and read it
    /// back, as MySQL's replica does: from then on the source sends every
    /// event with the checksum it writes, and this client verifies it.
    pub fn negotiate_checksum(&mut self) -> Result<(), MysqlError> {
        self.query("SET @master_binlog_checksum = @@global.binlog_checksum")?;
        let algorithm = self.query_value("SELECT @master_binlog_checksum")?.unwrap_or_default();
        self.events_have_checksum = algorithm.eq_ignore_ascii_case("CRC32");
        Ok(())
    }

    /// Stops verifying event checksums and parsing event frames: for a
    /// reader that only counts bytes to measure the source (`binlogd bench
    /// dump`), whose own CPU would otherwise be part of the measurement.
    pub fn skip_event_verification(&mut self) {
        self.verify_checksums = false;
    }

    pub fn events_have_checksum(&self) -> bool {
        self.events_have_checksum
    }

    /// COM_REGISTER_SLAVE: the source lists us in SHOW REPLICAS.
    pub fn register_replica(&mut self, server_id: u32, report_host: &str, report_port: u16) -> Result<(), MysqlError> {
        let mut payload = vec![COM_REGISTER_SLAVE];
        payload.extend_from_slice(&server_id.to_le_bytes());
        for text in [report_host, "", ""] {
            payload.push(text.len().min(255) as u8);
            payload.extend_from_slice(&text.as_bytes()[..text.len().min(255)]);
        }
        payload.extend_from_slice(&report_port.to_le_bytes());
        payload.extend_from_slice(&0u32.to_le_bytes()); // replication rank, unused
        payload.extend_from_slice(&0u32.to_le_bytes()); // source id: filled by the source
        self.command_expecting_ok(&payload)
    }

    /// COM_BINLOG_DUMP_GTID: every transaction not in `executed`, from the
    /// oldest file that has one. The set travels in MySQL's binary encoding
    /// (the Previous_gtids body).
    pub fn request_dump_gtid(&mut self, server_id: u32, executed: &GtidSet, non_blocking: bool) -> Result<(), MysqlError> {
        let payload = encode_dump_gtid(server_id, executed, non_blocking);
        self.stream.reset_sequence();
        self.write_packet(&payload)
    }

    /// COM_BINLOG_DUMP from `file_name` at `position` (4: the first event).
    pub fn request_dump_position(&mut self, server_id: u32, file_name: &str, position: u32, non_blocking: bool) -> Result<(), MysqlError> {
        let flags = if non_blocking { BINLOG_DUMP_NON_BLOCK } else { 0 };
        self.request_dump(server_id, file_name, position, flags)
    }

    /// True when the source's greeting names MariaDB (`5.5.5-10.11.19-MariaDB...`).
    pub fn is_mariadb(&self) -> bool {
        self.server_version.contains("MariaDB")
    }

    /// `SET @mariadb_slave_capability = 4`, as a MariaDB 10.x replica: the
    /// source sends its GTID and other MariaDB events instead of replacing
    /// them with dummies for old replicas.
    pub fn declare_mariadb_capability(&mut self) -> Result<(), MysqlError> {
        self.query(&format!("SET @mariadb_slave_capability = {MARIADB_SLAVE_CAPABILITY_GTID}")).map(drop)
    }

    /// MariaDB GTID positioning: the dump starts after `connect_state` (the
    /// last GTID of each domain, `0-1-5,...`; empty: from the source's
    /// first transaction), with strict mode and duplicate skipping off.
    pub fn set_mariadb_connect_state(&mut self, connect_state: &str) -> Result<(), MysqlError> {
        if !connect_state.bytes().all(|byte| byte.is_ascii_digit() || byte == b'-' || byte == b',') {
            return Err(errors::replica_fatal(&format!("'{connect_state}' is not a MariaDB GTID position")));
        }
        self.query(&format!("SET @slave_connect_state = '{connect_state}'"))?;
        self.query("SET @slave_gtid_strict_mode = 0")?;
        self.query("SET @slave_gtid_ignore_duplicates = 0").map(drop)
    }

    /// COM_BINLOG_DUMP to a MariaDB source, asking for its Annotate_rows
    /// events too. With a connect state set, MariaDB ignores the file and
    /// position (send "" and 4).
    pub fn request_mariadb_dump(&mut self, server_id: u32, file_name: &str, position: u32) -> Result<(), MysqlError> {
        self.request_dump(server_id, file_name, position, BINLOG_SEND_ANNOTATE_ROWS_EVENT)
    }

    fn request_dump(&mut self, server_id: u32, file_name: &str, position: u32, flags: u16) -> Result<(), MysqlError> {
        let mut payload = vec![COM_BINLOG_DUMP];
        payload.extend_from_slice(&position.to_le_bytes());
        payload.extend_from_slice(&flags.to_le_bytes());
        payload.extend_from_slice(&server_id.to_le_bytes());
        payload.extend_from_slice(file_name.as_bytes());
        self.stream.reset_sequence();
        self.write_packet(&payload)
    }

    /// The next packet of a dump: an event (checksum verified when the
    /// source declared CRC32; a Format_description's own checksum always)
    /// or the end of a non-blocking dump. An ERR packet is the source's
    /// error (1236 and its message, usually).
    pub fn read_event(&mut self) -> Result<DumpPacket<'_>, MysqlError> {
        if self.dump.is_none() {
            self.dump = Some(self.dump_reader()?);
        }
        let reader = self.dump.as_mut().expect("the dump reader");
        if std::mem::take(&mut self.sequence_may_restart) {
            // The source restarts its numbering after an event that asked
            // for an ack (MySQL's and MariaDB's do).
            reader.allow_sequence_restart(1);
        }
        let packet = reader.next_packet().map_err(wire_error)?;
        match packet.first() {
            Some(0x00) => {}
            Some(0xFE) if packet.len() < 9 => return Ok(DumpPacket::EndOfLog),
            Some(0xFF) => return Err(parse_err_packet(packet)),
            _ => return Err(errors::malformed_packet()),
        }
        let event = if self.semi_sync {
            let (event, ack) = crate::semi_sync_ack::strip_header(&packet[1..])?;
            self.ack_requested = ack;
            self.sequence_may_restart = ack;
            event
        } else {
            &packet[1..]
        };
        if let Some(has_checksum) = format_description_checksum(event) {
            // Each file's Format_description names its algorithm, and the
            // events after it follow it (a source's `SET GLOBAL
            // binlog_checksum` rotates to a file of the other one).
            self.events_have_checksum = has_checksum;
        }
        if !self.verify_checksums {
            return Ok(DumpPacket::Event(event));
        }
        match RawEvent::parse(event, self.events_have_checksum) {
            Ok(raw) if raw.bytes.len() == event.len() => Ok(DumpPacket::Event(event)),
            Ok(_) => Err(errors::relay_log_write_failure("the event is shorter than its packet")),
            Err(DecodeError::BadChecksum { .. }) => Err(errors::network_read_event_checksum_failure()),
            Err(error) => Err(errors::relay_log_write_failure(&format!("could not parse the event: {error}"))),
        }
    }

    /// Asks for semi-synchronous replication before the dump, when the
    /// source has it; returns whether it does (`semi_sync_ack.rs`).
    pub fn declare_semi_sync(&mut self) -> Result<bool, MysqlError> {
        let rows = self.query(crate::semi_sync_ack::SUPPORT_QUERY)?;
        if !crate::semi_sync_ack::source_supports(&rows) {
            return Ok(false);
        }
        self.query(crate::semi_sync_ack::DECLARE)?;
        self.semi_sync = true;
        Ok(true)
    }

    /// Whether the event last read asked for an ack (cleared by asking).
    pub fn take_ack_request(&mut self) -> bool {
        std::mem::take(&mut self.ack_requested)
    }

    /// Acknowledges the source's binlog up to `end_position` of
    /// `file_name` (a packet of its own, sequence id 0, as MySQL's and
    /// MariaDB's replicas send it).
    pub fn send_ack(&mut self, file_name: &str, end_position: u64) -> Result<(), MysqlError> {
        self.stream.reset_sequence();
        self.write_packet(&crate::semi_sync_ack::encode_ack(file_name, end_position))
    }

    /// The dump's reader, taking over the socket's input where the command
    /// stream stopped: nothing may be buffered there (the dump request was
    /// the last command; the source has not answered yet), and the next
    /// packet carries the sequence id after the request's.
    fn dump_reader(&self) -> Result<PacketReader<TcpStream>, MysqlError> {
        if self.stream.has_buffered_input() {
            return Err(errors::malformed_packet());
        }
        let socket = self.stream.socket().try_clone().map_err(|error| errors::lost_connection(&error.to_string()))?;
        Ok(PacketReader::new(socket, DUMP_READ_BUFFER_BYTES, self.stream.sequence_id(), PACKET_BYTES_MAX))
    }

    /// A handle that ends this connection from another thread (STOP
    /// REPLICA): a read blocked on the socket returns at once.
    pub fn shutdown_handle(&self) -> Result<TcpStream, MysqlError> {
        self.stream.socket().try_clone().map_err(|error| errors::lost_connection(&error.to_string()))
    }

    /// Closes the socket (both directions).
    pub fn close(&self) {
        let _ = self.stream.socket().shutdown(Shutdown::Both);
    }

    fn command_expecting_ok(&mut self, payload: &[u8]) -> Result<(), MysqlError> {
        self.stream.reset_sequence();
        self.write_packet(payload)?;
        let answer = self.read_packet()?;
        match answer.first() {
            Some(0x00) => Ok(()),
            Some(0xFF) => Err(parse_err_packet(&answer)),
            _ => Err(errors::malformed_packet()),
        }
    }

    fn write_packet(&mut self, payload: &[u8]) -> Result<(), MysqlError> {
        self.stream.write_packet(payload).and_then(|()| self.stream.flush()).map_err(wire_error)
    }

    fn read_packet(&mut self) -> Result<Vec<u8>, MysqlError> {
        self.stream.read_packet().map_err(wire_error)
    }
}

fn connect_socket(address: &SourceAddress, timeout: Duration) -> Result<TcpStream, MysqlError> {
    let cannot_connect = |code: i32| errors::cannot_connect(&address.host, address.port, code);
    let addresses = (address.host.as_str(), address.port).to_socket_addrs().map_err(|_| errors::unknown_host(&address.host))?;
    let mut last_os_error = 0;
    for socket_address in addresses {
        match TcpStream::connect_timeout(&socket_address, timeout.max(Duration::from_millis(1))) {
            Ok(socket) => return Ok(socket),
            Err(error) => last_os_error = error.raw_os_error().unwrap_or(0),
        }
    }
    Err(cannot_connect(last_os_error))
}

/// COM_BINLOG_DUMP_GTID's payload: command, flags, server_id, an empty
/// file name and position 4 (the GTID set decides), the set's length and
/// the set.
pub fn encode_dump_gtid(server_id: u32, executed: &GtidSet, non_blocking: bool) -> Vec<u8> {
    let mut set = Vec::new();
    executed.encode_previous_gtids_body(&mut set);
    let mut payload = vec![COM_BINLOG_DUMP_GTID];
    let flags = BINLOG_THROUGH_GTID | if non_blocking { BINLOG_DUMP_NON_BLOCK } else { 0 };
    payload.extend_from_slice(&flags.to_le_bytes());
    payload.extend_from_slice(&server_id.to_le_bytes());
    payload.extend_from_slice(&0u32.to_le_bytes()); // file name length
    payload.extend_from_slice(&4u64.to_le_bytes()); // position
    payload.extend_from_slice(&(set.len() as u32).to_le_bytes());
    payload.extend_from_slice(&set);
    payload
}

fn wire_error(error: ProtocolError) -> MysqlError {
    match error {
        ProtocolError::PacketTooLarge { .. } => errors::packet_too_large(),
        ProtocolError::Malformed { .. } | ProtocolError::OutOfOrder { .. } => errors::malformed_packet(),
        ProtocolError::Closed => errors::lost_connection("the source closed the connection"),
        ProtocolError::Io(error) => errors::lost_connection(&error.to_string()),
    }
}

/// An ERR packet: 0xFF, code, `#` and SQLSTATE, message.
pub fn parse_err_packet(packet: &[u8]) -> MysqlError {
    if packet.len() < 3 {
        return errors::malformed_packet();
    }
    let code = u16::from_le_bytes([packet[1], packet[2]]);
    let (sql_state, message) = match packet.get(3) {
        Some(b'#') if packet.len() >= 9 => (std::str::from_utf8(&packet[4..9]).unwrap_or("HY000"), &packet[9..]),
        _ => ("HY000", &packet[3..]),
    };
    MysqlError::new(code, sql_state, String::from_utf8_lossy(message))
}

/// An EOF packet (0xFE and fewer than 9 bytes; the client did not ask for
/// CLIENT_DEPRECATE_EOF).
fn is_eof(packet: &[u8]) -> bool {
    packet.first() == Some(&0xFE) && packet.len() < 9
}

fn parse_text_row(packet: &[u8], column_count: usize) -> Result<Vec<Option<String>>, MysqlError> {
    let mut row = Vec::with_capacity(column_count);
    let mut rest = packet;
    for _ in 0..column_count {
        if rest.first() == Some(&0xFB) {
            row.push(None);
            rest = &rest[1..];
            continue;
        }
        let (length, used) = read_lenenc(rest).ok_or_else(errors::malformed_packet)?;
        let value = rest.get(used..used + length as usize).ok_or_else(errors::malformed_packet)?;
        row.push(Some(String::from_utf8_lossy(value).into_owned()));
        rest = &rest[used + length as usize..];
    }
    Ok(row)
}

/// The name in a column definition (ColumnDefinition41: catalog, schema,
/// table, original table, then the name, each a length-encoded string).
fn column_name(definition: &[u8]) -> Result<String, MysqlError> {
    let mut rest = definition;
    for _ in 0..4 {
        let (length, used) = read_lenenc(rest).ok_or_else(errors::malformed_packet)?;
        rest = rest.get(used + length as usize..).ok_or_else(errors::malformed_packet)?;
    }
    let (length, used) = read_lenenc(rest).ok_or_else(errors::malformed_packet)?;
    let name = rest.get(used..used + length as usize).ok_or_else(errors::malformed_packet)?;
    Ok(String::from_utf8_lossy(name).into_owned())
}

/// A length-encoded integer and the bytes it took.
fn read_lenenc(bytes: &[u8]) -> Option<(u64, usize)> {
    let width = match *bytes.first()? {
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        small => return Some((u64::from(small), 1)),
    };
    let field = bytes.get(1..1 + width)?;
    let mut value = [0u8; 8];
    value[..width].copy_from_slice(field);
    Some((u64::from_le_bytes(value), 1 + width))
}

/// The algorithm a Format_description event declares (whether the events
/// after it carry CRC32 footers); `None` for any other event.
fn format_description_checksum(event: &[u8]) -> Option<bool> {
    use binlog_format::constants::EventType;
    use binlog_format::events::format_description::FormatDescription;
    if event.get(4) != Some(&(EventType::FormatDescription as u8)) {
        return None;
    }
    let raw = RawEvent::parse_unverified(event, false).ok()?;
    FormatDescription::decode_body(raw.body).ok().map(|format| format.has_checksum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog_format::gtid_set::Uuid;

    #[test]
    fn a_column_definition_gives_its_name_and_a_short_one_is_malformed() {
        let mut definition = Vec::new();
        for field in ["def", "", "", "", "Retrieved_Gtid_Set", ""] {
            definition.push(field.len() as u8);
            definition.extend_from_slice(field.as_bytes());
        }
        definition.extend_from_slice(&[0x0c, 33, 0, 0, 1, 0, 0, 253, 0, 0, 0, 0, 0]);
        assert_eq!(column_name(&definition).unwrap(), "Retrieved_Gtid_Set");
        assert!(column_name(&definition[..8]).is_err());
    }

    #[test]
    fn dump_gtid_request_is_what_the_source_parses() {
        let mut set = GtidSet::new();
        let uuid = Uuid([7; 16]);
        set.add_interval(uuid, 1, 6);
        set.add_interval(uuid, 9, 10);
        let payload = encode_dump_gtid(42, &set, true);
        let request = protocol::replication::parse_binlog_dump_gtid(&payload).expect("a valid COM_BINLOG_DUMP_GTID");
        assert_eq!(request.server_id, 42);
        assert!(request.is_non_blocking());
        let text: Vec<String> = request.gtid_set.iter().map(ToString::to_string).collect();
        assert_eq!(text, vec![format!("{uuid}:1-5:9")]);

        // With a tag the set goes in the tagged format, which the source
        // and mysql_common (the oracle) both read.
        let tagged = binlog_format::Tsid { uuid, tag: "batch".parse().unwrap() };
        set.add_tsid_interval(tagged, 3, 4);
        let payload = encode_dump_gtid(42, &set, true);
        let request = protocol::replication::parse_binlog_dump_gtid(&payload).expect("a valid COM_BINLOG_DUMP_GTID");
        let text: Vec<String> = request.gtid_set.iter().map(ToString::to_string).collect();
        assert_eq!(text, vec![format!("{uuid}:1-5:9"), format!("{uuid}:batch:3")]);
        use mysql_common::proto::MyDeserialize as _;
        let theirs = mysql_common::packets::ComBinlogDumpGtid::deserialize((), &mut mysql_common::io::ParseBuf(&payload)).unwrap();
        let sids: Vec<String> = theirs.sids().iter().map(ToString::to_string).collect();
        assert_eq!(sids, vec![format!("{uuid}:1-5:9"), format!("{uuid}:batch:3")]);
    }

    #[test]
    fn err_packets_keep_code_state_and_message() {
        let mut packet = vec![0xFF, 0x15, 0x04, b'#'];
        packet.extend_from_slice(b"28000Access denied for user 'r'@'h' (using password: YES)");
        let error = parse_err_packet(&packet);
        assert_eq!((error.code, error.sql_state_str()), (1045, "28000"));
        assert_eq!(error.message, "Access denied for user 'r'@'h' (using password: YES)");
    }

    #[test]
    fn lenenc_integers() {
        assert_eq!(read_lenenc(&[0x05]), Some((5, 1)));
        assert_eq!(read_lenenc(&[0xFC, 0x01, 0x02]), Some((0x0201, 3)));
        assert_eq!(read_lenenc(&[0xFD, 1, 0, 0]), Some((1, 4)));
        assert_eq!(read_lenenc(&[0xFC, 0x01]), None);
    }
}
