//! Shared by the `binlogd serve` tests: a server process on a free port
//! of 127.0.0.1 with its own temporary data directory (stopped by PID when
//! dropped), the `mariadb` client, sysbench and the binlog files.
#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

pub const BINLOGD: &str = env!("CARGO_BIN_EXE_binlogd");

/// A running server; stopped with SIGTERM (by its PID) when dropped.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
    _tempdir: tempfile::TempDir,
    pub datadir: PathBuf,
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn spawn(datadir: &Path, port: u16, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(BINLOGD);
    command
        .args(["serve", "--datadir", datadir.to_str().unwrap(), "--port", &port.to_string(), "--bind=127.0.0.1"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("start binlogd serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("binlogd serve exited at start: {status}");
        }
        assert!(Instant::now() < deadline, "binlogd serve did not start listening");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

impl ServerProcess {
    pub fn start() -> ServerProcess {
        ServerProcess::start_with(&[], &[])
    }

    /// With extra `--name=value` arguments and environment variables.
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> ServerProcess {
        let tempdir = tempfile::tempdir().unwrap();
        let datadir = tempdir.path().join("data");
        let port = free_port();
        let child = spawn(&datadir, port, args, env);
        ServerProcess { child, port, _tempdir: tempdir, datadir }
    }

    /// Starts again on the same data directory, after [`ServerProcess::stop`]
    /// or a crash.
    pub fn restart(&mut self, args: &[&str], env: &[(&str, &str)]) {
        assert!(self.child.try_wait().unwrap().is_some(), "restart of a running server");
        self.child = spawn(&self.datadir, self.port, args, env);
    }

    /// SIGTERM, then wait for a clean exit.
    pub fn stop(&mut self) -> ExitStatus {
        // SAFETY: kill(2) on our own child's PID.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        self.child.wait().unwrap()
    }

    /// Waits for the process to end by itself (a crash point aborted it).
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "binlogd serve did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn mariadb(&self, database: Option<&str>, sql: &str) -> Output {
        let mut command = Command::new("mariadb");
        command.args(["-h127.0.0.1", &format!("-P{}", self.port), "-uroot", "-B", "-N", "-e", sql]);
        if let Some(database) = database {
            command.arg(database);
        }
        command.output().expect("run the mariadb client (apt-get install mariadb-client)")
    }

    /// The output of `sql` (tab-separated, no column names); panics when it fails.
    pub fn query(&self, database: Option<&str>, sql: &str) -> String {
        let output = self.mariadb(database, sql);
        assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// The client's error text; panics when `sql` succeeds.
    pub fn error(&self, database: Option<&str>, sql: &str) -> String {
        let output = self.mariadb(database, sql);
        assert!(!output.status.success(), "{sql} should fail");
        String::from_utf8(output.stderr).unwrap()
    }

    pub fn binlog_files(&self) -> Vec<PathBuf> {
        binlog_files(&self.datadir)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// The files `binlog.index` lists, oldest first.
pub fn binlog_files(datadir: &Path) -> Vec<PathBuf> {
    let index = std::fs::read_to_string(datadir.join("binlog/binlog.index")).unwrap();
    index.lines().map(|line| datadir.join("binlog").join(Path::new(line.trim()).file_name().unwrap())).collect()
}

/// A finished sysbench run.
pub struct SysbenchReport {
    pub stdout: String,
}

impl SysbenchReport {
    /// The first number after `name:` in the report (`transactions:`,
    /// `ignored errors:`, ...).
    pub fn number(&self, name: &str) -> u64 {
        let line = self
            .stdout
            .lines()
            .find(|line| line.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name:?} line in:\n{}", self.stdout));
        line.trim_start()[name.len()..].split_whitespace().next().unwrap().parse().unwrap()
    }

    pub fn transactions(&self) -> u64 {
        self.number("transactions:")
    }

    pub fn ignored_errors(&self) -> u64 {
        self.number("ignored errors:")
    }
}

/// Runs sysbench `script` (a name under /usr/share/sysbench or a path)
/// against 127.0.0.1:`port` as root; panics unless it exits cleanly
/// without FATAL lines.
pub fn sysbench(script: &str, port: u16, args: &[&str]) -> SysbenchReport {
    let output = Command::new("sysbench")
        .arg(script)
        .args(["--mysql-host=127.0.0.1", &format!("--mysql-port={port}"), "--mysql-user=root"])
        .args(args)
        .output()
        .expect("run sysbench (apt-get install sysbench)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "sysbench {script} {args:?} failed:\n{stdout}\n{stderr}");
    assert!(!stdout.contains("FATAL") && !stderr.contains("FATAL"), "sysbench {script} {args:?}:\n{stdout}\n{stderr}");
    SysbenchReport { stdout }
}

/// `binlogd inspect [args] file`; panics when it fails.
pub fn inspect(args: &[&str], file: &Path) -> String {
    let output = Command::new(BINLOGD).arg("inspect").args(args).arg(file).output().unwrap();
    assert!(output.status.success(), "inspect {args:?} {}: {}", file.display(), String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}
