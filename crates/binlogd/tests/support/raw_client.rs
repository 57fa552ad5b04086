//! A minimal MySQL client over a plain TCP socket, for tests that need a
//! session to stay open across other clients' statements, or need to send
//! bytes no real client sends. Text protocol only, no CLIENT_DEPRECATE_EOF.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use mysql_common::constants::CapabilityFlags;
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;

/// An ERR packet: code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrPacket {
    pub code: u16,
    pub sql_state: String,
    pub message: String,
}

pub type Rows = Vec<Vec<Option<String>>>;

pub struct RawClient {
    pub stream: TcpStream,
    sequence: u8,
}

const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;

impl RawClient {
    /// Connects and reads the server's greeting; returns the client and the
    /// 20-byte scramble.
    pub fn connect(port: u16) -> (RawClient, Vec<u8>) {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut client = RawClient { stream, sequence: 0 };
        let greeting = client.read_packet().expect("server greeting");
        let packet: HandshakePacket<'_> = ParseBuf(&greeting).parse(()).expect("a Handshake v10");
        let scramble = packet.nonce();
        (client, scramble)
    }

    /// Connects and logs in with mysql_native_password.
    pub fn login(port: u16, user: &str, password: &str, database: Option<&str>) -> Result<RawClient, ErrPacket> {
        let (mut client, scramble) = RawClient::connect(port);
        let response = protocol::native_password_response(&scramble, password.as_bytes());
        let mut flags = CapabilityFlags::CLIENT_PROTOCOL_41
            | CapabilityFlags::CLIENT_SECURE_CONNECTION
            | CapabilityFlags::CLIENT_PLUGIN_AUTH
            | CapabilityFlags::CLIENT_LONG_PASSWORD
            | CapabilityFlags::CLIENT_TRANSACTIONS
            | CapabilityFlags::CLIENT_MULTI_RESULTS;
        if database.is_some() {
            flags |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
        }
        let hello = HandshakeResponse::new(
            Some(&response[..]),
            (8, 4, 0),
            Some(user.as_bytes()),
            database.map(str::as_bytes),
            Some(AuthPlugin::MysqlNativePassword),
            flags,
            None,
            16 << 20,
        );
        let mut bytes = Vec::new();
        hello.serialize(&mut bytes);
        client.write_packet(&bytes).unwrap();
        let answer = client.read_packet().expect("login answer");
        match answer.first() {
            Some(0x00) => Ok(client),
            Some(0xFF) => Err(parse_err(&answer)),
            other => panic!("unexpected login answer {other:?}"),
        }
    }

    /// Reads one packet (not joining 16 MiB splits: tests stay small).
    pub fn read_packet(&mut self) -> std::io::Result<Vec<u8>> {
        let mut header = [0u8; 4];
        self.stream.read_exact(&mut header)?;
        let length = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        self.sequence = header[3].wrapping_add(1);
        let mut payload = vec![0u8; length];
        self.stream.read_exact(&mut payload)?;
        Ok(payload)
    }

    pub fn write_packet(&mut self, payload: &[u8]) -> std::io::Result<()> {
        let length = payload.len() as u32;
        let mut frame = length.to_le_bytes()[..3].to_vec();
        frame.push(self.sequence);
        frame.extend_from_slice(payload);
        self.sequence = self.sequence.wrapping_add(1);
        self.stream.write_all(&frame)
    }

    /// Sends one command packet (sequence id 0, as every command starts).
    pub fn send_command(&mut self, payload: &[u8]) -> std::io::Result<()> {
        self.sequence = 0;
        self.write_packet(payload)
    }

    /// A COM_QUERY: rows (empty for OK) or the ERR.
    pub fn query(&mut self, sql: &str) -> Result<Rows, ErrPacket> {
        let mut payload = vec![COM_QUERY];
        payload.extend_from_slice(sql.as_bytes());
        self.send_command(&payload).expect("send COM_QUERY");
        let first = self.read_packet().expect("query answer");
        match first.first() {
            Some(0x00) => return Ok(Vec::new()),
            Some(0xFF) => return Err(parse_err(&first)),
            _ => {}
        }
        let (columns, _) = lenenc_int(&first);
        for _ in 0..columns {
            self.read_packet().expect("column definition");
        }
        let eof = self.read_packet().expect("EOF after columns");
        assert_eq!(eof.first(), Some(&0xFE), "EOF after column definitions");
        let mut rows = Vec::new();
        loop {
            let packet = self.read_packet().expect("row");
            match packet.first() {
                Some(0xFE) if packet.len() < 9 => return Ok(rows),
                Some(0xFF) => return Err(parse_err(&packet)),
                _ => {}
            }
            let mut row = Vec::with_capacity(columns as usize);
            let mut rest = &packet[..];
            for _ in 0..columns {
                if rest.first() == Some(&0xFB) {
                    row.push(None);
                    rest = &rest[1..];
                    continue;
                }
                let (length, used) = lenenc_int(rest);
                let value = &rest[used..used + length as usize];
                row.push(Some(String::from_utf8_lossy(value).into_owned()));
                rest = &rest[used + length as usize..];
            }
            rows.push(row);
        }
    }

    /// A COM_STMT_PREPARE: the statement id, or the ERR. Reads the
    /// parameter and column definitions that follow the OK.
    pub fn prepare(&mut self, sql: &str) -> Result<u32, ErrPacket> {
        let mut payload = vec![COM_STMT_PREPARE];
        payload.extend_from_slice(sql.as_bytes());
        self.send_command(&payload).expect("send COM_STMT_PREPARE");
        let first = self.read_packet().expect("prepare answer");
        match first.first() {
            Some(0x00) => {}
            Some(0xFF) => return Err(parse_err(&first)),
            other => panic!("unexpected prepare answer {other:?}"),
        }
        let statement_id = u32::from_le_bytes(first[1..5].try_into().unwrap());
        let columns = u16::from_le_bytes([first[5], first[6]]);
        let params = u16::from_le_bytes([first[7], first[8]]);
        for count in [params, columns] {
            if count > 0 {
                // The definitions, then an EOF (no CLIENT_DEPRECATE_EOF).
                for _ in 0..=count {
                    self.read_packet().expect("definition");
                }
            }
        }
        Ok(statement_id)
    }

    /// One value: the first column of the first row.
    pub fn value(&mut self, sql: &str) -> String {
        let rows = self.query(sql).unwrap_or_else(|error| panic!("{sql}: {error:?}"));
        rows[0][0].clone().unwrap_or_default()
    }

    /// Reads until the server closes the connection; returns the packets
    /// it sent first (an ERR, usually). Panics if the server keeps it open
    /// past the read timeout.
    pub fn read_until_closed(&mut self) -> Vec<Vec<u8>> {
        let mut packets = Vec::new();
        loop {
            match self.read_packet() {
                Ok(packet) => packets.push(packet),
                Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof || error.kind() == std::io::ErrorKind::ConnectionReset => return packets,
                Err(error) => panic!("the server did not close the connection: {error}"),
            }
        }
    }

    pub fn close_write(&self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }
}

pub fn parse_err(packet: &[u8]) -> ErrPacket {
    assert_eq!(packet.first(), Some(&0xFF), "an ERR packet");
    let code = u16::from_le_bytes([packet[1], packet[2]]);
    let (sql_state, message) = if packet.get(3) == Some(&b'#') { (&packet[4..9], &packet[9..]) } else { (&b""[..], &packet[3..]) };
    ErrPacket { code, sql_state: String::from_utf8_lossy(sql_state).into_owned(), message: String::from_utf8_lossy(message).into_owned() }
}

fn lenenc_int(bytes: &[u8]) -> (u64, usize) {
    match bytes[0] {
        0xFC => (u64::from(u16::from_le_bytes([bytes[1], bytes[2]])), 3),
        0xFD => (u64::from(u32::from_le_bytes([bytes[1], bytes[2], bytes[3], 0])), 4),
        0xFE => (u64::from_le_bytes(bytes[1..9].try_into().unwrap()), 9),
        small => (u64::from(small), 1),
    }
}
