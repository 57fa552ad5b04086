//! Display of the MariaDB events a MariaDB 10.x binlog has in every file
//! (GTID, Gtid_list, Binlog_checkpoint and Annotate_rows), from the format
//! crate's typed events, in the shape the text and JSON outputs print.

use binlog_format::events::MariadbGtid;
use binlog_format::Event;

/// GTID event `flags2` bit: a statement without BEGIN/COMMIT (DDL).
pub use binlog_format::events::mariadb_gtid::gtid_flags::FL_STANDALONE;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MariadbEvent {
    /// Opens a transaction (or a standalone DDL statement).
    Gtid {
        gtid: MariadbGtid,
        flags: u8,
        commit_id: Option<u64>,
    },
    /// The binlog state at the start of the file.
    GtidList(Vec<MariadbGtid>),
    BinlogCheckpoint(String),
    /// The statement behind the row events that follow.
    AnnotateRows(String),
}

impl MariadbEvent {
    pub fn is_standalone(&self) -> bool {
        matches!(self, MariadbEvent::Gtid { flags, .. } if flags & FL_STANDALONE != 0)
    }
}

/// The display form of a MariaDB event; `server_id` comes from the event
/// header. `None` for other events.
pub fn from_event(event: &Event, server_id: u32) -> Option<MariadbEvent> {
    Some(match event {
        Event::MariadbGtid(gtid) => MariadbEvent::Gtid { gtid: gtid.gtid(server_id), flags: gtid.flags2, commit_id: gtid.commit_id },
        Event::GtidList(list) => MariadbEvent::GtidList(list.gtids.clone()),
        Event::BinlogCheckpoint(checkpoint) => MariadbEvent::BinlogCheckpoint(String::from_utf8_lossy(&checkpoint.file_name).into_owned()),
        Event::AnnotateRows(annotate) => MariadbEvent::AnnotateRows(String::from_utf8_lossy(&annotate.query).into_owned()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use binlog_format::events::{BinlogCheckpointEvent, MariadbGtidEvent};

    #[test]
    fn shows_the_events_of_a_mariadb_10_5_file() {
        // A GTID body from a MariaDB 10.5 binlog.
        let body = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0];
        let event = Event::MariadbGtid(MariadbGtidEvent::decode_body(&body).unwrap());
        let Some(MariadbEvent::Gtid { gtid, flags, commit_id }) = from_event(&event, 1) else { panic!() };
        assert_eq!((gtid.to_string(), flags, commit_id), ("0-1-1".to_string(), 0x0c, None));
        let checkpoint = Event::BinlogCheckpoint(BinlogCheckpointEvent { file_name: b"mariadb-bin.000001".to_vec() });
        assert_eq!(from_event(&checkpoint, 1), Some(MariadbEvent::BinlogCheckpoint("mariadb-bin.000001".to_string())));
        assert_eq!(from_event(&Event::Stop, 1), None);
    }
}
