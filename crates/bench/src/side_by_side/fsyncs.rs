//! fsyncs of the commit path, read from SHOW GLOBAL STATUS before and
//! after a sysbench run, for the fsyncs-per-transaction column.
//!
//! - binlogd: `Innodb_os_log_fsyncs` (redo fdatasyncs: group syncs and
//!   rotations) + `binlogd_binlog_fsyncs` (binlog file fdatasyncs: group
//!   syncs, rotations; in engine mode only rotations and checkpoints).
//! - MariaDB 10.11: `Innodb_data_fsyncs` + `Binlog_group_commits`. 10.11
//!   has no `Innodb_os_log_fsyncs`; `Innodb_data_fsyncs` counts every
//!   fsync InnoDB issues, redo log and data files alike, so MariaDB's
//!   figure is an upper bound of its commit path's. With `sync_binlog = 1`
//!   every binlog group commit is one fdatasync of the binlog (MariaDB has
//!   no binlog fsync counter).
//!
//! binlogd's checkpoint fsyncs are left out: they do not wait in the
//! commit path.

use super::client::Client;
use super::servers::Kind;

/// The status variables summed for `kind`.
pub fn counter_names(kind: Kind) -> [&'static str; 2] {
    match kind {
        Kind::Binlogd => ["Innodb_os_log_fsyncs", "binlogd_binlog_fsyncs"],
        Kind::MariaDb => ["Innodb_data_fsyncs", "Binlog_group_commits"],
    }
}

/// The commit-path fsyncs so far, or `None` when the server lacks one of
/// the counters (the column then stays empty rather than wrong).
pub fn count(kind: Kind, client: &Client) -> Result<Option<u64>, String> {
    let status = client.query("SHOW GLOBAL STATUS")?;
    Ok(sum(&status, &counter_names(kind)))
}

/// Sum of the `names` rows of SHOW STATUS output (`name\tvalue` lines).
fn sum(status: &str, names: &[&str]) -> Option<u64> {
    let mut total = 0;
    for name in names {
        let value = status.lines().filter_map(|line| line.split_once('\t')).find(|(key, _)| key.eq_ignore_ascii_case(name))?.1;
        total += value.trim().parse::<u64>().ok()?;
    }
    Some(total)
}

/// fsyncs per transaction between two counts.
pub fn per_transaction(before: Option<u64>, after: Option<u64>, transactions: u64) -> Option<f64> {
    match (before, after) {
        (Some(before), Some(after)) if transactions > 0 && after >= before => Some((after - before) as f64 / transactions as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_the_named_counters() {
        let status = "Binlog_group_commits\t40\nInnodb_data_fsyncs\t60\nUptime\t9\n";
        assert_eq!(sum(status, &counter_names(Kind::MariaDb)), Some(100));
        assert_eq!(sum(status, &counter_names(Kind::Binlogd)), None, "binlogd_binlog_fsyncs is missing");
        assert_eq!(per_transaction(Some(100), Some(150), 100), Some(0.5));
        assert_eq!(per_transaction(None, Some(150), 100), None);
        assert_eq!(per_transaction(Some(1), Some(2), 0), None);
    }
}
