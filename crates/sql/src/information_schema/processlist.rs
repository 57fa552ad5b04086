//! INFORMATION_SCHEMA.PROCESSLIST and SHOW PROCESSLIST: the live
//! connections an account may see, with MariaDB's per-connection memory
//! figure (MEMORY_USED, MAX_MEMORY_USED) beside MySQL's columns.

use protocol::ProcessInfo;

use crate::access::privileges::Privilege;
use crate::eval::value::Value;
use crate::session::Context;

/// The connections `context`'s account may see: every one with PROCESS,
/// else its own user's, as in MySQL.
pub fn visible_processes(context: &Context<'_>) -> Vec<ProcessInfo> {
    let everyone = context.principal().has(Privilege::Process);
    let user = &context.env.info.user;
    context.env.info.handle.registry().processes().into_iter().filter(|process| everyone || process.user == *user).collect()
}

fn text(value: String) -> Value {
    Value::Bytes(value.into_bytes())
}

fn number(value: usize) -> Value {
    Value::UInt(u64::try_from(value).unwrap_or(u64::MAX))
}

/// One row per visible connection, in [`super::tables::PROCESSLIST`]'s
/// column order.
pub fn rows(context: &Context<'_>) -> Vec<Vec<Value>> {
    visible_processes(context)
        .into_iter()
        .map(|process| {
            vec![
                Value::UInt(u64::from(process.id)),
                text(process.user),
                text(process.host),
                process.db.map_or(Value::Null, text),
                text(process.command),
                Value::UInt(process.time_secs),
                text(process.state),
                process.info.map_or(Value::Null, text),
                number(process.memory_used_bytes),
                number(process.memory_used_bytes_max),
            ]
        })
        .collect()
}
