//! Semi-synchronous replication (MySQL's protocol, AFTER_SYNC by default)
//! with binlogd as source and replica, with a MariaDB 10.11 replica of
//! binlogd, and with binlogd as the replica of a MariaDB source: the
//! status counters on both sides, the fall-back to asynchronous
//! replication when the replica stops and the way back when it returns,
//! and the failover guarantee: a source killed -9 at random moments
//! (during a promoted large transaction too) never acknowledged a commit
//! the replica lacks.

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use replica::{SourceAddress, SourceClient};
use support::mariadb::MariaDb;
use support::ServerProcess;

const REPL_PASSWORD: &str = "repl-pw";

fn start_source(extra: &[&str]) -> ServerProcess {
    let source = ServerProcess::start_with(extra);
    // mysql_native_password, as for a MariaDB replica of MySQL 8.4: MariaDB
    // has no caching_sha2_password client plugin.
    source.query(
        None,
        &format!("CREATE USER 'repl'@'%' IDENTIFIED WITH mysql_native_password BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'"),
    );
    source
}

/// A semi-synchronous replica (server_id 2) of the binlogd or MariaDB
/// server on `source_port`, by auto-position or by `file_position`.
fn start_replica(source_port: u16, file_position: Option<(&str, &str)>) -> ServerProcess {
    let replica = ServerProcess::start_with(&["--server-id=2", "--rpl-semi-sync-replica-enabled=ON"]);
    let positioning = match file_position {
        Some((file, position)) => format!("SOURCE_LOG_FILE='{file}', SOURCE_LOG_POS={position}"),
        None => "SOURCE_AUTO_POSITION=1".to_string(),
    };
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={source_port}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 {positioning}, SOURCE_CONNECT_RETRY=1, SOURCE_RETRY_COUNT=100000, SOURCE_HEARTBEAT_PERIOD=1;
             START REPLICA"
        ),
    );
    replica
}

/// SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%' as a map.
fn semi_sync_status(output: &str) -> BTreeMap<String, String> {
    output.lines().filter_map(|line| line.split_once('\t')).map(|(name, value)| (name.to_string(), value.to_string())).collect()
}

fn binlogd_status(server: &ServerProcess) -> BTreeMap<String, String> {
    semi_sync_status(&server.query(None, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'"))
}

fn number(status: &BTreeMap<String, String>, name: &str) -> u64 {
    status.get(name).unwrap_or_else(|| panic!("{name} in {status:?}")).parse().unwrap()
}

/// Polls `check` for up to `limit`.
fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_semi_sync_connected(source: &ServerProcess, replica: &ServerProcess) {
    wait_until("the replica to connect semi-synchronously", Duration::from_secs(30), || {
        binlogd_status(source)["Rpl_semi_sync_source_clients"] == "1" && binlogd_status(replica)["Rpl_semi_sync_replica_status"] == "ON"
    });
}

fn root_client(port: u16) -> Option<SourceClient> {
    let address = SourceAddress { host: "127.0.0.1".into(), port, user: "root".into(), password: String::new() };
    SourceClient::connect(&address, Duration::from_secs(30)).ok()
}

/// Commits `sql` on one connection and says how long it took.
fn timed_commit(client: &mut SourceClient, sql: &str) -> Duration {
    let started = Instant::now();
    client.query(sql).unwrap_or_else(|error| panic!("{sql}: {error:?}"));
    started.elapsed()
}

#[test]
fn a_binlogd_replica_acknowledges_commits_and_the_source_falls_back_while_it_is_stopped() {
    let source = start_source(&["--rpl-semi-sync-source-enabled=ON", "--rpl-semi-sync-source-timeout=1500"]);
    assert_eq!(
        source.query(None, "SELECT @@global.rpl_semi_sync_source_enabled, @@global.rpl_semi_sync_master_timeout, @@global.rpl_semi_sync_source_wait_point").trim(),
        "1\t1500\tAFTER_SYNC"
    );
    source.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT NOT NULL, PRIMARY KEY (id))");
    let replica = start_replica(source.port, None);
    wait_semi_sync_connected(&source, &replica);

    // Every commit waits for the replica's ack, which comes at once.
    let mut client = root_client(source.port).expect("connect");
    let before = binlogd_status(&source);
    for id in 1..=20 {
        let took = timed_commit(&mut client, &format!("INSERT INTO d.t VALUES ({id})"));
        assert!(took < Duration::from_millis(1000), "commit {id} took {took:?}");
    }
    let after = binlogd_status(&source);
    assert_eq!(after["Rpl_semi_sync_source_status"], "ON");
    assert_eq!(number(&after, "Rpl_semi_sync_source_yes_tx") - number(&before, "Rpl_semi_sync_source_yes_tx"), 20, "{after:?}");
    // The DDL before the replica connected waited the timeout and counts
    // as not acknowledged; nothing since.
    let (no_tx, no_times) = (number(&before, "Rpl_semi_sync_source_no_tx"), number(&before, "Rpl_semi_sync_source_no_times"));
    assert_eq!(number(&after, "Rpl_semi_sync_source_no_tx"), no_tx, "{after:?}");
    assert!(number(&after, "Rpl_semi_sync_source_tx_avg_wait_time") > 0, "{after:?}");
    assert!(number(&after, "Rpl_semi_sync_source_net_avg_wait_time") > 0, "{after:?}");
    assert_eq!(after["Rpl_semi_sync_master_yes_tx"], after["Rpl_semi_sync_source_yes_tx"]);

    // The replica stops: the next commit waits the timeout and falls back;
    // later ones do not wait, and all count as not acknowledged.
    replica.query(None, "STOP REPLICA");
    wait_until("the source to see the replica go", Duration::from_secs(10), || {
        binlogd_status(&source)["Rpl_semi_sync_source_clients"] == "0"
    });
    let took = timed_commit(&mut client, "INSERT INTO d.t VALUES (21)");
    assert!(took >= Duration::from_millis(1400) && took < Duration::from_secs(10), "the first commit without a replica took {took:?}");
    let took = timed_commit(&mut client, "INSERT INTO d.t VALUES (22)");
    assert!(took < Duration::from_millis(1000), "after the fall-back a commit took {took:?}");
    let off = binlogd_status(&source);
    assert_eq!(off["Rpl_semi_sync_source_status"], "OFF");
    assert_eq!(number(&off, "Rpl_semi_sync_source_no_tx"), no_tx + 2, "{off:?}");
    assert_eq!(number(&off, "Rpl_semi_sync_source_no_times"), no_times + 1, "{off:?}");

    // Back: once the replica has acknowledged the last commit the source
    // is semi-synchronous again and commits count as acknowledged.
    replica.query(None, "START REPLICA");
    wait_until("semi-sync to switch back on", Duration::from_secs(30), || binlogd_status(&source)["Rpl_semi_sync_source_status"] == "ON");
    let yes_before = number(&binlogd_status(&source), "Rpl_semi_sync_source_yes_tx");
    timed_commit(&mut client, "INSERT INTO d.t VALUES (23)");
    let back = binlogd_status(&source);
    assert_eq!(number(&back, "Rpl_semi_sync_source_yes_tx"), yes_before + 1, "{back:?}");
    assert_eq!(number(&back, "Rpl_semi_sync_source_no_tx"), no_tx + 2, "{back:?}");

    // SET GLOBAL under either name; OFF releases commits at once.
    source.query(None, "SET GLOBAL rpl_semi_sync_master_enabled = OFF");
    assert_eq!(source.query(None, "SELECT @@global.rpl_semi_sync_source_enabled").trim(), "0");
    assert_eq!(binlogd_status(&source)["Rpl_semi_sync_source_status"], "OFF");
    wait_until("the replica to apply everything", Duration::from_secs(30), || {
        replica.query(None, "SELECT COUNT(*) FROM d.t").trim() == "23"
    });
}

/// A small deterministic generator (no dependency): the test prints its
/// seed so a failure can be repeated.
struct Random(u64);

impl Random {
    fn next_millis(&mut self, low: u64, high: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        low + self.0 % (high - low)
    }
}

/// Commits one row per transaction in a loop, reconnecting whenever the
/// source is down, and records each id whose commit returned OK.
fn commit_loop(port: u16, stop: Arc<AtomicBool>, acknowledged: Arc<Mutex<Vec<u64>>>, first_id: u64) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut id = first_id;
        let mut client = None;
        while !stop.load(Ordering::Acquire) {
            let Some(connection) = client.as_mut() else {
                client = root_client(port);
                if client.is_none() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                continue;
            };
            match connection.query(&format!("INSERT INTO d.t VALUES ({id}, 'x')")) {
                Ok(_) => acknowledged.lock().push(id),
                Err(_) => client = None,
            }
            // An id is never reused, whatever happened to its commit.
            id += 1;
        }
        id
    })
}

/// Waits until the replica has applied everything it received (its
/// applier's count stops short of nothing) and returns its rows' ids.
fn replica_ids_once_applied(replica: &ServerProcess) -> std::collections::BTreeSet<u64> {
    let counters = || {
        let status = semi_sync_status(&replica.query(None, "SHOW GLOBAL STATUS LIKE 'Replica_transactions_%'"));
        (number(&status, "Replica_transactions_received"), number(&status, "Replica_transactions_applied"))
    };
    wait_until("the replica to apply what it received", Duration::from_secs(60), || {
        let (received, applied) = counters();
        received == applied
    });
    replica.query(None, "SELECT id FROM d.t").lines().map(|line| line.trim().parse().unwrap()).collect()
}

#[test]
fn a_source_killed_at_random_moments_never_acknowledged_a_commit_the_replica_lacks() {
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("seed {seed}");
    let mut random = Random(seed);
    let mut source = start_source(&[
        "--rpl-semi-sync-source-enabled=ON",
        "--rpl-semi-sync-source-timeout=60000",
        "--binlog-large-transaction-optimization-threshold=10485760",
    ]);
    source.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id BIGINT NOT NULL, note LONGTEXT, PRIMARY KEY (id))");
    let replica = start_replica(source.port, None);
    wait_semi_sync_connected(&source, &replica);

    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let mut next_id = 1;
    let kills = 6;
    for kill in 0..kills {
        let stop = Arc::new(AtomicBool::new(false));
        let committer = commit_loop(source.port, stop.clone(), acknowledged.clone(), next_id);
        // One round kills during a promoted large transaction (12 MB, past
        // the 10 MiB threshold): once its COMMIT is sent, within the time
        // its promotion and ack take. If the commit returned, its rows
        // must be on the replica like any other's.
        let committing = Arc::new(AtomicBool::new(false));
        let large = (kill == 2).then(|| {
            let (port, acknowledged, committing) = (source.port, acknowledged.clone(), committing.clone());
            let id = 1_000_000_000 + kill;
            std::thread::spawn(move || {
                let Some(mut client) = root_client(port) else { return };
                let mut statements = vec!["BEGIN".to_string()];
                statements.extend((0..24).map(|part| format!("INSERT INTO d.t VALUES ({}, REPEAT('L', 500000))", id + part)));
                for statement in &statements {
                    if client.query(statement).is_err() {
                        return;
                    }
                }
                committing.store(true, Ordering::Release);
                if client.query("COMMIT").is_ok() {
                    acknowledged.lock().extend((0..24).map(|part| id + part));
                }
            })
        });
        if large.is_some() {
            wait_until("the large transaction's COMMIT", Duration::from_secs(120), || committing.load(Ordering::Acquire));
            std::thread::sleep(Duration::from_millis(random.next_millis(1, 150)));
        } else {
            std::thread::sleep(Duration::from_millis(random.next_millis(300, 1500)));
        }
        source.kill();
        stop.store(true, Ordering::Release);
        next_id = committer.join().unwrap();
        if let Some(large) = large {
            large.join().unwrap();
        }

        // The failover check, while the source is down: every commit the
        // source acknowledged is on the replica.
        let on_replica = replica_ids_once_applied(&replica);
        let acknowledged_now = acknowledged.lock().clone();
        let missing: Vec<u64> = acknowledged_now.iter().copied().filter(|id| !on_replica.contains(id)).collect();
        assert!(missing.is_empty(), "seed {seed}, kill {kill}: acknowledged but not on the replica: {missing:?}");
        eprintln!("kill {kill}: {} commits acknowledged so far, all on the replica", acknowledged_now.len());

        source.start_again(&[]);
        wait_semi_sync_connected(&source, &replica);
    }
    let acknowledged = acknowledged.lock().clone();
    assert!(acknowledged.len() >= kills as usize, "too few commits returned: {}", acknowledged.len());
}

#[test]
fn a_mariadb_replica_acknowledges_binlogd_and_both_count_it() {
    let source = start_source(&["--rpl-semi-sync-source-enabled=ON", "--rpl-semi-sync-source-timeout=5000"]);
    source.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id INT NOT NULL, PRIMARY KEY (id))");
    let replica = MariaDb::start(&["--server-id=2", "--skip-log-bin", "--rpl-semi-sync-slave-enabled=ON"]);
    replica.query(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl', MASTER_PASSWORD='{REPL_PASSWORD}',
             MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4, MASTER_HEARTBEAT_PERIOD=1;
         START SLAVE;",
        source.port
    ));
    wait_until("MariaDB to replicate semi-synchronously", Duration::from_secs(30), || {
        semi_sync_status(&replica.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_slave_status'")).get("Rpl_semi_sync_slave_status")
            == Some(&"ON".to_string())
            && binlogd_status(&source)["Rpl_semi_sync_source_clients"] == "1"
    });
    let mut client = root_client(source.port).expect("connect");
    // The DDL before MariaDB connected waited the timeout: counted apart.
    let before = binlogd_status(&source);
    for id in 1..=10 {
        let took = timed_commit(&mut client, &format!("INSERT INTO d.t VALUES ({id})"));
        assert!(took < Duration::from_millis(2500), "commit {id} took {took:?}: {}", replica.error_log());
    }
    let status = binlogd_status(&source);
    assert_eq!(status["Rpl_semi_sync_source_status"], "ON", "{status:?}");
    assert_eq!(number(&status, "Rpl_semi_sync_source_yes_tx") - number(&before, "Rpl_semi_sync_source_yes_tx"), 10, "{status:?}");
    assert_eq!(number(&status, "Rpl_semi_sync_source_no_tx"), number(&before, "Rpl_semi_sync_source_no_tx"), "{status:?}");
    wait_until("MariaDB to apply the rows", Duration::from_secs(30), || replica.query("SELECT COUNT(*) FROM d.t").trim() == "10");
    assert_eq!(replica.status("Last_IO_Error"), "");
}

#[test]
fn binlogd_acknowledges_a_mariadb_source_and_both_count_it() {
    let source = MariaDb::start(&[
        "--server-id=1",
        "--log-bin=mariadb-bin",
        "--binlog-format=ROW",
        "--rpl-semi-sync-master-enabled=ON",
        "--rpl-semi-sync-master-timeout=5000",
    ]);
    source.query(&format!(
        "CREATE USER 'repl'@'localhost' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'localhost'"
    ));
    let start = source.query("SHOW MASTER STATUS");
    let mut fields = start.split('\t');
    let (file, position) = (fields.next().unwrap().to_string(), fields.next().unwrap().to_string());
    let replica = start_replica(source.port, Some((&file, &position)));
    let source_status = || semi_sync_status(&source.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_%'"));
    wait_until("binlogd to replicate semi-synchronously", Duration::from_secs(30), || {
        source_status()["Rpl_semi_sync_master_clients"] == "1" && binlogd_status(&replica)["Rpl_semi_sync_replica_status"] == "ON"
    });
    // MariaDB waited its timeout for its own first commits, before
    // binlogd connected: counted apart.
    let before = source_status();
    source.query("CREATE DATABASE d; CREATE TABLE d.t (id INT NOT NULL, PRIMARY KEY (id))");
    for id in 1..=10 {
        let started = Instant::now();
        source.query(&format!("INSERT INTO d.t VALUES ({id})"));
        assert!(started.elapsed() < Duration::from_millis(2500), "commit {id} took {:?}", started.elapsed());
    }
    let status = source_status();
    assert_eq!(status["Rpl_semi_sync_master_status"], "ON", "{status:?}");
    assert_eq!(number(&status, "Rpl_semi_sync_master_yes_tx") - number(&before, "Rpl_semi_sync_master_yes_tx"), 12, "{status:?}");
    assert_eq!(number(&status, "Rpl_semi_sync_master_no_tx"), number(&before, "Rpl_semi_sync_master_no_tx"), "{status:?}");
    // MariaDB's own measure of how long its commits waited for binlogd's
    // acks (µs): an ack comes as soon as the relay log holds the event,
    // and the dump goes on (MariaDB restarts its packet numbering after
    // each event that asks for an ack; a receiver that took that for a
    // broken stream would reconnect and ack a retry period later).
    let waits = number(&status, "Rpl_semi_sync_master_tx_waits") - number(&before, "Rpl_semi_sync_master_tx_waits");
    let waited_us = number(&status, "Rpl_semi_sync_master_tx_wait_time") - number(&before, "Rpl_semi_sync_master_tx_wait_time");
    // A commit whose ack came before it began to wait is not counted as
    // a wait: at most one per acknowledged transaction.
    assert!(waits <= 12, "{status:?}");
    if let Some(average_us) = waited_us.checked_div(waits) {
        assert!(average_us < 500_000, "MariaDB waited {average_us} µs per transaction on average: {status:?}");
    }
    let log = std::fs::read_to_string(&replica.log).unwrap_or_default();
    assert!(!log.contains("replica receiver retries"), "the receiver reconnected: {log}");
    wait_until("binlogd to apply the rows", Duration::from_secs(30), || replica.query(None, "SELECT COUNT(*) FROM d.t").trim() == "10");
}

/// `(yes_tx, no_tx, no_times)` of the source's status.
fn acknowledged_counts(source: &ServerProcess) -> (u64, u64, u64) {
    let status = binlogd_status(source);
    (
        number(&status, "Rpl_semi_sync_source_yes_tx"),
        number(&status, "Rpl_semi_sync_source_no_tx"),
        number(&status, "Rpl_semi_sync_source_no_times"),
    )
}

#[test]
fn the_engine_integrated_binlog_waits_for_the_ack_and_a_killed_source_acknowledged_nothing_the_replica_lacks() {
    for wait_point in ["AFTER_SYNC", "AFTER_COMMIT"] {
        // Enabled once the replica is there: the DDL before it would wait
        // the whole timeout.
        let mut source = start_source(&[
            "--binlog-storage-engine=engine",
            "--rpl-semi-sync-source-timeout=60000",
            &format!("--rpl-semi-sync-source-wait-point={wait_point}"),
        ]);
        assert_eq!(
            source.query(None, "SELECT @@binlog_storage_engine, @@rpl_semi_sync_source_wait_point").trim(),
            format!("engine\t{wait_point}")
        );
        source.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id BIGINT NOT NULL, note LONGTEXT, PRIMARY KEY (id))");
        let replica = start_replica(source.port, None);
        wait_semi_sync_connected(&source, &replica);
        source.query(None, "SET GLOBAL rpl_semi_sync_source_enabled = ON");

        // Each commit waited for its own ack: counted as acknowledged.
        let mut client = root_client(source.port).expect("connect");
        let (yes_before, no_before, _) = acknowledged_counts(&source);
        for id in 1..=20 {
            timed_commit(&mut client, &format!("INSERT INTO d.t VALUES ({id}, 'x')"));
        }
        let (yes_after, no_after, _) = acknowledged_counts(&source);
        assert_eq!((yes_after - yes_before, no_after), (20, no_before), "{wait_point}");
        assert_eq!(binlogd_status(&source)["Rpl_semi_sync_source_status"], "ON");

        // Killed -9 while commits flow: every commit that returned is on
        // the replica.
        let acknowledged = Arc::new(Mutex::new((1..=20).collect::<Vec<u64>>()));
        let stop = Arc::new(AtomicBool::new(false));
        let committers: Vec<_> =
            (0..4).map(|n| commit_loop(source.port, stop.clone(), acknowledged.clone(), 1_000 + n * 1_000_000)).collect();
        wait_until("commits to flow", Duration::from_secs(30), || acknowledged.lock().len() > 200);
        source.kill();
        stop.store(true, Ordering::Release);
        for committer in committers {
            committer.join().unwrap();
        }
        let on_replica = replica_ids_once_applied(&replica);
        let acknowledged = acknowledged.lock().clone();
        let missing: Vec<u64> = acknowledged.iter().copied().filter(|id| !on_replica.contains(id)).collect();
        assert!(missing.is_empty(), "{wait_point}: acknowledged but not on the replica: {missing:?}");
        eprintln!("{wait_point}: {} commits acknowledged, all on the replica", acknowledged.len());

        // Recovery rebuilds the files from redo; the replica catches up and
        // the source waits for it again.
        source.start_again(&[]);
        wait_semi_sync_connected(&source, &replica);
        source.query(None, "SET GLOBAL rpl_semi_sync_source_enabled = ON");
        let mut client = root_client(source.port).expect("connect");
        let (yes_before, _, _) = acknowledged_counts(&source);
        timed_commit(&mut client, "INSERT INTO d.t VALUES (999999999, 'after')");
        assert_eq!(acknowledged_counts(&source).0, yes_before + 1, "{wait_point}");
        assert!(
            replica.query(None, "SELECT COUNT(*) FROM d.t WHERE id = 999999999").trim() == "1",
            "{wait_point}: the last commit returned before the replica had it"
        );
    }
}

#[test]
fn a_replica_killed_9_makes_the_source_fall_back_after_the_timeout_and_return_once_it_caught_up() {
    let source = start_source(&["--rpl-semi-sync-source-enabled=ON", "--rpl-semi-sync-source-timeout=1000"]);
    source.query(None, "CREATE DATABASE d; CREATE TABLE d.t (id BIGINT NOT NULL, note LONGTEXT, PRIMARY KEY (id))");
    let mut replica = start_replica(source.port, None);
    wait_semi_sync_connected(&source, &replica);
    let (_, no_tx, no_times) = acknowledged_counts(&source);

    // Commits flow while the replica is killed -9: the commit in flight
    // waits the timeout, then the source is asynchronous and does not wait.
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let committer = commit_loop(source.port, stop.clone(), acknowledged.clone(), 1);
    wait_until("commits to flow", Duration::from_secs(30), || acknowledged.lock().len() > 50);
    let yes_before_kill = acknowledged_counts(&source).0;
    assert!(yes_before_kill > 50, "{:?}", binlogd_status(&source));
    replica.kill();
    wait_until("the source to fall back", Duration::from_secs(30), || binlogd_status(&source)["Rpl_semi_sync_source_status"] == "OFF");
    let count_at_fall_back = acknowledged.lock().len();
    wait_until("commits to go on without waiting", Duration::from_secs(30), || acknowledged.lock().len() > count_at_fall_back + 50);
    stop.store(true, Ordering::Release);
    committer.join().unwrap();
    let (yes_off, no_tx_off, no_times_off) = acknowledged_counts(&source);
    assert_eq!(no_times_off, no_times + 1, "{:?}", binlogd_status(&source));
    assert!(no_tx_off > no_tx + 50, "{:?}", binlogd_status(&source));
    assert_eq!(binlogd_status(&source)["Rpl_semi_sync_source_clients"], "0");

    // The replica restarts (its crash-safe relay log and positions),
    // catches up, and the source is semi-synchronous again.
    replica.start_again(&[]);
    wait_until("semi-sync to switch back on", Duration::from_secs(60), || binlogd_status(&source)["Rpl_semi_sync_source_status"] == "ON");
    let mut client = root_client(source.port).expect("connect");
    for id in 1..=5 {
        timed_commit(&mut client, &format!("INSERT INTO d.t VALUES ({}, 'back')", 1_000_000_000 + id));
    }
    let (yes_back, no_tx_back, _) = acknowledged_counts(&source);
    assert_eq!(yes_back, yes_off + 5, "{:?}", binlogd_status(&source));
    assert_eq!(no_tx_back, no_tx_off, "{:?}", binlogd_status(&source));
    let on_replica = replica_ids_once_applied(&replica);
    let missing: Vec<u64> = acknowledged.lock().iter().copied().filter(|id| !on_replica.contains(id)).collect();
    assert!(missing.is_empty(), "committed but never replicated: {missing:?}");
    assert!((1..=5).all(|id| on_replica.contains(&(1_000_000_000 + id))));
}
