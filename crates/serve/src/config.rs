//! Server variables given at startup, sorted into the settings that shape
//! the database, the listener and the SQL layer's global variables.

use std::time::Duration;

use database::DatabaseConfig;

use super::options::ServeOptions;

pub struct Settings {
    pub database: DatabaseConfig,
    pub max_connections: usize,
    pub max_allowed_packet: usize,
    /// Values for the SQL layer's global variables.
    pub globals: Vec<(String, String)>,
}

fn number(name: &str, value: &str) -> Result<u64, String> {
    let value = value.trim();
    let (digits, multiplier) = match value.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&value[..value.len() - 1], 1u64 << 10),
        Some('M') => (&value[..value.len() - 1], 1 << 20),
        Some('G') => (&value[..value.len() - 1], 1 << 30),
        _ => (value, 1),
    };
    digits.parse::<u64>().map(|n| n * multiplier).map_err(|_| format!("--{name}: '{value}' is not a number"))
}

fn boolean(name: &str, value: &str) -> Result<bool, String> {
    match value.to_ascii_uppercase().as_str() {
        "1" | "ON" | "TRUE" => Ok(true),
        "0" | "OFF" | "FALSE" => Ok(false),
        _ => Err(format!("--{name}: '{value}' is not ON or OFF")),
    }
}

impl Settings {
    pub fn from_options(options: &ServeOptions) -> Result<Settings, String> {
        let mut database = DatabaseConfig::new(&options.datadir);
        let mut max_connections = 151;
        let mut max_allowed_packet = 64 << 20;
        let mut globals = vec![
            ("port".to_string(), options.port.to_string()),
            ("datadir".to_string(), options.datadir.display().to_string()),
        ];
        for (name, value) in &options.variables {
            let mut global = true;
            match name.as_str() {
                "sync_binlog" => database.binlog.sync_binlog = number(name, value)?,
                "binlog_cache_size" => database.binlog.binlog_cache_size = number(name, value)?,
                "max_binlog_size" => database.binlog.max_binlog_size = number(name, value)?,
                "server_id" => database.binlog.server_id = number(name, value)? as u32,
                "binlog_checksum" => {
                    database.binlog.binlog_checksum = match value.to_ascii_uppercase().as_str() {
                        "CRC32" => true,
                        "NONE" => false,
                        _ => return Err(format!("--binlog-checksum: '{value}' is not CRC32 or NONE")),
                    }
                }
                "binlog_large_transaction_optimization_enabled" => {
                    database.binlog.large_transaction_optimization_enabled = boolean(name, value)?
                }
                "binlog_large_transaction_optimization_threshold" => {
                    database.binlog.large_transaction_optimization_threshold = number(name, value)?
                }
                "innodb_flush_log_at_trx_commit" => {
                    database.redo.innodb_flush_log_at_trx_commit = redo::FlushLogAtTrxCommit::from_value(number(name, value)?)
                        .ok_or_else(|| format!("--{name}: '{value}' is not 0, 1 or 2"))?
                }
                // Takes effect at restart; in `engine` mode sync_binlog is ignored.
                "binlog_storage_engine" => {
                    database.binlog_storage_engine = database::BinlogStorageEngine::parse(value)
                        .ok_or_else(|| format!("--{name}: '{value}' is not '' or 'engine'"))?;
                    // Shown as the mode's own spelling ('' or 'engine'),
                    // whichever alias (`file`, `innodb`) started it.
                    globals.push((name.clone(), database.binlog_storage_engine.as_str().to_string()));
                    global = false;
                }
                "binlogd_spill_sync_chunk_bytes" => {
                    database.binlog.spill_sync_chunk_bytes = number(name, value)?;
                    global = false;
                }
                "binlogd_redo_prepare_part_bytes" => {
                    database.redo_prepare_part_bytes = number(name, value)? as usize;
                    global = false;
                }
                "binlogd_write_ahead_min_changes" => {
                    database.write_ahead_min_changes = number(name, value)? as usize;
                    global = false;
                }
                "innodb_lock_wait_timeout" => database.engine.lock_wait_timeout = Duration::from_secs(number(name, value)?),
                "binlogd_engine_memory_limit" => {
                    database.engine.memory_limit_bytes = number(name, value)?;
                    global = false;
                }
                "max_connections" => max_connections = number(name, value)? as usize,
                "max_allowed_packet" => max_allowed_packet = number(name, value)? as usize,
                _ => {}
            }
            if global {
                let value = if matches!(name.as_str(), "max_allowed_packet" | "binlog_cache_size" | "max_binlog_size" | "binlog_large_transaction_optimization_threshold") {
                    number(name, value)?.to_string()
                } else {
                    value.clone()
                };
                globals.push((name.clone(), value));
            }
        }
        Ok(Settings { database, max_connections, max_allowed_packet, globals })
    }
}
