//! System variables: MySQL's names and defaults, global values shared by
//! every session, session values on top, and what SET may change.

use std::collections::BTreeMap;

use parking_lot::RwLock;

use crate::error::{unknown_variable, wrong_value_for_variable, SqlResult};
use crate::eval::value::{text, to_number, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariableScope {
    /// `@@name`: the session value, else the global one.
    Default,
    Session,
    Global,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Both a global and a session value; SET SESSION and SET GLOBAL.
    Both,
    /// Only a global value (SET GLOBAL).
    Global,
    /// Set at startup, never at run time.
    ReadOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Text,
    Integer,
    /// Stored as 0/1, shown ON/OFF by SHOW VARIABLES.
    Boolean,
    /// One of these words (MySQL's ENUM variables), stored upper-case;
    /// anything else is 1231.
    Enumeration(&'static [&'static str]),
}

pub struct Definition {
    pub name: &'static str,
    pub default: &'static str,
    pub kind: Kind,
    pub value_type: Type,
}

const fn def(name: &'static str, default: &'static str, kind: Kind, value_type: Type) -> Definition {
    Definition { name, default, kind, value_type }
}

pub use binlog_format::constants::SERVER_VERSION;

/// Every variable binlogd knows, sorted by name.
pub const DEFINITIONS: &[Definition] = &[
    def("auto_increment_increment", "1", Kind::Both, Type::Integer),
    def("auto_increment_offset", "1", Kind::Both, Type::Integer),
    def("autocommit", "1", Kind::Both, Type::Boolean),
    def("binlog_cache_size", "32768", Kind::ReadOnly, Type::Integer),
    def("binlog_checksum", "CRC32", Kind::ReadOnly, Type::Text),
    def("binlog_format", "ROW", Kind::ReadOnly, Type::Text),
    def("binlog_large_transaction_optimization_enabled", "1", Kind::Global, Type::Boolean),
    def("binlog_large_transaction_optimization_threshold", "134217728", Kind::Global, Type::Integer),
    def("binlog_row_image", "FULL", Kind::ReadOnly, Type::Text),
    def("binlog_row_metadata", "FULL", Kind::ReadOnly, Type::Text),
    // MariaDB 12.3's startup-only option: '' (classic files) or 'engine'
    // (the binlog rides the redo log); read at start, so SET is refused.
    def("binlog_storage_engine", "", Kind::ReadOnly, Type::Text),
    // binlogd's own (read when a dump starts, `SqlSession::dump_settings`): microseconds a
    // binlog dump rests after sending everything visible before it reads
    // again, so a commit stream reaches its reader in batches (fewer
    // wake-ups and writes per commit; up to this much more replica lag).
    // 0 = send each group as soon as it is visible; at most 1 s.
    def("binlogd_dump_send_delay", "5000", Kind::Global, Type::Integer),
    // binlogd's own (read by START REPLICA [SQL_THREAD]): how the
    // coordinator finds transactions, from the group boundary queue
    // (QUEUE) or by reading back and decoding every event as MySQL's
    // coordinator does (EVENT_SCAN, for `binlogd bench replication`).
    def("binlogd_replica_coordinator_mode", "QUEUE", Kind::Global, Type::Enumeration(&["QUEUE", "EVENT_SCAN"])),
    def("character_set_client", "utf8mb4", Kind::Both, Type::Text),
    def("character_set_connection", "utf8mb4", Kind::Both, Type::Text),
    def("character_set_database", "utf8mb4", Kind::Both, Type::Text),
    def("character_set_results", "utf8mb4", Kind::Both, Type::Text),
    def("character_set_server", "utf8mb4", Kind::Both, Type::Text),
    def("collation_connection", "utf8mb4_general_ci", Kind::Both, Type::Text),
    def("collation_database", "utf8mb4_general_ci", Kind::Both, Type::Text),
    def("collation_server", "utf8mb4_general_ci", Kind::Both, Type::Text),
    def("datadir", "", Kind::ReadOnly, Type::Text),
    def("default_storage_engine", "InnoDB", Kind::Both, Type::Text),
    def("enforce_gtid_consistency", "ON", Kind::ReadOnly, Type::Text),
    def("foreign_key_checks", "1", Kind::Both, Type::Boolean),
    // gtid_executed and gtid_purged are read from the binlog (session.rs).
    def("gtid_executed", "", Kind::ReadOnly, Type::Text),
    def("gtid_mode", "ON", Kind::ReadOnly, Type::Text),
    // Session only: read and set through exec/gtid_next.rs.
    def("gtid_next", "AUTOMATIC", Kind::Both, Type::Text),
    def("gtid_purged", "", Kind::ReadOnly, Type::Text),
    def("hostname", "localhost", Kind::ReadOnly, Type::Text),
    def("init_connect", "", Kind::Global, Type::Text),
    def("innodb_flush_log_at_trx_commit", "1", Kind::ReadOnly, Type::Integer),
    def("innodb_lock_wait_timeout", "50", Kind::Both, Type::Integer),
    def("interactive_timeout", "28800", Kind::Both, Type::Integer),
    def("license", "Apache-2.0", Kind::ReadOnly, Type::Text),
    def("log_bin", "1", Kind::ReadOnly, Type::Boolean),
    def("lower_case_table_names", "0", Kind::ReadOnly, Type::Integer),
    def("max_allowed_packet", "67108864", Kind::Global, Type::Integer),
    def("max_binlog_size", "1073741824", Kind::ReadOnly, Type::Integer),
    def("max_connections", "151", Kind::Global, Type::Integer),
    def("net_buffer_length", "16384", Kind::Both, Type::Integer),
    def("net_read_timeout", "30", Kind::Both, Type::Integer),
    def("net_write_timeout", "60", Kind::Both, Type::Integer),
    def("performance_schema", "0", Kind::ReadOnly, Type::Boolean),
    def("port", "3306", Kind::ReadOnly, Type::Integer),
    // The replica's (read by START REPLICA): seconds without a byte from
    // the source before reconnecting, applier workers, commit order.
    def("replica_net_timeout", "60", Kind::Global, Type::Integer),
    def("replica_parallel_workers", "4", Kind::Global, Type::Integer),
    def("replica_preserve_commit_order", "1", Kind::Global, Type::Boolean),
    def("server_id", "1", Kind::ReadOnly, Type::Integer),
    // Read from the binlog's options (session.rs).
    def("server_uuid", "", Kind::ReadOnly, Type::Text),
    // Startup only: a configured replica starts its threads with the server
    // unless this is ON.
    def("skip_replica_start", "0", Kind::ReadOnly, Type::Boolean),
    // MySQL's: a dump checks each event's CRC32 before sending it (ON)
    // or leaves that to the replica (OFF, the default; the source crate's dump.rs).
    def("source_verify_checksum", "0", Kind::Global, Type::Boolean),
    def(
        "sql_mode",
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
        Kind::Both,
        Type::Text,
    ),
    def("sql_select_limit", "18446744073709551615", Kind::Both, Type::Integer),
    def("sync_binlog", "1", Kind::ReadOnly, Type::Integer),
    def("system_time_zone", "UTC", Kind::ReadOnly, Type::Text),
    def("time_zone", "SYSTEM", Kind::Both, Type::Text),
    def("transaction_isolation", "REPEATABLE-READ", Kind::Both, Type::Text),
    def("tx_isolation", "REPEATABLE-READ", Kind::Both, Type::Text),
    def("unique_checks", "1", Kind::Both, Type::Boolean),
    def("version", SERVER_VERSION, Kind::ReadOnly, Type::Text),
    def("version_comment", "binlogd", Kind::ReadOnly, Type::Text),
    def("version_compile_os", "Linux", Kind::ReadOnly, Type::Text),
    def("wait_timeout", "28800", Kind::Both, Type::Integer),
];

pub fn definition(name: &str) -> Option<&'static Definition> {
    let name = name.to_ascii_lowercase().replace('-', "_");
    DEFINITIONS.iter().find(|definition| definition.name == name)
}

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
    values: RwLock<BTreeMap<&'static str, Value>>,
}

impl GlobalVariables {
    /// Defaults, with `overrides` (from the command line and option file)
    /// applied; an unknown name or a bad value is an error.
    pub fn new(overrides: &[(String, String)]) -> SqlResult<GlobalVariables> {
        let mut values = BTreeMap::new();
        for definition in DEFINITIONS {
            let value = normalize(definition, &Value::Bytes(definition.default.as_bytes().to_vec()))?;
            values.insert(definition.name, value);
        }
        for (name, value) in overrides {
            let definition = definition(name).ok_or_else(|| unknown_variable(name))?;
            values.insert(definition.name, normalize(definition, &Value::Bytes(value.clone().into_bytes()))?);
        }
        Ok(GlobalVariables { values: RwLock::new(values) })
    }

    pub fn get(&self, name: &str) -> Option<Value> {
        let definition = definition(name)?;
        self.values.read().get(definition.name).cloned()
    }

    pub fn set(&self, definition: &'static Definition, value: Value) {
        self.values.write().insert(definition.name, value);
    }

    pub fn snapshot(&self) -> BTreeMap<&'static str, Value> {
        self.values.read().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_sorted_and_defaults_valid() {
        assert!(DEFINITIONS.windows(2).all(|pair| pair[0].name < pair[1].name));
        let globals = GlobalVariables::new(&[("max-connections".into(), "20".into())]).unwrap();
        assert_eq!(globals.get("max_connections"), Some(Value::Int(20)));
        assert_eq!(globals.get("autocommit"), Some(Value::Int(1)));
        assert!(GlobalVariables::new(&[("no_such".into(), "1".into())]).is_err());
    }

    #[test]
    fn enumerations_take_their_words_in_any_case_and_nothing_else() {
        let globals = GlobalVariables::new(&[("binlogd-replica-coordinator-mode".into(), "event_scan".into())]).unwrap();
        assert_eq!(globals.get("binlogd_replica_coordinator_mode"), Some(Value::Bytes(b"EVENT_SCAN".to_vec())));
        let mode = definition("binlogd_replica_coordinator_mode").unwrap();
        assert_eq!(normalize(mode, &Value::Bytes(b"Queue".to_vec())), Ok(Value::Bytes(b"QUEUE".to_vec())));
        let refused = normalize(mode, &Value::Bytes(b"FAST".to_vec())).unwrap_err();
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (1231, "Variable 'binlogd_replica_coordinator_mode' can't be set to the value of 'FAST'")
        );
        assert!(GlobalVariables::new(&[("binlogd_replica_coordinator_mode".into(), "1".into())]).is_err());
    }
}
