//! Partitioned tables end to end against a served binlogd: PARTITION BY
//! RANGE, LIST, HASH, LINEAR HASH, KEY and the COLUMNS forms accepted,
//! MySQL's errors for the definitions it refuses, SHOW CREATE TABLE's
//! `/*!50100 ... */` and INFORMATION_SCHEMA.PARTITIONS, 1526 for a row no
//! partition takes, all kept across a restart; each rows event names its
//! partition in the extra row info as MySQL 8.0.16+ writes it (read here
//! from the event bytes mysql_common hands over, and by
//! python-mysql-replication), and `mariadb-binlog --verbose` reads the
//! files.

mod support;

use std::process::Command;

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::EventData;
use mysql_common::binlog::BinlogFile;
use serde_json::Value as Json;
use support::{python_script, Binlogd};
use testkit::raw_client::RawClient;

/// One rows event of a partitioned table: table, kind, rows, partition id
/// and (Update) source partition id.
type Logged = (String, &'static str, usize, u16, Option<u16>);

/// Every rows event of `tables` in `paths`, its partition read from the
/// extra data bytes: after the table id (6) and flags (2), the extra-data
/// length (2, counting itself), then type 1 and the id(s), little-endian.
fn logged(paths: &[std::path::PathBuf], tables: &[&str]) -> Vec<Logged> {
    let mut events = Vec::new();
    for path in paths {
        let bytes = std::fs::read(path).unwrap();
        let mut binlog = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).expect("mysql_common reads the file");
        while let Some(event) = binlog.next() {
            let event = event.expect("mysql_common reads every event");
            let Some(EventData::RowsEvent(rows)) = event.read_data().expect("mysql_common decodes the event") else { continue };
            let map = binlog.reader().get_tme(rows.table_id()).expect("table map precedes rows");
            let table = map.table_name().to_string();
            if !tables.contains(&table.as_str()) {
                continue;
            }
            let mut count = 0;
            for row in rows.rows(map) {
                row.expect("mysql_common decodes the row");
                count += 1;
            }
            let kind = match event.header().event_type_raw() {
                30 => "write",
                31 => "update",
                32 => "delete",
                other => panic!("event type {other}"),
            };
            let data = event.data();
            let extra_length = u16::from_le_bytes([data[8], data[9]]) as usize;
            let extra = &data[10..8 + extra_length];
            assert_eq!(extra[0], 1, "a partition item: {extra:?}");
            let id = u16::from_le_bytes([extra[1], extra[2]]);
            let source = (kind == "update").then(|| u16::from_le_bytes([extra[3], extra[4]]));
            assert_eq!(extra.len(), if kind == "update" { 5 } else { 3 });
            events.push((table, kind, count, id, source));
        }
    }
    events
}

/// MySQL's KEY partitioning hash of one BIGINT (`my_hash_sort_bin` over
/// its 8 little-endian bytes from nr1 = 1, nr2 = 4; the low 32 bits).
fn key_partition_of_bigint(value: i64, partitions: u32) -> u16 {
    let (mut nr1, mut nr2) = (1u64, 4u64);
    for byte in value.to_le_bytes() {
        nr1 ^= ((nr1 & 63) + nr2).wrapping_mul(u64::from(byte)).wrapping_add(nr1 << 8);
        nr2 += 3;
    }
    ((nr1 as u32) % partitions) as u16
}

const TABLES: &[&str] = &[
    "CREATE TABLE r (id INT NOT NULL PRIMARY KEY, v VARCHAR(10)) PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10), \
     PARTITION p1 VALUES LESS THAN (20) COMMENT = 'teens', PARTITION pmax VALUES LESS THAN MAXVALUE)",
    "CREATE TABLE h (id INT NOT NULL PRIMARY KEY) PARTITION BY HASH (id) PARTITIONS 4",
    "CREATE TABLE lh (id INT) PARTITION BY LINEAR HASH (id) PARTITIONS 5",
    "CREATE TABLE k (id BIGINT NOT NULL PRIMARY KEY) ENGINE=InnoDB PARTITION BY KEY (id) PARTITIONS 3",
    "CREATE TABLE l (id INT NOT NULL, c INT) PARTITION BY LIST (c) (PARTITION odd VALUES IN (1, 3, 5) ENGINE = InnoDB, \
     PARTITION even VALUES IN (2, 4, NULL))",
    "CREATE TABLE rc (a INT, b VARCHAR(5)) PARTITION BY RANGE COLUMNS (a, b) \
     (PARTITION p0 VALUES LESS THAN (5, 'm'), PARTITION p1 VALUES LESS THAN (MAXVALUE, MAXVALUE))",
    "CREATE TABLE plain (id INT)",
];

fn show_create(client: &mut RawClient, table: &str) -> String {
    client.query_rows(&format!("SHOW CREATE TABLE {table}")).unwrap()[0][1].clone().unwrap()
}

fn check_definitions(client: &mut RawClient) {
    let r = show_create(client, "r");
    assert!(
        r.ends_with(
            ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci\n/*!50100 PARTITION BY RANGE (`id`)\n\
             (PARTITION p0 VALUES LESS THAN (10) ENGINE = InnoDB,\n \
             PARTITION p1 VALUES LESS THAN (20) COMMENT = 'teens' ENGINE = InnoDB,\n \
             PARTITION pmax VALUES LESS THAN MAXVALUE ENGINE = InnoDB) */"
        ),
        "{r}"
    );
    assert!(show_create(client, "h").ends_with("\n/*!50100 PARTITION BY HASH (`id`)\nPARTITIONS 4 */"));
    assert!(show_create(client, "lh").ends_with("\n/*!50100 PARTITION BY LINEAR HASH (`id`)\nPARTITIONS 5 */"));
    assert!(show_create(client, "k").ends_with("\n/*!50100 PARTITION BY KEY (id)\nPARTITIONS 3 */"));
    let l = show_create(client, "l");
    assert!(
        l.ends_with(
            "\n/*!50100 PARTITION BY LIST (`c`)\n(PARTITION odd VALUES IN (1,3,5) ENGINE = InnoDB,\n \
             PARTITION even VALUES IN (NULL,2,4) ENGINE = InnoDB) */"
        ),
        "{l}"
    );
    let rc = show_create(client, "rc");
    assert!(
        rc.ends_with(
            "\n/*!50500 PARTITION BY RANGE  COLUMNS(a,b)\n(PARTITION p0 VALUES LESS THAN (5,'m') ENGINE = InnoDB,\n \
             PARTITION p1 VALUES LESS THAN (MAXVALUE,MAXVALUE) ENGINE = InnoDB) */"
        ),
        "{rc}"
    );
    assert!(show_create(client, "plain").ends_with("COLLATE=utf8mb4_general_ci"));
    let rows = client
        .query_rows(
            "SELECT TABLE_NAME, PARTITION_NAME, PARTITION_ORDINAL_POSITION, PARTITION_METHOD, PARTITION_EXPRESSION, \
             PARTITION_DESCRIPTION, PARTITION_COMMENT FROM information_schema.PARTITIONS \
             WHERE TABLE_SCHEMA = 'pt' AND TABLE_NAME IN ('r', 'k', 'l', 'plain') ORDER BY TABLE_NAME, PARTITION_ORDINAL_POSITION",
        )
        .unwrap();
    let text: Vec<String> =
        rows.iter().map(|row| row.iter().map(|v| v.clone().unwrap_or_else(|| "NULL".into())).collect::<Vec<_>>().join("|")).collect();
    assert_eq!(
        text,
        [
            "k|p0|1|KEY|`id`|NULL|",
            "k|p1|2|KEY|`id`|NULL|",
            "k|p2|3|KEY|`id`|NULL|",
            "l|odd|1|LIST|`c`|1,3,5|",
            "l|even|2|LIST|`c`|NULL,2,4|",
            "plain|NULL|NULL|NULL|NULL|NULL|",
            "r|p0|1|RANGE|`id`|10|",
            "r|p1|2|RANGE|`id`|20|teens",
            "r|pmax|3|RANGE|`id`|MAXVALUE|",
        ]
    );
    let error = client.query("INSERT INTO l VALUES (1, 7)").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1526, "Table has no partition for value 7"));
}

#[test]
fn partitioned_tables_are_checked_shown_and_logged_with_their_partition_ids() {
    let mut server = Binlogd::start(&[]);
    server.query("CREATE DATABASE pt");
    let mut client = RawClient::login_to(server.port, "root", "", Some("pt")).unwrap();
    for create in TABLES {
        client.query(create).unwrap_or_else(|error| panic!("{create}: {error:?}"));
    }

    let refused: &[(&str, u16, &str)] = &[
        (
            "CREATE TABLE e (id INT PRIMARY KEY, k INT) PARTITION BY HASH (k)",
            1503,
            "A PRIMARY KEY must include all columns in the table's partitioning function",
        ),
        (
            "CREATE TABLE e (id INT, u INT, UNIQUE KEY (u)) PARTITION BY HASH (id)",
            1503,
            "A UNIQUE INDEX must include all columns in the table's partitioning function",
        ),
        (
            "CREATE TABLE e (id INT) PARTITION BY RANGE (id) (PARTITION a VALUES LESS THAN (10), PARTITION b VALUES LESS THAN (10))",
            1493,
            "VALUES LESS THAN value must be strictly increasing for each partition",
        ),
        (
            "CREATE TABLE e (id INT) PARTITION BY RANGE (id) (PARTITION a VALUES LESS THAN MAXVALUE, PARTITION b VALUES LESS THAN (10))",
            1481,
            "MAXVALUE can only be used in last partition definition",
        ),
        (
            "CREATE TABLE e (id INT) PARTITION BY LIST (id) (PARTITION a VALUES IN (1, 2), PARTITION b VALUES IN (2))",
            1495,
            "Multiple definition of same constant in list partitioning",
        ),
        (
            "CREATE TABLE e (id INT) PARTITION BY LIST (id) (PARTITION a VALUES IN (1), PARTITION A VALUES IN (2))",
            1517,
            "Duplicate partition name A",
        ),
        (
            "CREATE TABLE e (id INT) PARTITION BY HASH (id) (PARTITION a VALUES LESS THAN (1))",
            1480,
            "Only RANGE PARTITIONING can use VALUES LESS THAN in partition definition",
        ),
        ("CREATE TABLE e (id INT) PARTITION BY RANGE (id)", 1492, "For RANGE partitions each partition must be defined"),
        (
            "CREATE TABLE e (id INT) PARTITION BY LIST (id) (PARTITION a)",
            1479,
            "Syntax error: LIST PARTITIONING requires definition of VALUES IN for each partition",
        ),
        ("CREATE TABLE e (id INT) PARTITION BY HASH (id) PARTITIONS 0", 1504, "Number of partitions = 0 is not an allowed value"),
        ("CREATE TABLE e (id INT) PARTITION BY HASH (nope)", 1054, "Unknown column 'nope' in 'partition function'"),
        (
            "CREATE TABLE e (id INT) PARTITION BY RANGE (id) SUBPARTITION BY HASH (id) (PARTITION a VALUES LESS THAN (1))",
            1235,
            "This version of MySQL doesn't yet support 'SUBPARTITION'",
        ),
        ("ALTER TABLE r DROP PARTITION p0", 1235, "This version of MySQL doesn't yet support 'ALTER TABLE ... DROP PARTITION p0'"),
    ];
    for (sql, code, message) in refused {
        let error = client.query(sql).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (*code, *message), "{sql}");
    }

    client.query("INSERT INTO r VALUES (1, 'a'), (15, 'b'), (25, 'c')").unwrap();
    client.query("UPDATE r SET id = 12 WHERE id = 1").unwrap();
    client.query("DELETE FROM r WHERE id = 25").unwrap();
    client.query("INSERT INTO h VALUES (1), (5), (2), (-3)").unwrap();
    client.query("INSERT INTO lh VALUES (5), (6), (7), (3)").unwrap();
    client.query("INSERT INTO k VALUES (1), (2), (3)").unwrap();
    client.query("INSERT INTO l VALUES (1, 2), (2, NULL), (3, 5)").unwrap();
    let error = client.query("UPDATE l SET c = 9 WHERE id = 3").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1526, "Table has no partition for value 9"));
    client.query("UPDATE l SET c = 3 WHERE id = 1").unwrap();
    client.query("INSERT INTO rc VALUES (5, 'a'), (4, 'z'), (9, 'a')").unwrap();
    client.query("INSERT INTO plain VALUES (1)").unwrap();

    check_definitions(&mut client);
    server.restart();
    let mut client = RawClient::login_to(server.port, "root", "", Some("pt")).unwrap();
    check_definitions(&mut client);
    assert_eq!(client.value("SELECT COUNT(*) FROM h"), "4");
    let error = client.query("ALTER TABLE r TRUNCATE PARTITION p0").unwrap_err();
    assert_eq!(error.code, 1235);
    // ALTER keeps the partitioning through the copy; TRUNCATE and DROP work.
    client.query("ALTER TABLE h ADD COLUMN note VARCHAR(4)").unwrap();
    assert!(show_create(&mut client, "h").ends_with("\n/*!50100 PARTITION BY HASH (`id`)\nPARTITIONS 4 */"));
    client.query("TRUNCATE TABLE h").unwrap();
    assert_eq!(client.value("SELECT COUNT(*) FROM h"), "0");
    client.query("CREATE TABLE h2 LIKE h").unwrap();
    assert!(show_create(&mut client, "h2").ends_with("\n/*!50100 PARTITION BY HASH (`id`)\nPARTITIONS 4 */"));
    client.query("DROP TABLE h2").unwrap();

    let files: Vec<_> = server.binlog_files().iter().map(|name| server.binlog_dir().join(name)).collect();
    let names = ["r", "h", "lh", "k", "l", "rc"];
    let events = logged(&files, &names);
    let event = |table: &str, kind: &'static str, rows: usize, id: u16, source: Option<u16>| (table.to_string(), kind, rows, id, source);
    let mut expected = vec![
        // One event per run of rows in the same partition, as mysqld.
        event("r", "write", 1, 0, None),
        event("r", "write", 1, 1, None),
        event("r", "write", 1, 2, None),
        event("r", "update", 1, 1, Some(0)),
        event("r", "delete", 1, 2, None),
        // abs(-3 % 4) = 3.
        event("h", "write", 2, 1, None),
        event("h", "write", 1, 2, None),
        event("h", "write", 1, 3, None),
        // Mask 7, folded by 3 past partition 4: 5 -> 1, 6 -> 2, 7 -> 3.
        event("lh", "write", 1, 1, None),
        event("lh", "write", 1, 2, None),
        event("lh", "write", 2, 3, None),
    ];
    let mut key_ids: Vec<(usize, u16)> = Vec::new();
    for id in [1, 2, 3] {
        let partition = key_partition_of_bigint(id, 3);
        match key_ids.last_mut() {
            Some((rows, last)) if *last == partition => *rows += 1,
            _ => key_ids.push((1, partition)),
        }
    }
    expected.extend(key_ids.iter().map(|&(rows, id)| event("k", "write", rows, id, None)));
    expected.extend([
        event("l", "write", 2, 1, None),
        event("l", "write", 1, 0, None),
        event("l", "update", 1, 0, Some(1)),
        // (5, 'a') and (4, 'z') are below (5, 'm'); (9, 'a') is not.
        event("rc", "write", 2, 0, None),
        event("rc", "write", 1, 1, None),
    ]);
    assert_eq!(events, expected);

    for file in &files {
        let output = Command::new("mariadb-binlog").arg("--verbose").arg(file).output().expect("run mariadb-binlog");
        assert!(output.status.success(), "mariadb-binlog --verbose: {}", String::from_utf8_lossy(&output.stderr));
    }
    let output = Command::new("python3")
        .arg(python_script("read_partition_ids.py"))
        .arg(server.port.to_string())
        .arg(&server.binlog_files()[0])
        .args(names)
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_partition_ids.py: {}", String::from_utf8_lossy(&output.stderr));
    let python: Vec<Logged> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let line: Json = serde_json::from_str(line).unwrap();
            let kind = match line["event"].as_str().unwrap() {
                "write" => "write",
                "update" => "update",
                _ => "delete",
            };
            (
                line["table"].as_str().unwrap().to_string(),
                kind,
                line["rows"].as_u64().unwrap() as usize,
                line["partition_id"].as_u64().unwrap() as u16,
                line["source_partition_id"].as_u64().map(|id| id as u16),
            )
        })
        .collect();
    assert_eq!(python, expected, "python-mysql-replication");
}

#[test]
fn a_date_function_over_the_column_partitions_rows_by_its_value() {
    let mut server = Binlogd::start(&[]);
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("CREATE DATABASE pf").unwrap();
    client.query("USE pf").unwrap();
    for sql in [
        "CREATE TABLE sales (id INT NOT NULL, sold DATE NOT NULL, PRIMARY KEY (id, sold)) PARTITION BY RANGE (YEAR(sold)) \
         (PARTITION p2019 VALUES LESS THAN (2020), PARTITION p2020 VALUES LESS THAN (2021), PARTITION pmax VALUES LESS THAN MAXVALUE)",
        "CREATE TABLE visits (id INT NOT NULL, at DATETIME NOT NULL, PRIMARY KEY (id, at)) PARTITION BY HASH (TO_DAYS(at)) PARTITIONS 4",
        "CREATE TABLE seasons (id INT NOT NULL, d DATE NOT NULL) PARTITION BY LIST (month(d)) \
         (PARTITION q1 VALUES IN (1, 2, 3), PARTITION later VALUES IN (4, 5, 6, 7, 8, 9, 10, 11, 12))",
        "CREATE TABLE stamps (id INT NOT NULL, t TIMESTAMP NOT NULL, PRIMARY KEY (id, t)) PARTITION BY RANGE (UNIX_TIMESTAMP(t)) \
         (PARTITION old VALUES LESS THAN (1700000000), PARTITION new VALUES LESS THAN MAXVALUE)",
    ] {
        client.query(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }
    let refused: &[(&str, u16, &str)] = &[
        (
            "CREATE TABLE e (t TIMESTAMP) PARTITION BY RANGE (YEAR(t)) (PARTITION a VALUES LESS THAN (2000))",
            1486,
            "Constant, random or timezone-dependent expressions in (sub)partitioning function are not permitted",
        ),
        (
            "CREATE TABLE e (d DATE) PARTITION BY HASH (UNIX_TIMESTAMP(d))",
            1486,
            "Constant, random or timezone-dependent expressions in (sub)partitioning function are not permitted",
        ),
        ("CREATE TABLE e (id INT) PARTITION BY HASH (YEAR(id))", 1564, "This partition function is not allowed"),
        ("CREATE TABLE e (d DATE) PARTITION BY HASH (YEAR(nope))", 1054, "Unknown column 'nope' in 'partition function'"),
        (
            "CREATE TABLE e (d DATE, id INT PRIMARY KEY) PARTITION BY HASH (YEAR(d))",
            1503,
            "A PRIMARY KEY must include all columns in the table's partitioning function",
        ),
    ];
    for (sql, code, message) in refused {
        let error = client.query(sql).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (*code, *message), "{sql}");
    }
    assert_eq!(client.query("CREATE TABLE e (id INT) PARTITION BY HASH (ABS(id))").unwrap_err().code, 1235);

    client.query("INSERT INTO sales VALUES (1, '2019-12-31'), (2, '2020-01-01'), (3, '2024-05-06')").unwrap();
    // TO_DAYS: 733321 for 2007-10-07 (% 4 = 1), 733322 the day after.
    client.query("INSERT INTO visits VALUES (1, '2007-10-07 10:00:00'), (2, '2007-10-08 00:00:00')").unwrap();
    client.query("INSERT INTO seasons VALUES (1, '2024-02-29'), (2, '2024-11-01')").unwrap();
    client.query("SET time_zone = '+00:00'").unwrap();
    client.query("INSERT INTO stamps VALUES (1, '2023-01-01 00:00:00'), (2, '2024-01-01 00:00:00')").unwrap();
    let error = client.query("INSERT INTO seasons VALUES (3, '2024-00-10')").unwrap_err();
    assert_eq!(error.code, 1292, "a month 0 is not a date in strict mode: {}", error.message);

    let check = |client: &mut RawClient| {
        let sales = show_create(client, "sales");
        assert!(
            sales.ends_with(
                "\n/*!50100 PARTITION BY RANGE (year(`sold`))\n(PARTITION p2019 VALUES LESS THAN (2020) ENGINE = InnoDB,\n \
                 PARTITION p2020 VALUES LESS THAN (2021) ENGINE = InnoDB,\n PARTITION pmax VALUES LESS THAN MAXVALUE ENGINE = InnoDB) */"
            ),
            "{sales}"
        );
        assert!(show_create(client, "visits").ends_with("\n/*!50100 PARTITION BY HASH (to_days(`at`))\nPARTITIONS 4 */"));
        let expressions = client
            .query_rows(
                "SELECT TABLE_NAME, PARTITION_EXPRESSION FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = 'pf' \
                 AND PARTITION_ORDINAL_POSITION = 1 ORDER BY TABLE_NAME",
            )
            .unwrap();
        let expressions: Vec<Vec<String>> = expressions.into_iter().map(|row| row.into_iter().map(Option::unwrap).collect()).collect();
        assert_eq!(
            expressions,
            [["sales", "year(`sold`)"], ["seasons", "month(`d`)"], ["stamps", "unix_timestamp(`t`)"], ["visits", "to_days(`at`)"],]
        );
    };
    check(&mut client);
    server.restart();
    let mut client = RawClient::login_to(server.port, "root", "", Some("pf")).unwrap();
    check(&mut client);

    let files: Vec<_> = server.binlog_files().iter().map(|name| server.binlog_dir().join(name)).collect();
    let event = |table: &str, rows: usize, id: u16| (table.to_string(), "write", rows, id, None);
    assert_eq!(
        logged(&files, &["sales", "visits", "seasons", "stamps"]),
        [
            event("sales", 1, 0),
            event("sales", 1, 1),
            event("sales", 1, 2),
            event("visits", 1, 1),
            event("visits", 1, 2),
            event("seasons", 1, 0),
            event("seasons", 1, 1),
            event("stamps", 1, 0),
            event("stamps", 1, 1),
        ]
    );
}
