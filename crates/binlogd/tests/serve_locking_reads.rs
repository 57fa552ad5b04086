//! SELECT ... FOR UPDATE and FOR SHARE, as InnoDB does them: the rows
//! WHERE selects are locked until the transaction ends (a writer or
//! another locking read of them waits, for the session's
//! innodb_lock_wait_timeout), other rows and plain reads do not wait, a
//! locking read sees the latest committed row where the transaction's
//! snapshot still holds an older one, NOWAIT fails at once with MySQL's
//! 3572, and under autocommit the locks go with the statement, which
//! writes nothing to the binlog.

mod support;

use support::ServerProcess;
use testkit::raw_client::{RawClient, ServerErr};

fn client(server: &ServerProcess) -> RawClient {
    RawClient::login_to(server.port, "root", "", None).unwrap()
}

fn ok(client: &mut RawClient, sql: &str) {
    client.query(sql).unwrap_or_else(|error| panic!("{sql}: {error:?}"));
}

/// The first column of each row of `sql`'s result.
fn column(client: &mut RawClient, sql: &str) -> Vec<String> {
    let rows = client.query_rows(sql).unwrap_or_else(|error| panic!("{sql}: {error:?}"));
    rows.into_iter().map(|row| row[0].clone().unwrap_or_default()).collect()
}

/// File and position of the binlog's end.
fn binlog_end(client: &mut RawClient) -> Vec<Option<String>> {
    client.query_rows("SHOW BINARY LOG STATUS").unwrap().remove(0)[..2].to_vec()
}

fn error_of(client: &mut RawClient, sql: &str) -> ServerErr {
    match client.query(sql) {
        Err(error) => error,
        Ok(response) => panic!("{sql}: expected an error, got {response:?}"),
    }
}

#[test]
fn locking_reads_lock_what_they_select_and_read_the_latest_rows() {
    let server = ServerProcess::start();
    let mut admin = client(&server);
    ok(&mut admin, "CREATE DATABASE d");
    ok(&mut admin, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
    ok(&mut admin, "INSERT INTO d.t VALUES (1, 10), (2, 20), (3, 30), (4, 40)");
    let binlog_position = binlog_end(&mut admin);

    let mut holder = client(&server);
    ok(&mut holder, "BEGIN");
    assert_eq!(column(&mut holder, "SELECT v FROM d.t WHERE id = 1 FOR UPDATE"), ["10"]);
    assert_eq!(column(&mut holder, "SELECT id FROM d.t WHERE v >= 35 FOR SHARE"), ["4"]);

    let mut other = client(&server);
    ok(&mut other, "SET SESSION innodb_lock_wait_timeout = 1");
    for locked in ["UPDATE d.t SET v = 11 WHERE id = 1", "SELECT v FROM d.t WHERE id = 4 FOR UPDATE", "DELETE FROM d.t WHERE id = 4"] {
        let error = error_of(&mut other, locked);
        assert_eq!((error.code, error.state.as_str()), (1205, "HY000"), "{locked}");
    }
    let error = error_of(&mut other, "SELECT v FROM d.t WHERE id BETWEEN 1 AND 2 FOR UPDATE NOWAIT");
    assert_eq!(
        (error.code, error.state.as_str(), error.message.as_str()),
        (3572, "HY000", "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
    );
    // A plain read does not wait, and rows nobody locked can be written.
    assert_eq!(column(&mut other, "SELECT v FROM d.t WHERE id = 1"), ["10"]);
    ok(&mut other, "UPDATE d.t SET v = 21 WHERE id = 2");

    // The snapshot keeps 30 for row 3; a locking read sees the 31 committed since.
    let mut reader = client(&server);
    ok(&mut reader, "BEGIN");
    assert_eq!(column(&mut reader, "SELECT v FROM d.t WHERE id = 3"), ["30"]);
    ok(&mut other, "UPDATE d.t SET v = 31 WHERE id = 3");
    assert_eq!(column(&mut reader, "SELECT v FROM d.t WHERE id = 3"), ["30"]);
    assert_eq!(column(&mut reader, "SELECT v FROM d.t WHERE id = 3 FOR UPDATE"), ["31"]);
    assert_eq!(column(&mut reader, "SELECT id, v FROM d.t WHERE v > 20 AND id <> 4 ORDER BY v DESC FOR SHARE"), ["3", "2"]);
    ok(&mut reader, "COMMIT");

    // The holder's commit lets the writer through.
    ok(&mut holder, "COMMIT");
    ok(&mut other, "UPDATE d.t SET v = 11 WHERE id = 1");

    // Under autocommit the locks end with the statement, and nothing is logged.
    let binlog_before = binlog_end(&mut admin);
    assert_ne!(binlog_before, binlog_position);
    assert_eq!(column(&mut holder, "SELECT v FROM d.t WHERE id = 1 FOR UPDATE"), ["11"]);
    assert_eq!(binlog_end(&mut admin), binlog_before);
    ok(&mut other, "UPDATE d.t SET v = 12 WHERE id = 1");
    assert_eq!(column(&mut admin, "SELECT GROUP_CONCAT(v ORDER BY id) FROM d.t"), ["12,21,31,40"]);

    let error = error_of(&mut other, "SELECT v FROM d.t WHERE id = 1 FOR UPDATE SKIP LOCKED");
    assert_eq!(error.code, 1235);
}
