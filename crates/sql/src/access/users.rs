//! Running the account statements: CREATE / ALTER / DROP USER, GRANT,
//! REVOKE, SHOW GRANTS. Each change goes through `Accounts::change` (all
//! or nothing, durable before it is visible) and takes effect at the next
//! statement of every session.
//!
//! Privileges needed, as in MySQL: CREATE USER for CREATE / DROP USER,
//! ALTER USER of another account and REVOKE ALL ... GRANT OPTION; GRANT
//! and REVOKE need GRANT OPTION and the privileges themselves at the level
//! (or above); SHOW GRANTS for another account needs global SELECT (MySQL:
//! SELECT on the `mysql` schema). Changing one's own password needs
//! nothing.

use protocol::{AuthPlugin, ColumnDefinition, Credential, MysqlError, ResultSet, Value as Wire};

use crate::access::accounts::Account;
use crate::access::authorize::Principal;
use crate::access::privileges::{quote_identifier, Grants, Level, Privilege, PrivilegeSet};
use crate::error::SqlResult;
use crate::parse::{AccountStatement, Authentication, LevelName, PrivilegeList, SslRequirement, UserName};
use crate::session::{Context, Outcome};

/// MySQL 8's limits (ER_WRONG_STRING_LENGTH beyond them).
const USER_NAME_CHARS_MAX: usize = 32;
const HOST_NAME_CHARS_MAX: usize = 255;

pub fn execute(statement: &AccountStatement, context: &Context<'_>) -> SqlResult<Outcome> {
    let principal = context.principal();
    match statement {
        AccountStatement::CreateUser { if_not_exists, users, require, lock } => {
            create_user(context, &principal, *if_not_exists, users, AccountOptions { require: *require, lock: *lock })
        }
        AccountStatement::AlterUser { if_exists, users, require, lock } => {
            alter_user(context, &principal, *if_exists, users, AccountOptions { require: *require, lock: *lock })
        }
        AccountStatement::DropUser { if_exists, users } => drop_user(context, &principal, *if_exists, users),
        AccountStatement::Grant { privileges, level, users, with_grant_option } => {
            let level = resolve_level(level, context)?;
            let mut set = expand(privileges, &level)?;
            if *with_grant_option {
                set.insert(Privilege::GrantOption);
            }
            check_grantor(&principal, &level, set)?;
            if let Level::Table(database, table) = &level {
                // MySQL grants on existing tables only.
                crate::exec::dispatch::table_def(context, database, table)?;
            }
            let users = resolve_users(users, context);
            context.shared.accounts.change(|accounts| {
                for (user, host) in &users {
                    let account = find_mut(accounts, user, host)
                        .ok_or_else(|| MysqlError::new(1410, "42000", "You are not allowed to create a user with GRANT"))?;
                    let now = account.grants.at(&level);
                    account.grants.set(&level, now.union(set));
                }
                Ok(())
            })?;
            Ok(Outcome::ok())
        }
        AccountStatement::Revoke { privileges, level, users } => {
            let level = resolve_level(level, context)?;
            let set = match privileges {
                // REVOKE ALL takes GRANT OPTION too.
                PrivilegeList::All { .. } => {
                    let mut set = PrivilegeSet::all_at(&level);
                    set.insert(Privilege::GrantOption);
                    set
                }
                named => expand(named, &level)?,
            };
            check_grantor(&principal, &level, set)?;
            let users = resolve_users(users, context);
            context.shared.accounts.change(|accounts| {
                for (user, host) in &users {
                    let account = find_mut(accounts, user, host)
                        .filter(|account| account.grants.has_entry(&level))
                        .ok_or_else(|| no_such_grant(user, host, &level))?;
                    let now = account.grants.at(&level);
                    account.grants.set(&level, now.difference(set));
                }
                Ok(())
            })?;
            Ok(Outcome::ok())
        }
        AccountStatement::RevokeEverything { users } => {
            principal.require(Privilege::CreateUser)?;
            let users = resolve_users(users, context);
            context.shared.accounts.change(|accounts| {
                let missing: Vec<String> =
                    users.iter().filter(|(u, h)| find_mut(accounts, u, h).is_none()).map(|(u, h)| quote(u, h)).collect();
                if !missing.is_empty() {
                    return Err(operation_failed("REVOKE", &missing));
                }
                for (user, host) in &users {
                    find_mut(accounts, user, host).expect("checked").grants = Grants::default();
                }
                Ok(())
            })?;
            Ok(Outcome::ok())
        }
        AccountStatement::ShowGrants { user } => show_grants(context, &principal, user),
    }
}

fn quote(user: &str, host: &str) -> String {
    format!("'{user}'@'{host}'")
}

/// 1396 ER_CANNOT_USER: "Operation CREATE USER failed for 'a'@'%','b'@'%'".
fn operation_failed(operation: &str, accounts: &[String]) -> MysqlError {
    MysqlError::new(1396, "HY000", format!("Operation {operation} failed for {}", accounts.join(",")))
}

/// 1141 ER_NONEXISTING_GRANT / 1147 ER_NONEXISTING_TABLE_GRANT.
fn no_such_grant(user: &str, host: &str, level: &Level) -> MysqlError {
    match level {
        Level::Table(_, table) => {
            MysqlError::new(1147, "42000", format!("There is no such grant defined for user '{user}' on host '{host}' on table '{table}'"))
        }
        _ => MysqlError::new(1141, "42000", format!("There is no such grant defined for user '{user}' on host '{host}'")),
    }
}

fn find_mut<'a>(accounts: &'a mut [Account], user: &str, host: &str) -> Option<&'a mut Account> {
    accounts.iter_mut().find(|account| account.named(user, host))
}

/// (user, host) for each name; CURRENT_USER is the session's account.
fn resolve_users(users: &[UserName], context: &Context<'_>) -> Vec<(String, String)> {
    users.iter().map(|user| resolve_user(user, context)).collect()
}

fn resolve_user(user: &UserName, context: &Context<'_>) -> (String, String) {
    match user {
        UserName::Current => (context.env.info.account.user.clone(), context.env.info.account.host.clone()),
        UserName::Named { user, host } => (user.clone(), host.to_ascii_lowercase()),
    }
}

fn resolve_level(level: &LevelName, context: &Context<'_>) -> SqlResult<Level> {
    Ok(match level {
        LevelName::Global => Level::Global,
        LevelName::Database(database) => Level::Database(context.database(database.as_deref())?),
        LevelName::Table(database, table) => Level::Table(context.database(database.as_deref())?, table.clone()),
    })
}

/// The privileges a list names at `level`, refusing those that cannot be
/// granted there: 1221 on a database, 1144 on a table, as MySQL does.
fn expand(privileges: &PrivilegeList, level: &Level) -> SqlResult<PrivilegeSet> {
    let mut set = match privileges {
        PrivilegeList::All { .. } => PrivilegeSet::all_at(level),
        PrivilegeList::Named(named) => named.iter().copied().collect(),
    };
    if let PrivilegeList::All { grant_option: true } = privileges {
        set.insert(Privilege::GrantOption);
    }
    if set.iter().any(|privilege| !level.is_global() && !privilege.is_object_level()) {
        return Err(match level {
            Level::Table(..) => MysqlError::new(
                1144,
                "42000",
                "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
            ),
            _ => MysqlError::new(1221, "HY000", "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES"),
        });
    }
    Ok(set)
}

/// The grantor must hold GRANT OPTION and every privilege it passes on, at
/// `level` or above. MySQL's errors: 1045 for `*.*`, 1044 for a database,
/// 1142 for a table.
fn check_grantor(principal: &Principal<'_>, level: &Level, privileges: PrivilegeSet) -> SqlResult<()> {
    let mut needed = privileges;
    needed.insert(Privilege::GrantOption);
    if principal.grants().effective(level).contains_all(needed) {
        return Ok(());
    }
    Err(match level {
        Level::Global => principal.login_denied(),
        Level::Database(database) => principal.database_denied(database),
        Level::Table(_, table) => principal.table_denied("GRANT", table),
    })
}

fn validate_name(user: &str, host: &str) -> SqlResult<()> {
    if user.chars().count() > USER_NAME_CHARS_MAX {
        return Err(MysqlError::new(
            1470,
            "HY000",
            format!("String '{user}' is too long for user name (should be no longer than {USER_NAME_CHARS_MAX})"),
        ));
    }
    if host.chars().count() > HOST_NAME_CHARS_MAX {
        return Err(MysqlError::new(
            1470,
            "HY000",
            format!("String '{host}' is too long for host name (should be no longer than {HOST_NAME_CHARS_MAX})"),
        ));
    }
    Ok(())
}

/// The credential `authentication` gives an account whose plugin is now
/// `current` (CREATE USER: the default); an empty password is refused
/// when the server listens beyond loopback (it would not start with such
/// an account).
fn credential(authentication: &Option<Authentication>, current: AuthPlugin, context: &Context<'_>) -> SqlResult<Credential> {
    let credential = match authentication {
        None => Credential::new(current, ""),
        Some(Authentication::Password { plugin, password }) => Credential::new(plugin.unwrap_or(current), password),
        Some(Authentication::Hash { plugin, hash }) => Credential::from_stored(*plugin, hash)
            .ok_or_else(|| MysqlError::new(1827, "HY000", "The password hash doesn't have the expected format."))?,
    };
    if credential.is_empty() && context.shared.accounts.passwords_required() {
        return Err(MysqlError::new(
            1819,
            "HY000",
            "Your password does not satisfy the current policy requirements (binlogd listens beyond loopback: every account needs a password)",
        ));
    }
    Ok(credential)
}

/// The options after the users of CREATE / ALTER USER; `None` leaves the
/// account's as it is (ALTER) or at its default (CREATE).
#[derive(Clone, Copy)]
struct AccountOptions {
    require: Option<SslRequirement>,
    lock: Option<bool>,
}

fn create_user(
    context: &Context<'_>,
    principal: &Principal<'_>,
    if_not_exists: bool,
    users: &[(UserName, Option<Authentication>)],
    options: AccountOptions,
) -> SqlResult<Outcome> {
    principal.require(Privilege::CreateUser)?;
    let mut new_accounts = Vec::with_capacity(users.len());
    for (name, authentication) in users {
        let (user, host) = resolve_user(name, context);
        validate_name(&user, &host)?;
        let credential = credential(authentication, AuthPlugin::DEFAULT, context)?;
        new_accounts.push(Account {
            user,
            host,
            credential,
            locked: options.lock.unwrap_or(false),
            ssl: options.require.unwrap_or_default(),
            grants: Grants::default(),
        });
    }
    context.shared.accounts.change(|accounts| {
        let existing: Vec<String> =
            new_accounts.iter().filter(|new| accounts.iter().any(|a| a.named(&new.user, &new.host))).map(Account::quoted).collect();
        if !existing.is_empty() && !if_not_exists {
            return Err(operation_failed("CREATE USER", &existing));
        }
        for (index, new) in new_accounts.iter().enumerate() {
            let exists = accounts.iter().any(|a| a.named(&new.user, &new.host));
            let listed_before = new_accounts[..index].iter().any(|other| other.named(&new.user, &new.host));
            if listed_before && !if_not_exists {
                return Err(operation_failed("CREATE USER", &[new.quoted()]));
            }
            if !exists {
                accounts.push(new.clone());
            }
        }
        Ok(())
    })?;
    Ok(Outcome::ok())
}

fn alter_user(
    context: &Context<'_>,
    principal: &Principal<'_>,
    if_exists: bool,
    users: &[(UserName, Option<Authentication>)],
    options: AccountOptions,
) -> SqlResult<Outcome> {
    let lock = options.lock;
    let mut changes = Vec::with_capacity(users.len());
    for (name, authentication) in users {
        let (user, host) = resolve_user(name, context);
        // Changing one's own password needs no privilege; anything else does.
        if !(principal.is(&user, &host) && lock.is_none() && options.require.is_none()) {
            principal.require(Privilege::CreateUser)?;
        }
        let authentication = authentication.clone();
        changes.push((user, host, authentication));
    }
    context.shared.accounts.change(|accounts| {
        let missing: Vec<String> =
            changes.iter().filter(|(u, h, _)| find_mut(accounts, u, h).is_none()).map(|(u, h, _)| quote(u, h)).collect();
        if !missing.is_empty() && !if_exists {
            return Err(operation_failed("ALTER USER", &missing));
        }
        for (user, host, authentication) in &changes {
            let Some(account) = find_mut(accounts, user, host) else { continue };
            if authentication.is_some() {
                account.credential = credential(authentication, account.credential.plugin(), context)?;
            }
            if let Some(locked) = lock {
                account.locked = locked;
            }
            if let Some(ssl) = options.require {
                account.ssl = ssl;
            }
        }
        Ok(())
    })?;
    Ok(Outcome::ok())
}

fn drop_user(context: &Context<'_>, principal: &Principal<'_>, if_exists: bool, users: &[UserName]) -> SqlResult<Outcome> {
    principal.require(Privilege::CreateUser)?;
    let users = resolve_users(users, context);
    context.shared.accounts.change(|accounts| {
        let missing: Vec<String> =
            users.iter().filter(|(u, h)| !accounts.iter().any(|a| a.named(u, h))).map(|(u, h)| quote(u, h)).collect();
        if !missing.is_empty() && !if_exists {
            return Err(operation_failed("DROP USER", &missing));
        }
        accounts.retain(|account| !users.iter().any(|(u, h)| account.named(u, h)));
        Ok(())
    })?;
    Ok(Outcome::ok())
}

/// MySQL 8's SHOW GRANTS lines for one account: `GRANT USAGE ON *.*` when
/// it has no global privilege, static privileges in MySQL's order, dynamic
/// ones on a line of their own, `ALL PRIVILEGES` for everything a level
/// allows.
pub fn grant_lines(account: &Account) -> Vec<String> {
    let to = format!("{}@{}", quote_identifier(&account.user), quote_identifier(&account.host));
    let mut lines = Vec::new();
    for (level, set) in account.grants.levels() {
        let with_grant_option = if set.contains(Privilege::GrantOption) { " WITH GRANT OPTION" } else { "" };
        let privileges = set.difference([Privilege::GrantOption].into_iter().collect());
        if privileges.contains_all(PrivilegeSet::all_at(&level)) {
            lines.push(format!("GRANT ALL PRIVILEGES ON {} TO {to}{with_grant_option}", level.shown()));
            continue;
        }
        let static_names: Vec<&str> = privileges.iter().filter(|p| !p.is_dynamic()).map(Privilege::name).collect();
        let dynamic_names: Vec<&str> = privileges.iter().filter(|p| p.is_dynamic()).map(Privilege::name).collect();
        if !static_names.is_empty() || level.is_global() || !with_grant_option.is_empty() {
            let names = if static_names.is_empty() { "USAGE".to_string() } else { static_names.join(", ") };
            lines.push(format!("GRANT {names} ON {} TO {to}{with_grant_option}", level.shown()));
        }
        if !dynamic_names.is_empty() {
            lines.push(format!("GRANT {} ON {} TO {to}{with_grant_option}", dynamic_names.join(","), level.shown()));
        }
    }
    lines
}

fn show_grants(context: &Context<'_>, principal: &Principal<'_>, user: &UserName) -> SqlResult<Outcome> {
    let (user, host) = resolve_user(user, context);
    if !principal.is(&user, &host) && !principal.has(Privilege::Select) {
        return Err(principal.database_denied("mysql"));
    }
    let accounts = context.shared.accounts.snapshot();
    let account = accounts.iter().find(|account| account.named(&user, &host)).ok_or_else(|| no_such_grant(&user, &host, &Level::Global))?;
    let mut result = ResultSet::new(vec![ColumnDefinition::varchar(format!("Grants for {user}@{host}"))]);
    for line in grant_lines(account) {
        result.push_row(vec![Wire::from(line)]);
    }
    Ok(Outcome::new(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_grants_lines_follow_mysql() {
        let mut account = Account {
            user: "app".into(),
            host: "%".into(),
            credential: Credential::Native(None),
            locked: false,
            ssl: SslRequirement::None,
            grants: Grants::default(),
        };
        assert_eq!(grant_lines(&account), ["GRANT USAGE ON *.* TO `app`@`%`"]);
        account.grants.global =
            [Privilege::ReplicationSlave, Privilege::Super, Privilege::SystemVariablesAdmin, Privilege::BinlogAdmin].into_iter().collect();
        account.grants.set(&Level::Database("shop".into()), [Privilege::Select, Privilege::Insert].into_iter().collect());
        account.grants.set(
            &Level::Table("shop".into(), "items".into()),
            PrivilegeSet::all_at(&Level::Database(String::new())).union([Privilege::GrantOption].into_iter().collect()),
        );
        assert_eq!(
            grant_lines(&account),
            [
                "GRANT SUPER, REPLICATION SLAVE ON *.* TO `app`@`%`",
                "GRANT BINLOG_ADMIN,SYSTEM_VARIABLES_ADMIN ON *.* TO `app`@`%`",
                "GRANT SELECT, INSERT ON `shop`.* TO `app`@`%`",
                "GRANT ALL PRIVILEGES ON `shop`.`items` TO `app`@`%` WITH GRANT OPTION",
            ]
        );
        let root = Account {
            user: "root".into(),
            host: "localhost".into(),
            credential: Credential::Native(None),
            locked: false,
            ssl: SslRequirement::None,
            grants: Grants::everything(),
        };
        assert_eq!(grant_lines(&root), ["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"]);
    }

    #[test]
    fn levels_refuse_privileges_that_do_not_belong_there() {
        let database = Level::Database("d".into());
        let table = Level::Table("d".into(), "t".into());
        assert_eq!(expand(&PrivilegeList::Named(vec![Privilege::Super]), &database).unwrap_err().code, 1221);
        assert_eq!(expand(&PrivilegeList::Named(vec![Privilege::ReplicationSlave]), &table).unwrap_err().code, 1144);
        assert_eq!(expand(&PrivilegeList::All { grant_option: false }, &table).unwrap(), PrivilegeSet::all_at(&table));
        assert!(expand(&PrivilegeList::All { grant_option: true }, &Level::Global).unwrap().contains(Privilege::GrantOption));
    }
}
