//! A worker thread: takes dispatched transactions, reads their events from
//! the relay log, has its applier session apply them, waits for its commit
//! turn (commit order preserved), commits, and gives the relay space back.

use std::sync::Arc;

use protocol::MysqlError;

use crate::applier::WorkerApplier;
use crate::boundary_queue::BoundaryEntry;
use crate::coordinator::Shared;
use crate::errors;
use crate::job_queue::JobQueue;
use crate::scheduler::{Interrupted, Ticket};

pub struct Job {
    pub entry: BoundaryEntry,
    pub ticket: Ticket,
}

pub fn run(worker_index: usize, shared: Arc<Shared>, jobs: Arc<JobQueue<Job>>, mut applier: Box<dyn WorkerApplier>) {
    let mut buffer = Vec::new();
    while let Some(job) = jobs.pop(&shared.stop) {
        match apply_one(worker_index, &shared, &job, applier.as_mut(), &mut buffer) {
            Ok(()) => {
                shared.relay.release(&job.entry.location);
                // The applier's source position only moves forward: it
                // is recorded in ticket order (the next transaction may
                // finish its commit first once this one is ordered).
                shared.record_applied(&job.entry, &job.ticket);
                shared.positions.committed(job.ticket.number);
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
) -> Result<(), Interrupted> {
    let entry = &job.entry;
    let failed = |error: MysqlError| {
        Interrupted::Failed(errors::worker_failed(
            worker_index + 1,
            &entry.gtid_text(),
            &entry.source_log_file,
            entry.source_end_log_pos,
            &error,
        ))
    };
    if shared.positions.already_applied(&entry.source_position()) {
        // Committed before a crash (or by an earlier run) beyond where the
        // receiver resumed: counted, not applied again.
        shared.scheduler.wait_commit_turn(&job.ticket)?;
        shared.scheduler.ordered(&job.ticket);
        return Ok(());
    }
    let applied = shared.relay.events(&entry.location, buffer).and_then(|mut events| applier.apply(entry, &mut events));
    if let Err(error) = applied {
        applier.rollback(entry);
        return Err(failed(error));
    }
    if let Err(interrupted) = shared.scheduler.wait_commit_turn(&job.ticket) {
        applier.rollback(entry);
        return Err(interrupted);
    }
    applier.applied_checkpoint(shared.positions.checkpoint_for(job.ticket.number));
    applier.commit_ordered(entry, &|| shared.scheduler.ordered(&job.ticket)).map_err(failed)
}
