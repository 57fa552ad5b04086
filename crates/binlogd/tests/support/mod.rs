//! What the integration tests share: a `binlogd serve` process on a free
//! loopback port (stopped by its PID when dropped, restartable on the same
//! data directory) and the `mariadb` command-line client against it.
#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BINLOGD: &str = env!("CARGO_BIN_EXE_binlogd");

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something listens on `port`.
pub fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not start listening on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGTERM to a child we started, then wait for it.
pub fn terminate(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        // SAFETY: kill(2) on our own child's PID.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
    }
    let _ = child.wait();
}

/// A running `binlogd serve`.
pub struct Binlogd {
    child: Option<Child>,
    pub port: u16,
    pub datadir: PathBuf,
    extra_args: Vec<String>,
    _tempdir: tempfile::TempDir,
}

impl Binlogd {
    pub fn start(extra_args: &[&str]) -> Binlogd {
        let tempdir = tempfile::tempdir().unwrap();
        let datadir = tempdir.path().join("data");
        let mut server = Binlogd {
            child: None,
            port: free_port(),
            datadir,
            extra_args: extra_args.iter().map(|arg| arg.to_string()).collect(),
            _tempdir: tempdir,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let log = std::fs::File::create(self._tempdir.path().join("binlogd.log")).unwrap();
        let child = Command::new(BINLOGD)
            .args(["serve", "--datadir", self.datadir.to_str().unwrap(), "--port", &self.port.to_string(), "--bind=127.0.0.1"])
            .args(&self.extra_args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start binlogd serve");
        self.child = Some(child);
        wait_for_port(self.port, "binlogd serve");
    }

    /// SIGTERM (clean shutdown), then start again on the same data and port.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            terminate(&mut child);
        }
    }

    pub fn binlog_dir(&self) -> PathBuf {
        self.datadir.join("binlog")
    }

    /// The files the index lists, in order.
    pub fn binlog_files(&self) -> Vec<String> {
        let index = std::fs::read_to_string(self.binlog_dir().join("binlog.index")).unwrap();
        index.lines().map(|line| Path::new(line.trim()).file_name().unwrap().to_string_lossy().into_owned()).collect()
    }

    pub fn mariadb(&self, sql: &str) -> Output {
        Command::new("mariadb")
            .args(["-h127.0.0.1", &format!("-P{}", self.port), "-uroot", "-B", "-N", "-e", sql])
            .output()
            .expect("run the mariadb client (apt-get install mariadb-client)")
    }

    /// Runs `sql`; panics with the client's message if it fails.
    pub fn query(&self, sql: &str) -> String {
        let output = self.mariadb(sql);
        assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn server_uuid(&self) -> String {
        self.query("SELECT @@server_uuid").trim().to_string()
    }
}

impl Drop for Binlogd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `crates/binlogd/tests/python/<name>`.
pub fn python_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python").join(name)
}
