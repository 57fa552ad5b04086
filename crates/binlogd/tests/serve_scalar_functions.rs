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
    // A user variable set with `:=` keeps the DECIMAL.
    client.query_rows("SET @n := 2.5, @s := 'a:=b'").unwrap();
    assert_eq!(row(&mut client, "SELECT ROUND(@n), @s"), strings(&[Some("3"), Some("a:=b")]));
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

#[test]
fn date_functions_answer_as_mysql_does() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    assert_eq!(
        row(
            &mut client,
            "SELECT DATE_ADD('2024-01-31', INTERVAL 1 MONTH), DATE_SUB('2024-03-01', INTERVAL 1 DAY), '2024-01-01' + INTERVAL 1 DAY, \
             DATE_ADD('2024-01-01', INTERVAL 90 MINUTE), '2024-12-31 23:59:59' - INTERVAL -1 SECOND, ADDDATE('2024-02-28', 2), \
             TIMESTAMPADD(WEEK, 1, '2024-01-01')"
        ),
        strings(&[
            Some("2024-02-29"),
            Some("2024-02-29"),
            Some("2024-01-02"),
            Some("2024-01-01 01:30:00"),
            Some("2025-01-01 00:00:00"),
            Some("2024-03-01"),
            Some("2024-01-08")
        ])
    );
    assert_eq!(
        row(
            &mut client,
            "SELECT DATEDIFF('2024-03-01', '2024-02-01'), TIMESTAMPDIFF(MONTH, '2024-01-31', '2024-02-29'), \
             TIMESTAMPDIFF(MONTH, '2024-01-29', '2024-02-29'), TIMESTAMPDIFF(SECOND, '2024-01-01', '2024-01-01 00:01:00'), \
             TIMESTAMPDIFF(YEAR, '2000-06-01', '2024-05-31')"
        ),
        strings(&[Some("29"), Some("0"), Some("1"), Some("60"), Some("23")])
    );
    assert_eq!(
        row(
            &mut client,
            "SELECT YEAR('2024-05-06'), MONTH('2024-05-06'), DAY('2024-05-06'), HOUR('10:11:12'), MINUTE('2024-01-01 10:11:12'), \
             DAYOFWEEK('2024-05-06'), WEEKDAY('2024-05-06'), DAYOFYEAR('2024-02-01'), DAYNAME('2024-05-06'), MONTHNAME('2024-05-06'), \
             QUARTER('2024-05-06'), LAST_DAY('2024-02-10'), DATE('2024-01-02 10:00:00'), TIME('2024-01-02 10:00:00'), \
             EXTRACT(MONTH FROM '2024-05-06')"
        ),
        strings(&[
            Some("2024"),
            Some("5"),
            Some("6"),
            Some("10"),
            Some("11"),
            Some("2"),
            Some("0"),
            Some("32"),
            Some("Monday"),
            Some("May"),
            Some("2"),
            Some("2024-02-29"),
            Some("2024-01-02"),
            Some("10:00:00"),
            Some("5")
        ])
    );
    // MySQL 8.4 reference manual, DATE_FORMAT(), STR_TO_DATE(), TO_DAYS().
    assert_eq!(
        row(
            &mut client,
            "SELECT DATE_FORMAT('2009-10-04 22:23:00', '%W %M %Y'), DATE_FORMAT('1900-10-04 22:23:00', '%D %y %a %d %m %b %j'), \
             DATE_FORMAT('1999-01-01', '%X %V'), STR_TO_DATE('01,5,2013', '%d,%m,%Y'), STR_TO_DATE('May 1, 2013', '%M %d,%Y'), \
             STR_TO_DATE('09:30:17a', '%h:%i:%s'), STR_TO_DATE('2013-05-01 10:11:12 PM', '%Y-%m-%d %h:%i:%s %p'), \
             TO_DAYS('2007-10-07'), FROM_DAYS(733321), FROM_UNIXTIME(0), SEC_TO_TIME(3661), TIME_TO_SEC('01:01:01')"
        ),
        strings(&[
            Some("Sunday October 2009"),
            Some("4th 00 Thu 04 10 Oct 277"),
            Some("1998 52"),
            Some("2013-05-01"),
            Some("2013-05-01"),
            Some("09:30:17"),
            Some("2013-05-01 22:11:12"),
            Some("733321"),
            Some("2007-10-07"),
            Some("1970-01-01 00:00:00"),
            Some("01:01:01"),
            Some("3661")
        ])
    );
    // Composite interval units (the manual's DATE_ADD examples); a short
    // value fills the smallest fields; a unit with a time part makes a
    // DATE a DATETIME; text left over gives NULL.
    assert_eq!(
        row(
            &mut client,
            "SELECT DATE_ADD('2100-12-31 23:59:59', INTERVAL '1:1' MINUTE_SECOND), \
             DATE_SUB('2025-01-01 00:00:00', INTERVAL '1 1:1:1' DAY_SECOND), \
             DATE_ADD('1900-01-01 00:00:00', INTERVAL '-1 10' DAY_HOUR), \
             DATE_ADD('1992-12-31 23:59:59.000002', INTERVAL '1.999999' SECOND_MICROSECOND), \
             DATE_ADD('2024-01-31', INTERVAL '1-1' YEAR_MONTH), '2024-01-01' + INTERVAL '1:30' hour_minute, \
             DATE_ADD('2024-01-01', INTERVAL '5' HOUR_MINUTE), DATE_ADD('2024-01-01', INTERVAL 24 HOUR), \
             DATE_ADD('2024-01-01', INTERVAL '1:2:3' HOUR_MINUTE), DATE_ADD('2024-01-01', INTERVAL 1.5 HOUR_MINUTE)"
        ),
        strings(&[
            Some("2101-01-01 00:01:00"),
            Some("2024-12-30 22:58:59"),
            Some("1899-12-30 14:00:00"),
            Some("1993-01-01 00:00:01.000001"),
            Some("2025-02-28"),
            Some("2024-01-01 01:30:00"),
            Some("2024-01-01 00:05:00"),
            Some("2024-01-02 00:00:00"),
            None,
            Some("2024-01-01 01:05:00"),
        ])
    );
    // Not a date on the calendar: NULL and 1292.
    assert_eq!(row(&mut client, "SELECT DATE_ADD('2024-02-30', INTERVAL 1 DAY), YEAR(NULL)"), strings(&[None, None]));
    let warnings = client.query_rows("SHOW WARNINGS").unwrap();
    assert_eq!(warnings[0][1].as_deref(), Some("1292"), "{warnings:?}");
    assert_eq!(client.query_rows("SELECT YEAR()").unwrap_err().code, 1582);

    // Over a column and a parameter.
    client.query_rows("CREATE DATABASE d").unwrap();
    client.query_rows("CREATE TABLE d.t (id INT PRIMARY KEY, at DATETIME(3), day DATE)").unwrap();
    client.query_rows("INSERT INTO d.t VALUES (1, '2024-05-06 07:08:09.123', '2024-12-31')").unwrap();
    assert_eq!(
        row(
            &mut client,
            "SELECT YEAR(at), DATE_FORMAT(at, '%H.%i.%s.%f'), day + INTERVAL 1 DAY, MONTH(day) FROM d.t WHERE at < NOW() - INTERVAL 1 DAY"
        ),
        strings(&[Some("2024"), Some("07.08.09.123000"), Some("2025-01-01"), Some("12")])
    );
    let (id, _, _) = client.prepare("SELECT id FROM d.t WHERE day BETWEEN ? - INTERVAL 7 DAY AND ?").unwrap();
    let response = client
        .execute(
            id,
            &[testkit::raw_client::MValue::Bytes(b"2025-01-05".to_vec()), testkit::raw_client::MValue::Bytes(b"2025-01-05".to_vec())],
        )
        .unwrap();
    let Response::BinaryRows { rows, .. } = response else { panic!("rows: {response:?}") };
    assert_eq!(rows.len(), 1);
}
