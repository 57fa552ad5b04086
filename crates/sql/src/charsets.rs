//! The character sets and collations binlogd knows by name and id: what
//! `SET NAMES`, the `character_set_*` and `collation_*` variables, the
//! handshake's collation byte, binlog replays (ids) and INFORMATION_SCHEMA
//! name, and what a column's or table's `CHARACTER SET` / `COLLATE` clause
//! makes. Stored text is always UTF-8 in memory; a column of another
//! character set holds only what that set can, and its values are logged
//! in it (`binlog_format::text_charset`); a client talking another of these
//! is converted at the protocol seam (`protocol::charset`).

use protocol::{CharacterSets, ClientCharset, MysqlError};

use crate::eval::value::{text, Value};

/// One collation: id, name, character set, whether it is the set's
/// default, and its pad attribute (INFORMATION_SCHEMA.COLLATIONS).
#[derive(Debug)]
pub struct Collation {
    pub id: u16,
    pub name: &'static str,
    pub charset: &'static str,
    pub is_default: bool,
    pub no_pad: bool,
}

const fn collation(id: u16, name: &'static str, charset: &'static str, is_default: bool, no_pad: bool) -> Collation {
    Collation { id, name, charset, is_default, no_pad }
}

/// The ids MySQL 8.4 and MariaDB share for these collations.
pub const COLLATIONS: &[Collation] = &[
    collation(8, "latin1_swedish_ci", "latin1", true, false),
    collation(11, "ascii_general_ci", "ascii", true, false),
    collation(33, "utf8mb3_general_ci", "utf8mb3", true, false),
    collation(45, "utf8mb4_general_ci", "utf8mb4", false, false),
    collation(46, "utf8mb4_bin", "utf8mb4", false, false),
    collation(47, "latin1_bin", "latin1", false, false),
    collation(63, "binary", "binary", true, true),
    collation(65, "ascii_bin", "ascii", false, false),
    collation(83, "utf8mb3_bin", "utf8mb3", false, false),
    collation(192, "utf8mb3_unicode_ci", "utf8mb3", false, false),
    collation(224, "utf8mb4_unicode_ci", "utf8mb4", false, false),
    collation(255, "utf8mb4_0900_ai_ci", "utf8mb4", true, true),
    collation(305, "utf8mb4_0900_as_cs", "utf8mb4", false, true),
    collation(309, "utf8mb4_0900_bin", "utf8mb4", false, true),
];

/// Character sets: name, description and bytes per character at most
/// (INFORMATION_SCHEMA.CHARACTER_SETS).
pub const CHARACTER_SETS: &[(&str, &str, u64)] = &[
    ("ascii", "US ASCII", 1),
    ("binary", "Binary pseudo charset", 1),
    ("latin1", "cp1252 West European", 1),
    ("utf8mb3", "UTF-8 Unicode", 3),
    ("utf8mb4", "UTF-8 Unicode", 4),
];

pub fn collation_by_id(id: u16) -> Option<&'static Collation> {
    COLLATIONS.iter().find(|collation| collation.id == id)
}

pub fn collation_by_name(name: &str) -> Option<&'static Collation> {
    // utf8 and utf8mb3 name the same collations (utf8_general_ci, …).
    let name = name.to_ascii_lowercase();
    let name = name.strip_prefix("utf8_").map(|rest| format!("utf8mb3_{rest}")).unwrap_or(name);
    COLLATIONS.iter().find(|collation| collation.name == name)
}

/// A character set's default collation.
pub fn default_collation(charset: &str) -> &'static Collation {
    COLLATIONS
        .iter()
        .find(|collation| collation.charset == charset && collation.is_default)
        .expect("every character set has a default collation")
}

/// The character set `name` names, in its canonical spelling (`utf8` is
/// `utf8mb3`), or MySQL's 1115.
pub fn character_set(name: &str) -> Result<&'static str, MysqlError> {
    ClientCharset::from_name(name).map(ClientCharset::name).ok_or_else(|| unknown_character_set(name))
}

/// A collation that belongs to `charset`, or 1273 / 1253.
pub fn collation_of(charset: &str, name: &str) -> Result<&'static Collation, MysqlError> {
    let collation = collation_by_name(name).ok_or_else(|| unknown_collation(name))?;
    if collation.charset != charset {
        return Err(MysqlError::new(1253, "42000", format!("COLLATION '{}' is not valid for CHARACTER SET '{charset}'", collation.name)));
    }
    Ok(collation)
}

/// The collation a `CHARACTER SET charset [COLLATE collation]` clause
/// names, either part optional, as MySQL resolves it: a character set
/// alone takes its default collation, a collation alone its own set;
/// `None` when neither is given. 1115, 1273 or 1253 otherwise.
pub fn clause_collation(charset: Option<&str>, collation: Option<&str>) -> Result<Option<&'static Collation>, MysqlError> {
    let unquoted = |name: &str| name.trim_matches(|c| c == '`' || c == '\'' || c == '"').to_ascii_lowercase();
    match (charset.map(unquoted), collation.map(unquoted)) {
        (None, None) => Ok(None),
        (Some(charset), None) => Ok(Some(default_collation(character_set(&charset)?))),
        (None, Some(collation)) => collation_by_name(&collation).map(Some).ok_or_else(|| unknown_collation(&collation)),
        (Some(charset), Some(collation)) => collation_of(character_set(&charset)?, &collation).map(Some),
    }
}

/// The most bytes a character of collation `id`'s character set takes
/// (what a CHAR or VARCHAR's byte length is counted in); 4 for an id
/// binlogd does not know.
pub fn bytes_per_character(id: u16) -> u16 {
    collation_by_id(id)
        .and_then(|collation| CHARACTER_SETS.iter().find(|(name, _, _)| *name == collation.charset))
        .map_or(4, |(_, _, bytes)| *bytes as u16)
}

/// The byte offset of the first character of `text` that collation
/// `id`'s character set cannot hold: outside latin1 (Windows-1252) or
/// ascii, or beyond the BMP for utf8mb3 (whose characters take at most 3
/// bytes).
pub fn first_unstorable(id: u16, text: &str) -> Option<usize> {
    if text.is_ascii() {
        return None;
    }
    match bytes_per_character(id) {
        3 => text.char_indices().find(|(_, c)| c.len_utf8() == 4).map(|(at, _)| at),
        _ => binlog_format::text_charset::TextCharset::of_collation(id).first_unrepresentable(text).map(|(at, _)| at),
    }
}

/// `text` with each character collation `id`'s character set cannot hold
/// as `?`, as MySQL stores it outside strict mode.
pub fn with_unstorable_replaced(id: u16, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = first_unstorable(id, rest) {
        out.push_str(&rest[..at]);
        out.push('?');
        let skipped = rest[at..].chars().next().map_or(1, char::len_utf8);
        rest = &rest[at + skipped..];
    }
    out.push_str(rest);
    out
}

/// `character_set_database` and `collation_database` for a database of
/// collation `id`: a session's follow its current database.
pub fn database_variables(id: u16) -> [(&'static str, Value); 2] {
    let collation = collation_by_id(id).unwrap_or_else(|| default_collation("utf8mb4"));
    [
        ("character_set_database", Value::Bytes(collation.charset.as_bytes().to_vec())),
        ("collation_database", Value::Bytes(collation.name.as_bytes().to_vec())),
    ]
}

/// Whether SHOW CREATE TABLE and SHOW CREATE DATABASE name collation `id`
/// beside its character set: when it is not the set's default, and always
/// for utf8mb4_0900_ai_ci (MySQL's `store_create_info`).
pub fn shows_collation(id: u16) -> bool {
    collation_by_id(id).is_none_or(|collation| !collation.is_default || collation.id == 255)
}

/// The value a `character_set_*` or `collation_*` variable stores when set
/// to `value`: the canonical name, or MySQL's error. Other variables'
/// values pass unchanged. Only `character_set_results` may be NULL (no
/// conversion of results).
pub fn checked_variable_value(variable: &str, value: Value) -> Result<Value, MysqlError> {
    let is_charset = variable.starts_with("character_set_");
    let is_collation = variable.starts_with("collation_") || variable == "default_collation_for_utf8mb4";
    if !is_charset && !is_collation {
        return Ok(value);
    }
    if value == Value::Null {
        return match variable {
            "character_set_results" => Ok(Value::Null),
            _ => Err(crate::error::wrong_value_for_variable(variable, "NULL")),
        };
    }
    let name = text(&value);
    let canonical = match is_charset {
        true => character_set(&name)?,
        false => collation_by_name(&name).ok_or_else(|| unknown_collation(&name))?.name,
    };
    Ok(Value::Bytes(canonical.as_bytes().to_vec()))
}

/// The session's character sets as the protocol converts with them, from
/// its `character_set_client` and `character_set_results` values.
pub fn session_character_sets(client: &Value, results: &Value) -> CharacterSets {
    let client = ClientCharset::from_name(&text(client)).unwrap_or_default();
    let results = match results {
        Value::Null => None,
        results => ClientCharset::from_name(&text(results)).filter(|charset| *charset != ClientCharset::Binary),
    };
    CharacterSets { client, results }
}

/// 1115 ER_UNKNOWN_CHARACTER_SET.
pub fn unknown_character_set(name: &str) -> MysqlError {
    MysqlError::new(1115, "42000", format!("Unknown character set: '{name}'"))
}

/// 1273 ER_UNKNOWN_COLLATION.
pub fn unknown_collation(name: &str) -> MysqlError {
    MysqlError::new(1273, "HY000", format!("Unknown collation: '{name}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_character_set_has_one_default_collation_and_a_client_conversion() {
        for (name, _, _) in CHARACTER_SETS {
            assert_eq!(COLLATIONS.iter().filter(|c| c.charset == *name && c.is_default).count(), 1, "{name}");
            let client = ClientCharset::from_name(name).unwrap();
            assert_eq!(client.default_collation(), default_collation(name).id, "{name}");
        }
        for collation in COLLATIONS {
            assert!(CHARACTER_SETS.iter().any(|(name, _, _)| *name == collation.charset), "{}", collation.name);
        }
    }

    #[test]
    fn names_follow_mysqls_aliases_and_errors() {
        assert_eq!(character_set("UTF8").unwrap(), "utf8mb3");
        assert_eq!(character_set("koi8r").unwrap_err().code, 1115);
        assert_eq!(collation_of("utf8mb3", "utf8_bin").unwrap().id, 83);
        assert_eq!(collation_of("latin1", "utf8mb4_bin").unwrap_err().code, 1253);
        assert_eq!(collation_of("latin1", "latin1_nope").unwrap_err().code, 1273);
    }

    #[test]
    fn a_clause_names_a_collation_as_mysql_resolves_it() {
        let id = |charset, collation| clause_collation(charset, collation).map(|c| c.map(|c| c.id));
        assert_eq!(id(None, None).unwrap(), None);
        assert_eq!(id(Some("latin1"), None).unwrap(), Some(8));
        assert_eq!(id(Some("utf8"), None).unwrap(), Some(33));
        assert_eq!(id(Some("ascii"), Some("ascii_bin")).unwrap(), Some(65));
        assert_eq!(id(None, Some("latin1_bin")).unwrap(), Some(47));
        assert_eq!(id(Some("latin1"), Some("utf8mb4_bin")).unwrap_err().code, 1253);
        assert_eq!(id(Some("klingon"), None).unwrap_err().code, 1115);
        assert_eq!((bytes_per_character(8), bytes_per_character(33), bytes_per_character(45), bytes_per_character(63)), (1, 3, 4, 1));
    }
}
