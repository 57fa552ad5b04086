//! Where transactions begin and end in an event stream, one event at a
//! time. The receiver runs this on every event as it arrives (it has the
//! event in hand anyway); the event-scanning coordinator runs it again on
//! the relay log, which is what MySQL's coordinator does.
//!
//! | event                                   | between transactions | after Gtid | inside BEGIN…   |
//! |-----------------------------------------|----------------------|------------|-----------------|
//! | Gtid / Anonymous_gtid / Gtid_tagged     | begins               | begins (the open one is incomplete) | begins (same) |
//! | MariaDB GTID with FL_STANDALONE         | begins, then as after Gtid (its one Query ends it) | begins (same) | begins (same) |
//! | other MariaDB GTID (no BEGIN follows)   | begins, then as inside BEGIN | begins (same) | begins (same) |
//! | Query BEGIN                             | begins (no GTID)     | continues  | continues       |
//! | Query COMMIT / ROLLBACK                 | outside              | ends       | ends            |
//! | other Query (DDL, XA COMMIT)            | begins and ends      | ends       | continues       |
//! | Xid, XA_prepare, Transaction_payload    | outside              | ends       | ends            |
//! | FDE, Rotate, Heartbeat, Previous_gtids, Stop, Large_transaction_header, MariaDB's Gtid_list, Binlog_checkpoint, Start_encryption | outside | outside | outside |
//! | MariaDB's Query_compressed (165)        | as the Query it holds | | |
//! | anything else (Table_map, rows, Annotate_rows, ...) | outside  | continues  | continues       |

use binlog_format::constants::EventType;
use binlog_format::events::gtid::GtidEvent;
use binlog_format::events::mariadb_gtid::{MariadbGtid, MariadbGtidEvent};
use binlog_format::events::query::QueryEvent;
use binlog_format::events::{CompressedEvent, Event};
use binlog_format::gtid_set::Gtid;
use binlog_format::header::EventHeader;
use binlog_format::DecodeError;
use protocol::MysqlError;

use crate::errors;

/// A transaction's identity and logical clock, from its Gtid event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransactionClock {
    /// `None` for an anonymous transaction (no GTID on the source).
    pub gtid: Option<Gtid>,
    /// MySQL's logical clock: the transaction may run once every
    /// transaction with `sequence_number <= last_committed` has committed.
    /// Both are 0 when the source sent none (a barrier then).
    pub last_committed: i64,
    pub sequence_number: i64,
}

/// What a MariaDB GTID event says about its event group: its GTID, and
/// what decides whether it may share a logical-clock slot with others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MariadbGroup {
    pub gtid: MariadbGtid,
    /// The group commit id: groups with the same one committed together on
    /// the source.
    pub commit_id: Option<u64>,
    /// `flags2` (FL_STANDALONE, FL_TRANSACTIONAL, FL_ALLOW_PARALLEL, FL_DDL, ...).
    pub flags2: u8,
}

/// What one event does to the transaction structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Not part of any transaction (not stored in the relay log).
    Outside,
    /// Opens a transaction; `ends` when the event is the whole of it (a
    /// statement without BEGIN and without Gtid). `mariadb` for a MariaDB
    /// GTID event: its clock is 0/0 here, and the caller turns the group
    /// commit id into one ([`crate::mariadb_clock::MariadbClock`]).
    Begin {
        clock: TransactionClock,
        mariadb: Option<MariadbGroup>,
        ends: bool,
    },
    Continue,
    /// The last event of the open transaction.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Between,
    /// After a Gtid event: a Query BEGIN, or a DDL that is the whole
    /// transaction, follows.
    AfterGtid,
    InTransaction,
}

#[derive(Debug, Default)]
pub struct BoundaryTracker {
    state: State,
}

impl BoundaryTracker {
    pub fn new() -> BoundaryTracker {
        BoundaryTracker::default()
    }

    /// True while a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.state != State::Between
    }

    /// Forgets an open transaction (the connection that carried it ended).
    pub fn reset(&mut self) {
        self.state = State::Between;
    }

    /// Classifies one event (`body`: between the common header and the
    /// checksum).
    pub fn step(&mut self, header: &EventHeader, body: &[u8]) -> Result<Step, MysqlError> {
        let event_type = header.event_type;
        let kind = EventType::from_code(event_type);
        match kind {
            Some(EventType::Gtid | EventType::AnonymousGtid | EventType::GtidTagged) => {
                let clock = gtid_clock(kind, body)?;
                self.state = State::AfterGtid;
                Ok(Step::Begin { clock, mariadb: None, ends: false })
            }
            Some(EventType::MariadbGtid) => {
                let event = MariadbGtidEvent::decode_body(body)
                    .map_err(|error| errors::relay_log_read_failure(&format!("a MariaDB GTID event: {error}")))?;
                // A standalone group is one statement (no BEGIN, no COMMIT):
                // its Query ends it, as after MySQL's Gtid. Any other group
                // has no BEGIN either: it is open from here to its Xid or
                // COMMIT (or XA_prepare).
                self.state = if event.is_standalone() { State::AfterGtid } else { State::InTransaction };
                let mariadb = MariadbGroup { gtid: event.gtid(header.server_id), commit_id: event.commit_id, flags2: event.flags2 };
                Ok(Step::Begin { clock: TransactionClock::default(), mariadb: Some(mariadb), ends: false })
            }
            Some(
                EventType::FormatDescription
                | EventType::Rotate
                | EventType::Heartbeat
                | EventType::HeartbeatV2
                | EventType::PreviousGtids
                | EventType::Stop
                | EventType::LargeTransactionHeader
                | EventType::GtidList
                | EventType::BinlogCheckpoint
                | EventType::StartEncryption,
            ) => Ok(Step::Outside),
            Some(EventType::Query) => self.query_step(QueryEvent::statement_of(body)),
            // MariaDB's log_bin_compress=ON: the statement decides once
            // decompressed.
            Some(EventType::QueryCompressed) => {
                let event = CompressedEvent::decode_body(event_type, body)
                    .map_err(|error| errors::relay_log_read_failure(&format!("a Query_compressed event: {error}")))?;
                match *event.inner {
                    Event::Query(query) => self.query_step(Ok(&query.query)),
                    _ => Err(errors::relay_log_read_failure("a Query_compressed event that holds no Query")),
                }
            }
            // A compressed transaction (binlog_transaction_compression=ON):
            // the payload holds every event after the Gtid, the Xid or
            // COMMIT included.
            Some(EventType::Xid | EventType::XaPrepare | EventType::TransactionPayload) => Ok(self.end_if_open()),
            _ if self.state == State::Between => Ok(Step::Outside),
            _ => Ok(Step::Continue),
        }
    }

    /// `statement`: the Query's text, found without decoding its status
    /// variables (the applier decodes the whole event).
    fn query_step(&mut self, statement: Result<&[u8], DecodeError>) -> Result<Step, MysqlError> {
        let text = statement.map_err(|error| errors::relay_log_read_failure(&format!("a Query event: {error}")))?;
        let is_begin = text.eq_ignore_ascii_case(b"BEGIN") || starts_with_ignore_case(text, b"XA START");
        let is_end = text.eq_ignore_ascii_case(b"COMMIT") || text.eq_ignore_ascii_case(b"ROLLBACK");
        Ok(match (self.state, is_begin, is_end) {
            (State::Between, true, _) => {
                self.state = State::InTransaction;
                Step::Begin { clock: TransactionClock::default(), mariadb: None, ends: false }
            }
            (State::Between, false, true) => Step::Outside,
            (State::Between, false, false) => Step::Begin { clock: TransactionClock::default(), mariadb: None, ends: true },
            (State::AfterGtid, true, _) => {
                self.state = State::InTransaction;
                Step::Continue
            }
            (State::AfterGtid, false, _) => self.end_if_open(),
            (State::InTransaction, _, true) => self.end_if_open(),
            (State::InTransaction, _, false) => Step::Continue,
        })
    }

    fn end_if_open(&mut self) -> Step {
        if self.state == State::Between {
            return Step::Outside;
        }
        self.state = State::Between;
        Step::End
    }
}

fn gtid_clock(kind: Option<EventType>, body: &[u8]) -> Result<TransactionClock, MysqlError> {
    let event = match kind {
        Some(EventType::GtidTagged) => GtidEvent::decode_tagged_body(body),
        _ => GtidEvent::decode_body(body),
    }
    .map_err(|error| errors::relay_log_read_failure(&format!("a Gtid event: {error}")))?;
    Ok(TransactionClock {
        gtid: matches!(kind, Some(EventType::Gtid | EventType::GtidTagged)).then_some(event.gtid),
        last_committed: event.last_committed,
        sequence_number: event.sequence_number,
    })
}

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}
