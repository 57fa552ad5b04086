//! Arithmetic as MySQL's: a BIGINT result past 64 signed bits, a BIGINT
//! UNSIGNED one below zero or past 64 bits, or a DOUBLE past the finite
//! numbers is error 1690, never a wrapped or widened number, an infinity
//! or a NaN; a division by zero is NULL, with warning or error 1365 as
//! sql_mode says; a NaN or infinite parameter never reaches a column.

mod support;

use support::ServerProcess;
use testkit::raw_client::{MValue, RawClient, Response};

#[test]
fn bigint_overflow_is_1690() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    for (sql, message) in [
        ("SELECT 9223372036854775807 + 1", "BIGINT value is out of range in '9223372036854775807 + 1'"),
        ("SELECT -9223372036854775808 - 1", "BIGINT value is out of range in '-9223372036854775808 - 1'"),
        ("SELECT -9223372036854775808 DIV -1", "BIGINT value is out of range in '-9223372036854775808 DIV -1'"),
        ("SELECT 4611686018427387904 * 2", "BIGINT value is out of range in '4611686018427387904 * 2'"),
        ("SELECT 18446744073709551615 + 1", "BIGINT UNSIGNED value is out of range in '18446744073709551615 + 1'"),
        (
            "SELECT 9223372036854775808 - 9223372036854775809",
            "BIGINT UNSIGNED value is out of range in '9223372036854775808 - 9223372036854775809'",
        ),
        ("SELECT 1e308 * 10", "DOUBLE value is out of range in '1e308 * 10'"),
        ("SELECT -1e308 - 1e308", "DOUBLE value is out of range in '-1e308 - 1e308'"),
        ("SELECT 1e308 / 1e-308", "DOUBLE value is out of range in '1e308 / 1e-308'"),
    ] {
        let error = client.query_rows(sql).unwrap_err();
        assert_eq!((error.code, error.state.as_str(), error.message.as_str()), (1690, "22003", message), "{sql}");
    }
    for (sql, value) in [
        ("SELECT 9223372036854775807 + 0", "9223372036854775807"),
        ("SELECT -9223372036854775807 - 1", "-9223372036854775808"),
        ("SELECT 18446744073709551614 + 1", "18446744073709551615"),
        ("SELECT 9223372036854775808 - 1", "9223372036854775807"),
        ("SELECT 7 DIV 2, 7 % 0", "3"),
        ("SELECT 1e308 + 1", "1e308"),
    ] {
        assert_eq!(client.value(sql), value, "{sql}");
    }
    // Nothing out of range reaches a DOUBLE column either.
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("CREATE TABLE a.t (id INT PRIMARY KEY, d DOUBLE)").unwrap();
    assert_eq!(client.query_rows("INSERT INTO a.t VALUES (1, 1e308 * 10)").unwrap_err().code, 1690);
    assert_eq!(client.value("SELECT COUNT(*) FROM a.t"), "0");
}

/// The warnings SHOW WARNINGS lists for the last statement, as (code, message).
fn warnings(client: &mut RawClient) -> Vec<(String, String)> {
    let rows = client.query_rows("SHOW WARNINGS").unwrap();
    rows.into_iter().map(|row| (row[1].clone().unwrap(), row[2].clone().unwrap())).collect()
}

#[test]
fn division_by_zero_follows_sql_mode() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    let division = || ("1365".to_string(), "Division by 0".to_string());
    // MySQL 8.4's default sql_mode has ERROR_FOR_DIVISION_BY_ZERO: a query
    // gets NULL and a warning per division.
    for sql in ["SELECT 1/0", "SELECT 7 DIV 0", "SELECT 7 % 0", "SELECT 1.5/0.0", "SELECT 1/'0'"] {
        assert_eq!(client.query_rows(sql).unwrap(), vec![vec![None]], "{sql}");
        assert_eq!(warnings(&mut client), vec![division()], "{sql}");
    }
    // NULL divided by zero, or divided by NULL, is NULL without a warning.
    assert_eq!(client.query_rows("SELECT NULL/0, 1/NULL").unwrap(), vec![vec![None, None]]);
    assert_eq!(warnings(&mut client), vec![]);

    // A strict-mode write refuses it and changes nothing.
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("CREATE TABLE a.t (id INT PRIMARY KEY, v DOUBLE)").unwrap();
    client.query_rows("INSERT INTO a.t VALUES (1, 10)").unwrap();
    let error = client.query_rows("INSERT INTO a.t VALUES (2, 1/0)").unwrap_err();
    assert_eq!((error.code, error.state.as_str(), error.message.as_str()), (1365, "22012", "Division by 0"));
    let error = client.query_rows("UPDATE a.t SET v = v DIV 0 WHERE id = 1").unwrap_err();
    assert_eq!(error.code, 1365);
    assert_eq!(client.query_rows("SELECT id, v FROM a.t").unwrap(), vec![vec![Some("1".into()), Some("10".into())]]);

    // Outside strict mode the write stores NULL with the warning.
    client.query_rows("SET SESSION sql_mode = 'ERROR_FOR_DIVISION_BY_ZERO'").unwrap();
    match client.query("INSERT INTO a.t VALUES (2, 1/0)").unwrap() {
        Response::Ok { warnings, .. } => assert_eq!(warnings, 1),
        other => panic!("expected OK, got {other:?}"),
    }
    assert_eq!(warnings(&mut client), vec![division()]);
    // Without ERROR_FOR_DIVISION_BY_ZERO it is silent, strict or not.
    client.query_rows("SET SESSION sql_mode = 'STRICT_TRANS_TABLES'").unwrap();
    client.query_rows("INSERT INTO a.t VALUES (3, 5 % 0)").unwrap();
    assert_eq!(warnings(&mut client), vec![]);
    assert_eq!(
        client.query_rows("SELECT id, v FROM a.t ORDER BY id").unwrap(),
        vec![vec![Some("1".into()), Some("10".into())], vec![Some("2".into()), None], vec![Some("3".into()), None]]
    );
}

#[test]
fn nan_and_infinite_parameters_are_out_of_range() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("CREATE TABLE a.t (id INT PRIMARY KEY, d DOUBLE, f FLOAT)").unwrap();
    let (insert, ..) = client.prepare("INSERT INTO a.t VALUES (?, ?, ?)").unwrap();
    for (id, bad) in [(1, f64::NAN), (2, f64::INFINITY), (3, f64::NEG_INFINITY)] {
        for params in
            [[MValue::Int(id), MValue::Double(bad), MValue::Double(0.0)], [MValue::Int(id), MValue::Double(0.0), MValue::Double(bad)]]
        {
            let error = client.execute(insert, &params).unwrap_err();
            assert_eq!((error.code, error.state.as_str()), (1264, "22003"), "{params:?}");
        }
    }
    client.execute(insert, &[MValue::Int(4), MValue::Double(1.5), MValue::Double(2.5)]).unwrap();
    assert_eq!(
        client.query_rows("SELECT id, d, f FROM a.t").unwrap(),
        vec![vec![Some("4".into()), Some("1.5".into()), Some("2.5".into())]]
    );
}
