//! TLS as clients meet it: a server started on an empty data directory
//! makes its CA and certificates there, and two clients that verify the
//! server's certificate and name against that CA (the mariadb client with
//! `--ssl-verify-server-cert`, pymysql with `ssl={'ca': ...}`) log in over
//! TLS and see `Ssl_version` / `Ssl_cipher`; `require_secure_transport`
//! refuses plain logins with 3159; accounts `REQUIRE SSL` / `REQUIRE X509`
//! refuse unmet logins with 1045.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{python_script, ServerProcess};

/// `mariadb` with TLS, verifying the server against `ca`.
fn mariadb_tls(server: &ServerProcess, user: &str, ca: &Path, sql: &str) -> Output {
    Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", server.port), &format!("-u{user}"), "-B", "-N"])
        .args(["--ssl", "--ssl-verify-server-cert", &format!("--ssl-ca={}", ca.display()), "-e", sql])
        .output()
        .expect("run the mariadb client")
}

/// `mariadb` without TLS.
fn mariadb_plain(server: &ServerProcess, user: &str, password: &str, sql: &str) -> Output {
    Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", server.port), &format!("-u{user}"), &format!("--password={password}"), "--skip-ssl"])
        .args(["-B", "-N", "-e", sql])
        .output()
        .expect("run the mariadb client")
}

/// pymysql's login (tests/python/connect.py): its JSON line.
fn pymysql(server: &ServerProcess, user: &str, password: &str, mode: &[&str]) -> serde_json::Value {
    let output = Command::new("python3")
        .arg(python_script("connect.py"))
        .args([&server.port.to_string(), user, password])
        .args(mode)
        .output()
        .expect("run python3 (pip install pymysql)");
    assert!(output.status.success(), "connect.py: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("connect.py printed {}", String::from_utf8_lossy(&output.stdout)))
}

fn file(server: &ServerProcess, name: &str) -> String {
    server.datadir.join(name).display().to_string()
}

#[test]
fn both_clients_verify_the_generated_certificate_and_log_in_over_tls() {
    let server = ServerProcess::start();
    let ca = server.datadir.join("ca.pem");
    let output = mariadb_tls(&server, "root", &ca, "SHOW SESSION STATUS LIKE 'Ssl_version'; SELECT @@have_ssl, @@ssl_ca");
    assert!(output.status.success(), "mariadb --ssl-verify-server-cert: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("Ssl_version\tTLSv1.3") || stdout.contains("Ssl_version\tTLSv1.2"), "{stdout}");
    assert!(stdout.contains("YES\tca.pem"), "{stdout}");

    let tls = pymysql(&server, "root", "", &["tls", &file(&server, "ca.pem")]);
    assert_eq!(tls["user"], "root@localhost", "{tls}");
    assert!(tls["version"].as_str().unwrap().starts_with("TLSv1."), "{tls}");
    assert!(tls["cipher"].as_str().unwrap().starts_with("TLS_") || tls["cipher"].as_str().unwrap().starts_with("ECDHE-"), "{tls}");

    // Verification is real: a certificate that is not the CA fails it.
    let output = mariadb_tls(&server, "root", &server.datadir.join("client-cert.pem"), "SELECT 1");
    assert!(!output.status.success(), "verified against a non-CA certificate");
    let refused = pymysql(&server, "root", "", &["tls", &file(&server, "client-cert.pem")]);
    assert!(refused["message"].as_str().unwrap().contains("CERTIFICATE_VERIFY_FAILED"), "{refused}");

    // A plain connection has no TLS to show.
    let plain = pymysql(&server, "root", "", &["plain"]);
    assert_eq!((plain["version"].as_str(), plain["cipher"].as_str()), (Some(""), Some("")), "{plain}");
}

#[test]
fn require_secure_transport_refuses_plain_logins_with_3159() {
    let server = ServerProcess::start_with(&["--require-secure-transport=ON"]);
    let refused = pymysql(&server, "root", "", &["plain"]);
    assert_eq!(refused["error"], 3159, "{refused}");
    let output = mariadb_plain(&server, "root", "", "SELECT 1");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ERROR 3159") && stderr.contains("--require_secure_transport=ON"), "{stderr}");

    let ca = server.datadir.join("ca.pem");
    let output = mariadb_tls(&server, "root", &ca, "SET GLOBAL require_secure_transport = OFF");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(pymysql(&server, "root", "", &["plain"])["user"], "root@localhost");
}

#[test]
fn accounts_that_require_ssl_or_x509_refuse_unmet_logins_with_1045() {
    let server = ServerProcess::start();
    server.query(None, "CREATE USER 'secure'@'%' IDENTIFIED BY 'pw' REQUIRE SSL; CREATE USER 'signed'@'%' IDENTIFIED BY 'pw' REQUIRE X509");
    let ca = file(&server, "ca.pem");
    let (cert, key) = (file(&server, "client-cert.pem"), file(&server, "client-key.pem"));

    let denied = pymysql(&server, "secure", "pw", &["plain"]);
    assert_eq!(denied["error"], 1045, "{denied}");
    assert!(denied["message"].as_str().unwrap().contains("Access denied for user 'secure'@'localhost' (using password: YES)"), "{denied}");
    assert_eq!(pymysql(&server, "secure", "pw", &["tls", &ca])["user"], "secure@%");

    assert_eq!(pymysql(&server, "signed", "pw", &["tls", &ca])["error"], 1045, "TLS without a client certificate");
    assert_eq!(pymysql(&server, "signed", "pw", &["tls", &ca, &cert, &key])["user"], "signed@%");

    // ALTER USER ... REQUIRE NONE lifts it; the requirement survives a restart.
    server.query(None, "ALTER USER 'secure'@'%' REQUIRE NONE");
    assert_eq!(pymysql(&server, "secure", "pw", &["plain"])["user"], "secure@%");
    let mut server = server;
    server.restart();
    assert_eq!(pymysql(&server, "signed", "pw", &["plain"])["error"], 1045, "REQUIRE X509 after a restart");
}
