//! `caching_sha2_password`, MySQL 8.4's default authentication plugin.
//!
//! Stored form, as MySQL stores it: `$A$005$`, a 20-character salt, then
//! 43 characters of SHA-256 crypt (Drepper's algorithm, 5 × 1000 rounds)
//! of the password with that salt, in crypt's base-64.
//!
//! The exchange after the client's first answer (a 32-byte scramble,
//! SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) ++ nonce)):
//! - fast path: the server's cache holds SHA256(SHA256(pw)) from an
//!   earlier full authentication; it checks the scramble against it and
//!   sends `0x01 0x03`, then OK;
//! - full authentication: the server sends `0x01 0x04`; over TLS the client
//!   sends its password in clear (NUL-terminated); without TLS it asks for
//!   the server's RSA public key (`0x02`, answered with `0x01` and the PEM)
//!   unless it has it, and sends (password ++ NUL) XOR nonce encrypted with
//!   RSA-OAEP (SHA-1). The server checks the password against the stored
//!   hash and caches SHA256(SHA256(pw)) for the fast path.

use std::collections::HashMap;

use parking_lot::Mutex;
use rand::Rng;
use rsa::pkcs8::{DecodePrivateKey, EncodePublicKey};
use rsa::{Oaep, RsaPrivateKey};
use sha2::{Digest, Sha256};

/// The plugin's name on the wire and in `IDENTIFIED WITH`.
pub const CACHING_SHA2_PLUGIN: &str = "caching_sha2_password";

/// `0x01` (more data) then `0x03`: the scramble matched the cache.
pub const FAST_AUTH_SUCCESS: [u8; 2] = [0x01, 0x03];
/// `0x01` then `0x04`: the client must send its password (TLS or RSA).
pub const PERFORM_FULL_AUTHENTICATION: [u8; 2] = [0x01, 0x04];
/// The client's request for the server's RSA public key.
pub const REQUEST_PUBLIC_KEY: u8 = 0x02;

const PREFIX: &str = "$A$005$";
const SALT_BYTES: usize = 20;
const DIGEST_CHARS: usize = 43;
/// `005`: thousands of rounds.
const ROUNDS: u32 = 5_000;
/// Entries the fast-path cache holds; a full cache is emptied (the next
/// login of each account takes the full path once), so it stays bounded.
const CACHE_ENTRIES_MAX: usize = 10_000;

const CRYPT_ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A stored `caching_sha2_password` hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sha2Hash {
    /// The whole `$A$005$...` text (70 characters).
    text: String,
}

impl Sha2Hash {
    /// The hash of `password` under a fresh salt.
    pub fn new(password: &[u8]) -> Sha2Hash {
        let mut rng = rand::thread_rng();
        let salt: Vec<u8> = (0..SALT_BYTES).map(|_| CRYPT_ALPHABET[rng.gen_range(0..64)]).collect();
        Sha2Hash::with_salt(password, &salt)
    }

    fn with_salt(password: &[u8], salt: &[u8]) -> Sha2Hash {
        let digest = sha256_crypt(password, salt, ROUNDS);
        let mut text = String::with_capacity(PREFIX.len() + SALT_BYTES + DIGEST_CHARS);
        text.push_str(PREFIX);
        text.push_str(std::str::from_utf8(salt).expect("salt from the crypt alphabet"));
        text.push_str(&crypt_base64(&digest));
        Sha2Hash { text }
    }

    /// Parses the stored form; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Sha2Hash> {
        let rest = text.strip_prefix(PREFIX)?;
        if rest.len() != SALT_BYTES + DIGEST_CHARS || !rest.is_ascii() || rest[SALT_BYTES..].bytes().any(|b| !CRYPT_ALPHABET.contains(&b)) {
            return None;
        }
        Some(Sha2Hash { text: text.to_string() })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `password` is the one this hash was made from.
    pub fn matches(&self, password: &[u8]) -> bool {
        let salt = &self.text.as_bytes()[PREFIX.len()..PREFIX.len() + SALT_BYTES];
        let candidate = Sha2Hash::with_salt(password, salt);
        constant_time_equal(candidate.text.as_bytes(), self.text.as_bytes())
    }
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

fn constant_time_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |difference, (x, y)| difference | (x ^ y)) == 0
}

/// SHA-256 crypt (Ulrich Drepper's specification, glibc's `$5$`), with
/// the salt at any length (MySQL's is 20 bytes).
fn sha256_crypt(password: &[u8], salt: &[u8], rounds: u32) -> [u8; 32] {
    let alternate = sha256(&[password, salt, password]);
    let mut hasher = Sha256::new();
    hasher.update(password);
    hasher.update(salt);
    let mut remaining = password.len();
    while remaining > 32 {
        hasher.update(alternate);
        remaining -= 32;
    }
    hasher.update(&alternate[..remaining]);
    let mut length = password.len();
    while length > 0 {
        if length & 1 == 1 {
            hasher.update(alternate);
        } else {
            hasher.update(password);
        }
        length >>= 1;
    }
    let mut current: [u8; 32] = hasher.finalize().into();

    let mut hasher = Sha256::new();
    for _ in 0..password.len() {
        hasher.update(password);
    }
    let password_digest: [u8; 32] = hasher.finalize().into();
    let p_bytes: Vec<u8> = password_digest.iter().cycle().take(password.len()).copied().collect();

    let mut hasher = Sha256::new();
    for _ in 0..16 + usize::from(current[0]) {
        hasher.update(salt);
    }
    let salt_digest: [u8; 32] = hasher.finalize().into();
    let s_bytes: Vec<u8> = salt_digest.iter().cycle().take(salt.len()).copied().collect();

    for round in 0..rounds {
        let mut hasher = Sha256::new();
        if round % 2 == 1 {
            hasher.update(&p_bytes);
        } else {
            hasher.update(current);
        }
        if round % 3 != 0 {
            hasher.update(&s_bytes);
        }
        if round % 7 != 0 {
            hasher.update(&p_bytes);
        }
        if round % 2 == 1 {
            hasher.update(current);
        } else {
            hasher.update(&p_bytes);
        }
        current = hasher.finalize().into();
    }
    current
}

/// crypt's base-64 of a SHA-256 crypt digest: bytes in the specification's
/// order, 24 bits at a time, least significant six bits first.
fn crypt_base64(digest: &[u8; 32]) -> String {
    const GROUPS: [(usize, usize, usize); 10] =
        [(0, 10, 20), (21, 1, 11), (12, 22, 2), (3, 13, 23), (24, 4, 14), (15, 25, 5), (6, 16, 26), (27, 7, 17), (18, 28, 8), (9, 19, 29)];
    let mut text = String::with_capacity(DIGEST_CHARS);
    let mut push = |word: u32, chars: usize| {
        let mut word = word;
        for _ in 0..chars {
            text.push(char::from(CRYPT_ALPHABET[(word & 0x3f) as usize]));
            word >>= 6;
        }
    };
    for (high, middle, low) in GROUPS {
        push((u32::from(digest[high]) << 16) | (u32::from(digest[middle]) << 8) | u32::from(digest[low]), 4);
    }
    push((u32::from(digest[31]) << 8) | u32::from(digest[30]), 3);
    text
}

/// SHA256(SHA256(password)): what the fast path checks a scramble against.
pub fn double_sha256(password: &[u8]) -> [u8; 32] {
    sha256(&[&sha256(&[password])])
}

/// Checks a fast-path scramble against the cached SHA256(SHA256(pw)).
pub fn verify_scramble(nonce: &[u8], response: &[u8], cached: &[u8; 32]) -> bool {
    let Ok(response) = <&[u8; 32]>::try_from(response) else {
        return false;
    };
    let mask = sha256(&[cached, nonce]);
    let mut stage1 = [0u8; 32];
    for index in 0..32 {
        stage1[index] = response[index] ^ mask[index];
    }
    constant_time_equal(&sha256(&[&stage1]), cached)
}

/// The server-side cache of the fast path: SHA256(SHA256(pw)) by account
/// and stored hash (a changed password has another hash, so an old entry
/// never matches it).
#[derive(Debug, Default)]
pub struct Sha2Cache {
    entries: Mutex<HashMap<(String, String, Sha2Hash), [u8; 32]>>,
}

impl Sha2Cache {
    pub fn get(&self, user: &str, host: &str, hash: &Sha2Hash) -> Option<[u8; 32]> {
        self.entries.lock().get(&(user.to_string(), host.to_string(), hash.clone())).copied()
    }

    pub fn insert(&self, user: &str, host: &str, hash: &Sha2Hash, password: &[u8]) {
        let mut entries = self.entries.lock();
        if entries.len() >= CACHE_ENTRIES_MAX {
            entries.clear();
        }
        entries.insert((user.to_string(), host.to_string(), hash.clone()), double_sha256(password));
    }

    /// FLUSH PRIVILEGES empties it, as in MySQL.
    pub fn clear(&self) {
        self.entries.lock().clear();
    }
}

/// The RSA key pair of the exchange without TLS
/// (`caching_sha2_password_private_key_path` / `_public_key_path`).
pub struct RsaKeys {
    private: RsaPrivateKey,
    /// The public key as PEM (SubjectPublicKeyInfo), sent to clients that
    /// ask and shown as `Caching_sha2_password_rsa_public_key`.
    public_pem: String,
}

impl std::fmt::Debug for RsaKeys {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("RsaKeys")
    }
}

impl RsaKeys {
    /// From the private key's PEM (PKCS#8 or PKCS#1); the public key is
    /// derived from it.
    pub fn from_private_pem(pem: &str) -> Result<RsaKeys, String> {
        use rsa::pkcs1::DecodeRsaPrivateKey;
        let private = RsaPrivateKey::from_pkcs8_pem(pem)
            .or_else(|_| RsaPrivateKey::from_pkcs1_pem(pem))
            .map_err(|error| format!("not an RSA private key: {error}"))?;
        let public_pem = private
            .to_public_key()
            .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
            .map_err(|error| format!("cannot encode the public key: {error}"))?;
        Ok(RsaKeys { private, public_pem })
    }

    pub fn public_pem(&self) -> &str {
        &self.public_pem
    }

    /// The password from a client's encrypted answer: RSA-OAEP (SHA-1)
    /// decrypted, XORed with the nonce, up to its NUL.
    pub fn decrypt_password(&self, nonce: &[u8], encrypted: &[u8]) -> Option<Vec<u8>> {
        let mut plain = self.private.decrypt(Oaep::new::<sha1_oaep::Sha1>(), encrypted).ok()?;
        for (index, byte) in plain.iter_mut().enumerate() {
            *byte ^= nonce[index % nonce.len()];
        }
        let end = plain.iter().position(|&byte| byte == 0).unwrap_or(plain.len());
        plain.truncate(end);
        Some(plain)
    }
}

/// A new private key in PKCS#8 PEM, and its public key in PEM, for the
/// key files made on first start.
pub fn generate_rsa_key_pem(bits: usize) -> Result<(String, String), String> {
    use rsa::pkcs8::EncodePrivateKey;
    let private = RsaPrivateKey::new(&mut rand::thread_rng(), bits).map_err(|error| error.to_string())?;
    let private_pem = private.to_pkcs8_pem(rsa::pkcs8::LineEnding::LF).map_err(|error| error.to_string())?.to_string();
    let public_pem = private.to_public_key().to_public_key_pem(rsa::pkcs8::LineEnding::LF).map_err(|error| error.to_string())?;
    Ok((private_pem, public_pem))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glibc's `crypt("Hello world!", "$5$saltstring")` and
    /// `crypt("secret", "$5$rounds=5000$abcdefghijklmnop")` (Python's
    /// crypt module), 5000 rounds being SHA-256 crypt's default.
    #[test]
    fn sha256_crypt_matches_glibc() {
        assert_eq!(crypt_base64(&sha256_crypt(b"Hello world!", b"saltstring", 5000)), "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5");
        assert_eq!(crypt_base64(&sha256_crypt(b"secret", b"abcdefghijklmnop", 5000)), "i7zHaTeYqXlesRXJ8dXj6o.MEFQdzfIJpJpcWAtszs6");
        let long: Vec<u8> = (0..100u8).map(|i| b'a' + i % 26).collect();
        assert_eq!(sha256_crypt(&long, b"salt", 10).len(), 32);
    }

    #[test]
    fn stored_hashes_have_mysqls_form_and_check_passwords() {
        let hash = Sha2Hash::new(b"pw");
        assert_eq!(hash.as_str().len(), 70);
        assert!(hash.as_str().starts_with("$A$005$"));
        assert_eq!(Sha2Hash::parse(hash.as_str()), Some(hash.clone()));
        assert!(hash.matches(b"pw"));
        assert!(!hash.matches(b"px"));
        assert!(!hash.matches(b""));
        assert_ne!(Sha2Hash::new(b"pw"), hash, "a fresh salt each time");
        assert_eq!(Sha2Hash::parse("$A$005$short"), None);
        assert_eq!(Sha2Hash::parse("*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"), None);
    }

    /// mysql_common's client-side encryption (what Rust MySQL clients
    /// send) decrypts to the password.
    #[test]
    fn rsa_exchange_decrypts_what_mysql_common_encrypts() {
        let (private_pem, public_pem) = generate_rsa_key_pem(1024).unwrap();
        let keys = RsaKeys::from_private_pem(&private_pem).unwrap();
        assert_eq!(keys.public_pem(), public_pem);
        let nonce = *b"abcdefghijklmnopqrst";
        let mut masked = b"secret".to_vec();
        masked.push(0);
        for (index, byte) in masked.iter_mut().enumerate() {
            *byte ^= nonce[index % nonce.len()];
        }
        let encrypted = mysql_common::crypto::encrypt(&masked, public_pem.as_bytes()).unwrap();
        assert_eq!(keys.decrypt_password(&nonce, &encrypted).as_deref(), Some(&b"secret"[..]));
        assert_eq!(keys.decrypt_password(&nonce, &encrypted[1..]), None);
    }

    #[test]
    fn the_fast_path_checks_mysql_commons_scramble() {
        let nonce = *b"abcdefghijklmnopqrst";
        let response = mysql_common::auth::plugins::caching_sha2_password::scramble_sha256(&nonce, b"pw").unwrap();
        assert!(verify_scramble(&nonce, &response, &double_sha256(b"pw")));
        assert!(!verify_scramble(&nonce, &response, &double_sha256(b"px")));
        assert!(!verify_scramble(&nonce, &response[..31], &double_sha256(b"pw")));
    }
}
