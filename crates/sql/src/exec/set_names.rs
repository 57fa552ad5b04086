//! `SET NAMES` and `SET CHARACTER SET`: the session's client, connection
//! and results character sets in one statement, as MySQL sets them.

use crate::charsets::{character_set, collation_of, default_collation};
use crate::error::SqlResult;
use crate::eval::expr::Environment;
use crate::eval::value::{text, Value};
use crate::session::{Context, Outcome};
use crate::variables::VariableScope;

/// `SET NAMES charset [COLLATE collation]`: client, connection and results
/// in `charset`; DEFAULT (`None`) is the global `character_set_client`.
pub fn set_names(charset: Option<&str>, collation: Option<&str>, context: &Context<'_>) -> SqlResult<Outcome> {
    let charset = match charset {
        Some(name) => character_set(name)?,
        None => default_client_charset(context)?,
    };
    let collation = match collation {
        Some(name) => collation_of(charset, name)?,
        None => default_collation(charset),
    };
    let mut outcome = Outcome::ok();
    for variable in ["character_set_client", "character_set_connection", "character_set_results"] {
        outcome.set_variables.push((variable, name_value(charset)));
    }
    outcome.set_variables.push(("collation_connection", name_value(collation.name)));
    Ok(outcome)
}

/// `SET CHARACTER SET charset`: client and results in `charset`, the
/// connection in the database's character set (MySQL's rule).
pub fn set_character_set(charset: Option<&str>, context: &Context<'_>) -> SqlResult<Outcome> {
    let charset = match charset {
        Some(name) => character_set(name)?,
        None => default_client_charset(context)?,
    };
    let mut outcome = Outcome::ok();
    outcome.set_variables.push(("character_set_client", name_value(charset)));
    outcome.set_variables.push(("character_set_results", name_value(charset)));
    let session = |name| context.env.system_variable(name, VariableScope::Session);
    outcome.set_variables.push(("character_set_connection", session("character_set_database")?));
    outcome.set_variables.push(("collation_connection", session("collation_database")?));
    Ok(outcome)
}

/// DEFAULT: the global `character_set_client`.
fn default_client_charset(context: &Context<'_>) -> SqlResult<&'static str> {
    character_set(&text(&context.shared.globals.get("character_set_client").unwrap_or(Value::Null)))
}

fn name_value(name: &str) -> Value {
    Value::Bytes(name.as_bytes().to_vec())
}
