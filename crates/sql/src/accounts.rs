//! Accounts: kept in memory and in `users.json` in the data directory
//! (written to a temp file, synced and renamed, so it is whole or old).
//! First start creates `root@localhost` with an empty password.

use std::io::Write;
use std::path::{Path, PathBuf};

use parking_lot::RwLock;
use protocol::{native_password_hash_hex, parse_native_password_hash_hex, Authenticator, StoredAccount};
use serde::{Deserialize, Serialize};

pub const ACCOUNTS_FILE: &str = "users.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct AccountRecord {
    user: String,
    host: String,
    /// `*HEX` of SHA1(SHA1(password)); absent for an empty password.
    password_hash: Option<String>,
    #[serde(default)]
    locked: bool,
}

pub struct Accounts {
    path: PathBuf,
    accounts: RwLock<Vec<StoredAccount>>,
}

impl Accounts {
    /// Loads `dir/users.json`, creating it with `root@localhost` (no
    /// password) when missing.
    pub fn open(dir: &Path) -> std::io::Result<Accounts> {
        let path = dir.join(ACCOUNTS_FILE);
        let accounts = match std::fs::read(&path) {
            Ok(bytes) => {
                let records: Vec<AccountRecord> = serde_json::from_slice(&bytes)
                    .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {error}", path.display())))?;
                records
                    .into_iter()
                    .map(|record| {
                        let hash = match &record.password_hash {
                            None => None,
                            Some(text) => Some(parse_native_password_hash_hex(text).ok_or_else(|| {
                                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: bad password hash for {}", path.display(), record.user))
                            })?),
                        };
                        let mut account = StoredAccount::new(record.user, record.host, hash);
                        account.locked = record.locked;
                        Ok(account)
                    })
                    .collect::<std::io::Result<Vec<_>>>()?
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let accounts = Accounts { path: path.clone(), accounts: RwLock::new(vec![StoredAccount::new("root", "localhost", None)]) };
                accounts.save()?;
                return Ok(accounts);
            }
            Err(error) => return Err(error),
        };
        Ok(Accounts { path, accounts: RwLock::new(accounts) })
    }

    fn save(&self) -> std::io::Result<()> {
        let records: Vec<AccountRecord> = self
            .accounts
            .read()
            .iter()
            .map(|account| AccountRecord {
                user: account.user.clone(),
                host: account.host.clone(),
                password_hash: account.password_hash.as_ref().map(native_password_hash_hex),
                locked: account.locked,
            })
            .collect();
        let temp = self.path.with_extension("json.tmp");
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(&serde_json::to_vec_pretty(&records).map_err(std::io::Error::other)?)?;
        file.sync_all()?;
        std::fs::rename(&temp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    /// Accounts without a password (the server then listens on loopback only).
    pub fn passwordless(&self) -> Vec<String> {
        self.accounts
            .read()
            .iter()
            .filter(|account| account.password_hash.is_none())
            .map(|account| format!("'{}'@'{}'", account.user, account.host))
            .collect()
    }
}

fn host_matches(pattern: &str, host: &str) -> bool {
    pattern == "%" || pattern.eq_ignore_ascii_case(host) || (pattern == "127.0.0.1" && host == "localhost")
}

impl Authenticator for Accounts {
    fn lookup(&self, user: &str, host: &str) -> Option<StoredAccount> {
        let accounts = self.accounts.read();
        // The most specific host first, as MySQL sorts its user table.
        accounts
            .iter()
            .filter(|account| account.user == user && host_matches(&account.host, host))
            .min_by_key(|account| u8::from(account.host == "%"))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_start_creates_root_and_reloads_it() {
        let dir = tempfile::tempdir().unwrap();
        let accounts = Accounts::open(dir.path()).unwrap();
        assert_eq!(accounts.passwordless(), vec!["'root'@'localhost'".to_string()]);
        assert!(accounts.lookup("root", "localhost").is_some());
        assert!(accounts.lookup("root", "10.0.0.1").is_none());
        let again = Accounts::open(dir.path()).unwrap();
        assert_eq!(again.lookup("root", "localhost").unwrap().password_hash, None);
    }
}
