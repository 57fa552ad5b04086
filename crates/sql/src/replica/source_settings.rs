//! The replica's connection settings: what CHANGE REPLICATION SOURCE TO
//! sets, RESET REPLICA clears and SHOW REPLICA STATUS shows (MySQL keeps
//! them in `mysql.slave_master_info`, its connection metadata repository).
//!
//! Kept in `replica_source.json` in the data directory, written like
//! `users.json` (`Storage::write_atomically`: a temp file, fsync, rename,
//! directory fsync), so a crash leaves the old settings or the new, whole.
//! The password is stored in clear text, as MySQL stores it in its table;
//! the file is mode 0600, as every file the storage seam creates.
//!
//! What is not here: positions. A replica resumes from its durable
//! executed GTID set (auto-position), not from a stored position, so
//! nothing that changes with every transaction is written to this file.

use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use protocol::MysqlError;
use serde::{Deserialize, Serialize};
use storage::{OsStorage, Storage};

use crate::parse::{OptionValue, SourceOption};

pub const FILE_NAME: &str = "replica_source.json";
const FORMAT_VERSION: u32 = 1;

pub const RELAYLOG_LIMIT_MIN_BYTES: u64 = 32 << 20;
pub const RELAYLOG_LIMIT_MAX_BYTES: u64 = 4 << 30;
pub const RELAYLOG_LIMIT_DEFAULT_BYTES: u64 = 128 << 20;
pub const SPILL_THRESHOLD_DEFAULT_BYTES: u64 = 16 << 20;
/// A transaction below this never spills (smaller thresholds would spill
/// ordinary transactions to files and defeat the memory relay log).
pub const SPILL_THRESHOLD_MIN_BYTES: u64 = 1 << 20;
/// MySQL's maximum SOURCE_HEARTBEAT_PERIOD, in seconds.
pub const HEARTBEAT_PERIOD_MAX_SECONDS: f64 = 4_294_967.0;
/// MySQL's default: half of `replica_net_timeout` (60 s).
pub const HEARTBEAT_PERIOD_DEFAULT_SECONDS: f64 = 30.0;

/// One source's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceSettings {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub auto_position: bool,
    /// Where a file-and-position replica starts (ignored with auto-position).
    pub log_file: String,
    pub log_pos: u64,
    pub heartbeat_period_seconds: f64,
    pub connect_retry_seconds: u64,
    pub retry_count: u64,
    pub in_memory_relaylog_enabled: bool,
    pub in_memory_relaylog_limit_bytes: u64,
    pub in_memory_relaylog_spill_threshold_bytes: u64,
    /// Which applier slots are this source's (`applied_slot.rs`): a new
    /// source or start position, or RESET REPLICA, moves to the next.
    #[serde(default)]
    pub position_epoch: u64,
}

impl Default for SourceSettings {
    fn default() -> SourceSettings {
        SourceSettings {
            host: String::new(),
            port: 3306,
            user: String::new(),
            password: String::new(),
            auto_position: false,
            log_file: String::new(),
            log_pos: 4,
            heartbeat_period_seconds: HEARTBEAT_PERIOD_DEFAULT_SECONDS,
            connect_retry_seconds: 60,
            retry_count: 10,
            in_memory_relaylog_enabled: true,
            in_memory_relaylog_limit_bytes: RELAYLOG_LIMIT_DEFAULT_BYTES,
            in_memory_relaylog_spill_threshold_bytes: SPILL_THRESHOLD_DEFAULT_BYTES,
            position_epoch: 0,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct FileContents {
    version: u32,
    source: SourceSettings,
}

/// The stored settings; `None` until the first CHANGE REPLICATION SOURCE TO
/// (and after RESET REPLICA ALL).
pub struct ReplicaSource {
    path: PathBuf,
    current: Mutex<Option<SourceSettings>>,
}

impl ReplicaSource {
    /// Loads `dir/replica_source.json` if there is one. A file that does
    /// not parse is an error naming it: a replica must not start with
    /// guessed settings.
    pub fn open(dir: &Path) -> std::io::Result<ReplicaSource> {
        let path = dir.join(FILE_NAME);
        let current = match std::fs::read(&path) {
            Ok(bytes) => {
                let contents: FileContents = serde_json::from_slice(&bytes)
                    .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {error}", path.display())))?;
                if contents.version != FORMAT_VERSION {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("{}: format version {} (this binlogd reads {FORMAT_VERSION})", path.display(), contents.version),
                    ));
                }
                Some(contents.source)
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        Ok(ReplicaSource { path, current: Mutex::new(current) })
    }

    pub fn settings(&self) -> Option<SourceSettings> {
        self.current.lock().clone()
    }

    /// CHANGE REPLICATION SOURCE TO: the options over the current settings
    /// (or the defaults), checked as MySQL checks them, then stored. A
    /// refused change stores nothing.
    pub fn change(&self, options: &[(SourceOption, OptionValue)]) -> Result<SourceSettings, MysqlError> {
        let mut current = self.current.lock();
        let mut settings = current.clone().unwrap_or_default();
        let setting_position = options.iter().any(|(option, _)| matches!(option, SourceOption::LogFile | SourceOption::LogPos));
        for (option, value) in options {
            apply_option(&mut settings, *option, value)?;
        }
        if settings.auto_position && setting_position {
            return Err(MysqlError::new(
                1776,
                "HY000",
                "Parameters SOURCE_LOG_FILE, SOURCE_LOG_POS, RELAY_LOG_FILE and RELAY_LOG_POS cannot be set when SOURCE_AUTO_POSITION is active.",
            ));
        }
        if settings.in_memory_relaylog_spill_threshold_bytes > settings.in_memory_relaylog_limit_bytes {
            return Err(wrong_arguments(SourceOption::InMemoryRelaylogSpillThreshold));
        }
        let new_stream = options.iter().any(|(option, _)| {
            matches!(
                option,
                SourceOption::Host | SourceOption::Port | SourceOption::AutoPosition | SourceOption::LogFile | SourceOption::LogPos
            )
        });
        if new_stream {
            settings.position_epoch = next_epoch(settings.position_epoch);
        }
        self.store(Some(&settings))?;
        *current = Some(settings.clone());
        Ok(settings)
    }

    /// Where a file-and-position replica starts next: after the last
    /// transaction it applied (stored when its applier stops).
    pub fn set_position(&self, log_file: &str, log_pos: u64) -> Result<(), MysqlError> {
        let mut current = self.current.lock();
        let Some(mut settings) = current.clone() else {
            return Ok(());
        };
        settings.log_file = log_file.to_string();
        settings.log_pos = log_pos;
        self.store(Some(&settings))?;
        *current = Some(settings);
        Ok(())
    }

    /// RESET REPLICA keeps the connection settings and forgets the start
    /// position; RESET REPLICA ALL forgets everything.
    pub fn reset(&self, all: bool) -> Result<(), MysqlError> {
        let mut current = self.current.lock();
        let next = match (all, current.clone()) {
            (true, _) | (false, None) => None,
            (false, Some(mut settings)) => {
                settings.log_file = String::new();
                settings.log_pos = 4;
                settings.position_epoch = next_epoch(settings.position_epoch);
                Some(settings)
            }
        };
        self.store(next.as_ref())?;
        *current = next;
        Ok(())
    }

    fn store(&self, settings: Option<&SourceSettings>) -> Result<(), MysqlError> {
        let written = match settings {
            Some(source) => {
                let bytes = serde_json::to_vec_pretty(&FileContents { version: FORMAT_VERSION, source: source.clone() })
                    .expect("replica settings serialize");
                OsStorage.write_atomically(&self.path, &self.path.with_extension("json.tmp"), &bytes)
            }
            None => match OsStorage.remove(&self.path) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
                _ => OsStorage.sync_dir(self.path.parent().unwrap_or(Path::new("."))),
            },
        };
        // ER_REPLICA_FATAL_ERROR-like: the settings could not be made durable.
        written.map_err(|error| MysqlError::new(1201, "HY000", format!("Could not initialize connection metadata structure; more error messages can be found in the MySQL error log ({}: {error})", self.path.display())))
    }
}

/// An epoch no slot of an earlier one can hold, even after RESET REPLICA
/// ALL forgot the last: the time in microseconds, or one more.
fn next_epoch(previous: u64) -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_micros() as u64);
    now.max(previous + 1)
}

fn apply_option(settings: &mut SourceSettings, option: SourceOption, value: &OptionValue) -> Result<(), MysqlError> {
    let text = || match value {
        OptionValue::Text(text) => Ok(text.clone()),
        OptionValue::Number(_) => Err(wrong_arguments(option)),
    };
    let number = || match value {
        OptionValue::Number(text) => text.parse::<u64>().map_err(|_| wrong_arguments(option)),
        OptionValue::Text(_) => Err(wrong_arguments(option)),
    };
    let flag = || match number()? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(wrong_arguments(option)),
    };
    match option {
        SourceOption::Host => {
            let host = text()?;
            if host.len() > 255 {
                return Err(MysqlError::new(1064, "42000", format!("Source host '{host}' is too long")));
            }
            settings.host = host;
        }
        SourceOption::Port => settings.port = u16::try_from(number()?).map_err(|_| wrong_arguments(option))?,
        SourceOption::User => settings.user = text()?,
        SourceOption::Password => settings.password = text()?,
        SourceOption::AutoPosition => settings.auto_position = flag()?,
        SourceOption::LogFile => settings.log_file = text()?,
        SourceOption::LogPos => settings.log_pos = number()?.max(4),
        SourceOption::HeartbeatPeriod => {
            let OptionValue::Number(text) = value else {
                return Err(wrong_arguments(option));
            };
            let seconds: f64 = text.parse().map_err(|_| wrong_arguments(option))?;
            if !(0.0..=HEARTBEAT_PERIOD_MAX_SECONDS).contains(&seconds) {
                return Err(MysqlError::new(
                    1703,
                    "HY000",
                    "The requested value for the heartbeat period is either negative or exceeds the maximum allowed (4294967 seconds).",
                ));
            }
            settings.heartbeat_period_seconds = seconds;
        }
        SourceOption::ConnectRetry => settings.connect_retry_seconds = number()?,
        SourceOption::RetryCount => settings.retry_count = number()?,
        SourceOption::InMemoryRelaylogEnabled => settings.in_memory_relaylog_enabled = flag()?,
        SourceOption::InMemoryRelaylogLimit => {
            let bytes = number()?;
            if !(RELAYLOG_LIMIT_MIN_BYTES..=RELAYLOG_LIMIT_MAX_BYTES).contains(&bytes) {
                return Err(wrong_arguments(option));
            }
            settings.in_memory_relaylog_limit_bytes = bytes;
        }
        SourceOption::InMemoryRelaylogSpillThreshold => {
            let bytes = number()?;
            if bytes < SPILL_THRESHOLD_MIN_BYTES {
                return Err(wrong_arguments(option));
            }
            settings.in_memory_relaylog_spill_threshold_bytes = bytes;
        }
    }
    Ok(())
}

/// ER_WRONG_ARGUMENTS, naming the option.
fn wrong_arguments(option: SourceOption) -> MysqlError {
    MysqlError::new(1210, "HY000", format!("Incorrect arguments to {}", option.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> OptionValue {
        OptionValue::Text(value.into())
    }

    fn number(value: &str) -> OptionValue {
        OptionValue::Number(value.into())
    }

    #[test]
    fn changes_persist_and_merge_over_the_stored_settings() {
        let dir = tempfile::tempdir().unwrap();
        let source = ReplicaSource::open(dir.path()).unwrap();
        assert_eq!(source.settings(), None);
        source
            .change(&[(SourceOption::Host, text("127.0.0.1")), (SourceOption::Port, number("3307")), (SourceOption::User, text("repl"))])
            .unwrap();
        source.change(&[(SourceOption::AutoPosition, number("1")), (SourceOption::InMemoryRelaylogLimit, number("33554432"))]).unwrap();
        let reopened = ReplicaSource::open(dir.path()).unwrap().settings().unwrap();
        assert_eq!((reopened.host.as_str(), reopened.port, reopened.user.as_str()), ("127.0.0.1", 3307, "repl"));
        assert!(reopened.auto_position);
        assert_eq!(reopened.in_memory_relaylog_limit_bytes, 32 << 20);
        assert_eq!(reopened.in_memory_relaylog_spill_threshold_bytes, SPILL_THRESHOLD_DEFAULT_BYTES);
    }

    #[test]
    fn refused_changes_store_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let source = ReplicaSource::open(dir.path()).unwrap();
        source.change(&[(SourceOption::Host, text("h")), (SourceOption::AutoPosition, number("1"))]).unwrap();
        let before = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
        let error = source.change(&[(SourceOption::LogFile, text("binlog.000002")), (SourceOption::Host, text("other"))]).unwrap_err();
        assert_eq!(error.code, 1776);
        assert_eq!(source.change(&[(SourceOption::InMemoryRelaylogLimit, number("1024"))]).unwrap_err().code, 1210);
        assert_eq!(source.change(&[(SourceOption::InMemoryRelaylogLimit, number("4294967297"))]).unwrap_err().code, 1210);
        assert_eq!(source.change(&[(SourceOption::HeartbeatPeriod, number("4294968"))]).unwrap_err().code, 1703);
        assert_eq!(source.change(&[(SourceOption::Port, number("70000"))]).unwrap_err().code, 1210);
        assert_eq!(source.change(&[(SourceOption::InMemoryRelaylogSpillThreshold, number("268435456"))]).unwrap_err().code, 1210);
        assert_eq!(std::fs::read(dir.path().join(FILE_NAME)).unwrap(), before);
        assert_eq!(source.settings().unwrap().host, "h");
        // Turning auto-position off in the same statement allows a position.
        let settings = source
            .change(&[
                (SourceOption::AutoPosition, number("0")),
                (SourceOption::LogFile, text("binlog.000002")),
                (SourceOption::LogPos, number("157")),
            ])
            .unwrap();
        assert_eq!((settings.log_file.as_str(), settings.log_pos), ("binlog.000002", 157));
    }

    #[test]
    fn reset_keeps_the_connection_and_reset_all_forgets_it() {
        let dir = tempfile::tempdir().unwrap();
        let source = ReplicaSource::open(dir.path()).unwrap();
        source
            .change(&[
                (SourceOption::Host, text("h")),
                (SourceOption::LogFile, text("binlog.000009")),
                (SourceOption::LogPos, number("900")),
            ])
            .unwrap();
        source.reset(false).unwrap();
        let kept = ReplicaSource::open(dir.path()).unwrap().settings().unwrap();
        assert_eq!((kept.host.as_str(), kept.log_file.as_str(), kept.log_pos), ("h", "", 4));
        source.reset(true).unwrap();
        assert_eq!(ReplicaSource::open(dir.path()).unwrap().settings(), None);
        assert!(!dir.path().join(FILE_NAME).exists());
    }

    #[test]
    fn the_settings_file_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let source = ReplicaSource::open(dir.path()).unwrap();
        source.change(&[(SourceOption::Password, text("secret"))]).unwrap();
        let mode = std::fs::metadata(dir.path().join(FILE_NAME)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), b"{\"version\": 1, \"source\": {\"host\"").unwrap();
        let error = ReplicaSource::open(dir.path()).err().unwrap();
        assert!(error.to_string().contains(FILE_NAME), "{error}");
    }
}
