//! What a renderer gets for one event: the event and what the driver
//! learned around it.

use binlog_format::{Event, EventHeader};

pub use super::tables::{PartialRowsContext, RowsContext};

pub struct EventRecord<'a> {
    /// The file as named on the command line.
    pub file: &'a str,
    /// File offset of the event's first byte (mysqlbinlog's `# at`).
    pub offset: u64,
    pub header: EventHeader,
    /// The stored CRC32, when events carry one.
    pub checksum: Option<u32>,
    pub event: &'a Event,
    pub extra: Extra,
}

impl EventRecord<'_> {
    /// Offset just past the event: what `end_log_pos` should say.
    pub fn end_offset(&self) -> u64 {
        self.offset + self.header.event_size as u64
    }
}

/// Facts beyond the event's own bytes.
pub enum Extra {
    None,
    /// A Large_transaction_header's terminating event, looked up by parsing
    /// the event at the offset it names.
    Terminating(TargetCheck),
    /// A rows event's table map and decoded rows.
    Rows(RowsContext),
    /// A Partial_update_rows event's table map and decoded rows.
    PartialRows(PartialRowsContext),
}

pub enum TargetCheck {
    /// A valid event starts there; its header.
    Found(EventHeader),
    /// Why no valid event starts there.
    Missing(String),
}
