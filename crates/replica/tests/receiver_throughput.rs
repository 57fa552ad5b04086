//! The receiver's own cost, memory relay log vs relay-log files, without
//! a real source: a fake source on loopback sends a pre-encoded dump of
//! sysbench-like transactions (real headers, `log_pos`, CRC32) as fast as
//! the socket takes it, and the real [`Receiver`] (source client, CRC32
//! check, intake, relay log, boundary queue) takes it in. What `binlogd
//! bench replication` measures, less the source's dump thread and the
//! database. Ignored by default:
//! `cargo test --release -p replica --test receiver_throughput -- --ignored --nocapture`.

mod support;

use std::io::{BufReader, BufWriter, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use binlog_format::frame::set_log_pos;
use binlog_format::gtid_set::GtidSet;
use binlog_format::EventType;
use protocol::packet::{read_packet, write_packet};
use replica::relay::RelayLogConfig;
use replica::{BoundaryQueue, Receiver, ReceiverConfig, RelayLog, SourceAddress, StartPosition};
use support::*;

const TRANSACTIONS: u64 = 50_000;
const ROUNDS: usize = 5;

/// One transaction as sysbench oltp_write_only writes it: Gtid, BEGIN,
/// four Table_map + rows pairs (update on an index, update, delete,
/// insert), Xid; ~1.6 KiB in 11 events. `log_pos` is each event's end.
fn sysbench_like(gno: u64, position: &mut u64) -> Vec<Vec<u8>> {
    let group_start = (gno - 1) / 8 * 8;
    let mut events = vec![gtid_event(gno, group_start as i64, gno as i64), query_event("BEGIN")];
    for rows_type in [EventType::UpdateRows, EventType::UpdateRows, EventType::DeleteRows, EventType::WriteRows] {
        events.push(event(EventType::TableMap as u8, &[1u8; 45]));
        events.push(event(rows_type as u8, &[2u8; 300]));
    }
    let mut xid = Vec::new();
    binlog_format::events::simple::XidEvent { xid: gno }.encode_body(&mut xid);
    events.push(event(EventType::Xid as u8, &xid));
    for bytes in &mut events {
        *position += bytes.len() as u64;
        set_log_pos(bytes, *position as u32, true);
    }
    events
}

/// The dump's packets, ready to write: a Rotate, then the transactions.
fn encoded_dump() -> (Vec<u8>, u64) {
    let mut stream = Vec::new();
    let mut sequence = 1u8;
    let mut payload_bytes = 0u64;
    let mut packet = |event: &[u8], stream: &mut Vec<u8>| {
        write_packet(stream, &mut sequence, &[0x00], event).unwrap();
    };
    let mut rotate_body = 4u64.to_le_bytes().to_vec();
    rotate_body.extend_from_slice(b"binlog.000001");
    let rotate = testkit::framed_event(EventType::Rotate as u8, 0x20, &rotate_body);
    packet(&rotate, &mut stream);
    let mut position = 4u64;
    for gno in 1..=TRANSACTIONS {
        for event in sysbench_like(gno, &mut position) {
            payload_bytes += event.len() as u64;
            packet(&event, &mut stream);
        }
    }
    (stream, payload_bytes)
}

/// A source that logs anyone in, answers the connect queries and sends
/// `dump` after COM_BINLOG_DUMP_GTID; then waits for the receiver to hang up.
fn fake_source(dump: Arc<Vec<u8>>) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let thread = std::thread::spawn(move || {
        let (socket, _) = listener.accept().unwrap();
        // As a real source (the protocol crate's PacketStream): without it
        // each reply's second packet waits for a delayed ACK.
        socket.set_nodelay(true).unwrap();
        let mut reader = BufReader::new(socket.try_clone().unwrap());
        let mut writer = BufWriter::new(socket.try_clone().unwrap());
        let mut sequence = 0u8;
        let write = |writer: &mut BufWriter<TcpStream>, sequence: &mut u8, payload: &[u8]| {
            write_packet(writer, sequence, payload, &[]).unwrap();
            writer.flush().unwrap();
        };
        write(&mut writer, &mut sequence, &protocol::handshake::encode_initial_handshake("8.4.0-fake", 7, &[b'a'; 20]));
        read_packet(&mut reader, &mut sequence, 1 << 20).unwrap();
        write(&mut writer, &mut sequence, &[0x00, 0, 0, 0x02, 0, 0, 0]);
        loop {
            sequence = 0;
            let command = read_packet(&mut reader, &mut sequence, 1 << 20).unwrap();
            match command[0] {
                0x03 => {
                    let sql = String::from_utf8_lossy(&command[1..]).to_uppercase();
                    let source_uuid = SOURCE_UUID.to_string();
                    let value = match sql.as_str() {
                        "SELECT UNIX_TIMESTAMP()" => Some("1700000000"),
                        "SELECT @@GLOBAL.SERVER_ID" => Some("1"),
                        "SELECT @@GLOBAL.SERVER_UUID" => Some(source_uuid.as_str()),
                        "SELECT @MASTER_BINLOG_CHECKSUM" => Some("CRC32"),
                        _ => None,
                    };
                    match value {
                        Some(value) => {
                            write(&mut writer, &mut sequence, &[1]);
                            write(
                                &mut writer,
                                &mut sequence,
                                b"\x03def\x00\x00\x00\x01v\x00\x0c\x21\x00\x00\x01\x00\x00\xfd\x00\x00\x00\x00\x00",
                            );
                            write(&mut writer, &mut sequence, &[0xFE, 0, 0, 0x02, 0]);
                            let mut row = vec![value.len() as u8];
                            row.extend_from_slice(value.as_bytes());
                            write(&mut writer, &mut sequence, &row);
                            write(&mut writer, &mut sequence, &[0xFE, 0, 0, 0x02, 0]);
                        }
                        None => write(&mut writer, &mut sequence, &[0x00, 0, 0, 0x02, 0, 0, 0]),
                    }
                }
                0x15 => write(&mut writer, &mut sequence, &[0x00, 0, 0, 0x02, 0, 0, 0]),
                0x1e => break,
                other => panic!("unexpected command {other:#x}"),
            }
        }
        drop(writer);
        let mut socket = socket;
        // The receiver hangs up when stopped: a failed write is the end.
        let _ = socket.write_all(&dump);
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    (port, thread)
}

/// CPU time of this process's receiver thread so far (Linux
/// schedstat: nanoseconds on a CPU), 0 where there is none to read.
fn receiver_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0 };
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == "replica-receive" {
            let schedstat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            return schedstat.split_whitespace().next().and_then(|ns| ns.parse().ok()).unwrap_or(0);
        }
    }
    0
}

/// One receive of the whole dump; returns (seconds, bytes in the relay
/// log, the receiver thread's CPU seconds).
fn receive(dump: &Arc<Vec<u8>>, memory: bool) -> (f64, u64, f64) {
    let directory = tempfile::tempdir().unwrap();
    let config = if memory {
        RelayLogConfig::memory(256 << 20, 16 << 20, directory.path().to_path_buf()).unwrap()
    } else {
        RelayLogConfig::Files { directory: directory.path().join("relay"), file_size_max_bytes: 1 << 30, space_limit_bytes: 1 << 30 }
    };
    let relay = Arc::new(RelayLog::open(&config).unwrap());
    let queue = Arc::new(BoundaryQueue::new(TRANSACTIONS as usize));
    let (port, source) = fake_source(dump.clone());
    let address = SourceAddress { host: "127.0.0.1".into(), port, user: "repl".into(), password: String::new() };
    let started = Instant::now();
    let receiver = Receiver::start(ReceiverConfig::new(address, 2, StartPosition::Gtids(GtidSet::new())), relay.clone(), queue.clone());
    let deadline = Instant::now() + Duration::from_secs(120);
    while queue.len() as u64 != TRANSACTIONS && !receiver.is_finished() {
        assert!(Instant::now() < deadline, "{:?}", receiver.status());
        std::thread::sleep(Duration::from_micros(500));
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu_seconds = receiver_cpu_ns() as f64 / 1e9;
    let status = receiver.stop();
    assert!(status.last_error.is_none(), "{:?}", status.last_error);
    assert_eq!(status.transactions_received, TRANSACTIONS);
    source.join().unwrap();
    (seconds, status.bytes_received, cpu_seconds)
}

#[test]
#[ignore]
fn receiver_throughput_memory_vs_files() {
    let (dump, payload_bytes) = encoded_dump();
    let dump = Arc::new(dump);
    println!(
        "receiver, fake source on loopback, {TRANSACTIONS} transactions, {:.1} MB of events; MB/s per round:",
        payload_bytes as f64 / 1e6
    );
    let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut cpu_ns_per_byte: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (slot, memory) in [(0, true), (1, false)] {
            // RECEIVER_THROUGHPUT_RELAY=memory|files runs one relay log only (for a profiler).
            if std::env::var("RECEIVER_THROUGHPUT_RELAY").is_ok_and(|only| only != if memory { "memory" } else { "files" }) {
                continue;
            }
            let (seconds, bytes, cpu_seconds) = receive(&dump, memory);
            assert_eq!(bytes, payload_bytes, "every transaction's bytes");
            rates[slot].push(bytes as f64 / 1e6 / seconds);
            cpu_ns_per_byte[slot].push(cpu_seconds * 1e9 / bytes as f64);
        }
    }
    for rate in rates.iter_mut().chain(cpu_ns_per_byte.iter_mut()) {
        rate.sort_by(f64::total_cmp);
    }
    let median = |rate: &Vec<f64>| rate.get(rate.len() / 2).copied().unwrap_or(f64::NAN);
    println!("  memory: {:?}", rates[0].iter().map(|rate| rate.round()).collect::<Vec<_>>());
    println!("  files:  {:?}", rates[1].iter().map(|rate| rate.round()).collect::<Vec<_>>());
    println!(
        "  median memory {:.1} MB/s, files {:.1} MB/s, ratio {:.2}x",
        median(&rates[0]),
        median(&rates[1]),
        median(&rates[0]) / median(&rates[1])
    );
    let (memory_cpu, files_cpu) = (median(&cpu_ns_per_byte[0]), median(&cpu_ns_per_byte[1]));
    println!(
        "  receiver thread CPU (median): memory {memory_cpu:.2} ns/byte, files {files_cpu:.2} ns/byte, ratio {:.2}x",
        files_cpu / memory_cpu
    );
}
