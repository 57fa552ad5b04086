//! SELECT ... FOR UPDATE and FOR SHARE (or LOCK IN SHARE MODE), as InnoDB does them: the rows
//! WHERE selects are locked until the transaction ends (a writer or
//! another locking read of them waits, for the session's
//! innodb_lock_wait_timeout), other rows and plain reads do not wait, a
//! locking read sees the latest committed row where the transaction's
//! snapshot still holds an older one, NOWAIT fails at once with MySQL's
//! 3572, SKIP LOCKED passes over held rows, and under autocommit the locks go with the statement, which
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
    // MySQL's older spelling of FOR SHARE.
    assert_eq!(column(&mut holder, "SELECT id FROM d.t WHERE v >= 35 LOCK IN SHARE MODE"), ["4"]);

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
}

/// A job queue: each worker takes the first pending job nobody holds
/// (`ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`), so workers never wait
/// for each other and never get the same job; a LIMIT in primary-key
/// order locks only the rows it returns.
#[test]
fn skip_locked_passes_over_held_rows_and_limit_locks_only_what_it_returns() {
    let server = ServerProcess::start();
    let mut admin = client(&server);
    ok(&mut admin, "CREATE DATABASE d");
    ok(&mut admin, "CREATE TABLE d.jobs (id INT PRIMARY KEY, state VARCHAR(10), worker INT)");
    ok(&mut admin, "INSERT INTO d.jobs VALUES (1, 'pending', NULL), (2, 'pending', NULL), (3, 'done', NULL), (4, 'pending', NULL), (5, 'pending', NULL)");
    let take = "SELECT id FROM d.jobs WHERE state = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";

    let mut workers: Vec<RawClient> = (0..3).map(|_| client(&server)).collect();
    let mut taken = Vec::new();
    for (number, worker) in workers.iter_mut().enumerate() {
        ok(worker, "SET SESSION innodb_lock_wait_timeout = 1");
        ok(worker, "BEGIN");
        let job = column(worker, take);
        assert_eq!(job.len(), 1, "worker {number}");
        ok(worker, &format!("UPDATE d.jobs SET state = 'running', worker = {number} WHERE id = {}", job[0]));
        taken.push(job[0].clone());
    }
    assert_eq!(taken, ["1", "2", "4"]);

    // Without LIMIT, SKIP LOCKED returns every row nobody holds; DESC reads from the end.
    let mut other = client(&server);
    ok(&mut other, "BEGIN");
    assert_eq!(column(&mut other, "SELECT id FROM d.jobs FOR UPDATE SKIP LOCKED"), ["3", "5"]);
    ok(&mut other, "ROLLBACK");
    ok(&mut other, "BEGIN");
    assert_eq!(column(&mut other, "SELECT id FROM d.jobs ORDER BY id DESC LIMIT 2 FOR SHARE SKIP LOCKED"), ["5", "3"]);
    ok(&mut other, "ROLLBACK");

    // LIMIT with OFFSET in key order locks the rows up to it and no further:
    // row 5 stays free for a writer. Without key order every match is locked.
    ok(&mut other, "BEGIN");
    assert_eq!(column(&mut other, "SELECT id FROM d.jobs WHERE id >= 3 AND id <> 4 LIMIT 1 OFFSET 0 FOR UPDATE"), ["3"]);
    let mut writer = client(&server);
    ok(&mut writer, "SET SESSION innodb_lock_wait_timeout = 1");
    ok(&mut writer, "UPDATE d.jobs SET worker = 9 WHERE id = 5");
    ok(&mut other, "ROLLBACK");
    ok(&mut other, "BEGIN");
    assert_eq!(column(&mut other, "SELECT id FROM d.jobs WHERE state = 'done' OR id = 5 ORDER BY worker LIMIT 1 FOR UPDATE"), ["3"]);
    let error = error_of(&mut writer, "UPDATE d.jobs SET worker = 10 WHERE id = 5");
    assert_eq!(error.code, 1205);
    ok(&mut other, "ROLLBACK");

    // NOWAIT is unchanged: the first held row fails the statement.
    let error = error_of(&mut other, "SELECT id FROM d.jobs WHERE id <= 2 FOR UPDATE NOWAIT");
    assert_eq!(error.code, 3572);
    for worker in &mut workers {
        ok(worker, "COMMIT");
    }
    assert_eq!(
        column(&mut admin, "SELECT GROUP_CONCAT(CONCAT(id, ':', state, ':', IFNULL(worker, '-')) ORDER BY id) FROM d.jobs"),
        ["1:running:0,2:running:1,3:done:-,4:running:2,5:pending:9"]
    );
}
