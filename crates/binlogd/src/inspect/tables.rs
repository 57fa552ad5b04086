//! Table maps seen so far in a file, by table id, for decoding rows events.
//!
//! Like a replica's applier, maps live until the end of their statement:
//! a rows event with `STMT_END_F` releases them. A bound keeps a file of
//! statements that never end from growing the map without limit.

use std::collections::HashMap;
use std::rc::Rc;

use binlog_format::events::rows::rows_flags::STMT_END_F;
use binlog_format::events::PartialUpdate;
use binlog_format::{Event, RowChange, RowsEvent, TableMap};

use super::record::Extra;
use super::rows::{self, ColumnInfo};
use super::text::present;

/// Table maps kept at once; MySQL needs one per table a statement touches.
const TABLE_MAPS_MAX: usize = 4096;

#[derive(Default)]
pub struct TableMaps {
    maps: HashMap<u64, Rc<TableMap>>,
}

/// A rows event's table and decoded rows: [`RowChange`]s, or a
/// Partial_update_rows event's [`PartialUpdate`]s.
pub struct RowsContext<R = RowChange> {
    /// `None` when no Table_map for the event's table id came before it
    /// (reading started mid-statement, or the file is damaged).
    pub table: Option<Rc<TableMap>>,
    pub rows: Result<Vec<R>, String>,
}

/// A Partial_update_rows event's table and decoded rows.
pub type PartialRowsContext = RowsContext<PartialUpdate>;

/// A rows event's rows as the printers show them: the table, its columns
/// and which of them each image holds.
pub struct DecodedRows<'a, R> {
    pub table: &'a TableMap,
    pub columns: Vec<ColumnInfo>,
    /// Indexes of the columns in the before image.
    pub present_before: Vec<usize>,
    /// Indexes of the columns in the after image.
    pub present_after: Vec<usize>,
    pub rows: &'a [R],
}

impl<R> RowsContext<R> {
    /// The rows ready to print (`event` is the rows event they were
    /// decoded from, for its column bitmaps), `Ok(None)` when there is no
    /// table to show them with, or why they could not be decoded.
    pub fn decoded(&self, event: &RowsEvent) -> Result<Option<DecodedRows<'_, R>>, &str> {
        match (&self.table, &self.rows) {
            (Some(table), Ok(rows)) => Ok(Some(DecodedRows {
                table,
                columns: rows::columns(table),
                present_before: present(&event.columns_before, event.column_count),
                present_after: present(&event.columns_after, event.column_count),
                rows,
            })),
            (_, Err(error)) => Err(error),
            (None, Ok(_)) => Ok(None),
        }
    }
}

impl<R> DecodedRows<'_, R> {
    /// `` `database`.`table` ``, as mysqlbinlog -v names it.
    pub fn qualified_name(&self) -> String {
        format!("`{}`.`{}`", String::from_utf8_lossy(&self.table.database), String::from_utf8_lossy(&self.table.table))
    }
}

impl TableMaps {
    /// Remembers Table_map events; decodes rows events with theirs.
    pub fn observe(&mut self, event: &Event) -> Extra {
        match event {
            Event::TableMap(map) => {
                if self.maps.len() >= TABLE_MAPS_MAX && !self.maps.contains_key(&map.table_id) {
                    self.maps.clear();
                }
                self.maps.insert(map.table_id, Rc::new(map.clone()));
                Extra::None
            }
            Event::WriteRows(rows) | Event::UpdateRows(rows) | Event::DeleteRows(rows) => {
                let context = self.decode(rows);
                if rows.flags & STMT_END_F != 0 {
                    self.maps.clear();
                }
                Extra::Rows(context)
            }
            Event::PartialUpdateRows(partial) => {
                let rows = &partial.rows;
                let context = match self.maps.get(&rows.table_id) {
                    Some(table) => PartialRowsContext {
                        table: Some(Rc::clone(table)),
                        rows: partial.decode_rows(table).map_err(|error| error.to_string()),
                    },
                    None => PartialRowsContext { table: None, rows: Err(no_table_map(rows.table_id)) },
                };
                if rows.flags & STMT_END_F != 0 {
                    self.maps.clear();
                }
                Extra::PartialRows(context)
            }
            _ => Extra::None,
        }
    }

    fn decode(&self, rows: &RowsEvent) -> RowsContext {
        match self.maps.get(&rows.table_id) {
            Some(table) => RowsContext { table: Some(Rc::clone(table)), rows: rows.decode_rows(table).map_err(|error| error.to_string()) },
            None => RowsContext { table: None, rows: Err(no_table_map(rows.table_id)) },
        }
    }
}

fn no_table_map(table_id: u64) -> String {
    format!("no Table_map for table id {table_id} before this event")
}
