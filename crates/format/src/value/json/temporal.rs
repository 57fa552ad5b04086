//! DATE, TIME, DATETIME and TIMESTAMP values inside a document, stored as
//! opaque values holding MySQL's packed time (`TIME_to_longlong_packed`):
//!
//! | kind | packed i64 |
//! |------|------------|
//! | DATE | `((year * 13 + month) << 5 | day) << 41` |
//! | DATETIME, TIMESTAMP | `(((year * 13 + month) << 5 | day) << 17 | hour << 12 | minute << 6 | second) << 24 | micros` |
//! | TIME | `(hour << 12 | minute << 6 | second) << 24 | micros`, negated when negative |
//!
//! A TIMESTAMP is the wall-clock time in the session's time zone, packed
//! like a DATETIME; only its field type byte differs.

use crate::column_type::type_code;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TemporalKind {
    Date,
    Time,
    DateTime,
    Timestamp,
}

impl TemporalKind {
    /// The opaque value's field type byte (`enum_field_types`).
    pub fn field_type(self) -> u8 {
        match self {
            TemporalKind::Date => type_code::DATE,
            TemporalKind::Time => type_code::TIME,
            TemporalKind::DateTime => type_code::DATETIME,
            TemporalKind::Timestamp => type_code::TIMESTAMP,
        }
    }

    pub fn from_field_type(field_type: u8) -> Option<Self> {
        match field_type {
            type_code::DATE => Some(TemporalKind::Date),
            type_code::TIME => Some(TemporalKind::Time),
            type_code::DATETIME => Some(TemporalKind::DateTime),
            type_code::TIMESTAMP => Some(TemporalKind::Timestamp),
            _ => None,
        }
    }
}

/// A date and/or time as MySQL's `MYSQL_TIME` holds it. A DATE has zero
/// time fields; a TIME has zero date fields, `hour` up to 1023 and may be
/// `negative`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Temporal {
    pub kind: TemporalKind,
    pub negative: bool,
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u16,
    pub minute: u8,
    pub second: u8,
    pub micros: u32,
}

const PACKED_FRACTION_BITS: u32 = 24;
/// Bytes of a packed time in an opaque value (`Json_datetime::PACKED_SIZE`).
pub(super) const PACKED_LENGTH: usize = 8;

impl Temporal {
    pub fn date(year: u16, month: u8, day: u8) -> Self {
        Temporal { kind: TemporalKind::Date, negative: false, year, month, day, hour: 0, minute: 0, second: 0, micros: 0 }
    }

    pub fn time(negative: bool, hour: u16, minute: u8, second: u8, micros: u32) -> Self {
        Temporal { kind: TemporalKind::Time, negative, year: 0, month: 0, day: 0, hour, minute, second, micros }
    }

    /// A DATETIME from (year, month, day) and (hour, minute, second, micros).
    pub fn datetime(date: (u16, u8, u8), time: (u16, u8, u8, u32)) -> Self {
        let (year, month, day) = date;
        let (hour, minute, second, micros) = time;
        Temporal { kind: TemporalKind::DateTime, negative: false, year, month, day, hour, minute, second, micros }
    }

    /// A TIMESTAMP: its wall-clock time in the session's time zone.
    pub fn timestamp(date: (u16, u8, u8), time: (u16, u8, u8, u32)) -> Self {
        Temporal { kind: TemporalKind::Timestamp, ..Temporal::datetime(date, time) }
    }

    /// MySQL's packed form (`TIME_to_longlong_packed`).
    pub fn packed(&self) -> i64 {
        let ymd = ((self.year as i64 * 13 + self.month as i64) << 5) | self.day as i64;
        let hms = ((self.hour as i64) << 12) | ((self.minute as i64) << 6) | self.second as i64;
        let magnitude = match self.kind {
            TemporalKind::Date => (ymd << 17) << PACKED_FRACTION_BITS,
            TemporalKind::DateTime | TemporalKind::Timestamp => (((ymd << 17) | hms) << PACKED_FRACTION_BITS) + self.micros as i64,
            TemporalKind::Time => (hms << PACKED_FRACTION_BITS) + self.micros as i64,
        };
        if self.negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// Unpacks `packed` (`TIME_from_longlong_packed`). Refuses a value that
    /// MySQL's packing could not have written: one that does not pack back
    /// to the same number.
    pub fn from_packed(kind: TemporalKind, packed: i64) -> Result<Self, String> {
        let negative = packed < 0;
        let magnitude = packed.checked_abs().ok_or_else(|| format!("packed time {packed} is out of range"))?;
        let micros = (magnitude & ((1 << PACKED_FRACTION_BITS) - 1)) as u32;
        let integer = magnitude >> PACKED_FRACTION_BITS;
        let unpacked = match kind {
            TemporalKind::Time => Temporal {
                kind,
                negative,
                year: 0,
                month: 0,
                day: 0,
                hour: ((integer >> 12) % (1 << 10)) as u16,
                minute: ((integer >> 6) % (1 << 6)) as u8,
                second: (integer % (1 << 6)) as u8,
                micros,
            },
            _ => {
                let ymd = integer >> 17;
                let year_month = ymd >> 5;
                let hms = integer % (1 << 17);
                Temporal {
                    kind,
                    negative,
                    year: u16::try_from(year_month / 13).map_err(|_| format!("packed time {packed} has no 16-bit year"))?,
                    month: (year_month % 13) as u8,
                    day: (ymd % (1 << 5)) as u8,
                    hour: (hms >> 12) as u16,
                    minute: ((hms >> 6) % (1 << 6)) as u8,
                    second: (hms % (1 << 6)) as u8,
                    micros,
                }
            }
        };
        if unpacked.packed() != packed {
            return Err(format!("packed {kind:?} {packed:#x} is not one MySQL writes"));
        }
        Ok(unpacked)
    }

    /// As MySQL prints it inside JSON (`my_TIME_to_str` with 6 fractional
    /// digits): `2024-01-31`, `-838:59:59.000000`, `2024-01-31 23:59:59.500000`.
    pub fn to_text(&self) -> String {
        let date = format!("{:04}-{:02}-{:02}", self.year, self.month, self.day);
        let time = format!("{:02}:{:02}:{:02}.{:06}", self.hour, self.minute, self.second, self.micros);
        match self.kind {
            TemporalKind::Date => date,
            TemporalKind::Time => format!("{}{time}", if self.negative { "-" } else { "" }),
            TemporalKind::DateTime | TemporalKind::Timestamp => format!("{date} {time}"),
        }
    }
}
