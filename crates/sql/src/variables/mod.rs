//! System variables: one registry of MySQL's names, scopes, types and
//! defaults (`registry.rs`), the startup settings they shape
//! (`startup.rs`), global values shared by every session, session values
//! on top, and what SET may change.

use std::collections::BTreeMap;

use parking_lot::RwLock;

use crate::error::{wrong_value_for_variable, SqlResult};
use crate::eval::value::{text, to_number, Value};

mod registry;
pub mod replay;
pub mod row_logging;
pub mod semi_sync;
pub mod startup;

pub use startup::{Origin, Setting, StartupConfig};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariableScope {
    /// `@@name`: the session value, else the global one.
    Default,
    Session,
    Global,
}

/// Which values a variable has (MySQL's "Variable Scope").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A global value and a session value on top of it.
    Both,
    /// Only a global value: SET SESSION is 1229, `@@session.x` 1238.
    Global,
    /// Only a session value: SET GLOBAL is 1228, `@@global.x` 1238.
    Session,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Text,
    /// Unsigned; at startup also with a K, M or G multiplier.
    Integer,
    /// Stored as 0/1, shown ON/OFF by SHOW VARIABLES.
    Boolean,
    /// One of these words (MySQL's ENUM variables), stored as spelt here;
    /// anything else is 1231.
    Enumeration(&'static [&'static str]),
}

pub struct Definition {
    pub name: &'static str,
    pub kind: Kind,
    /// Whether SET may change it; otherwise it is given at startup and
    /// SET is 1238.
    pub dynamic: bool,
    pub value_type: Type,
    pub origin: Origin,
}

impl Definition {
    /// The default as text: the SQL layer's own, or what the owning crate
    /// starts with.
    pub fn default_text(&self) -> String {
        match self.origin {
            Origin::Own(text) => text.to_string(),
            Origin::Owner(default) => default(),
            Origin::Startup(field) => (field.read)(&StartupConfig::default()),
        }
    }

    /// A startup value (command line, my.cnf) parsed by this variable's
    /// type and, for a field of the startup config, written there. The
    /// error names the option and its value, as the server prints it.
    pub fn apply_startup(&self, config: &mut StartupConfig, text: &str) -> Result<Setting, String> {
        let refused = |reason: String| format!("--{}: '{text}' {reason}", self.name);
        let setting = Setting::parse(self.value_type, text).map_err(refused)?;
        if let Origin::Startup(field) = self.origin {
            (field.write)(config, &setting).map_err(refused)?;
        }
        Ok(setting)
    }
}

pub use registry::{DEFINITIONS, SERVER_VERSION};

pub fn definition(name: &str) -> Option<&'static Definition> {
    definition_index(name).map(|index| &DEFINITIONS[index])
}

/// `name`'s place in [`DEFINITIONS`].
fn definition_index(name: &str) -> Option<usize> {
    // Statements read several variables each (sql_mode, time_zone, ...):
    // a name already in its stored spelling is looked up without a copy.
    let stored = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_';
    let name: std::borrow::Cow<'_, str> = match name.bytes().all(stored) {
        true => name.into(),
        false => name.to_ascii_lowercase().replace('-', "_").into(),
    };
    DEFINITIONS_BY_NAME.get(name.as_ref()).copied()
}

/// Each definition's place in [`DEFINITIONS`], by name.
static DEFINITIONS_BY_NAME: std::sync::LazyLock<std::collections::HashMap<&'static str, usize>> =
    std::sync::LazyLock::new(|| DEFINITIONS.iter().enumerate().map(|(index, definition)| (definition.name, index)).collect());

/// `value` as the variable stores it, or 1231.
pub fn normalize(definition: &Definition, value: &Value) -> SqlResult<Value> {
    let shown = text(value);
    match definition.value_type {
        Type::Text => Ok(Value::Bytes(shown.into_bytes())),
        Type::Integer => match to_number(value) {
            Some(crate::eval::value::Number::Int(v)) if v >= 0 => Ok(crate::eval::expr::int_value(v)),
            _ => Err(wrong_value_for_variable(definition.name, &shown)),
        },
        Type::Boolean => match shown.to_ascii_uppercase().as_str() {
            "1" | "ON" | "TRUE" => Ok(Value::Int(1)),
            "0" | "OFF" | "FALSE" => Ok(Value::Int(0)),
            _ => Err(wrong_value_for_variable(definition.name, &shown)),
        },
        Type::Enumeration(words) => match words.iter().find(|word| word.eq_ignore_ascii_case(&shown)) {
            Some(word) => Ok(Value::Bytes(word.as_bytes().to_vec())),
            None => Err(wrong_value_for_variable(definition.name, &shown)),
        },
    }
}

/// How SHOW VARIABLES prints a value.
pub fn shown(definition: &Definition, value: &Value) -> String {
    match (definition.value_type, value) {
        (Type::Boolean, Value::Int(0)) => "OFF".into(),
        (Type::Boolean, _) => "ON".into(),
        _ => text(value),
    }
}

/// The global values, shared by every session.
pub struct GlobalVariables {
    /// By the definition's place in [`DEFINITIONS`]: a transaction's
    /// first statement reads several, and a name is looked up once.
    values: RwLock<Vec<Value>>,
}

impl GlobalVariables {
    /// Every variable's global value: a field of `config` as read back
    /// from it (after the startup values were written there), else the
    /// startup value in `given`, else the default.
    pub fn new(config: &StartupConfig, given: &[(&'static Definition, Setting)]) -> SqlResult<GlobalVariables> {
        let mut values = Vec::with_capacity(DEFINITIONS.len());
        for definition in DEFINITIONS {
            let text = match definition.origin {
                Origin::Startup(field) => (field.read)(config),
                Origin::Own(_) | Origin::Owner(_) => match given.iter().rev().find(|(given, _)| given.name == definition.name) {
                    Some((_, setting)) => setting.text(),
                    None => definition.default_text(),
                },
            };
            values.push(normalize(definition, &Value::Bytes(text.into_bytes()))?);
        }
        Ok(GlobalVariables { values: RwLock::new(values) })
    }

    pub fn get(&self, name: &str) -> Option<Value> {
        let index = definition_index(name)?;
        Some(self.values.read()[index].clone())
    }

    /// `f` of the global value of `name`, read in place.
    pub fn with<R>(&self, name: &str, f: impl FnOnce(&Value) -> R) -> Option<R> {
        let index = definition_index(name)?;
        Some(f(&self.values.read()[index]))
    }

    pub fn set(&self, definition: &'static Definition, value: Value) {
        let index = definition_index(definition.name).expect("a definition of DEFINITIONS");
        self.values.write()[index] = value;
    }

    pub fn snapshot(&self) -> BTreeMap<&'static str, Value> {
        DEFINITIONS.iter().map(|definition| definition.name).zip(self.values.read().iter().cloned()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Global values as a server started with `given` has them.
    fn started_with(given: &[(&str, &str)]) -> Result<GlobalVariables, String> {
        let mut config = StartupConfig::default();
        let mut settings = Vec::new();
        for (name, text) in given {
            let definition = definition(name).ok_or_else(|| format!("unknown variable '{name}={text}'"))?;
            settings.push((definition, definition.apply_startup(&mut config, text)?));
        }
        GlobalVariables::new(&config, &settings).map_err(|error| error.message)
    }

    #[test]
    fn definitions_are_unique_and_defaults_valid() {
        let mut names: Vec<&str> = DEFINITIONS.iter().map(|definition| definition.name).collect();
        names.sort_unstable();
        assert!(names.windows(2).all(|pair| pair[0] < pair[1]), "a name defined twice");
        let globals = started_with(&[("max-connections", "20")]).unwrap();
        assert_eq!(globals.get("max_connections"), Some(Value::Int(20)));
        assert_eq!(globals.get("autocommit"), Some(Value::Int(1)));
        assert!(started_with(&[("no_such", "1")]).is_err());
        // Any case, and the option spelling with dashes, name the same one.
        assert!(std::ptr::eq(definition("SQL-Mode").unwrap(), definition("sql_mode").unwrap()));
        assert!(definition("sql_mode2").is_none());
    }

    #[test]
    fn enumerations_take_their_words_in_any_case_and_nothing_else() {
        let globals = started_with(&[("binlogd-replica-coordinator-mode", "event_scan")]).unwrap();
        assert_eq!(globals.get("binlogd_replica_coordinator_mode"), Some(Value::Bytes(b"EVENT_SCAN".to_vec())));
        let mode = definition("binlogd_replica_coordinator_mode").unwrap();
        assert_eq!(normalize(mode, &Value::Bytes(b"Queue".to_vec())), Ok(Value::Bytes(b"QUEUE".to_vec())));
        let refused = normalize(mode, &Value::Bytes(b"FAST".to_vec())).unwrap_err();
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (1231, "Variable 'binlogd_replica_coordinator_mode' can't be set to the value of 'FAST'")
        );
        assert!(started_with(&[("binlogd_replica_coordinator_mode", "1")]).is_err());
    }

    /// Writing a variable's registry default into the owning crates'
    /// default config changes nothing: the registry's default is what the
    /// config starts with, and the variable reads and writes one field.
    #[test]
    fn every_startup_default_is_what_the_owning_config_starts_with() {
        let untouched = format!("{:?}", StartupConfig::default());
        let mut fields = 0;
        for definition in DEFINITIONS {
            let Origin::Startup(field) = definition.origin else { continue };
            // Reports of what the server found (the certificates), not fields.
            if matches!(definition.name, "have_ssl" | "have_openssl") {
                continue;
            }
            let mut config = StartupConfig::default();
            definition.apply_startup(&mut config, &definition.default_text()).unwrap();
            assert_eq!(format!("{config:?}"), untouched, "{}", definition.name);
            // And a value other than the default reaches the field.
            let other = match definition.value_type {
                Type::Integer => {
                    if definition.default_text() == "2" {
                        "1"
                    } else {
                        "2"
                    }
                }
                Type::Boolean => {
                    if definition.default_text() == "1" {
                        "OFF"
                    } else {
                        "ON"
                    }
                }
                Type::Enumeration(words) => words.iter().find(|word| **word != definition.default_text()).unwrap(),
                Type::Text => {
                    if definition.default_text() == "engine" {
                        ""
                    } else {
                        "engine"
                    }
                }
            };
            let expected = Setting::parse(definition.value_type, other).unwrap().text();
            definition.apply_startup(&mut config, other).unwrap();
            assert_eq!((field.read)(&config), expected, "{}", definition.name);
            fields += 1;
        }
        assert!(fields >= 20, "{fields} variables are fields of the startup config");
    }

    #[test]
    fn defaults_are_the_owning_crates() {
        let config = StartupConfig::default();
        let default = |name: &str| definition(name).unwrap().default_text();
        assert_eq!(default("max_binlog_size"), binlog::Options::new("").max_binlog_size.to_string());
        assert_eq!(default("sync_binlog"), binlog::Options::new("").sync_binlog.to_string());
        assert_eq!(default("binlog_cache_size"), binlog::Options::new("").binlog_cache_size.to_string());
        assert_eq!(default("server_id"), binlog::Options::new("").server_id.to_string());
        assert_eq!(default("innodb_lock_wait_timeout"), engine::EngineConfig::default().lock_wait_timeout.as_secs().to_string());
        assert_eq!(default("max_connections"), protocol::ServerConfig::default().max_connections.to_string());
        assert_eq!(default("max_allowed_packet"), protocol::ConnectionConfig::default().max_allowed_packet.to_string());
        assert_eq!(default("replica_parallel_workers"), replica::CoordinatorConfig::default().workers.to_string());
        assert_eq!(config.server.max_connections, 151);
        assert_eq!(config.server.connection.max_allowed_packet, 64 << 20);
    }

    #[test]
    fn startup_values_are_refused_with_the_option_and_the_reason() {
        let error = |name: &str, text: &str| started_with(&[(name, text)]).err().unwrap_or_else(|| panic!("{name}={text} accepted"));
        assert_eq!(error("server_id", "4294967296"), "--server_id: '4294967296' is too large");
        assert_eq!(error("binlog_checksum", "MD5"), "--binlog_checksum: 'MD5' is not CRC32 or NONE");
        assert_eq!(error("innodb_flush_log_at_trx_commit", "3"), "--innodb_flush_log_at_trx_commit: '3' is not 0, 1 or 2");
        assert_eq!(error("binlog_storage_engine", "rocks"), "--binlog_storage_engine: 'rocks' is not '' or 'engine'");
        assert_eq!(error("log-bin", "maybe"), "--log_bin: 'maybe' is not ON or OFF");
        let globals = started_with(&[("binlog_storage_engine", "innodb"), ("binlog_cache_size", "1M"), ("unique_checks", "off")]).unwrap();
        assert_eq!(globals.get("binlog_storage_engine"), Some(Value::Bytes(b"engine".to_vec())));
        assert_eq!(globals.get("binlog_cache_size"), Some(Value::Int(1 << 20)));
        assert_eq!(globals.get("unique_checks"), Some(Value::Int(0)));
    }
}
