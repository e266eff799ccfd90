//! Go's `time.Duration` strings.

/// Go's `time.ParseDuration`: signed decimal numbers, each with an optional fraction and a
/// unit (`ns`, `us` or `µs`, `ms`, `s`, `m`, `h`), in nanoseconds; `None` where Go returns an
/// error, overflow included.
///
/// ```
/// use recon_apimachinery::gotime::parse_duration;
///
/// assert_eq!(parse_duration("1h30m"), Some(5_400_000_000_000));
/// assert_eq!(parse_duration("-1.5s"), Some(-1_500_000_000));
/// assert_eq!(parse_duration("1.5.5h"), None);
/// ```
pub fn parse_duration(s: &str) -> Option<i64> {
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let int_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let int_part = &rest[..int_end];
        rest = &rest[int_end..];
        let mut frac_part = "";
        if let Some(after) = rest.strip_prefix('.') {
            let frac_end = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            frac_part = &after[..frac_end];
            rest = &after[frac_end..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_end = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit: u128 = match &rest[..unit_end] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_end..];
        let whole: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().ok()?
        };
        let mut v = whole.checked_mul(unit)?;
        if !frac_part.is_empty() {
            let mut scale = 1u128;
            let mut frac = 0u128;
            for c in frac_part.bytes().take(30) {
                frac = frac * 10 + u128::from(c - b'0');
                scale *= 10;
            }
            v = v.checked_add(frac * unit / scale)?;
        }
        total = total.checked_add(v)?;
        if total > 1u128 << 63 {
            return None;
        }
    }
    let signed = i128::try_from(total).ok()?;
    let signed = if negative { -signed } else { signed };
    i64::try_from(signed).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_reads_them() {
        assert_eq!(parse_duration("1h0m0s"), Some(3_600_000_000_000));
        assert_eq!(parse_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("+5\u{b5}s"), Some(5_000));
        assert_eq!(parse_duration(".5ms"), Some(500_000));
        assert_eq!(parse_duration("-9223372036854775808ns"), Some(i64::MIN));
        for bad in [
            "",
            "x",
            "1",
            "5d",
            "1..5s",
            ".s",
            "9223372036854775808ns",
            "-",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
