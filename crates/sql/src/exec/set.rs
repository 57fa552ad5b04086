//! SET [GLOBAL | SESSION] name = value, ... for system variables.
//! SET GLOBAL of the large-transaction variables and of binlog_checksum
//! reaches the binlog at once.

use sqlparser::ast::{ContextModifier, Expr, Ident, ObjectName, Set};

use crate::access::privileges::Privilege;
use crate::error::{not_supported, unknown_variable, wrong_value_for_variable, SqlResult};
use crate::eval::expr::{system_variable_reference, Columns};
use crate::eval::value::{text, Value};
use crate::session::{Context, Outcome, Transactions};
use crate::variables::row_logging::{publish_global_row_logging, RESTRICTED_SESSION_VARIABLES, ROW_LOGGING_VARIABLES};
use crate::variables::{definition, normalize, replay, Kind, VariableScope};

pub fn set(set: &Set, context: &Context<'_>, transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let assignments: Vec<(Option<ContextModifier>, &ObjectName, &Expr)> = match set {
        Set::SingleAssignment { scope, hivevar: false, variable, values } if values.len() == 1 => {
            vec![(*scope, variable, &values[0])]
        }
        Set::MultipleAssignments { assignments } => assignments.iter().map(|a| (a.scope, &a.name, &a.value)).collect(),
        other => return Err(not_supported(crate::eval::expr::first_words(&other.to_string()))),
    };
    // SET GLOBAL needs SUPER or SYSTEM_VARIABLES_ADMIN (MySQL 8.4); checked
    // before any assignment applies, so a refused statement changes nothing.
    if assignments.iter().any(|(modifier, name, _)| sets_global(*modifier, name)) {
        context.require_any(&[Privilege::Super, Privilege::SystemVariablesAdmin])?;
    }
    let mut outcome = Outcome::ok();
    let mut row_logging_changed = false;
    for (modifier, name, value) in assignments {
        let parts: Vec<Ident> = name.0.iter().filter_map(|part| part.as_ident().cloned()).collect();
        let (name, scope) = match system_variable_reference(&parts) {
            Some(reference) => reference,
            None if parts.len() == 1 && parts[0].value.starts_with('@') => {
                // `SET @name = expr`: a user variable of this session.
                let no_columns = Columns::default();
                let value = context.constants(&no_columns).eval(value)?;
                outcome.set_user_variables.push((parts[0].value[1..].to_ascii_lowercase(), value));
                continue;
            }
            None if parts.len() == 1 => {
                let scope = match modifier {
                    Some(ContextModifier::Global) => VariableScope::Global,
                    _ => VariableScope::Session,
                };
                (parts[0].value.to_ascii_lowercase(), scope)
            }
            None => return Err(unknown_variable(&name.to_string())),
        };
        let scope = if scope == VariableScope::Default { VariableScope::Session } else { scope };
        let definition = definition(&name).ok_or_else(|| unknown_variable(&name))?;
        // `SET x = ON`: a bare word is the value's text, not a column.
        let value = match value {
            // `SET SESSION x = DEFAULT` takes the global value, `SET GLOBAL
            // x = DEFAULT` the compiled-in one.
            Expr::Identifier(ident) if ident.quote_style.is_none() && ident.value.eq_ignore_ascii_case("DEFAULT") => {
                match (scope, definition.kind) {
                    (VariableScope::Session, Kind::Both) => context.shared.globals.get(definition.name).unwrap_or(Value::Null),
                    _ => Value::Bytes(definition.default_text().into_bytes()),
                }
            }
            Expr::Identifier(ident) if !ident.value.starts_with('@') => Value::Bytes(ident.value.clone().into_bytes()),
            other => {
                let no_columns = Columns::default();
                context.constants(&no_columns).eval(other)?
            }
        };
        // Checked before the value, as MySQL does.
        if !definition.dynamic {
            return Err(protocol::MysqlError::new(1238, "HY000", format!("Variable '{}' is a read only variable", definition.name)));
        }
        match (definition.kind, scope) {
            (Kind::Session, VariableScope::Global) => {
                return Err(protocol::MysqlError::new(
                    1228,
                    "HY000",
                    format!("Variable '{}' is a SESSION variable and can't be used with SET GLOBAL", definition.name),
                ))
            }
            (Kind::Global, VariableScope::Session) => {
                return Err(protocol::MysqlError::new(
                    1229,
                    "HY000",
                    format!("Variable '{}' is a GLOBAL variable and should be set with SET GLOBAL", definition.name),
                ))
            }
            _ => {}
        }
        if definition.name == "gtid_next" {
            crate::exec::gtid_next::set(&value, context, transaction.in_transaction())?;
            continue;
        }
        // MySQL 8.4 restricts the session values of the compression settings too.
        let restricted_compression =
            matches!(definition.name, "binlog_transaction_compression" | "binlog_transaction_compression_level_zstd");
        if scope != VariableScope::Global && (RESTRICTED_SESSION_VARIABLES.contains(&definition.name) || restricted_compression) {
            require_session_variables_admin(context)?;
        }
        if scope == VariableScope::Session && replay::needs_administrator(definition.name) {
            context.require_any(&[Privilege::Super, Privilege::SystemVariablesAdmin])?;
        }
        if definition.name == "timestamp" {
            let clock = replay::session_timestamp(&value)?;
            outcome.set_variables.push((definition.name, clock.unwrap_or(Value::Int(0))));
            continue;
        }
        let value = replay::from_printed_form(definition.name, value)?;
        let value = crate::charsets::checked_variable_value(definition.name, value)?;
        let value = match value {
            // `character_set_results = NULL`: results are not converted.
            Value::Null if definition.name == "character_set_results" => Value::Null,
            value => replay::canonical(definition.name, normalize(definition, &value)?),
        };
        replay::refuse_unimplemented(definition.name, &value)?;
        let shown = text(&value);
        match (definition.name, scope) {
            ("autocommit", VariableScope::Session) => {
                let on = value == Value::Int(1);
                if on {
                    transaction.commit(context)?;
                }
                outcome.autocommit_change = Some(on);
                continue;
            }
            ("transaction_isolation" | "tx_isolation", _) => {
                let level = crate::parse::IsolationLevel::from_variable_text(&shown)
                    .ok_or_else(|| wrong_value_for_variable(definition.name, &shown))?;
                crate::exec::transaction_statements::engine_isolation(level)?;
            }
            ("time_zone", _) => {
                crate::eval::temporal::TimeZone::parse(&shown)?;
            }
            ("binlog_checksum", _) => {
                // Rotates the log, even to the same algorithm, as MySQL does;
                // the value shown is the binlog's (session.rs).
                context.db().set_binlog_checksum(shown == "CRC32").map_err(crate::error::database_error)?;
                continue;
            }
            ("binlog_transaction_compression_level_zstd", _) => {
                // MySQL adjusts an out-of-range level to the nearest bound.
                let level = match value {
                    Value::Int(v) => v,
                    Value::UInt(v) => i64::try_from(v).unwrap_or(i64::MAX),
                    _ => i64::from(binlog::compression::LEVEL_ZSTD_DEFAULT),
                };
                let bounded = level.clamp(i64::from(binlog::compression::LEVEL_ZSTD_MIN), i64::from(binlog::compression::LEVEL_ZSTD_MAX));
                if bounded != level {
                    outcome.warnings.push(crate::session::Warning {
                        level: "Warning",
                        code: 1292,
                        message: format!("Truncated incorrect {} value: '{shown}'", definition.name),
                    });
                }
                let value = Value::Int(bounded);
                match scope {
                    VariableScope::Global => context.shared.globals.set(definition, value),
                    _ => outcome.set_variables.push((definition.name, value)),
                }
                continue;
            }
            ("binlog_large_transaction_optimization_enabled", _) => {
                context.db().set_large_transaction_optimization_enabled(value == Value::Int(1));
            }
            ("binlog_large_transaction_optimization_threshold", _) => {
                let bytes = match value {
                    Value::Int(v) => v as u64,
                    Value::UInt(v) => v,
                    _ => 0,
                };
                context
                    .db()
                    .set_large_transaction_optimization_threshold(bytes)
                    .map_err(|_| wrong_value_for_variable(definition.name, &shown))?;
            }
            ("innodb_lock_wait_timeout", VariableScope::Global) => {
                let seconds = match value {
                    Value::Int(v) => v as u64,
                    Value::UInt(v) => v,
                    _ => 50,
                };
                context.db().set_lock_wait_timeout(std::time::Duration::from_secs(seconds));
            }
            ("max_prepared_stmt_count", _) => {
                let max = match value {
                    Value::Int(v) => usize::try_from(v).unwrap_or(0),
                    Value::UInt(v) => usize::try_from(v).unwrap_or(usize::MAX),
                    _ => protocol::registry::PREPARED_STATEMENTS_MAX_DEFAULT,
                };
                context.env.info.handle.registry().set_prepared_statements_max(max);
            }
            ("pseudo_slave_mode" | "pseudo_replica_mode", _) => {
                // One setting under its old and its new name.
                outcome.set_variables.push(("pseudo_slave_mode", value.clone()));
                outcome.set_variables.push(("pseudo_replica_mode", value));
                continue;
            }
            _ => {}
        }
        match scope {
            VariableScope::Global if crate::variables::semi_sync::alias_of(definition.name).is_some() => {
                context.shared.globals.set(definition, value.clone());
                crate::variables::semi_sync::set_alias(&context.shared.globals, definition.name, value);
                crate::variables::semi_sync::publish_source_settings(&context.shared.semi_sync, &context.shared.globals);
            }
            VariableScope::Global => {
                row_logging_changed |= ROW_LOGGING_VARIABLES.contains(&definition.name);
                context.shared.globals.set(definition, value)
            }
            _ => outcome.set_variables.push((definition.name, value)),
        }
    }
    if row_logging_changed {
        publish_global_row_logging(context.db(), &context.shared.globals);
    }
    Ok(outcome)
}

/// MySQL 8.4 lets only SUPER, SYSTEM_VARIABLES_ADMIN or
/// SESSION_VARIABLES_ADMIN set a restricted session variable (binlogd has
/// no SESSION_VARIABLES_ADMIN to grant; the message names it as MySQL's does).
fn require_session_variables_admin(context: &Context<'_>) -> SqlResult<()> {
    context.require_any(&[Privilege::Super, Privilege::SystemVariablesAdmin]).map_err(|_| {
        protocol::MysqlError::new(
            1227,
            "42000",
            "Access denied; you need (at least one of) the SUPER, SYSTEM_VARIABLES_ADMIN or SESSION_VARIABLES_ADMIN privilege(s) for this operation",
        )
    })
}

/// Whether an assignment is to a global variable (`SET GLOBAL x`,
/// `SET @@global.x`).
fn sets_global(modifier: Option<ContextModifier>, name: &ObjectName) -> bool {
    let parts: Vec<Ident> = name.0.iter().filter_map(|part| part.as_ident().cloned()).collect();
    match system_variable_reference(&parts) {
        Some((_, scope)) => scope == VariableScope::Global,
        None => modifier == Some(ContextModifier::Global),
    }
}
