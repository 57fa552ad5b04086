//! TIME2 and YEAR values in row images.
//!
//! | type | bytes | layout |
//! |------|-------|--------|
//! | TIME2 (19) | 3 + frac | see below |
//! | YEAR (13) | 1 | `year - 1900`, 0 for the zero year `0000` |
//!
//! TIME2 (MySQL `my_time_packed_to_binary`): the packed time is
//! `(hour << 12 | minute << 6 | second) << 24 | micros`, negated for a
//! negative time. fsp 0 stores `0x800000 + (packed >> 24)` as a u24 BE;
//! fsp 1-2 add one byte of `frac / 10000` and fsp 3-4 a u16 BE of
//! `frac / 100`, where the integer part is `packed >> 24` (an arithmetic
//! shift, so a negative time with a fraction rounds its integer part down)
//! and `frac` is the C remainder `packed % 2^24` (negative then); fsp 5-6
//! store `packed + 0x8000_0000_0000` as a u48 BE.

use super::temporal::{fraction_length, MICROS_PER_SECOND};
use super::Value;

const TIME_INTEGER_OFFSET: i64 = 0x80_0000;
const TIME_OFFSET: i64 = 0x8000_0000_0000;
const FRACTION_BITS: u32 = 24;
/// MySQL's TIME range is ±838:59:59.
pub const TIME_HOURS_MAX: u16 = 838;
/// YEAR stores 1901..=2155 as one byte above 1900, and 0 for `0000`.
pub const YEAR_MIN: i64 = 1901;
pub const YEAR_MAX: i64 = 2155;

/// A TIME value's parts; `negative` is never set on a zero time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeParts {
    pub negative: bool,
    pub hours: u16,
    pub minute: u8,
    pub second: u8,
    pub micros: u32,
}

fn check_time(parts: TimeParts, fsp: u8) -> Result<(), String> {
    let TimeParts { negative, hours, minute, second, micros } = parts;
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    if hours > TIME_HOURS_MAX || minute > 59 || second > 59 || micros >= MICROS_PER_SECOND || !micros.is_multiple_of(unit) {
        return Err(format!("{hours}:{minute:02}:{second:02}.{micros:06} is not a TIME of precision {fsp}"));
    }
    if negative && hours == 0 && minute == 0 && second == 0 && micros == 0 {
        return Err("a negative zero TIME".to_string());
    }
    Ok(())
}

fn packed(parts: TimeParts) -> i64 {
    let clock = i64::from(parts.hours) << 12 | i64::from(parts.minute) << 6 | i64::from(parts.second);
    let magnitude = clock << FRACTION_BITS | i64::from(parts.micros);
    if parts.negative {
        -magnitude
    } else {
        magnitude
    }
}

pub fn encode_time2(parts: TimeParts, fsp: u8, out: &mut Vec<u8>) -> Result<(), String> {
    check_time(parts, fsp)?;
    let packed = packed(parts);
    let integer = packed >> FRACTION_BITS;
    // C's %: the remainder takes the sign of the packed value.
    let fraction = packed % (1 << FRACTION_BITS);
    let put_integer = |out: &mut Vec<u8>| out.extend_from_slice(&((TIME_INTEGER_OFFSET + integer) as u32).to_be_bytes()[1..]);
    match fsp {
        0 => put_integer(out),
        1 | 2 => {
            put_integer(out);
            out.push((fraction / 10_000) as i8 as u8);
        }
        3 | 4 => {
            put_integer(out);
            out.extend_from_slice(&((fraction / 100) as i16).to_be_bytes());
        }
        _ => out.extend_from_slice(&((packed + TIME_OFFSET) as u64).to_be_bytes()[2..]),
    }
    Ok(())
}

/// `bytes` is exactly `3 + fraction_length(fsp)` long.
pub fn decode_time2(bytes: &[u8], fsp: u8) -> Result<Value, String> {
    let u24 = |b: &[u8]| i64::from(b[0]) << 16 | i64::from(b[1]) << 8 | i64::from(b[2]);
    let packed = match fsp {
        0 => (u24(bytes) - TIME_INTEGER_OFFSET) << FRACTION_BITS,
        1..=4 => {
            let mut integer = u24(bytes) - TIME_INTEGER_OFFSET;
            let (mut fraction, wrap, unit) = if fsp <= 2 {
                (i64::from(bytes[3]), 0x100, 10_000)
            } else {
                (i64::from(u16::from_be_bytes([bytes[3], bytes[4]])), 0x1_0000, 100)
            };
            if integer < 0 && fraction > 0 {
                integer += 1;
                fraction -= wrap;
            }
            (integer << FRACTION_BITS) + fraction * unit
        }
        _ => bytes[..6].iter().fold(0i64, |v, &b| v << 8 | i64::from(b)) - TIME_OFFSET,
    };
    let negative = packed < 0;
    let magnitude = packed.unsigned_abs();
    let clock = magnitude >> FRACTION_BITS;
    let parts = TimeParts {
        negative,
        hours: u16::try_from(clock >> 12).unwrap_or(u16::MAX),
        minute: (clock >> 6 & 0x3f) as u8,
        second: (clock & 0x3f) as u8,
        micros: (magnitude & ((1 << FRACTION_BITS) - 1)) as u32,
    };
    // Re-encoding checks the range and that the bytes were canonical.
    let mut again = Vec::with_capacity(bytes.len());
    encode_time2(parts, fsp, &mut again)?;
    if again != bytes[..3 + fraction_length(fsp)] {
        return Err(format!("TIME2 bytes {bytes:02x?} are not canonical"));
    }
    let TimeParts { negative, hours, minute, second, micros } = parts;
    Ok(Value::Time { negative, hours, minute, second, micros })
}

pub fn encode_year(year: i64, out: &mut Vec<u8>) -> Result<(), String> {
    match year {
        0 => out.push(0),
        YEAR_MIN..=YEAR_MAX => out.push((year - 1900) as u8),
        _ => return Err(format!("{year} is not a YEAR (0 or {YEAR_MIN}..={YEAR_MAX})")),
    }
    Ok(())
}

pub fn decode_year(byte: u8) -> Value {
    Value::Int(if byte == 0 { 0 } else { 1900 + i64::from(byte) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(negative: bool, hours: u16, minute: u8, second: u8, micros: u32) -> TimeParts {
        TimeParts { negative, hours, minute, second, micros }
    }

    fn encoded(parts: TimeParts, fsp: u8) -> Vec<u8> {
        let mut out = Vec::new();
        encode_time2(parts, fsp, &mut out).unwrap();
        out
    }

    #[test]
    fn time2_matches_mysql_bytes() {
        // MySQL 8.4: TIME '00:00:00' is 80 00 00; '838:59:59' is
        // 0x800000 + (838 << 12 | 59 << 6 | 59) = b4 6e fb; '-838:59:59' is
        // 0x800000 - that = 4b 91 05.
        assert_eq!(encoded(time(false, 0, 0, 0, 0), 0), [0x80, 0, 0]);
        assert_eq!(encoded(time(false, 838, 59, 59, 0), 0), [0xb4, 0x6e, 0xfb]);
        assert_eq!(encoded(time(true, 838, 59, 59, 0), 0), [0x4b, 0x91, 0x05]);
        // '-00:00:00.5' as TIME(1): the integer part rounds down to -1
        // (7f ff ff) and the fraction byte is (char)-50 = ce.
        assert_eq!(encoded(time(true, 0, 0, 0, 500_000), 1), [0x7f, 0xff, 0xff, 0xce]);
        // '12:34:56.789' as TIME(3): fraction 7890 as u16 BE.
        assert_eq!(encoded(time(false, 12, 34, 56, 789_000), 3), [0x80, 0xc8, 0xb8, 0x1e, 0xd2]);
        // TIME(6) is one 48-bit number.
        let packed = (12i64 << 12 | 34 << 6 | 56) << 24 | 789_012;
        assert_eq!(encoded(time(false, 12, 34, 56, 789_012), 6), ((packed + TIME_OFFSET) as u64).to_be_bytes()[2..]);
    }

    #[test]
    fn time2_round_trips_at_every_precision() {
        for fsp in 0..=6u8 {
            // The smallest fraction the precision holds (none at fsp 0).
            let unit = 10u32.pow(6 - u32::from(fsp)) % 1_000_000;
            for parts in [
                time(false, 0, 0, 0, 0),
                time(true, 0, 0, 1, 0),
                time(true, 0, 0, 1, unit),
                time(true, 838, 59, 59, 0),
                time(false, 838, 59, 59, 999_999 / unit.max(1) * unit),
                time(true, 1, 2, 3, 9 * unit),
                time(true, 25, 0, 0, 5 * unit),
            ] {
                let bytes = encoded(parts, fsp);
                assert_eq!(bytes.len(), 3 + fraction_length(fsp));
                let TimeParts { negative, hours, minute, second, micros } = parts;
                assert_eq!(
                    decode_time2(&bytes, fsp).unwrap(),
                    Value::Time { negative, hours, minute, second, micros },
                    "{parts:?} fsp {fsp}"
                );
            }
        }
    }

    #[test]
    fn time2_refuses_what_mysql_cannot_hold() {
        let mut out = Vec::new();
        assert!(encode_time2(time(false, 839, 0, 0, 0), 0, &mut out).is_err());
        assert!(encode_time2(time(false, 1, 60, 0, 0), 0, &mut out).is_err());
        assert!(encode_time2(time(true, 0, 0, 0, 0), 0, &mut out).is_err());
        assert!(encode_time2(time(false, 0, 0, 0, 5), 3, &mut out).is_err());
        assert!(decode_time2(&[0xff, 0xff, 0xff], 0).is_err(), "hour 1023 is past 838");
    }

    #[test]
    fn year_is_one_byte_above_1900() {
        let mut out = Vec::new();
        for year in [0, 1901, 2024, 2155] {
            encode_year(year, &mut out).unwrap();
        }
        assert_eq!(out, [0, 1, 124, 255]);
        assert_eq!(out.iter().map(|&b| decode_year(b)).collect::<Vec<_>>(), [0, 1901, 2024, 2155].map(Value::Int));
        assert!(encode_year(1900, &mut out).is_err());
        assert!(encode_year(2156, &mut out).is_err());
    }
}
