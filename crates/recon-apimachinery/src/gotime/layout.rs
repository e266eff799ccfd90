//! Go's `time.Parse` and `Time.Format` with the RFC 3339 layouts: `metav1.Time` and
//! `metav1.MicroTime` as kube-apiserver decodes and encodes them (layout `time.RFC3339`, or
//! `RFC3339Micro` for a MicroTime), with Go's error text; written back in UTC, whole seconds
//! for a Time (a fraction is dropped, not rounded) and exactly six fractional digits for a
//! MicroTime; and `time.RFC3339Nano`, the fraction's trailing zeros dropped. Recorded from kube-apiserver: scenario
//! `update/leader-election-lease-takeover-and-release` (a MicroTime without six digits is a 400)
//! and an Event created with `firstTimestamp: 2026-11-27T12:00:00.75+02:00`, answered
//! `2026-11-27T10:00:00Z`, and `eventTime: 2026-11-27T12:00:00.123456+02:00`, answered
//! `2026-11-27T10:00:00.123456Z`.

use std::fmt::Write as _;

use jiff::Timestamp;

use super::civil::{civil_from_days, days_from_civil, days_in_month};

/// The range an element must be in, and its name in the error: `(low, high, name)`.
type Range = (i32, i32, &'static str);

/// Which RFC 3339 layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `metav1.Time` (`time.RFC3339`): `2006-01-02T15:04:05Z07:00`; a fraction after the
    /// seconds is read too, and never written.
    Time,
    /// `metav1.MicroTime`: `2006-01-02T15:04:05.000000Z07:00`, exactly six digits.
    MicroTime,
    /// `time.RFC3339Nano`: `2006-01-02T15:04:05.999999999Z07:00`, read as [`Layout::Time`]
    /// is, written with the fraction's significant digits (none for a whole second).
    Nano,
}

impl Layout {
    fn text(self) -> &'static str {
        match self {
            Layout::Time => "2006-01-02T15:04:05Z07:00",
            Layout::MicroTime => "2006-01-02T15:04:05.000000Z07:00",
            Layout::Nano => "2006-01-02T15:04:05.999999999Z07:00",
        }
    }
}

/// Parses `value` as `time.Parse(layout, value)` does; `Err` is Go's `ParseError` text.
pub fn parse(layout: Layout, value: &str) -> Result<Timestamp, String> {
    let fail = |layout_elem: &str, value_elem: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(value),
            quote(layout.text()),
            quote(value_elem),
            quote(layout_elem)
        )
    };
    let out_of_range = |what: &str| format!("parsing time {}: {what} out of range", quote(value));
    let mut rest = value.as_bytes();

    // "2006": four bytes, the first a digit, all of them read as an integer.
    let hold = rest;
    if rest.len() < 4 || !rest[0].is_ascii_digit() || !rest[..4].iter().all(u8::is_ascii_digit) {
        return Err(fail("2006", text(hold)));
    }
    let year = number(&rest[..4]);
    rest = &rest[4..];

    // Then each element after its literal: its layout text, whether it takes exactly two digits
    // (Go's `15` takes one or two), and the range it must be in (the day is checked against the
    // month once everything is read).
    const ELEMENTS: [(&str, &str, bool, Option<Range>); 5] = [
        ("-", "01", true, Some((1, 12, "month"))),
        ("-", "02", true, None),
        ("T", "15", false, Some((0, 23, "hour"))),
        (":", "04", true, Some((0, 59, "minute"))),
        (":", "05", true, Some((0, 59, "second"))),
    ];
    let mut fields = [0; 5];
    for (field, (literal, element, fixed, range)) in fields.iter_mut().zip(ELEMENTS) {
        rest = skip(rest, literal.as_bytes()).ok_or_else(|| fail(literal, text(rest)))?;
        let (n, after) = two_digits(rest, fixed).ok_or_else(|| fail(element, text(rest)))?;
        if let Some((low, high, what)) = range
            && !(low..=high).contains(&n)
        {
            return Err(out_of_range(what));
        }
        *field = n;
        rest = after;
    }
    let [month, day, hour, minute, second] = fields;

    let mut nanos = 0;
    match layout {
        // A fraction the layout does not name is read anyway: `.` or `,` and digits.
        Layout::Time | Layout::Nano => {
            if rest.len() >= 2 && matches!(rest[0], b'.' | b',') && rest[1].is_ascii_digit() {
                let n = 1 + rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
                nanos = fraction(&rest[1..n]);
                rest = &rest[n..];
            }
        }
        // `.000000`: a separator and six bytes Go reads with `atoi`, which takes a sign too:
        // `.+12345` is 12345 scaled as six digits, a negative fraction is out of range.
        Layout::MicroTime => {
            let separator = rest.first().is_some_and(|b| matches!(b, b'.' | b','));
            let Some(six) = rest.get(1..7).filter(|_| separator) else {
                return Err(fail(".000000", text(rest)));
            };
            let (negative, digits) = match six[0] {
                b'+' => (false, &six[1..]),
                b'-' => (true, &six[1..]),
                _ => (false, six),
            };
            if !digits.iter().all(u8::is_ascii_digit) {
                return Err(fail(".000000", text(rest)));
            }
            let micros = number(digits);
            if negative && micros != 0 {
                return Err(out_of_range("fractional second"));
            }
            nanos = micros * 1000;
            rest = &rest[7..];
        }
    }

    // "Z07:00": `Z`, or a sign, two digits, a colon and two digits.
    let hold = rest;
    let offset_seconds = if rest.first() == Some(&b'Z') {
        rest = &rest[1..];
        0
    } else {
        let zone = rest.get(..6).filter(|z| z[3] == b':');
        let parsed = zone.and_then(|z| {
            let (hours, _) = two_digits(&z[1..3], true)?;
            let (minutes, _) = two_digits(&z[4..6], true)?;
            Some((z[0], hours, minutes))
        });
        let Some((sign, hours, minutes)) = parsed else {
            return Err(fail("Z07:00", text(hold)));
        };
        if hours > 24 {
            return Err(out_of_range("time zone offset hour"));
        }
        if minutes > 60 {
            return Err(out_of_range("time zone offset minute"));
        }
        let seconds = (hours * 60 + minutes) * 60;
        rest = &rest[6..];
        match sign {
            b'+' => seconds,
            b'-' => -seconds,
            _ => return Err(fail("Z07:00", text(hold))),
        }
    };
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            quote(value),
            quote(text(rest))
        ));
    }
    if day < 1 || i64::from(day) > days_in_month(i64::from(year), i64::from(month)) {
        return Err(out_of_range("day"));
    }
    // Every field is in range and a year has four digits: the time exists, and only a zone
    // can push it past jiff's last day (or before its first).
    let days = days_from_civil(i64::from(year), i64::from(month), i64::from(day));
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second - offset_seconds);
    Timestamp::new(seconds, nanos).map_err(|_| out_of_range("year"))
}

/// `t` as the server writes it back: RFC 3339 in UTC, whole seconds for a Time, six digits for a
/// MicroTime, the significant ones for Nano.
pub fn format(layout: Layout, t: Timestamp) -> String {
    // Before the epoch jiff's fraction is negative, as its seconds are.
    let (seconds, nanos) = match t.subsec_nanosecond() {
        n if n < 0 => (t.as_second() - 1, n + 1_000_000_000),
        n => (t.as_second(), n),
    };
    format_unix(layout, seconds, nanos)
}

/// [`format()`] of the time `seconds` and `nanos` after the Unix epoch, any `i64` of seconds
/// (years beyond 9999 print with more digits).
pub fn format_unix(layout: Layout, seconds: i64, nanos: i32) -> String {
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let second_of_day = seconds.rem_euclid(86_400);
    let mut out = String::with_capacity(32);
    if (0..=9999).contains(&year) {
        push_digits(&mut out, year, 4);
    } else {
        let _ = write!(out, "{year:04}");
    }
    // Each below 100 by construction.
    for (separator, value) in [
        ('-', month),
        ('-', day),
        ('T', second_of_day / 3600),
        (':', second_of_day / 60 % 60),
        (':', second_of_day % 60),
    ] {
        out.push(separator);
        push_digits(&mut out, value, 2);
    }
    match layout {
        Layout::Time => {}
        Layout::MicroTime => {
            let _ = write!(out, ".{:06}", nanos / 1000);
        }
        Layout::Nano if nanos != 0 => {
            let digits = format!("{nanos:09}");
            let _ = write!(out, ".{}", digits.trim_end_matches('0'));
        }
        Layout::Nano => {}
    }
    out.push('Z');
    out
}

/// Appends the last `width` decimal digits of `value`, zero-padded.
fn push_digits(out: &mut String, value: i64, width: u32) {
    for place in (0..width).rev() {
        let digit = value / 10i64.pow(place) % 10;
        out.extend(char::from_digit(digit.unsigned_abs() as u32, 10));
    }
}

/// `value` read and written back as the server stores it, or Go's error.
pub fn canonical(layout: Layout, value: &str) -> Result<String, String> {
    parse(layout, value).map(|t| format(layout, t))
}

/// `t` with the precision of a `metav1.Time`: the fraction of a second dropped.
pub fn truncate_to_second(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

fn skip<'a>(value: &'a [u8], literal: &[u8]) -> Option<&'a [u8]> {
    value.strip_prefix(literal)
}

/// Go's `getnum`: two digits, or (unless `fixed`) one digit not followed by another.
fn two_digits(value: &[u8], fixed: bool) -> Option<(i32, &[u8])> {
    let first = *value.first().filter(|b| b.is_ascii_digit())?;
    match value.get(1).filter(|b| b.is_ascii_digit()) {
        Some(second) => Some((
            i32::from(first - b'0') * 10 + i32::from(second - b'0'),
            &value[2..],
        )),
        None if fixed => None,
        None => Some((i32::from(first - b'0'), &value[1..])),
    }
}

fn number(digits: &[u8]) -> i32 {
    digits.iter().fold(0, |n, d| n * 10 + i32::from(d - b'0'))
}

/// Nanoseconds from fraction digits: the first nine count (Go reads at most nine).
fn fraction(digits: &[u8]) -> i32 {
    let mut nanos = 0;
    for i in 0..9 {
        nanos = nanos * 10 + digits.get(i).map_or(0, |d| i32::from(d - b'0'));
    }
    nanos
}

/// The unread part of the value: whole characters, as it was cut at a byte Go reached by
/// skipping ASCII.
fn text(rest: &[u8]) -> &str {
    std::str::from_utf8(rest).unwrap_or_default()
}

/// Go's `time.quote`: double quotes, `"` and `\` escaped, and every byte of a control or
/// non-ASCII character as `\xNN`.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c.is_ascii() && !c.is_ascii_control() {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        } else {
            let mut buf = [0; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_written_back_in_utc_without_its_fraction() {
        assert_eq!(
            canonical(Layout::Time, "2026-11-27T12:00:00.75+02:00").unwrap(),
            "2026-11-27T10:00:00Z"
        );
        assert_eq!(
            canonical(Layout::Time, "2026-11-27T10:00:00,5Z").unwrap(),
            "2026-11-27T10:00:00Z"
        );
    }

    #[test]
    fn a_micro_time_is_written_back_in_utc_with_six_digits() {
        assert_eq!(
            canonical(Layout::MicroTime, "2026-11-27T12:00:00.123456+02:00").unwrap(),
            "2026-11-27T10:00:00.123456Z"
        );
        assert_eq!(
            canonical(Layout::MicroTime, "2026-11-27T00:30:00.000001-01:30").unwrap(),
            "2026-11-27T02:00:00.000001Z"
        );
    }

    #[test]
    fn nano_keeps_the_significant_digits_and_any_year_prints() {
        let t = parse(Layout::Nano, "2026-11-27T12:00:00.120+02:00").unwrap();
        assert_eq!(format(Layout::Nano, t), "2026-11-27T10:00:00.12Z");
        assert_eq!(format_unix(Layout::Nano, 0, 0), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_unix(Layout::MicroTime, -1, 5_000),
            "1969-12-31T23:59:59.000005Z"
        );
        assert!(format_unix(Layout::Time, i64::MAX, 0).len() > 20);
        let late: Timestamp = "2024-05-01T10:00:00.987654Z".parse().unwrap();
        assert_eq!(
            format(Layout::Time, truncate_to_second(late)),
            "2024-05-01T10:00:00Z"
        );
        assert_eq!(truncate_to_second(late).subsec_nanosecond(), 0);
        let before: Timestamp = "1969-12-31T23:59:59.5Z".parse().unwrap();
        assert_eq!(
            format(Layout::MicroTime, before),
            "1969-12-31T23:59:59.500000Z"
        );
        assert_eq!(parse(Layout::Time, "1969-12-31T23:59:59.5Z"), Ok(before));
        assert_eq!(
            parse(Layout::Time, "9999-12-31T23:00:00-05:00").unwrap_err(),
            "parsing time \"9999-12-31T23:00:00-05:00\": year out of range"
        );
    }

    #[test]
    fn a_micro_time_needs_exactly_six_digits_as_kube_apiserver_said() {
        let layout = "\"2006-01-02T15:04:05.000000Z07:00\"";
        assert_eq!(
            parse(Layout::MicroTime, "2026-11-27T10:00:22Z").unwrap_err(),
            format!(
                "parsing time \"2026-11-27T10:00:22Z\" as {layout}: cannot parse \"Z\" as \".000000\""
            )
        );
        assert_eq!(
            parse(Layout::MicroTime, "2026-11-27T10:00:22.5Z").unwrap_err(),
            format!(
                "parsing time \"2026-11-27T10:00:22.5Z\" as {layout}: cannot parse \".5Z\" as \".000000\""
            )
        );
        // A sign is read as part of the six.
        assert_eq!(
            canonical(Layout::MicroTime, "2026-11-27T10:00:22.+12345Z").unwrap(),
            "2026-11-27T10:00:22.012345Z"
        );
        assert_eq!(
            parse(Layout::MicroTime, "2026-11-27T10:00:22.-12345Z").unwrap_err(),
            "parsing time \"2026-11-27T10:00:22.-12345Z\": fractional second out of range"
        );
        // Seven digits: six are the fraction, the seventh is not a zone.
        assert_eq!(
            parse(Layout::MicroTime, "2026-11-27T10:00:22.1234567Z").unwrap_err(),
            format!(
                "parsing time \"2026-11-27T10:00:22.1234567Z\" as {layout}: cannot parse \"7Z\" as \"Z07:00\""
            )
        );
    }

    #[test]
    fn errors_name_the_element_that_failed_as_go_does() {
        let layout = "\"2006-01-02T15:04:05Z07:00\"";
        let cases = [
            ("", "cannot parse \"\" as \"2006\""),
            ("soon", "cannot parse \"soon\" as \"2006\""),
            ("2026/11/27", "cannot parse \"/11/27\" as \"-\""),
            (
                "2026-1-27T00:00:00Z",
                "cannot parse \"1-27T00:00:00Z\" as \"01\"",
            ),
            (
                "2026-11-27 10:00:00Z",
                "cannot parse \" 10:00:00Z\" as \"T\"",
            ),
            ("2026-11-27T10:00:00", "cannot parse \"\" as \"Z07:00\""),
            (
                "2026-11-27T10:00:00+0200",
                "cannot parse \"+0200\" as \"Z07:00\"",
            ),
        ];
        for (value, tail) in cases {
            assert_eq!(
                parse(Layout::Time, value).unwrap_err(),
                format!("parsing time {} as {layout}: {tail}", quote(value)),
                "{value:?}"
            );
        }
    }

    #[test]
    fn ranges_and_trailing_text_have_their_own_messages() {
        let err = |v| parse(Layout::Time, v).unwrap_err();
        assert_eq!(
            err("2026-13-01T00:00:00Z"),
            "parsing time \"2026-13-01T00:00:00Z\": month out of range"
        );
        assert_eq!(
            err("2026-02-29T00:00:00Z"),
            "parsing time \"2026-02-29T00:00:00Z\": day out of range"
        );
        assert_eq!(
            err("2026-11-27T24:00:00Z"),
            "parsing time \"2026-11-27T24:00:00Z\": hour out of range"
        );
        assert_eq!(
            err("2026-11-27T10:60:00Z"),
            "parsing time \"2026-11-27T10:60:00Z\": minute out of range"
        );
        assert_eq!(
            err("2026-11-27T10:00:60Z"),
            "parsing time \"2026-11-27T10:00:60Z\": second out of range"
        );
        assert_eq!(
            err("2026-11-27T10:00:00Zsoon"),
            "parsing time \"2026-11-27T10:00:00Zsoon\": extra text: \"soon\""
        );
        assert!(
            parse(Layout::Time, "2024-02-29T00:00:00Z").is_ok(),
            "a leap day"
        );
        // Go's `15` takes a single digit.
        assert!(parse(Layout::Time, "2026-11-27T9:00:00Z").is_ok());
    }

    #[test]
    fn quotes_escape_as_go_s_time_package() {
        assert_eq!(quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(quote("é\n"), r#""\xc3\xa9\x0a""#);
    }
}
