//! The client's character set, as MySQL honours it: `SET NAMES`, `SET
//! CHARACTER SET`, the `character_set_*` variables and the handshake's
//! collation decide what statements and string parameters arrive in and
//! what text results leave in; stored text is UTF-8 whatever the client
//! speaks. Unknown names are MySQL's 1115 / 1273 / 1253.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use support::ServerProcess;
use testkit::raw_client::{MValue, RawClient, Response};

/// COM_QUERY with `sql` as raw bytes (a latin1 client's text is not UTF-8).
fn query_bytes(client: &mut RawClient, sql: &[u8]) -> Result<Response, testkit::raw_client::ServerErr> {
    let mut payload = vec![0x03];
    payload.extend_from_slice(sql);
    client.command(&payload);
    client.read_response(false)
}

/// The first column of each row, as bytes.
fn column_bytes(response: Response) -> Vec<Vec<u8>> {
    let Response::Rows { rows, .. } = response else { panic!("expected rows") };
    rows.into_iter().map(|row| row[0].clone().expect("not NULL")).collect()
}

fn setup(server: &ServerProcess) -> RawClient {
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query_rows("CREATE DATABASE a").unwrap();
    client.query_rows("CREATE TABLE a.t (id INT PRIMARY KEY, c VARCHAR(20), b VARBINARY(20))").unwrap();
    client
}

#[test]
fn a_latin1_client_writes_and_reads_text_stored_as_utf8() {
    let server = ServerProcess::start();
    let mut utf8 = setup(&server);
    let mut latin1 = RawClient::login_to(server.port, "root", "", None).unwrap();
    latin1.query_rows("SET NAMES latin1").unwrap();

    // 'café €' in latin1 (MySQL's latin1 is cp1252: 0x80 is the euro sign).
    query_bytes(&mut latin1, b"INSERT INTO a.t VALUES (1, 'caf\xE9 \x80', 'caf\xE9')").unwrap();
    assert_eq!(utf8.value("SELECT c FROM a.t WHERE id = 1"), "caf\u{e9} \u{20ac}");
    let stored = query_bytes(&mut utf8, b"SELECT c FROM a.t WHERE id = 1").unwrap();
    assert_eq!(column_bytes(stored), vec![b"caf\xC3\xA9 \xE2\x82\xAC".to_vec()]);

    // Results leave in latin1; a character latin1 lacks is '?'.
    utf8.query_rows("INSERT INTO a.t VALUES (2, 'x\u{4e2d}y', NULL)").unwrap();
    let response = query_bytes(&mut latin1, b"SELECT c FROM a.t ORDER BY id").unwrap();
    let Response::Rows { ref columns, .. } = response else { panic!("rows") };
    assert_eq!(columns[0].character_set(), 8, "a string column is sent in latin1_swedish_ci");
    assert_eq!(column_bytes(response), vec![b"caf\xE9 \x80".to_vec(), b"x?y".to_vec()]);

    // A statement compares in UTF-8: the latin1 literal finds the row.
    let found = query_bytes(&mut latin1, b"SELECT id FROM a.t WHERE c = 'caf\xE9 \x80'").unwrap();
    assert_eq!(column_bytes(found), vec![b"1".to_vec()]);

    // A prepared statement's string parameter arrives in latin1 too.
    let (id, _, _) = latin1.prepare("INSERT INTO a.t VALUES (3, ?, ?)").unwrap();
    latin1.execute(id, &[MValue::Bytes(b"na\xEFve".to_vec()), MValue::Bytes(b"na\xEFve".to_vec())]).unwrap();
    assert_eq!(utf8.value("SELECT c FROM a.t WHERE id = 3"), "na\u{ef}ve");

    // With character_set_results NULL, results are not converted.
    latin1.query_rows("SET character_set_results = NULL").unwrap();
    let raw = query_bytes(&mut latin1, b"SELECT c FROM a.t WHERE id = 1").unwrap();
    assert_eq!(column_bytes(raw), vec!["caf\u{e9} \u{20ac}".as_bytes().to_vec()]);
    assert_eq!(latin1.query_rows("SELECT @@character_set_results").unwrap(), vec![vec![None]]);
}

#[test]
fn utf8mb4_clients_refuse_bytes_that_are_not_utf8() {
    let server = ServerProcess::start();
    let mut client = setup(&server);
    let error = query_bytes(&mut client, b"INSERT INTO a.t VALUES (1, 'caf\xE9', NULL)").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1300, "Invalid utf8mb4 character string: 'E9272C204E554C4C29'"));
    client.query_rows("SET NAMES ascii").unwrap();
    let error = client.query_rows("SELECT 'caf\u{e9}'").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1300, "Invalid ascii character string: 'C3A927'"));
    assert_eq!(client.value("SELECT COUNT(*) FROM a.t"), "0");
}

/// mysqldump and mysqlbinlog write literals with introducers
/// (`_binary '…'`, `_utf8mb4'…'`, `_utf8 ',NO_KEY_OPTIONS'` in mariadb-dump's
/// session setup); a word that names no character set is a column, as
/// MySQL's lexer reads it.
#[test]
fn character_set_introducers_mark_literals() {
    let server = ServerProcess::start();
    let mut client = setup(&server);
    client.query_rows("INSERT INTO a.t VALUES (1, _utf8mb4'caf\u{e9}', _binary 'ab'), (2, _utf8 'x', _binary X'00FF')").unwrap();
    assert_eq!(client.value("SELECT c FROM a.t WHERE id = 1"), "caf\u{e9}");
    let blob = query_bytes(&mut client, b"SELECT b FROM a.t WHERE id = 2").unwrap();
    assert_eq!(column_bytes(blob), vec![vec![0x00, 0xFF]]);
    assert_eq!(client.value("SELECT CONCAT(HEX(b), ':', HEX(UNHEX('4d79')), ':', UNHEX('4D79')) FROM a.t WHERE id = 2"), "00FF:4D79:My");
    assert_eq!(client.value("SELECT COUNT(*) FROM a.t WHERE c = _latin1'x' OR b = _binary'ab'"), "2");
    client
        .query_rows("SET SQL_QUOTE_SHOW_CREATE=1/*!40102 ,SQL_MODE=concat(@@sql_mode, _utf8 ',NO_KEY_OPTIONS,NO_TABLE_OPTIONS,NO_FIELD_OPTIONS') */")
        .unwrap();
    let error = client.query_rows("SELECT _koi8r 'x'").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1054, "Unknown column '_koi8r' in 'field list'"));
}

#[test]
fn set_names_and_the_character_set_variables_follow_mysql() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    let variables = "SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection";
    let row = |client: &mut RawClient| -> Vec<String> {
        client.query_rows(variables).unwrap().remove(0).into_iter().map(|value| value.unwrap_or_default()).collect()
    };

    client.query_rows("SET NAMES 'latin1' COLLATE 'latin1_bin'").unwrap();
    assert_eq!(row(&mut client), ["latin1", "latin1", "latin1", "latin1_bin"]);
    client.query_rows("SET NAMES utf8").unwrap();
    assert_eq!(row(&mut client), ["utf8mb3", "utf8mb3", "utf8mb3", "utf8mb3_general_ci"]);
    client.query_rows("SET CHARACTER SET latin1").unwrap();
    assert_eq!(row(&mut client), ["latin1", "utf8mb4", "latin1", "utf8mb4_general_ci"]);
    client.query_rows("SET NAMES DEFAULT").unwrap();
    assert_eq!(row(&mut client), ["utf8mb4", "utf8mb4", "utf8mb4", "utf8mb4_0900_ai_ci"]);
    client.query_rows("SET character_set_client = 'LATIN1', collation_connection = 'utf8_bin'").unwrap();
    assert_eq!(row(&mut client)[..1], ["latin1"]);
    assert_eq!(row(&mut client)[3], "utf8mb3_bin");

    for (sql, code, message) in [
        ("SET NAMES koi8r", 1115, "Unknown character set: 'koi8r'"),
        ("SET CHARACTER SET 'nope'", 1115, "Unknown character set: 'nope'"),
        ("SET NAMES latin1 COLLATE utf8mb4_bin", 1253, "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'latin1'"),
        ("SET NAMES latin1 COLLATE latin1_nope", 1273, "Unknown collation: 'latin1_nope'"),
        ("SET character_set_client = 'nope'", 1115, "Unknown character set: 'nope'"),
        ("SET collation_connection = 'nope'", 1273, "Unknown collation: 'nope'"),
        ("SET character_set_client = NULL", 1231, "Variable 'character_set_client' can't be set to the value of 'NULL'"),
    ] {
        let error = client.query_rows(sql).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (code, message), "{sql}");
    }
    // A refused statement changed nothing.
    assert_eq!(row(&mut client)[..1], ["latin1"]);
}

#[test]
fn real_clients_talk_latin1() {
    let server = ServerProcess::start();
    let mut utf8 = setup(&server);

    // The mariadb client with --default-character-set=latin1 sends latin1
    // in its handshake and its statement bytes as typed.
    let mut child = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", "--default-character-set=latin1", "-B", "-N"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the mariadb client");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"SELECT @@character_set_client;\nINSERT INTO a.t VALUES (1, 'd\xE9j\xE0 vu', NULL);\nSELECT c FROM a.t;\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.stdout, b"latin1\nd\xE9j\xE0 vu\n");
    assert_eq!(utf8.value("SELECT c FROM a.t WHERE id = 1"), "d\u{e9}j\u{e0} vu");

    // pymysql with charset='latin1': its handshake collation sets the
    // session, its queries and results are latin1.
    let script = format!(
        r#"
import pymysql
c = pymysql.connect(host="127.0.0.1", port={port}, user="root", charset="latin1", autocommit=True)
cur = c.cursor()
cur.execute("SELECT @@character_set_client, @@character_set_results")
print(*cur.fetchone())
cur.execute("INSERT INTO a.t VALUES (2, %s, NULL)", ("na\u00efve",))
cur.execute("SELECT c FROM a.t WHERE id = 2")
print(cur.fetchone()[0] == "na\u00efve")
"#,
        port = server.port
    );
    let output = Command::new("python3").args(["-c", &script]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "latin1 latin1\nTrue\n");
    assert_eq!(utf8.value("SELECT c FROM a.t WHERE id = 2"), "na\u{ef}ve");
}
