//! CAST and CONVERT as MySQL 8.4 answers them, with their warnings and
//! result column types, and DECIMAL values kept exactly: rounded half
//! away from zero at the column's scale, all 65 digits of DECIMAL(65,30)
//! through INSERT, SELECT and the binlog's row images (mysql_common
//! decodes them), clipped with 1264 outside strict mode.

mod support;

use mysql_common::binlog::value::BinlogValue;
use mysql_common::constants::ColumnType;
use support::binlog_rows::logged_rows;
use support::ServerProcess;
use testkit::raw_client::{MValue, RawClient, Response};

fn row(client: &mut RawClient, sql: &str) -> Vec<String> {
    let mut rows = client.query_rows(sql).unwrap_or_else(|error| panic!("{sql}: {error:?}"));
    rows.remove(0).into_iter().map(|value| value.unwrap_or_else(|| "NULL".into())).collect()
}

/// (code, message) of each warning of the last statement.
fn warnings(client: &mut RawClient) -> Vec<(String, String)> {
    client.query_rows("SHOW WARNINGS").unwrap().into_iter().map(|w| (w[1].clone().unwrap(), w[2].clone().unwrap())).collect()
}

#[test]
fn casts_convert_as_mysql_does_and_warn_where_it_warns() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    assert_eq!(
        row(
            &mut client,
            "SELECT CAST('12' AS SIGNED), CAST(-1 AS UNSIGNED), CAST(1.5 AS SIGNED), CAST(-1.5 AS SIGNED INTEGER), CAST('1.9' AS SIGNED)"
        ),
        ["12", "18446744073709551615", "2", "-2", "1"]
    );
    assert_eq!(warnings(&mut client), [("1292".to_string(), "Truncated incorrect INTEGER value: '1.9'".to_string())]);
    assert_eq!(
        row(&mut client, "SELECT CAST(123 AS CHAR), CAST('abcdef' AS CHAR(3)), HEX(CAST('ab' AS BINARY(4))), CONVERT('12', UNSIGNED), CONVERT('abc' USING utf8mb4)"),
        ["123", "abc", "61620000", "12", "abc"]
    );
    assert_eq!(
        row(&mut client, "SELECT CAST('2024-01-02 10:11:12' AS DATE), CAST('10:11:12' AS TIME), CAST('2024-01-02' AS DATETIME), CAST(20240102 AS DATE), CAST('2024-13-40' AS DATE)"),
        ["2024-01-02", "10:11:12", "2024-01-02 00:00:00", "2024-01-02", "NULL"]
    );
    assert_eq!(warnings(&mut client), [("1292".to_string(), "Incorrect date value: '2024-13-40'".to_string())]);
    assert_eq!(
        row(&mut client, "SELECT CAST(1.005 AS DECIMAL(5,2)), CAST(-1.005 AS DECIMAL(5,2)), CAST(12345 AS DECIMAL(4,1)), CAST('1e3' AS DOUBLE), CAST('[1,2]' AS JSON), CAST(NULL AS SIGNED)"),
        ["1.01", "-1.01", "999.9", "1000", "[1, 2]", "NULL"]
    );
    assert_eq!(warnings(&mut client)[0].0, "1264");

    // Result columns carry the cast's type.
    let Response::Rows { columns, .. } =
        client.query("SELECT CAST('1' AS SIGNED), CAST('2024-01-01' AS DATE), CAST(1 AS DECIMAL(5,2)), CAST(1 AS CHAR)").unwrap()
    else {
        panic!("rows")
    };
    let types: Vec<ColumnType> = columns.iter().map(|column| column.column_type()).collect();
    assert_eq!(
        types,
        [
            ColumnType::MYSQL_TYPE_LONGLONG,
            ColumnType::MYSQL_TYPE_DATE,
            ColumnType::MYSQL_TYPE_NEWDECIMAL,
            ColumnType::MYSQL_TYPE_VAR_STRING
        ]
    );

    let error = client.query_rows("SELECT CAST(1 AS POINT)").unwrap_err();
    assert_eq!(error.code, 1235, "{}", error.message);
    assert_eq!(row(&mut client, "SELECT 1"), ["1"], "the connection stays usable");
}

#[test]
fn decimals_keep_every_digit_and_round_half_away_from_zero() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("CREATE TABLE a.d (id INT PRIMARY KEY, wide DECIMAL(65,30), money DECIMAL(5,2))").unwrap();
    let wide = "12345678901234567890123456789012345.123456789012345678901234567890";
    client.query_rows(&format!("INSERT INTO a.d VALUES (1, {wide}, 1.005), (2, -0.000000000000000000000000000001, '-2.675')")).unwrap();
    let (id, _, _) = client.prepare("INSERT INTO a.d VALUES (?, ?, ?)").unwrap();
    client.execute(id, &[MValue::Int(3), MValue::Bytes(format!("-{wide}").into_bytes()), MValue::Double(2.5)]).unwrap();
    let rows = client.query_rows("SELECT wide, money FROM a.d ORDER BY id").unwrap();
    let text: Vec<Vec<String>> = rows.into_iter().map(|row| row.into_iter().map(Option::unwrap).collect()).collect();
    assert_eq!(
        text,
        [
            [wide.to_string(), "1.01".to_string()],
            ["-0.000000000000000000000000000001".to_string(), "-2.68".to_string()],
            [format!("-{wide}"), "2.50".to_string()],
        ]
    );

    // Strict mode refuses what does not fit; otherwise it is clipped.
    assert_eq!(client.query_rows("INSERT INTO a.d VALUES (4, 0, 1000)").unwrap_err().code, 1264);
    client.query_rows("SET sql_mode = ''").unwrap();
    client.query_rows("INSERT INTO a.d VALUES (4, 0, -123456)").unwrap();
    assert_eq!(warnings(&mut client)[0].0, "1264");
    assert_eq!(row(&mut client, "SELECT money FROM a.d WHERE id = 4"), ["-999.99"]);

    // The row images carry the exact values.
    let logged: Vec<String> = logged_rows(&server.binlog_files())
        .iter()
        .flat_map(|row| row.after.iter().flatten())
        .filter_map(|value| match value {
            BinlogValue::Value(MValue::Bytes(bytes)) => Some(String::from_utf8(bytes.clone()).unwrap()),
            _ => None,
        })
        .collect();
    assert!(logged.contains(&wide.to_string()), "{logged:?}");
    assert!(logged.contains(&"-2.68".to_string()), "{logged:?}");
}
