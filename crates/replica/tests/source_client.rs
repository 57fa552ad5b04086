//! The source client and the receiver against a scripted fake source on
//! loopback: auth switch, a corrupted event (1743), the source's 1236
//! (13114, fatal: no retry), and a dropped connection (reconnect).

mod support;

use std::io::{BufReader, BufWriter, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog_format::gtid_set::GtidSet;
use protocol::packet::{read_packet, write_packet};
use replica::relay::RelayLogConfig;
use replica::source_client::DumpPacket;
use replica::{BoundaryQueue, IoState, Receiver, ReceiverConfig, RelayLog, SourceAddress, SourceClient, StartPosition};
use support::*;

const PASSWORD: &str = "pw";

/// What the fake source does after COM_BINLOG_DUMP(_GTID).
#[derive(Clone)]
enum Script {
    /// Send these events, then close the connection.
    Events(Vec<Vec<u8>>),
    /// Send this ERR packet.
    Error(u16, &'static str),
}

struct Connection {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
    sequence: u8,
}

impl Connection {
    fn read(&mut self) -> Option<Vec<u8>> {
        read_packet(&mut self.reader, &mut self.sequence, 1 << 30).ok()
    }

    /// Writes errors are ignored: a test's receiver may close first.
    fn write(&mut self, payload: &[u8]) {
        let _ = write_packet(&mut self.writer, &mut self.sequence, payload, &[]).and_then(|()| self.writer.flush());
    }

    fn ok(&mut self) {
        self.write(&[0x00, 0, 0, 0x02, 0, 0, 0]);
    }

    fn err(&mut self, code: u16, message: &str) {
        let mut packet = vec![0xFF];
        packet.extend_from_slice(&code.to_le_bytes());
        packet.extend_from_slice(b"#HY000");
        packet.extend_from_slice(message.as_bytes());
        self.write(&packet);
    }

    /// A one-column, one-row text result set.
    fn value(&mut self, value: &str) {
        self.write(&[1]);
        self.write(b"\x03def\x00\x00\x00\x01v\x00\x0c\x21\x00\x00\x01\x00\x00\xfd\x00\x00\x00\x00\x00");
        self.write(&[0xFE, 0, 0, 0x02, 0]);
        let mut row = vec![value.len() as u8];
        row.extend_from_slice(value.as_bytes());
        self.write(&row);
        self.write(&[0xFE, 0, 0, 0x02, 0]);
    }
}

/// Serves `scripts.len()` connections, one script each: auth with an auth
/// switch, the connect queries, then the script. Returns the dump requests
/// received.
fn fake_source(scripts: Vec<Script>) -> (u16, std::thread::JoinHandle<Vec<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let thread = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for script in scripts {
            let (socket, _) = listener.accept().unwrap();
            let mut connection =
                Connection { reader: BufReader::new(socket.try_clone().unwrap()), writer: BufWriter::new(socket), sequence: 0 };
            requests.extend(serve(&mut connection, script));
        }
        requests
    });
    (port, thread)
}

fn serve(connection: &mut Connection, script: Script) -> Option<Vec<u8>> {
    let first_scramble = [b'a'; 20];
    connection.write(&protocol::handshake::encode_initial_handshake("8.4.0-fake", 7, &first_scramble));
    connection.read().unwrap(); // the response to the first scramble
                                // Ask again with another scramble: only a client that follows the
                                // switch gets in.
    let scramble = [b'z'; 20];
    let mut switch = vec![0xFE];
    switch.extend_from_slice(b"mysql_native_password\0");
    switch.extend_from_slice(&scramble);
    switch.push(0);
    connection.write(&switch);
    let answer = connection.read().unwrap();
    if answer != protocol::native_password_response(&scramble, PASSWORD.as_bytes()) {
        connection.err(1045, "Access denied for user 'repl'@'localhost' (using password: YES)");
        return None;
    }
    connection.ok();
    loop {
        connection.sequence = 0;
        let command = connection.read()?;
        match command[0] {
            0x03 => {
                let sql = String::from_utf8_lossy(&command[1..]).to_uppercase();
                match sql.as_str() {
                    "SELECT UNIX_TIMESTAMP()" => connection.value("1700000000"),
                    "SELECT @@GLOBAL.SERVER_ID" => connection.value("1"),
                    "SELECT @@GLOBAL.SERVER_UUID" => connection.value(&SOURCE_UUID.to_string()),
                    "SELECT @MASTER_BINLOG_CHECKSUM" => connection.value("CRC32"),
                    _ => connection.ok(),
                }
            }
            0x15 => connection.ok(),
            0x12 | 0x1e => {
                match &script {
                    Script::Events(events) => {
                        for event in events {
                            let mut packet = vec![0x00];
                            packet.extend_from_slice(event);
                            connection.write(&packet);
                        }
                    }
                    Script::Error(code, message) => connection.err(*code, message),
                }
                return Some(command);
            }
            other => panic!("unexpected command {other:#x}"),
        }
    }
}

fn address(port: u16) -> SourceAddress {
    SourceAddress { host: "127.0.0.1".into(), port, user: "repl".into(), password: PASSWORD.into() }
}

#[test]
fn a_corrupted_event_is_error_1743() {
    let good = transaction(1, 0, 1, 100);
    let mut corrupted = good[2].clone();
    corrupted[25] ^= 0x01; // a body byte: the CRC32 no longer matches
    let (port, source) = fake_source(vec![Script::Events(vec![good[0].clone(), good[1].clone(), corrupted])]);
    let mut client = SourceClient::connect(&address(port), Duration::from_secs(10)).expect("auth switch followed");
    client.negotiate_checksum().unwrap();
    assert!(client.events_have_checksum());
    client.request_dump_gtid(2, &GtidSet::new(), false).unwrap();
    for expected in &good[..2] {
        match client.read_event().unwrap() {
            DumpPacket::Event(event) => assert_eq!(event, &expected[..]),
            DumpPacket::EndOfLog => panic!("end of log"),
        }
    }
    let error = client.read_event().err().expect("a checksum failure");
    assert_eq!((error.code, error.sql_state_str()), (1743, "HY000"));
    assert_eq!(error.message, "Replication event checksum verification failed while reading from network.");
    source.join().unwrap();
}

#[test]
fn a_wrong_password_is_the_sources_1045() {
    let (port, source) = fake_source(vec![Script::Events(Vec::new())]);
    let mut wrong = address(port);
    wrong.password = "nope".into();
    let error = SourceClient::connect(&wrong, Duration::from_secs(10)).err().expect("refused");
    assert_eq!((error.code, error.sql_state_str()), (1045, "HY000"));
    assert_eq!(error.message, "Access denied for user 'repl'@'localhost' (using password: YES)");
    source.join().unwrap();
}

fn start_receiver(port: u16) -> (Receiver, Arc<BoundaryQueue>, tempfile::TempDir) {
    let directory = tempfile::tempdir().unwrap();
    let relay = Arc::new(RelayLog::open(&RelayLogConfig::memory(32 << 20, 1 << 20, directory.path().to_path_buf()).unwrap()).unwrap());
    let queue = Arc::new(BoundaryQueue::new(100));
    let mut config = ReceiverConfig::new(address(port), 2, StartPosition::Gtids(GtidSet::new()));
    config.connect_retry = Duration::from_millis(50);
    config.retry_count = 3;
    (Receiver::start(config, relay, queue.clone()), queue, directory)
}

fn wait_finished(receiver: &Receiver) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !receiver.is_finished() {
        assert!(Instant::now() < deadline, "the receiver did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_sources_1236_stops_the_receiver_without_retrying() {
    let message = "Cannot replicate because the source purged required binary logs.";
    let (port, source) = fake_source(vec![Script::Error(1236, message)]);
    let (receiver, _queue, _directory) = start_receiver(port);
    wait_finished(&receiver);
    let status = receiver.stop();
    assert_eq!(status.state, IoState::No);
    assert_eq!(status.connections, 1, "no retry after 1236");
    let (error, _) = status.last_error.unwrap();
    assert_eq!(error.code, 13114);
    assert_eq!(error.message, format!("Got fatal error 1236 from source when reading data from binary log: '{message}'"));
    source.join().unwrap();
}

#[test]
fn a_dropped_connection_is_retried_and_the_cut_transaction_asked_again() {
    let first = transaction(1, 0, 1, 100);
    let second = transaction(2, 1, 2, 100);
    // Connection 1: the first transaction and half the second, then gone.
    // Connection 2: the second again, whole.
    let mut cut = first.clone();
    cut.extend(second.iter().take(2).cloned());
    let (port, source) = fake_source(vec![Script::Events(cut), Script::Events(second.clone()), Script::Error(1236, "done")]);
    let (receiver, queue, _directory) = start_receiver(port);
    wait_finished(&receiver);
    let status = receiver.stop();
    assert_eq!(status.connections, 3);
    // Each reconnect asks from what was retrieved whole: nothing, then 1,
    // then 1-2.
    let requested: Vec<String> = source
        .join()
        .unwrap()
        .iter()
        .map(|request| {
            protocol::replication::parse_binlog_dump_gtid(request)
                .unwrap()
                .gtid_set
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    assert_eq!(requested, vec![String::new(), format!("{SOURCE_UUID}:1"), format!("{SOURCE_UUID}:1-2")]);
    assert_eq!(status.retrieved_gtid_set.to_string(), format!("{SOURCE_UUID}:1-2"));
    let entries: Vec<_> = std::iter::from_fn(|| queue.try_pop()).collect();
    let gnos: Vec<u64> = entries.iter().map(|entry| entry.gtid.unwrap().gno).collect();
    assert_eq!(gnos, vec![1, 2], "each transaction once, the cut one whole");
    assert_eq!(entries[1].size_bytes, second.iter().map(|event| event.len() as u64).sum::<u64>());
    assert_ne!(entries[0].connection_epoch, entries[1].connection_epoch);
}

#[test]
fn a_receiver_blocked_on_a_full_ring_stops_on_request() {
    let transactions: Vec<Vec<u8>> = (1..=50u64).flat_map(|gno| transaction(gno, gno as i64 - 1, gno as i64, 4000)).collect();
    let (port, source) = fake_source(vec![Script::Events(transactions)]);
    let directory = tempfile::tempdir().unwrap();
    let ring_bytes = 64 << 10;
    let config = RelayLogConfig::Memory {
        limit_bytes: ring_bytes,
        spill_threshold_bytes: 16 << 10,
        spill_directory: directory.path().to_path_buf(),
    };
    let relay = Arc::new(RelayLog::open(&config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(100));
    let receiver =
        Receiver::start(ReceiverConfig::new(address(port), 2, StartPosition::Gtids(GtidSet::new())), relay.clone(), queue.clone());
    let deadline = Instant::now() + Duration::from_secs(20);
    while relay.stats().receiver_blocked < Duration::from_millis(100) {
        assert!(Instant::now() < deadline, "the receiver never blocked: {:?}", relay.stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    let stats = relay.stats();
    assert!(stats.memory_bytes <= ring_bytes && stats.memory_bytes_peak <= ring_bytes, "{stats:?}");
    assert!(queue.len() < 50);
    let stopping = Instant::now();
    let status = receiver.stop();
    assert!(stopping.elapsed() < Duration::from_secs(2), "STOP took {:?}", stopping.elapsed());
    assert_eq!(status.state, IoState::No);
    assert!(status.last_error.is_none(), "a requested stop is not an error: {:?}", status.last_error);
    // The transaction that was waiting for space was dropped, the others
    // are whole in the queue.
    assert_eq!(status.transactions_received, queue.len() as u64);
    assert_eq!(relay.stats().memory_transactions, queue.len() as u64);
    source.join().unwrap();
}

#[test]
fn a_receiver_blocked_on_a_full_ring_resumes_when_transactions_are_applied() {
    let transactions: Vec<Vec<u8>> = (1..=50u64).flat_map(|gno| transaction(gno, gno as i64 - 1, gno as i64, 4000)).collect();
    let (port, source) = fake_source(vec![Script::Events(transactions), Script::Error(1236, "done")]);
    let directory = tempfile::tempdir().unwrap();
    let ring_bytes = 64 << 10;
    let config = RelayLogConfig::Memory {
        limit_bytes: ring_bytes,
        spill_threshold_bytes: 16 << 10,
        spill_directory: directory.path().to_path_buf(),
    };
    let relay = Arc::new(RelayLog::open(&config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(100));
    let mut receiver_config = ReceiverConfig::new(address(port), 2, StartPosition::Gtids(GtidSet::new()));
    receiver_config.connect_retry = Duration::from_millis(50);
    let receiver = Receiver::start(receiver_config, relay.clone(), queue.clone());
    let deadline = Instant::now() + Duration::from_secs(20);
    while relay.stats().receiver_blocked < Duration::from_millis(100) {
        assert!(Instant::now() < deadline, "the receiver never blocked: {:?}", relay.stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = receiver.status();
    assert!(status.transactions_received < 50);
    assert_eq!(status.queue_length as u64, status.transactions_received);
    assert!(status.relay.receiver_blocked > Duration::ZERO && status.relay.memory_bytes <= ring_bytes, "{status:?}");
    let applier = Arc::new(RecordingApplier::new(200, None));
    let coordinator = replica::Coordinator::start(replica::CoordinatorConfig::default(), relay.clone(), queue, applier.clone());
    assert!(wait_until(Duration::from_secs(20), || applier.record.lock().committed.len() == 50), "{:?}", receiver.status());
    assert_eq!(applier.record.lock().committed, (1..=50).collect::<Vec<_>>());
    wait_finished(&receiver); // the second connection's 1236
    assert_eq!(receiver.status().transactions_received, 50);
    assert!(relay.stats().memory_bytes_peak <= ring_bytes, "{:?}", relay.stats());
    coordinator.stop();
    source.join().unwrap();
}
