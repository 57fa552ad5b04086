//! `binlogd bench replication` end to end, small: a source and replicas
//! it starts itself, sysbench for 3 s, one worker count, both relay logs
//! and both coordinators. The numbers are not checked (a shared machine),
//! only that every part measured what it says: the receiver fetched every
//! transaction of the workload without blocking, the applier applied them
//! all (and its coordinator and worker threads used some CPU doing it, in
//! both coordinator modes), the end-to-end replica caught up, and the
//! files were written and the run directories removed.

use std::process::Command;

const BINLOGD: &str = env!("CARGO_BIN_EXE_binlogd");

#[test]
fn bench_replication_measures_every_part_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let output = Command::new(BINLOGD)
        .args([
            "bench",
            "replication",
            "--dir",
            &path("runs"),
            "--seconds",
            "3",
            "--workers",
            "2",
            "--threads",
            "4",
            "--tables",
            "2",
            "--table-size",
            "1000",
        ])
        .args(["--replica-option", "sync_binlog=0", "--replica-option", "innodb_flush_log_at_trx_commit=2", "--json"])
        .args(["--csv", &path("r.csv"), "--series-csv", &path("lag.csv"), "--plot", &path("r.png"), "--lag-plot", &path("lag.png")])
        .output()
        .expect("run binlogd bench replication (sysbench must be installed)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "bench failed: {stderr}");
    let json: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));

    let transactions = json["workload"]["transactions"].as_u64().unwrap();
    assert!(transactions > 0, "{json}");
    let receive = json["receive"].as_array().unwrap();
    let apply = json["apply"].as_array().unwrap();
    assert_eq!((receive.len(), apply.len()), (4, 4), "memory/file x queue/event-scan at 2 workers: {json}");
    for row in receive {
        assert_eq!(row["transactions"].as_u64(), Some(transactions), "the receiver fetched the whole workload: {row}");
        assert_eq!(row["receiver_blocked_ms"].as_u64(), Some(0), "the ring holds the workload: {row}");
        assert!(row["bytes"].as_u64().unwrap() > 0 && row["mb_per_second"].as_f64().unwrap() > 0.0, "{row}");
    }
    let coordinators: Vec<&str> = apply.iter().map(|row| row["coordinator"].as_str().unwrap()).collect();
    assert_eq!(coordinators, ["queue", "event-scan", "queue", "event-scan"]);
    for row in apply {
        assert_eq!(row["transactions"].as_u64(), Some(transactions), "the applier applied the whole workload: {row}");
        assert_eq!(row["workers"].as_u64(), Some(2));
        // Every transaction passes through the coordinator thread and is
        // applied by a worker thread of the replica process: both used CPU.
        for column in ["coordinator_cpu_us_per_transaction", "workers_cpu_us_per_transaction"] {
            assert!(row[column].as_f64().is_some_and(|us| us > 0.0), "{column}: {row}");
        }
    }
    assert_eq!(json["ratios"]["coordinator_cpu_event_scan_over_queue"].as_array().map(Vec::len), Some(2), "{json}");
    let end_to_end = json["end_to_end"].as_array().unwrap();
    assert_eq!(end_to_end.len(), 4, "{json}");
    for row in end_to_end {
        assert!(row["source_tps"].as_f64().unwrap() > 0.0 && row["replica_apply_tps"].as_f64().unwrap() > 0.0, "{row}");
    }
    assert!(!json["lag_samples"].as_array().unwrap().is_empty());
    assert!(json["ratios"]["receiver_memory_over_file"].as_f64().unwrap() > 0.0);

    let csv = std::fs::read_to_string(path("r.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4 + 4 + 4, "{csv}");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|column| *column == name).unwrap_or_else(|| panic!("no {name} column: {csv}"));
    let cpu_columns = [column("coordinator_cpu_us_per_transaction"), column("workers_cpu_us_per_transaction")];
    for line in csv.lines().filter(|line| line.starts_with("apply,")) {
        let cells: Vec<&str> = line.split(',').collect();
        for &index in &cpu_columns {
            assert!(cells[index].parse::<f64>().is_ok_and(|us| us > 0.0), "{}: {line}", header[index]);
        }
    }
    for png in ["r.png", "lag.png"] {
        assert!(std::fs::read(path(png)).unwrap().starts_with(b"\x89PNG"), "{png}");
    }
    assert!(!dir.path().join("runs").exists(), "the run directories are removed: {stderr}");
}
