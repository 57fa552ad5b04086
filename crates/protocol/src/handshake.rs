//! Connection phase: the server's Handshake v10, the client's response, and
//! `mysql_native_password` authentication, switching a client that asks for
//! another plugin (caching_sha2_password from MySQL 8 clients,
//! client_ed25519, ...) over to mysql_native_password.
//!
//! Sequence ids: handshake 0, response 1, [switch request 2, switch
//! response 3], then the OK or ERR that ends the phase.

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthSwitchRequest, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;

use crate::auth::{verify_native_password, Authenticator, StoredAccount, NATIVE_PASSWORD_PLUGIN, SCRAMBLE_BYTES};
use crate::errors::{MysqlError, ProtocolError};
use crate::packet::PacketStream;
use crate::resultset::UTF8MB4_GENERAL_CI;

/// Protocol version of Handshake v10.
const PROTOCOL_VERSION: u8 = 10;

/// What the server offers. Not offered: CLIENT_SSL, CLIENT_COMPRESS,
/// CLIENT_LOCAL_FILES (LOAD DATA LOCAL lets a server read client files),
/// CLIENT_SESSION_TRACK and CLIENT_QUERY_ATTRIBUTES (no session tracking
/// or query attributes to carry).
pub fn server_capabilities() -> CapabilityFlags {
    CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_FOUND_ROWS
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_CONNECT_WITH_DB
        | CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_INTERACTIVE
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_MULTI_STATEMENTS
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_CONNECT_ATTRS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_DEPRECATE_EOF
}

/// The initial handshake packet. The scramble goes out as 8 bytes, then 12
/// bytes and a NUL (auth-plugin-data length 21), as MySQL sends it.
pub fn encode_initial_handshake(server_version: &str, connection_id: u32, scramble: &[u8; SCRAMBLE_BYTES]) -> Vec<u8> {
    let mut scramble_1 = [0u8; 8];
    scramble_1.copy_from_slice(&scramble[..8]);
    let mut scramble_2 = scramble[8..].to_vec();
    scramble_2.push(0);
    let packet = HandshakePacket::new(
        PROTOCOL_VERSION,
        server_version.as_bytes(),
        connection_id,
        scramble_1,
        Some(scramble_2),
        server_capabilities(),
        UTF8MB4_GENERAL_CI as u8,
        StatusFlags::SERVER_STATUS_AUTOCOMMIT,
        Some(NATIVE_PASSWORD_PLUGIN.as_bytes()),
    );
    let mut out = Vec::with_capacity(80 + server_version.len());
    packet.serialize(&mut out);
    out
}

/// The parts of the client's Handshake Response the server uses.
#[derive(Debug, Clone)]
pub struct ClientHello {
    /// The client's flags limited to what the server offered.
    pub capabilities: CapabilityFlags,
    pub collation: u8,
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    /// The auth plugin the client used for `auth_response`.
    pub auth_plugin: Option<String>,
    pub attributes: Vec<(String, String)>,
}

/// Length of an SSL Request (the first 32 bytes of a Handshake Response).
const SSL_REQUEST_BYTES: usize = 32;

/// Parses a Handshake Response 4.1. Older (pre-4.1) clients get 1251;
/// clients that insist on TLS, which the server does not offer, get 1043.
pub fn parse_handshake_response(packet: &[u8]) -> Result<Result<ClientHello, MysqlError>, ProtocolError> {
    let client_flags = match packet.get(..4) {
        Some(bytes) => CapabilityFlags::from_bits_truncate(u32::from_le_bytes(bytes.try_into().expect("4 bytes"))),
        None => return Err(ProtocolError::malformed("handshake response", "shorter than its flags")),
    };
    if !client_flags.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        return Ok(Err(MysqlError::auth_mode_not_supported()));
    }
    if client_flags.contains(CapabilityFlags::CLIENT_SSL) && packet.len() == SSL_REQUEST_BYTES {
        return Ok(Err(MysqlError::bad_handshake()));
    }
    let response: HandshakeResponse<'_> =
        ParseBuf(packet).parse(()).map_err(|error| ProtocolError::malformed("handshake response", error.to_string()))?;
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let mut attributes: Vec<(String, String)> = response.connect_attributes().unwrap_or_default().into_iter().collect();
    attributes.sort();
    Ok(Ok(ClientHello {
        capabilities: response.capabilities() & server_capabilities(),
        collation: response.collation(),
        user: text(response.user()),
        auth_response: response.scramble_buf().to_vec(),
        database: response.db_name().filter(|name| !name.is_empty()).map(text),
        auth_plugin: response.auth_plugin().map(|plugin| text(plugin.as_bytes())).filter(|name| !name.is_empty()),
        attributes,
    }))
}

/// Authenticates `hello` against `authenticator`, asking the client to
/// switch to mysql_native_password first when it answered for another
/// plugin. The switch happens even for unknown users, so the exchange does
/// not reveal which accounts exist.
pub fn authenticate(
    stream: &mut PacketStream,
    hello: &ClientHello,
    host: &str,
    scramble: &[u8; SCRAMBLE_BYTES],
    authenticator: &dyn Authenticator,
) -> Result<Result<StoredAccount, MysqlError>, ProtocolError> {
    let plugin = hello.auth_plugin.as_deref().unwrap_or(NATIVE_PASSWORD_PLUGIN);
    let mut response = hello.auth_response.clone();
    if plugin != NATIVE_PASSWORD_PLUGIN {
        if !hello.capabilities.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) {
            return Ok(Err(MysqlError::auth_mode_not_supported()));
        }
        let mut plugin_data = scramble.to_vec();
        plugin_data.push(0);
        let mut switch = Vec::with_capacity(64);
        AuthSwitchRequest::new(NATIVE_PASSWORD_PLUGIN.as_bytes(), plugin_data).serialize(&mut switch);
        stream.write_packet(&switch)?;
        stream.flush()?;
        response = stream.read_packet()?;
    }
    let account = authenticator.lookup(&hello.user, host);
    let verified = account.as_ref().is_some_and(|account| verify_native_password(scramble, &response, account.password_hash.as_ref()));
    match account {
        Some(account) if verified && account.locked => Ok(Err(MysqlError::account_locked(&hello.user, host))),
        Some(account) if verified => Ok(Ok(account)),
        _ => Ok(Err(MysqlError::access_denied(&hello.user, host, !response.is_empty()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_handshake_decodes_with_mysql_common() {
        let scramble = *b"abcdefghijklmnopqrst";
        let bytes = encode_initial_handshake("8.4.0-binlogd", 77, &scramble);
        let packet: HandshakePacket<'_> = ParseBuf(&bytes).parse(()).unwrap();
        assert_eq!(packet.protocol_version(), 10);
        assert_eq!(packet.server_version_str(), "8.4.0-binlogd");
        assert_eq!(packet.connection_id(), 77);
        assert_eq!(packet.nonce(), scramble.to_vec());
        assert_eq!(packet.capabilities(), server_capabilities());
        assert_eq!(packet.default_collation(), 45);
        assert_eq!(packet.auth_plugin_name_str().unwrap(), "mysql_native_password");
        assert!(!packet.capabilities().contains(CapabilityFlags::CLIENT_SSL));
        assert!(!packet.capabilities().contains(CapabilityFlags::CLIENT_LOCAL_FILES));
    }

    #[test]
    fn handshake_response_parses() {
        let mut attributes = std::collections::HashMap::new();
        attributes.insert("_client_name".to_string(), "test".to_string());
        let response = HandshakeResponse::new(
            Some(&[1u8; 20][..]),
            (8, 4, 0),
            Some(&b"root"[..]),
            Some(&b"db1"[..]),
            Some(mysql_common::packets::AuthPlugin::CachingSha2Password),
            CapabilityFlags::CLIENT_PROTOCOL_41
                | CapabilityFlags::CLIENT_SECURE_CONNECTION
                | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
                | CapabilityFlags::CLIENT_SSL
                | CapabilityFlags::CLIENT_DEPRECATE_EOF,
            Some(attributes),
            1 << 24,
        );
        let mut bytes = Vec::new();
        response.serialize(&mut bytes);
        let hello = parse_handshake_response(&bytes).unwrap().unwrap();
        assert_eq!(hello.user, "root");
        assert_eq!(hello.database.as_deref(), Some("db1"));
        assert_eq!(hello.auth_plugin.as_deref(), Some("caching_sha2_password"));
        assert_eq!(hello.auth_response, vec![1u8; 20]);
        assert_eq!(hello.attributes, vec![("_client_name".to_string(), "test".to_string())]);
        assert!(!hello.capabilities.contains(CapabilityFlags::CLIENT_SSL), "limited to the server's offer");
        assert!(hello.capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF));

        assert_eq!(parse_handshake_response(&bytes[..32]).unwrap().unwrap_err().code, 1043);
        assert!(parse_handshake_response(&bytes[..40]).is_err());
        assert_eq!(parse_handshake_response(&[0, 0, 0, 0, 0]).unwrap().unwrap_err().code, 1251);
    }
}
