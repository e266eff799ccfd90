//! CEL timestamps and durations: Go's `time.Time` (within CEL's years 1 to 9999) and
//! `time.Duration` (signed nanoseconds), parsed and printed as cel-go does.

use jiff::tz::{Offset, TimeZone};

use recon_apimachinery::gotime::civil::{civil_from_days, days_from_civil, days_in_month};
use recon_apimachinery::gotime::{self, Layout};

/// A point in time, in nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Timestamp(pub(super) i128);

/// A duration in nanoseconds (Go's `time.Duration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Duration(pub(super) i64);

const NANOS: i128 = 1_000_000_000;
/// `0001-01-01T00:00:00Z` and `9999-12-31T23:59:59.999999999Z`, in seconds.
const MIN_SECONDS: i128 = -62_135_596_800;
const MAX_SECONDS: i128 = 253_402_300_799;

/// A date and time of day, as a clock in some zone shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Civil {
    pub(super) year: i64,
    pub(super) month: i64,
    pub(super) day: i64,
    pub(super) hour: i64,
    pub(super) minute: i64,
    pub(super) second: i64,
    pub(super) nanos: i64,
    /// Days since January 1st.
    pub(super) day_of_year: i64,
    /// 0 for Sunday.
    pub(super) weekday: i64,
}

impl Timestamp {
    /// The timestamp if it is within CEL's range.
    pub(super) fn checked(nanos: i128) -> Option<Timestamp> {
        let secs = nanos.div_euclid(NANOS);
        (MIN_SECONDS..=MAX_SECONDS)
            .contains(&secs)
            .then_some(Timestamp(nanos))
    }

    pub(super) fn seconds(self) -> i64 {
        i64::try_from(self.0.div_euclid(NANOS)).unwrap_or(0)
    }

    fn subsec(self) -> i64 {
        i64::try_from(self.0.rem_euclid(NANOS)).unwrap_or(0)
    }

    /// The clock at UTC offset `offset` (seconds).
    fn at_offset(self, offset: i64) -> Civil {
        let secs = self.seconds() + offset;
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: sod / 3600,
            minute: sod % 3600 / 60,
            second: sod % 60,
            nanos: self.subsec(),
            day_of_year: days - days_from_civil(year, 1, 1),
            weekday: (days + 4).rem_euclid(7),
        }
    }

    /// Go's `Format(time.RFC3339Nano)` in UTC.
    pub(super) fn rfc3339(self) -> String {
        let nanos = i32::try_from(self.subsec()).unwrap_or(0);
        gotime::format_unix(Layout::Nano, self.seconds(), nanos)
    }

    /// The clock in a time zone: an IANA name, or `[+-]HH:MM`; UTC by default.
    pub(super) fn civil(self, tz: Option<&str>) -> Result<Civil, String> {
        let offset = match tz {
            None => 0,
            Some(name) => {
                let zone = zone(name)?;
                // jiff's timestamps stop a day short of CEL's range.
                let secs = self.seconds().clamp(
                    jiff::Timestamp::MIN.as_second(),
                    jiff::Timestamp::MAX.as_second(),
                );
                let at = jiff::Timestamp::from_second(secs).map_err(|e| e.to_string())?;
                i64::from(zone.to_offset(at).seconds())
            }
        };
        Ok(self.at_offset(offset))
    }
}

/// A time zone by IANA name, or a fixed `±HH:MM` offset.
fn zone(name: &str) -> Result<TimeZone, String> {
    let b = name.as_bytes();
    if let [sign @ (b'+' | b'-'), ..] = b {
        let (h, m) = name[1..].split_once(':').unwrap_or((&name[1..], "0"));
        let (h, m): (i32, i32) = (h.parse().unwrap_or(99), m.parse().unwrap_or(99));
        if !(0..=23).contains(&h) {
            return Err(format!(
                "timezone offset hours out of range [-23, 23]: {name}"
            ));
        }
        if !(0..=59).contains(&m) {
            return Err(format!(
                "timezone offset minutes out of range [0, 59]: {name}"
            ));
        }
        let secs = (h * 3600 + m * 60) * if *sign == b'-' { -1 } else { 1 };
        return Offset::from_seconds(secs)
            .map(TimeZone::fixed)
            .map_err(|e| e.to_string());
    }
    if name == "UTC" || name.is_empty() {
        return Ok(TimeZone::UTC);
    }
    TimeZone::get(name).map_err(|_| format!("unknown time zone {name}"))
}

/// A timestamp from a date and time of day at a UTC offset (in seconds), if all are valid.
fn timestamp_of(
    (year, month, day): (i16, i8, i8),
    (hour, minute, second, nanos): (i8, i8, i8, i32),
    offset: i32,
) -> Option<Timestamp> {
    let (year, month, day) = (i64::from(year), i64::from(month), i64::from(day));
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if !(0..24).contains(&hour) || !(0..60).contains(&minute) || !(0..60).contains(&second) {
        return None;
    }
    let secs = days_from_civil(year, month, day) * 86_400
        + i64::from(hour) * 3600
        + i64::from(minute) * 60
        + i64::from(second)
        - i64::from(offset);
    Timestamp::checked(i128::from(secs) * NANOS + i128::from(nanos))
}

/// `timestamp(string)`: Go's `time.Parse(time.RFC3339, s)`, within CEL's years.
pub(super) fn parse_timestamp(s: &str) -> Option<Timestamp> {
    let t = gotime::parse(Layout::Time, s).ok()?;
    Timestamp::checked(t.as_nanosecond())
}

/// A `format: date-time` value (`strfmt.ParseDateTime`: `t` and `z` in any case).
pub(super) fn parse_date_time(s: &str) -> Option<Timestamp> {
    rfc3339_lenient(s).or_else(|| {
        // `2006-01-02T15:04:05` (UTC) and `2006-01-02T15:04Z`.
        let lower = s.to_ascii_lowercase();
        let (date, time) = lower.split_once('t')?;
        let ymd = date_parts(date)?;
        let time = time.strip_suffix('z').unwrap_or(time);
        let nums: Vec<&str> = time.split(':').collect();
        let field = |i: usize| {
            nums.get(i)
                .and_then(|n| (n.len() == 2).then_some(*n)?.parse::<i8>().ok())
        };
        match nums.len() {
            2 => timestamp_of(ymd, (field(0)?, field(1)?, 0, 0), 0),
            3 => timestamp_of(ymd, (field(0)?, field(1)?, field(2)?, 0), 0),
            _ => None,
        }
    })
}

/// A `format: date` value, at midnight UTC.
pub(super) fn parse_date(s: &str) -> Option<Timestamp> {
    timestamp_of(date_parts(s)?, (0, 0, 0, 0), 0)
}

fn date_parts(s: &str) -> Option<(i16, i8, i8)> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !s.is_char_boundary(4) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i32> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    Some((
        i16::try_from(num(0..4)?).ok()?,
        i8::try_from(num(5..7)?).ok()?,
        i8::try_from(num(8..10)?).ok()?,
    ))
}

/// RFC 3339 with `t` and `z` in either case (strfmt's date-time).
fn rfc3339_lenient(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 20 || !s.is_ascii() {
        return None;
    }
    let t_ok = matches!(b[10], b'T' | b't');
    if !t_ok || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let ymd = date_parts(&s[..10])?;
    let two = |i: usize| -> Option<i8> {
        let part = &s[i..i + 2];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (hour, minute, second) = (two(11)?, two(14)?, two(17)?);
    let mut i = 19;
    let mut nanos = 0i32;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        let mut j = start;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == start || j - start > 9 {
            return None;
        }
        let digits = format!("{:0<9}", &s[start..j]);
        nanos = digits.parse().ok()?;
        i = j;
    }
    let zone = &s[i..];
    let offset = match zone {
        "Z" => 0,
        "z" => 0,
        _ => {
            let zb = zone.as_bytes();
            if zb.len() != 6 || !matches!(zb[0], b'+' | b'-') || zb[3] != b':' {
                return None;
            }
            let h: i32 = zone[1..3].parse().ok()?;
            let m: i32 = zone[4..6].parse().ok()?;
            if h > 23 || m > 59 {
                return None;
            }
            (h * 3600 + m * 60) * if zb[0] == b'-' { -1 } else { 1 }
        }
    };
    timestamp_of(ymd, (hour, minute, second, nanos), offset)
}

/// Go's `time.ParseDuration`.
pub(super) fn parse_duration(s: &str) -> Option<Duration> {
    gotime::parse_duration(s).map(Duration)
}

/// A `format: duration` value (`strfmt.ParseDuration`): Go's syntax, or numbers with unit
/// words (`3 days`, `1w`).
pub(super) fn parse_schema_duration(s: &str) -> Result<Duration, String> {
    if let Some(d) = parse_duration(s) {
        return Ok(d);
    }
    let fail = || format!("unable to parse {s} as duration");
    let mut total: i64 = 0;
    let mut rest = s.trim();
    let mut matched = false;
    while !rest.is_empty() {
        let negative = rest.starts_with('-');
        let body = rest.trim_start_matches('-').trim_start();
        let digits_end = body
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(body.len());
        if digits_end == 0 {
            break;
        }
        let n: i64 = body[..digits_end].parse().map_err(|_| fail())?;
        let after = body[digits_end..].trim_start();
        let unit_end = after
            .find(|c: char| !(c.is_ascii_alphabetic() || c == '\u{b5}'))
            .unwrap_or(after.len());
        let unit: i64 = match &after[..unit_end] {
            "ns" => 1,
            "us" | "\u{b5}s" => 1_000,
            "ms" => 1_000_000,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000_000_000,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000_000_000,
            "d" | "day" | "days" => 86_400_000_000_000,
            "w" | "wk" | "wks" | "week" | "weeks" => 604_800_000_000_000,
            _ => return Err(fail()),
        };
        let v = n.checked_mul(unit).ok_or_else(fail)?;
        total = if negative {
            total.checked_sub(v)
        } else {
            total.checked_add(v)
        }
        .ok_or_else(fail)?;
        matched = true;
        rest = after[unit_end..].trim_start();
    }
    if matched && rest.is_empty() {
        Ok(Duration(total))
    } else {
        Err(fail())
    }
}

impl Duration {
    /// cel-go's `string(duration)`: seconds with the fraction Go's `FormatFloat(_, 'f', -1)`
    /// prints, then `s`.
    pub(super) fn seconds_text(self) -> String {
        let secs = self.0 as f64 / 1e9;
        format!("{secs}s")
    }
}
