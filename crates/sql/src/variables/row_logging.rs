//! `binlog_row_image`, `binlog_row_metadata`,
//! `binlog_rows_query_log_events` and `binlog_row_value_options` as the
//! database reads them: the global
//! values live in the database (`Database::row_logging`, set from here at
//! startup and by SET GLOBAL), a session's own on top of them.

use std::collections::HashMap;

use database::{Database, RowImage, RowLogging, RowMetadata};

use super::GlobalVariables;
use crate::eval::value::{text, Value};

/// The variables SET GLOBAL must hand to the database.
pub const ROW_LOGGING_VARIABLES: &[&str] =
    &["binlog_row_image", "binlog_row_metadata", "binlog_rows_query_log_events", "binlog_row_value_options"];

/// Variables whose session value needs SUPER, SYSTEM_VARIABLES_ADMIN or
/// SESSION_VARIABLES_ADMIN in MySQL 8.4 (its "restricted" session variables).
pub const RESTRICTED_SESSION_VARIABLES: &[&str] =
    &["binlog_format", "binlog_row_image", "binlog_row_value_options", "binlog_rows_query_log_events"];

fn image(value: Option<&Value>) -> Option<RowImage> {
    value.and_then(|value| RowImage::parse(&text(value)))
}

fn on(value: Option<&Value>) -> Option<bool> {
    value.map(|value| *value == Value::Int(1))
}

/// `binlog_row_value_options`: PARTIAL_JSON, or ''.
fn partial_json(value: Option<&Value>) -> Option<bool> {
    value.map(|value| text(value).eq_ignore_ascii_case("PARTIAL_JSON"))
}

/// The global settings, as the global variables hold them.
pub fn global_row_logging(globals: &GlobalVariables) -> RowLogging {
    let defaults = RowLogging::default();
    RowLogging {
        image: image(globals.get("binlog_row_image").as_ref()).unwrap_or(defaults.image),
        metadata: globals.get("binlog_row_metadata").and_then(|value| RowMetadata::parse(&text(&value))).unwrap_or(defaults.metadata),
        rows_query: on(globals.get("binlog_rows_query_log_events").as_ref()).unwrap_or(defaults.rows_query),
        partial_json: partial_json(globals.get("binlog_row_value_options").as_ref()).unwrap_or(defaults.partial_json),
    }
}

/// Hands the global settings to the database.
pub fn publish_global_row_logging(db: &Database, globals: &GlobalVariables) {
    db.set_row_logging(global_row_logging(globals));
}

/// What a statement of a session with `session_values` logs its rows with.
/// Read for every writing statement: lookups and atomic loads only.
pub fn statement_row_logging(db: &Database, session_values: &HashMap<&'static str, Value>) -> RowLogging {
    let global = db.row_logging();
    RowLogging {
        image: image(session_values.get("binlog_row_image")).unwrap_or(global.image),
        metadata: global.metadata,
        rows_query: on(session_values.get("binlog_rows_query_log_events")).unwrap_or(global.rows_query),
        partial_json: partial_json(session_values.get("binlog_row_value_options")).unwrap_or(global.partial_json),
    }
}
