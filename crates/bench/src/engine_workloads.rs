//! The tables `bench engine` writes, and their rows. Every workload runs
//! the same transaction (two point selects, an update by primary key, a
//! delete and re-insert of one key); what differs is the row:
//!
//! | workload | columns | bytes of a row image (about) | the update changes |
//! |---|---|---|---|
//! | `sysbench` | `id INT, k INT, c VARCHAR(120), pad VARCHAR(60)` (sysbench's) | 190 | `k` |
//! | `json` | `id INT, k INT, doc JSON`: an object of 12 members, nested objects and an array of 16 numbers | 700 | `k` and a new `doc` |
//! | `wide` | 20 columns of mixed types (below) | 330 | `k` and 5 others |
//!
//! The wide table: `id INT, k INT, tiny TINYINT UNSIGNED, small SMALLINT,
//! big BIGINT, amount DECIMAL(12,2), ratio DOUBLE, weight FLOAT, day DATE,
//! at DATETIME(6), stamp TIMESTAMP(3), span TIME, made YEAR, code CHAR(10),
//! name VARCHAR(64), token VARBINARY(32), note TEXT, data BLOB, state
//! ENUM('new','open','closed'), flags BIT(8)`.

use binlog_format::column_type::ColumnType;
use binlog_format::value::json::{binary, text};
use binlog_format::Value;
use database::engine::{ColumnDef, IndexSpec, TableSpec};

pub const DATABASE: &str = "sbtest";
pub const TABLE: &str = "sbtest1";
/// utf8mb4_general_ci, binlogd's default collation for text columns.
const TEXT_COLLATION: u16 = 45;
/// Row changes a transaction writes: the update, the delete, the insert.
pub const ROWS_WRITTEN_PER_TRANSACTION: u64 = 3;

/// The kind of row `bench engine` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// sysbench's table.
    Sysbench,
    /// A JSON document per row, replaced by every update.
    Json,
    /// 20 columns of mixed types.
    Wide,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::Sysbench => "sysbench",
            Workload::Json => "json",
            Workload::Wide => "wide",
        }
    }

    /// The table, as the engine takes it.
    pub fn table_spec(self) -> TableSpec {
        let mut columns = vec![ColumnDef::new("id", ColumnType::Long).not_null(), ColumnDef::new("k", ColumnType::Long).not_null()];
        match self {
            Workload::Sysbench => {
                columns.push(text_column("c", ColumnType::VarChar { max_length_bytes: 480 }));
                columns.push(text_column("pad", ColumnType::VarChar { max_length_bytes: 240 }));
            }
            Workload::Json => columns.push(ColumnDef::new("doc", ColumnType::Json)),
            Workload::Wide => columns.extend(wide_columns()),
        }
        TableSpec {
            database: DATABASE.into(),
            name: TABLE.into(),
            columns,
            primary_key: vec!["id".into()],
            indexes: vec![IndexSpec { name: "k_1".into(), columns: vec!["k".into()], unique: false }],
            ..Default::default()
        }
    }

    /// The CREATE TABLE the binlog logs for the table.
    pub fn create_statement(self) -> String {
        let columns = match self {
            Workload::Sysbench => "c VARCHAR(120) NOT NULL DEFAULT '', pad VARCHAR(60) NOT NULL DEFAULT ''",
            Workload::Json => "doc JSON",
            Workload::Wide => {
                "tiny TINYINT UNSIGNED, small SMALLINT, big BIGINT, amount DECIMAL(12,2), ratio DOUBLE, weight FLOAT, \
                 day DATE, at DATETIME(6), stamp TIMESTAMP(3) NULL, span TIME, made YEAR, code CHAR(10), name VARCHAR(64), \
                 token VARBINARY(32), note TEXT, data BLOB, state ENUM('new','open','closed'), flags BIT(8)"
            }
        };
        format!("CREATE TABLE {TABLE} (id INT NOT NULL, k INT NOT NULL DEFAULT '0', {columns}, PRIMARY KEY (id), KEY k_1 (k))")
    }

    /// A new row with primary key `id` and `k`.
    pub fn row(self, rng: &mut FastRng, id: i64, k: i64) -> Vec<Value> {
        let mut row = vec![Value::Int(id), Value::Int(k)];
        match self {
            Workload::Sysbench => {
                row.push(Value::Bytes(digit_groups(rng, 10)));
                row.push(Value::Bytes(digit_groups(rng, 5)));
            }
            Workload::Json => row.push(document(rng, id)),
            Workload::Wide => row.extend(wide_values(rng)),
        }
        row
    }

    /// What the transaction's update does to the row it read.
    pub fn update(self, rng: &mut FastRng, row: &mut [Value]) {
        if let Value::Int(k) = row[1] {
            row[1] = Value::Int(k + 1);
        }
        match self {
            Workload::Sysbench => {}
            Workload::Json => {
                let Value::Int(id) = row[0] else { return };
                row[2] = document(rng, id);
            }
            Workload::Wide => {
                let fresh = wide_values(rng);
                // big, amount, at, name, state.
                for column in [4, 5, 9, 14, 18] {
                    row[column] = fresh[column - 2].clone();
                }
            }
        }
    }
}

fn text_column(name: &str, column_type: ColumnType) -> ColumnDef {
    ColumnDef { collation: TEXT_COLLATION, ..ColumnDef::new(name, column_type).not_null() }
}

fn wide_columns() -> Vec<ColumnDef> {
    let text = |name: &str, column_type| ColumnDef { collation: TEXT_COLLATION, ..ColumnDef::new(name, column_type) };
    let mut state = ColumnDef::new("state", ColumnType::Enum { length_bytes: 1 });
    state.attributes.members = vec![b"new".to_vec(), b"open".to_vec(), b"closed".to_vec()];
    vec![
        ColumnDef::new("tiny", ColumnType::Tiny).unsigned(),
        ColumnDef::new("small", ColumnType::Short),
        ColumnDef::new("big", ColumnType::LongLong),
        ColumnDef::new("amount", ColumnType::NewDecimal { precision: 12, scale: 2 }),
        ColumnDef::new("ratio", ColumnType::Double),
        ColumnDef::new("weight", ColumnType::Float),
        ColumnDef::new("day", ColumnType::Date),
        ColumnDef::new("at", ColumnType::DateTime2 { fsp: 6 }),
        ColumnDef::new("stamp", ColumnType::Timestamp2 { fsp: 3 }),
        ColumnDef::new("span", ColumnType::Time2 { fsp: 0 }),
        ColumnDef::new("made", ColumnType::Year),
        text("code", ColumnType::String { max_length_bytes: 40 }),
        text("name", ColumnType::VarChar { max_length_bytes: 256 }),
        ColumnDef::new("token", ColumnType::VarChar { max_length_bytes: 32 }),
        text("note", ColumnType::Blob { length_bytes: 2 }),
        ColumnDef::new("data", ColumnType::Blob { length_bytes: 2 }),
        state,
        ColumnDef::new("flags", ColumnType::Bit { bits: 8 }),
    ]
}

/// Values for the wide table's columns after `id` and `k`.
fn wide_values(rng: &mut FastRng) -> Vec<Value> {
    let r = rng.next_u64();
    let cents = (r % 10_000_000_000) as i64 - 5_000_000_000;
    let sign = if cents < 0 { "-" } else { "" };
    vec![
        Value::UInt(r % 256),
        Value::Int((r % 65_536) as i64 - 32_768),
        Value::Int(r as i64),
        Value::Decimal(format!("{sign}{}.{:02}", cents.unsigned_abs() / 100, cents.unsigned_abs() % 100)),
        Value::Double((r % 1_000_000) as f64 / 7.0),
        Value::Float((r % 10_000) as f32 / 3.0),
        Value::Date { year: 2000 + (r % 30) as u16, month: 1 + (r % 12) as u8, day: 1 + (r % 28) as u8 },
        Value::DateTime {
            year: 2020 + (r % 7) as u16,
            month: 1 + (r >> 8) as u8 % 12,
            day: 1 + (r >> 16) as u8 % 28,
            hour: (r >> 24) as u8 % 24,
            minute: (r >> 32) as u8 % 60,
            second: (r >> 40) as u8 % 60,
            micros: (r % 1_000_000) as u32,
        },
        Value::Timestamp { seconds: 1_700_000_000 + (r % 10_000_000) as u32, micros: (r % 1000) as u32 * 1000 },
        Value::Time {
            negative: r.is_multiple_of(2),
            hours: (r % 839) as u16,
            minute: (r >> 8) as u8 % 60,
            second: (r >> 16) as u8 % 60,
            micros: 0,
        },
        Value::Int(1901 + (r % 254) as i64),
        Value::Bytes(format!("C{:09}", r % 1_000_000_000).into_bytes()),
        Value::Bytes(digit_groups(rng, 4)),
        Value::Bytes(rng.next_u64().to_le_bytes().repeat(2)),
        Value::Bytes(digit_groups(rng, 8)),
        Value::Bytes(rng.next_u64().to_be_bytes().repeat(8)),
        Value::UInt(1 + r % 3),
        Value::UInt(r % 256),
    ]
}

/// A document of 12 members: numbers, strings, a boolean, a null, two
/// nested objects and an array of 16 numbers, as an order or an event
/// payload might look.
fn document(rng: &mut FastRng, id: i64) -> Value {
    let r = rng.next_u64();
    let numbers: Vec<String> = (0..16).map(|_| (rng.next_u64() % 100_000).to_string()).collect();
    let source = format!(
        r#"{{"id": {id}, "customer": {{"name": "customer-{}", "email": "c{}@example.com", "tier": {}}}, "status": "{}", "paid": {}, "coupon": null, "total": {}.{:02}, "currency": "EUR", "items": [{}], "shipping": {{"city": "{}", "zip": "{:05}", "express": {}}}, "note": "{}", "created": "2026-{:02}-{:02}T{:02}:00:00Z"}}"#,
        r % 100_000,
        r % 1_000_000,
        r % 5,
        ["new", "paid", "shipped", "closed"][(r % 4) as usize],
        r.is_multiple_of(2),
        r % 10_000,
        r % 100,
        numbers.join(", "),
        ["Paris", "Lyon", "Berlin", "Madrid"][(r >> 8) as usize % 4],
        r % 100_000,
        r.is_multiple_of(3),
        String::from_utf8(digit_groups(rng, 6)).expect("digits and dashes"),
        1 + r % 12,
        1 + r % 28,
        r % 24,
    );
    let parsed = text::parse(source.as_bytes()).expect("the generated document is JSON");
    Value::Json(binary::to_binary(&parsed).expect("the generated document encodes"))
}

/// A cheap per-thread random number generator (xorshift64*): the
/// benchmark must not spend its time in a cryptographic one.
pub struct FastRng(u64);

impl FastRng {
    pub fn new(seed: u64) -> FastRng {
        FastRng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// 1..=n
    pub fn id(&mut self, n: u64) -> i64 {
        (self.next_u64() % n) as i64 + 1
    }
}

/// sysbench-like `c` and `pad` values: groups of 11 digits and dashes.
fn digit_groups(rng: &mut FastRng, groups: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(groups * 12);
    for group in 0..groups {
        if group > 0 {
            out.push(b'-');
        }
        let value = rng.next_u64();
        out.extend_from_slice(format!("{:011}", value % 100_000_000_000).as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload's rows encode as their columns say, before and after
    /// the update, so the binlog can carry them.
    #[test]
    fn rows_fit_their_columns() {
        for workload in [Workload::Sysbench, Workload::Json, Workload::Wide] {
            let spec = workload.table_spec();
            let mut rng = FastRng::new(3);
            for id in 1..50 {
                let mut row = workload.row(&mut rng, id, id * 7);
                assert_eq!(row.len(), spec.columns.len(), "{workload:?}");
                for _ in 0..2 {
                    for (column, value) in spec.columns.iter().zip(&row) {
                        let mut out = Vec::new();
                        binlog_format::value::encode_value(&column.column_type, column.unsigned, value, &mut out)
                            .unwrap_or_else(|e| panic!("{workload:?} {}: {value:?}: {e}", column.name));
                    }
                    workload.update(&mut rng, &mut row);
                }
                assert_eq!(row[1], Value::Int(id * 7 + 2), "the update adds 1 to k");
            }
        }
        assert_eq!(Workload::Wide.table_spec().columns.len(), 20);
    }
}
