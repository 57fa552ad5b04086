//! Generated columns end to end against a served binlogd: VIRTUAL and
//! STORED columns computed from the row on INSERT and UPDATE (one reading
//! an earlier generated column), DEFAULT as their only value; SHOW CREATE
//! TABLE's `GENERATED ALWAYS AS (...)` and INFORMATION_SCHEMA's EXTRA and
//! GENERATION_EXPRESSION as MySQL prints them, also after a restart; the
//! row images carry every column, generated ones included, as mysql_common
//! decodes them, `mariadb-binlog --verbose` reads them and
//! python-mysql-replication returns them; under `binlog_row_image=MINIMAL`
//! an UPDATE's after image carries the generated columns that read an
//! assigned column and no others; the rows replay through `mariadb-binlog
//! | mariadb` into a fresh binlogd and a MariaDB replica applies them, both
//! ending with the same rows; bad expressions and values get MySQL's
//! errors (1054, 3102, 3105, 3106, 3107, 3109) and change nothing.

mod support;

use std::process::{Command, Stdio};

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{EventData, RowsEventData};
use mysql_common::binlog::BinlogFile;
use serde_json::Value as Json;
use support::binlog_rows::{logged_rows, plain_text};
use support::mariadb::MariaDb;
use support::{python_script, Binlogd};
use testkit::raw_client::RawClient;

const CREATE: &str = "CREATE TABLE gc.t (
    id INT NOT NULL PRIMARY KEY,
    a INT,
    b VARCHAR(10),
    v INT AS (a + 1) VIRTUAL,
    s INT GENERATED ALWAYS AS (a * 2) STORED,
    c VARCHAR(20) AS (CONCAT(b, '!')),
    w INT AS (v * 10) STORED
)";

const NAMES: [&str; 7] = ["id", "a", "b", "v", "s", "c", "w"];

/// A row as text, NULL as `None`.
type Row = Vec<Option<String>>;

fn row(values: &[&str]) -> Row {
    values.iter().map(|v| if *v == "NULL" { None } else { Some(v.to_string()) }).collect()
}

/// Every row image of table t in the files, in order.
fn binlog_images(paths: &[std::path::PathBuf]) -> Vec<Row> {
    logged_rows(paths)
        .iter()
        .filter(|row| row.table == "t")
        .flat_map(|row| {
            [&row.before, &row.after].into_iter().flatten().map(|image| image.iter().map(plain_text).collect()).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn generated_columns_are_computed_on_every_write_and_logged_with_the_row() {
    let mut server = Binlogd::start(&[]);
    server.query(&format!("CREATE DATABASE gc; {CREATE}"));
    let mut client = RawClient::login_to(server.port, "root", "", Some("gc")).unwrap();
    client.query("INSERT INTO t (id, a, b) VALUES (1, 5, 'x')").unwrap();
    client.query("INSERT INTO t VALUES (2, 7, 'y', DEFAULT, DEFAULT, DEFAULT, DEFAULT)").unwrap();
    client.query("INSERT INTO t (id) VALUES (3)").unwrap();
    let select = format!("SELECT {} FROM t ORDER BY id", NAMES.join(", "));
    assert_eq!(
        client.query_rows(&select).unwrap(),
        [
            row(&["1", "5", "x", "6", "10", "x!", "60"]),
            row(&["2", "7", "y", "8", "14", "y!", "80"]),
            row(&["3", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"])
        ]
    );
    client.query("UPDATE t SET a = a + 1 WHERE id = 1").unwrap();
    client.query("UPDATE t SET v = DEFAULT, b = 'z' WHERE id = 2").unwrap();
    client.query("DELETE FROM t WHERE id = 3").unwrap();
    assert_eq!(client.value("SELECT id FROM t WHERE v = 7 AND w = 70"), "1");
    assert_eq!(client.value("SELECT c FROM t WHERE id = 2"), "z!");

    for _ in 0..2 {
        let create = server.query("SHOW CREATE TABLE gc.t");
        for line in [
            "`v` int GENERATED ALWAYS AS ((`a` + 1)) VIRTUAL,",
            "`s` int GENERATED ALWAYS AS ((`a` * 2)) STORED,",
            "`c` varchar(20) GENERATED ALWAYS AS (concat(`b`,_utf8mb4'!')) VIRTUAL,",
            "`w` int GENERATED ALWAYS AS ((`v` * 10)) STORED,",
        ] {
            assert!(create.contains(line), "{line} in {create}");
        }
        let columns = server.query(
            "SELECT COLUMN_NAME, EXTRA, GENERATION_EXPRESSION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'gc' AND TABLE_NAME = 't' AND COLUMN_NAME IN ('a', 'v', 's', 'w') ORDER BY ORDINAL_POSITION",
        );
        assert_eq!(
            columns.trim_end(),
            "a\t\t\nv\tVIRTUAL GENERATED\t(`a` + 1)\ns\tSTORED GENERATED\t(`a` * 2)\nw\tSTORED GENERATED\t(`v` * 10)"
        );
        server.restart();
    }
    // The expressions came back with the table.
    server.query("INSERT INTO gc.t (id, a, b) VALUES (4, 1, 'q')");
    assert_eq!(server.query("SELECT v, s, c, w FROM gc.t WHERE id = 4").trim(), "2\t2\tq!\t20");

    let files: Vec<_> = server.binlog_files().iter().map(|name| server.binlog_dir().join(name)).collect();
    let images = binlog_images(&files);
    let expected = [
        row(&["1", "5", "x", "6", "10", "x!", "60"]),
        row(&["2", "7", "y", "8", "14", "y!", "80"]),
        row(&["3", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"]),
        row(&["1", "5", "x", "6", "10", "x!", "60"]),
        row(&["1", "6", "x", "7", "12", "x!", "70"]),
        row(&["2", "7", "y", "8", "14", "y!", "80"]),
        row(&["2", "7", "z", "8", "14", "z!", "80"]),
        row(&["3", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"]),
        row(&["4", "1", "q", "2", "2", "q!", "20"]),
    ];
    assert_eq!(images, expected, "mysql_common");
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
    let text = String::from_utf8(output.stdout).unwrap();
    let python: Vec<Row> = text
        .lines()
        .map(|line| {
            let line: Json = serde_json::from_str(line).unwrap();
            NAMES
                .iter()
                .map(|name| match &line["values"][name] {
                    Json::Null => None,
                    Json::Number(n) => Some(n.to_string()),
                    Json::String(s) => Some(s.clone()),
                    other => panic!("{other:?} in {line}"),
                })
                .collect()
        })
        .collect();
    assert_eq!(python, expected, "python-mysql-replication: {text}");
}

#[test]
fn bad_generation_expressions_and_values_get_mysqls_errors_and_change_nothing() {
    let server = Binlogd::start(&[]);
    server.query(&format!("CREATE DATABASE gc; {CREATE}; INSERT INTO gc.t (id, a, b) VALUES (1, 5, 'x')"));
    let mut client = RawClient::login_to(server.port, "root", "", Some("gc")).unwrap();
    let cases = [
        ("INSERT INTO t (id, a, v) VALUES (2, 1, 5)", 3105, "The value specified for generated column 'v' in table 't' is not allowed."),
        (
            "INSERT INTO t VALUES (2, 1, 'q', DEFAULT, 4, DEFAULT, DEFAULT)",
            3105,
            "The value specified for generated column 's' in table 't' is not allowed.",
        ),
        ("UPDATE t SET w = 3", 3105, "The value specified for generated column 'w' in table 't' is not allowed."),
        ("CREATE TABLE u (a INT, g INT AS (a + RAND()))", 3102, "Expression of generated column 'g' contains a disallowed function."),
        ("CREATE TABLE u (a INT, g INT AS (nope + 1))", 1054, "Unknown column 'nope' in 'generated column function'"),
        (
            "CREATE TABLE u (a INT, g INT AS (h + 1), h INT AS (a))",
            3107,
            "Generated column can refer only to generated columns defined prior to it.",
        ),
        (
            "CREATE TABLE u (id INT AUTO_INCREMENT PRIMARY KEY, g INT AS (id + 1))",
            3109,
            "Generated column 'g' cannot refer to auto-increment column.",
        ),
        (
            "CREATE TABLE u (a INT, g INT AS (a + 1) VIRTUAL PRIMARY KEY)",
            3106,
            "'Defining a virtual generated column as primary key' is not supported for generated columns.",
        ),
    ];
    for (sql, code, message) in cases {
        let error = client.query(sql).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (code, message), "{sql}");
    }
    assert_eq!(client.query_rows("SELECT id, a, v, s, w FROM t").unwrap(), [row(&["1", "5", "6", "10", "60"])]);
    assert!(client.query("SHOW CREATE TABLE u").is_err(), "no table u was created");
}

/// The columns of each Update_rows after image of table t, in order.
fn update_after_columns(paths: &[std::path::PathBuf]) -> Vec<Vec<usize>> {
    let mut updates = Vec::new();
    for path in paths {
        let bytes = std::fs::read(path).unwrap();
        let mut binlog = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).expect("mysql_common reads the file");
        while let Some(event) = binlog.next() {
            let event = event.expect("mysql_common reads every event");
            let Some(EventData::RowsEvent(rows @ RowsEventData::UpdateRowsEvent(_))) =
                event.read_data().expect("mysql_common decodes the event")
            else {
                continue;
            };
            let count = rows.num_columns() as usize;
            let columns: Vec<usize> = rows.columns_after_image().expect("an after image").iter_ones().filter(|&c| c < count).collect();
            let map = binlog.reader().get_tme(rows.table_id()).expect("table map precedes rows");
            for decoded in rows.rows(map) {
                let (_, after) = decoded.expect("mysql_common decodes the row");
                assert_eq!(after.expect("an after image").len(), columns.len(), "one value per logged column");
                updates.push(columns.clone());
            }
        }
    }
    updates
}

#[test]
fn a_minimal_after_image_carries_the_generated_columns_an_update_recomputes() {
    let server = Binlogd::start(&[]);
    server.query(&format!("CREATE DATABASE gc; {CREATE}"));
    let mut client = RawClient::login_to(server.port, "root", "", Some("gc")).unwrap();
    client.query("SET SESSION binlog_row_image = 'MINIMAL'").unwrap();
    client.query("INSERT INTO t (id, a, b) VALUES (1, 5, 'x')").unwrap();
    // a is read by v and s, and w reads v; c reads only b.
    client.query("UPDATE t SET a = 6").unwrap();
    client.query("UPDATE t SET b = 'y'").unwrap();
    // A row the UPDATE leaves as it was is not logged.
    client.query("UPDATE t SET a = 6").unwrap();
    assert_eq!(client.query_rows("SELECT v, s, c, w FROM t").unwrap(), [row(&["7", "12", "y!", "70"])]);
    let files: Vec<_> = server.binlog_files().iter().map(|name| server.binlog_dir().join(name)).collect();
    assert_eq!(update_after_columns(&files), [vec![1, 3, 4, 6], vec![2, 5]]);
}

/// The rows of gc.t as the mariadb client prints them.
fn table_rows(server: &Binlogd) -> String {
    server.query(&format!("SELECT {} FROM gc.t ORDER BY id", NAMES.join(", ")))
}

/// A workload on gc.t touching every generated column.
fn write_rows(server: &Binlogd) {
    server.query(
        "INSERT INTO gc.t (id, a, b) VALUES (1, 5, 'x'), (2, 7, 'y'), (3, NULL, NULL);
         UPDATE gc.t SET a = a + 1, b = 'z' WHERE id = 1;
         DELETE FROM gc.t WHERE id = 2;
         INSERT INTO gc.t (id, a, b) VALUES (4, -3, '');",
    );
}

#[test]
fn generated_rows_replay_through_mariadb_binlog_into_a_fresh_binlogd() {
    use std::io::Write;
    let source = Binlogd::start(&[]);
    source.query(&format!("CREATE DATABASE gc; {CREATE}"));
    write_rows(&source);
    let target = Binlogd::start(&[]);
    let files: Vec<_> = source.binlog_files().iter().map(|name| source.binlog_dir().join(name)).collect();
    let text = Command::new("mariadb-binlog").args(&files).output().expect("run mariadb-binlog");
    assert!(text.status.success(), "mariadb-binlog: {}", String::from_utf8_lossy(&text.stderr));
    let mut client = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", target.port), "-uroot"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mariadb");
    let mut stdin = client.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&text.stdout));
    let output = client.wait_with_output().unwrap();
    writer.join().unwrap().expect("write the script");
    assert!(output.status.success(), "replay: {}", String::from_utf8_lossy(&output.stderr));

    let rows = table_rows(&source);
    assert_eq!(rows.lines().count(), 3, "{rows}");
    assert_eq!(table_rows(&target), rows, "the replayed rows");
    assert_eq!(target.query("SHOW CREATE TABLE gc.t"), source.query("SHOW CREATE TABLE gc.t"));
    // The replayed table computes its own rows as the source's does.
    for server in [&source, &target] {
        server.query("UPDATE gc.t SET a = 10 WHERE id = 4");
    }
    assert_eq!(table_rows(&target), table_rows(&source));
}

#[test]
fn a_mariadb_replica_applies_the_generated_rows() {
    let source = Binlogd::start(&[]);
    let replica = MariaDb::start(&["--server-id=2", "--skip-log-bin"]);
    replica.query(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', MASTER_PASSWORD='',
             MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4, MASTER_HEARTBEAT_PERIOD=1;
         START SLAVE;",
        source.port
    ));
    source.query(&format!("CREATE DATABASE gc; {CREATE}"));
    write_rows(&source);

    replica.wait_caught_up(&source);
    let theirs = replica.query(&format!("SELECT {} FROM gc.t ORDER BY id", NAMES.join(", ")));
    assert_eq!(theirs, table_rows(&source), "the MariaDB replica's rows");
}
