//! SHOW statements and DESCRIBE.

use std::sync::atomic::Ordering;

use protocol::{ColumnDefinition, ResultSet, Value as Wire};

use crate::error::{engine_error, unknown_database, SqlResult};
use crate::eval::columns::{default_clause, type_name, BINARY_COLLATION};

/// The collation SHOW CREATE TABLE gives every table (utf8mb4_general_ci).
use crate::eval::expr::like;
use crate::eval::expr::Environment;
use crate::eval::quoting::{quoted_identifier, quoted_string};
use crate::eval::temporal::{current_timestamp_text, default_text, TimeZone};
use crate::parse::{Filter, Show};
use crate::session::{Context, Outcome, Transactions};
use crate::variables::{definition, shown, Kind, VariableScope, DEFINITIONS};

fn text_result(names: &[&str], rows: Vec<Vec<Option<String>>>) -> ResultSet {
    let mut result = ResultSet::new(names.iter().map(|name| ColumnDefinition::varchar(*name)).collect());
    for row in rows {
        result.push_row(row.into_iter().map(|v| v.map_or(Wire::Null, Wire::from)).collect());
    }
    result
}

/// A column's ` COMMENT '...'` as SHOW CREATE TABLE ends its line.
fn push_comment(line: &mut String, column: &engine::ColumnDef) {
    if !column.attributes.comment.is_empty() {
        line.push_str(&format!(" COMMENT {}", quoted_string(&column.attributes.comment)));
    }
}

fn passes(filter: &Filter, name: &str) -> bool {
    match filter {
        Filter::None | Filter::Where(_) => true,
        Filter::Like(pattern) => like(name, pattern),
    }
}

/// The SHOW's `WHERE` condition, if it has one.
fn where_condition(show: &Show) -> Option<&sqlparser::ast::Expr> {
    match show {
        Show::Variables { filter, .. }
        | Show::Status { filter, .. }
        | Show::Databases { filter }
        | Show::Tables { filter, .. }
        | Show::Columns { filter, .. }
        | Show::Index { filter, .. }
        | Show::TableStatus { filter, .. } => match filter {
            Filter::Where(condition) => Some(condition),
            _ => None,
        },
        _ => None,
    }
}

/// Keeps the rows for which `condition`, over the result's column names,
/// is true (SHOW ... WHERE).
fn retain_where(result: &mut ResultSet, condition: &sqlparser::ast::Expr, context: &Context<'_>) -> SqlResult<()> {
    let columns = crate::eval::expr::Columns {
        table_names: Vec::new(),
        names: result.columns.iter().map(|column| column.name.clone()).collect(),
        members: result.columns.iter().map(|_| None).collect(),
        collations: Vec::new(),
    };
    let mut kept = Vec::with_capacity(result.rows.len());
    for row in std::mem::take(&mut result.rows) {
        let values: Vec<crate::eval::value::Value> = row.iter().map(crate::eval::value::from_wire).collect();
        if crate::eval::expr::Scope::for_row(&columns, &values, context.params, &context.env).is_true(condition)? {
            kept.push(row);
        }
    }
    result.rows = kept;
    Ok(())
}

pub fn show(show: &Show, context: &Context<'_>, _transaction: &mut Transactions<'_>) -> SqlResult<Outcome> {
    let catalog = context.db().catalog();
    let result = match show {
        Show::Variables { global, filter } => {
            let scope = if *global { VariableScope::Global } else { VariableScope::Default };
            let mut rows = Vec::new();
            // SHOW GLOBAL VARIABLES leaves out what has only a session value.
            let listed = DEFINITIONS.iter().filter(|definition| !(*global && definition.kind == Kind::Session));
            for definition in listed {
                if passes(filter, definition.name) {
                    let value = context.env.system_variable(definition.name, scope)?;
                    rows.push(vec![Some(definition.name.to_string()), Some(shown(definition, &value))]);
                }
            }
            // The registry keeps blocks by purpose; SHOW prints by name.
            rows.sort_by(|a, b| a[0].cmp(&b[0]));
            text_result(&["Variable_name", "Value"], rows)
        }
        Show::Status { global, filter } => {
            // Engine mode: the binlog counters include every commit so far.
            context.db().wait_binlog_written().map_err(crate::error::database_error)?;
            let counters = context.db().binlog_status().counters();
            let database_counters = context.db().counters();
            let registry = context.env.info.handle.registry();
            let mut status = vec![
                ("Binlog_cache_disk_use", counters.cache_disk_use.load(Ordering::Relaxed).to_string()),
                ("Binlog_cache_use", counters.cache_use.load(Ordering::Relaxed).to_string()),
                // MySQL's performance_schema.binary_log_transaction_compression_stats
                // row (BINARY, ZSTD): TRANSACTION_COUNTER,
                // COMPRESSED_BYTES_COUNTER, UNCOMPRESSED_BYTES_COUNTER.
                (
                    "Binlog_transaction_compression_zstd_transaction_counter",
                    counters.compression_zstd_transactions.load(Ordering::Relaxed).to_string(),
                ),
                (
                    "Binlog_transaction_compression_zstd_compressed_bytes_counter",
                    counters.compression_zstd_compressed_bytes.load(Ordering::Relaxed).to_string(),
                ),
                (
                    "Binlog_transaction_compression_zstd_uncompressed_bytes_counter",
                    counters.compression_zstd_uncompressed_bytes.load(Ordering::Relaxed).to_string(),
                ),
                ("binlog_large_transaction_optimization_count", counters.large_transaction_promotions.load(Ordering::Relaxed).to_string()),
                (
                    "binlog_large_transaction_optimization_missed_count",
                    counters.large_transaction_missed.load(Ordering::Relaxed).to_string(),
                ),
                // fdatasyncs of the binlog files (no MySQL name: MySQL
                // counts only InnoDB's); with `binlog_storage_engine =
                // engine` only rotations and checkpoints sync them.
                ("binlogd_binlog_fsyncs", database_counters.binlog_fsyncs.to_string()),
                // MySQL's name for statements prepared again because what
                // they read changed; here, kept plans made again.
                ("Com_stmt_reprepare", context.shared.stmt_reprepares.load(Ordering::Relaxed).to_string()),
                // MariaDB's name for what waits for purge; counted in
                // row keys (InnoDB counts undo logs), bounded at 4096 for
                // small commits under flush 1 (engine/src/purge.rs).
                ("Innodb_history_list_length", context.db().engine_status().purge_queued_keys().to_string()),
                // MySQL's name for the redo log's fsyncs.
                ("Innodb_os_log_fsyncs", database_counters.redo_fsyncs.to_string()),
                // MariaDB's: this connection's memory figure, or every
                // connection's added up (information_schema/processlist.rs).
                (
                    "Memory_used",
                    if *global { registry.memory_used_bytes() } else { context.env.info.handle.memory().used_bytes() }.to_string(),
                ),
                ("Prepared_stmt_count", registry.prepared_statements().to_string()),
                ("Questions", registry.questions().to_string()),
                // This connection's TLS, empty for a plain one.
                ("Ssl_cipher", context.env.info.tls.as_ref().map(|tls| tls.cipher.clone()).unwrap_or_default()),
                ("Ssl_version", context.env.info.tls.as_ref().map(|tls| tls.version.clone()).unwrap_or_default()),
                ("Threads_connected", registry.len().to_string()),
                ("Uptime", registry.uptime_secs().to_string()),
            ];
            // Where the group commit's time goes (database/src/group_commit_stages.rs).
            status.extend(database_counters.group_commit_status().into_iter().map(|(name, value)| (name, value.to_string())));
            // The replica's relay log and boundary queue.
            status.extend(context.shared.replica.counters());
            // Semi-synchronous replication, as a source.
            status.extend(context.shared.semi_sync.status());
            let rows = status
                .into_iter()
                .filter(|(name, _)| passes(filter, name))
                .map(|(name, value)| vec![Some(name.to_string()), Some(value)])
                .collect();
            text_result(&["Variable_name", "Value"], rows)
        }
        Show::Databases { filter } => {
            let mut names = catalog.databases();
            names.push("information_schema".into());
            names.sort();
            let principal = context.principal();
            let rows = names.into_iter().filter(|n| passes(filter, n) && principal.can_see_database(n)).map(|n| vec![Some(n)]).collect();
            text_result(&["Database"], rows)
        }
        Show::Tables { database, full, filter } => {
            let database = context.database(database.as_deref())?;
            // INFORMATION_SCHEMA's tables are MySQL's system views, which
            // every account sees (CDC connectors list every database's tables).
            let (tables, table_type) = if crate::information_schema::is_information_schema(&database) {
                (crate::information_schema::table_names().map(String::from).collect(), "SYSTEM VIEW")
            } else {
                let principal = context.principal();
                let tables = catalog.tables(&database).map_err(|_| unknown_database(&database))?;
                (tables.into_iter().filter(|t| principal.can_see_table(&database, t)).collect::<Vec<_>>(), "BASE TABLE")
            };
            let column = format!("Tables_in_{database}");
            let rows = tables
                .into_iter()
                .filter(|t| passes(filter, t))
                .map(|t| if *full { vec![Some(t), Some(table_type.into())] } else { vec![Some(t)] })
                .collect();
            if *full {
                text_result(&[&column, "Table_type"], rows)
            } else {
                text_result(&[&column], rows)
            }
        }
        Show::CreateTable { database, table } => {
            let database = context.database(database.as_deref())?;
            let def = catalog.table(&database, table).map_err(engine_error)?;
            let zone = TimeZone::of(&context.env);
            let mut lines = Vec::new();
            for column in &def.columns {
                let mut line = format!("  {} {}", quoted_identifier(&column.name), type_name(column));
                // A character column in other than the table's collation
                // names its own, as MySQL prints it.
                if column.collation != BINARY_COLLATION && column.collation != def.default_collation {
                    let (charset, collation) = crate::information_schema::collation_names(column.collation);
                    line.push_str(&format!(" CHARACTER SET {charset} COLLATE {collation}"));
                }
                if let Some(generated) = &column.attributes.generated {
                    let text = crate::eval::generated::parse_expression(&generated.expression)
                        .map(|expr| crate::eval::generated::mysql_text(&expr))
                        .unwrap_or_else(|_| generated.expression.clone());
                    let kind = if generated.stored { "STORED" } else { "VIRTUAL" };
                    line.push_str(&format!(" GENERATED ALWAYS AS ({text}) {kind}"));
                    if !column.nullable {
                        line.push_str(" NOT NULL");
                    }
                    if column.attributes.invisible {
                        line.push_str(" /*!80023 INVISIBLE */");
                    }
                    push_comment(&mut line, column);
                    lines.push(line);
                    continue;
                }
                let is_timestamp = matches!(column.column_type, binlog_format::ColumnType::Timestamp2 { .. });
                if !column.nullable {
                    line.push_str(" NOT NULL");
                } else if is_timestamp {
                    // MySQL names a TIMESTAMP's NULL, which once was not the default.
                    line.push_str(" NULL");
                }
                if let Some(srid) = column.attributes.geometry.and_then(|geometry| geometry.srid) {
                    line.push_str(&format!(" /*!80003 SRID {srid} */"));
                }
                if column.auto_increment {
                    line.push_str(" AUTO_INCREMENT");
                } else if column.current_timestamp.on_insert {
                    line.push_str(&format!(" DEFAULT {}", current_timestamp_text(column)));
                } else if let Some(text) = crate::eval::default_expressions::mysql_text(column) {
                    line.push_str(&format!(" DEFAULT ({text})"));
                } else if let Some(default) = column.default.as_ref().filter(|d| !matches!(d, binlog_format::Value::Null)) {
                    let shown = match default_text(column, default, zone) {
                        Some(shown) => quoted_string(&shown),
                        None => default_clause(column, default),
                    };
                    line.push_str(&format!(" DEFAULT {shown}"));
                } else if column.nullable {
                    line.push_str(" DEFAULT NULL");
                }
                if column.current_timestamp.on_update {
                    line.push_str(&format!(" ON UPDATE {}", current_timestamp_text(column)));
                }
                if column.attributes.invisible {
                    line.push_str(" /*!80023 INVISIBLE */");
                }
                push_comment(&mut line, column);
                lines.push(line);
            }
            let names =
                |positions: &[usize]| positions.iter().map(|&p| quoted_identifier(&def.columns[p].name)).collect::<Vec<_>>().join(",");
            if def.has_primary_key() {
                lines.push(format!("  PRIMARY KEY ({})", names(&def.primary_key)));
            }
            for index in &def.indexes {
                let kind = if index.unique { "UNIQUE KEY" } else { "KEY" };
                lines.push(format!("  {kind} {} ({})", quoted_identifier(&index.name), names(&index.columns)));
            }
            let text = format!(
                "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB {}{}{}",
                quoted_identifier(&def.name),
                lines.join(",\n"),
                table_charset_options(def.default_collation),
                crate::exec::table_comment::create_table_option(&def.comment),
                crate::exec::show_partitions::create_table_suffix(&def).unwrap_or_default()
            );
            text_result(&["Table", "Create Table"], vec![vec![Some(def.name.clone()), Some(text)]])
        }
        Show::Columns { database, table, full, filter } => {
            let database = context.database(database.as_deref())?;
            let def = catalog.table(&database, table).map_err(engine_error)?;
            let mut rows = Vec::new();
            for (position, column) in def.columns.iter().enumerate() {
                if !passes(filter, &column.name) {
                    continue;
                }
                let key = crate::information_schema::column_key(&def, position);
                let default = crate::information_schema::column_default(column, TimeZone::of(&context.env));
                let extra = crate::information_schema::column_extra(column);
                let mut row = vec![Some(column.name.clone()), Some(type_name(column))];
                if *full {
                    let collation = (column.collation != BINARY_COLLATION)
                        .then(|| crate::information_schema::collation_names(column.collation).1.to_string());
                    row.push(collation);
                }
                row.extend([Some(if column.nullable { "YES" } else { "NO" }.to_string()), Some(key.to_string()), default, Some(extra)]);
                if *full {
                    row.extend([Some("select,insert,update,references".to_string()), Some(column.attributes.comment.clone())]);
                }
                rows.push(row);
            }
            if *full {
                text_result(&["Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment"], rows)
            } else {
                text_result(&["Field", "Type", "Null", "Key", "Default", "Extra"], rows)
            }
        }
        Show::Index { database, table, .. } => {
            let database = context.database(database.as_deref())?;
            let def = catalog.table(&database, table).map_err(engine_error)?;
            let mut result = ResultSet::new(vec![
                ColumnDefinition::varchar("Table"),
                ColumnDefinition::bigint("Non_unique"),
                ColumnDefinition::varchar("Key_name"),
                ColumnDefinition::bigint("Seq_in_index"),
                ColumnDefinition::varchar("Column_name"),
                ColumnDefinition::varchar("Collation"),
                ColumnDefinition::bigint("Cardinality"),
                ColumnDefinition::bigint("Sub_part"),
                ColumnDefinition::varchar("Packed"),
                ColumnDefinition::varchar("Null"),
                ColumnDefinition::varchar("Index_type"),
                ColumnDefinition::varchar("Comment"),
                ColumnDefinition::varchar("Index_comment"),
                ColumnDefinition::varchar("Visible"),
                ColumnDefinition::varchar("Expression"),
            ]);
            for (name, unique, positions) in crate::information_schema::table_indexes(&def) {
                for (sequence, &position) in positions.iter().enumerate() {
                    let column = &def.columns[position];
                    result.push_row(vec![
                        Wire::from(def.name.clone()),
                        Wire::UInt(u64::from(!unique)),
                        Wire::from(name.clone()),
                        Wire::UInt(sequence as u64 + 1),
                        Wire::from(column.name.clone()),
                        Wire::from("A"),
                        // No statistics are kept; MySQL shows 0 before ANALYZE TABLE.
                        Wire::UInt(0),
                        Wire::Null,
                        Wire::Null,
                        Wire::from(if column.nullable { "YES" } else { "" }),
                        Wire::from("BTREE"),
                        Wire::from(""),
                        Wire::from(""),
                        Wire::from("YES"),
                        Wire::Null,
                    ]);
                }
            }
            result
        }
        Show::Processlist { full } => {
            let mut result = ResultSet::new(vec![
                ColumnDefinition::bigint("Id"),
                ColumnDefinition::varchar("User"),
                ColumnDefinition::varchar("Host"),
                ColumnDefinition::varchar("db"),
                ColumnDefinition::varchar("Command"),
                ColumnDefinition::bigint("Time"),
                ColumnDefinition::varchar("State"),
                ColumnDefinition::varchar("Info"),
            ]);
            // Without PROCESS an account sees only its own user's threads.
            for process in crate::information_schema::visible_processes(context) {
                let info = process.info.map(|info| if *full { info } else { info.chars().take(100).collect() });
                result.push_row(vec![
                    Wire::UInt(u64::from(process.id)),
                    Wire::from(process.user),
                    Wire::from(process.host),
                    process.db.map_or(Wire::Null, Wire::from),
                    Wire::from(process.command),
                    Wire::UInt(process.time_secs),
                    Wire::from(process.state),
                    info.map_or(Wire::Null, Wire::from),
                ]);
            }
            result
        }
        Show::BinaryLogs => {
            context.db().wait_binlog_written().map_err(crate::error::database_error)?;
            let binlog = context.db().binlog_status();
            let dir = binlog.options().dir.clone();
            let mut result = ResultSet::new(vec![
                ColumnDefinition::varchar("Log_name"),
                ColumnDefinition::bigint("File_size"),
                ColumnDefinition::varchar("Encrypted"),
            ]);
            for name in binlog.file_names() {
                let size = std::fs::metadata(dir.join(&name)).map(|m| m.len()).unwrap_or(0);
                result.push_row(vec![Wire::from(name), Wire::UInt(size), Wire::from("No")]);
            }
            result
        }
        Show::BinaryLogStatus => {
            context.db().wait_binlog_written().map_err(crate::error::database_error)?;
            let binlog = context.db().binlog_status();
            let (file, position) = binlog.active_position();
            let mut result = ResultSet::new(vec![
                ColumnDefinition::varchar("File"),
                ColumnDefinition::bigint("Position"),
                ColumnDefinition::varchar("Binlog_Do_DB"),
                ColumnDefinition::varchar("Binlog_Ignore_DB"),
                ColumnDefinition::varchar("Executed_Gtid_Set"),
            ]);
            result.push_row(vec![
                Wire::from(file),
                Wire::UInt(position),
                Wire::from(""),
                Wire::from(""),
                Wire::from(crate::exec::gtid_next::gtid_set_text(&context.db().executed_gtids())),
            ]);
            result
        }
        Show::Replicas { old_names } => {
            let names: [&str; 5] = if *old_names {
                ["Server_id", "Host", "Port", "Master_id", "Slave_UUID"]
            } else {
                ["Server_Id", "Host", "Port", "Source_Id", "Replica_UUID"]
            };
            let mut result = ResultSet::new(vec![
                ColumnDefinition::bigint(names[0]),
                ColumnDefinition::varchar(names[1]),
                ColumnDefinition::bigint(names[2]),
                ColumnDefinition::bigint(names[3]),
                ColumnDefinition::varchar(names[4]),
            ]);
            for replica in context.shared.replicas.list() {
                result.push_row(vec![
                    Wire::UInt(u64::from(replica.server_id)),
                    Wire::from(replica.host),
                    Wire::UInt(u64::from(replica.port)),
                    Wire::UInt(u64::from(replica.source_id)),
                    Wire::from(replica.uuid),
                ]);
            }
            result
        }
        Show::ReplicaStatus { old_names } => crate::replica::statements::show_status(*old_names, context),
        Show::Warnings => {
            let mut result = ResultSet::new(vec![
                ColumnDefinition::varchar("Level"),
                ColumnDefinition::bigint("Code"),
                ColumnDefinition::varchar("Message"),
            ]);
            for warning in context.warnings {
                result.push_row(vec![Wire::from(warning.level), Wire::UInt(u64::from(warning.code)), Wire::from(warning.message.clone())]);
            }
            result
        }
        Show::Errors => {
            ResultSet::new(vec![ColumnDefinition::varchar("Level"), ColumnDefinition::bigint("Code"), ColumnDefinition::varchar("Message")])
        }
        Show::BinlogEvents { file, from, offset, limit } => {
            crate::exec::binlog_events::show_binlog_events(file.as_deref(), *from, *offset, *limit, context)?
        }
        Show::TableStatus { database, filter } => crate::exec::show_objects::table_status(database.as_deref(), filter, context)?,
        Show::Triggers { database, .. } => crate::exec::show_objects::triggers(database.as_deref(), context)?,
        Show::Events { database, .. } => crate::exec::show_objects::events(database.as_deref(), context)?,
        Show::RoutineStatus { .. } => crate::exec::show_objects::routine_status(),
        Show::CreateDatabase { name, if_not_exists } => crate::exec::show_objects::create_database(name, *if_not_exists, context)?,
        Show::Engines => text_result(
            &["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"],
            vec![["InnoDB", "DEFAULT", "binlogd's in-memory MVCC engine with a redo log", "YES", "YES", "YES"]
                .iter()
                .map(|s| Some(s.to_string()))
                .collect()],
        ),
    };
    let _ = definition;
    let mut result = result;
    if let Some(condition) = where_condition(show) {
        retain_where(&mut result, condition, context)?;
    }
    Ok(Outcome::new(result))
}

/// SHOW CREATE TABLE's `DEFAULT CHARSET=x [COLLATE=y]` for a table of
/// collation `id`: MySQL names the collation when it is not its set's
/// default, and always for utf8mb4_0900_ai_ci (`store_create_info`).
fn table_charset_options(id: u16) -> String {
    let (charset, collation) = crate::information_schema::collation_names(id);
    match crate::charsets::shows_collation(id) {
        false => format!("DEFAULT CHARSET={charset}"),
        true => format!("DEFAULT CHARSET={charset} COLLATE={collation}"),
    }
}
