//! Text compares as its collation says, as in MySQL: `utf8mb4_general_ci`
//! (binlogd's default) and `utf8mb4_0900_ai_ci` ignore case and accents,
//! `utf8mb4_bin` and binary strings do not; WHERE, IN, BETWEEN, LIKE,
//! ORDER BY, GROUP BY, DISTINCT, MIN and MAX agree with the unique keys,
//! whose duplicates are 1062 under the collation, across a restart.

mod support;

use support::ServerProcess;
use testkit::raw_client::RawClient;

fn column(client: &mut RawClient, sql: &str) -> Vec<String> {
    client.query_rows(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")).into_iter().map(|row| row[0].clone().unwrap_or_default()).collect()
}

fn setup(server: &ServerProcess) -> RawClient {
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("USE a").unwrap();
    client
        .query_rows(
            "CREATE TABLE t (id INT PRIMARY KEY, ci VARCHAR(20), bin VARCHAR(20) COLLATE utf8mb4_bin, raw VARBINARY(20), \
             ai VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci, KEY ci (ci), KEY bin (bin))",
        )
        .unwrap();
    client
        .query_rows(
            "INSERT INTO t VALUES (1, 'apple', 'apple', 'apple', 'résumé'), (2, 'Banana', 'Banana', 'Banana', 'RESUME'), \
             (3, 'cherry', 'cherry', 'cherry', 'Cherry'), (4, 'APPLE', 'APPLE', 'APPLE', 'resume ')",
        )
        .unwrap();
    client
}

#[test]
fn comparisons_sorting_and_grouping_follow_each_columns_collation() {
    let server = ServerProcess::start();
    let mut client = setup(&server);

    // Equality, through the index and without it.
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE ci = 'APPLE' ORDER BY id"), ["1", "4"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE CONCAT(ci) = 'Apple' ORDER BY id"), ["1", "4"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE bin = 'APPLE'"), ["4"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE raw = 'apple'"), ["1"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE ai = 'resume' ORDER BY id"), ["1", "2"], "0900_ai_ci: accents ignored, NO PAD");
    // An explicit COLLATE wins over the column's.
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE ci = 'APPLE' COLLATE utf8mb4_bin"), ["4"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE bin COLLATE utf8mb4_general_ci = 'apple' ORDER BY id"), ["1", "4"]);
    // Literals compare under collation_connection, binary under _binary.
    // JSON text is utf8mb4_bin, CAST AS BINARY binary.
    let literals = client
        .query_rows(
            "SELECT 'a' = 'A', 'café' = 'CAFE', 'a' < 'B', _binary'a' = 'A', JSON_UNQUOTE(JSON_EXTRACT('{\"k\": \"a\"}', '$.k')) = 'A', \
             CAST('a' AS BINARY) = 'A'",
        )
        .unwrap();
    assert_eq!(literals[0].iter().map(|v| v.as_deref().unwrap()).collect::<Vec<_>>(), ["1", "1", "1", "0", "0", "0"]);

    // IN, BETWEEN, LIKE, a range.
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE ci IN ('BANANA', 'x')"), ["2"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE bin IN ('BANANA', 'x')"), Vec::<String>::new());
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE ci BETWEEN 'b' AND 'C' ORDER BY id"), ["2"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE ci LIKE 'APP%' ORDER BY id"), ["1", "4"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE bin LIKE 'APP%'"), ["4"]);
    assert_eq!(column(&mut client, "SELECT id FROM t WHERE ci > 'BANANA' ORDER BY id"), ["3"]);

    // ORDER BY, by name, alias and position.
    assert_eq!(column(&mut client, "SELECT ci FROM t ORDER BY ci, id"), ["apple", "APPLE", "Banana", "cherry"]);
    assert_eq!(column(&mut client, "SELECT bin AS b FROM t ORDER BY b"), ["APPLE", "Banana", "apple", "cherry"]);
    assert_eq!(column(&mut client, "SELECT ci FROM t ORDER BY 1 DESC, id"), ["cherry", "Banana", "apple", "APPLE"]);

    // GROUP BY, DISTINCT, COUNT(DISTINCT), MIN and MAX.
    let groups = client.query_rows("SELECT ci, COUNT(*) FROM t GROUP BY ci ORDER BY ci").unwrap();
    assert_eq!(groups.len(), 3, "{groups:?}");
    assert_eq!(groups[0][1].as_deref(), Some("2"));
    assert_eq!(column(&mut client, "SELECT COUNT(*) FROM t GROUP BY bin").len(), 4);
    assert_eq!(column(&mut client, "SELECT DISTINCT ci FROM t").len(), 3);
    assert_eq!(column(&mut client, "SELECT DISTINCT ai FROM t").len(), 3, "'résumé' and 'RESUME' are one; 'resume ' is another");
    assert_eq!(column(&mut client, "SELECT COUNT(DISTINCT ci) FROM t"), ["3"]);
    assert_eq!(column(&mut client, "SELECT MAX(ci) FROM t"), ["cherry"]);
    assert_eq!(column(&mut client, "SELECT MIN(bin) FROM t"), ["APPLE"]);
}

#[test]
fn unique_keys_count_values_equal_under_the_collation_as_duplicates() {
    let mut server = ServerProcess::start();
    let mut client = setup(&server);
    client.query_rows("CREATE TABLE names (name VARCHAR(20) PRIMARY KEY, n INT, email VARCHAR(40) COLLATE utf8mb4_0900_ai_ci, UNIQUE KEY email (email))").unwrap();
    client.query_rows("INSERT INTO names VALUES ('Ann', 1, 'ann@example.com')").unwrap();
    let duplicate = client.query_rows("INSERT INTO names VALUES ('ANN', 2, NULL)").unwrap_err();
    assert_eq!((duplicate.code, duplicate.message.as_str()), (1062, "Duplicate entry 'ANN' for key 'names.PRIMARY'"));
    let duplicate = client.query_rows("INSERT INTO names VALUES ('Bob', 2, 'ANN@EXAMPLE.COM')").unwrap_err();
    assert_eq!(duplicate.code, 1062);
    // A binary collation keeps case apart; the table's default applies to
    // columns without their own.
    client.query_rows("CREATE TABLE exact (name VARCHAR(20) PRIMARY KEY) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin").unwrap();
    client.query_rows("INSERT INTO exact VALUES ('Ann'), ('ANN')").unwrap();
    assert_eq!(column(&mut client, "SELECT COUNT(*) FROM exact WHERE name = 'ann'"), ["0"]);
    let shown = client.query_rows("SHOW FULL COLUMNS FROM exact").unwrap();
    assert_eq!(shown[0][2].as_deref(), Some("utf8mb4_bin"));

    // A lookup by primary key finds the row whatever the case; UPDATE and
    // DELETE reach it the same way.
    assert_eq!(column(&mut client, "SELECT n FROM names WHERE name = 'aNN'"), ["1"]);
    client.query_rows("UPDATE names SET n = 5 WHERE name = 'ANN'").unwrap();

    // After a restart (redo replay), the same rules.
    server.restart();
    let mut client = RawClient::login_to(server.port, "root", "", Some("a")).unwrap();
    assert_eq!(column(&mut client, "SELECT n FROM names WHERE name = 'ann'"), ["5"]);
    assert_eq!(client.query_rows("INSERT INTO names VALUES ('aNn', 3, NULL)").unwrap_err().code, 1062);
    client.query_rows("INSERT INTO exact VALUES ('ann')").unwrap();
    client.query_rows("DELETE FROM names WHERE name = 'ANN'").unwrap();
    assert_eq!(column(&mut client, "SELECT COUNT(*) FROM names"), ["0"]);
}

#[test]
fn collations_show_as_mysql_prints_them_and_unknown_ones_are_1273() {
    let server = ServerProcess::start();
    let mut client = setup(&server);
    let create = client.query_rows("SHOW CREATE TABLE t").unwrap()[0][1].clone().unwrap();
    assert!(create.contains("`ci` varchar(20) DEFAULT NULL"), "{create}");
    assert!(create.contains("`bin` varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL"), "{create}");
    assert!(create.contains("`ai` varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci DEFAULT NULL"), "{create}");
    let columns = client
        .query_rows("SELECT COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'a' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION")
        .unwrap();
    let collations: Vec<Option<&str>> = columns.iter().map(|row| row[1].as_deref()).collect();
    assert_eq!(collations, [None, Some("utf8mb4_general_ci"), Some("utf8mb4_bin"), None, Some("utf8mb4_0900_ai_ci")]);
    let error = client.query_rows("CREATE TABLE bad (s VARCHAR(3) COLLATE utf8mb4_nonesuch)").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1273, "Unknown collation: 'utf8mb4_nonesuch'"));
    assert_eq!(column(&mut client, "SELECT COUNT(*) FROM t"), ["4"], "the connection stays usable");
}
