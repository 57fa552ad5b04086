//! The `binlogd` binary. One module per subcommand; see `cli.rs`.

mod bench;
mod cli;
mod inspect;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    match &cli.command {
        Command::Inspect(args) => inspect::run(args),
        Command::Bench(args) => bench::run(args),
    }
}

/// Logs go to stderr, filtered by `RUST_LOG` (default: warnings), so that
/// stdout stays clean for the output of commands like `inspect --json`.
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
