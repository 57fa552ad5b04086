//! One data directory, one server: a second `binlogd serve` on a directory
//! in use refuses before it reads or writes anything, naming the PID that
//! holds it; a start whose port is taken writes nothing either; the lock
//! goes with the holder however it ends (kill -9 included); the directory
//! serve creates is private.

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use support::{ServerProcess, BINLOGD};

/// Every file under `dir` but the lock file, with its size and mtime.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let metadata = entry.metadata().unwrap();
            if metadata.is_dir() {
                pending.push(entry.path());
            } else if entry.file_name() != "binlogd.lock" {
                files.insert(entry.path(), (metadata.size(), metadata.modified().unwrap()));
            }
        }
    }
    files
}

/// `binlogd serve` in the foreground; a refused start exits at once.
fn serve(datadir: &Path, port: u16) -> Output {
    Command::new(BINLOGD)
        .args(["serve", "--datadir", datadir.to_str().unwrap(), "--port", &port.to_string(), "--bind=127.0.0.1"])
        .output()
        .unwrap()
}

#[test]
fn a_second_server_on_a_data_directory_in_use_refuses_and_writes_nothing() {
    let mut first = ServerProcess::start();
    first.query(None, "CREATE DATABASE kept");
    let before = snapshot(&first.datadir);
    assert!(!before.is_empty());

    let second = serve(&first.datadir, 0);
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains(&format!("data directory {} is in use by another binlogd (PID {}", first.datadir.display(), first.pid())),
        "{stderr}"
    );
    assert_eq!(snapshot(&first.datadir), before, "the refused start wrote to the data directory");

    // The first server goes on, and the directory opens cleanly after it.
    first.query(None, "CREATE DATABASE after_the_refusal");
    first.restart();
    assert_eq!(first.query(None, "SHOW DATABASES LIKE 'after%'"), "after_the_refusal\n");
    assert_eq!(first.query(None, "SHOW DATABASES LIKE 'kept'"), "kept\n");
}

#[test]
fn a_start_whose_port_is_taken_writes_nothing() {
    let listening = ServerProcess::start();
    let mut stopped = ServerProcess::start();
    stopped.query(None, "CREATE DATABASE kept");
    assert!(stopped.stop().success());
    let before = snapshot(&stopped.datadir);

    let refused = serve(&stopped.datadir, listening.port);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(&format!("cannot listen on 127.0.0.1:{}", listening.port)), "{stderr}");
    assert_eq!(snapshot(&stopped.datadir), before, "the failed start wrote to the data directory");

    // A fresh directory gets nothing but the lock.
    let fresh = tempfile::tempdir().unwrap();
    let datadir = fresh.path().join("data");
    assert!(!serve(&datadir, listening.port).status.success());
    assert!(snapshot(&datadir).is_empty(), "{:?}", snapshot(&datadir));

    stopped.start_again(&[]);
    assert_eq!(stopped.query(None, "SHOW DATABASES LIKE 'kept'"), "kept\n");
}

#[test]
fn the_lock_goes_with_a_killed_server() {
    let mut server = ServerProcess::start();
    server.query(None, "CREATE DATABASE kept");
    server.kill();
    let lock = std::fs::read_to_string(server.datadir.join("binlogd.lock")).unwrap();
    assert_eq!(lock.trim(), server.pid().to_string(), "the lock file names its last holder");
    server.start_again(&[]);
    assert_eq!(server.query(None, "SHOW DATABASES LIKE 'kept'"), "kept\n");
}

#[test]
fn the_data_directory_and_lock_file_are_private() {
    let server = ServerProcess::start();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&server.datadir), 0o700);
    assert_eq!(mode(&server.datadir.join("binlogd.lock")), 0o600);
}
