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
    let number = digits.parse::<u64>().map_err(|_| format!("--{name}: '{value}' is not a number"))?;
    number.checked_mul(multiplier).ok_or_else(|| format!("--{name}: '{value}' is over 2^64"))
}

/// A number that must fit `T` (server_id is 32 bits, sizes fit usize).
fn number_within<T: TryFrom<u64>>(name: &str, value: &str) -> Result<T, String> {
    T::try_from(number(name, value)?).map_err(|_| format!("--{name}: '{value}' is too large"))
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
        let mut globals =
            vec![("port".to_string(), options.port.to_string()), ("datadir".to_string(), options.datadir.display().to_string())];
        for (name, value) in &options.variables {
            let mut global = true;
            match name.as_str() {
                "sync_binlog" => database.binlog.sync_binlog = number(name, value)?,
                "binlog_cache_size" => database.binlog.binlog_cache_size = number(name, value)?,
                "max_binlog_size" => database.binlog.max_binlog_size = number(name, value)?,
                "server_id" => database.binlog.server_id = number_within(name, value)?,
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
                    database.binlog_storage_engine =
                        database::BinlogStorageEngine::parse(value).ok_or_else(|| format!("--{name}: '{value}' is not '' or 'engine'"))?;
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
                    database.redo_prepare_part_bytes = number_within(name, value)?;
                    global = false;
                }
                "binlogd_write_ahead_min_changes" => {
                    database.write_ahead_min_changes = number_within(name, value)?;
                    global = false;
                }
                "innodb_lock_wait_timeout" => database.engine.lock_wait_timeout = Duration::from_secs(number(name, value)?),
                "binlogd_engine_memory_limit" => {
                    database.engine.memory_limit_bytes = number(name, value)?;
                    global = false;
                }
                "max_connections" => max_connections = number_within(name, value)?,
                "max_allowed_packet" => max_allowed_packet = number_within(name, value)?,
                _ => {}
            }
            if global {
                let value = if matches!(
                    name.as_str(),
                    "max_allowed_packet" | "binlog_cache_size" | "max_binlog_size" | "binlog_large_transaction_optimization_threshold"
                ) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(options: &[&str]) -> Result<Settings, String> {
        let options: Vec<String> = options.iter().map(|option| option.to_string()).collect();
        Settings::from_options(&ServeOptions::parse(&options)?)
    }

    #[test]
    fn sizes_take_multipliers() {
        let settings = settings(&["--max-allowed-packet=16M", "--max-binlog-size=1G", "--server-id=4294967295"]).unwrap();
        assert_eq!(settings.max_allowed_packet, 16 << 20);
        assert_eq!(settings.database.binlog.max_binlog_size, 1 << 30);
        assert_eq!(settings.database.binlog.server_id, u32::MAX);
    }

    #[test]
    fn numbers_out_of_range_are_refused_not_wrapped() {
        let error = |options: &[&str]| settings(options).err().unwrap_or_else(|| panic!("{options:?} accepted"));
        assert_eq!(error(&["--server-id=4294967296"]), "--server_id: '4294967296' is too large");
        assert_eq!(error(&["--max-binlog-size=20000000000G"]), "--max_binlog_size: '20000000000G' is over 2^64");
        assert!(error(&["--max-allowed-packet=99999999999999999999"]).contains("is not a number"));
    }
}
