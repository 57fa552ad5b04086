//! Partitioned tables: how a table's rows are split (`PARTITION BY ...`)
//! and which partition a row belongs to. binlogd keeps every partition's
//! rows in the one table; the partition matters because MySQL 8.0.16+
//! writes it in each row event's extra row info, and because RANGE and
//! LIST tables refuse a row no partition takes (1526).
//!
//! The partition id is computed as MySQL's `sql_partition.cc` computes it:
//! - HASH: `abs(value % n)`, NULL counting as `i64::MIN`;
//! - LINEAR HASH / LINEAR KEY: the value masked by the next power of two
//!   minus one, and by half that mask when the result is past the last
//!   partition (`get_part_id_from_linear_hash`);
//! - KEY: `Partition_helper::ph_calculate_key_hash_value`: `nr1 = 1`,
//!   `nr2 = 4`, each column fed to its charset's `hash_sort` over the
//!   field's stored bytes (a NULL xors `(nr1 << 1) | 1` into `nr1`), the
//!   low 32 bits of `nr1` modulo n. Integer columns hash their
//!   little-endian image with `my_hash_sort_bin`, as MySQL does, and so do
//!   binary strings. Other collations (`utf8mb4_0900_ai_ci`, ...) have
//!   their own `hash_sort` in MySQL, which binlogd does not reproduce: it
//!   hashes their bytes, trailing spaces removed, with `my_hash_sort_bin`,
//!   so a KEY table over such a column may number its rows' partitions
//!   differently from MySQL; DATE and DATETIME columns likewise hash
//!   binlogd's own image of the value;
//! - RANGE: the first partition whose `VALUES LESS THAN` is above the
//!   value (NULL is below every value);
//! - a function over the column (`RANGE (YEAR(d))`, [`PartitionFunction`])
//!   partitions by its value as the column's would be;
//! - LIST: the partition listing the value.
//!
//! The COLUMNS forms compare values column by column; strings compare by
//! their bytes (MySQL compares them under the column's collation).

use std::cmp::Ordering;

use binlog_format::{ColumnType, Value};

use crate::catalog::{ColumnDef, TableDef};
use crate::error::{EngineError, Result};

/// MySQL's MAX_PARTITIONS (1499 past it).
pub const PARTITIONS_MAX: usize = 8192;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionMethod {
    Hash,
    Key,
    Range,
    List,
    RangeColumns,
    ListColumns,
}

impl PartitionMethod {
    /// The keyword(s) after `PARTITION BY`, as INFORMATION_SCHEMA's
    /// PARTITION_METHOD prints them.
    pub fn name(self, linear: bool) -> &'static str {
        match (self, linear) {
            (PartitionMethod::Hash, false) => "HASH",
            (PartitionMethod::Hash, true) => "LINEAR HASH",
            (PartitionMethod::Key, false) => "KEY",
            (PartitionMethod::Key, true) => "LINEAR KEY",
            (PartitionMethod::Range, _) => "RANGE",
            (PartitionMethod::List, _) => "LIST",
            (PartitionMethod::RangeColumns, _) => "RANGE COLUMNS",
            (PartitionMethod::ListColumns, _) => "LIST COLUMNS",
        }
    }

    pub fn is_range(self) -> bool {
        matches!(self, PartitionMethod::Range | PartitionMethod::RangeColumns)
    }

    pub fn is_list(self) -> bool {
        matches!(self, PartitionMethod::List | PartitionMethod::ListColumns)
    }

    /// HASH and KEY: rows are spread by a hash, partitions have no VALUES.
    pub fn is_hashed(self) -> bool {
        matches!(self, PartitionMethod::Hash | PartitionMethod::Key)
    }

    /// KEY and the COLUMNS forms name columns; HASH, RANGE and LIST take
    /// an integer expression (binlogd: one column).
    pub fn takes_column_list(self) -> bool {
        matches!(self, PartitionMethod::Key | PartitionMethod::RangeColumns | PartitionMethod::ListColumns)
    }
}

/// A function over the partitioning column of HASH, RANGE or LIST
/// (`RANGE (YEAR(d))`): the date functions MySQL allows there and prunes
/// by. Each gives an integer of a DATE or DATETIME column, UNIX_TIMESTAMP
/// of a TIMESTAMP column (the others would depend on the time zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionFunction {
    Year,
    Month,
    ToDays,
    ToSeconds,
    UnixTimestamp,
}

impl PartitionFunction {
    pub const ALL: [PartitionFunction; 5] = [
        PartitionFunction::Year,
        PartitionFunction::Month,
        PartitionFunction::ToDays,
        PartitionFunction::ToSeconds,
        PartitionFunction::UnixTimestamp,
    ];

    /// The function of this name, in any case.
    pub fn of_name(name: &str) -> Option<PartitionFunction> {
        PartitionFunction::ALL.into_iter().find(|function| function.name().eq_ignore_ascii_case(name))
    }

    /// Its name as SHOW CREATE TABLE prints it.
    pub fn name(self) -> &'static str {
        match self {
            PartitionFunction::Year => "year",
            PartitionFunction::Month => "month",
            PartitionFunction::ToDays => "to_days",
            PartitionFunction::ToSeconds => "to_seconds",
            PartitionFunction::UnixTimestamp => "unix_timestamp",
        }
    }

    /// Whether it may read `column`.
    pub fn takes(self, column: &ColumnDef) -> bool {
        match self {
            PartitionFunction::UnixTimestamp => matches!(column.column_type, ColumnType::Timestamp2 { .. }),
            _ => matches!(column.column_type, ColumnType::Date | ColumnType::DateTime2 { .. }),
        }
    }

    /// Its value of a column's `value`; None for NULL, and for TO_DAYS and
    /// TO_SECONDS of a date with a zero month or day (NULL in MySQL).
    pub fn apply(self, value: &Value) -> Option<i128> {
        let (year, month, day, seconds) = match *value {
            Value::Date { year, month, day } => (year, month, day, 0),
            Value::DateTime { year, month, day, hour, minute, second, .. } => {
                (year, month, day, i128::from(hour) * 3600 + i128::from(minute) * 60 + i128::from(second))
            }
            Value::Timestamp { seconds, .. } if self == PartitionFunction::UnixTimestamp => return Some(i128::from(seconds)),
            _ => return None,
        };
        match self {
            PartitionFunction::Year => Some(i128::from(year)),
            PartitionFunction::Month => Some(i128::from(month)),
            PartitionFunction::ToDays | PartitionFunction::ToSeconds if month == 0 || day == 0 => None,
            PartitionFunction::ToDays => Some(day_number(year, month, day)),
            PartitionFunction::ToSeconds => Some(day_number(year, month, day) * 86_400 + seconds),
            PartitionFunction::UnixTimestamp => None,
        }
    }
}

/// Days since year 0 as MySQL counts them (`calc_daynr`, TO_DAYS).
fn day_number(year: u16, month: u8, day: u8) -> i128 {
    let (year, month, day) = (i128::from(year), i128::from(month), i128::from(day));
    let mut days = 365 * year + 31 * (month - 1) + day;
    let mut y = year;
    if month <= 2 {
        y -= 1;
    } else {
        days -= (month * 4 + 23) / 10;
    }
    days + y / 4 - (y / 100 + 1) * 3 / 4
}

/// A table's `PARTITION BY` clause, with its partitions in declaration
/// order (a partition's id is its position).
#[derive(Debug, Clone, PartialEq)]
pub struct Partitioning {
    pub method: PartitionMethod,
    /// LINEAR HASH or LINEAR KEY.
    pub linear: bool,
    /// KEY's `ALGORITHM = 1 | 2`; 0 when not given (2 then).
    pub key_algorithm: u8,
    /// HASH, RANGE, LIST: the one column of the expression. KEY: its
    /// columns (empty: the primary key's). COLUMNS forms: their columns.
    pub columns: Vec<String>,
    /// HASH, RANGE, LIST: the function the expression applies to the
    /// column, if any.
    pub function: Option<PartitionFunction>,
    /// Partitions given by `PARTITIONS n` alone (named p0, p1, ...):
    /// SHOW CREATE TABLE prints the count, not the list.
    pub by_count: bool,
    pub partitions: Vec<PartitionDef>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionDef {
    pub name: String,
    pub values: PartitionValues,
    /// COMMENT = '...'.
    pub comment: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PartitionValues {
    /// HASH and KEY partitions.
    Hashed,
    /// RANGE: one bound; RANGE COLUMNS: one per column.
    LessThan(Vec<Bound>),
    /// LIST: one value per item; LIST COLUMNS: one tuple per item.
    In(Vec<Vec<Value>>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    Value(Value),
    MaxValue,
}

/// The partition a row goes to, and for an error the value MySQL's 1526
/// names.
fn no_partition(value: String) -> EngineError {
    EngineError::NoPartitionForValue(value)
}

impl Partitioning {
    /// Column positions the partitioning reads, in its order (KEY () is
    /// the primary key).
    pub fn column_positions(&self, def: &TableDef) -> Result<Vec<usize>> {
        if self.columns.is_empty() && self.method == PartitionMethod::Key {
            return Ok(def.primary_key.clone());
        }
        self.columns
            .iter()
            .map(|name| {
                def.columns
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| EngineError::UnknownColumn { column: name.clone(), context: "partition function".to_string() })
            })
            .collect()
    }

    /// Checks the partitioning against the table it is on: the columns
    /// exist, have a type the method takes, and every unique key holds
    /// them all (1503).
    pub(crate) fn check(&self, def: &TableDef) -> Result<()> {
        let positions = self.column_positions(def)?;
        if positions.is_empty() {
            // KEY () on a table without a primary key.
            return Err(EngineError::PartitionFieldNotFound);
        }
        for &position in &positions {
            let column = &def.columns[position];
            let allowed = match self.function {
                Some(function) => function.takes(column),
                None => column_type_allowed(self.method, column),
            };
            if !allowed {
                return Err(EngineError::PartitionFieldTypeNotAllowed(column.name.clone()));
            }
        }
        if def.has_primary_key() && !positions.iter().all(|p| def.primary_key.contains(p)) {
            return Err(EngineError::UniqueKeyNeedsPartitionColumns("PRIMARY KEY"));
        }
        if def.indexes.iter().any(|index| index.unique && !positions.iter().all(|p| index.columns.contains(p))) {
            return Err(EngineError::UniqueKeyNeedsPartitionColumns("UNIQUE INDEX"));
        }
        Ok(())
    }

    /// The id (0-based, declaration order) of the partition `row` belongs
    /// to, or 1526 when a RANGE or LIST table has none for it.
    pub fn partition_of(&self, def: &TableDef, row: &[Value]) -> Result<u16> {
        let positions = self.column_positions(def)?;
        let count = self.partitions.len().max(1);
        // HASH, RANGE and LIST partition by an integer: the column's, or
        // the function's of it.
        let integer = |value: &Value| match self.function {
            Some(function) => function.apply(value),
            None => integer_value(value),
        };
        let id = match self.method {
            PartitionMethod::Hash => {
                let value = integer(&row[positions[0]]).map_or(i64::MIN, |v| v as i64);
                if self.linear {
                    linear_hash_id(value, count)
                } else {
                    (value % count as i64).unsigned_abs() as usize
                }
            }
            PartitionMethod::Key => {
                let hash = key_hash(positions.iter().map(|&p| (&def.columns[p], &row[p])));
                if self.linear {
                    linear_hash_id(i64::from(hash), count)
                } else {
                    (u64::from(hash) % count as u64) as usize
                }
            }
            PartitionMethod::Range => {
                let value = integer(&row[positions[0]]);
                let below = |bound: &[Bound]| match bound.first() {
                    Some(Bound::MaxValue) => true,
                    Some(Bound::Value(limit)) => value.is_none_or(|v| integer_value(limit).is_some_and(|l| v < l)),
                    None => false,
                };
                self.position(|values| matches!(values, PartitionValues::LessThan(bound) if below(bound)))
                    .ok_or_else(|| no_partition(value.map_or("NULL".to_string(), |v| v.to_string())))?
            }
            PartitionMethod::List => {
                let wanted = integer(&row[positions[0]]);
                let listed = |items: &[Vec<Value>]| {
                    items.iter().any(|item| match (item.first(), wanted) {
                        (Some(Value::Null), None) => true,
                        (Some(listed), Some(v)) => integer_value(listed) == Some(v),
                        _ => false,
                    })
                };
                self.position(|values| matches!(values, PartitionValues::In(items) if listed(items)))
                    .ok_or_else(|| no_partition(wanted.map_or("NULL".to_string(), |v| v.to_string())))?
            }
            PartitionMethod::RangeColumns => {
                let below = |bound: &[Bound]| {
                    for (&position, limit) in positions.iter().zip(bound) {
                        let Bound::Value(limit) = limit else { return true };
                        match compare_values(&row[position], limit) {
                            Ordering::Less => return true,
                            Ordering::Greater => return false,
                            Ordering::Equal => {}
                        }
                    }
                    false
                };
                self.position(|values| matches!(values, PartitionValues::LessThan(bound) if below(bound)))
                    .ok_or_else(|| no_partition("from column_list".to_string()))?
            }
            PartitionMethod::ListColumns => {
                let listed = |items: &[Vec<Value>]| {
                    items.iter().any(|item| {
                        item.len() == positions.len()
                            && positions.iter().zip(item).all(|(&p, v)| compare_values(&row[p], v) == Ordering::Equal)
                    })
                };
                self.position(|values| matches!(values, PartitionValues::In(items) if listed(items)))
                    .ok_or_else(|| no_partition("from column_list".to_string()))?
            }
        };
        Ok(id as u16)
    }

    fn position(&self, matches: impl Fn(&PartitionValues) -> bool) -> Option<usize> {
        self.partitions.iter().position(|partition| matches(&partition.values))
    }
}

/// Orders two RANGE bounds (one per column) as MySQL checks that they
/// increase: column by column, MAXVALUE above every value.
pub fn compare_bounds(a: &[Bound], b: &[Bound]) -> Ordering {
    for (a, b) in a.iter().zip(b) {
        let order = match (a, b) {
            (Bound::MaxValue, Bound::MaxValue) => Ordering::Equal,
            (Bound::MaxValue, _) => Ordering::Greater,
            (_, Bound::MaxValue) => Ordering::Less,
            (Bound::Value(a), Bound::Value(b)) => compare_values(a, b),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// Whether `method` may partition by `column` (1659 otherwise): integers
/// for HASH, RANGE and LIST; integers, strings and dates for KEY and the
/// COLUMNS forms.
fn column_type_allowed(method: PartitionMethod, column: &ColumnDef) -> bool {
    let integer =
        matches!(column.column_type, ColumnType::Tiny | ColumnType::Short | ColumnType::Int24 | ColumnType::Long | ColumnType::LongLong);
    let other = matches!(
        column.column_type,
        ColumnType::VarChar { .. } | ColumnType::String { .. } | ColumnType::Date | ColumnType::DateTime2 { .. }
    ) && column.attributes.members.is_empty();
    integer || (method.takes_column_list() && other)
}

/// An integer column's value, signed and unsigned alike; None for NULL.
fn integer_value(value: &Value) -> Option<i128> {
    match value {
        Value::Int(v) => Some(i128::from(*v)),
        Value::UInt(v) => Some(i128::from(*v)),
        _ => None,
    }
}

/// Orders two values of one column; NULL below everything, as MySQL's
/// COLUMNS partitioning orders them.
fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::Bytes(a), Value::Bytes(b)) => a.cmp(b),
        (Value::Date { year, month, day }, Value::Date { year: y, month: m, day: d }) => (year, month, day).cmp(&(y, m, d)),
        (
            Value::DateTime { year, month, day, hour, minute, second, micros },
            Value::DateTime { year: y, month: mo, day: d, hour: h, minute: mi, second: s, micros: us },
        ) => (year, month, day, hour, minute, second, micros).cmp(&(y, mo, d, h, mi, s, us)),
        _ => integer_value(a).cmp(&integer_value(b)),
    }
}

/// MySQL's `get_part_id_from_linear_hash`, with its mask: the next power
/// of two at or above `count`, minus one.
fn linear_hash_id(value: i64, count: usize) -> usize {
    let mask = (count as u64).next_power_of_two() - 1;
    let id = (value as u64) & mask;
    if id >= count as u64 {
        ((value as u64) & (((mask + 1) >> 1) - 1)) as usize
    } else {
        id as usize
    }
}

/// MySQL's `my_hash_sort_bin`.
fn hash_sort_bin(bytes: &[u8], nr1: &mut u64, nr2: &mut u64) {
    for &byte in bytes {
        *nr1 ^= ((*nr1 & 63).wrapping_add(*nr2)).wrapping_mul(u64::from(byte)).wrapping_add(*nr1 << 8);
        *nr2 = nr2.wrapping_add(3);
    }
}

/// KEY partitioning's hash of a row's key columns (see the module
/// comment for what matches MySQL).
fn key_hash<'a>(columns: impl Iterator<Item = (&'a ColumnDef, &'a Value)>) -> u32 {
    let (mut nr1, mut nr2) = (1u64, 4u64);
    for (column, value) in columns {
        let image: Vec<u8> = match value {
            Value::Null => {
                nr1 ^= (nr1 << 1) | 1;
                continue;
            }
            Value::Int(_) | Value::UInt(_) => {
                let raw = match value {
                    Value::Int(v) => *v as u64,
                    Value::UInt(v) => *v,
                    _ => unreachable!("matched above"),
                };
                let width = match column.column_type {
                    ColumnType::Tiny => 1,
                    ColumnType::Short => 2,
                    ColumnType::Int24 => 3,
                    ColumnType::Long => 4,
                    _ => 8,
                };
                raw.to_le_bytes()[..width].to_vec()
            }
            Value::Bytes(bytes) if column.collation == 63 => bytes.clone(),
            Value::Bytes(bytes) => {
                let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
                bytes[..end].to_vec()
            }
            Value::Date { year, month, day } => {
                (u32::from(*year) * 512 + u32::from(*month) * 32 + u32::from(*day)).to_le_bytes()[..3].to_vec()
            }
            other => format!("{other:?}").into_bytes(),
        };
        hash_sort_bin(&image, &mut nr1, &mut nr2);
    }
    nr1 as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{TableDef, TableSpec};

    fn table(columns: Vec<ColumnDef>, partitioning: Partitioning) -> TableDef {
        let spec = TableSpec { database: "d".into(), name: "t".into(), columns, partitioning: Some(partitioning), ..TableSpec::default() };
        TableDef::from_spec(1, &spec).unwrap()
    }

    fn hashed(method: PartitionMethod, linear: bool, column: &str, count: usize) -> Partitioning {
        Partitioning {
            method,
            linear,
            key_algorithm: 0,
            columns: vec![column.to_string()],
            function: None,
            by_count: true,
            partitions: (0..count)
                .map(|i| PartitionDef { name: format!("p{i}"), values: PartitionValues::Hashed, comment: None })
                .collect(),
        }
    }

    fn id(def: &TableDef, value: Value) -> Result<u16> {
        def.partitioning.as_ref().unwrap().partition_of(def, &[value])
    }

    #[test]
    fn hash_is_the_absolute_remainder_and_null_counts_as_the_smallest_integer() {
        let def = table(vec![ColumnDef::new("id", ColumnType::Long)], hashed(PartitionMethod::Hash, false, "id", 4));
        assert_eq!(id(&def, Value::Int(7)).unwrap(), 3);
        assert_eq!(id(&def, Value::Int(-7)).unwrap(), 3);
        assert_eq!(id(&def, Value::Int(8)).unwrap(), 0);
        // i64::MIN % 4 == 0.
        assert_eq!(id(&def, Value::Null).unwrap(), 0);
        let def = table(vec![ColumnDef::new("id", ColumnType::Long)], hashed(PartitionMethod::Hash, false, "id", 3));
        // i64::MIN % 3 == -2.
        assert_eq!(id(&def, Value::Null).unwrap(), 2);
    }

    #[test]
    fn linear_hash_folds_ids_past_the_count_with_half_the_mask() {
        let def = table(vec![ColumnDef::new("id", ColumnType::Long)], hashed(PartitionMethod::Hash, true, "id", 5));
        // mask 7: 5, 6 and 7 fold with mask 3.
        let ids: Vec<u16> = (0..10).map(|v| id(&def, Value::Int(v)).unwrap()).collect();
        assert_eq!(ids, [0, 1, 2, 3, 4, 1, 2, 3, 0, 1]);
        assert_eq!(id(&def, Value::Int(-1)).unwrap(), 3);
    }

    #[test]
    fn key_hashes_the_little_endian_image_with_my_hash_sort_bin() {
        // nr1 = 1, nr2 = 4; one byte b: nr1 ^= ((1 & 63) + 4) * b + (1 << 8),
        // so 1 gives 1 ^ 261 = 260.
        let def = table(vec![ColumnDef::new("id", ColumnType::Tiny)], hashed(PartitionMethod::Key, false, "id", 1000));
        assert_eq!(id(&def, Value::Int(1)).unwrap(), 260);
        // A NULL: nr1 ^= (nr1 << 1) | 1 = 1 ^ 3 = 2.
        assert_eq!(id(&def, Value::Null).unwrap(), 2);
        let mut nr1 = 1u64;
        let mut nr2 = 4u64;
        hash_sort_bin(&5i32.to_le_bytes(), &mut nr1, &mut nr2);
        let def = table(vec![ColumnDef::new("id", ColumnType::Long)], hashed(PartitionMethod::Key, false, "id", 7));
        assert_eq!(id(&def, Value::Int(5)).unwrap(), ((nr1 as u32) % 7) as u16);
    }

    #[test]
    fn range_takes_the_first_partition_above_the_value_and_refuses_past_the_last() {
        let partitions = vec![
            PartitionDef { name: "p0".into(), values: PartitionValues::LessThan(vec![Bound::Value(Value::Int(10))]), comment: None },
            PartitionDef { name: "p1".into(), values: PartitionValues::LessThan(vec![Bound::Value(Value::Int(20))]), comment: None },
        ];
        let range = Partitioning {
            method: PartitionMethod::Range,
            linear: false,
            key_algorithm: 0,
            columns: vec!["id".into()],
            function: None,
            by_count: false,
            partitions,
        };
        let def = table(vec![ColumnDef::new("id", ColumnType::Long)], range);
        assert_eq!(id(&def, Value::Int(-5)).unwrap(), 0);
        assert_eq!(id(&def, Value::Int(10)).unwrap(), 1);
        assert_eq!(id(&def, Value::Null).unwrap(), 0);
        let error = id(&def, Value::Int(20)).unwrap_err();
        assert_eq!((error.mysql_code(), error.to_string()), (1526, "Table has no partition for value 20".to_string()));
    }

    #[test]
    fn list_finds_the_listed_value_and_null_only_where_listed() {
        let partitions = vec![
            PartitionDef { name: "odd".into(), values: PartitionValues::In(vec![vec![Value::Int(1)], vec![Value::Int(3)]]), comment: None },
            PartitionDef { name: "even".into(), values: PartitionValues::In(vec![vec![Value::Int(2)], vec![Value::Null]]), comment: None },
        ];
        let list = Partitioning {
            method: PartitionMethod::List,
            linear: false,
            key_algorithm: 0,
            columns: vec!["id".into()],
            function: None,
            by_count: false,
            partitions,
        };
        let def = table(vec![ColumnDef::new("id", ColumnType::Long)], list);
        assert_eq!(id(&def, Value::Int(3)).unwrap(), 0);
        assert_eq!(id(&def, Value::Null).unwrap(), 1);
        assert_eq!(id(&def, Value::Int(4)).unwrap_err().to_string(), "Table has no partition for value 4");
    }

    #[test]
    fn functions_over_a_date_give_mysqls_integers() {
        let date = Value::Date { year: 2007, month: 10, day: 7 };
        let at = Value::DateTime { year: 2007, month: 10, day: 7, hour: 1, minute: 2, second: 3, micros: 9 };
        assert_eq!(PartitionFunction::Year.apply(&date), Some(2007));
        assert_eq!(PartitionFunction::Month.apply(&at), Some(10));
        // The MySQL manual's TO_DAYS('2007-10-07') and TO_SECONDS examples.
        assert_eq!(PartitionFunction::ToDays.apply(&date), Some(733_321));
        assert_eq!(PartitionFunction::ToDays.apply(&Value::Date { year: 1, month: 1, day: 1 }), Some(366));
        assert_eq!(PartitionFunction::ToSeconds.apply(&at), Some(733_321 * 86_400 + 3723));
        assert_eq!(PartitionFunction::ToDays.apply(&Value::Date { year: 2007, month: 0, day: 0 }), None);
        assert_eq!(PartitionFunction::Year.apply(&Value::Null), None);
        assert_eq!(PartitionFunction::UnixTimestamp.apply(&Value::Timestamp { seconds: 1_700_000_000, micros: 5 }), Some(1_700_000_000));
        assert_eq!(PartitionFunction::of_name("TO_DAYS"), Some(PartitionFunction::ToDays));
        assert_eq!(PartitionFunction::of_name("abs"), None);

        // RANGE (YEAR(d)): each row by its year, NULL below every bound.
        let mut by_year = hashed(PartitionMethod::Range, false, "d", 0);
        by_year.function = Some(PartitionFunction::Year);
        by_year.by_count = false;
        by_year.partitions = [Bound::Value(Value::Int(2000)), Bound::Value(Value::Int(2010)), Bound::MaxValue]
            .into_iter()
            .enumerate()
            .map(|(i, bound)| PartitionDef { name: format!("p{i}"), values: PartitionValues::LessThan(vec![bound]), comment: None })
            .collect();
        let def = table(vec![ColumnDef::new("d", ColumnType::Date)], by_year);
        assert_eq!(id(&def, Value::Date { year: 1999, month: 12, day: 31 }).unwrap(), 0);
        assert_eq!(id(&def, date).unwrap(), 1);
        assert_eq!(id(&def, Value::Date { year: 2024, month: 1, day: 1 }).unwrap(), 2);
        assert_eq!(id(&def, Value::Null).unwrap(), 0);
    }

    #[test]
    fn unique_keys_must_hold_the_partitioning_columns() {
        let spec = TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("id", ColumnType::Long), ColumnDef::new("k", ColumnType::Long)],
            primary_key: vec!["id".into()],
            partitioning: Some(hashed(PartitionMethod::Hash, false, "k", 2)),
            ..TableSpec::default()
        };
        let error = TableDef::from_spec(1, &spec).unwrap_err();
        assert_eq!(error.mysql_code(), 1503);
        assert_eq!(error.to_string(), "A PRIMARY KEY must include all columns in the table's partitioning function");
    }
}
