//! The thread that reads a semi-synchronous replica's acknowledgements
//! from its dump connection while the dump thread writes to it (MySQL's
//! Ack_receiver, one thread per dump here: dumps are threads already).
//!
//! It reads a clone of the socket with a short timeout so it notices the
//! dump's end; the dump thread's peer check switches the socket to
//! non-blocking for a moment, so a read may also return WouldBlock, which
//! is waited out the same way. Packets are framed by hand, sequence ids
//! ignored: MySQL's and MariaDB's replicas send every ack with id 0.

use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::packet::parse_ack;
use super::position::LogPosition;
use super::source::SemiSyncSource;

/// How often the reader looks at its stop flag.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// An ack is a few hundred bytes at most; more unparsed input than this
/// is not an ack stream.
const PENDING_BYTES_MAX: usize = 64 * 1024;

/// The last event the dump asked to have acknowledged and when it was
/// sent, for `Rpl_semi_sync_source_net_avg_wait_time`.
#[derive(Default)]
pub struct LastRequest {
    sent: Mutex<Option<(LogPosition, Instant)>>,
}

impl LastRequest {
    pub fn note(&self, position: LogPosition) {
        let mut sent = self.sent.lock();
        if sent.is_none() {
            *sent = Some((position, Instant::now()));
        }
    }

    /// The round trip of the request `ack` answers, if it answers one.
    fn answered_by(&self, ack: &LogPosition) -> Option<Duration> {
        let mut sent = self.sent.lock();
        match sent.as_ref() {
            Some((position, at)) if ack >= position => {
                let round_trip = at.elapsed();
                *sent = None;
                Some(round_trip)
            }
            _ => None,
        }
    }
}

/// A running reader; stopped and joined on drop.
pub struct AckReader {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl AckReader {
    pub fn start(
        socket: TcpStream,
        connection_id: u32,
        source: Arc<SemiSyncSource>,
        last_request: Arc<LastRequest>,
    ) -> std::io::Result<AckReader> {
        socket.set_read_timeout(Some(POLL_INTERVAL))?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("semi-sync-ack".into())
                .spawn(move || read_acks(socket, connection_id, &source, &last_request, &stop))?
        };
        Ok(AckReader { stop, thread: Some(thread) })
    }
}

impl Drop for AckReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn read_acks(mut socket: TcpStream, connection_id: u32, source: &SemiSyncSource, last_request: &LastRequest, stop: &AtomicBool) {
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    while !stop.load(Ordering::Acquire) {
        match socket.read(&mut chunk) {
            Ok(0) => return,
            Ok(read) => pending.extend_from_slice(&chunk[..read]),
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                // WouldBlock: the dump's peer check made the socket
                // non-blocking for a moment; do not spin on it.
                if error.kind() == ErrorKind::WouldBlock {
                    std::thread::sleep(Duration::from_millis(1));
                }
                continue;
            }
            Err(_) => return,
        }
        while let Some((payload_start, packet_end)) = next_packet(&pending) {
            match parse_ack(&pending[payload_start..packet_end]) {
                Some(ack) => {
                    let position = LogPosition::new(&ack.file_name, ack.position);
                    let round_trip = last_request.answered_by(&position);
                    source.acknowledge(connection_id, position, round_trip);
                }
                None => tracing::warn!(connection_id, "a semi-synchronous replica sent a packet that is not an acknowledgement"),
            }
            pending.drain(..packet_end);
        }
        if pending.len() > PENDING_BYTES_MAX {
            tracing::warn!(connection_id, "a semi-synchronous replica sends more than acknowledgements: no longer read");
            return;
        }
    }
}

/// The payload range of the first complete packet in `bytes`.
fn next_packet(bytes: &[u8]) -> Option<(usize, usize)> {
    if bytes.len() < 4 {
        return None;
    }
    let length = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], 0]) as usize;
    (bytes.len() >= 4 + length).then_some((4, 4 + length))
}
