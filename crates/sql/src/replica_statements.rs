//! CHANGE REPLICATION SOURCE TO, START / STOP / RESET REPLICA and SHOW
//! REPLICA STATUS, over the stored settings (`replica_source.rs`).
//!
//! The receiver and applier threads are not wired to these statements yet
//! (the pipeline lives in the `replica` crate): START REPLICA on a
//! configured server answers 1235, the threads always show `No`, and STOP
//! REPLICA finds them stopped (note 3084), as MySQL does for threads that
//! are not running.

use protocol::{ColumnDefinition, ResultSet, Value as Wire};

use crate::error::{not_supported, SqlResult};
use crate::parse::{ReplicaStatement, ReplicaThreads};
use crate::replica_source::SourceSettings;
use crate::session::{Context, Outcome, Warning};

/// MySQL 8.4's SHOW REPLICA STATUS columns, then binlogd's relay-log ones.
const STATUS_COLUMNS: [&str; 60] = [
    "Replica_IO_State",
    "Source_Host",
    "Source_User",
    "Source_Port",
    "Connect_Retry",
    "Source_Log_File",
    "Read_Source_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Source_Log_File",
    "Replica_IO_Running",
    "Replica_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Source_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Source_SSL_Allowed",
    "Source_SSL_CA_File",
    "Source_SSL_CA_Path",
    "Source_SSL_Cert",
    "Source_SSL_Cipher",
    "Source_SSL_Key",
    "Seconds_Behind_Source",
    "Source_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Source_Server_Id",
    "Source_UUID",
    "Source_Info_File",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Replica_SQL_Running_State",
    "Source_Retry_Count",
    "Source_Bind",
    "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp",
    "Retrieved_Gtid_Set",
    "Executed_Gtid_Set",
    "Auto_Position",
    "Replicate_Rewrite_DB",
    "Channel_Name",
    "Source_TLS_Version",
    "Source_public_key_path",
    "Get_Source_public_key",
    "Network_Namespace",
    "In_Memory_Relay_Log_Space",
    "In_Memory_Queue_Length",
];

pub fn execute(statement: &ReplicaStatement, context: &Context<'_>) -> SqlResult<Outcome> {
    let source = &context.shared.replica_source;
    match statement {
        ReplicaStatement::ChangeSource(options) => {
            source.change(options)?;
            Ok(Outcome::ok())
        }
        ReplicaStatement::Start(_) => match source.settings() {
            Some(settings) if !settings.host.is_empty() => Err(not_supported("START REPLICA")),
            _ => Err(protocol::MysqlError::new(
                1200,
                "HY000",
                "The server is not configured as replica; fix in config file or with CHANGE REPLICATION SOURCE TO",
            )),
        },
        ReplicaStatement::Stop(threads) => {
            let mut outcome = Outcome::ok();
            let which = match threads {
                ReplicaThreads::Both => "",
                ReplicaThreads::Io => " IO",
                ReplicaThreads::Sql => " SQL",
            };
            outcome.warnings.push(Warning {
                level: "Note",
                code: 3084,
                message: format!("Replication thread(s){which} for channel '' are already stopped."),
            });
            Ok(outcome)
        }
        ReplicaStatement::Reset { all } => {
            source.reset(*all)?;
            Ok(Outcome::ok())
        }
    }
}

/// SHOW REPLICA STATUS (`old_names`: SHOW SLAVE STATUS's Master/Slave
/// names). No row until a source is configured, as in MySQL.
pub fn show_status(old_names: bool, context: &Context<'_>) -> ResultSet {
    let columns = STATUS_COLUMNS
        .iter()
        .map(|name| {
            let name = if old_names {
                old_name(name)
            } else {
                name.to_string()
            };
            ColumnDefinition::varchar(&name)
        })
        .collect();
    let mut result = ResultSet::new(columns);
    if let Some(settings) = context.shared.replica_source.settings() {
        result.push_row(status_row(
            &settings,
            &crate::gtid_next::gtid_set_text(&context.db().executed_gtids()),
        ));
    }
    result
}

fn old_name(name: &str) -> String {
    name.replace("Source", "Master")
        .replace("source", "master")
        .replace("Replica", "Slave")
}

fn status_row(settings: &SourceSettings, executed_gtids: &str) -> Vec<Wire> {
    let text = |value: &str| Wire::from(value.to_string());
    let number = |value: u64| Wire::from(value.to_string());
    let mut row = vec![
        text(""),
        text(&settings.host),
        text(&settings.user),
        number(u64::from(settings.port)),
        number(settings.connect_retry_seconds),
        text(&settings.log_file),
        number(settings.log_pos),
        text(""),
        number(0),
        text(&settings.log_file),
        text("No"),
        text("No"),
    ];
    // Replicate_* filters: none.
    row.extend((0..6).map(|_| text("")));
    row.extend([
        number(0), // Last_Errno
        text(""),  // Last_Error
        number(0), // Skip_Counter
        number(settings.log_pos),
        number(0), // Relay_Log_Space
        text("None"),
        text(""),
        number(0),
        text("No"), // Source_SSL_Allowed
    ]);
    row.extend((0..5).map(|_| text(""))); // SSL files and cipher
    row.extend([
        Wire::Null, // Seconds_Behind_Source: NULL while not replicating
        text("No"),
        number(0),
        text(""),
        number(0),
        text(""),
        text(""),
        number(0), // Source_Server_Id
        text(""),
        text("mysql.slave_master_info"),
        number(0),
        Wire::Null,
        text(""),
        number(settings.retry_count),
        text(""),
        text(""),
        text(""),
        text(""), // Retrieved_Gtid_Set
        text(executed_gtids),
        number(u64::from(settings.auto_position)),
        text(""),
        text(""),
        text(""),
        text(""),
        number(0),
        text(""),
        number(0), // In_Memory_Relay_Log_Space
        number(0), // In_Memory_Queue_Length
    ]);
    debug_assert_eq!(row.len(), STATUS_COLUMNS.len());
    row
}
