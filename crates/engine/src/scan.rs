//! Ordered scans over the primary key or a secondary index, between
//! bounds on a key prefix, forwards or backwards.
//!
//! A scan reads in batches: it takes the table's read lock, copies up to
//! [`BATCH_ROWS`] visible rows (examining at most [`BATCH_ENTRIES_MAX`]
//! entries), remembers where it stopped and lets go, so a long scan never
//! blocks writers for long. Its read view stays registered for its whole
//! life, so the rows it returns are one consistent snapshot even though
//! the lock comes and goes.
//!
//! Rows come in key order: primary key order, or index order with ties
//! broken by the primary key (by hidden row id for a table without one).
//! A secondary-index scan skips entries whose row's visible version no
//! longer has the entry's values, so each row appears once, in the place
//! its visible version puts it.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::ops::Bound;
use std::sync::Arc;

use binlog_format::Value;

use crate::catalog::{IndexId, TableId, PRIMARY_KEY_NAME};
use crate::engine::Shared;
use crate::error::{EngineError, Result};
use crate::key::{lower_bound, range_is_empty, split_index_entry, upper_bound, RowKey};
use crate::mvcc::{live_row, visible, CommitLookup, ReadView};
use crate::row::Row;
use crate::table::{index_prefix, Table};
use crate::transaction::Transaction;
use crate::views::ViewGuard;

/// Rows copied per batch.
pub const BATCH_ROWS: usize = 64;
/// Entries examined per batch, visible or not, bounding the lock hold.
pub const BATCH_ENTRIES_MAX: usize = 1024;

/// What to scan. Bounds are on a prefix of the key's columns: `Included(
/// vec![a])` on a key (a, b) includes every row whose a equals the value.
/// Bound values must be of the columns' kinds (`Int`/`UInt` for integers,
/// `Decimal` for DECIMAL, ...): see [`crate::key`].
#[derive(Debug, Clone, PartialEq)]
pub struct ScanSpec {
    /// `None`: the clustered index (primary key order).
    pub index: Option<String>,
    pub lower: Bound<Vec<Value>>,
    pub upper: Bound<Vec<Value>>,
    /// Further ranges, in any order and possibly overlapping: the scan
    /// reads the union of `lower..upper` and these, each row once, in key
    /// order (`k IN (...)`, `k BETWEEN a AND b OR k BETWEEN c AND d`).
    pub more_ranges: Vec<KeyRange>,
    pub reverse: bool,
}

/// A range of key prefixes, bounds as in [`ScanSpec`].
pub type KeyRange = (Bound<Vec<Value>>, Bound<Vec<Value>>);

/// A range of encoded keys: the lower bound `Included` or unbounded, the
/// upper `Excluded` or unbounded (what [`lower_bound`] and [`upper_bound`]
/// give), so two ranges overlap or touch exactly when the second's lower
/// bound is at most the first's upper.
type ByteRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// `ranges` as disjoint byte ranges in ascending key order: sorted by lower
/// bound, and each one that overlaps or touches the one before merged into
/// it, so no key lies in two of them.
fn disjoint_ranges(ranges: impl Iterator<Item = ByteRange>) -> Vec<ByteRange> {
    let mut ranges: Vec<ByteRange> = ranges.filter(|(lower, upper)| !range_is_empty(lower, upper)).collect();
    ranges.sort_by(|(a, _), (b, _)| match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => std::cmp::Ordering::Equal,
        (Bound::Unbounded, _) => std::cmp::Ordering::Less,
        (_, Bound::Unbounded) => std::cmp::Ordering::Greater,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => a.cmp(b),
    });
    let mut merged: Vec<ByteRange> = Vec::with_capacity(ranges.len());
    for (lower, upper) in ranges {
        if let Some((_, last_upper)) = merged.last_mut() {
            let reaches = match (&*last_upper, &lower) {
                (Bound::Unbounded, _) | (_, Bound::Unbounded) => true,
                (Bound::Included(end) | Bound::Excluded(end), Bound::Included(start) | Bound::Excluded(start)) => start <= end,
            };
            if reaches {
                let extends = match (&*last_upper, &upper) {
                    (Bound::Unbounded, _) => false,
                    (_, Bound::Unbounded) => true,
                    (Bound::Included(end) | Bound::Excluded(end), Bound::Included(new_end) | Bound::Excluded(new_end)) => new_end > end,
                };
                if extends {
                    *last_upper = upper;
                }
                continue;
            }
        }
        merged.push((lower, upper));
    }
    merged
}

impl ScanSpec {
    /// Every row, in primary key order.
    pub fn primary() -> ScanSpec {
        ScanSpec { index: None, lower: Bound::Unbounded, upper: Bound::Unbounded, more_ranges: Vec::new(), reverse: false }
    }

    /// Every row, in the order of index `name`.
    pub fn index(name: impl Into<String>) -> ScanSpec {
        ScanSpec { index: Some(name.into()), ..ScanSpec::primary() }
    }

    pub fn lower(mut self, bound: Bound<Vec<Value>>) -> ScanSpec {
        self.lower = bound;
        self
    }

    pub fn upper(mut self, bound: Bound<Vec<Value>>) -> ScanSpec {
        self.upper = bound;
        self
    }

    /// Rows whose key starts with `values`.
    pub fn equal(self, values: Vec<Value>) -> ScanSpec {
        self.lower(Bound::Included(values.clone())).upper(Bound::Included(values))
    }

    pub fn reversed(mut self) -> ScanSpec {
        self.reverse = !self.reverse;
        self
    }
}

/// An ordered scan; yields each row with its clustered key (for
/// [`Transaction::update`] and [`Transaction::delete`]). It reads as its
/// transaction `'t`; [`Scan::detach`] makes one that outlives the borrow.
pub struct Scan<'t> {
    shared: Arc<Shared>,
    transaction: PhantomData<&'t Transaction>,
    table: Arc<Table>,
    /// `None` for the clustered index; else the index and its column count.
    index: Option<(IndexId, usize)>,
    view: ReadView,
    _view_guard: Option<ViewGuard>,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    /// The ranges still to read after `lower..upper`, next first.
    next_ranges: VecDeque<ByteRange>,
    reverse: bool,
    /// Rows found and not yet returned, shared with their versions: a
    /// reader that only looks at a row ([`Scan::next_shared`]) never copies it.
    buffer: VecDeque<(RowKey, Arc<Row>)>,
    /// Whether rows come with their clustered keys; a reader that never
    /// changes them ([`Scan::rows_only`]) saves a key copy per row.
    keys: bool,
    exhausted: bool,
}

impl Transaction {
    /// Scans `table` as this transaction sees it (its REPEATABLE READ
    /// view, or a new view for this scan under READ COMMITTED).
    pub fn scan(&self, table: TableId, spec: &ScanSpec) -> Result<Scan<'_>> {
        self.ensure_active()?;
        match self.repeatable_view_seq() {
            Some(seq) => Scan::new(self, table, spec, seq, None),
            None => {
                let guard = self.shared.views.open(&self.shared.commits);
                Scan::new(self, table, spec, guard.seq, Some(guard))
            }
        }
    }

    /// Scans as of the latest commit whatever the isolation level: what
    /// UPDATE and DELETE look for rows with.
    pub(crate) fn scan_latest(&self, table: TableId, spec: &ScanSpec) -> Result<Scan<'_>> {
        let guard = self.shared.views.open(&self.shared.commits);
        Scan::new(self, table, spec, guard.seq, Some(guard))
    }
}

impl<'t> Scan<'t> {
    fn new(trx: &'t Transaction, table_id: TableId, spec: &ScanSpec, seq: u64, guard: Option<ViewGuard>) -> Result<Scan<'t>> {
        let table = trx.shared.table(table_id)?;
        let def = table.def();
        let (index, key_columns) = match &spec.index {
            None => {
                let bounded = spec.lower != Bound::Unbounded || spec.upper != Bound::Unbounded;
                if bounded && !def.has_primary_key() {
                    return Err(EngineError::NoSuchIndex { key: PRIMARY_KEY_NAME.to_string(), table: def.name.clone() });
                }
                (None, def.primary_key.as_slice())
            }
            Some(name) => {
                let index = def.index(name)?;
                (Some((index.id, index.columns.len())), index.columns.as_slice())
            }
        };
        let bytes = |(lower, upper): (&Bound<Vec<Value>>, &Bound<Vec<Value>>)| -> ByteRange {
            (
                lower_bound(lower.as_ref().map(Vec::as_slice), &def, key_columns),
                upper_bound(upper.as_ref().map(Vec::as_slice), &def, key_columns),
            )
        };
        let first = bytes((&spec.lower, &spec.upper));
        let mut ranges: VecDeque<ByteRange> = match spec.more_ranges.is_empty() {
            true => VecDeque::from([first]),
            false => {
                let more = spec.more_ranges.iter().map(|(lower, upper)| bytes((lower, upper)));
                disjoint_ranges(std::iter::once(first).chain(more)).into()
            }
        };
        if spec.reverse {
            ranges.make_contiguous().reverse();
        }
        // All ranges empty: one empty range, which the first fill ends on.
        let (lower, upper) = ranges.pop_front().unwrap_or((Bound::Included(Vec::new()), Bound::Excluded(Vec::new())));
        Ok(Scan {
            shared: Arc::clone(&trx.shared),
            transaction: PhantomData,
            table,
            index,
            view: ReadView { seq, reader: trx.id },
            _view_guard: guard,
            lower,
            upper,
            next_ranges: ranges,
            reverse: spec.reverse,
            buffer: VecDeque::new(),
            keys: true,
            exhausted: false,
        })
    }

    /// The rest of this scan, no longer borrowing its transaction: a
    /// result streamed to a client after its statement's transaction
    /// ended (an autocommit SELECT). It reads the same snapshot: a
    /// REPEATABLE READ view, which the transaction held, is registered
    /// again for the scan, so purge keeps what it reads. Rows the
    /// transaction itself wrote stay visible only while it is open.
    pub fn detach(self) -> Scan<'static> {
        let view_guard = match self._view_guard {
            Some(guard) => guard,
            // Safe to register at an older sequence number: the
            // transaction's own view, borrowed until now, holds purge
            // back to it.
            None => self.shared.views.open_at(self.view.seq),
        };
        Scan {
            shared: self.shared,
            transaction: PhantomData,
            table: self.table,
            index: self.index,
            view: self.view,
            _view_guard: Some(view_guard),
            lower: self.lower,
            upper: self.upper,
            next_ranges: self.next_ranges,
            reverse: self.reverse,
            buffer: self.buffer,
            keys: self.keys,
            exhausted: self.exhausted,
        }
    }

    fn fill(&mut self) {
        if range_is_empty(&self.lower, &self.upper) {
            self.next_range();
            return;
        }
        let data = self.table.data.read();
        let mut lookup = CommitLookup::new(&self.shared.commits);
        let range = (self.lower.as_ref().map(Vec::as_slice), self.upper.as_ref().map(Vec::as_slice));
        let mut examined = 0;
        let mut last = None;
        let mut ended = true;
        match self.index {
            None => {
                let entries = data.rows.range::<[u8], _>(range);
                let entries: Box<dyn Iterator<Item = _>> = if self.reverse { Box::new(entries.rev()) } else { Box::new(entries) };
                for (key, chain) in entries {
                    if examined == BATCH_ENTRIES_MAX || self.buffer.len() == BATCH_ROWS {
                        ended = false;
                        break;
                    }
                    examined += 1;
                    last = Some(key);
                    if let Some(row) = live_row(visible(chain, &self.view, &mut lookup)) {
                        let key = if self.keys { key.clone() } else { Vec::new() };
                        self.buffer.push_back((RowKey(key), Arc::clone(row)));
                    }
                }
            }
            Some((index_id, column_count)) => {
                // A dropped index ends the scan.
                let Some(position) = data.def.index_position(index_id) else {
                    self.exhausted = true;
                    return;
                };
                let entries = data.indexes[position].range::<[u8], _>(range);
                let entries: Box<dyn Iterator<Item = _>> = if self.reverse { Box::new(entries.rev()) } else { Box::new(entries) };
                for entry in entries {
                    if examined == BATCH_ENTRIES_MAX || self.buffer.len() == BATCH_ROWS {
                        ended = false;
                        break;
                    }
                    examined += 1;
                    last = Some(entry);
                    let Some((prefix, key)) = split_index_entry(entry, column_count) else { continue };
                    let chain = data.rows.get(key).map(Vec::as_slice).unwrap_or_default();
                    if let Some(row) = live_row(visible(chain, &self.view, &mut lookup)) {
                        if index_prefix(&data.def, position, row) == prefix {
                            let key = if self.keys { key.to_vec() } else { Vec::new() };
                            self.buffer.push_back((RowKey(key), Arc::clone(row)));
                        }
                    }
                }
            }
        }
        if let Some(last) = last {
            let resume = Bound::Excluded(last.clone());
            if self.reverse {
                self.upper = resume;
            } else {
                self.lower = resume;
            }
        }
        drop(lookup);
        drop(data);
        if ended {
            self.next_range();
        }
    }

    /// Moves on to the next range, or ends the scan after the last.
    fn next_range(&mut self) {
        match self.next_ranges.pop_front() {
            Some((lower, upper)) => (self.lower, self.upper) = (lower, upper),
            None => self.exhausted = true,
        }
    }
}

impl Scan<'_> {
    /// This scan without the rows' clustered keys: for a reader that only
    /// evaluates and sends rows ([`Scan::next_shared`]), which then costs
    /// no copy of a key per row. Such a scan is no [`Iterator`].
    pub fn rows_only(mut self) -> Self {
        self.keys = false;
        self
    }

    /// The next row as its version holds it, without copying its values:
    /// for readers that only evaluate and send it (SELECT). A reader that
    /// changes rows takes them owned, with their keys, through
    /// [`Iterator::next`].
    pub fn next_shared(&mut self) -> Option<Arc<Row>> {
        self.next_with_key().map(|(_, row)| row)
    }

    fn next_with_key(&mut self) -> Option<(RowKey, Arc<Row>)> {
        loop {
            if let Some(item) = self.buffer.pop_front() {
                return Some(item);
            }
            if self.exhausted {
                return None;
            }
            self.fill();
        }
    }
}

impl Iterator for Scan<'_> {
    type Item = (RowKey, Row);

    fn next(&mut self) -> Option<(RowKey, Row)> {
        assert!(self.keys, "a rows_only scan has no keys to give");
        self.next_with_key().map(|(key, row)| (key, Arc::unwrap_or_clone(row)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(lower: u8, upper: u8) -> ByteRange {
        (Bound::Included(vec![lower]), Bound::Excluded(vec![upper]))
    }

    #[test]
    fn ranges_are_sorted_and_overlapping_or_touching_ones_merged() {
        let merged = disjoint_ranges([range(20, 30), range(1, 5), range(3, 8), range(8, 10), range(25, 26), range(12, 12)].into_iter());
        assert_eq!(merged, [range(1, 10), range(20, 30)]);
    }

    #[test]
    fn an_unbounded_range_swallows_the_ranges_it_reaches() {
        let below = (Bound::Unbounded, Bound::Excluded(vec![5]));
        let above = (Bound::Included(vec![9]), Bound::Unbounded);
        let merged = disjoint_ranges([range(7, 8), above.clone(), range(3, 6), below, range(10, 12)].into_iter());
        assert_eq!(merged, [(Bound::Unbounded, Bound::Excluded(vec![6])), range(7, 8), above]);
    }
}
