//! SQL over one kept connection (the replica crate's client), so that
//! polling a server every few milliseconds costs a query, not a process
//! start as the `mariadb` command-line client would.

use std::collections::BTreeMap;
use std::time::Duration;

use binlog_format::gtid_set::{GtidSet, Uuid};
use replica::{SourceAddress, SourceClient};

/// Bounds connecting and every statement; the slowest statement the
/// benchmark sends (STOP REPLICA while workers commit) takes well under it.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(120);

pub struct Connection {
    server: String,
    client: SourceClient,
}

impl Connection {
    pub fn open(server: &str, port: u16, user: &str, password: &str) -> Result<Connection, String> {
        let address = SourceAddress { host: "127.0.0.1".into(), port, user: user.into(), password: password.into() };
        let client =
            SourceClient::connect(&address, STATEMENT_TIMEOUT).map_err(|e| format!("connecting to {server} on port {port}: {e}"))?;
        Ok(Connection { server: server.to_string(), client })
    }

    /// Runs one statement; its rows as text (`None` for NULL).
    pub fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
        self.client.query(sql).map_err(|e| format!("{}: {sql}: {e}", self.server))
    }

    pub fn execute(&mut self, sql: &str) -> Result<(), String> {
        self.query(sql).map(|_| ())
    }

    /// The first column of the first row ("" for none or NULL).
    pub fn value(&mut self, sql: &str) -> Result<String, String> {
        let rows = self.query(sql)?;
        Ok(rows.into_iter().next().and_then(|row| row.into_iter().next().flatten()).unwrap_or_default())
    }

    pub fn gtid_executed(&mut self) -> Result<GtidSet, String> {
        let text = self.value("SELECT @@global.gtid_executed")?;
        parse_gtid_set(&self.server, &text)
    }

    pub fn server_uuid(&mut self) -> Result<Uuid, String> {
        let text = self.value("SELECT @@server_uuid")?;
        text.trim().parse().map_err(|_| format!("{}: server_uuid {text:?} is not a UUID", self.server))
    }

    /// SHOW REPLICA STATUS as column → value (empty when not a replica).
    pub fn replica_status(&mut self) -> Result<BTreeMap<String, String>, String> {
        let sql = "SHOW REPLICA STATUS";
        let (columns, rows) = self.client.query_with_columns(sql).map_err(|e| format!("{}: {sql}: {e}", self.server))?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(BTreeMap::new());
        };
        Ok(columns.into_iter().zip(row.into_iter().map(Option::unwrap_or_default)).collect())
    }

    /// SHOW GLOBAL STATUS LIKE `pattern` as name → number (non-numbers left out).
    pub fn status_counters(&mut self, pattern: &str) -> Result<BTreeMap<String, u64>, String> {
        let rows = self.query(&format!("SHOW GLOBAL STATUS LIKE '{pattern}'"))?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let mut cells = row.into_iter();
                let name = cells.next().flatten()?;
                let value = cells.next().flatten()?.parse().ok()?;
                Some((name, value))
            })
            .collect())
    }

    /// Sum of `File_size` over SHOW BINARY LOGS: the bytes of the binlog.
    pub fn binlog_bytes(&mut self) -> Result<u64, String> {
        let rows = self.query("SHOW BINARY LOGS")?;
        rows.iter()
            .map(|row| {
                row.get(1)
                    .cloned()
                    .flatten()
                    .and_then(|size| size.parse::<u64>().ok())
                    .ok_or_else(|| format!("{}: SHOW BINARY LOGS: no size in {row:?}", self.server))
            })
            .sum()
    }
}

/// A GTID set as `gtid_executed` prints it (newlines between UUIDs allowed).
pub fn parse_gtid_set(server: &str, text: &str) -> Result<GtidSet, String> {
    let joined: String = text.split_whitespace().collect();
    joined.parse().map_err(|_| format!("{server}: {text:?} is not a GTID set"))
}

/// How many of `uuid`'s transactions `set` holds.
pub fn count_for(set: &GtidSet, uuid: &Uuid) -> u64 {
    set.intervals().filter(|(tsid, _)| tsid.uuid == *uuid).flat_map(|(_, list)| list.iter()).map(|&(start, end)| end - start).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_one_uuid_of_a_set() {
        let set =
            parse_gtid_set("t", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10:20-24,\n4e11fa47-71ca-11e1-9e33-c80aa9429562:1-3").unwrap();
        let source: Uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562".parse().unwrap();
        assert_eq!(count_for(&set, &source), 15);
        assert_eq!(set.count(), 18);
        assert!(parse_gtid_set("t", "not a set").is_err());
        assert_eq!(parse_gtid_set("t", "").unwrap().count(), 0);
    }
}
