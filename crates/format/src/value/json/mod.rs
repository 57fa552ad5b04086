//! MySQL's JSON: the document tree ([`Json`]), its binary form as MySQL 8.4
//! stores and logs it ([`binary`]), and its text form ([`text`] parses,
//! [`print`] prints as MySQL prints).
//!
//! A binary document is one type byte followed by the value of that type.
//! Inside arrays and objects every element has a value entry; literals and
//! small integers live in the entry itself (inlined), every other value
//! lives after the entries, at an offset counted from the start of its
//! container. All integers are little-endian.
//!
//! | type byte | value | bytes |
//! |-----------|-------|-------|
//! | 0x00 / 0x01 | small / large object | count, size, key entries, value entries, keys, values |
//! | 0x02 / 0x03 | small / large array | count, size, value entries, values |
//! | 0x04 | literal | 1: 0x00 null, 0x01 true, 0x02 false |
//! | 0x05 / 0x06 | int16 / uint16 | 2 |
//! | 0x07 / 0x08 | int32 / uint32 | 4 |
//! | 0x09 / 0x0a | int64 / uint64 | 8 |
//! | 0x0b | double | 8, IEEE 754 |
//! | 0x0c | utf8mb4 string | variable length, bytes |
//! | 0x0f | opaque | field type byte, variable length, bytes |
//!
//! | part of a container | small | large |
//! |---------------------|-------|-------|
//! | count (members or elements) | u16 | u32 |
//! | size (bytes of the whole container, count included) | u16 | u32 |
//! | key entry (objects only) | u16 key offset, u16 key length | u32 key offset, u16 key length |
//! | value entry | type byte, u16 offset or inlined value | type byte, u32 offset or inlined value |
//! | inlined in the value entry | literal, int16, uint16 | literal, int16, uint16, int32, uint32 |
//!
//! A container is small unless its size, its count or an offset in it
//! would not fit 16 bits; then it is large (its children are each small
//! again unless they themselves are too big). Keys are unique and sorted
//! by length, then bytewise; the keys follow the value entries in that
//! order and the values follow the keys. A variable length is 7 bits a
//! byte, least significant first, the top bit set on every byte but the
//! last (1 to 5 bytes).
//!
//! | opaque field type | bytes |
//! |-------------------|-------|
//! | NEWDECIMAL (246) | precision, scale, then the DECIMAL binary format ([`crate::value::decimal`]) |
//! | DATE (10), TIME (11), DATETIME (12), TIMESTAMP (7) | 8: i64 LE, MySQL's packed time (see [`Temporal`]) |
//! | any other | the value's bytes as MySQL had them |
//!
//! An empty binary value is the null literal (MySQL stores one for NULL in
//! a NOT NULL column outside strict mode).

pub mod binary;
pub mod print;
pub mod text;

mod object;
mod temporal;

pub use object::{key_order, Object};
pub use temporal::{Temporal, TemporalKind};

/// Arrays and objects nest at most this deep (`JSON_DOCUMENT_MAX_DEPTH`).
pub const DEPTH_MAX: usize = 100;

/// SQLSTATE of every JSON error here.
pub const SQL_STATE: &str = "22032";

/// One JSON value, as MySQL's `Json_dom` models it.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    /// Always finite: MySQL's JSON has no infinities or NaN.
    Double(f64),
    String(String),
    Array(Vec<Json>),
    Object(Object),
    /// A DECIMAL, stored as an opaque NEWDECIMAL value.
    Decimal(JsonDecimal),
    /// A DATE, TIME, DATETIME or TIMESTAMP, stored as an opaque value.
    Temporal(Temporal),
    /// Any other opaque value: the MySQL field type and its bytes.
    Opaque {
        field_type: u8,
        bytes: Vec<u8>,
    },
}

/// A DECIMAL inside a document: its text and the precision and scale it
/// is stored with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonDecimal {
    /// Canonical decimal text as [`crate::value::decimal::decode_decimal`]
    /// gives it: optional `-`, integer digits (`0` when none), then `.` and
    /// exactly `scale` digits when `scale > 0`.
    pub text: String,
    pub precision: u8,
    pub scale: u8,
}

impl JsonDecimal {
    /// `text` as DECIMAL(precision, scale), checked and made canonical.
    pub fn new(text: &str, precision: u8, scale: u8) -> Result<Self, String> {
        let mut bytes = Vec::new();
        crate::value::decimal::encode_decimal(text, precision, scale, &mut bytes)?;
        let text = crate::value::decimal::decode_decimal(&bytes, precision, scale)?;
        Ok(JsonDecimal { text, precision, scale })
    }
}

/// As MySQL prints a JSON value ([`print::to_text`]).
impl std::fmt::Display for Json {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print::to_text(self))
    }
}

impl Json {
    /// Nesting depth as MySQL counts it: a scalar is 1, `[]` is 1, `[1]` 2.
    pub fn depth(&self) -> usize {
        match self {
            Json::Array(elements) => 1 + elements.iter().map(Json::depth).max().unwrap_or(0),
            Json::Object(members) => 1 + members.iter().map(|(_, value)| value.depth()).max().unwrap_or(0),
            _ => 1,
        }
    }
}
