//! Accounts and their grants: kept in memory and in `users.json` in the
//! data directory. First start creates `root@localhost` with an empty
//! password and every privilege WITH GRANT OPTION.
//!
//! Durability: every change is made on a copy of the table, written to
//! `users.json.tmp`, fsynced, renamed over `users.json`, and the directory
//! fsynced (`Storage::write_atomically`; the file is mode 0600, as it holds
//! password hashes); only then do sessions see the copy. A crash therefore leaves
//! the old file or the new one, never a mix, and a change a client was
//! told succeeded survives a crash. Changes are serialized by one writer
//! lock; readers (logins, privilege checks) take a snapshot and never wait
//! for an fsync.
//!
//! File format (version 1):
//! `{"version": 1, "accounts": [{"user", "host", "plugin"
//! ("caching_sha2_password" or "mysql_native_password", the latter when
//! absent, as in files written before there was a choice), "password_hash"
//! ("$A$005$..." or "*HEX" by plugin, or null), "locked", "ssl" ("SSL" or "X509", absent for none), "privileges": ["SELECT", ...], "databases": {"db":
//! [...]}, "tables": [{"database", "table", "privileges": [...]}]}]}`.
//! A plain array of accounts is the format from before privileges existed;
//! those accounts could do everything, so they load with every privilege.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use protocol::{AuthPlugin, Authenticator, Credential, MysqlError, SslRequirement, StoredAccount};
use serde::{Deserialize, Serialize};
use storage::{OsStorage, Storage};

use crate::access::hosts::{host_matches, specificity};
use crate::access::privileges::{Grants, Level, Privilege, PrivilegeSet};

pub const ACCOUNTS_FILE: &str = "users.json";
const FORMAT_VERSION: u32 = 1;

/// One account: who may log in, with what password, and what it may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    /// Host pattern (`localhost`, `%`, `10.0.0.%`), stored in lower case.
    pub host: String,
    /// The password as the account's plugin stores it.
    pub credential: Credential,
    pub locked: bool,
    /// `REQUIRE SSL` / `REQUIRE X509`.
    pub ssl: SslRequirement,
    pub grants: Grants,
}

impl Account {
    pub fn named(&self, user: &str, host: &str) -> bool {
        self.user == user && self.host.eq_ignore_ascii_case(host)
    }

    /// `'user'@'host'` as MySQL's messages quote an account.
    pub fn quoted(&self) -> String {
        format!("'{}'@'{}'", self.user, self.host)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum FileContents {
    Versioned {
        version: u32,
        accounts: Vec<AccountRecord>,
    },
    /// Before privileges: a plain array.
    Legacy(Vec<LegacyRecord>),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountRecord {
    user: String,
    host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    plugin: Option<String>,
    password_hash: Option<String>,
    #[serde(default)]
    locked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ssl: Option<String>,
    #[serde(default)]
    privileges: Vec<String>,
    #[serde(default)]
    databases: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    tables: Vec<TableGrantRecord>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableGrantRecord {
    database: String,
    table: String,
    privileges: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct LegacyRecord {
    user: String,
    host: String,
    password_hash: Option<String>,
    #[serde(default)]
    locked: bool,
}

pub struct Accounts {
    path: PathBuf,
    /// The table sessions read; replaced whole after each durable change.
    current: RwLock<Arc<Vec<Account>>>,
    /// Serializes changes (copy, write, fsync, rename, publish).
    writer: Mutex<()>,
    /// Set when the server listens beyond loopback: then no account may
    /// get an empty password.
    passwords_required: AtomicBool,
}

fn invalid(path: &Path, message: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {message}", path.display()))
}

fn privilege_set(path: &Path, names: &[String], level: &Level, account: &str) -> std::io::Result<PrivilegeSet> {
    let mut set = PrivilegeSet::empty();
    for name in names {
        let privilege = Privilege::from_name(name).ok_or_else(|| invalid(path, format!("unknown privilege {name:?} for {account}")))?;
        if !level.is_global() && !privilege.is_object_level() {
            return Err(invalid(path, format!("{name} cannot be granted on {} (for {account})", level.shown())));
        }
        set.insert(privilege);
    }
    Ok(set)
}

fn names(set: PrivilegeSet) -> Vec<String> {
    set.iter().map(|privilege| privilege.name().to_string()).collect()
}

fn parse_credential(path: &Path, plugin: Option<&str>, text: &Option<String>, account: &str) -> std::io::Result<Credential> {
    let plugin = match plugin {
        None => AuthPlugin::Native,
        Some(name) => AuthPlugin::from_name(name).ok_or_else(|| invalid(path, format!("unknown plugin {name:?} for {account}")))?,
    };
    Credential::from_stored(plugin, text.as_deref().unwrap_or(""))
        .filter(|credential| text.is_none() || !credential.is_empty())
        .ok_or_else(|| invalid(path, format!("bad password_hash for {account}")))
}

fn parse_ssl(path: &Path, text: Option<&str>, account: &str) -> std::io::Result<SslRequirement> {
    match text {
        None => Ok(SslRequirement::None),
        Some("SSL") => Ok(SslRequirement::Ssl),
        Some("X509") => Ok(SslRequirement::X509),
        Some(other) => Err(invalid(path, format!("bad ssl requirement {other:?} for {account}"))),
    }
}

fn decode(path: &Path, bytes: &[u8]) -> std::io::Result<Vec<Account>> {
    let contents: FileContents =
        serde_json::from_slice(bytes).map_err(|error| invalid(path, format!("not a valid accounts file ({error})")))?;
    let mut accounts: Vec<Account> = Vec::new();
    match contents {
        FileContents::Versioned { version, accounts: records } => {
            if version != FORMAT_VERSION {
                return Err(invalid(path, format!("format version {version}, this binlogd reads version {FORMAT_VERSION}")));
            }
            for record in records {
                let name = format!("'{}'@'{}'", record.user, record.host);
                let mut grants = Grants { global: privilege_set(path, &record.privileges, &Level::Global, &name)?, ..Grants::default() };
                for (database, privileges) in &record.databases {
                    let level = Level::Database(database.clone());
                    let set = privilege_set(path, privileges, &level, &name)?;
                    grants.set(&level, set);
                }
                for table in &record.tables {
                    let level = Level::Table(table.database.clone(), table.table.clone());
                    let set = privilege_set(path, &table.privileges, &level, &name)?;
                    grants.set(&level, set);
                }
                accounts.push(Account {
                    credential: parse_credential(path, record.plugin.as_deref(), &record.password_hash, &name)?,
                    ssl: parse_ssl(path, record.ssl.as_deref(), &name)?,
                    user: record.user,
                    host: record.host.to_ascii_lowercase(),
                    locked: record.locked,
                    grants,
                });
            }
        }
        FileContents::Legacy(records) => {
            for record in records {
                let name = format!("'{}'@'{}'", record.user, record.host);
                accounts.push(Account {
                    credential: parse_credential(path, None, &record.password_hash, &name)?,
                    user: record.user,
                    host: record.host.to_ascii_lowercase(),
                    locked: record.locked,
                    ssl: SslRequirement::None,
                    grants: Grants::everything(),
                });
            }
        }
    }
    for (index, account) in accounts.iter().enumerate() {
        if accounts[..index].iter().any(|other| other.named(&account.user, &account.host)) {
            return Err(invalid(path, format!("account {} is listed twice", account.quoted())));
        }
    }
    Ok(accounts)
}

fn encode(accounts: &[Account]) -> Vec<u8> {
    let records: Vec<AccountRecord> = accounts
        .iter()
        .map(|account| AccountRecord {
            user: account.user.clone(),
            host: account.host.clone(),
            plugin: Some(account.credential.plugin().name().to_string()),
            password_hash: account.credential.stored_text(),
            locked: account.locked,
            ssl: match account.ssl {
                SslRequirement::None => None,
                SslRequirement::Ssl => Some("SSL".into()),
                SslRequirement::X509 => Some("X509".into()),
            },
            privileges: names(account.grants.global),
            databases: account.grants.databases.iter().map(|(database, set)| (database.clone(), names(*set))).collect(),
            tables: account
                .grants
                .tables
                .iter()
                .map(|((database, table), set)| TableGrantRecord {
                    database: database.clone(),
                    table: table.clone(),
                    privileges: names(*set),
                })
                .collect(),
        })
        .collect();
    let contents = FileContents::Versioned { version: FORMAT_VERSION, accounts: records };
    serde_json::to_vec_pretty(&contents).expect("accounts serialize")
}

impl Accounts {
    /// Loads `dir/users.json`, creating it with `root@localhost` (no
    /// password, every privilege) when missing. A file that does not parse
    /// is an error naming the file and what is wrong: the server must not
    /// start with guessed accounts.
    pub fn open(dir: &Path) -> std::io::Result<Accounts> {
        let path = dir.join(ACCOUNTS_FILE);
        let (accounts, fresh) = match std::fs::read(&path) {
            Ok(bytes) => (decode(&path, &bytes)?, false),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let root = Account {
                    user: "root".into(),
                    host: "localhost".into(),
                    credential: Credential::new(AuthPlugin::DEFAULT, ""),
                    locked: false,
                    ssl: SslRequirement::None,
                    grants: Grants::everything(),
                };
                (vec![root], true)
            }
            Err(error) => return Err(std::io::Error::new(error.kind(), format!("{}: {error}", path.display()))),
        };
        if fresh {
            OsStorage.write_atomically(&path, &temp_path(&path), &encode(&accounts))?;
        }
        Ok(Accounts { path, current: RwLock::new(Arc::new(accounts)), writer: Mutex::new(()), passwords_required: AtomicBool::new(false) })
    }

    /// Accounts without a password (the server then listens on loopback only).
    pub fn passwordless(&self) -> Vec<String> {
        self.snapshot().iter().filter(|account| account.credential.is_empty()).map(Account::quoted).collect()
    }

    /// The server listens beyond loopback: from now on CREATE USER and
    /// ALTER USER refuse an empty password.
    pub fn require_passwords(&self) {
        self.passwords_required.store(true, Ordering::SeqCst);
    }

    pub fn passwords_required(&self) -> bool {
        self.passwords_required.load(Ordering::SeqCst)
    }

    /// The accounts as of the last completed change.
    pub fn snapshot(&self) -> Arc<Vec<Account>> {
        Arc::clone(&self.current.read())
    }

    /// Runs `f` on a copy of the accounts; when it succeeds, makes the copy
    /// durable and then visible. When `f` fails nothing changes.
    pub fn change<T>(&self, f: impl FnOnce(&mut Vec<Account>) -> Result<T, MysqlError>) -> Result<T, MysqlError> {
        let _writer = self.writer.lock();
        let mut accounts = Vec::clone(&self.snapshot());
        let value = f(&mut accounts)?;
        OsStorage
            .write_atomically(&self.path, &temp_path(&self.path), &encode(&accounts))
            .map_err(|error| MysqlError::internal(format!("cannot write {}: {error}", self.path.display())))?;
        *self.current.write() = Arc::new(accounts);
        Ok(value)
    }
}

/// `users.json.tmp`: where a new version is written before it is renamed in.
fn temp_path(path: &Path) -> PathBuf {
    path.with_extension("json.tmp")
}

/// The account a client `user` from `client_host` logs in as: the most
/// specific matching host.
pub fn matching_account<'a>(accounts: &'a [Account], user: &str, client_host: &str) -> Option<&'a Account> {
    accounts
        .iter()
        .filter(|account| account.user == user && host_matches(&account.host, client_host))
        .min_by_key(|account| specificity(&account.host))
}

impl Authenticator for Accounts {
    fn lookup(&self, user: &str, host: &str) -> Option<StoredAccount> {
        let accounts = self.snapshot();
        let account = matching_account(&accounts, user, host)?;
        let mut stored = StoredAccount::new(account.user.clone(), account.host.clone(), account.credential.clone());
        stored.locked = account.locked;
        stored.ssl = account.ssl;
        stored.connection_admin =
            [Privilege::ConnectionAdmin, Privilege::Super].iter().any(|privilege| account.grants.global.contains(*privilege));
        Some(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_start_creates_root_with_every_privilege_and_reloads_it() {
        let dir = tempfile::tempdir().unwrap();
        let accounts = Accounts::open(dir.path()).unwrap();
        assert_eq!(accounts.passwordless(), vec!["'root'@'localhost'".to_string()]);
        assert!(accounts.lookup("root", "localhost").is_some());
        assert!(accounts.lookup("root", "10.0.0.1").is_none());
        let again = Accounts::open(dir.path()).unwrap();
        assert!(again.lookup("root", "localhost").unwrap().credential.is_empty());
        assert_eq!(again.snapshot()[0].grants, Grants::everything());
    }

    #[test]
    fn changes_persist_with_grants_and_failed_changes_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let accounts = Accounts::open(dir.path()).unwrap();
        accounts
            .change(|table| {
                let mut grants = Grants::default();
                grants.set(&Level::Database("shop".into()), [Privilege::Select, Privilege::Insert].into_iter().collect());
                grants.set(&Level::Table("shop".into(), "t".into()), [Privilege::Update].into_iter().collect());
                grants.global.insert(Privilege::ReplicationSlave);
                table.push(Account {
                    user: "app".into(),
                    host: "%".into(),
                    credential: Credential::new(AuthPlugin::CachingSha2, "pw"),
                    locked: false,
                    ssl: SslRequirement::X509,
                    grants,
                });
                Ok(())
            })
            .unwrap();
        let failed: Result<(), MysqlError> = accounts.change(|table| {
            table.clear();
            Err(MysqlError::internal("no"))
        });
        assert!(failed.is_err());
        assert_eq!(accounts.snapshot().len(), 2);
        let again = Accounts::open(dir.path()).unwrap();
        assert_eq!(*again.snapshot(), *accounts.snapshot());
        assert!(!dir.path().join("users.json.tmp").exists());
    }

    #[test]
    fn the_accounts_file_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let accounts = Accounts::open(dir.path()).unwrap();
        let mode = || std::fs::metadata(dir.path().join(ACCOUNTS_FILE)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(), 0o600, "created at first start");
        accounts.change(|_| Ok(())).unwrap();
        assert_eq!(mode(), 0o600, "rewritten by a change");
    }

    #[test]
    fn the_most_specific_host_wins() {
        let account = |host: &str| Account {
            user: "u".into(),
            host: host.into(),
            credential: Credential::Native(None),
            locked: false,
            ssl: SslRequirement::None,
            grants: Grants::default(),
        };
        let table = vec![account("%"), account("10.0.%"), account("10.0.0.1"), account("localhost")];
        assert_eq!(matching_account(&table, "u", "10.0.0.1").unwrap().host, "10.0.0.1");
        assert_eq!(matching_account(&table, "u", "10.0.0.2").unwrap().host, "10.0.%");
        assert_eq!(matching_account(&table, "u", "192.168.0.1").unwrap().host, "%");
        assert_eq!(matching_account(&table, "u", "localhost").unwrap().host, "localhost");
        assert!(matching_account(&table, "v", "localhost").is_none());
    }

    #[test]
    fn bad_files_are_errors_that_name_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(ACCOUNTS_FILE);
        for (contents, expected) in [
            ("{not json", "not a valid accounts file"),
            (r#"{"version": 9, "accounts": []}"#, "format version 9"),
            (
                r#"{"version": 1, "accounts": [{"user": "u", "host": "%", "password_hash": null, "privileges": ["FLY"]}]}"#,
                "unknown privilege",
            ),
            (
                r#"{"version": 1, "accounts": [{"user": "u", "host": "%", "password_hash": null, "databases": {"d": ["SUPER"]}}]}"#,
                "cannot be granted",
            ),
            (r#"{"version": 1, "accounts": [{"user": "u", "host": "%", "password_hash": "*12"}]}"#, "bad password_hash"),
            (
                r#"{"version": 1, "accounts": [{"user": "u", "host": "%", "password_hash": null}, {"user": "u", "host": "%", "password_hash": null}]}"#,
                "listed twice",
            ),
        ] {
            std::fs::write(&path, contents).unwrap();
            let error = Accounts::open(dir.path()).err().unwrap_or_else(|| panic!("{contents} should be refused")).to_string();
            assert!(error.contains(expected) && error.contains("users.json"), "{contents}: {error}");
        }
    }

    /// users.json written before accounts had a plugin: each hash is a
    /// mysql_native_password one, and it is written back with its plugin.
    #[test]
    fn files_without_plugins_load_as_mysql_native_password() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(ACCOUNTS_FILE),
            r#"{"version": 1, "accounts": [{"user": "app", "host": "%", "password_hash": "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"}]}"#,
        )
        .unwrap();
        let accounts = Accounts::open(dir.path()).unwrap();
        let app = accounts.lookup("app", "10.0.0.1").unwrap();
        assert_eq!(app.credential, Credential::Native(Some(protocol::native_password_hash(b"secret"))));
        accounts.change(|_| Ok(())).unwrap();
        let text = std::fs::read_to_string(dir.path().join(ACCOUNTS_FILE)).unwrap();
        assert!(text.contains(r#""plugin": "mysql_native_password""#), "{text}");
        assert_eq!(Accounts::open(dir.path()).unwrap().lookup("app", "%").unwrap().credential, app.credential);
    }

    #[test]
    fn legacy_files_keep_their_accounts_with_every_privilege() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(ACCOUNTS_FILE),
            r#"[{"user": "root", "host": "localhost", "password_hash": null, "locked": false}]"#,
        )
        .unwrap();
        let accounts = Accounts::open(dir.path()).unwrap();
        assert_eq!(accounts.snapshot()[0].grants, Grants::everything());
    }
}
