//! A minimal MySQL client over a plain TCP socket, built on mysql_common's
//! client-side packet types (handshake response, COM_STMT_EXECUTE builder,
//! column and row decoders), so the server is checked against an
//! implementation it does not share code with. For tests that send bytes
//! no real client sends, or need a session to stay open across other
//! clients' statements.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, Column, ComStmtExecuteRequestBuilder, CommonOkPacket, ErrPacket, HandshakePacket, HandshakeResponse,
    OkPacketDeserializer, ResultSetTerminator,
};
use mysql_common::proto::{Binary, MySerialize};
use mysql_common::row::RowDeserializer;
use mysql_common::value::ServerSide;

pub use mysql_common::Value as MValue;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerErr {
    pub code: u16,
    pub state: String,
    pub message: String,
}

#[derive(Debug)]
pub enum Response {
    Ok { affected_rows: u64, last_insert_id: Option<u64>, status: StatusFlags, warnings: u16, info: String },
    Rows { columns: Vec<Column>, rows: Vec<Vec<Option<Vec<u8>>>>, status: StatusFlags },
    BinaryRows { columns: Vec<Column>, rows: Vec<Vec<MValue>>, status: StatusFlags },
}

impl Response {
    pub fn text_rows(&self) -> Vec<Vec<Option<String>>> {
        match self {
            Response::Rows { rows, .. } => {
                rows.iter().map(|row| row.iter().map(|v| v.as_ref().map(|b| String::from_utf8_lossy(b).into_owned())).collect()).collect()
            }
            other => panic!("not a text result set: {other:?}"),
        }
    }

    pub fn status(&self) -> StatusFlags {
        match self {
            Response::Ok { status, .. } | Response::Rows { status, .. } | Response::BinaryRows { status, .. } => *status,
        }
    }
}

pub struct RawClient {
    pub socket: TcpStream,
    pub sequence_id: u8,
    pub capabilities: CapabilityFlags,
    pub connection_id: u32,
}

pub fn parse_err(packet: &[u8], capabilities: CapabilityFlags) -> ServerErr {
    let err: ErrPacket<'_> = ParseBuf(packet).parse(capabilities).expect("ERR packet");
    let err = err.server_error();
    ServerErr {
        code: err.error_code(),
        state: err.sql_state_ref().map(|s| s.as_str().into_owned()).unwrap_or_default(),
        message: err.message_str().into_owned(),
    }
}

/// The capabilities the test client asks for by default.
pub fn default_capabilities() -> CapabilityFlags {
    CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_MULTI_STATEMENTS
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_TRANSACTIONS
}

impl RawClient {
    pub fn connect(address: SocketAddr) -> RawClient {
        let socket = TcpStream::connect(address).expect("connect");
        socket.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        RawClient { socket, sequence_id: 0, capabilities: CapabilityFlags::empty(), connection_id: 0 }
    }

    pub fn read_packet(&mut self) -> Vec<u8> {
        self.try_read_packet().expect("read packet")
    }

    pub fn try_read_packet(&mut self) -> Result<Vec<u8>, protocol::ProtocolError> {
        protocol::packet::read_packet(&mut self.socket, &mut self.sequence_id, 1 << 30)
    }

    pub fn write_packet(&mut self, payload: &[u8]) {
        protocol::packet::write_packet(&mut self.socket, &mut self.sequence_id, payload, &[]).expect("write packet");
    }

    /// Starts a command: sequence id 0.
    pub fn command(&mut self, payload: &[u8]) {
        self.sequence_id = 0;
        self.write_packet(payload);
    }

    /// Starts a command on a connection that may be gone; false if the
    /// write failed.
    pub fn try_command(&mut self, payload: &[u8]) -> bool {
        self.sequence_id = 0;
        protocol::packet::write_packet(&mut self.socket, &mut self.sequence_id, payload, &[]).is_ok()
    }

    pub fn read_handshake(&mut self) -> (Vec<u8>, HandshakePacket<'static>) {
        let packet = self.read_packet();
        let handshake: HandshakePacket<'_> = ParseBuf(&packet).parse(()).expect("handshake");
        let nonce = handshake.nonce();
        (nonce, handshake.into_owned())
    }

    /// Logs in, answering the handshake for `plugin` and following an auth
    /// switch. Returns the switch request seen.
    pub fn login_with(
        address: SocketAddr,
        user: &str,
        password: &str,
        plugin: AuthPlugin<'static>,
        capabilities: CapabilityFlags,
        database: Option<&str>,
    ) -> (Result<RawClient, ServerErr>, Option<AuthSwitchRequest<'static>>) {
        let (result, switch, _) = Self::login_traced(address, user, password, plugin, capabilities, database);
        (result, switch)
    }

    /// [`RawClient::login_with`], also returning caching_sha2_password's
    /// more-data statuses seen (`0x03` fast path, `0x04` full
    /// authentication, which this client completes with the server's RSA
    /// key, asked for with `0x02`).
    pub fn login_traced(
        address: SocketAddr,
        user: &str,
        password: &str,
        plugin: AuthPlugin<'static>,
        capabilities: CapabilityFlags,
        database: Option<&str>,
    ) -> (Result<RawClient, ServerErr>, Option<AuthSwitchRequest<'static>>, Vec<u8>) {
        let mut client = RawClient::connect(address);
        let (nonce, handshake) = client.read_handshake();
        client.connection_id = handshake.connection_id();
        // Answer as the plugin would; for another plugin the token is
        // bytes the server cannot use.
        let token = answer(&plugin, &nonce, password);
        let response = HandshakeResponse::new(
            Some(token),
            (8, 4, 0),
            Some(user.as_bytes().to_vec()),
            database.map(|d| d.as_bytes().to_vec()),
            Some(plugin),
            capabilities,
            None,
            1 << 24,
        );
        let mut bytes = Vec::new();
        response.serialize(&mut bytes);
        client.write_packet(&bytes);
        client.capabilities = capabilities & handshake.capabilities();
        let (result, switch, statuses) = client.finish_authentication(nonce, password);
        (result.map(|()| client), switch, statuses)
    }

    /// Answers the server after a Handshake Response or COM_CHANGE_USER
    /// (sent with a scramble of `nonce`): follows an auth switch and
    /// caching_sha2_password's exchange to the OK or ERR.
    pub fn finish_authentication(
        &mut self,
        nonce: Vec<u8>,
        password: &str,
    ) -> (Result<(), ServerErr>, Option<AuthSwitchRequest<'static>>, Vec<u8>) {
        let client = self;
        let mut switch = None;
        let mut statuses = Vec::new();
        let mut nonce = nonce;
        loop {
            let packet = client.read_packet();
            match packet[0] {
                0x00 => return (Ok(()), switch, statuses),
                0xFF => return (Err(parse_err(&packet, CapabilityFlags::CLIENT_PROTOCOL_41)), switch, statuses),
                0xFE => {
                    let request: AuthSwitchRequest<'_> = ParseBuf(&packet).parse(()).expect("auth switch");
                    nonce = request.plugin_data().iter().copied().take(20).collect();
                    client.write_packet(&answer(&request.auth_plugin(), &nonce, password));
                    switch = Some(request.into_owned());
                }
                0x01 if packet.len() == 2 => {
                    statuses.push(packet[1]);
                    if packet[1] == 0x04 {
                        client.write_packet(&[0x02]);
                    }
                }
                // The server's RSA public key (PEM): the password goes
                // XORed with the nonce, then encrypted with it.
                0x01 => {
                    let mut masked = password.as_bytes().to_vec();
                    masked.push(0);
                    for (index, byte) in masked.iter_mut().enumerate() {
                        *byte ^= nonce[index % nonce.len()];
                    }
                    let encrypted = mysql_common::crypto::encrypt(&masked, &packet[1..]).expect("an RSA public key");
                    client.write_packet(&encrypted);
                }
                other => panic!("unexpected login reply {other:#x}"),
            }
        }
    }

    pub fn login(address: SocketAddr, user: &str, password: &str) -> RawClient {
        Self::login_with(address, user, password, AuthPlugin::MysqlNativePassword, default_capabilities(), None).0.expect("login")
    }

    fn deprecate_eof(&self) -> bool {
        self.capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF)
    }

    fn is_terminator(packet: &[u8]) -> bool {
        packet[0] == 0xFE && packet.len() < 0xFF_FFFF
    }

    fn terminator_status(&self, packet: &[u8]) -> StatusFlags {
        if self.deprecate_eof() {
            let ok: OkPacketDeserializer<'_, ResultSetTerminator> = ParseBuf(packet).parse(self.capabilities).expect("OK terminator");
            ok.into_inner().status_flags()
        } else {
            assert_eq!(packet.len(), 5, "classic EOF packet");
            StatusFlags::from_bits_truncate(u16::from_le_bytes([packet[3], packet[4]]))
        }
    }

    pub fn read_columns(&mut self, count: usize) -> Vec<Column> {
        let columns = (0..count)
            .map(|_| {
                let packet = self.read_packet();
                ParseBuf(&packet).parse::<Column>(()).expect("column definition")
            })
            .collect();
        if !self.deprecate_eof() {
            let eof = self.read_packet();
            assert!(eof[0] == 0xFE && eof.len() == 5, "EOF after column definitions");
        }
        columns
    }

    /// Reads one response (to COM_QUERY, COM_STMT_EXECUTE, ...).
    pub fn read_response(&mut self, binary: bool) -> Result<Response, ServerErr> {
        let packet = self.read_packet();
        match packet[0] {
            0x00 => {
                let ok: OkPacketDeserializer<'_, CommonOkPacket> = ParseBuf(&packet).parse(self.capabilities).expect("OK");
                let ok = ok.into_inner();
                Ok(Response::Ok {
                    affected_rows: ok.affected_rows(),
                    last_insert_id: ok.last_insert_id(),
                    status: ok.status_flags(),
                    warnings: ok.warnings(),
                    info: ok.info_str().map(|s| s.into_owned()).unwrap_or_default(),
                })
            }
            0xFF => Err(parse_err(&packet, self.capabilities)),
            _ => {
                let count = ParseBuf(&packet).checked_eat_lenenc_int().expect("column count") as usize;
                let columns = self.read_columns(count);
                let shared: Arc<[Column]> = columns.clone().into();
                let mut text_rows = Vec::new();
                let mut binary_rows = Vec::new();
                loop {
                    let packet = self.read_packet();
                    if packet[0] == 0xFF {
                        return Err(parse_err(&packet, self.capabilities));
                    }
                    if Self::is_terminator(&packet) {
                        let status = self.terminator_status(&packet);
                        return Ok(if binary {
                            Response::BinaryRows { columns, rows: binary_rows, status }
                        } else {
                            Response::Rows { columns, rows: text_rows, status }
                        });
                    }
                    if binary {
                        let row: RowDeserializer<ServerSide, Binary> = ParseBuf(&packet).parse(shared.clone()).expect("binary row");
                        binary_rows.push(row.into_inner().unwrap());
                    } else {
                        let mut buf = ParseBuf(&packet);
                        let row = (0..count)
                            .map(|_| {
                                if buf.0[0] == 0xFB {
                                    buf.skip(1);
                                    None
                                } else {
                                    Some(buf.checked_eat_lenenc_str().expect("text value").to_vec())
                                }
                            })
                            .collect();
                        assert!(buf.is_empty(), "text row has trailing bytes");
                        text_rows.push(row);
                    }
                }
            }
        }
    }

    pub fn query(&mut self, sql: &str) -> Result<Response, ServerErr> {
        let mut payload = vec![0x03];
        payload.extend_from_slice(sql.as_bytes());
        self.command(&payload);
        self.read_response(false)
    }

    /// COM_STMT_PREPARE; returns (statement id, parameter count, columns).
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, u16, Vec<Column>), ServerErr> {
        let mut payload = vec![0x16];
        payload.extend_from_slice(sql.as_bytes());
        self.command(&payload);
        let packet = self.read_packet();
        if packet[0] == 0xFF {
            return Err(parse_err(&packet, self.capabilities));
        }
        let mut buf = ParseBuf(&packet[1..]);
        let id = buf.eat_u32_le();
        let columns = buf.eat_u16_le();
        let params = buf.eat_u16_le();
        if params > 0 {
            self.read_columns(params.into());
        }
        let columns = if columns > 0 { self.read_columns(columns.into()) } else { Vec::new() };
        Ok((id, params, columns))
    }

    /// COM_STMT_EXECUTE built by mysql_common's client-side builder.
    pub fn execute(&mut self, id: u32, params: &[MValue]) -> Result<Response, ServerErr> {
        let (request, _) = ComStmtExecuteRequestBuilder::new(id).build(params);
        let mut payload = Vec::new();
        request.serialize(&mut payload);
        self.command(&payload);
        self.read_response(true)
    }

    pub fn execute_raw(&mut self, payload: &[u8]) -> Result<Response, ServerErr> {
        self.command(payload);
        self.read_response(true)
    }

    /// Reads one single-chunk packet whatever its sequence id (after the
    /// test broke the sequence on purpose).
    pub fn read_packet_any_sequence(&mut self) -> Vec<u8> {
        self.try_read_packet_any_sequence().expect("packet")
    }

    fn try_read_packet_any_sequence(&mut self) -> std::io::Result<Vec<u8>> {
        let mut header = [0u8; 4];
        self.socket.read_exact(&mut header)?;
        let length = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        self.sequence_id = header[3].wrapping_add(1);
        let mut payload = vec![0u8; length];
        self.socket.read_exact(&mut payload)?;
        Ok(payload)
    }

    /// Reads COM_FIELD_LIST's answer: definitions (each with a default
    /// value) up to the terminator; returns the column names.
    pub fn read_field_list(&mut self) -> Vec<String> {
        let mut names = Vec::new();
        loop {
            let packet = self.read_packet();
            if Self::is_terminator(&packet) {
                return names;
            }
            let column: Column = ParseBuf(&packet).parse(()).expect("column definition");
            assert_eq!(packet.last(), Some(&0xFB), "default value NULL");
            names.push(column.name_str().into_owned());
        }
    }

    /// Writes raw bytes, bypassing framing.
    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.socket.write_all(bytes).expect("write raw");
    }

    /// True when the server closed the connection (EOF or reset).
    pub fn closed_by_server(&mut self) -> bool {
        matches!(self.try_read_packet(), Err(protocol::ProtocolError::Closed) | Err(protocol::ProtocolError::Io(_)))
    }

    /// Connects to 127.0.0.1:`port` and logs in with mysql_native_password
    /// and [`default_capabilities`], into `database` if given.
    pub fn login_to(port: u16, user: &str, password: &str, database: Option<&str>) -> Result<RawClient, ServerErr> {
        let mut capabilities = default_capabilities();
        if database.is_some() {
            capabilities |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
        }
        let address = SocketAddr::from(([127, 0, 0, 1], port));
        RawClient::login_with(address, user, password, AuthPlugin::MysqlNativePassword, capabilities, database).0
    }

    /// A COM_QUERY's rows as text (none for an OK), or the ERR.
    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, ServerErr> {
        match self.query(sql)? {
            Response::Ok { .. } => Ok(Vec::new()),
            rows => Ok(rows.text_rows()),
        }
    }

    /// One value: the first column of the first row.
    pub fn value(&mut self, sql: &str) -> String {
        let rows = self.query_rows(sql).unwrap_or_else(|error| panic!("{sql}: {error:?}"));
        rows[0][0].clone().unwrap_or_default()
    }

    /// An ERR packet this connection received.
    pub fn parse_err(&self, packet: &[u8]) -> ServerErr {
        parse_err(packet, self.capabilities)
    }

    /// Reads the next packet, which must be an ERR.
    pub fn read_err(&mut self) -> ServerErr {
        let packet = self.read_packet();
        assert_eq!(packet.first(), Some(&0xFF), "an ERR packet");
        self.parse_err(&packet)
    }

    /// Reads until the server closes the connection, whatever the packets'
    /// sequence ids; returns the packets it sent first (an ERR, usually).
    /// Panics if the server keeps it open past the read timeout.
    pub fn read_until_closed(&mut self) -> Vec<Vec<u8>> {
        let mut packets = Vec::new();
        loop {
            match self.try_read_packet_any_sequence() {
                Ok(packet) => packets.push(packet),
                Err(error) if matches!(error.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset) => {
                    return packets
                }
                Err(error) => panic!("the server did not close the connection: {error}"),
            }
        }
    }

    /// Half-closes the connection: the server reads EOF.
    pub fn close_write(&self) {
        let _ = self.socket.shutdown(Shutdown::Write);
    }
}

/// What a client with `password` answers for `plugin` to `nonce`.
fn answer(plugin: &AuthPlugin<'_>, nonce: &[u8], password: &str) -> Vec<u8> {
    match plugin {
        AuthPlugin::MysqlNativePassword => protocol::native_password_response(nonce, password.as_bytes()),
        AuthPlugin::CachingSha2Password => match <[u8; 20]>::try_from(nonce) {
            Ok(nonce) => mysql_common::auth::plugins::caching_sha2_password::scramble_sha256(&nonce, password.as_bytes())
                .map(|scramble| scramble.to_vec())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        },
        // A client with an empty password answers nothing.
        _ if password.is_empty() => Vec::new(),
        _ => vec![0x5A; 32],
    }
}
