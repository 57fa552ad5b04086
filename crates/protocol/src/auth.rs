//! Accounts and `mysql_native_password`.
//!
//! The server stores SHA1(SHA1(password)) (MySQL shows it as `*` and 40
//! upper-case hex digits). The client answers a 20-byte scramble with
//! SHA1(password) XOR SHA1(scramble ++ SHA1(SHA1(password))); the server
//! recovers SHA1(password) from that and checks that its SHA1 is the stored
//! hash, so neither the password nor the stored hash ever crosses the wire.

use rand::Rng;
use sha1::{Digest, Sha1};

/// Length of the handshake scramble (auth plugin data), in bytes.
pub const SCRAMBLE_BYTES: usize = 20;

/// Name of the one authentication method the server speaks.
pub const NATIVE_PASSWORD_PLUGIN: &str = "mysql_native_password";

/// An account as the caller's user table stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAccount {
    /// The account's user name, as matched.
    pub user: String,
    /// The account's host pattern, as matched (`localhost`, `%`, ...): what
    /// `CURRENT_USER()` shows.
    pub host: String,
    /// SHA1(SHA1(password)); `None` for an empty password.
    pub password_hash: Option<[u8; 20]>,
    /// `ALTER USER ... ACCOUNT LOCK`: refused with error 3118.
    pub locked: bool,
}

impl StoredAccount {
    pub fn new(user: impl Into<String>, host: impl Into<String>, password_hash: Option<[u8; 20]>) -> Self {
        StoredAccount { user: user.into(), host: host.into(), password_hash, locked: false }
    }

    /// An account whose password is `password` (empty means no password).
    pub fn with_password(user: impl Into<String>, host: impl Into<String>, password: &str) -> Self {
        let hash = (!password.is_empty()).then(|| native_password_hash(password.as_bytes()));
        Self::new(user, host, hash)
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
