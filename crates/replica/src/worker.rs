//! A worker thread: takes dispatched transactions, reads their events from
//! the relay log, has its applier session apply them, waits for its commit
//! turn (commit order preserved), commits, and gives the relay space back.
//!
//! A streamed transaction (queued while it still arrives) is applied as
//! its events come. Its end is known once it is complete: its source
//! position is given to the applied positions then, before its commit.
//! Cut off (its connection ended), it is rolled back and withdrawn: it
//! gives its commit turn up and the receiver's next connection brings it
//! again, as a new entry applied once. After a crash that left
//! transactions committed beyond the low-water mark, it is applied only
//! once complete: its end position says whether it is one of them.

use std::sync::Arc;

use protocol::MysqlError;

use crate::applier::WorkerApplier;
use crate::boundary_queue::BoundaryEntry;
use crate::coordinator::Shared;
use crate::errors;
use crate::job_queue::JobQueue;
use crate::relay::spill::SpillEnd;
use crate::scheduler::{Interrupted, Ticket};

pub struct Job {
    pub entry: BoundaryEntry,
    pub ticket: Ticket,
}

/// How a dispatched transaction ended, when not interrupted.
enum Done {
    /// Committed (or skipped: committed before), with its end known.
    Committed(Box<BoundaryEntry>),
    /// Streamed and cut off before its end (its connection ended): rolled
    /// back; it comes again as a new entry.
    Withdrawn,
}

pub fn run(worker_index: usize, shared: Arc<Shared>, jobs: Arc<JobQueue<Job>>, mut applier: Box<dyn WorkerApplier>) {
    let mut buffer = Vec::new();
    while let Some(job) = jobs.pop(&shared.stop) {
        match apply_one(worker_index, &shared, &job, applier.as_mut(), &mut buffer) {
            Ok(Done::Committed(entry)) => {
                shared.relay.release(&entry.location);
                // The applier's source position only moves forward: it
                // is recorded in ticket order (the next transaction may
                // finish its commit first once this one is ordered).
                shared.record_applied(&entry, &job.ticket);
                shared.positions.committed(job.ticket.number);
                shared.scheduler.committed(&job.ticket);
            }
            Ok(Done::Withdrawn) => {
                shared.relay.release(&job.entry.location);
                shared.record_withdrawn(&job.entry);
                shared.positions.withdrawn(job.ticket.number);
                // Frees its commit turn and clock slot as if it committed.
                shared.scheduler.committed(&job.ticket);
            }
            Err(Interrupted::Stopped) => {}
            Err(Interrupted::Failed(error)) => {
                shared.scheduler.fail(error, Some(&job.ticket));
                shared.dispatch_stop.request();
            }
        }
        // A large transaction's buffer is not kept for the next one.
        if buffer.capacity() > BUFFER_KEPT_BYTES_MAX {
            buffer = Vec::new();
        }
    }
}

/// A worker keeps its read buffer up to this size between transactions.
const BUFFER_KEPT_BYTES_MAX: usize = 1 << 20;

fn apply_one(
    worker_index: usize,
    shared: &Shared,
    job: &Job,
    applier: &mut dyn WorkerApplier,
    buffer: &mut Vec<u8>,
) -> Result<Done, Interrupted> {
    let failed = |error: MysqlError| {
        let entry = &job.entry;
        Interrupted::Failed(errors::worker_failed(
            worker_index + 1,
            &entry.gtid_text(),
            &entry.source_log_file,
            entry.source_end_log_pos,
            &error,
        ))
    };
    let mut entry = job.entry.clone();
    let streamed_file = entry.location.spill_file().filter(|_| entry.is_streamed()).cloned();
    if let Some(file) = &streamed_file {
        if shared.positions.any_applied_beyond() {
            // Whether it committed before a crash is known by its end
            // position: it is applied once complete, as it was before
            // streaming (during a run that set is only emptied).
            match file.wait_for_end(&shared.stop) {
                SpillEnd::Complete => {
                    entry = entry.completed().expect("the end is set before the file is complete");
                    shared.positions.ended_at(job.ticket.number, entry.source_position());
                }
                SpillEnd::Abandoned => return withdraw(shared, job),
                SpillEnd::Writing => return Err(Interrupted::Stopped),
            }
        }
    }
    if !entry.is_streamed() && shared.positions.already_applied(&entry.source_position()) {
        // Committed before a crash (or by an earlier run) beyond where the
        // receiver resumed: counted, not applied again.
        shared.scheduler.wait_commit_turn(&job.ticket)?;
        shared.scheduler.ordered(&job.ticket);
        return Ok(Done::Committed(Box::new(entry)));
    }
    let applied = shared.relay.events(&entry.location, buffer, &shared.stop).and_then(|mut events| applier.apply(&entry, &mut events));
    if let (Some(file), true) = (&streamed_file, entry.is_streamed()) {
        // Read as it arrived: what ended the read decides. An applier that
        // returned early (a GTID executed here already) still needs the end.
        let end = if applied.is_ok() { file.wait_for_end(&shared.stop) } else { file.end() };
        match end {
            SpillEnd::Complete => {
                entry = entry.completed().expect("the end is set before the file is complete");
                shared.positions.ended_at(job.ticket.number, entry.source_position());
            }
            SpillEnd::Abandoned => {
                applier.rollback(&entry);
                return withdraw(shared, job);
            }
            SpillEnd::Writing if applied.is_ok() || shared.stop.is_requested() => {
                applier.rollback(&entry);
                return Err(Interrupted::Stopped);
            }
            SpillEnd::Writing => {}
        }
    }
    if let Err(error) = applied {
        applier.rollback(&entry);
        return Err(failed(error));
    }
    if let Err(interrupted) = shared.scheduler.wait_commit_turn(&job.ticket) {
        applier.rollback(&entry);
        return Err(interrupted);
    }
    applier.applied_checkpoint(shared.positions.checkpoint_for(job.ticket.number));
    applier.commit_ordered(&entry, &|| shared.scheduler.ordered(&job.ticket)).map_err(failed)?;
    Ok(Done::Committed(Box::new(entry)))
}

/// A streamed transaction cut off: it gives its commit turn up in order.
fn withdraw(shared: &Shared, job: &Job) -> Result<Done, Interrupted> {
    shared.scheduler.wait_commit_turn(&job.ticket)?;
    Ok(Done::Withdrawn)
}
