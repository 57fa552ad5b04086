//! Administrative statements: FLUSH BINARY LOGS, PURGE BINARY LOGS TO /
//! BEFORE, RESET BINARY LOGS AND GTIDS (RESET MASTER) and KILL, with
//! mysqld's errors and warnings.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use binlog::purge::PurgeReport;
use binlog::BinlogError;
use database::DatabaseError;
use protocol::{KillScope, MysqlError, Registry};
use time::{Date, Month};

use crate::access::authorize::Principal;
use crate::access::privileges::Privilege;
use crate::error::{database_error, SqlResult};
use crate::parse::FlushLogs;
use crate::session::{Context, Outcome, Transactions, Warning};

/// 1373 ER_UNKNOWN_TARGET_BINLOG.
fn unknown_target_log() -> MysqlError {
    MysqlError::new(1373, "HY000", "Target log not found in binlog index")
}

/// 1192 ER_LOCK_OR_ACTIVE_TRANSACTION.
fn active_transaction() -> MysqlError {
    MysqlError::new(1192, "HY000", "Can't execute the given command because you have active locked tables or an active transaction")
}

/// 1378 ER_LOG_IN_USE.
fn log_in_use() -> MysqlError {
    MysqlError::new(1378, "HY000", "A purgeable log is in use, will not purge")
}

/// `FLUSH BINARY LOGS`, through the database: the closed file holds only
/// transactions committed in the engine.
/// FLUSH ... LOGS: the redo log made durable first, so the binlog file
/// the rotation closes holds nothing redo could still lose.
pub fn flush_logs(flush: FlushLogs, context: &Context<'_>) -> SqlResult<Outcome> {
    if flush.engine_logs {
        context.db().redo().flush().map_err(|error| database_error(DatabaseError::Redo(error)))?;
    }
    if flush.binary_logs {
        context.db().rotate_binlog().map_err(database_error)?;
    }
    Ok(Outcome::ok())
}

pub fn purge_to(name: &str, context: &Context<'_>) -> SqlResult<Outcome> {
    let requested = context.db().binlog_status().file_names().iter().position(|listed| listed == name).ok_or_else(unknown_target_log)?;
    let report = context.db().purge_binary_logs(|binlog| binlog.purge_to(name)).map_err(purge_error)?;
    Ok(purged(context, requested, &report))
}

pub fn purge_before(text: &str, context: &Context<'_>) -> SqlResult<Outcome> {
    let time = parse_datetime(text).ok_or_else(|| MysqlError::new(1210, "HY000", "Incorrect arguments to PURGE LOGS BEFORE"))?;
    let binlog = context.db().binlog_status();
    let names = binlog.file_names();
    let dir = binlog.options().dir.clone();
    let older = |name: &String| std::fs::metadata(dir.join(name)).and_then(|m| m.modified()).is_ok_and(|modified| modified < time);
    let requested = names.iter().take_while(|name| older(name)).count();
    let report = context.db().purge_binary_logs(|binlog| binlog.purge_before(time)).map_err(purge_error)?;
    let mut outcome = purged(context, requested.min(names.len().saturating_sub(1)), &report);
    // Every file is older, the active one too: mysqld says it kept it.
    if requested == names.len() && report.stopped_by_reader.is_none() && report.stopped_by_in_flight.is_none() {
        if let Some(active) = names.last() {
            outcome.warnings.push(Warning {
                level: "Warning",
                code: 1868,
                message: format!("file {active} was not purged because it is the active log file."),
            });
        }
    }
    Ok(outcome)
}

fn purge_error(error: DatabaseError) -> MysqlError {
    match error {
        DatabaseError::Binlog(BinlogError::LogNotFound) => unknown_target_log(),
        other => database_error(other),
    }
}

/// OK, with ER_WARN_PURGE_LOG_IN_USE (1867) when a reader or a commit
/// still needed a file.
fn purged(context: &Context<'_>, requested: usize, report: &PurgeReport) -> Outcome {
    let mut outcome = Outcome::ok();
    let stopped = report.stopped_by_reader.as_ref().map(|name| (name, context.db().binlog_status().readers_needing(name)));
    let stopped = stopped.or(report.stopped_by_in_flight.as_ref().map(|name| (name, 1)));
    if let Some((name, threads)) = stopped {
        outcome.warnings.push(Warning {
            level: "Warning",
            code: 1867,
            message: format!(
                "file {name} was not purged because it is being read by {threads} thread(s), purged only {} out of {requested} files.",
                report.removed.len()
            ),
        });
    }
    outcome
}

/// `RESET BINARY LOGS AND GTIDS`: refused inside a transaction, as mysqld
/// does; the database holds off every commit while it runs.
pub fn reset(context: &Context<'_>, transaction: &Transactions<'_>) -> SqlResult<Outcome> {
    if transaction.trx.is_some() || *transaction.explicit {
        return Err(active_transaction());
    }
    context.db().reset_binary_logs_and_gtids().map_err(|error| match error {
        DatabaseError::Binlog(BinlogError::Invalid(_)) => log_in_use(),
        other => database_error(other),
    })?;
    Ok(Outcome::ok())
}

/// `KILL [CONNECTION | QUERY] id`: 1094 for an unknown id. Killing the
/// own connection ends it after this statement (the socket is shut).
pub fn kill(id: u64, query_only: bool, context: &Context<'_>) -> SqlResult<Outcome> {
    let id = u32::try_from(id).map_err(|_| MysqlError::no_such_thread(id))?;
    let scope = if query_only { KillScope::Query } else { KillScope::Connection };
    kill_as(&context.principal(), &context.env.info.user, context.env.info.handle.registry(), id, scope)?;
    if id == context.env.info.connection_id {
        return Err(MysqlError::query_interrupted());
    }
    Ok(Outcome::ok())
}

/// KILL and COM_PROCESS_KILL: a user may kill their own connections; others'
/// need SUPER or CONNECTION_ADMIN, else 1095 as mysqld answers.
pub fn kill_as(principal: &Principal<'_>, user: &str, registry: &Registry, id: u32, scope: KillScope) -> SqlResult<()> {
    let owner = registry.processes().into_iter().find(|process| process.id == id).map(|process| process.user);
    let Some(owner) = owner else { return Err(MysqlError::no_such_thread(u64::from(id))) };
    if owner != user && !principal.has(Privilege::Super) && !principal.has(Privilege::ConnectionAdmin) {
        return Err(MysqlError::new(1095, "HY000", format!("You are not owner of thread {id}")));
    }
    registry.kill(id, scope)
}

/// `'YYYY-MM-DD[ hh:mm:ss[.ffffff]]'` in the session time zone, which is
/// UTC (`system_time_zone`).
fn parse_datetime(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let (date, time) = text.split_once([' ', 'T']).unwrap_or((text, "00:00:00"));
    let mut date_parts = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (date_parts.next()??, date_parts.next()??, date_parts.next()??);
    let time = time.split('.').next()?;
    let mut time_parts = time.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (hour, minute, second) = (time_parts.next()??, time_parts.next().unwrap_or(Some(0))?, time_parts.next().unwrap_or(Some(0))?);
    // DATETIME's years; also keeps the day arithmetic below from
    // overflowing on an absurd year.
    if !(0..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || !(0..24).contains(&hour)
        || !(0..60).contains(&minute)
        || !(0..60).contains(&second)
    {
        return None;
    }
    // A day past the month's end counts on into the next month.
    let first_of_month = Date::from_calendar_date(i32::try_from(year).ok()?, Month::try_from(month as u8).ok()?, 1).ok()?;
    let date = first_of_month.checked_add(time::Duration::days(day - 1))?;
    let seconds = date.midnight().assume_utc().unix_timestamp() + hour * 3600 + minute * 60 + second;
    if seconds < 0 {
        return Some(UNIX_EPOCH);
    }
    UNIX_EPOCH.checked_add(Duration::from_secs(seconds as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_in_utc() {
        let at = |text: &str| parse_datetime(text).map(|t| t.duration_since(UNIX_EPOCH).unwrap().as_secs());
        assert_eq!(at("1970-01-01 00:00:00"), Some(0));
        assert_eq!(at("2024-02-29 12:34:56"), Some(1_709_210_096));
        assert_eq!(at("2000-03-01"), Some(951_868_800));
        assert_eq!(at("2026-11-30 01:02:03.5"), Some(1_796_000_523));
        assert_eq!(at("2024-13-01 00:00:00"), None);
        assert_eq!(at("yesterday"), None);
        assert_eq!(at("9999-12-31 23:59:59"), Some(253_402_300_799));
        assert_eq!(at("10000-01-01 00:00:00"), None);
        assert_eq!(at("99999999999999999-01-01"), None);
        assert_eq!(at("-99999999999999999-01-01"), None);
    }
}
