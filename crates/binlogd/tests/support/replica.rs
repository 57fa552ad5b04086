//! What the replica tests read of a binlogd server: SHOW REPLICA STATUS,
//! SHOW GLOBAL STATUS counters and SHOW BINARY LOG STATUS.

use std::collections::BTreeMap;
use std::process::Command;

use super::ServerProcess;

/// SHOW REPLICA STATUS as (column, value) pairs; empty when the server
/// is not a replica.
pub fn replica_status(replica: &ServerProcess) -> BTreeMap<String, String> {
    let output = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", replica.port), "-uroot", "-B", "-e", "SHOW REPLICA STATUS"])
        .output()
        .expect("run the mariadb client");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let (names, values) = (lines.next().unwrap_or_default(), lines.next().unwrap_or_default());
    // Batch mode escapes newlines in values (multi-UUID GTID sets) as \n.
    names.split('\t').zip(values.split('\t')).map(|(name, value)| (name.to_string(), value.replace("\\n", ""))).collect()
}

/// A numeric SHOW GLOBAL STATUS counter.
pub fn status_number(server: &ServerProcess, name: &str) -> u64 {
    let line = server.query(None, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    line.trim().split('\t').nth(1).and_then(|value| value.parse().ok()).unwrap_or_else(|| panic!("{name}: {line:?}"))
}

/// (file, position) of SHOW BINARY LOG STATUS.
pub fn binary_log_status(server: &ServerProcess) -> (String, u64) {
    let line = server.query(None, "SHOW BINARY LOG STATUS");
    let mut fields = line.trim().split('\t');
    let file = fields.next().unwrap().to_string();
    (file, fields.next().unwrap().parse().unwrap())
}
