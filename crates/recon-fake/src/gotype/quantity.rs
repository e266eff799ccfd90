//! `resource.ParseQuantity` on a quantity's text (what `Quantity.UnmarshalJSON` hands it: a JSON
//! string unquoted, anything else as written, spaces trimmed): Go's error if it does not parse,
//! else the canonical form `Quantity.MarshalJSON` writes back, which is what a real server
//! stores (`1.5` as `1500m`, `1024Mi` as `1Gi`, `2000000000` as `2G`).

use std::cmp::Ordering;

/// `ErrFormatWrong`.
pub(crate) const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `ErrSuffix`.
const SUFFIX: &str = "unable to parse quantity's suffix";
/// `ErrNumeric`.
const NUMERIC: &str = "unable to parse numeric part of quantity";

/// `Err` with Go's message when `ParseQuantity(text)` fails.
#[cfg(test)]
fn check(text: &str) -> Result<(), &'static str> {
    canonical(text).map(|_| ())
}

/// The canonical text of the quantity `text`, or Go's error when it does not parse. A quantity
/// beyond what 128-bit arithmetic holds here (Go switches to arbitrary precision) is kept as
/// written.
pub(crate) fn canonical(text: &str) -> Result<String, &'static str> {
    if text.is_empty() {
        return Err(FORMAT_WRONG);
    }
    if text == "0" {
        return Ok(text.to_owned());
    }
    let (value, suffix) = split(text)?;
    let Some(suffix) = Suffix::parse(suffix) else {
        return Err(SUFFIX);
    };
    // `inf.Dec.SetString` of the numeric part: a sign and digits with at most one point.
    let digits = value.trim_start_matches(['+', '-']);
    if !digits.is_empty() && !digits.bytes().any(|b| b.is_ascii_digit()) {
        return Err(NUMERIC);
    }
    Ok(Amount::parse(value, suffix)
        .and_then(|amount| amount.canonical(suffix.format()))
        .unwrap_or_else(|| text.to_owned()))
}

/// `Quantity.Cmp` of the quantities `a` and `b`, exactly (at the nano precision quantities
/// keep); `None` when either does not parse or is beyond 128-bit arithmetic.
pub(crate) fn compare(a: &str, b: &str) -> Option<Ordering> {
    let (a, b) = (amount(a)?, amount(b)?);
    let scale = a.scale.min(b.scale);
    let at = |x: Amount| {
        x.value
            .checked_mul(10i128.checked_pow(u32::try_from(x.scale - scale).ok()?)?)
    };
    Some(at(a)?.cmp(&at(b)?))
}

/// `a.Add(b)` then `String()`: the sum written in `a`'s format (`b`'s when `a` is zero);
/// `None` as for [`compare`].
pub(crate) fn sum(a: &str, b: &str) -> Option<String> {
    let format_of = |text: &str| {
        let (_, suffix) = split(text).ok()?;
        Some(Suffix::parse(suffix)?.format())
    };
    let (x, y) = (amount(a)?, amount(b)?);
    let format = if x.value == 0 {
        format_of(b)?
    } else {
        format_of(a)?
    };
    let scale = x.scale.min(y.scale);
    let at = |q: Amount| {
        q.value
            .checked_mul(10i128.checked_pow(u32::try_from(q.scale - scale).ok()?)?)
    };
    let total = Amount {
        value: at(x)?.checked_add(at(y)?)?,
        scale,
    };
    total.normalize()?.canonical(format)
}

/// `Quantity.Value()`: the quantity rounded up, away from zero, to a whole number; `None` as
/// for [`compare`], or beyond an `int64`.
pub(crate) fn whole_value(text: &str) -> Option<i64> {
    scaled_value(text, 0)
}

/// `Quantity.MilliValue()`: the quantity in thousandths, rounded up away from zero; `None` as
/// for [`whole_value`].
pub(crate) fn milli_value(text: &str) -> Option<i64> {
    scaled_value(text, -3)
}

/// `Quantity.ScaledValue(scale)`: the quantity in units of `10^scale`, rounded up away from
/// zero.
fn scaled_value(text: &str, scale: i32) -> Option<i64> {
    let a = amount(text)?;
    let shift = a.scale - scale;
    let scaled = if shift >= 0 {
        a.value
            .checked_mul(10i128.checked_pow(u32::try_from(shift).ok()?)?)?
    } else {
        let divisor = 10i128.checked_pow(u32::try_from(-shift).ok()?)?;
        a.value / divisor + (a.value % divisor).signum()
    };
    i64::try_from(scaled).ok()
}

/// The amount a quantity text stands for.
fn amount(text: &str) -> Option<Amount> {
    if text.is_empty() {
        return None;
    }
    let (value, suffix) = split(text).ok()?;
    Amount::parse(value, Suffix::parse(suffix)?)
}

/// How a quantity is written: the format its suffix chose.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// A suffix: a power of ten (SI or `e<n>`) or of two (`Ki` ... `Ei`).
#[derive(Clone, Copy)]
enum Suffix {
    Decimal(i32),
    Binary(u32),
    Exponent(i32),
}

const DECIMAL: [(&str, i32); 10] = [
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];

const BINARY: [(&str, u32); 6] = [
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];

impl Suffix {
    /// `quantitySuffixer.interpret`.
    fn parse(suffix: &str) -> Option<Suffix> {
        if let Some((_, e)) = DECIMAL.iter().find(|(s, _)| *s == suffix) {
            return Some(Suffix::Decimal(*e));
        }
        if let Some((_, e)) = BINARY.iter().find(|(s, _)| *s == suffix) {
            return Some(Suffix::Binary(*e));
        }
        let exponent = suffix.strip_prefix(['e', 'E'])?;
        let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        exponent.parse().ok().map(Suffix::Exponent)
    }

    fn format(self) -> Format {
        match self {
            Suffix::Decimal(_) => Format::DecimalSi,
            Suffix::Binary(_) => Format::BinarySi,
            Suffix::Exponent(_) => Format::DecimalExponent,
        }
    }
}

/// `value × 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Amount {
    value: i128,
    scale: i32,
}

/// Nine decimal places: what a quantity keeps (`resource.Nano`); finer values round up.
const NANO: i32 = -9;

impl Amount {
    /// The amount of the numeric text `value` (sign, digits, point) times the suffix.
    fn parse(value: &str, suffix: Suffix) -> Option<Amount> {
        let negative = value.starts_with('-');
        let digits = value.trim_start_matches(['+', '-']);
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let all: String = [whole, fraction].concat();
        let mut amount = Amount {
            value: if all.is_empty() { 0 } else { all.parse().ok()? },
            scale: -i32::try_from(fraction.len()).ok()?,
        };
        if negative {
            amount.value = -amount.value;
        }
        match suffix {
            Suffix::Decimal(e) | Suffix::Exponent(e) => {
                amount.scale = amount.scale.checked_add(e)?
            }
            Suffix::Binary(shift) => amount.value = amount.value.checked_mul(1i128 << shift)?,
        }
        amount.normalize()
    }

    /// Trailing zeros moved into the scale, and precision below a nano rounded up, away from
    /// zero (`inf.RoundUp`).
    fn normalize(mut self) -> Option<Amount> {
        if self.scale < NANO {
            let divisor = 10i128.checked_pow(u32::try_from(NANO - self.scale).ok()?)?;
            let (q, r) = (self.value / divisor, self.value % divisor);
            self.value = q + r.signum();
            self.scale = NANO;
        }
        while self.value != 0 && self.value % 10 == 0 {
            self.value /= 10;
            self.scale += 1;
        }
        Some(self)
    }

    /// `Quantity.CanonicalizeBytes`.
    fn canonical(self, format: Format) -> Option<String> {
        if self.value == 0 {
            return Some("0".to_owned());
        }
        let mut format = format;
        if format == Format::BinarySi {
            // Binary only for a whole amount of at least 1024 either way; else decimal.
            match self.whole() {
                Some(whole) if whole.abs() >= 1024 => return binary(whole),
                _ => format = Format::DecimalSi,
            }
        }
        // The exponent goes down to a multiple of three, the mantissa up.
        let mut value = self.value;
        let mut exponent = self.scale;
        while exponent.rem_euclid(3) != 0 {
            value = value.checked_mul(10)?;
            exponent -= 1;
        }
        let suffix = match format {
            Format::DecimalExponent if exponent == 0 => String::new(),
            Format::DecimalExponent => format!("e{exponent}"),
            _ => DECIMAL
                .iter()
                .find(|(_, e)| *e == exponent)
                .map(|(s, _)| (*s).to_owned())?,
        };
        Some(format!("{value}{suffix}"))
    }

    /// The amount as an integer, if it is one.
    fn whole(self) -> Option<i128> {
        if self.scale < 0 {
            return None;
        }
        self.value
            .checked_mul(10i128.checked_pow(u32::try_from(self.scale).ok()?)?)
    }
}

/// A whole number of at least 1024 in the largest power of 1024 that divides it.
fn binary(mut value: i128) -> Option<String> {
    let mut step = 0;
    while step < BINARY.len() && value % 1024 == 0 {
        value /= 1024;
        step += 1;
    }
    let suffix = if step == 0 { "" } else { BINARY[step - 1].0 };
    Some(format!("{value}{suffix}"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_keep_the_first_format() {
        assert_eq!(sum("1Gi", "1Gi").as_deref(), Some("2Gi"));
        assert_eq!(sum("1Gi", "1").as_deref(), Some("1073741825"));
        assert_eq!(sum("1", "500m").as_deref(), Some("1500m"));
        assert_eq!(sum("0", "1Ki").as_deref(), Some("1Ki"));
    }

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

    #[test]
    fn canonical_forms_are_the_ones_go_writes() {
        // Recorded from kube-apiserver (decoding/quantity-is-canonicalised).
        for (written, stored) in [
            ("1000m", "1"),
            ("1024Mi", "1Gi"),
            ("1.5", "1500m"),
            ("2000000000", "2G"),
            // Go's rules: decimal exponents a multiple of three, binary while it divides,
            // small or fractional binary amounts decimal, finer than a nano rounded up.
            ("0", "0"),
            ("0.5", "500m"),
            ("100m", "100m"),
            ("1500Mi", "1500Mi"),
            ("0.5Gi", "512Mi"),
            ("0.5Ki", "512"),
            ("1536Ki", "1536Ki"),
            ("1e3", "1e3"),
            ("1.5e3", "1500"),
            ("1E6", "1e6"),
            ("12e-1", "1200e-3"),
            ("0.0000000001", "1n"),
            ("-1.5", "-1500m"),
            ("+2k", "2k"),
            ("007", "7"),
            ("1.", "1"),
        ] {
            assert_eq!(canonical(written).as_deref(), Ok(stored), "{written}");
        }
    }

    #[test]
    fn quantities_compare_exactly_across_suffixes() {
        assert_eq!(compare("1Gi", "1024Mi"), Some(Ordering::Equal));
        assert_eq!(compare("500m", "0.5"), Some(Ordering::Equal));
        assert_eq!(compare("1e3", "1k"), Some(Ordering::Equal));
        // A float would call these equal.
        assert_eq!(
            compare("9007199254740993", "9007199254740992"),
            Some(Ordering::Greater)
        );
        assert_eq!(compare("-1Mi", "0"), Some(Ordering::Less));
        assert_eq!(compare("1n", "0"), Some(Ordering::Greater));
        assert_eq!(compare("x", "0"), None);
    }

    #[test]
    fn whole_values_round_up_away_from_zero() {
        assert_eq!(whole_value("1500m"), Some(2));
        assert_eq!(whole_value("-1500m"), Some(-2));
        assert_eq!(whole_value("1Ki"), Some(1024));
        assert_eq!(whole_value("1E"), Some(1_000_000_000_000_000_000));
        assert_eq!(whole_value("10E"), None);
        assert_eq!(milli_value("1.5"), Some(1500));
        assert_eq!(milli_value("1n"), Some(1));
        assert_eq!(milli_value("-2Ki"), Some(-2_048_000));
    }
}
