//! Oracle: `mariadb-binlog --verbose` (MariaDB's C++ reader, the same
//! code its server uses) prints the rows of files written with this crate,
//! and every `###   @N=` line must show our value.
//!
//! How it prints (MariaDB's `log_event_print_value`):
//! - integers signed, then the unsigned reading in parentheses when the
//!   signed one is negative (`-1 (255)`); it ignores the SIGNEDNESS metadata;
//! - FLOAT with `%-20g` (6 significant digits, space-padded), DOUBLE with
//!   `%-.20g`; both are checked by parsing the text back;
//! - strings quoted, bytes below 0x20 as `\xNN`, everything else raw;
//! - DATE as `'YYYY:MM:DD'` (colons), DATETIME2 quoted with `fsp` digits,
//!   TIMESTAMP2 as unquoted epoch seconds with `fsp` digits.
//!
//! Set `MARIADB_BINLOG` to use another binary than `mariadb-binlog`.

mod common;

use std::process::Command;

use binlog_format::column_type::ColumnType;
use binlog_format::events::{ColumnSpec, RowsEvent, TableMap};
use binlog_format::GtidSet;
use binlog_format::{Event, Value};
use proptest::prelude::*;
use testkit::BinlogBuilder;

fn binary() -> String {
    std::env::var("MARIADB_BINLOG").unwrap_or_else(|_| "mariadb-binlog".to_string())
}

/// `mariadb-binlog --verbose` of `file`'s bytes; panics with a clear
/// message if the tool is missing or fails.
fn mariadb_binlog_verbose(file: &[u8]) -> Vec<u8> {
    mariadb_binlog(file, "--verbose")
}

fn mariadb_binlog(file: &[u8], option: &str) -> Vec<u8> {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("binlog.000001");
    std::fs::write(&path, file).unwrap();
    let output = match Command::new(binary()).arg(option).arg(&path).output() {
        Ok(output) => output,
        Err(error) => panic!(
            "cannot run `{} {option}`: {error}. Install the MariaDB client tools \
             (Debian: `apt-get install mariadb-client`, which provides /usr/bin/mariadb-binlog) \
             or point MARIADB_BINLOG at the binary.",
            binary()
        ),
    };
    assert!(output.status.success(), "mariadb-binlog exited with {}:\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// `@N=value` lines of one section: column number and printed bytes.
type PrintedValues = Vec<(usize, Vec<u8>)>;

/// A row statement as mariadb-binlog prints it: its first line, then each
/// section (`SET`/`WHERE`) with its values.
#[derive(Debug, PartialEq)]
struct Statement {
    header: String,
    sections: Vec<(String, PrintedValues)>,
}

/// A statement we expect: header, then (section name, row) pairs.
type ExpectedStatement<'a> = (&'static str, Vec<(&'static str, &'a [Value])>);

fn parse_statements(output: &[u8]) -> Vec<Statement> {
    let mut statements: Vec<Statement> = Vec::new();
    for line in output.split(|&b| b == b'\n') {
        let Some(text) = line.strip_prefix(b"### ") else { continue };
        let text = text.trim_ascii_end();
        if let Some(assignment) = text.strip_prefix(b"  @") {
            let equals = assignment.iter().position(|&b| b == b'=').expect("@N=value");
            let column: usize = std::str::from_utf8(&assignment[..equals]).unwrap().parse().unwrap();
            let section = statements.last_mut().and_then(|s| s.sections.last_mut()).expect("value inside a section");
            section.1.push((column, assignment[equals + 1..].to_vec()));
        } else if text == b"SET" || text == b"WHERE" {
            let statement = statements.last_mut().expect("section inside a statement");
            statement.sections.push((String::from_utf8_lossy(text).into_owned(), Vec::new()));
        } else {
            statements.push(Statement { header: String::from_utf8_lossy(text).into_owned(), sections: Vec::new() });
        }
    }
    statements
}

/// The text mariadb-binlog prints for a value, or `None` for FLOAT and
/// DOUBLE, which [`check_float`] compares numerically.
fn printed(spec: &ColumnSpec, value: &Value) -> Option<Vec<u8>> {
    let fraction = |micros: u32, fsp: u8| {
        if fsp == 0 {
            String::new()
        } else {
            format!(".{:0width$}", micros / 10u32.pow(6 - fsp as u32), width = fsp as usize)
        }
    };
    let integer = |bits: u32, stored: u64| {
        let shift = 64 - bits;
        let signed = ((stored << shift) as i64) >> shift;
        let unsigned = if bits == 64 { stored } else { stored & ((1u64 << bits) - 1) };
        if signed < 0 {
            format!("{signed} ({unsigned})")
        } else {
            signed.to_string()
        }
    };
    let bits = match spec.column_type {
        ColumnType::Tiny => 8,
        ColumnType::Short => 16,
        ColumnType::Int24 => 24,
        ColumnType::Long => 32,
        _ => 64,
    };
    let text = match (value, &spec.column_type) {
        (Value::Null, _) => "NULL".to_string(),
        // MariaDB prints the stored byte plus 1900, so `0000` shows as 1900.
        (Value::Int(0), ColumnType::Year) => "1900".to_string(),
        (Value::Int(v), ColumnType::Year) => v.to_string(),
        (Value::Int(v), _) => integer(bits, *v as u64),
        (Value::UInt(v), _) => integer(bits, *v),
        (Value::Float(_) | Value::Double(_), _) => return None,
        (Value::Decimal(text), _) => text.clone(),
        (Value::Bytes(bytes), _) => {
            // It prints the logged bytes: a latin1 or ascii column's text in
            // that set.
            let logged = binlog_format::text_charset::TextCharset::of_collation(spec.collation).encode(bytes);
            let mut quoted = vec![b'\''];
            for &byte in logged.iter() {
                if byte > 0x1f {
                    quoted.push(byte);
                } else {
                    quoted.extend_from_slice(format!("\\x{byte:02x}").as_bytes());
                }
            }
            quoted.push(b'\'');
            return Some(quoted);
        }
        (Value::Date { year, month, day }, _) => format!("'{year:04}:{month:02}:{day:02}'"),
        (Value::DateTime { year, month, day, hour, minute, second, micros }, ColumnType::DateTime2 { fsp }) => {
            format!("'{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{}'", fraction(*micros, *fsp))
        }
        (Value::Timestamp { seconds, micros }, ColumnType::Timestamp2 { fsp }) => {
            format!("{seconds}{}", fraction(*micros, *fsp))
        }
        (Value::Time { negative, hours, minute, second, micros }, ColumnType::Time2 { fsp }) => {
            let sign = if *negative { "-" } else { "" };
            format!("'{sign}{hours:02}:{minute:02}:{second:02}{}'", fraction(*micros, *fsp))
        }
        (other, column_type) => panic!("{other:?} in a {column_type:?} column"),
    };
    Some(text.into_bytes())
}

fn check_float(value: &Value, text: &[u8], place: &str) {
    let parsed: f64 = std::str::from_utf8(text).unwrap().trim().parse().unwrap_or_else(|_| panic!("{place}: {text:?}"));
    match value {
        // %g keeps 6 significant digits.
        Value::Float(v) => {
            let expected = *v as f64;
            assert!((parsed - expected).abs() <= expected.abs() * 5e-6, "{place}: printed {parsed}, wrote {expected}");
        }
        // %.20g keeps more than the 17 digits a double needs.
        Value::Double(v) => assert_eq!(parsed, *v, "{place}"),
        other => panic!("{place}: {other:?} is not a float"),
    }
}

fn check_section(specs: &[ColumnSpec], row: &[Value], printed_values: &[(usize, Vec<u8>)], place: &str) {
    assert_eq!(printed_values.len(), specs.len(), "{place}: column count");
    for (index, ((column, text), (spec, value))) in printed_values.iter().zip(specs.iter().zip(row)).enumerate() {
        assert_eq!(*column, index + 1, "{place}: column numbering");
        let place = format!("{place} @{column} ({})", spec.name);
        match printed(spec, value) {
            Some(expected) => assert_eq!(String::from_utf8_lossy(text), String::from_utf8_lossy(&expected), "{place}: {value:?}"),
            None if *value == Value::Null => unreachable!(),
            None => check_float(value, text, &place),
        }
    }
}

/// Writes Write, Update and Delete transactions of `rows` and checks every
/// printed statement.
fn check_against_mariadb_binlog(specs: &[ColumnSpec], rows: &[Vec<Value>]) {
    let map = TableMap::new(108, "test", "all_types", specs, &[0]).unwrap();
    let mut updated = rows.to_vec();
    updated.rotate_left(1);
    let pairs: Vec<_> = rows.iter().cloned().zip(updated.iter().cloned()).collect();
    let mut file = BinlogBuilder::new(true, &GtidSet::new());
    let statements = [
        RowsEvent::write(108, &map, rows).unwrap(),
        RowsEvent::update(108, &map, &pairs).unwrap(),
        RowsEvent::delete(108, &map, rows).unwrap(),
    ];
    for (index, rows_event) in statements.into_iter().enumerate() {
        let events = [common::begin(), Event::TableMap(map.clone()), rows_event.into_event(), common::xid(100 + index as u64)];
        file.append_transaction(index as u64 + 1, &events);
    }

    let output = mariadb_binlog_verbose(&file.bytes);
    let printed_statements = parse_statements(&output);
    assert_eq!(printed_statements.len(), 3 * rows.len(), "statements printed:\n{}", String::from_utf8_lossy(&output));
    let mut expected: Vec<ExpectedStatement> = Vec::new();
    expected.extend(rows.iter().map(|r| ("INSERT INTO `test`.`all_types`", vec![("SET", &r[..])])));
    expected.extend(pairs.iter().map(|(b, a)| ("UPDATE `test`.`all_types`", vec![("WHERE", &b[..]), ("SET", &a[..])])));
    expected.extend(rows.iter().map(|r| ("DELETE FROM `test`.`all_types`", vec![("WHERE", &r[..])])));
    for (index, (statement, (header, sections))) in printed_statements.iter().zip(&expected).enumerate() {
        assert_eq!(statement.header, *header, "statement #{index}");
        assert_eq!(statement.sections.len(), sections.len(), "statement #{index}: sections");
        for ((name, values), (expected_name, row)) in statement.sections.iter().zip(sections) {
            assert_eq!(name, expected_name, "statement #{index}");
            check_section(specs, row, values, &format!("statement #{index} {name}"));
        }
    }
}

#[test]
fn mariadb_binlog_prints_our_values_for_every_column_type() {
    check_against_mariadb_binlog(&common::oracle_table(), &common::oracle_rows());
}

#[test]
fn mariadb_binlog_sign_extends_negative_medium_int() {
    // The cross-check behind mysql_common's MEDIUMINT quirk: the bytes we
    // write for -8388608 and -1 are what MariaDB reads as those numbers.
    let specs = vec![
        ColumnSpec { name: "id".into(), column_type: ColumnType::Long, nullable: false, unsigned: false, collation: 0 },
        ColumnSpec { name: "m".into(), column_type: ColumnType::Int24, nullable: false, unsigned: false, collation: 0 },
    ];
    let rows = vec![vec![Value::Int(1), Value::Int(-8_388_608)], vec![Value::Int(2), Value::Int(-1)]];
    let map = TableMap::new(9, "test", "m", &specs, &[0]).unwrap();
    let mut file = BinlogBuilder::new(true, &GtidSet::new());
    let events = [common::begin(), Event::TableMap(map.clone()), RowsEvent::write(9, &map, &rows).unwrap().into_event(), common::xid(1)];
    file.append_transaction(1, &events);
    let output = String::from_utf8_lossy(&mariadb_binlog_verbose(&file.bytes)).into_owned();
    assert!(output.contains("###   @2=-8388608 (8388608)"), "{output}");
    assert!(output.contains("###   @2=-1 (16777215)"), "{output}");
}

#[test]
fn mariadb_binlog_reads_our_optional_metadata() {
    // Signedness, charsets (DEFAULT_CHARSET with the binary exceptions),
    // column names and the primary key, as MariaDB's reader rebuilds them.
    let specs = common::oracle_table();
    let map = TableMap::new(108, "test", "all_types", &specs, &[0]).unwrap();
    let mut file = BinlogBuilder::new(true, &GtidSet::new());
    let events = [common::begin(), Event::TableMap(map), common::xid(1)];
    file.append_transaction(1, &events);
    let output = String::from_utf8_lossy(&mariadb_binlog(&file.bytes, "--print-table-metadata")).into_owned();
    for expected in [
        "# Columns(`id` BIGINT NOT NULL,",
        "`tiny_s` TINYINT,",
        "`big_u` BIGINT UNSIGNED,",
        "`dec_b` DECIMAL(65,30),",
        "`ch_long` CHAR(255) CHARSET utf8mb4 COLLATE utf8mb4_general_ci,",
        "`vc` VARCHAR(250) CHARSET utf8mb4 COLLATE utf8mb4_general_ci,",
        "`vb` VARBINARY(20),",
        "`lb` LONGBLOB,",
        "`dtm6` DATETIME(6),",
        "`ts6` TIMESTAMP(6),",
        "`tm3` TIME(3),",
        "`yr` YEAR)",
        "# Primary Key(id)",
    ] {
        assert!(output.contains(expected), "missing {expected:?} in:\n{output}");
    }
}

proptest! {
    // Each case runs the tool once: few cases, wide tables.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn mariadb_binlog_agrees_on_random_tables(
        (specs, rows) in common::specs(common::typed_column_type(), 16).prop_flat_map(|mut specs| {
            specs[0].nullable = false;
            let rows = prop::collection::vec(common::row(&specs), 1..4);
            (Just(specs), rows)
        })
    ) {
        check_against_mariadb_binlog(&specs, &rows);
    }
}
