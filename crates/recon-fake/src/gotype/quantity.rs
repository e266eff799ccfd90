//! `resource.ParseQuantity`'s verdict on a quantity's text (what `Quantity.UnmarshalJSON` hands
//! it: a JSON string unquoted, anything else as written, spaces trimmed). Only whether it parses
//! and Go's error if not; the canonical form a real server stores is not computed.

/// `ErrFormatWrong`.
pub(crate) const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `ErrSuffix`.
const SUFFIX: &str = "unable to parse quantity's suffix";
/// `ErrNumeric`.
const NUMERIC: &str = "unable to parse numeric part of quantity";

/// `Err` with Go's message when `ParseQuantity(text)` fails.
pub(crate) fn check(text: &str) -> Result<(), &'static str> {
    if text.is_empty() {
        return Err(FORMAT_WRONG);
    }
    if text == "0" {
        return Ok(());
    }
    let (value, suffix) = split(text)?;
    if !suffix_known(suffix) {
        return Err(SUFFIX);
    }
    // `inf.Dec.SetString` of the numeric part: a sign and digits with at most one point.
    let digits = value.trim_start_matches(['+', '-']);
    if !digits.is_empty() && !digits.bytes().any(|b| b.is_ascii_digit()) {
        return Err(NUMERIC);
    }
    Ok(())
}

/// `parseQuantityString`: the numeric part and the suffix.
fn split(text: &str) -> Result<(&str, &str), &'static str> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut pos = usize::from(matches!(bytes[0], b'+' | b'-'));
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos == end {
        return Ok(("0", ""));
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos == end {
        return Ok((text, ""));
    }
    if bytes[pos] == b'.' {
        pos += 1;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos == end {
            return Ok((text, ""));
        }
    }
    let value = &text[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && matches!(bytes[pos], b'+' | b'-') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(FORMAT_WRONG);
    }
    Ok((value, &text[suffix_start..]))
}

/// `quantitySuffixer.interpret`: a decimal or binary SI suffix, or an exponent `e<int>`.
fn suffix_known(suffix: &str) -> bool {
    const KNOWN: [&str; 16] = [
        "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    if KNOWN.contains(&suffix) {
        return true;
    }
    let Some(exponent) = suffix.strip_prefix(['e', 'E']) else {
        return false;
    };
    let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && digits.len() <= 10
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_as_go_parses_them() {
        for ok in [
            "0", "1", "100m", "1.5", "2Gi", "512Mi", "1e3", "1E-3", "+5", "-5k", "0.5", "1.", "007",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        // Recorded from kube-apiserver: a CPU request of "lots".
        assert_eq!(check("lots"), Err(FORMAT_WRONG));
        assert_eq!(check(""), Err(FORMAT_WRONG));
        assert_eq!(check("true"), Err(FORMAT_WRONG));
        assert_eq!(check("1 Gi"), Err(FORMAT_WRONG));
        assert_eq!(check("5ii"), Err(SUFFIX));
        assert_eq!(check("5Ki3"), Err(SUFFIX));
        assert_eq!(check("."), Err(NUMERIC));
    }
}
