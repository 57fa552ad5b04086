//! `binlogd bench <benchmark>`: each benchmark is a module with its own
//! arguments and a `run` that prints a table (or JSON) on stdout and, on
//! request, writes CSV and a PNG chart through [`report`].
//!
//! - `commit` ([`commit`]): group-commit throughput, latency and commits
//!   per fsync with N concurrent sessions.
//! - `large-commit` ([`large_commit`]): commit latency of one large
//!   transaction and the background commits' throughput and latency
//!   meanwhile, promotion ON vs OFF (seed 000 figure 4).
//! - `recovery` ([`recovery`]): binlog recovery time after a crash that
//!   leaves a large transaction last in the log, ON vs OFF (figure 5).
//! - `engine` ([`engine`]): small read-write transactions through the
//!   durable database (engine, redo, binlog, two-phase commit); tps, p99
//!   and fsyncs per second of each log.
//! - `side-by-side` ([`side_by_side`]): MariaDB 10.11 and `binlogd serve`
//!   under the same sysbench workloads and a large commit.
//! - `dump` ([`dump`]): binlog dump MB/s to N readers over loopback beside
//!   a file-to-socket baseline of the same run; with `--tail-readers`
//!   ([`dump_tail`]) the source's commits/s while N readers follow the tail.
//! - `replication` ([`replication`]): a binlogd replica of a binlogd source
//!   under sysbench: receiver MB/s with the applier stopped (memory vs file
//!   relay log), applier trx/s with the receiver stopped (queue vs
//!   event-scan coordinator, 1–8 workers), end-to-end lag (seed 001).
//! - `semi-sync` ([`semi_sync`]): the source's TPS and commit latency
//!   with semi-synchronous replication ON vs OFF, one binlogd replica.
//! - `cdc` ([`cdc`]): CDC consumers (Debezium embedded, go-mysql) streaming
//!   from binlogd and from MariaDB under sysbench: events/s and lag.
//!
//! What they share (directories, sizes, histograms) is in [`common`].
//!
//! The `binlogd` binary parses [`BenchArgs`] and calls [`run`]. The
//! benchmarks that need a server start one in this process through the
//! `serve` crate (`dump`), or start this executable as `binlogd serve`
//! child processes (`side-by-side`, `replication`): they run inside the
//! `binlogd` binary, never on their own.

pub mod cdc;
pub mod commit;
pub mod common;
pub mod compression;
pub mod dump;
pub mod dump_tail;
pub mod engine;
pub mod engine_stages;
pub mod engine_workloads;
pub mod large_commit;
pub mod recovery;
pub mod replication;
pub mod report;
pub mod semi_sync;
pub mod side_by_side;
pub mod thread_cpu;

use std::process::ExitCode;

use self::cdc::CdcBenchArgs;
use self::commit::CommitBenchArgs;
use self::dump::DumpBenchArgs;
use self::engine::EngineBenchArgs;
use self::large_commit::LargeCommitBenchArgs;
use self::recovery::RecoveryBenchArgs;
use self::replication::ReplicationBenchArgs;
use self::semi_sync::SemiSyncBenchArgs;
use self::side_by_side::SideBySideBenchArgs;

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub benchmark: Benchmark,
}

#[derive(Debug, clap::Subcommand)]
pub enum Benchmark {
    /// Group commit: N sessions commit small transactions at once; prints
    /// commits/s, commit latency and commits per fsync.
    Commit(CommitBenchArgs),
    /// One large transaction commits while background sessions commit
    /// small ones; prints its commit latency, the background's worst
    /// 100 ms window and latency, and peak disk use, promotion ON vs OFF.
    LargeCommit(LargeCommitBenchArgs),
    /// Crash with a large transaction last in the log, then time binlog
    /// recovery at the next open, promotion ON vs OFF.
    Recovery(RecoveryBenchArgs),
    /// Sessions run small read-write transactions against the database
    /// (engine + redo + binlog, two-phase commit); prints tps, p99 latency
    /// and redo and binlog fsyncs per second.
    Engine(EngineBenchArgs),
    /// MariaDB 10.11 and `binlogd serve` with equal durability under the
    /// same sysbench workloads, then a large transaction committing while
    /// oltp_write_only runs; prints TPS, p99/max latency, the large commit
    /// time and the lowest per-second TPS during it; writes CSV and a PNG.
    SideBySide(SideBySideBenchArgs),
    /// N readers dump the binlog (COM_BINLOG_DUMP) over loopback; prints
    /// MB/s beside a file-read-and-socket-write baseline of the same run.
    Dump(DumpBenchArgs),
    /// A binlogd replica of a binlogd source running sysbench
    /// oltp_write_only: receiver MB/s with the applier stopped (memory vs
    /// file relay log), applier trx/s with the receiver stopped over the
    /// filled relay log (queue vs event-scan coordinator, per worker
    /// count), and end-to-end lag; prints tables, writes CSV and PNGs.
    Replication(ReplicationBenchArgs),
    /// A binlogd source and one semi-synchronous binlogd replica: the
    /// source runs sysbench oltp_write_only with semi-sync OFF and ON in
    /// alternate rounds; prints TPS and commit latency p50/p99 per run and
    /// the ON/OFF ratios; writes CSV and a PNG.
    SemiSync(SemiSyncBenchArgs),
    /// sysbench oltp_write_only on binlogd (and MariaDB 10.11) while a CDC
    /// consumer (Debezium embedded, go-mysql) streams the binlog; prints
    /// events/s and lag p50/p99 measured by probe rows; writes CSV and a PNG.
    Cdc(CdcBenchArgs),
}

/// Runs the chosen benchmark; an error goes to stderr and exit status 1.
pub fn run(args: &BenchArgs) -> ExitCode {
    let (name, result) = match &args.benchmark {
        Benchmark::Commit(args) => ("commit", commit::run(args)),
        Benchmark::LargeCommit(args) => ("large-commit", large_commit::run(args)),
        Benchmark::Recovery(args) => ("recovery", recovery::run(args)),
        Benchmark::Engine(args) => ("engine", engine::run(args)),
        Benchmark::SideBySide(args) => ("side-by-side", side_by_side::run(args)),
        Benchmark::Dump(args) => ("dump", dump::run(args)),
        Benchmark::Replication(args) => ("replication", replication::run(args)),
        Benchmark::SemiSync(args) => ("semi-sync", semi_sync::run(args)),
        Benchmark::Cdc(args) => ("cdc", cdc::run(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("binlogd bench {name}: {error}");
            ExitCode::FAILURE
        }
    }
}
