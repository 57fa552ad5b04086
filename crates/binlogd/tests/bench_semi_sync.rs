//! `binlogd bench semi-sync` end to end, small: a source and a
//! semi-synchronous replica it starts itself, one round of 3 s per mode.
//! The numbers are not checked (a shared machine), only that each mode is
//! what it says: the ON run's commits were acknowledged and none fell
//! back, the OFF run waited for nothing, and the files were written and
//! the run directories removed.

use std::process::Command;

const BINLOGD: &str = env!("CARGO_BIN_EXE_binlogd");

#[test]
fn bench_semi_sync_measures_both_modes_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let output = Command::new(BINLOGD)
        .args(["bench", "semi-sync", "--dir", &path("runs"), "--seconds", "3", "--rounds", "1", "--threads", "2"])
        .args(["--tables", "2", "--table-size", "1000", "--json", "--csv", &path("s.csv"), "--plot", &path("s.png")])
        .output()
        .expect("run binlogd bench semi-sync (sysbench must be installed)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "bench failed: {stderr}");
    let json: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{json}");
    for run in runs {
        assert!(run["tps"].as_f64().unwrap() > 0.0, "{run}");
        let (p50, p99) = (run["latency_ms_p50"].as_f64().unwrap(), run["latency_ms_p99"].as_f64().unwrap());
        assert!(p50 > 0.0 && p50 <= p99 * 1.01, "{run}");
        if run["semi_sync"] == true {
            assert!(run["yes_tx"].as_u64().unwrap() > 0, "{run}");
            assert_eq!(run["no_tx"].as_u64(), Some(0), "{run}");
            assert_eq!(run["status_on_at_end"], true, "{run}");
        } else {
            assert_eq!((run["yes_tx"].as_u64(), run["no_tx"].as_u64()), (Some(0), Some(0)), "{run}");
        }
    }
    assert!(json["p50_ratio"].as_f64().unwrap() > 0.0, "{json}");
    let csv = std::fs::read_to_string(path("s.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(std::fs::metadata(path("s.png")).unwrap().len() > 0);
    assert!(!dir.path().join("runs").exists(), "the run directories are removed");
}
