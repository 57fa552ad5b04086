//! SHOW TABLE STATUS (INFORMATION_SCHEMA.TABLES under SHOW's names), SHOW
//! CREATE DATABASE, and the SHOW statements for objects binlogd does not
//! have (triggers, events, stored routines): MySQL's columns, no rows.

use protocol::{ColumnDefinition, ResultSet};

use crate::error::{unknown_database, SqlResult};
use crate::eval::expr::like;
use crate::eval::value::{text, to_wire, Value};
use crate::parse::Filter;
use crate::session::Context;

fn passes(filter: &Filter, name: &str) -> bool {
    match filter {
        Filter::None | Filter::Where(_) => true,
        Filter::Like(pattern) => like(name, pattern),
    }
}

fn exists(context: &Context<'_>, database: &str) -> SqlResult<()> {
    match context.db().catalog().databases().iter().any(|name| name == database) {
        true => Ok(()),
        false => Err(unknown_database(database)),
    }
}

/// SHOW TABLE STATUS's names for INFORMATION_SCHEMA.TABLES' columns from
/// TABLE_NAME (position 2) on, ENGINE to TABLE_COMMENT.
const TABLE_STATUS: [(&str, usize); 18] = [
    ("Name", 2),
    ("Engine", 4),
    ("Version", 5),
    ("Row_format", 6),
    ("Rows", 7),
    ("Avg_row_length", 8),
    ("Data_length", 9),
    ("Max_data_length", 10),
    ("Index_length", 11),
    ("Data_free", 12),
    ("Auto_increment", 13),
    ("Create_time", 14),
    ("Update_time", 15),
    ("Check_time", 16),
    ("Collation", 17),
    ("Checksum", 18),
    ("Create_options", 19),
    ("Comment", 20),
];

pub fn table_status(database: Option<&str>, filter: &Filter, context: &Context<'_>) -> SqlResult<ResultSet> {
    let database = context.database(database)?;
    exists(context, &database)?;
    let tables = crate::information_schema::table("TABLES", context.db().catalog(), Some(context))?;
    let columns =
        TABLE_STATUS.iter().map(|(name, position)| crate::eval::columns::column_definition(&tables.def, *position, Some(name))).collect();
    let mut result = ResultSet::new(columns);
    for row in tables.rows {
        if text(&row[1]) != database || !passes(filter, &text(&row[2])) {
            continue;
        }
        result.push_row(TABLE_STATUS.iter().map(|(_, position)| to_wire(&row[*position])).collect());
    }
    Ok(result)
}

fn empty(names: &[&str]) -> ResultSet {
    ResultSet::new(names.iter().map(|name| ColumnDefinition::varchar(*name)).collect())
}

pub fn triggers(database: Option<&str>, context: &Context<'_>) -> SqlResult<ResultSet> {
    exists(context, &context.database(database)?)?;
    Ok(empty(&[
        "Trigger",
        "Event",
        "Table",
        "Statement",
        "Timing",
        "Created",
        "sql_mode",
        "Definer",
        "character_set_client",
        "collation_connection",
        "Database Collation",
    ]))
}

pub fn events(database: Option<&str>, context: &Context<'_>) -> SqlResult<ResultSet> {
    exists(context, &context.database(database)?)?;
    Ok(empty(&[
        "Db",
        "Name",
        "Definer",
        "Time zone",
        "Type",
        "Execute at",
        "Interval value",
        "Interval field",
        "Starts",
        "Ends",
        "Status",
        "Originator",
        "character_set_client",
        "collation_connection",
        "Database Collation",
    ]))
}

pub fn routine_status() -> ResultSet {
    empty(&[
        "Db",
        "Name",
        "Type",
        "Definer",
        "Modified",
        "Created",
        "Security_type",
        "Comment",
        "character_set_client",
        "collation_connection",
        "Database Collation",
    ])
}

pub fn create_database(name: &str, if_not_exists: bool, context: &Context<'_>) -> SqlResult<ResultSet> {
    exists(context, name)?;
    let condition = if if_not_exists { "/*!32312 IF NOT EXISTS*/ " } else { "" };
    let id = context.db().catalog().database_collation(name).unwrap_or(engine::SERVER_DEFAULT_COLLATION);
    let (charset, collation) = crate::information_schema::collation_names(id);
    let collate = if crate::charsets::shows_collation(id) { format!(" COLLATE {collation}") } else { String::new() };
    let statement = format!(
        "CREATE DATABASE {condition}`{}` /*!40100 DEFAULT CHARACTER SET {charset}{collate} */ /*!80016 DEFAULT ENCRYPTION='N' */",
        name.replace('`', "``")
    );
    let mut result = empty(&["Database", "Create Database"]);
    result.push_row(vec![to_wire(&Value::Bytes(name.as_bytes().to_vec())), to_wire(&Value::Bytes(statement.into_bytes()))]);
    Ok(result)
}
