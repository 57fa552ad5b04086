//! Names and widths MySQL refuses are refused here too, with MySQL's codes,
//! before anything reaches the engine or the binlog: a name over 64
//! characters (1059) or a table over InnoDB's 1017 columns (1117) would
//! stop a MySQL replica applying the binlog.

mod support;

use support::ServerProcess;
use testkit::raw_client::RawClient;

#[test]
fn long_names_and_wide_tables_get_mysqls_errors_and_log_nothing() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    let longest = "n".repeat(64);
    let too_long = "n".repeat(65);
    client.query_rows(&format!("CREATE DATABASE {longest}")).unwrap();
    client.query_rows(&format!("USE {longest}")).unwrap();
    let position = |client: &mut RawClient| client.query_rows("SHOW BINARY LOG STATUS").unwrap()[0][1].clone();
    let before = position(&mut client);

    for sql in [
        format!("CREATE DATABASE {too_long}"),
        format!("CREATE TABLE {too_long} (id INT PRIMARY KEY)"),
        format!("CREATE TABLE t (id INT PRIMARY KEY, {too_long} INT)"),
        format!("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY {too_long} (v))"),
    ] {
        let error = client.query_rows(&sql).unwrap_err();
        assert_eq!((error.code, error.state.as_str()), (1059, "42000"), "{sql}: {error:?}");
        assert_eq!(error.message, format!("Identifier name '{too_long}' is too long"));
    }
    client.query_rows("CREATE TABLE t (id INT PRIMARY KEY, v INT)").unwrap();
    let error = client.query_rows(&format!("CREATE INDEX {too_long} ON t (v)")).unwrap_err();
    assert_eq!(error.code, 1059, "{error:?}");
    client.query_rows(&format!("CREATE INDEX {longest} ON t (v)")).unwrap();

    let columns = |count: usize| (0..count).map(|n| format!("c{n} INT")).collect::<Vec<_>>().join(", ");
    let error = client.query_rows(&format!("CREATE TABLE wide (id INT PRIMARY KEY, {})", columns(1017))).unwrap_err();
    assert_eq!((error.code, error.state.as_str(), error.message.as_str()), (1117, "42000", "Too many columns"));
    client.query_rows(&format!("CREATE TABLE wide (id INT PRIMARY KEY, {})", columns(1016))).unwrap();
    assert_eq!(client.query_rows("SHOW COLUMNS FROM wide").unwrap().len(), 1017);

    // The refused statements logged nothing: only the three that ran.
    let events = client.query_rows(&format!("SHOW BINLOG EVENTS FROM {}", before.unwrap())).unwrap();
    let queries: Vec<String> =
        events.iter().filter(|event| event[2].as_deref() == Some("Query")).filter_map(|event| event[5].clone()).collect();
    assert_eq!(queries.len(), 3, "{queries:?}");
    assert!(queries.iter().all(|query| !query.contains(&too_long)), "{queries:?}");
}
