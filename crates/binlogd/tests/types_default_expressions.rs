//! Expression defaults end to end against a served binlogd: `DEFAULT
//! (expr)` evaluated per row written without the column (JSON_OBJECT(),
//! UUID(), arithmetic over an earlier column, CURRENT_DATE), SHOW CREATE
//! TABLE, SHOW COLUMNS and INFORMATION_SCHEMA.COLUMNS as MySQL prints them,
//! also after a restart; the row images carry the values as mysql_common
//! decodes them; bad expressions get MySQL's errors (1054, 1305, 3770,
//! 3772, 3773) and the connection stays usable.

mod support;

use mysql_common::binlog::value::BinlogValue;
use support::binlog_rows::logged_rows;
use support::ServerProcess;
use testkit::raw_client::{MValue, RawClient};

const CREATE: &str = "CREATE TABLE d.t (
    id INT PRIMARY KEY AUTO_INCREMENT,
    n INT DEFAULT (1 + 1),
    j JSON DEFAULT (JSON_OBJECT('k', 'v')),
    u VARCHAR(36) DEFAULT (UUID()),
    m INT NOT NULL DEFAULT (n * 10),
    b BINARY(16) DEFAULT (UUID_TO_BIN(UUID())),
    day DATE DEFAULT (CURRENT_DATE)
)";

fn rows(client: &mut RawClient, sql: &str) -> Vec<Vec<String>> {
    let found = client.query_rows(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    found.into_iter().map(|row| row.into_iter().map(|v| v.unwrap_or_else(|| "NULL".into())).collect()).collect()
}

/// Every after image of table t in the files, as text.
fn inserted_images(paths: &[std::path::PathBuf]) -> Vec<Vec<String>> {
    let text = |value: &BinlogValue| match value {
        BinlogValue::Value(MValue::NULL) => "NULL".to_string(),
        BinlogValue::Value(MValue::Int(v)) => v.to_string(),
        BinlogValue::Value(MValue::Bytes(bytes)) => format!("{} bytes", bytes.len()),
        BinlogValue::Value(MValue::Date(..)) => "date".to_string(),
        BinlogValue::Jsonb(json) => serde_json::Value::from(json.clone().parse().expect("mysql_common parses the jsonb")).to_string(),
        other => format!("{other:?}"),
    };
    logged_rows(paths).iter().filter_map(|row| row.after.as_ref()).map(|after| after.iter().map(text).collect()).collect()
}

#[test]
fn rows_without_a_value_take_the_expression_and_the_binlog_carries_its_value() {
    let mut server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE d").unwrap();
    client.query_rows(CREATE).unwrap();
    client.query_rows("INSERT INTO d.t (id) VALUES (NULL)").unwrap();
    client.query_rows("INSERT INTO d.t (n) VALUES (5)").unwrap();
    client.query_rows("INSERT INTO d.t (n, j, m, u) VALUES (7, '[1]', 3, 'given')").unwrap();
    let found = rows(&mut client, "SELECT id, n, j, LENGTH(u), m, LENGTH(b), day = CURRENT_DATE FROM d.t ORDER BY id");
    assert_eq!(
        found,
        [
            ["1", "2", r#"{"k": "v"}"#, "36", "20", "16", "1"],
            ["2", "5", r#"{"k": "v"}"#, "36", "50", "16", "1"],
            ["3", "7", "[1]", "5", "3", "16", "1"],
        ]
    );
    let uuids = rows(&mut client, "SELECT COUNT(DISTINCT u), SUM(IS_UUID(u)), COUNT(DISTINCT b) FROM d.t WHERE id < 3");
    assert_eq!(uuids, [["2", "2", "2"]], "each row gets its own UUID()");

    let images = inserted_images(&server.binlog_files());
    assert_eq!(images.len(), 3, "{images:?}");
    assert_eq!(images[0][..3], ["1", "2", r#"{"k":"v"}"#]);
    assert_eq!(images[0][3], "36 bytes");
    assert_eq!(images[1][4], "50");

    let shown = |client: &mut RawClient| {
        let create = rows(client, "SHOW CREATE TABLE d.t")[0][1].clone();
        let columns = rows(
            client,
            "SELECT COLUMN_NAME, COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' ORDER BY ORDINAL_POSITION",
        );
        (create, columns)
    };
    let (create, columns) = shown(&mut client);
    for line in [
        "`n` int DEFAULT ((1 + 1))",
        "`j` json DEFAULT (json_object(_utf8mb4'k',_utf8mb4'v'))",
        "`u` varchar(36) DEFAULT (uuid())",
        "`m` int NOT NULL DEFAULT ((`n` * 10))",
    ] {
        assert!(create.contains(line), "{line} in {create}");
    }
    assert_eq!(columns[1], ["n", "(1 + 1)", "DEFAULT_GENERATED"]);
    assert_eq!(columns[3], ["u", "uuid()", "DEFAULT_GENERATED"]);
    assert_eq!(columns[0], ["id", "NULL", "auto_increment"]);

    // SHOW CREATE TABLE's text creates the same table.
    client.query_rows("CREATE DATABASE copy").unwrap();
    client.query_rows(&create.replacen("CREATE TABLE `t`", "CREATE TABLE copy.t", 1)).unwrap();
    client.query_rows("INSERT INTO copy.t (n) VALUES (4)").unwrap();
    assert_eq!(rows(&mut client, "SELECT n, m, j FROM copy.t"), [["4", "40", r#"{"k": "v"}"#]]);

    server.restart();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    assert_eq!(shown(&mut client), (create, columns), "the same after a restart");
    client.query_rows("INSERT INTO d.t (n) VALUES (9)").unwrap();
    assert_eq!(rows(&mut client, "SELECT m FROM d.t WHERE n = 9"), [["90"]]);
}

#[test]
fn bad_default_expressions_get_mysqls_errors() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE d").unwrap();
    client.query_rows("USE d").unwrap();
    for (sql, code) in [
        ("CREATE TABLE x (a INT DEFAULT (nosuch()))", 1305),
        ("CREATE TABLE x (a INT AUTO_INCREMENT PRIMARY KEY, b INT DEFAULT (a + 1))", 3773),
        ("CREATE TABLE x (a INT DEFAULT (b), b INT DEFAULT (1))", 3772),
        ("CREATE TABLE x (a INT DEFAULT (@v))", 3770),
        ("CREATE TABLE x (a INT DEFAULT (LAST_INSERT_ID()))", 3770),
        ("CREATE TABLE x (a INT DEFAULT (c))", 1054),
        ("CREATE TABLE x (j JSON DEFAULT '{}')", 1101),
    ] {
        let error = client.query_rows(sql).unwrap_err();
        assert_eq!(error.code, code, "{sql}: {}", error.message);
    }
    assert_eq!(client.query_rows("SHOW TABLES").unwrap().len(), 0, "nothing was created");
    // A later column's plain value is fine to read.
    client.query_rows("CREATE TABLE y (a INT DEFAULT (b + 1), b INT DEFAULT 4)").unwrap();
    client.query_rows("INSERT INTO y () VALUES ()").unwrap();
    assert_eq!(rows(&mut client, "SELECT a, b FROM y"), [["5", "4"]]);
}

#[test]
fn alter_adds_expression_defaults_and_generated_columns_to_rows_already_there() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE d").unwrap();
    client.query_rows("USE d").unwrap();
    client.query_rows("CREATE TABLE t (id INT PRIMARY KEY, n INT)").unwrap();
    client.query_rows("INSERT INTO t VALUES (1, 2), (2, 5), (3, NULL)").unwrap();

    // Each row gets what its expression gives over the row, the added
    // generated column seeing the added default.
    client
        .query_rows(
            "ALTER TABLE t ADD COLUMN twice INT NOT NULL DEFAULT (COALESCE(n, 0) * 2), ADD COLUMN u BINARY(16) DEFAULT (UUID_TO_BIN(UUID())), \
             ADD COLUMN g INT AS (twice + 1) STORED",
        )
        .unwrap();
    assert_eq!(
        rows(&mut client, "SELECT id, n, twice, g FROM t ORDER BY id"),
        [["1", "2", "4", "5"], ["2", "5", "10", "11"], ["3", "NULL", "0", "1"]]
    );
    assert_eq!(rows(&mut client, "SELECT COUNT(DISTINCT u) FROM t"), [["3"]], "one UUID() per row");
    client.query_rows("INSERT INTO t (id, n) VALUES (4, 7)").unwrap();
    assert_eq!(rows(&mut client, "SELECT twice, g FROM t WHERE id = 4"), [["14", "15"]]);

    // ALTER checks the expressions as CREATE TABLE does, and a refused
    // ALTER leaves the table as it was.
    for (sql, code) in [
        ("ALTER TABLE t ADD COLUMN x INT DEFAULT (nosuch + 1)", 1054),
        ("ALTER TABLE t ADD COLUMN x INT DEFAULT (@v)", 3770),
        ("ALTER TABLE t ADD COLUMN x INT AS (RAND()) STORED", 3102),
        ("ALTER TABLE t DROP COLUMN n", 3837),
        ("ALTER TABLE t CHANGE COLUMN twice doubled INT", 3108),
    ] {
        let error = client.query_rows(sql).unwrap_err();
        assert_eq!(error.code, code, "{sql}: {}", error.message);
    }
    assert_eq!(rows(&mut client, "SELECT COUNT(*), SUM(twice), SUM(g) FROM t"), [["4", "28", "32"]]);
}
