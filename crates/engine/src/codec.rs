//! Byte encodings of what leaves the engine: row changes and DDL records
//! (redo payloads) and table definitions and rows (checkpoints).
//!
//! Integers are little-endian; strings, byte strings and lists carry a u32
//! length or count first. Decoding checks every length against the bytes
//! left before allocating and rejects trailing bytes, so corrupt input is
//! an error, never a panic or a huge allocation.
//!
//! | value tag | value | then |
//! |-----------|-------|------|
//! | 0 | NULL | — |
//! | 1 | Int | i64 |
//! | 2 | UInt | u64 |
//! | 3 | Float | f32 bits |
//! | 4 | Double | f64 bits |
//! | 5 | Decimal | string |
//! | 6 | Bytes | bytes |
//! | 7 | Date | year u16, month u8, day u8 |
//! | 8 | DateTime | year u16, month, day, hour, minute, second (u8 each), micros u32 |
//! | 9 | Timestamp | seconds u32, micros u32 |
//! | 10 | Time | negative u8, hours u16, minute u8, second u8, micros u32 |
//! | 11 | Json | bytes (MySQL's binary JSON) |

use std::sync::Arc;

use binlog_format::bytes::{ByteReader, ByteWriter};
use binlog_format::{ColumnType, Gtid, Tag, Uuid, Value};

use crate::catalog::{ColumnDef, CurrentTimestamp, IndexDef, TableDef, SERVER_DEFAULT_COLLATION};
use crate::change::{ChangeKind, RowChange};
use crate::column_attributes::ColumnAttributes;
use crate::error::{EngineError, Result};
use crate::partition::{Bound, PartitionDef, PartitionFunction, PartitionMethod, PartitionValues, Partitioning};
use crate::redo::{DdlRecord, TableRename};
use crate::row::Row;

pub(crate) fn put_count(out: &mut Vec<u8>, count: usize) {
    out.put_u32(u32::try_from(count).expect("fewer than 2^32 items"));
}

pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_count(out, bytes.len());
    out.extend_from_slice(bytes);
}

pub(crate) fn put_str(out: &mut Vec<u8>, text: &str) {
    put_bytes(out, text.as_bytes());
}

/// The engine's reads beyond fixed-width integers: counts, byte strings
/// and strings carry a u32 count or length first.
pub(crate) trait CountedReads<'a> {
    /// A count of items each at least `item_bytes_min` long.
    fn count(&mut self, item_bytes_min: usize, what: &'static str) -> Result<usize>;
    fn bytes(&mut self, what: &'static str) -> Result<&'a [u8]>;
    fn string(&mut self, what: &'static str) -> Result<String>;
}

impl<'a> CountedReads<'a> for ByteReader<'a> {
    fn count(&mut self, item_bytes_min: usize, what: &'static str) -> Result<usize> {
        let count = self.u32(what)? as usize;
        if count.saturating_mul(item_bytes_min.max(1)) > self.remaining() {
            return Err(EngineError::corrupt(format!("{what}: {count} items cannot fit {} bytes", self.remaining())));
        }
        Ok(count)
    }

    fn bytes(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let length = self.u32(what)? as usize;
        Ok(self.take(length, what)?)
    }

    fn string(&mut self, what: &'static str) -> Result<String> {
        let bytes = self.bytes(what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| EngineError::corrupt(format!("{what}: not UTF-8")))
    }
}

pub fn encode_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.put_u8(0),
        Value::Int(v) => {
            out.put_u8(1);
            out.put_u64(*v as u64);
        }
        Value::UInt(v) => {
            out.put_u8(2);
            out.put_u64(*v);
        }
        Value::Float(v) => {
            out.put_u8(3);
            out.put_u32(v.to_bits());
        }
        Value::Double(v) => {
            out.put_u8(4);
            out.put_u64(v.to_bits());
        }
        Value::Decimal(text) => {
            out.put_u8(5);
            put_str(out, text);
        }
        Value::Bytes(bytes) => {
            out.put_u8(6);
            put_bytes(out, bytes);
        }
        Value::Date { year, month, day } => {
            out.put_u8(7);
            out.put_u16(*year);
            out.extend_from_slice(&[*month, *day]);
        }
        Value::DateTime { year, month, day, hour, minute, second, micros } => {
            out.put_u8(8);
            out.put_u16(*year);
            out.extend_from_slice(&[*month, *day, *hour, *minute, *second]);
            out.put_u32(*micros);
        }
        Value::Timestamp { seconds, micros } => {
            out.put_u8(9);
            out.put_u32(*seconds);
            out.put_u32(*micros);
        }
        Value::Time { negative, hours, minute, second, micros } => {
            out.put_u8(10);
            out.put_u8(u8::from(*negative));
            out.put_u16(*hours);
            out.extend_from_slice(&[*minute, *second]);
            out.put_u32(*micros);
        }
        Value::Json(document) => {
            out.put_u8(11);
            put_bytes(out, document);
        }
    }
}

pub(crate) fn read_value(reader: &mut ByteReader<'_>) -> Result<Value> {
    Ok(match reader.u8("value tag")? {
        0 => Value::Null,
        1 => Value::Int(reader.u64("Int")? as i64),
        2 => Value::UInt(reader.u64("UInt")?),
        3 => Value::Float(f32::from_bits(reader.u32("Float")?)),
        4 => Value::Double(f64::from_bits(reader.u64("Double")?)),
        5 => Value::Decimal(reader.string("Decimal")?),
        6 => Value::Bytes(reader.bytes("Bytes")?.to_vec()),
        7 => Value::Date { year: reader.u16("Date")?, month: reader.u8("Date")?, day: reader.u8("Date")? },
        8 => Value::DateTime {
            year: reader.u16("DateTime")?,
            month: reader.u8("DateTime")?,
            day: reader.u8("DateTime")?,
            hour: reader.u8("DateTime")?,
            minute: reader.u8("DateTime")?,
            second: reader.u8("DateTime")?,
            micros: reader.u32("DateTime")?,
        },
        9 => Value::Timestamp { seconds: reader.u32("Timestamp")?, micros: reader.u32("Timestamp")? },
        10 => Value::Time {
            negative: reader.u8("Time")? != 0,
            hours: reader.u16("Time")?,
            minute: reader.u8("Time")?,
            second: reader.u8("Time")?,
            micros: reader.u32("Time")?,
        },
        11 => Value::Json(reader.bytes("Json")?.to_vec()),
        tag => return Err(EngineError::corrupt(format!("value tag {tag}"))),
    })
}

pub fn encode_row(row: &Row, out: &mut Vec<u8>) {
    put_count(out, row.len());
    for value in row {
        encode_value(value, out);
    }
}

pub(crate) fn read_row(reader: &mut ByteReader<'_>) -> Result<Row> {
    let count = reader.count(1, "row")?;
    (0..count).map(|_| read_value(reader)).collect()
}

fn put_optional_row(out: &mut Vec<u8>, row: &Option<Arc<Row>>) {
    match row {
        None => out.put_u8(0),
        Some(row) => {
            out.put_u8(1);
            encode_row(row, out);
        }
    }
}

fn read_optional_row(reader: &mut ByteReader<'_>) -> Result<Option<Arc<Row>>> {
    match reader.u8("row presence")? {
        0 => Ok(None),
        1 => Ok(Some(Arc::new(read_row(reader)?))),
        other => Err(EngineError::corrupt(format!("row presence {other}"))),
    }
}

/// A transaction's changes, as a redo payload.
pub fn encode_changes(changes: &[RowChange]) -> Vec<u8> {
    let mut out = Vec::new();
    put_count(&mut out, changes.len());
    for change in changes {
        encode_change(change, &mut out);
    }
    out
}

/// [`encode_changes`] cut into parts of about `part_bytes_max` bytes each
/// (a change is never split; a part holds at least one), handed to `emit`
/// in order, so a large transaction is never encoded in one buffer.
/// Decoding each part with [`decode_changes`] and concatenating gives the
/// changes back.
pub fn encode_changes_in_parts<E>(
    changes: &[RowChange],
    part_bytes_max: usize,
    mut emit: impl FnMut(Vec<u8>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut body = Vec::new();
    let mut count = 0usize;
    for change in changes {
        encode_change(change, &mut body);
        count += 1;
        if body.len() >= part_bytes_max {
            emit(counted(count, &body))?;
            body.clear();
            count = 0;
        }
    }
    if count > 0 || changes.is_empty() {
        emit(counted(count, &body))?;
    }
    Ok(())
}

fn counted(count: usize, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    put_count(&mut out, count);
    out.extend_from_slice(body);
    out
}

fn encode_change(change: &RowChange, out: &mut Vec<u8>) {
    {
        out.put_u64(change.table);
        out.put_u8(match change.kind {
            ChangeKind::Insert => 0,
            ChangeKind::Update => 1,
            ChangeKind::Delete => 2,
        });
        put_optional_row(out, &change.before);
        put_optional_row(out, &change.after);
        match change.hidden_row_id {
            None => out.put_u8(0),
            Some(row_id) => {
                out.put_u8(1);
                out.put_u64(row_id);
            }
        }
    }
}

pub fn decode_changes(bytes: &[u8]) -> Result<Vec<RowChange>> {
    let mut reader = ByteReader::new(bytes);
    let count = reader.count(12, "changes")?;
    let mut changes = Vec::with_capacity(count);
    for _ in 0..count {
        let table = reader.u64("change table")?;
        let kind = match reader.u8("change kind")? {
            0 => ChangeKind::Insert,
            1 => ChangeKind::Update,
            2 => ChangeKind::Delete,
            other => return Err(EngineError::corrupt(format!("change kind {other}"))),
        };
        let before = read_optional_row(&mut reader)?;
        let after = read_optional_row(&mut reader)?;
        let hidden_row_id = match reader.u8("hidden row id presence")? {
            0 => None,
            1 => Some(reader.u64("hidden row id")?),
            other => return Err(EngineError::corrupt(format!("hidden row id presence {other}"))),
        };
        let images_fit = match kind {
            ChangeKind::Insert => before.is_none() && after.is_some(),
            ChangeKind::Update => before.is_some() && after.is_some(),
            ChangeKind::Delete => before.is_some() && after.is_none(),
        };
        if !images_fit {
            return Err(EngineError::corrupt(format!("{kind:?} change with the wrong images")));
        }
        changes.push(RowChange { table, kind, before, after, hidden_row_id });
    }
    reader.finish("changes")?;
    Ok(changes)
}

/// `None` as 0, a GTID as 1, its UUID and its number; a tagged GTID as 2,
/// then the tag's length (u8) and bytes after the number.
pub fn encode_gtid(gtid: Option<Gtid>, out: &mut Vec<u8>) {
    match gtid {
        None => out.put_u8(0),
        Some(gtid) => {
            out.put_u8(if gtid.is_tagged() { 2 } else { 1 });
            out.extend_from_slice(&gtid.uuid.0);
            out.put_u64(gtid.gno);
            if gtid.is_tagged() {
                out.put_u8(gtid.tag.as_str().len() as u8);
                out.extend_from_slice(gtid.tag.as_str().as_bytes());
            }
        }
    }
}

pub fn decode_gtid(bytes: &[u8]) -> Result<Option<Gtid>> {
    let mut reader = ByteReader::new(bytes);
    let gtid = match reader.u8("gtid presence")? {
        0 => None,
        presence @ (1 | 2) => {
            let uuid = Uuid(reader.take(16, "gtid uuid")?.try_into().expect("took 16 bytes"));
            let mut gtid = Gtid::new(uuid, reader.u64("gtid number")?);
            if presence == 2 {
                let length = reader.u8("gtid tag length")?;
                let tag = reader.take(length as usize, "gtid tag")?;
                gtid.tag = Tag::from_stored(tag).map_err(|error| EngineError::corrupt(format!("gtid tag: {error}")))?;
            }
            Some(gtid)
        }
        other => return Err(EngineError::corrupt(format!("gtid presence {other}"))),
    };
    reader.finish("gtid")?;
    Ok(gtid)
}

fn put_column_type(out: &mut Vec<u8>, column_type: &ColumnType) {
    out.put_u8(column_type.type_code());
    let mut metadata = Vec::new();
    column_type.encode_metadata(&mut metadata);
    put_bytes(out, &metadata);
}

fn read_column_type(reader: &mut ByteReader<'_>) -> Result<ColumnType> {
    let type_code = reader.u8("column type")?;
    let metadata = reader.bytes("column metadata")?;
    Ok(ColumnType::from_metadata(type_code, metadata))
}

/// A column's flags byte: 1 nullable, 2 unsigned, 4 auto_increment, 8 a
/// DEFAULT follows the collation (as a tagged value; without 8 the column
/// has no DEFAULT clause), 0x80 a CURRENT_TIMESTAMP byte follows that (1
/// DEFAULT CURRENT_TIMESTAMP, 2 ON UPDATE CURRENT_TIMESTAMP), 0x40
/// [`ColumnAttributes`] follow (after the DEFAULT and the CURRENT_TIMESTAMP
/// byte; without it they are all default). Definitions written without
/// 0x80 or 0x40 read as they always did.
const COLUMN_FLAGS_KNOWN: u8 = 0b1000_1111 | COLUMN_HAS_ATTRIBUTES;
const COLUMN_HAS_CURRENT_TIMESTAMP: u8 = 0x80;
const COLUMN_HAS_ATTRIBUTES: u8 = 0x40;

pub(crate) fn put_table_def(out: &mut Vec<u8>, def: &TableDef) {
    out.put_u64(def.id);
    put_str(out, &def.database);
    put_str(out, &def.name);
    out.put_u32(flagged_column_count(def));
    for column in &def.columns {
        put_str(out, &column.name);
        put_column_type(out, &column.column_type);
        let flags = u8::from(column.nullable)
            | u8::from(column.unsigned) << 1
            | u8::from(column.auto_increment) << 2
            | u8::from(column.default.is_some()) << 3
            | if column.attributes.is_default() { 0 } else { COLUMN_HAS_ATTRIBUTES };
        let current_timestamp = u8::from(column.current_timestamp.on_insert) | u8::from(column.current_timestamp.on_update) << 1;
        let flags = if current_timestamp != 0 { flags | COLUMN_HAS_CURRENT_TIMESTAMP } else { flags };
        out.put_u8(flags);
        out.put_u16(column.collation);
        if let Some(default) = &column.default {
            encode_value(default, out);
        }
        if current_timestamp != 0 {
            out.put_u8(current_timestamp);
        }
        if !column.attributes.is_default() {
            column.attributes.encode(out);
        }
    }
    put_positions(out, &def.primary_key);
    put_count(out, def.indexes.len());
    for index in &def.indexes {
        put_index_def(out, index);
    }
    out.put_u64(def.auto_increment_start);
    out.put_u32(def.next_index_id);
    if let Some(partitioning) = &def.partitioning {
        put_partitioning(out, partitioning);
    }
    if !def.comment.is_empty() {
        put_str(out, &def.comment);
    }
    if def.default_collation != SERVER_DEFAULT_COLLATION {
        out.put_u16(def.default_collation);
    }
}

/// A table definition, in order:
///
/// | field | encoding |
/// |-------|----------|
/// | id | u64 |
/// | database, name | strings (u32 length + UTF-8) |
/// | flagged column count | u32: the column count, [`TABLE_HAS_PARTITIONING`], [`TABLE_HAS_COMMENT`], [`TABLE_KEYS_BY_COLLATION`] and [`TABLE_HAS_DEFAULT_COLLATION`] in its top bits |
/// | columns | each: name, type code u8, type metadata (u32 length + bytes), flags u8 (see [`COLUMN_FLAGS_KNOWN`]), collation u16, [DEFAULT], [CURRENT_TIMESTAMP u8], [attributes] |
/// | primary key | column positions (u32 count, each u32) |
/// | indexes | u32 count, then each: id u32, name, unique u8, column positions |
/// | auto_increment start | u64 |
/// | next index id | u32 |
/// | partitioning | only with [`TABLE_HAS_PARTITIONING`], see [`put_partitioning`] |
/// | comment | only with [`TABLE_HAS_COMMENT`]: string |
/// | default collation | only with [`TABLE_HAS_DEFAULT_COLLATION`]: u16 (without it, [`SERVER_DEFAULT_COLLATION`]) |
///
/// The flags sit in the column count because a table has at most 4096
/// columns: a definition written before a flag existed never has it set,
/// so it reads as it always did, and one without the optional parts keeps
/// exactly those bytes.
fn flagged_column_count(def: &TableDef) -> u32 {
    let partitioning = if def.partitioning.is_some() { TABLE_HAS_PARTITIONING } else { 0 };
    let comment = if def.comment.is_empty() { 0 } else { TABLE_HAS_COMMENT };
    let collation = if def.keys_by_collation { TABLE_KEYS_BY_COLLATION } else { 0 };
    let default_collation = if def.default_collation == SERVER_DEFAULT_COLLATION { 0 } else { TABLE_HAS_DEFAULT_COLLATION };
    def.columns.len() as u32 | partitioning | comment | collation | default_collation
}

/// In the column count: a partitioning section follows the definition.
const TABLE_HAS_PARTITIONING: u32 = 0x8000_0000;
/// In the column count: the table's COMMENT follows the definition (after
/// the partitioning section, when there is one).
const TABLE_HAS_COMMENT: u32 = 0x4000_0000;
/// In the column count: keys hold character columns by their collation's
/// weights ([`TableDef::keys_by_collation`]); nothing follows for it.
const TABLE_KEYS_BY_COLLATION: u32 = 0x2000_0000;
/// In the column count: the table's default collation follows the
/// definition, last.
const TABLE_HAS_DEFAULT_COLLATION: u32 = 0x1000_0000;
const TABLE_FLAGS: u32 = TABLE_HAS_PARTITIONING | TABLE_HAS_COMMENT | TABLE_KEYS_BY_COLLATION | TABLE_HAS_DEFAULT_COLLATION;

/// | field | encoding |
/// |-------|----------|
/// | method | u8: 1 HASH, 2 KEY, 3 RANGE, 4 LIST, 5 RANGE COLUMNS, 6 LIST COLUMNS |
/// | flags | u8: 1 LINEAR, 2 partitions given by count, 4 a function over the column |
/// | key algorithm | u8 (0 not given) |
/// | function | with flag 4 only: u8, 1 YEAR, 2 MONTH, 3 TO_DAYS, 4 TO_SECONDS, 5 UNIX_TIMESTAMP |
/// | columns | count, then strings |
/// | partitions | count, then each: name, comment presence u8 (+ string), values tag u8 (0 hashed, 1 less than, 2 in) with the bounds (count, each tag u8 0 MAXVALUE / 1 value) or the items (count, each a count of values) |
fn put_partitioning(out: &mut Vec<u8>, partitioning: &Partitioning) {
    out.put_u8(match partitioning.method {
        PartitionMethod::Hash => 1,
        PartitionMethod::Key => 2,
        PartitionMethod::Range => 3,
        PartitionMethod::List => 4,
        PartitionMethod::RangeColumns => 5,
        PartitionMethod::ListColumns => 6,
    });
    out.put_u8(u8::from(partitioning.linear) | u8::from(partitioning.by_count) << 1 | u8::from(partitioning.function.is_some()) << 2);
    out.put_u8(partitioning.key_algorithm);
    if let Some(function) = partitioning.function {
        out.put_u8(match function {
            PartitionFunction::Year => 1,
            PartitionFunction::Month => 2,
            PartitionFunction::ToDays => 3,
            PartitionFunction::ToSeconds => 4,
            PartitionFunction::UnixTimestamp => 5,
        });
    }
    put_count(out, partitioning.columns.len());
    for column in &partitioning.columns {
        put_str(out, column);
    }
    put_count(out, partitioning.partitions.len());
    for partition in &partitioning.partitions {
        put_str(out, &partition.name);
        match &partition.comment {
            Some(comment) => {
                out.put_u8(1);
                put_str(out, comment);
            }
            None => out.put_u8(0),
        }
        match &partition.values {
            PartitionValues::Hashed => out.put_u8(0),
            PartitionValues::LessThan(bounds) => {
                out.put_u8(1);
                put_count(out, bounds.len());
                for bound in bounds {
                    match bound {
                        Bound::MaxValue => out.put_u8(0),
                        Bound::Value(value) => {
                            out.put_u8(1);
                            encode_value(value, out);
                        }
                    }
                }
            }
            PartitionValues::In(items) => {
                out.put_u8(2);
                put_count(out, items.len());
                for item in items {
                    put_count(out, item.len());
                    for value in item {
                        encode_value(value, out);
                    }
                }
            }
        }
    }
}

fn read_partitioning(reader: &mut ByteReader<'_>) -> Result<Partitioning> {
    let method = match reader.u8("partition method")? {
        1 => PartitionMethod::Hash,
        2 => PartitionMethod::Key,
        3 => PartitionMethod::Range,
        4 => PartitionMethod::List,
        5 => PartitionMethod::RangeColumns,
        6 => PartitionMethod::ListColumns,
        other => return Err(EngineError::corrupt(format!("partition method {other}"))),
    };
    let flags = reader.u8("partition flags")?;
    if flags & !0b111 != 0 {
        return Err(EngineError::corrupt(format!("partition flags {flags:#04x}")));
    }
    let key_algorithm = reader.u8("key algorithm")?;
    let function = match flags & 4 != 0 {
        false => None,
        true => Some(match reader.u8("partition function")? {
            1 => PartitionFunction::Year,
            2 => PartitionFunction::Month,
            3 => PartitionFunction::ToDays,
            4 => PartitionFunction::ToSeconds,
            5 => PartitionFunction::UnixTimestamp,
            other => return Err(EngineError::corrupt(format!("partition function {other}"))),
        }),
    };
    let columns = (0..reader.count(4, "partition columns")?).map(|_| reader.string("partition column")).collect::<Result<_>>()?;
    let partition_count = reader.count(6, "partitions")?;
    let mut partitions = Vec::with_capacity(partition_count);
    for _ in 0..partition_count {
        let name = reader.string("partition name")?;
        let comment = match reader.u8("partition comment presence")? {
            0 => None,
            1 => Some(reader.string("partition comment")?),
            other => return Err(EngineError::corrupt(format!("partition comment presence {other}"))),
        };
        let values = match reader.u8("partition values")? {
            0 => PartitionValues::Hashed,
            1 => PartitionValues::LessThan(
                (0..reader.count(1, "partition bounds")?)
                    .map(|_| match reader.u8("partition bound")? {
                        0 => Ok(Bound::MaxValue),
                        1 => Ok(Bound::Value(read_value(reader)?)),
                        other => Err(EngineError::corrupt(format!("partition bound {other}"))),
                    })
                    .collect::<Result<_>>()?,
            ),
            2 => PartitionValues::In(
                (0..reader.count(4, "partition items")?)
                    .map(|_| (0..reader.count(1, "partition item values")?).map(|_| read_value(reader)).collect::<Result<Vec<Value>>>())
                    .collect::<Result<_>>()?,
            ),
            other => return Err(EngineError::corrupt(format!("partition values {other}"))),
        };
        partitions.push(PartitionDef { name, values, comment });
    }
    Ok(Partitioning { method, linear: flags & 1 != 0, key_algorithm, columns, function, by_count: flags & 2 != 0, partitions })
}

pub(crate) fn read_table_def(reader: &mut ByteReader<'_>) -> Result<TableDef> {
    let id = reader.u64("table id")?;
    let database = reader.string("database name")?;
    let name = reader.string("table name")?;
    let flagged_count = reader.u32("columns")?;
    let column_count = (flagged_count & !TABLE_FLAGS) as usize;
    if column_count.saturating_mul(12) > reader.remaining() {
        return Err(EngineError::corrupt(format!("columns: {column_count} items cannot fit {} bytes", reader.remaining())));
    }
    let mut columns = Vec::with_capacity(column_count);
    for _ in 0..column_count {
        let name = reader.string("column name")?;
        let column_type = read_column_type(reader)?;
        let flags = reader.u8("column flags")?;
        if flags & !COLUMN_FLAGS_KNOWN != 0 {
            return Err(EngineError::corrupt(format!("column {name}: flags {flags:#04x}")));
        }
        let collation = reader.u16("collation")?;
        let default = if flags & 8 != 0 { Some(read_value(reader)?) } else { None };
        let current_timestamp = if flags & COLUMN_HAS_CURRENT_TIMESTAMP != 0 { reader.u8("current timestamp")? } else { 0 };
        if current_timestamp & !0b11 != 0 {
            return Err(EngineError::corrupt(format!("column {name}: current timestamp {current_timestamp:#04x}")));
        }
        let attributes = if flags & COLUMN_HAS_ATTRIBUTES != 0 { ColumnAttributes::decode(reader)? } else { ColumnAttributes::default() };
        columns.push(ColumnDef {
            name,
            column_type,
            nullable: flags & 1 != 0,
            unsigned: flags & 2 != 0,
            auto_increment: flags & 4 != 0,
            collation,
            default,
            attributes,
            current_timestamp: CurrentTimestamp { on_insert: current_timestamp & 1 != 0, on_update: current_timestamp & 2 != 0 },
        });
    }
    let primary_key = read_positions(reader, columns.len())?;
    let index_count = reader.count(13, "indexes")?;
    let indexes: Vec<IndexDef> = (0..index_count).map(|_| read_index_def(reader, columns.len())).collect::<Result<_>>()?;
    let auto_increment_start = reader.u64("auto_increment start")?;
    let next_index_id = reader.u32("next index id")?;
    if indexes.iter().any(|index: &IndexDef| index.id == 0 || index.id >= next_index_id) {
        return Err(EngineError::corrupt(format!("table {name}: index ids past {next_index_id}")));
    }
    let partitioning = if flagged_count & TABLE_HAS_PARTITIONING != 0 { Some(read_partitioning(reader)?) } else { None };
    let comment = if flagged_count & TABLE_HAS_COMMENT != 0 { reader.string("table comment")? } else { String::new() };
    let keys_by_collation = flagged_count & TABLE_KEYS_BY_COLLATION != 0;
    let default_collation =
        if flagged_count & TABLE_HAS_DEFAULT_COLLATION != 0 { reader.u16("table default collation")? } else { SERVER_DEFAULT_COLLATION };
    Ok(TableDef {
        id,
        database,
        name,
        columns,
        primary_key,
        indexes,
        auto_increment_start,
        next_index_id,
        partitioning,
        comment,
        keys_by_collation,
        default_collation,
    })
}

fn put_index_def(out: &mut Vec<u8>, index: &IndexDef) {
    out.put_u32(index.id);
    put_str(out, &index.name);
    out.put_u8(u8::from(index.unique));
    put_positions(out, &index.columns);
}

fn read_index_def(reader: &mut ByteReader<'_>, column_count: usize) -> Result<IndexDef> {
    let id = reader.u32("index id")?;
    let name = reader.string("index name")?;
    let unique = reader.u8("index unique")? != 0;
    let columns = read_positions(reader, column_count)?;
    Ok(IndexDef { id, name, columns, unique })
}

fn put_positions(out: &mut Vec<u8>, positions: &[usize]) {
    put_count(out, positions.len());
    for &position in positions {
        out.put_u32(position as u32);
    }
}

/// Column positions, each checked against the table's column count (an
/// index past the row would panic later).
fn read_positions(reader: &mut ByteReader<'_>, column_count: usize) -> Result<Vec<usize>> {
    let count = reader.count(4, "key columns")?;
    (0..count)
        .map(|_| {
            let position = reader.u32("key column")? as usize;
            if position >= column_count {
                return Err(EngineError::corrupt(format!("key column {position} of {column_count}")));
            }
            Ok(position)
        })
        .collect()
}

/// A DDL record, as a redo payload.
pub fn encode_ddl(record: &DdlRecord) -> Vec<u8> {
    let mut out = Vec::new();
    match record {
        DdlRecord::CreateDatabase { name, default_collation } => {
            out.put_u8(1);
            put_str(&mut out, name);
            // Only a collation other than the server's follows the name: a
            // record written before databases kept one is just the name.
            if *default_collation != SERVER_DEFAULT_COLLATION {
                out.put_u16(*default_collation);
            }
        }
        DdlRecord::AlterDatabase { name, default_collation } => {
            out.put_u8(10);
            put_str(&mut out, name);
            out.put_u16(*default_collation);
        }
        DdlRecord::DropDatabase { name } => {
            out.put_u8(2);
            put_str(&mut out, name);
        }
        DdlRecord::CreateTable { def } => {
            out.put_u8(3);
            put_table_def(&mut out, def);
        }
        DdlRecord::DropTable { table } => {
            out.put_u8(4);
            out.put_u64(*table);
        }
        DdlRecord::CreateIndex { table, index } => {
            out.put_u8(5);
            out.put_u64(*table);
            put_index_def(&mut out, index);
        }
        DdlRecord::DropIndex { table, index } => {
            out.put_u8(6);
            out.put_u64(*table);
            out.put_u32(*index);
        }
        DdlRecord::TruncateTable { table } => {
            out.put_u8(7);
            out.put_u64(*table);
        }
        DdlRecord::RebuildTable { table, def, rows, auto_increment_next } => {
            out.put_u8(8);
            out.put_u64(*table);
            put_table_def(&mut out, def);
            out.put_u64(*auto_increment_next);
            put_count(&mut out, rows.len());
            for row in rows {
                encode_row(row, &mut out);
            }
        }
        DdlRecord::RenameTables { renames } => {
            out.put_u8(9);
            put_count(&mut out, renames.len());
            for rename in renames {
                out.put_u64(rename.table);
                put_str(&mut out, &rename.database);
                put_str(&mut out, &rename.name);
            }
        }
    }
    out
}

pub fn decode_ddl(bytes: &[u8]) -> Result<DdlRecord> {
    let mut reader = ByteReader::new(bytes);
    let record = match reader.u8("ddl kind")? {
        1 => {
            let name = reader.string("database name")?;
            let default_collation = if reader.is_empty() { SERVER_DEFAULT_COLLATION } else { reader.u16("database collation")? };
            DdlRecord::CreateDatabase { name, default_collation }
        }
        10 => DdlRecord::AlterDatabase { name: reader.string("database name")?, default_collation: reader.u16("database collation")? },
        2 => DdlRecord::DropDatabase { name: reader.string("database name")? },
        3 => DdlRecord::CreateTable { def: read_table_def(&mut reader)? },
        4 => DdlRecord::DropTable { table: reader.u64("table id")? },
        5 => {
            let table = reader.u64("table id")?;
            // The table's column count is unknown here; replay checks the
            // positions against the table before using them.
            DdlRecord::CreateIndex { table, index: read_index_def(&mut reader, usize::MAX)? }
        }
        6 => DdlRecord::DropIndex { table: reader.u64("table id")?, index: reader.u32("index id")? },
        7 => DdlRecord::TruncateTable { table: reader.u64("table id")? },
        8 => {
            let table = reader.u64("table id")?;
            let def = read_table_def(&mut reader)?;
            let auto_increment_next = reader.u64("auto_increment next")?;
            let rows = (0..reader.count(4, "rebuilt rows")?).map(|_| read_row(&mut reader)).collect::<Result<Vec<Row>>>()?;
            DdlRecord::RebuildTable { table, def, rows, auto_increment_next }
        }
        9 => {
            let renames = (0..reader.count(16, "renames")?)
                .map(|_| {
                    Ok(TableRename {
                        table: reader.u64("table id")?,
                        database: reader.string("database name")?,
                        name: reader.string("table name")?,
                    })
                })
                .collect::<Result<Vec<TableRename>>>()?;
            DdlRecord::RenameTables { renames }
        }
        other => return Err(EngineError::corrupt(format!("ddl kind {other}"))),
    };
    reader.finish("ddl record")?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_round_trip_and_truncation_is_an_error() {
        let row = vec![
            Value::Null,
            Value::Int(-5),
            Value::UInt(u64::MAX),
            Value::Float(1.5),
            Value::Double(-2.25),
            Value::Decimal("-12.340".into()),
            Value::Bytes(vec![0, 255]),
            Value::Date { year: 2024, month: 2, day: 29 },
            Value::DateTime { year: 1, month: 2, day: 3, hour: 4, minute: 5, second: 6, micros: 7 },
            Value::Timestamp { seconds: 8, micros: 9 },
            Value::Time { negative: true, hours: 838, minute: 59, second: 58, micros: 7 },
        ];
        let row = Arc::new(row);
        let changes = vec![
            RowChange { table: 3, kind: ChangeKind::Insert, before: None, after: Some(Arc::clone(&row)), hidden_row_id: Some(7) },
            RowChange { table: 3, kind: ChangeKind::Delete, before: Some(row), after: None, hidden_row_id: None },
        ];
        let bytes = encode_changes(&changes);
        assert_eq!(decode_changes(&bytes).unwrap(), changes);
        for cut in 0..bytes.len() {
            assert!(decode_changes(&bytes[..cut]).is_err());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_changes(&longer).is_err());
    }

    #[test]
    fn changes_in_parts_decode_to_the_same_changes() {
        let changes: Vec<RowChange> = (0..100)
            .map(|i| RowChange {
                table: 1,
                kind: ChangeKind::Insert,
                before: None,
                after: Some(Arc::new(vec![Value::Int(i), Value::Bytes(vec![7; i as usize])])),
                hidden_row_id: None,
            })
            .collect();
        for part_bytes_max in [1, 64, 1000, 1 << 20] {
            let mut parts = Vec::new();
            encode_changes_in_parts(&changes, part_bytes_max, |part| {
                parts.push(part);
                Ok::<(), ()>(())
            })
            .unwrap();
            let whole: Vec<RowChange> = parts.iter().flat_map(|part| decode_changes(part).unwrap()).collect();
            assert_eq!(whole, changes, "parts of {part_bytes_max} bytes");
            let expected_parts = if part_bytes_max == 1 {
                100
            } else if part_bytes_max == 1 << 20 {
                1
            } else {
                parts.len()
            };
            assert_eq!(parts.len(), expected_parts);
            assert!(parts.len() > 1 || part_bytes_max == 1 << 20);
        }
        let mut parts = Vec::new();
        encode_changes_in_parts(&[], 64, |part| {
            parts.push(part);
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(parts, vec![encode_changes(&[])]);
    }

    #[test]
    fn column_defaults_round_trip_in_a_create_table_record() {
        let spec = crate::catalog::TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef::new("id", ColumnType::Long),
                ColumnDef::new("v", ColumnType::Long).with_default(Value::Int(7)),
                ColumnDef::new("n", ColumnType::Double).with_default(Value::Null),
            ],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        let record = DdlRecord::CreateTable { def: TableDef::from_spec(3, &spec).unwrap() };
        let bytes = encode_ddl(&record);
        assert_eq!(decode_ddl(&bytes).unwrap(), record);
        for cut in 0..bytes.len() {
            assert!(decode_ddl(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn current_timestamp_columns_round_trip_and_older_definitions_still_read() {
        let mut created = ColumnDef::new("created", ColumnType::Timestamp2 { fsp: 3 });
        created.current_timestamp = CurrentTimestamp { on_insert: true, on_update: false };
        let mut changed = ColumnDef::new("changed", ColumnType::DateTime2 { fsp: 0 }).with_default(Value::Null);
        changed.current_timestamp = CurrentTimestamp { on_insert: true, on_update: true };
        let spec = crate::catalog::TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("id", ColumnType::Long), created, changed, ColumnDef::new("t", ColumnType::Time2 { fsp: 6 })],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        let record = DdlRecord::CreateTable { def: TableDef::from_spec(3, &spec).unwrap() };
        let bytes = encode_ddl(&record);
        assert_eq!(decode_ddl(&bytes).unwrap(), record);
        for cut in 0..bytes.len() {
            assert!(decode_ddl(&bytes[..cut]).is_err());
        }
        // A definition without the flag (as written before it existed)
        // reads with no CURRENT_TIMESTAMP.
        let plain = DdlRecord::CreateTable {
            def: TableDef::from_spec(
                4,
                &crate::catalog::TableSpec {
                    database: "d".into(),
                    name: "p".into(),
                    columns: vec![ColumnDef::new("ts", ColumnType::Timestamp2 { fsp: 0 })],
                    ..Default::default()
                },
            )
            .unwrap(),
        };
        let DdlRecord::CreateTable { def } = decode_ddl(&encode_ddl(&plain)).unwrap() else { panic!("not a CREATE TABLE") };
        assert_eq!(def.columns[0].current_timestamp, CurrentTimestamp::default());
    }

    #[test]
    fn partitioned_definitions_round_trip_and_unpartitioned_ones_keep_their_bytes() {
        use crate::partition::{Bound, PartitionDef, PartitionMethod, PartitionValues, Partitioning};
        let partitioning = Partitioning {
            method: PartitionMethod::RangeColumns,
            linear: false,
            key_algorithm: 0,
            columns: vec!["id".into(), "name".into()],
            function: None,
            by_count: false,
            partitions: vec![
                PartitionDef {
                    name: "p0".into(),
                    values: PartitionValues::LessThan(vec![Bound::Value(Value::Int(10)), Bound::Value(Value::Bytes(b"m".to_vec()))]),
                    comment: Some("first".into()),
                },
                PartitionDef {
                    name: "p1".into(),
                    values: PartitionValues::LessThan(vec![Bound::MaxValue, Bound::MaxValue]),
                    comment: None,
                },
            ],
        };
        let spec = crate::catalog::TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("id", ColumnType::Long), ColumnDef::new("name", ColumnType::VarChar { max_length_bytes: 40 })],
            primary_key: vec!["id".into(), "name".into()],
            partitioning: Some(partitioning),
            ..Default::default()
        };
        let record = DdlRecord::CreateTable { def: TableDef::from_spec(3, &spec).unwrap() };
        let bytes = encode_ddl(&record);
        assert_eq!(decode_ddl(&bytes).unwrap(), record);
        for cut in 0..bytes.len() {
            assert!(decode_ddl(&bytes[..cut]).is_err());
        }
        let mut list = spec.clone();
        list.partitioning = Some(Partitioning {
            method: PartitionMethod::List,
            linear: false,
            key_algorithm: 0,
            columns: vec!["id".into()],
            function: None,
            by_count: false,
            partitions: vec![PartitionDef {
                name: "p0".into(),
                values: PartitionValues::In(vec![vec![Value::Int(1)], vec![Value::Null]]),
                comment: None,
            }],
        });
        let record =
            DdlRecord::RebuildTable { table: 3, def: TableDef::from_spec(3, &list).unwrap(), rows: vec![], auto_increment_next: 1 };
        assert_eq!(decode_ddl(&encode_ddl(&record)).unwrap(), record);
        // A function over the column.
        let mut by_days = list.clone();
        by_days.columns.push(ColumnDef::new("day", ColumnType::Date));
        by_days.primary_key.push("day".into());
        by_days.partitioning = Some(Partitioning {
            method: PartitionMethod::Range,
            columns: vec!["day".into()],
            function: Some(crate::partition::PartitionFunction::ToDays),
            partitions: vec![PartitionDef { name: "p0".into(), values: PartitionValues::LessThan(vec![Bound::MaxValue]), comment: None }],
            ..list.partitioning.clone().unwrap()
        });
        let record = DdlRecord::CreateTable { def: TableDef::from_spec(5, &by_days).unwrap() };
        let bytes = encode_ddl(&record);
        assert_eq!(decode_ddl(&bytes).unwrap(), record);
        for cut in 0..bytes.len() {
            assert!(decode_ddl(&bytes[..cut]).is_err());
        }
        // Without partitioning the column count has no flag: the bytes of
        // a definition are those written before partitioning existed.
        let mut plain = spec;
        plain.partitioning = None;
        let def = TableDef { keys_by_collation: false, ..TableDef::from_spec(4, &plain).unwrap() };
        let mut out = Vec::new();
        put_table_def(&mut out, &def);
        assert_eq!(&out[8 + 4 + 1 + 4 + 1..8 + 4 + 1 + 4 + 1 + 4], &2u32.to_le_bytes());
    }

    #[test]
    fn a_databases_collation_follows_its_name_and_older_records_read_as_utf8mb4() {
        let old = encode_ddl(&DdlRecord::CreateDatabase { name: "d".into(), default_collation: SERVER_DEFAULT_COLLATION });
        let mut expected = vec![1];
        put_str(&mut expected, "d");
        assert_eq!(old, expected, "the bytes written before databases kept a collation");
        let latin1 = DdlRecord::CreateDatabase { name: "d".into(), default_collation: 8 };
        let bytes = encode_ddl(&latin1);
        assert_eq!(bytes, [expected.as_slice(), &8u16.to_le_bytes()].concat());
        assert_eq!(decode_ddl(&bytes).unwrap(), latin1);
        let altered = DdlRecord::AlterDatabase { name: "d".into(), default_collation: 47 };
        assert_eq!(decode_ddl(&encode_ddl(&altered)).unwrap(), altered);
        assert!(decode_ddl(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn a_tables_default_collation_is_a_flag_and_older_definitions_read_as_utf8mb4() {
        let spec = crate::catalog::TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef { collation: 8, ..ColumnDef::new("name", ColumnType::VarChar { max_length_bytes: 10 }) }],
            default_collation: Some(8),
            ..Default::default()
        };
        let latin1 = TableDef::from_spec(3, &spec).unwrap();
        assert_eq!(latin1.default_collation, 8);
        let mut latin1_bytes = Vec::new();
        put_table_def(&mut latin1_bytes, &latin1);
        assert_eq!(read_table_def(&mut ByteReader::new(&latin1_bytes)).unwrap(), latin1);
        for cut in 0..latin1_bytes.len() {
            assert!(read_table_def(&mut ByteReader::new(&latin1_bytes[..cut])).is_err());
        }

        // The server's default is no flag and no bytes: a definition
        // written before tables kept their default reads as utf8mb4.
        let plain = TableDef { default_collation: SERVER_DEFAULT_COLLATION, ..latin1.clone() };
        let mut plain_bytes = Vec::new();
        put_table_def(&mut plain_bytes, &plain);
        let count_at = 8 + 4 + 1 + 4 + 1;
        let flagged = u32::from_le_bytes(plain_bytes[count_at..count_at + 4].try_into().unwrap());
        assert_eq!(flagged & TABLE_HAS_DEFAULT_COLLATION, 0);
        assert_eq!(read_table_def(&mut ByteReader::new(&plain_bytes)).unwrap().default_collation, SERVER_DEFAULT_COLLATION);

        // With it, the same bytes with the flag set and the id last.
        let mut expected = plain_bytes;
        expected[count_at..count_at + 4].copy_from_slice(&(flagged | TABLE_HAS_DEFAULT_COLLATION).to_le_bytes());
        expected.extend_from_slice(&8u16.to_le_bytes());
        assert_eq!(latin1_bytes, expected);
    }

    #[test]
    fn keys_by_collation_is_a_flag_and_older_definitions_read_without_it() {
        let spec = crate::catalog::TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef { collation: 45, ..ColumnDef::new("name", ColumnType::VarChar { max_length_bytes: 40 }) }],
            primary_key: vec!["name".into()],
            ..Default::default()
        };
        let current = TableDef::from_spec(3, &spec).unwrap();
        assert!(current.keys_by_collation, "a new table keys text by its collation");
        let mut bytes = Vec::new();
        put_table_def(&mut bytes, &current);
        assert_eq!(read_table_def(&mut ByteReader::new(&bytes)).unwrap(), current);

        // A definition written before the flag existed: the same bytes
        // without it, read back as byte-keyed, its keys told apart by case.
        let count_at = 8 + 4 + 1 + 4 + 1;
        bytes[count_at..count_at + 4].copy_from_slice(&1u32.to_le_bytes());
        let older = read_table_def(&mut ByteReader::new(&bytes)).unwrap();
        assert!(!older.keys_by_collation);
        let key = |def: &TableDef, text: &[u8]| crate::RowKey::from_values(def, &[Value::Bytes(text.to_vec())]);
        assert_ne!(key(&older, b"a"), key(&older, b"A"));
        assert_eq!(key(&current, b"a"), key(&current, b"A"));
    }

    #[test]
    fn table_comments_round_trip_and_definitions_without_one_keep_their_bytes() {
        let spec = crate::catalog::TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("id", ColumnType::Long)],
            primary_key: vec!["id".into()],
            comment: "orders, née «commandes»; it's kept".into(),
            ..Default::default()
        };
        let commented = TableDef::from_spec(3, &spec).unwrap();
        let record = DdlRecord::CreateTable { def: commented.clone() };
        let bytes = encode_ddl(&record);
        assert_eq!(decode_ddl(&bytes).unwrap(), record);
        for cut in 0..bytes.len() {
            assert!(decode_ddl(&bytes[..cut]).is_err());
        }

        // Without a comment the column count has no flag and nothing
        // follows: the bytes written before comments existed, which read
        // back with an empty comment.
        let plain = TableDef { comment: String::new(), keys_by_collation: false, ..commented.clone() };
        let mut plain_bytes = Vec::new();
        put_table_def(&mut plain_bytes, &plain);
        let count_at = 8 + 4 + 1 + 4 + 1;
        assert_eq!(&plain_bytes[count_at..count_at + 4], &1u32.to_le_bytes());
        assert_eq!(read_table_def(&mut ByteReader::new(&plain_bytes)).unwrap().comment, "");

        // With one, the same bytes with the flag set and the comment last.
        let mut expected = plain_bytes;
        expected[count_at..count_at + 4].copy_from_slice(&(1 | TABLE_HAS_COMMENT).to_le_bytes());
        put_str(&mut expected, &commented.comment);
        let mut commented_bytes = Vec::new();
        put_table_def(&mut commented_bytes, &TableDef { keys_by_collation: false, ..commented.clone() });
        assert_eq!(commented_bytes, expected);

        // After a partitioning section, in a rebuilt table's record.
        use crate::partition::{PartitionDef, PartitionMethod, PartitionValues, Partitioning};
        let partitioned = crate::catalog::TableSpec {
            partitioning: Some(Partitioning {
                method: PartitionMethod::Hash,
                linear: false,
                key_algorithm: 0,
                columns: vec!["id".into()],
                function: None,
                by_count: true,
                partitions: vec![PartitionDef { name: "p0".into(), values: PartitionValues::Hashed, comment: None }],
            }),
            ..spec
        };
        let record =
            DdlRecord::RebuildTable { table: 3, def: TableDef::from_spec(3, &partitioned).unwrap(), rows: vec![], auto_increment_next: 1 };
        assert_eq!(decode_ddl(&encode_ddl(&record)).unwrap(), record);
    }

    #[test]
    fn json_columns_and_documents_round_trip() {
        let spec = crate::catalog::TableSpec {
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef::new("id", ColumnType::Long), ColumnDef::new("j", ColumnType::Json)],
            primary_key: vec!["id".into()],
            ..Default::default()
        };
        let record = DdlRecord::CreateTable { def: TableDef::from_spec(3, &spec).unwrap() };
        assert_eq!(decode_ddl(&encode_ddl(&record)).unwrap(), record);
        // `[1, "a"]` in MySQL's binary JSON.
        let document = vec![0x02, 0x02, 0x00, 0x0a, 0x00, 0x05, 0x01, 0x00, 0x0c, 0x08, 0x00, 0x01, b'a'];
        let row = vec![Value::Int(1), Value::Json(document)];
        let changes = vec![RowChange { table: 3, kind: ChangeKind::Insert, before: None, after: Some(Arc::new(row)), hidden_row_id: None }];
        let bytes = encode_changes(&changes);
        assert_eq!(decode_changes(&bytes).unwrap(), changes);
        for cut in 0..bytes.len() {
            assert!(decode_changes(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn gtids_round_trip() {
        let gtid = Gtid::new(Uuid([7; 16]), 42);
        let tagged = Gtid { tag: "domain_1".parse().unwrap(), ..gtid };
        for value in [None, Some(gtid), Some(tagged)] {
            let mut bytes = Vec::new();
            encode_gtid(value, &mut bytes);
            assert_eq!(decode_gtid(&bytes).unwrap(), value);
        }
    }
}
