//! GROUP_CONCAT through the protocol, as MySQL's manual describes it:
//! `[DISTINCT] expr [, expr ...] [ORDER BY ...] [SEPARATOR 'x']`, rows with
//! a NULL argument left out, NULL for a group with none left, the result
//! cut at `group_concat_max_len` bytes with warning 1260, and a TEXT
//! column (VARCHAR up to 512 bytes; binary for binary arguments).

mod support;

use mysql_common::constants::{ColumnFlags, ColumnType};
use support::ServerProcess;
use testkit::raw_client::{RawClient, Response};

/// Rows as `&str`s, to compare with literals.
fn text(rows: &[Vec<Option<String>>]) -> Vec<Vec<Option<&str>>> {
    rows.iter().map(|row| row.iter().map(|value| value.as_deref()).collect()).collect()
}

/// The one column's type, display length, character set and whether it
/// is binary.
fn column_of(client: &mut RawClient, sql: &str) -> (ColumnType, u32, u16, bool) {
    match client.query(sql).unwrap() {
        Response::Rows { columns, .. } => {
            let column = &columns[0];
            (column.column_type(), column.column_length(), column.character_set(), column.flags().contains(ColumnFlags::BINARY_FLAG))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn group_concat_joins_orders_dedups_and_cuts_at_group_concat_max_len() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE g").unwrap();
    client.query_rows("CREATE TABLE g.student (id INT PRIMARY KEY, student_name VARCHAR(20), test_score INT, tag VARBINARY(10))").unwrap();
    client
        .query_rows(
            "INSERT INTO g.student VALUES (1, 'alice', 80, 'x'), (2, 'alice', 95, 'y'), (3, 'alice', 80, 'x'), \
             (4, 'bob', 70, NULL), (5, 'bob', NULL, 'z'), (6, 'carol', NULL, NULL)",
        )
        .unwrap();

    let rows =
        client.query_rows("SELECT student_name, GROUP_CONCAT(test_score) FROM g.student GROUP BY student_name ORDER BY student_name");
    assert_eq!(text(&rows.unwrap()), [[Some("alice"), Some("80,95,80")], [Some("bob"), Some("70")], [Some("carol"), None]]);
    let rows = client.query_rows(
        "SELECT student_name, GROUP_CONCAT(DISTINCT test_score ORDER BY test_score DESC SEPARATOR ' ') \
         FROM g.student GROUP BY student_name ORDER BY student_name",
    );
    assert_eq!(text(&rows.unwrap()), [[Some("alice"), Some("95 80")], [Some("bob"), Some("70")], [Some("carol"), None]]);
    // Several arguments are joined per row; a row with a NULL one is left out.
    let rows = client.query_rows("SELECT GROUP_CONCAT(student_name, ':', test_score ORDER BY id DESC SEPARATOR '; ') FROM g.student");
    assert_eq!(text(&rows.unwrap()), [[Some("bob:70; alice:80; alice:95; alice:80")]]);
    assert!(client.query_rows("SHOW WARNINGS").unwrap().is_empty());

    // TEXT at the default 1024 bytes (4 bytes a character), BLOB for a
    // binary argument.
    let long_text = (ColumnType::MYSQL_TYPE_BLOB, 4096, 45, false);
    assert_eq!(column_of(&mut client, "SELECT GROUP_CONCAT(student_name) FROM g.student"), long_text);
    assert_eq!(column_of(&mut client, "SELECT GROUP_CONCAT(tag) FROM g.student"), (ColumnType::MYSQL_TYPE_BLOB, 1024, 63, true));
    assert_eq!(text(&client.query_rows("SELECT GROUP_CONCAT(tag ORDER BY id) FROM g.student").unwrap()), [[Some("x,y,x,z")]]);

    // A session bound of 10 bytes: VARCHAR, and the second row is cut.
    client.query_rows("SET SESSION group_concat_max_len = 10").unwrap();
    assert_eq!(
        text(&client.query_rows("SELECT @@group_concat_max_len, @@global.group_concat_max_len").unwrap()),
        [[Some("10"), Some("1024")]]
    );
    assert_eq!(
        column_of(&mut client, "SELECT GROUP_CONCAT(student_name) FROM g.student"),
        (ColumnType::MYSQL_TYPE_VAR_STRING, 40, 45, false)
    );
    let rows = client.query_rows("SELECT GROUP_CONCAT(student_name ORDER BY id) FROM g.student").unwrap();
    assert_eq!(text(&rows), [[Some("alice,alic")]]);
    assert_eq!(
        text(&client.query_rows("SHOW WARNINGS").unwrap()),
        [[Some("Warning"), Some("1260"), Some("Row 2 was cut by GROUP_CONCAT()")]]
    );
    // Each group is cut on its own.
    let rows = client.query_rows("SELECT GROUP_CONCAT(id, student_name) FROM g.student GROUP BY student_name ORDER BY student_name");
    assert_eq!(text(&rows.unwrap()), [[Some("1alice,2al")], [Some("4bob,5bob")], [Some("6carol")]]);
    assert_eq!(client.query_rows("SHOW WARNINGS").unwrap().len(), 1);

    // Another session keeps the global default.
    let mut other = RawClient::login_to(server.port, "root", "", None).unwrap();
    assert_eq!(text(&other.query_rows("SELECT LENGTH(GROUP_CONCAT(REPEAT('a', 400))) FROM g.student").unwrap()), [[Some("1024")]]);
    let warnings = other.query_rows("SHOW WARNINGS").unwrap();
    assert_eq!(text(&warnings), [[Some("Warning"), Some("1260"), Some("Row 3 was cut by GROUP_CONCAT()")]]);
}
