//! caching_sha2_password, MySQL 8.4's default plugin: CREATE USER takes it
//! and stores MySQL's `$A$005$` hash; pymysql logs in without TLS (full
//! authentication with the server's RSA key, then the fast path from the
//! server's cache) and with TLS (the password in clear inside TLS); the
//! mariadb client logs in through its caching_sha2_password plugin; wrong
//! passwords are 1045; `IDENTIFIED WITH mysql_native_password` still works.

mod support;

use std::process::Command;

use support::{python_script, ServerProcess};

/// pymysql's login (tests/python/connect.py): its JSON line.
fn pymysql(server: &ServerProcess, user: &str, password: &str, mode: &[&str]) -> serde_json::Value {
    let output = Command::new("python3")
        .arg(python_script("connect.py"))
        .args([&server.port.to_string(), user, password])
        .args(mode)
        .output()
        .expect("run python3 (pip install pymysql cryptography)");
    assert!(output.status.success(), "connect.py: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("connect.py printed {}", String::from_utf8_lossy(&output.stdout)))
}

#[test]
fn create_user_defaults_to_caching_sha2_and_stores_mysqls_hash() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'; CREATE USER 'old'@'%' IDENTIFIED WITH mysql_native_password BY 'old-pw'",
    );
    let users: serde_json::Value = serde_json::from_slice(&std::fs::read(server.datadir.join("users.json")).unwrap()).unwrap();
    let account = |name: &str| users["accounts"].as_array().unwrap().iter().find(|account| account["user"] == name).unwrap().clone();
    assert_eq!(account("app")["plugin"], "caching_sha2_password");
    let hash = account("app")["password_hash"].as_str().unwrap().to_string();
    assert!(hash.starts_with("$A$005$") && hash.len() == 70, "{hash}");
    assert_eq!(account("old")["plugin"], "mysql_native_password");
    assert!(account("old")["password_hash"].as_str().unwrap().starts_with('*'));

    // The stored form is accepted back, as MySQL's is.
    server.query(None, &format!("CREATE USER 'copy'@'%' IDENTIFIED WITH caching_sha2_password AS '{hash}'"));
    assert_eq!(pymysql(&server, "copy", "app-pw", &["plain"])["user"], "copy@%");
    assert!(server.error(None, "CREATE USER 'bad'@'%' IDENTIFIED WITH caching_sha2_password AS '$A$005$short'").contains("1827"));
    assert!(server.error(None, "CREATE USER 'bad'@'%' IDENTIFIED WITH sha256_password BY 'x'").contains("1524"));
}

#[test]
fn pymysql_logs_in_with_rsa_then_the_fast_path_and_over_tls() {
    let server = ServerProcess::start();
    server.query(None, "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'; CREATE USER 'secure'@'%' IDENTIFIED BY 'secure-pw'");
    // Without TLS: the first login asks for the RSA key, the second takes
    // the fast path.
    assert_eq!(pymysql(&server, "app", "app-pw", &["plain"])["user"], "app@%");
    assert_eq!(pymysql(&server, "app", "app-pw", &["plain"])["user"], "app@%");
    let public_key = server.datadir.join("public_key.pem").display().to_string();
    assert!(std::fs::read_to_string(&public_key).unwrap().starts_with("-----BEGIN PUBLIC KEY-----"));
    let wrong = pymysql(&server, "app", "nope", &["plain"]);
    assert_eq!(wrong["error"], 1045, "{wrong}");
    assert_eq!(pymysql(&server, "nobody", "x", &["plain"])["error"], 1045);

    // Over TLS, full authentication sends the password inside TLS.
    let ca = server.datadir.join("ca.pem").display().to_string();
    let tls = pymysql(&server, "secure", "secure-pw", &["tls", &ca]);
    assert_eq!(tls["user"], "secure@%", "{tls}");
    assert_eq!(pymysql(&server, "secure", "wrong", &["tls", &ca])["error"], 1045);

    // A changed password is not served from the cache.
    server.query(None, "ALTER USER 'app'@'%' IDENTIFIED BY 'new-pw'");
    assert_eq!(pymysql(&server, "app", "app-pw", &["plain"])["error"], 1045);
    assert_eq!(pymysql(&server, "app", "new-pw", &["plain"])["user"], "app@%");
}

#[test]
fn the_mariadb_client_logs_in_with_its_caching_sha2_plugin() {
    let server = ServerProcess::start();
    server.query(None, "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'");
    let ca = server.datadir.join("ca.pem");
    let output = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uapp", "--password=app-pw", "-B", "-N"])
        .args(["--ssl", "--ssl-verify-server-cert", &format!("--ssl-ca={}", ca.display()), "-e", "SELECT CURRENT_USER()"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8(output.stdout).unwrap().trim(), "app@%");
    assert!(server.error_as("app", "wrong", None, "SELECT 1").contains("ERROR 1045"));
    // Then the fast path, from the cache the first login filled.
    assert_eq!(server.query_as("app", "app-pw", None, "SELECT CURRENT_USER()").trim(), "app@%");
}
