//! Real clients against the toy server: the `mariadb` command-line client,
//! PyMySQL (text protocol) and MySQL Connector/Python's prepared cursor
//! (binary protocol). In CI the first two must be installed; elsewhere a
//! missing client skips its test.

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::process::{Command, Output, Stdio};

use common::{have_tool, start_server, VERSION};

fn mariadb(address: SocketAddr, user: &str, password: Option<&str>, extra: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut command = Command::new("mariadb");
    command
        .arg("--no-defaults")
        .args(["-h", "127.0.0.1", "-P", &address.port().to_string(), "-u", user, "--skip-ssl"])
        .args(["--connect-timeout=10"]);
    if let Some(password) = password {
        command.arg(format!("-p{password}"));
    }
    command.args(extra);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("run mariadb");
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        input.write_all(bytes).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn mariadb_command_line_client() {
    if !have_tool(Command::new("mariadb").arg("--version"), "the mariadb client") {
        return;
    }
    let server = start_server(|config| config.connection.max_allowed_packet = 64 * 1024 * 1024);
    let address = server.local_address();
    let batch = |user: &str, password: Option<&str>, sql: &str| mariadb(address, user, password, &["-B", "-N", "-e", sql], None);

    let output = batch("root", None, "SELECT 1");
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "1\n");
    let output = batch("alice", Some("secret"), "SELECT @@version");
    assert_eq!(text(&output.stdout), format!("{VERSION}\n"), "{}", text(&output.stderr));

    let output = batch("alice", Some("wrong"), "SELECT 1");
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("ERROR 1045 (28000): Access denied for user 'alice'@'localhost' (using password: YES)"),
        "{}",
        text(&output.stderr)
    );
    let output = batch("alice", None, "SELECT 1");
    assert!(text(&output.stderr).contains("(using password: NO)"), "{}", text(&output.stderr));

    // The client splits at its delimiter; with another delimiter the server
    // gets one COM_QUERY holding two statements and returns two results.
    let output = mariadb(address, "root", None, &["-B", "-N", "--delimiter=//", "-e", "SELECT 1; SELECT @@version//"], None);
    assert_eq!(text(&output.stdout), format!("1\n{VERSION}\n"), "{}", text(&output.stderr));

    let output = batch("root", None, "SELEKT 1");
    assert!(!output.status.success());
    assert!(text(&output.stderr).contains("ERROR 1064 (42000)"), "{}", text(&output.stderr));

    // With column names, a streamed result, and the database from -D.
    let output = mariadb(address, "root", None, &["-B", "-D", "db1", "-e", "SELECT ROWS(2); SELECT DATABASE()"], None);
    assert_eq!(text(&output.stdout), "id\tname\n0\trow0\n1\trow1\nDATABASE()\ndb1\n", "{}", text(&output.stderr));
    let output = mariadb(address, "root", None, &["-D", "nosuchdb", "-e", "SELECT 1"], None);
    assert!(text(&output.stderr).contains("ERROR 1049 (42000): Unknown database 'nosuchdb'"), "{}", text(&output.stderr));

    // A 17 MiB statement from standard input: split into packets by the
    // client, joined by the server.
    let length = 17 * 1024 * 1024;
    let statement = format!("SELECT LENGTH('{}');\n", "q".repeat(length));
    let output = mariadb(address, "root", None, &["-B", "-N", "--max-allowed-packet=64M"], Some(statement.as_bytes()));
    assert_eq!(text(&output.stdout), format!("{length}\n"), "{}", text(&output.stderr));
    // A row over 16 MiB back (the client's own limit must allow it too).
    let repeat = format!("SELECT REPEAT('x', {length})");
    let output = mariadb(address, "root", None, &["-B", "-N", "--max-allowed-packet=64M", "-e", &repeat], None);
    assert_eq!(output.stdout.len(), length + 1, "{}", text(&output.stderr));
}

fn python(script: &str, address: SocketAddr) -> Output {
    Command::new("python3").arg("-c").arg(script).arg(address.port().to_string()).output().expect("run python3")
}

const PYMYSQL_SCRIPT: &str = r#"
import sys, pymysql
from pymysql.constants import CLIENT
port = int(sys.argv[1])
c = pymysql.connect(host="127.0.0.1", port=port, user="alice", password="secret",
                    client_flag=CLIENT.MULTI_STATEMENTS, autocommit=True)
cur = c.cursor()
cur.execute("SELECT 1"); assert cur.fetchall() == ((1,),), cur.fetchall()
cur.execute("SELECT @@version"); print(cur.fetchone()[0])
assert c.get_server_info() == "8.4.0-binlogd"
cur.execute("INSERT INTO t VALUES (%s, %s)", (1, "it's")); assert cur.lastrowid == 42 and cur.rowcount == 1
cur.execute("SELECT 1; SELECT @@version")
first = cur.fetchall(); assert cur.nextset(); second = cur.fetchall()
assert first == ((1,),) and second == (("8.4.0-binlogd",),), (first, second)
cur.execute("SELECT ROWS(3)"); assert [d[0] for d in cur.description] == ["id", "name"]
assert cur.fetchall() == ((0, "row0"), (1, "row1"), (2, "row2"))
try:
    cur.execute("SELEKT 1"); raise SystemExit("no error")
except pymysql.err.ProgrammingError as e:
    assert e.args[0] == 1064, e
try:
    pymysql.connect(host="127.0.0.1", port=port, user="alice", password="nope"); raise SystemExit("logged in")
except pymysql.err.OperationalError as e:
    assert e.args[0] == 1045, e
c.ping(); c.select_db("db1"); cur.execute("SELECT DATABASE()"); assert cur.fetchone()[0] == "db1"
c.close()
print("pymysql ok")
"#;

#[test]
fn pymysql_text_protocol() {
    if !have_tool(Command::new("python3").args(["-c", "import pymysql"]), "python3 with pymysql") {
        return;
    }
    let server = start_server(|_| {});
    let output = python(PYMYSQL_SCRIPT, server.local_address());
    assert!(output.status.success(), "{}{}", text(&output.stdout), text(&output.stderr));
    assert_eq!(text(&output.stdout), format!("{VERSION}\npymysql ok\n"));
}

const CONNECTOR_SCRIPT: &str = r#"
import sys, datetime, decimal
import mysql.connector
port = int(sys.argv[1])
c = mysql.connector.connect(host="127.0.0.1", port=port, user="alice", password="secret",
                            use_pure=True, ssl_disabled=True, auth_plugin="mysql_native_password")
cur = c.cursor(prepared=True)
when = datetime.datetime(2024, 2, 29, 13, 4, 5, 120000)
cur.execute("SELECT ?, ?, ?, ?, ?, ?", (7, -3, "héllo", 2.5, None, when))
row = cur.fetchone()
assert row[0] == 7 and row[1] == -3 and row[2] == "héllo" and row[3] == 2.5 and row[4] is None, row
assert row[5] == when, row
cur.execute("SELECT ?, ?, ?, ?, ?, ?", (8, 9, "again", 0.5, "x", when))
assert cur.fetchone()[0] == 8
cur.execute("INSERT INTO t VALUES (?, ?)", (1, b"\x00\xff"))
assert cur.rowcount == 2, cur.rowcount
cur.close(); c.close()
print("connector ok")
"#;

#[test]
fn mysql_connector_python_prepared_statements() {
    // Optional: a second, independent binary-protocol client.
    let probe = Command::new("python3").args(["-c", "import mysql.connector"]).output();
    if !probe.map(|o| o.status.success()).unwrap_or(false) {
        eprintln!("skipping: mysql-connector-python is not installed");
        return;
    }
    let server = start_server(|_| {});
    let output = python(CONNECTOR_SCRIPT, server.local_address());
    assert!(output.status.success(), "{}{}", text(&output.stdout), text(&output.stderr));
    assert_eq!(text(&output.stdout), "connector ok\n");
}
