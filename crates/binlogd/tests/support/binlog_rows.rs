//! The row images of binlog files as mysql_common, the independent
//! decoder of MySQL's encodings, reads them: one entry per row, with its
//! table and event kind, for the tests that check what the binlog carries.

use std::path::Path;

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{EventData, RowsEventData};
use mysql_common::binlog::row::BinlogRow;
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use mysql_common::Value as MValue;

/// One row of a rows event.
#[derive(Debug)]
pub struct LoggedRow {
    /// The rows event's place among the files' rows events; the rows of
    /// one event share it.
    pub event: usize,
    pub database: String,
    pub table: String,
    /// "write", "update", "partial update" or "delete".
    pub kind: &'static str,
    pub before: Option<Vec<BinlogValue<'static>>>,
    pub after: Option<Vec<BinlogValue<'static>>>,
}

impl LoggedRow {
    /// The image that holds the row's values: the before image of a
    /// delete, the after image otherwise.
    pub fn image(&self) -> &[BinlogValue<'static>] {
        let image = if self.kind == "delete" { &self.before } else { &self.after };
        image.as_deref().expect("the event carries the image")
    }
}

/// Every row of every rows event in `paths`, in order.
pub fn logged_rows<P: AsRef<Path>>(paths: &[P]) -> Vec<LoggedRow> {
    let mut rows = Vec::new();
    let mut events = 0;
    for path in paths {
        let bytes = std::fs::read(path.as_ref()).unwrap();
        read_file(&bytes, &mut events, &mut rows);
    }
    rows
}

/// Every row of every rows event in one file's bytes, in order.
pub fn logged_rows_of(file: &[u8]) -> Vec<LoggedRow> {
    let mut rows = Vec::new();
    read_file(file, &mut 0, &mut rows);
    rows
}

fn read_file(file: &[u8], events: &mut usize, rows: &mut Vec<LoggedRow>) {
    let mut binlog = BinlogFile::new(BinlogVersion::Version4, file).expect("mysql_common reads the file");
    while let Some(event) = binlog.next() {
        let event = event.expect("mysql_common reads every event");
        let Some(EventData::RowsEvent(rows_event)) = event.read_data().expect("mysql_common decodes the event") else { continue };
        let table_map = binlog.reader().get_tme(rows_event.table_id()).expect("table map precedes rows");
        let kind = match rows_event {
            RowsEventData::WriteRowsEvent(_) | RowsEventData::WriteRowsEventV1(_) => "write",
            RowsEventData::UpdateRowsEvent(_) | RowsEventData::UpdateRowsEventV1(_) => "update",
            RowsEventData::PartialUpdateRowsEvent(_) => "partial update",
            RowsEventData::DeleteRowsEvent(_) | RowsEventData::DeleteRowsEventV1(_) => "delete",
        };
        for row in rows_event.rows(table_map) {
            let (before, after) = row.expect("mysql_common decodes the row");
            rows.push(LoggedRow {
                event: *events,
                database: table_map.database_name().into_owned(),
                table: table_map.table_name().into_owned(),
                kind,
                before: before.map(BinlogRow::unwrap),
                after: after.map(BinlogRow::unwrap),
            });
        }
        *events += 1;
    }
}

/// A NULL, integer or string value as text (`None` for NULL); other kinds
/// of value fail the test.
pub fn plain_text(value: &BinlogValue) -> Option<String> {
    match value {
        BinlogValue::Value(MValue::NULL) => None,
        BinlogValue::Value(MValue::Int(v)) => Some(v.to_string()),
        BinlogValue::Value(MValue::UInt(v)) => Some(v.to_string()),
        BinlogValue::Value(MValue::Bytes(bytes)) => Some(String::from_utf8(bytes.clone()).expect("UTF-8 text")),
        other => panic!("not a NULL, integer or string: {other:?}"),
    }
}
