//! Privileges: the names MySQL gives them, the levels they may be granted
//! at (`*.*`, `db.*`, `db.table`), sets of them, and one account's grants.
//!
//! Only the privileges binlogd enforces exist here; a GRANT of another
//! MySQL privilege (FILE, EXECUTE, ...) is refused with 1235 rather than
//! stored and silently meaningless.

use std::collections::BTreeMap;

/// A privilege, in MySQL's order (static privileges by their bit in
/// `mysql.user`, then dynamic ones alphabetically), which is the order
/// SHOW GRANTS and error messages list them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Privilege {
    Select,
    Insert,
    Update,
    Delete,
    Create,
    Drop,
    Reload,
    Process,
    GrantOption,
    Index,
    Alter,
    Super,
    ReplicationSlave,
    ReplicationClient,
    CreateUser,
    BinlogAdmin,
    ConnectionAdmin,
    SystemVariablesAdmin,
}

impl Privilege {
    pub const EVERY: [Privilege; 18] = [
        Privilege::Select,
        Privilege::Insert,
        Privilege::Update,
        Privilege::Delete,
        Privilege::Create,
        Privilege::Drop,
        Privilege::Reload,
        Privilege::Process,
        Privilege::GrantOption,
        Privilege::Index,
        Privilege::Alter,
        Privilege::Super,
        Privilege::ReplicationSlave,
        Privilege::ReplicationClient,
        Privilege::CreateUser,
        Privilege::BinlogAdmin,
        Privilege::ConnectionAdmin,
        Privilege::SystemVariablesAdmin,
    ];

    /// MySQL's name, as GRANT takes it and SHOW GRANTS prints it.
    pub fn name(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT",
            Privilege::Insert => "INSERT",
            Privilege::Update => "UPDATE",
            Privilege::Delete => "DELETE",
            Privilege::Create => "CREATE",
            Privilege::Drop => "DROP",
            Privilege::Reload => "RELOAD",
            Privilege::Process => "PROCESS",
            Privilege::GrantOption => "GRANT OPTION",
            Privilege::Index => "INDEX",
            Privilege::Alter => "ALTER",
            Privilege::Super => "SUPER",
            Privilege::ReplicationSlave => "REPLICATION SLAVE",
            Privilege::ReplicationClient => "REPLICATION CLIENT",
            Privilege::CreateUser => "CREATE USER",
            Privilege::BinlogAdmin => "BINLOG_ADMIN",
            Privilege::ConnectionAdmin => "CONNECTION_ADMIN",
            Privilege::SystemVariablesAdmin => "SYSTEM_VARIABLES_ADMIN",
        }
    }

    /// The privilege named `name` (any case, words separated by single
    /// spaces; MySQL 8.4's REPLICA synonyms accepted).
    pub fn from_name(name: &str) -> Option<Privilege> {
        let upper = name.to_ascii_uppercase();
        let upper = match upper.as_str() {
            "REPLICATION REPLICA" => "REPLICATION SLAVE",
            other => other,
        };
        Privilege::EVERY.into_iter().find(|privilege| privilege.name() == upper)
    }

    /// MySQL's dynamic privileges: listed apart in SHOW GRANTS and joined
    /// with "or" in 1227 messages.
    pub fn is_dynamic(self) -> bool {
        matches!(self, Privilege::BinlogAdmin | Privilege::ConnectionAdmin | Privilege::SystemVariablesAdmin)
    }

    /// Whether the privilege can be granted on a database or a table, not
    /// only on `*.*` (MySQL's 1221 / 1144 otherwise).
    pub fn is_object_level(self) -> bool {
        matches!(
            self,
            Privilege::Select
                | Privilege::Insert
                | Privilege::Update
                | Privilege::Delete
                | Privilege::Create
                | Privilege::Drop
                | Privilege::GrantOption
                | Privilege::Index
                | Privilege::Alter
        )
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of privileges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PrivilegeSet(u32);

impl PrivilegeSet {
    pub const fn empty() -> PrivilegeSet {
        PrivilegeSet(0)
    }

    /// What `ALL [PRIVILEGES]` means at `level`: every privilege that can be
    /// granted there except GRANT OPTION (MySQL's rule).
    pub fn all_at(level: &Level) -> PrivilegeSet {
        Privilege::EVERY
            .into_iter()
            .filter(|privilege| *privilege != Privilege::GrantOption)
            .filter(|privilege| level.is_global() || privilege.is_object_level())
            .collect()
    }

    pub fn contains(self, privilege: Privilege) -> bool {
        self.0 & privilege.bit() != 0
    }

    pub fn contains_all(self, other: PrivilegeSet) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn insert(&mut self, privilege: Privilege) {
        self.0 |= privilege.bit();
    }

    pub fn union(self, other: PrivilegeSet) -> PrivilegeSet {
        PrivilegeSet(self.0 | other.0)
    }

    pub fn difference(self, other: PrivilegeSet) -> PrivilegeSet {
        PrivilegeSet(self.0 & !other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The privileges in MySQL's order.
    pub fn iter(self) -> impl Iterator<Item = Privilege> {
        Privilege::EVERY.into_iter().filter(move |privilege| self.contains(*privilege))
    }
}

impl FromIterator<Privilege> for PrivilegeSet {
    fn from_iter<I: IntoIterator<Item = Privilege>>(iter: I) -> PrivilegeSet {
        let mut set = PrivilegeSet::empty();
        for privilege in iter {
            set.insert(privilege);
        }
        set
    }
}

/// Where a grant applies.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `*.*`
    Global,
    /// `db.*`
    Database(String),
    /// `db.table`
    Table(String, String),
}

impl Level {
    pub fn is_global(&self) -> bool {
        matches!(self, Level::Global)
    }

    /// As SHOW GRANTS prints it: *.*, `db`.*, `db`.`t`.
    pub fn shown(&self) -> String {
        match self {
            Level::Global => "*.*".to_string(),
            Level::Database(database) => format!("{}.*", quote_identifier(database)),
            Level::Table(database, table) => format!("{}.{}", quote_identifier(database), quote_identifier(table)),
        }
    }
}

/// `name` in backquotes, inner backquotes doubled.
pub fn quote_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// One account's privileges at every level. Database and table names are
/// matched exactly (MySQL's `_` and `%` wildcards in database grants are
/// not supported: a grant names one database).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    pub global: PrivilegeSet,
    pub databases: BTreeMap<String, PrivilegeSet>,
    pub tables: BTreeMap<(String, String), PrivilegeSet>,
}

impl Grants {
    /// Everything, with GRANT OPTION: what `root@localhost` starts with.
    pub fn everything() -> Grants {
        let mut global = PrivilegeSet::all_at(&Level::Global);
        global.insert(Privilege::GrantOption);
        Grants { global, ..Grants::default() }
    }

    /// The privileges granted exactly at `level`.
    pub fn at(&self, level: &Level) -> PrivilegeSet {
        match level {
            Level::Global => self.global,
            Level::Database(database) => self.databases.get(database).copied().unwrap_or_default(),
            Level::Table(database, table) => self.tables.get(&(database.clone(), table.clone())).copied().unwrap_or_default(),
        }
    }

    /// Whether a grant entry exists at `level` (REVOKE of one that does not
    /// gives 1141 / 1147).
    pub fn has_entry(&self, level: &Level) -> bool {
        match level {
            Level::Global => true,
            Level::Database(database) => self.databases.contains_key(database),
            Level::Table(database, table) => self.tables.contains_key(&(database.clone(), table.clone())),
        }
    }

    /// Sets the privileges at `level`; an empty set removes the entry.
    pub fn set(&mut self, level: &Level, privileges: PrivilegeSet) {
        match level {
            Level::Global => self.global = privileges,
            Level::Database(database) => {
                if privileges.is_empty() {
                    self.databases.remove(database);
                } else {
                    self.databases.insert(database.clone(), privileges);
                }
            }
            Level::Table(database, table) => {
                let key = (database.clone(), table.clone());
                if privileges.is_empty() {
                    self.tables.remove(&key);
                } else {
                    self.tables.insert(key, privileges);
                }
            }
        }
    }

    /// What applies to `level`: its own grants and those of every level
    /// above it.
    pub fn effective(&self, level: &Level) -> PrivilegeSet {
        match level {
            Level::Global => self.global,
            Level::Database(_) => self.global.union(self.at(level)),
            Level::Table(database, _) => self.global.union(self.at(&Level::Database(database.clone()))).union(self.at(level)),
        }
    }

    /// Whether the account may see `database` at all (USE, SHOW TABLES):
    /// any privilege on it, on one of its tables, or a global one that
    /// applies to databases.
    pub fn can_see_database(&self, database: &str) -> bool {
        let object_level = PrivilegeSet::all_at(&Level::Database(String::new()));
        self.global.union(self.at(&Level::Database(database.to_string()))).intersects(object_level)
            || self.tables.iter().any(|((db, _), privileges)| db == database && !privileges.is_empty())
    }

    /// Whether the account may see `database.table` (SHOW COLUMNS, SHOW
    /// CREATE TABLE): any privilege on it.
    pub fn can_see_table(&self, database: &str, table: &str) -> bool {
        let object_level = PrivilegeSet::all_at(&Level::Database(String::new()));
        self.effective(&Level::Table(database.to_string(), table.to_string())).intersects(object_level)
    }

    /// Every level with a grant, global first (SHOW GRANTS order).
    pub fn levels(&self) -> Vec<(Level, PrivilegeSet)> {
        let mut levels = vec![(Level::Global, self.global)];
        levels.extend(self.databases.iter().map(|(database, set)| (Level::Database(database.clone()), *set)));
        levels.extend(self.tables.iter().map(|((database, table), set)| (Level::Table(database.clone(), table.clone()), *set)));
        levels
    }
}

impl PrivilegeSet {
    pub fn intersects(self, other: PrivilegeSet) -> bool {
        self.0 & other.0 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_all_depends_on_level() {
        for privilege in Privilege::EVERY {
            assert_eq!(Privilege::from_name(privilege.name()), Some(privilege));
            assert_eq!(Privilege::from_name(&privilege.name().to_lowercase()), Some(privilege));
        }
        assert_eq!(Privilege::from_name("REPLICATION REPLICA"), Some(Privilege::ReplicationSlave));
        assert_eq!(Privilege::from_name("FILE"), None);
        let global = PrivilegeSet::all_at(&Level::Global);
        assert!(global.contains(Privilege::Super) && global.contains(Privilege::SystemVariablesAdmin));
        assert!(!global.contains(Privilege::GrantOption));
        let database = PrivilegeSet::all_at(&Level::Database("d".into()));
        assert!(database.contains(Privilege::Select) && !database.contains(Privilege::Super));
        assert_eq!(
            database.iter().map(Privilege::name).collect::<Vec<_>>(),
            ["SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "INDEX", "ALTER"]
        );
    }

    #[test]
    fn effective_privileges_add_up_the_levels() {
        let mut grants = Grants::default();
        grants.set(&Level::Database("shop".into()), [Privilege::Select].into_iter().collect());
        grants.set(&Level::Table("shop".into(), "items".into()), [Privilege::Insert].into_iter().collect());
        let items = Level::Table("shop".into(), "items".into());
        assert!(grants.effective(&items).contains(Privilege::Select));
        assert!(grants.effective(&items).contains(Privilege::Insert));
        assert!(!grants.effective(&Level::Table("shop".into(), "other".into())).contains(Privilege::Insert));
        assert!(!grants.effective(&Level::Table("other".into(), "items".into())).contains(Privilege::Select));
        assert!(grants.can_see_database("shop"));
        assert!(!grants.can_see_database("other"));
        grants.set(&Level::Database("shop".into()), PrivilegeSet::empty());
        assert!(!grants.has_entry(&Level::Database("shop".into())));
        assert!(grants.can_see_database("shop"), "a table grant makes the database visible");
        assert!(grants.can_see_table("shop", "items"));
        assert!(!grants.can_see_table("shop", "other"));
        let global_only: Grants = Grants { global: [Privilege::ReplicationSlave].into_iter().collect(), ..Grants::default() };
        assert!(!global_only.can_see_database("shop"), "REPLICATION SLAVE does not open databases");
    }
}
