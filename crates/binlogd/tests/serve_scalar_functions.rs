//! Scalar functions applications call, through the protocol, with the
//! results MySQL 8.4's manual gives: NULLIF, GREATEST, LEAST, STRCMP,
//! SUBSTRING_INDEX, REVERSE, MD5, SHA1, SHA2, CRC32, TO_BASE64,
//! FROM_BASE64, over literals, columns and prepared-statement parameters.

mod support;

use mysql_common::constants::ColumnType;
use support::ServerProcess;
use testkit::raw_client::{RawClient, Response};

fn row(client: &mut RawClient, sql: &str) -> Vec<Option<String>> {
    client.query_rows(sql).unwrap_or_else(|error| panic!("{sql}: {error:?}")).remove(0)
}

fn strings(values: &[Option<&str>]) -> Vec<Option<String>> {
    values.iter().map(|value| value.map(str::to_string)).collect()
}

#[test]
fn scalar_functions_answer_as_mysql_does() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    assert_eq!(
        row(
            &mut client,
            "SELECT NULLIF(1, 1), NULLIF(1, 2), GREATEST(2, 0, 34), LEAST(2, 0.5, 34), GREATEST('B', 'A', 'C'), LEAST(1, NULL)"
        ),
        strings(&[None, Some("1"), Some("34"), Some("0.5"), Some("C"), None])
    );
    assert_eq!(
        row(&mut client, "SELECT STRCMP('text', 'text2'), STRCMP('text2', 'text'), STRCMP('Text', 'text'), STRCMP(NULL, 'a')"),
        strings(&[Some("-1"), Some("1"), Some("0"), None])
    );
    assert_eq!(
        row(&mut client, "SELECT SUBSTRING_INDEX('www.mysql.com', '.', 2), SUBSTRING_INDEX('www.mysql.com', '.', -2), REVERSE('abc')"),
        strings(&[Some("www.mysql"), Some("mysql.com"), Some("cba")])
    );
    assert_eq!(
        row(&mut client, "SELECT MD5('testing'), SHA1('abc'), SHA2('abc', 256), SHA2('abc', 100), CRC32('MySQL'), MD5(NULL)"),
        strings(&[
            Some("ae2b1fca515949e5d54fb22b8ed95575"),
            Some("a9993e364706816aba3e25717850c26c9cd0d89d"),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            None,
            Some("3259397556"),
            None,
        ])
    );
    assert_eq!(row(&mut client, "SELECT TO_BASE64('abc'), FROM_BASE64(TO_BASE64('abc'))"), strings(&[Some("YWJj"), Some("abc")]));

    // Over a table's columns, in WHERE and in the select list.
    client.query_rows("CREATE DATABASE f").unwrap();
    client.query_rows("CREATE TABLE f.hosts (id INT PRIMARY KEY, name VARCHAR(40), a INT, b INT)").unwrap();
    client.query_rows("INSERT INTO f.hosts VALUES (1, 'db1.example.com', 3, 3), (2, 'web.example.org', 5, 9)").unwrap();
    let rows = client
        .query_rows("SELECT id, SUBSTRING_INDEX(name, '.', 1), NULLIF(a, b), GREATEST(a, b) FROM f.hosts WHERE CRC32(name) > 0 ORDER BY id")
        .unwrap();
    assert_eq!(rows, vec![strings(&[Some("1"), Some("db1"), None, Some("3")]), strings(&[Some("2"), Some("web"), Some("5"), Some("9")])]);
    let rows = client.query_rows("SELECT id FROM f.hosts WHERE MD5(name) = MD5('web.example.org')").unwrap();
    assert_eq!(rows, vec![strings(&[Some("2")])]);

    // CRC32 and STRCMP are integers on the wire.
    match client.query("SELECT CRC32('a'), STRCMP('a', 'b')").unwrap() {
        Response::Rows { columns, .. } => {
            assert_eq!(columns[0].column_type(), ColumnType::MYSQL_TYPE_LONGLONG);
            assert_eq!(columns[1].column_type(), ColumnType::MYSQL_TYPE_LONGLONG);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn numeric_functions_answer_as_mysql_does() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    // MySQL 8.4 reference manual, "Mathematical Functions".
    assert_eq!(
        row(&mut client, "SELECT ROUND(-1.23), ROUND(-1.58), ROUND(1.298, 1), ROUND(23.298, -1), ROUND(2.5), ROUND(2.5e0), ROUND(-2.5)"),
        strings(&[Some("-1"), Some("-2"), Some("1.3"), Some("20"), Some("3"), Some("2"), Some("-3")])
    );
    assert_eq!(
        row(
            &mut client,
            "SELECT TRUNCATE(1.223, 1), TRUNCATE(-1.999, 1), TRUNCATE(122, -2), FLOOR(1.23), FLOOR(-1.23), CEILING(1.23), CEIL(-1.23)"
        ),
        strings(&[Some("1.2"), Some("-1.9"), Some("100"), Some("1"), Some("-2"), Some("2"), Some("-1")])
    );
    assert_eq!(
        row(
            &mut client,
            "SELECT SIGN(-32), MOD(234, 10), MOD(29, 0), POW(2, -2), SQRT(-16), LOG(2, 65536), LOG10(100), LN(0), ROUND(NULL)"
        ),
        strings(&[Some("-1"), Some("4"), None, Some("0.25"), None, Some("16"), Some("2"), None, None])
    );
    // Over a column and a parameter, DECIMAL stays exact.
    client.query_rows("CREATE DATABASE m").unwrap();
    client.query_rows("CREATE TABLE m.t (id INT PRIMARY KEY, price DECIMAL(10,3))").unwrap();
    client.query_rows("INSERT INTO m.t VALUES (1, 1.005), (2, -7.495)").unwrap();
    assert_eq!(
        client.query_rows("SELECT ROUND(price, 2), FLOOR(price), CEIL(price) FROM m.t ORDER BY id").unwrap(),
        vec![strings(&[Some("1.01"), Some("1"), Some("2")]), strings(&[Some("-7.50"), Some("-8"), Some("-7")])]
    );
    let (id, _, _) = client.prepare("SELECT ROUND(?, 1)").unwrap();
    let response = client.execute(id, &[testkit::raw_client::MValue::Bytes(b"2.45".to_vec())]).unwrap();
    let Response::BinaryRows { rows, .. } = response else { panic!("rows: {response:?}") };
    assert_eq!(rows, vec![vec![testkit::raw_client::MValue::Bytes(b"2.5".to_vec())]], "a string parameter rounds as its decimal text");
}
