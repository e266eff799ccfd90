//! `metav1.Time` as managedFields carry it: RFC 3339, whole seconds, written in UTC.

use std::fmt;

use crate::civil::{civil_from_days, days_from_civil, days_in_month};

/// A managedFields timestamp, in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub i64);

impl Time {
    /// Parses RFC 3339 (`2024-05-01T10:00:00Z`, `...T10:00:00.5+02:00`), dropping fractions
    /// as the apiserver does when it writes the time back.
    pub fn parse(s: &str) -> Option<Time> {
        let b = s.as_bytes();
        if b.len() < 20
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
        {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let part = s.get(r)?;
            part.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&month)
            || !(1..=days_in_month(year, month)).contains(&day)
            || hour > 23
            || min > 59
            || sec > 60
        {
            return None;
        }
        let mut rest = &s[19..];
        if let Some(frac) = rest.strip_prefix('.') {
            let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return None;
            }
            rest = &frac[digits..];
        }
        let offset = match rest {
            "Z" => 0,
            _ => {
                let rb = rest.as_bytes();
                if rb.len() != 6 || rb[3] != b':' || !(rb[0] == b'+' || rb[0] == b'-') {
                    return None;
                }
                let h: i64 = rest.get(1..3)?.parse().ok()?;
                let m: i64 = rest.get(4..6)?.parse().ok()?;
                let o = h * 3600 + m * 60;
                if rb[0] == b'-' { -o } else { o }
            }
        };
        let days = days_from_civil(year, month, day);
        Some(Time(days * 86_400 + hour * 3600 + min * 60 + sec - offset))
    }
}

impl fmt::Display for Time {
    /// `2024-05-01T10:00:00Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(86_400);
        let secs = self.0.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_normalises() {
        for s in [
            "1970-01-01T00:00:00Z",
            "2026-11-21T07:24:53Z",
            "2000-02-29T23:59:59Z",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(Time::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(Time::parse("1970-01-01T00:00:01Z"), Some(Time(1)));
        assert_eq!(
            Time::parse("2024-05-01T12:00:00.987+02:00")
                .unwrap()
                .to_string(),
            "2024-05-01T10:00:00Z"
        );
        assert!(Time(i64::MAX).to_string().len() > 20);
        for bad in [
            "",
            "2024-05-01",
            "2024-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-05-01T00:00:00",
            "2024-05-01T00:00:00.Z",
            "2024-05-01T00:00:00+0200",
        ] {
            assert_eq!(Time::parse(bad), None, "{bad}");
        }
    }
}
