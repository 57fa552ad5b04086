//! Command line: `binlogd <subcommand> ...`.
//!
//! Each subcommand lives in its own module (`inspect`) or crate (`serve`, `bench`) and owns its arguments struct
//! (`clap::Args`) and a `run(&Args) -> ExitCode`. Adding one means: a module, a variant below, and an arm in
//! `main.rs`'s `match`.

use clap::{Parser, Subcommand};

use crate::inspect::InspectArgs;

#[derive(Debug, Parser)]
#[command(name = "binlogd", version, about = "binlogd: a MySQL-compatible server whose binary log never stalls")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the events of binlog files, like `mysqlbinlog -vv` (or as JSON lines).
    Inspect(InspectArgs),
    /// Run a benchmark (`bench commit`: group-commit throughput); prints a table or JSON, optionally CSV and a PNG chart.
    // Boxed: the benchmarks' arguments are far larger than the others.
    #[cfg(feature = "bench")]
    Bench(Box<bench::BenchArgs>),
    /// Run the MySQL-compatible server: `serve [--datadir DIR] [--port N] [--bind ADDR] [--defaults-file FILE] [--NAME=VALUE ...]`.
    Serve(serve::ServeArgs),
}
