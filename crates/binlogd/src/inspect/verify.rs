//! `--verify`: structural checks beyond framing and checksums (which the
//! reader always checks).
//!
//! - the first event is a Format_description event at offset 4;
//! - `end_log_pos` is the offset just past the event (0 is allowed:
//!   artificial events carry it; relay logs, whose first event has
//!   `LOG_EVENT_RELAY_LOG_F`, keep the source's positions and are exempt);
//! - transactions are well formed: Gtid, then `BEGIN` ... Xid | `COMMIT` |
//!   `ROLLBACK`, or `XA START` ... XA_prepare (an XA transaction's first
//!   part, whose `XA COMMIT` comes later as a statement of its own), or Gtid
//!   then one DDL statement; row events only inside a
//!   transaction; a Transaction_payload (compressed transaction) ends one,
//!   and its own events are one such transaction;
//!   the file does not end inside one;
//! - a Gtid's `transaction_length` (when not 0) is the bytes from the Gtid
//!   event to the end of the terminating event;
//! - the logical clock: `last_committed < sequence_number`, and sequence
//!   numbers grow within a file;
//! - no GTID repeats one in Previous_gtids or earlier in the file;
//! - a Large_transaction_header's terminating event exists at its offset,
//!   has its type, and the stream meets an event boundary there.
//!
//! MariaDB files open transactions with their own GTID event (type 162),
//! which implies `BEGIN` unless it is flagged standalone.

use binlog_format::constants::{BINLOG_MAGIC_LENGTH, LOG_EVENT_RELAY_LOG_F};
use binlog_format::events::QueryEvent;
use binlog_format::{Event, EventType, Gtid, GtidSet};

use super::record::{EventRecord, Extra, PartialRowsContext, RowsContext, TargetCheck};

/// Problems reported per file before the rest are only counted.
const PROBLEMS_REPORTED_MAX: u64 = 100;

pub struct Problem {
    pub offset: u64,
    pub message: String,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Summary {
    pub events: u64,
    pub transactions: u64,
    pub problems: u64,
}

#[derive(Default)]
pub struct Verifier {
    summary: Summary,
    transaction: Option<Transaction>,
    /// Has the file used GTIDs at all (MySQL Gtid/Anonymous_Gtid or MariaDB
    /// GTID events)? Pre-GTID files have no transaction openers to check.
    uses_gtids: bool,
    last_sequence_number: Option<i64>,
    seen_gtids: GtidSet,
    /// (offset, type) of Large_transaction_header targets not reached yet.
    pending_targets: Vec<(u64, u8)>,
    abandoned: bool,
    relay_log: bool,
}

struct Transaction {
    start_offset: u64,
    gtid: Option<Gtid>,
    transaction_length: u64,
    /// `BEGIN` seen (or implied): ends at Xid/COMMIT/ROLLBACK, not at the
    /// first statement.
    began: bool,
}

impl Verifier {
    pub fn observe(&mut self, record: &EventRecord<'_>) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut problem = |offset: u64, message: String| problems.push(Problem { offset, message });
        let offset = record.offset;
        let end = record.end_offset();
        let event_type = record.header.event_type;
        self.summary.events += 1;

        if self.summary.events == 1 && !(offset == BINLOG_MAGIC_LENGTH as u64 && matches!(record.event, Event::FormatDescription(_))) {
            problem(offset, format!("first event is {}, not Format_description at offset 4", EventType::name_of(event_type)));
        }
        if self.summary.events == 1 && record.header.flags & LOG_EVENT_RELAY_LOG_F != 0 {
            // A relay log: events copied from the source keep the source's
            // end_log_pos, and the source's logical clock restarts with
            // each of its files.
            self.relay_log = true;
        }
        let log_pos = record.header.log_pos;
        if !self.relay_log
            && log_pos != 0
            && log_pos as u64 != end
            && !(end > u32::MAX as u64 && (log_pos == u32::MAX || log_pos == end as u32))
        {
            problem(offset, format!("end_log_pos {log_pos} but the event ends at {end}"));
        }

        self.pending_targets.retain(|&(target, target_type)| {
            if target == offset && event_type != target_type {
                problem(
                    offset,
                    format!(
                        "Large_transaction_header names a {} here, found {}",
                        EventType::name_of(target_type),
                        EventType::name_of(event_type)
                    ),
                );
            } else if target > offset && target < end {
                problem(offset, format!("Large_transaction_header's terminating offset {target} falls inside the event at {offset}"));
            }
            target > offset
        });

        match record.event {
            Event::FormatDescription(_) => self.last_sequence_number = None,
            Event::PreviousGtids(set) => self.seen_gtids.union(set),
            Event::Gtid(gtid) | Event::AnonymousGtid(gtid) => {
                self.uses_gtids = true;
                if let Some(open) = self.transaction.take() {
                    problem(open.start_offset, format!("transaction has no terminating event before the Gtid at {offset}"));
                }
                if gtid.sequence_number != 0 || gtid.last_committed != 0 {
                    if gtid.last_committed >= gtid.sequence_number {
                        problem(
                            offset,
                            format!("last_committed {} is not below sequence_number {}", gtid.last_committed, gtid.sequence_number),
                        );
                    }
                    if let Some(last) = self.last_sequence_number {
                        if gtid.sequence_number <= last {
                            problem(offset, format!("sequence_number {} does not grow (previous {last})", gtid.sequence_number));
                        }
                    }
                    self.last_sequence_number = Some(gtid.sequence_number);
                }
                let named = matches!(record.event, Event::Gtid(_)).then_some(gtid.gtid);
                if let Some(named) = named {
                    if self.seen_gtids.contains(&named) {
                        problem(offset, format!("GTID {named} was already logged (Previous_gtids or earlier in this file)"));
                    }
                    self.seen_gtids.add(named);
                }
                self.transaction =
                    Some(Transaction { start_offset: offset, gtid: named, transaction_length: gtid.transaction_length, began: false });
            }
            Event::MariadbGtid(gtid) => {
                self.uses_gtids = true;
                if let Some(open) = self.transaction.take() {
                    problem(open.start_offset, format!("transaction has no terminating event before the GTID at {offset}"));
                }
                let standalone = gtid.is_standalone();
                self.transaction = Some(Transaction { start_offset: offset, gtid: None, transaction_length: 0, began: !standalone });
            }
            Event::Query(query) => {
                let begins = query.is_begin() || is_xa_start(query);
                let ends = query.is_commit() || query.is_rollback();
                match self.transaction.as_mut() {
                    Some(open) if begins => {
                        if open.began {
                            problem(offset, "BEGIN inside a transaction that already began".to_string());
                        }
                        open.began = true;
                    }
                    Some(open) if open.began && !ends => {}
                    Some(_) => self.close(end, &mut problem),
                    None if self.uses_gtids && (begins || ends) => {
                        problem(offset, format!("{} without a preceding Gtid event", query.query_text()));
                    }
                    None => {}
                }
            }
            // XA_prepare ends the transaction as an Xid does (MySQL's
            // `ends_group()` says so for both).
            Event::Xid(_) | Event::XaPrepare(_) => match &self.transaction {
                Some(open) if open.began => self.close(end, &mut problem),
                _ if self.uses_gtids => problem(offset, format!("{} outside a transaction", EventType::name_of(event_type))),
                _ => {}
            },
            Event::LargeTransactionHeader(lth) => {
                let target = lth.terminating_event_offset;
                match &record.extra {
                    Extra::Terminating(TargetCheck::Found(header)) if header.event_type == lth.terminating_event_type => {}
                    Extra::Terminating(TargetCheck::Found(header)) => problem(
                        offset,
                        format!(
                            "terminating event at {target} is {}, not {}",
                            EventType::name_of(header.event_type),
                            EventType::name_of(lth.terminating_event_type)
                        ),
                    ),
                    Extra::Terminating(TargetCheck::Missing(reason)) => {
                        problem(offset, format!("no terminating event at {target}: {reason}"))
                    }
                    Extra::None | Extra::Rows(_) | Extra::PartialRows(_) => {}
                }
                if target < end {
                    problem(offset, format!("terminating event offset {target} is not after this event"));
                } else {
                    self.pending_targets.push((target, lth.terminating_event_type));
                }
            }
            // A compressed transaction: the payload holds every event after
            // the Gtid, the terminating one included.
            _ if event_type == EventType::TransactionPayload as u8 => match &self.transaction {
                Some(_) => self.close(end, &mut problem),
                None if self.uses_gtids => problem(offset, "Transaction_payload outside a transaction".to_string()),
                None => {}
            },
            _ if is_row_event(event_type) => {
                let inside = self.transaction.as_ref().is_some_and(|open| open.began);
                if self.uses_gtids && !inside {
                    problem(offset, format!("{} outside a transaction", EventType::name_of(event_type)));
                }
                if let Some(reason) = missing_table_map(&record.extra) {
                    problem(offset, reason.clone());
                }
            }
            _ => {}
        }
        self.count(problems)
    }

    /// Closes the open transaction at `end`, checking its length.
    fn close(&mut self, end: u64, problem: &mut impl FnMut(u64, String)) {
        let Some(open) = self.transaction.take() else { return };
        self.summary.transactions += 1;
        let actual = end - open.start_offset;
        if open.transaction_length != 0 && open.transaction_length != actual {
            let gtid = open.gtid.map(|g| format!(" {g}")).unwrap_or_default();
            problem(
                open.start_offset,
                format!("transaction{gtid} has transaction_length {} but spans {actual} bytes", open.transaction_length),
            );
        }
    }

    /// The events of the Transaction_payload at `offset` (the payload
    /// itself already observed: it ends the transaction its Gtid opened):
    /// one whole transaction, `BEGIN` ... Xid | `COMMIT` | `ROLLBACK`, or
    /// one DDL statement; no Gtid, no second transaction; rows events
    /// whose table maps came first.
    pub fn observe_payload(&mut self, offset: u64, records: &[EventRecord<'_>]) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut problem = |message: String| problems.push(Problem { offset, message: format!("Transaction_payload: {message}") });
        let last = records.len().saturating_sub(1);
        let opens = |query: &QueryEvent| query.is_begin() || is_xa_start(query);
        let single_statement = matches!(records.first().map(|record| record.event), Some(Event::Query(query)) if !opens(query));
        if records.is_empty() {
            problem("no events in the payload".to_string());
        } else if single_statement && records.len() != 1 {
            problem(format!("a statement outside BEGIN, then {} more events", records.len() - 1));
        } else if !single_statement && !matches!(records[0].event, Event::Query(query) if opens(query)) {
            problem(format!("the payload begins with {}, not BEGIN", EventType::name_of(records[0].header.event_type)));
        }
        for (index, record) in records.iter().enumerate() {
            let ends = match record.event {
                Event::Xid(_) | Event::XaPrepare(_) => true,
                Event::Query(query) => query.is_commit() || query.is_rollback(),
                _ => false,
            };
            match record.event {
                Event::Gtid(_) | Event::AnonymousGtid(_) | Event::MariadbGtid(_) => {
                    problem(format!("a {} inside the payload", EventType::name_of(record.header.event_type)))
                }
                Event::Query(query) if index > 0 && opens(query) => problem("a second BEGIN inside the payload".to_string()),
                _ if ends && index != last => problem(format!("the transaction ends at event {index}, before the payload does")),
                _ => {}
            }
            if !single_statement && index == last && !ends {
                problem(format!("the payload ends with {}, not Xid or COMMIT", EventType::name_of(record.header.event_type)));
            }
            if let Some(reason) = missing_table_map(&record.extra) {
                problem(reason.clone());
            }
        }
        self.count(problems)
    }

    /// Reading stopped at an error: end-of-file checks would only repeat it.
    pub fn abandon(&mut self) {
        self.abandoned = true;
    }

    /// Checks that need the whole file; `end` is where reading stopped.
    pub fn finish(&mut self, end: u64) -> Vec<Problem> {
        let mut problems = Vec::new();
        if !self.abandoned {
            if let Some(open) = &self.transaction {
                problems.push(Problem {
                    offset: open.start_offset,
                    message: format!("the file ends at {end} inside the transaction that starts here"),
                });
            }
            for &(target, target_type) in &self.pending_targets {
                problems.push(Problem {
                    offset: target,
                    message: format!(
                        "Large_transaction_header names a {} here, but no event starts here (reading ended at {end})",
                        EventType::name_of(target_type)
                    ),
                });
            }
        }
        self.count(problems)
    }

    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// Counts problems; keeps the first `PROBLEMS_REPORTED_MAX` for printing.
    fn count(&mut self, mut problems: Vec<Problem>) -> Vec<Problem> {
        let before = self.summary.problems;
        self.summary.problems += problems.len() as u64;
        let room = PROBLEMS_REPORTED_MAX.saturating_sub(before) as usize;
        problems.truncate(room);
        problems
    }
}

/// `XA START xid`: opens an XA transaction as `BEGIN` opens another.
fn is_xa_start(query: &QueryEvent) -> bool {
    query.query.get(..8).is_some_and(|start| start.eq_ignore_ascii_case(b"XA START"))
}

/// Why a rows event could not be decoded when no Table_map came first.
fn missing_table_map(extra: &Extra) -> Option<&String> {
    match extra {
        Extra::Rows(RowsContext { table: None, rows: Err(reason) })
        | Extra::PartialRows(PartialRowsContext { table: None, rows: Err(reason) }) => Some(reason),
        _ => None,
    }
}

fn is_row_event(event_type: u8) -> bool {
    matches!(
        EventType::from_code(event_type),
        Some(
            EventType::TableMap
                | EventType::WriteRows
                | EventType::UpdateRows
                | EventType::DeleteRows
                | EventType::WriteRowsV0
                | EventType::UpdateRowsV0
                | EventType::DeleteRowsV0
                | EventType::WriteRowsV1
                | EventType::UpdateRowsV1
                | EventType::DeleteRowsV1
                | EventType::PartialUpdateRows
                | EventType::WriteRowsCompressed
                | EventType::UpdateRowsCompressed
                | EventType::DeleteRowsCompressed
                | EventType::WriteRowsCompressedV1
                | EventType::UpdateRowsCompressedV1
                | EventType::DeleteRowsCompressedV1
        )
    )
}
