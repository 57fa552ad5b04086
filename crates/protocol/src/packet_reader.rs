//! A packet reader that lends payloads from its own read buffer: what a
//! replica reading a binlog dump needs, one small packet (one event) after
//! another, megabytes a second.
//!
//! [`crate::packet::read_packet_into`] copies each payload out of a
//! `BufReader` into the caller's buffer (after zero-filling it). Here the
//! socket is read into one buffer, packets are framed in place and a
//! payload that lies whole in the buffer is lent from it: no copy, no
//! fill. Only what does not fit is joined into a second buffer, as the
//! framing code does: a payload larger than the read buffer, or one split
//! into 16 MiB chunks. Same checks: sequence ids, and `max_allowed_packet`
//! before any buffer grows.
//!
//! ```text
//!  buffer: [ consumed | packet packet packet par | free ............ ]
//!                     start                      end
//! ```
//!
//! A read fills the free space after `end`. When a packet's end lies past
//! the buffer, its start moves to the front first (at most one partial
//! packet is copied per refill).

use std::io::{self, Read};

use crate::errors::ProtocolError;
use crate::packet::CHUNK_PAYLOAD_BYTES_MAX;

/// Bytes of a chunk header: 3 of length, 1 of sequence id.
const HEADER_BYTES: usize = 4;

pub struct PacketReader<R> {
    source: R,
    buffer: Box<[u8]>,
    /// First byte not yet consumed.
    start: usize,
    /// End of the bytes read.
    end: usize,
    /// The last payload, when it had to be joined (see the module doc).
    joined: Vec<u8>,
    /// A joined buffer above this size is not kept for the next packet.
    joined_kept_bytes_max: usize,
    sequence_id: u8,
    /// A sequence id the next packet may carry instead of `sequence_id`:
    /// the peer restarts its numbering there (see
    /// [`PacketReader::allow_sequence_restart`]).
    restart_sequence_id: Option<u8>,
    max_allowed_packet_bytes: usize,
}

impl<R: Read> PacketReader<R> {
    /// `sequence_id` is the id the next packet must carry (the one after
    /// the command that started the stream). Payloads up to
    /// `buffer_bytes - 4` are lent from the read buffer.
    pub fn new(source: R, buffer_bytes: usize, sequence_id: u8, max_allowed_packet_bytes: usize) -> PacketReader<R> {
        assert!(buffer_bytes > HEADER_BYTES, "a read buffer of {buffer_bytes} bytes");
        PacketReader {
            source,
            buffer: vec![0u8; buffer_bytes].into_boxed_slice(),
            start: 0,
            end: 0,
            joined: Vec::new(),
            joined_kept_bytes_max: buffer_bytes.max(16 << 20),
            sequence_id,
            restart_sequence_id: None,
            max_allowed_packet_bytes,
        }
    }

    /// The next packet may carry `sequence_id` instead of the next in
    /// turn (then the numbering goes on from it). A semi-synchronous
    /// source restarts at 1 after each event that asks for an ack, as the
    /// ack took sequence id 0 (MySQL's and MariaDB's sources do; older
    /// binlogd sources go on counting).
    pub fn allow_sequence_restart(&mut self, sequence_id: u8) {
        self.restart_sequence_id = Some(sequence_id);
    }

    pub fn get_ref(&self) -> &R {
        &self.source
    }

    /// The next packet's payload; the peer closing the connection before
    /// its first byte is [`ProtocolError::Closed`].
    pub fn next_packet(&mut self) -> Result<&[u8], ProtocolError> {
        if self.start == self.end {
            // Nothing buffered: the next read gets the whole buffer.
            self.start = 0;
            self.end = 0;
        }
        if !self.fill(HEADER_BYTES)? {
            return Err(ProtocolError::Closed);
        }
        let chunk_bytes = self.chunk_bytes()?;
        if chunk_bytes < CHUNK_PAYLOAD_BYTES_MAX && HEADER_BYTES + chunk_bytes <= self.buffer.len() {
            self.check_size(chunk_bytes as u64)?;
            self.fill_or_unexpected_eof(HEADER_BYTES + chunk_bytes)?;
            self.sequence_id = self.sequence_id.wrapping_add(1);
            let payload_start = self.start + HEADER_BYTES;
            self.start = payload_start + chunk_bytes;
            return Ok(&self.buffer[payload_start..self.start]);
        }
        self.join_chunks()?;
        Ok(&self.joined)
    }

    /// The length in the chunk header at `start`, after checking its
    /// sequence id (the header must be buffered).
    fn chunk_bytes(&mut self) -> Result<usize, ProtocolError> {
        let header = &self.buffer[self.start..self.start + HEADER_BYTES];
        let restart = self.restart_sequence_id.take();
        if header[3] != self.sequence_id {
            if restart != Some(header[3]) {
                return Err(ProtocolError::OutOfOrder { expected: self.sequence_id, got: header[3] });
            }
            self.sequence_id = header[3];
        }
        Ok(u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize)
    }

    fn check_size(&self, length_bytes: u64) -> Result<(), ProtocolError> {
        if length_bytes > self.max_allowed_packet_bytes as u64 {
            return Err(ProtocolError::PacketTooLarge { length_bytes, max_bytes: self.max_allowed_packet_bytes });
        }
        Ok(())
    }

    /// A payload that is not lent: larger than the read buffer, or in
    /// several chunks. Joined into `joined`, each chunk's bytes taken from
    /// the buffer first, the rest read straight into place as it arrives.
    fn join_chunks(&mut self) -> Result<(), ProtocolError> {
        if self.joined.capacity() > self.joined_kept_bytes_max {
            self.joined = Vec::new();
        }
        self.joined.clear();
        loop {
            let chunk_bytes = self.chunk_bytes()?;
            let total_bytes = self.joined.len() + chunk_bytes;
            // Checked before the buffer grows: the limit bounds memory.
            self.check_size(total_bytes as u64)?;
            self.sequence_id = self.sequence_id.wrapping_add(1);
            self.start += HEADER_BYTES;
            let buffered = (self.end - self.start).min(chunk_bytes);
            self.joined.extend_from_slice(&self.buffer[self.start..self.start + buffered]);
            self.start += buffered;
            crate::packet::read_growing(&mut self.source, &mut self.joined, chunk_bytes - buffered)?;
            if chunk_bytes < CHUNK_PAYLOAD_BYTES_MAX {
                return Ok(());
            }
            self.fill_or_unexpected_eof(HEADER_BYTES)?;
        }
    }

    fn fill_or_unexpected_eof(&mut self, wanted: usize) -> Result<(), ProtocolError> {
        if self.fill(wanted)? {
            Ok(())
        } else {
            Err(ProtocolError::Io(io::ErrorKind::UnexpectedEof.into()))
        }
    }

    /// Reads until `wanted` bytes from `start` are buffered (`wanted` at
    /// most the buffer's size). `Ok(false)`: the stream ended with nothing
    /// buffered; an end with some bytes buffered is `UnexpectedEof`.
    fn fill(&mut self, wanted: usize) -> io::Result<bool> {
        if self.end - self.start >= wanted {
            return Ok(true);
        }
        if self.start + wanted > self.buffer.len() {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end - self.start < wanted {
            match self.source.read(&mut self.buffer[self.end..]) {
                Ok(0) if self.end == self.start => return Ok(false),
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(count) => self.end += count,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{read_packet, write_packet};

    /// A reader that hands out at most `step` bytes per read.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let count = self.step.min(out.len()).min(self.bytes.len());
            out[..count].copy_from_slice(&self.bytes[..count]);
            self.bytes = &self.bytes[count..];
            Ok(count)
        }
    }

    fn wire(payloads: &[Vec<u8>], first_sequence_id: u8) -> Vec<u8> {
        let mut wire = Vec::new();
        let mut sequence_id = first_sequence_id;
        for payload in payloads {
            write_packet(&mut wire, &mut sequence_id, payload, &[]).unwrap();
        }
        wire
    }

    /// Payloads of every size class: empty, small, about the buffer's
    /// size, larger than the buffer, exactly one chunk (an empty chunk
    /// follows), and more than one chunk.
    fn payloads() -> Vec<Vec<u8>> {
        let sizes = [0, 1, 3, 60, 250, 251, 252, 253, 1000, 5000, CHUNK_PAYLOAD_BYTES_MAX, CHUNK_PAYLOAD_BYTES_MAX + 7, 17];
        sizes.iter().enumerate().map(|(index, &size)| (0..size).map(|byte| (byte * 7 + index) as u8).collect()).collect()
    }

    #[test]
    fn lends_and_joins_what_read_packet_reads() {
        let payloads = payloads();
        let wire = wire(&payloads, 250);
        for (buffer_bytes, step) in [(256, 7), (256, 100_000), (4096, 333), (1 << 20, 1 << 20)] {
            let mut expected_reader = &wire[..];
            let mut expected_sequence_id = 250u8;
            let mut reader = PacketReader::new(Trickle { bytes: &wire, step }, buffer_bytes, 250, 1 << 30);
            for payload in &payloads {
                let expected = read_packet(&mut expected_reader, &mut expected_sequence_id, 1 << 30).unwrap();
                assert_eq!(&expected, payload);
                assert_eq!(reader.next_packet().unwrap(), &payload[..], "buffer {buffer_bytes}, step {step}, {} bytes", payload.len());
            }
            assert!(matches!(reader.next_packet(), Err(ProtocolError::Closed)));
        }
    }

    #[test]
    fn a_restart_of_the_numbering_is_accepted_once_when_allowed() {
        // Packets 7 and 8, then the peer restarts at 1: 1, 2.
        let mut bytes = wire(&[vec![7], vec![8]], 7);
        bytes.extend(wire(&[vec![1], vec![2; 300]], 1));
        let mut reader = PacketReader::new(&bytes[..], 64, 7, 1 << 20);
        assert_eq!(reader.next_packet().unwrap(), &[7]);
        reader.allow_sequence_restart(1);
        // Allowed but not taken: the numbering goes on.
        assert_eq!(reader.next_packet().unwrap(), &[8]);
        reader.allow_sequence_restart(1);
        assert_eq!(reader.next_packet().unwrap(), &[1]);
        assert_eq!(reader.next_packet().unwrap(), &[2; 300][..]);

        // Not allowed: out of order.
        let mut reader = PacketReader::new(&bytes[..], 64, 7, 1 << 20);
        reader.next_packet().unwrap();
        reader.next_packet().unwrap();
        assert!(matches!(reader.next_packet(), Err(ProtocolError::OutOfOrder { expected: 9, got: 1 })));
    }

    #[test]
    fn checks_sequence_ids_sizes_and_truncation() {
        let wire_bytes = wire(&[vec![1; 10]], 5);
        let mut reader = PacketReader::new(&wire_bytes[..], 64, 4, 1 << 20);
        assert!(matches!(reader.next_packet(), Err(ProtocolError::OutOfOrder { expected: 4, got: 5 })));

        let mut reader = PacketReader::new(&wire_bytes[..], 64, 5, 9);
        assert!(matches!(reader.next_packet(), Err(ProtocolError::PacketTooLarge { length_bytes: 10, max_bytes: 9 })));
        let big = wire(&[vec![1; 1000]], 0);
        let mut reader = PacketReader::new(&big[..], 64, 0, 999);
        assert!(matches!(reader.next_packet(), Err(ProtocolError::PacketTooLarge { length_bytes: 1000, max_bytes: 999 })));

        for cut in [1, 3, 4, 8] {
            let mut reader = PacketReader::new(&wire_bytes[..cut], 64, 5, 1 << 20);
            match reader.next_packet() {
                Err(ProtocolError::Io(error)) => {
                    assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof)
                }
                other => panic!("cut at {cut}: {:?}", other.map(<[u8]>::to_vec)),
            }
        }
        let cut_large = &big[..500];
        let mut reader = PacketReader::new(cut_large, 64, 0, 1 << 20);
        assert!(matches!(reader.next_packet(), Err(ProtocolError::Io(_))));
    }
}
