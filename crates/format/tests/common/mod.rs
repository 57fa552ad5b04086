//! Shared by the integration tests: strategies for random tables and rows,
//! and the events a transaction of a built file holds around its rows.
#![allow(dead_code)]

use binlog_format::column_type::ColumnType;
use binlog_format::events::{ColumnSpec, QueryEvent, XidEvent};
use binlog_format::{Event, Value};
use proptest::prelude::*;

/// Collations a table may use: utf8mb4_general_ci, binary,
/// utf8mb4_0900_ai_ci, latin1_swedish_ci.
pub const COLLATIONS: [u16; 4] = [45, 63, 255, 8];

// ------------------------------------------------------------- events

pub fn begin() -> Event {
    Event::Query(QueryEvent::new(7, "test", "BEGIN"))
}

pub fn xid(xid: u64) -> Event {
    Event::Xid(XidEvent { xid })
}

// ----------------------------------------------------------- strategies

pub fn integer_type() -> impl Strategy<Value = ColumnType> {
    prop_oneof![
        Just(ColumnType::Tiny),
        Just(ColumnType::Short),
        Just(ColumnType::Int24),
        Just(ColumnType::Long),
        Just(ColumnType::LongLong),
    ]
}

/// Every typed column kind binlogd writes.
pub fn typed_column_type() -> impl Strategy<Value = ColumnType> {
    prop_oneof![
        integer_type(),
        Just(ColumnType::Float),
        Just(ColumnType::Double),
        (1u8..=65)
            .prop_flat_map(|precision| (Just(precision), 0..=precision.min(30)))
            .prop_map(|(precision, scale)| ColumnType::NewDecimal { precision, scale }),
        prop_oneof![0u16..=40, 200u16..=300, Just(1020), Just(1023)].prop_map(|max_length_bytes| ColumnType::String { max_length_bytes }),
        prop_oneof![0u16..=40, 250u16..=260, Just(1000), Just(65535)].prop_map(|max_length_bytes| ColumnType::VarChar { max_length_bytes }),
        (1u8..=4).prop_map(|length_bytes| ColumnType::Blob { length_bytes }),
        Just(ColumnType::Date),
        (0u8..=6).prop_map(|fsp| ColumnType::DateTime2 { fsp }),
        (0u8..=6).prop_map(|fsp| ColumnType::Timestamp2 { fsp }),
        (0u8..=6).prop_map(|fsp| ColumnType::Time2 { fsp }),
        Just(ColumnType::Year),
    ]
}

/// Typed columns, JSON among them.
pub fn any_column_type() -> impl Strategy<Value = ColumnType> {
    prop_oneof![
        8 => typed_column_type(),
        1 => Just(ColumnType::Json),
    ]
}

pub fn specs(column_type: impl Strategy<Value = ColumnType>, columns_max: usize) -> impl Strategy<Value = Vec<ColumnSpec>> {
    prop::collection::vec((column_type, any::<bool>(), any::<bool>(), prop::sample::select(&COLLATIONS[..])), 1..=columns_max).prop_map(
        |columns| {
            columns
                .into_iter()
                .enumerate()
                .map(|(index, (column_type, nullable, unsigned, collation))| ColumnSpec {
                    name: format!("c{index}"),
                    unsigned: unsigned && column_type.is_numeric(),
                    collation: if column_type.is_character() { collation } else { 0 },
                    column_type,
                    nullable,
                })
                .collect()
        },
    )
}

fn integer_value(bits: u32, unsigned: bool) -> BoxedStrategy<Value> {
    if unsigned {
        let max = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        prop_oneof![Just(0), Just(1), Just(max), Just(max - 1), 0..=max].prop_map(Value::UInt).boxed()
    } else {
        let (min, max) = if bits == 64 { (i64::MIN, i64::MAX) } else { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) };
        prop_oneof![Just(0), Just(-1), Just(min), Just(max), Just(min + 1), min..=max].prop_map(Value::Int).boxed()
    }
}

fn decimal_value(precision: u8, scale: u8) -> BoxedStrategy<Value> {
    let integer_digits = (precision - scale) as usize;
    (any::<bool>(), prop::collection::vec(0u8..10, integer_digits), prop::collection::vec(0u8..10, scale as usize))
        .prop_map(move |(negative, integer, fraction)| {
            let digits = |d: &[u8]| d.iter().map(|d| (b'0' + d) as char).collect::<String>();
            let integer = digits(&integer);
            let integer = match integer.trim_start_matches('0') {
                "" => "0".to_string(),
                trimmed => trimmed.to_string(),
            };
            // Canonical text has no negative zero (MySQL stores -0 as 0).
            let is_zero = integer == "0" && fraction.iter().all(|&d| d == 0);
            let sign = if negative && !is_zero { "-" } else { "" };
            let text = if scale == 0 { format!("{sign}{integer}") } else { format!("{sign}{integer}.{}", digits(&fraction)) };
            Value::Decimal(text)
        })
        .boxed()
}

fn bytes_value(length_max: usize) -> BoxedStrategy<Value> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..=length_max.min(64)),
        prop::collection::vec(any::<u8>(), length_max.min(300)..=length_max.min(1200)),
    ]
    .prop_map(Value::Bytes)
    .boxed()
}

fn micros(fsp: u8) -> impl Strategy<Value = u32> {
    let unit = 10u32.pow(6 - fsp as u32);
    (0..1_000_000 / unit).prop_map(move |n| n * unit)
}

/// Text as binlogd holds it for a column of collation `collation`: a
/// column logged in latin1 or ascii holds the UTF-8 its logged bytes
/// decode to (the others hold the bytes).
fn in_column_charset(logged: BoxedStrategy<Value>, collation: u16) -> BoxedStrategy<Value> {
    let charset = binlog_format::text_charset::TextCharset::of_collation(collation);
    logged
        .prop_map(move |value| match value {
            Value::Bytes(bytes) => Value::Bytes(charset.decode(&bytes).into_owned()),
            other => other,
        })
        .boxed()
}

/// A non-NULL value that fits the column.
pub fn non_null_value(spec: &ColumnSpec) -> BoxedStrategy<Value> {
    let unsigned = spec.unsigned;
    match spec.column_type.clone() {
        ColumnType::Tiny => integer_value(8, unsigned),
        ColumnType::Short => integer_value(16, unsigned),
        ColumnType::Int24 => integer_value(24, unsigned),
        ColumnType::Long => integer_value(32, unsigned),
        ColumnType::LongLong => integer_value(64, unsigned),
        ColumnType::Float => prop_oneof![Just(0.0f32), Just(-1.5), Just(f32::MAX), Just(f32::MIN_POSITIVE), prop::num::f32::NORMAL]
            .prop_map(Value::Float)
            .boxed(),
        ColumnType::Double => {
            prop_oneof![Just(0.0f64), Just(-2.25), Just(f64::MAX), prop::num::f64::NORMAL].prop_map(Value::Double).boxed()
        }
        ColumnType::NewDecimal { precision, scale } => decimal_value(precision, scale),
        ColumnType::String { max_length_bytes } | ColumnType::VarChar { max_length_bytes } => {
            in_column_charset(bytes_value(max_length_bytes as usize), spec.collation)
        }
        ColumnType::Blob { length_bytes } => in_column_charset(bytes_value(if length_bytes == 1 { 255 } else { 1200 }), spec.collation),
        ColumnType::Date => (0u16..=9999, 0u8..=12, 0u8..=31).prop_map(|(year, month, day)| Value::Date { year, month, day }).boxed(),
        ColumnType::DateTime2 { fsp } => ((0u16..=9999, 0u8..=12, 0u8..=31), (0u8..=23, 0u8..=59, 0u8..=59), micros(fsp))
            .prop_map(|((year, month, day), (hour, minute, second), micros)| Value::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            })
            .boxed(),
        ColumnType::Timestamp2 { fsp } => (prop_oneof![Just(0u32), Just(1), Just(i32::MAX as u32), any::<u32>()], micros(fsp))
            .prop_map(|(seconds, micros)| Value::Timestamp { seconds, micros })
            .boxed(),
        ColumnType::Time2 { fsp } => (any::<bool>(), 0u16..=838, 0u8..=59, 0u8..=59, micros(fsp))
            .prop_map(|(negative, hours, minute, second, micros)| {
                let zero = hours == 0 && minute == 0 && second == 0 && micros == 0;
                Value::Time { negative: negative && !zero, hours, minute, second, micros }
            })
            .boxed(),
        ColumnType::Year => prop_oneof![Just(0i64), Just(1901), Just(2155), 1901i64..=2155].prop_map(Value::Int).boxed(),
        // Row events carry a document's bytes without reading them.
        ColumnType::Json => prop::collection::vec(any::<u8>(), 0..40).prop_map(Value::Json).boxed(),
        other => panic!("no value strategy for {other:?}"),
    }
}

pub fn value(spec: &ColumnSpec) -> BoxedStrategy<Value> {
    if spec.nullable {
        prop_oneof![1 => Just(Value::Null), 4 => non_null_value(spec)].boxed()
    } else {
        non_null_value(spec)
    }
}

pub fn row(specs: &[ColumnSpec]) -> BoxedStrategy<Vec<Value>> {
    specs.iter().map(value).collect::<Vec<_>>().boxed()
}

// ------------------------------------------------- a table for the oracles

fn spec(name: &str, column_type: ColumnType, unsigned: bool, collation: u16) -> ColumnSpec {
    ColumnSpec { name: name.into(), column_type, nullable: name != "id", unsigned, collation }
}

/// One column of every typed kind, signed and unsigned integers included.
pub fn oracle_table() -> Vec<ColumnSpec> {
    vec![
        spec("id", ColumnType::LongLong, false, 0),
        spec("tiny_s", ColumnType::Tiny, false, 0),
        spec("tiny_u", ColumnType::Tiny, true, 0),
        spec("short_s", ColumnType::Short, false, 0),
        spec("short_u", ColumnType::Short, true, 0),
        spec("medium_s", ColumnType::Int24, false, 0),
        spec("medium_u", ColumnType::Int24, true, 0),
        spec("int_s", ColumnType::Long, false, 0),
        spec("int_u", ColumnType::Long, true, 0),
        spec("big_u", ColumnType::LongLong, true, 0),
        spec("f", ColumnType::Float, false, 0),
        spec("d", ColumnType::Double, false, 0),
        spec("dec_a", ColumnType::NewDecimal { precision: 10, scale: 4 }, false, 0),
        spec("dec_b", ColumnType::NewDecimal { precision: 65, scale: 30 }, false, 0),
        spec("dec_c", ColumnType::NewDecimal { precision: 18, scale: 0 }, false, 0),
        spec("ch", ColumnType::String { max_length_bytes: 40 }, false, 45),
        spec("ch_long", ColumnType::String { max_length_bytes: 1020 }, false, 45),
        spec("vc", ColumnType::VarChar { max_length_bytes: 1000 }, false, 45),
        spec("vb", ColumnType::VarChar { max_length_bytes: 20 }, false, 63),
        spec("tt", ColumnType::Blob { length_bytes: 1 }, false, 45),
        spec("txt", ColumnType::Blob { length_bytes: 2 }, false, 45),
        spec("mb", ColumnType::Blob { length_bytes: 3 }, false, 63),
        spec("lb", ColumnType::Blob { length_bytes: 4 }, false, 63),
        spec("dt", ColumnType::Date, false, 0),
        spec("dtm0", ColumnType::DateTime2 { fsp: 0 }, false, 0),
        spec("dtm3", ColumnType::DateTime2 { fsp: 3 }, false, 0),
        spec("dtm6", ColumnType::DateTime2 { fsp: 6 }, false, 0),
        spec("ts0", ColumnType::Timestamp2 { fsp: 0 }, false, 0),
        spec("ts2", ColumnType::Timestamp2 { fsp: 2 }, false, 0),
        spec("ts6", ColumnType::Timestamp2 { fsp: 6 }, false, 0),
        spec("tm0", ColumnType::Time2 { fsp: 0 }, false, 0),
        spec("tm1", ColumnType::Time2 { fsp: 1 }, false, 0),
        spec("tm3", ColumnType::Time2 { fsp: 3 }, false, 0),
        spec("tm6", ColumnType::Time2 { fsp: 6 }, false, 0),
        spec("yr", ColumnType::Year, false, 0),
    ]
}

/// Rows at the edges of every column of [`oracle_table`].
pub fn oracle_rows() -> Vec<Vec<Value>> {
    use Value::*;
    let row = |id: i64, low: bool| {
        vec![
            Int(id),
            Int(if low { -128 } else { 127 }),
            UInt(if low { 0 } else { 255 }),
            Int(if low { -32768 } else { 32767 }),
            UInt(if low { 0 } else { 65535 }),
            Int(if low { -8_388_608 } else { 8_388_607 }),
            UInt(if low { 0 } else { 16_777_215 }),
            Int(if low { i32::MIN as i64 } else { i32::MAX as i64 }),
            UInt(if low { 0 } else { u32::MAX as u64 }),
            UInt(if low { 0 } else { u64::MAX }),
            Float(if low { -1.5 } else { 3.25e10 }),
            Double(if low { -2.0e-300 } else { 1.0e300 }),
            Decimal(if low { "-123456.7890".into() } else { "0.0001".into() }),
            Decimal(if low {
                "-99999999999999999999999999999999999.999999999999999999999999999999".into()
            } else {
                "12345678901234567890.123456789012345678901234567890".into()
            }),
            Decimal(if low { "-999999999999999999".into() } else { "0".into() }),
            Bytes(if low { b"".to_vec() } else { b"char value".to_vec() }),
            Bytes(vec![b'x'; if low { 1 } else { 1020 }]),
            Bytes(if low { vec![b'v'; 1000] } else { b"it's a \"varchar\" \\ ok".to_vec() }),
            Bytes(if low { vec![0, 1, 2, 0xff] } else { vec![] }),
            Bytes(vec![b't'; if low { 0 } else { 255 }]),
            Bytes(b"text value".to_vec()),
            Bytes(vec![0xab; 300]),
            Bytes(vec![0xcd; 70_000]),
            Date { year: if low { 1000 } else { 9999 }, month: if low { 1 } else { 12 }, day: if low { 1 } else { 31 } },
            DateTime { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, micros: 0 },
            DateTime { year: 2024, month: 2, day: 29, hour: 23, minute: 59, second: 59, micros: if low { 1_000 } else { 999_000 } },
            DateTime { year: 9999, month: 12, day: 31, hour: 12, minute: 34, second: 56, micros: if low { 1 } else { 999_999 } },
            Timestamp { seconds: if low { 1 } else { i32::MAX as u32 }, micros: 0 },
            Timestamp { seconds: 1_700_000_000, micros: if low { 10_000 } else { 990_000 } },
            Timestamp { seconds: 1_700_000_000, micros: if low { 1 } else { 0 } },
            Time { negative: low, hours: 838, minute: 59, second: 59, micros: 0 },
            // Not negative: mysql_common cannot read a negative TIME(1) with a fraction.
            Time { negative: false, hours: 0, minute: 0, second: if low { 0 } else { 1 }, micros: 500_000 },
            Time { negative: low, hours: 12, minute: 34, second: 56, micros: if low { 1_000 } else { 789_000 } },
            Time { negative: low, hours: 100, minute: 0, second: 1, micros: if low { 1 } else { 999_999 } },
            Int(if low { 0 } else { 2155 }),
        ]
    };
    let mut nulls = row(3, true);
    for value in nulls.iter_mut().skip(1) {
        *value = Null;
    }
    vec![row(1, true), row(2, false), nulls]
}
