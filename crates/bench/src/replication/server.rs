//! The `binlogd serve` processes of the replication benchmark: each runs
//! this executable on its own data directory, binds port 0 on 127.0.0.1
//! and is found by the port its "ready for connections address=" log line
//! names (picking a free port first races with every other socket on the
//! machine). A [`ServerProcess`] is held by the side-by-side benchmark's
//! [`ChildGuard`], which stops it by its PID when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::super::side_by_side::servers::{ChildGuard, Interrupt};
use super::connection::Connection;

/// How long a server may take to print its ready line (recovery of a
/// copied data directory included).
const START_TIMEOUT: Duration = Duration::from_secs(120);
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Log bytes read when looking for the ready line: a server logs a few
/// lines at start, so this is never reached in practice, and a runaway
/// log cannot exhaust memory. (Errors quote the log's end:
/// `common::log_tail`.)
const LOG_BYTES_MAX: u64 = 4 << 20;

pub struct ServerProcess {
    /// `source`, `template` or the run's name, for messages.
    pub name: String,
    pub port: u16,
    log_path: PathBuf,
    process: ChildGuard,
}

impl ServerProcess {
    /// Starts `binlogd serve` on `dir/data` (made by the server unless a
    /// copied one is there) with `options` (`--name=value`), logging to
    /// `dir/binlogd.err`, and waits until it is ready.
    pub fn start(name: &str, dir: &Path, options: &[String], interrupt: &Interrupt) -> Result<ServerProcess, String> {
        let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
        let datadir = dir.join("data");
        let log_path = dir.join("binlogd.err");
        let log = std::fs::File::create(&log_path).map_err(|e| format!("creating {}: {e}", log_path.display()))?;
        let mut command = Command::new(exe);
        command
            .arg("serve")
            .arg(format!("--datadir={}", datadir.display()))
            .args(["--port=0", "--bind=127.0.0.1", "--max-connections=200"])
            .args(options)
            // The server logs its ready line at info level whatever the
            // benchmark's own RUST_LOG says.
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        let process = ChildGuard::spawn(command, &format!("binlogd serve ({name})"))?;
        let mut server = ServerProcess { name: name.to_string(), port: 0, log_path, process };
        server.port = server.wait_ready(interrupt)?;
        Ok(server)
    }

    fn wait_ready(&mut self, interrupt: &Interrupt) -> Result<u16, String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(port) = ready_port(&self.read_log()) {
                return Ok(port);
            }
            if let Some(status) = self.process.try_wait()? {
                return Err(format!("binlogd serve ({}) exited at start ({status}):\n{}", self.name, self.log_tail()));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "binlogd serve ({}) was not ready within {}s:\n{}",
                    self.name,
                    START_TIMEOUT.as_secs(),
                    self.log_tail()
                ));
            }
            interrupt.sleep(POLL_INTERVAL)?;
        }
    }

    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// A new connection as root (no password).
    pub fn connect(&self) -> Result<Connection, String> {
        Connection::open(&self.name, self.port, "root", "")
    }

    /// Fails if the server has exited (with the end of its log).
    pub fn check_alive(&mut self) -> Result<(), String> {
        match self.process.try_wait()? {
            Some(status) => Err(format!("binlogd serve ({}) exited ({status}):\n{}", self.name, self.log_tail())),
            None => Ok(()),
        }
    }

    fn read_log(&self) -> String {
        use std::io::Read;
        let mut text = String::new();
        if let Ok(file) = std::fs::File::open(&self.log_path) {
            let _ = file.take(LOG_BYTES_MAX).read_to_string(&mut text);
        }
        text
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
            Err(format!("binlogd serve ({}) exited with {status} at shutdown:\n{}", self.name, self.log_tail()))
        }
    }
}

/// The port of the first "ready for connections ... address=HOST:PORT" line.
fn ready_port(log: &str) -> Option<u16> {
    let line = log.lines().find(|line| line.contains("ready for connections"))?;
    let address = line.split_whitespace().find_map(|word| word.strip_prefix("address="))?;
    address.rsplit(':').next()?.parse().ok()
}

/// Copies the directory tree `from` to `to` (files, directories; a
/// stopped server's data directory has nothing else), so each measured
/// replica starts from the same prepared state.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", from.display()))?;
        let kind = entry.file_type().map_err(|e| format!("reading {}: {e}", entry.path().display()))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(|e| format!("copying {} to {}: {e}", entry.path().display(), target.display()))?;
        } else {
            return Err(format!("{}: neither a file nor a directory; not copied", entry.path().display()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_comes_from_the_ready_line() {
        let log = "2026-11-30T07:00:00Z  INFO binlogd::serve: opening\n\
                   2026-11-30T07:00:01Z  INFO binlogd::serve: ready for connections address=127.0.0.1:40123 version=8.4.0-binlogd\n";
        assert_eq!(ready_port(log), Some(40123));
        assert_eq!(ready_port("2026-11-30T07:00:00Z  INFO binlogd::serve: opening\n"), None);
    }

    #[test]
    fn copy_tree_copies_files_and_directories() {
        let from = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(from.path().join("binlog")).unwrap();
        std::fs::write(from.path().join("binlog/binlog.000001"), b"\xfebin").unwrap();
        std::fs::write(from.path().join("redo.log"), b"redo").unwrap();
        let to = tempfile::tempdir().unwrap();
        copy_tree(from.path(), &to.path().join("copy")).unwrap();
        assert_eq!(std::fs::read(to.path().join("copy/binlog/binlog.000001")).unwrap(), b"\xfebin");
        assert_eq!(std::fs::read(to.path().join("copy/redo.log")).unwrap(), b"redo");
    }
}
