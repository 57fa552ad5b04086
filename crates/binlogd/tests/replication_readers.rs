//! Many and interrupted readers of binlogd's binlog dump, with
//! python-mysql-replication in blocking auto-position mode:
//! - binlogd restarts while a reader is connected: the reader reconnects
//!   with the GTIDs it has and ends with every transaction exactly once;
//! - 16 readers at once while sessions commit: each receives every
//!   transaction exactly once, in commit order;
//! - KILL ends a dump at once.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{python_script, Binlogd};
use testkit::ChildGuard;

/// A blocking python reader; killed by PID if the test fails.
struct Reader {
    child: ChildGuard,
    lines: mpsc::Receiver<Value>,
}

impl Reader {
    fn start(server: &Binlogd, gtid_set: &str, transactions: usize) -> Reader {
        let mut child = Command::new("python3")
            .arg(python_script("read_rows.py"))
            .args([&server.port.to_string(), "gtid", gtid_set, "--blocking", "--stop-after", &transactions.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run python3 (pip install mysql-replication pymysql)");
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Reader { child: ChildGuard::new(child), lines }
    }

    /// Every line until the reader exits (it stops after its transactions).
    fn finish(mut self, timeout: Duration) -> Vec<Value> {
        let status = self.child.wait_timeout(timeout).expect("reader did not receive every transaction in time");
        assert!(status.success(), "reader failed");
        std::thread::sleep(Duration::from_millis(100));
        self.lines.try_iter().collect()
    }

    /// Waits until the reader has printed `count` commits; returns them.
    fn wait_commits(&self, seen: &mut Vec<Value>, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while seen.iter().filter(|line| line.get("commit").is_some()).count() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "reader stalled at {} commits", seen.len());
            if let Ok(line) = self.lines.recv_timeout(left) {
                seen.push(line);
            }
        }
    }
}

/// The commits (GTIDs) and inserted ids a reader printed, in order.
fn commits_and_ids(lines: &[Value]) -> (Vec<String>, Vec<i64>) {
    let mut commits = Vec::new();
    let mut ids = Vec::new();
    for line in lines {
        if let Some(gtid) = line.get("commit") {
            commits.push(gtid.as_str().unwrap().to_string());
        } else {
            for row in line["rows"].as_array().unwrap() {
                ids.push(row["id"].as_i64().unwrap());
            }
        }
    }
    (commits, ids)
}

fn setup(server: &Binlogd) -> String {
    server.query("CREATE DATABASE feed; CREATE TABLE feed.t (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))");
    server.server_uuid()
}

fn insert_range(server: &Binlogd, ids: std::ops::RangeInclusive<i64>) {
    let sql: String = ids.map(|id| format!("INSERT INTO feed.t VALUES ({id}, 'v{id}');")).collect();
    server.query(&sql);
}

#[test]
fn reader_reconnects_after_restart_without_loss_or_repeat() {
    let mut server = Binlogd::start(&[]);
    let uuid = setup(&server);
    let reader = Reader::start(&server, &format!("{uuid}:1-2"), 60);
    insert_range(&server, 1..=30);
    let mut seen = Vec::new();
    reader.wait_commits(&mut seen, 10);
    // Shutdown ends the waiting dump at once, not after the 5 s grace
    // period that cuts busy connections.
    let stop_started = Instant::now();
    server.stop();
    assert!(stop_started.elapsed() < Duration::from_secs(4), "shutdown took {:?} with a dump connected", stop_started.elapsed());
    server.restart();
    insert_range(&server, 31..=60);
    seen.extend(reader.finish(Duration::from_secs(120)));
    let (commits, ids) = commits_and_ids(&seen);
    let expected: Vec<String> = (3..=62).map(|gno| format!("{uuid}:{gno}")).collect();
    assert_eq!(commits, expected);
    assert_eq!(ids, (1..=60).collect::<Vec<i64>>());
}

#[test]
fn sixteen_readers_each_get_every_transaction_once_in_order() {
    let server = Binlogd::start(&[]);
    let uuid = setup(&server);
    let total = 200usize;
    let readers: Vec<Reader> = (0..16).map(|_| Reader::start(&server, &format!("{uuid}:1-2"), total)).collect();
    // Four sessions commit concurrently while the readers stream.
    std::thread::scope(|scope| {
        for writer in 0..4i64 {
            let server = &server;
            scope.spawn(move || insert_range(server, writer * 50 + 1..=writer * 50 + 50));
        }
    });
    let expected: Vec<String> = (3..=total as u64 + 2).map(|gno| format!("{uuid}:{gno}")).collect();
    for reader in readers {
        let lines = reader.finish(Duration::from_secs(120));
        let (commits, mut ids) = commits_and_ids(&lines);
        // GTIDs are numbered in binlog (commit) order.
        assert_eq!(commits, expected);
        ids.sort_unstable();
        assert_eq!(ids, (1..=total as i64).collect::<Vec<i64>>());
    }
}

/// Process-list ids of the connections running a dump.
fn dump_connections(server: &Binlogd) -> Vec<String> {
    server
        .query("SHOW PROCESSLIST")
        .lines()
        .filter(|line| line.contains("Binlog Dump"))
        .map(|line| line.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn kill_ends_a_waiting_dump_promptly() {
    let server = Binlogd::start(&[]);
    let uuid = setup(&server);
    let reader = Reader::start(&server, &format!("{uuid}:1-2"), 2);
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        if let Some(id) = dump_connections(&server).pop() {
            break id;
        }
        assert!(Instant::now() < deadline, "no dump connection appeared");
        std::thread::sleep(Duration::from_millis(50));
    };
    server.query(&format!("KILL {id}"));
    let killed = Instant::now();
    while dump_connections(&server).contains(&id) {
        assert!(killed.elapsed() < Duration::from_secs(2), "dump {id} still running 2 s after KILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The reader reconnects by itself and still gets what follows.
    insert_range(&server, 1..=2);
    let (commits, ids) = commits_and_ids(&reader.finish(Duration::from_secs(60)));
    assert_eq!(commits, [format!("{uuid}:3"), format!("{uuid}:4")]);
    assert_eq!(ids, [1, 2]);
}
