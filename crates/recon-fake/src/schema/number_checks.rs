//! The numeric checks of kube-openapi's `numberValidator` that depend on how the apiserver
//! decoded a number ([`Num`]: an `int64` or a `float64`): `MaximumNativeType`,
//! `MinimumNativeType`, `MultipleOfNativeType`, `IsValueValidAgainstRange`.

use recon_apimachinery::go_json::{Num, go_float};

/// `swag.FormatFloat64`: `strconv.FormatFloat(f, 'f', -1, 64)`.
fn format_f(f: f64) -> String {
    format!("{f}")
}

/// `swag.IsFloat64AJSONInteger`.
pub(crate) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let rounded = f.round();
    if f == rounded {
        return true;
    }
    if rounded == 0.0 {
        return false;
    }
    (f - rounded).abs() < 1e-9 * f.abs()
}

/// `IsValueValidAgainstRange`: whether `val` fits `type_name` with `format`, and the error text
/// (`<prefix> value must be of type ...`) when it does not.
pub(crate) fn range_error(
    val: Num,
    type_name: &str,
    format: &str,
    prefix: &str,
    path: &str,
) -> Option<String> {
    let text = match val {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => format_f(f),
    };
    let fits = match (type_name, format) {
        ("integer", "int32") => text.parse::<i32>().is_ok(),
        ("integer", _) => text.parse::<i64>().is_ok(),
        (_, "float") => text.parse::<f64>().is_ok_and(|f| {
            // `strconv.ParseFloat(s, 32)`: out of range once rounded to float32.
            let narrowed = f as f32;
            narrowed.is_finite()
        }),
        _ => true,
    };
    if fits {
        return None;
    }
    Some(if format.is_empty() {
        format!("{prefix} value must be of type {type_name} (default format) in {path}")
    } else {
        format!("{prefix} value must be of type {type_name} with format {format} in {path}")
    })
}

/// A bound converted the way the native-type checks convert it for an `int64` value.
pub(crate) fn truncate(f: f64) -> i64 {
    f as i64
}

/// `MultipleOfNativeType`: `None` when `val` is a multiple of `factor`, else the factor as it is
/// printed (an `int64` value compares with the factor truncated to an integer).
pub(crate) fn multiple_of_error(val: Num, factor: f64) -> Option<MultipleOf> {
    match val {
        Num::Int(i) => {
            let f = truncate(factor);
            if f <= 0 {
                return Some(MultipleOf::NotPositive(f.to_string()));
            }
            (i % f != 0).then(|| MultipleOf::Not(f.to_string()))
        }
        Num::Float(d) => multiple_of_float(d, factor),
    }
}

/// `MultipleOf` on float64s.
pub(crate) fn multiple_of_float(d: f64, factor: f64) -> Option<MultipleOf> {
    if factor <= 0.0 {
        return Some(MultipleOf::NotPositive(go_float(factor)));
    }
    let mult = if factor < 1.0 {
        1.0 / factor * d
    } else {
        d / factor
    };
    (!is_json_integer(mult)).then(|| MultipleOf::Not(go_float(factor)))
}

/// A failed `multipleOf`.
pub(crate) enum MultipleOf {
    /// `NotMultipleOf`: the factor as printed.
    Not(String),
    /// `MultipleOfMustBePositive`.
    NotPositive(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(
            range_error(Num::Float(1.5), "integer", "", "Checked", "spec.size").as_deref(),
            Some("Checked value must be of type integer (default format) in spec.size")
        );
        assert!(range_error(Num::Float(2.0), "integer", "", "Checked", "x").is_none());
        assert!(range_error(Num::Int(3_000_000_000), "integer", "int32", "Checked", "x").is_some());
        assert!(range_error(Num::Float(1e300), "number", "float", "Checked", "x").is_some());
        assert!(range_error(Num::Float(1e300), "number", "", "Checked", "x").is_none());
    }

    #[test]
    fn multiples_follow_the_value_type() {
        assert!(
            matches!(multiple_of_error(Num::Int(5), 2.5), Some(MultipleOf::Not(f)) if f == "2")
        );
        assert!(multiple_of_error(Num::Float(5.0), 2.5).is_none());
        assert!(
            matches!(multiple_of_error(Num::Float(5.5), 2.5), Some(MultipleOf::Not(f)) if f == "2.5")
        );
        assert!(multiple_of_error(Num::Int(6), 3.0).is_none());
    }
}
