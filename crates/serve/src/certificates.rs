//! The server's TLS files, as mysqld's `auto_generate_certs` makes them: on
//! a start where `ssl_ca`, `ssl_cert` and `ssl_key` keep their defaults and
//! none of the files exists in the data directory, a CA and a server and a
//! client certificate signed by it are written there (`ca.pem`,
//! `ca-key.pem`, `server-cert.pem`, `server-key.pem`, `client-cert.pem`,
//! `client-key.pem`), each 0600 through the storage seam.
//!
//! The server certificate names `localhost`, `127.0.0.1` and `::1`, so a
//! client that verifies the server's identity against `ca.pem`
//! (`mariadb --ssl-verify-server-cert`, pymysql's `ssl={'ca': ...}`)
//! accepts it on the loopback address binlogd listens on by default.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use protocol::{RsaKeys, TlsAcceptor};
use rcgen::{
    date_time_ymd, BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};
use storage::{OsStorage, Storage};
use tracing::info;

/// The defaults of `ssl_ca`, `ssl_cert` and `ssl_key`, file names in the
/// data directory.
pub const CA_FILE: &str = "ca.pem";
pub const CERT_FILE: &str = "server-cert.pem";
pub const KEY_FILE: &str = "server-key.pem";

/// The defaults of `caching_sha2_password_private_key_path` and
/// `_public_key_path`.
pub const RSA_PRIVATE_KEY_FILE: &str = "private_key.pem";
pub const RSA_PUBLIC_KEY_FILE: &str = "public_key.pem";
/// Bits of an auto-generated RSA key (mysqld's `auto_generate_certs` size).
const RSA_KEY_BITS: usize = 2048;

/// Years an auto-generated certificate is valid (mysqld's are valid ten).
const VALIDITY_YEARS: i32 = 10;

/// The TLS files a server uses: `ssl_ca`, `ssl_cert`, `ssl_key` as given,
/// a relative name being relative to the data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

impl TlsFiles {
    fn are_defaults(&self) -> bool {
        self.ca == CA_FILE && self.cert == CERT_FILE && self.key == KEY_FILE
    }
}

fn resolve(datadir: &Path, name: &str) -> PathBuf {
    datadir.join(name)
}

/// The acceptor for `files`, generating the default files first when none
/// of them exists. A file that is given but cannot be read or parsed is an
/// error: the server does not start without the TLS it was told to use.
pub fn load_or_generate(datadir: &Path, files: &TlsFiles) -> Result<TlsAcceptor, String> {
    let paths = [resolve(datadir, &files.ca), resolve(datadir, &files.cert), resolve(datadir, &files.key)];
    if files.are_defaults() && paths.iter().all(|path| !path.exists()) {
        generate(datadir).map_err(|error| format!("cannot generate the TLS certificates in {}: {error}", datadir.display()))?;
        info!(datadir = %datadir.display(), "generated a CA, server and client certificate for TLS");
    }
    let read = |path: &PathBuf| std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()));
    let ca = read(&paths[0])?;
    let cert = read(&paths[1])?;
    let key = read(&paths[2])?;
    TlsAcceptor::from_pem(&cert, &key, Some(&ca))
}

/// caching_sha2_password's RSA keys: the private key at `private` (made
/// with its public key at `public` when both keep their default names
/// and neither exists, as mysqld's
/// `caching_sha2_password_auto_generate_rsa_keys` does).
pub fn load_or_generate_rsa(datadir: &Path, private: &str, public: &str) -> Result<RsaKeys, String> {
    let private_path = resolve(datadir, private);
    let public_path = resolve(datadir, public);
    if private == RSA_PRIVATE_KEY_FILE && public == RSA_PUBLIC_KEY_FILE && !private_path.exists() && !public_path.exists() {
        let (private_pem, public_pem) = protocol::caching_sha2::generate_rsa_key_pem(RSA_KEY_BITS)?;
        write(datadir, RSA_PRIVATE_KEY_FILE, &private_pem)?;
        write(datadir, RSA_PUBLIC_KEY_FILE, &public_pem)?;
        info!(datadir = %datadir.display(), "generated the RSA key pair of caching_sha2_password");
    }
    let pem = std::fs::read_to_string(&private_path).map_err(|error| format!("{}: {error}", private_path.display()))?;
    RsaKeys::from_private_pem(&pem).map_err(|error| format!("{}: {error}", private_path.display()))
}

/// Writes the CA, the server's and a client's certificate and keys.
fn generate(datadir: &Path) -> Result<(), String> {
    let error = |error: rcgen::Error| error.to_string();
    let ca_key = KeyPair::generate().map_err(error)?;
    let mut ca_params = certificate_params(Vec::new(), "binlogd_Auto_Generated_CA_Certificate")?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let ca = ca_params.self_signed(&ca_key).map_err(error)?;

    let server_names = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    let (server_cert, server_key) =
        signed(server_names, "binlogd_Auto_Generated_Server_Certificate", ExtendedKeyUsagePurpose::ServerAuth, &ca, &ca_key)?;
    let (client_cert, client_key) =
        signed(Vec::new(), "binlogd_Auto_Generated_Client_Certificate", ExtendedKeyUsagePurpose::ClientAuth, &ca, &ca_key)?;

    // Keys and certificates alike are 0600, as mysqld writes them; the
    // certificates last, so a crash in between leaves no half set that a
    // restart would take as given.
    write(datadir, "ca-key.pem", &ca_key.serialize_pem())?;
    write(datadir, KEY_FILE, &server_key)?;
    write(datadir, "client-key.pem", &client_key)?;
    write(datadir, "client-cert.pem", &client_cert)?;
    write(datadir, CERT_FILE, &server_cert)?;
    write(datadir, CA_FILE, &ca.pem())
}

fn certificate_params(names: Vec<String>, common_name: &str) -> Result<CertificateParams, String> {
    let mut params = CertificateParams::new(names).map_err(|error| error.to_string())?;
    params.distinguished_name.push(DnType::CommonName, common_name);
    let year = current_year();
    params.not_before = date_time_ymd(year - 1, 1, 1);
    params.not_after = date_time_ymd(year + VALIDITY_YEARS, 1, 1);
    Ok(params)
}

/// A certificate for `names` signed by the CA: its PEM and its key's PEM.
fn signed(
    names: Vec<String>,
    common_name: &str,
    usage: ExtendedKeyUsagePurpose,
    ca: &Certificate,
    ca_key: &KeyPair,
) -> Result<(String, String), String> {
    let key = KeyPair::generate().map_err(|error| error.to_string())?;
    let mut params = certificate_params(names, common_name)?;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    params.extended_key_usages = vec![usage];
    let certificate = params.signed_by(&key, ca, ca_key).map_err(|error| error.to_string())?;
    Ok((certificate.pem(), key.serialize_pem()))
}

fn write(datadir: &Path, name: &str, text: &str) -> Result<(), String> {
    let path = datadir.join(name);
    let temp = datadir.join(format!("{name}.tmp"));
    OsStorage.write_atomically(&path, &temp, text.as_bytes()).map_err(|error| format!("{}: {error}", path.display()))
}

/// The calendar year now (the validity window is whole years; a day's
/// error at New Year does not matter).
fn current_year() -> i32 {
    let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs()).unwrap_or(0);
    1970 + (seconds / 31_556_952) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> TlsFiles {
        TlsFiles { ca: CA_FILE.into(), cert: CERT_FILE.into(), key: KEY_FILE.into() }
    }

    #[test]
    fn first_start_generates_owner_only_files_and_later_starts_reuse_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        load_or_generate(dir.path(), &defaults()).unwrap();
        for name in [CA_FILE, "ca-key.pem", CERT_FILE, KEY_FILE, "client-cert.pem", "client-key.pem"] {
            let mode = std::fs::metadata(dir.path().join(name)).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{name}");
        }
        let ca = std::fs::read(dir.path().join(CA_FILE)).unwrap();
        load_or_generate(dir.path(), &defaults()).unwrap();
        assert_eq!(std::fs::read(dir.path().join(CA_FILE)).unwrap(), ca, "not generated twice");
    }

    #[test]
    fn given_files_that_are_missing_are_an_error_not_a_generation() {
        let dir = tempfile::tempdir().unwrap();
        let files = TlsFiles { cert: "mine.pem".into(), ..defaults() };
        let error = load_or_generate(dir.path(), &files).unwrap_err();
        assert!(error.contains("ca.pem"), "{error}");
        assert!(!dir.path().join(CA_FILE).exists());
    }
}
