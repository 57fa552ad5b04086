//! Shared by the `serve` test files: a `binlogd serve` process on a free
//! loopback port with its own temporary data directory (stopped by PID
//! with SIGTERM when dropped), the `mariadb` client, sysbench, `binlogd
//! inspect` and the binlog files. Each test file uses part of it.
#![allow(dead_code)]

pub mod binlog_rows;
pub mod mariadb;
pub mod replica;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};

use std::time::{Duration, Instant};
use testkit::ChildGuard;

pub const BINLOGD: &str = env!("CARGO_BIN_EXE_binlogd");

/// A running server; stopped with SIGTERM (by its PID) when dropped, by
/// its [`ChildGuard`], before its data directory goes.
pub struct ServerProcess {
    child: ChildGuard,
    pub port: u16,
    _datadir: tempfile::TempDir,
    pub datadir: PathBuf,
    /// Extra `--name=value` options, kept for `restart`.
    options: Vec<String>,
    /// The server's stderr (its log), for failure messages.
    pub log: PathBuf,
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

    /// Starts with extra `--name=value` options. The server binds port 0
    /// and the test reads the port it got from its "ready for connections"
    /// log line: picking a free port first and handing it over races with
    /// every other socket on the machine, and a probe connect to a port
    /// nobody listens on yet can connect to itself (TCP simultaneous open).
    pub fn start_with(options: &[&str]) -> ServerProcess {
        let datadir = tempfile::tempdir().unwrap();
        let path = datadir.path().join("data");
        let log = datadir.path().join("server.log");
        let options: Vec<String> = options.iter().map(|option| option.to_string()).collect();
        let child = ChildGuard::new(spawn(&path, 0, &options, &[], &log));
        let mut server = ServerProcess { child, port: 0, _datadir: datadir, datadir: path, options, log };
        server.port = server.wait_ready(0);
        server
    }

    /// Waits for the server's `ready_before + 1`-th "ready for connections"
    /// line and returns the port it names.
    fn wait_ready(&mut self, ready_before: usize) -> u16 {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if let Some(line) = log.lines().filter(|line| line.contains("ready for connections")).nth(ready_before) {
                let address = line.split_whitespace().find_map(|word| word.strip_prefix("address=")).expect("address= in the ready line");
                return address.rsplit(':').next().unwrap().parse().expect("a port in the ready line");
            }
            if let Some(status) = self.child.try_wait() {
                panic!("binlogd serve exited with {status}: {log}");
            }
            assert!(Instant::now() < deadline, "binlogd serve did not get ready: {log}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn ready_lines(&self) -> usize {
        std::fs::read_to_string(&self.log).unwrap_or_default().matches("ready for connections").count()
    }

    pub fn pid(&self) -> u32 {
        self.child.pid()
    }

    /// The process's peak resident set (VmHWM), in bytes.
    pub fn peak_rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM in /proc/PID/status");
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    }

    pub fn is_running(&mut self) -> bool {
        self.child.is_running()
    }

    /// SIGTERM, then wait for a clean exit.
    pub fn stop(&mut self) -> ExitStatus {
        self.child.terminate()
    }

    /// SIGKILL (no shutdown at all), then wait for the process to end.
    pub fn kill(&mut self) {
        self.child.kill();
    }

    /// Stops cleanly and starts again on the same data directory and port.
    pub fn restart(&mut self) {
        assert!(self.stop().success(), "clean stop: {}", std::fs::read_to_string(&self.log).unwrap_or_default());
        self.start_again(&[]);
    }

    /// Starts again on the same data directory and port, with the same
    /// options and these environment variables, after [`ServerProcess::stop`]
    /// or a crash.
    pub fn start_again(&mut self, env: &[(&str, &str)]) {
        assert!(!self.child.is_running(), "start_again of a running server");
        let ready_before = self.ready_lines();
        self.child = ChildGuard::new(spawn(&self.datadir, self.port, &self.options, env, &self.log));
        let port = self.wait_ready(ready_before);
        assert_eq!(port, self.port, "restarted on another port");
    }

    /// Waits for the process to end by itself (a crash point aborted it).
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        self.child.wait_timeout(timeout).expect("binlogd serve did not exit")
    }

    pub fn binlog_files(&self) -> Vec<PathBuf> {
        binlog_files(&self.datadir)
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

fn spawn(datadir: &Path, port: u16, options: &[String], env: &[(&str, &str)], log: &Path) -> Child {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    Command::new(BINLOGD)
        .args(["serve", "--datadir", datadir.to_str().unwrap(), "--port", &port.to_string(), "--bind=127.0.0.1"])
        .args(options)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("start binlogd serve")
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

/// `binlogd serve` on `datadir` with `options`, which must stop it before
/// it serves: its exit status failed, and what it printed on stderr.
pub fn failed_start(datadir: &Path, options: &[&str]) -> String {
    let port = testkit::free_port();
    let mut child = ChildGuard::new(
        Command::new(BINLOGD)
            .args(["serve", "--datadir", datadir.to_str().unwrap(), "--port", &port.to_string(), "--bind=127.0.0.1"])
            .args(options)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Dropping the guard on the panic stops a server that did start.
    let status = child.wait_timeout(Duration::from_secs(30)).unwrap_or_else(|| panic!("binlogd serve started with {options:?}"));
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.child_mut().stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    stderr
}

/// `binlogd inspect [args] file`; panics when it fails.
pub fn inspect(args: &[&str], file: &Path) -> String {
    let output = Command::new(BINLOGD).arg("inspect").args(args).arg(file).output().unwrap();
    assert!(output.status.success(), "inspect {args:?} {}: {}", file.display(), String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Waits until a MySQL-protocol server on `port` sends its greeting. A bare
/// connect is not proof: a connect to a port nobody listens on yet can
/// connect to itself (TCP simultaneous open) and would read nothing.
pub fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !sends_greeting(port) {
        assert!(Instant::now() < deadline, "{what} did not start listening on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sends_greeting(port: u16) -> bool {
    use std::io::Read;
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).is_ok()
}

/// The replication tests' view of a [`ServerProcess`]: root's queries
/// without a default schema, file names as the index lists them.
pub struct Binlogd {
    server: ServerProcess,
    pub port: u16,
    pub datadir: PathBuf,
}

impl Binlogd {
    pub fn start(extra_args: &[&str]) -> Binlogd {
        let server = ServerProcess::start_with(extra_args);
        let (port, datadir) = (server.port, server.datadir.clone());
        Binlogd { server, port, datadir }
    }

    /// SIGTERM (clean shutdown), then start again on the same data and port.
    pub fn restart(&mut self) {
        self.server.restart();
    }

    pub fn stop(&mut self) {
        if self.server.is_running() {
            self.server.stop();
        }
    }

    pub fn binlog_dir(&self) -> PathBuf {
        self.datadir.join("binlog")
    }

    /// The files the index lists, in order.
    pub fn binlog_files(&self) -> Vec<String> {
        self.server.binlog_files().iter().map(|path| path.file_name().unwrap().to_string_lossy().into_owned()).collect()
    }

    pub fn mariadb(&self, sql: &str) -> Output {
        self.server.mariadb(None, sql)
    }

    /// Runs `sql`; panics with the client's message if it fails.
    pub fn query(&self, sql: &str) -> String {
        self.server.query(None, sql)
    }

    pub fn server_uuid(&self) -> String {
        self.query("SELECT @@server_uuid").trim().to_string()
    }
}

/// The replication tests' DDL after sysbench (database `sbtest` with
/// sbtest2, database `extra`): tables and an index come and go, rows
/// change around them, a rotation, a TRUNCATE.
pub const DDL_WORKLOAD: &str = "CREATE TABLE extra.kv (id INT NOT NULL AUTO_INCREMENT, k VARCHAR(32) NOT NULL, v INT, PRIMARY KEY (id));
         CREATE INDEX k_1 ON extra.kv (k);
         INSERT INTO extra.kv (k, v) VALUES ('a', 1), ('b', NULL), ('c', 3);
         FLUSH BINARY LOGS;
         CREATE TABLE extra.gone (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO extra.gone VALUES (1);
         DROP TABLE extra.gone;
         UPDATE extra.kv SET v = v + 10 WHERE k <> 'b'; DELETE FROM extra.kv WHERE k = 'a';
         TRUNCATE TABLE sbtest.sbtest2;
         INSERT INTO sbtest.sbtest2 (k, c, pad) VALUES (1, 'c', 'pad');";

/// `crates/binlogd/tests/python/<name>`.
pub fn python_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python").join(name)
}
