//! The JSON column end to end against a served binlogd: documents of every
//! kind (NULL, each scalar width, empty and nested containers, 4-byte
//! UTF-8, one over 64 KiB whose binary form needs the large containers,
//! seeded random ones) inserted, updated and deleted; read back through the
//! text and the binary protocol as MySQL prints them; the binlog's row
//! events decoded by mysql_common's jsonb reader and python-mysql-replication
//! to the same documents, and read by `mariadb-binlog` (which has no decoder
//! for MySQL's binary JSON in `--verbose`). Bad input gets MySQL's errors
//! and changes nothing.

mod support;

use std::process::Command;

use mysql_common::binlog::value::BinlogValue;
use mysql_common::constants::{ColumnFlags, ColumnType};
use serde_json::Value as JsonValue;
use support::binlog_rows::{logged_rows, plain_text};
use support::{python_script, Binlogd};
use testkit::raw_client::{MValue, RawClient, Response};
use testkit::SeededRandom;

/// Documents with the text MySQL prints for them (`None`: SQL NULL).
fn fixed_documents() -> Vec<(Option<&'static str>, Option<&'static str>)> {
    vec![
        (None, None),
        (Some("null"), Some("null")),
        (Some("true"), Some("true")),
        (Some("false"), Some("false")),
        (Some("0"), Some("0")),
        (Some("-1"), Some("-1")),
        (Some("-32768"), Some("-32768")),
        (Some("65535"), Some("65535")),
        (Some("-2147483648"), Some("-2147483648")),
        (Some("4294967295"), Some("4294967295")),
        (Some("9223372036854775807"), Some("9223372036854775807")),
        (Some("-9223372036854775808"), Some("-9223372036854775808")),
        (Some("18446744073709551615"), Some("18446744073709551615")),
        (Some("1.5"), Some("1.5")),
        (Some("-0.25e-3"), Some("-0.00025")),
        (Some("1E100"), Some("1e100")),
        (Some("3.0"), Some("3.0")),
        (Some(r#""text""#), Some(r#""text""#)),
        (Some(r#""""#), Some(r#""""#)),
        (Some("{}"), Some("{}")),
        (Some("[]"), Some("[]")),
        (Some(r#"{"b":1,"a":[1,{"c":null,"aa":[[]]}],"":"e"}"#), Some(r#"{"": "e", "a": [1, {"c": null, "aa": [[]]}], "b": 1}"#)),
        (Some(r#"{"emoji":"😀 ü","😀":["𝄞",-7]}"#), Some(r#"{"😀": ["𝄞", -7], "emoji": "😀 ü"}"#)),
        (Some(r#"["tab\tquote\"back\\slash\u0001"]"#), Some(r#"["tab\tquote\"back\\slash\u0001"]"#)),
    ]
}

/// A document whose binary form passes 64 KiB: its containers are large.
fn large_document() -> String {
    let items: Vec<String> = (0..2500).map(|i| format!(r#"{{"id": {i}, "name": "item number {i} of the large document"}}"#)).collect();
    format!(r#"{{"items": [{}], "total": 2500}}"#, items.join(", "))
}

/// Random JSON documents from the seeded generator.
trait RandomDocument {
    fn document(&mut self, depth: u32) -> String;
}

impl RandomDocument for SeededRandom {
    /// A random document as JSON text (compact, keys in generation order).
    fn document(&mut self, depth: u32) -> String {
        let choice = if depth >= 3 { self.below(6) } else { self.below(8) };
        match choice {
            0 => "null".into(),
            1 => ["true", "false"][self.below(2) as usize].into(),
            2 => (self.next_u64() as i64 >> self.below(63)).to_string(),
            3 => (self.next_u64() >> self.below(64)).to_string(),
            // Doubles with short exact expansions, which every reader
            // rounds alike.
            4 => format!("{}", (self.below(1 << 20) as f64 - 524_288.0) / 64.0),
            5 => {
                let alphabet = ["a", "b", "é", "\\n", "\\\"", "😀", " ", "z"];
                let text: String = (0..self.below(12)).map(|_| alphabet[self.below(alphabet.len() as u64) as usize]).collect();
                format!("\"{text}\"")
            }
            6 => {
                let elements: Vec<String> = (0..self.below(5)).map(|_| self.document(depth + 1)).collect();
                format!("[{}]", elements.join(","))
            }
            _ => {
                let members: Vec<String> =
                    (0..self.below(5)).map(|i| format!("\"k{}{}\":{}", self.below(3), i, self.document(depth + 1))).collect();
                format!("{{{}}}", members.join(","))
            }
        }
    }
}

fn sql_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn parsed(text: &str) -> JsonValue {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{text:?} is not JSON: {e}"))
}

/// (id, document text or NULL) for every row the test writes.
fn documents() -> Vec<(i64, Option<String>)> {
    let mut rows: Vec<(i64, Option<String>)> =
        fixed_documents().into_iter().enumerate().map(|(id, (text, _))| (id as i64 + 1, text.map(str::to_owned))).collect();
    rows.push((100, Some(large_document())));
    let mut random = SeededRandom::new(0x9e37_79b9_7f4a_7c15);
    for id in 200..216 {
        rows.push((id, Some(random.document(0))));
    }
    rows
}

fn text_value(response: &Response) -> Vec<(i64, Option<String>)> {
    response.text_rows().into_iter().map(|row| (row[0].as_ref().unwrap().parse().unwrap(), row[1].clone())).collect()
}

/// The documents mysql_common decodes from the binlog's row events, per
/// event kind: (kind, id, document) with NULL as `None`.
fn binlog_documents(files: &[std::path::PathBuf]) -> Vec<(&'static str, i64, Option<JsonValue>)> {
    let document = |value: &BinlogValue| match value {
        BinlogValue::Value(MValue::NULL) => None,
        BinlogValue::Jsonb(jsonb) => Some(JsonValue::from(jsonb.clone().parse().expect("mysql_common parses the jsonb"))),
        other => panic!("JSON column decoded as {other:?}"),
    };
    logged_rows(files)
        .iter()
        .filter(|row| row.table == "t")
        .map(|row| {
            let values = row.image();
            let id = plain_text(&values[0]).expect("an id").parse().unwrap();
            (row.kind, id, document(&values[1]))
        })
        .collect()
}

/// MariaDB's reader reads every event of the file (exit 0); with
/// `--verbose` it stops at the first JSON value, since MariaDB has no
/// decoder for MySQL's binary JSON (type 245) and says so, as it does for
/// a file MySQL wrote.
fn mariadb_binlog_reads_the_files(files: &[std::path::PathBuf]) {
    for path in files {
        let output = Command::new("mariadb-binlog").arg(path).output().expect("run mariadb-binlog (mariadb-client)");
        let errors = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success() && !errors.contains("ERROR"), "mariadb-binlog on {}: {errors}", path.display());
        let verbose = Command::new("mariadb-binlog").arg("--verbose").arg(path).output().unwrap();
        let errors = String::from_utf8_lossy(&verbose.stderr);
        assert!(
            verbose.status.success() || errors.contains("Don't know how to handle column type: 245"),
            "mariadb-binlog --verbose on {}: {errors}",
            path.display()
        );
    }
}

/// python-mysql-replication's rows for table t: (kind, id, document).
fn python_documents(server: &Binlogd) -> Vec<(String, i64, Option<JsonValue>)> {
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
        if line.get("table").and_then(JsonValue::as_str) != Some("t") {
            continue;
        }
        let kind = line["event"].as_str().unwrap().to_owned();
        for row in line["rows"].as_array().unwrap() {
            let image = if kind == "update" { &row["after"] } else { row };
            let document = match &image["j"] {
                JsonValue::Null => None,
                other => Some(other.clone()),
            };
            seen.push((kind.clone(), image["id"].as_i64().unwrap(), document));
        }
    }
    seen
}

#[test]
fn json_documents_round_trip_through_both_protocols_and_every_binlog_reader() {
    let server = Binlogd::start(&[]);
    server.query("CREATE DATABASE jt; CREATE TABLE jt.t (id INT NOT NULL, j JSON, PRIMARY KEY (id))");
    let mut client = RawClient::login_to(server.port, "root", "", Some("jt")).unwrap();
    let rows = documents();
    for (id, document) in &rows {
        let value = document.as_deref().map_or("NULL".to_owned(), sql_string);
        client.query(&format!("INSERT INTO t VALUES ({id}, {value})")).unwrap();
    }

    // Text protocol: the fixed documents exactly as MySQL prints them,
    // every document equal to what was written.
    let read = text_value(&client.query("SELECT id, j FROM t ORDER BY id").unwrap());
    assert_eq!(read.len(), rows.len());
    for ((id, printed), (_, expected)) in read.iter().zip(fixed_documents()) {
        assert_eq!(printed.as_deref(), expected, "row {id}");
    }
    for ((id, printed), (written_id, written)) in read.iter().zip(&rows) {
        assert_eq!(id, written_id);
        assert_eq!(printed.as_deref().map(parsed), written.as_deref().map(parsed), "row {id}");
    }
    let large = read.iter().find(|(id, _)| *id == 100).unwrap().1.clone().unwrap();
    assert!(large.len() > 64 * 1024);

    // Binary protocol: the same text, a JSON column as MySQL describes it.
    let (statement, _, columns) = client.prepare("SELECT j FROM t WHERE id = ?").unwrap();
    assert_eq!(columns[0].column_type(), ColumnType::MYSQL_TYPE_JSON);
    for (id, printed) in &read {
        let Response::BinaryRows { columns, rows: binary_rows, .. } = client.execute(statement, &[MValue::Int(*id)]).unwrap() else {
            panic!("binary rows")
        };
        let column = &columns[0];
        assert_eq!((column.column_type(), column.character_set(), column.column_length()), (ColumnType::MYSQL_TYPE_JSON, 63, u32::MAX));
        assert!(column.flags().contains(ColumnFlags::BLOB_FLAG | ColumnFlags::BINARY_FLAG));
        let value = match &binary_rows[0][0] {
            MValue::NULL => None,
            MValue::Bytes(bytes) => Some(String::from_utf8(bytes.clone()).unwrap()),
            other => panic!("{other:?}"),
        };
        assert_eq!(&value, printed, "row {id} through the binary protocol");
    }
    // A prepared INSERT's string parameter is JSON text too.
    let (insert, _, _) = client.prepare("INSERT INTO t VALUES (?, ?)").unwrap();
    client.execute(insert, &[MValue::Int(300), MValue::Bytes(br#"{"via": "prepared", "n": [1.25]}"#.to_vec())]).unwrap();
    assert_eq!(client.value("SELECT j FROM t WHERE id = 300"), r#"{"n": [1.25], "via": "prepared"}"#);

    // Updates: JSON_SET on the objects, a new document everywhere else;
    // then every row goes.
    client.query(r#"UPDATE t SET j = JSON_SET(j, '$.updated', TRUE) WHERE JSON_TYPE(j) = 'OBJECT'"#).unwrap();
    client.query("UPDATE t SET j = JSON_ARRAY(id, 'changed') WHERE j IS NULL OR JSON_TYPE(j) <> 'OBJECT'").unwrap();
    let updated = text_value(&client.query("SELECT id, j FROM t ORDER BY id").unwrap());
    let after_update = |id: i64, written: Option<&str>| -> JsonValue {
        match written.map(parsed) {
            Some(JsonValue::Object(mut members)) => {
                members.insert("updated".into(), JsonValue::Bool(true));
                JsonValue::Object(members)
            }
            _ => serde_json::json!([id, "changed"]),
        }
    };
    let mut all_rows = rows.clone();
    all_rows.push((300, Some(r#"{"via": "prepared", "n": [1.25]}"#.to_owned())));
    for ((id, printed), (_, written)) in updated.iter().zip(&all_rows) {
        assert_eq!(parsed(printed.as_deref().unwrap()), after_update(*id, written.as_deref()), "row {id} after UPDATE");
    }
    client.query("DELETE FROM t").unwrap();

    // The binlog: every image mysql_common and python-mysql-replication
    // decode is the document written, updated or deleted.
    let files: Vec<_> = server.binlog_files().iter().map(|name| server.binlog_dir().join(name)).collect();
    let mut expected: Vec<(String, i64, Option<JsonValue>)> = Vec::new();
    for (id, written) in &rows {
        expected.push(("write".into(), *id, written.as_deref().map(parsed)));
    }
    expected.push(("write".into(), 300, Some(parsed(r#"{"via": "prepared", "n": [1.25]}"#))));
    let objects = all_rows.iter().filter(|(_, w)| matches!(w.as_deref().map(parsed), Some(JsonValue::Object(_))));
    let others = all_rows.iter().filter(|(_, w)| !matches!(w.as_deref().map(parsed), Some(JsonValue::Object(_))));
    for (id, written) in objects.chain(others) {
        expected.push(("update".into(), *id, Some(after_update(*id, written.as_deref()))));
    }
    for (id, written) in &all_rows {
        expected.push(("delete".into(), *id, Some(after_update(*id, written.as_deref()))));
    }
    let decoded: Vec<(String, i64, Option<JsonValue>)> =
        binlog_documents(&files).into_iter().map(|(kind, id, document)| (kind.to_owned(), id, document)).collect();
    assert_eq!(decoded.len(), expected.len());
    for (ours, theirs) in expected.iter().zip(&decoded) {
        assert_eq!(ours, theirs, "mysql_common");
    }
    mariadb_binlog_reads_the_files(&files);
    let python = python_documents(&server);
    assert_eq!(python.len(), expected.len());
    for ((kind, id, document), theirs) in expected.iter().zip(&python) {
        // Python has one None for SQL NULL and the JSON null literal.
        let document = document.clone().filter(|document| !document.is_null());
        assert_eq!(&(kind.clone(), *id, document), theirs, "python-mysql-replication");
    }
}

#[test]
fn bad_json_and_bad_paths_get_mysqls_errors_and_change_nothing() {
    let server = Binlogd::start(&[]);
    server.query(r#"CREATE DATABASE jt; CREATE TABLE jt.t (id INT NOT NULL, j JSON, PRIMARY KEY (id)); INSERT INTO jt.t VALUES (1, '{"a": [1, 2]}')"#);
    let mut client = RawClient::login_to(server.port, "root", "", Some("jt")).unwrap();
    let error = client.query("INSERT INTO t VALUES (2, '{\"a\": }')").unwrap_err();
    assert_eq!(
        (error.code, error.state.as_str(), error.message.as_str()),
        (3140, "22032", "Invalid JSON text: \"Invalid value.\" at position 6 in value for column 't.j'.")
    );
    let error = client.query("UPDATE t SET j = '[1,' WHERE id = 1").unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (3140, "Invalid JSON text: \"Invalid value.\" at position 3 in value for column 't.j'.")
    );
    let error = client.query("INSERT INTO t VALUES (3, 42)").unwrap_err();
    assert_eq!(error.code, 3140);
    let error = client.query("SELECT j->'$.a[' FROM t").unwrap_err();
    assert_eq!(
        (error.code, error.state.as_str(), error.message.as_str()),
        (3143, "42000", "Invalid JSON path expression. The error is around character position 4.")
    );
    let error = client.query("SELECT JSON_EXTRACT('[1', '$')").unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            3141,
            "Invalid JSON text in argument 1 to function json_extract: \"Missing a comma or ']' after an array element.\" at position 2."
        )
    );
    let error = client.query("CREATE INDEX j_1 ON t (j)").unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (3152, "JSON column 'j' supports indexing only via generated columns on a specified JSON path.")
    );
    let error = client.query("CREATE TABLE u (id INT, j JSON DEFAULT '[]')").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1101, "BLOB, TEXT, GEOMETRY or JSON column 'j' can't have a default value"));
    // The connection is still usable and the committed row unchanged.
    assert_eq!(client.value("SELECT COUNT(*) FROM t"), "1");
    assert_eq!(client.value("SELECT j FROM t"), r#"{"a": [1, 2]}"#);
}

#[test]
fn json_functions_answer_as_mysql_does_through_sql() {
    let server = Binlogd::start(&[]);
    server.query(r#"CREATE DATABASE jt; CREATE TABLE jt.t (id INT NOT NULL, j JSON, PRIMARY KEY (id)); INSERT INTO jt.t VALUES (1, '{"name": "ann", "tags": ["x", "y"], "n": 7}'), (2, '[1, 2]')"#);
    let mut client = RawClient::login_to(server.port, "root", "", Some("jt")).unwrap();
    let cases = [
        ("SELECT j->'$.name' FROM t WHERE id = 1", r#""ann""#),
        ("SELECT j->>'$.name' FROM t WHERE id = 1", "ann"),
        ("SELECT j->'$.tags[last]' FROM t WHERE id = 1", r#""y""#),
        ("SELECT JSON_EXTRACT(j, '$.tags[*]', '$.n') FROM t WHERE id = 1", r#"["x", "y", 7]"#),
        ("SELECT JSON_TYPE(j) FROM t WHERE id = 2", "ARRAY"),
        ("SELECT JSON_LENGTH(j, '$.tags') FROM t WHERE id = 1", "2"),
        ("SELECT JSON_KEYS(j) FROM t WHERE id = 1", r#"["n", "name", "tags"]"#),
        ("SELECT JSON_CONTAINS_PATH(j, 'all', '$.n', '$.name') FROM t WHERE id = 1", "1"),
        ("SELECT JSON_OBJECT('k', 1 = 1, 'd', 2.50, 'a', JSON_ARRAY())", r#"{"a": [], "d": 2.50, "k": true}"#),
        ("SELECT JSON_REMOVE(j, '$[0]') FROM t WHERE id = 2", "[2]"),
        ("SELECT JSON_VALID('{\"a\": 1}'), JSON_VALID('{a}')", "1"),
        ("SELECT JSON_QUOTE('say \"hi\"')", r#""say \"hi\"""#),
        ("SELECT JSON_UNQUOTE('\"\\\\u00e9t\\\\u00e9\"')", "été"),
        ("SELECT id FROM t WHERE j->'$.n' = 7", "1"),
        ("SELECT id FROM t WHERE j = CAST('[1, 2.0]' AS JSON)", "2"),
        ("SELECT JSON_TYPE(CAST(1.5 AS JSON))", "DECIMAL"),
        ("SELECT id FROM t WHERE JSON_CONTAINS(j, '\"y\"', '$.tags')", "1"),
        ("SELECT JSON_ARRAY_APPEND(j, '$', 3) FROM t WHERE id = 2", "[1, 2, 3]"),
    ];
    for (sql, expected) in cases {
        assert_eq!(client.value(sql), expected, "{sql}");
    }
    let Response::Rows { columns, .. } = client.query("SELECT JSON_OBJECT('a', 1), JSON_VALID('1')").unwrap() else { panic!("rows") };
    assert_eq!((columns[0].column_type(), columns[1].column_type()), (ColumnType::MYSQL_TYPE_JSON, ColumnType::MYSQL_TYPE_LONGLONG));
    let Response::Rows { columns, rows, .. } = client.query("SELECT j->'$.n' + 1, j->'$.n', j->>'$.name' FROM t WHERE id = 1").unwrap()
    else {
        panic!("rows")
    };
    assert_eq!(rows[0][0].as_deref(), Some(&b"8"[..]));
    assert_eq!(
        columns.iter().map(|c| c.column_type()).collect::<Vec<_>>(),
        // JSON in arithmetic is a string operand to MySQL: a DOUBLE result.
        [ColumnType::MYSQL_TYPE_DOUBLE, ColumnType::MYSQL_TYPE_JSON, ColumnType::MYSQL_TYPE_VAR_STRING]
    );
    // A JSON_SET through UPDATE keeps the column a document.
    client.query("UPDATE t SET j = JSON_SET(j, '$.n', j->'$.n' + 1, '$.tags[2]', 'z') WHERE id = 1").unwrap();
    assert_eq!(client.value("SELECT j FROM t WHERE id = 1"), r#"{"n": 8, "name": "ann", "tags": ["x", "y", "z"]}"#);
    let create = server.query("SHOW CREATE TABLE jt.t");
    assert!(create.contains("`j` json"), "{create}");
}

#[test]
fn json_columns_and_documents_survive_a_restart() {
    let mut server = Binlogd::start(&[]);
    server.query(r#"CREATE DATABASE jt; CREATE TABLE jt.t (id INT NOT NULL, j JSON NOT NULL, PRIMARY KEY (id)); INSERT INTO jt.t VALUES (1, '{"k": [1, 2.5, "😀"]}')"#);
    server.restart();
    assert_eq!(server.query("SELECT j, JSON_TYPE(j->'$.k[1]') FROM jt.t").trim(), "{\"k\": [1, 2.5, \"😀\"]}\tDOUBLE");
    let columns = server.query("SHOW COLUMNS FROM jt.t");
    assert!(columns.lines().any(|line| line.starts_with("j\tjson\tNO")), "{columns}");
}
