//! Timestamps as mysqlbinlog prints them, in UTC (mysqlbinlog uses the
//! local time zone; UTC keeps output independent of the machine).

use time::{OffsetDateTime, PrimitiveDateTime};

/// `yymmdd hh:mm:ss`, the form of the `#` line of each event.
pub fn short_datetime(unix_seconds: u64) -> String {
    let at = civil(unix_seconds);
    let (month, day, hour, minute, second) = (u8::from(at.month()), at.day(), at.hour(), at.minute(), at.second());
    format!("{:02}{month:02}{day:02} {hour:>2}:{minute:02}:{second:02}", at.year() % 100)
}

/// `yyyy-mm-dd hh:mm:ss.uuuuuu UTC` for microsecond timestamps.
pub fn long_datetime_us(unix_microseconds: u64) -> String {
    let at = civil(unix_microseconds / 1_000_000);
    let (year, month, day, hour, minute, second) = (at.year(), u8::from(at.month()), at.day(), at.hour(), at.minute(), at.second());
    let fraction = unix_microseconds % 1_000_000;
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}.{fraction:06} UTC")
}

/// The UTC date and time of a Unix timestamp. The headers' u32 seconds and
/// the Gtid events' 7-byte microseconds all fall within the calendar; a
/// larger value prints as its last second.
fn civil(unix_seconds: u64) -> OffsetDateTime {
    i64::try_from(unix_seconds)
        .ok()
        .and_then(|seconds| OffsetDateTime::from_unix_timestamp(seconds).ok())
        .unwrap_or(PrimitiveDateTime::MAX.assume_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_known_timestamps() {
        assert_eq!(short_datetime(0), "700101  0:00:00");
        assert_eq!(short_datetime(1_716_459_362), "240523 10:16:02");
        assert_eq!(short_datetime(951_782_400), "000229  0:00:00");
        assert_eq!(long_datetime_us(1_716_459_362_123_456), "2024-05-23 10:16:02.123456 UTC");
        assert_eq!(long_datetime_us((1 << 56) - 1), "4253-05-31 22:20:37.927935 UTC");
    }
}
