//! Prepared statements keep their plan from one execution to the next,
//! and make it again when what it was made from changed: DDL on the
//! table it reads, the session's sql_mode; parameters that select other
//! rows never reuse the rows or ranges of an earlier execution. A plan
//! made again counts in `Com_stmt_reprepare`, as MySQL counts its
//! re-preparations. A prepared statement runs in the database that was
//! current at its PREPARE, as in MySQL.

mod support;

use support::ServerProcess;
use testkit::raw_client::{MValue, RawClient, Response};

fn reprepares(client: &mut RawClient) -> u64 {
    let rows = client.query_rows("SHOW GLOBAL STATUS LIKE 'Com_stmt_reprepare'").unwrap();
    rows[0][1].as_deref().unwrap().parse().unwrap()
}

/// A binary result's rows as text, NULL as "NULL".
fn rows(response: Response) -> Vec<Vec<String>> {
    let Response::BinaryRows { rows, .. } = response else { panic!("not a binary result set: {response:?}") };
    rows.iter()
        .map(|row| {
            row.iter()
                .map(|value| match value {
                    MValue::NULL => "NULL".to_string(),
                    MValue::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                    MValue::Int(v) => v.to_string(),
                    MValue::UInt(v) => v.to_string(),
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .collect()
}

fn column_names(response: &Response) -> Vec<String> {
    let Response::BinaryRows { columns, .. } = response else { panic!("not a binary result set: {response:?}") };
    columns.iter().map(|column| column.name_str().into_owned()).collect()
}

fn row(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

#[test]
fn ddl_on_the_table_makes_the_plan_again() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("USE a").unwrap();
    client.query_rows("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))").unwrap();
    client.query_rows("INSERT INTO t VALUES (1, 'one'), (2, 'two')").unwrap();
    let (select, ..) = client.prepare("SELECT * FROM t WHERE id = ?").unwrap();
    let before = reprepares(&mut client);

    assert_eq!(rows(client.execute(select, &[MValue::Int(1)]).unwrap()), vec![row(&["1", "one"])]);
    assert_eq!(rows(client.execute(select, &[MValue::Int(2)]).unwrap()), vec![row(&["2", "two"])]);
    assert_eq!(reprepares(&mut client), before, "a plan that holds is used again");

    // A new column: `*` reads it at once.
    client.query_rows("ALTER TABLE t ADD COLUMN d INT DEFAULT 7").unwrap();
    let response = client.execute(select, &[MValue::Int(1)]).unwrap();
    assert_eq!(column_names(&response), ["id", "c", "d"]);
    assert_eq!(rows(response), vec![row(&["1", "one", "7"])]);
    assert_eq!(reprepares(&mut client), before + 1);
    assert_eq!(rows(client.execute(select, &[MValue::Int(2)]).unwrap()), vec![row(&["2", "two", "7"])]);
    assert_eq!(reprepares(&mut client), before + 1, "the new plan is kept");

    // Dropped and created again with other columns and rows.
    client.query_rows("DROP TABLE t").unwrap();
    let error = client.execute(select, &[MValue::Int(1)]).unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1146, "Table 'a.t' doesn't exist"));
    client.query_rows("CREATE TABLE t (e CHAR(3), id BIGINT PRIMARY KEY)").unwrap();
    client.query_rows("INSERT INTO t VALUES ('new', 1)").unwrap();
    let response = client.execute(select, &[MValue::Int(1)]).unwrap();
    assert_eq!(column_names(&response), ["e", "id"]);
    assert_eq!(rows(response), vec![row(&["new", "1"])]);

    // Another table renamed into its name.
    client.query_rows("CREATE TABLE u (id INT PRIMARY KEY, f VARCHAR(10))").unwrap();
    client.query_rows("INSERT INTO u VALUES (1, 'from u')").unwrap();
    client.query_rows("RENAME TABLE t TO old_t, u TO t").unwrap();
    assert_eq!(rows(client.execute(select, &[MValue::Int(1)]).unwrap()), vec![row(&["1", "from u"])]);
    assert!(reprepares(&mut client) >= before + 3);
}

#[test]
fn sql_mode_makes_the_plan_again_and_the_database_is_the_prepares() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    for database in ["a", "b"] {
        client.query_rows(&format!("CREATE DATABASE {database}")).unwrap();
        client.query_rows(&format!("CREATE TABLE {database}.t (id INT PRIMARY KEY, c VARCHAR(10))")).unwrap();
        client.query_rows(&format!("INSERT INTO {database}.t VALUES (1, 'in {database}')")).unwrap();
    }
    client.query_rows("USE a").unwrap();
    let (select, ..) = client.prepare("SELECT c, DATABASE() FROM t WHERE id = ?").unwrap();
    assert_eq!(rows(client.execute(select, &[MValue::Int(1)]).unwrap()), vec![row(&["in a", "a"])]);
    let before = reprepares(&mut client);

    // MySQL runs a prepared statement in its PREPARE's database; the
    // session's stays the one USE chose.
    client.query_rows("USE b").unwrap();
    assert_eq!(rows(client.execute(select, &[MValue::Int(1)]).unwrap()), vec![row(&["in a", "a"])]);
    assert_eq!(client.query_rows("SELECT DATABASE()").unwrap(), vec![vec![Some("b".to_string())]]);
    assert_eq!(reprepares(&mut client), before, "the statement's database did not change");
    let (in_b, ..) = client.prepare("SELECT c FROM t WHERE id = ?").unwrap();
    assert_eq!(rows(client.execute(in_b, &[MValue::Int(1)]).unwrap()), vec![row(&["in b"])]);

    client.query_rows("SET SESSION sql_mode = 'ANSI_QUOTES'").unwrap();
    assert_eq!(rows(client.execute(select, &[MValue::Int(1)]).unwrap()), vec![row(&["in a", "a"])]);
    assert_eq!(reprepares(&mut client), before + 1, "a new sql_mode makes the plan again");
    assert_eq!(rows(client.execute(select, &[MValue::Int(1)]).unwrap()), vec![row(&["in a", "a"])]);
    assert_eq!(reprepares(&mut client), before + 1);
}

#[test]
fn parameters_choose_their_own_rows_and_ranges() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("CREATE TABLE a.t (id INT PRIMARY KEY, k INT, KEY k (k))").unwrap();
    client.query_rows("INSERT INTO a.t VALUES (1, 10), (2, 20), (3, 30), (4, NULL)").unwrap();
    let ids = |response: Response| rows(response).into_iter().map(|row| row[0].clone()).collect::<Vec<_>>();

    // A key range, an empty one, a NULL bound (no row), a range past every row.
    let (range, ..) = client.prepare("SELECT id FROM a.t WHERE id BETWEEN ? AND ?").unwrap();
    for (low, high, expected) in
        [(MValue::Int(2), MValue::Int(3), vec!["2", "3"]), (MValue::Int(3), MValue::Int(2), vec![]), (MValue::NULL, MValue::Int(9), vec![])]
    {
        assert_eq!(ids(client.execute(range, &[low.clone(), high.clone()]).unwrap()), expected, "{low:?}..{high:?}");
    }
    assert_eq!(ids(client.execute(range, &[MValue::Int(0), MValue::Int(99)]).unwrap()), ["1", "2", "3", "4"]);

    // The same statement by the secondary key, by a string that is a
    // number, and by NULL (which `=` never matches).
    let (by_k, ..) = client.prepare("SELECT id FROM a.t WHERE k = ?").unwrap();
    assert_eq!(ids(client.execute(by_k, &[MValue::Int(20)]).unwrap()), ["2"]);
    assert_eq!(ids(client.execute(by_k, &[MValue::Bytes(b"30".to_vec())]).unwrap()), ["3"]);
    assert_eq!(ids(client.execute(by_k, &[MValue::NULL]).unwrap()), Vec::<String>::new());
    assert_eq!(ids(client.execute(by_k, &[MValue::Int(10)]).unwrap()), ["1"]);

    // LIMIT from a parameter.
    let (limited, ..) = client.prepare("SELECT id FROM a.t WHERE id > ? LIMIT ?").unwrap();
    assert_eq!(ids(client.execute(limited, &[MValue::Int(0), MValue::Int(2)]).unwrap()), ["1", "2"]);
    assert_eq!(ids(client.execute(limited, &[MValue::Int(2), MValue::Int(5)]).unwrap()), ["3", "4"]);
}

/// A sorted, aggregated or DISTINCT SELECT keeps its plan too: DDL makes
/// it again, and GROUP_CONCAT's column type follows the session's
/// `group_concat_max_len` at every execution.
#[test]
fn sorted_and_grouped_selects_keep_their_plan_until_ddl() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("USE a").unwrap();
    client.query_rows("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10), k INT)").unwrap();
    client.query_rows("INSERT INTO t VALUES (1, 'pear', 2), (2, 'Apple', 1), (3, 'fig', 2), (4, 'apple', 1)").unwrap();
    let (sorted, ..) = client.prepare("SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c").unwrap();
    let (grouped, ..) =
        client.prepare("SELECT k, COUNT(*), GROUP_CONCAT(c ORDER BY id) FROM t GROUP BY k HAVING COUNT(*) > ? ORDER BY 1 DESC").unwrap();
    let before = reprepares(&mut client);

    // utf8mb4_general_ci: 'Apple' and 'apple' are one value, the first kept.
    let range = |low, high| [MValue::Int(low), MValue::Int(high)];
    assert_eq!(rows(client.execute(sorted, &range(1, 4)).unwrap()), vec![row(&["Apple"]), row(&["fig"]), row(&["pear"])]);
    assert_eq!(rows(client.execute(sorted, &range(3, 4)).unwrap()), vec![row(&["apple"]), row(&["fig"])]);
    assert_eq!(
        rows(client.execute(grouped, &[MValue::Int(0)]).unwrap()),
        vec![row(&["2", "2", "pear,fig"]), row(&["1", "2", "Apple,apple"])]
    );
    assert_eq!(rows(client.execute(grouped, &[MValue::Int(5)]).unwrap()), Vec::<Vec<String>>::new());
    assert_eq!(reprepares(&mut client), before, "both plans are used again");

    // GROUP_CONCAT's type is the session's, not the one first planned:
    // up to 512 bytes a VARCHAR, above it a BLOB.
    let concat_type = |client: &mut RawClient| {
        let Response::BinaryRows { columns, .. } = client.execute(grouped, &[MValue::Int(0)]).unwrap() else { panic!("rows") };
        columns[2].column_type()
    };
    client.query_rows("SET SESSION group_concat_max_len = 100").unwrap();
    let short = concat_type(&mut client);
    client.query_rows("SET SESSION group_concat_max_len = 100000").unwrap();
    assert_ne!(concat_type(&mut client), short);

    // A column added before `c` moves it: the kept plan is made again.
    client.query_rows("ALTER TABLE t ADD COLUMN b INT DEFAULT 0 FIRST").unwrap();
    client.query_rows("UPDATE t SET c = 'kiwi' WHERE id = 3").unwrap();
    assert_eq!(rows(client.execute(sorted, &range(1, 4)).unwrap()), vec![row(&["Apple"]), row(&["kiwi"]), row(&["pear"])]);
    assert_eq!(
        rows(client.execute(grouped, &[MValue::Int(0)]).unwrap()),
        vec![row(&["2", "2", "pear,kiwi"]), row(&["1", "2", "Apple,apple"])]
    );
    assert_eq!(reprepares(&mut client), before + 2);
}
