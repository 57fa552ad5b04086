//! Where transactions begin and end in an event stream, one event at a
//! time. The receiver runs this on every event as it arrives (it has the
//! event in hand anyway); the event-scanning coordinator runs it again on
//! the relay log, which is what MySQL's coordinator does today.
//!
//! | event                                   | between transactions | after Gtid | inside BEGIN…   |
//! |-----------------------------------------|----------------------|------------|-----------------|
//! | Gtid / Anonymous_gtid / Gtid_tagged     | begins               | begins (the open one is incomplete) | begins (same) |
//! | Query BEGIN                             | begins (no GTID)     | continues  | continues       |
//! | Query COMMIT / ROLLBACK                 | outside              | ends       | ends            |
//! | other Query (DDL, XA COMMIT)            | begins and ends      | ends       | continues       |
//! | Xid, XA_prepare                         | outside              | ends       | ends            |
//! | FDE, Rotate, Heartbeat, Previous_gtids, Stop, Large_transaction_header | outside | outside | outside |
//! | anything else (Table_map, rows, ...)    | outside              | continues  | continues       |

use binlog_format::constants::EventType;
use binlog_format::events::gtid::GtidEvent;
use binlog_format::events::query::QueryEvent;
use binlog_format::gtid_set::Gtid;
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

/// What one event does to the transaction structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Not part of any transaction (not stored in the relay log).
    Outside,
    /// Opens a transaction; `ends` when the event is the whole of it (a
    /// statement without BEGIN and without Gtid).
    Begin { clock: TransactionClock, ends: bool },
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
    pub fn step(&mut self, event_type: u8, body: &[u8]) -> Result<Step, MysqlError> {
        let kind = EventType::from_code(event_type);
        match kind {
            Some(EventType::Gtid | EventType::AnonymousGtid | EventType::GtidTagged) => {
                let clock = gtid_clock(kind, body)?;
                self.state = State::AfterGtid;
                Ok(Step::Begin { clock, ends: false })
            }
            Some(
                EventType::FormatDescription
                | EventType::Rotate
                | EventType::Heartbeat
                | EventType::HeartbeatV2
                | EventType::PreviousGtids
                | EventType::Stop
                | EventType::LargeTransactionHeader,
            ) => Ok(Step::Outside),
            Some(EventType::Query) => self.query_step(body),
            Some(EventType::Xid | EventType::XaPrepare) => Ok(self.end_if_open()),
            _ if self.state == State::Between => Ok(Step::Outside),
            _ => Ok(Step::Continue),
        }
    }

    fn query_step(&mut self, body: &[u8]) -> Result<Step, MysqlError> {
        let query = QueryEvent::decode_body(body).map_err(|error| errors::relay_log_read_failure(&format!("a Query event: {error}")))?;
        let text = query.query.as_slice();
        let is_begin = query.is_begin() || text.eq_ignore_ascii_case(b"BEGIN") || starts_with_ignore_case(text, b"XA START");
        let is_end = query.is_commit() || query.is_rollback() || text.eq_ignore_ascii_case(b"COMMIT") || text.eq_ignore_ascii_case(b"ROLLBACK");
        Ok(match (self.state, is_begin, is_end) {
            (State::Between, true, _) => {
                self.state = State::InTransaction;
                Step::Begin { clock: TransactionClock::default(), ends: false }
            }
            (State::Between, false, true) => Step::Outside,
            (State::Between, false, false) => Step::Begin { clock: TransactionClock::default(), ends: true },
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
    if kind == Some(EventType::GtidTagged) {
        // Tagged GTIDs (MySQL 8.4) use another layout; binlogd never
        // writes them. Scheduled as a barrier.
        return Ok(TransactionClock::default());
    }
    let event = GtidEvent::decode_body(body).map_err(|error| errors::relay_log_read_failure(&format!("a Gtid event: {error}")))?;
    Ok(TransactionClock {
        gtid: (kind == Some(EventType::Gtid)).then_some(event.gtid),
        last_committed: event.last_committed,
        sequence_number: event.sequence_number,
    })
}

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}
