//! The GTID set functions: GTID_SUBSET, GTID_SUBTRACT and
//! WAIT_FOR_EXECUTED_GTID_SET, over MySQL's text form with tags
//! (`uuid:1-5:tag:1-2,uuid2:3`). A malformed set is 1772, as in MySQL.

use binlog_format::GtidSet;
use protocol::MysqlError;

use crate::error::SqlResult;
use crate::eval::expr::Environment;
use crate::eval::value::{text, to_number, NullCheck, Number, Value};
use crate::variables::VariableScope;

/// How often WAIT_FOR_EXECUTED_GTID_SET looks at `gtid_executed` and for KILL.
const WAIT_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Evaluates `name` if it is one of this module's functions.
pub fn call(name: &str, values: &[Value], environment: &dyn Environment) -> Option<SqlResult<Value>> {
    let result = match (name, values) {
        ("GTID_SUBSET", [a, b]) => both(a, b, |a, b| Value::Int(i64::from(a.is_subset_of(&b)))),
        ("GTID_SUBTRACT", [a, b]) => both(a, b, |a, b| Value::Bytes(crate::exec::gtid_next::gtid_set_text(&a.subtract(&b)).into_bytes())),
        ("WAIT_FOR_EXECUTED_GTID_SET", [set]) => wait_for_executed(set, None, environment),
        ("WAIT_FOR_EXECUTED_GTID_SET", [set, timeout]) => wait_for_executed(set, Some(timeout), environment),
        _ => return None,
    };
    Some(result)
}

/// 1772 ER_MALFORMED_GTID_SET_SPECIFICATION.
fn malformed(shown: &str) -> MysqlError {
    let shown: String = shown.chars().take(200).collect();
    MysqlError::new(1772, "HY000", format!("Malformed GTID set specification '{shown}'."))
}

fn parse(value: &Value) -> SqlResult<GtidSet> {
    let shown = text(value);
    let joined: String = shown.split_whitespace().collect();
    joined.parse().map_err(|_| malformed(&shown))
}

/// NULL when either argument is NULL, as MySQL's GTID functions give.
fn both(a: &Value, b: &Value, combine: impl FnOnce(GtidSet, GtidSet) -> Value) -> SqlResult<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    Ok(combine(parse(a)?, parse(b)?))
}

/// 0 once every GTID of `set` is executed, 1 when `timeout` seconds pass
/// first (no timeout, or 0: wait as long as it takes); KILL QUERY ends the
/// wait with 1317.
fn wait_for_executed(set: &Value, timeout: Option<&Value>, environment: &dyn Environment) -> SqlResult<Value> {
    if set.is_null() {
        return Ok(Value::Null);
    }
    let wanted = parse(set)?;
    let seconds = timeout.and_then(to_number).map_or(0.0, Number::as_f64);
    if seconds < 0.0 {
        return Err(MysqlError::new(1210, "HY000", "Incorrect arguments to WAIT_FOR_EXECUTED_GTID_SET."));
    }
    let deadline = (seconds > 0.0).then(|| std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds.min(365.0 * 86400.0)));
    loop {
        let executed = parse(&environment.system_variable("gtid_executed", VariableScope::Global)?)?;
        if wanted.is_subset_of(&executed) {
            return Ok(Value::Int(0));
        }
        if environment.is_query_killed() {
            return Err(MysqlError::query_interrupted());
        }
        let now = std::time::Instant::now();
        if deadline.is_some_and(|deadline| now >= deadline) {
            return Ok(Value::Int(1));
        }
        std::thread::sleep(deadline.map_or(WAIT_POLL, |deadline| WAIT_POLL.min(deadline - now)));
    }
}
