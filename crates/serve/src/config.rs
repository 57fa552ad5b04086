//! Server variables given at startup, each looked up in the SQL layer's
//! registry and parsed by its type once: a field of the database's or the
//! listener's config is written there, every value becomes the global
//! variable's.

use std::net::SocketAddr;

use sql::variables::{definition, Definition, Setting, StartupConfig};

use super::certificates::{TlsFiles, CA_FILE, CERT_FILE, KEY_FILE, RSA_PRIVATE_KEY_FILE, RSA_PUBLIC_KEY_FILE};
use super::options::ServeOptions;

pub struct Settings {
    /// The database's and the listener's config, startup values written in.
    pub startup: StartupConfig,
    /// Every startup value, for the SQL layer's global variables.
    pub given: Vec<(&'static Definition, Setting)>,
}

impl Settings {
    /// The startup value of `name`, else `default`.
    fn given_or(&self, name: &str, default: &str) -> String {
        self.given.iter().rev().find(|(definition, _)| definition.name == name).map_or(default.to_string(), |(_, setting)| setting.text())
    }

    /// `ssl_ca`, `ssl_cert` and `ssl_key` as given, else their defaults.
    pub fn tls_files(&self) -> TlsFiles {
        TlsFiles {
            ca: self.given_or("ssl_ca", CA_FILE),
            cert: self.given_or("ssl_cert", CERT_FILE),
            key: self.given_or("ssl_key", KEY_FILE),
        }
    }

    /// `caching_sha2_password_private_key_path` and `_public_key_path`.
    pub fn rsa_key_files(&self) -> (String, String) {
        (
            self.given_or("caching_sha2_password_private_key_path", RSA_PRIVATE_KEY_FILE),
            self.given_or("caching_sha2_password_public_key_path", RSA_PUBLIC_KEY_FILE),
        )
    }

    pub fn from_options(options: &ServeOptions) -> Result<Settings, String> {
        let mut startup = StartupConfig::new(&options.datadir, SocketAddr::new(options.bind, options.port));
        let mut given = Vec::new();
        for (name, value) in &options.variables {
            // mysqld's words for an option it does not know.
            let definition = definition(name).ok_or_else(|| format!("unknown variable '{name}={value}'"))?;
            given.push((definition, definition.apply_startup(&mut startup, value)?));
        }
        Ok(Settings { startup, given })
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
        assert_eq!(settings.startup.server.connection.max_allowed_packet, 16 << 20);
        assert_eq!(settings.startup.database.binlog.max_binlog_size, 1 << 30);
        assert_eq!(settings.startup.database.binlog.server_id, u32::MAX);
    }

    #[test]
    fn numbers_out_of_range_are_refused_not_wrapped() {
        let error = |options: &[&str]| settings(options).err().unwrap_or_else(|| panic!("{options:?} accepted"));
        assert_eq!(error(&["--server-id=4294967296"]), "--server_id: '4294967296' is too large");
        assert_eq!(error(&["--max-binlog-size=20000000000G"]), "--max_binlog_size: '20000000000G' is over 2^64");
        assert!(error(&["--max-allowed-packet=99999999999999999999"]).contains("is not a number"));
    }

    #[test]
    fn options_reach_the_config_they_shape() {
        let settings = settings(&[
            "--port=3399",
            "--datadir=/tmp/somewhere",
            "--max-connections=7",
            "--binlog-checksum=none",
            "--innodb-flush-log-at-trx-commit=2",
            "--binlog-storage-engine=innodb",
            "--binlogd-engine-memory-limit=2G",
            "--binlogd-write-ahead-min-changes=0",
            "--skip-replica-start",
        ])
        .unwrap();
        let startup = &settings.startup;
        assert_eq!(startup.server.bind_address.port(), 3399);
        assert_eq!(startup.database.dir, std::path::PathBuf::from("/tmp/somewhere"));
        assert_eq!(startup.server.max_connections, 7);
        assert!(!startup.database.binlog.binlog_checksum);
        assert_eq!(startup.database.redo.innodb_flush_log_at_trx_commit, database::redo::FlushLogAtTrxCommit::WriteAtCommit);
        assert_eq!(startup.database.binlog_storage_engine, database::BinlogStorageEngine::Engine);
        assert_eq!(startup.database.engine.memory_limit_bytes, 2 << 30);
        assert_eq!(startup.database.write_ahead_min_changes, 0);
        let names: Vec<&str> = settings.given.iter().map(|(definition, _)| definition.name).collect();
        assert!(names.contains(&"skip_replica_start"), "{names:?}");
    }

    #[test]
    fn unknown_options_are_refused_as_mysqld_refuses_them() {
        assert_eq!(settings(&["--no-such-thing=3"]).err().unwrap(), "unknown variable 'no_such_thing=3'");
    }
}
