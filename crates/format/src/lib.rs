//! MySQL 8.4 binlog (v4) events as binlogd writes and reads them, and the
//! MariaDB 10.x events a MariaDB source sends.
//!
//! Every event type is a struct with a symmetric codec: `decode_body` reads
//! the bytes between the common header and the checksum, `encode_body`
//! writes exactly those bytes back. Framing (common header, CRC32 footer)
//! lives in [`frame`], the checks of a walk over a file's events in
//! [`walk`]; the file-level layout (magic, event stream) in [`file`]. Byte tables for every event are in `docs/format.md`.

#![forbid(unsafe_code)]

pub mod bytes;
pub mod checksum;
pub mod column_type;
pub mod constants;
pub mod error;
pub mod events;
pub mod file;
pub mod frame;
pub mod gtid_set;
pub mod gtid_set_encoding;
pub mod gtid_tag;
pub mod header;
pub mod serialization;
pub mod text_charset;
pub mod value;
pub mod walk;

pub use column_type::ColumnType;
pub use constants::EventType;
pub use error::{DecodeError, EncodeError};
pub use events::{ColumnSpec, Event, MariadbGtid, RowChange, RowsEvent, RowsKind, RowsVersion, TableMap};
pub use frame::{encode_event, RawEvent};
pub use gtid_set::{Gtid, GtidSet, Tag, Tsid, Uuid};
pub use header::EventHeader;
pub use value::Value;
