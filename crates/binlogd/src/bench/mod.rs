//! `binlogd bench <benchmark>`: each benchmark is a module with its own
//! arguments and a `run` that prints a table (or JSON) on stdout and, on
//! request, writes CSV and a PNG chart through [`report`].
//!
//! - `commit` ([`commit`]): group-commit throughput, latency and commits
//!   per fsync with N concurrent sessions.

pub mod commit;
pub mod report;

use std::process::ExitCode;

use self::commit::CommitBenchArgs;

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
}

/// Runs the chosen benchmark; an error goes to stderr and exit status 1.
pub fn run(args: &BenchArgs) -> ExitCode {
    let (name, result) = match &args.benchmark {
        Benchmark::Commit(args) => ("commit", commit::run(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("binlogd bench {name}: {error}");
            ExitCode::FAILURE
        }
    }
}
