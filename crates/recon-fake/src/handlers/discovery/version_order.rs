//! Kubernetes-aware version order (apimachinery `version.CompareKubeAwareVersionStrings`), by
//! which discovery lists a group's versions, preferred first: GA before beta before alpha,
//! higher numbers first within each; versions not shaped like `v1`, `v2beta3` or `v1alpha1`
//! come last, in string order.

use std::cmp::{Ordering, Reverse};

/// How `a` compares to `b` in preference order: `Less` when `a` is listed first.
pub(crate) fn compare(a: &str, b: &str) -> Ordering {
    key(a).cmp(&key(b))
}

/// Sorts by stability, then by major and minor number, highest first; the string breaks ties,
/// so only equal strings compare equal.
fn key(version: &str) -> (u8, Reverse<u64>, Reverse<u64>, &str) {
    match parse(version) {
        Some((major, stability, minor)) => (stability, Reverse(major), Reverse(minor), version),
        None => (NOT_KUBE_LIKE, Reverse(0), Reverse(0), version),
    }
}

const GA: u8 = 0;
const BETA: u8 = 1;
const ALPHA: u8 = 2;
const NOT_KUBE_LIKE: u8 = 3;

/// `v{major}`, `v{major}beta{minor}` or `v{major}alpha{minor}`, as `(major, stability, minor)`.
fn parse(version: &str) -> Option<(u64, u8, u64)> {
    let rest = version.strip_prefix('v')?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (major, rest) = rest.split_at(digits);
    let major = number(major)?;
    if rest.is_empty() {
        return Some((major, GA, 0));
    }
    let (stability, minor) = if let Some(minor) = rest.strip_prefix("beta") {
        (BETA, minor)
    } else if let Some(minor) = rest.strip_prefix("alpha") {
        (ALPHA, minor)
    } else {
        return None;
    };
    Some((major, stability, number(minor)?))
}

/// A run of ASCII digits (the Go regexp's `\d+`).
fn number(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(versions: &[&'static str]) -> Vec<&'static str> {
        let mut v = versions.to_vec();
        v.sort_by(|a, b| compare(a, b));
        v
    }

    #[test]
    fn ga_beats_beta_beats_alpha_and_higher_numbers_come_first() {
        assert_eq!(
            sorted(&[
                "v1alpha1", "v1beta1", "v1", "v2", "v1beta2", "v2alpha1", "v10"
            ]),
            [
                "v10", "v2", "v1", "v1beta2", "v1beta1", "v2alpha1", "v1alpha1"
            ]
        );
    }

    #[test]
    fn versions_that_are_not_kube_like_come_last_in_string_order() {
        assert_eq!(
            sorted(&["foo", "v1", "bar", "v1gamma1", "v1alpha1"]),
            ["v1", "v1alpha1", "bar", "foo", "v1gamma1"]
        );
    }

    #[test]
    fn only_equal_strings_compare_equal() {
        assert_eq!(compare("v1", "v1"), Ordering::Equal);
        assert_ne!(compare("v01", "v1"), Ordering::Equal);
    }
}
