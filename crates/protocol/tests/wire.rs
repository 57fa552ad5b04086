//! Raw-protocol tests: a toy session behind a real server on 127.0.0.1,
//! driven by a minimal client built on mysql_common's client-side packets.

mod common;

use std::io::Read;
use std::net::Shutdown;
use std::thread;
use std::time::{Duration, Instant};

use common::{start_server, VERSION};
use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, ComBinlogDump, ComBinlogDumpGtid, ComRegisterSlave, GnoInterval, HandshakeResponse, Sid,
};
use mysql_common::proto::MySerialize;
use testkit::raw_client::{default_capabilities, parse_err, MValue, RawClient, Response};

fn rows(response: Result<Response, testkit::raw_client::ServerErr>) -> Vec<Vec<Option<String>>> {
    response.expect("query succeeds").text_rows()
}

fn one(text: &str) -> Vec<Vec<Option<String>>> {
    vec![vec![Some(text.to_string())]]
}

fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn handshake_advertises_version_capabilities_and_collation() {
    let server = start_server(|_| {});
    let mut client = RawClient::connect(server.local_address());
    let (nonce, handshake) = client.read_handshake();
    assert_eq!(handshake.server_version_str(), VERSION);
    assert_eq!(handshake.default_collation(), 45);
    assert_eq!(handshake.auth_plugin_name_str().unwrap(), "caching_sha2_password");
    assert_eq!(nonce.len(), 20);
    assert!(nonce.iter().all(|&b| b != 0));
    let capabilities = handshake.capabilities();
    for flag in [
        CapabilityFlags::CLIENT_PROTOCOL_41,
        CapabilityFlags::CLIENT_SECURE_CONNECTION,
        CapabilityFlags::CLIENT_PLUGIN_AUTH,
        CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
        CapabilityFlags::CLIENT_CONNECT_WITH_DB,
        CapabilityFlags::CLIENT_MULTI_STATEMENTS,
        CapabilityFlags::CLIENT_MULTI_RESULTS,
        CapabilityFlags::CLIENT_PS_MULTI_RESULTS,
        CapabilityFlags::CLIENT_TRANSACTIONS,
        CapabilityFlags::CLIENT_DEPRECATE_EOF,
        CapabilityFlags::CLIENT_CONNECT_ATTRS,
        CapabilityFlags::CLIENT_LONG_PASSWORD,
        CapabilityFlags::CLIENT_LONG_FLAG,
    ] {
        assert!(capabilities.contains(flag), "{flag:?} advertised");
    }
    assert!(!capabilities.intersects(CapabilityFlags::CLIENT_SSL | CapabilityFlags::CLIENT_LOCAL_FILES));
    let second = RawClient::login(server.local_address(), "root", "");
    assert_ne!(second.connection_id, handshake.connection_id());
}

#[test]
fn login_checks_passwords_accounts_and_database() {
    let server = start_server(|_| {});
    let address = server.local_address();
    let login = |user: &str, password: &str, database: Option<&str>| {
        RawClient::login_with(address, user, password, AuthPlugin::MysqlNativePassword, default_capabilities(), database).0
    };
    let mut root = login("root", "", None).expect("root without password");
    assert_eq!(rows(root.query("SELECT CURRENT_USER()")), one("root@localhost"));
    let mut alice = login("alice", "secret", Some("db1")).expect("alice with password");
    assert_eq!(rows(alice.query("SELECT DATABASE()")), one("db1"));

    let denied = login("alice", "wrong", None).err().unwrap();
    assert_eq!((denied.code, denied.state.as_str()), (1045, "28000"));
    assert_eq!(denied.message, "Access denied for user 'alice'@'localhost' (using password: YES)");
    let denied = login("alice", "", None).err().unwrap();
    assert_eq!(denied.message, "Access denied for user 'alice'@'localhost' (using password: NO)");
    let denied = login("root", "something", None).err().unwrap();
    assert_eq!(denied.code, 1045, "a password for a password-less account is wrong");
    assert_eq!(login("nobody", "x", None).err().unwrap().code, 1045);
    assert_eq!(login("locked", "x", None).err().unwrap().code, 3118);
    assert_eq!(login("root", "", Some("nosuchdb")).err().unwrap().code, 1049);
}

#[test]
fn auth_switch_from_caching_sha2_and_ed25519_to_native_password() {
    let server = start_server(|_| {});
    for plugin in [AuthPlugin::CachingSha2Password, AuthPlugin::Ed25519] {
        let (result, switch) =
            RawClient::login_with(server.local_address(), "alice", "secret", plugin.clone(), default_capabilities(), None);
        let switch = switch.expect("the server asks to switch plugins");
        assert_eq!(switch.auth_plugin(), AuthPlugin::MysqlNativePassword);
        assert_eq!(switch.plugin_data().len(), 20);
        let mut client = result.expect("login after the switch");
        assert_eq!(rows(client.query("SELECT 1")), one("1"));

        let (result, switch) = RawClient::login_with(server.local_address(), "alice", "bad", plugin, default_capabilities(), None);
        assert!(switch.is_some());
        assert_eq!(result.err().unwrap().code, 1045);
    }
    // Unknown users see what an account of the default plugin sees (no
    // hint about which accounts exist): a switch from mysql_native_password.
    let (result, switch) =
        RawClient::login_with(server.local_address(), "nobody", "x", AuthPlugin::MysqlNativePassword, default_capabilities(), None);
    assert_eq!(switch.expect("a switch").auth_plugin(), AuthPlugin::CachingSha2Password);
    assert_eq!(result.err().unwrap().code, 1045);
}

/// A client that names a plugin it has not loaded (libmariadb's
/// `dummy_fallback_auth`, when threads race to load the real one) and
/// answers nothing is switched to the account's plugin even for an account
/// without a password, as mysqld does: such a client keeps talking until
/// it is switched. An empty answer under the announced plugin needs no
/// switch.
#[test]
fn an_unloaded_client_plugin_is_switched_even_without_a_password() {
    let server = start_server(|_| {});
    let fallback = AuthPlugin::Other(std::borrow::Cow::Borrowed(b"dummy_fallback_auth"));
    let (result, switch) = RawClient::login_with(server.local_address(), "root", "", fallback, default_capabilities(), None);
    // root is a mysql_native_password account in this harness.
    assert_eq!(switch.expect("the server asks to switch plugins").auth_plugin(), AuthPlugin::MysqlNativePassword);
    let mut client = result.expect("login after the switch");
    assert_eq!(rows(client.query("SELECT 1")), one("1"));

    for user in ["root", "dana"] {
        let (result, switch) =
            RawClient::login_with(server.local_address(), user, "", AuthPlugin::CachingSha2Password, default_capabilities(), None);
        assert!(switch.is_none(), "{switch:?}");
        assert_eq!(rows(result.expect("login").query("SELECT 1")), one("1"));
    }
}

/// What a MariaDB replica sends (MariaDB's own client library starts with
/// mysql_native_password whatever the handshake announced, and its answer
/// carries nothing because the announced plugin's scramble is not for it):
/// it then waits for that plugin's scramble and takes an OK at that point
/// as "Error in server handshake" (2012). The server asks it again with an
/// auth switch to its own plugin for an account without a password (a
/// MariaDB server has no caching_sha2_password client plugin), and to the
/// account's plugin for an account with one.
#[test]
fn an_empty_answer_for_another_plugin_than_announced_is_asked_again() {
    let server = start_server(|_| {});
    let address = server.local_address();
    for user in ["root", "dana"] {
        let mut client = RawClient::connect(address);
        let (nonce, handshake) = client.read_handshake();
        assert_eq!(handshake.auth_plugin_name_str().unwrap(), "caching_sha2_password");
        let response = HandshakeResponse::new(
            Some(&[][..]),
            (10, 11, 19),
            Some(user.as_bytes()),
            None::<&[u8]>,
            Some(AuthPlugin::MysqlNativePassword),
            default_capabilities(),
            None,
            1 << 24,
        );
        let mut bytes = Vec::new();
        response.serialize(&mut bytes);
        client.write_packet(&bytes);
        let packet = client.read_packet();
        assert_eq!(packet[0], 0xFE, "{user}: an auth switch, not {packet:?}");
        let switch: AuthSwitchRequest<'_> = ParseBuf(&packet).parse(()).expect("auth switch");
        assert_eq!(switch.auth_plugin(), AuthPlugin::MysqlNativePassword, "{user}");
        assert_eq!(&switch.plugin_data()[..20], &nonce[..], "{user}: the handshake's scramble again");
        client.write_packet(&[]);
        assert_eq!(client.read_packet()[0], 0x00, "{user}: OK");
    }
    let (result, switch) = RawClient::login_with(address, "alice", "secret", AuthPlugin::MysqlNativePassword, default_capabilities(), None);
    assert!(switch.is_none(), "a real answer for the account's plugin is checked at once");
    assert!(result.is_ok());
}

/// caching_sha2_password without TLS: the first login takes full
/// authentication (`0x01 0x04`, the RSA key asked for and used), the next
/// the fast path from the server's cache (`0x01 0x03`); a client that
/// starts with mysql_native_password is switched over; wrong passwords are
/// 1045 on both paths; an empty password needs no exchange.
#[test]
fn caching_sha2_full_authentication_then_the_fast_path() {
    let (private_pem, _) = protocol::caching_sha2::generate_rsa_key_pem(1024).unwrap();
    let keys = std::sync::Arc::new(protocol::RsaKeys::from_private_pem(&private_pem).unwrap());
    let server = start_server(|config| config.connection.rsa = Some(keys));
    let address = server.local_address();
    let sha2 = AuthPlugin::CachingSha2Password;

    let (result, switch, statuses) = RawClient::login_traced(address, "carol", "wrong", sha2.clone(), default_capabilities(), None);
    assert_eq!((result.err().unwrap().code, switch.is_none(), statuses), (1045, true, vec![0x04]));
    let (result, _, statuses) = RawClient::login_traced(address, "carol", "sha2-pw", sha2.clone(), default_capabilities(), None);
    assert_eq!(rows(result.expect("full authentication").query("SELECT 1")), one("1"));
    assert_eq!(statuses, vec![0x04]);
    let (result, _, statuses) = RawClient::login_traced(address, "carol", "sha2-pw", sha2.clone(), default_capabilities(), None);
    assert!(result.is_ok());
    assert_eq!(statuses, vec![0x03], "the fast path");
    let (result, _, statuses) = RawClient::login_traced(address, "carol", "nope", sha2, default_capabilities(), None);
    assert_eq!((result.err().unwrap().code, statuses), (1045, vec![]), "a cached password decides at once");

    let (result, switch, statuses) =
        RawClient::login_traced(address, "carol", "sha2-pw", AuthPlugin::MysqlNativePassword, default_capabilities(), None);
    assert!(result.is_ok());
    assert_eq!(switch.expect("switched").auth_plugin(), AuthPlugin::CachingSha2Password);
    assert_eq!(statuses, vec![0x03]);

    let (result, switch, statuses) =
        RawClient::login_traced(address, "root", "", AuthPlugin::CachingSha2Password, default_capabilities(), None);
    assert!(result.is_ok() && switch.is_none() && statuses.is_empty());
}

#[test]
fn queries_status_flags_and_multi_statements() {
    let server = start_server(|_| {});
    for deprecate_eof in [false, true] {
        let mut capabilities = default_capabilities();
        if deprecate_eof {
            capabilities |= CapabilityFlags::CLIENT_DEPRECATE_EOF;
        }
        let (client, _) = RawClient::login_with(server.local_address(), "root", "", AuthPlugin::MysqlNativePassword, capabilities, None);
        let mut client = client.unwrap();
        assert_eq!(rows(client.query("SELECT 1")), one("1"));
        assert_eq!(rows(client.query("SELECT @@version")), one(VERSION));
        assert_eq!(rows(client.query("SELECT DATABASE()")), vec![vec![None]]);
        assert!(client.query("BEGIN").unwrap().status().contains(StatusFlags::SERVER_STATUS_IN_TRANS));
        let status = client.query("SELECT 1").unwrap().status();
        assert!(status.contains(StatusFlags::SERVER_STATUS_IN_TRANS | StatusFlags::SERVER_STATUS_AUTOCOMMIT));
        assert!(!client.query("COMMIT").unwrap().status().contains(StatusFlags::SERVER_STATUS_IN_TRANS));
        match client.query("INSERT INTO t VALUES (1)").unwrap() {
            Response::Ok { affected_rows, last_insert_id, warnings, .. } => {
                assert_eq!((affected_rows, last_insert_id, warnings), (1, Some(42), 1));
            }
            other => panic!("{other:?}"),
        }
        let error = client.query("SELEKT 1").unwrap_err();
        assert_eq!((error.code, error.state.as_str()), (1064, "42000"));
        assert_eq!(client.query("  -- nothing\n").unwrap_err().code, 1065);

        // Three statements in one COM_QUERY: MORE_RESULTS_EXISTS on all but
        // the last response.
        client.command(b"\x03SELECT 1; SELECT @@version ; INSERT INTO t VALUES (';')");
        let first = client.read_response(false).unwrap();
        assert_eq!(first.text_rows(), one("1"));
        assert!(first.status().contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS));
        let second = client.read_response(false).unwrap();
        assert_eq!(second.text_rows(), one(VERSION));
        assert!(second.status().contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS));
        let third = client.read_response(false).unwrap();
        assert!(matches!(third, Response::Ok { .. }));
        assert!(!third.status().contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS));

        // An error ends the batch.
        client.command(b"\x03SELECT 1; BAD; SELECT 1");
        assert!(client.read_response(false).unwrap().status().contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS));
        assert_eq!(client.read_response(false).unwrap_err().code, 1064);
        assert_eq!(rows(client.query("SELECT @@version")), one(VERSION), "nothing of the batch is left over");

        // COM_SET_OPTION turns multi-statements off and on; it answers EOF.
        client.command(&[0x1B, 1, 0]);
        let eof = client.read_packet();
        assert_eq!(eof[0], 0xFE);
        assert_eq!(client.query("SELECT 1; SELECT 1").unwrap_err().code, 1064);
        assert_eq!(rows(client.query("SELECT 1;")), one("1"), "a trailing semicolon is fine");
        client.command(&[0x1B, 0, 0]);
        assert_eq!(client.read_packet()[0], 0xFE);
        client.command(b"\x03SELECT 1;SELECT 1");
        client.read_response(false).unwrap();
        client.read_response(false).unwrap();
    }
}

#[test]
fn streamed_rows_and_an_error_after_some_rows() {
    let server = start_server(|_| {});
    let mut client = RawClient::login(server.local_address(), "root", "");
    let result = rows(client.query("SELECT ROWS(5000)"));
    assert_eq!(result.len(), 5000);
    assert_eq!(result[4999], vec![Some("4999".into()), Some("row4999".into())]);
    let error = client.query("SELECT STREAM_ERROR").unwrap_err();
    assert_eq!(error.code, 1317);
    assert_eq!(rows(client.query("SELECT 1")), one("1"));
}

#[test]
fn malformed_packets_and_garbage_close_only_their_connection() {
    let server = start_server(|_| {});
    let address = server.local_address();
    let mut bystander = RawClient::login(address, "root", "");

    // Garbage instead of a handshake response: no valid framing.
    let mut client = RawClient::connect(address);
    client.read_handshake();
    client.write_raw(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let packet = client.read_packet_any_sequence();
    assert_eq!(parse_err(&packet, CapabilityFlags::empty()).code, 1156);
    assert!(client.closed_by_server());
    assert_eq!(rows(bystander.query("SELECT 1")), one("1"));

    // A handshake response cut short.
    let mut client = RawClient::connect(address);
    client.read_handshake();
    let mut truncated = default_capabilities().bits().to_le_bytes().to_vec();
    truncated.extend_from_slice(&[0; 6]);
    client.write_packet(&truncated);
    assert_eq!(parse_err(&client.read_packet(), CapabilityFlags::empty()).code, 1835);
    assert!(client.closed_by_server());

    // After login: unknown commands and empty packets are answered, the
    // connection goes on.
    let mut client = RawClient::login(address, "root", "");
    client.command(&[0x55, 1, 2, 3]);
    let error = parse_err(&client.read_packet(), client.capabilities);
    assert_eq!((error.code, error.state.as_str(), error.message.as_str()), (1047, "08S01", "Unknown command"));
    client.command(&[]);
    assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1047);
    assert_eq!(rows(client.query("SELECT 1")), one("1"));

    // A truncated COM_STMT_EXECUTE is malformed: ERR 1835, then closed.
    client.command(&[0x17, 1]);
    assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1835);
    assert!(client.closed_by_server());

    // Bytes that are not a packet: a wrong sequence id gives 1156, closed.
    let mut client = RawClient::login(address, "root", "");
    client.write_raw(&[5, 0, 0, 9, 0x03, b'x', b'y', b'z', b'w']);
    assert_eq!(parse_err(&client.read_packet_any_sequence(), client.capabilities).code, 1156);
    assert!(client.closed_by_server());

    // A client that disconnects in the middle of a packet.
    let mut client = RawClient::login(address, "root", "");
    client.write_raw(&[100, 0, 0, 0, 0x03, b'S']);
    client.socket.shutdown(Shutdown::Write).unwrap();
    assert!(client.closed_by_server());

    assert_eq!(rows(bystander.query("SELECT @@version")), one(VERSION));
    wait_until("closed connections leave the process list", || server.registry().len() == 1);
}

#[test]
fn packets_over_max_allowed_packet_get_1153() {
    let server = start_server(|config| config.connection.max_allowed_packet = 1024 * 1024);
    let address = server.local_address();
    let mut bystander = RawClient::login(address, "root", "");
    let mut client = RawClient::login(address, "root", "");
    let fits = format!("SELECT LENGTH('{}')", "y".repeat(1024 * 1024 - 64));
    assert_eq!(rows(client.query(&fits)), one(&(1024 * 1024 - 64).to_string()));

    let too_big = format!("SELECT LENGTH('{}')", "y".repeat(2 * 1024 * 1024));
    let mut payload = vec![0x03];
    payload.extend_from_slice(too_big.as_bytes());
    client.command(&payload);
    let error = parse_err(&client.read_packet(), client.capabilities);
    assert_eq!((error.code, error.state.as_str()), (1153, "08S01"));
    assert_eq!(error.message, "Got a packet bigger than 'max_allowed_packet' bytes");
    assert!(client.closed_by_server());
    assert_eq!(rows(bystander.query("SELECT 1")), one("1"));
}

#[test]
fn packets_over_16_mib_are_split_and_joined() {
    let server = start_server(|config| config.connection.max_allowed_packet = 64 * 1024 * 1024);
    let mut client = RawClient::login(server.local_address(), "root", "");
    let length = 17 * 1024 * 1024;
    let query = format!("SELECT LENGTH('{}')", "z".repeat(length));
    assert_eq!(rows(client.query(&query)), one(&length.to_string()));
    // A payload of exactly 16 MiB - 1 bytes needs a trailing empty chunk.
    let exact = 0xFF_FFFF - 1 - "SELECT LENGTH('')".len();
    let query = format!("SELECT LENGTH('{}')", "z".repeat(exact));
    assert_eq!(query.len() + 1, 0xFF_FFFF);
    assert_eq!(rows(client.query(&query)), one(&exact.to_string()));
    // And a row bigger than 16 MiB comes back in pieces.
    let result = rows(client.query(&format!("SELECT REPEAT('x', {length})")));
    assert_eq!(result[0][0].as_ref().unwrap().len(), length);
    assert_eq!(rows(client.query("SELECT 1")), one("1"));
}

#[test]
fn prepared_statements_speak_the_binary_protocol() {
    let server = start_server(|_| {});
    for deprecate_eof in [false, true] {
        let mut capabilities = default_capabilities();
        if deprecate_eof {
            capabilities |= CapabilityFlags::CLIENT_DEPRECATE_EOF;
        }
        let (client, _) = RawClient::login_with(server.local_address(), "root", "", AuthPlugin::MysqlNativePassword, capabilities, None);
        let mut client = client.unwrap();
        let (id, param_count, columns) = client.prepare("SELECT ?, ?, ?, ?, ?, ?, ?, ?").unwrap();
        assert_eq!((param_count, columns.len()), (8, 8));
        let params = vec![
            MValue::Int(-5),
            MValue::UInt(u64::MAX),
            MValue::Bytes("héllo".as_bytes().to_vec()),
            MValue::NULL,
            MValue::Double(2.5),
            MValue::Float(0.25),
            MValue::Date(2024, 1, 2, 3, 4, 5, 6),
            MValue::Time(true, 1, 2, 3, 4, 500),
        ];
        let Response::BinaryRows { rows: echoed, columns, .. } = client.execute(id, &params).unwrap() else { panic!("binary result set") };
        assert_eq!(columns[0].name_str(), "p0");
        assert_eq!(echoed, vec![params.clone()]);

        // Re-execute without rebinding: the remembered types apply.
        let (request, _) = mysql_common::packets::ComStmtExecuteRequestBuilder::new(id).build(&params);
        let mut packet = Vec::new();
        request.serialize(&mut packet);
        let bound_flag_at = 1 + 4 + 1 + 4 + 1;
        packet[bound_flag_at] = 0;
        packet.drain(bound_flag_at + 1..bound_flag_at + 1 + 2 * params.len());
        let Response::BinaryRows { rows: again, .. } = client.execute_raw(&packet).unwrap() else { panic!() };
        assert_eq!(again, vec![params.clone()]);

        // Long data: two chunks for parameter 0, no value in the execute.
        let (length_id, _, _) = client.prepare("SELECT LENGTH(?)").unwrap();
        for _ in 0..2 {
            let mut long_data = vec![0x18];
            long_data.extend_from_slice(&length_id.to_le_bytes());
            long_data.extend_from_slice(&0u16.to_le_bytes());
            long_data.extend_from_slice(&[7u8; 100_000]);
            client.command(&long_data);
        }
        let mut execute = vec![0x17];
        execute.extend_from_slice(&length_id.to_le_bytes());
        execute.push(0);
        execute.extend_from_slice(&1u32.to_le_bytes());
        execute.extend_from_slice(&[0, 1, 0xFC, 0]);
        let Response::BinaryRows { rows: length_rows, .. } = client.execute_raw(&execute).unwrap() else { panic!() };
        assert_eq!(length_rows, vec![vec![MValue::Int(200_000)]]);

        // DML answers OK; errors for unknown or closed statements.
        let (insert_id, _, columns) = client.prepare("INSERT INTO t VALUES (?, ?)").unwrap();
        assert!(columns.is_empty());
        match client.execute(insert_id, &[MValue::Int(1), MValue::NULL]).unwrap() {
            Response::Ok { affected_rows: 2, .. } => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(client.prepare("DROP TABLE t").unwrap_err().code, 1064);
        assert_eq!(client.execute(999, &[]).unwrap_err().code, 1243);
        client.command(&[0x1A, 0, 0, 0, 0]);
        assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1243, "COM_STMT_RESET of an unknown id");
        let mut reset = vec![0x1A];
        reset.extend_from_slice(&id.to_le_bytes());
        client.command(&reset);
        assert_eq!(client.read_packet()[0], 0x00, "COM_STMT_RESET answers OK");
        let mut close = vec![0x19];
        close.extend_from_slice(&id.to_le_bytes());
        client.command(&close);
        let error = client.execute(id, &params).unwrap_err();
        assert_eq!(error.message, format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"));
        // Unbound types on the first execution: 1210.
        let (fresh, _, _) = client.prepare("SELECT ?").unwrap();
        let mut unbound = vec![0x17];
        unbound.extend_from_slice(&fresh.to_le_bytes());
        unbound.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0]);
        assert_eq!(client.execute_raw(&unbound).unwrap_err().code, 1210);
        assert_eq!(rows(client.query("SELECT 1")), one("1"), "the text protocol still works");
    }
}

#[test]
fn replication_commands_stream_events() {
    let server = start_server(|config| config.connection.max_allowed_packet = 64 * 1024 * 1024);
    let address = server.local_address();
    let mut client = RawClient::login(address, "root", "");
    let mut register = Vec::new();
    ComRegisterSlave::new(7).with_hostname(&b"replica"[..]).with_port(3307).serialize(&mut register);
    client.command(&register);
    assert_eq!(client.read_packet()[0], 0x00);

    // Non-blocking dump: events, EOF, then the connection closes.
    let mut dump = Vec::new();
    ComBinlogDump::new(7)
        .with_pos(4)
        .with_filename(&b"binlog.000001"[..])
        .with_flags(mysql_common::packets::BinlogDumpFlags::BINLOG_DUMP_NON_BLOCK)
        .serialize(&mut dump);
    client.command(&dump);
    for expected in [&b"event-1"[..], b"event-2", b"event-3"] {
        let packet = client.read_packet();
        assert_eq!(packet[0], 0x00);
        assert_eq!(&packet[1..], expected);
    }
    assert_eq!(client.read_packet(), vec![0xFE, 0, 0, 0, 0], "classic EOF ends a non-blocking dump");
    assert!(client.closed_by_server());

    // An event over 16 MiB is split and joined like any packet.
    let mut client = RawClient::login(address, "root", "");
    let mut dump = Vec::new();
    ComBinlogDump::new(8)
        .with_pos(17_000_000)
        .with_filename(&b"big"[..])
        .with_flags(mysql_common::packets::BinlogDumpFlags::BINLOG_DUMP_NON_BLOCK)
        .serialize(&mut dump);
    client.command(&dump);
    let packet = client.read_packet();
    assert_eq!(packet.len(), 17_000_001);
    assert!(packet[0] == 0x00 && packet[1..].iter().all(|&b| b == 0xAB));

    // A blocking dump ends when the reader goes away.
    let mut client = RawClient::login(address, "root", "");
    let mut dump = Vec::new();
    ComBinlogDump::new(9).with_filename(&b"binlog.000001"[..]).serialize(&mut dump);
    client.command(&dump);
    for _ in 0..3 {
        client.read_packet();
    }
    wait_until("the dump shows in the process list", || server.registry().processes().iter().any(|p| p.command == "Binlog Dump"));
    drop(client);
    wait_until("the dump thread ends", || server.registry().processes().iter().all(|p| p.command != "Binlog Dump"));

    // GTID dump: the SID block arrives decoded.
    let mut client = RawClient::login(address, "root", "");
    let uuid = [0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62];
    let mut dump = Vec::new();
    ComBinlogDumpGtid::new(42)
        .with_filename(&b"binlog.000001"[..])
        .with_pos(4)
        .with_sid(Sid::new(uuid).with_interval(GnoInterval::new(1, 6)))
        .serialize(&mut dump);
    client.command(&dump);
    let packet = client.read_packet();
    assert_eq!(&packet[1..], b"42|binlog.000001|3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5");
    assert_eq!(client.read_packet()[0], 0xFE);

    // A dump the session refuses: its error, then closed.
    let mut client = RawClient::login(address, "root", "");
    let mut dump = Vec::new();
    ComBinlogDump::new(9).with_filename(&b"purged"[..]).serialize(&mut dump);
    client.command(&dump);
    assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1236);
    assert!(client.closed_by_server());

    // A truncated dump request is malformed.
    let mut client = RawClient::login(address, "root", "");
    client.command(&dump[..6]);
    assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1835);
}

#[test]
fn processlist_kill_query_and_kill() {
    let server = start_server(|_| {});
    let address = server.local_address();
    let mut sleeper = RawClient::login(address, "root", "");
    let sleeper_id = sleeper.connection_id;
    let mut admin = RawClient::login(address, "alice", "secret");

    let sleeping = thread::spawn(move || {
        let error = sleeper.query("SELECT SLEEP(20)").unwrap_err();
        (sleeper, error)
    });
    wait_until("the sleeper shows in SHOW PROCESSLIST", || {
        admin.query("SHOW PROCESSLIST").unwrap().text_rows().iter().any(|row| {
            row[0].as_deref() == Some(&*sleeper_id.to_string())
                && row[4].as_deref() == Some("Query")
                && row[7].as_deref() == Some("SELECT SLEEP(20)")
        })
    });
    let list = admin.query("SHOW PROCESSLIST").unwrap().text_rows();
    let me = list.iter().find(|row| row[1].as_deref() == Some("alice")).unwrap();
    assert!(me[2].as_deref().unwrap().starts_with("localhost:"));

    let started = Instant::now();
    admin.query(&format!("KILL QUERY {sleeper_id}")).unwrap();
    let (mut sleeper, error) = sleeping.join().unwrap();
    assert_eq!((error.code, error.state.as_str()), (1317, "70100"));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(rows(sleeper.query("SELECT 1")), one("1"), "KILL QUERY leaves the connection");

    admin.query(&format!("KILL {sleeper_id}")).unwrap();
    assert!(sleeper.closed_by_server());
    assert_eq!(admin.query("KILL 99999").unwrap_err().code, 1094);

    // COM_PROCESS_KILL, the old command.
    let mut victim = RawClient::login(address, "root", "");
    let mut kill = vec![0x0C];
    kill.extend_from_slice(&victim.connection_id.to_le_bytes());
    admin.command(&kill);
    assert_eq!(admin.read_packet()[0], 0x00);
    assert!(victim.closed_by_server());
    wait_until("killed connections leave", || server.registry().len() == 1);
}

#[test]
fn too_many_connections_get_1040() {
    let server = start_server(|config| config.max_connections = 2);
    let address = server.local_address();
    let login = |user: &str, password: &str| {
        RawClient::login_with(address, user, password, AuthPlugin::MysqlNativePassword, default_capabilities(), None).0
    };
    let first = RawClient::login(address, "root", "");
    let _second = RawClient::login(address, "alice", "secret");
    // At max_connections: an account without CONNECTION_ADMIN or SUPER is
    // refused once it has authenticated, an administrator takes the one
    // connection reserved beyond.
    let refused = login("alice", "secret").err().expect("no slot for alice");
    assert_eq!((refused.code, refused.state.as_str(), refused.message.as_str()), (1040, "08004", "Too many connections"));
    let mut reserved = login("root", "").expect("root takes the reserved connection");
    assert_eq!(rows(reserved.query("SELECT 1")), one("1"));
    // With that one taken too, a connection is refused before the handshake.
    let mut fourth = RawClient::connect(address);
    let error = parse_err(&fourth.read_packet(), CapabilityFlags::empty());
    assert_eq!((error.code, error.message.as_str()), (1040, "Too many connections"));
    drop(first);
    drop(reserved);
    wait_until("a slot frees up", || server.registry().len() < 2);
    let mut again = login("alice", "secret").expect("a free slot");
    assert_eq!(rows(again.query("SELECT 1")), one("1"));
}

/// A login has `connect_timeout` from accept, however slowly its bytes
/// come, and logins are not counted in `max_connections`: root gets in
/// while slow clients hold more sockets than `max_connections` and
/// `logins_max`; the oldest of those is evicted for it at once, the
/// others are closed at their deadline.
#[test]
fn slow_logins_neither_outlast_connect_timeout_nor_lock_anyone_out() {
    let server = start_server(|config| {
        config.max_connections = 2;
        config.logins_max = 8;
        config.connection.connect_timeout = Duration::from_millis(1500);
    });
    let address = server.local_address();
    let started = Instant::now();
    let mut slow: Vec<std::net::TcpStream> = (0..10)
        .map(|_| {
            let socket = std::net::TcpStream::connect(address).unwrap();
            socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            socket
        })
        .collect();
    let mut closed_at: Vec<Option<Duration>> = vec![None; slow.len()];
    let mut root = None;
    while closed_at.iter().any(Option::is_none) && started.elapsed() < Duration::from_secs(6) {
        for (socket, closed) in slow.iter_mut().zip(closed_at.iter_mut()).filter(|(_, closed)| closed.is_none()) {
            let mut buffer = [0u8; 256];
            match socket.read(&mut buffer) {
                Ok(0) => *closed = Some(started.elapsed()),
                Err(error) if !matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    *closed = Some(started.elapsed())
                }
                _ => {
                    // One byte of a handshake response: a read timeout
                    // alone would start over with each.
                    let _ = std::io::Write::write(socket, &[0x01]);
                }
            }
        }
        if root.is_none() && started.elapsed() > Duration::from_millis(300) {
            let mut client = RawClient::login(address, "root", "");
            assert_eq!(rows(client.query("SELECT 1")), one("1"));
            root = Some(started.elapsed());
        }
    }
    assert!(root.expect("root logged in") < Duration::from_millis(1200), "root waited for the slow logins");
    let evicted = closed_at.iter().filter(|closed| closed.is_some_and(|at| at < Duration::from_millis(1300))).count();
    assert_eq!(evicted, 3, "10 slow logins and root with logins_max 8: the three oldest go early; {closed_at:?}");
    for closed in &closed_at {
        let closed = closed.expect("every slow login is closed");
        assert!(closed < Duration::from_millis(3000), "{closed_at:?}");
    }
    assert!(closed_at.iter().flatten().filter(|at| **at >= Duration::from_millis(1400)).count() >= 7, "{closed_at:?}");
}

#[test]
fn ping_init_db_statistics_field_list_reset_and_quit() {
    let server = start_server(|_| {});
    let mut client = RawClient::login(server.local_address(), "root", "");
    client.command(&[0x0E]);
    assert_eq!(client.read_packet()[0], 0x00, "COM_PING");

    client.command(b"\x02db1");
    assert_eq!(client.read_packet()[0], 0x00, "COM_INIT_DB");
    assert_eq!(rows(client.query("SELECT DATABASE()")), one("db1"));
    client.command(b"\x02nosuchdb");
    assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1049);
    assert_eq!(rows(client.query("SELECT DATABASE()")), one("db1"));

    client.command(&[0x09]);
    let statistics = String::from_utf8(client.read_packet()).unwrap();
    assert!(statistics.starts_with("Uptime: ") && statistics.contains("Threads: 1"), "{statistics}");

    client.command(b"\x04t1\x00");
    let columns = client.read_field_list();
    assert_eq!(columns, vec!["id".to_string(), "name".to_string()]);
    client.command(b"\x04t1\x00na%");
    assert_eq!(client.read_field_list(), vec!["name".to_string()]);
    client.command(b"\x04nosuch\x00");
    assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1146);
    // A wildcard that is not utf8mb4 is answered as a bad table name is.
    client.command(b"\x04t1\x00na\xe9%");
    let error = parse_err(&client.read_packet(), client.capabilities);
    assert_eq!((error.code, error.message.as_str()), (1300, "Invalid utf8mb4 character string: 'E925'"));
    client.command(b"\x04t\xe9\x00");
    assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1300);
    assert_eq!(rows(client.query("SELECT DATABASE()")), one("db1"), "the connection goes on");

    let (id, _, _) = client.prepare("SELECT ?").unwrap();
    client.command(&[0x1F]);
    assert_eq!(client.read_packet()[0], 0x00, "COM_RESET_CONNECTION");
    assert_eq!(client.execute(id, &[MValue::Int(1)]).unwrap_err().code, 1243, "reset closes statements");

    let mut fetch = vec![0x1C];
    fetch.extend_from_slice(&id.to_le_bytes());
    fetch.extend_from_slice(&1u32.to_le_bytes());
    client.command(&fetch);
    assert_eq!(parse_err(&client.read_packet(), client.capabilities).code, 1421);

    client.command(&[0x01]);
    assert!(client.closed_by_server(), "COM_QUIT");
}

#[test]
fn shutdown_is_prompt_and_closes_clients() {
    let server = start_server(|config| config.shutdown_grace = Duration::from_secs(5));
    let address = server.local_address();
    let mut idle = RawClient::login(address, "root", "");
    let mut busy = RawClient::login(address, "root", "");
    let busy_thread = thread::spawn(move || {
        let result = busy.query("SELECT SLEEP(30)");
        (busy, result)
    });
    wait_until("the busy query runs", || server.registry().processes().iter().any(|p| p.command == "Query"));
    let started = Instant::now();
    server.shutdown();
    assert!(started.elapsed() < Duration::from_secs(4), "killed statements end within the grace period");
    assert!(idle.closed_by_server());
    let (_, result) = busy_thread.join().unwrap();
    assert_eq!(result.unwrap_err().code, 1317);
    let mut buffer = [0u8; 1];
    assert!(std::net::TcpStream::connect(address).map(|mut s| s.read(&mut buffer).unwrap_or(0) == 0).unwrap_or(true));
}

/// COM_CHANGE_USER: the new account authenticates with its own plugin (a
/// client answering for mysql_native_password is switched to
/// caching_sha2_password and completes it with the RSA key), the session
/// goes on as that account in the new schema with its prepared statements
/// closed; a refused change is 1045 and ends the connection.
#[test]
fn change_user_logs_in_again_and_resets_the_session() {
    let (private_pem, _) = protocol::caching_sha2::generate_rsa_key_pem(1024).unwrap();
    let keys = std::sync::Arc::new(protocol::RsaKeys::from_private_pem(&private_pem).unwrap());
    let server = start_server(|config| config.connection.rsa = Some(keys));
    let mut client = RawClient::login(server.local_address(), "alice", "secret");
    assert_eq!(rows(client.query("SELECT CURRENT_USER()")), one("alice@%"));
    let (id, _, _) = client.prepare("SELECT ?").unwrap();

    let change_user = |user: &str, database: &str| {
        let mut packet = vec![0x11];
        packet.extend_from_slice(user.as_bytes());
        packet.push(0);
        packet.push(20);
        packet.extend_from_slice(&[0x5A; 20]);
        packet.extend_from_slice(database.as_bytes());
        packet.push(0);
        packet.extend_from_slice(&45u16.to_le_bytes());
        packet.extend_from_slice(b"mysql_native_password\0");
        packet
    };
    client.command(&change_user("carol", "db1"));
    let (result, switch, statuses) = client.finish_authentication(Vec::new(), "sha2-pw");
    result.expect("changed to carol");
    assert_eq!(switch.expect("switched").auth_plugin(), AuthPlugin::CachingSha2Password);
    assert_eq!(statuses, vec![0x04]);
    assert_eq!(rows(client.query("SELECT CURRENT_USER()")), one("carol@%"));
    assert_eq!(rows(client.query("SELECT DATABASE()")), one("db1"));
    assert_eq!(client.execute(id, &[MValue::Int(1)]).unwrap_err().code, 1243, "statements closed");

    client.command(&change_user("alice", ""));
    let (result, _, _) = client.finish_authentication(Vec::new(), "wrong");
    assert_eq!(result.unwrap_err().code, 1045);
    assert!(client.closed_by_server(), "a refused change ends the connection");
}
