//! Scheduling by MySQL's logical clock, and commit order.
//!
//! A transaction with `(last_committed, sequence_number)` may start once
//! every transaction with `sequence_number <= last_committed` has
//! committed. The coordinator dispatches in queue order, so sequence
//! numbers dispatched within one clock run increase; the set of those in
//! flight gives the low-water mark: every dispatched transaction below the
//! smallest one in flight has committed.
//!
//! A transaction is a barrier (it waits until nothing is in flight) when
//! its clock cannot be compared with what ran before it: a new connection
//! (clocks restart per dump), a sequence number not above the previous one
//! (a new source binlog file), or no clock at all (0, anonymous or
//! MariaDB transactions: MariaDB's commit ids may be scheduled later).
//!
//! With commit order preserved, each dispatched transaction gets a ticket
//! (its dispatch number) and commits only when the ticket is next.

use std::collections::BTreeSet;

use parking_lot::{Condvar, Mutex};
use protocol::MysqlError;

use crate::boundary::TransactionClock;
use crate::stop::{StopFlag, WAIT_SLICE};

/// Why a wait ended without its condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interrupted {
    Stopped,
    /// A worker failed; everything stops.
    Failed(MysqlError),
}

#[derive(Default)]
struct State {
    /// Sequence numbers of the current clock run dispatched, not committed.
    in_flight: BTreeSet<i64>,
    /// Every transaction dispatched and not committed (barriers included).
    in_flight_count: usize,
    last_dispatched_sequence_number: i64,
    connection_epoch: u64,
    next_ticket: u64,
    next_commit_ticket: u64,
    /// The first worker error: dispatching ends with it.
    error: Option<MysqlError>,
    /// The ticket that failed: every later one rolls back (it could never
    /// get its commit turn); earlier ones still commit, so the applied
    /// transactions stay a prefix of the queue (no gaps).
    failed_ticket: Option<u64>,
}

pub struct Scheduler {
    state: Mutex<State>,
    /// The coordinator waits here for a dependency to commit.
    dispatch_possible: Condvar,
    /// Workers wait here for their commit turn: a separate variable, so a
    /// commit wakes the coordinator without waking every waiting worker
    /// for nothing, and the other way round.
    commit_turn: Condvar,
    preserve_commit_order: bool,
}

/// A dispatched transaction's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    pub number: u64,
    sequence_number: Option<i64>,
}

impl Scheduler {
    pub fn new(preserve_commit_order: bool) -> Scheduler {
        Scheduler {
            state: Mutex::new(State::default()),
            dispatch_possible: Condvar::new(),
            commit_turn: Condvar::new(),
            preserve_commit_order,
        }
    }

    pub fn preserves_commit_order(&self) -> bool {
        self.preserve_commit_order
    }

    /// Waits until `clock` may start, then counts it as in flight.
    pub fn wait_to_dispatch(&self, clock: &TransactionClock, connection_epoch: u64, stop: &StopFlag) -> Result<Ticket, Interrupted> {
        let mut state = self.state.lock();
        let comparable = connection_epoch == state.connection_epoch
            && clock.sequence_number > state.last_dispatched_sequence_number
            && clock.sequence_number > 0
            && clock.last_committed >= 0
            && clock.last_committed < clock.sequence_number;
        loop {
            if let Some(error) = &state.error {
                return Err(Interrupted::Failed(error.clone()));
            }
            if stop.is_requested() {
                return Err(Interrupted::Stopped);
            }
            let runnable = if comparable {
                let low_water_mark = match state.in_flight.first() {
                    Some(&smallest) => smallest - 1,
                    None => state.last_dispatched_sequence_number,
                };
                clock.last_committed <= low_water_mark
            } else {
                state.in_flight_count == 0
            };
            if runnable {
                break;
            }
            self.dispatch_possible.wait_for(&mut state, WAIT_SLICE);
        }
        if !comparable {
            // A new clock run starts here.
            state.connection_epoch = connection_epoch;
            state.last_dispatched_sequence_number = 0;
        }
        let sequence_number = (clock.sequence_number > state.last_dispatched_sequence_number).then_some(clock.sequence_number);
        if let Some(sequence_number) = sequence_number {
            state.in_flight.insert(sequence_number);
            state.last_dispatched_sequence_number = sequence_number;
        }
        state.in_flight_count += 1;
        let number = state.next_ticket;
        state.next_ticket += 1;
        Ok(Ticket { number, sequence_number })
    }

    /// With commit order preserved, waits until `ticket` is next to commit.
    /// A stop request does not end the wait: every earlier ticket is held
    /// by a worker that finishes it, so the wait is short and STOP leaves
    /// no gap. Only a failed earlier ticket ends it.
    pub fn wait_commit_turn(&self, ticket: &Ticket) -> Result<(), Interrupted> {
        if !self.preserve_commit_order {
            return Ok(());
        }
        let mut state = self.state.lock();
        while state.next_commit_ticket != ticket.number {
            if let (Some(error), Some(failed)) = (&state.error, state.failed_ticket) {
                if failed < ticket.number {
                    return Err(Interrupted::Failed(error.clone()));
                }
            }
            self.commit_turn.wait_for(&mut state, WAIT_SLICE);
        }
        Ok(())
    }

    /// `ticket`, holding its commit turn, has its place in the replica's
    /// commit order (the database fixed it; its fsyncs are still to
    /// come): the next ticket's turn begins, so that ordered commits share
    /// group commits. What depends on it still waits for
    /// [`Scheduler::committed`]. A second call is a no-op.
    pub fn ordered(&self, ticket: &Ticket) {
        if !self.preserve_commit_order {
            return;
        }
        let mut state = self.state.lock();
        if state.next_commit_ticket != ticket.number {
            debug_assert!(state.next_commit_ticket > ticket.number, "ordered out of turn");
            return;
        }
        state.next_commit_ticket += 1;
        drop(state);
        self.commit_turn.notify_all();
    }

    /// `ticket` committed: what waited on it may go (and the next commit
    /// turn begins, if [`Scheduler::ordered`] did not begin it).
    pub fn committed(&self, ticket: &Ticket) {
        let mut state = self.state.lock();
        if let Some(sequence_number) = ticket.sequence_number {
            state.in_flight.remove(&sequence_number);
        }
        state.in_flight_count -= 1;
        if self.preserve_commit_order {
            debug_assert!(state.next_commit_ticket >= ticket.number, "committed out of turn");
            if state.next_commit_ticket == ticket.number {
                state.next_commit_ticket += 1;
            }
        }
        drop(state);
        self.dispatch_possible.notify_one();
        if self.preserve_commit_order {
            self.commit_turn.notify_all();
        }
    }

    /// A transaction failed (`ticket`: a dispatched one; `None`: the
    /// coordinator's own failure): the first error is kept and dispatching
    /// ends.
    pub fn fail(&self, error: MysqlError, ticket: Option<&Ticket>) {
        let mut state = self.state.lock();
        state.error.get_or_insert(error);
        if let Some(ticket) = ticket {
            state.failed_ticket = Some(state.failed_ticket.map_or(ticket.number, |failed| failed.min(ticket.number)));
        }
        drop(state);
        self.dispatch_possible.notify_all();
        self.commit_turn.notify_all();
    }

    pub fn error(&self) -> Option<MysqlError> {
        self.state.lock().error.clone()
    }

    /// Transactions dispatched and not committed.
    pub fn in_flight(&self) -> usize {
        self.state.lock().in_flight_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(last_committed: i64, sequence_number: i64) -> TransactionClock {
        TransactionClock { gtid: None, last_committed, sequence_number }
    }

    #[test]
    fn the_next_commit_turn_begins_once_the_previous_is_ordered() {
        let scheduler = Scheduler::new(true);
        let stop = StopFlag::new();
        let first = scheduler.wait_to_dispatch(&clock(0, 1), 1, &stop).unwrap();
        let second = scheduler.wait_to_dispatch(&clock(0, 2), 1, &stop).unwrap();
        scheduler.wait_commit_turn(&first).unwrap();
        scheduler.ordered(&first);
        // The second's turn: before the first committed.
        scheduler.wait_commit_turn(&second).unwrap();
        assert_eq!(scheduler.state.lock().in_flight.len(), 2, "ordered is not committed: dependents still wait");
        scheduler.ordered(&first);
        scheduler.ordered(&second);
        scheduler.committed(&first);
        scheduler.committed(&second);
        let state = scheduler.state.lock();
        assert_eq!(state.next_commit_ticket, 2, "a turn begun early is not begun twice");
        assert_eq!(state.in_flight_count, 0);
    }

    #[test]
    fn a_dependent_transaction_waits_for_its_dependency() {
        let scheduler = Scheduler::new(false);
        let stop = StopFlag::new();
        let first = scheduler.wait_to_dispatch(&clock(0, 1), 1, &stop).unwrap();
        let _independent = scheduler.wait_to_dispatch(&clock(0, 2), 1, &stop).unwrap();
        // (2, 3) needs 1 and 2 committed: only 1 is. A stop ends the wait.
        scheduler.committed(&first);
        let waiter = std::thread::scope(|scope| {
            let handle = scope.spawn(|| scheduler.wait_to_dispatch(&clock(2, 3), 1, &stop));
            std::thread::sleep(WAIT_SLICE * 3);
            stop.request();
            handle.join().unwrap()
        });
        assert_eq!(waiter, Err(Interrupted::Stopped));
    }
}
