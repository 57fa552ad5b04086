//! `c IN (...)` and ORs of ranges on a key's first column read the union
//! of their key ranges (sysbench's select_random_points and
//! select_random_ranges): every matching row once, in key order, with
//! MySQL's answers where a value cannot be a key (text that is not a
//! whole number, NULL) or a branch bounds nothing; UPDATE and DELETE find
//! their rows the same way.

mod support;

use support::ServerProcess;

fn server_with_rows() -> ServerProcess {
    let server = ServerProcess::start();
    let rows: Vec<String> = (1..=50).map(|id| format!("({id}, {}, 'c{id}')", id % 10)).collect();
    server.query(
        None,
        &format!(
            "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, k INT, c VARCHAR(10), KEY k (k)); INSERT INTO d.t VALUES {}",
            rows.join(", ")
        ),
    );
    server
}

fn lines(values: impl IntoIterator<Item = u32>) -> String {
    values.into_iter().map(|value| format!("{value}\n")).collect()
}

#[test]
fn in_lists_and_ors_of_ranges_find_each_matching_row_once() {
    let server = server_with_rows();
    let query = |sql: &str| server.query(Some("d"), sql);

    // Unordered, repeated and NULL members: each row once, in key order.
    assert_eq!(query("SELECT id FROM t WHERE id IN (40, 7, 3, 3, NULL, 99)"), lines([3, 7, 40]));
    assert_eq!(query("SELECT COUNT(*) FROM t WHERE id IN (NULL)"), "0\n");
    // On the secondary index, with the rest of the WHERE still applied.
    assert_eq!(query("SELECT id FROM t WHERE k IN (2, 1) AND id > 30 ORDER BY id"), lines([31, 32, 41, 42]));
    assert_eq!(query("SELECT id, k, c FROM t WHERE k IN (9) ORDER BY id DESC LIMIT 2"), "49\t9\tc49\n39\t9\tc39\n");
    // Overlapping ranges count each row once (select_random_ranges' shape).
    assert_eq!(query("SELECT COUNT(k) FROM t WHERE k BETWEEN 2 AND 4 OR k BETWEEN 3 AND 5 OR k BETWEEN 5 AND 5"), "20\n");
    assert_eq!(
        query("SELECT id FROM t WHERE id BETWEEN 48 AND 60 OR id = 2 OR (id >= 10 AND id <= 11) OR id < 1"),
        lines([2, 10, 11, 48, 49, 50])
    );
    // Values that are not keys as they stand compare as MySQL compares them.
    assert_eq!(query("SELECT id FROM t WHERE id IN ('5', 6.0, '7abc') ORDER BY id"), lines([5, 6, 7]));
    assert_eq!(query("SELECT id FROM t WHERE id IN (1.5, 2)"), lines([2]));
    // A branch that bounds nothing on the key: every row is examined.
    assert_eq!(query("SELECT id FROM t WHERE id = 1 OR c = 'c50' ORDER BY id"), lines([1, 50]));
    assert_eq!(query("SELECT id FROM t WHERE id NOT IN (1, 2, 3) AND id < 6 ORDER BY id"), lines([4, 5]));
}

#[test]
fn update_and_delete_find_their_rows_by_a_union_of_ranges() {
    let server = server_with_rows();
    let query = |sql: &str| server.query(Some("d"), sql);
    query("UPDATE t SET c = 'x' WHERE id IN (4, 4, 44) OR id BETWEEN 20 AND 21");
    assert_eq!(query("SELECT id FROM t WHERE c = 'x' ORDER BY id"), lines([4, 20, 21, 44]));
    query("DELETE FROM t WHERE k IN (0, 1) OR k BETWEEN 1 AND 2");
    assert_eq!(query("SELECT COUNT(*), SUM(k IN (0, 1, 2)) FROM t"), "35\t0\n");
}
