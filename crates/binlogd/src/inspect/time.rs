//! Timestamps as mysqlbinlog prints them, in UTC (mysqlbinlog uses the
//! local time zone; UTC keeps output independent of the machine).

/// `yymmdd hh:mm:ss`, the form of the `#` line of each event.
pub fn short_datetime(unix_seconds: u64) -> String {
    let (year, month, day, hour, minute, second) = civil(unix_seconds);
    format!("{:02}{month:02}{day:02} {hour:>2}:{minute:02}:{second:02}", year % 100)
}

/// `yyyy-mm-dd hh:mm:ss.uuuuuu UTC` for microsecond timestamps.
pub fn long_datetime_us(unix_microseconds: u64) -> String {
    let (year, month, day, hour, minute, second) = civil(unix_microseconds / 1_000_000);
    let fraction = unix_microseconds % 1_000_000;
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}.{fraction:06} UTC")
}

/// Proleptic Gregorian calendar date and time of a Unix timestamp
/// (Howard Hinnant's `civil_from_days`).
fn civil(unix_seconds: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (unix_seconds / 86_400) as i64;
    let seconds_of_day = (unix_seconds % 86_400) as u32;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day, seconds_of_day / 3600, seconds_of_day / 60 % 60, seconds_of_day % 60)
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
    }
}
