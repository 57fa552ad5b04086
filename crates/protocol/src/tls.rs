//! TLS on a client connection (rustls, ring provider).
//!
//! A client that wants TLS answers the handshake with an SSL Request (the
//! first 32 bytes of a Handshake Response, CLIENT_SSL set); both sides then
//! run a TLS handshake on the socket and the Handshake Response follows
//! inside TLS, its sequence id continuing from the SSL Request's.
//!
//! A connection's bytes go through a [`Transport`]: the socket itself for a
//! plain connection (no extra copy, no lock), or the one rustls state
//! shared by the read and the write half of a TLS connection. Both halves
//! are used by the connection's own thread only, so the lock is never
//! contended; it is there because rustls keeps one state for both
//! directions.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;

use parking_lot::Mutex;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection, StreamOwned};

/// The server's TLS settings: its certificate chain and key, and the CAs
/// that sign the client certificates it accepts (`REQUIRE X509`).
#[derive(Clone)]
pub struct TlsAcceptor {
    config: Arc<ServerConfig>,
}

impl std::fmt::Debug for TlsAcceptor {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("TlsAcceptor")
    }
}

impl TlsAcceptor {
    /// From PEM texts: `ssl_cert` (the server's certificate, then any
    /// intermediates), `ssl_key`, and `ssl_ca` when client certificates
    /// are to be verified. A client without a certificate is still
    /// accepted; accounts that need one say `REQUIRE X509`.
    pub fn from_pem(certificate_pem: &[u8], key_pem: &[u8], ca_pem: Option<&[u8]>) -> Result<TlsAcceptor, String> {
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(certificate_pem).collect::<Result<_, _>>().map_err(|error| format!("ssl_cert: {error}"))?;
        if chain.is_empty() {
            return Err("ssl_cert: no certificate in the file".into());
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| format!("ssl_key: {error}"))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|error| format!("TLS versions: {error}"))?;
        let builder = match ca_pem {
            Some(ca_pem) => {
                let mut roots = RootCertStore::empty();
                for certificate in CertificateDer::pem_slice_iter(ca_pem) {
                    let certificate = certificate.map_err(|error| format!("ssl_ca: {error}"))?;
                    roots.add(certificate).map_err(|error| format!("ssl_ca: {error}"))?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .allow_unauthenticated()
                    .build()
                    .map_err(|error| format!("ssl_ca: {error}"))?;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder.with_single_cert(chain, key).map_err(|error| format!("ssl_cert/ssl_key: {error}"))?;
        Ok(TlsAcceptor { config: Arc::new(config) })
    }

    /// Runs the server side of a TLS handshake on `socket`. `early` holds
    /// bytes already read from the socket after the SSL Request (a client
    /// sends its TLS hello without waiting), which come first.
    pub fn accept(&self, socket: TcpStream, early: &[u8]) -> io::Result<(Transport, TlsInfo)> {
        let mut connection = ServerConnection::new(Arc::clone(&self.config)).map_err(io::Error::other)?;
        let mut early = early;
        while !early.is_empty() {
            connection.read_tls(&mut early)?;
            if let Err(error) = connection.process_new_packets() {
                // Tell the client why (an alert) before giving up.
                let _ = connection.write_tls(&mut &socket);
                return Err(io::Error::new(io::ErrorKind::InvalidData, error));
            }
        }
        let mut stream = StreamOwned::new(connection, socket);
        while stream.conn.is_handshaking() {
            stream.conn.complete_io(&mut stream.sock)?;
        }
        let info = TlsInfo::of(&stream.conn);
        let socket = stream.sock.try_clone()?;
        Ok((Transport::Tls(TlsHalf { socket, tls: Arc::new(Mutex::new(stream)) }), info))
    }
}

/// What SHOW STATUS tells about a connection's TLS (`Ssl_version`,
/// `Ssl_cipher`) and what `REQUIRE X509` checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsInfo {
    /// As OpenSSL names it: `TLSv1.3`, `TLSv1.2`.
    pub version: String,
    /// As OpenSSL names it (`TLS_AES_256_GCM_SHA384`,
    /// `ECDHE-RSA-AES256-GCM-SHA384`), which is what MySQL shows.
    pub cipher: String,
    /// The client presented a certificate that `ssl_ca` verified.
    pub client_certificate: bool,
}

impl TlsInfo {
    fn of(connection: &ServerConnection) -> TlsInfo {
        let version = match connection.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
            _ => "",
        };
        let cipher = connection.negotiated_cipher_suite().map(|suite| openssl_cipher_name(suite.suite())).unwrap_or_default();
        TlsInfo {
            version: version.into(),
            cipher,
            client_certificate: connection.peer_certificates().is_some_and(|chain| !chain.is_empty()),
        }
    }
}

/// OpenSSL's name for a cipher suite (what MySQL shows): TLS 1.3 suites by
/// their IANA names, TLS 1.2 suites by OpenSSL's own.
fn openssl_cipher_name(suite: rustls::CipherSuite) -> String {
    use rustls::CipherSuite as Suite;
    let name = match suite {
        Suite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        Suite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        Suite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        Suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
        Suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
        Suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-ECDSA-CHACHA20-POLY1305",
        Suite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
        Suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
        Suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        other => return other.as_str().unwrap_or("").to_string(),
    };
    name.to_string()
}

/// One half (read or write) of a connection's byte stream.
pub enum Transport {
    Plain(TcpStream),
    Tls(TlsHalf),
}

/// A TLS connection as seen by one half; both halves share the state.
pub struct TlsHalf {
    /// The socket under TLS, for timeouts, peeking and shutdown.
    socket: TcpStream,
    tls: Arc<Mutex<StreamOwned<ServerConnection, TcpStream>>>,
}

impl Transport {
    /// The socket under the transport (timeouts, shutdown, peeking).
    pub fn socket(&self) -> &TcpStream {
        match self {
            Transport::Plain(socket) => socket,
            Transport::Tls(half) => &half.socket,
        }
    }

    /// The other half of the same stream.
    pub fn try_clone(&self) -> io::Result<Transport> {
        Ok(match self {
            Transport::Plain(socket) => Transport::Plain(socket.try_clone()?),
            Transport::Tls(half) => Transport::Tls(TlsHalf { socket: half.socket.try_clone()?, tls: Arc::clone(&half.tls) }),
        })
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }

    /// Ends the sending side: a TLS close_notify first, so the client
    /// knows the end is not a truncation.
    pub fn shutdown_write(&self) {
        if let Transport::Tls(half) = self {
            let mut tls = half.tls.lock();
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
        let _ = self.socket().shutdown(Shutdown::Write);
    }
}

impl Read for Transport {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.read(buffer),
            Transport::Tls(half) => half.tls.lock().read(buffer),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.write(bytes),
            Transport::Tls(half) => half.tls.lock().write(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(socket) => socket.flush(),
            Transport::Tls(half) => half.tls.lock().flush(),
        }
    }
}
