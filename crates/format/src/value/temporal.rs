//! DATE, DATETIME2 and TIMESTAMP2 values in row images.
//!
//! | type | bytes | layout |
//! |------|-------|--------|
//! | DATE (10) | 3 | u24 LE: `day | month << 5 | year << 9` |
//! | DATETIME2 (18) | 5 + frac | u40 BE: `0x80_0000_0000 + ((year*13 + month) << 22 | day << 17 | hour << 12 | minute << 6 | second)` |
//! | TIMESTAMP2 (17) | 4 + frac | u32 BE: seconds since the epoch |
//!
//! The fractional part takes `(fsp + 1) / 2` big-endian bytes: fsp 1-2
//! store `micros / 10000`, 3-4 `micros / 100`, 5-6 `micros`. A value must
//! not carry more precision than its column's fsp.

use super::Value;

const DATETIME_INTEGER_OFFSET: u64 = 0x80_0000_0000;
pub const MICROS_PER_SECOND: u32 = 1_000_000;

/// Bytes of the fractional-second part for `fsp` digits.
pub fn fraction_length(fsp: u8) -> usize {
    (fsp as usize).div_ceil(2)
}

/// `micros` is below one second and has no digits beyond `fsp`.
fn check_fraction(micros: u32, fsp: u8) -> Result<(), String> {
    let unit = 10u32.pow(6 - fsp.min(6) as u32);
    if micros >= MICROS_PER_SECOND || !micros.is_multiple_of(unit) {
        return Err(format!("{micros} microseconds do not fit a fractional precision of {fsp}"));
    }
    Ok(())
}

fn encode_fraction(micros: u32, fsp: u8, out: &mut Vec<u8>) {
    let (stored, width) = match fsp {
        0 => return,
        1 | 2 => (micros / 10_000, 1),
        3 | 4 => (micros / 100, 2),
        _ => (micros, 3),
    };
    out.extend_from_slice(&stored.to_be_bytes()[4 - width..]);
}

fn decode_fraction(bytes: &[u8], fsp: u8) -> Result<u32, String> {
    let stored = bytes.iter().fold(0u32, |v, &b| (v << 8) | b as u32);
    let micros = match fsp {
        0 => 0,
        1 | 2 => stored.saturating_mul(10_000),
        3 | 4 => stored.saturating_mul(100),
        _ => stored,
    };
    check_fraction(micros, fsp)?;
    Ok(micros)
}

fn check_date(year: u16, month: u8, day: u8) -> Result<(), String> {
    // Zero parts are legal: MySQL stores '0000-00-00' and '2024-00-00'.
    if year > 9999 || month > 12 || day > 31 {
        return Err(format!("{year:04}-{month:02}-{day:02} is not a date"));
    }
    Ok(())
}

pub fn encode_date(year: u16, month: u8, day: u8, out: &mut Vec<u8>) -> Result<(), String> {
    check_date(year, month, day)?;
    let packed = day as u32 | (month as u32) << 5 | (year as u32) << 9;
    out.extend_from_slice(&packed.to_le_bytes()[..3]);
    Ok(())
}

pub fn decode_date(bytes: &[u8]) -> Result<Value, String> {
    let packed = bytes.iter().rev().fold(0u32, |v, &b| (v << 8) | b as u32);
    let (year, month, day) = ((packed >> 9) as u16, (packed >> 5 & 0xf) as u8, (packed & 0x1f) as u8);
    check_date(year, month, day)?;
    Ok(Value::Date { year, month, day })
}

/// The parts of a DATETIME value, in the order the packed form nests them;
/// not checked against a calendar until encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DateTimeParts {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micros: u32,
}

impl DateTimeParts {
    /// Year, month and day all zero: MySQL's zero date.
    pub fn is_zero_date(&self) -> bool {
        self.year == 0 && self.month == 0 && self.day == 0
    }

    /// The value a DATETIME (`with_time`) or a DATE column holds.
    pub fn value(self, with_time: bool) -> Value {
        let DateTimeParts { year, month, day, hour, minute, second, micros } = self;
        if with_time {
            Value::DateTime { year, month, day, hour, minute, second, micros }
        } else {
            Value::Date { year, month, day }
        }
    }
}

pub fn encode_datetime2(parts: DateTimeParts, fsp: u8, out: &mut Vec<u8>) -> Result<(), String> {
    let DateTimeParts { year, month, day, hour, minute, second, micros } = parts;
    check_date(year, month, day)?;
    if hour > 23 || minute > 59 || second > 59 {
        return Err(format!("{hour:02}:{minute:02}:{second:02} is not a time of day"));
    }
    check_fraction(micros, fsp)?;
    let year_month = year as u64 * 13 + month as u64;
    let packed = year_month << 22 | (day as u64) << 17 | (hour as u64) << 12 | (minute as u64) << 6 | second as u64;
    out.extend_from_slice(&(packed + DATETIME_INTEGER_OFFSET).to_be_bytes()[3..]);
    encode_fraction(micros, fsp, out);
    Ok(())
}

/// `bytes` is exactly `5 + fraction_length(fsp)` long.
pub fn decode_datetime2(bytes: &[u8], fsp: u8) -> Result<Value, String> {
    let stored = bytes[..5].iter().fold(0u64, |v, &b| (v << 8) | b as u64);
    // MySQL's DATETIME range is non-negative; the sign bit must be set.
    let Some(packed) = stored.checked_sub(DATETIME_INTEGER_OFFSET) else {
        return Err(format!("packed DATETIME {stored:#x} is negative"));
    };
    let year_month = packed >> 22;
    let parts = DateTimeParts {
        year: u16::try_from(year_month / 13).unwrap_or(u16::MAX),
        month: (year_month % 13) as u8,
        day: (packed >> 17 & 0x1f) as u8,
        hour: (packed >> 12 & 0x1f) as u8,
        minute: (packed >> 6 & 0x3f) as u8,
        second: (packed & 0x3f) as u8,
        micros: decode_fraction(&bytes[5..], fsp)?,
    };
    // Re-checking through the encoder's rules keeps the two symmetric.
    encode_datetime2(parts, fsp, &mut Vec::new())?;
    let DateTimeParts { year, month, day, hour, minute, second, micros } = parts;
    Ok(Value::DateTime { year, month, day, hour, minute, second, micros })
}

pub fn encode_timestamp2(seconds: u32, micros: u32, fsp: u8, out: &mut Vec<u8>) -> Result<(), String> {
    check_fraction(micros, fsp)?;
    out.extend_from_slice(&seconds.to_be_bytes());
    encode_fraction(micros, fsp, out);
    Ok(())
}

/// `bytes` is exactly `4 + fraction_length(fsp)` long.
pub fn decode_timestamp2(bytes: &[u8], fsp: u8) -> Result<Value, String> {
    let seconds = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let micros = decode_fraction(&bytes[4..], fsp)?;
    Ok(Value::Timestamp { seconds, micros })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetime2_matches_mysql_bytes() {
        // 2017-07-13 12:34:56.789 as DATETIME(3): MySQL's packed layout.
        let parts = DateTimeParts { year: 2017, month: 7, day: 13, hour: 12, minute: 34, second: 56, micros: 789_000 };
        let mut out = Vec::new();
        encode_datetime2(parts, 3, &mut out).unwrap();
        let year_month = 2017u64 * 13 + 7;
        let packed = (year_month << 22 | 13 << 17 | 12 << 12 | 34 << 6 | 56) + (1 << 39);
        assert_eq!(&out[..5], &packed.to_be_bytes()[3..]);
        assert_eq!(&out[5..], &7890u16.to_be_bytes());
        assert_eq!(
            decode_datetime2(&out, 3).unwrap(),
            Value::DateTime { year: 2017, month: 7, day: 13, hour: 12, minute: 34, second: 56, micros: 789_000 }
        );
    }

    #[test]
    fn fractions_finer_than_fsp_are_rejected_both_ways() {
        let mut out = Vec::new();
        assert!(encode_timestamp2(1, 123_456, 3, &mut out).is_err());
        assert!(encode_timestamp2(1, 120_000, 1, &mut out).is_err());
        assert!(encode_timestamp2(1, 100_000, 1, &mut out).is_ok());
        // fsp 1 stores tenths as hundredths: 12 would mean 0.12 s.
        assert!(decode_timestamp2(&[0, 0, 0, 1, 12], 1).is_err());
        assert!(decode_timestamp2(&[0, 0, 0, 1, 10], 1).is_ok());
    }

    #[test]
    fn date_packs_day_month_year_little_endian() {
        let mut out = Vec::new();
        encode_date(2024, 2, 29, &mut out).unwrap();
        assert_eq!(out, (29u32 | 2 << 5 | 2024 << 9).to_le_bytes()[..3]);
        assert_eq!(decode_date(&out).unwrap(), Value::Date { year: 2024, month: 2, day: 29 });
        assert!(decode_date(&[0, 0xff, 0xff]).is_err(), "year 32767");
    }
}
