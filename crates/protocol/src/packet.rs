//! Packet framing: a 3-byte little-endian payload length and a 1-byte
//! sequence id before every chunk; a payload of 16 MiB - 1 bytes or more is
//! split into full chunks and ends with a shorter (possibly empty) one.
//!
//! Reads enforce `max_allowed_packet` on the joined payload before
//! allocating it, and check sequence ids, so a hostile or confused peer costs
//! at most one bounded buffer and its own connection.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use crate::errors::ProtocolError;
use crate::tls::{TlsAcceptor, TlsInfo, Transport};

/// Largest payload of one chunk; a chunk of exactly this size means "more
/// chunks follow".
pub const CHUNK_PAYLOAD_BYTES_MAX: usize = 0xFF_FFFF;

/// Socket buffer sizes: large enough that a result set row or a small
/// command is one system call, small enough for thousands of connections.
const READ_BUFFER_BYTES: usize = 16 * 1024;
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// Reads one logical packet (all its chunks joined). `sequence_id` is the id
/// expected for the first chunk and is advanced past the last one.
pub fn read_packet<R: Read>(reader: &mut R, sequence_id: &mut u8, max_allowed_packet_bytes: usize) -> Result<Vec<u8>, ProtocolError> {
    let mut payload = Vec::new();
    read_packet_into(reader, sequence_id, max_allowed_packet_bytes, &mut payload)?;
    Ok(payload)
}

/// [`read_packet`] into a caller's buffer (cleared first), so a reader of
/// a long packet stream (a replica's binlog dump) reuses one allocation.
pub fn read_packet_into<R: Read>(
    reader: &mut R,
    sequence_id: &mut u8,
    max_allowed_packet_bytes: usize,
    payload: &mut Vec<u8>,
) -> Result<(), ProtocolError> {
    payload.clear();
    let mut first_chunk = true;
    loop {
        let mut header = [0u8; 4];
        if !read_exact_or_eof(reader, &mut header)? {
            // A clean close is only clean between packets.
            return Err(if first_chunk { ProtocolError::Closed } else { ProtocolError::Io(io::ErrorKind::UnexpectedEof.into()) });
        }
        first_chunk = false;
        let chunk_bytes = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        if header[3] != *sequence_id {
            return Err(ProtocolError::OutOfOrder { expected: *sequence_id, got: header[3] });
        }
        *sequence_id = sequence_id.wrapping_add(1);
        let total_bytes = payload.len() + chunk_bytes;
        // Checked before the buffer grows: the limit bounds memory, not just
        // what the caller is handed.
        if total_bytes > max_allowed_packet_bytes {
            return Err(ProtocolError::PacketTooLarge { length_bytes: total_bytes as u64, max_bytes: max_allowed_packet_bytes });
        }
        read_growing(reader, payload, chunk_bytes)?;
        if chunk_bytes < CHUNK_PAYLOAD_BYTES_MAX {
            return Ok(());
        }
    }
}

/// Bytes read into a payload before it grows past what has arrived: a
/// command, a row or a binlog event is read with one allocation of its
/// size.
const GROWTH_FIRST_STEP_BYTES: usize = 64 * 1024;

/// Appends `bytes` bytes from `reader` to `payload`, growing it as they
/// arrive: each step at most doubles what is there (at least
/// [`GROWTH_FIRST_STEP_BYTES`]), so a header that announces 16 MiB and
/// sends nothing costs one small step, not 16 MiB.
pub(crate) fn read_growing<R: Read>(reader: &mut R, payload: &mut Vec<u8>, bytes: usize) -> io::Result<()> {
    let end = payload.len() + bytes;
    while payload.len() < end {
        let filled = payload.len();
        let step = (end - filled).min(filled.max(GROWTH_FIRST_STEP_BYTES));
        payload.reserve_exact(step);
        payload.resize(filled + step, 0);
        if let Err(error) = reader.read_exact(&mut payload[filled..]) {
            payload.truncate(filled);
            return Err(error);
        }
    }
    Ok(())
}

/// Writes one logical packet whose payload is `head` followed by `body`
/// (two parts so a binlog event goes out behind its 0x00 marker without a
/// copy). Returns nothing; `sequence_id` is advanced past the last chunk.
pub fn write_packet<W: Write>(writer: &mut W, sequence_id: &mut u8, head: &[u8], body: &[u8]) -> io::Result<()> {
    let total_bytes = head.len() + body.len();
    let mut offset = 0;
    loop {
        let chunk_bytes = (total_bytes - offset).min(CHUNK_PAYLOAD_BYTES_MAX);
        let length = (chunk_bytes as u32).to_le_bytes();
        writer.write_all(&[length[0], length[1], length[2], *sequence_id])?;
        *sequence_id = sequence_id.wrapping_add(1);
        write_range(writer, head, body, offset, offset + chunk_bytes)?;
        offset += chunk_bytes;
        // A full chunk promises a next one, so a payload whose length is a
        // multiple of the chunk size ends with an empty chunk.
        if chunk_bytes < CHUNK_PAYLOAD_BYTES_MAX {
            return Ok(());
        }
    }
}

/// [`write_packet`] of `marker` followed by `body`, with the packet header
/// and the marker in one buffered write when the packet fits one chunk (a
/// binlog dump writes hundreds of small events per wake-up).
pub fn write_marked_packet<W: Write>(writer: &mut W, sequence_id: &mut u8, marker: u8, body: &[u8]) -> io::Result<()> {
    let payload_bytes = 1 + body.len();
    if payload_bytes >= CHUNK_PAYLOAD_BYTES_MAX {
        return write_packet(writer, sequence_id, &[marker], body);
    }
    let length = (payload_bytes as u32).to_le_bytes();
    writer.write_all(&[length[0], length[1], length[2], *sequence_id, marker])?;
    *sequence_id = sequence_id.wrapping_add(1);
    writer.write_all(body)
}

/// Writes bytes `start..end` of the concatenation `head ++ body`.
fn write_range<W: Write>(writer: &mut W, head: &[u8], body: &[u8], start: usize, end: usize) -> io::Result<()> {
    if start < head.len() {
        writer.write_all(&head[start..end.min(head.len())])?;
    }
    if end > head.len() {
        writer.write_all(&body[start.saturating_sub(head.len())..end - head.len()])?;
    }
    Ok(())
}

/// Like `read_exact`, but returns `Ok(false)` when the stream ends before the
/// first byte.
fn read_exact_or_eof<R: Read>(reader: &mut R, buffer: &mut [u8]) -> io::Result<bool> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(count) => filled += count,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(true)
}

/// A framed, buffered packet stream over one TCP connection, plain or
/// TLS. Writes are buffered until [`PacketStream::flush`], so a whole
/// response leaves in as few segments as possible.
pub struct PacketStream {
    reader: BufReader<Transport>,
    writer: BufWriter<Transport>,
    sequence_id: u8,
    max_allowed_packet_bytes: usize,
}

impl PacketStream {
    pub fn new(stream: TcpStream, max_allowed_packet_bytes: usize) -> io::Result<Self> {
        // Commands and responses are small and interactive: send at once.
        stream.set_nodelay(true)?;
        let reader = BufReader::with_capacity(READ_BUFFER_BYTES, Transport::Plain(stream.try_clone()?));
        let writer = BufWriter::with_capacity(WRITE_BUFFER_BYTES, Transport::Plain(stream));
        Ok(PacketStream { reader, writer, sequence_id: 0, max_allowed_packet_bytes })
    }

    /// Switches to TLS after the client's SSL Request: bytes the client
    /// sent after it (the start of its TLS hello) are already in the read
    /// buffer and go to the TLS handshake first. Errors end the connection:
    /// the client is talking TLS, so no ERR packet can reach it.
    pub fn start_tls(&mut self, acceptor: &TlsAcceptor) -> Result<TlsInfo, ProtocolError> {
        self.writer.flush()?;
        let early = self.reader.buffer().to_vec();
        let socket = self.socket().try_clone()?;
        let (transport, info) = acceptor.accept(socket, &early)?;
        self.reader = BufReader::with_capacity(READ_BUFFER_BYTES, transport.try_clone()?);
        self.writer = BufWriter::with_capacity(WRITE_BUFFER_BYTES, transport);
        Ok(info)
    }

    /// True once [`PacketStream::start_tls`] has succeeded.
    pub fn is_tls(&self) -> bool {
        self.writer.get_ref().is_tls()
    }

    /// The read and write buffers' sizes (the connection's memory figure
    /// counts them).
    pub fn buffers_bytes(&self) -> usize {
        self.reader.capacity() + self.writer.capacity()
    }

    /// Every command starts a new exchange at sequence id 0.
    pub fn reset_sequence(&mut self) {
        self.sequence_id = 0;
    }

    /// The next packet written carries `sequence_id`.
    pub fn restart_sequence_at(&mut self, sequence_id: u8) {
        self.sequence_id = sequence_id;
    }

    pub fn sequence_id(&self) -> u8 {
        self.sequence_id
    }

    pub fn max_allowed_packet_bytes(&self) -> usize {
        self.max_allowed_packet_bytes
    }

    pub fn set_max_allowed_packet_bytes(&mut self, bytes: usize) {
        self.max_allowed_packet_bytes = bytes;
    }

    pub fn read_packet(&mut self) -> Result<Vec<u8>, ProtocolError> {
        read_packet(&mut self.reader, &mut self.sequence_id, self.max_allowed_packet_bytes)
    }

    /// Reads one packet into `payload` (cleared first).
    pub fn read_packet_into(&mut self, payload: &mut Vec<u8>) -> Result<(), ProtocolError> {
        read_packet_into(&mut self.reader, &mut self.sequence_id, self.max_allowed_packet_bytes, payload)
    }

    /// True while bytes read from the socket wait in the read buffer: a
    /// reader taking over the socket (a replica's dump stream, see
    /// [`crate::packet_reader::PacketReader`]) must start with none.
    pub fn has_buffered_input(&self) -> bool {
        !self.reader.buffer().is_empty()
    }

    /// Replaces the read buffer with one of `bytes`: a replica reading a
    /// binlog dump takes megabytes in fewer, larger reads. Only between
    /// packets with nothing buffered (unread bytes would be lost), which
    /// is checked.
    pub fn set_read_buffer_bytes(&mut self, bytes: usize) -> Result<(), ProtocolError> {
        if !self.reader.buffer().is_empty() {
            return Err(ProtocolError::malformed("read buffer change", "bytes are still buffered"));
        }
        let transport = self.reader.get_ref().try_clone()?;
        self.reader = BufReader::with_capacity(bytes, transport);
        Ok(())
    }

    /// Buffers one packet; call [`PacketStream::flush`] to send.
    pub fn write_packet(&mut self, payload: &[u8]) -> Result<(), ProtocolError> {
        write_packet(&mut self.writer, &mut self.sequence_id, payload, &[])?;
        Ok(())
    }

    /// Buffers one packet made of `head` followed by `body`.
    pub fn write_packet_parts(&mut self, head: &[u8], body: &[u8]) -> Result<(), ProtocolError> {
        write_packet(&mut self.writer, &mut self.sequence_id, head, body)?;
        Ok(())
    }

    /// Buffers one packet made of the byte `marker` followed by `body`.
    pub fn write_marked_packet(&mut self, marker: u8, body: &[u8]) -> Result<(), ProtocolError> {
        write_marked_packet(&mut self.writer, &mut self.sequence_id, marker, body)?;
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), ProtocolError> {
        self.writer.flush()?;
        Ok(())
    }

    /// Drops what is buffered and not yet sent (a killed connection's
    /// last answer).
    pub fn discard_unsent(&mut self) -> Result<(), ProtocolError> {
        let transport = self.writer.get_ref().try_clone()?;
        let unsent = std::mem::replace(&mut self.writer, BufWriter::with_capacity(WRITE_BUFFER_BYTES, transport));
        drop(unsent.into_parts());
        Ok(())
    }

    /// Replaces the write buffer with one of `bytes` (after flushing): a
    /// binlog dump streams megabytes and sends fewer, larger segments.
    pub fn set_write_buffer_bytes(&mut self, bytes: usize) -> Result<(), ProtocolError> {
        self.writer.flush()?;
        let transport = self.writer.get_ref().try_clone()?;
        self.writer = BufWriter::with_capacity(bytes, transport);
        Ok(())
    }

    pub fn socket(&self) -> &TcpStream {
        self.writer.get_ref().socket()
    }

    pub fn set_read_timeout(&self, timeout: Duration) -> io::Result<()> {
        self.socket().set_read_timeout(nonzero(timeout))
    }

    pub fn set_write_timeout(&self, timeout: Duration) -> io::Result<()> {
        self.socket().set_write_timeout(nonzero(timeout))
    }

    /// True when the peer has closed its side (or the socket failed), seen
    /// without blocking and without consuming buffered input. Used by binlog
    /// dumps, which only write, to notice that a replica went away.
    pub fn peer_closed(&mut self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        let socket = self.reader.get_ref().socket();
        if socket.set_nonblocking(true).is_err() {
            return true;
        }
        let mut byte = [0u8; 1];
        let closed = match socket.peek(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(error) => error.kind() != io::ErrorKind::WouldBlock,
        };
        let _ = socket.set_nonblocking(false);
        closed
    }

    /// Closes after a fatal error without letting unread input turn the close
    /// into a reset: a reset can make the peer drop the ERR packet we just
    /// sent (typically after an oversized packet that it is still writing).
    /// Discards input for at most `linger`.
    pub fn close_gracefully(mut self, linger: Duration) {
        let _ = self.writer.flush();
        self.writer.get_ref().shutdown_write();
        let socket = self.writer.get_ref().socket();
        let deadline = Instant::now() + linger;
        let mut scratch = vec![0u8; 64 * 1024];
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if self.reader.get_ref().socket().set_read_timeout(Some(deadline - now)).is_err() {
                break;
            }
            match self.reader.read(&mut scratch) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let _ = socket.shutdown(Shutdown::Both);
    }
}

/// `set_read_timeout(Some(0))` is an error; zero means "no timeout" here.
fn nonzero(timeout: Duration) -> Option<Duration> {
    (!timeout.is_zero()).then_some(timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8], first_sequence_id: u8) -> (Vec<u8>, u8) {
        let mut wire = Vec::new();
        let mut sequence_id = first_sequence_id;
        write_packet(&mut wire, &mut sequence_id, payload, &[]).unwrap();
        (wire, sequence_id)
    }

    #[test]
    fn small_packet_round_trips() {
        let (wire, next) = frame(b"\x03SELECT 1", 0);
        assert_eq!(&wire[..4], &[9, 0, 0, 0]);
        assert_eq!(next, 1);
        let mut sequence_id = 0;
        let payload = read_packet(&mut &wire[..], &mut sequence_id, 1 << 20).unwrap();
        assert_eq!(payload, b"\x03SELECT 1");
        assert_eq!(sequence_id, 1);
    }

    /// The one-write framing of a marked packet is byte for byte the
    /// general one, on both sides of the chunk size and across a sequence
    /// id wrap.
    #[test]
    fn a_marked_packet_is_framed_as_its_parts_would_be() {
        for length in [0, 1, 18, 700, CHUNK_PAYLOAD_BYTES_MAX - 2, CHUNK_PAYLOAD_BYTES_MAX - 1, CHUNK_PAYLOAD_BYTES_MAX + 3] {
            let body: Vec<u8> = (0..length).map(|i| (i % 251) as u8).collect();
            let (mut marked, mut parts) = (Vec::new(), Vec::new());
            let (mut marked_id, mut parts_id) = (255u8, 255u8);
            write_marked_packet(&mut marked, &mut marked_id, 0x00, &body).unwrap();
            write_packet(&mut parts, &mut parts_id, &[0x00], &body).unwrap();
            assert!(marked == parts, "length {length}: the framings differ");
            assert_eq!(marked_id, parts_id, "length {length}");
            let mut sequence_id = 255;
            let payload = read_packet(&mut &marked[..], &mut sequence_id, 64 << 20).unwrap();
            assert_eq!(payload.len(), length + 1);
            assert!(payload[0] == 0x00 && payload[1..] == body[..]);
        }
    }

    #[test]
    fn large_packets_are_split_and_joined() {
        for length in [CHUNK_PAYLOAD_BYTES_MAX - 1, CHUNK_PAYLOAD_BYTES_MAX, CHUNK_PAYLOAD_BYTES_MAX + 5, 2 * CHUNK_PAYLOAD_BYTES_MAX] {
            let payload: Vec<u8> = (0..length).map(|i| (i % 251) as u8).collect();
            let (wire, next) = frame(&payload, 7);
            let chunks = length / CHUNK_PAYLOAD_BYTES_MAX + 1;
            assert_eq!(wire.len(), length + 4 * chunks, "length {length}");
            assert_eq!(next, 7 + chunks as u8);
            let mut sequence_id = 7;
            let joined = read_packet(&mut &wire[..], &mut sequence_id, 64 << 20).unwrap();
            assert!(joined == payload, "length {length}");
            assert_eq!(sequence_id, next);
        }
    }

    #[test]
    fn head_and_body_frame_like_one_payload() {
        let body: Vec<u8> = (0..CHUNK_PAYLOAD_BYTES_MAX + 10).map(|i| i as u8).collect();
        let mut joined = vec![0u8];
        joined.extend_from_slice(&body);
        let (expected, _) = frame(&joined, 1);
        let mut wire = Vec::new();
        let mut sequence_id = 1;
        write_packet(&mut wire, &mut sequence_id, &[0], &body).unwrap();
        assert!(wire == expected);
    }

    #[test]
    fn oversized_packet_is_refused_before_reading_it() {
        let (wire, _) = frame(&[1u8; 1000], 0);
        let mut sequence_id = 0;
        match read_packet(&mut &wire[..4], &mut sequence_id, 999) {
            Err(ProtocolError::PacketTooLarge { length_bytes: 1000, max_bytes: 999 }) => {}
            other => panic!("{other:?}"),
        }
    }

    /// A reader that hands out its bytes, then waits forever (here: says
    /// the stream ended), as a client that announced more than it sent.
    #[test]
    fn an_announced_packet_is_allocated_as_its_bytes_arrive() {
        let mut wire = vec![0xFF, 0xFF, 0xFE, 0];
        wire.extend_from_slice(&[7u8; 100]);
        let mut payload = Vec::new();
        let mut sequence_id = 0;
        assert!(matches!(read_packet_into(&mut &wire[..], &mut sequence_id, 64 << 20, &mut payload), Err(ProtocolError::Io(_))));
        assert!(payload.capacity() <= 2 * GROWTH_FIRST_STEP_BYTES, "{} bytes allocated for 100 received", payload.capacity());

        // A large payload that does arrive grows to its size, and no more
        // than twice what has arrived at each step.
        let big: Vec<u8> = (0..3_000_000).map(|i| (i % 253) as u8).collect();
        let (wire, _) = frame(&big, 0);
        let mut sequence_id = 0;
        read_packet_into(&mut &wire[..], &mut sequence_id, 64 << 20, &mut payload).unwrap();
        assert!(payload == big);
        assert!(payload.capacity() < 2 * big.len());
    }

    #[test]
    fn wrong_sequence_and_truncation_are_errors() {
        let (wire, _) = frame(b"abc", 3);
        let mut sequence_id = 0;
        assert!(matches!(read_packet(&mut &wire[..], &mut sequence_id, 100), Err(ProtocolError::OutOfOrder { expected: 0, got: 3 })));
        let mut sequence_id = 3;
        assert!(matches!(read_packet(&mut &wire[..5], &mut sequence_id, 100), Err(ProtocolError::Io(_))));
        let mut sequence_id = 0;
        assert!(matches!(read_packet(&mut &[][..], &mut sequence_id, 100), Err(ProtocolError::Closed)));
    }
}
