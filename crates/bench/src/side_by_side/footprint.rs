//! What a server holds for sysbench's tables once they are prepared: the
//! data and index bytes `INFORMATION_SCHEMA.TABLES` reports (InnoDB: its
//! clustered and secondary index pages; binlogd: its engine's memory
//! account, rows with their versions and secondary index entries), per row.

use serde::Serialize;

use super::client::Client;
use super::servers::Kind;

/// One server's footprint for the prepared tables.
#[derive(Debug, Clone, Serialize)]
pub struct Footprint {
    /// The server as the summary table names it.
    pub server: String,
    /// The rows sysbench prepared (InnoDB's TABLE_ROWS is an estimate, so
    /// the bytes per row divide by what was inserted).
    pub rows: u64,
    pub data_bytes: u64,
    pub index_bytes: u64,
}

impl Footprint {
    pub fn bytes_per_row(&self) -> Option<f64> {
        (self.rows > 0).then(|| (self.data_bytes + self.index_bytes) as f64 / self.rows as f64)
    }
}

/// Reads the footprint of the `tables` sbtest tables of `rows` rows in all.
/// MariaDB's sizes are statistics: ANALYZE TABLE brings them up to date
/// first. binlogd's are kept as rows change.
pub fn measure(client: &Client, kind: Kind, server: String, tables: u32, rows: u64) -> Result<Footprint, String> {
    if kind == Kind::MariaDb {
        let names: Vec<String> = (1..=tables).map(|n| format!("sbtest.sbtest{n}")).collect();
        client.query(&format!("ANALYZE TABLE {}", names.join(", ")))?;
    }
    let output = client.query(
        "SELECT COALESCE(SUM(DATA_LENGTH), 0), COALESCE(SUM(INDEX_LENGTH), 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest'",
    )?;
    let (data_bytes, index_bytes) = parse_sizes(&output)?;
    Ok(Footprint { server, rows, data_bytes, index_bytes })
}

/// `data<TAB>index` as the client prints the query's one row.
fn parse_sizes(output: &str) -> Result<(u64, u64), String> {
    let numbers: Vec<u64> = output
        .split_whitespace()
        .map(|field| field.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("table sizes {output:?}: {e}"))?;
    match numbers[..] {
        [data, index] => Ok((data, index)),
        _ => Err(format!("table sizes {output:?}: expected two numbers")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_two_sums_and_divides_by_the_rows() {
        assert_eq!(parse_sizes("4734976\t1589248\n"), Ok((4734976, 1589248)));
        assert!(parse_sizes("NULL\t0\n").is_err());
        assert!(parse_sizes("1\n").is_err());
        let footprint = Footprint { server: "mariadb".into(), rows: 20000, data_bytes: 4_000_000, index_bytes: 1_000_000 };
        assert_eq!(footprint.bytes_per_row(), Some(250.0));
        assert_eq!(Footprint { rows: 0, ..footprint }.bytes_per_row(), None);
    }
}
