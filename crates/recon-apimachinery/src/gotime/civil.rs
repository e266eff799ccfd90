//! Proleptic Gregorian calendar arithmetic (Howard Hinnant's algorithms), as Go's `time`
//! package does it for dates far outside any date library's range: the timestamps the server
//! prints, and CEL's.
//!
//! ```
//! use recon_apimachinery::gotime::civil::{civil_from_days, days_from_civil};
//!
//! assert_eq!(days_from_civil(2000, 2, 29), 11_016);
//! assert_eq!(civil_from_days(-1), (1969, 12, 31));
//! ```

/// Whether `year` has a February 29th.
fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// The days of `month` (1 to 12) in `year`; 0 for another month.
pub fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a date.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date (year, month, day) of a day since 1970-01-01. Any day of an `i64` count of
/// seconds fits: its magnitude is far below `i64::MAX - 719_468`.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_dates_round_trip_across_eras() {
        for (date, days) in [
            ((1970, 1, 1), 0),
            ((2000, 2, 29), 11_016),
            ((1969, 12, 31), -1),
            ((1, 1, 1), -719_162),
            ((9999, 12, 31), 2_932_896),
        ] {
            assert_eq!(days_from_civil(date.0, date.1, date.2), days);
            assert_eq!(civil_from_days(days), date);
        }
        assert_eq!(
            (
                days_in_month(2024, 2),
                days_in_month(1900, 2),
                days_in_month(2023, 13)
            ),
            (29, 28, 0)
        );
    }
}
