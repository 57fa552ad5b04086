//! `binlogd serve`: open the database in the data directory (created on
//! first start), listen for MySQL clients, and shut down cleanly on SIGINT
//! or SIGTERM (connections closed, then the binlog's Stop event written and
//! its in-use flag cleared by `Database::close`).
//!
//! A library so that the benchmarks (crate `bench`) start the same server
//! in their own process with [`start`], from the same options as the
//! command line, and wait for signals as the server does ([`signals`]).

mod certificates;
mod config;
mod options;
pub mod signals;

use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use protocol::{Authenticator, Server};
use sql::variables::StartupConfig;
use sql::{Accounts, GlobalVariables, SqlService};
use storage::{OsStorage, Storage};
use tracing::{error, info};

pub use options::ServeOptions;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// --datadir DIR (default ./binlogd-data), --port N (3306), --bind ADDR
    /// (127.0.0.1), --defaults-file FILE ([binlogd] and [mysqld] sections),
    /// and --NAME=VALUE for system variables.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub options: Vec<String>,
}

pub fn run(args: &ServeArgs) -> ExitCode {
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            error!("{message}");
            eprintln!("binlogd serve: {message}");
            ExitCode::FAILURE
        }
    }
}

fn serve(args: &ServeArgs) -> Result<(), String> {
    let options = ServeOptions::parse(&args.options)?;
    // Before any thread starts, so every thread inherits the mask.
    signals::block().map_err(|error| format!("cannot block signals: {error}"))?;
    let running = start(&options)?;
    info!(address = %running.server.local_address(), version = sql::SERVER_VERSION, "ready for connections");
    let signal = signals::wait();
    info!(signal, "shutting down");
    running.stop()?;
    info!("shutdown complete");
    Ok(())
}

/// A server listening with its database open (`serve`, and benchmarks
/// that need a real server in process).
pub struct Running {
    pub server: Server,
    pub database: Arc<database::Database>,
    pub service: Arc<SqlService>,
    /// Released after the database is closed.
    datadir_lock: database::DataDirLock,
}

impl Running {
    /// Stops the replica's threads, closes every connection, then the
    /// database.
    pub fn stop(self) -> Result<(), String> {
        let shared = self.service.shared();
        shared.replica.shut_down(shared);
        self.server.shutdown();
        // Every session is gone with the server's threads; the database can close.
        let closed = self.database.close().map_err(|error| format!("closing the database: {error}"));
        drop(self.datadir_lock);
        closed
    }
}

/// A configured replica starts its threads with the server, as mysqld
/// does, unless `skip_replica_start` is ON. A failure to start is logged,
/// not fatal: the server serves, and START REPLICA reports the error.
fn start_replica(service: &SqlService) {
    let shared = service.shared();
    let Some(settings) = shared.replica_source.settings() else {
        return;
    };
    if settings.host.is_empty() || matches!(shared.globals.get("skip_replica_start"), Some(sql::eval::value::Value::Int(1))) {
        return;
    }
    match shared.replica.start(shared, sql::parse::ReplicaThreads::Both) {
        Ok(_) => info!(source = %format!("{}:{}", settings.host, settings.port), "replica threads started"),
        Err(error) => error!(code = error.code, message = %error.message, "cannot start the replica threads"),
    }
}

/// Opens the database in `options.datadir` (created if missing) and
/// starts listening.
pub fn start(options: &ServeOptions) -> Result<Running, String> {
    // Through the seam: 0700, as mysqld's data directory, which holds
    // password hashes and every row. An existing directory keeps the mode
    // its owner gave it.
    OsStorage.create_dir_all(&options.datadir).map_err(|error| error.to_string())?;
    // Before anything in the directory is read or written; held until the
    // database is closed.
    let datadir_lock = database::DataDirLock::acquire(&options.datadir).map_err(|error| error.to_string())?;
    // Before recovery: a port in use must fail the start while it has
    // written nothing.
    let listener = TcpListener::bind(SocketAddr::new(options.bind, options.port))
        .map_err(|error| format!("cannot listen on {}:{}: {error}", options.bind, options.port))?;
    let accounts = Arc::new(Accounts::open(&options.datadir).map_err(|error| format!("cannot load the accounts: {error}"))?);
    if !options.bind.is_loopback() {
        // From now on CREATE USER / ALTER USER refuse empty passwords too.
        accounts.require_passwords();
        let passwordless = accounts.passwordless();
        if !passwordless.is_empty() {
            return Err(format!(
                "refusing to listen on {} while these accounts have no password: {} (set passwords, or bind to 127.0.0.1)",
                options.bind,
                passwordless.join(", ")
            ));
        }
    }
    let replica_source =
        sql::ReplicaSource::open(&options.datadir).map_err(|error| format!("cannot load the replica's source settings: {error}"))?;
    let mut settings = config::Settings::from_options(options)?;
    // Before the global variables, which show whether TLS is on (have_ssl).
    let tls = certificates::load_or_generate(&options.datadir, &settings.tls_files())?;
    settings.startup.server.connection.tls = Some(tls);
    let (private_key, public_key) = settings.rsa_key_files();
    let rsa = certificates::load_or_generate_rsa(&options.datadir, &private_key, &public_key)?;
    settings.startup.server.connection.rsa = Some(Arc::new(rsa));
    let globals = GlobalVariables::new(&settings.startup, &settings.given).map_err(|error| error.message)?;
    let StartupConfig { database: database_config, server: mut server_config } = settings.startup;
    if database_config.binlog_storage_engine == database::BinlogStorageEngine::Engine {
        // The redo record carries the binlog bytes, so the redo log's flush
        // is the binlog's durability; the files are written behind unsynced.
        info!("binlog_storage_engine=engine: sync_binlog is ignored, innodb_flush_log_at_trx_commit alone decides durability");
    }
    info!(datadir = %options.datadir.display(), "opening the database");
    let (database, report) = database::Database::open(database_config).map_err(|error| format!("cannot open the database: {error}"))?;
    info!(?report, "database open");
    let database = Arc::new(database);
    let service = Arc::new(SqlService::new(Arc::clone(&database), globals, Arc::clone(&accounts), replica_source));
    server_config.connection.server_version = sql::SERVER_VERSION.to_string();
    let authenticator: Arc<dyn Authenticator> = accounts;
    let server = match Server::start_on(listener, server_config, authenticator, Arc::clone(&service)) {
        Ok(server) => server,
        Err(error) => {
            let _ = database.close();
            return Err(format!("cannot listen on {}:{}: {error}", options.bind, options.port));
        }
    };
    start_replica(&service);
    Ok(Running { server, database, service, datadir_lock })
}
