//! What CDC connectors (Debezium's MySQL connector, Connector/J under it)
//! ask of the server beyond plain queries, each as MySQL 8.4 answers it:
//! INFORMATION_SCHEMA's tables listed by SHOW [FULL] TABLES as system
//! views; BINARY and VARBINARY result columns flagged BINARY, so a client
//! keeps their bytes rather than decoding them as text; HAVING over the
//! select list's aliases; CASE, IF(), LOCATE and COLLATE in the metadata
//! queries of Connector/J; BIGINT UNSIGNED results flagged UNSIGNED.

mod support;

use std::process::Command;

use support::ServerProcess;

#[test]
fn show_full_tables_lists_information_schema_as_system_views() {
    let server = ServerProcess::start();
    let full = server.query(None, "SHOW FULL TABLES IN information_schema");
    let rows: Vec<&str> = full.lines().collect();
    assert!(rows.contains(&"COLUMNS\tSYSTEM VIEW"), "{full}");
    assert!(rows.contains(&"TABLES\tSYSTEM VIEW"), "{full}");
    assert!(rows.iter().all(|row| row.ends_with("\tSYSTEM VIEW")), "{full}");
    assert_eq!(server.query(None, "SHOW TABLES FROM INFORMATION_SCHEMA LIKE 'SCHEMA%'"), "SCHEMATA\n");
    // Debezium's form: the base tables of each database, none here.
    assert_eq!(server.query(None, "SHOW FULL TABLES IN information_schema WHERE Table_type = 'BASE TABLE'"), "");
    assert_eq!(server.query(Some("information_schema"), "SHOW TABLES LIKE 'VIEWS'"), "VIEWS\n");
}

/// `mariadb --column-type-info` prints each result column's flags.
fn column_flags(server: &ServerProcess, sql: &str) -> Vec<String> {
    let output = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", "--table", "--column-type-info", "-e", sql])
        .output()
        .expect("run the mariadb client");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // The table after the column information holds the raw binary values.
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix("Flags:"))
        .map(|flags| flags.trim().to_string())
        .collect()
}

#[test]
fn binary_string_columns_carry_the_binary_flag() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE b; CREATE TABLE b.t (id INT NOT NULL PRIMARY KEY, vb VARBINARY(8), bn BINARY(2) NOT NULL, vc VARCHAR(4), bl BLOB);
         INSERT INTO b.t VALUES (1, X'00ff', X'80ff', 'x', X'ff')",
    );
    let flags = column_flags(&server, "SELECT vb, bn, vc, bl FROM b.t");
    assert_eq!(flags, ["BINARY", "NOT_NULL BINARY", "", "BLOB BINARY"]);
}

/// HAVING filters after the select list, whose aliases it names first:
/// Connector/J's `DatabaseMetaData.getTables` filters INFORMATION_SCHEMA
/// on the alias TABLE_TYPE that shadows the column of that name.
#[test]
fn having_filters_groups_and_names_select_aliases() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE h; CREATE TABLE h.t (id INT NOT NULL PRIMARY KEY, k INT, v INT);
         CREATE TABLE h.u (id INT NOT NULL PRIMARY KEY);
         INSERT INTO h.t VALUES (1, 1, 10), (2, 1, 20), (3, 2, 5), (4, 3, 7), (5, 3, 8)",
    );
    let tables = "SELECT TABLE_NAME, CASE WHEN TABLE_TYPE = 'BASE TABLE' THEN 'TABLE' ELSE TABLE_TYPE END AS TABLE_TYPE \
                  FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'h'";
    assert_eq!(server.query(None, &format!("{tables} HAVING TABLE_TYPE IN ('TABLE', 'VIEW') ORDER BY TABLE_NAME")), "t\tTABLE\nu\tTABLE\n");
    assert_eq!(server.query(None, &format!("{tables} HAVING TABLE_TYPE = 'BASE TABLE'")), "");
    assert_eq!(server.query(None, "SELECT k, COUNT(*) AS n FROM h.t GROUP BY k HAVING n > 1 ORDER BY k"), "1\t2\n3\t2\n");
    assert_eq!(server.query(None, "SELECT k FROM h.t GROUP BY k HAVING SUM(v) < 20 ORDER BY k"), "2\n3\n");
    assert_eq!(server.query(None, "SELECT COUNT(*) FROM h.t HAVING COUNT(*) > 9"), "");
    assert_eq!(server.query(None, "SELECT id FROM h.t HAVING id > 3 ORDER BY id DESC LIMIT 1"), "5\n");
}

/// CASE in both forms, IF(), LOCATE/INSTR and `x COLLATE c`: what
/// Connector/J's DatabaseMetaData builds its INFORMATION_SCHEMA queries
/// from (TYPE_NAME is `CASE WHEN LOCATE('UNSIGNED', UPPER(COLUMN_TYPE)) ...`).
#[test]
fn case_if_and_locate_answer_as_mysql() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE c; CREATE TABLE c.t (id INT NOT NULL PRIMARY KEY, k INT, s VARCHAR(20));
         INSERT INTO c.t VALUES (1, 1, 'bigint unsigned'), (2, 2, 'int'), (3, NULL, NULL)",
    );
    let searched = "SELECT id, CASE WHEN k = 1 THEN 'one' WHEN k > 1 THEN 'more' ELSE 'none' END FROM c.t ORDER BY id";
    assert_eq!(server.query(None, searched), "1\tone\n2\tmore\n3\tnone\n");
    // The simple form: NULL equals no WHEN; without ELSE, NULL.
    let simple = "SELECT id, CASE k WHEN 1 THEN 'one' WHEN NULL THEN 'null' END FROM c.t ORDER BY id";
    assert_eq!(server.query(None, simple), "1\tone\n2\tNULL\n3\tNULL\n");
    // Nested, and only the branch taken is evaluated (1/0 would be NULL,
    // SLEEP would take a second).
    assert_eq!(server.query(None, "SELECT CASE WHEN 1 THEN CASE 2 WHEN 2 THEN 'in' END ELSE SLEEP(1) END"), "in\n");
    assert_eq!(server.query(None, "SELECT IF(1 > 2, SLEEP(1), 'no'), IF(NULL, 1, 2), IF('a' = 'a', 3, 4)"), "no\t2\t3\n");
    // Integer branches give an integer column, as `mariadb --column-type-info` shows.
    let types = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", "--table", "--column-type-info", "-e"])
        .arg("SELECT CASE WHEN id = 1 THEN 10 ELSE NULL END AS n, IF(id = 1, 'a', 'b') AS s FROM c.t WHERE id = 1")
        .output()
        .expect("run the mariadb client");
    let types = String::from_utf8_lossy(&types.stdout);
    let kinds: Vec<&str> = types.lines().filter_map(|line| line.strip_prefix("Type:")).map(str::trim).collect();
    assert_eq!(kinds, ["LONGLONG", "VAR_STRING"], "{types}");
    let located = "SELECT id, LOCATE('UNSIGNED', UPPER(s)), LOCATE('i', s, 3), INSTR(s, 'int') FROM c.t ORDER BY id";
    assert_eq!(server.query(None, located), "1\t8\t4\t4\n2\t0\t0\t1\n3\tNULL\tNULL\tNULL\n");
    let collated = "SELECT id FROM c.t WHERE s COLLATE utf8mb4_bin LIKE '%unsigned%' AND IF(s COLLATE utf8mb4_bin = 'int', 0, 1)";
    assert_eq!(server.query(None, collated), "1\n");
}

/// BIGINT UNSIGNED result columns carry the UNSIGNED flag whether they
/// are the stored column or computed from it (MIN/MAX, arithmetic, CASE),
/// and LAST_INSERT_ID() and CONNECTION_ID() are unsigned as in MySQL:
/// Connector/J reads a value above 2^63-1 as a BigInteger only by it.
#[test]
fn bigint_unsigned_results_carry_the_unsigned_flag() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE u; CREATE TABLE u.t (id INT NOT NULL PRIMARY KEY, big BIGINT UNSIGNED, small BIGINT);
         INSERT INTO u.t VALUES (1, 18446744073709551615, -1)",
    );
    let sql = "SELECT big, MAX(big), MIN(big) - 1, CASE WHEN id = 1 THEN big END, small, MAX(small), LAST_INSERT_ID(), CONNECTION_ID() FROM u.t GROUP BY id";
    let flags = column_flags(&server, sql);
    let unsigned: Vec<bool> = flags.iter().map(|flags| flags.split(' ').any(|flag| flag == "UNSIGNED")).collect();
    assert_eq!(unsigned, [true, true, true, true, false, false, true, true], "{flags:?}");
    let values = server.query(None, "SELECT big, MAX(big), MIN(big) - 1, CASE WHEN id = 1 THEN big END, small FROM u.t GROUP BY id");
    assert_eq!(values, "18446744073709551615\t18446744073709551615\t18446744073709551614\t18446744073709551615\t-1\n");
}

/// go-mysql's canal (and gh-ost) read a table's keys with SHOW INDEX:
/// one row per key column, PRIMARY first, MySQL 8.4's fifteen columns.
#[test]
fn show_index_lists_every_key_column() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT NOT NULL, a INT, b VARCHAR(5), PRIMARY KEY (id), UNIQUE KEY ab (a, b), KEY b (b))",
    );
    let expected = "\
t\t0\tPRIMARY\t1\tid\tA\t0\tNULL\tNULL\t\tBTREE\t\t\tYES\tNULL
t\t0\tab\t1\ta\tA\t0\tNULL\tNULL\tYES\tBTREE\t\t\tYES\tNULL
t\t0\tab\t2\tb\tA\t0\tNULL\tNULL\tYES\tBTREE\t\t\tYES\tNULL
t\t1\tb\t1\tb\tA\t0\tNULL\tNULL\tYES\tBTREE\t\t\tYES\tNULL
";
    assert_eq!(server.query(None, "SHOW INDEX FROM `d`.`t`"), expected);
    assert_eq!(server.query(Some("d"), "SHOW KEYS IN t"), expected);
    assert_eq!(server.query(None, "SHOW EXTENDED INDEXES FROM t FROM d"), expected);
    assert_eq!(
        server.query(None, "SHOW INDEX FROM d.t WHERE Key_name = 'b'"),
        "t\t1\tb\t1\tb\tA\t0\tNULL\tNULL\tYES\tBTREE\t\t\tYES\tNULL\n"
    );
    let error = server.error(None, "SHOW INDEX FROM d.missing");
    assert!(error.contains("1146"), "{error}");
}
