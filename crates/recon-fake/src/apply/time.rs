//! `metav1.Time` as managedFields carry it: RFC 3339, whole seconds, written in UTC.

use std::fmt;

use recon_apimachinery::gotime::{self, Layout};

/// A managedFields timestamp, in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub i64);

impl Time {
    /// Parses RFC 3339 as `metav1.Time` does (`2024-05-01T10:00:00Z`,
    /// `...T10:00:00.5+02:00`), dropping fractions as the apiserver does when it writes the time
    /// back.
    pub fn parse(s: &str) -> Option<Time> {
        gotime::parse(Layout::Time, s)
            .ok()
            .map(|t| Time(t.as_second()))
    }
}

impl fmt::Display for Time {
    /// `2024-05-01T10:00:00Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&gotime::format_unix(Layout::Time, self.0, 0))
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
