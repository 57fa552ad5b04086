//! The smallest MySQL client the dump benchmark needs: log in as a user
//! with an empty password (`mysql_native_password`, empty response), run a
//! statement, and read a binlog dump packet by packet. Blocking I/O on one
//! socket; every packet is read into one reused buffer.

use std::io::{BufReader, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpStream};

use binlog_format::constants::LOG_POS_OFFSET;

const CLIENT_LONG_PASSWORD: u32 = 0x1;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_PLUGIN_AUTH: u32 = 0x80000;
const UTF8MB4_GENERAL_CI: u8 = 45;
const PACKET_CHUNK_MAX: usize = 0xFF_FFFF;
/// Largest logical packet accepted (a binlog event plus its 0x00 byte).
const PACKET_BYTES_MAX: usize = 1 << 30;
const SOCKET_BUFFER_BYTES: usize = 256 * 1024;

const COM_QUERY: u8 = 0x03;
const COM_BINLOG_DUMP: u8 = 0x12;
const BINLOG_DUMP_NON_BLOCK: u16 = 0x01;

pub struct WireClient {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
    sequence_id: u8,
    packet: Vec<u8>,
}

impl WireClient {
    /// Connects and logs in as `user` with no password.
    pub fn connect(address: SocketAddr, user: &str) -> Result<WireClient, String> {
        let stream = TcpStream::connect(address).map_err(|error| format!("connect {address}: {error}"))?;
        stream.set_nodelay(true).map_err(|error| error.to_string())?;
        let reader = BufReader::with_capacity(SOCKET_BUFFER_BYTES, stream.try_clone().map_err(|error| error.to_string())?);
        let writer = BufWriter::with_capacity(SOCKET_BUFFER_BYTES, stream);
        let mut client = WireClient { reader, writer, sequence_id: 0, packet: Vec::new() };
        client.read_packet()?; // the server's handshake; no scramble needed for an empty password
        let capabilities = CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;
        let mut response = Vec::new();
        response.extend_from_slice(&capabilities.to_le_bytes());
        response.extend_from_slice(&(16u32 << 20).to_le_bytes());
        response.push(UTF8MB4_GENERAL_CI);
        response.extend_from_slice(&[0; 23]);
        response.extend_from_slice(user.as_bytes());
        response.push(0);
        response.push(0); // empty auth response
        response.extend_from_slice(b"mysql_native_password\0");
        client.write_packet(&response)?;
        loop {
            client.read_packet()?;
            match client.packet.first() {
                Some(0x00) => return Ok(client),
                // Auth switch: answer again with an empty response.
                Some(0xFE) => client.write_packet(&[])?,
                _ => return Err(client.error_text("login")),
            }
        }
    }

    /// Runs a statement that answers OK.
    pub fn execute(&mut self, sql: &str) -> Result<(), String> {
        self.sequence_id = 0;
        let mut payload = vec![COM_QUERY];
        payload.extend_from_slice(sql.as_bytes());
        self.write_packet(&payload)?;
        self.read_packet()?;
        match self.packet.first() {
            Some(0x00) => Ok(()),
            _ => Err(self.error_text(sql)),
        }
    }

    /// COM_BINLOG_DUMP with the non-blocking flag from `file`:4; returns
    /// the bytes of the events received until the server's EOF.
    pub fn dump_to_end(&mut self, file: &str, server_id: u32) -> Result<u64, String> {
        self.sequence_id = 0;
        let mut payload = vec![COM_BINLOG_DUMP];
        payload.extend_from_slice(&4u32.to_le_bytes());
        payload.extend_from_slice(&BINLOG_DUMP_NON_BLOCK.to_le_bytes());
        payload.extend_from_slice(&server_id.to_le_bytes());
        payload.extend_from_slice(file.as_bytes());
        self.write_packet(&payload)?;
        let mut event_bytes = 0u64;
        loop {
            self.read_packet()?;
            match self.packet.first() {
                Some(0x00) => event_bytes += self.packet.len() as u64 - 1,
                Some(0xFE) if self.packet.len() < 9 => return Ok(event_bytes),
                _ => return Err(self.error_text("COM_BINLOG_DUMP")),
            }
        }
    }

    /// COM_BINLOG_DUMP without the non-blocking flag from `file`:`position`:
    /// the server follows the tail until the connection ends. Read the
    /// stream with [`WireClient::next_event_end`].
    pub fn start_dump(&mut self, file: &str, position: u32, server_id: u32) -> Result<(), String> {
        self.sequence_id = 0;
        let mut payload = vec![COM_BINLOG_DUMP];
        payload.extend_from_slice(&position.to_le_bytes());
        payload.extend_from_slice(&0u16.to_le_bytes());
        payload.extend_from_slice(&server_id.to_le_bytes());
        payload.extend_from_slice(file.as_bytes());
        self.write_packet(&payload)
    }

    /// The next event of a dump: its `log_pos` (where it ends in its file;
    /// 0 for events the source makes up) and its length. An error packet,
    /// EOF or a closed socket is an error.
    pub fn next_event_end(&mut self) -> Result<(u32, usize), String> {
        self.read_packet()?;
        match self.packet.first() {
            Some(0x00) if self.packet.len() >= 1 + LOG_POS_OFFSET + 4 => {
                let log_pos = &self.packet[1 + LOG_POS_OFFSET..1 + LOG_POS_OFFSET + 4];
                Ok((u32::from_le_bytes(log_pos.try_into().expect("4 bytes")), self.packet.len() - 1))
            }
            _ => Err(self.error_text("COM_BINLOG_DUMP")),
        }
    }

    /// Ends the connection from another thread (a blocked read returns).
    pub fn shutdown_handle(&self) -> Result<TcpStream, String> {
        self.writer.get_ref().try_clone().map_err(|error| error.to_string())
    }

    fn error_text(&self, what: &str) -> String {
        if self.packet.first() == Some(&0xFF) && self.packet.len() >= 3 {
            let code = u16::from_le_bytes([self.packet[1], self.packet[2]]);
            let message = String::from_utf8_lossy(self.packet.get(9..).unwrap_or_default());
            return format!("{what}: error {code}: {message}");
        }
        format!("{what}: unexpected packet {:02x?}", &self.packet[..self.packet.len().min(16)])
    }

    fn write_packet(&mut self, payload: &[u8]) -> Result<(), String> {
        let mut chunks = payload.chunks(PACKET_CHUNK_MAX).peekable();
        loop {
            let chunk = chunks.next().unwrap_or_default();
            let header = (chunk.len() as u32).to_le_bytes();
            self.writer.write_all(&[header[0], header[1], header[2], self.sequence_id]).map_err(|error| error.to_string())?;
            self.writer.write_all(chunk).map_err(|error| error.to_string())?;
            self.sequence_id = self.sequence_id.wrapping_add(1);
            if chunk.len() < PACKET_CHUNK_MAX && chunks.peek().is_none() {
                break;
            }
        }
        self.writer.flush().map_err(|error| error.to_string())
    }

    /// One logical packet (chunks joined) into `self.packet`.
    fn read_packet(&mut self) -> Result<(), String> {
        self.packet.clear();
        loop {
            let mut header = [0u8; 4];
            self.reader.read_exact(&mut header).map_err(|error| format!("read: {error}"))?;
            let length = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            self.sequence_id = header[3].wrapping_add(1);
            if self.packet.len() + length > PACKET_BYTES_MAX {
                return Err(format!("packet larger than {PACKET_BYTES_MAX} bytes"));
            }
            let start = self.packet.len();
            self.packet.resize(start + length, 0);
            self.reader.read_exact(&mut self.packet[start..]).map_err(|error| format!("read: {error}"))?;
            if length < PACKET_CHUNK_MAX {
                return Ok(());
            }
        }
    }
}
