//! Every system variable binlogd knows: its scope, whether SET may change
//! it, its type, and where its value comes from ([`Origin`]). SET, SHOW
//! VARIABLES, `@@name`, the command line and my.cnf all read this table.

use std::time::Duration;

use database::config::BINLOG_SUBDIR;
use database::redo::FlushLogAtTrxCommit;
use database::{BinlogStorageEngine, RowImage, RowMetadata};
use replica::{CoordinatorConfig, CoordinatorMode};
use source::DumpSettings;

use super::startup::{Field, Origin, StartupConfig};
use super::{Definition, Kind, Type};

pub use binlog_format::constants::SERVER_VERSION;

/// Both a global and a session value; SET SESSION and SET GLOBAL.
const fn both(name: &'static str, value_type: Type, origin: Origin) -> Definition {
    Definition { name, kind: Kind::Both, dynamic: true, value_type, origin }
}

/// Only a global value; SET GLOBAL.
const fn global(name: &'static str, value_type: Type, origin: Origin) -> Definition {
    Definition { name, kind: Kind::Global, dynamic: true, value_type, origin }
}

/// Only a session value; SET SESSION.
const fn session(name: &'static str, value_type: Type, origin: Origin) -> Definition {
    Definition { name, kind: Kind::Session, dynamic: true, value_type, origin }
}

/// A global value given at startup, never changed at run time.
const fn read_only(name: &'static str, value_type: Type, origin: Origin) -> Definition {
    Definition { name, kind: Kind::Global, dynamic: false, value_type, origin }
}

const fn own(default: &'static str) -> Origin {
    Origin::Own(default)
}

const fn startup(
    read: fn(&StartupConfig) -> String,
    write: fn(&mut StartupConfig, &super::startup::Setting) -> Result<(), String>,
) -> Origin {
    Origin::Startup(Field { read, write })
}

fn have_ssl(config: &StartupConfig) -> String {
    if config.server.connection.tls.is_some() { "YES" } else { "DISABLED" }.to_string()
}

/// `have_ssl` reports what the server found, not what it was told: a
/// startup value is refused unless it says what the server reports.
fn given_have_ssl(config: &mut StartupConfig, value: &super::startup::Setting) -> Result<(), String> {
    if value.text().eq_ignore_ascii_case(&have_ssl(config)) {
        return Ok(());
    }
    Err("is read-only".into())
}

fn on_off(on: bool) -> String {
    u8::from(on).to_string()
}

/// `transaction_isolation`'s words (binlogd refuses the first and last
/// when they are set: see `exec/transaction_statements.rs`).
const ISOLATION_LEVELS: &[&str] = &["READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE"];

/// Every variable binlogd knows, by name within each block.
pub const DEFINITIONS: &[Definition] = &[
    both("auto_increment_increment", Type::Integer, own("1")),
    both("auto_increment_offset", Type::Integer, own("1")),
    both("autocommit", Type::Boolean, own("1")),
    read_only(
        "binlog_cache_size",
        Type::Integer,
        startup(
            |config| config.database.binlog.binlog_cache_size.to_string(),
            |config, value| {
                config.database.binlog.binlog_cache_size = value.number()?;
                Ok(())
            },
        ),
    ),
    // Dynamic as in MySQL: SET GLOBAL rotates the log (exec/set.rs); the
    // value shown is the binlog's (session.rs).
    global(
        "binlog_checksum",
        Type::Enumeration(&["CRC32", "NONE"]),
        startup(
            |config| if config.database.binlog.binlog_checksum { "CRC32" } else { "NONE" }.to_string(),
            |config, value| {
                config.database.binlog.binlog_checksum = value.word()? == "CRC32";
                Ok(())
            },
        ),
    ),
    // Read from the binlog's options (session.rs).
    read_only("binlog_expire_logs_seconds", Type::Integer, own("0")),
    // binlogd logs rows only: ROW is the one value (STATEMENT and MIXED
    // are 1231).
    both("binlog_format", Type::Enumeration(&["ROW"]), own("ROW")),
    read_only("binlog_group_commit_sync_delay", Type::Integer, own("0")),
    read_only("binlog_group_commit_sync_no_delay_count", Type::Integer, own("0")),
    read_only("binlog_gtid_simple_recovery", Type::Boolean, own("1")),
    global(
        "binlog_large_transaction_optimization_enabled",
        Type::Boolean,
        startup(
            |config| on_off(config.database.binlog.large_transaction_optimization_enabled),
            |config, value| {
                config.database.binlog.large_transaction_optimization_enabled = value.boolean()?;
                Ok(())
            },
        ),
    ),
    global(
        "binlog_large_transaction_optimization_threshold",
        Type::Integer,
        startup(
            |config| config.database.binlog.large_transaction_optimization_threshold.to_string(),
            |config, value| {
                config.database.binlog.large_transaction_optimization_threshold = value.number()?;
                Ok(())
            },
        ),
    ),
    // binlog_row_event_max_size, binlog_row_image, binlog_row_metadata,
    // binlog_row_value_options and binlog_rows_query_log_events: the database's row logging
    // (database::row_image); SET GLOBAL reaches it in exec/set.rs. The
    // metadata default is FULL (MySQL 8.4's is MINIMAL): CDC readers need
    // the column names.
    read_only("binlog_row_event_max_size", Type::Integer, Origin::Owner(|| database::BINLOG_ROW_EVENT_MAX_SIZE.to_string())),
    both("binlog_row_image", Type::Enumeration(RowImage::WORDS), own("FULL")),
    global("binlog_row_metadata", Type::Enumeration(RowMetadata::WORDS), own("FULL")),
    // PARTIAL_JSON: updates as Partial_update_rows events (database::partial_json).
    both("binlog_row_value_options", Type::Enumeration(&["", "PARTIAL_JSON"]), own("")),
    both("binlog_rows_query_log_events", Type::Boolean, own("0")),
    // MariaDB 12.3's: '' (classic files) or 'engine' (the binlog rides the
    // redo log; `file` and `innodb` are accepted for them). Read at open,
    // so a change takes effect at restart; shown in the mode's own spelling.
    read_only(
        "binlog_storage_engine",
        Type::Text,
        startup(
            |config| config.database.binlog_storage_engine.as_str().to_string(),
            |config, value| {
                config.database.binlog_storage_engine =
                    BinlogStorageEngine::parse(value.word()?).ok_or_else(|| "is not '' or 'engine'".to_string())?;
                Ok(())
            },
        ),
    ),
    // binlog_transaction_compression and its zstd level (1-22): read by
    // each transaction at commit (session.rs `statement_context`); SET
    // adjusts an out-of-range level with warning 1292 (exec/set.rs).
    both("binlog_transaction_compression", Type::Boolean, own("0")),
    both("binlog_transaction_compression_level_zstd", Type::Integer, own("3")),
    // binlogd's own (read when a dump starts, `SqlSession::dump_settings`): microseconds a
    // binlog dump rests after sending everything visible before it reads
    // again, so a commit stream reaches its reader in batches (fewer
    // wake-ups and writes per commit; up to this much more replica lag).
    // 0 = send each group as soon as it is visible; at most 1 s.
    global("binlogd_dump_send_delay", Type::Integer, own("5000")),
    // binlogd's own: the engine's bound on rows held in memory.
    read_only(
        "binlogd_engine_memory_limit",
        Type::Integer,
        startup(
            |config| config.database.engine.memory_limit_bytes.to_string(),
            |config, value| {
                config.database.engine.memory_limit_bytes = value.number()?;
                Ok(())
            },
        ),
    ),
    // binlogd's own: a large transaction goes to redo in prepare parts of
    // about this many bytes.
    read_only(
        "binlogd_redo_prepare_part_bytes",
        Type::Integer,
        startup(
            |config| config.database.redo_prepare_part_bytes.to_string(),
            |config, value| {
                config.database.redo_prepare_part_bytes = value.number_within()?;
                Ok(())
            },
        ),
    ),
    // binlogd's own (read by START REPLICA [SQL_THREAD]): how the
    // coordinator finds transactions, from the group boundary queue
    // (QUEUE) or by reading back and decoding every event as MySQL's
    // coordinator does (EVENT_SCAN, for `binlogd bench replication`).
    global(
        "binlogd_replica_coordinator_mode",
        Type::Enumeration(&["QUEUE", "EVENT_SCAN"]),
        Origin::Owner(|| {
            match CoordinatorConfig::default().mode {
                CoordinatorMode::BoundaryQueue => "QUEUE",
                CoordinatorMode::EventScan => "EVENT_SCAN",
            }
            .to_string()
        }),
    ),
    // binlogd's own (read by START REPLICA [IO_THREAD]): a transaction
    // that spills out of the memory relay log is handed to a worker as it
    // arrives (ON), or once its last event is in (OFF, as MySQL applies a
    // transaction; for `binlogd bench replication`).
    global("binlogd_replica_stream_spilled", Type::Boolean, Origin::Owner(|| on_off(replica::receiver::STREAM_SPILLED_DEFAULT))),
    // binlogd's own: a spill file is synced every this many bytes.
    read_only(
        "binlogd_spill_sync_chunk_bytes",
        Type::Integer,
        startup(
            |config| config.database.binlog.spill_sync_chunk_bytes.to_string(),
            |config, value| {
                config.database.binlog.spill_sync_chunk_bytes = value.number()?;
                Ok(())
            },
        ),
    ),
    // binlogd's own: an open transaction writes ahead of COMMIT once this
    // many changes have gathered (0: never).
    read_only(
        "binlogd_write_ahead_min_changes",
        Type::Integer,
        startup(
            |config| config.database.write_ahead_min_changes.to_string(),
            |config, value| {
                config.database.write_ahead_min_changes = value.number_within()?;
                Ok(())
            },
        ),
    ),
    // caching_sha2_password's RSA key pair, relative to the data directory
    // unless absolute; made on first start (serve's certificates.rs).
    read_only("caching_sha2_password_auto_generate_rsa_keys", Type::Boolean, own("1")),
    read_only("caching_sha2_password_private_key_path", Type::Text, own("private_key.pem")),
    read_only("caching_sha2_password_public_key_path", Type::Text, own("public_key.pem")),
    both("character_set_client", Type::Text, own("utf8mb4")),
    both("character_set_connection", Type::Text, own("utf8mb4")),
    both("character_set_database", Type::Text, own("utf8mb4")),
    both("character_set_results", Type::Text, own("utf8mb4")),
    both("character_set_server", Type::Text, own("utf8mb4")),
    both("collation_connection", Type::Text, own("utf8mb4_general_ci")),
    both("collation_database", Type::Text, own("utf8mb4_general_ci")),
    both("collation_server", Type::Text, own("utf8mb4_general_ci")),
    read_only(
        "datadir",
        Type::Text,
        startup(
            |config| config.database.dir.display().to_string(),
            |config, value| {
                config.database.dir = value.word()?.into();
                config.database.binlog.dir = config.database.dir.join(BINLOG_SUBDIR);
                Ok(())
            },
        ),
    ),
    both("default_storage_engine", Type::Text, own("InnoDB")),
    read_only("enforce_gtid_consistency", Type::Text, own("ON")),
    both("foreign_key_checks", Type::Boolean, own("1")),
    // gtid_executed and gtid_purged are read from the binlog (session.rs).
    read_only("gtid_executed", Type::Text, own("")),
    read_only("gtid_mode", Type::Text, own("ON")),
    // Read and set through exec/gtid_next.rs.
    session("gtid_next", Type::Text, own("AUTOMATIC")),
    read_only("gtid_purged", Type::Text, own("")),
    // TLS: YES once the certificate and key are loaded (serve makes them
    // on first start, as mysqld does), DISABLED otherwise.
    read_only("have_openssl", Type::Text, startup(have_ssl, given_have_ssl)),
    read_only("have_ssl", Type::Text, startup(have_ssl, given_have_ssl)),
    read_only("hostname", Type::Text, own("localhost")),
    global("init_connect", Type::Text, own("")),
    read_only(
        "innodb_flush_log_at_trx_commit",
        Type::Integer,
        startup(
            |config| config.database.redo.innodb_flush_log_at_trx_commit.value().to_string(),
            |config, value| {
                config.database.redo.innodb_flush_log_at_trx_commit =
                    FlushLogAtTrxCommit::from_value(value.number()?).ok_or_else(|| "is not 0, 1 or 2".to_string())?;
                Ok(())
            },
        ),
    ),
    both(
        "innodb_lock_wait_timeout",
        Type::Integer,
        startup(
            |config| config.database.engine.lock_wait_timeout.as_secs().to_string(),
            |config, value| {
                config.database.engine.lock_wait_timeout = Duration::from_secs(value.number()?);
                Ok(())
            },
        ),
    ),
    both("interactive_timeout", Type::Integer, own("28800")),
    read_only("license", Type::Text, own("Apache-2.0")),
    both("lock_wait_timeout", Type::Integer, own("31536000")),
    read_only("log_bin", Type::Boolean, own("1")),
    // Read from the binlog's options (session.rs).
    read_only("log_bin_basename", Type::Text, own("")),
    read_only("log_bin_index", Type::Text, own("")),
    // A replica's applied transactions go through the binlog like any other.
    read_only("log_replica_updates", Type::Boolean, own("1")),
    read_only("log_slave_updates", Type::Boolean, own("1")),
    read_only("lower_case_table_names", Type::Integer, own("0")),
    global(
        "max_allowed_packet",
        Type::Integer,
        startup(
            |config| config.server.connection.max_allowed_packet.to_string(),
            |config, value| {
                config.server.connection.max_allowed_packet = value.number_within()?;
                Ok(())
            },
        ),
    ),
    // Read from the binlog's options (session.rs).
    read_only("max_binlog_cache_size", Type::Integer, own("0")),
    read_only(
        "max_binlog_size",
        Type::Integer,
        startup(
            |config| config.database.binlog.max_binlog_size.to_string(),
            |config, value| {
                config.database.binlog.max_binlog_size = value.number()?;
                Ok(())
            },
        ),
    ),
    global(
        "max_connections",
        Type::Integer,
        startup(
            |config| config.server.max_connections.to_string(),
            |config, value| {
                config.server.max_connections = value.number_within()?;
                Ok(())
            },
        ),
    ),
    both("net_buffer_length", Type::Integer, own("16384")),
    both("net_read_timeout", Type::Integer, own("30")),
    both(
        "net_write_timeout",
        Type::Integer,
        startup(
            |config| config.server.connection.net_write_timeout.as_secs().to_string(),
            |config, value| {
                config.server.connection.net_write_timeout = Duration::from_secs(value.number()?);
                Ok(())
            },
        ),
    ),
    read_only("performance_schema", Type::Boolean, own("0")),
    read_only(
        "port",
        Type::Integer,
        startup(
            |config| config.server.bind_address.port().to_string(),
            |config, value| {
                config.server.bind_address.set_port(value.number_within()?);
                Ok(())
            },
        ),
    ),
    // The replica's (read by START REPLICA): seconds without a byte from
    // the source before reconnecting, applier workers, commit order.
    global("replica_net_timeout", Type::Integer, Origin::Owner(|| replica::receiver::NET_TIMEOUT_DEFAULT.as_secs().to_string())),
    global("replica_parallel_workers", Type::Integer, Origin::Owner(|| CoordinatorConfig::default().workers.to_string())),
    global("replica_preserve_commit_order", Type::Boolean, Origin::Owner(|| on_off(CoordinatorConfig::default().preserve_commit_order))),
    // Refuses TCP logins without TLS (3159), checked as a session opens.
    global("require_secure_transport", Type::Boolean, own("0")),
    read_only(
        "server_id",
        Type::Integer,
        startup(
            |config| config.database.binlog.server_id.to_string(),
            |config, value| {
                config.database.binlog.server_id = value.number_within()?;
                Ok(())
            },
        ),
    ),
    // Read from the binlog's options (session.rs).
    read_only("server_uuid", Type::Text, own("")),
    // Startup only: a configured replica starts its threads with the server
    // unless this is ON.
    read_only("skip_replica_start", Type::Boolean, own("0")),
    // MySQL's: a dump checks each event's CRC32 before sending it (ON)
    // or leaves that to the replica (OFF, the default; the source crate's dump.rs).
    global("source_verify_checksum", Type::Boolean, Origin::Owner(|| on_off(DumpSettings::default().verify_checksums))),
    both(
        "sql_mode",
        Type::Text,
        own("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"),
    ),
    both("sql_notes", Type::Boolean, own("1")),
    both("sql_quote_show_create", Type::Boolean, own("1")),
    both("sql_select_limit", Type::Integer, own("18446744073709551615")),
    // The TLS files, relative to the data directory unless absolute; read
    // by serve at startup.
    read_only("ssl_ca", Type::Text, own("ca.pem")),
    read_only("ssl_cert", Type::Text, own("server-cert.pem")),
    read_only("ssl_key", Type::Text, own("server-key.pem")),
    read_only(
        "sync_binlog",
        Type::Integer,
        startup(
            |config| config.database.binlog.sync_binlog.to_string(),
            |config, value| {
                config.database.binlog.sync_binlog = value.number()?;
                Ok(())
            },
        ),
    ),
    read_only("system_time_zone", Type::Text, own("UTC")),
    both("time_zone", Type::Text, own("SYSTEM")),
    read_only("tls_version", Type::Text, own("TLSv1.2,TLSv1.3")),
    both("transaction_isolation", Type::Enumeration(ISOLATION_LEVELS), own("REPEATABLE-READ")),
    both("transaction_read_only", Type::Boolean, own("0")),
    both("tx_isolation", Type::Enumeration(ISOLATION_LEVELS), own("REPEATABLE-READ")),
    both("unique_checks", Type::Boolean, own("1")),
    read_only("version", Type::Text, own(SERVER_VERSION)),
    read_only("version_comment", Type::Text, own("binlogd")),
    read_only("version_compile_os", Type::Text, own("Linux")),
    both(
        "wait_timeout",
        Type::Integer,
        startup(
            |config| config.server.connection.wait_timeout.as_secs().to_string(),
            |config, value| {
                config.server.connection.wait_timeout = Duration::from_secs(value.number()?);
                Ok(())
            },
        ),
    ),
    // Semi-synchronous replication (`variables/semi_sync.rs`), under MySQL
    // 8.4's names and the master/slave ones MariaDB uses; SET GLOBAL of
    // either sets both. The source's reach the server's SemiSyncSource.
    global("rpl_semi_sync_master_enabled", Type::Boolean, own("0")),
    global("rpl_semi_sync_master_timeout", Type::Integer, own("10000")),
    global("rpl_semi_sync_master_wait_for_slave_count", Type::Integer, own("1")),
    global("rpl_semi_sync_master_wait_point", Type::Enumeration(&["AFTER_SYNC", "AFTER_COMMIT"]), own("AFTER_SYNC")),
    global("rpl_semi_sync_replica_enabled", Type::Boolean, own("0")),
    global("rpl_semi_sync_slave_enabled", Type::Boolean, own("0")),
    global("rpl_semi_sync_source_enabled", Type::Boolean, own("0")),
    global("rpl_semi_sync_source_timeout", Type::Integer, own("10000")),
    global("rpl_semi_sync_source_wait_for_replica_count", Type::Integer, own("1")),
    global("rpl_semi_sync_source_wait_point", Type::Enumeration(&["AFTER_SYNC", "AFTER_COMMIT"]), own("AFTER_SYNC")),
    // Point-in-time recovery: what `mysqlbinlog` and `mariadb-binlog`
    // print before the statements they replay (`variables/replay.rs` reads
    // their numeric forms, says which need a privilege and which values
    // binlogd refuses). MariaDB's own ones are accepted so its client's
    // output replays.
    both("check_constraint_checks", Type::Boolean, own("1")),
    both("completion_type", Type::Enumeration(&["NO_CHAIN", "CHAIN", "RELEASE"]), own("NO_CHAIN")),
    both("default_collation_for_utf8mb4", Type::Text, own("utf8mb4_0900_ai_ci")),
    both("default_table_encryption", Type::Boolean, own("0")),
    both("explicit_defaults_for_timestamp", Type::Boolean, own("1")),
    // MySQL's UNDEFINED_SERVER_VERSION: this server's version is used.
    session("immediate_server_version", Type::Integer, own("999999")),
    both("lc_time_names", Type::Text, own("en_US")),
    both("max_delayed_threads", Type::Integer, own("20")),
    // MySQL's UNDEFINED_COMMIT_TIMESTAMP (2^55): the commit's own time is used.
    session("original_commit_timestamp", Type::Integer, own("36028797018963968")),
    session("original_server_version", Type::Integer, own("999999")),
    session("pseudo_replica_mode", Type::Boolean, own("0")),
    session("pseudo_slave_mode", Type::Boolean, own("0")),
    // 0: the connection's own id (session.rs).
    session("pseudo_thread_id", Type::Integer, own("0")),
    session("rbr_exec_mode", Type::Enumeration(&["STRICT", "IDEMPOTENT"]), own("STRICT")),
    both("sql_auto_is_null", Type::Boolean, own("0")),
    both("sql_require_primary_key", Type::Boolean, own("0")),
    both("system_versioning_insert_history", Type::Boolean, own("0")),
    // The session clock, seconds since the epoch with microseconds; 0: the
    // real clock (session.rs).
    session("timestamp", Type::Text, own("0")),
    // Bounded memory per client: the whole server's prepared statements,
    // counted in the protocol's registry (SET GLOBAL reaches it in
    // exec/set.rs).
    global(
        "max_prepared_stmt_count",
        Type::Integer,
        startup(
            |config| config.server.connection.prepared_statements_max.to_string(),
            |config, value| {
                config.server.connection.prepared_statements_max = value.number_within()?;
                Ok(())
            },
        ),
    ),
    // The login path (protocol's login gate): seconds from accept to the
    // end of authentication, however slowly the client's bytes arrive.
    // Given at startup; the server reads it once.
    read_only(
        "connect_timeout",
        Type::Integer,
        startup(
            |config| config.server.connection.connect_timeout.as_secs().to_string(),
            |config, value| match value.number()? {
                0 => Err("is too small".into()),
                seconds => {
                    config.server.connection.connect_timeout = Duration::from_secs(seconds);
                    Ok(())
                }
            },
        ),
    ),
    // GROUP_CONCAT's bound on its result, in bytes (eval/group_concat.rs).
    both("group_concat_max_len", Type::Integer, own("1024")),
];
