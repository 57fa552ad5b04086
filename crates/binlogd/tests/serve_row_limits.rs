//! `UPDATE ... ORDER BY pk LIMIT n` and `DELETE ... ORDER BY pk LIMIT n`
//! as a purge job or a queue consumer writes them: the first `n` matching
//! rows in key order (or its reverse) change, others stay, also when an
//! index range finds them and when LIMIT is a prepared statement's
//! parameter; what binlogd does not order by is 1235.

mod support;

use support::ServerProcess;
use testkit::raw_client::{MValue, RawClient, Response};

fn column(client: &mut RawClient, sql: &str) -> Vec<String> {
    client.query_rows(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")).into_iter().map(|row| row[0].clone().unwrap()).collect()
}

fn affected(client: &mut RawClient, sql: &str) -> u64 {
    match client.query(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")) {
        Response::Ok { affected_rows, .. } => affected_rows,
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn limited_updates_and_deletes_take_the_first_rows_in_key_order() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("USE a").unwrap();
    client.query_rows("CREATE TABLE q (id INT PRIMARY KEY, state VARCHAR(10), k INT, KEY k (k))").unwrap();
    client
        .query_rows("INSERT INTO q VALUES (1, 'new', 5), (2, 'new', 4), (3, 'done', 3), (4, 'new', 2), (5, 'new', 1), (6, 'new', 0)")
        .unwrap();

    assert_eq!(affected(&mut client, "DELETE FROM q WHERE state = 'new' ORDER BY id LIMIT 2"), 2);
    assert_eq!(column(&mut client, "SELECT id FROM q ORDER BY id"), ["3", "4", "5", "6"]);
    assert_eq!(affected(&mut client, "UPDATE q SET state = 'taken' WHERE state = 'new' ORDER BY id DESC LIMIT 1"), 1);
    assert_eq!(column(&mut client, "SELECT id FROM q WHERE state = 'taken'"), ["6"]);
    // Found through the index on k, still changed in key order.
    assert_eq!(affected(&mut client, "UPDATE q SET state = 'k' WHERE k BETWEEN 1 AND 3 ORDER BY id LIMIT 1"), 1);
    assert_eq!(column(&mut client, "SELECT id FROM q WHERE state = 'k'"), ["3"]);
    // LIMIT without ORDER BY, and LIMIT 0.
    assert_eq!(affected(&mut client, "DELETE FROM q WHERE k >= 1 LIMIT 0"), 0);
    assert_eq!(affected(&mut client, "UPDATE q SET k = k + 10 LIMIT 2"), 2);
    assert_eq!(column(&mut client, "SELECT COUNT(*) FROM q WHERE k >= 10"), ["2"]);

    // A prepared statement's parameter as the LIMIT.
    let (id, _, _) = client.prepare("DELETE FROM q WHERE state <> ? ORDER BY id LIMIT ?").unwrap();
    let response = client.execute(id, &[MValue::Bytes(b"taken".to_vec()), MValue::Int(2)]).unwrap();
    assert!(matches!(response, Response::Ok { affected_rows: 2, .. }), "{response:?}");
    assert_eq!(column(&mut client, "SELECT id FROM q ORDER BY id"), ["5", "6"]);

    for sql in ["DELETE FROM q ORDER BY state LIMIT 1", "UPDATE q SET k = 1 ORDER BY id, k LIMIT 1"] {
        assert_eq!(client.query_rows(sql).unwrap_err().code, 1235, "{sql}");
    }
    client.query_rows("CREATE TABLE heap (v INT)").unwrap();
    assert_eq!(client.query_rows("DELETE FROM heap LIMIT 1").unwrap_err().code, 1235);
    assert_eq!(column(&mut client, "SELECT COUNT(*) FROM q"), ["2"], "the refused statements changed nothing");
}
