//! Write_rows (30), Update_rows (31) and Delete_rows (32), version 2: the
//! row images of one statement on one table. Version 1 (23, 24, 25: what
//! MariaDB 10.x and MySQL 5.1-5.5 write) is the same event without the
//! extra-data part; version 0 (20, 21, 22: MySQL 5.1 before GA) is version
//! 1 with one column bitmap, which an Update's two images share.
//!
//! The event keeps its rows as the raw bytes it carries: decoding them
//! needs the table's Table_map ([`RowsEvent::decode_rows`]), which a reader
//! looks up by `table_id`. The constructors encode typed rows.

use crate::bytes::{ByteReader, ByteWriter};
use crate::column_type::ColumnType;
use crate::constants::EventType;
use crate::error::{DecodeError, EncodeError};
use crate::events::extra_row_info::ExtraRowInfo;
use crate::events::table_map::{TableMap, TABLE_ID_MAX};
use crate::text_charset::TextCharset;
use crate::value::{decode_value, skip_value, Value};

/// Rows event flags.
pub mod rows_flags {
    /// Last rows event of its statement: the applier releases the
    /// statement's table maps after it.
    pub const STMT_END_F: u16 = 1;
    pub const NO_FOREIGN_KEY_CHECKS_F: u16 = 2;
    pub const RELAXED_UNIQUE_CHECKS_F: u16 = 4;
    /// Every column is in the row images.
    pub const COMPLETE_ROWS_F: u16 = 8;
}

/// The extra-data length counts its own two bytes.
const EXTRA_DATA_HEADER_LENGTH: usize = 2;

/// Version 1 (MySQL 5.1-5.5, MariaDB) has no extra-data part; version 2
/// (MySQL 5.6+) has one. Version 0 (MySQL 5.1 before GA) is version 1 with
/// a single column bitmap: an Update's before and after images both hold
/// the columns it marks. The rows are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowsVersion {
    V0,
    V1,
    V2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowsKind {
    Write,
    Update,
    Delete,
}

impl RowsKind {
    pub fn event_type(self) -> u8 {
        match self {
            RowsKind::Write => EventType::WriteRows as u8,
            RowsKind::Update => EventType::UpdateRows as u8,
            RowsKind::Delete => EventType::DeleteRows as u8,
        }
    }

    pub fn from_event_type(event_type: u8) -> Option<RowsKind> {
        match EventType::from_code(event_type)? {
            EventType::WriteRows => Some(RowsKind::Write),
            EventType::UpdateRows => Some(RowsKind::Update),
            EventType::DeleteRows => Some(RowsKind::Delete),
            _ => None,
        }
    }

    /// The kind and version of a rows event type, v0, v1 or v2.
    pub fn with_version(event_type: u8) -> Option<(RowsKind, RowsVersion)> {
        match EventType::from_code(event_type)? {
            EventType::WriteRowsV0 => Some((RowsKind::Write, RowsVersion::V0)),
            EventType::UpdateRowsV0 => Some((RowsKind::Update, RowsVersion::V0)),
            EventType::DeleteRowsV0 => Some((RowsKind::Delete, RowsVersion::V0)),
            EventType::WriteRowsV1 => Some((RowsKind::Write, RowsVersion::V1)),
            EventType::UpdateRowsV1 => Some((RowsKind::Update, RowsVersion::V1)),
            EventType::DeleteRowsV1 => Some((RowsKind::Delete, RowsVersion::V1)),
            _ => RowsKind::from_event_type(event_type).map(|kind| (kind, RowsVersion::V2)),
        }
    }

    /// The event type of this kind in `version`.
    pub fn event_type_of(self, version: RowsVersion) -> u8 {
        match (version, self) {
            (RowsVersion::V2, _) => self.event_type(),
            (RowsVersion::V0, RowsKind::Write) => EventType::WriteRowsV0 as u8,
            (RowsVersion::V0, RowsKind::Update) => EventType::UpdateRowsV0 as u8,
            (RowsVersion::V0, RowsKind::Delete) => EventType::DeleteRowsV0 as u8,
            (RowsVersion::V1, RowsKind::Write) => EventType::WriteRowsV1 as u8,
            (RowsVersion::V1, RowsKind::Update) => EventType::UpdateRowsV1 as u8,
            (RowsVersion::V1, RowsKind::Delete) => EventType::DeleteRowsV1 as u8,
        }
    }

    /// Update and Delete carry the row as it was.
    pub fn has_before_image(self) -> bool {
        self != RowsKind::Write
    }

    /// Write and Update carry the row as it becomes.
    pub fn has_after_image(self) -> bool {
        self != RowsKind::Delete
    }
}

/// One row image: a value per column present in the image, in column order
/// (every column, for the full images binlogd writes).
pub type Row = Vec<Value>;

#[derive(Debug, Clone, PartialEq)]
pub enum RowChange {
    Write(Row),
    Update { before: Row, after: Row },
    Delete(Row),
}

/// | bytes | field |
/// |-------|-------|
/// | 6 | table_id |
/// | 2 | flags ([`rows_flags`]) |
/// | 2 | v2 only: extra-data length, its own 2 bytes included (>= 2) |
/// | length - 2 | v2 only: extra data (NDB and partition info, [`ExtraRowInfo`]; binlogd writes none) |
/// | 1-9 | column count (length-encoded) |
/// | (count + 7) / 8 | columns in the before image (Update, Delete; v0: in both images) |
/// | (count + 7) / 8 | columns in the after image (Write, Update; v0: Write only) |
/// | rest | rows: for each row, its before and/or after image |
///
/// An image is a null bitmap with one bit per column present in the image
/// ((present + 7) / 8 bytes, first column in the low bit, padding 0), then
/// the value of each present non-NULL column ([`crate::value`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsEvent {
    pub kind: RowsKind,
    /// V2 for every event binlogd writes; V1 from MariaDB sources and
    /// MySQL 5.1-5.5; V0 from MySQL 5.1 before GA (`columns_before` and
    /// `columns_after` of an Update are then the same bitmap).
    pub version: RowsVersion,
    pub table_id: u64,
    pub flags: u16,
    pub extra_data: Vec<u8>,
    pub column_count: usize,
    /// Bitmap of the columns in the before image; empty for Write.
    pub columns_before: Vec<u8>,
    /// Bitmap of the columns in the after image; empty for Delete.
    pub columns_after: Vec<u8>,
    /// The encoded rows.
    pub rows: Vec<u8>,
}

impl RowsEvent {
    /// An event with no rows yet whose images hold every column. Flags are
    /// 0: set `STMT_END_F` on the last event of the statement.
    pub fn empty(kind: RowsKind, table_id: u64, column_count: usize) -> RowsEvent {
        let mut all = vec![0xffu8; column_count.div_ceil(8)];
        if !column_count.is_multiple_of(8) {
            if let Some(last) = all.last_mut() {
                *last = (1u8 << (column_count % 8)) - 1;
            }
        }
        RowsEvent {
            kind,
            version: RowsVersion::V2,
            table_id,
            flags: 0,
            extra_data: Vec::new(),
            column_count,
            columns_before: if kind.has_before_image() { all.clone() } else { Vec::new() },
            columns_after: if kind.has_after_image() { all } else { Vec::new() },
            rows: Vec::new(),
        }
    }

    /// A complete statement's inserted rows (`STMT_END_F` set).
    pub fn write(table_id: u64, table: &TableMap, rows: &[Row]) -> Result<RowsEvent, EncodeError> {
        let mut event = RowsEvent::empty(RowsKind::Write, table_id, table.columns.len());
        event.flags = rows_flags::STMT_END_F;
        rows.iter().try_for_each(|row| event.push_write(table, row))?;
        Ok(event)
    }

    /// A complete statement's updated rows as (before, after) pairs.
    pub fn update(table_id: u64, table: &TableMap, rows: &[(Row, Row)]) -> Result<RowsEvent, EncodeError> {
        let mut event = RowsEvent::empty(RowsKind::Update, table_id, table.columns.len());
        event.flags = rows_flags::STMT_END_F;
        rows.iter().try_for_each(|(before, after)| event.push_update(table, before, after))?;
        Ok(event)
    }

    /// A complete statement's deleted rows.
    pub fn delete(table_id: u64, table: &TableMap, rows: &[Row]) -> Result<RowsEvent, EncodeError> {
        let mut event = RowsEvent::empty(RowsKind::Delete, table_id, table.columns.len());
        event.flags = rows_flags::STMT_END_F;
        rows.iter().try_for_each(|row| event.push_delete(table, row))?;
        Ok(event)
    }

    /// An event with no rows yet whose images hold the columns the
    /// bitmaps mark (`binlog_row_image` MINIMAL or NOBLOB); the bitmap of
    /// an image the kind lacks is ignored. Fill it with
    /// [`RowsEvent::push_full_rows`].
    pub fn with_columns(kind: RowsKind, table_id: u64, column_count: usize, before: &[u8], after: &[u8]) -> RowsEvent {
        let bitmap_length = column_count.div_ceil(8);
        let image = |present: bool, bitmap: &[u8]| {
            let mut columns = if present { bitmap.to_vec() } else { Vec::new() };
            if present {
                columns.resize(bitmap_length, 0);
            }
            columns
        };
        RowsEvent {
            kind,
            version: RowsVersion::V2,
            table_id,
            flags: 0,
            extra_data: Vec::new(),
            column_count,
            columns_before: image(kind.has_before_image(), before),
            columns_after: image(kind.has_after_image(), after),
            rows: Vec::new(),
        }
    }

    /// Encodes one row from whole rows (a value per column of the table):
    /// each image takes the columns its bitmap marks, so partial images
    /// need no copy of the row. `before` for Update and Delete, `after`
    /// for Write and Update.
    pub fn push_full_rows(&mut self, table: &TableMap, before: Option<&[Value]>, after: Option<&[Value]>) -> Result<(), EncodeError> {
        let images: &[&[Value]] = match (self.kind, before, after) {
            (RowsKind::Write, _, Some(after)) => &[after],
            (RowsKind::Delete, Some(before), _) => &[before],
            (RowsKind::Update, Some(before), Some(after)) => &[before, after],
            _ => return Err(EncodeError::invalid("row", format!("a {:?} row without its images", self.kind))),
        };
        self.push_images(table, self.kind, images, Picked::FromWholeRow)
    }

    /// Indexes of the columns in the before image (none for Write).
    pub fn before_columns(&self) -> Vec<usize> {
        present_columns(&self.columns_before, self.column_count)
    }

    /// Indexes of the columns in the after image (none for Delete).
    pub fn after_columns(&self) -> Vec<usize> {
        present_columns(&self.columns_after, self.column_count)
    }

    pub fn push_write(&mut self, table: &TableMap, row: &[Value]) -> Result<(), EncodeError> {
        self.push(table, RowsKind::Write, &[row])
    }

    pub fn push_update(&mut self, table: &TableMap, before: &[Value], after: &[Value]) -> Result<(), EncodeError> {
        self.push(table, RowsKind::Update, &[before, after])
    }

    pub fn push_delete(&mut self, table: &TableMap, row: &[Value]) -> Result<(), EncodeError> {
        self.push(table, RowsKind::Delete, &[row])
    }

    /// Encodes the images of one row onto the event's rows: a failed row
    /// is cut off again, so it leaves the event as it was. Encoded in place
    /// (no buffer per row or image): every commit of a row-based
    /// transaction runs this for each row it changed.
    fn push(&mut self, table: &TableMap, kind: RowsKind, images: &[&[Value]]) -> Result<(), EncodeError> {
        self.push_images(table, kind, images, Picked::InOrder)
    }

    fn push_images(&mut self, table: &TableMap, kind: RowsKind, images: &[&[Value]], picked: Picked) -> Result<(), EncodeError> {
        if kind != self.kind {
            return Err(EncodeError::invalid("row", format!("a {kind:?} row pushed into a {:?} event", self.kind)));
        }
        if table.columns.len() != self.column_count {
            return Err(EncodeError::invalid(
                "row",
                format!("table map has {} columns, the event {}", table.columns.len(), self.column_count),
            ));
        }
        let columns = ImageColumns::of(table);
        let start = self.rows.len();
        for (index, image) in images.iter().enumerate() {
            let bitmap = match (kind, index) {
                (RowsKind::Update, 0) | (RowsKind::Delete, _) => &self.columns_before,
                _ => &self.columns_after,
            };
            if let Err(error) = encode_image(table, &columns, bitmap, self.column_count, image, picked, &mut self.rows) {
                self.rows.truncate(start);
                return Err(error);
            }
        }
        Ok(())
    }

    /// Decodes every row with the event's table map. The map must describe
    /// the same columns (its own `table_id` is not checked: readers find it
    /// by the event's).
    pub fn decode_rows(&self, table: &TableMap) -> Result<Vec<RowChange>, DecodeError> {
        self.decode_rows_keeping(table, None)
    }

    /// [`RowsEvent::decode_rows`] whose before images hold only the
    /// columns `before_kept` marks (by column index; `None`: all). The
    /// others are read past and left NULL, their bytes not copied: an
    /// applier that finds rows by their key needs no more of them.
    pub fn decode_rows_keeping(&self, table: &TableMap, before_kept: Option<&[bool]>) -> Result<Vec<RowChange>, DecodeError> {
        if table.columns.len() != self.column_count {
            return Err(DecodeError::invalid(
                "rows event",
                format!("{} columns, but its table map has {}", self.column_count, table.columns.len()),
            ));
        }
        let columns = ImageColumns::of(table);
        let before = present_columns(&self.columns_before, self.column_count);
        let after = present_columns(&self.columns_after, self.column_count);
        let mut reader = ByteReader::new(&self.rows);
        let mut changes = Vec::new();
        while !reader.is_empty() {
            let start = reader.position();
            let change = match self.kind {
                RowsKind::Write => RowChange::Write(decode_image(table, &columns, &after, &mut reader)?),
                RowsKind::Delete => RowChange::Delete(decode_image_keeping(table, &columns, &before, before_kept, &mut reader)?),
                RowsKind::Update => RowChange::Update {
                    before: decode_image_keeping(table, &columns, &before, before_kept, &mut reader)?,
                    after: decode_image(table, &columns, &after, &mut reader)?,
                },
            };
            // Images without columns take no bytes: refuse to loop on them.
            if reader.position() == start {
                return Err(DecodeError::invalid("rows event", "row images with no columns"));
            }
            changes.push(change);
        }
        Ok(changes)
    }

    pub fn event_type(&self) -> u8 {
        self.kind.event_type_of(self.version)
    }

    /// The partition and NDB information the extra data carries (none in
    /// versions 0 and 1).
    pub fn extra_row_info(&self) -> Result<ExtraRowInfo, DecodeError> {
        ExtraRowInfo::decode(&self.extra_data, self.kind == RowsKind::Update)
    }

    pub fn into_event(self) -> crate::events::Event {
        use crate::events::Event;
        match self.kind {
            RowsKind::Write => Event::WriteRows(self),
            RowsKind::Update => Event::UpdateRows(self),
            RowsKind::Delete => Event::DeleteRows(self),
        }
    }

    pub fn encode_body(&self, out: &mut Vec<u8>) {
        assert!(self.table_id <= TABLE_ID_MAX, "table id {} does not fit 6 bytes", self.table_id);
        out.put_u48(self.table_id);
        out.put_u16(self.flags);
        match self.version {
            RowsVersion::V0 | RowsVersion::V1 => assert!(self.extra_data.is_empty(), "extra data in a version 0 or 1 rows event"),
            RowsVersion::V2 => {
                let extra_length = EXTRA_DATA_HEADER_LENGTH + self.extra_data.len();
                assert!(extra_length <= u16::MAX as usize, "rows event extra data of {} bytes", self.extra_data.len());
                out.put_u16(extra_length as u16);
                out.put_slice(&self.extra_data);
            }
        }
        out.put_packed_u64(self.column_count as u64);
        if self.version == RowsVersion::V0 && self.kind == RowsKind::Update {
            assert_eq!(self.columns_before, self.columns_after, "a version 0 Update has one column bitmap");
            out.put_slice(&self.columns_before);
        } else {
            out.put_slice(&self.columns_before);
            out.put_slice(&self.columns_after);
        }
        out.put_slice(&self.rows);
    }

    pub fn decode_body(kind: RowsKind, body: &[u8]) -> Result<RowsEvent, DecodeError> {
        RowsEvent::decode_body_version(kind, RowsVersion::V2, body)
    }

    pub fn decode_body_version(kind: RowsKind, version: RowsVersion, body: &[u8]) -> Result<RowsEvent, DecodeError> {
        let mut reader = ByteReader::new(body);
        let table_id = reader.u48("rows table_id")?;
        let flags = reader.u16("rows flags")?;
        let extra_data = match version {
            RowsVersion::V0 | RowsVersion::V1 => Vec::new(),
            RowsVersion::V2 => {
                let extra_length = reader.u16("rows extra-data length")? as usize;
                let Some(extra_data_length) = extra_length.checked_sub(EXTRA_DATA_HEADER_LENGTH) else {
                    return Err(DecodeError::invalid("rows extra-data length", format!("{extra_length} is below 2")));
                };
                let extra_data = reader.take(extra_data_length, "rows extra data")?;
                // MySQL refuses an event whose extra-data items overrun it.
                ExtraRowInfo::decode(extra_data, kind == RowsKind::Update)?;
                extra_data.to_vec()
            }
        };
        let column_count = reader.packed_u64_minimal("rows column count")?;
        let bitmap_length = usize::try_from(column_count.div_ceil(8)).unwrap_or(usize::MAX);
        let mut bitmap = |present: bool, what| -> Result<Vec<u8>, DecodeError> {
            Ok(if present { reader.take(bitmap_length, what)?.to_vec() } else { Vec::new() })
        };
        let (columns_before, columns_after) = match (version, kind) {
            (RowsVersion::V0, RowsKind::Update) => {
                let shared = bitmap(true, "rows columns")?;
                (shared.clone(), shared)
            }
            _ => {
                (bitmap(kind.has_before_image(), "rows before-image columns")?, bitmap(kind.has_after_image(), "rows after-image columns")?)
            }
        };
        Ok(RowsEvent {
            kind,
            version,
            table_id,
            flags,
            extra_data,
            // The bitmap read above bounds the count by the body's length.
            column_count: column_count as usize,
            columns_before,
            columns_after,
            rows: reader.rest().to_vec(),
        })
    }
}

/// Indexes of the columns whose bit is set (bits beyond the count ignored).
pub(crate) fn present_columns(bitmap: &[u8], column_count: usize) -> Vec<usize> {
    present_column_indexes(bitmap, column_count).collect()
}

/// [`present_columns`] without a list: encoding walks them in place.
fn present_column_indexes(bitmap: &[u8], column_count: usize) -> impl Iterator<Item = usize> + '_ {
    (0..column_count).filter(|&i| bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0))
}

/// Where an image's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Picked {
    /// One value per present column, in column order.
    InOrder,
    /// A whole row: the value of present column `c` is `values[c]`.
    FromWholeRow,
}

/// What encoding and decoding a row image needs of each column beyond
/// its type: signedness, and the character set its text is logged in
/// (text is UTF-8 in a [`Value`], in the column's own set in the event).
pub(crate) struct ImageColumns {
    unsigned: Vec<bool>,
    charsets: Vec<TextCharset>,
}

impl ImageColumns {
    pub(crate) fn of(table: &TableMap) -> ImageColumns {
        let charsets = table.collations().into_iter().map(|id| id.map_or(TextCharset::Unconverted, TextCharset::of_collation)).collect();
        ImageColumns { unsigned: table.unsigned_flags(), charsets }
    }

    /// Column `column`'s `value` onto `out`, text in the column's set.
    pub(crate) fn encode(&self, column: usize, column_type: &ColumnType, value: &Value, out: &mut Vec<u8>) -> Result<(), String> {
        crate::text_charset::encode_column_value(column_type, self.unsigned[column], self.charsets[column], value, out)
    }

    /// Column `column`'s value from `reader`, text as UTF-8.
    pub(crate) fn decode(&self, column: usize, column_type: &ColumnType, reader: &mut ByteReader<'_>) -> Result<Value, DecodeError> {
        match (decode_value(column_type, self.unsigned[column], reader)?, self.charsets[column]) {
            (Value::Bytes(bytes), charset) if charset != TextCharset::Unconverted => Ok(Value::Bytes(charset.decode(&bytes).into_owned())),
            (value, _) => Ok(value),
        }
    }
}

/// Appends one row image (null bitmap, then the non-NULL values) of the
/// columns `bitmap` marks present to `out`.
pub(crate) fn encode_image(
    table: &TableMap,
    columns: &ImageColumns,
    bitmap: &[u8],
    column_count: usize,
    values: &[Value],
    picked: Picked,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let present_count = present_column_indexes(bitmap, column_count).count();
    let expected = match picked {
        Picked::InOrder => present_count,
        Picked::FromWholeRow => column_count,
    };
    if values.len() != expected {
        return Err(EncodeError::ColumnCount { expected, found: values.len() });
    }
    let nulls_at = out.len();
    out.resize(nulls_at + present_count.div_ceil(8), 0);
    for (k, column) in present_column_indexes(bitmap, column_count).enumerate() {
        let value = match picked {
            Picked::InOrder => &values[k],
            Picked::FromWholeRow => &values[column],
        };
        let definition = &table.columns[column];
        if *value == Value::Null {
            if !definition.nullable {
                return Err(EncodeError::Value { column, reason: "NULL in a NOT NULL column".into() });
            }
            out[nulls_at + k / 8] |= 1 << (k % 8);
            continue;
        }
        columns.encode(column, &definition.column_type, value, out).map_err(|reason| EncodeError::Value { column, reason })?;
    }
    Ok(())
}

pub(crate) fn decode_image(
    table: &TableMap,
    columns: &ImageColumns,
    present: &[usize],
    reader: &mut ByteReader<'_>,
) -> Result<Row, DecodeError> {
    decode_image_keeping(table, columns, present, None, reader)
}

/// [`decode_image`] that reads the columns `kept` does not mark past,
/// leaving them NULL.
fn decode_image_keeping(
    table: &TableMap,
    columns: &ImageColumns,
    present: &[usize],
    kept: Option<&[bool]>,
    reader: &mut ByteReader<'_>,
) -> Result<Row, DecodeError> {
    let nulls = reader.take(present.len().div_ceil(8), "row null bitmap")?;
    let mut row = Vec::with_capacity(present.len());
    for (k, &column) in present.iter().enumerate() {
        let definition = &table.columns[column];
        if nulls[k / 8] & (1 << (k % 8)) != 0 {
            if !definition.nullable {
                return Err(DecodeError::invalid("row image", format!("NULL in NOT NULL column {column}")));
            }
            row.push(Value::Null);
        } else if kept.is_some_and(|kept| !kept.get(column).copied().unwrap_or(false)) {
            skip_value(&definition.column_type, columns.unsigned[column], reader)?;
            row.push(Value::Null);
        } else {
            row.push(columns.decode(column, &definition.column_type, reader)?);
        }
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column_type::ColumnType;
    use crate::events::table_map::ColumnSpec;

    fn table() -> TableMap {
        let column =
            |name: &str, column_type| ColumnSpec { name: name.into(), column_type, nullable: true, unsigned: false, collation: 45 };
        let specs = [
            column("id", ColumnType::Long),
            column("name", ColumnType::VarChar { max_length_bytes: 40 }),
            column("note", ColumnType::Blob { length_bytes: 2 }),
        ];
        TableMap::new(4, "db", "t", &specs, &[0]).unwrap()
    }

    #[test]
    fn partial_images_carry_only_their_columns() {
        // binlog_row_image=MINIMAL: the before image holds the key only.
        let map = table();
        let mut event = RowsEvent::empty(RowsKind::Update, 4, 3);
        event.columns_before = vec![0b001];
        event.columns_after = vec![0b110];
        let before = [Value::Int(7)];
        let after = [Value::Bytes(b"x".to_vec()), Value::Null];
        event.push_update(&map, &before, &after).unwrap();
        // null bitmap + INT | null bitmap (note NULL) + length + "x"
        assert_eq!(event.rows, [0, 7, 0, 0, 0, 0b10, 1, b'x']);
        assert_eq!(event.decode_rows(&map).unwrap(), [RowChange::Update { before: before.to_vec(), after: after.to_vec() }]);
        assert!(matches!(event.push_update(&map, &after, &before), Err(EncodeError::ColumnCount { .. })));
    }

    #[test]
    fn before_images_decode_only_the_kept_columns_and_after_images_whole() {
        let map = table();
        let before = vec![Value::Int(7), Value::Bytes(b"old".to_vec()), Value::Bytes(b"note".to_vec())];
        let after = vec![Value::Int(7), Value::Bytes(b"new".to_vec()), Value::Null];
        let update = RowsEvent::update(4, &map, &[(before.clone(), after.clone())]).unwrap();
        let delete = RowsEvent::delete(4, &map, &[before.clone(), after.clone()]).unwrap();
        let kept = [true, false, false];
        let key_only = vec![Value::Int(7), Value::Null, Value::Null];
        assert_eq!(
            update.decode_rows_keeping(&map, Some(&kept)).unwrap(),
            [RowChange::Update { before: key_only.clone(), after: after.clone() }]
        );
        assert_eq!(
            delete.decode_rows_keeping(&map, Some(&kept)).unwrap(),
            [RowChange::Delete(key_only.clone()), RowChange::Delete(key_only)]
        );
        assert_eq!(update.decode_rows_keeping(&map, None).unwrap(), update.decode_rows(&map).unwrap());
        // A value read past is still checked: a cut one fails as decoding it would.
        let mut cut = delete.clone();
        cut.rows.truncate(6);
        assert_eq!(cut.decode_rows_keeping(&map, Some(&kept)).is_err(), cut.decode_rows(&map).is_err());
        assert!(cut.decode_rows(&map).is_err());
    }

    #[test]
    fn whole_rows_give_each_image_the_columns_of_its_bitmap() {
        let map = table();
        let before = [Value::Int(7), Value::Bytes(b"a".to_vec()), Value::Null];
        let after = [Value::Int(7), Value::Bytes(b"x".to_vec()), Value::Null];
        let mut event = RowsEvent::with_columns(RowsKind::Update, 4, 3, &[0b001], &[0b110]);
        event.push_full_rows(&map, Some(&before), Some(&after)).unwrap();
        let mut picked = RowsEvent::with_columns(RowsKind::Update, 4, 3, &[0b001], &[0b110]);
        picked.push_update(&map, &before[..1], &after[1..]).unwrap();
        assert_eq!(event, picked);
        assert_eq!((event.before_columns(), event.after_columns()), (vec![0], vec![1, 2]));
        let mut full = RowsEvent::empty(RowsKind::Delete, 4, 3);
        full.push_full_rows(&map, Some(&before), None).unwrap();
        assert_eq!(
            full,
            RowsEvent::delete(4, &map, &[before.to_vec()])
                .map(|mut e| {
                    e.flags = 0;
                    e
                })
                .unwrap()
        );
        assert!(full.push_full_rows(&map, None, Some(&after)).is_err(), "a Delete row needs its before image");
        assert!(matches!(full.push_full_rows(&map, Some(&before[..2]), None), Err(EncodeError::ColumnCount { expected: 3, found: 2 })));
    }

    #[test]
    fn rows_need_a_table_map_with_the_same_columns_and_some_column_to_read() {
        let map = table();
        let event = RowsEvent::write(4, &map, &[vec![Value::Int(1), Value::Null, Value::Null]]).unwrap();
        let mut narrower = map.clone();
        narrower.columns.pop();
        assert!(event.decode_rows(&narrower).is_err());
        let mut no_columns = event.clone();
        no_columns.columns_after = vec![0];
        assert!(no_columns.decode_rows(&map).is_err(), "an image of no columns must not loop");
    }

    #[test]
    fn truncated_and_trailing_rows_are_errors() {
        let map = table();
        let event = RowsEvent::write(4, &map, &[vec![Value::Int(1), Value::Bytes(b"abc".to_vec()), Value::Null]]).unwrap();
        for cut in 1..event.rows.len() {
            let mut short = event.clone();
            short.rows.truncate(cut);
            assert!(short.decode_rows(&map).is_err(), "cut at {cut}");
        }
        let mut body = Vec::new();
        event.encode_body(&mut body);
        for cut in 0..10 {
            assert!(RowsEvent::decode_body(RowsKind::Write, &body[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad_extra = body.clone();
        bad_extra[8] = 1; // extra-data length below its own 2 bytes
        assert!(RowsEvent::decode_body(RowsKind::Write, &bad_extra).is_err());
    }
}
