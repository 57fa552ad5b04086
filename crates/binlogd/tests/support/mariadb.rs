//! A real MariaDB server (`mariadbd`, Debian package mariadb-server, which
//! `.ci/run` installs) in a temporary data directory on a free loopback
//! port; stopped with SIGTERM by its PID when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use testkit::{free_port, ChildGuard};

use super::wait_for_port;

pub struct MariaDb {
    /// Stopped before `dir` goes: fields drop in order.
    child: ChildGuard,
    pub port: u16,
    pub dir: tempfile::TempDir,
    /// The `mariadbd` options after the common ones, kept for `restart`.
    args: Vec<String>,
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl MariaDb {
    /// Installs a fresh data directory and starts `mariadbd` with `args`
    /// (`--server-id=...`, `--log-bin=...` or `--skip-log-bin`, ...).
    pub fn start(args: &[&str]) -> MariaDb {
        let dir = tempfile::tempdir().unwrap();
        let datadir = dir.path().join("data");
        // Each server its own temporary directory: installs running in
        // parallel in one /tmp collide on their temporary tables.
        let tmpdir = dir.path().join("tmp");
        std::fs::create_dir(&tmpdir).unwrap();
        let mut install = Command::new("mariadb-install-db");
        install.env("TMPDIR", &tmpdir);
        install.args(["--no-defaults", &format!("--datadir={}", datadir.display()), "--auth-root-authentication-method=normal"]);
        if running_as_root() {
            install.arg("--user=root");
        }
        let output = install.output().expect("run mariadb-install-db (apt-get install mariadb-server)");
        assert!(output.status.success(), "mariadb-install-db: {}", String::from_utf8_lossy(&output.stderr));
        let port = free_port();
        let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        let child = ChildGuard::new(spawn(dir.path(), port, &args));
        wait_for_port(port, "mariadbd");
        MariaDb { child, port, dir, args }
    }

    /// Where `--log-bin` files go when a test asks for them by this path.
    pub fn binlog_base(&self) -> PathBuf {
        self.dir.path().join("data").join("mariadb-bin")
    }

    /// SIGTERM (a clean shutdown), then start again on the same data
    /// directory, port and options.
    pub fn restart(&mut self) {
        self.child.terminate();
        self.child = ChildGuard::new(spawn(self.dir.path(), self.port, &self.args));
        wait_for_port(self.port, "mariadbd (restarted)");
    }

    pub fn mariadb(&self, sql: &str) -> Output {
        Command::new("mariadb").args(["-h127.0.0.1", &format!("-P{}", self.port), "-uroot", "-B", "-N", "-e", sql]).output().unwrap()
    }

    /// Runs `sql` as root; it must succeed. Returns stdout.
    pub fn query(&self, sql: &str) -> String {
        let output = self.mariadb(sql);
        assert!(output.status.success(), "mariadb: {sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    /// SHOW SLAVE STATUS as (field, value) pairs.
    pub fn slave_status(&self) -> Vec<(String, String)> {
        let output = Command::new("mariadb")
            .args(["-h127.0.0.1", &format!("-P{}", self.port), "-uroot", "-e", "SHOW SLAVE STATUS\\G"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.split_once(": "))
            .map(|(key, value)| (key.trim().to_string(), value.trim().to_string()))
            .collect()
    }

    pub fn status(&self, field: &str) -> String {
        self.slave_status().into_iter().find(|(key, _)| key == field).map(|(_, value)| value).unwrap_or_default()
    }

    /// Waits until this replica has executed its binlogd `source`'s binlog
    /// up to the source's SHOW MASTER STATUS; fails the test at a
    /// replication SQL or I/O error, or after three minutes, with the
    /// positions and the error log.
    pub fn wait_caught_up(&self, source: &super::Binlogd) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
        loop {
            let status = source.query("SHOW MASTER STATUS");
            let mut fields = status.split('\t');
            let (file, position) = (fields.next().unwrap().to_string(), fields.next().unwrap().to_string());
            let executed = (self.status("Relay_Master_Log_File"), self.status("Exec_Master_Log_Pos"));
            if executed == (file.clone(), position.clone()) {
                return;
            }
            let (sql_error, io_error) = (self.status("Last_SQL_Error"), self.status("Last_IO_Error"));
            assert!(
                sql_error.is_empty() && io_error.is_empty() && std::time::Instant::now() < deadline,
                "replica at {executed:?}, source at ({file}, {position}); SQL error: {sql_error}; IO error: {io_error}\n{}",
                self.error_log()
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
}

fn spawn(dir: &std::path::Path, port: u16, args: &[String]) -> Child {
    let mut command = Command::new("mariadbd");
    command.args([
        "--no-defaults",
        &format!("--datadir={}", dir.join("data").display()),
        &format!("--socket={}", dir.join("mariadb.sock").display()),
        &format!("--port={port}"),
        "--bind-address=127.0.0.1",
        "--innodb-buffer-pool-size=64M",
        &format!("--log-error={}", dir.join("error.log").display()),
        &format!("--pid-file={}", dir.join("mariadb.pid").display()),
        &format!("--tmpdir={}", dir.join("tmp").display()),
    ]);
    command.args(args);
    if running_as_root() {
        command.arg("--user=root");
    }
    command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start mariadbd")
}
