//! What CDC connectors (Debezium's MySQL connector, Connector/J under it)
//! ask of the server beyond plain queries, each as MySQL 8.4 answers it:
//! INFORMATION_SCHEMA's tables listed by SHOW [FULL] TABLES as system
//! views; BINARY and VARBINARY result columns flagged BINARY, so a client
//! keeps their bytes rather than decoding them as text.

mod support;

use std::process::Command;

use support::ServerProcess;

#[test]
fn show_full_tables_lists_information_schema_as_system_views() {
    let server = ServerProcess::start();
    let full = server.query(None, "SHOW FULL TABLES IN information_schema");
    let rows: Vec<&str> = full.lines().collect();
    assert!(rows.contains(&"COLUMNS\tSYSTEM VIEW"), "{full}");
    assert!(rows.contains(&"TABLES\tSYSTEM VIEW"), "{full}");
    assert!(rows.iter().all(|row| row.ends_with("\tSYSTEM VIEW")), "{full}");
    assert_eq!(server.query(None, "SHOW TABLES FROM INFORMATION_SCHEMA LIKE 'SCHEMA%'"), "SCHEMATA\n");
    // Debezium's form: the base tables of each database, none here.
    assert_eq!(server.query(None, "SHOW FULL TABLES IN information_schema WHERE Table_type = 'BASE TABLE'"), "");
    assert_eq!(server.query(Some("information_schema"), "SHOW TABLES LIKE 'VIEWS'"), "VIEWS\n");
}

/// `mariadb --column-type-info` prints each result column's flags.
fn column_flags(server: &ServerProcess, sql: &str) -> Vec<String> {
    let output = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", server.port), "-uroot", "--table", "--column-type-info", "-e", sql])
        .output()
        .expect("run the mariadb client");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // The table after the column information holds the raw binary values.
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix("Flags:"))
        .map(|flags| flags.trim().to_string())
        .collect()
}

#[test]
fn binary_string_columns_carry_the_binary_flag() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE b; CREATE TABLE b.t (id INT NOT NULL PRIMARY KEY, vb VARBINARY(8), bn BINARY(2) NOT NULL, vc VARCHAR(4), bl BLOB);
         INSERT INTO b.t VALUES (1, X'00ff', X'80ff', 'x', X'ff')",
    );
    let flags = column_flags(&server, "SELECT vb, bn, vc, bl FROM b.t");
    assert_eq!(flags, ["BINARY", "NOT_NULL BINARY", "", "BLOB BINARY"]);
}
