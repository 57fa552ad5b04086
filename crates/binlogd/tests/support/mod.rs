//! Shared by the `serve` test files: a `binlogd serve` process on a free
//! loopback port with its own temporary data directory, stopped by PID
//! with SIGTERM when dropped, and the `mariadb` client to talk to it.
//! Each test file uses part of it.
#![allow(dead_code)]

pub mod raw_client;

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BINLOGD: &str = env!("CARGO_BIN_EXE_binlogd");

/// A running server; stopped with SIGTERM (by its PID) when dropped.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
    _datadir: tempfile::TempDir,
    pub datadir: PathBuf,
    /// Extra `--name=value` options, kept for `restart`.
    options: Vec<String>,
    /// The server's stderr (its log), for failure messages.
    pub log: PathBuf,
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `mariadb` on 127.0.0.1:`port` as `user` (`password` empty: none), in
/// batch mode without column names.
pub fn mariadb_client(port: u16, user: &str, password: &str, database: Option<&str>, sql: &str) -> Output {
    let mut command = Command::new("mariadb");
    command.args(["-h127.0.0.1", &format!("-P{port}"), &format!("-u{user}"), "-B", "-N", "-e", sql]);
    if !password.is_empty() {
        command.arg(format!("--password={password}"));
    }
    if let Some(database) = database {
        command.arg(database);
    }
    command.output().expect("run the mariadb client (apt-get install mariadb-client)")
}

impl ServerProcess {
    pub fn start() -> ServerProcess {
        ServerProcess::start_with(&[])
    }

    /// Starts with extra `--name=value` options.
    pub fn start_with(options: &[&str]) -> ServerProcess {
        let datadir = tempfile::tempdir().unwrap();
        let path = datadir.path().join("data");
        let log = datadir.path().join("server.log");
        let options: Vec<String> = options.iter().map(|option| option.to_string()).collect();
        let port = free_port();
        let child = spawn(&path, port, &options, &log);
        let mut server = ServerProcess { child, port, _datadir: datadir, datadir: path, options, log };
        server.wait_listening();
        server
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("binlogd serve exited with {status}: {}", std::fs::read_to_string(&self.log).unwrap_or_default());
            }
            assert!(Instant::now() < deadline, "binlogd serve did not start listening");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM, then wait for a clean exit.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        // SAFETY: kill(2) on our own child's PID.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        self.child.wait().unwrap()
    }

    /// Stops cleanly and starts again on the same data directory and port.
    pub fn restart(&mut self) {
        assert!(self.stop().success(), "clean stop: {}", std::fs::read_to_string(&self.log).unwrap_or_default());
        self.child = spawn(&self.datadir, self.port, &self.options, &self.log);
        self.wait_listening();
    }

    pub fn mariadb(&self, database: Option<&str>, sql: &str) -> Output {
        mariadb_client(self.port, "root", "", database, sql)
    }

    /// Runs `sql` as root; it must succeed. Returns stdout.
    pub fn query(&self, database: Option<&str>, sql: &str) -> String {
        self.query_as("root", "", database, sql)
    }

    /// Runs `sql` as root; it must fail. Returns stderr.
    pub fn error(&self, database: Option<&str>, sql: &str) -> String {
        self.error_as("root", "", database, sql)
    }

    pub fn query_as(&self, user: &str, password: &str, database: Option<&str>, sql: &str) -> String {
        let output = mariadb_client(self.port, user, password, database, sql);
        assert!(output.status.success(), "{user}: {sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn error_as(&self, user: &str, password: &str, database: Option<&str>, sql: &str) -> String {
        let output = mariadb_client(self.port, user, password, database, sql);
        assert!(!output.status.success(), "{user}: {sql} should fail: {}", String::from_utf8_lossy(&output.stdout));
        String::from_utf8(output.stderr).unwrap()
    }
}

fn spawn(datadir: &std::path::Path, port: u16, options: &[String], log: &std::path::Path) -> Child {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    Command::new(BINLOGD)
        .args(["serve", "--datadir", datadir.to_str().unwrap(), "--port", &port.to_string(), "--bind=127.0.0.1"])
        .args(options)
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("start binlogd serve")
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}
