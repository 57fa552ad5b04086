//! The authentication exchange of the connection phase, after the client's
//! Handshake Response: the account's plugin decides the method
//! (`caching_sha2_password` or `mysql_native_password`); a client that
//! answered for another plugin is asked to switch (Auth Switch Request
//! with a fresh copy of the scramble); then the plugin's own exchange.
//!
//! An unknown user goes through the same exchange as an account of the
//! default plugin with a password, so the packets do not reveal which
//! accounts exist.

use mysql_common::constants::CapabilityFlags;
use mysql_common::packets::AuthSwitchRequest;
use mysql_common::proto::MySerialize;

use crate::auth::{verify_native_password, AuthPlugin, Authenticator, Credential, StoredAccount, SCRAMBLE_BYTES};
use crate::caching_sha2::{
    verify_scramble, RsaKeys, Sha2Cache, Sha2Hash, FAST_AUTH_SUCCESS, PERFORM_FULL_AUTHENTICATION, REQUEST_PUBLIC_KEY,
};
use crate::errors::{MysqlError, ProtocolError};
use crate::handshake::ClientHello;
use crate::packet::PacketStream;
use crate::tls::TlsInfo;

/// What the exchange needs besides the client: the accounts, the fast
/// path's cache, the RSA keys (if any), and whether the connection is TLS.
pub struct Exchange<'a> {
    pub authenticator: &'a dyn Authenticator,
    pub cache: &'a Sha2Cache,
    pub rsa: Option<&'a RsaKeys>,
    pub tls: Option<&'a TlsInfo>,
}

/// Authenticates `hello` (whose scramble was `scramble`) as an account of
/// `host`. `Ok(Err(_))` is the error to send before closing.
pub fn authenticate(
    stream: &mut PacketStream,
    hello: &ClientHello,
    host: &str,
    scramble: &[u8; SCRAMBLE_BYTES],
    exchange: &Exchange<'_>,
) -> Result<Result<StoredAccount, MysqlError>, ProtocolError> {
    let account = exchange.authenticator.lookup(&hello.user, host);
    let plugin = account.as_ref().map_or(AuthPlugin::CachingSha2, |account| account.credential.plugin());
    let mut response = hello.auth_response.clone();
    let passwordless_account = account.as_ref().is_some_and(|account| account.credential.is_empty());
    if let Some(switch_to) = switch_target(hello, &response, plugin, passwordless_account) {
        if !hello.capabilities.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) {
            return Ok(Err(MysqlError::auth_mode_not_supported()));
        }
        let mut plugin_data = scramble.to_vec();
        plugin_data.push(0);
        let mut switch = Vec::with_capacity(64);
        AuthSwitchRequest::new(switch_to.name().as_bytes(), plugin_data).serialize(&mut switch);
        stream.write_packet(&switch)?;
        stream.flush()?;
        response = stream.read_packet()?;
    }
    let denied = |used_password: bool| Ok(Err(MysqlError::access_denied(&hello.user, host, used_password)));
    let used_password = !response.is_empty();
    let verified = match account.as_ref().map(|account| &account.credential) {
        Some(Credential::Native(None) | Credential::CachingSha2(None)) => is_empty_answer(&response),
        Some(Credential::Native(stored)) => verify_native_password(scramble, &response, stored.as_ref()),
        Some(Credential::CachingSha2(Some(hash))) => {
            let account = account.as_ref().expect("matched");
            match caching_sha2(stream, &response, scramble, exchange, &account.user, &account.host, hash)? {
                Ok(verified) => verified,
                Err(error) => return Ok(Err(error)),
            }
        }
        // No such account: the full exchange of a password account.
        None if used_password => {
            let unknown = Sha2Hash::new(b"");
            let _ = caching_sha2(stream, &response, scramble, exchange, &hello.user, host, &unknown)?;
            false
        }
        None => false,
    };
    match account {
        // An unmet REQUIRE SSL / X509 is an access denied, as in MySQL.
        Some(account) if verified && !account.ssl.met_by(exchange.tls) => denied(used_password),
        Some(account) if verified && account.locked => Ok(Err(MysqlError::account_locked(&hello.user, host))),
        Some(account) if verified => Ok(Ok(account)),
        _ => denied(used_password),
    }
}

/// The plugin the client must be asked to switch to before its answer can
/// be checked, or `None` when `response` is its answer for `plugin` (the
/// account's).
///
/// A client that names another plugin than the handshake announced had no
/// scramble for it: an empty answer from it is no password but a request to
/// be spoken to first (MariaDB's own client library, which a MariaDB
/// replica uses, always starts with mysql_native_password and waits for
/// that plugin's scramble; an OK there is "Error in server handshake").
/// It is switched even for an account without a password: to its own
/// plugin when binlogd speaks it (nothing secret is exchanged, and a
/// MariaDB server has no caching_sha2_password client plugin), else to the
/// account's (libmariadb's `dummy_fallback_auth`, sent while another thread
/// loads the real plugin, keeps talking until it is switched).
///
/// An empty answer for an account with a password comes from a client
/// that could not answer: asking it again for the account's plugin costs
/// nothing, since that answer cannot succeed anyway.
fn switch_target(hello: &ClientHello, response: &[u8], plugin: AuthPlugin, passwordless_account: bool) -> Option<AuthPlugin> {
    let client_plugin = hello.auth_plugin.as_deref().unwrap_or(AuthPlugin::Native.name());
    let announced = hello.auth_plugin.as_deref() == Some(AuthPlugin::DEFAULT.name());
    let waiting_to_be_spoken_to =
        hello.capabilities.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) && !announced && is_empty_answer(response);
    if waiting_to_be_spoken_to {
        let own_plugin = AuthPlugin::from_name(client_plugin).filter(|_| passwordless_account);
        return Some(own_plugin.unwrap_or(plugin));
    }
    if passwordless_account && is_empty_answer(response) {
        return None;
    }
    let unanswered = !passwordless_account && response.is_empty();
    (client_plugin != plugin.name() || unanswered).then_some(plugin)
}

/// The answer of a client with an empty password: no bytes, or the single
/// NUL MySQL's own clients send (mysqld accepts both).
fn is_empty_answer(response: &[u8]) -> bool {
    response.is_empty() || response == [0]
}

/// caching_sha2_password after the client's scramble: the fast path when
/// the cache knows the account's password, else full authentication (the
/// password in clear over TLS, or RSA-encrypted). `Ok(Err(_))`: an error
/// other than a wrong password (no way to send it safely).
fn caching_sha2(
    stream: &mut PacketStream,
    response: &[u8],
    scramble: &[u8; SCRAMBLE_BYTES],
    exchange: &Exchange<'_>,
    user: &str,
    host: &str,
    hash: &Sha2Hash,
) -> Result<Result<bool, MysqlError>, ProtocolError> {
    if response.is_empty() {
        return Ok(Ok(false));
    }
    if let Some(cached) = exchange.cache.get(user, host, hash) {
        // A cached password decides: a wrong scramble is a wrong password.
        if !verify_scramble(scramble, response, &cached) {
            return Ok(Ok(false));
        }
        stream.write_packet(&FAST_AUTH_SUCCESS)?;
        return Ok(Ok(true));
    }
    stream.write_packet(&PERFORM_FULL_AUTHENTICATION)?;
    stream.flush()?;
    let mut answer = stream.read_packet()?;
    let password = if exchange.tls.is_some() {
        // The password in clear, NUL-terminated: TLS protects it.
        let end = answer.iter().position(|&byte| byte == 0).unwrap_or(answer.len());
        answer.truncate(end);
        answer
    } else {
        let Some(keys) = exchange.rsa else {
            // MySQL's words when neither TLS nor RSA can carry the password.
            return Ok(Err(MysqlError::new(
                2061,
                "HY000",
                format!("Authentication plugin 'caching_sha2_password' reported error: Authentication requires secure connection. (user '{user}')"),
            )));
        };
        if answer.as_slice() == [REQUEST_PUBLIC_KEY] {
            let mut packet = Vec::with_capacity(1 + keys.public_pem().len());
            packet.push(0x01);
            packet.extend_from_slice(keys.public_pem().as_bytes());
            stream.write_packet(&packet)?;
            stream.flush()?;
            answer = stream.read_packet()?;
        }
        match keys.decrypt_password(scramble, &answer) {
            Some(password) => password,
            None => return Ok(Ok(false)),
        }
    };
    let verified = hash.matches(&password);
    if verified {
        exchange.cache.insert(user, host, hash, &password);
    }
    Ok(Ok(verified))
}
