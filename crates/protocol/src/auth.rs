//! Accounts, their credentials by plugin, and `mysql_native_password`
//! (`caching_sha2_password` is in [`crate::caching_sha2`]).
//!
//! The server stores SHA1(SHA1(password)) (MySQL shows it as `*` and 40
//! upper-case hex digits). The client answers a 20-byte scramble with
//! SHA1(password) XOR SHA1(scramble ++ SHA1(SHA1(password))); the server
//! recovers SHA1(password) from that and checks that its SHA1 is the stored
//! hash, so neither the password nor the stored hash ever crosses the wire.

use rand::Rng;
use sha1::{Digest, Sha1};

use crate::caching_sha2::{Sha2Hash, CACHING_SHA2_PLUGIN};
use crate::tls::TlsInfo;

/// Length of the handshake scramble (auth plugin data), in bytes.
pub const SCRAMBLE_BYTES: usize = 20;

/// The older plugin's name on the wire and in `IDENTIFIED WITH`.
pub const NATIVE_PASSWORD_PLUGIN: &str = "mysql_native_password";

/// The authentication plugins binlogd speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthPlugin {
    /// `mysql_native_password`: SHA-1 scrambles, for old clients.
    Native,
    /// `caching_sha2_password`: MySQL 8.4's default.
    CachingSha2,
}

impl AuthPlugin {
    /// What CREATE USER takes without `IDENTIFIED WITH`, as in MySQL 8.4.
    pub const DEFAULT: AuthPlugin = AuthPlugin::CachingSha2;

    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::Native => NATIVE_PASSWORD_PLUGIN,
            AuthPlugin::CachingSha2 => CACHING_SHA2_PLUGIN,
        }
    }

    /// By name, in any case.
    pub fn from_name(name: &str) -> Option<AuthPlugin> {
        [AuthPlugin::Native, AuthPlugin::CachingSha2].into_iter().find(|plugin| plugin.name().eq_ignore_ascii_case(name))
    }
}

/// An account's password as its plugin stores it; `None` inside is an
/// empty password (only an empty answer logs in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// SHA1(SHA1(password)).
    Native(Option<[u8; 20]>),
    /// `$A$005$` salt and SHA-256 crypt.
    CachingSha2(Option<Sha2Hash>),
}

impl Credential {
    /// `password` stored for `plugin` (empty: no password).
    pub fn new(plugin: AuthPlugin, password: &str) -> Credential {
        let password = (!password.is_empty()).then_some(password.as_bytes());
        match plugin {
            AuthPlugin::Native => Credential::Native(password.map(native_password_hash)),
            AuthPlugin::CachingSha2 => Credential::CachingSha2(password.map(Sha2Hash::new)),
        }
    }

    /// A stored hash in the form `IDENTIFIED WITH plugin AS '...'` and
    /// users.json show (`*HEX` or `$A$005$...`); empty for no password.
    pub fn from_stored(plugin: AuthPlugin, text: &str) -> Option<Credential> {
        if text.is_empty() {
            return Some(Credential::new(plugin, ""));
        }
        match plugin {
            AuthPlugin::Native => parse_native_password_hash_hex(text).map(|hash| Credential::Native(Some(hash))),
            AuthPlugin::CachingSha2 => Sha2Hash::parse(text).map(|hash| Credential::CachingSha2(Some(hash))),
        }
    }

    pub fn plugin(&self) -> AuthPlugin {
        match self {
            Credential::Native(_) => AuthPlugin::Native,
            Credential::CachingSha2(_) => AuthPlugin::CachingSha2,
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Credential::Native(None) | Credential::CachingSha2(None))
    }

    /// The stored form (see [`Credential::from_stored`]); `None` for no password.
    pub fn stored_text(&self) -> Option<String> {
        match self {
            Credential::Native(hash) => hash.as_ref().map(native_password_hash_hex),
            Credential::CachingSha2(hash) => hash.as_ref().map(|hash| hash.as_str().to_string()),
        }
    }
}

/// An account as the caller's user table stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAccount {
    /// The account's user name, as matched.
    pub user: String,
    /// The account's host pattern, as matched (`localhost`, `%`, ...): what
    /// `CURRENT_USER()` shows.
    pub host: String,
    /// The password as the account's plugin stores it.
    pub credential: Credential,
    /// `ALTER USER ... ACCOUNT LOCK`: refused with error 3118.
    pub locked: bool,
    /// `REQUIRE SSL` / `REQUIRE X509`: refused with 1045 when unmet.
    pub ssl: SslRequirement,
    /// CONNECTION_ADMIN or SUPER: may take the connection reserved beyond
    /// `max_connections`.
    pub connection_admin: bool,
}

/// What an account requires of the connection (`CREATE USER ... REQUIRE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslRequirement {
    #[default]
    None,
    /// `REQUIRE SSL`: a TLS connection.
    Ssl,
    /// `REQUIRE X509`: a TLS connection with a client certificate that
    /// `ssl_ca` verified.
    X509,
}

impl SslRequirement {
    /// Whether a connection with `tls` (`None`: plain) meets it.
    pub fn met_by(self, tls: Option<&TlsInfo>) -> bool {
        match self {
            SslRequirement::None => true,
            SslRequirement::Ssl => tls.is_some(),
            SslRequirement::X509 => tls.is_some_and(|tls| tls.client_certificate),
        }
    }
}

impl StoredAccount {
    pub fn new(user: impl Into<String>, host: impl Into<String>, credential: Credential) -> Self {
        StoredAccount {
            user: user.into(),
            host: host.into(),
            credential,
            locked: false,
            ssl: SslRequirement::None,
            connection_admin: false,
        }
    }

    /// A `mysql_native_password` account whose password is `password`
    /// (empty means no password).
    pub fn with_password(user: impl Into<String>, host: impl Into<String>, password: &str) -> Self {
        Self::new(user, host, Credential::new(AuthPlugin::Native, password))
    }
}

/// The caller's user table. `host` is the client's host as MySQL names it:
/// `localhost` for a loopback peer, else the peer's IP address; the
/// implementation does its own pattern matching (`%`, exact names).
pub trait Authenticator: Send + Sync {
    fn lookup(&self, user: &str, host: &str) -> Option<StoredAccount>;
}

impl<F> Authenticator for F
where
    F: Fn(&str, &str) -> Option<StoredAccount> + Send + Sync,
{
    fn lookup(&self, user: &str, host: &str) -> Option<StoredAccount> {
        self(user, host)
    }
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut hasher = Sha1::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// SHA1(SHA1(password)): what the server stores for `mysql_native_password`.
pub fn native_password_hash(password: &[u8]) -> [u8; 20] {
    sha1(&[&sha1(&[password])])
}

/// The form MySQL shows and accepts in `IDENTIFIED WITH mysql_native_password
/// AS '*...'`: `*` and 40 upper-case hex digits.
pub fn native_password_hash_hex(hash: &[u8; 20]) -> String {
    let mut text = String::with_capacity(41);
    text.push('*');
    for byte in hash {
        text.push_str(&format!("{byte:02X}"));
    }
    text
}

/// Parses the `*HEX` form (either case); `None` when it is not one.
pub fn parse_native_password_hash_hex(text: &str) -> Option<[u8; 20]> {
    let hex = text.strip_prefix('*')?;
    if hex.len() != 40 || !hex.is_ascii() {
        return None;
    }
    let mut hash = [0u8; 20];
    for (index, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * index..2 * index + 2], 16).ok()?;
    }
    Some(hash)
}

/// The client's side of the exchange: what a client with `password` answers
/// to `scramble` (empty for an empty password, as clients send).
pub fn native_password_response(scramble: &[u8], password: &[u8]) -> Vec<u8> {
    mysql_common::auth::plugins::mysql_native_password::scramble_native(scramble, password).map(|r| r.to_vec()).unwrap_or_default()
}

/// Checks a client's `mysql_native_password` response against the stored
/// account. An empty password accepts only an empty response.
pub fn verify_native_password(scramble: &[u8; SCRAMBLE_BYTES], response: &[u8], stored: Option<&[u8; 20]>) -> bool {
    let Some(stored) = stored else {
        return response.is_empty();
    };
    let Ok(response) = <&[u8; 20]>::try_from(response) else {
        return false;
    };
    let mask = sha1(&[scramble, stored]);
    let mut candidate = [0u8; 20];
    for index in 0..20 {
        candidate[index] = response[index] ^ mask[index];
    }
    // Compare without an early exit so the time taken says nothing about
    // how many bytes matched.
    let hash = sha1(&[&candidate]);
    hash.iter().zip(stored).fold(0u8, |difference, (a, b)| difference | (a ^ b)) == 0
}

/// A fresh scramble: 7-bit, never NUL (the handshake sends part of it as a
/// NUL-terminated string), like MySQL's.
pub fn generate_scramble() -> [u8; SCRAMBLE_BYTES] {
    let mut rng = rand::thread_rng();
    let mut scramble = [0u8; SCRAMBLE_BYTES];
    for byte in &mut scramble {
        *byte = rng.gen_range(1..=127u8);
    }
    scramble
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_mysql_password_function() {
        // SELECT PASSWORD('secret') on MySQL 5.7 / MariaDB.
        let hash = native_password_hash(b"secret");
        assert_eq!(native_password_hash_hex(&hash), "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7");
        assert_eq!(parse_native_password_hash_hex(&native_password_hash_hex(&hash)), Some(hash));
        assert_eq!(parse_native_password_hash_hex("*14e65567abdb5135d0cfd9a70b3032c179a49ee7"), Some(hash));
        assert_eq!(parse_native_password_hash_hex("14E65567"), None);
    }

    #[test]
    fn verifies_the_clients_scramble() {
        let scramble = generate_scramble();
        assert!(scramble.iter().all(|&b| b != 0 && b < 128));
        let stored = native_password_hash(b"pw");
        let response = native_password_response(&scramble, b"pw");
        assert!(verify_native_password(&scramble, &response, Some(&stored)));
        let wrong = native_password_response(&scramble, b"px");
        assert!(!verify_native_password(&scramble, &wrong, Some(&stored)));
        assert!(!verify_native_password(&scramble, &[], Some(&stored)));
        assert!(verify_native_password(&scramble, &[], None));
        assert!(!verify_native_password(&scramble, &response, None));
    }
}
