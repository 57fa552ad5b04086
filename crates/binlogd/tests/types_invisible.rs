//! INVISIBLE columns end to end against a served binlogd: left out of
//! `SELECT *` and of an INSERT without a column list, written and read by
//! name; SHOW CREATE TABLE's `/*!80023 INVISIBLE */`, EXTRA `INVISIBLE` in
//! SHOW COLUMNS and INFORMATION_SCHEMA.COLUMNS, also after a restart; the
//! row images carry every column, as MySQL's do, and the Table_map's
//! COLUMN_VISIBILITY metadata (binlog_row_metadata=FULL only) says which
//! are visible, as mysql_common reads it; `mariadb-binlog --verbose` and
//! python-mysql-replication read the rows.

mod support;

use std::process::Command;

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{EventData, OptionalMetadataField};
use mysql_common::binlog::BinlogFile;
use serde_json::Value as Json;
use support::binlog_rows::{logged_rows, plain_text};
use support::{python_script, Binlogd};
use testkit::raw_client::{RawClient, Response};

const CREATE: &str = "CREATE TABLE it.t (
    id INT NOT NULL PRIMARY KEY,
    a INT,
    h VARCHAR(10) DEFAULT 'x' INVISIBLE,
    n INT INVISIBLE
)";

/// A Table_map's COLUMN_VISIBILITY flags, if it has the field.
type Visibility = Option<Vec<bool>>;
/// A row image of t as (id, a, h, n) text, NULL as `None`.
type Image = Vec<Option<String>>;

/// Per Table_map of table t: its visibility; and every row image of t.
fn binlog(paths: &[std::path::PathBuf]) -> (Vec<Visibility>, Vec<Image>) {
    let visibility = paths.iter().flat_map(|path| visibilities(path)).collect();
    let images = logged_rows(paths)
        .iter()
        .filter(|row| row.table == "t")
        .flat_map(|row| {
            [&row.before, &row.after].into_iter().flatten().map(|image| image.iter().map(plain_text).collect()).collect::<Vec<_>>()
        })
        .collect();
    (visibility, images)
}

/// The column visibility of each Table_map of table t in the file.
fn visibilities(path: &std::path::Path) -> Vec<Visibility> {
    let bytes = std::fs::read(path).unwrap();
    let mut visibility = Vec::new();
    for event in BinlogFile::new(BinlogVersion::Version4, &bytes[..]).expect("mysql_common reads the file") {
        let event = event.expect("mysql_common reads every event");
        if let Some(EventData::TableMapEvent(map)) = event.read_data().expect("mysql_common decodes the event") {
            if map.table_name() != "t" {
                continue;
            }
            let mut flags = None;
            for field in map.iter_optional_meta() {
                if let OptionalMetadataField::ColumnVisibility(bits) = field.expect("mysql_common reads the optional metadata") {
                    flags = Some(bits.iter().map(|bit| *bit).collect());
                }
            }
            visibility.push(flags);
        }
    }
    visibility
}

fn some(values: &[&str]) -> Vec<Option<String>> {
    values.iter().map(|v| if *v == "NULL" { None } else { Some(v.to_string()) }).collect()
}

#[test]
fn invisible_columns_are_left_out_of_star_and_logged_with_their_visibility() {
    let mut server = Binlogd::start(&[]);
    server.query(&format!("SET GLOBAL binlog_row_metadata = 'FULL'; CREATE DATABASE it; {CREATE}"));
    let mut client = RawClient::login_to(server.port, "root", "", Some("it")).unwrap();
    // Without a column list the values are the visible columns'.
    client.query("INSERT INTO t VALUES (1, 10)").unwrap();
    client.query("INSERT INTO t (id, a, h, n) VALUES (2, 20, 'y', 5)").unwrap();
    let error = client.query("INSERT INTO t VALUES (3, 30, 'z')").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1136, "Column count doesn't match value count at row 1"));

    let Response::Rows { columns, rows, .. } = client.query("SELECT * FROM t ORDER BY id").unwrap() else { panic!("rows") };
    assert_eq!(columns.iter().map(|c| c.name_str().into_owned()).collect::<Vec<_>>(), ["id", "a"]);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        client.query_rows("SELECT id, a, h, n FROM t ORDER BY id").unwrap(),
        [some(&["1", "10", "x", "NULL"]), some(&["2", "20", "y", "5"])]
    );
    assert_eq!(client.value("SELECT n FROM t WHERE h = 'y'"), "5");
    client.query("UPDATE t SET n = 7 WHERE id = 1").unwrap();
    client.query("DELETE FROM t WHERE id = 2").unwrap();

    for _ in 0..2 {
        let create = server.query("SHOW CREATE TABLE it.t");
        assert!(create.contains("`h` varchar(10) DEFAULT 'x' /*!80023 INVISIBLE */,"), "{create}");
        assert!(create.contains("`n` int DEFAULT NULL /*!80023 INVISIBLE */,"), "{create}");
        assert!(create.contains("`a` int DEFAULT NULL,"), "{create}");
        let extra = server.query(
            "SELECT COLUMN_NAME, EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'it' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION",
        );
        assert_eq!(extra.trim_end(), "id\t\na\t\nh\tINVISIBLE\nn\tINVISIBLE");
        let columns = server.query("SHOW COLUMNS FROM it.t");
        assert!(columns.lines().any(|line| line == "n\tint\tYES\t\tNULL\tINVISIBLE"), "{columns}");
        server.restart();
    }
    let error = server.mariadb("CREATE TABLE it.u (a INT INVISIBLE)");
    assert!(String::from_utf8_lossy(&error.stderr).contains("ERROR 4028 (HY000)"), "{error:?}");
    assert!(String::from_utf8_lossy(&error.stderr).contains("A table must have at least one visible column."));

    // Under MINIMAL the Table_map carries no visibility; the rows are the same.
    server.query("SET GLOBAL binlog_row_metadata = 'MINIMAL'");
    let mut client = RawClient::login_to(server.port, "root", "", Some("it")).unwrap();
    client.query("INSERT INTO t (id, n) VALUES (3, 9)").unwrap();

    // Each restart begins a new file.
    let files: Vec<_> = server.binlog_files().iter().map(|name| server.binlog_dir().join(name)).collect();
    let (visibility, images) = binlog(&files);
    let full = Some(vec![true, true, false, false]);
    assert_eq!(visibility, [full.clone(), full.clone(), full.clone(), full, None]);
    assert_eq!(
        images,
        [
            some(&["1", "10", "x", "NULL"]),
            some(&["2", "20", "y", "5"]),
            some(&["1", "10", "x", "NULL"]),
            some(&["1", "10", "x", "7"]),
            some(&["2", "20", "y", "5"]),
            some(&["3", "NULL", "x", "9"]),
        ]
    );
    for file in &files {
        let output = Command::new("mariadb-binlog").arg("--verbose").arg(file).output().expect("run mariadb-binlog");
        assert!(output.status.success(), "mariadb-binlog --verbose: {}", String::from_utf8_lossy(&output.stderr));
    }
    let output = Command::new("python3")
        .arg(python_script("read_hex_rows.py"))
        .args([&server.port.to_string(), &server.binlog_files()[0], "t"])
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_hex_rows.py: {}", String::from_utf8_lossy(&output.stderr));
    let python_text = String::from_utf8(output.stdout).unwrap();
    let python: Vec<Image> = python_text
        .lines()
        .map(|line| {
            let line: Json = serde_json::from_str(line).unwrap();
            // The library names columns only when binlog_row_metadata is
            // FULL as it connects; here it is MINIMAL, so they are positional.
            (0..4)
                .map(|position| match &line["values"][format!("UNKNOWN_COL{position}")] {
                    Json::Null => None,
                    Json::Number(n) => Some(n.to_string()),
                    // Character values arrive as text; read_hex_rows.py hexes bytes only.
                    Json::String(s) => Some(s.clone()),
                    other => panic!("{other:?}"),
                })
                .collect()
        })
        .collect();
    assert_eq!(python, images, "python-mysql-replication: {python_text}");
}
