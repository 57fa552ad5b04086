//! MySQL 8.4's remaining scalar types end to end: BOOL, integer ZEROFILL
//! with its display width, FLOAT(M,D), DOUBLE(M,D), FLOAT(p), BIT(1..64),
//! ENUM, SET, VARBINARY, BINARY (0x00-padded) and `CHARACTER SET binary`.
//!
//! One table holds every type. Rows (NULL, minimum, maximum, zero, edges
//! and seeded random values) go in through the text protocol and through
//! binary-protocol parameters, are updated and deleted; then
//! - the text and the binary protocol return what the model says, with
//!   MySQL's column definitions (ZEROFILL, ENUM, SET flags, lengths,
//!   decimals);
//! - mysql_common decodes every row image of the binlog to the model's;
//! - `mariadb-binlog --verbose` reads the file (exit 0);
//! - python-mysql-replication returns the model's values for every column
//!   (ENUM and SET by name from the Table_map's member metadata);
//! - SHOW CREATE TABLE prints MySQL's types, also after a restart;
//! - bad values get MySQL's strict-mode errors and change nothing.

mod support;

use std::process::Command;

use mysql_common::binlog::value::BinlogValue;
use mysql_common::constants::{ColumnFlags, ColumnType};
use serde_json::Value as Json;
use support::binlog_rows::logged_rows_of;
use support::{python_script, ServerProcess};
use testkit::raw_client::{MValue, RawClient, Response};
use testkit::SeededRandom;

const CREATE: &str = "CREATE TABLE ts.scalar (
    id INT NOT NULL PRIMARY KEY,
    b BOOLEAN,
    z INT(10) UNSIGNED ZEROFILL,
    zs SMALLINT ZEROFILL,
    f FLOAT(7,2),
    d DOUBLE(8,3),
    fp FLOAT(30),
    bt1 BIT(1),
    bt5 BIT(5),
    bt64 BIT(64),
    e ENUM('small','medium','large'),
    s SET('a','b','c','d'),
    vb VARBINARY(8),
    bn BINARY(4),
    cb VARCHAR(6) CHARACTER SET binary
)";

const SHOW_CREATE: &str = "CREATE TABLE `scalar` (
  `id` int NOT NULL,
  `b` tinyint(1) DEFAULT NULL,
  `z` int(10) unsigned zerofill DEFAULT NULL,
  `zs` smallint(5) unsigned zerofill DEFAULT NULL,
  `f` float(7,2) DEFAULT NULL,
  `d` double(8,3) DEFAULT NULL,
  `fp` double DEFAULT NULL,
  `bt1` bit(1) DEFAULT NULL,
  `bt5` bit(5) DEFAULT NULL,
  `bt64` bit(64) DEFAULT NULL,
  `e` enum('small','medium','large') DEFAULT NULL,
  `s` set('a','b','c','d') DEFAULT NULL,
  `vb` varbinary(8) DEFAULT NULL,
  `bn` binary(4) DEFAULT NULL,
  `cb` varbinary(6) DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci";

const NAMES: [&str; 15] = ["id", "b", "z", "zs", "f", "d", "fp", "bt1", "bt5", "bt64", "e", "s", "vb", "bn", "cb"];
const ENUM_MEMBERS: [&str; 3] = ["small", "medium", "large"];
const SET_MEMBERS: [&str; 4] = ["a", "b", "c", "d"];

/// One stored value as the model knows it.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    /// An unsigned integer printed with zeros to `width`.
    Zerofill(u64, usize),
    /// FLOAT(M,D): the stored single and its decimals.
    Float(f32, usize),
    /// DOUBLE(M,D) (`Some(D)`) or a plain DOUBLE (`None`).
    Double(f64, Option<usize>),
    Bit(u64, u8),
    /// ENUM index (1-based).
    Enum(u64),
    /// SET bit mask.
    Set(u64),
    Bytes(Vec<u8>),
}

type Row = Vec<Cell>;

fn set_text(mask: u64) -> String {
    SET_MEMBERS.iter().enumerate().filter(|(bit, _)| mask >> bit & 1 == 1).map(|(_, m)| *m).collect::<Vec<_>>().join(",")
}

fn bit_bytes(value: u64, bits: u8) -> Vec<u8> {
    value.to_be_bytes()[8 - usize::from(bits).div_ceil(8)..].to_vec()
}

impl Cell {
    /// What the text protocol sends (mysqld's text form).
    fn text(&self) -> Option<Vec<u8>> {
        Some(match self {
            Cell::Null => return None,
            Cell::Int(v) => v.to_string().into_bytes(),
            Cell::Zerofill(v, width) => format!("{v:0width$}").into_bytes(),
            Cell::Float(v, decimals) => format!("{v:.decimals$}").into_bytes(),
            Cell::Double(v, Some(decimals)) => format!("{v:.decimals$}").into_bytes(),
            Cell::Double(v, None) => v.to_string().into_bytes(),
            Cell::Bit(v, bits) => bit_bytes(*v, *bits),
            Cell::Enum(index) => ENUM_MEMBERS[*index as usize - 1].as_bytes().to_vec(),
            Cell::Set(mask) => set_text(*mask).into_bytes(),
            Cell::Bytes(bytes) => bytes.clone(),
        })
    }

    /// A canonical form for the binary protocol's and mysql_common's
    /// values: numbers in decimal, bytes as they are.
    fn binary(&self) -> Option<Vec<u8>> {
        match self {
            Cell::Zerofill(v, _) => Some(v.to_string().into_bytes()),
            Cell::Float(v, _) => Some(v.to_string().into_bytes()),
            Cell::Double(v, _) => Some(v.to_string().into_bytes()),
            _ => self.text(),
        }
    }

    /// mysql_common's binlog value, canonical as [`Cell::binary`].
    fn binlog(&self) -> Option<Vec<u8>> {
        match self {
            Cell::Enum(index) => Some(index.to_string().into_bytes()),
            Cell::Set(mask) => Some(vec![*mask as u8]),
            _ => self.binary(),
        }
    }

    /// What python-mysql-replication returns, as read_rows.py prints it.
    fn python(&self) -> Json {
        match self {
            Cell::Null => Json::Null,
            Cell::Int(v) => Json::from(*v),
            Cell::Zerofill(v, _) => Json::from(*v),
            Cell::Float(v, _) => Json::from(f64::from(*v)),
            Cell::Double(v, _) => Json::from(*v),
            Cell::Bit(v, bits) => Json::from(format!("{v:0width$b}", width = usize::from(*bits))),
            Cell::Enum(index) => Json::from(ENUM_MEMBERS[*index as usize - 1]),
            // The library returns None for an empty set.
            Cell::Set(0) => Json::Null,
            Cell::Set(mask) => Json::from(set_text(*mask).split(',').map(Json::from).collect::<Vec<_>>()),
            Cell::Bytes(bytes) => Json::from(String::from_utf8_lossy(bytes).into_owned()),
        }
    }
}

fn canonical(value: &MValue) -> Option<Vec<u8>> {
    match value {
        MValue::NULL => None,
        MValue::Int(v) => Some(v.to_string().into_bytes()),
        MValue::UInt(v) => Some(v.to_string().into_bytes()),
        MValue::Float(v) => Some(v.to_string().into_bytes()),
        MValue::Double(v) => Some(v.to_string().into_bytes()),
        MValue::Bytes(bytes) => Some(bytes.clone()),
        other => panic!("unexpected value {other:?}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A row as SQL literals (text protocol) and its model.
struct Values {
    id: i64,
    b: Option<i64>,
    z: Option<u64>,
    zs: Option<u64>,
    /// FLOAT(7,2) in hundredths.
    f: Option<i64>,
    /// DOUBLE(8,3) in thousandths.
    d: Option<i64>,
    fp: Option<f64>,
    bt1: Option<u64>,
    bt5: Option<u64>,
    bt64: Option<u64>,
    e: Option<u64>,
    s: Option<u64>,
    vb: Option<Vec<u8>>,
    bn: Option<Vec<u8>>,
    cb: Option<Vec<u8>>,
}

fn fixed(units: i64, decimals: u32) -> String {
    let scale = 10i64.pow(decimals);
    let sign = if units < 0 { "-" } else { "" };
    format!("{sign}{}.{:0width$}", units.abs() / scale, units.abs() % scale, width = decimals as usize)
}

impl Values {
    fn null(id: i64) -> Values {
        Values {
            id,
            b: None,
            z: None,
            zs: None,
            f: None,
            d: None,
            fp: None,
            bt1: None,
            bt5: None,
            bt64: None,
            e: None,
            s: None,
            vb: None,
            bn: None,
            cb: None,
        }
    }

    /// SQL literals; ENUM and SET by name on even ids, by number on odd.
    fn literals(&self) -> Vec<String> {
        fn or_null<T>(value: &Option<T>, f: impl Fn(&T) -> String) -> String {
            value.as_ref().map_or("NULL".to_string(), f)
        }
        let by_name = self.id % 2 == 0;
        vec![
            self.id.to_string(),
            or_null(&self.b, |v| match v {
                1 => "TRUE".into(),
                0 => "FALSE".into(),
                v => v.to_string(),
            }),
            or_null(&self.z, u64::to_string),
            or_null(&self.zs, u64::to_string),
            or_null(&self.f, |v| fixed(*v, 2)),
            or_null(&self.d, |v| fixed(*v, 3)),
            or_null(&self.fp, |v| format!("{v:e}")),
            or_null(&self.bt1, |v| format!("b'{v:b}'")),
            or_null(&self.bt5, |v| if by_name { format!("0b{v:b}") } else { v.to_string() }),
            or_null(&self.bt64, |v| format!("b'{v:b}'")),
            or_null(&self.e, |v| if by_name { format!("'{}'", ENUM_MEMBERS[*v as usize - 1].to_uppercase()) } else { v.to_string() }),
            or_null(&self.s, |v| if by_name { format!("'{}'", set_text(*v)) } else { v.to_string() }),
            or_null(&self.vb, |v| format!("x'{}'", hex(v))),
            or_null(&self.bn, |v| format!("x'{}'", hex(v))),
            or_null(&self.cb, |v| format!("x'{}'", hex(v))),
        ]
    }

    /// The same values as binary-protocol parameters.
    fn params(&self) -> Vec<MValue> {
        fn or_null<T>(value: &Option<T>, f: impl Fn(&T) -> MValue) -> MValue {
            value.as_ref().map_or(MValue::NULL, f)
        }
        vec![
            MValue::Int(self.id),
            or_null(&self.b, |v| MValue::Int(*v)),
            or_null(&self.z, |v| MValue::UInt(*v)),
            or_null(&self.zs, |v| MValue::Int(*v as i64)),
            or_null(&self.f, |v| MValue::Bytes(fixed(*v, 2).into_bytes())),
            or_null(&self.d, |v| MValue::Double(fixed(*v, 3).parse().unwrap())),
            or_null(&self.fp, |v| MValue::Double(*v)),
            or_null(&self.bt1, |v| MValue::Int(*v as i64)),
            or_null(&self.bt5, |v| MValue::UInt(*v)),
            or_null(&self.bt64, |v| MValue::Bytes(v.to_be_bytes().to_vec())),
            or_null(&self.e, |v| MValue::Bytes(ENUM_MEMBERS[*v as usize - 1].as_bytes().to_vec())),
            or_null(&self.s, |v| MValue::UInt(*v)),
            or_null(&self.vb, |v| MValue::Bytes(v.clone())),
            or_null(&self.bn, |v| MValue::Bytes(v.clone())),
            or_null(&self.cb, |v| MValue::Bytes(v.clone())),
        ]
    }

    fn model(&self) -> Row {
        fn or_null<T>(value: &Option<T>, f: impl Fn(&T) -> Cell) -> Cell {
            value.as_ref().map_or(Cell::Null, f)
        }
        vec![
            Cell::Int(self.id),
            or_null(&self.b, |v| Cell::Int(*v)),
            or_null(&self.z, |v| Cell::Zerofill(*v, 10)),
            or_null(&self.zs, |v| Cell::Zerofill(*v, 5)),
            or_null(&self.f, |v| Cell::Float((*v as f64 / 100.0) as f32, 2)),
            or_null(&self.d, |v| Cell::Double(*v as f64 / 1000.0, Some(3))),
            or_null(&self.fp, |v| Cell::Double(*v, None)),
            or_null(&self.bt1, |v| Cell::Bit(*v, 1)),
            or_null(&self.bt5, |v| Cell::Bit(*v, 5)),
            or_null(&self.bt64, |v| Cell::Bit(*v, 64)),
            or_null(&self.e, |v| Cell::Enum(*v)),
            or_null(&self.s, |v| Cell::Set(*v)),
            or_null(&self.vb, |v| Cell::Bytes(v.clone())),
            or_null(&self.bn, |v| {
                let mut padded = v.clone();
                padded.resize(4, 0);
                Cell::Bytes(padded)
            }),
            or_null(&self.cb, |v| Cell::Bytes(v.clone())),
        ]
    }
}

/// Random values for every column of the matrix table.
trait RandomValues {
    fn values(&mut self, id: i64) -> Values;
}

impl RandomValues for SeededRandom {
    fn values(&mut self, id: i64) -> Values {
        Values {
            id,
            b: Some(self.signed(128).clamp(-128, 127)),
            z: Some(self.below(1 << 32)),
            zs: Some(self.below(1 << 16)),
            f: Some(self.signed(9_999_999)),
            d: Some(self.signed(99_999_999)),
            fp: Some(self.finite_double()),
            bt1: Some(self.below(2)),
            bt5: Some(self.below(32)),
            bt64: Some(self.next_u64()),
            e: Some(1 + self.below(3)),
            s: Some(self.below(16)),
            vb: Some(self.bytes(8)),
            bn: Some(self.bytes(4)),
            cb: Some(self.bytes(6)),
        }
    }
}

/// NULLs, minimums, maximums, zeros and edges.
fn edge_rows() -> Vec<Values> {
    let minimum = Values {
        b: Some(-128),
        z: Some(0),
        zs: Some(0),
        f: Some(-9_999_999),
        d: Some(-99_999_999),
        fp: Some(-f64::MAX),
        bt1: Some(0),
        bt5: Some(0),
        bt64: Some(0),
        e: Some(1),
        s: Some(0),
        vb: Some(Vec::new()),
        bn: Some(Vec::new()),
        cb: Some(Vec::new()),
        ..Values::null(2)
    };
    let maximum = Values {
        b: Some(127),
        z: Some(u32::MAX.into()),
        zs: Some(u16::MAX.into()),
        f: Some(9_999_999),
        d: Some(99_999_999),
        fp: Some(f64::MAX),
        bt1: Some(1),
        bt5: Some(31),
        bt64: Some(u64::MAX),
        e: Some(3),
        s: Some(15),
        vb: Some(vec![0xff; 8]),
        bn: Some(vec![0xff; 4]),
        cb: Some(b"binary".to_vec()),
        ..Values::null(3)
    };
    let zero = Values {
        b: Some(0),
        z: Some(0),
        zs: Some(0),
        f: Some(0),
        d: Some(0),
        fp: Some(0.0),
        bt1: Some(0),
        bt5: Some(0),
        bt64: Some(0),
        e: Some(2),
        s: Some(0),
        vb: Some(vec![0]),
        bn: Some(vec![0]),
        cb: Some(vec![0, 0]),
        ..Values::null(4)
    };
    let edges = Values {
        b: Some(1),
        z: Some(1),
        zs: Some(1),
        f: Some(1),
        d: Some(-1),
        fp: Some(f64::MIN_POSITIVE),
        bt1: Some(1),
        bt5: Some(0b10101),
        bt64: Some(1 << 63),
        e: Some(3),
        s: Some(0b1001),
        vb: Some(b"a\0b".to_vec()),
        bn: Some(b"ab".to_vec()),
        cb: Some("é".as_bytes().to_vec()),
        ..Values::null(5)
    };
    vec![Values::null(1), minimum, maximum, zero, edges]
}

/// What a row image in the binlog must be: (before, after).
type Image = (Option<Row>, Option<Row>);
/// A row as canonical values (see [`Cell::binary`]), NULL as `None`.
type CanonicalRow = Vec<Option<Vec<u8>>>;

fn select_text(client: &mut RawClient) -> (Vec<mysql_common::packets::Column>, Vec<CanonicalRow>) {
    match client.query("SELECT * FROM ts.scalar ORDER BY id").unwrap() {
        Response::Rows { columns, rows, .. } => (columns, rows),
        other => panic!("not rows: {other:?}"),
    }
}

fn select_binary(client: &mut RawClient) -> Vec<Vec<MValue>> {
    let (id, _, _) = client.prepare("SELECT * FROM ts.scalar WHERE id > ? ORDER BY id").unwrap();
    match client.execute(id, &[MValue::Int(0)]).unwrap() {
        Response::BinaryRows { rows, .. } => rows,
        other => panic!("not binary rows: {other:?}"),
    }
}

fn check_reads(client: &mut RawClient, table: &[Row]) {
    let (columns, rows) = select_text(client);
    assert_eq!(rows.len(), table.len());
    for (row, model) in rows.iter().zip(table) {
        for ((value, cell), name) in row.iter().zip(model).zip(NAMES) {
            match cell {
                // A plain DOUBLE's text is the existing float printer's.
                Cell::Double(v, None) => {
                    let text = String::from_utf8(value.clone().unwrap()).unwrap();
                    assert_eq!(text.parse::<f64>().unwrap(), *v, "text {name} of row {:?}", model[0]);
                }
                _ => assert_eq!(value, &cell.text(), "text {name} of row {:?}", model[0]),
            }
        }
    }
    check_column_definitions(&columns);
    let rows = select_binary(client);
    assert_eq!(rows.len(), table.len());
    for (row, model) in rows.iter().zip(table) {
        for ((value, cell), name) in row.iter().zip(model).zip(NAMES) {
            assert_eq!(canonical(value), cell.binary(), "binary {name} of row {:?}", model[0]);
        }
    }
}

fn check_column_definitions(columns: &[mysql_common::packets::Column]) {
    let find = |name: &str| columns.iter().find(|c| c.name_str() == name).unwrap();
    let boolean = find("b");
    assert_eq!((boolean.column_type(), boolean.column_length()), (ColumnType::MYSQL_TYPE_TINY, 1));
    let zerofill = find("z");
    assert_eq!(zerofill.column_length(), 10);
    assert!(zerofill.flags().contains(ColumnFlags::ZEROFILL_FLAG | ColumnFlags::UNSIGNED_FLAG));
    let float = find("f");
    assert_eq!((float.column_type(), float.column_length(), float.decimals()), (ColumnType::MYSQL_TYPE_FLOAT, 7, 2));
    let double = find("d");
    assert_eq!((double.column_type(), double.column_length(), double.decimals()), (ColumnType::MYSQL_TYPE_DOUBLE, 8, 3));
    assert_eq!(find("fp").column_type(), ColumnType::MYSQL_TYPE_DOUBLE);
    let bit = find("bt5");
    assert_eq!((bit.column_type(), bit.column_length()), (ColumnType::MYSQL_TYPE_BIT, 5));
    assert!(bit.flags().contains(ColumnFlags::UNSIGNED_FLAG));
    let enumeration = find("e");
    assert_eq!((enumeration.column_type(), enumeration.column_length()), (ColumnType::MYSQL_TYPE_STRING, 24));
    assert!(enumeration.flags().contains(ColumnFlags::ENUM_FLAG));
    let set = find("s");
    assert_eq!((set.column_type(), set.column_length()), (ColumnType::MYSQL_TYPE_STRING, 28));
    assert!(set.flags().contains(ColumnFlags::SET_FLAG));
    let varbinary = find("vb");
    assert_eq!((varbinary.column_type(), varbinary.column_length(), varbinary.character_set()), (ColumnType::MYSQL_TYPE_VAR_STRING, 8, 63));
    let binary = find("bn");
    assert_eq!((binary.column_type(), binary.column_length()), (ColumnType::MYSQL_TYPE_STRING, 4));
}

/// Every row image mysql_common decodes from the binlog file, canonical.
fn binlog_images(file: &[u8]) -> Vec<(Option<CanonicalRow>, Option<CanonicalRow>)> {
    let canonical_image = |image: &Option<Vec<BinlogValue>>| {
        image.as_ref().map(|values| {
            values
                .iter()
                .map(|value| match value {
                    BinlogValue::Value(value) => canonical(value),
                    other => panic!("unexpected {other:?}"),
                })
                .collect::<Vec<_>>()
        })
    };
    logged_rows_of(file).iter().map(|row| (canonical_image(&row.before), canonical_image(&row.after))).collect()
}

fn python_images(port: u16) -> Vec<(Option<Json>, Option<Json>)> {
    let output = Command::new("python3")
        .arg(python_script("read_rows.py"))
        .args([&port.to_string(), "position", "binlog.000001", "4"])
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_rows.py: {}", String::from_utf8_lossy(&output.stderr));
    let mut images = Vec::new();
    let stdout = String::from_utf8(output.stdout).unwrap();
    for line in stdout.lines() {
        let line: Json = serde_json::from_str(line).unwrap();
        assert!(line.get("error").is_none(), "{line}");
        if line["table"] != "scalar" {
            continue;
        }
        for row in line["rows"].as_array().unwrap() {
            images.push(match line["event"].as_str().unwrap() {
                "write" => (None, Some(row.clone())),
                "delete" => (Some(row.clone()), None),
                _ => (Some(row["before"].clone()), Some(row["after"].clone())),
            });
        }
    }
    images
}

/// JSON equality, with doubles equal within an ulp: serde_json's default
/// float parser is not correctly rounded in the last digit.
fn same_json(left: &Json, right: &Json) -> bool {
    match (left, right) {
        (Json::Object(left), Json::Object(right)) => {
            left.len() == right.len() && left.iter().all(|(key, value)| right.get(key).is_some_and(|other| same_json(value, other)))
        }
        (Json::Number(a), Json::Number(b)) if a.is_f64() || b.is_f64() => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            a == b || (a - b).abs() <= a.abs().max(b.abs()) * 2.0 * f64::EPSILON
        }
        _ => left == right,
    }
}

fn python_row(row: &Row) -> Json {
    Json::Object(NAMES.iter().zip(row).map(|(name, cell)| (name.to_string(), cell.python())).collect())
}

fn check_binlog(server: &ServerProcess, images: &[Image]) {
    let file = std::fs::read(&server.binlog_files()[0]).unwrap();
    let decoded = binlog_images(&file);
    assert_eq!(decoded.len(), images.len(), "row images in the binlog");
    let canonical_row = |row: &Option<Row>| row.as_ref().map(|row| row.iter().map(Cell::binlog).collect::<Vec<_>>());
    for (index, ((before, after), expected)) in decoded.iter().zip(images).enumerate() {
        assert_eq!(before, &canonical_row(&expected.0), "mysql_common before image #{index}");
        assert_eq!(after, &canonical_row(&expected.1), "mysql_common after image #{index}");
    }

    let output = Command::new("mariadb-binlog").arg("--verbose").arg(&server.binlog_files()[0]).output().expect("run mariadb-binlog");
    assert!(output.status.success(), "mariadb-binlog --verbose: {}", String::from_utf8_lossy(&output.stderr));

    let python = python_images(server.port);
    assert_eq!(python.len(), images.len(), "row images python-mysql-replication read");
    let python_image = |row: &Option<Row>| row.as_ref().map(python_row).unwrap_or(Json::Null);
    for (index, ((before, after), expected)) in python.iter().zip(images).enumerate() {
        let before = before.clone().unwrap_or(Json::Null);
        let after = after.clone().unwrap_or(Json::Null);
        assert!(same_json(&before, &python_image(&expected.0)), "python before image #{index}: {before} vs {}", python_image(&expected.0));
        assert!(same_json(&after, &python_image(&expected.1)), "python after image #{index}: {after} vs {}", python_image(&expected.1));
    }
}

fn insert_text(client: &mut RawClient, values: &Values) {
    let sql = format!("INSERT INTO ts.scalar VALUES ({})", values.literals().join(", "));
    client.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
}

fn insert_binary(client: &mut RawClient, values: &Values) {
    let (id, params, _) = client.prepare(&format!("INSERT INTO ts.scalar VALUES ({})", vec!["?"; NAMES.len()].join(", "))).unwrap();
    assert_eq!(usize::from(params), NAMES.len());
    client.execute(id, &values.params()).unwrap_or_else(|e| panic!("insert {}: {e:?}", values.id));
}

#[test]
fn every_scalar_type_reads_back_and_decodes_as_mysql_writes_it() {
    let mut server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("CREATE DATABASE ts").unwrap();
    client.query(CREATE).unwrap();
    let show_create = |server: &ServerProcess| server.query(None, "SHOW CREATE TABLE ts.scalar").replace("\\n", "\n");
    assert_eq!(show_create(&server), format!("scalar\t{SHOW_CREATE}\n"));

    let mut random = SeededRandom::new(0x5eed_0f5c_a1a5);
    let mut table: Vec<Row> = Vec::new();
    let mut images: Vec<Image> = Vec::new();
    let mut rows: Vec<Values> = edge_rows();
    rows.extend((6..=13).map(|id| random.values(id)));
    for (index, values) in rows.iter().enumerate() {
        // Half the rows through binary-protocol parameters.
        if index % 2 == 0 {
            insert_text(&mut client, values);
        } else {
            insert_binary(&mut client, values);
        }
        table.push(values.model());
        images.push((None, Some(values.model())));
    }
    check_reads(&mut client, &table);

    // UPDATE every column of some rows to another row's values.
    for (id, source) in [(2i64, 3usize), (6, 11), (9, 0), (13, 4)] {
        let literals = rows[source].literals();
        let assignments: Vec<String> = NAMES.iter().zip(&literals).skip(1).map(|(name, literal)| format!("{name} = {literal}")).collect();
        client.query(&format!("UPDATE ts.scalar SET {} WHERE id = {id}", assignments.join(", "))).unwrap();
        let mut new_row = rows[source].model();
        new_row[0] = Cell::Int(id);
        let position = table.iter().position(|row| row[0] == Cell::Int(id)).unwrap();
        images.push((Some(table[position].clone()), Some(new_row.clone())));
        table[position] = new_row;
    }
    // UPDATE by ENUM and SET names in WHERE.
    client.query("UPDATE ts.scalar SET e = 'small', s = 'd,a', bt5 = b'11' WHERE id = 5").unwrap();
    let position = table.iter().position(|row| row[0] == Cell::Int(5)).unwrap();
    let mut new_row = table[position].clone();
    new_row[8] = Cell::Bit(3, 5);
    new_row[10] = Cell::Enum(1);
    new_row[11] = Cell::Set(0b1001);
    images.push((Some(table[position].clone()), Some(new_row.clone())));
    table[position] = new_row;

    for id in [4i64, 12] {
        client.query(&format!("DELETE FROM ts.scalar WHERE id = {id}")).unwrap();
        let position = table.iter().position(|row| row[0] == Cell::Int(id)).unwrap();
        images.push((Some(table.remove(position)), None));
    }
    check_reads(&mut client, &table);

    // ENUM orders by index, SET by mask; comparisons by name.
    let order: Vec<String> = client
        .query_rows("SELECT e FROM ts.scalar WHERE e IS NOT NULL ORDER BY e, id")
        .unwrap()
        .into_iter()
        .map(|r| r[0].clone().unwrap())
        .collect();
    let mut expected: Vec<(u64, i64)> = table
        .iter()
        .filter_map(|row| match (&row[10], &row[0]) {
            (Cell::Enum(i), Cell::Int(id)) => Some((*i, *id)),
            _ => None,
        })
        .collect();
    expected.sort();
    assert_eq!(order, expected.iter().map(|(i, _)| ENUM_MEMBERS[*i as usize - 1].to_string()).collect::<Vec<_>>());
    let large = client.query_rows("SELECT id FROM ts.scalar WHERE e = 'large' ORDER BY id").unwrap().len();
    assert_eq!(large, table.iter().filter(|row| row[10] == Cell::Enum(3)).count());
    // In a numeric context an ENUM is its index and a SET its mask.
    let by_index = client.query_rows("SELECT id FROM ts.scalar WHERE e = 3 ORDER BY id").unwrap().len();
    assert_eq!(by_index, large);
    let numbers = client.query_rows("SELECT e + 0, s + 0 FROM ts.scalar WHERE id = 5").unwrap();
    let row = &table[table.iter().position(|row| row[0] == Cell::Int(5)).unwrap()];
    let (Cell::Enum(index), Cell::Set(mask)) = (&row[10], &row[11]) else { panic!("row 5: {row:?}") };
    assert_eq!(numbers, [vec![Some(index.to_string()), Some(mask.to_string())]]);

    check_binlog(&server, &images);

    server.restart();
    assert_eq!(show_create(&server), format!("scalar\t{SHOW_CREATE}\n"), "the definition survives a restart");
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    check_reads(&mut client, &table);
}

#[test]
fn defaults_print_as_mysql_prints_them() {
    let server = ServerProcess::start();
    server.query(
        None,
        "CREATE DATABASE ts; CREATE TABLE ts.d (id INT NOT NULL PRIMARY KEY, b BOOL NOT NULL DEFAULT TRUE, \
         z INT ZEROFILL DEFAULT 42, f FLOAT(6,2) DEFAULT 1.5, bt BIT(5) DEFAULT b'101', \
         e ENUM('x','y') NOT NULL DEFAULT 'y', s SET('p','q') DEFAULT 'q,p'); INSERT INTO ts.d (id) VALUES (1)",
    );
    let create = server.query(None, "SHOW CREATE TABLE ts.d").replace("\\n", "\n");
    for line in [
        "`b` tinyint(1) NOT NULL DEFAULT '1'",
        "`z` int(10) unsigned zerofill DEFAULT '0000000042'",
        "`f` float(6,2) DEFAULT '1.50'",
        "`bt` bit(5) DEFAULT b'101'",
        "`e` enum('x','y') NOT NULL DEFAULT 'y'",
        "`s` set('p','q') DEFAULT 'p,q'",
    ] {
        assert!(create.contains(line), "{line} in {create}");
    }
    let columns = server.query(None, "SHOW COLUMNS FROM ts.d");
    assert!(columns.contains("bt\tbit(5)\tYES\t\tb'101'\t"), "{columns}");
    assert!(columns.contains("e\tenum('x','y')\tNO\t\ty\t"), "{columns}");
    assert_eq!(server.query(None, "SELECT b, z, f, e, s, bt + 0 FROM ts.d"), "1\t0000000042\t1.50\ty\tp,q\t5\n");
}

#[test]
fn bad_values_get_mysqls_strict_errors_and_change_nothing() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("CREATE DATABASE ts").unwrap();
    client.query(CREATE).unwrap();
    insert_text(&mut client, &edge_rows()[4]);
    let before = select_text(&mut client).1;
    for (assignment, code, message) in [
        ("z = -1", 1264, "Out of range value for column 'z' at row 1"),
        ("z = 4294967296", 1264, "Out of range value for column 'z' at row 1"),
        ("zs = 65536", 1264, "Out of range value for column 'zs' at row 1"),
        ("b = 128", 1264, "Out of range value for column 'b' at row 1"),
        ("f = 100000", 1264, "Out of range value for column 'f' at row 1"),
        ("f = 99999.995", 1264, "Out of range value for column 'f' at row 1"),
        ("d = -100000", 1264, "Out of range value for column 'd' at row 1"),
        ("fp = 'abc'", 1366, "Incorrect double value: 'abc' for column 'fp' at row 1"),
        ("bt5 = 32", 1406, "Data too long for column 'bt5' at row 1"),
        ("bt1 = b'10'", 1406, "Data too long for column 'bt1' at row 1"),
        ("bt5 = 'ab'", 1406, "Data too long for column 'bt5' at row 1"),
        ("e = 'huge'", 1265, "Data truncated for column 'e' at row 1"),
        ("e = 0", 1265, "Data truncated for column 'e' at row 1"),
        ("e = 4", 1265, "Data truncated for column 'e' at row 1"),
        ("s = 'a,x'", 1265, "Data truncated for column 's' at row 1"),
        ("s = 16", 1265, "Data truncated for column 's' at row 1"),
        ("vb = x'000102030405060708'", 1406, "Data too long for column 'vb' at row 1"),
        ("bn = 'abcde'", 1406, "Data too long for column 'bn' at row 1"),
        ("cb = 'abcdefg'", 1406, "Data too long for column 'cb' at row 1"),
    ] {
        let sql = format!("UPDATE ts.scalar SET {assignment} WHERE id = 5");
        let error = client.query(&sql).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (code, message), "{sql}");
        let (column, value) = assignment.split_once(" = ").unwrap();
        let sql = format!("INSERT INTO ts.scalar (id, {column}) VALUES (99, {value})");
        let error = client.query(&sql).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (code, message), "{sql}");
    }
    assert_eq!(select_text(&mut client).1, before, "nothing changed");
    for (ddl, code) in [
        ("CREATE TABLE ts.bad (b BIT(65))", 1439),
        ("CREATE TABLE ts.bad (b BIT(0))", 1439),
        ("CREATE TABLE ts.bad (f FLOAT(5,6))", 1427),
        ("CREATE TABLE ts.bad (f FLOAT(54))", 1063),
        ("CREATE TABLE ts.bad (d DOUBLE(256,2))", 1439),
        ("CREATE TABLE ts.bad (e ENUM('a','A'))", 1291),
        ("CREATE TABLE ts.bad (s SET('a','b','a'))", 1291),
        ("CREATE TABLE ts.bad (e ENUM('x') DEFAULT 'y')", 1067),
        ("CREATE TABLE ts.bad (b BIT(2) DEFAULT 4)", 1067),
    ] {
        assert_eq!(client.query(ddl).unwrap_err().code, code, "{ddl}");
    }
    // The connection is still usable.
    assert_eq!(client.value("SELECT COUNT(*) FROM ts.scalar"), "1");
}

#[test]
fn outside_strict_mode_bad_values_are_clipped_with_warnings() {
    let server = ServerProcess::start();
    let mut client = RawClient::login_to(server.port, "root", "", None).unwrap();
    client.query("CREATE DATABASE ts").unwrap();
    client.query(CREATE).unwrap();
    client.query("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'").unwrap();
    let inserted = client
        .query(
            "INSERT INTO ts.scalar (id, b, z, zs, f, d, bt5, e, s, vb, bn, cb) VALUES \
             (1, 200, -1, 70000, 100000, -1e9, 32, 'huge', 'a,x', x'000102030405060708', 'abcde', 'abcdefg')",
        )
        .unwrap();
    let Response::Ok { warnings, .. } = inserted else { panic!("not OK: {inserted:?}") };
    assert_eq!(warnings, 11);
    let shown = client.query_rows("SHOW WARNINGS").unwrap();
    let codes: Vec<(String, String)> = shown.iter().map(|row| (row[1].clone().unwrap(), row[2].clone().unwrap())).collect();
    assert_eq!(
        codes,
        [
            ("1264", "Out of range value for column 'b' at row 1"),
            ("1264", "Out of range value for column 'z' at row 1"),
            ("1264", "Out of range value for column 'zs' at row 1"),
            ("1264", "Out of range value for column 'f' at row 1"),
            ("1264", "Out of range value for column 'd' at row 1"),
            ("1406", "Data too long for column 'bt5' at row 1"),
            ("1265", "Data truncated for column 'e' at row 1"),
            ("1265", "Data truncated for column 's' at row 1"),
            ("1406", "Data too long for column 'vb' at row 1"),
            ("1406", "Data too long for column 'bn' at row 1"),
            ("1406", "Data too long for column 'cb' at row 1"),
        ]
        .map(|(code, message)| (code.to_string(), message.to_string()))
    );
    let row = client.query_rows("SELECT b, z, zs, f, d, bt5 + 0, e, s, vb, bn, cb FROM ts.scalar WHERE id = 1").unwrap();
    let expected =
        ["127", "0000000000", "65535", "99999.99", "-99999.999", "31", "", "a", "\0\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}", "abcd", "abcdef"];
    assert_eq!(row, [expected.map(|v| Some(v.to_string())).to_vec()]);
    // Strict mode again: the same statement is refused.
    client.query("SET SESSION sql_mode = 'STRICT_TRANS_TABLES'").unwrap();
    assert_eq!(client.query("INSERT INTO ts.scalar (id, e) VALUES (2, 'huge')").unwrap_err().code, 1265);
    assert_eq!(client.value("SELECT COUNT(*) FROM ts.scalar"), "1");
}
