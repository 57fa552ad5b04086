//! Semi-synchronous replication's variables as the server reads them: the
//! source's live in the `source` crate's [`SemiSyncSource`] (set from here
//! at startup and by SET GLOBAL), the replica's are read when its receiver
//! starts. Each has MySQL 8.4's name and the `master`/`slave` name MariaDB
//! and older MySQL use; setting either sets both.

use binlog::AckWaitPoint;
use source::SemiSyncSource;

use super::{definition, GlobalVariables};
use crate::eval::value::{text, Value};

/// MySQL 8.4's names and their older spellings.
pub const ALIASES: &[(&str, &str)] = &[
    ("rpl_semi_sync_source_enabled", "rpl_semi_sync_master_enabled"),
    ("rpl_semi_sync_source_timeout", "rpl_semi_sync_master_timeout"),
    ("rpl_semi_sync_source_wait_for_replica_count", "rpl_semi_sync_master_wait_for_slave_count"),
    ("rpl_semi_sync_source_wait_point", "rpl_semi_sync_master_wait_point"),
    ("rpl_semi_sync_replica_enabled", "rpl_semi_sync_slave_enabled"),
];

/// The other name of a semi-sync variable, when `name` is one.
pub fn alias_of(name: &str) -> Option<&'static str> {
    ALIASES.iter().find_map(|&(new, old)| match name {
        _ if name == new => Some(old),
        _ if name == old => Some(new),
        _ => None,
    })
}

/// Sets `name`'s other spelling to `value` too.
pub fn set_alias(globals: &GlobalVariables, name: &str, value: Value) {
    if let Some(definition) = alias_of(name).and_then(definition) {
        globals.set(definition, value);
    }
}

/// At startup, where a configuration may have given either name: the
/// one given (not at its default) wins, MySQL 8.4's when both were.
pub fn reconcile_aliases(globals: &GlobalVariables) {
    let given = |name: &str| {
        let definition = definition(name)?;
        let value = globals.get(name)?;
        (text(&value) != definition.default_text()).then_some(value)
    };
    for &(new, old) in ALIASES {
        let value = given(new).or_else(|| given(old));
        if let Some(value) = value {
            for name in [new, old] {
                if let Some(definition) = definition(name) {
                    globals.set(definition, value.clone());
                }
            }
        }
    }
}

fn number(value: Option<Value>) -> Option<u64> {
    match value? {
        Value::Int(number) => Some(number.max(0) as u64),
        Value::UInt(number) => Some(number),
        other => text(&other).parse().ok(),
    }
}

/// Hands the source's global settings to `source`.
pub fn publish_source_settings(source: &SemiSyncSource, globals: &GlobalVariables) {
    if let Some(timeout_ms) = number(globals.get("rpl_semi_sync_source_timeout")) {
        source.set_timeout(std::time::Duration::from_millis(timeout_ms));
    }
    if let Some(count) = number(globals.get("rpl_semi_sync_source_wait_for_replica_count")) {
        source.set_wait_for_replica_count(count.min(u64::from(u32::MAX)) as u32);
    }
    let point = globals.get("rpl_semi_sync_source_wait_point").map(|value| text(&value).to_ascii_uppercase());
    source.set_wait_point(if point.as_deref() == Some("AFTER_COMMIT") { AckWaitPoint::AfterCommit } else { AckWaitPoint::AfterSync });
    source.set_enabled(globals.get("rpl_semi_sync_source_enabled") == Some(Value::Int(1)));
}

/// `rpl_semi_sync_replica_enabled`: whether the receiver asks its source
/// for semi-synchronous replication when it connects.
pub fn replica_enabled(globals: &GlobalVariables) -> bool {
    globals.get("rpl_semi_sync_replica_enabled") == Some(Value::Int(1))
}
