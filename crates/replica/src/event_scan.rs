//! The event-scanning coordinator's one extra job (what MySQL's
//! coordinator does, kept for the benchmark's comparison): find a transaction's
//! boundaries and logical clock by reading its bytes back from the relay
//! log and decoding every event header (and the Gtid and Query bodies).
//!
//! The queue entry is used only as "these bytes are now in the relay log",
//! what MySQL's coordinator learns from the relay log's end position: its
//! GTID, clock and boundaries are thrown away and found again here.

use protocol::MysqlError;

use crate::boundary::{BoundaryTracker, Step, TransactionClock};
use crate::boundary_queue::BoundaryEntry;
use crate::errors;
use crate::mariadb_clock::MariadbClock;
use crate::relay::RelayLog;
use crate::stop::StopFlag;

/// The entry with its clock replaced by what scanning its events gives.
/// `mariadb_clock` turns MariaDB commit ids into the clock as the receiver
/// does; the coordinator keeps one across entries.
pub fn rescan(
    relay: &RelayLog,
    mut entry: BoundaryEntry,
    buffer: &mut Vec<u8>,
    mariadb_clock: &mut MariadbClock,
    stop: &StopFlag,
) -> Result<BoundaryEntry, MysqlError> {
    let has_checksum = entry.format.format.has_checksum();
    let mut tracker = BoundaryTracker::new();
    let mut clock: Option<TransactionClock> = None;
    let mut ended = false;
    let mut events = relay.events(&entry.location, buffer, stop)?;
    while let Some(event) = events.next_event()? {
        if ended {
            return Err(errors::relay_log_read_failure("events after the end of a transaction"));
        }
        let header =
            binlog_format::header::EventHeader::decode(event).map_err(|error| errors::relay_log_read_failure(&error.to_string()))?;
        let footer = binlog_format::frame::footer_length(event, has_checksum);
        let body = event
            .get(binlog_format::constants::COMMON_HEADER_LENGTH..event.len().saturating_sub(footer))
            .ok_or_else(|| errors::relay_log_read_failure("an event shorter than its header"))?;
        match tracker.step(&header, body)? {
            Step::Begin { clock: mut found, mariadb, ends } => {
                if let Some(group) = &mariadb {
                    (found.last_committed, found.sequence_number) = mariadb_clock.assign(group, entry.connection_epoch);
                    entry.mariadb_gtid = Some(group.gtid);
                }
                clock = Some(found);
                ended = ends;
            }
            Step::End => ended = true,
            Step::Continue | Step::Outside => {}
        }
    }
    let clock =
        clock.filter(|_| ended).ok_or_else(|| errors::relay_log_read_failure("a relay log range that is not one whole transaction"))?;
    entry.gtid = clock.gtid;
    entry.last_committed = clock.last_committed;
    entry.sequence_number = clock.sequence_number;
    Ok(entry)
}
