//! `format`: which formats a CRD schema keeps (apiextensions
//! `StripUnsupportedFormatsPostProcessorForVersion`: the rest are dropped, never an error), and
//! the string checks of kube-openapi's `strfmt.Default` registry for the ones modelled here.
//!
//! Kept for `string` (or untyped) nodes: `bsonobjectid`, `uri`, `email`, `hostname`, `ipv4`,
//! `ipv6`, `cidr`, `mac`, `uuid`, `uuid3`, `uuid4`, `uuid5`, `isbn`, `isbn10`, `isbn13`,
//! `creditcard`, `ssn`, `hexcolor`, `rgbcolor`, `byte`, `password`, `date`, `duration`,
//! `datetime` (`date-time`: names are compared without dashes), and since 1.34
//! `k8s-short-name` and `k8s-long-name`; for `integer` only `int32` and `int64`, for `number`
//! only `float` and `double`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::model::JsonType;

const STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8s-short-name",
    "k8s-long-name",
];

/// The string formats of the registry.
pub(crate) struct Format;

impl Format {
    /// The format the validator sees for a node of these types (stripped when unsupported).
    pub(crate) fn supported(format: &str, types: &[JsonType]) -> String {
        if format.is_empty() {
            return String::new();
        }
        let keep = match types {
            [] | [JsonType::String] => STRING_FORMATS.contains(&normalize(format).as_str()),
            [JsonType::Integer] => matches!(format, "int32" | "int64"),
            [JsonType::Number] => matches!(format, "float" | "double"),
            // Several types (int-or-string) are checked as untyped.
            [_, _, ..] => STRING_FORMATS.contains(&normalize(format).as_str()),
            [_] => false,
        };
        if keep {
            format.to_owned()
        } else {
            String::new()
        }
    }

    /// Whether the registry knows `format` as a string format (`Registry.ContainsName`).
    pub(crate) fn is_string_format(format: &str) -> bool {
        !format.is_empty() && STRING_FORMATS.contains(&normalize(format).as_str())
    }

    /// `Registry.Validates`: whether `s` is valid in `format`. Formats not modelled yet accept
    /// every string.
    pub(crate) fn validates(format: &str, s: &str) -> bool {
        match normalize(format).as_str() {
            "datetime" => is_date_time(s),
            "date" => is_date(s),
            "byte" => is_base64(s),
            "uuid" => is_uuid(s, None),
            "uuid3" => is_uuid(s, Some('3')),
            "uuid4" => is_uuid(s, Some('4')),
            "uuid5" => is_uuid(s, Some('5')),
            // `isIPv4`: an IP that contains a dot (`ParseIPSloppy` tolerates leading zeros).
            "ipv4" => s.contains('.') && parse_ip_sloppy(s).is_some(),
            "ipv6" => s.contains(':') && s.parse::<Ipv6Addr>().is_ok(),
            "cidr" => is_cidr(s),
            "hexcolor" => is_hex_color(s),
            "k8s-short-name" => recon_apimachinery::names::dns1123_label_errors(s).is_empty(),
            _ => true,
        }
    }
}

/// The registry's name normalization: dashes do not count (`date-time` is `datetime`).
fn normalize(format: &str) -> String {
    if format.starts_with("k8s-") {
        return format.to_owned();
    }
    format.replace('-', "")
}

/// `strfmt.IsDate`: Go's `time.Parse("2006-01-02", s)`.
pub(crate) fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `strfmt.IsDateTime`: a date, a `t` (any case), then `hh:mm:ss[.frac](z|±hh:mm)` checked
/// by `DateTimePattern` (whose `.` before the fraction is any character) and the ranges.
pub(crate) fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let t: Vec<char> = time.chars().collect();
    let digits = |r: std::ops::Range<usize>| {
        t.get(r.clone())
            .is_some_and(|c| c.len() == r.len() && c.iter().all(char::is_ascii_digit))
    };
    if t.len() < 9 || !digits(0..2) || t[2] != ':' || !digits(3..5) || t[5] != ':' || !digits(6..8)
    {
        return false;
    }
    let mut i = 8;
    // `(.[0-9]+)?`: any one character then digits; backtracking cannot change the outcome
    // unless that character is itself a digit followed by digits, which the zone check settles.
    if t.len() > i + 1 && t[i] != 'z' && t[i] != '+' && t[i] != '-' {
        let start = i + 1;
        let mut j = start;
        while j < t.len() && t[j].is_ascii_digit() {
            j += 1;
        }
        if j == start {
            return false;
        }
        i = j;
    }
    let zone: String = t[i..].iter().collect();
    let zone_ok = zone == "z"
        || (zone.len() == 6
            && matches!(zone.as_bytes()[0], b'+' | b'-')
            && zone.as_bytes()[3] == b':'
            && zone.as_bytes()[1..3].iter().all(u8::is_ascii_digit)
            && zone.as_bytes()[4..6].iter().all(u8::is_ascii_digit));
    let two = |r: std::ops::Range<usize>| t[r].iter().collect::<String>();
    zone_ok
        && two(0..2).as_str() <= "23"
        && two(3..5).as_str() <= "59"
        && two(6..8).as_str() <= "59"
}

/// govalidator `IsBase64`: standard alphabet, padded, at least one group.
fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return false;
    }
    let alpha = |c: &u8| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/';
    let (body, last) = b.split_at(b.len() - 4);
    body.iter().all(alpha)
        && match last {
            [a, b, b'=', b'='] => alpha(a) && alpha(b),
            [a, b, c, b'='] => alpha(a) && alpha(b) && alpha(c),
            all => all.iter().all(alpha),
        }
}

/// `UUIDPattern` and its version variants: 32 hex digits, dashes optional, any case.
fn is_uuid(s: &str, version: Option<char>) -> bool {
    let groups = [8, 4, 4, 4, 12];
    let mut rest = s;
    let mut hex = String::new();
    for (n, len) in groups.iter().enumerate() {
        if n > 0 {
            rest = rest.strip_prefix('-').unwrap_or(rest);
        }
        let Some(part) = rest.get(..*len) else {
            return false;
        };
        if !part.chars().all(|c| c.is_ascii_hexdigit()) {
            return false;
        }
        hex.push_str(part);
        rest = &rest[*len..];
    }
    if !rest.is_empty() {
        return false;
    }
    let hex = hex.to_ascii_lowercase();
    match version {
        None => true,
        Some('3') => hex.as_bytes()[12] == b'3',
        Some(v) => {
            hex.as_bytes()[12] == v as u8 && matches!(hex.as_bytes()[16], b'8' | b'9' | b'a' | b'b')
        }
    }
}

/// `netutils.ParseIPSloppy`: IPv4 parts may carry leading zeros.
fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(octets)))
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Some(addr) = parse_ip_sloppy(ip) else {
        return false;
    };
    let max = if addr.is_ipv4() { 32 } else { 128 };
    !bits.is_empty()
        && bits.len() <= 3
        && bits.bytes().all(|c| c.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|b| b <= max)
}

/// govalidator `IsHexcolor`: `^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`.
fn is_hex_color(s: &str) -> bool {
    let h = s.strip_prefix('#').unwrap_or(s);
    matches!(h.len(), 3 | 6) && h.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_formats_are_stripped_per_type() {
        assert_eq!(
            Format::supported("date-time", &[JsonType::String]),
            "date-time"
        );
        assert_eq!(Format::supported("bogus", &[JsonType::String]), "");
        assert_eq!(Format::supported("int32", &[JsonType::Integer]), "int32");
        assert_eq!(Format::supported("int32", &[JsonType::String]), "");
        assert_eq!(Format::supported("float", &[JsonType::Integer]), "");
        assert_eq!(Format::supported("date", &[JsonType::Boolean]), "");
    }

    #[test]
    fn dates_and_times() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("2020-13-01"));
        assert!(is_date_time("2020-01-01T10:00:00Z"));
        assert!(is_date_time("2020-01-01t10:00:00.123+02:00"));
        assert!(!is_date_time("2020-01-01"));
        assert!(!is_date_time("2020-01-01T24:00:00Z"));
        assert!(!is_date_time("2020-01-01T10:00:00"));
    }

    #[test]
    fn bytes_and_uuids() {
        assert!(is_base64("aGVsbG8="));
        assert!(!is_base64("!!"));
        assert!(!is_base64(""));
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000", None));
        assert!(is_uuid("123E4567E89B12D3A456426614174000", None));
        assert!(!is_uuid("xyz", None));
        assert!(is_uuid("123e4567-e89b-42d3-a456-426614174000", Some('4')));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-426614174000", Some('4')));
    }

    #[test]
    fn addresses() {
        assert!(Format::validates("ipv4", "10.0.0.1"));
        assert!(Format::validates("ipv4", "010.0.0.1"));
        assert!(!Format::validates("ipv4", "::1"));
        assert!(Format::validates("ipv6", "::1"));
        assert!(Format::validates("cidr", "10.0.0.0/8"));
        assert!(!Format::validates("cidr", "10.0.0.0/33"));
    }
}
