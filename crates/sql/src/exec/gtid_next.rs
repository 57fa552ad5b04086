//! `SET gtid_next`: the next transaction's GTID, as MySQL's replica
//! applier and `mysqlbinlog | mysql` use it.
//!
//! States (MySQL's `gtid_next` types):
//!
//! | state       | set by                                  | next transaction |
//! |-------------|-----------------------------------------|------------------|
//! | `Automatic` | default, `SET gtid_next = 'AUTOMATIC'`  | the server's next GTID |
//! | `Owned`     | `SET gtid_next = 'uuid:N'` or `'uuid:tag:N'`, N not executed | gets uuid:N; the session owns it from the SET on (a second session setting it waits) |
//! | `Executed`  | `SET gtid_next = 'uuid:N'`, N executed  | skipped: its writes and DDL return OK and change nothing |
//! | `Undefined` | the COMMIT/ROLLBACK of either           | refused with 1837 until gtid_next is set again |
//!
//! SELECT, SHOW, SET, BEGIN, COMMIT and ROLLBACK run in every state (MySQL
//! lets them through its pre-statement check); a COMMIT in the `Owned`
//! state with nothing written logs an empty transaction with the GTID.

use binlog::{OwnedGtid, Ownership};
use binlog_format::{Gtid, Tag, Tsid, Uuid};
use protocol::MysqlError;
use sqlparser::ast::Statement as Ast;

use crate::access::privileges::Privilege;
use crate::error::SqlResult;
use crate::eval::expr::Environment as _;
use crate::eval::value::Value;
use crate::parse::Statement;
use crate::session::Context;

#[derive(Default)]
pub enum GtidNext {
    #[default]
    Automatic,
    Owned(OwnedGtid),
    Executed(Gtid),
    Undefined(Gtid),
}

impl GtidNext {
    /// `@@SESSION.gtid_next`.
    pub fn text(&self) -> String {
        match self {
            GtidNext::Automatic => "AUTOMATIC".into(),
            GtidNext::Owned(owned) => owned.gtid().to_string(),
            GtidNext::Executed(gtid) | GtidNext::Undefined(gtid) => gtid.to_string(),
        }
    }

    /// The transaction that had the GTID ended (commit or rollback).
    pub fn finish(&mut self) {
        match self {
            GtidNext::Owned(owned) => *self = GtidNext::Undefined(owned.gtid()),
            GtidNext::Executed(gtid) => *self = GtidNext::Undefined(*gtid),
            GtidNext::Automatic | GtidNext::Undefined(_) => {}
        }
    }

    fn is_assigned(&self) -> bool {
        matches!(self, GtidNext::Owned(_) | GtidNext::Executed(_))
    }
}

/// What the pre-statement check decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Gate {
    Execute,
    /// The transaction's GTID is executed: the statement does nothing.
    Skip,
}

#[derive(Debug, PartialEq, Eq)]
enum Class {
    /// Runs whatever gtid_next is.
    Control,
    Begin,
    /// Row changes.
    Write,
    /// Commits implicitly and is logged as its own transaction.
    Ddl,
    Other,
}

fn class(statement: &Statement) -> Class {
    match statement {
        Statement::Begin | Statement::StartTransaction { .. } => Class::Begin,
        Statement::SetTransaction { .. } | Statement::UnlockTables | Statement::FlushTables | Statement::FlushTablesWithReadLock => {
            Class::Control
        }
        Statement::LockTables(_) => Class::Control,
        Statement::Savepoint(_) | Statement::RollbackToSavepoint(_) | Statement::ReleaseSavepoint(_) => Class::Control,
        // Replica statements change no data and log nothing.
        Statement::Commit
        | Statement::Rollback
        | Statement::Nothing
        | Statement::SetNames { .. }
        | Statement::SetCharacterSet(_)
        | Statement::Use(_)
        | Statement::Show(_)
        | Statement::Kill { .. }
        | Statement::Replica(_) => Class::Control,
        Statement::CreateDatabase { .. }
        | Statement::AlterDatabase { .. }
        | Statement::DropDatabase { .. }
        | Statement::Truncate { .. }
        | Statement::AlterTable(_)
        | Statement::RenameTable(_) => Class::Ddl,
        Statement::Binlog(_) => Class::Write,
        Statement::Flush(_)
        | Statement::PurgeBinaryLogsTo(_)
        | Statement::PurgeBinaryLogsBefore(_)
        | Statement::ResetBinaryLogsAndGtids
        | Statement::Account(_) => Class::Other,
        Statement::PartitionedCreateTable { .. } => Class::Ddl,
        Statement::Ast(ast) => match ast.as_ref() {
            Ast::StartTransaction { .. } => Class::Begin,
            Ast::Query(_) | Ast::Set(_) | Ast::Commit { .. } | Ast::Rollback { .. } => Class::Control,
            Ast::Insert(_) | Ast::Update(_) | Ast::Delete(_) => Class::Write,
            Ast::CreateTable(_) | Ast::CreateIndex(_) | Ast::Drop { .. } => Class::Ddl,
            _ => Class::Other,
        },
    }
}

/// MySQL's `gtid_pre_statement_checks`. `in_transaction`: BEGIN was
/// issued (or autocommit is off and a transaction is open);
/// `statement_scoped`: the statement's transaction ends with it.
pub fn gate(statement: &Statement, context: &Context<'_>, in_transaction: bool, statement_scoped: bool) -> SqlResult<Gate> {
    let mut next = context.env.gtid_next.lock();
    let class = class(statement);
    let implicit_commit = matches!(class, Class::Begin | Class::Ddl);
    if implicit_commit && in_transaction && next.is_assigned() {
        return Err(MysqlError::new(
            1778,
            "HY000",
            "Cannot execute statements with implicit commit inside a transaction when @@SESSION.GTID_NEXT == 'UUID:NUMBER'.",
        ));
    }
    match (&*next, class) {
        (_, Class::Control | Class::Begin) => Ok(Gate::Execute),
        (GtidNext::Undefined(gtid), _) => Err(undefined_gtid_next(gtid)),
        (GtidNext::Executed(_), Class::Write) => {
            if statement_scoped {
                next.finish();
            }
            Ok(Gate::Skip)
        }
        (GtidNext::Executed(_), Class::Ddl) => {
            next.finish();
            Ok(Gate::Skip)
        }
        _ => Ok(Gate::Execute),
    }
}

/// 1837 ER_GTID_NEXT_TYPE_UNDEFINED_GTID.
pub fn undefined_gtid_next(gtid: &Gtid) -> MysqlError {
    MysqlError::new(
        1837,
        "HY000",
        format!(
            "When @@SESSION.GTID_NEXT is set to a GTID, you must explicitly set it to a different value after a COMMIT or ROLLBACK. Please check GTID_NEXT variable manual page for detailed explanation. Current @@SESSION.GTID_NEXT is '{gtid}'."
        ),
    )
}

/// `SET [SESSION] gtid_next = value`. `in_transaction`: a transaction is
/// open (BEGIN, or rows written with autocommit off).
pub fn set(value: &Value, context: &Context<'_>, in_transaction: bool) -> SqlResult<()> {
    context.require_any(&[Privilege::Super, Privilege::SystemVariablesAdmin])?;
    let wanted = parse(value)?;
    let mut next = context.env.gtid_next.lock();
    if in_transaction {
        return Err(MysqlError::new(1768, "HY000", "The system variable @@SESSION.GTID_NEXT cannot change inside a transaction."));
    }
    if let GtidNext::Owned(owned) = &*next {
        return Err(MysqlError::new(
            1790,
            "HY000",
            format!(
                "@@SESSION.GTID_NEXT cannot be changed by a client that owns a GTID. The client owns {}. Ownership is released on COMMIT or ROLLBACK.",
                owned.gtid()
            ),
        ));
    }
    *next = match wanted {
        None => GtidNext::Automatic,
        // Waits while another session owns it, as MySQL does; KILL QUERY
        // ends the wait with 1317.
        Some(gtid) => match context.db().acquire_gtid_unless(gtid, &|| context.env.is_query_killed()) {
            Some(Ownership::Owned(owned)) => GtidNext::Owned(owned),
            Some(Ownership::AlreadyExecuted) => GtidNext::Executed(gtid),
            None => return Err(MysqlError::query_interrupted()),
        },
    };
    Ok(())
}

/// `None` for AUTOMATIC, the GTID for `uuid:N`; MySQL's errors otherwise.
fn parse(value: &Value) -> SqlResult<Option<Gtid>> {
    let wrong_value = |shown: &str| MysqlError::new(1231, "42000", format!("Variable 'gtid_next' can't be set to the value of '{shown}'"));
    let text = match value {
        Value::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::Null => return Err(wrong_value("NULL")),
        _ => return Err(MysqlError::new(1232, "42000", "Incorrect argument type to variable 'gtid_next'")),
    };
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("AUTOMATIC") {
        return Ok(None);
    }
    if trimmed.eq_ignore_ascii_case("ANONYMOUS") {
        return Err(MysqlError::new(1782, "HY000", "@@SESSION.GTID_NEXT cannot be set to ANONYMOUS when @@GLOBAL.GTID_MODE = ON."));
    }
    // `uuid:N`, or `uuid:tag:N` (MySQL 8.3+; the tag folds to lower case).
    let pieces: Vec<&str> = trimmed.split(':').map(str::trim).collect();
    let (uuid, tag, gno) = match pieces[..] {
        [uuid, gno] => (uuid, None, gno),
        [uuid, tag, gno] => (uuid, Some(tag), gno),
        _ => return Err(wrong_value(&text)),
    };
    let uuid: Uuid = uuid.parse().map_err(|_| wrong_value(&text))?;
    let tag: Tag = tag.map_or(Ok(Tag::NONE), str::parse).map_err(|_| wrong_value(&text))?;
    let gno: u64 = gno.parse().map_err(|_| wrong_value(&text))?;
    // MySQL's GNO range: 1 ..= 2^63 - 2.
    if gno == 0 || gno >= (1 << 63) - 1 {
        return Err(wrong_value(&text));
    }
    Ok(Some(Gtid::tagged(Tsid { uuid, tag }, gno)))
}

/// MySQL's text for a GTID set in `@@gtid_executed` and SHOW BINARY LOG
/// STATUS: UUIDs sorted, separated by a comma and a newline.
pub fn gtid_set_text(set: &binlog_format::GtidSet) -> String {
    set.to_string().replace(',', ",\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_mysql_accepts_them() {
        let text = |s: &str| Value::Bytes(s.as_bytes().to_vec());
        assert_eq!(parse(&text("automatic")).unwrap(), None);
        let gtid = parse(&text("3E11FA47-71CA-11E1-9E33-C80AA9429562:23")).unwrap().unwrap();
        assert_eq!(gtid.to_string(), "3e11fa47-71ca-11e1-9e33-c80aa9429562:23");
        let tagged = parse(&text("3E11FA47-71CA-11E1-9E33-C80AA9429562: Domain_1 :23")).unwrap().unwrap();
        assert_eq!(tagged.to_string(), "3e11fa47-71ca-11e1-9e33-c80aa9429562:domain_1:23");
        for bad in [
            "3e11fa47-71ca-11e1-9e33-c80aa9429562",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:0",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:1tag:1",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:a-b:1",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:tag",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:t:u:1",
            "nope:1",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:x",
        ] {
            let error = parse(&text(bad)).unwrap_err();
            assert_eq!(error.code, 1231, "{bad}");
            assert_eq!(error.message, format!("Variable 'gtid_next' can't be set to the value of '{bad}'"));
        }
        assert_eq!(parse(&Value::Int(5)).unwrap_err().code, 1232);
        assert_eq!(parse(&text("ANONYMOUS")).unwrap_err().code, 1782);
    }

    #[test]
    fn sets_print_with_a_newline_after_each_comma() {
        let set: binlog_format::GtidSet =
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,0a0a0a0a-0a0a-4a0a-8a0a-0a0a0a0a0a0a:7".parse().unwrap();
        assert_eq!(gtid_set_text(&set), "0a0a0a0a-0a0a-4a0a-8a0a-0a0a0a0a0a0a:7,\n3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5");
    }
}
