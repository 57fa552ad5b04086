//! Columns in latin1, ascii and utf8mb3, as MySQL 8.4 makes them: the
//! `CHARACTER SET` / `COLLATE` of a column, else its table's, decides; a
//! column holds only what its character set can (1366 in strict mode, `?`
//! and a warning outside it); values read back as they were written
//! through the text and binary protocols; the row events carry each value
//! in its column's character set and the Table_map its byte lengths and
//! collations, as mysql_common and `mariadb-binlog` decode them, and a
//! MariaDB replica and python-mysql-replication read the same text; SHOW
//! CREATE TABLE and INFORMATION_SCHEMA print them as MySQL does.

mod support;

use std::process::Command;

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{EventData, OptionalMetaExtractor};
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use support::mariadb::MariaDb;
use support::{python_script, Binlogd, ServerProcess};
use testkit::raw_client::{MValue, RawClient, Response};

/// `l` latin1 CHAR(3), `v` latin1_bin VARCHAR(10), `a` ascii VARCHAR(5),
/// `m` utf8mb3 VARCHAR(5), `x` latin1 TEXT.
const TABLE: &str = "CREATE TABLE t (id INT PRIMARY KEY, l CHAR(3) CHARACTER SET latin1, v VARCHAR(10) COLLATE latin1_bin, \
     a VARCHAR(5) CHARACTER SET ascii, m VARCHAR(5) CHARACTER SET utf8mb3, x TEXT CHARACTER SET latin1)";

fn setup(server: &ServerProcess) -> RawClient {
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("USE a").unwrap();
    client.query_rows(TABLE).unwrap();
    client
}

fn error(client: &mut RawClient, sql: &str) -> (u16, String) {
    let error = client.query_rows(sql).expect_err(sql);
    (error.code, error.message)
}

fn rows(client: &mut RawClient, sql: &str) -> Vec<Vec<String>> {
    let rows = client.query_rows(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    rows.into_iter().map(|row| row.into_iter().map(|v| v.unwrap_or_else(|| "NULL".into())).collect()).collect()
}

#[test]
fn each_character_set_holds_its_repertoire_and_refuses_the_rest_in_strict_mode() {
    let server = ServerProcess::start();
    let mut client = setup(&server);

    // latin1 is cp1252: '€' is one of its characters.
    client.query_rows("INSERT INTO t VALUES (1, 'é€a', 'café', 'abc', 'ü✓', 'café €')").unwrap();
    assert_eq!(rows(&mut client, "SELECT l, v, a, m, x FROM t WHERE id = 1"), [["é€a", "café", "abc", "ü✓", "café €"]]);
    let (id, _, _) = client.prepare("SELECT l, v, a, m, x FROM t WHERE id = ?").unwrap();
    let Response::BinaryRows { rows: binary, .. } = client.execute(id, &[MValue::Int(1)]).unwrap() else { panic!("binary rows") };
    let expected: Vec<MValue> = ["é€a", "café", "abc", "ü✓", "café €"].iter().map(|s| MValue::Bytes(s.as_bytes().to_vec())).collect();
    assert_eq!(binary, [expected]);
    // Lengths are in characters, whatever the bytes.
    assert_eq!(error(&mut client, "INSERT INTO t (id, l) VALUES (2, 'abcd')").0, 1406);

    // MySQL's 1366 prints up to 6 bytes from the first bad character.
    assert_eq!(
        error(&mut client, "INSERT INTO t (id, l) VALUES (2, 'a😀')"),
        (1366, r"Incorrect string value: '\xF0\x9F\x98\x80' for column 'l' at row 1".into())
    );
    assert_eq!(
        error(&mut client, "INSERT INTO t (id, a) VALUES (2, 'né ok!!')"),
        (1366, r"Incorrect string value: '\xC3\xA9 ok!...' for column 'a' at row 1".into())
    );
    assert_eq!(error(&mut client, "INSERT INTO t (id, m) VALUES (2, '😀')").0, 1366, "utf8mb3 has no 4-byte characters");
    assert_eq!(error(&mut client, "INSERT INTO t (id, x) VALUES (2, '中')").0, 1366);
    assert_eq!(error(&mut client, "UPDATE t SET v = 'ā' WHERE id = 1").0, 1366);
    let (id, _, _) = client.prepare("INSERT INTO t (id, l) VALUES (?, ?)").unwrap();
    let refused = client.execute(id, &[MValue::Int(2), MValue::Bytes("中".as_bytes().to_vec())]).unwrap_err();
    assert_eq!(refused.code, 1366, "a binary-protocol parameter is checked too");

    // Outside strict mode: '?' for each such character, and a warning.
    client.query_rows("SET sql_mode = ''").unwrap();
    let Response::Ok { warnings, .. } = client.query("INSERT INTO t VALUES (3, 'a😀', 'ā', 'né', '😀x', '中文')").unwrap() else {
        panic!("OK")
    };
    assert_eq!(warnings, 5);
    let shown = rows(&mut client, "SHOW WARNINGS");
    assert_eq!(shown[0], ["Warning", "1366", r"Incorrect string value: '\xF0\x9F\x98\x80' for column 'l' at row 1"]);
    assert_eq!(rows(&mut client, "SELECT l, v, a, m, x FROM t WHERE id = 3"), [["a?", "?", "n?", "?x", "??"]]);

    // Comparisons: latin1_swedish_ci ignores case, latin1_bin does not.
    assert_eq!(rows(&mut client, "SELECT id FROM t WHERE l = 'É€A'"), [["1"]]);
    assert_eq!(rows(&mut client, "SELECT COUNT(*) FROM t WHERE v = 'CAFÉ'"), [["0"]]);
}

#[test]
fn row_events_carry_each_columns_bytes_and_the_table_map_its_charset() {
    let server = ServerProcess::start();
    let mut client = setup(&server);
    client.query_rows("INSERT INTO t VALUES (1, 'é€a', 'café', 'abc', 'ü✓', 'café €')").unwrap();
    client.query_rows("UPDATE t SET v = 'naïve' WHERE id = 1").unwrap();
    client.query_rows("FLUSH BINARY LOGS").unwrap();

    let mut logged = Vec::new();
    let mut table_map = None;
    for path in server.binlog_files() {
        let bytes = std::fs::read(&path).unwrap();
        let mut binlog = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).expect("mysql_common reads the file");
        while let Some(event) = binlog.next() {
            match event.unwrap().read_data().unwrap() {
                Some(EventData::TableMapEvent(map)) if map.table_name() == "t" => {
                    let metadata: Vec<Vec<u8>> = (0..6).map(|i| map.get_column_metadata(i).unwrap_or_default().to_vec()).collect();
                    let charsets = OptionalMetaExtractor::new(map.iter_optional_meta()).unwrap();
                    let collations: Vec<u16> = charsets.iter_charset().take(5).map(Result::unwrap).collect();
                    table_map = Some((metadata, collations));
                }
                Some(EventData::RowsEvent(rows)) => {
                    let map = binlog.reader().get_tme(rows.table_id()).unwrap();
                    for row in rows.rows(map) {
                        let (_, after) = row.unwrap();
                        let after = after.expect("an after image");
                        let values: Vec<Vec<u8>> = (1..after.len())
                            .map(|i| match after.as_ref(i).unwrap() {
                                BinlogValue::Value(MValue::Bytes(bytes)) => bytes.clone(),
                                other => panic!("column {i}: {other:?}"),
                            })
                            .collect();
                        logged.push(values);
                    }
                }
                _ => {}
            }
        }
    }

    // CHAR(3) latin1 is 3 bytes (real type 0xFE, length 3); VARCHAR(10)
    // latin1 10, VARCHAR(5) ascii 5, VARCHAR(5) utf8mb3 15; TEXT's length
    // prefix is 2 bytes.
    let (metadata, collations) = table_map.expect("a Table_map for t");
    assert_eq!(metadata[1..], [vec![0xFE, 3], vec![10, 0], vec![5, 0], vec![15, 0], vec![2]]);
    assert_eq!(collations, [8, 47, 11, 33, 8], "latin1_swedish_ci, latin1_bin, ascii_general_ci, utf8mb3_general_ci, latin1");

    // latin1 values are cp1252 bytes: 'é' e9, '€' 80, 'ï' ef.
    let latin1 = |bytes: &[u8]| bytes.to_vec();
    assert_eq!(logged[0], [latin1(b"\xe9\x80a"), latin1(b"caf\xe9"), latin1(b"abc"), "ü✓".as_bytes().to_vec(), latin1(b"caf\xe9 \x80")]);
    assert_eq!(logged[1][1], b"na\xefve");

    // mariadb-binlog decodes every row of the file.
    for path in server.binlog_files() {
        let verbose = Command::new("mariadb-binlog").args(["--verbose", "--table=t"]).arg(&path).output().expect("run mariadb-binlog");
        assert!(verbose.status.success(), "mariadb-binlog --verbose: {}", String::from_utf8_lossy(&verbose.stderr));
        // It prints a value's bytes as they are logged.
        let printed = &verbose.stdout;
        let contains = |needle: &[u8]| printed.windows(needle.len()).any(|window| window == needle);
        if contains(b"### UPDATE") {
            assert!(contains(b"@3='na\xefve'"), "{}", String::from_utf8_lossy(printed));
        }
    }
}

#[test]
fn show_create_table_and_information_schema_print_charsets_as_mysql_does() {
    let mut server = ServerProcess::start();
    let mut client = setup(&server);
    let create = |client: &mut RawClient, table: &str| rows(client, &format!("SHOW CREATE TABLE {table}"))[0][1].clone();

    let printed = create(&mut client, "t");
    assert!(printed.contains("`l` char(3) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL"), "{printed}");
    assert!(printed.contains("`v` varchar(10) CHARACTER SET latin1 COLLATE latin1_bin DEFAULT NULL"), "{printed}");
    assert!(printed.contains("`m` varchar(5) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci DEFAULT NULL"), "{printed}");
    assert!(printed.contains("`x` text CHARACTER SET latin1 COLLATE latin1_swedish_ci"), "{printed}");
    assert!(printed.ends_with(") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"), "{printed}");

    // A table's default: its columns print no character set of their own.
    client
        .query_rows(
            "CREATE TABLE l (c CHAR(3), u VARCHAR(4) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, b CHAR(2) CHARACTER SET binary) \
             DEFAULT CHARSET=latin1",
        )
        .unwrap();
    client.query_rows("CREATE TABLE k (c VARCHAR(3)) CHARACTER SET = latin1 COLLATE = latin1_bin").unwrap();
    client.query_rows("CREATE TABLE w (c VARCHAR(20000)) CHARSET=ascii").unwrap();
    // CHARSET is CHARACTER SET's synonym on a column too.
    client.query_rows("CREATE TABLE s (charset INT, c CHAR(2) CHARSET ascii)").unwrap();
    let expected_l = "CREATE TABLE `l` (\n  `c` char(3) DEFAULT NULL,\n  \
                      `u` varchar(4) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci DEFAULT NULL,\n  \
                      `b` binary(2) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1";
    assert_eq!(create(&mut client, "l"), expected_l);
    assert!(create(&mut client, "k").ends_with("`c` varchar(3) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin"));
    assert!(create(&mut client, "w").ends_with(") ENGINE=InnoDB DEFAULT CHARSET=ascii"));
    let synonym = create(&mut client, "s");
    assert!(
        synonym.contains("`charset` int DEFAULT NULL,\n  `c` char(2) CHARACTER SET ascii COLLATE ascii_general_ci DEFAULT NULL"),
        "{synonym}"
    );

    // INFORMATION_SCHEMA: lengths in characters and in bytes.
    let columns = rows(
        &mut client,
        "SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME, CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH \
         FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'a' AND TABLE_NAME = 't' AND COLUMN_NAME <> 'id' ORDER BY ORDINAL_POSITION",
    );
    assert_eq!(
        columns,
        [
            ["l", "latin1", "latin1_swedish_ci", "3", "3"],
            ["v", "latin1", "latin1_bin", "10", "10"],
            ["a", "ascii", "ascii_general_ci", "5", "5"],
            ["m", "utf8mb3", "utf8mb3_general_ci", "5", "15"],
            ["x", "latin1", "latin1_swedish_ci", "65535", "65535"],
        ]
    );
    let table_collation =
        rows(&mut client, "SELECT TABLE_COLLATION FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'a' AND TABLE_NAME = 'k'");
    assert_eq!(table_collation, [["latin1_bin"]]);
    let full = rows(&mut client, "SHOW FULL COLUMNS FROM l");
    assert_eq!((full[0][2].as_str(), full[2][2].as_str()), ("latin1_swedish_ci", "NULL"));

    // MySQL's errors.
    assert_eq!(error(&mut client, "CREATE TABLE e (c CHAR(3) CHARACTER SET klingon)"), (1115, "Unknown character set: 'klingon'".into()));
    assert_eq!(
        error(&mut client, "CREATE TABLE e (c CHAR(3) CHARACTER SET latin1 COLLATE utf8mb4_bin)"),
        (1253, "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'latin1'".into())
    );
    assert_eq!(error(&mut client, "CREATE TABLE e (c CHAR(3)) DEFAULT CHARSET=latin1 COLLATE=ascii_bin").0, 1253);
    assert_eq!(
        error(&mut client, "CREATE TABLE e (c VARCHAR(20000))"),
        (1074, "Column length too big for column 'c' (max = 16383); use BLOB or TEXT instead".into())
    );

    // ALTER TABLE adds a column in the table's default; a restart keeps it all.
    client.query_rows("ALTER TABLE l ADD COLUMN d VARCHAR(2)").unwrap();
    drop(client);
    server.restart();
    let mut client = RawClient::login_to(server.port, "root", "", Some("a")).unwrap();
    let after_restart = create(&mut client, "l");
    assert!(after_restart.contains("  `d` varchar(2) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1"), "{after_restart}");
    assert_eq!(create(&mut client, "t"), printed);
}

#[test]
fn a_databases_default_character_set_is_kept_shown_and_taken_by_its_tables() {
    let mut server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE l DEFAULT CHARACTER SET latin1").unwrap();
    client.query_rows("CREATE SCHEMA b CHARSET = ascii COLLATE ascii_bin").unwrap();
    client.query_rows("CREATE DATABASE p").unwrap();
    assert_eq!(error(&mut client, "CREATE DATABASE e CHARACTER SET klingon").0, 1115);
    assert_eq!(error(&mut client, "CREATE DATABASE e CHARACTER SET latin1 COLLATE utf8mb4_bin").0, 1253);
    let show = |client: &mut RawClient, database: &str| rows(client, &format!("SHOW CREATE DATABASE {database}"))[0][1].clone();
    assert_eq!(show(&mut client, "l"), "CREATE DATABASE `l` /*!40100 DEFAULT CHARACTER SET latin1 */ /*!80016 DEFAULT ENCRYPTION='N' */");
    assert_eq!(
        show(&mut client, "b"),
        "CREATE DATABASE `b` /*!40100 DEFAULT CHARACTER SET ascii COLLATE ascii_bin */ /*!80016 DEFAULT ENCRYPTION='N' */"
    );

    // The session's variables follow the current database.
    client.query_rows("USE l").unwrap();
    assert_eq!(rows(&mut client, "SELECT @@character_set_database, @@collation_database"), [["latin1", "latin1_swedish_ci"]]);
    // A table without a character set takes its database's.
    client.query_rows("CREATE TABLE t (c VARCHAR(3))").unwrap();
    client.query_rows("CREATE TABLE u (c VARCHAR(3)) DEFAULT CHARSET=utf8mb4").unwrap();
    let create = |client: &mut RawClient, table: &str| rows(client, &format!("SHOW CREATE TABLE {table}"))[0][1].clone();
    assert_eq!(create(&mut client, "t"), "CREATE TABLE `t` (\n  `c` varchar(3) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1");
    assert!(create(&mut client, "u").ends_with("DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"));

    // ALTER DATABASE changes what later tables take; existing ones keep theirs.
    client.query_rows("ALTER DATABASE COLLATE latin1_bin").unwrap();
    assert_eq!(rows(&mut client, "SELECT @@collation_database"), [["latin1_bin"]]);
    client.query_rows("CREATE TABLE v (c VARCHAR(3))").unwrap();
    assert!(create(&mut client, "v").ends_with("DEFAULT CHARSET=latin1 COLLATE=latin1_bin"));
    assert!(create(&mut client, "t").ends_with("DEFAULT CHARSET=latin1"));
    client.query_rows("USE b").unwrap();
    assert_eq!(rows(&mut client, "SELECT @@character_set_database, @@collation_database"), [["ascii", "ascii_bin"]]);

    // A restart keeps them all.
    drop(client);
    server.restart();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    let schemata = rows(
        &mut client,
        "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM INFORMATION_SCHEMA.SCHEMATA \
         WHERE SCHEMA_NAME IN ('b', 'l', 'p') ORDER BY SCHEMA_NAME",
    );
    assert_eq!(schemata, [["b", "ascii", "ascii_bin"], ["l", "latin1", "latin1_bin"], ["p", "utf8mb4", "utf8mb4_general_ci"]]);
    assert!(create(&mut client, "l.v").ends_with("DEFAULT CHARSET=latin1 COLLATE=latin1_bin"));
}

#[test]
fn convert_to_changes_every_text_column_and_the_tables_default() {
    let server = ServerProcess::start();
    let mut client = setup(&server);
    client.query_rows("CREATE TABLE c (id INT PRIMARY KEY, s VARCHAR(5), x TEXT, n INT, b VARBINARY(3))").unwrap();
    client.query_rows("INSERT INTO c VALUES (1, 'café', 'é€', 1, 'x')").unwrap();
    let create = |client: &mut RawClient| rows(client, "SHOW CREATE TABLE c")[0][1].clone();

    client.query_rows("ALTER TABLE c CONVERT TO CHARACTER SET latin1").unwrap();
    let latin1 = create(&mut client);
    assert!(
        latin1.contains("  `s` varchar(5) DEFAULT NULL,\n  `x` text,\n")
            || latin1.contains("  `s` varchar(5) DEFAULT NULL,\n  `x` text DEFAULT NULL,\n"),
        "{latin1}"
    );
    assert!(latin1.contains("`b` varbinary(3)") && latin1.ends_with(") ENGINE=InnoDB DEFAULT CHARSET=latin1"), "{latin1}");
    assert_eq!(rows(&mut client, "SELECT s, x FROM c"), [["café", "é€"]]);
    assert_eq!(error(&mut client, "INSERT INTO c (id, s) VALUES (2, '中')").0, 1366);

    // Back to utf8mb4: TEXT grows to MEDIUMTEXT to hold as many characters.
    client.query_rows("ALTER TABLE c CONVERT TO CHARSET utf8mb4 COLLATE utf8mb4_bin").unwrap();
    let utf8mb4 = create(&mut client);
    assert!(utf8mb4.contains("`x` mediumtext") && utf8mb4.ends_with("DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"), "{utf8mb4}");
    client.query_rows("INSERT INTO c (id, s) VALUES (2, '中')").unwrap();
    // A value the new set cannot hold refuses the conversion in strict mode.
    assert_eq!(error(&mut client, "ALTER TABLE c CONVERT TO CHARACTER SET latin1").0, 1366);

    // A new default leaves the columns as they are.
    client.query_rows("ALTER TABLE c DEFAULT CHARSET = ascii").unwrap();
    let ascii = create(&mut client);
    assert!(ascii.contains("`s` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL"), "{ascii}");
    assert!(ascii.ends_with(") ENGINE=InnoDB DEFAULT CHARSET=ascii"), "{ascii}");
    assert_eq!(error(&mut client, "ALTER TABLE c CHARACTER SET latin1 COLLATE ascii_bin").0, 1253);
}

/// The rows of cs.t as the mariadb client prints them (UTF-8).
const CS_ROWS: &str = "SELECT id, l, a, u, m FROM cs.t ORDER BY id";

#[test]
fn a_mariadb_replica_and_python_mysql_replication_read_each_columns_text() {
    let source = Binlogd::start(&[]);
    let replica = MariaDb::start(&["--server-id=2", "--skip-log-bin"]);
    replica.query(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', MASTER_PASSWORD='',
             MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4, MASTER_HEARTBEAT_PERIOD=1;
         START SLAVE;",
        source.port
    ));
    source.query(
        "CREATE DATABASE cs; CREATE TABLE cs.t (id INT PRIMARY KEY, l VARCHAR(10) CHARACTER SET latin1, \
         a CHAR(5) CHARACTER SET ascii, u VARCHAR(10) CHARACTER SET utf8mb3, m VARCHAR(10)); \
         INSERT INTO cs.t VALUES (1, 'café', 'abc', 'naïve', '😀'), (2, '€uro', 'x', 'ß', NULL), (3, 'del', 'y', 'z', 'w'); \
         UPDATE cs.t SET l = 'Ærø' WHERE id = 2; DELETE FROM cs.t WHERE id = 3;",
    );

    replica.wait_caught_up(&source);
    let ours = source.query(CS_ROWS);
    assert_eq!(ours, "1\tcafé\tabc\tnaïve\t😀\n2\tÆrø\tx\tß\tNULL\n");
    // The client's own character set is utf8mb3 by default: utf8mb4 asked.
    let theirs = replica.query(&format!("SET NAMES utf8mb4; {CS_ROWS}"));
    assert_eq!(theirs, ours, "the MariaDB replica decodes each column in its character set");

    let output = Command::new("python3")
        .arg(python_script("read_rows.py"))
        .args([&source.port.to_string(), "position", &source.binlog_files()[0], "4"])
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_rows.py: {}", String::from_utf8_lossy(&output.stderr));
    let mut seen = Vec::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let line: serde_json::Value = serde_json::from_str(line).unwrap();
        if line["table"] != "t" {
            continue;
        }
        for row in line["rows"].as_array().unwrap() {
            let image = if line["event"] == "update" { &row["after"] } else { row };
            seen.push([&image["l"], &image["a"], &image["u"]].map(|value| value.as_str().unwrap_or("NULL").to_string()));
        }
    }
    assert_eq!(
        seen,
        [["café", "abc", "naïve"], ["€uro", "x", "ß"], ["del", "y", "z"], ["Ærø", "x", "ß"], ["del", "y", "z"]],
        "python-mysql-replication decodes each column in its character set"
    );
}
