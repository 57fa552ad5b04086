//! The account statements: CREATE / ALTER / DROP USER, GRANT, REVOKE and
//! SHOW GRANTS, parsed by hand (sqlparser's MySQL dialect has none of them
//! in MySQL's form). A child module of `parse`, sharing its token reader.
//!
//! Accepted forms:
//! - `CREATE USER [IF NOT EXISTS] user [auth] [, user [auth]]... [REQUIRE NONE|SSL|X509] [ACCOUNT LOCK|UNLOCK]`
//! - `ALTER USER [IF EXISTS] user [auth] [, ...] [REQUIRE NONE|SSL|X509] [ACCOUNT LOCK|UNLOCK]`
//! - `DROP USER [IF EXISTS] user [, user]...`
//! - `GRANT privileges ON [TABLE] level TO user [, user]... [WITH GRANT OPTION]`
//! - `REVOKE privileges ON [TABLE] level FROM user [, user]...`
//! - `REVOKE ALL [PRIVILEGES], GRANT OPTION FROM user [, user]...`
//! - `SHOW GRANTS [FOR user | FOR CURRENT_USER[()]]`
//!
//! where user is `'name'@'host'` (quoted or not; the host defaults to `%`)
//! or `CURRENT_USER[()]`, auth is `IDENTIFIED BY 'password'` or
//! `IDENTIFIED WITH mysql_native_password | caching_sha2_password [BY
//! 'password' | AS 'hash']`,
//! and level is `*.*`, `*`, `db.*`, `db.table` or `table`.

use protocol::AuthPlugin;
pub use protocol::SslRequirement;
use sqlparser::tokenizer::Token;

use super::{Statement, Words};
use crate::access::privileges::Privilege;
use crate::error::{not_supported, syntax_error, SqlResult};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountStatement {
    CreateUser {
        if_not_exists: bool,
        users: Vec<(UserName, Option<Authentication>)>,
        /// `REQUIRE NONE | SSL | X509`.
        require: Option<SslRequirement>,
        lock: Option<bool>,
    },
    AlterUser {
        if_exists: bool,
        users: Vec<(UserName, Option<Authentication>)>,
        require: Option<SslRequirement>,
        lock: Option<bool>,
    },
    DropUser {
        if_exists: bool,
        users: Vec<UserName>,
    },
    Grant {
        privileges: PrivilegeList,
        level: LevelName,
        users: Vec<UserName>,
        with_grant_option: bool,
    },
    Revoke {
        privileges: PrivilegeList,
        level: LevelName,
        users: Vec<UserName>,
    },
    /// `REVOKE ALL PRIVILEGES, GRANT OPTION FROM ...`: everything, everywhere.
    RevokeEverything {
        users: Vec<UserName>,
    },
    ShowGrants {
        user: UserName,
    },
}

/// An account as a statement names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserName {
    /// `CURRENT_USER`, `CURRENT_USER()`: the session's account.
    Current,
    Named {
        user: String,
        host: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authentication {
    /// `IDENTIFIED [WITH plugin] BY 'password'` (empty: no password);
    /// without a plugin, CREATE USER takes the default and ALTER USER
    /// keeps the account's.
    Password { plugin: Option<AuthPlugin>, password: String },
    /// `IDENTIFIED WITH plugin AS 'hash'`: the hash as users.json stores
    /// it (`*HEX` for mysql_native_password, `$A$005$...` for
    /// caching_sha2_password).
    Hash { plugin: AuthPlugin, hash: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrivilegeList {
    /// `ALL [PRIVILEGES]` (plus GRANT OPTION when listed with it).
    All { grant_option: bool },
    /// Named privileges; `USAGE` contributes nothing.
    Named(Vec<Privilege>),
}

/// A grant level before the current database is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LevelName {
    /// `*.*`
    Global,
    /// `db.*`, or `*` (the current database) when `None`.
    Database(Option<String>),
    /// `db.table`, or `table` in the current database.
    Table(Option<String>, String),
}

/// MySQL privileges binlogd does not enforce: granting them is refused with
/// 1235, not stored as if it meant something.
const UNSUPPORTED_PRIVILEGES: &[&str] = &[
    "FILE",
    "SHUTDOWN",
    "REFERENCES",
    "SHOW DATABASES",
    "CREATE TEMPORARY TABLES",
    "LOCK TABLES",
    "EXECUTE",
    "CREATE VIEW",
    "SHOW VIEW",
    "CREATE ROUTINE",
    "ALTER ROUTINE",
    "EVENT",
    "TRIGGER",
    "CREATE TABLESPACE",
    "CREATE ROLE",
    "DROP ROLE",
    "PROXY",
];

/// Entry from `hand_parse` for CREATE USER, ALTER USER, DROP USER, GRANT,
/// REVOKE and SHOW GRANTS; `None` when the statement is none of them.
pub(super) fn parse_account_statement(words: &mut Words) -> SqlResult<Option<Statement>> {
    let first = words.peek_keyword(0);
    let second = words.peek_keyword(1);
    let statement = match (first.as_deref(), second.as_deref()) {
        (Some("CREATE"), Some("USER")) => {
            words.position += 2;
            let if_not_exists = words.keywords(&["IF", "NOT", "EXISTS"]);
            let users = users_with_authentication(words)?;
            let require = ssl_requirement(words)?;
            let lock = account_lock(words);
            AccountStatement::CreateUser { if_not_exists, users, require, lock }
        }
        (Some("ALTER"), Some("USER")) => {
            words.position += 2;
            let if_exists = words.keywords(&["IF", "EXISTS"]);
            let users = users_with_authentication(words)?;
            let require = ssl_requirement(words)?;
            let lock = account_lock(words);
            if lock.is_none() && require.is_none() && users.iter().all(|(_, authentication)| authentication.is_none()) {
                return Err(syntax_error(&words.rest()));
            }
            AccountStatement::AlterUser { if_exists, users, require, lock }
        }
        (Some("DROP"), Some("USER")) => {
            words.position += 2;
            let if_exists = words.keywords(&["IF", "EXISTS"]);
            AccountStatement::DropUser { if_exists, users: user_list(words)? }
        }
        (Some("GRANT"), _) => {
            words.position += 1;
            let privileges = privilege_list(words)?;
            let level = on_level(words)?;
            if !words.keyword("TO") {
                return Err(syntax_error(&words.rest()));
            }
            let users = user_list(words)?;
            let with_grant_option = words.keywords(&["WITH", "GRANT", "OPTION"]);
            if words.keyword("IDENTIFIED") {
                // Removed from GRANT in MySQL 8.0: CREATE USER sets passwords.
                return Err(syntax_error(&format!("IDENTIFIED {}", words.rest())));
            }
            AccountStatement::Grant { privileges, level, users, with_grant_option }
        }
        (Some("REVOKE"), _) => {
            words.position += 1;
            let start = words.position;
            if words.keyword("ALL") {
                words.keyword("PRIVILEGES");
                if words.token(&Token::Comma) && words.keywords(&["GRANT", "OPTION"]) && words.keyword("FROM") {
                    let users = user_list(words)?;
                    return words.end(Statement::Account(AccountStatement::RevokeEverything { users }));
                }
                words.position = start;
            }
            let privileges = privilege_list(words)?;
            let level = on_level(words)?;
            if !words.keyword("FROM") {
                return Err(syntax_error(&words.rest()));
            }
            AccountStatement::Revoke { privileges, level, users: user_list(words)? }
        }
        (Some("SHOW"), Some("GRANTS")) => {
            words.position += 2;
            let user = if words.keyword("FOR") { user_name(words)? } else { UserName::Current };
            if words.keyword("USING") {
                return Err(not_supported("SHOW GRANTS ... USING (roles)"));
            }
            AccountStatement::ShowGrants { user }
        }
        _ => return Ok(None),
    };
    words.end(Statement::Account(statement))
}

fn user_list(words: &mut Words) -> SqlResult<Vec<UserName>> {
    let mut users = vec![user_name(words)?];
    while words.token(&Token::Comma) {
        users.push(user_name(words)?);
    }
    Ok(users)
}

fn users_with_authentication(words: &mut Words) -> SqlResult<Vec<(UserName, Option<Authentication>)>> {
    let mut users = Vec::new();
    loop {
        let user = user_name(words)?;
        let authentication = authentication(words)?;
        users.push((user, authentication));
        if !words.token(&Token::Comma) {
            break;
        }
    }
    if !words.at_end() && !matches!(words.peek_keyword(0).as_deref(), Some("ACCOUNT" | "REQUIRE")) {
        // WITH MAX_..., PASSWORD EXPIRE, DEFAULT ROLE, COMMENT, ...
        return Err(not_supported(format!("account option {}", words.rest())));
    }
    Ok(users)
}

/// `REQUIRE NONE | SSL | X509`; the certificate details (ISSUER, SUBJECT,
/// CIPHER) are not supported.
fn ssl_requirement(words: &mut Words) -> SqlResult<Option<SslRequirement>> {
    if !words.keyword("REQUIRE") {
        return Ok(None);
    }
    let requirement = match words.peek_keyword(0).as_deref() {
        Some("NONE") => SslRequirement::None,
        Some("SSL") => SslRequirement::Ssl,
        Some("X509") => SslRequirement::X509,
        Some("ISSUER" | "SUBJECT" | "CIPHER") => return Err(not_supported(format!("REQUIRE {}", words.rest()))),
        _ => return Err(syntax_error(&words.rest())),
    };
    words.position += 1;
    Ok(Some(requirement))
}

fn account_lock(words: &mut Words) -> Option<bool> {
    if words.keywords(&["ACCOUNT", "LOCK"]) {
        return Some(true);
    }
    if words.keywords(&["ACCOUNT", "UNLOCK"]) {
        return Some(false);
    }
    None
}

/// `'name'@'host'`, `name@host`, `'name'` (host `%`), `CURRENT_USER[()]`.
pub(super) fn user_name(words: &mut Words) -> SqlResult<UserName> {
    if words.keyword("CURRENT_USER") {
        if words.token(&Token::LParen) && !words.token(&Token::RParen) {
            return Err(syntax_error(&words.rest()));
        }
        return Ok(UserName::Current);
    }
    let (user, mut host) = match words.tokens.get(words.position) {
        Some(Token::SingleQuotedString(text) | Token::DoubleQuotedString(text)) => (text.clone(), None),
        Some(Token::Word(word)) if word.quote_style.is_some() => (word.value.clone(), None),
        // The tokenizer reads `app@localhost` as one word.
        Some(Token::Word(word)) => match word.value.split_once('@') {
            Some((user, host)) => (user.to_string(), Some(host.to_string())),
            None => (word.value.clone(), None),
        },
        _ => return Err(syntax_error(&words.rest())),
    };
    words.position += 1;
    if host.is_none() {
        match words.tokens.get(words.position) {
            Some(Token::AtSign) => {
                words.position += 1;
                host = Some(match words.tokens.get(words.position) {
                    Some(Token::SingleQuotedString(text) | Token::DoubleQuotedString(text)) => text.clone(),
                    Some(Token::Word(word)) => word.value.clone(),
                    _ => return Err(syntax_error(&words.rest())),
                });
                words.position += 1;
            }
            // `'app'@localhost`: the tokenizer reads `@localhost` as a word.
            Some(Token::Word(word)) if word.quote_style.is_none() && word.value.starts_with('@') => {
                host = Some(word.value[1..].to_string());
                words.position += 1;
            }
            _ => {}
        }
    }
    Ok(UserName::Named { user, host: host.unwrap_or_else(|| "%".to_string()) })
}

fn authentication(words: &mut Words) -> SqlResult<Option<Authentication>> {
    if !words.keyword("IDENTIFIED") {
        return Ok(None);
    }
    if words.keyword("BY") {
        if words.keyword("PASSWORD") {
            // MySQL 5.7's `IDENTIFIED BY PASSWORD '*HASH'`.
            return Err(syntax_error(&format!("PASSWORD {}", words.rest())));
        }
        let password = words.string().ok_or_else(|| syntax_error(&words.rest()))?;
        return Ok(Some(Authentication::Password { plugin: None, password }));
    }
    if !words.keyword("WITH") {
        return Err(syntax_error(&words.rest()));
    }
    let plugin = words.string().or_else(|| words.identifier()).ok_or_else(|| syntax_error(&words.rest()))?;
    // ER_PLUGIN_IS_NOT_LOADED for any other plugin.
    let plugin = AuthPlugin::from_name(&plugin)
        .ok_or_else(|| protocol::MysqlError::new(1524, "HY000", format!("Plugin '{plugin}' is not loaded")))?;
    if words.keyword("BY") {
        let password = words.string().ok_or_else(|| syntax_error(&words.rest()))?;
        return Ok(Some(Authentication::Password { plugin: Some(plugin), password }));
    }
    if words.keyword("AS") {
        let hash = words.string().ok_or_else(|| syntax_error(&words.rest()))?;
        return Ok(Some(Authentication::Hash { plugin, hash }));
    }
    Ok(Some(Authentication::Password { plugin: Some(plugin), password: String::new() }))
}

/// `ALL [PRIVILEGES]` or a comma-separated list of privilege names, up to ON.
fn privilege_list(words: &mut Words) -> SqlResult<PrivilegeList> {
    let mut named = Vec::new();
    let mut all = false;
    let mut grant_option = false;
    loop {
        let mut parts = Vec::new();
        while let Some(word) = words.peek_keyword(0) {
            if word == "ON" || word == "FROM" || word == "TO" {
                break;
            }
            parts.push(word);
            words.position += 1;
        }
        if words.tokens.get(words.position) == Some(&Token::LParen) {
            return Err(not_supported("column privileges"));
        }
        let name = parts.join(" ");
        match name.as_str() {
            "" => return Err(syntax_error(&words.rest())),
            "ALL" | "ALL PRIVILEGES" => all = true,
            "USAGE" => {}
            "GRANT OPTION" => grant_option = true,
            _ => match Privilege::from_name(&name) {
                Some(privilege) => named.push(privilege),
                None if UNSUPPORTED_PRIVILEGES.contains(&name.as_str()) => return Err(not_supported(format!("the {name} privilege"))),
                // `GRANT role TO user`: MySQL 8's roles.
                None if matches!(words.peek_keyword(0).as_deref(), Some("TO" | "FROM")) => return Err(not_supported("roles")),
                None => return Err(syntax_error(&format!("{name} {}", words.rest()))),
            },
        }
        if !words.token(&Token::Comma) {
            break;
        }
    }
    if !words.keyword("ON") {
        return Err(syntax_error(&words.rest()));
    }
    if all {
        if !named.is_empty() {
            return Err(syntax_error(&words.rest()));
        }
        return Ok(PrivilegeList::All { grant_option });
    }
    if grant_option {
        named.push(Privilege::GrantOption);
    }
    Ok(PrivilegeList::Named(named))
}

/// The level after ON (already consumed): `*.*`, `*`, `db.*`, `db.t`, `t`.
fn on_level(words: &mut Words) -> SqlResult<LevelName> {
    if words.keyword("FUNCTION") || words.keyword("PROCEDURE") {
        return Err(not_supported("routine privileges"));
    }
    words.keyword("TABLE");
    if words.token(&Token::Mul) {
        if words.token(&Token::Period) {
            if words.token(&Token::Mul) {
                return Ok(LevelName::Global);
            }
            return Err(syntax_error(&words.rest()));
        }
        return Ok(LevelName::Database(None));
    }
    let first = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
    if !words.token(&Token::Period) {
        return Ok(LevelName::Table(None, first));
    }
    if words.token(&Token::Mul) {
        return Ok(LevelName::Database(Some(first)));
    }
    let table = words.identifier().ok_or_else(|| syntax_error(&words.rest()))?;
    Ok(LevelName::Table(Some(first), table))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn account(sql: &str) -> AccountStatement {
        match parse(sql).unwrap_or_else(|error| panic!("{sql}: {error}")).statement {
            Statement::Account(statement) => statement,
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn named(user: &str, host: &str) -> UserName {
        UserName::Named { user: user.into(), host: host.into() }
    }

    #[test]
    fn user_names_in_every_quoting() {
        for (text, user, host) in [
            ("'app'@'10.0.0.%'", "app", "10.0.0.%"),
            ("`app`@`localhost`", "app", "localhost"),
            ("\"app\"@\"%\"", "app", "%"),
            ("app@localhost", "app", "localhost"),
            ("'app'@localhost", "app", "localhost"),
            ("'app' @ 'h'", "app", "h"),
            ("'app'", "app", "%"),
            ("app", "app", "%"),
        ] {
            assert_eq!(
                account(&format!("DROP USER {text}")),
                AccountStatement::DropUser { if_exists: false, users: vec![named(user, host)] },
                "{text}"
            );
        }
        assert_eq!(account("SHOW GRANTS FOR CURRENT_USER()"), AccountStatement::ShowGrants { user: UserName::Current });
        assert_eq!(account("SHOW GRANTS"), AccountStatement::ShowGrants { user: UserName::Current });
    }

    #[test]
    fn create_and_alter_user_with_passwords() {
        assert_eq!(
            account("CREATE USER IF NOT EXISTS 'a'@'%' IDENTIFIED BY 'pw', b IDENTIFIED WITH mysql_native_password BY 'x', c"),
            AccountStatement::CreateUser {
                if_not_exists: true,
                users: vec![
                    (named("a", "%"), Some(Authentication::Password { plugin: None, password: "pw".into() })),
                    (named("b", "%"), Some(Authentication::Password { plugin: Some(AuthPlugin::Native), password: "x".into() })),
                    (named("c", "%"), None),
                ],
                require: None,
                lock: None,
            }
        );
        assert_eq!(
            account("ALTER USER CURRENT_USER() IDENTIFIED WITH 'mysql_native_password' AS '*14E65567ABDB5135D0CFD9A70B3032C179A49EE7'"),
            AccountStatement::AlterUser {
                if_exists: false,
                users: vec![(
                    UserName::Current,
                    Some(Authentication::Hash { plugin: AuthPlugin::Native, hash: "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7".into() }),
                )],
                require: None,
                lock: None,
            }
        );
        assert_eq!(
            account("ALTER USER u ACCOUNT LOCK"),
            AccountStatement::AlterUser { if_exists: false, users: vec![(named("u", "%"), None)], require: None, lock: Some(true) }
        );
        assert_eq!(
            account("ALTER USER u REQUIRE X509 ACCOUNT UNLOCK"),
            AccountStatement::AlterUser {
                if_exists: false,
                users: vec![(named("u", "%"), None)],
                require: Some(SslRequirement::X509),
                lock: Some(false)
            }
        );
        assert_eq!(
            account("CREATE USER u IDENTIFIED WITH caching_sha2_password BY 'x' REQUIRE SSL"),
            AccountStatement::CreateUser {
                if_not_exists: false,
                users: vec![(
                    named("u", "%"),
                    Some(Authentication::Password { plugin: Some(AuthPlugin::CachingSha2), password: "x".into() })
                )],
                require: Some(SslRequirement::Ssl),
                lock: None,
            }
        );
        assert_eq!(parse("CREATE USER u IDENTIFIED WITH sha256_password BY 'x'").unwrap_err().code, 1524);
        assert_eq!(parse("CREATE USER u REQUIRE ISSUER 'x'").unwrap_err().code, 1235);
        assert_eq!(parse("CREATE USER u IDENTIFIED BY 'x' PASSWORD EXPIRE").unwrap_err().code, 1235);
        assert_eq!(parse("CREATE USER u IDENTIFIED BY").unwrap_err().code, 1064);
        assert_eq!(parse("ALTER USER u").unwrap_err().code, 1064);
        assert_eq!(parse("DROP USER").unwrap_err().code, 1064);
    }

    #[test]
    fn grant_and_revoke_privilege_lists_and_levels() {
        assert_eq!(
            account("GRANT SELECT, INSERT ON shop.* TO 'app'@'%'"),
            AccountStatement::Grant {
                privileges: PrivilegeList::Named(vec![Privilege::Select, Privilege::Insert]),
                level: LevelName::Database(Some("shop".into())),
                users: vec![named("app", "%")],
                with_grant_option: false,
            }
        );
        assert_eq!(
            account("grant all privileges on *.* to root@localhost, 'r'@'%' with grant option"),
            AccountStatement::Grant {
                privileges: PrivilegeList::All { grant_option: false },
                level: LevelName::Global,
                users: vec![named("root", "localhost"), named("r", "%")],
                with_grant_option: true,
            }
        );
        assert_eq!(
            account("GRANT REPLICATION SLAVE, REPLICATION CLIENT, SYSTEM_VARIABLES_ADMIN ON *.* TO repl"),
            AccountStatement::Grant {
                privileges: PrivilegeList::Named(vec![
                    Privilege::ReplicationSlave,
                    Privilege::ReplicationClient,
                    Privilege::SystemVariablesAdmin
                ]),
                level: LevelName::Global,
                users: vec![named("repl", "%")],
                with_grant_option: false,
            }
        );
        assert_eq!(
            account("GRANT UPDATE ON TABLE shop.items TO u"),
            AccountStatement::Grant {
                privileges: PrivilegeList::Named(vec![Privilege::Update]),
                level: LevelName::Table(Some("shop".into()), "items".into()),
                users: vec![named("u", "%")],
                with_grant_option: false,
            }
        );
        assert_eq!(
            account("REVOKE INSERT, GRANT OPTION ON * FROM u"),
            AccountStatement::Revoke {
                privileges: PrivilegeList::Named(vec![Privilege::Insert, Privilege::GrantOption]),
                level: LevelName::Database(None),
                users: vec![named("u", "%")],
            }
        );
        assert_eq!(
            account("REVOKE ALL ON items FROM u"),
            AccountStatement::Revoke {
                privileges: PrivilegeList::All { grant_option: false },
                level: LevelName::Table(None, "items".into()),
                users: vec![named("u", "%")]
            }
        );
        assert_eq!(
            account("REVOKE ALL PRIVILEGES, GRANT OPTION FROM a, b"),
            AccountStatement::RevokeEverything { users: vec![named("a", "%"), named("b", "%")] }
        );
        assert_eq!(parse("GRANT SELECT (c) ON t TO u").unwrap_err().code, 1235);
        assert_eq!(parse("GRANT FILE ON *.* TO u").unwrap_err().code, 1235);
        assert_eq!(parse("GRANT FLY ON *.* TO u").unwrap_err().code, 1064);
        assert_eq!(parse("GRANT r1 TO u").unwrap_err().code, 1235);
        assert_eq!(parse("GRANT SELECT ON *.* TO u IDENTIFIED BY 'x'").unwrap_err().code, 1064);
        assert_eq!(parse("GRANT SELECT ON *. TO u").unwrap_err().code, 1064);
        assert_eq!(parse("GRANT SELECT ON *.* u").unwrap_err().code, 1064);
    }
}
