//! No statement can take the server down: long operator chains, deep
//! nesting and long lists, through COM_QUERY and COM_STMT_PREPARE, either
//! run correctly or get an error (1436 for a chain over the depth limit),
//! and the server and a connection opened before them go on. Before the
//! depth limit, `SELECT 1+1+…+1` with a few thousand terms overflowed a
//! connection thread's stack, and Rust aborts the whole process on that.

mod support;

use support::ServerProcess;
use testkit::raw_client::{RawClient, ServerErr};

type Rows = Vec<Vec<Option<String>>>;

const STACK_OVERRUN: u16 = 1436;

fn plus_chain(terms: usize) -> String {
    format!("SELECT {}", vec!["1"; terms].join("+"))
}

fn or_chain(terms: usize) -> String {
    let terms: Vec<String> = (0..terms).map(|n| format!("id = {n}")).collect();
    format!("SELECT COUNT(*) FROM t WHERE {}", terms.join(" OR "))
}

/// The largest `terms` in `1..=high` for which `accepted` holds, given it
/// holds at 1 and not at `high`.
fn largest_accepted(high: usize, mut accepted: impl FnMut(usize) -> bool) -> usize {
    let (mut low, mut high) = (1, high);
    while high - low > 1 {
        let middle = (low + high) / 2;
        if accepted(middle) {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}

/// Ok, or the error that a statement over the depth limit gets; any other
/// error fails the test.
fn within_limit(result: Result<Rows, ServerErr>, sql: &str) -> Option<Rows> {
    match result {
        Ok(rows) => Some(rows),
        Err(error) if error.code == STACK_OVERRUN => {
            assert_eq!(error.state, "HY000");
            assert!(error.message.starts_with("Thread stack overrun"), "{}", error.message);
            None
        }
        Err(error) => panic!("{}...: {error:?}", &sql[..60.min(sql.len())]),
    }
}

fn assert_alive(server: &mut ServerProcess, bystander: &mut RawClient) {
    assert!(server.is_running(), "the server died: {}", std::fs::read_to_string(&server.log).unwrap_or_default());
    assert_eq!(bystander.value("SELECT 41 + 1"), "42");
}

#[test]
fn deep_and_long_statements_get_an_answer_and_the_server_lives() {
    let mut server = ServerProcess::start();
    let mut bystander = RawClient::login_to(server.port, "root", "", None).unwrap();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE deep").unwrap();
    client.query_rows("USE deep").unwrap();
    client.query_rows("CREATE TABLE t (id INT PRIMARY KEY, v INT)").unwrap();
    client.query_rows("INSERT INTO t VALUES (0, 0), (1, 10), (2, 20), (3, 30), (5000, 1)").unwrap();

    // An operator chain: every length up to the limit computes, longer
    // ones (the 10,000 terms that used to abort the server) get 1436.
    let mut sums = Vec::new();
    let longest_sum = largest_accepted(10_000, |terms| {
        let sql = plus_chain(terms);
        let rows = within_limit(client.query_rows(&sql), &sql);
        if let Some(rows) = &rows {
            sums.push((terms, rows[0][0].clone()));
        }
        rows.is_some()
    });
    for (terms, sum) in sums {
        assert_eq!(sum, Some(terms.to_string()), "the sum of {terms} ones");
    }
    assert!(longest_sum >= 1_000, "only {longest_sum} terms accepted");
    let error = client.query_rows(&plus_chain(100_000)).unwrap_err();
    assert_eq!(error.code, STACK_OVERRUN, "{error:?}");
    assert_alive(&mut server, &mut bystander);

    // The same chain through COM_STMT_PREPARE (4,000 terms used to abort).
    client.prepare(&plus_chain(longest_sum)).unwrap();
    assert_eq!(client.prepare(&plus_chain(10_000)).unwrap_err().code, STACK_OVERRUN);
    assert_alive(&mut server, &mut bystander);

    // An OR chain in a WHERE clause, planned and evaluated against rows.
    let longest_or = largest_accepted(5_000, |terms| {
        let sql = or_chain(terms);
        within_limit(client.query_rows(&sql), &sql).is_some()
    });
    assert!(longest_or >= 500, "only {longest_or} OR terms accepted");
    eprintln!("the longest chains accepted: {longest_sum} terms of +, {longest_or} of OR");
    assert_eq!(client.value(&or_chain(longest_or)), "4");
    assert_eq!(client.query_rows(&or_chain(5_000)).unwrap_err().code, STACK_OVERRUN);

    // Deep chains in the statements that write: INSERT's values, UPDATE's
    // SET and WHERE, DELETE's WHERE.
    let long_sum = vec!["1"; longest_sum - 20].join("+");
    client.query_rows(&format!("INSERT INTO t VALUES (7, {long_sum})")).unwrap();
    assert_eq!(client.value("SELECT v FROM t WHERE id = 7"), (longest_sum - 20).to_string());
    client.query_rows(&format!("UPDATE t SET v = {long_sum} + 1 WHERE id = 0")).unwrap();
    assert_eq!(client.value("SELECT v FROM t WHERE id = 0"), (longest_sum - 19).to_string());
    let terms: Vec<String> = (0..longest_or - 10).map(|n| format!("id = {}", n + 1000)).collect();
    client.query_rows(&format!("DELETE FROM t WHERE {}", terms.join(" OR "))).unwrap();
    assert_eq!(client.value("SELECT COUNT(*) FROM t"), "6", "the chain names no id there is");
    let huge_sum = vec!["1"; 50_000].join("+");
    for sql in [
        format!("INSERT INTO t VALUES (8, {huge_sum})"),
        format!("UPDATE t SET v = {huge_sum}"),
        format!("DELETE FROM t WHERE v = {huge_sum}"),
    ] {
        assert_eq!(client.query_rows(&sql).unwrap_err().code, STACK_OVERRUN, "{}", &sql[..30]);
    }
    assert_alive(&mut server, &mut bystander);

    // Long lists are flat: they run whatever their length.
    let list: Vec<String> = (0..50_000).map(|n| n.to_string()).collect();
    assert_eq!(client.value(&format!("SELECT COUNT(*) FROM t WHERE id IN ({})", list.join(", "))), "6");
    let rows: Vec<String> = (10_000..15_000).map(|n| format!("({n}, {n})")).collect();
    client.query_rows(&format!("INSERT INTO t VALUES {}", rows.join(", "))).unwrap();
    assert_eq!(client.value("SELECT COUNT(*) FROM t"), "5006");
    let columns = vec!["1"; 4_000].join(", ");
    assert_eq!(client.query_rows(&format!("SELECT {columns}")).unwrap()[0].len(), 4_000);

    // LIKE against a long pattern (a recursion a character deep overflowed
    // the stack).
    assert_eq!(client.value("SELECT REPEAT('a', 500000) LIKE REPEAT('_', 500000)"), "1");
    assert_eq!(client.value("SELECT REPEAT('a', 500000) LIKE CONCAT(REPEAT('%a', 2000), 'b')"), "0");

    // Nesting: sqlparser bounds its own recursion; whatever the error,
    // the server stays up.
    let nested =
        |open: &str, inner: &str, close: &str, depth: usize| format!("SELECT {}{inner}{}", open.repeat(depth), close.repeat(depth));
    assert_eq!(client.value(&nested("ABS(", "-1", ")", 20)), "1");
    for sql in [
        nested("ABS(", "-1", ")", 10_000),
        nested("(", "1", ")", 10_000),
        nested("(SELECT ", "1", ")", 10_000),
        nested("NOT ", "1", "", 10_000),
        nested("- ", "1", "", 10_000),
        format!("SELECT 1 FROM t WHERE id IN ({})", nested("SELECT id FROM t WHERE id IN (", "1", ")", 5_000)),
        vec!["SELECT 1, 2"; 10_000].join(" UNION "),
    ] {
        assert!(client.query_rows(&sql).is_err(), "{}...", &sql[..40]);
        assert!(client.prepare(&sql).is_err(), "{}...", &sql[..40]);
        assert_alive(&mut server, &mut bystander);
    }

    client.query_rows("DROP DATABASE deep").unwrap();
    assert!(server.stop().success());
}
