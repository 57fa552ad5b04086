//! Arithmetic overflows as MySQL's does: a BIGINT result past 64 signed
//! bits, a BIGINT UNSIGNED one below zero or past 64 bits, or a DOUBLE
//! past the finite numbers is error 1690, never a wrapped or widened
//! number, an infinity or a NaN.

mod support;

use support::ServerProcess;
use testkit::raw_client::RawClient;

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
