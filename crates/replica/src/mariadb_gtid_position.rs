//! A MariaDB GTID position: the last GTID of each replication domain, as
//! `@@gtid_slave_pos`, `@slave_connect_state` and SHOW SLAVE STATUS's
//! Gtid_IO_Pos write it (`0-1-5,3-2-9`).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use binlog_format::events::mariadb_gtid::MariadbGtid;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MariadbGtidPosition {
    by_domain: BTreeMap<u32, MariadbGtid>,
}

impl MariadbGtidPosition {
    pub fn new() -> MariadbGtidPosition {
        MariadbGtidPosition::default()
    }

    /// `gtid` is now the last of its domain.
    pub fn update(&mut self, gtid: MariadbGtid) {
        self.by_domain.insert(gtid.domain_id, gtid);
    }

    pub fn is_empty(&self) -> bool {
        self.by_domain.is_empty()
    }

    pub fn get(&self, domain_id: u32) -> Option<MariadbGtid> {
        self.by_domain.get(&domain_id).copied()
    }

    /// This position moved forward by every domain of `later`.
    pub fn merge(&mut self, later: &MariadbGtidPosition) {
        for gtid in later.by_domain.values() {
            self.update(*gtid);
        }
    }
}

impl fmt::Display for MariadbGtidPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, gtid) in self.by_domain.values().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{gtid}")?;
        }
        Ok(())
    }
}

impl FromStr for MariadbGtidPosition {
    type Err = String;

    /// A comma-separated list, one GTID per domain; empty is the start.
    fn from_str(text: &str) -> Result<MariadbGtidPosition, String> {
        let mut position = MariadbGtidPosition::new();
        for part in text.split(',').map(str::trim).filter(|part| !part.is_empty()) {
            let gtid: MariadbGtid = part.parse()?;
            if position.by_domain.contains_key(&gtid.domain_id) {
                return Err(format!("domain {} appears twice in {text:?}", gtid.domain_id));
            }
            position.update(gtid);
        }
        Ok(position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_gtid_per_domain_in_domain_order() {
        let mut position: MariadbGtidPosition = "3-2-9, 0-1-5".parse().unwrap();
        assert_eq!(position.to_string(), "0-1-5,3-2-9");
        position.update(MariadbGtid { domain_id: 0, server_id: 1, seq_no: 6 });
        assert_eq!(position.to_string(), "0-1-6,3-2-9");
        assert!("0-1-5,0-1-6".parse::<MariadbGtidPosition>().is_err());
        assert!("".parse::<MariadbGtidPosition>().unwrap().is_empty());
    }
}
