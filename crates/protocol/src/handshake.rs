//! Connection phase packets: the server's Handshake v10 (announcing
//! caching_sha2_password, MySQL 8.4's default plugin), the client's SSL
//! Request and Handshake Response. The exchange that follows is in
//! [`crate::authentication`].
//!
//! Sequence ids: handshake 0, [SSL Request 1, then TLS], response, [switch
//! request, switch response], [the plugin's own packets], then the OK or
//! ERR that ends the phase.

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;

use crate::auth::{AuthPlugin, SCRAMBLE_BYTES};
use crate::errors::{MysqlError, ProtocolError};
use crate::resultset::UTF8MB4_GENERAL_CI;

/// Protocol version of Handshake v10.
const PROTOCOL_VERSION: u8 = 10;

/// What the server offers, CLIENT_SSL when it has a certificate (see
/// [`server_capabilities_offering`]). Not offered: CLIENT_COMPRESS,
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

/// [`server_capabilities`], with CLIENT_SSL when `tls` is offered.
pub fn server_capabilities_offering(tls: bool) -> CapabilityFlags {
    let mut capabilities = server_capabilities();
    capabilities.set(CapabilityFlags::CLIENT_SSL, tls);
    capabilities
}

/// The initial handshake packet of a server without TLS.
pub fn encode_initial_handshake(server_version: &str, connection_id: u32, scramble: &[u8; SCRAMBLE_BYTES]) -> Vec<u8> {
    encode_initial_handshake_offering(server_version, connection_id, scramble, false)
}

/// The initial handshake packet, offering TLS when `tls`. The scramble
/// goes out as 8 bytes, then 12 bytes and a NUL (auth-plugin-data length
/// 21), as MySQL sends it.
pub fn encode_initial_handshake_offering(server_version: &str, connection_id: u32, scramble: &[u8; SCRAMBLE_BYTES], tls: bool) -> Vec<u8> {
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
        server_capabilities_offering(tls),
        UTF8MB4_GENERAL_CI as u8,
        StatusFlags::SERVER_STATUS_AUTOCOMMIT,
        Some(AuthPlugin::DEFAULT.name().as_bytes()),
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

/// True for an SSL Request: CLIENT_SSL and nothing after the first 32
/// bytes of a Handshake Response.
pub fn is_ssl_request(packet: &[u8]) -> bool {
    packet.len() == SSL_REQUEST_BYTES
        && packet
            .get(..4)
            .is_some_and(|bytes| u32::from_le_bytes(bytes.try_into().expect("4 bytes")) & CapabilityFlags::CLIENT_SSL.bits() != 0)
}

/// Parses a Handshake Response 4.1; `tls` says whether the server offered
/// TLS (the response's flags are limited to the offer). Older (pre-4.1)
/// clients get 1251; an SSL Request where it cannot be honoured gets 1043.
pub fn parse_handshake_response(packet: &[u8], tls: bool) -> Result<Result<ClientHello, MysqlError>, ProtocolError> {
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
        capabilities: response.capabilities() & server_capabilities_offering(tls),
        collation: response.collation(),
        user: text(response.user()),
        auth_response: response.scramble_buf().to_vec(),
        database: response.db_name().filter(|name| !name.is_empty()).map(text),
        auth_plugin: response.auth_plugin().map(|plugin| text(plugin.as_bytes())).filter(|name| !name.is_empty()),
        attributes,
    }))
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
        assert_eq!(packet.auth_plugin_name_str().unwrap(), "caching_sha2_password");
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
        let hello = parse_handshake_response(&bytes, false).unwrap().unwrap();
        assert_eq!(hello.user, "root");
        assert_eq!(hello.database.as_deref(), Some("db1"));
        assert_eq!(hello.auth_plugin.as_deref(), Some("caching_sha2_password"));
        assert_eq!(hello.auth_response, vec![1u8; 20]);
        assert_eq!(hello.attributes, vec![("_client_name".to_string(), "test".to_string())]);
        assert!(!hello.capabilities.contains(CapabilityFlags::CLIENT_SSL), "limited to the server's offer");
        assert!(hello.capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF));

        assert_eq!(parse_handshake_response(&bytes[..32], false).unwrap().unwrap_err().code, 1043);
        assert!(parse_handshake_response(&bytes[..40], false).is_err());
        assert_eq!(parse_handshake_response(&[0, 0, 0, 0, 0], false).unwrap().unwrap_err().code, 1251);
    }
}
