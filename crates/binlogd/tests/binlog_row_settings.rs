//! The binlog settings CDC tools change, through SQL against a served
//! binlogd: for each `binlog_row_image` (FULL, MINIMAL, NOBLOB) ×
//! `binlog_row_metadata` (MINIMAL, FULL), INSERT, UPDATE and DELETE on a
//! table with a primary key and BLOB, TEXT and JSON columns and on one
//! without a primary key. mysql_common decodes every event: the columns of
//! each image are the ones MySQL 8.4 logs, their values the rows written,
//! and the Table_map's optional metadata what MySQL writes for the setting.
//! `mariadb-binlog --verbose` reads the files, python-mysql-replication
//! returns the rows, and a binlogd replica and a MariaDB replica apply the
//! partial images to identical tables. Also: Rows_query events, `binlog_format`, the
//! read-only variables tools query, and MySQL's errors for bad values,
//! wrong scopes and missing privileges.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use mysql_common::binlog::consts::{BinlogVersion, EventFlags};
use mysql_common::binlog::events::{EventData, OptionalMetadataField, RowsEventData};
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use serde_json::Value as JsonValue;
use support::mariadb::MariaDb;
use support::{python_script, ServerProcess};
use testkit::raw_client::MValue;

const REPL_PASSWORD: &str = "repl-pw";
const IMAGES: [&str; 3] = ["FULL", "MINIMAL", "NOBLOB"];
const METADATA: [&str; 2] = ["MINIMAL", "FULL"];

/// `k`: id, name, body (TEXT), bin (BLOB), n; `j`: id, doc (JSON), n;
/// `u` (no primary key): a, note (TEXT), n.
const TABLES: &str = "CREATE TABLE k (id INT NOT NULL, name VARCHAR(20), body TEXT, bin BLOB, n INT, PRIMARY KEY (id));
     CREATE TABLE j (id INT NOT NULL, doc JSON, n INT, PRIMARY KEY (id));
     CREATE TABLE u (a INT, note TEXT, n INT);";

/// (table, column count, whether it has a primary key (its column 0), its BLOB/TEXT columns)
const SHAPES: &[(&str, usize, bool, &[usize])] = &[("k", 5, true, &[2, 3]), ("j", 3, true, &[]), ("u", 3, false, &[1])];

/// The column names of each table, in order.
fn column_names(table: &str) -> &'static [&'static str] {
    match table {
        "k" => &["id", "name", "body", "bin", "n"],
        "j" => &["id", "doc", "n"],
        _ => &["a", "note", "n"],
    }
}

fn shape(table: &str) -> (usize, bool, &'static [usize]) {
    let (_, count, keyed, blobs) = SHAPES.iter().find(|(name, ..)| *name == table).unwrap();
    (*count, *keyed, blobs)
}

/// Each statement runs in its own autocommit transaction.
const STATEMENTS: &[&str] = &[
    "INSERT INTO k VALUES (1, 'one', 'text one', X'0102', 10), (2, 'two', NULL, NULL, 20), (3, 'three', 't3', X'03', 30)",
    "UPDATE k SET n = n + 1 WHERE id <= 2",
    "UPDATE k SET body = 'changed', name = name WHERE id = 3",
    "DELETE FROM k WHERE id = 2",
    r#"INSERT INTO j VALUES (1, '{"a": 1}', 5), (2, '[2, "x"]', 6)"#,
    "UPDATE j SET n = 7 WHERE id = 1",
    "DELETE FROM j WHERE id = 2",
    "INSERT INTO u VALUES (1, 'note one', 100), (2, 'note two', 200)",
    "UPDATE u SET n = 101 WHERE a = 1",
    "DELETE FROM u WHERE a = 2",
];

/// A column's value as the test compares it: NULL, a number, text, hex
/// bytes or a JSON document, all as text.
type Cell = String;

fn row(cells: &[&str]) -> Vec<Cell> {
    cells.iter().map(|cell| cell.to_string()).collect()
}

/// One logged row: table, kind, and each image as (column, value) pairs.
#[derive(Debug, Clone, PartialEq)]
struct LoggedRow {
    table: String,
    kind: &'static str,
    before: Vec<(usize, Cell)>,
    after: Vec<(usize, Cell)>,
}

/// Columns of a row's before image, as MySQL 8.4 picks them (see
/// `database::row_image`): the key (MINIMAL) or all but BLOB/TEXT columns
/// (NOBLOB; JSON stays), every column without a primary key.
fn before_columns(table: &str, image: &str) -> Vec<usize> {
    let (count, keyed, blobs) = shape(table);
    (0..count)
        .filter(|column| match image {
            _ if !keyed => true,
            "MINIMAL" => *column == 0,
            "NOBLOB" => !blobs.contains(column),
            _ => true,
        })
        .collect()
}

/// Columns of an Update's after image: the assigned and changed ones
/// (MINIMAL), and all but BLOB/TEXT columns besides (NOBLOB).
fn update_after_columns(table: &str, image: &str, assigned_or_changed: &[usize]) -> Vec<usize> {
    let (count, _, blobs) = shape(table);
    (0..count)
        .filter(|column| match image {
            "FULL" => true,
            "MINIMAL" => assigned_or_changed.contains(column),
            _ => !blobs.contains(column) || assigned_or_changed.contains(column),
        })
        .collect()
}

fn pick(full: &[Cell], columns: &[usize]) -> Vec<(usize, Cell)> {
    columns.iter().map(|&column| (column, full[column].clone())).collect()
}

/// The rows [`STATEMENTS`] log under `image`, in order.
fn expected_rows(image: &str) -> Vec<LoggedRow> {
    let k1 = row(&["1", "one", "text one", "0x0102", "10"]);
    let k2 = row(&["2", "two", "NULL", "NULL", "20"]);
    let k3 = row(&["3", "three", "t3", "0x03", "30"]);
    let (mut k1_after, mut k2_after, mut k3_after) = (k1.clone(), k2.clone(), k3.clone());
    k1_after[4] = "11".into();
    k2_after[4] = "21".into();
    k3_after[2] = "changed".into();
    let j1 = row(&["1", r#"{"a":1}"#, "5"]);
    let j2 = row(&["2", r#"[2,"x"]"#, "6"]);
    let mut j1_after = j1.clone();
    j1_after[2] = "7".into();
    let u1 = row(&["1", "note one", "100"]);
    let u2 = row(&["2", "note two", "200"]);
    let mut u1_after = u1.clone();
    u1_after[2] = "101".into();
    let write = |table: &str, full: &[Cell]| LoggedRow {
        table: table.into(),
        kind: "write",
        before: Vec::new(),
        after: pick(full, &(0..full.len()).collect::<Vec<_>>()),
    };
    let update = |table: &str, before: &[Cell], after: &[Cell], assigned_or_changed: &[usize]| LoggedRow {
        table: table.into(),
        kind: "update",
        before: pick(before, &before_columns(table, image)),
        after: pick(after, &update_after_columns(table, image, assigned_or_changed)),
    };
    let delete = |table: &str, before: &[Cell]| LoggedRow {
        table: table.into(),
        kind: "delete",
        before: pick(before, &before_columns(table, image)),
        after: Vec::new(),
    };
    vec![
        write("k", &k1),
        write("k", &k2),
        write("k", &k3),
        update("k", &k1, &k1_after, &[4]),
        update("k", &k2, &k2_after, &[4]),
        // name = name: assigned, so in a MINIMAL after image though unchanged.
        update("k", &k3, &k3_after, &[1, 2]),
        delete("k", &k2_after),
        write("j", &j1),
        write("j", &j2),
        update("j", &j1, &j1_after, &[2]),
        delete("j", &j2),
        write("u", &u1),
        write("u", &u2),
        update("u", &u1, &u1_after, &[2]),
        delete("u", &u2),
    ]
}

fn cell(value: &BinlogValue<'_>) -> Cell {
    match value {
        BinlogValue::Value(MValue::NULL) => "NULL".into(),
        BinlogValue::Value(MValue::Int(v)) => v.to_string(),
        BinlogValue::Value(MValue::UInt(v)) => v.to_string(),
        BinlogValue::Value(MValue::Bytes(bytes)) => match std::str::from_utf8(bytes) {
            Ok(text) if !text.is_empty() && text.chars().all(|c| !c.is_control()) => text.to_string(),
            _ => format!("0x{}", bytes.iter().map(|b| format!("{b:02X}")).collect::<String>()),
        },
        BinlogValue::Jsonb(jsonb) => {
            let parsed = JsonValue::from(jsonb.clone().parse().expect("mysql_common parses the jsonb"));
            serde_json::to_string(&parsed).unwrap()
        }
        other => panic!("unexpected value {other:?}"),
    }
}

/// What mysql_common reads from the files: the rows of database `database`,
/// each Table_map's optional metadata field kinds per table, and the
/// Rows_query texts with their header flags.
struct Decoded {
    rows: Vec<LoggedRow>,
    metadata: BTreeMap<String, Vec<&'static str>>,
    rows_queries: Vec<(String, bool)>,
}

fn decode(files: &[PathBuf], database: &str) -> Decoded {
    let mut decoded = Decoded { rows: Vec::new(), metadata: BTreeMap::new(), rows_queries: Vec::new() };
    for path in files {
        let bytes = std::fs::read(path).unwrap();
        let mut binlog = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).expect("mysql_common reads the file");
        let mut pending_query: Option<(String, bool)> = None;
        while let Some(event) = binlog.next() {
            let event = event.expect("mysql_common reads every event");
            let ignorable = event.header().flags().contains(EventFlags::LOG_EVENT_IGNORABLE_F);
            match event.read_data().expect("mysql_common decodes the event") {
                Some(EventData::RowsQueryEvent(query)) => pending_query = Some((query.query().into_owned(), ignorable)),
                Some(EventData::TableMapEvent(map)) => {
                    if map.database_name() != database {
                        pending_query = None;
                        continue;
                    }
                    decoded.rows_queries.extend(pending_query.take());
                    let kinds = map
                        .iter_optional_meta()
                        .map(|field| match field.expect("mysql_common reads the optional metadata") {
                            OptionalMetadataField::Signedness(_) => "SIGNEDNESS",
                            OptionalMetadataField::DefaultCharset(_) => "DEFAULT_CHARSET",
                            OptionalMetadataField::ColumnCharset(_) => "COLUMN_CHARSET",
                            OptionalMetadataField::ColumnName(_) => "COLUMN_NAME",
                            OptionalMetadataField::SimplePrimaryKey(_) => "SIMPLE_PRIMARY_KEY",
                            OptionalMetadataField::ColumnVisibility(_) => "COLUMN_VISIBILITY",
                            other => panic!("unexpected optional metadata {other:?}"),
                        })
                        .collect();
                    decoded.metadata.insert(map.table_name().into_owned(), kinds);
                }
                Some(EventData::RowsEvent(rows)) => {
                    let map = binlog.reader().get_tme(rows.table_id()).expect("table map precedes rows");
                    if map.database_name() != database {
                        continue;
                    }
                    let kind = match rows {
                        RowsEventData::WriteRowsEvent(_) => "write",
                        RowsEventData::UpdateRowsEvent(_) => "update",
                        RowsEventData::DeleteRowsEvent(_) => "delete",
                        _ => panic!("binlogd writes v2 rows events"),
                    };
                    let count = rows.num_columns() as usize;
                    let before_columns: Vec<usize> =
                        rows.columns_before_image().map(|bits| bits.iter_ones().filter(|&c| c < count).collect()).unwrap_or_default();
                    let after_columns: Vec<usize> =
                        rows.columns_after_image().map(|bits| bits.iter_ones().filter(|&c| c < count).collect()).unwrap_or_default();
                    for decoded_row in rows.rows(map) {
                        let (before, after) = decoded_row.expect("mysql_common decodes the row");
                        let image = |row: Option<mysql_common::binlog::row::BinlogRow>, columns: &[usize]| -> Vec<(usize, Cell)> {
                            let Some(row) = row else { return Vec::new() };
                            let values: Vec<Cell> = (0..row.len()).map(|i| cell(row.as_ref(i).expect("a value"))).collect();
                            assert_eq!(values.len(), columns.len(), "one value per present column");
                            columns.iter().copied().zip(values).collect()
                        };
                        decoded.rows.push(LoggedRow {
                            table: map.table_name().into_owned(),
                            kind,
                            before: image(before, &before_columns),
                            after: image(after, &after_columns),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    decoded
}

/// `mariadb-binlog` reads the files, and `--verbose` decodes every row of
/// `tables` (MariaDB has no decoder for MySQL's binary JSON, so the JSON
/// table is left to `--table` filters).
fn mariadb_binlog_reads_the_files(files: &[PathBuf], tables: &[&str]) {
    for path in files {
        let plain = Command::new("mariadb-binlog").arg(path).output().expect("run mariadb-binlog (mariadb-client)");
        assert!(plain.status.success(), "mariadb-binlog on {}: {}", path.display(), String::from_utf8_lossy(&plain.stderr));
        for table in tables {
            let verbose = Command::new("mariadb-binlog").args(["--verbose", &format!("--table={table}")]).arg(path).output().unwrap();
            let printed = String::from_utf8_lossy(&verbose.stdout);
            assert!(
                verbose.status.success(),
                "mariadb-binlog --verbose --table={table} on {}: {}",
                path.display(),
                String::from_utf8_lossy(&verbose.stderr)
            );
            assert!(printed.contains("### INSERT INTO `") && printed.contains(&format!("`.`{table}`")), "{table}: rows printed");
        }
    }
}

/// python-mysql-replication's rows of `database`, as (table, kind, before
/// values, after values) with every column of the table in order: the
/// library gives a column missing from an image as None, like NULL, and
/// names the columns `UNKNOWN_COL<n>` when the Table_map has no names
/// (`named`: whether it has).
fn python_rows(server: &ServerProcess, database: &str, named: bool) -> Vec<(String, String, Vec<JsonValue>, Vec<JsonValue>)> {
    let first = server.binlog_files()[0].file_name().unwrap().to_string_lossy().to_string();
    let output = Command::new("python3")
        .arg(python_script("read_rows.py"))
        .args([&server.port.to_string(), "position", &first, "4"])
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_rows.py: {}", String::from_utf8_lossy(&output.stderr));
    let mut seen = Vec::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let line: JsonValue = serde_json::from_str(line).unwrap();
        if line.get("schema").and_then(JsonValue::as_str) != Some(database) {
            continue;
        }
        let (table, kind) = (line["table"].as_str().unwrap().to_owned(), line["event"].as_str().unwrap().to_owned());
        let values = |image: &JsonValue| -> Vec<JsonValue> {
            let image = image.as_object().unwrap();
            let names = column_names(&table);
            assert_eq!(image.len(), names.len(), "a value per column: {image:?}");
            (0..names.len())
                .map(|i| if named { names[i].to_string() } else { format!("UNKNOWN_COL{i}") })
                .map(|name| image.get(&name).unwrap_or_else(|| panic!("column {name} in {image:?}")).clone())
                .collect()
        };
        for row in line["rows"].as_array().unwrap() {
            let (before, after) = match kind.as_str() {
                "update" => (values(&row["before"]), values(&row["after"])),
                "write" => (Vec::new(), values(row)),
                _ => (values(row), Vec::new()),
            };
            seen.push((table.clone(), kind.clone(), before, after));
        }
    }
    seen
}

/// A logged image as python-mysql-replication returns it: a value per
/// column, None (JSON null) where the image lacks the column or it is NULL.
fn python_image(image: &[(usize, Cell)], column_count: usize, kind_has_image: bool) -> Vec<JsonValue> {
    if !kind_has_image {
        return Vec::new();
    }
    (0..column_count)
        .map(|column| match image.iter().find(|(c, _)| *c == column).map(|(_, value)| value.as_str()) {
            None | Some("NULL") => JsonValue::Null,
            Some(value) => match value.parse::<i64>() {
                Ok(number) => JsonValue::from(number),
                Err(_) if value.starts_with(['{', '[']) => serde_json::from_str(value).unwrap(),
                Err(_) if value.starts_with("0x") => JsonValue::from(
                    String::from_utf8_lossy(
                        &(2..value.len()).step_by(2).map(|i| u8::from_str_radix(&value[i..i + 2], 16).unwrap()).collect::<Vec<_>>(),
                    )
                    .into_owned(),
                ),
                Err(_) => JsonValue::from(value),
            },
        })
        .collect()
}

fn start_replica(source: &ServerProcess) -> ServerProcess {
    let replica = ServerProcess::start_with(&["--server-id=2"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='{REPL_PASSWORD}',
                 SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=1;
             START REPLICA",
            source.port
        ),
    );
    replica
}

fn gtid_executed(server: &ServerProcess) -> String {
    server.query(None, "SELECT @@global.gtid_executed").trim().replace("\\n", "")
}

fn wait_caught_up(source: &ServerProcess, replica: &ServerProcess) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let wanted = gtid_executed(source);
    while !wanted.split(',').all(|part| gtid_executed(replica).split(',').any(|ours| ours == part)) {
        let status = replica.query(None, "SHOW REPLICA STATUS\\G");
        let error = status.lines().find(|line| line.trim_start().starts_with("Last_SQL_Error:")).unwrap_or_default().to_string();
        assert!(error.trim_end().ends_with("Last_SQL_Error:"), "the applier stopped: {error}");
        assert!(Instant::now() < deadline, "replica at {}, source at {wanted}: {status}", gtid_executed(replica));
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn contents(server: &ServerProcess, database: &str) -> Vec<String> {
    ["k", "j", "u"]
        .iter()
        .flat_map(|table| {
            let rows = server.query(None, &format!("SELECT * FROM `{database}`.{table} ORDER BY 1"));
            rows.lines().map(|line| format!("{table}: {line}")).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_row_image_and_metadata_setting_logs_what_mysql_logs_and_every_reader_applies_it() {
    let source = ServerProcess::start();
    source.query(None, &format!("CREATE USER 'repl'@'%' IDENTIFIED BY '{REPL_PASSWORD}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'"));
    let replica = start_replica(&source);
    let databases: Vec<(String, &str, &str)> = IMAGES
        .iter()
        .flat_map(|image| METADATA.iter().map(move |metadata| (format!("r_{}_{}", image, metadata).to_lowercase(), *image, *metadata)))
        .collect();
    for (database, image, metadata) in &databases {
        source.query(None, &format!("CREATE DATABASE {database}; USE {database}; {TABLES}"));
        // The metadata is global; the image is this session's.
        source.query(
            Some(database),
            &format!("SET GLOBAL binlog_row_metadata = '{metadata}'; SET SESSION binlog_row_image = '{image}'; {}", STATEMENTS.join("; ")),
        );
    }
    source.query(None, "SET GLOBAL binlog_row_metadata = FULL");
    wait_caught_up(&source, &replica);

    let files = source.binlog_files();
    mariadb_binlog_reads_the_files(&files, &["k", "u"]);
    for (database, image, metadata) in &databases {
        let decoded = decode(&files, database);
        assert_eq!(decoded.rows, expected_rows(image), "mysql_common, {database}");
        let (k_metadata, u_metadata): (Vec<&str>, Vec<&str>) = match *metadata {
            "FULL" => (
                vec!["SIGNEDNESS", "DEFAULT_CHARSET", "COLUMN_NAME", "SIMPLE_PRIMARY_KEY", "COLUMN_VISIBILITY"],
                vec!["SIGNEDNESS", "DEFAULT_CHARSET", "COLUMN_NAME", "COLUMN_VISIBILITY"],
            ),
            _ => (vec!["SIGNEDNESS", "DEFAULT_CHARSET"], vec!["SIGNEDNESS", "DEFAULT_CHARSET"]),
        };
        assert_eq!(decoded.metadata["k"], k_metadata, "{database}");
        // j has no character column: no charset field.
        let j_metadata: Vec<&str> = k_metadata.iter().copied().filter(|kind| *kind != "DEFAULT_CHARSET").collect();
        assert_eq!(decoded.metadata["j"], j_metadata, "{database}");
        assert_eq!(decoded.metadata["u"], u_metadata, "{database}");
        assert!(decoded.rows_queries.is_empty(), "binlog_rows_query_log_events is OFF");

        // python-mysql-replication: with MINIMAL metadata it has no column
        // names in the Table_map and asks INFORMATION_SCHEMA (or names them
        // UNKNOWN_COLn); the values come in column order either way.
        let python = python_rows(&source, database, *metadata == "FULL");
        let expected: Vec<(String, String, Vec<JsonValue>, Vec<JsonValue>)> = expected_rows(image)
            .iter()
            .map(|logged| {
                let (count, ..) = shape(&logged.table);
                (
                    logged.table.clone(),
                    logged.kind.to_string(),
                    python_image(&logged.before, count, logged.kind != "write"),
                    python_image(&logged.after, count, logged.kind != "delete"),
                )
            })
            .collect();
        assert_eq!(python, expected, "python-mysql-replication, {database}");

        assert_eq!(contents(&replica, database), contents(&source, database), "the binlogd replica applied {database}");
        assert!(!contents(&source, database).is_empty());
    }
}

#[test]
fn rows_query_events_carry_each_statement_before_its_table_map() {
    let source = ServerProcess::start();
    let insert = "INSERT INTO t VALUES (1, 'a'), (2, 'b')";
    let update = "UPDATE t SET v = 'c' WHERE id = 2";
    source.query(
        None,
        &format!(
            "CREATE DATABASE q; USE q; CREATE TABLE t (id INT NOT NULL, v VARCHAR(10), PRIMARY KEY (id));
             SET SESSION binlog_rows_query_log_events = ON; {insert};
             BEGIN; {update}; DELETE FROM t WHERE id = 1; COMMIT;
             SET SESSION binlog_rows_query_log_events = OFF; DELETE FROM t"
        ),
    );
    let decoded = decode(&source.binlog_files(), "q");
    let expected: Vec<(String, bool)> =
        [insert, update, "DELETE FROM t WHERE id = 1"].iter().map(|query| (query.to_string(), true)).collect();
    assert_eq!(decoded.rows_queries, expected, "one ignorable Rows_query per statement, none once OFF");
    assert_eq!(decoded.rows.len(), 5);
    mariadb_binlog_reads_the_files(&source.binlog_files(), &["t"]);
    // MariaDB has its own Annotate_rows instead: it skips MySQL's, as the
    // ignorable flag lets it.
    let verbose = Command::new("mariadb-binlog").args(["-vv", "--table=t"]).arg(&source.binlog_files()[0]).output().unwrap();
    let printed = String::from_utf8_lossy(&verbose.stdout);
    assert_eq!(printed.matches("# Ignorable event type 29 (MySQL Rows_query)").count(), 3, "{printed}");
}

#[test]
fn binlog_variables_have_mysqls_scopes_values_and_errors() {
    let server = ServerProcess::start();
    let error = |sql: &str| server.error(None, sql);
    assert!(error("SET binlog_format = 'STATEMENT'").contains("ERROR 1231 (42000)"), "binlogd logs rows only");
    assert!(error("SET GLOBAL binlog_format = MIXED").contains("Variable 'binlog_format' can't be set to the value of 'MIXED'"));
    assert!(error("SET binlog_row_image = 'PARTIAL'").contains("ERROR 1231 (42000)"));
    assert!(
        error("SET binlog_row_metadata = 'FULL'").contains("ERROR 1229 (HY000)")
            && error("SET binlog_row_metadata = 'FULL'").contains("is a GLOBAL variable and should be set with SET GLOBAL")
    );
    assert!(error("SET GLOBAL binlog_row_metadata = 'NONE'").contains("ERROR 1231 (42000)"));
    assert!(error("SELECT @@session.binlog_row_metadata").contains("ERROR 1238 (HY000)"));
    assert!(error("SET GLOBAL log_bin_basename = '/tmp/x'").contains("Variable 'log_bin_basename' is a read only variable"));
    assert!(error("SET GLOBAL binlog_row_event_max_size = 1024").contains("ERROR 1238 (HY000)"));
    assert!(error("SET binlog_row_value_options = 'PARTIAL'").contains("ERROR 1231 (42000)"));

    server.query(None, "CREATE USER 'plain'@'%'; GRANT ALL ON test.* TO 'plain'@'%'");
    let refused = server.error_as("plain", "", None, "SET SESSION binlog_row_image = 'MINIMAL'");
    assert!(
        refused.contains("Access denied; you need (at least one of) the SUPER, SYSTEM_VARIABLES_ADMIN or SESSION_VARIABLES_ADMIN privilege(s) for this operation"),
        "{refused}"
    );
    let refused = server.error_as("plain", "", None, "SET GLOBAL binlog_rows_query_log_events = ON");
    assert!(refused.contains("ERROR 1227 (42000)"), "{refused}");

    assert_eq!(
        server.query(None, "SET binlog_format = 'row'; SET binlog_row_image = minimal; SET binlog_rows_query_log_events = 1; SELECT @@binlog_format, @@session.binlog_row_image, @@global.binlog_row_image, @@binlog_rows_query_log_events"),
        "ROW\tMINIMAL\tFULL\t1\n"
    );
    server.query(None, "SET GLOBAL binlog_row_image = NOBLOB; SET GLOBAL binlog_row_metadata = MINIMAL");
    assert_eq!(server.query(None, "SELECT @@binlog_row_image, @@global.binlog_row_metadata"), "NOBLOB\tMINIMAL\n");
    server.query(None, "SET GLOBAL binlog_row_image = FULL; SET GLOBAL binlog_row_metadata = FULL");

    let variables: BTreeMap<String, String> =
        ["SHOW VARIABLES LIKE '%binlog%'", "SHOW VARIABLES LIKE 'log_%'", "SHOW VARIABLES LIKE 'gtid%'", "SHOW VARIABLES LIKE '%gtid%'"]
            .iter()
            .flat_map(|sql| server.query(None, sql).lines().map(str::to_string).collect::<Vec<_>>())
            .filter_map(|line| line.split_once('\t').map(|(name, value)| (name.to_string(), value.to_string())))
            .collect();
    let binlog_dir = server.binlog_files()[0].parent().unwrap().to_path_buf();
    let expected = [
        ("binlog_format", "ROW".to_string()),
        ("binlog_row_image", "FULL".into()),
        ("binlog_row_metadata", "FULL".into()),
        ("binlog_rows_query_log_events", "OFF".into()),
        ("binlog_row_value_options", "".into()),
        ("binlog_row_event_max_size", "8192".into()),
        ("binlog_transaction_compression", "OFF".into()),
        ("binlog_checksum", "CRC32".into()),
        ("binlog_gtid_simple_recovery", "ON".into()),
        ("binlog_expire_logs_seconds", "2592000".into()),
        ("log_bin", "ON".into()),
        ("log_bin_basename", binlog_dir.join("binlog").display().to_string()),
        ("log_bin_index", binlog_dir.join("binlog.index").display().to_string()),
        ("log_replica_updates", "ON".into()),
        ("gtid_mode", "ON".into()),
        ("enforce_gtid_consistency", "ON".into()),
    ];
    for (name, value) in expected {
        assert_eq!(variables.get(name), Some(&value), "{name}: {variables:#?}");
    }
    for name in ["binlog_cache_size", "max_binlog_cache_size", "binlog_group_commit_sync_delay", "max_binlog_size"] {
        let value = server.query(None, &format!("SELECT @@global.{name}"));
        assert!(value.trim().parse::<u64>().is_ok(), "{name} = {value}");
    }
    assert!(server.binlog_files()[0].parent().unwrap().join("binlog.index").exists(), "log_bin_index names the real index");
}

/// MariaDB applies MySQL's partial images itself (it has no decoder for
/// MySQL's binary JSON, so the JSON table stays out).
#[test]
fn a_mariadb_replica_applies_minimal_and_noblob_images() {
    let source = ServerProcess::start();
    let replica = MariaDb::start(&["--server-id=2", "--skip-log-bin"]);
    replica.query(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', MASTER_PASSWORD='',
             MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4, MASTER_HEARTBEAT_PERIOD=1;
         START SLAVE;",
        source.port
    ));
    let without_json: Vec<&str> = STATEMENTS.iter().copied().filter(|statement| !statement.contains(" j ")).collect();
    for image in ["MINIMAL", "NOBLOB"] {
        let database = format!("m_{}", image.to_lowercase());
        source.query(
            None,
            &format!(
                "CREATE DATABASE {database}; USE {database};
                 CREATE TABLE k (id INT NOT NULL, name VARCHAR(20), body TEXT, bin BLOB, n INT, PRIMARY KEY (id));
                 CREATE TABLE u (a INT, note TEXT, n INT);
                 SET SESSION binlog_row_image = {image}; {}",
                without_json.join("; ")
            ),
        );
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = source.query(None, "SHOW MASTER STATUS");
        let mut fields = status.split('\t');
        let (file, position) = (fields.next().unwrap().to_string(), fields.next().unwrap().to_string());
        if (replica.status("Relay_Master_Log_File"), replica.status("Exec_Master_Log_Pos")) == (file, position) {
            break;
        }
        let error = replica.status("Last_SQL_Error");
        assert!(error.is_empty() && Instant::now() < deadline, "the MariaDB replica: {error}\n{}", replica.error_log());
        std::thread::sleep(Duration::from_millis(200));
    }
    for image in ["minimal", "noblob"] {
        for table in ["k", "u"] {
            let select = format!("SELECT * FROM m_{image}.{table} ORDER BY 1");
            let rows = source.query(None, &select);
            assert!(!rows.is_empty(), "{select}");
            assert_eq!(replica.query(&select), rows, "{select}");
        }
    }
}
