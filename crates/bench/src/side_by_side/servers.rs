//! The processes the side-by-side benchmark starts: MariaDB (`mariadbd`)
//! and `binlogd serve`, each on a free 127.0.0.1 port with its own data
//! directory, and the sysbench and `mariadb` client processes. Every one
//! is held by a [`ChildGuard`], which stops it by its PID when dropped, so
//! an error, a panic or Ctrl-C ([`Interrupt`]) leaves no server running.

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use database::BinlogStorageEngine;

use super::client::Client;
use super::cpus::CpuList;

/// How long a server may take to accept connections after start.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a process may take to exit after SIGTERM before SIGKILL
/// (MariaDB flushes its buffer pool at shutdown).
const STOP_TIMEOUT: Duration = Duration::from_secs(180);
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Set by SIGINT or SIGTERM; long waits check it and give up with an
/// error, so the guards stop every process on the way out.
#[derive(Clone, Default)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// Blocks SIGINT/SIGTERM in this thread (and the threads spawned
    /// after) and waits for them in a thread of its own. Child processes
    /// start with an empty signal mask (the standard library resets it).
    pub fn install() -> Result<Interrupt, String> {
        serve::signals::block().map_err(|e| format!("blocking SIGINT/SIGTERM: {e}"))?;
        let interrupt = Interrupt::default();
        let flag = interrupt.0.clone();
        std::thread::Builder::new()
            .name("bench-signals".into())
            .spawn(move || {
                let signal = serve::signals::wait();
                eprintln!("bench side-by-side: {signal}, stopping the servers");
                flag.store(true, Ordering::SeqCst);
            })
            .map_err(|e| format!("starting the signal thread: {e}"))?;
        Ok(interrupt)
    }

    pub fn check(&self) -> Result<(), String> {
        if self.0.load(Ordering::SeqCst) {
            Err("interrupted".to_string())
        } else {
            Ok(())
        }
    }

    /// Sleeps `duration`, checking for Ctrl-C meanwhile.
    pub fn sleep(&self, duration: Duration) -> Result<(), String> {
        let until = Instant::now() + duration;
        loop {
            self.check()?;
            let now = Instant::now();
            if now >= until {
                return Ok(());
            }
            std::thread::sleep(POLL_INTERVAL.min(until - now));
        }
    }
}

/// A child process, stopped (SIGTERM by its PID, SIGKILL after
/// [`STOP_TIMEOUT`]) when dropped unless it has exited.
pub struct ChildGuard {
    child: Child,
    what: String,
}

impl ChildGuard {
    /// Starts `command` in a process group of its own: Ctrl-C in the
    /// terminal reaches only the benchmark, which stops its children in
    /// order.
    pub fn spawn(mut command: Command, what: &str) -> Result<ChildGuard, String> {
        command.process_group(0);
        let child = command.spawn().map_err(|e| format!("starting {what} ({:?}): {e}", command.get_program()))?;
        Ok(ChildGuard { child, what: what.to_string() })
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn take_stdout(&mut self) -> ChildStdout {
        self.child.stdout.take().expect("stdout was piped")
    }

    pub fn take_stderr(&mut self) -> ChildStderr {
        self.child.stderr.take().expect("stderr was piped")
    }

    pub fn take_stdin(&mut self) -> ChildStdin {
        self.child.stdin.take().expect("stdin was piped")
    }

    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, String> {
        self.child.try_wait().map_err(|e| format!("waiting for {}: {e}", self.what))
    }

    /// SIGTERM, then waits up to [`STOP_TIMEOUT`] and SIGKILLs.
    pub fn stop(&mut self) -> Result<ExitStatus, String> {
        if let Some(status) = self.try_wait()? {
            return Ok(status);
        }
        // SAFETY: kill(2) on the PID of our own child, not yet reaped.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            std::thread::sleep(POLL_INTERVAL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Err(format!("{} did not stop within {}s of SIGTERM; killed", self.what, STOP_TIMEOUT.as_secs()))
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Err(error) = self.stop() {
            eprintln!("bench side-by-side: stopping {}: {error}", self.what);
        }
    }
}

/// A port on 127.0.0.1 that nothing listens on right now.
pub fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("finding a free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("finding a free port: {e}"))
}

/// The ports the servers of a run listen on: consecutive ones from a
/// given first port (a range the machine's owner set aside), or a free
/// one each.
pub struct Ports {
    next: Option<u16>,
}

impl Ports {
    pub fn new(first: Option<u16>) -> Ports {
        Ports { next: first }
    }

    pub fn take(&mut self) -> Result<u16, String> {
        match self.next {
            None => free_port(),
            Some(port) => {
                self.next = Some(port.checked_add(1).ok_or("--first-port: ran out of ports above 65535")?);
                Ok(port)
            }
        }
    }
}

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    MariaDb,
    Binlogd,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::MariaDb => "mariadb",
            Kind::Binlogd => "binlogd",
        }
    }
}

/// A running server and how to reach it.
pub struct Server {
    pub kind: Kind,
    pub port: u16,
    /// The server's stderr (its error log), for the error message when it dies.
    pub log_path: PathBuf,
    process: ChildGuard,
}

/// Memory, size and CPU settings both servers are given.
#[derive(Debug, Clone)]
pub struct Sizing {
    /// MariaDB's `innodb_buffer_pool_size`.
    pub buffer_pool_bytes: u64,
    /// binlogd's `binlogd_engine_memory_limit`.
    pub engine_memory_limit_bytes: u64,
    /// `max_allowed_packet` of both.
    pub max_allowed_packet_bytes: u64,
    /// The CPUs both run on (`--server-cpus`); `None`: any.
    pub cpus: Option<CpuList>,
}

impl Server {
    /// `mariadb-install-db` into `dir/data`, then `mariadbd` with the
    /// binlog on, synced at every group commit, and
    /// `innodb_flush_log_at_trx_commit = flush`.
    pub fn start_mariadb(dir: &Path, sizing: &Sizing, flush: u64, port: u16, interrupt: &Interrupt) -> Result<Server, String> {
        let datadir = dir.join("data");
        let tmpdir = dir.join("tmp");
        std::fs::create_dir_all(&tmpdir).map_err(|e| format!("creating {}: {e}", tmpdir.display()))?;
        let install_log = dir.join("install-db.log");
        let log = std::fs::File::create(&install_log).map_err(|e| format!("creating {}: {e}", install_log.display()))?;
        let mut install = Command::new("mariadb-install-db");
        install
            .args(["--no-defaults", "--user=root", "--auth-root-authentication-method=normal"])
            .arg(format!("--datadir={}", datadir.display()))
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log);
        let mut installer = ChildGuard::spawn(install, "mariadb-install-db")?;
        let status = loop {
            if let Some(status) = installer.try_wait()? {
                break status;
            }
            interrupt.sleep(POLL_INTERVAL)?;
        };
        if !status.success() {
            return Err(format!("mariadb-install-db failed ({status}); see {}", install_log.display()));
        }
        let socket = dir.join("mariadbd.sock");
        let mut command = Command::new("mariadbd");
        command.args([
            "--no-defaults".to_string(),
            "--user=root".to_string(),
            format!("--datadir={}", datadir.display()),
            format!("--tmpdir={}", tmpdir.display()),
            format!("--socket={}", socket.display()),
            format!("--pid-file={}", dir.join("mariadbd.pid").display()),
            format!("--port={port}"),
            "--bind-address=127.0.0.1".to_string(),
            format!("--log-bin={}", datadir.join("binlog").display()),
            "--binlog-format=ROW".to_string(),
            "--server-id=1".to_string(),
            "--sync-binlog=1".to_string(),
            format!("--innodb-flush-log-at-trx-commit={flush}"),
            format!("--innodb-buffer-pool-size={}", sizing.buffer_pool_bytes),
            // A redo log that holds the large transaction, as a production
            // server sized for such transactions would have.
            "--innodb-log-file-size=1073741824".to_string(),
            format!("--max-allowed-packet={}", sizing.max_allowed_packet_bytes),
            "--max-binlog-cache-size=17179869184".to_string(),
            "--max-connections=200".to_string(),
        ]);
        if let Some(cpus) = &sizing.cpus {
            cpus.pin(&mut command);
        }
        let server = Self::launch(Kind::MariaDb, command, dir, port, interrupt)?;
        Ok(server)
    }

    /// `exe serve` (a binlogd executable: this one or another build) with
    /// its own data directory, in `mode` (`sync_binlog = 1`, which engine
    /// mode ignores) with `innodb_flush_log_at_trx_commit = flush`.
    pub fn start_binlogd(
        exe: &Path,
        dir: &Path,
        sizing: &Sizing,
        mode: BinlogStorageEngine,
        flush: u64,
        port: u16,
        interrupt: &Interrupt,
    ) -> Result<Server, String> {
        let mut command = Command::new(exe);
        command.args([
            "serve".to_string(),
            format!("--datadir={}", dir.join("data").display()),
            format!("--port={port}"),
            "--bind=127.0.0.1".to_string(),
            "--sync-binlog=1".to_string(),
            format!("--innodb-flush-log-at-trx-commit={flush}"),
            format!("--binlog-storage-engine={}", mode.as_str()),
            format!("--binlogd-engine-memory-limit={}", sizing.engine_memory_limit_bytes),
            format!("--max-allowed-packet={}", sizing.max_allowed_packet_bytes),
            "--max-connections=200".to_string(),
        ]);
        if let Some(cpus) = &sizing.cpus {
            cpus.pin(&mut command);
        }
        Self::launch(Kind::Binlogd, command, dir, port, interrupt)
    }

    fn launch(kind: Kind, mut command: Command, dir: &Path, port: u16, interrupt: &Interrupt) -> Result<Server, String> {
        let log_path = dir.join(format!("{}.err", kind.name()));
        let log = std::fs::File::create(&log_path).map_err(|e| format!("creating {}: {e}", log_path.display()))?;
        command.stdin(Stdio::null()).stdout(log.try_clone().map_err(|e| e.to_string())?).stderr(log);
        let process = ChildGuard::spawn(command, kind.name())?;
        let mut server = Server { kind, port, log_path, process };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(status) = server.process.try_wait()? {
                return Err(format!("{} exited at start ({status}):\n{}", kind.name(), server.log_tail()));
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() && Client::new(port).query("SELECT 1").is_ok() {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} did not accept connections within {}s:\n{}",
                    kind.name(),
                    START_TIMEOUT.as_secs(),
                    server.log_tail()
                ));
            }
            interrupt.sleep(Duration::from_millis(200))?;
        }
    }

    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// Fails if the server has exited (with the end of its log).
    pub fn check_alive(&mut self) -> Result<(), String> {
        match self.process.try_wait()? {
            Some(status) => Err(format!("{} exited ({status}):\n{}", self.kind.name(), self.log_tail())),
            None => Ok(()),
        }
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        crate::common::log_tail(&self.log_path)
    }

    /// SIGTERM and wait for a clean exit.
    pub fn stop(mut self) -> Result<(), String> {
        let status = self.process.stop()?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("{} exited with {status} at shutdown:\n{}", self.kind.name(), self.log_tail()))
        }
    }
}
