//! The output rows of a SELECT that needs every row before its first
//! (ORDER BY, DISTINCT, GROUP BY, aggregates), held without copying the
//! rows' values.
//!
//! An output value is a [`Cell`]: the column of the source row it reads
//! as stored (the row is shared with the engine's version, so nothing is
//! copied), or a value computed for it. The cells and ORDER BY keys of
//! all output rows lie in two flat vectors, so an output row costs no
//! allocation of its own. Sorting and DISTINCT reorder and drop row
//! numbers; values are copied once, into the result, and only for the
//! rows OFFSET and LIMIT keep.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;

use engine::collation::Collation;
use protocol::ResultSet;

use super::select::{conform, Output};
use crate::eval::value::{append_group_key, into_wire, sort_order_in, Value};

/// One output value of one row.
pub(super) enum Cell {
    /// Column `n` of the row the output row comes from, read as stored.
    Column(usize),
    Computed(Value),
}

/// One ORDER BY value of an output row: one of its outputs (an alias or
/// a position), or a value computed for the sort.
pub(super) enum SortKey {
    Output(usize),
    Computed(Value),
}

/// Every output row of a statement, in the order they were produced
/// until [`OutputRows::sort`].
pub(super) struct OutputRows {
    outputs_per_row: usize,
    keys_per_row: usize,
    /// The source row (or group's representative row) of each output row.
    sources: Vec<Arc<Vec<Value>>>,
    cells: Vec<Cell>,
    keys: Vec<SortKey>,
    /// Output row numbers in result order.
    order: Vec<usize>,
}

impl OutputRows {
    pub(super) fn new(outputs_per_row: usize, keys_per_row: usize, rows: usize) -> OutputRows {
        OutputRows {
            outputs_per_row,
            keys_per_row,
            sources: Vec::with_capacity(rows),
            cells: Vec::with_capacity(rows * outputs_per_row),
            keys: Vec::with_capacity(rows * keys_per_row),
            order: Vec::with_capacity(rows),
        }
    }

    /// Adds a row: `cells` holds one cell per output, `keys` one per
    /// ORDER BY expression; both are left empty for the next row.
    pub(super) fn push(&mut self, source: Arc<Vec<Value>>, cells: &mut Vec<Cell>, keys: &mut Vec<SortKey>) {
        debug_assert_eq!((cells.len(), keys.len()), (self.outputs_per_row, self.keys_per_row));
        self.order.push(self.sources.len());
        self.sources.push(source);
        self.cells.append(cells);
        self.keys.append(keys);
    }

    fn cell(&self, row: usize, output: usize) -> &Value {
        match &self.cells[row * self.outputs_per_row + output] {
            Cell::Column(position) => &self.sources[row][*position],
            Cell::Computed(value) => value,
        }
    }

    fn key(&self, row: usize, key: usize) -> &Value {
        match &self.keys[row * self.keys_per_row + key] {
            SortKey::Output(output) => self.cell(row, *output),
            SortKey::Computed(value) => value,
        }
    }

    /// Sorts by the ORDER BY keys, each compared under its collation and
    /// reversed where descending; rows with equal keys keep their order.
    pub(super) fn sort(&mut self, keys: &[(Collation, bool)]) {
        // Each row's keys found once, not at every comparison.
        let mut order = std::mem::take(&mut self.order);
        let width = self.keys_per_row;
        let values: Vec<&Value> = (0..self.sources.len() * width).map(|at| self.key(at / width, at % width)).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&values[a * width..][..width], &values[b * width..][..width]);
            for (index, &(collation, descending)) in keys.iter().enumerate() {
                let ordering = sort_order_in(a[index], b[index], collation);
                let ordering = if descending { ordering.reverse() } else { ordering };
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
            Ordering::Equal
        });
        drop(values);
        self.order = order;
    }

    /// Keeps the first of every set of rows whose outputs are equal, each
    /// output compared under its collation.
    pub(super) fn distinct(&mut self, collations: &[Collation]) {
        // Every row's group key in one buffer, then looked up as slices
        // of it: no allocation per row.
        let mut buffer = Vec::new();
        let mut spans = Vec::with_capacity(self.order.len());
        for &row in &self.order {
            let start = buffer.len();
            for (output, &collation) in collations.iter().enumerate() {
                append_group_key(self.cell(row, output), collation, &mut buffer);
            }
            spans.push(start..buffer.len());
        }
        let mut seen = HashSet::with_capacity(spans.len());
        let firsts: Vec<bool> = spans.into_iter().map(|span| seen.insert(&buffer[span])).collect();
        let mut firsts = firsts.into_iter();
        self.order.retain(|_| firsts.next().unwrap_or(false));
    }

    /// The rows OFFSET and LIMIT keep, in order, into `result`, each value
    /// in the form its output's type promises.
    pub(super) fn into_result(mut self, outputs: &[Output], offset: u64, limit: u64, result: &mut ResultSet) {
        let order = std::mem::take(&mut self.order);
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        for row in order.into_iter().skip(offset).take(limit) {
            let mut values = Vec::with_capacity(self.outputs_per_row);
            for (index, output) in outputs.iter().enumerate() {
                let value = match &mut self.cells[row * self.outputs_per_row + index] {
                    Cell::Column(position) => self.sources[row][*position].clone(),
                    Cell::Computed(value) => std::mem::replace(value, Value::Null),
                };
                values.push(into_wire(conform(value, &output.definition)));
            }
            result.push_row(values);
        }
    }
}
