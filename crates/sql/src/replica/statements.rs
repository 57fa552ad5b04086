//! CHANGE REPLICATION SOURCE TO, START / STOP / RESET REPLICA and SHOW
//! REPLICA STATUS, over the stored settings (`source_settings.rs`).
//!
//! The threads themselves are `threads.rs`.

use std::time::{SystemTime, UNIX_EPOCH};

use protocol::{ColumnDefinition, MysqlError, ResultSet, Value as Wire};
use replica::IoState;
use time::OffsetDateTime;

use crate::error::SqlResult;
use crate::parse::ReplicaStatement;
use crate::replica::source_settings::SourceSettings;
use crate::replica::threads::ThreadsStatus;
use crate::session::{Context, Outcome};

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
    let shared = context.shared;
    let source = &shared.replica_source;
    let warnings = match statement {
        ReplicaStatement::ChangeSource(options) => {
            shared.replica.require_stopped(shared, false)?;
            source.change(options)?;
            Vec::new()
        }
        ReplicaStatement::Start(threads) => shared.replica.start(shared, *threads)?,
        ReplicaStatement::Stop(threads) => shared.replica.stop(shared, *threads)?,
        ReplicaStatement::Reset { all } => {
            shared.replica.require_stopped(shared, true)?;
            source.reset(*all)?;
            Vec::new()
        }
    };
    let mut outcome = Outcome::ok();
    outcome.warnings = warnings;
    Ok(outcome)
}

/// SHOW REPLICA STATUS (`old_names`: SHOW SLAVE STATUS's Master/Slave
/// names). No row until a source is configured, as in MySQL.
pub fn show_status(old_names: bool, context: &Context<'_>) -> ResultSet {
    let columns = STATUS_COLUMNS
        .iter()
        .map(|name| {
            let name = if old_names { old_name(name) } else { name.to_string() };
            ColumnDefinition::varchar(&name)
        })
        .collect();
    let mut result = ResultSet::new(columns);
    if let Some(settings) = context.shared.replica_source.settings() {
        let threads = context.shared.replica.status(context.shared);
        result.push_row(status_row(&settings, &threads, &crate::exec::gtid_next::gtid_set_text(&context.db().executed_gtids())));
    }
    result
}

fn old_name(name: &str) -> String {
    name.replace("Source", "Master").replace("source", "master").replace("Replica", "Slave")
}

fn status_row(settings: &SourceSettings, threads: &ThreadsStatus, executed_gtids: &str) -> Vec<Wire> {
    let text = |value: &str| Wire::from(value.to_string());
    let number = |value: u64| Wire::from(value.to_string());
    let receiver = &threads.receiver;
    let coordinator = &threads.coordinator;
    let io_running = if threads.receiver_running { receiver.state } else { IoState::No };
    let io_state = match io_running {
        IoState::Yes => "Waiting for source to send event",
        IoState::Connecting => "Connecting to source",
        IoState::No => "",
    };
    let sql_state = match (threads.coordinator_running, threads.queue_length) {
        (false, _) => "",
        (true, 0) => "Replica has read all relay log; waiting for more updates",
        (true, _) => "Waiting for dependent transaction to commit",
    };
    let or_setting = |file: &str| if file.is_empty() { settings.log_file.clone() } else { file.to_string() };
    let exec_pos = if coordinator.source_log_file.is_empty() { settings.log_pos } else { coordinator.exec_source_log_pos };
    let (io_errno, io_error, io_time) = error_columns(&receiver.last_error);
    let (sql_errno, sql_error, sql_time) = error_columns(&coordinator.last_error);
    let relay = &threads.relay;
    let mut row = vec![
        text(io_state),
        text(&settings.host),
        text(&settings.user),
        number(u64::from(settings.port)),
        number(settings.connect_retry_seconds),
        text(&or_setting(&receiver.source_log_file)),
        number(receiver.read_source_log_pos),
        text(""), // Relay_Log_File: none in memory
        number(0),
        text(&or_setting(&coordinator.source_log_file)),
        text(io_running.as_str()),
        text(if threads.coordinator_running { "Yes" } else { "No" }),
    ];
    // Replicate_* filters: none.
    row.extend((0..6).map(|_| text("")));
    row.extend([
        number(u64::from(sql_errno)), // Last_Errno
        text(&sql_error),
        number(0), // Skip_Counter
        number(exec_pos),
        number(relay.memory_bytes + relay.spilled_bytes + relay.file_bytes), // Relay_Log_Space
        text("None"),
        text(""),
        number(0),
        text("No"), // Source_SSL_Allowed
    ]);
    row.extend((0..5).map(|_| text(""))); // SSL files and cipher
    row.extend([
        threads.seconds_behind_source.map_or(Wire::Null, number),
        text("No"),
        number(u64::from(io_errno)),
        text(&io_error),
        number(u64::from(sql_errno)),
        text(&sql_error),
        text(""),
        number(u64::from(receiver.source_server_id)),
        text(&receiver.source_uuid),
        text("mysql.slave_master_info"),
        number(0),
        Wire::Null,
        text(sql_state),
        number(settings.retry_count),
        text(""),
        text(&io_time),
        text(&sql_time),
        text(&crate::exec::gtid_next::gtid_set_text(&receiver.retrieved_gtid_set)),
        text(executed_gtids),
        number(u64::from(settings.auto_position)),
        text(""),
        text(""),
        text(""),
        text(""),
        number(0),
        text(""),
        number(relay.memory_bytes),
        number(threads.queue_length as u64),
    ]);
    debug_assert_eq!(row.len(), STATUS_COLUMNS.len());
    row
}

/// Last_*_Errno, Last_*_Error and Last_*_Error_Timestamp (MySQL prints
/// the time as `YYMMDD HH:MM:SS`).
fn error_columns(error: &Option<(MysqlError, SystemTime)>) -> (u16, String, String) {
    let Some((error, at)) = error else {
        return (0, String::new(), String::new());
    };
    let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    let at = i64::try_from(seconds)
        .ok()
        .and_then(|seconds| OffsetDateTime::from_unix_timestamp(seconds).ok())
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let (month, day, hour, minute, second) = (u8::from(at.month()), at.day(), at.hour(), at.minute(), at.second());
    let timestamp = format!("{:02}{month:02}{day:02} {hour:02}:{minute:02}:{second:02}", at.year() % 100);
    (error.code, error.message.clone(), timestamp)
}
