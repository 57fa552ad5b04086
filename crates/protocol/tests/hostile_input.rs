//! Hostile input: random and mutated bytes through every parser, and random
//! commands against a live server, which must answer or close that one
//! connection and keep serving others. Seeded; set BINLOGD_SEED to replay.

mod common;

use std::time::Duration;

use common::start_server;
use mysql_common::constants::{CapabilityFlags, ColumnType};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, ComBinlogDumpGtid, GnoInterval, HandshakeResponse, Sid};
use mysql_common::proto::MySerialize;
use protocol::binary::{decode_parameter, ParameterType};
use protocol::handshake::parse_handshake_response;
use protocol::replication::{parse_binlog_dump, parse_binlog_dump_gtid, parse_register_replica};
use protocol::split_statements;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use testkit::raw_client::{default_capabilities, RawClient};

fn seeded() -> StdRng {
    let seed = std::env::var("BINLOGD_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random::<u64>);
    eprintln!("BINLOGD_SEED={seed}");
    StdRng::seed_from_u64(seed)
}

/// Flips, truncates or extends a valid packet.
fn mutate(rng: &mut StdRng, valid: &[u8]) -> Vec<u8> {
    let mut bytes = valid.to_vec();
    match rng.gen_range(0..3) {
        0 => bytes.truncate(rng.gen_range(0..=bytes.len())),
        1 => {
            for _ in 0..rng.gen_range(1..4) {
                let index = rng.gen_range(0..bytes.len());
                bytes[index] = rng.gen();
            }
        }
        _ => bytes.extend((0..rng.gen_range(1..40)).map(|_| rng.gen::<u8>())),
    }
    bytes
}

fn valid_handshake_response() -> Vec<u8> {
    let mut attributes = std::collections::HashMap::new();
    attributes.insert("_client_name".to_string(), "fuzz".to_string());
    let response = HandshakeResponse::new(
        Some(vec![1u8; 20]),
        (8, 4, 0),
        Some(b"root".to_vec()),
        Some(b"db".to_vec()),
        Some(AuthPlugin::CachingSha2Password),
        default_capabilities() | CapabilityFlags::CLIENT_CONNECT_ATTRS,
        Some(attributes),
        1 << 24,
    );
    let mut bytes = Vec::new();
    response.serialize(&mut bytes);
    bytes
}

fn valid_gtid_dump() -> Vec<u8> {
    let sid = Sid::new([7; 16]).with_interval(GnoInterval::new(1, 10)).with_interval(GnoInterval::new(12, 13));
    let mut bytes = Vec::new();
    ComBinlogDumpGtid::new(3).with_filename(&b"binlog.000001"[..]).with_sid(sid).serialize(&mut bytes);
    bytes
}

#[test]
fn parsers_survive_random_and_mutated_bytes() {
    let mut rng = seeded();
    let handshake = valid_handshake_response();
    let gtid_dump = valid_gtid_dump();
    for _ in 0..20_000 {
        let random: Vec<u8> = (0..rng.gen_range(0..80)).map(|_| rng.gen()).collect();
        let _ = parse_handshake_response(&random, false);
        let _ = parse_handshake_response(&mutate(&mut rng, &handshake), true);
        let _ = parse_binlog_dump_gtid(&mutate(&mut rng, &gtid_dump));
        let mut command = vec![0x1E];
        command.extend_from_slice(&random);
        let _ = parse_binlog_dump_gtid(&command);
        let _ = parse_binlog_dump(&command);
        let _ = parse_register_replica(&command);
        let _ = split_statements(&String::from_utf8_lossy(&random));
        let mut sequence_id = random.get(3).copied().unwrap_or(0);
        let _ = protocol::packet::read_packet(&mut &random[..], &mut sequence_id, 1 << 16);
        let type_byte =
            *[0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 245, 246, 252, 253, 254].get(rng.gen_range(0..21)).unwrap();
        if let Ok(parameter_type) = ParameterType::from_wire(type_byte, rng.gen()) {
            let _ = decode_parameter(&mut ParseBuf(&random), parameter_type);
        }
    }
    assert!(ParameterType::from_wire(ColumnType::MYSQL_TYPE_LONG as u8, 0x80).unwrap().unsigned);
}

/// Sends SELECT 1 and reads the answer without panicking on a dead or
/// busy connection.
fn select_one_works(client: &mut RawClient) -> bool {
    client.socket.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    if !client.try_command(b"\x03SELECT 1") {
        return false;
    }
    let mut packets = 0;
    loop {
        match client.try_read_packet() {
            Err(_) => return false,
            Ok(packet) if packet[0] == 0xFF => return false,
            Ok(packet) if packets > 0 && packet[0] == 0xFE && packet.len() < 9 => {
                // The EOF after the column definition, or the terminator.
                if packets >= 3 {
                    client.socket.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    return true;
                }
            }
            Ok(_) => {}
        }
        packets += 1;
    }
}

/// Command bytes worth aiming at: every command the server knows, plus a
/// few it does not.
const COMMANDS: [u8; 22] = [0, 1, 2, 3, 4, 9, 12, 14, 17, 18, 21, 22, 23, 24, 25, 26, 27, 28, 30, 31, 0x42, 0xFF];

#[test]
fn server_survives_random_commands() {
    let mut rng = seeded();
    let server = start_server(|config| {
        config.connection.max_allowed_packet = 1 << 20;
        config.connection.net_write_timeout = Duration::from_secs(2);
    });
    let address = server.local_address();
    let mut bystander = RawClient::login(address, "root", "");
    let mut client = RawClient::login(address, "root", "");
    for round in 0..200 {
        let mut packet = vec![COMMANDS[rng.gen_range(0..COMMANDS.len())]];
        packet.extend((0..rng.gen_range(0..48)).map(|_| rng.gen::<u8>()));
        // Prepare something now and then, so statement commands hit real ids.
        if round % 10 == 0 {
            let _ = client.prepare("SELECT ?, ?");
        }
        if !client.try_command(&packet) {
            client = RawClient::login(address, "root", "");
            continue;
        }
        client.socket.set_read_timeout(Some(Duration::from_millis(25))).unwrap();
        // Drain whatever the command answered (possibly nothing).
        while client.try_read_packet().is_ok() {}
        // Either the connection still works, or the server closed it (or
        // it is streaming a dump that no longer reads commands).
        if !select_one_works(&mut client) {
            client = RawClient::login(address, "root", "");
        }
        if round % 50 == 0 {
            assert!(bystander.query("SELECT 1").is_ok(), "round {round}: another client is unaffected");
        }
    }
    assert!(bystander.query("SELECT 1").is_ok());
}
