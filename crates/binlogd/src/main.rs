//! The `binlogd` binary: `inspect` is a module here, `serve` and `bench`
//! are crates of their own (`bench` behind the default cargo feature of
//! that name); see `cli.rs`.

mod cli;
mod inspect;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

/// mimalloc instead of glibc's malloc: a statement allocates many small
/// values on its connection's thread and frees them on the same thread,
/// which mimalloc's thread-local free lists serve without the arena locks
/// and fastbin consolidation that profiles of sysbench's reads showed
/// glibc spending a fifth of the server's CPU on.
#[global_allocator]
static GLOBAL_ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A server logs what it does (startup, shutdown) by default; the other
    // commands keep stderr for warnings.
    init_logging(if matches!(cli.command, Command::Serve(_)) { "info" } else { "warn" });
    match &cli.command {
        Command::Inspect(args) => inspect::run(args),
        #[cfg(feature = "bench")]
        Command::Bench(args) => bench::run(args),
        Command::Serve(args) => serve::run(args),
    }
}

/// Logs go to stderr with timestamps, filtered by `RUST_LOG` (default:
/// `default_level`), so that stdout stays clean for the output of commands
/// like `inspect --json`.
fn init_logging(default_level: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).with_writer(std::io::stderr).try_init();
}
