//! MySQL 8.4's temporal types end to end: TIME(0-6), YEAR, TIMESTAMP(0-6)
//! next to DATE and DATETIME. Each value written over SQL reads back the
//! same through the text and the binary protocol, and the binlog's row
//! events carry it as MySQL writes it: `mysql_common` decodes them to the
//! expected values, `mariadb-binlog --verbose` reads the files, and
//! python-mysql-replication returns the values. Bad input gets MySQL's
//! errors in strict mode and its warnings otherwise; DEFAULT / ON UPDATE
//! CURRENT_TIMESTAMP and the session time zone behave as in MySQL.
//!
//! Known reader quirks the expectations follow:
//! - `mysql_common` and python-mysql-replication read YEAR as 1900 plus
//!   the stored byte, so the zero year `0000` (byte 0) comes back as 1900;
//! - python-mysql-replication reads a negative TIME's parts from its two's
//!   complement bits and gets them wrong, so its check covers the
//!   non-negative TIMEs.

mod support;

use std::process::Command;

use mysql_common::binlog::events::EventData;
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use serde_json::Value as Json;
use support::{python_script, Binlogd};
use testkit::raw_client::{MValue, RawClient, Response};
use testkit::SeededRandom;

/// The columns of the matrix table, after `id`.
const COLUMNS: [Kind; 9] = [
    Kind::Time(0),
    Kind::Time(3),
    Kind::Time(6),
    Kind::Year,
    Kind::Timestamp(0),
    Kind::Timestamp(3),
    Kind::Timestamp(6),
    Kind::Date,
    Kind::DateTime(6),
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Time(u8),
    Year,
    Timestamp(u8),
    Date,
    DateTime(u8),
}

impl Kind {
    fn sql_type(self) -> String {
        match self {
            Kind::Time(fsp) => format!("TIME({fsp})"),
            Kind::Year => "YEAR".into(),
            Kind::Timestamp(fsp) => format!("TIMESTAMP({fsp}) NULL"),
            Kind::Date => "DATE".into(),
            Kind::DateTime(fsp) => format!("DATETIME({fsp})"),
        }
    }
}

/// One value: what is written (an SQL literal) and the text MySQL shows.
#[derive(Debug, Clone)]
struct Cell {
    literal: String,
    shown: Option<String>,
}

fn cell(literal: &str, shown: &str) -> Cell {
    Cell { literal: literal.into(), shown: Some(shown.into()) }
}

fn null() -> Cell {
    Cell { literal: "NULL".into(), shown: None }
}

/// A TIME's parts from its text form `[-]h:mm:ss[.f]`.
fn time_parts(text: &str) -> (bool, u64, u8, u8, u32) {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (clock, fraction) = rest.split_once('.').unwrap_or((rest, ""));
    let mut fields = clock.split(':').map(|f| f.parse::<u64>().unwrap());
    let (hours, minutes, seconds) = (fields.next().unwrap(), fields.next().unwrap(), fields.next().unwrap());
    let micros = if fraction.is_empty() { 0 } else { format!("{fraction:0<6}").parse().unwrap() };
    (negative, hours, minutes as u8, seconds as u8, micros)
}

/// `YYYY-MM-DD[ hh:mm:ss[.f]]` as (y, m, d, h, mi, s, us).
fn datetime_parts(text: &str) -> (u16, u8, u8, u8, u8, u8, u32) {
    let (date, time) = text.split_once(' ').unwrap_or((text, "00:00:00"));
    let mut d = date.split('-').map(|f| f.parse::<u32>().unwrap());
    let (year, month, day) = (d.next().unwrap(), d.next().unwrap(), d.next().unwrap());
    let (_, hour, minute, second, micros) = time_parts(time);
    (year as u16, month as u8, day as u8, hour as u8, minute, second, micros)
}

/// Days since 1970-01-01 of a civil date (Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Epoch seconds and micros of a UTC datetime text.
fn epoch(text: &str) -> (i64, u32) {
    let (y, m, d, h, mi, s, us) = datetime_parts(text);
    let days = days_from_civil(y.into(), m.into(), d.into());
    (days * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(s), us)
}

/// What the binary protocol (decoded by mysql_common) gives for a cell.
fn binary_expected(kind: Kind, shown: &Option<String>) -> MValue {
    let Some(text) = shown else { return MValue::NULL };
    match kind {
        Kind::Time(_) => {
            let (negative, hours, minute, second, micros) = time_parts(text);
            MValue::Time(negative, (hours / 24) as u32, (hours % 24) as u8, minute, second, micros)
        }
        Kind::Year => MValue::Int(text.parse().unwrap()),
        Kind::Timestamp(_) | Kind::Date | Kind::DateTime(_) => {
            let (y, m, d, h, mi, s, us) = datetime_parts(text);
            MValue::Date(y, m, d, h, mi, s, us)
        }
    }
}

/// What `mysql_common` decodes from the row event for a cell.
fn binlog_expected(kind: Kind, shown: &Option<String>) -> MValue {
    let Some(text) = shown else { return MValue::NULL };
    match kind {
        Kind::Year => {
            let year: i64 = text.parse().unwrap();
            MValue::Bytes((if year == 0 { 1900 } else { year }).to_string().into_bytes())
        }
        Kind::Timestamp(_) => {
            let (seconds, micros) = if text.starts_with("0000") { (0, 0) } else { epoch(text) };
            let shown = if micros == 0 { seconds.to_string() } else { format!("{seconds}.{micros:06}") };
            MValue::Bytes(shown.into_bytes())
        }
        _ => binary_expected(kind, shown),
    }
}

/// What python-mysql-replication returns (printed by read_rows.py), or
/// `None` where it is known to misread (negative TIME).
fn python_expected(kind: Kind, shown: &Option<String>) -> Option<Json> {
    let Some(text) = shown else { return Some(Json::Null) };
    Some(match kind {
        Kind::Time(_) => {
            let (negative, hours, minute, second, micros) = time_parts(text);
            if negative {
                return None;
            }
            // str(timedelta): "[D day[s], ]H:MM:SS[.ffffff]".
            let (days, hours) = (hours / 24, hours % 24);
            let day_part = match days {
                0 => String::new(),
                1 => "1 day, ".into(),
                n => format!("{n} days, "),
            };
            let fraction = if micros == 0 { String::new() } else { format!(".{micros:06}") };
            Json::from(format!("{day_part}{hours}:{minute:02}:{second:02}{fraction}"))
        }
        Kind::Year => {
            let year: i64 = text.parse().unwrap();
            Json::from(if year == 0 { 1900 } else { year })
        }
        // The zero date has no Python date.
        Kind::Date if text.starts_with("0000") => Json::Null,
        Kind::Timestamp(_) | Kind::Date | Kind::DateTime(_) => {
            let (y, m, d, h, mi, s, us) = datetime_parts(text);
            if matches!(kind, Kind::Timestamp(_)) && y == 0 {
                Json::from("1970-01-01 00:00:00")
            } else if kind == Kind::Date {
                Json::from(format!("{y:04}-{m:02}-{d:02}"))
            } else {
                let fraction = if us == 0 { String::new() } else { format!(".{us:06}") };
                Json::from(format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}{fraction}"))
            }
        }
    })
}

/// A small deterministic generator for the seeded random values.
fn fraction_text(micros: u32, fsp: u8) -> String {
    if fsp == 0 {
        String::new()
    } else {
        format!(".{}", &format!("{micros:06}")[..fsp as usize])
    }
}

/// A random value of `kind`, exactly representable at its precision.
fn random_cell(kind: Kind, random: &mut SeededRandom) -> Cell {
    let micros = |random: &mut SeededRandom, fsp: u8| {
        let unit = 10u64.pow(6 - u32::from(fsp));
        (random.below(1_000_000 / unit) * unit) as u32
    };
    match kind {
        Kind::Time(fsp) => {
            let negative = random.below(2) == 1;
            let (hours, minute, second, us) = (random.below(839), random.below(60), random.below(60), micros(random, fsp));
            let sign = if negative && (hours, minute, second, us) != (0, 0, 0, 0) { "-" } else { "" };
            let text = format!("{sign}{hours:02}:{minute:02}:{second:02}{}", fraction_text(us, fsp));
            cell(&format!("'{text}'"), &text)
        }
        Kind::Year => {
            let year = 1901 + random.below(255);
            cell(&year.to_string(), &year.to_string())
        }
        Kind::Timestamp(fsp) | Kind::DateTime(fsp) => {
            let (year_low, years) = if matches!(kind, Kind::Timestamp(_)) { (1971, 66) } else { (1000, 9000) };
            let year = year_low + random.below(years);
            let (month, day) = (1 + random.below(12), 1 + random.below(28));
            let (hour, minute, second, us) = (random.below(24), random.below(60), random.below(60), micros(random, fsp));
            let text = format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{}", fraction_text(us, fsp));
            cell(&format!("'{text}'"), &text)
        }
        Kind::Date => {
            let text = format!("{:04}-{:02}-{:02}", 1000 + random.below(9000), 1 + random.below(12), 1 + random.below(28));
            cell(&format!("'{text}'"), &text)
        }
    }
}

/// The matrix rows: NULL, minimum, maximum, zero, edges (fractions,
/// negative TIME, the literal forms MySQL accepts), then seeded random.
fn rows() -> Vec<(i64, Vec<Cell>)> {
    let mut rows = vec![
        (1, vec![null(), null(), null(), null(), null(), null(), null(), null(), null()]),
        (
            2,
            vec![
                cell("'-838:59:59'", "-838:59:59"),
                cell("'-838:59:59.000'", "-838:59:59.000"),
                cell("'-838:59:59'", "-838:59:59.000000"),
                cell("1901", "1901"),
                cell("'1970-01-01 00:00:01'", "1970-01-01 00:00:01"),
                cell("'1970-01-01 00:00:01.000'", "1970-01-01 00:00:01.000"),
                cell("'1970-01-01 00:00:01'", "1970-01-01 00:00:01.000000"),
                cell("'1000-01-01'", "1000-01-01"),
                cell("'1000-01-01 00:00:00'", "1000-01-01 00:00:00.000000"),
            ],
        ),
        (
            3,
            vec![
                cell("'838:59:59'", "838:59:59"),
                cell("'838:59:59.000'", "838:59:59.000"),
                cell("'838:59:59'", "838:59:59.000000"),
                cell("2155", "2155"),
                cell("'2038-01-19 03:14:07'", "2038-01-19 03:14:07"),
                cell("'2038-01-19 03:14:07.999'", "2038-01-19 03:14:07.999"),
                cell("'2038-01-19 03:14:07.999999'", "2038-01-19 03:14:07.999999"),
                cell("'9999-12-31'", "9999-12-31"),
                cell("'9999-12-31 23:59:59.999999'", "9999-12-31 23:59:59.999999"),
            ],
        ),
        (
            4,
            vec![
                cell("'00:00:00'", "00:00:00"),
                cell("0", "00:00:00.000"),
                cell("'0:0:0'", "00:00:00.000000"),
                cell("0", "0000"),
                cell("'2024-02-29 12:00:00'", "2024-02-29 12:00:00"),
                cell("'2024-02-29 12:00:00.5'", "2024-02-29 12:00:00.500"),
                cell("'2024-02-29 12:00:00.000001'", "2024-02-29 12:00:00.000001"),
                cell("'2024-02-29'", "2024-02-29"),
                cell("'2024-02-29 00:00:00'", "2024-02-29 00:00:00.000000"),
            ],
        ),
        (
            5,
            vec![
                cell("'12:34:56.789'", "12:34:57"),
                cell("'-00:00:00.5'", "-00:00:00.500"),
                cell("'1 02:03:04.000005'", "26:03:04.000005"),
                cell("'70'", "1970"),
                cell("'2000-01-01 00:00:00.4'", "2000-01-01 00:00:00"),
                cell("'20001231235959.9995'", "2001-01-01 00:00:00.000"),
                cell("'1999-12-31T23:59:59.123456'", "1999-12-31 23:59:59.123456"),
                cell("20240101", "2024-01-01"),
                cell("'24-2-9 1:2:3.4'", "2024-02-09 01:02:03.400000"),
            ],
        ),
        (
            6,
            vec![
                cell("123456", "12:34:56"),
                cell("'-1234.5'", "-00:12:34.500"),
                cell("-1", "-00:00:01.000000"),
                cell("'0'", "2000"),
                cell("'1970-01-01 00:00:01'", "1970-01-01 00:00:01"),
                cell("'2024-06-30 23:59:59.9994'", "2024-06-30 23:59:59.999"),
                cell("'2024-06-30 23:59:59'", "2024-06-30 23:59:59.000000"),
                cell("'0000-00-00'", "0000-00-00"),
                cell("'2023-02-28 23:59:59.9999995'", "2023-03-01 00:00:00.000000"),
            ],
        ),
    ];
    let mut random = SeededRandom::new(0x5eed_7e3a);
    for id in 7..15 {
        rows.push((id, COLUMNS.iter().map(|&kind| random_cell(kind, &mut random)).collect()));
    }
    rows
}

fn create_table(client: &mut RawClient) {
    let columns: Vec<String> = COLUMNS.iter().enumerate().map(|(i, kind)| format!("c{i} {}", kind.sql_type())).collect();
    client.query("CREATE DATABASE tt").unwrap();
    client.query(&format!("CREATE TABLE tt.t (id INT NOT NULL, {}, PRIMARY KEY (id))", columns.join(", "))).unwrap();
}

fn insert(client: &mut RawClient, id: i64, cells: &[Cell]) {
    let literals: Vec<&str> = cells.iter().map(|c| c.literal.as_str()).collect();
    // The zero date needs a mode without NO_ZERO_DATE; the rest is strict.
    let sql = format!("INSERT INTO tt.t VALUES ({id}, {})", literals.join(", "));
    client.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
}

fn check_reads(client: &mut RawClient, expected: &[(i64, Vec<Cell>)]) {
    let rows = client.query_rows("SELECT * FROM tt.t ORDER BY id").unwrap();
    assert_eq!(rows.len(), expected.len());
    for (row, (id, cells)) in rows.iter().zip(expected) {
        assert_eq!(row[0].as_deref(), Some(id.to_string().as_str()));
        for (index, cell) in cells.iter().enumerate() {
            assert_eq!(row[index + 1], cell.shown, "text protocol, row {id} column c{index} ({:?}) from {}", COLUMNS[index], cell.literal);
        }
    }
    let (statement, _, columns) = client.prepare("SELECT * FROM tt.t WHERE id = ?").unwrap();
    assert_eq!(columns.len(), COLUMNS.len() + 1);
    for (id, cells) in expected {
        let Response::BinaryRows { rows, .. } = client.execute(statement, &[MValue::Int(*id)]).unwrap() else { panic!("no rows") };
        for (index, cell) in cells.iter().enumerate() {
            let kind = COLUMNS[index];
            assert_eq!(rows[0][index + 1], binary_expected(kind, &cell.shown), "binary protocol, row {id} column c{index} ({kind:?})");
        }
    }
}

/// Every row image of table `t` in the server's binlog files, decoded by
/// mysql_common: (event kind, before, after).
type Image = Option<Vec<MValue>>;

fn binlog_images(server: &Binlogd) -> Vec<(&'static str, Image, Image)> {
    let mut images = Vec::new();
    for name in server.binlog_files() {
        let file = std::fs::read(server.binlog_dir().join(&name)).unwrap();
        let mut table_is_t = false;
        let binlog = BinlogFile::new(mysql_common::binlog::consts::BinlogVersion::Version4, &file[..]).unwrap();
        let mut table_maps = std::collections::HashMap::new();
        for event in binlog {
            let event = event.unwrap();
            match event.read_data().unwrap() {
                Some(EventData::TableMapEvent(map)) => {
                    table_is_t = map.table_name() == "t" && map.database_name() == "tt";
                    table_maps.insert(map.table_id(), map.into_owned());
                }
                Some(EventData::RowsEvent(rows)) if table_is_t => {
                    let kind = match &rows {
                        mysql_common::binlog::events::RowsEventData::WriteRowsEvent(_) => "write",
                        mysql_common::binlog::events::RowsEventData::UpdateRowsEvent(_) => "update",
                        _ => "delete",
                    };
                    let map = &table_maps[&rows.table_id()];
                    for row in rows.rows(map) {
                        let (before, after) = row.unwrap();
                        let values = |row: Option<mysql_common::binlog::row::BinlogRow>| {
                            row.map(|row| {
                                (0..row.len())
                                    .map(|i| match row.as_ref(i).unwrap() {
                                        BinlogValue::Value(value) => value.clone(),
                                        other => panic!("unexpected {other:?}"),
                                    })
                                    .collect::<Vec<_>>()
                            })
                        };
                        images.push((kind, values(before), values(after)));
                    }
                }
                _ => {}
            }
        }
    }
    images
}

fn expected_image(id: i64, cells: &[Cell]) -> Vec<MValue> {
    let mut values = vec![MValue::Int(id)];
    values.extend(cells.iter().enumerate().map(|(i, cell)| binlog_expected(COLUMNS[i], &cell.shown)));
    values
}

/// read_rows.py's JSON lines for the file: the rows of table `t`.
fn python_rows(server: &Binlogd) -> Vec<Json> {
    let output = Command::new("python3")
        .arg(python_script("read_rows.py"))
        .args([&server.port.to_string(), "position", "binlog.000001", "4"])
        .env("TZ", "UTC")
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_rows.py: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Json>(line).unwrap())
        .filter(|line| line.get("table").and_then(Json::as_str) == Some("t"))
        .collect()
}

fn check_python_row(event: &Json, id: i64, cells: &[Cell], place: &str) {
    assert_eq!(event["id"], Json::from(id), "{place}");
    for (index, cell) in cells.iter().enumerate() {
        let kind = COLUMNS[index];
        if let Some(expected) = python_expected(kind, &cell.shown) {
            assert_eq!(
                event[format!("c{index}")],
                expected,
                "python-mysql-replication, {place} column c{index} ({kind:?}) {:?}",
                cell.shown
            );
        }
    }
}

#[test]
fn temporal_types_read_back_and_reach_every_binlog_reader() {
    let mut server = Binlogd::start(&[]);
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("SET time_zone = '+00:00'").unwrap();
    // Strict, with zero dates allowed (row 6 stores '0000-00-00').
    client.query("SET sql_mode = 'STRICT_TRANS_TABLES'").unwrap();
    create_table(&mut client);
    let rows = rows();
    for (id, cells) in &rows {
        insert(&mut client, *id, cells);
    }
    check_reads(&mut client, &rows);

    // UPDATE: each row takes the next row's values; DELETE: the even ids.
    let mut updated = rows.clone();
    for index in 0..rows.len() {
        let (id, _) = rows[index];
        let (_, next) = &rows[(index + 1) % rows.len()];
        let assignments: Vec<String> = next.iter().enumerate().map(|(i, c)| format!("c{i} = {}", c.literal)).collect();
        client.query(&format!("UPDATE tt.t SET {} WHERE id = {id}", assignments.join(", "))).unwrap();
        updated[index].1 = next.clone();
    }
    check_reads(&mut client, &updated);
    client.query("DELETE FROM tt.t WHERE id % 2 = 0").unwrap();
    let kept: Vec<(i64, Vec<Cell>)> = updated.iter().filter(|(id, _)| id % 2 == 1).cloned().collect();
    check_reads(&mut client, &kept);

    // The binlog, as mysql_common decodes it.
    let images = binlog_images(&server);
    let mut expected: Vec<(&str, Image, Image)> = Vec::new();
    expected.extend(rows.iter().map(|(id, cells)| ("write", None, Some(expected_image(*id, cells)))));
    for ((id, before), (_, after)) in rows.iter().zip(&updated) {
        let (before, after) = (expected_image(*id, before), expected_image(*id, after));
        if before != after {
            expected.push(("update", Some(before), Some(after)));
        }
    }
    expected.extend(updated.iter().filter(|(id, _)| id % 2 == 0).map(|(id, cells)| ("delete", Some(expected_image(*id, cells)), None)));
    assert_eq!(images.len(), expected.len(), "row images");
    for (index, (ours, theirs)) in expected.iter().zip(&images).enumerate() {
        assert_eq!(ours, theirs, "row image #{index}");
    }

    // mariadb-binlog reads every file.
    for name in server.binlog_files() {
        let output = Command::new("mariadb-binlog").arg("--verbose").arg(server.binlog_dir().join(&name)).output().unwrap();
        assert!(output.status.success(), "mariadb-binlog {name}: {}", String::from_utf8_lossy(&output.stderr));
        let text = String::from_utf8_lossy(&output.stdout);
        if name == "binlog.000001" {
            assert!(text.contains("'-838:59:59'"), "mariadb-binlog prints TIME");
            assert!(text.contains("@5=2155"), "mariadb-binlog prints YEAR");
        }
    }

    // python-mysql-replication.
    let events = python_rows(&server);
    let writes: Vec<&Json> = events.iter().filter(|e| e["event"] == "write").flat_map(|e| e["rows"].as_array().unwrap()).collect();
    assert_eq!(writes.len(), rows.len());
    for (event, (id, cells)) in writes.iter().zip(&rows) {
        check_python_row(event, *id, cells, &format!("write of row {id}"));
    }
    let updates: Vec<&Json> = events.iter().filter(|e| e["event"] == "update").flat_map(|e| e["rows"].as_array().unwrap()).collect();
    let changed: Vec<_> = rows.iter().zip(&updated).filter(|((id, b), (_, a))| expected_image(*id, b) != expected_image(*id, a)).collect();
    assert_eq!(updates.len(), changed.len());
    for (event, ((id, before), (_, after))) in updates.iter().zip(changed) {
        check_python_row(&event["before"], *id, before, &format!("update of row {id} (before)"));
        check_python_row(&event["after"], *id, after, &format!("update of row {id} (after)"));
    }

    // Binary-protocol parameters: MYSQL_TYPE_TIME, DATETIME and integers.
    let (insert, _, _) = client.prepare("INSERT INTO tt.t (id, c0, c2, c3, c5, c8) VALUES (?, ?, ?, ?, ?, ?)").unwrap();
    let params = [
        MValue::Int(100),
        MValue::Time(true, 1, 2, 3, 4, 0),
        MValue::Time(false, 34, 22, 1, 2, 123_456),
        MValue::Int(69),
        MValue::Date(2001, 2, 3, 4, 5, 6, 789_000),
        MValue::Date(2024, 2, 29, 23, 59, 59, 999_999),
    ];
    client.execute(insert, &params).unwrap();
    let row = client.query_rows("SELECT c0, c2, c3, c5, c8 FROM tt.t WHERE id = 100").unwrap().remove(0);
    let shown: Vec<&str> = row.iter().map(|v| v.as_deref().unwrap()).collect();
    assert_eq!(shown, ["-26:03:04", "838:01:02.123456", "2069", "2001-02-03 04:05:06.789", "2024-02-29 23:59:59.999999"]);
    client.query("DELETE FROM tt.t WHERE id = 100").unwrap();

    // The values survive a restart (redo and checkpoint).
    server.restart();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("SET time_zone = '+00:00'").unwrap();
    check_reads(&mut client, &kept);
    client.query("DROP DATABASE tt").unwrap();
}

/// Error code and message of a statement that must fail.
fn refused(client: &mut RawClient, sql: &str) -> (u16, String, String) {
    let error = client.query(sql).map(|_| ()).unwrap_err();
    (error.code, error.state, error.message)
}

fn warnings(client: &mut RawClient) -> Vec<(String, String)> {
    client.query_rows("SHOW WARNINGS").unwrap().into_iter().map(|row| (row[1].clone().unwrap(), row[2].clone().unwrap())).collect()
}

#[test]
fn bad_temporal_input_gets_mysqls_errors_and_warnings() {
    let server = Binlogd::start(&[]);
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("CREATE DATABASE bad").unwrap();
    client.query("CREATE TABLE bad.t (id INT NOT NULL, t TIME, y YEAR, ts TIMESTAMP NULL, d DATE, dt DATETIME, PRIMARY KEY (id))").unwrap();
    client.query("INSERT INTO bad.t VALUES (1, '01:00:00', 2000, '2000-01-01 00:00:00', '2000-01-01', '2000-01-01 00:00:00')").unwrap();
    let before = client.query_rows("SELECT * FROM bad.t").unwrap();

    // MySQL 8.4's default sql_mode: strict, NO_ZERO_DATE, NO_ZERO_IN_DATE.
    let incorrect = |kind: &str, value: &str, column: &str, row: u32| {
        (1292u16, "22007".to_string(), format!("Incorrect {kind} value: '{value}' for column '{column}' at row {row}"))
    };
    for (sql, expected) in [
        ("INSERT INTO bad.t (id, t) VALUES (2, '839:00:00')", incorrect("time", "839:00:00", "t", 1)),
        ("INSERT INTO bad.t (id, t) VALUES (2, '-839:00:00')", incorrect("time", "-839:00:00", "t", 1)),
        ("INSERT INTO bad.t (id, t) VALUES (2, '12:60:00')", incorrect("time", "12:60:00", "t", 1)),
        ("INSERT INTO bad.t (id, ts) VALUES (2, '1970-01-01 00:00:00')", incorrect("datetime", "1970-01-01 00:00:00", "ts", 1)),
        ("INSERT INTO bad.t (id, ts) VALUES (2, '2038-01-19 03:14:08')", incorrect("datetime", "2038-01-19 03:14:08", "ts", 1)),
        ("INSERT INTO bad.t (id, d) VALUES (2, '2023-02-29')", incorrect("date", "2023-02-29", "d", 1)),
        ("INSERT INTO bad.t (id, d) VALUES (2, '0000-00-00')", incorrect("date", "0000-00-00", "d", 1)),
        ("INSERT INTO bad.t (id, d) VALUES (2, '2024-00-01')", incorrect("date", "2024-00-01", "d", 1)),
        ("INSERT INTO bad.t (id, dt) VALUES (2, '2024-01-01 24:00:00')", incorrect("datetime", "2024-01-01 24:00:00", "dt", 1)),
        ("INSERT INTO bad.t (id, dt) VALUES (2, 'yesterday')", incorrect("datetime", "yesterday", "dt", 1)),
        ("INSERT INTO bad.t (id, d) VALUES (2, '2024-01-01'), (3, '2024-13-01')", incorrect("date", "2024-13-01", "d", 2)),
        ("UPDATE bad.t SET ts = '1969-12-31 23:59:59'", incorrect("datetime", "1969-12-31 23:59:59", "ts", 1)),
        ("INSERT INTO bad.t (id, y) VALUES (2, 1900)", (1264, "22003".into(), "Out of range value for column 'y' at row 1".into())),
        ("INSERT INTO bad.t (id, y) VALUES (2, 2156)", (1264, "22003".into(), "Out of range value for column 'y' at row 1".into())),
        (
            "INSERT INTO bad.t (id, y) VALUES (2, 'abc')",
            (1366, "HY000".into(), "Incorrect integer value: 'abc' for column 'y' at row 1".into()),
        ),
        ("SET time_zone = 'Europe/Paris'", (1298, "HY000".into(), "Unknown or incorrect time zone: 'Europe/Paris'".into())),
        ("SET time_zone = '+14:01'", (1298, "HY000".into(), "Unknown or incorrect time zone: '+14:01'".into())),
        ("CREATE TABLE bad.u (t TIME(7))", (1426, "42000".into(), "Too-big precision 7 specified for 't'. Maximum is 6.".into())),
        ("CREATE TABLE bad.u (y YEAR(2))", (1818, "HY000".into(), "Supports only YEAR or YEAR(4) column.".into())),
        ("CREATE TABLE bad.u (d DATE DEFAULT '0000-00-00')", (1067, "42000".into(), "Invalid default value for 'd'".into())),
        ("CREATE TABLE bad.u (ts TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP)", (1067, "42000".into(), "Invalid default value for 'ts'".into())),
        (
            "CREATE TABLE bad.u (t TIME ON UPDATE CURRENT_TIMESTAMP)",
            (1294, "HY000".into(), "Invalid ON UPDATE clause for 't' column".into()),
        ),
    ] {
        assert_eq!(refused(&mut client, sql), expected, "{sql}");
        // The connection stays usable and nothing changed.
        assert_eq!(client.query_rows("SELECT * FROM bad.t").unwrap(), before, "after {sql}");
    }

    // Not strict: the clipped or zero value and MySQL's warning.
    client.query("SET sql_mode = ''").unwrap();
    for (sql, stored, shown, warning) in [
        ("INSERT INTO bad.t (id, t) VALUES (10, '839:00:00')", "t", "838:59:59", ("1264", "Out of range value for column 't' at row 1")),
        ("INSERT INTO bad.t (id, t) VALUES (11, '-900:00:00')", "t", "-838:59:59", ("1264", "Out of range value for column 't' at row 1")),
        ("INSERT INTO bad.t (id, t) VALUES (12, 'noon')", "t", "00:00:00", ("1265", "Data truncated for column 't' at row 1")),
        ("INSERT INTO bad.t (id, d) VALUES (13, '2023-02-29')", "d", "0000-00-00", ("1264", "Out of range value for column 'd' at row 1")),
        (
            "INSERT INTO bad.t (id, ts) VALUES (14, '2040-01-01 00:00:00')",
            "ts",
            "0000-00-00 00:00:00",
            ("1264", "Out of range value for column 'ts' at row 1"),
        ),
        ("INSERT INTO bad.t (id, y) VALUES (15, 3000)", "y", "0000", ("1264", "Out of range value for column 'y' at row 1")),
    ] {
        let Response::Ok { warnings: count, .. } = client.query(sql).unwrap() else { panic!("{sql}: not OK") };
        assert_eq!(count, 1, "{sql}");
        assert_eq!(warnings(&mut client), vec![(warning.0.to_string(), warning.1.to_string())], "{sql}");
        let id = &sql[sql.find("VALUES (").unwrap() + 8..][..2];
        assert_eq!(client.value(&format!("SELECT {stored} FROM bad.t WHERE id = {id}")), shown, "{sql}");
    }
    assert_eq!(client.value("SELECT ts FROM bad.t WHERE id = 14"), "0000-00-00 00:00:00");
    assert_eq!(client.value("SELECT y FROM bad.t WHERE id = 15"), "0000");
    // NO_ZERO_DATE without strict: stored, with a warning.
    client.query("SET sql_mode = 'NO_ZERO_DATE'").unwrap();
    let Response::Ok { warnings: count, .. } = client.query("INSERT INTO bad.t (id, d) VALUES (16, '0000-00-00')").unwrap() else {
        panic!("not OK")
    };
    assert_eq!(count, 1);
    assert_eq!(client.value("SELECT d FROM bad.t WHERE id = 16"), "0000-00-00");
    // ALLOW_INVALID_DATES keeps a day the month lacks.
    client.query("SET sql_mode = 'STRICT_TRANS_TABLES,ALLOW_INVALID_DATES'").unwrap();
    client.query("INSERT INTO bad.t (id, d) VALUES (17, '2023-02-31')").unwrap();
    assert_eq!(client.value("SELECT d FROM bad.t WHERE id = 17"), "2023-02-31");
    client.query("DROP DATABASE bad").unwrap();
}

#[test]
fn current_timestamp_defaults_functions_and_the_session_time_zone() {
    let mut server = Binlogd::start(&[]);
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("CREATE DATABASE ct").unwrap();
    client
        .query(
            "CREATE TABLE ct.t (id INT NOT NULL, v INT, \
             created TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), \
             changed DATETIME DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, \
             touched TIMESTAMP NULL ON UPDATE NOW(), \
             t TIME(2) DEFAULT '-01:02:03.5', y YEAR DEFAULT 1999, PRIMARY KEY (id))",
        )
        .unwrap();
    let create = client.query_rows("SHOW CREATE TABLE ct.t").unwrap()[0][1].clone().unwrap();
    for line in [
        "`created` timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),",
        "`changed` datetime DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,",
        "`touched` timestamp NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP,",
        "`t` time(2) DEFAULT '-01:02:03.50',",
        "`y` year DEFAULT '1999',",
    ] {
        assert!(create.contains(line), "missing {line:?} in {create}");
    }
    let columns = client.query_rows("SHOW COLUMNS FROM ct.t").unwrap();
    let described: Vec<(String, Option<String>, String)> =
        columns.iter().map(|row| (row[1].clone().unwrap(), row[4].clone(), row[5].clone().unwrap())).collect();
    assert_eq!(
        described[2..],
        [
            ("timestamp(3)".to_string(), Some("CURRENT_TIMESTAMP(3)".to_string()), "DEFAULT_GENERATED".to_string()),
            ("datetime".into(), Some("CURRENT_TIMESTAMP".into()), "DEFAULT_GENERATED on update CURRENT_TIMESTAMP".into()),
            ("timestamp".into(), None, "on update CURRENT_TIMESTAMP".into()),
            ("time(2)".into(), Some("-01:02:03.50".into()), String::new()),
            ("year".into(), Some("1999".into()), String::new()),
        ]
    );

    // One statement, one start time for every row, between the clocks.
    let before = client.value("SELECT UNIX_TIMESTAMP()").parse::<i64>().unwrap();
    client.query("INSERT INTO ct.t (id, v) VALUES (1, 1), (2, 2), (3, 3)").unwrap();
    let after = client.value("SELECT UNIX_TIMESTAMP()").parse::<i64>().unwrap();
    let rows = client.query_rows("SELECT created, changed, touched, t, y, UNIX_TIMESTAMP(created) FROM ct.t ORDER BY id").unwrap();
    assert!(rows.windows(2).all(|pair| pair[0][..2] == pair[1][..2]), "{rows:?}");
    assert_eq!(rows[0][2], None);
    assert_eq!((rows[0][3].as_deref(), rows[0][4].as_deref()), (Some("-01:02:03.50"), Some("1999")));
    let created: f64 = rows[0][5].clone().unwrap().parse().unwrap();
    assert!((before as f64..=after as f64 + 1.0).contains(&created), "{before} <= {created} <= {after}");

    // ON UPDATE: only the changed row, and not when nothing changes.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    client.query("UPDATE ct.t SET v = 20 WHERE id = 2").unwrap();
    client.query("UPDATE ct.t SET v = 3 WHERE id = 3").unwrap();
    let rows = client.query_rows("SELECT changed, touched, created FROM ct.t ORDER BY id").unwrap();
    assert_eq!(rows[0][1], None);
    assert!(rows[1][1].is_some() && rows[1][0] > rows[0][0], "{rows:?}");
    assert_eq!(rows[2][1], None, "an UPDATE that changes nothing leaves ON UPDATE alone");
    assert_eq!(rows[1][2], rows[0][2], "created is DEFAULT only");

    // The session time zone moves TIMESTAMPs, not DATETIMEs.
    client.query("CREATE TABLE ct.z (id INT NOT NULL, ts TIMESTAMP NULL, dt DATETIME, PRIMARY KEY (id))").unwrap();
    client.query("SET time_zone = '+00:00'").unwrap();
    client.query("INSERT INTO ct.z VALUES (1, '2024-01-01 00:00:00', '2024-01-01 00:00:00')").unwrap();
    client.query("SET time_zone = '+05:30'").unwrap();
    assert_eq!(
        client.query_rows("SELECT ts, dt FROM ct.z").unwrap()[0],
        [Some("2024-01-01 05:30:00".into()), Some("2024-01-01 00:00:00".into())]
    );
    client.query("INSERT INTO ct.z VALUES (2, '2024-01-01 05:30:00', NULL)").unwrap();
    assert_eq!(client.value("SELECT COUNT(*) FROM ct.z WHERE ts = '2024-01-01 05:30:00'"), "2");
    // A DATETIME meets a date as a date: midnight equals the bare day.
    assert_eq!(client.value("SELECT COUNT(*) FROM ct.z WHERE dt = '2024-01-01'"), "1");
    assert_eq!(client.value("SELECT COUNT(*) FROM ct.z WHERE dt = 20240101"), "1");
    assert_eq!(client.value("SELECT COUNT(*) FROM ct.z WHERE ts > '2024-1-1 5:29:59'"), "2");
    assert_eq!(client.value("SELECT UNIX_TIMESTAMP(ts) FROM ct.z WHERE id = 2"), "1704067200");
    client.query("SET time_zone = '-08:00'").unwrap();
    assert_eq!(client.value("SELECT ts FROM ct.z WHERE id = 2"), "2023-12-31 16:00:00");
    assert_eq!(client.value("SELECT @@session.time_zone"), "-08:00");
    client.query("SET time_zone = 'SYSTEM'").unwrap();
    assert_eq!(client.value("SELECT ts FROM ct.z WHERE id = 2"), "2024-01-01 00:00:00");

    // The functions, with their precision.
    let row = client.query_rows("SELECT NOW(), NOW(6), CURRENT_TIMESTAMP, CURDATE(), CURTIME(3), UTC_TIMESTAMP()").unwrap()[0].clone();
    let now = row[0].clone().unwrap();
    assert_eq!(now.len(), 19, "{now}");
    assert_eq!(row[1].as_ref().unwrap().len(), 26);
    assert_eq!(row[1].as_ref().unwrap()[..19], now, "NOW(6) is the same instant");
    assert_eq!(row[2].as_deref(), Some(now.as_str()));
    assert_eq!(row[3].as_deref(), Some(&now[..10]));
    assert_eq!(row[4].as_ref().unwrap().len(), 12);
    assert_eq!(row[5].as_deref(), Some(now.as_str()), "SYSTEM is UTC");
    assert_eq!(client.value("SELECT UNIX_TIMESTAMP('1970-01-01 00:00:10')"), "10");
    let literals = client.query_rows("SELECT TIME '-12:34:56.5', DATE '2024-02-29', TIMESTAMP '2024-02-29 01:02:03'").unwrap();
    assert_eq!(literals[0], [Some("-12:34:56.5".into()), Some("2024-02-29".into()), Some("2024-02-29 01:02:03".into())]);
    let error = client.query("SELECT DATE '2023-02-29'").map(|_| ()).unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1525, "Incorrect DATE value: '2023-02-29'"));
    let error = client.query("SELECT NOW(7)").map(|_| ()).unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (1426, "Too-big precision 7 specified for 'now'. Maximum is 6."));

    // TIME and YEAR compare and order as MySQL's.
    client.query("CREATE TABLE ct.o (id INT NOT NULL, t TIME, y YEAR, PRIMARY KEY (t))").unwrap();
    client
        .query("INSERT INTO ct.o VALUES (1, '-100:00:00', 1999), (2, '99:00:00', 2000), (3, '100:00:00', 70), (4, '-00:00:01', '05')")
        .unwrap();
    let ordered: Vec<String> =
        client.query_rows("SELECT t FROM ct.o ORDER BY t").unwrap().into_iter().map(|r| r[0].clone().unwrap()).collect();
    assert_eq!(ordered, ["-100:00:00", "-00:00:01", "99:00:00", "100:00:00"]);
    assert_eq!(client.value("SELECT COUNT(*) FROM ct.o WHERE t > '99:30:00'"), "1");
    assert_eq!(client.value("SELECT id FROM ct.o WHERE y = 2005"), "4");
    assert_eq!(client.value("SELECT y FROM ct.o WHERE id = 3"), "1970");

    // The defaults come back after a restart.
    server.restart();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    assert_eq!(client.query_rows("SHOW CREATE TABLE ct.t").unwrap()[0][1].clone().unwrap(), create);
    client.query("INSERT INTO ct.t (id) VALUES (4)").unwrap();
    assert_eq!(client.value("SELECT COUNT(*) FROM ct.t WHERE id = 4 AND created IS NOT NULL AND changed IS NOT NULL"), "1");
    client.query("DROP DATABASE ct").unwrap();
}

/// Binary-protocol DATE, DATETIME and TIME parameters with a field out of
/// range are the zero value with warning 1292, as mysqld's `Item_param`
/// makes them; a TIME past 838 hours is clipped to 838:59:59.
#[test]
fn binary_protocol_temporal_parameters_are_checked() {
    let server = Binlogd::start(&[]);
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("CREATE DATABASE p").unwrap();
    client.query("CREATE TABLE p.t (id INT PRIMARY KEY, dt DATETIME, t TIME)").unwrap();
    let (insert, ..) = client.prepare("INSERT INTO p.t VALUES (?, ?, ?)").unwrap();
    let incorrect = |kind: &str, text: &str| vec![("1292".to_string(), format!("Incorrect {kind} value: '{text}'"))];

    // Strict mode: the zero DATETIME meets the column's NO_ZERO_DATE check.
    let error = client.execute(insert, &[MValue::Int(1), MValue::Date(2024, 13, 1, 0, 0, 0, 0), MValue::NULL]).unwrap_err();
    assert_eq!(error.code, 1292);
    assert!(
        error.message.starts_with("Incorrect datetime value: '0000-00-00") && error.message.ends_with("for column 'dt' at row 1"),
        "{error:?}"
    );
    assert_eq!(client.query_rows("SELECT COUNT(*) FROM p.t").unwrap(), vec![vec![Some("0".into())]]);

    // Without NO_ZERO_DATE the zero values are stored, each with its warning.
    client.query("SET SESSION sql_mode = ''").unwrap();
    for (id, dt, t, stored, expected_warnings) in [
        (
            1,
            MValue::Date(2024, 13, 1, 10, 0, 0, 0),
            MValue::NULL,
            ("0000-00-00 00:00:00", None),
            incorrect("datetime", "2024-13-01 10:00:00"),
        ),
        (
            2,
            MValue::Date(65535, 13, 32, 48, 112, 112, 0),
            MValue::NULL,
            ("0000-00-00 00:00:00", None),
            incorrect("datetime", "65535-13-32 48:112:112"),
        ),
        (3, MValue::Date(2024, 2, 32, 0, 0, 0, 0), MValue::NULL, ("0000-00-00 00:00:00", None), incorrect("date", "2024-02-32")),
        (4, MValue::NULL, MValue::Time(false, 0, 10, 60, 0, 0), ("", Some("00:00:00")), incorrect("time", "10:60:00")),
        (5, MValue::NULL, MValue::Time(true, 40, 0, 0, 0, 0), ("", Some("-838:59:59")), vec![]),
        (
            6,
            MValue::Date(2024, 2, 29, 23, 59, 59, 0),
            MValue::Time(false, 0, 1, 2, 3, 0),
            ("2024-02-29 23:59:59", Some("01:02:03")),
            vec![],
        ),
    ] {
        client.execute(insert, &[MValue::Int(id), dt.clone(), t.clone()]).unwrap();
        assert_eq!(warnings(&mut client), expected_warnings, "{dt:?} {t:?}");
        let row = client.query_rows(&format!("SELECT dt, t FROM p.t WHERE id = {id}")).unwrap();
        let expected_dt = if stored.0.is_empty() { None } else { Some(stored.0.to_string()) };
        assert_eq!(row, vec![vec![expected_dt, stored.1.map(str::to_string)]], "{dt:?} {t:?}");
    }
}
