//! SQL through the `mariadb` command-line client, the same client for both
//! servers: one-off statements ([`Client::query`]), and a [`Session`] that
//! keeps one connection open across statements (a transaction) and times
//! each of them.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::servers::{ChildGuard, Interrupt};

/// Lines of output a session buffers before its reader thread waits.
const SESSION_LINES_MAX: usize = 1024;
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// How long the client may take to quit once its stdin is closed.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

fn command(port: u16) -> Command {
    let mut command = Command::new("mariadb");
    command.args(["-h127.0.0.1", &format!("-P{port}"), "-uroot", "--batch", "--skip-column-names"]);
    command
}

/// One-off statements on a new connection each.
pub struct Client {
    port: u16,
}

impl Client {
    pub fn new(port: u16) -> Client {
        Client { port }
    }

    /// Runs `sql` (one or more statements); their output, tab-separated.
    pub fn query(&self, sql: &str) -> Result<String, String> {
        let output =
            command(self.port).args(["-e", sql]).stdin(Stdio::null()).output().map_err(|e| format!("running the mariadb client: {e}"))?;
        if !output.status.success() {
            return Err(format!("{sql}: {}", String::from_utf8_lossy(&output.stderr).trim()));
        }
        String::from_utf8(output.stdout).map_err(|e| format!("{sql}: output is not UTF-8: {e}"))
    }
}

/// One connection held open; statements go in through the client's
/// stdin, each followed by `SELECT '<marker>'`, whose row in the output
/// says the statement has finished.
pub struct Session {
    process: ChildGuard,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    statements: u64,
}

impl Session {
    pub fn open(port: u16) -> Result<Session, String> {
        let mut command = command(port);
        // --unbuffered: flush the output after each statement, or the
        // marker would sit in the client's buffer.
        command.arg("--unbuffered").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut process = ChildGuard::spawn(command, "mariadb client")?;
        let stdin = process.take_stdin();
        let stdout = process.take_stdout();
        let stderr = process.take_stderr();
        let (sender, lines) = std::sync::mpsc::sync_channel(SESSION_LINES_MAX);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.take(1 << 20).read_to_string(&mut text);
            text
        });
        Ok(Session { process, stdin: Some(stdin), lines, stderr: Some(stderr), statements: 0 })
    }

    /// Runs one statement; returns how long it took and the lines it printed.
    pub fn execute(&mut self, sql: &str, interrupt: &Interrupt) -> Result<(Duration, Vec<String>), String> {
        self.statements += 1;
        let marker = format!("binlogd-bench-done-{}", self.statements);
        let stdin = self.stdin.as_mut().ok_or("the session is closed")?;
        let started = Instant::now();
        stdin
            .write_all(format!("{sql};\nSELECT '{marker}';\n").as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| self.failed(sql, &format!("writing to the client: {e}")))?;
        let mut output = Vec::new();
        loop {
            match self.lines.recv_timeout(POLL_INTERVAL) {
                Ok(line) if line == marker => return Ok((started.elapsed(), output)),
                Ok(line) => {
                    if output.len() < SESSION_LINES_MAX {
                        output.push(line);
                    }
                }
                Err(RecvTimeoutError::Timeout) => interrupt.check()?,
                Err(RecvTimeoutError::Disconnected) => return Err(self.failed(sql, "the client exited")),
            }
        }
    }

    /// The error for `sql`: the client's stderr (it exits at the first
    /// failed statement in batch mode) or `reason`.
    fn failed(&mut self, sql: &str, reason: &str) -> String {
        self.stdin = None;
        let _ = self.process.stop();
        let stderr = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
        let shown: String = sql.chars().take(200).collect();
        if stderr.trim().is_empty() {
            format!("{shown}: {reason}")
        } else {
            format!("{shown}: {}", stderr.trim())
        }
    }

    /// Closes stdin (the client quits) and waits for it.
    pub fn close(mut self) -> Result<(), String> {
        self.stdin = None;
        let deadline = Instant::now() + CLOSE_TIMEOUT;
        let status = loop {
            if let Some(status) = self.process.try_wait()? {
                break status;
            }
            if Instant::now() > deadline {
                break self.process.stop()?;
            }
            std::thread::sleep(POLL_INTERVAL);
        };
        if status.success() {
            Ok(())
        } else {
            let stderr = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
            Err(format!("the mariadb client exited with {status}: {}", stderr.trim()))
        }
    }
}
