//! `binlog_row_value_options = PARTIAL_JSON` against a served binlogd: the
//! variable as MySQL has it, and updates logged as Partial_update_rows
//! events whose JSON columns are diffs where MySQL writes diffs. The events
//! are decoded by mysql_common (the independent reader), and its diffs,
//! applied to the before images it decodes, give the documents the table
//! holds; python-mysql-replication reads the same; a binlogd replica
//! applies the diffs to its own rows. `mariadb-binlog` knows the event as
//! MySQL 8.0's (and refuses it, as it does in mysqld's files).

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{EventData, RowsEventData};
use mysql_common::binlog::jsondiff::JsonDiffOperation;
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use serde_json::{json, Value as JsonValue};
use support::replica::replica_status;
use support::{python_script, Binlogd, ServerProcess};
use testkit::raw_client::{MValue, RawClient};

/// A JSON column of an after image as mysql_common decodes it.
#[derive(Debug, Clone, PartialEq)]
enum After {
    /// The whole value (`None`: SQL NULL).
    Full(Option<JsonValue>),
    /// (operation, path, value) per diff.
    Diffs(Vec<(JsonDiffOperation, String, Option<JsonValue>)>),
    /// Not in the image.
    Absent,
}

/// One updated row of table `t`: the event's type name, the id, and per
/// JSON column (j, j2) the before document and the after image's value.
#[derive(Debug, Clone, PartialEq)]
struct Update {
    event: &'static str,
    id: i64,
    before: [Option<JsonValue>; 2],
    after: [After; 2],
}

fn document(value: &BinlogValue<'_>) -> Option<JsonValue> {
    match value {
        BinlogValue::Value(MValue::NULL) => None,
        BinlogValue::Jsonb(jsonb) => Some(JsonValue::from(jsonb.clone().parse().expect("mysql_common parses the jsonb"))),
        other => panic!("a JSON column decoded as {other:?}"),
    }
}

fn after_value(value: &BinlogValue<'_>) -> After {
    match value {
        BinlogValue::JsonDiff(diffs) => After::Diffs(
            diffs
                .iter()
                .map(|diff| {
                    let value = diff.value().map(|value| JsonValue::from(value.clone().parse().expect("the diff's value parses")));
                    (diff.operation(), diff.path_str().into_owned(), value)
                })
                .collect(),
        ),
        other => After::Full(document(other)),
    }
}

/// Every updated row of table `t` in the files, in order.
fn updates(files: &[PathBuf]) -> Vec<Update> {
    let mut seen = Vec::new();
    for path in files {
        let bytes = std::fs::read(path).unwrap();
        let mut binlog = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).expect("mysql_common reads the file");
        while let Some(event) = binlog.next() {
            let event = event.expect("mysql_common reads every event");
            let Some(EventData::RowsEvent(rows)) = event.read_data().expect("mysql_common decodes the event") else { continue };
            let event = match rows {
                RowsEventData::UpdateRowsEvent(_) => "Update_rows",
                RowsEventData::PartialUpdateRowsEvent(_) => "Partial_update_rows",
                _ => continue,
            };
            let table_map = binlog.reader().get_tme(rows.table_id()).expect("table map precedes rows");
            if table_map.table_name() != "t" {
                continue;
            }
            // An image holds the columns its bitmap marks (MINIMAL: fewer).
            let (before_columns, after_columns) = (present(rows.columns_before_image()), present(rows.columns_after_image()));
            for row in rows.rows(table_map) {
                let (before, after) = row.expect("mysql_common decodes the row");
                let (before, after) = (before.unwrap().unwrap(), after.unwrap().unwrap());
                let at = |columns: &[usize], column: usize| columns.iter().position(|&c| c == column);
                let id = match &before[0] {
                    BinlogValue::Value(MValue::Int(id)) => *id,
                    other => panic!("id {other:?}"),
                };
                let before_value = |column| at(&before_columns, column).and_then(|k| document(&before[k]));
                let after_value = |column| at(&after_columns, column).map_or(After::Absent, |k| after_value(&after[k]));
                seen.push(Update { event, id, before: [before_value(1), before_value(2)], after: [after_value(1), after_value(2)] });
            }
        }
    }
    seen
}

/// The columns a rows event's image bitmap marks.
fn present<Bit: std::ops::Deref<Target = bool>>(bits: Option<impl IntoIterator<Item = Bit>>) -> Vec<usize> {
    bits.map_or_else(Vec::new, |bits| bits.into_iter().enumerate().filter(|(_, bit)| **bit).map(|(column, _)| column).collect())
}

/// The index a path leg names in an array of `length` (`[n]`, `[last]`,
/// `[last-n]`), if there is one.
fn array_index(leg: &str, length: usize) -> Option<usize> {
    match leg.strip_prefix("last") {
        Some(back) => length.checked_sub(1)?.checked_sub(back.trim_start_matches('-').parse().unwrap_or(0)),
        None => leg.parse().ok(),
    }
}

/// MySQL's `apply_json_diffs` for the paths these tests write (members
/// without quotes, array cells).
fn apply(document: &mut JsonValue, diffs: &[(JsonDiffOperation, String, Option<JsonValue>)]) {
    for (operation, path, value) in diffs {
        let mut legs: Vec<&str> = path.strip_prefix('$').unwrap().split(['.', '[']).filter(|leg| !leg.is_empty()).collect();
        let last = legs.pop().expect("no diff names the whole document");
        let mut parent = &mut *document;
        for leg in legs {
            parent = match leg.strip_suffix(']') {
                Some(cell) => {
                    let elements = parent.as_array_mut().unwrap();
                    let at = array_index(cell, elements.len()).unwrap();
                    &mut elements[at]
                }
                None => &mut parent[leg],
            };
        }
        match (operation, last.strip_suffix(']'), parent) {
            (JsonDiffOperation::REMOVE, None, JsonValue::Object(members)) => {
                members.remove(last).expect("removes a member that is there");
            }
            (JsonDiffOperation::REMOVE, Some(cell), JsonValue::Array(elements)) => {
                elements.remove(array_index(cell, elements.len()).unwrap());
            }
            (JsonDiffOperation::REPLACE | JsonDiffOperation::INSERT, None, JsonValue::Object(members)) => {
                members.insert(last.to_string(), value.clone().unwrap());
            }
            (JsonDiffOperation::REPLACE, Some(cell), JsonValue::Array(elements)) => {
                let at = array_index(cell, elements.len()).unwrap();
                elements[at] = value.clone().unwrap();
            }
            (JsonDiffOperation::INSERT, Some(cell), JsonValue::Array(elements)) => {
                let at = array_index(cell, elements.len()).unwrap_or(elements.len()).min(elements.len());
                elements.insert(at, value.clone().unwrap());
            }
            (operation, _, parent) => panic!("{operation:?} {path} on {parent}"),
        }
    }
}

/// python-mysql-replication's updated rows of table t: [kind, id, j, j2]
/// of each after image.
fn python_updates(server: &Binlogd) -> Vec<JsonValue> {
    let first = server.binlog_files()[0].clone();
    let output = Command::new("python3")
        .arg(python_script("read_rows.py"))
        .args([&server.port.to_string(), "position", &first, "4"])
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_rows.py: {}", String::from_utf8_lossy(&output.stderr));
    let mut seen = Vec::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let line: JsonValue = serde_json::from_str(line).unwrap();
        let kind = line.get("event").and_then(JsonValue::as_str).unwrap_or_default();
        if line.get("table").and_then(JsonValue::as_str) != Some("t") || !kind.ends_with("update") {
            continue;
        }
        for row in line["rows"].as_array().unwrap() {
            let after = &row["after"];
            seen.push(json!([kind, after["id"], after["j"], after["j2"]]));
        }
    }
    seen
}

fn parsed(text: &str) -> JsonValue {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{text:?}: {error}"))
}

/// The table's documents (j, j2) of row `id`.
fn stored(client: &mut RawClient, id: i64) -> [Option<JsonValue>; 2] {
    let rows = client.query(&format!("SELECT j, j2 FROM t WHERE id = {id}")).unwrap().text_rows();
    [rows[0][0].as_deref().map(parsed), rows[0][1].as_deref().map(parsed)]
}

/// A text long enough that a diff of a document holding it is smaller
/// than the document.
const FILLER: &str = "a text that makes the document longer than its diffs";

#[test]
fn binlog_row_value_options_is_a_global_and_session_variable_with_mysqls_values() {
    let server = Binlogd::start(&[]);
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    assert_eq!(client.value("SELECT CONCAT('[', @@global.binlog_row_value_options, '|', @@session.binlog_row_value_options, ']')"), "[|]");
    client.query("SET SESSION binlog_row_value_options = 'partial_json'").unwrap();
    assert_eq!(client.value("SELECT @@session.binlog_row_value_options"), "PARTIAL_JSON");
    assert_eq!(client.value("SELECT CONCAT('[', @@global.binlog_row_value_options, ']')"), "[]");
    client.query("SET binlog_row_value_options = ''").unwrap();
    assert_eq!(client.value("SELECT CONCAT('[', @@binlog_row_value_options, ']')"), "[]");

    let error = client.query("SET binlog_row_value_options = 'PARTIAL'").unwrap_err();
    assert_eq!(
        (error.code, error.state.as_str(), error.message.as_str()),
        (1231, "42000", "Variable 'binlog_row_value_options' can't be set to the value of 'PARTIAL'")
    );
    let error = client.query("SET GLOBAL binlog_row_value_options = 'JSON'").unwrap_err();
    assert_eq!(error.code, 1231);

    client.query("SET GLOBAL binlog_row_value_options = PARTIAL_JSON").unwrap();
    let mut later = RawClient::login_to(server.port, "root", "", None).unwrap();
    assert_eq!(later.value("SELECT @@session.binlog_row_value_options"), "PARTIAL_JSON", "a new session starts from the global");
    assert_eq!(server.query("SHOW GLOBAL VARIABLES LIKE 'binlog_row_value_options'"), "binlog_row_value_options\tPARTIAL_JSON\n");
    client.query("SET GLOBAL binlog_row_value_options = DEFAULT").unwrap();
    assert_eq!(client.value("SELECT CONCAT('[', @@global.binlog_row_value_options, ']')"), "[]");
}

#[test]
fn json_set_and_json_remove_are_logged_as_diffs_that_rebuild_the_new_documents() {
    let server = Binlogd::start(&[]);
    server.query(&format!(
        r#"CREATE DATABASE jt; CREATE TABLE jt.t (id INT NOT NULL, j JSON, j2 JSON, n INT, PRIMARY KEY (id));
           INSERT INTO jt.t VALUES (1, '{{"a": 1, "f": "{FILLER}"}}', '[10, 20, "{FILLER}"]', 0),
                                   (2, '{{"a": 2, "f": "{FILLER}"}}', NULL, 0),
                                   (3, '[1]', '{{"f": "{FILLER}"}}', 0)"#
    ));
    let mut client = RawClient::login_to(server.port, "root", "", Some("jt")).unwrap();
    let before: Vec<[Option<JsonValue>; 2]> = (1..=3).map(|id| stored(&mut client, id)).collect();
    let first = &before[0];

    client.query("SET binlog_row_value_options = PARTIAL_JSON").unwrap();
    // The brief's statement: a replace and a remove, each a diff.
    client.query("UPDATE t SET j = JSON_SET(j, '$.a', 5), j2 = JSON_REMOVE(j2, '$[0]') WHERE id = 1").unwrap();
    // A literal: the whole document, in a Partial_update_rows event.
    client.query(r#"UPDATE t SET j = '{"x": 1}' WHERE id = 2"#).unwrap();
    // Nested calls on the column, over every row: an insert into an
    // object; a member of an array is nothing, and an unchanged column is
    // no diffs.
    client.query("UPDATE t SET j = JSON_SET(JSON_REMOVE(j, '$.nothing'), '$.c', 'new'), n = n + 1").unwrap();
    // A diff no smaller than the document: the document.
    client.query("UPDATE t SET j = JSON_REPLACE(j, '$[0]', 2) WHERE id = 3").unwrap();
    let after_partial: Vec<[Option<JsonValue>; 2]> = (1..=3).map(|id| stored(&mut client, id)).collect();
    // Back to '': whole values in an ordinary Update_rows event.
    client.query("SET binlog_row_value_options = ''").unwrap();
    client.query("UPDATE t SET j = JSON_SET(j, '$.a', 6) WHERE id = 1").unwrap();

    let diff = |operation, path: &str, value: Option<JsonValue>| (operation, path.to_string(), value);
    let filler = json!(FILLER);
    let expected = vec![
        Update {
            event: "Partial_update_rows",
            id: 1,
            before: [first[0].clone(), first[1].clone()],
            after: [
                After::Diffs(vec![diff(JsonDiffOperation::REPLACE, "$.a", Some(json!(5)))]),
                After::Diffs(vec![diff(JsonDiffOperation::REMOVE, "$[0]", None)]),
            ],
        },
        Update {
            event: "Partial_update_rows",
            id: 2,
            before: [before[1][0].clone(), None],
            after: [After::Full(Some(json!({"x": 1}))), After::Full(None)],
        },
        Update {
            event: "Partial_update_rows",
            id: 1,
            before: [Some(json!({"a": 5, "f": filler})), Some(json!([20, filler]))],
            after: [After::Diffs(vec![diff(JsonDiffOperation::INSERT, "$.c", Some(json!("new")))]), After::Diffs(vec![])],
        },
        Update {
            event: "Partial_update_rows",
            id: 2,
            before: [Some(json!({"x": 1})), None],
            after: [After::Diffs(vec![diff(JsonDiffOperation::INSERT, "$.c", Some(json!("new")))]), After::Full(None)],
        },
        Update {
            event: "Partial_update_rows",
            id: 3,
            before: [Some(json!([1])), Some(json!({"f": filler}))],
            after: [After::Diffs(vec![]), After::Diffs(vec![])],
        },
        Update {
            event: "Partial_update_rows",
            id: 3,
            before: [Some(json!([1])), Some(json!({"f": filler}))],
            after: [After::Full(Some(json!([2]))), After::Diffs(vec![])],
        },
        Update {
            event: "Update_rows",
            id: 1,
            before: [after_partial[0][0].clone(), after_partial[0][1].clone()],
            after: [After::Full(Some(json!({"a": 6, "c": "new", "f": filler}))), After::Full(Some(json!([20, filler])))],
        },
    ];
    let files: Vec<PathBuf> = server.binlog_files().iter().map(|name| server.binlog_dir().join(name)).collect();
    let decoded = updates(&files);
    assert_eq!(decoded, expected);

    // Each partial row's diffs, applied to its before image, give what the
    // table held after the statement.
    let mut documents = before.clone();
    for update in decoded.iter().filter(|update| update.event == "Partial_update_rows") {
        let row = &mut documents[update.id as usize - 1];
        for (column, after) in update.after.iter().enumerate() {
            assert_eq!(row[column], update.before[column], "row {} column {column}: the before image", update.id);
            match after {
                After::Full(value) => row[column] = value.clone(),
                After::Diffs(diffs) => apply(row[column].as_mut().expect("diffs of a document"), diffs),
                After::Absent => panic!("FULL images hold every column"),
            }
        }
    }
    assert_eq!(documents, after_partial);
    assert_eq!(after_partial[0][0], Some(json!({"a": 5, "c": "new", "f": filler})));
    assert_eq!(after_partial[2][0], Some(json!([2])));

    // python-mysql-replication reads the same rows: whole values, and
    // diffs where mysql_common found them (no diffs it reads as None).
    let as_python = |after: &After| match after {
        After::Full(value) => value.clone().unwrap_or(JsonValue::Null),
        After::Diffs(diffs) if diffs.is_empty() => JsonValue::Null,
        After::Absent => panic!("FULL images hold every column"),
        After::Diffs(diffs) => {
            json!({"diffs": diffs.iter().map(|(operation, path, value)| json!([format!("{operation:?}"), path, value])).collect::<Vec<_>>()})
        }
    };
    let expected_python: Vec<JsonValue> = decoded
        .iter()
        .map(|update| {
            json!([
                if update.event == "Update_rows" { "update" } else { "partial_update" },
                update.id,
                as_python(&update.after[0]),
                as_python(&update.after[1])
            ])
        })
        .collect();
    assert_eq!(python_updates(&server), expected_python);

    // binlogd's own inspector prints the diffs as mysqlbinlog -v does.
    let text = support::inspect(&["--verify"], &files[0]);
    for expected in [
        "\tUpdate_rows_partial: table id",
        "###   j=JSON_REPLACE(j, '$.a', 5) /* JSON meta=4 nullable=1 is_null=0 */\n",
        "###   j2=JSON_REMOVE(j2, '$[0]') /* JSON meta=4 nullable=1 is_null=0 */\n",
    ] {
        assert!(text.contains(expected), "inspect lacks {expected:?}:\n{text}");
    }

    // SHOW BINLOG EVENTS names the type as mysqld does.
    let events = server.query("SHOW BINLOG EVENTS");
    assert_eq!(events.matches("\tUpdate_rows_partial\t").count(), 4, "{events}");
    // MariaDB's reader knows the event for MySQL 8.0's and refuses it, as
    // it refuses it in a file mysqld wrote.
    for name in server.binlog_files() {
        let output = Command::new("mariadb-binlog").arg(server.binlog_dir().join(name)).output().expect("run mariadb-binlog");
        let errors = String::from_utf8_lossy(&output.stderr);
        assert!(errors.contains("Found incompatible MySQL 8.0 PARTIAL_UPDATE_ROWS_EVENT event"), "mariadb-binlog: {errors}");
    }
}

#[test]
fn every_row_image_logs_the_json_column_as_diffs_and_its_before_image_as_the_image_says() {
    let server = Binlogd::start(&[]);
    let document = format!(r#"{{"a": 1, "f": "{FILLER}"}}"#);
    server.query(&format!("CREATE DATABASE jt; CREATE TABLE jt.t (id INT NOT NULL, j JSON, j2 JSON, PRIMARY KEY (id)); INSERT INTO jt.t VALUES (1, '{document}', '[]')"));
    let mut client = RawClient::login_to(server.port, "root", "", Some("jt")).unwrap();
    client.query("SET binlog_row_value_options = PARTIAL_JSON").unwrap();
    for (value, image) in [(2, "FULL"), (3, "MINIMAL"), (4, "NOBLOB")] {
        client.query(&format!("SET binlog_row_image = {image}")).unwrap();
        client.query(&format!("UPDATE t SET j = JSON_REPLACE(j, '$.a', {value})")).unwrap();
    }
    // Decoded raw: MINIMAL's images hold fewer columns than the table.
    let mut images = Vec::new();
    for name in server.binlog_files() {
        let bytes = std::fs::read(server.binlog_dir().join(name)).unwrap();
        let mut binlog = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).unwrap();
        while let Some(event) = binlog.next() {
            let event = event.unwrap();
            let Some(EventData::RowsEvent(RowsEventData::PartialUpdateRowsEvent(rows))) = event.read_data().unwrap() else { continue };
            let before_columns: Vec<bool> = rows.columns_before_image().iter().take(3).map(|bit| *bit).collect();
            let after_columns: Vec<bool> = rows.columns_after_image().iter().take(3).map(|bit| *bit).collect();
            let columns = (before_columns, after_columns);
            let table_map = binlog.reader().get_tme(rows.table_id()).unwrap();
            for row in rows.rows(table_map) {
                let (_, after) = row.unwrap();
                let after = after.unwrap().unwrap();
                let diffs: Vec<String> = after
                    .iter()
                    .filter_map(|value| match value {
                        BinlogValue::JsonDiff(diffs) => Some(
                            diffs.iter().map(|diff| format!("{:?} {}", diff.operation(), diff.path_str())).collect::<Vec<_>>().join(","),
                        ),
                        _ => None,
                    })
                    .collect();
                images.push((columns.clone(), diffs));
            }
        }
    }
    let all = vec![true, true, true];
    assert_eq!(
        images,
        [
            ((all.clone(), all.clone()), vec!["REPLACE $.a".to_string(), String::new()]),
            ((vec![true, false, false], vec![false, true, false]), vec!["REPLACE $.a".to_string()]),
            // JSON is not a BLOB to NOBLOB: both images keep it.
            ((all.clone(), all), vec!["REPLACE $.a".to_string(), String::new()]),
        ],
        "(before, after) columns and the diffs of each update"
    );
    assert_eq!(client.value("SELECT j->'$.a' FROM t"), "4");
}

fn gtid_executed(server: &ServerProcess) -> String {
    server.query(None, "SELECT @@global.gtid_executed").trim().replace("\\n", "")
}

/// The source keeps its binlog in the redo log (`binlog_storage_engine =
/// engine`): its events come from the same capture as in file mode.
#[test]
fn a_binlogd_replica_applies_the_diffs_to_its_own_documents() {
    let source = ServerProcess::start_with(&["--binlog-storage-engine=engine"]);
    source.query(
        None,
        &format!(
            r#"CREATE USER 'repl'@'%' IDENTIFIED BY 'pw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';
               CREATE DATABASE jt; CREATE TABLE jt.t (id INT NOT NULL, j JSON, j2 JSON, PRIMARY KEY (id));
               INSERT INTO jt.t VALUES (1, '{{"a": 1, "f": "{FILLER}", "list": [1, 2, 3]}}', '["{FILLER}", 1]'), (2, '{{"b": "{FILLER}"}}', NULL)"#
        ),
    );
    let replica = ServerProcess::start_with(&["--server-id=2"]);
    replica.query(
        None,
        &format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, SOURCE_USER='repl', SOURCE_PASSWORD='pw',
                 SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1; START REPLICA",
            source.port
        ),
    );
    source.query(
        Some("jt"),
        "SET binlog_row_value_options = PARTIAL_JSON;
         UPDATE t SET j = JSON_SET(j, '$.a', 5, '$.list[1]', 'two', '$.new', JSON_OBJECT('k', 1)), j2 = JSON_REMOVE(j2, '$[1]');
         UPDATE t SET j = JSON_REMOVE(JSON_REPLACE(j, '$.list[last]', 30), '$.list[0]') WHERE id = 1;
         SET binlog_row_image = MINIMAL;
         UPDATE t SET j = JSON_SET(j, '$.b', 'short') WHERE id = 2",
    );
    let events = source.query(None, "SHOW BINLOG EVENTS");
    assert_eq!(events.matches("\tUpdate_rows_partial\t").count(), 3, "{events}");
    let diffs = |after: &After| matches!(after, After::Diffs(diffs) if !diffs.is_empty());
    let logged = updates(&source.binlog_files());
    assert_eq!(logged.iter().filter(|update| update.after.iter().any(diffs)).count(), 4, "{logged:#?}");

    let deadline = Instant::now() + Duration::from_secs(120);
    let wanted = gtid_executed(&source);
    while !wanted.split(',').all(|part| gtid_executed(&replica).split(',').any(|ours| ours == part)) {
        let error = replica_status(&replica).get("Last_SQL_Error").cloned().unwrap_or_default();
        assert!(error.is_empty(), "the applier stopped: {error}");
        assert!(Instant::now() < deadline, "the replica did not catch up: {:#?}", replica_status(&replica));
        std::thread::sleep(Duration::from_millis(100));
    }
    let rows = "SELECT id, j, j2 FROM jt.t ORDER BY id";
    assert_eq!(replica.query(None, rows), source.query(None, rows));
    assert_eq!(
        parsed(source.query(None, "SELECT j FROM jt.t WHERE id = 1").trim()),
        json!({"a": 5, "f": FILLER, "list": ["two", 30], "new": {"k": 1}})
    );
}

/// `bytes` in base64 (the BINLOG statement's text).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let word = chunk.iter().enumerate().fold(0u32, |word, (k, &byte)| word | u32::from(byte) << (16 - 8 * k));
        for k in 0..4 {
            text.push(if k <= chunk.len() { ALPHABET[(word >> (18 - 6 * k) & 63) as usize] as char } else { '=' });
        }
    }
    text
}

/// The events of a binlog file, each with its header and checksum.
fn raw_events(path: &std::path::Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    let mut events = Vec::new();
    let mut at = 4;
    while at + 19 <= bytes.len() {
        let size = u32::from_le_bytes(bytes[at + 9..at + 13].try_into().unwrap()) as usize;
        events.push(bytes[at..at + size].to_vec());
        at += size;
    }
    events
}

/// The BINLOG statements MySQL's `mysqlbinlog` prints for the file
/// (`mariadb-binlog` refuses the event) replay the partial updates.
#[test]
fn binlog_statements_replay_partial_updates() {
    let setup = format!(
        r#"CREATE DATABASE jt; CREATE TABLE jt.t (id INT NOT NULL, j JSON, PRIMARY KEY (id));
           INSERT INTO jt.t VALUES (1, '{{"a": 1, "f": "{FILLER}"}}'), (2, '[1, 2, "{FILLER}"]')"#
    );
    let source = Binlogd::start(&[]);
    source.query(&setup);
    source.query("SET binlog_row_value_options = PARTIAL_JSON; UPDATE jt.t SET j = JSON_REMOVE(JSON_SET(j, '$.b', 2), '$[0]', '$.a')");
    let target = Binlogd::start(&[]);
    target.query(&setup);

    let file = source.binlog_dir().join(&source.binlog_files()[0]);
    let events = raw_events(&file);
    let format = &events[0];
    let partial: Vec<&Vec<u8>> = events.iter().filter(|event| event[4] == 39).collect();
    assert_eq!(partial.len(), 1);
    let at = events.iter().position(|event| event[4] == 39).unwrap();
    let table_map = &events[at - 1];
    assert_eq!(table_map[4], 19, "a Table_map before the rows");
    let statement = format!("BINLOG '{}'; BINLOG '{}{}'", base64(format), base64(table_map), base64(partial[0]));
    target.query(&statement);
    let rows = "SELECT id, j FROM jt.t ORDER BY id";
    assert_eq!(target.query(rows), source.query(rows));
    assert_eq!(
        parsed(target.query("SELECT j FROM jt.t WHERE id = 1").trim()),
        json!({"b": 2, "f": FILLER}),
        "the row holds the diffs' result"
    );
}
